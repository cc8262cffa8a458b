-- gpu_segment_join and gpu_segment_contacts: distance-threshold join of
-- trajectory segments.  Hand-checked cases, every method against the others,
-- the real AIS tracks against a brute-force PostGIS reference (ST_CPAWithin
-- and ST_DistanceCPA over every pair of 2-point segments), and every bad
-- input.  Outputs are exact values, booleans and counts, the same on the CPU
-- and on the GPU.
\i test/data/ais_fixture.sql

CREATE TEMP TABLE hand (id int, traj geometry);
INSERT INTO hand VALUES
	-- 1 and 2: parallel tracks 30 m apart, 10 m/s, t = 0..100
	(1, 'SRID=32618;LINESTRING M (0 0 0, 1000 0 100)'),
	(2, 'SRID=32618;LINESTRING M (0 30 0, 1000 30 100)'),
	-- 3 crosses 1 at right angles at (500, 0) at t = 50
	(3, 'SRID=32618;LINESTRING M (500 -500 0, 500 500 100)'),
	-- 4 meets 1 head-on at (500, 0) at t = 50
	(4, 'SRID=32618;LINESTRING M (1000 0 0, 0 0 100)'),
	-- 5 starts 3 m from where 1 ends, when 1 ends: the spans touch at t = 100
	(5, 'SRID=32618;LINESTRING M (1000 3 100, 1100 3 200)'),
	-- 6 lies still 40 m off 1's track at x = 500
	(6, 'SRID=32618;LINESTRING M (500 40 0, 500 40 200)');

-- every pair within 45 m: the intervals and closest approaches by hand
SELECT a_id, a_seg, b_id, b_seg, round(t_start::numeric, 9) AS t_start, round(t_end::numeric, 9) AS t_end,
	round(cpa_time::numeric, 9) AS cpa_time, round(cpa_distance::numeric, 9) AS cpa_distance
FROM gpu_segment_join('SELECT id, traj FROM hand', NULL, 45)
ORDER BY a_id, a_seg, b_id, b_seg;

-- the interval ends are exact, not rounded: 1 and 2 from 0 to 100, 1 and 4 from 45 to 55,
-- 1 and 6 from 47 to 53, 1 and 5 at 100 only
SELECT a_id, b_id, t_start, t_end, cpa_time, cpa_distance
FROM gpu_segment_join('SELECT id, traj FROM hand WHERE id = 1', 'SELECT id, traj FROM hand WHERE id <> 1', 50)
WHERE b_id <> 3
ORDER BY b_id;

-- at 30 m the parallel tracks count, not at 29.99; touching spans count only within distance
SELECT (SELECT count(*) FROM gpu_segment_join('SELECT id, traj FROM hand WHERE id IN (1, 2)', NULL, 30)) AS at_30,
	(SELECT count(*) FROM gpu_segment_join('SELECT id, traj FROM hand WHERE id IN (1, 2)', NULL, 29.99)) AS at_29_99,
	(SELECT count(*) FROM gpu_segment_join('SELECT id, traj FROM hand WHERE id IN (1, 5)', NULL, 3)) AS touching_at_3,
	(SELECT count(*) FROM gpu_segment_join('SELECT id, traj FROM hand WHERE id IN (1, 5)', NULL, 2.9)) AS touching_at_2_9;

-- Z, the rule of every trajectory function: not measured unless use_z => true (2D: the
-- tracks 40 m apart in Z meet at 30 m); with use_z every trajectory must have Z
SELECT (SELECT count(*) FROM gpu_segment_join('SELECT 1, ''LINESTRING ZM (0 0 0 0, 100 0 0 100)''::geometry',
		'SELECT 2, ''LINESTRING ZM (0 0 40 0, 100 0 40 100)''::geometry', 30)) AS zm_30,
	(SELECT count(*) FROM gpu_segment_join('SELECT 1, ''LINESTRING ZM (0 0 0 0, 100 0 0 100)''::geometry',
		'SELECT 2, ''LINESTRING ZM (0 0 40 0, 100 0 40 100)''::geometry', 30, use_z => true)) AS zm_30_3d,
	(SELECT count(*) FROM gpu_segment_join('SELECT 1, ''LINESTRING ZM (0 0 0 0, 100 0 0 100)''::geometry',
		'SELECT 2, ''LINESTRING ZM (0 0 40 0, 100 0 40 100)''::geometry', 40, use_z => true)) AS zm_40_3d,
	(SELECT count(*) FROM gpu_segment_join('SELECT 1, ''LINESTRING ZM (0 0 0 0, 100 0 0 100)''::geometry',
		'SELECT 2, ''LINESTRING M (0 0 0, 100 0 100)''::geometry', 30)) AS zm_with_m_30;
