-- Vessel events: gpu_encounters, gpu_stops, gpu_zone_visits.  Hand-checked
-- cases, then each function against an independent reference on the real
-- AIS tracks: encounters against the segment join's rows merged by a
-- gaps-and-islands query; stops against a plain PL/pgSQL run of the stop
-- rule over the fixes; zone visits against PostGIS ST_Intersection of each
-- segment with the zone, M from ST_InterpolatePoint, pieces merged in SQL.
-- Every bad input.  Outputs are exact values, booleans and counts, the same
-- on the CPU and on the GPU.
\i test/data/ais_fixture.sql

-- ------------------------------------------------------------ encounters

CREATE TEMP TABLE hand (id int, traj geometry);
INSERT INTO hand VALUES
	-- 1 sails east at 10 m/s from t = 0 to 400
	(1, 'SRID=32618;LINESTRING M (0 0 0, 1000 0 100, 2000 0 200, 3000 0 300, 4000 0 400)'),
	-- 2 sails alongside 30 m off from t = 0 to 100, drifts 200 m off, comes back 20 m off from 200 to 400
	(2, 'SRID=32618;LINESTRING M (0 30 0, 1000 30 100, 1500 200 150, 2000 20 200, 4000 20 400)'),
	-- 3 lies still 40 m off 1's track at x = 3500 from t = 0 to 1000
	(3, 'SRID=32618;LINESTRING M (3500 40 0, 3500 40 1000)');

-- 1 and 2 meet twice within 50 m (0 to about 102, about 198 to 400); 1 and 3 pass
SELECT a_id, b_id, encounter, extract(epoch FROM start_time) AS t_start, extract(epoch FROM end_time) AS t_end,
	duration, round(min_distance::numeric, 9) AS min_distance, extract(epoch FROM cpa_time) AS cpa,
	ST_AsText(a_position) AS a_position, ST_AsText(b_position) AS b_position
FROM gpu_encounters('SELECT id, traj FROM hand', NULL, 50)
ORDER BY a_id, b_id, encounter;

-- a max_gap of 100 s joins the two meetings of 1 and 2; min_duration drops the short pass of 3
SELECT a_id, b_id, encounter, extract(epoch FROM start_time) AS t_start, extract(epoch FROM end_time) AS t_end
FROM gpu_encounters('SELECT id, traj FROM hand', NULL, 50, max_gap => '100 seconds', min_duration => '10 seconds')
ORDER BY a_id, b_id, encounter;

-- max_speed: both median speeds at most it (3 lies still, 1 sails at 10 m/s)
SELECT (SELECT count(*) FROM gpu_encounters('SELECT id, traj FROM hand', NULL, 50, max_speed => 10)) AS at_10,
	(SELECT count(*) FROM gpu_encounters('SELECT id, traj FROM hand', NULL, 50, max_speed => 9.99)) AS at_9_99;

-- two sets: a_sql against b_sql
SELECT a_id, b_id, encounter FROM gpu_encounters('SELECT id, traj FROM hand WHERE id = 3',
	'SELECT id, traj FROM hand WHERE id <> 3', 50) ORDER BY b_id;

-- NULL arguments (but b_sql and max_speed) give no rows; no trajectories, no encounters
SELECT (SELECT count(*) FROM gpu_encounters(NULL, NULL, 50)) AS null_sql,
	(SELECT count(*) FROM gpu_encounters('SELECT id, traj FROM hand', NULL, NULL)) AS null_distance,
	(SELECT count(*) FROM gpu_encounters('SELECT id, traj FROM hand', NULL, 50, NULL)) AS null_min_duration,
	(SELECT count(*) FROM gpu_encounters('SELECT id, traj FROM hand WHERE false', NULL, 50)) AS no_rows;

-- the real AIS tracks against the segment join's rows merged by a gaps-and-islands query: every
-- encounter, its times, its closest approach, bit for bit
CREATE FUNCTION encounters_reference(d float8, gap float8)
RETURNS TABLE(a_id bigint, b_id bigint, t_start float8, t_end float8, cpa_distance float8, cpa_time float8,
	a_seg int, b_seg int)
