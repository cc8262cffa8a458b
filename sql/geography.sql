-- Geography trajectories, measured in metres: gpu_dp_simplify, geoacc_dp_simplify, gpu_twed,
-- gpu_twed_matrix and gpu_segment_join on the real AIS tracks in longitude and latitude, checked
-- against PostGIS's geodesic distances (ST_Distance(geography), on the WGS 84 spheroid) and against
-- PostGIS's own Earth-centred coordinates (ST_Transform to EPSG:4978).  Outputs are booleans and
-- counts, the same on the CPU and on the GPU.
\i test/data/ais_fixture.sql

CREATE TEMP TABLE geog AS SELECT id, source, ST_Transform(traj, 4326)::geography AS traj FROM ais_tracks;
SELECT count(*) AS tracks, bool_and(ST_SRID(traj) = 4326) AS all_4326 FROM geog;

-- simplification: the window function and the scalar form agree, results are geographies with
-- the original vertices bit for bit, stored as PostGIS stores a geography
CREATE TEMP TABLE geog_simplified AS
SELECT id, t, traj, gpu_dp_simplify(traj, t) OVER (PARTITION BY t) AS s,
	gpu_dp_simplify(traj, t, true) OVER (PARTITION BY t) AS p,
	geoacc_dp_simplify(traj, t, true) AS scalar
FROM geog, unnest(ARRAY[1, 10, 50]::float8[]) t;
CREATE FUNCTION pg_temp.raw(geography) RETURNS bytea LANGUAGE internal IMMUTABLE STRICT AS 'byteasend';
SELECT t, count(*) AS tracks, count(s) AS not_collapsed, sum(ST_NPoints(traj::geometry)) AS points_before,
	sum(ST_NPoints(p::geometry)) AS points_after,
	bool_and(pg_temp.raw(scalar) = pg_temp.raw(p)) AS scalar_equal,
	bool_and(pg_temp.raw(p) = pg_temp.raw(p::geometry::geography)) AS stored_as_postgis
FROM geog_simplified GROUP BY t ORDER BY t;
SELECT count(*) AS kept_vertices_not_in_original
FROM (SELECT id, t, ST_AsEWKB((ST_DumpPoints(p::geometry)).geom) AS v FROM geog_simplified) k
LEFT JOIN (SELECT DISTINCT id, ST_AsEWKB((ST_DumpPoints(traj::geometry)).geom) AS v FROM geog) o USING (id, v)
WHERE o.id IS NULL;

-- Douglas-Peucker's promise in metres: every vertex removed lies within the tolerance of the
-- segment that replaced it, by PostGIS's geodesic distance to that geography segment (1e-4
-- relative: the projection's error on these tracks, all within 220 km of their centres, is below it)
CREATE TEMP TABLE geog_vertices AS
SELECT v.id, v.t, v.i, v.pt, v.kept,
	max(v.i) FILTER (WHERE v.kept) OVER (PARTITION BY v.id, v.t ORDER BY v.i) AS before,
	min(v.i) FILTER (WHERE v.kept) OVER (PARTITION BY v.id, v.t ORDER BY v.i DESC) AS after
FROM (SELECT o.id, o.t, o.i, o.pt, k.id IS NOT NULL AS kept
	FROM (SELECT id, t, (d).path[1] AS i, (d).geom AS pt
		FROM (SELECT id, t, ST_DumpPoints(traj::geometry) AS d FROM geog_simplified) x) o
	LEFT JOIN (SELECT DISTINCT id, t, ST_AsEWKB((ST_DumpPoints(p::geometry)).geom) AS w FROM geog_simplified) k
		ON k.id = o.id AND k.t = o.t AND k.w = ST_AsEWKB(o.pt)) v;
SELECT v.t, count(*) AS removed,
	bool_and(ST_Distance(v.pt::geography, ST_MakeLine(a.pt, b.pt)::geography) <= v.t * (1 + 1e-4)) AS within_tolerance
FROM geog_vertices v
JOIN geog_vertices a ON a.id = v.id AND a.t = v.t AND a.i = v.before
JOIN geog_vertices b ON b.id = v.id AND b.t = v.t AND b.i = v.after
WHERE NOT v.kept
GROUP BY v.t ORDER BY v.t;