SELECT * FROM gpu_segment_join('SELECT 1, ''LINESTRING ZM (0 0 0 0, 100 0 0 100)''::geometry',
	'SELECT 2, ''LINESTRING M (0 0 0, 100 0 100)''::geometry', 30, use_z => true);
SELECT count(*) AS contacts FROM gpu_segment_contacts('SELECT 1, ''LINESTRING ZM (0 0 0 0, 100 0 0 100)''::geometry',
	'SELECT 2, ''LINESTRING ZM (0 0 40 0, 100 0 40 100)''::geometry', 30, use_z => true);

-- NULL, empty and single-point trajectories have no segments; integer ids of any width, domains too
CREATE DOMAIN track_id AS smallint;
CREATE DOMAIN track AS geometry;
SELECT a_id, b_id, t_start, t_end
FROM gpu_segment_join($$SELECT id::track_id, traj::track FROM (VALUES
		(1, 'LINESTRING M (0 0 0, 10 0 10)'::geometry), (2, NULL), (3, 'LINESTRING M EMPTY'),
		(4, ST_MakeLine(ARRAY[ST_MakePointM(0, 0, 5)])), (5, 'LINESTRING M (0 1 0, 10 1 10)')) v(id, traj)$$,
	NULL, 2);
DROP DOMAIN track_id, track;
SELECT ST_NPoints(ST_MakeLine(ARRAY[ST_MakePointM(0, 0, 5)])) AS single_point;
SELECT count(*) AS no_rows FROM gpu_segment_join('SELECT 1::bigint, NULL::geometry', NULL, 2);
SELECT count(*) AS null_arguments FROM gpu_segment_join(NULL, NULL, 2);

-- real AIS: New York harbour, one day (39 tracks, 9,052 segments)
CREATE TEMP TABLE ny AS SELECT id, traj FROM ais_tracks WHERE source = 'ny_harbor_2020-12-08';
CREATE TEMP TABLE ny_join AS
SELECT * FROM gpu_segment_join('SELECT id, traj FROM ny', NULL, 100);
SELECT count(*) AS rows, count(DISTINCT (a_id, b_id)) AS vessel_pairs, bool_and(a_id < b_id) AS a_before_b,
	bool_and(t_start <= cpa_time AND cpa_time <= t_end) AS cpa_in_interval,
	bool_and(cpa_distance <= 100) AS within
FROM ny_join;

-- every method returns the same rows to the bit
SELECT m AS method, (SELECT count(*) FROM (
		SELECT * FROM gpu_segment_join('SELECT id, traj FROM ny', NULL, 100, m)
		EXCEPT ALL SELECT * FROM ny_join) x) AS extra,
	(SELECT count(*) FROM (
		SELECT * FROM ny_join
		EXCEPT ALL SELECT * FROM gpu_segment_join('SELECT id, traj FROM ny', NULL, 100, m)) x) AS missing
FROM unnest(ARRAY['spatial', 'temporal', 'spatiotemporal', 'auto']) m;

-- the self-join is the two-sided join with a_id < b_id; swapping the sides swaps the rows, to the bit
SELECT (SELECT count(*) FROM (
		SELECT * FROM gpu_segment_join('SELECT id, traj FROM ny', 'SELECT id, traj FROM ny', 100) WHERE a_id < b_id
		EXCEPT ALL SELECT * FROM ny_join) x) AS self_extra,
	(SELECT count(*) FROM gpu_segment_join('SELECT id, traj FROM ny', 'SELECT id, traj FROM ny', 100)
		WHERE a_id = b_id) AS same_vessel_pairs,
	(SELECT count(*) FROM (
		SELECT b_id, b_seg, a_id, a_seg, t_start, t_end, cpa_time, cpa_distance
		FROM gpu_segment_join('SELECT id, traj FROM ny WHERE id % 2 = 0', 'SELECT id, traj FROM ny WHERE id % 2 = 1', 100)
		EXCEPT ALL SELECT * FROM gpu_segment_join('SELECT id, traj FROM ny WHERE id % 2 = 1',
			'SELECT id, traj FROM ny WHERE id % 2 = 0', 100)) x) AS swapped_differ;