LANGUAGE sql AS $$
	WITH j AS (
		SELECT * FROM gpu_segment_join('SELECT id, traj FROM ais_tracks', NULL, d)
	), s AS (
		SELECT *, max(t_end) OVER (PARTITION BY a_id, b_id ORDER BY t_start, t_end
			ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS latest
		FROM j
	), f AS (
		SELECT *, sum(CASE WHEN latest IS NULL OR t_start > latest + gap THEN 1 ELSE 0 END)
			OVER (PARTITION BY a_id, b_id ORDER BY t_start, t_end ROWS UNBOUNDED PRECEDING) AS island
		FROM s
	)
	SELECT a_id, b_id, min(t_start), max(t_end),
		(array_agg(cpa_distance ORDER BY cpa_distance, cpa_time, a_seg, b_seg))[1],
		(array_agg(cpa_time ORDER BY cpa_distance, cpa_time, a_seg, b_seg))[1],
		(array_agg(a_seg ORDER BY cpa_distance, cpa_time, a_seg, b_seg))[1],
		(array_agg(b_seg ORDER BY cpa_distance, cpa_time, a_seg, b_seg))[1]
	FROM f GROUP BY a_id, b_id, island
$$;

CREATE TEMP TABLE enc_cases AS
SELECT * FROM (VALUES (100.0::float8, 0.0::float8, interval '0'), (500, 600, interval '0'), (500, 600, interval '1 hour'))
	AS c(d, gap, min_duration);

CREATE TEMP TABLE enc_ref AS
SELECT c.*, r.*, row_number() OVER (PARTITION BY c.d, c.gap, c.min_duration, r.a_id, r.b_id ORDER BY r.t_start)::int
	AS encounter
FROM enc_cases c, encounters_reference(c.d, c.gap) r
WHERE to_timestamp(r.t_end) - to_timestamp(r.t_start) >= c.min_duration;
CREATE TEMP TABLE enc_gpu AS
SELECT c.*, g.*
FROM enc_cases c, gpu_encounters('SELECT id, traj FROM ais_tracks', NULL, c.d, c.min_duration, make_interval(secs => c.gap)) g;

SELECT coalesce(r.d, g.d) AS d, coalesce(r.gap, g.gap) AS gap, coalesce(r.min_duration, g.min_duration) AS min_duration,
	count(r.*) AS reference, count(g.*) AS encounters, count(*) FILTER (WHERE r.a_id IS NULL OR g.a_id IS NULL) AS unmatched,
	bool_and(g.end_time = to_timestamp(r.t_end) AND g.duration = to_timestamp(r.t_end) - to_timestamp(r.t_start)
		AND g.min_distance = r.cpa_distance AND g.cpa_time = to_timestamp(r.cpa_time)) AS same_bits,
	count(*) FILTER (WHERE g.encounter > 1) AS later_encounters
FROM enc_ref r
FULL JOIN enc_gpu g ON g.d = r.d AND g.gap = r.gap AND g.min_duration = r.min_duration AND g.a_id = r.a_id
	AND g.b_id = r.b_id AND g.encounter = r.encounter AND g.start_time = to_timestamp(r.t_start)
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;

-- the positions of the closest approach: on each track at cpa_time (ST_LocateAlong), min_distance apart
SELECT count(*) AS encounters,
	bool_and(ST_Distance(g.a_position, ST_Force2D(ST_GeometryN(ST_LocateAlong(a.traj, extract(epoch FROM g.cpa_time)::float8), 1))) < 1e-3
		AND ST_Distance(g.b_position, ST_Force2D(ST_GeometryN(ST_LocateAlong(b.traj, extract(epoch FROM g.cpa_time)::float8), 1))) < 1e-3)
		AS on_the_tracks,
	bool_and(abs(ST_Distance(g.a_position, g.b_position) - g.min_distance) < 1e-6) AS min_distance_apart,
	bool_and(ST_SRID(g.a_position) = 32618 AND GeometryType(g.b_position) = 'POINT') AS points_in_utm
FROM gpu_encounters('SELECT id, traj FROM ais_tracks', NULL, 500, max_gap => '10 minutes') g
JOIN ais_tracks a ON a.id = g.a_id JOIN ais_tracks b ON b.id = g.b_id;

-- max_speed against the median of the segments' speeds (percentile_cont) over each encounter
WITH e AS (
	SELECT * FROM gpu_encounters('SELECT id, traj FROM ais_tracks', NULL, 500, max_gap => '10 minutes')
), speeds AS (
	SELECT e.a_id, e.b_id, e.encounter, side.id, percentile_cont(0.5) WITHIN GROUP (ORDER BY ST_Length(s.geom)
		/ (ST_M(ST_EndPoint(s.geom)) - ST_M(ST_StartPoint(s.geom)))) AS median
	FROM e CROSS JOIN LATERAL (VALUES (e.a_id), (e.b_id)) side(id)
	JOIN ais_tracks t ON t.id = side.id, ST_DumpSegments(t.traj) s
	WHERE CASE WHEN e.end_time > e.start_time
		THEN to_timestamp(ST_M(ST_StartPoint(s.geom))) < e.end_time AND to_timestamp(ST_M(ST_EndPoint(s.geom))) > e.start_time
		ELSE to_timestamp(ST_M(ST_StartPoint(s.geom))) <= e.start_time AND to_timestamp(ST_M(ST_EndPoint(s.geom))) >= e.start_time END
	GROUP BY 1, 2, 3, 4
), slow AS (
	SELECT e.a_id, e.b_id, e.start_time FROM e JOIN speeds USING (a_id, b_id, encounter)
	GROUP BY 1, 2, 3 HAVING max(median) <= 2 * 1852 / 3600.0
), kept AS (
	SELECT a_id, b_id, start_time FROM gpu_encounters('SELECT id, traj FROM ais_tracks', NULL, 500,
		max_gap => '10 minutes', max_speed => 2 * 1852 / 3600.0)
)
SELECT (SELECT count(*) FROM slow) AS slow, (SELECT count(*) FROM kept) AS kept,
	(SELECT count(*) FROM (SELECT * FROM slow EXCEPT SELECT * FROM kept) x) AS missing,
	(SELECT count(*) FROM (SELECT * FROM kept EXCEPT SELECT * FROM slow) x) AS extra;

-- geography in metres: the same encounters as the tracks in UTM, closest approaches within 0.5 m
SELECT count(*) AS encounters, count(u.*) AS matched,
	bool_and(abs(u.min_distance - g.min_distance) < 0.5) AS within_half_a_metre,
	bool_and(ST_SRID(g.a_position) = 4326) AS positions_in_lon_lat
FROM gpu_encounters('SELECT id, ST_Transform(traj, 4326)::geography AS traj FROM ais_tracks WHERE source ~ ''^ny''',
	NULL, 200, max_gap => '10 minutes', min_duration => '5 minutes') g
LEFT JOIN gpu_encounters('SELECT id, traj FROM ais_tracks WHERE source ~ ''^ny''', NULL, 200,
	max_gap => '10 minutes', min_duration => '5 minutes') u
	ON u.a_id = g.a_id AND u.b_id = g.b_id AND abs(extract(epoch FROM u.start_time - g.start_time)) < 5;

-- ----------------------------------------------------------------- stops

CREATE TEMP TABLE moored (id int, traj geometry);
INSERT INTO moored VALUES
	-- sails 10 m/s for 100 s, lies within 20 m for 600 s, sails on
	(1, 'SRID=32618;LINESTRING M (0 0 0, 1000 0 100, 1010 5 200, 1005 -5 400, 1012 8 700, 2000 0 800, 3000 0 900)'),
	-- lies within 20 m for 200 s only
	(2, 'SRID=32618;LINESTRING M (0 0 0, 10 0 100, 5 5 200, 500 0 300)');
SELECT id, stop, extract(epoch FROM start_time) AS t_start, extract(epoch FROM end_time) AS t_end, duration,
	ST_AsText(position) AS position
FROM gpu_stops('SELECT id, traj FROM moored', 20, '5 minutes') ORDER BY id, stop;
SELECT id, stop, duration FROM gpu_stops('SELECT id, traj FROM moored', 20, '100 seconds') ORDER BY id, stop;
SELECT (SELECT count(*) FROM gpu_stops(NULL, 20, '5 minutes')) AS null_sql,
	(SELECT count(*) FROM gpu_stops('SELECT id, traj FROM moored', 0, '0')) AS zero_diameter;

-- the stop rule, plainly: the box of fixes i .. j recomputed each time
CREATE FUNCTION stops_reference(xs float8[], ys float8[], ms float8[], d float8, dur float8)
RETURNS TABLE(first int, last int) LANGUAGE plpgsql AS $$
DECLARE
	n int := array_length(xs, 1);
	i int := 1;
	k int;
	fits boolean;
	lx float8; hx float8; ly float8; hy float8;
BEGIN
	FOR j IN 2..n LOOP
		lx := xs[i]; hx := xs[i]; ly := ys[i]; hy := ys[i];
		FOR q IN i..j LOOP
			lx := least(lx, xs[q]); hx := greatest(hx, xs[q]); ly := least(ly, ys[q]); hy := greatest(hy, ys[q]);
		END LOOP;
		IF (hx - lx) * (hx - lx) + (hy - ly) * (hy - ly) + 0.0 <= d * d THEN
			CONTINUE;
		END IF;
		IF j - 1 > i AND ms[j - 1] - ms[i] >= dur THEN
			first := i; last := j - 1;
			RETURN NEXT;
			i := j;
			CONTINUE;
		END IF;
		-- the longest run ending at j that fits
		k := i + 1;
		LOOP
			lx := xs[k]; hx := xs[k]; ly := ys[k]; hy := ys[k];
			FOR q IN k..j LOOP
				lx := least(lx, xs[q]); hx := greatest(hx, xs[q]); ly := least(ly, ys[q]); hy := greatest(hy, ys[q]);
			END LOOP;
			fits := (hx - lx) * (hx - lx) + (hy - ly) * (hy - ly) + 0.0 <= d * d;
			EXIT WHEN fits;
			k := k + 1;
		END LOOP;
		i := k;
	END LOOP;
	IF n > i AND ms[n] - ms[i] >= dur THEN
		first := i; last := n;
		RETURN NEXT;
	END IF;
END
$$;

CREATE TEMP TABLE fixes AS
SELECT id, array_agg(ST_X(geom) ORDER BY path) AS xs, array_agg(ST_Y(geom) ORDER BY path) AS ys,
	array_agg(ST_M(geom) ORDER BY path) AS ms
FROM ais_tracks, ST_DumpPoints(traj) GROUP BY id;

CREATE TEMP TABLE stop_cases AS SELECT * FROM (VALUES (100.0::float8, 1200.0::float8), (300, 600), (50, 300)) c(d, dur);
CREATE TEMP TABLE stop_ref AS
SELECT c.d, c.dur, f.id, row_number() OVER (PARTITION BY c.d, c.dur, f.id ORDER BY s.first)::int AS stop,
	f.ms[s.first] AS t_start, f.ms[s.last] AS t_end,
	ST_SetSRID(ST_MakePoint(avg(p.x), avg(p.y)), 32618) AS centroid
FROM stop_cases c, fixes f, stops_reference(f.xs, f.ys, f.ms, c.d, c.dur) s,
	LATERAL (SELECT f.xs[k] AS x, f.ys[k] AS y FROM generate_series(s.first, s.last) k) p
GROUP BY c.d, c.dur, f.id, s.first, s.last, f.ms;
CREATE TEMP TABLE stop_gpu AS
SELECT c.d, c.dur, g.* FROM stop_cases c, gpu_stops('SELECT id, traj FROM ais_tracks', c.d, make_interval(secs => c.dur)) g;

SELECT coalesce(r.d, g.d) AS d, coalesce(r.dur, g.dur) AS dur, count(r.*) AS reference, count(g.*) AS stops,
	count(*) FILTER (WHERE r.id IS NULL OR g.id IS NULL) AS unmatched,
	bool_and(g.end_time = to_timestamp(r.t_end)) AS same_ends,
	bool_and(ST_Distance(g.position, r.centroid) < 1e-6) AS centroids,
	count(*) FILTER (WHERE g.stop > 1) AS later_stops
FROM stop_ref r
FULL JOIN stop_gpu g ON g.d = r.d AND g.dur = r.dur AND g.id = r.id AND g.stop = r.stop
	AND g.start_time = to_timestamp(r.t_start)
GROUP BY 1, 2 ORDER BY 1, 2;

-- ----------------------------------------------------------- zone visits

CREATE TEMP TABLE zone_hand (id int, polygon geometry);
INSERT INTO zone_hand VALUES
	-- a square 0..100
	(1, 'SRID=32618;POLYGON((0 0, 100 0, 100 100, 0 100, 0 0))'),
	-- a square with a square hole 40..60
	(2, 'SRID=32618;POLYGON((0 0, 100 0, 100 100, 0 100, 0 0), (40 40, 60 40, 60 60, 40 60, 40 40))'),
	-- two squares, 200..300 and 400..500 on y 0..100
	(3, 'SRID=32618;MULTIPOLYGON(((200 0, 300 0, 300 100, 200 100, 200 0)), ((400 0, 500 0, 500 100, 400 100, 400 0)))');
CREATE TEMP TABLE zone_tracks (id int, traj geometry);
INSERT INTO zone_tracks VALUES
	-- starts inside at x = 50, y = 50, sails east 1 m/s along y = 50
	(1, 'SRID=32618;LINESTRING M (50 50 0, 600 50 550)'),
	-- touches the corner (100, 100) of zone 1 at t = 10 only, then sails along its top edge from t = 20
	(2, 'SRID=32618;LINESTRING M (110 110 0, 100 100 10, 110 110 15, 100 100 20, 50 100 70, 50 150 120)');
SELECT id, zone_id, visit, extract(epoch FROM enter_time) AS enter, extract(epoch FROM exit_time) AS exit, duration
FROM gpu_zone_visits('SELECT id, traj FROM zone_tracks', 'SELECT id, polygon FROM zone_hand')
ORDER BY id, zone_id, visit;

-- zones on the real tracks: circles around busy places, a ring (a hole), a multipolygon
CREATE TEMP TABLE zones AS
SELECT row_number() OVER (ORDER BY p)::int AS id, polygon FROM (
	SELECT 1 AS p, ST_Buffer(ST_SetSRID(ST_MakePoint(580000, 4500000), 32618), 3000) AS polygon
	UNION ALL SELECT 2, ST_Difference(ST_Buffer(ST_SetSRID(ST_MakePoint(574000, 4494000), 32618), 4000),
		ST_Buffer(ST_SetSRID(ST_MakePoint(574000, 4494000), 32618), 1500))
	UNION ALL SELECT 3, ST_Multi(ST_Union(ST_Buffer(ST_SetSRID(ST_MakePoint(590000, 4505000), 32618), 2000),
		ST_Buffer(ST_SetSRID(ST_MakePoint(597000, 4513000), 32618), 2500)))
	UNION ALL SELECT 4, ST_Buffer(ST_SetSRID(ST_MakePoint(383000, 4091000), 32618), 5000)
	UNION ALL SELECT 5, ST_MakeEnvelope(560000, 4470000, 620000, 4480000, 32618)
) z;

-- the reference: each segment cut by PostGIS, the pieces' ends timed on their segment, pieces that touch merged
-- (a vessel lying still makes a segment of no length, which ST_Intersection makes empty: inside where its point is)
CREATE TEMP TABLE visits_reference AS
WITH pieces AS (
	SELECT t.id, z.id AS zone_id, ST_InterpolatePoint(s.geom, ST_StartPoint(p.geom)) AS t0,
		ST_InterpolatePoint(s.geom, ST_EndPoint(p.geom)) AS t1
	FROM ais_tracks t, ST_DumpSegments(t.traj) s, zones z, ST_Dump(ST_Intersection(s.geom, z.polygon)) p
	WHERE ST_Length(s.geom) > 0 AND ST_Intersects(s.geom, z.polygon) AND GeometryType(p.geom) = 'LINESTRING'
	UNION ALL
	SELECT t.id, z.id, ST_M(ST_StartPoint(s.geom)), ST_M(ST_EndPoint(s.geom))
	FROM ais_tracks t, ST_DumpSegments(t.traj) s, zones z
	WHERE ST_Length(s.geom) = 0 AND ST_Intersects(ST_StartPoint(s.geom), z.polygon)
), ordered AS (
	SELECT id, zone_id, least(t0, t1) AS t0, greatest(t0, t1) AS t1 FROM pieces
), s AS (
	SELECT *, max(t1) OVER (PARTITION BY id, zone_id ORDER BY t0 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS latest
	FROM ordered
), f AS (
	SELECT *, sum(CASE WHEN latest IS NULL OR t0 > latest + 1e-6 THEN 1 ELSE 0 END)
		OVER (PARTITION BY id, zone_id ORDER BY t0 ROWS UNBOUNDED PRECEDING) AS visit
	FROM s
)
SELECT id, zone_id, visit::int, min(t0) AS enter, max(t1) AS exit FROM f GROUP BY id, zone_id, visit;

SELECT count(r.*) AS reference, count(g.*) AS visits, count(*) FILTER (WHERE r.id IS NULL OR g.id IS NULL) AS unmatched,
	bool_and(abs(extract(epoch FROM g.enter_time) - r.enter) < 1e-3 AND abs(extract(epoch FROM g.exit_time) - r.exit) < 1e-3)
		AS same_times,
	count(DISTINCT g.zone_id) AS zones_visited, max(g.visit) AS most_visits
FROM visits_reference r
FULL JOIN gpu_zone_visits('SELECT id, traj FROM ais_tracks', 'SELECT id, polygon FROM zones') g
	ON g.id = r.id AND g.zone_id = r.zone_id AND g.visit = r.visit;

-- --------------------------------------------------------- on the CPU too

SET geoacc.device = 'cpu';
SELECT (SELECT count(*) FROM gpu_encounters('SELECT id, traj FROM ais_tracks', NULL, 500, max_gap => '10 minutes')) AS encounters,
	(SELECT count(*) FROM gpu_stops('SELECT id, traj FROM ais_tracks', 100, '20 minutes')) AS stops,
	(SELECT count(*) FROM gpu_zone_visits('SELECT id, traj FROM ais_tracks', 'SELECT id, polygon FROM zones')) AS visits;
RESET geoacc.device;

-- -------------------------------------------------------------- bad input

SELECT * FROM gpu_encounters('SELECT id, traj FROM hand', NULL, 0);
SELECT * FROM gpu_encounters('SELECT id, traj FROM hand', NULL, 50, min_duration => '-1 second');
SELECT * FROM gpu_encounters('SELECT id, traj FROM hand', NULL, 50, max_gap => '-1 day');
SELECT * FROM gpu_encounters('SELECT id, traj FROM hand', NULL, 50, max_gap => '1000000 years');
SELECT * FROM gpu_encounters('SELECT id, traj FROM hand', NULL, 50, max_speed => -1);
SELECT * FROM gpu_encounters('SELECT id, traj FROM hand', NULL, 50, max_speed => 'NaN');
SELECT * FROM gpu_encounters('SELECT id, traj FROM hand', NULL, 50, method => 'fastest');
SELECT * FROM gpu_encounters('SELECT id, ST_Transform(traj, 4326) AS traj FROM hand', NULL, 50);
SELECT * FROM gpu_encounters('SELECT 1 AS id, traj FROM hand', NULL, 50);
SELECT * FROM gpu_encounters('SELECT id, ST_Force2D(traj) AS traj FROM hand', NULL, 50);
SELECT * FROM gpu_stops('SELECT id, traj FROM moored', -1, '5 minutes');
SELECT * FROM gpu_stops('SELECT id, traj FROM moored', 'Infinity', '5 minutes');
SELECT * FROM gpu_stops('SELECT id, traj FROM moored', 20, '-5 minutes');
SELECT * FROM gpu_stops('SELECT id, ST_Transform(traj, 4326) AS traj FROM moored', 20, '5 minutes');
SELECT * FROM gpu_zone_visits('SELECT id, traj::geography FROM zone_tracks WHERE false', 'SELECT id, polygon FROM zone_hand');
SELECT * FROM gpu_zone_visits('SELECT id, ST_Transform(traj, 4326)::geography AS traj FROM zone_tracks', 'SELECT id, polygon FROM zone_hand');
SELECT * FROM gpu_zone_visits('SELECT id, traj FROM zone_tracks', 'SELECT id, ST_Boundary(polygon) AS polygon FROM zone_hand');
SELECT * FROM gpu_zone_visits('SELECT id, traj FROM zone_tracks', 'SELECT id, ST_SetSRID(polygon, 3857) AS polygon FROM zone_hand');
SELECT * FROM gpu_zone_visits('SELECT id, traj FROM zone_tracks', 'SELECT id, CASE WHEN id = 2 THEN ST_SetSRID(polygon, 3857) ELSE polygon END AS polygon FROM zone_hand');
SELECT * FROM gpu_zone_visits('SELECT id, traj FROM zone_tracks', 'SELECT id, ST_Transform(polygon, 4326)::geography AS polygon FROM zone_hand');
SELECT * FROM gpu_zone_visits('SELECT id, traj FROM zone_tracks', 'SELECT id FROM zone_hand');
SELECT * FROM gpu_zone_visits('SELECT id, traj FROM zone_tracks', 'DELETE FROM zone_hand');

DROP FUNCTION encounters_reference(float8, float8);
DROP FUNCTION stops_reference(float8[], float8[], float8[], float8, float8);