-- against Douglas-Peucker computed with PostGIS's geodesic distances (ST_Distance of a vertex and
-- the geography segment, in PL/pgSQL): the same vertices on nearly every track (the fixes are
-- rounded to 1e-5 degrees, so equal distances abound, and two computations may split a segment at
-- different ones of them)
CREATE FUNCTION pg_temp.dp_reference(traj geography, tolerance float8) RETURNS geography
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	pts geometry[] := ARRAY(SELECT geom FROM ST_DumpPoints(traj::geometry) ORDER BY path);
	n int := cardinality(pts);
	keep boolean[] := array_fill(false, ARRAY[n]);
	stack int[] := ARRAY[n];
	first int := 1;
	last int;
	best float8;
	split int;
	d float8;
	seg geography;
BEGIN
	keep[1] := true;
	keep[n] := true;
	WHILE cardinality(stack) > 0 LOOP
		last := stack[cardinality(stack)];
		best := tolerance;
		split := first;
		IF last - first >= 2 THEN
			seg := ST_MakeLine(pts[first], pts[last])::geography;
			FOR c IN first + 1 .. last - 1 LOOP
				d := ST_Distance(pts[c]::geography, seg);
				IF d > best THEN
					best := d;
					split := c;
				END IF;
			END LOOP;
		END IF;
		IF split = first THEN
			first := last;
			stack := stack[1:cardinality(stack) - 1];
		ELSE
			keep[split] := true;
			stack := stack || split;
		END IF;
	END LOOP;
	RETURN ST_MakeLine(ARRAY(SELECT pts[i] FROM generate_subscripts(keep, 1) i WHERE keep[i] ORDER BY i))::geography;
END
$$;
SELECT t, count(*) AS tracks, count(*) FILTER (WHERE pg_temp.raw(p) = pg_temp.raw(pg_temp.dp_reference(traj, t)))
	>= 0.97 * count(*) AS nearly_all_equal
FROM geog_simplified WHERE ST_NPoints(traj::geometry) <= 200 GROUP BY t ORDER BY t;

-- random() below is seeded: every run draws the same inputs
SELECT setseed(0.5);

-- fresh random tracks all over the globe (the equator, near the poles, every ninth across the
-- antimeridian), heading east with a wandering latitude, up to about 200 km from their centres,
-- positions not rounded: every vertex within the tolerance of the result to 2e-3 relative, and at
-- least 90% of the tracks as the reference (a vertex whose distance lies within the projection's
-- error of the tolerance may be decided the other way)
CREATE TEMP TABLE geog_random AS
SELECT g AS id, ST_MakeLine(array_agg(ST_SetSRID(ST_MakePointM(
		CASE WHEN lon > 180 THEN lon - 360 ELSE lon END, lat, 1.6e9 + i * 60), 4326) ORDER BY i))::geography AS traj
FROM (SELECT g, i, lon0 + sum(dlon) OVER w AS lon, greatest(-89.99, least(89.99, lat0 + sum(dlat) OVER w)) AS lat
	FROM (SELECT g, i, CASE WHEN g % 9 = 0 THEN 179.9 ELSE (g % 9) * 40 - 179.8 END AS lon0,
			(g % 7) * 28 - 84 AS lat0,
			(0.5 + random()) * 0.01 / cos(radians((g % 7) * 28 - 84)) AS dlon,
			(random() - 0.5) * 0.05 AS dlat
		FROM generate_series(1, 60) g, generate_series(1, 30 + (random() * 90)::int) i) s
	WINDOW w AS (PARTITION BY g ORDER BY i)) p
GROUP BY g;
SELECT count(*) AS tracks, count(*) FILTER (WHERE ST_XMax(traj::geometry) - ST_XMin(traj::geometry) > 180) > 0
	AS some_across_the_antimeridian
FROM geog_random;
SELECT t, count(*) AS tracks,
	count(*) FILTER (WHERE pg_temp.raw(s) = pg_temp.raw(pg_temp.dp_reference(traj, t))) >= 0.9 * count(*)
		AS mostly_equal,
	bool_and(NOT EXISTS (
		SELECT 1 FROM (SELECT (d).path[1] AS i, (d).geom AS pt FROM ST_DumpPoints(traj::geometry) d) v
		WHERE ST_Distance(v.pt::geography, s) > t * (1 + 2e-3))) AS every_vertex_within_tolerance
FROM (SELECT t, traj, gpu_dp_simplify(traj, t, true) OVER (PARTITION BY t) AS s
	FROM geog_random, unnest(ARRAY[30, 300, 3000]::float8[]) t) x
GROUP BY t ORDER BY t;