-- the array form: the same rows, for a self-join and for two sets, in each group of a GROUP BY (the form
-- that runs in the shard tasks of a Citus distributed table)
SELECT (SELECT count(*) FROM (
		SELECT * FROM gpu_segment_join((SELECT array_agg(id) FROM ny), (SELECT array_agg(traj) FROM ny), NULL, NULL, 100)
		EXCEPT ALL SELECT * FROM ny_join) x) AS self_extra,
	(SELECT count(*) FROM (
		SELECT * FROM ny_join EXCEPT ALL
		SELECT * FROM gpu_segment_join((SELECT array_agg(id) FROM ny), (SELECT array_agg(traj) FROM ny), NULL, NULL, 100)
		) x) AS self_missing;
CREATE TEMP TABLE ny_two AS
SELECT * FROM gpu_segment_join('SELECT id, traj FROM ny WHERE id % 3 <> 0', 'SELECT id, traj FROM ny WHERE id % 3 = 0', 100);
SELECT count(*) AS rows, count(*) FILTER (WHERE j.a_id IS NULL) AS missing, count(*) FILTER (WHERE t.a_id IS NULL) AS extra
FROM (SELECT j.* FROM (SELECT array_agg(id) AS ids, array_agg(traj) AS trajs FROM ny WHERE id % 3 = 0) q,
		(SELECT id % 4 AS g, array_agg(id) AS ids, array_agg(traj) AS trajs FROM ny WHERE id % 3 <> 0 GROUP BY 1) a,
		LATERAL gpu_segment_join(a.ids, a.trajs, q.ids, q.trajs, 100) j) j
	FULL JOIN ny_two t USING (a_id, a_seg, b_id, b_seg, t_start, t_end, cpa_time, cpa_distance);
-- NULL trajectories are skipped, NULL arguments give no rows; errors
SELECT count(*) AS rows FROM gpu_segment_join(ARRAY[1, 2], ARRAY['SRID=32618;LINESTRING M (0 0 0, 10 0 10)'::geometry, NULL],
	ARRAY[3], ARRAY['SRID=32618;LINESTRING M (0 1 0, 10 1 10)'::geometry], 2);
SELECT count(*) AS rows FROM gpu_segment_join(NULL, ARRAY['SRID=32618;LINESTRING M (0 0 0, 10 0 10)'::geometry], NULL, NULL, 2);
SELECT * FROM gpu_segment_join(ARRAY[1, 2], ARRAY['LINESTRING M (0 0 1, 1 1 2)'::geometry], NULL, NULL, 10);
SELECT * FROM gpu_segment_join(ARRAY[1, NULL], ARRAY['LINESTRING M (0 0 1, 1 1 2)'::geometry, NULL], NULL, NULL, 10);
SELECT * FROM gpu_segment_join(ARRAY[1], ARRAY['LINESTRING M (0 0 1, 1 1 2)'::geometry], ARRAY[1], NULL, 10);
SELECT * FROM gpu_segment_join(ARRAY[[1]], ARRAY[['LINESTRING M (0 0 1, 1 1 2)'::geometry]], NULL, NULL, 10);
SELECT * FROM gpu_segment_join(ARRAY[1], ARRAY['LINESTRING M (0 0 1, 1 1 2)'::geometry], NULL, NULL, -1);
SELECT * FROM gpu_segment_join(ARRAY[1], ARRAY['LINESTRING M (0 0 1, 1 1 2)'::geometry], NULL, NULL, 10, 'grid');
SELECT * FROM gpu_segment_join(ARRAY[7], ARRAY['SRID=32618;LINESTRING M (0 0 1, 1 1 1)'::geometry], NULL, NULL, 10);
SELECT * FROM gpu_segment_join(ARRAY[1, 2], ARRAY['SRID=32618;LINESTRING M (0 0 1, 1 1 2)'::geometry,
	'SRID=32619;LINESTRING M (0 0 1, 1 1 2)'], NULL, NULL, 10);

-- the brute-force reference: every pair of 2-point segments of the first 15 minutes of the New York
-- harbour hour of raw fixes, ST_CPAWithin and ST_DistanceCPA
CREATE TEMP TABLE quarter AS
SELECT id, ST_SetSRID(ST_MakeLine(g ORDER BY path), 32618) AS traj FROM (
	SELECT id, d.path, d.geom AS g FROM ais_tracks, ST_DumpPoints(traj) d
	WHERE source = 'ny_harbor_2020-06-30_first_hour' AND ST_M(d.geom) < 1593475200 + 900) p