-- by hand, against PostGIS's distance of the middle vertex from the segment: across the
-- antimeridian (1.1057 m), at 60 degrees north (1.1137 m), over the pole (1116.94 m)
SELECT name, t, ST_AsText(geoacc_dp_simplify(traj, t)) AS simplified
FROM (VALUES
	('antimeridian', 'SRID=4326;LINESTRING M (179.999 0 1, 180 0.00001 2, -179.999 0 3)'::geography, 1.105, 1.106),
	('north', 'SRID=4326;LINESTRING M (10 60 1, 10.001 60.00001 2, 10.002 60 3)', 1.113, 1.114),
	('pole', 'SRID=4326;LINESTRING M (0 89.99 1, 90 89.99 2, 180 89.99 3)', 1116.9, 1117)) v(name, traj, below, above),
	LATERAL unnest(ARRAY[below, above]) t
ORDER BY name, t;
-- height with use_z (metres, as Z of a geography), the synchronized distance, and a MULTILINESTRING
SELECT ST_AsText(geoacc_dp_simplify('SRID=4326;LINESTRING ZM (10 50 0 1, 10.0001 50 3 2, 10.0002 50 0 3)'::geography,
		2, use_z => true)) AS height_3,
	ST_AsText(geoacc_dp_simplify('SRID=4326;LINESTRING ZM (10 50 0 1, 10.0001 50 3 2, 10.0002 50 0 3)'::geography,
		2)) AS height_not_measured,
	ST_AsText(geoacc_dp_simplify('SRID=4326;LINESTRING M (10 50 0, 10.001 50 90, 10.002 50 100)'::geography,
		50, synchronized => true)) AS late_vertex_synchronized,
	ST_AsText(geoacc_dp_simplify('SRID=4326;MULTILINESTRING M ((10 50 0, 10.001 50.00001 1, 10.002 50 2), (11 50 3, 11 50 4))'::geography,
		5)) AS multi;
-- too large for the projection, and the other errors
SELECT geoacc_dp_simplify('SRID=4326;LINESTRING M (0 0 1, 5 0 2, 12 0 3)'::geography, 10);
SELECT gpu_dp_simplify(traj, 10) OVER (ORDER BY id)
FROM (VALUES (1, 'SRID=4326;LINESTRING M (0 0 1591272000, 0.1 0 1591272060, 0.2 0 1591272120)'::geography),
	(2, 'SRID=4326;LINESTRING M (0 0 1591272000, 0.1 0 1591272060, 0.2 0 1591272060)')) v(id, traj);
SELECT geoacc_dp_simplify('SRID=4326;LINESTRING M (0 0 1, 0.1 0 2, 0.2 0 3)'::geography, 1, use_z => true);

-- TWED: the Euclidean distance of two points' Earth-centred WGS 84 coordinates is their chord,
-- shorter than PostGIS's geodesic distance by d^2 / (24 R^2) relative: one-point trajectories
-- measure it alone; pairs of fixes up to about 100 km apart, within 1e-5 relative
CREATE TEMP TABLE geog_points AS
SELECT id, ST_PointN(traj::geometry, 1) AS p FROM geog WHERE source = 'ny_harbor_2020-12-08';
SELECT count(*) AS pairs, max(ST_Distance(a.p::geography, b.p::geography)) > 30000 AS some_far,
	bool_and(abs(gpu_twed(ST_MakeLine(ARRAY[a.p])::geography, ST_MakeLine(ARRAY[b.p])::geography, nu => 0)
		- ST_Distance(a.p::geography, b.p::geography)) <= 1e-5 * ST_Distance(a.p::geography, b.p::geography) + 1e-6)
		AS chord_is_geodesic
FROM geog_points a JOIN geog_points b ON a.id < b.id;
-- and the same coordinates as PostGIS's own Earth-centred ones (EPSG:4978, through PROJ): the
-- distance of a geography pair is the 3D distance of that pair in EPSG:4978, to 1e-9 relative
SELECT count(*) AS pairs,
	bool_and(abs(gpu_twed(ST_MakeLine(ARRAY[a.p])::geography, ST_MakeLine(ARRAY[b.p])::geography, nu => 0)
		- ST_3DDistance(ST_Transform(ST_Force3DZ(a.p), 4978), ST_Transform(ST_Force3DZ(b.p), 4978)))
		<= 1e-9 * ST_Distance(a.p::geography, b.p::geography)) AS same_as_epsg_4978
FROM geog_points a JOIN geog_points b ON a.id < b.id;

-- the whole TWED against the definition evaluated with PostGIS's geodesic distances, on the first
-- 12 fixes of the New York tracks, every pair (1e-5 relative)
CREATE FUNCTION pg_temp.twed_reference(a geography, b geography, nu float8, lambda float8) RETURNS float8
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	pa geometry[] := ARRAY(SELECT geom FROM ST_DumpPoints(a::geometry) ORDER BY path);
	pb geometry[] := ARRAY(SELECT geom FROM ST_DumpPoints(b::geometry) ORDER BY path);
	n int := cardinality(pa);
	m int := cardinality(pb);
	d float8[] := array_fill('Infinity'::float8, ARRAY[n + 1, m + 1]);
	match float8;
BEGIN
	d[1][1] := 0;
	FOR i IN 1..n LOOP
		FOR j IN 1..m LOOP
			match := ST_Distance(pa[i]::geography, pb[j]::geography) + nu * abs(ST_M(pa[i]) - ST_M(pb[j]));
			IF i > 1 AND j > 1 THEN
				match := match + ST_Distance(pa[i - 1]::geography, pb[j - 1]::geography)
					+ nu * abs(ST_M(pa[i - 1]) - ST_M(pb[j - 1]));
			END IF;
			d[i + 1][j + 1] := least(d[i][j] + match,
				d[i][j + 1] + CASE WHEN i > 1 THEN ST_Distance(pa[i - 1]::geography, pa[i]::geography)
					+ nu * (ST_M(pa[i]) - ST_M(pa[i - 1])) ELSE 0 END + lambda,
				d[i + 1][j] + CASE WHEN j > 1 THEN ST_Distance(pb[j - 1]::geography, pb[j]::geography)
					+ nu * (ST_M(pb[j]) - ST_M(pb[j - 1])) ELSE 0 END + lambda);
		END LOOP;
	END LOOP;
	RETURN d[n + 1][m + 1];
END
$$;
CREATE TEMP TABLE geog_short AS
SELECT id, ST_MakeLine(ARRAY(SELECT geom FROM ST_DumpPoints(traj::geometry) ORDER BY path LIMIT 12))::geography AS traj
FROM geog WHERE source = 'ny_harbor_2020-12-08' AND ST_NPoints(traj::geometry) >= 12
ORDER BY id LIMIT 16;
SELECT count(*) AS pairs, bool_and(abs(distance - reference) <= 1e-5 * reference) AS matches_geodesic_reference,
	bool_and(same) AS matrix_equals_scalar
FROM (SELECT m.distance, pg_temp.twed_reference(a.traj, b.traj, 0.01, 100) AS reference,
		m.distance = gpu_twed(a.traj, b.traj, 0.01, 100) AS same
	FROM gpu_twed_matrix('SELECT id, traj FROM geog_short', NULL, 0.01, 100) m
	JOIN geog_short a ON a.id = m.a_id JOIN geog_short b ON b.id = m.b_id) x;
SELECT count(*) AS rows, bool_and(b_id <> a_id) AS never_itself
FROM gpu_twed_matrix('SELECT id, traj FROM geog_short', NULL, 0.01, 100, k => 2);
-- heights with use_z; the errors
-- (30 m apart at both fixes, at the same times: 30 + 30 + 30 along the diagonal)
SELECT round(gpu_twed('SRID=4326;LINESTRING ZM (10 50 0 1, 10.001 50 0 2)'::geography,
		'SRID=4326;LINESTRING ZM (10 50 30 1, 10.001 50 30 2)'::geography, use_z => true)::numeric, 6) AS height_30,
	round(gpu_twed('SRID=4326;LINESTRING ZM (10 50 0 1, 10.001 50 0 2)'::geography,
		'SRID=4326;LINESTRING ZM (10 50 30 1, 10.001 50 30 2)'::geography)::numeric, 6) AS height_not_measured;
SELECT gpu_twed('SRID=4326;LINESTRING M (10 50 1, 11 50 2)'::geography, 'SRID=4326;LINESTRING M (10 50 1, 11 50 2)'::geography,
	degree => 1);
SELECT * FROM gpu_twed_matrix('SELECT id, traj FROM geog WHERE id = 1', 'SELECT id, traj FROM ais_tracks WHERE id = 2');
SELECT gpu_twed('SRID=4326;LINESTRING M (10 50 1, 11 50 2)'::geography,
	'SRID=4326;LINESTRING ZM (10 50 0 1, 11 50 0 2)'::geography, use_z => true);

-- the segment join: the same rows as the join of PostGIS's own Earth-centred coordinates
-- (EPSG:4978, 3D), closest approaches within a micrometre
CREATE TEMP TABLE geog_join AS SELECT * FROM gpu_segment_join('SELECT id, traj FROM geog', NULL, 100);
CREATE TEMP TABLE ecef AS SELECT id, ST_Transform(ST_Force4D(ST_Transform(traj, 4326)), 4978) AS traj FROM ais_tracks;
CREATE TEMP TABLE ecef_join AS SELECT * FROM gpu_segment_join('SELECT id, traj FROM ecef', NULL, 100, use_z => true);
SELECT (SELECT count(*) FROM geog_join) AS rows, (SELECT count(*) FROM ecef_join) AS epsg_4978_rows,
	(SELECT count(*) FROM geog_join JOIN ecef_join USING (a_id, a_seg, b_id, b_seg)) AS same_pairs,
	(SELECT bool_and(abs(g.cpa_distance - e.cpa_distance) < 1e-6 AND abs(g.cpa_time - e.cpa_time) < 1e-3)
		FROM geog_join g JOIN ecef_join e USING (a_id, a_seg, b_id, b_seg)) AS same_approaches;