GROUP BY id HAVING count(*) >= 2;
CREATE TEMP TABLE quarter_segments AS
SELECT id, k, ST_MakeLine(ST_PointN(traj, k), ST_PointN(traj, k + 1)) AS seg,
	ST_M(ST_PointN(traj, k)) AS t0, ST_M(ST_PointN(traj, k + 1)) AS t1
FROM quarter, generate_series(1, ST_NPoints(traj) - 1) k;
SELECT count(*) AS segments FROM quarter_segments;
SELECT d AS distance, (SELECT count(*) FROM (
		SELECT a_id, a_seg, b_id, b_seg FROM gpu_segment_join('SELECT id, traj FROM quarter', NULL, d)
		EXCEPT SELECT a.id, a.k, b.id, b.k FROM quarter_segments a JOIN quarter_segments b
			ON a.id < b.id AND a.t0 <= b.t1 AND b.t0 <= a.t1 AND ST_CPAWithin(a.seg, b.seg, d)) x) AS extra,
	(SELECT count(*) FROM (
		SELECT a.id, a.k, b.id, b.k FROM quarter_segments a JOIN quarter_segments b
			ON a.id < b.id AND a.t0 <= b.t1 AND b.t0 <= a.t1 AND ST_CPAWithin(a.seg, b.seg, d)
		EXCEPT SELECT a_id, a_seg, b_id, b_seg FROM gpu_segment_join('SELECT id, traj FROM quarter', NULL, d)) x)
		AS missing,
	(SELECT count(*) > 0 AND bool_and(abs(j.cpa_distance - ST_DistanceCPA(a.seg, b.seg)) < 1e-6)
		FROM gpu_segment_join('SELECT id, traj FROM quarter', NULL, d) j
			JOIN quarter_segments a ON a.id = j.a_id AND a.k = j.a_seg
			JOIN quarter_segments b ON b.id = j.b_id AND b.k = j.b_seg) AS same_cpa_distance
FROM unnest(ARRAY[10, 100, 1000]::float8[]) d;

-- gpu_segment_contacts: per pair of vessels, the rows summed up
SELECT count(*) AS vessel_pairs,
	bool_and(c.first_contact = j.first AND c.last_contact = j.last AND c.min_distance = j.closest
		AND c.segment_pairs = j.n AND abs(c.time_within - j.within) < 1e-6) AS matches_rows
FROM gpu_segment_contacts('SELECT id, traj FROM ny', NULL, 100) c
	JOIN (SELECT a_id, b_id, min(t_start) AS first, max(t_end) AS last, min(cpa_distance) AS closest,
		count(*) AS n, sum(t_end - t_start) AS within FROM ny_join GROUP BY a_id, b_id) j USING (a_id, b_id);

-- bad input
SELECT * FROM gpu_segment_join('SELECT id, traj FROM hand', NULL, 0);
SELECT * FROM gpu_segment_join('SELECT id, traj FROM hand', NULL, -5);
SELECT * FROM gpu_segment_join('SELECT id, traj FROM hand', NULL, 'NaN');
SELECT * FROM gpu_segment_join('SELECT id, traj FROM hand', NULL, 'Infinity');
SELECT * FROM gpu_segment_join('SELECT id, traj FROM hand', NULL, 10, 'grid');
SELECT * FROM gpu_segment_join('SELECT id FROM hand', NULL, 10);
SELECT * FROM gpu_segment_join('SELECT id, traj, 1 FROM hand', NULL, 10);
SELECT * FROM gpu_segment_join('SELECT id, ST_AsText(traj) FROM hand', NULL, 10);
SELECT * FROM gpu_segment_join('SELECT id::text, traj FROM hand', NULL, 10);
SELECT * FROM gpu_segment_join('SELECT id, traj FROM hand', 'SELECT 1.5, traj FROM hand', 10);
SELECT * FROM gpu_segment_join('SELECT id, traj FROM hand', 'DELETE FROM hand', 10);
SELECT * FROM gpu_segment_join('SELECT NULL::int, traj FROM hand', NULL, 10);
SELECT * FROM gpu_segment_join('SELECT 7, ''SRID=32618;POINT M (0 0 0)''::geometry', NULL, 10);
SELECT * FROM gpu_segment_join('SELECT 7, ''SRID=32618;LINESTRING (0 0, 1 1)''::geometry', NULL, 10);
SELECT * FROM gpu_segment_join('SELECT id, traj FROM hand',
	'SELECT 8, ''SRID=32618;LINESTRING M (0 0 0, 1 1 5, 2 2 5)''::geometry', 10);