-- and each closest approach against PostGIS's geodesic distance between the two vessels at that
-- instant, interpolated linearly in longitude and latitude (which differs from the straight
-- segment by up to a few centimetres on these segments of up to 2 km): within 5 cm
SELECT count(*) AS rows, bool_and(abs(j.cpa_distance - ST_Distance(
		ST_LocateAlong(ST_MakeLine(ST_PointN(a.traj::geometry, j.a_seg), ST_PointN(a.traj::geometry, j.a_seg + 1)),
			j.cpa_time)::geography,
		ST_LocateAlong(ST_MakeLine(ST_PointN(b.traj::geometry, j.b_seg), ST_PointN(b.traj::geometry, j.b_seg + 1)),
			j.cpa_time)::geography)) <= 0.05) AS as_postgis
FROM geog_join j JOIN geog a ON a.id = j.a_id JOIN geog b ON b.id = j.b_id;
-- by hand: a vessel 50 m east of another (ST_Project, geodesic) all along its track
CREATE TEMP TABLE geog_pair AS
SELECT 1 AS id, 'SRID=4326;LINESTRING M (-74 40.5 0, -74 40.51 100)'::geography AS traj
UNION ALL
SELECT 2, ST_MakeLine(ST_Project('SRID=4326;POINT (-74 40.5)'::geography, 50, radians(90))::geometry,
	ST_Project('SRID=4326;POINT (-74 40.51)'::geography, 50, radians(90))::geometry)::geography;
UPDATE geog_pair SET traj = ST_MakeLine(ST_MakePointM(ST_X(ST_StartPoint(traj::geometry)), ST_Y(ST_StartPoint(traj::geometry)), 0),
	ST_MakePointM(ST_X(ST_EndPoint(traj::geometry)), ST_Y(ST_EndPoint(traj::geometry)), 100))::geography WHERE id = 2;
SELECT (SELECT count(*) FROM gpu_segment_join('SELECT id, traj FROM geog_pair', NULL, 50)) AS at_50,
	(SELECT count(*) FROM gpu_segment_join('SELECT id, traj FROM geog_pair', NULL, 49.999)) AS at_49_999,
	(SELECT round(min_distance::numeric, 4) FROM gpu_segment_contacts('SELECT id, traj FROM geog_pair', NULL, 60))
		AS closest_m;
-- the device in use and the CPU give the same bits (under geoacc.device = gpu this compares the GPU
-- with the CPU: the kernels see the same projected coordinates)
CREATE TEMP TABLE geog_twed AS SELECT * FROM gpu_twed_matrix('SELECT id, traj FROM geog_short', NULL, 0.01, 100);
SET geoacc.device = 'cpu';
SELECT count(*) AS rows, bool_and(pg_temp.raw(c.p) = pg_temp.raw(g.p)) AS simplify_same_on_cpu
FROM (SELECT id, t, gpu_dp_simplify(traj, t, true) OVER (PARTITION BY t) AS p FROM geog, unnest(ARRAY[1, 10, 50]::float8[]) t) c
JOIN geog_simplified g USING (id, t);
SELECT count(*) AS pairs, bool_and(c.distance = g.distance) AS twed_same_on_cpu
FROM gpu_twed_matrix('SELECT id, traj FROM geog_short', NULL, 0.01, 100) c JOIN geog_twed g USING (a_id, b_id);
SELECT (SELECT count(*) FROM gpu_segment_join('SELECT id, traj FROM geog', NULL, 100)) AS rows,
	(SELECT count(*) FROM (SELECT * FROM gpu_segment_join('SELECT id, traj FROM geog', NULL, 100)
		EXCEPT ALL SELECT * FROM geog_join) x) AS join_differs_on_cpu;
RESET geoacc.device;

SELECT * FROM gpu_segment_join('SELECT id, traj FROM geog', 'SELECT id, traj FROM ais_tracks', 100);
SELECT * FROM gpu_segment_join('SELECT id, ST_Transform(traj, 4326) FROM ais_tracks', NULL, 100);