SELECT * FROM gpu_segment_join('SELECT id, traj FROM hand',
	'SELECT 9, ST_SetSRID(ST_MakeLine(ST_MakePointM(0, 0, 0), ST_MakePointM(''NaN'', 0, 1)), 32618)', 10);
SELECT * FROM gpu_segment_join('SELECT id, traj FROM hand',
	'SELECT 10, ''SRID=32619;LINESTRING M (0 0 0, 1 1 5)''::geometry', 10);
SELECT * FROM gpu_segment_join('SELECT 11, ''SRID=4326;LINESTRING M (-74 40.6 0, -74.01 40.6 60)''::geometry',
	NULL, 10);

-- a self-join needs one row per id: a_id < b_id, and a segment named by its id and number
SELECT * FROM gpu_segment_join($$SELECT * FROM (VALUES (1, 'LINESTRING M (0 0 0,10 0 10)'::geometry),
	(1, 'LINESTRING M (0 1 0,10 1 10)'::geometry)) t$$, NULL, 5);
SELECT * FROM gpu_segment_contacts($$SELECT * FROM (VALUES (1, 'LINESTRING M (0 0 0,10 0 10)'::geometry),
	(2, 'LINESTRING M (0 2 0,10 2 10)'::geometry), (1, 'LINESTRING M (0 1 0,10 1 10)'::geometry)) t$$, NULL, 5);
SELECT * FROM gpu_segment_join(ARRAY[3, 3]::bigint[], ARRAY['LINESTRING M (0 0 0,10 0 10)'::geometry,
	'LINESTRING M (0 1 0,10 1 10)'], NULL, NULL, 5);
-- two sets may repeat ids
SELECT a_id, b_id, a_seg, b_seg FROM gpu_segment_join($$SELECT 1, 'LINESTRING M (0 0 0,10 0 10)'::geometry$$,
	$$SELECT 1, 'LINESTRING M (0 1 0,10 1 10)'::geometry$$, 5);

-- coordinates and speeds past 2^250 (the quadratic's fourth powers would overflow): no NaN, and the answer
-- worked out by hand (within: crossing at the origin at t = 5, or equal, or 1e190 apart at 1e189: no; PostGIS's
-- ST_CPAWithin overflows there too, so it is no reference)
WITH pairs(n, a, b, d, within) AS (VALUES
	(1, 'LINESTRING M (-1e150 0 0,1e150 0 10)'::geometry, 'LINESTRING M (0 -1e150 0,0 1e150 10)'::geometry, 5.0, true),
	(2, 'LINESTRING M (-1e300 0 0,1e300 0 10)', 'LINESTRING M (0 -1e300 0,0 1e300 10)', 5, true),
	(3, 'LINESTRING M (-1.7e308 0 0,1.7e308 0 10)', 'LINESTRING M (0 -1.7e308 0,0 1.7e308 10)', 5, true),
	(4, 'LINESTRING M (0 0 0,1e10 0 1e-300)', 'LINESTRING M (0 0 0,0 1 10)', 5, true),
	(5, 'LINESTRING M (1e200 1e200 0,1e200 1e200 10)', 'LINESTRING M (1e200 1e200 0,1e200 1e200 10)', 1e-100, true),
	(6, 'LINESTRING M (1e200 0 0,1e200 0 10)', 'LINESTRING M (1e200 1e190 0,1e200 1e190 10)', 1e189, false),
	(7, 'LINESTRING M (1e200 0 0,1e200 0 10)', 'LINESTRING M (1e200 1e190 0,1e200 -1e190 10)', 1e189, true))
SELECT n, within, j.a_id IS NOT NULL AS geoacc, j.t_start, j.t_end, j.cpa_time, j.cpa_distance
FROM pairs LEFT JOIN LATERAL gpu_segment_join(ARRAY[1]::bigint[], ARRAY[a], ARRAY[2]::bigint[], ARRAY[b], d) j ON true
ORDER BY n;
-- a segment whose duration overflows
SELECT * FROM gpu_segment_join(ARRAY[1]::bigint[], ARRAY['LINESTRING M (0 0 -1e308,1 0 1e308)'::geometry],
	ARRAY[2]::bigint[], ARRAY['LINESTRING M (0 0 0,1 0 1)'::geometry], 5);

-- method names as kernel names: in any case
SELECT count(*) FROM gpu_segment_join('SELECT id, traj FROM hand', NULL, 10, 'AUTO');
SELECT count(*) FROM gpu_segment_join('SELECT id, traj FROM hand', NULL, 10, 'Spatial');
