-- gpu_dp_simplify() and geoacc_compression_stats().  Every check prints
-- counts, booleans or WKT that are the same whichever device runs.
\i test/data/ais_fixture.sql

-- ST_Simplify equality on every real AIS track at the tolerances of the
-- issue, one window partition per tolerance, with ST_Simplify's positional
-- arguments: NULL where a track collapsed to two vertices with the same XY,
-- and with preserve_collapsed those two vertices, as ST_Simplify(g, t, true).
CREATE TEMP TABLE simplify_ais AS
SELECT t AS tolerance, id, traj,
	gpu_dp_simplify(traj, t) OVER (PARTITION BY t) AS simplified,
	ST_Simplify(traj, t) AS postgis,
	gpu_dp_simplify(traj, t, true) OVER (PARTITION BY t) AS preserved,
	ST_Simplify(traj, t, true) AS postgis_preserved,
	geoacc_dp_simplify(traj, t, true) AS scalar_preserved
FROM ais_tracks, unnest(ARRAY[0, 0.1, 1, 5, 10, 50]::float8[]) t;

SELECT tolerance, count(*) AS tracks,
	count(*) FILTER (WHERE ST_AsEWKB(simplified) IS NOT DISTINCT FROM ST_AsEWKB(postgis)) AS equal,
	count(*) FILTER (WHERE simplified IS NULL) AS collapsed,
	count(*) FILTER (WHERE ST_AsEWKB(preserved) = ST_AsEWKB(postgis_preserved)) AS equal_preserved,
	count(*) FILTER (WHERE ST_AsEWKB(scalar_preserved) = ST_AsEWKB(preserved)) AS scalar_equal,
	sum(ST_NPoints(traj)) AS points_before,
	sum(ST_NPoints(preserved)) AS points_after
FROM simplify_ais GROUP BY tolerance ORDER BY tolerance;

-- and stored byte for byte as PostGIS stores its own result (flags, bounding box, coordinates)
CREATE FUNCTION simplify_raw(geometry) RETURNS bytea LANGUAGE internal IMMUTABLE STRICT AS 'byteasend';
SELECT count(*) AS compared, count(*) FILTER (WHERE simplify_raw(simplified) = simplify_raw(postgis)) AS same_bytes
FROM simplify_ais WHERE postgis IS NOT NULL;

-- the table twice as one partition (115,190 points: a chunk of at most
-- 65,536 vertices, then one of at most 131,072), and under a 1 MB device
-- memory cap (on a GPU many chunks and pieces): the same results
CREATE TEMP TABLE simplify_twice AS
SELECT id, traj FROM ais_tracks UNION ALL SELECT id + 100000, traj FROM ais_tracks;
SELECT bool_and(ST_AsEWKB(s.simplified) = ST_AsEWKB(a.simplified)) AS same_in_chunks, count(*) AS tracks
FROM (SELECT id, gpu_dp_simplify(traj, 5) OVER (ORDER BY id DESC) AS simplified FROM simplify_twice) s
JOIN simplify_ais a ON a.id = s.id % 100000 AND a.tolerance = 5;
SET geoacc.gpu_memory_limit = '1MB';
SELECT bool_and(ST_AsEWKB(s.simplified) = ST_AsEWKB(a.simplified)) AS same_under_a_cap, count(*) AS tracks
FROM (SELECT id, gpu_dp_simplify(traj, 5) OVER (ORDER BY id) AS simplified FROM simplify_twice) s
JOIN simplify_ais a ON a.id = s.id % 100000 AND a.tolerance = 5;
RESET geoacc.gpu_memory_limit;

-- random() below is seeded: every run draws the same inputs
SELECT setseed(0.25);

-- fresh random trajectories on an integer grid (exact ties, collinear runs,
-- repeated positions, backtracking) against ST_Simplify
CREATE TEMP TABLE simplify_random AS
WITH steps AS (
	SELECT g AS id, i,
		CASE WHEN r < 0.15 THEN 0 WHEN r < 0.35 THEN 3 WHEN r < 0.45 THEN -3
			ELSE round((random() - 0.5) * 40) END AS dx,
		CASE WHEN r < 0.15 THEN 0 WHEN r < 0.35 THEN 4 WHEN r < 0.45 THEN -4
			ELSE round((random() - 0.5) * 40) END AS dy,
		round((random() - 0.5) * 10) AS dz,
		1 + floor(random() * 30) AS dt
	FROM generate_series(1, 300) g,
		LATERAL generate_series(1, 1 + (random() * random() * 400)::int + g * 0) i,
		LATERAL (SELECT random() + i * 0 AS r) rr
)
SELECT id, ST_SetSRID(ST_MakeLine(array_agg(ST_MakePoint(x, y, z, m) ORDER BY i)), 32618) AS traj
FROM (SELECT id, i,
		500000 + sum(dx) OVER w AS x, 4000000 + sum(dy) OVER w AS y,
		sum(dz) OVER w AS z, 1.6e9 + sum(dt) OVER w AS m
	FROM steps WINDOW w AS (PARTITION BY id ORDER BY i)) p
GROUP BY id;

SELECT count(*) AS checks,
	bool_and(ST_AsEWKB(simplified) IS NOT DISTINCT FROM ST_AsEWKB(postgis)) AS all_equal_to_st_simplify,
	bool_and(simplify_raw(simplified) = simplify_raw(postgis) OR postgis IS NULL) AS same_bytes,
	bool_and(ST_AsEWKB(preserved) = ST_AsEWKB(ST_Simplify(traj, t, true))) AS preserved_equal,
	bool_and(ST_AsEWKB(geoacc_dp_simplify(traj, t)) IS NOT DISTINCT FROM ST_AsEWKB(simplified)) AS scalar_equal
FROM (SELECT t, traj,
		gpu_dp_simplify(traj, t) OVER (PARTITION BY t) AS simplified,
		gpu_dp_simplify(traj, t, true) OVER (PARTITION BY t) AS preserved,
		ST_Simplify(traj, t) AS postgis
	FROM (SELECT traj FROM simplify_random UNION ALL SELECT ST_Force3DM(traj) FROM simplify_random) r,
		unnest(ARRAY[0, 0.5, 2, 3, 5, 7.5, 20]::float8[]) t) x;

-- every distance, on the device in use and on the CPU: the same vertices,
-- also under a tiny device memory cap
CREATE TEMP TABLE simplify_devices AS
SELECT id, t, synchronized, use_z,
	gpu_dp_simplify(traj, t, true, synchronized, use_z) OVER (PARTITION BY t, synchronized, use_z) AS simplified
FROM simplify_random, unnest(ARRAY[0, 2, 10]::float8[]) t,
	unnest(ARRAY[false, true]) synchronized, unnest(ARRAY[false, true]) use_z;
SET geoacc.gpu_memory_limit = '1MB';
SELECT count(*) AS checks, bool_and(ST_AsEWKB(s) = ST_AsEWKB(d.simplified)) AS same_under_a_cap
FROM (SELECT id, t, synchronized, use_z,
		gpu_dp_simplify(traj, t, true, synchronized, use_z) OVER (PARTITION BY t, synchronized, use_z) AS s
	FROM simplify_random, unnest(ARRAY[0, 2, 10]::float8[]) t,
		unnest(ARRAY[false, true]) synchronized, unnest(ARRAY[false, true]) use_z) x
JOIN simplify_devices d USING (id, t, synchronized, use_z);
RESET geoacc.gpu_memory_limit;
SET geoacc.device = 'cpu';
SELECT count(*) AS checks, bool_and(ST_AsEWKB(s) = ST_AsEWKB(d.simplified)) AS same_on_cpu
FROM (SELECT id, t, synchronized, use_z,
		gpu_dp_simplify(traj, t, true, synchronized, use_z) OVER (PARTITION BY t, synchronized, use_z) AS s
	FROM simplify_random, unnest(ARRAY[0, 2, 10]::float8[]) t,
		unnest(ARRAY[false, true]) synchronized, unnest(ARRAY[false, true]) use_z) x
JOIN simplify_devices d USING (id, t, synchronized, use_z);
RESET geoacc.device;

-- kept vertices are copied bit for bit (Z and M too), and every vertex is
-- within the tolerance of the simplified line (3D distance, use_z => true)
CREATE TEMP TABLE simplify_3d AS
SELECT id, r.traj, d.simplified FROM simplify_devices d JOIN simplify_random r USING (id)
WHERE t = 10 AND NOT synchronized AND use_z;
SELECT bool_and(ST_NPoints(simplified) <= ST_NPoints(traj)) AS fewer,
	bool_and(ST_AsEWKB(ST_StartPoint(simplified)) = ST_AsEWKB(ST_StartPoint(traj))
		AND ST_AsEWKB(ST_EndPoint(simplified)) = ST_AsEWKB(ST_EndPoint(traj))) AS same_ends
FROM simplify_3d;
SELECT count(*) AS kept_vertices_not_in_original
FROM (SELECT id, ST_AsEWKB((ST_DumpPoints(simplified)).geom) AS v FROM simplify_3d) k
LEFT JOIN (SELECT id, ST_AsEWKB((ST_DumpPoints(traj)).geom) AS v FROM simplify_3d) o USING (id, v)
WHERE o.id IS NULL;
SELECT count(*) AS vertices_beyond_tolerance
FROM (SELECT simplified, (ST_DumpPoints(traj)).geom AS v FROM simplify_3d) x
WHERE ST_3DDistance(v, simplified) > 10 + 1e-9;

-- the synchronized Euclidean distance, checked by hand: (6 1) at day 5 is
-- 2.236 from the segment (1 1)-(7 4) but 2.5 from where the segment puts
-- the vessel at day 5, (6 3.5)
WITH t AS (
	SELECT ST_MakeLine(ARRAY[
		ST_MakePointM(1, 1, extract(epoch FROM timestamptz '2001-01-01 00:00 UTC')),
		ST_MakePointM(6, 1, extract(epoch FROM timestamptz '2001-01-06 00:00 UTC')),
		ST_MakePointM(7, 4, extract(epoch FROM timestamptz '2001-01-07 00:00 UTC'))]) AS traj)
SELECT ST_AsText(gpu_dp_simplify(traj, 2.3) OVER ()) AS spatial,
	ST_AsText(gpu_dp_simplify(traj, 2.3, synchronized => true) OVER ()) AS synchronized,
	ST_AsText(gpu_dp_simplify(traj, 2.5, synchronized => true) OVER ()) AS synchronized_2_5
FROM t;

-- more hand-checked cases: a vertex on the path but late (spatial 0,
-- synchronized 4), a vessel waiting (spatial 0, synchronized 5), and ZM
-- (1 1 1) against (0 0 0)-(4 0 0): planar 1, 3D sqrt(2), synchronized 3D
-- sqrt(2) (it should be at (1 0 0) at time 1)
SELECT name, ST_AsText(gpu_dp_simplify(traj, tol, true, synchronized, use_z) OVER (PARTITION BY name)) AS simplified
FROM (VALUES
	('late, spatial 3.9', 'LINESTRING M (0 0 0, 5 0 9, 10 0 10)'::geometry, 3.9, false, false),
	('late, synchronized 3.9', 'LINESTRING M (0 0 0, 5 0 9, 10 0 10)', 3.9, true, false),
	('late, synchronized 4', 'LINESTRING M (0 0 0, 5 0 9, 10 0 10)', 4, true, false),
	('waiting, spatial 4.9', 'LINESTRING M (0 0 0, 0 0 5, 10 0 10)', 4.9, false, false),
	('waiting, synchronized 4.9', 'LINESTRING M (0 0 0, 0 0 5, 10 0 10)', 4.9, true, false),
	('waiting, synchronized 5', 'LINESTRING M (0 0 0, 0 0 5, 10 0 10)', 5, true, false),
	('zm, planar 0.99', 'LINESTRING ZM (0 0 0 0, 1 1 1 1, 4 0 0 4)', 0.99, false, false),
	('zm, planar 1.2', 'LINESTRING ZM (0 0 0 0, 1 1 1 1, 4 0 0 4)', 1.2, false, false),
	('zm, 3d 1.2', 'LINESTRING ZM (0 0 0 0, 1 1 1 1, 4 0 0 4)', 1.2, false, true),
	('zm, 3d 1.42', 'LINESTRING ZM (0 0 0 0, 1 1 1 1, 4 0 0 4)', 1.42, false, true),
	('zm, synchronized 3d 1.41', 'LINESTRING ZM (0 0 0 0, 1 1 1 1, 4 0 0 4)', 1.41, true, true),
	('zm, synchronized 3d 1.42', 'LINESTRING ZM (0 0 0 0, 1 1 1 1, 4 0 0 4)', 1.42, true, true),
	('zm, synchronized 2d 0.99', 'LINESTRING ZM (0 0 0 0, 1 1 1 1, 4 0 0 4)', 0.99, true, false)
) v(name, traj, tol, synchronized, use_z)
ORDER BY name;

-- NULL stays NULL, empty stays empty, 1-2 vertices come back unchanged,
-- the SRID stays; a NULL tolerance gives NULL rows
SELECT id, ST_AsEWKT(gpu_dp_simplify(traj, 1) OVER (ORDER BY id)) AS simplified
FROM (VALUES
	(1, NULL::geometry),
	(2, 'SRID=32618;LINESTRING M EMPTY'),
	(3, ST_SetSRID(ST_MakeLine(ARRAY[ST_MakePointM(5, 5, 1)]), 32618)),
	(4, 'SRID=32618;LINESTRING M (0 0 1, 0 0 2)'),
	(5, 'SRID=32618;LINESTRING M (0 0 1, 0.5 0.1 2, 1 0 3, 1 5 4)'),
	(6, 'SRID=32618;LINESTRING ZM (0 0 7 1, 0.5 0.1 8 2, 1 0 9 3)')) v(id, traj)
ORDER BY id;
SELECT count(*) AS rows, count(s) AS not_null
FROM (SELECT gpu_dp_simplify(traj, NULL) OVER () AS s FROM ais_tracks) x;

-- the scalar form: the same checks, and its own errors
SELECT id, ST_AsEWKT(geoacc_dp_simplify(traj, 1)) AS simplified
FROM (VALUES
	(1, NULL::geometry),
	(2, 'SRID=32618;LINESTRING M EMPTY'),
	(4, 'SRID=32618;LINESTRING M (0 0 1, 0 0 2)'),
	(5, 'SRID=32618;LINESTRING M (0 0 1, 0.5 0.1 2, 1 0 3, 1 5 4)'),
	(6, 'SRID=32618;LINESTRING ZM (0 0 7 1, 0.5 0.1 8 2, 1 0 9 3)'),
	(7, 'SRID=32618;LINESTRING M (0 0 1, 5 0.1 2, 0 0 3)')) v(id, traj)
ORDER BY id;
SELECT ST_AsText(geoacc_dp_simplify('LINESTRING M (0 0 1, 5 0.1 2, 0 0 3)', 10, preserve_collapsed => true))
	AS preserved;
SELECT geoacc_dp_simplify('LINESTRING M (0 0 1, 1 1 2)', -1);
SELECT geoacc_dp_simplify('LINESTRING M (0 0 1, 1 1 1, 2 2 3)', 1);
SELECT geoacc_dp_simplify('LINESTRING M (0 0 1, 1 1 2, 2 2 3)', 1, use_z => true);
SELECT geoacc_dp_simplify('POINT M (0 0 1)', 1);
-- in an UPDATE, where the window function cannot go
CREATE TEMP TABLE simplify_update AS SELECT id, traj FROM ais_tracks;
UPDATE simplify_update SET traj = geoacc_dp_simplify(traj, 10, true);
SELECT count(*) AS updated, bool_and(ST_AsEWKB(u.traj) = ST_AsEWKB(a.preserved)) AS as_the_window_function
FROM simplify_update u JOIN simplify_ais a ON a.id = u.id AND a.tolerance = 10;

-- lon/lat trajectories: a NOTICE, once per statement, that the tolerance is in degrees
SELECT count(s) AS simplified FROM (SELECT gpu_dp_simplify(ST_SetSRID(traj, 4326), 0.001) OVER () AS s
	FROM ais_tracks WHERE id < 20) x;
SELECT count(geoacc_dp_simplify(ST_SetSRID(traj, 4326), 0.001)) AS simplified FROM ais_tracks WHERE id < 20;

-- bad input: an ERROR naming the row (and the vertex)
SELECT gpu_dp_simplify(traj, 1) OVER (ORDER BY id)
FROM (VALUES (1, 'LINESTRING M (0 0 1, 1 1 2)'::geometry), (2, 'POINT M (0 0 1)')) v(id, traj);
SELECT gpu_dp_simplify(traj, 1) OVER (ORDER BY id)
FROM (VALUES (1, 'SRID=32618;LINESTRING M (0 0 1, 1 1 2)'::geometry),
	(2, 'SRID=4326;LINESTRING M (0 0 1, 1 1 2)')) v(id, traj);
SELECT gpu_dp_simplify(traj, 1) OVER (ORDER BY id)
FROM (VALUES (1, 'LINESTRING M (0 0 1, 1 1 2)'::geometry), (2, 'LINESTRING M (0 0 1, 1 1 2, 2 0 2)')) v(id, traj);
SELECT gpu_dp_simplify(traj, 1) OVER ()
FROM (VALUES ('LINESTRING M (0 0 1, NaN 0 2, 1 1 3)'::geometry)) v(traj);
SELECT gpu_dp_simplify(traj, 1) OVER ()
FROM (VALUES (ST_MakeLine(ARRAY[ST_MakePointM(0, 0, 1), ST_MakePointM(1, 1, 2), ST_MakePointM(2, 'Infinity', 3)]))) v(traj);
SELECT gpu_dp_simplify(traj, 1) OVER ()
FROM (VALUES ('LINESTRING (0 0, 1 1, 2 0)'::geometry)) v(traj);
SELECT gpu_dp_simplify(traj, -1) OVER () FROM ais_tracks;
SELECT gpu_dp_simplify(traj, 'NaN') OVER () FROM ais_tracks;
SELECT gpu_dp_simplify(traj, 1, use_z => true) OVER () FROM ais_tracks;
-- a row is named by its position and the time of its first vertex (M in epoch seconds)
SELECT gpu_dp_simplify(traj, 1) OVER (ORDER BY id)
FROM (VALUES (1, 'LINESTRING M (0 0 1591272000, 1 1 1591272060)'::geometry),
	(2, 'LINESTRING M (0 0 1591272000, 1 1 1591272060.5, 2 0 1591272060.5)')) v(id, traj);
SELECT gpu_dp_simplify(traj, 10) OVER ()
FROM (VALUES ('MULTILINESTRING M ((0 0 1591272000, 1 1 1591272060, 2 0 1591272120), (5 5 1591272180, 6 6 1591272180))'::geometry)) v(traj);

-- arguments may change from row to row: each row is simplified with its own, as ST_Simplify
-- and the scalar form do (consecutive rows with the same arguments share a core call)
SELECT count(*) AS rows, count(DISTINCT (t, p)) AS argument_sets,
	bool_and(ST_AsEWKB(s) IS NOT DISTINCT FROM ST_AsEWKB(ST_Simplify(traj, t, p))) AS as_st_simplify
FROM (SELECT traj, t, p, gpu_dp_simplify(traj, t, p) OVER (ORDER BY id) AS s
	FROM ais_tracks, LATERAL (SELECT (id % 4) * 5.0 AS t, id % 3 = 0 AS p) a) x;
SELECT count(*) AS rows,
	bool_and(ST_AsEWKB(s) IS NOT DISTINCT FROM ST_AsEWKB(geoacc_dp_simplify(traj, t, true, sync, z))) AS as_scalar
FROM (SELECT traj, t, sync, z, gpu_dp_simplify(traj, t, true, sync, z) OVER (ORDER BY id, t) AS s
	FROM simplify_random, LATERAL (SELECT (id % 3) * 4.0 AS t, id % 2 = 0 AS sync, id % 5 < 2 AS z) a) x;
-- a NULL argument gives that row NULL; a constant NULL every row without reading them
SELECT count(*) AS rows, count(s) AS not_null, count(*) FILTER (WHERE id % 10 = 3) AS null_tolerance
FROM (SELECT id, gpu_dp_simplify(traj, CASE WHEN id % 10 = 3 THEN NULL ELSE 1 END, true) OVER (ORDER BY id) AS s
	FROM ais_tracks) x;

-- MULTILINESTRING M, what ST_LocateBetween returns, is simplified line by line as ST_Simplify
-- does: a line that collapses is dropped, the whole is NULL when none is left, and a line of two
-- vertices at one place goes only when another line lost vertices
CREATE TEMP TABLE simplify_multi AS
SELECT id, ST_Collect(piece ORDER BY k) AS traj
FROM (SELECT id, k, ST_MakeLine(geom ORDER BY i) AS piece
	FROM (SELECT id, (d).path[1] AS i, (d).geom, ((d).path[1] * 7 + id) / (3 + id % 20) AS k
		FROM (SELECT id, ST_DumpPoints(traj) AS d FROM simplify_random) x) p
	GROUP BY id, k) q
GROUP BY id;
SELECT count(*) AS checks, count(DISTINCT ST_NumGeometries(traj)) > 10 AS varied_lines,
	bool_and(ST_GeometryType(traj) = 'ST_MultiLineString') AS all_multi,
	bool_and(simplify_raw(s) IS NOT DISTINCT FROM simplify_raw(ST_Simplify(traj, t))) AS same_bytes_as_st_simplify,
	bool_and(simplify_raw(p) IS NOT DISTINCT FROM simplify_raw(ST_Simplify(traj, t, true))) AS preserved_same_bytes,
	bool_and(ST_AsEWKB(geoacc_dp_simplify(traj, t)) IS NOT DISTINCT FROM ST_AsEWKB(s)) AS scalar_equal,
	count(*) FILTER (WHERE ST_NumGeometries(s) < ST_NumGeometries(traj)) > 0 AS some_lines_dropped
FROM (SELECT t, traj, gpu_dp_simplify(traj, t) OVER (PARTITION BY t) AS s,
		gpu_dp_simplify(traj, t, true) OVER (PARTITION BY t) AS p
	FROM (SELECT traj FROM simplify_multi UNION ALL SELECT ST_Force3DM(traj) FROM simplify_multi) r,
		unnest(ARRAY[0, 0.5, 2, 5, 20]::float8[]) t) x;
-- the real tracks cut to the fixes of every second ten minutes by ST_LocateBetween
CREATE TEMP TABLE simplify_located AS
SELECT id, ST_LocateBetween(traj, ST_M(ST_StartPoint(traj)), ST_M(ST_EndPoint(traj))) AS whole,
	(SELECT ST_Collect(ST_LocateBetween(traj, w, w + 599.999) ORDER BY w)
		FROM generate_series(ST_M(ST_StartPoint(traj))::bigint, ST_M(ST_EndPoint(traj))::bigint, 1200) w) AS windows
FROM ais_tracks;
SELECT count(*) AS tracks, bool_and(ST_GeometryType(whole) = 'ST_MultiLineString') AS located_is_multi,
	bool_and(ST_AsEWKB(gw) IS NOT DISTINCT FROM ST_AsEWKB(ST_Simplify(whole, 10))) AS whole_equal,
	bool_and(ST_AsEWKB(ww) IS NOT DISTINCT FROM ST_AsEWKB(ST_Simplify(ST_CollectionExtract(windows, 2), 10)))
		AS windows_equal
FROM (SELECT whole, windows, gpu_dp_simplify(whole, 10) OVER () AS gw,
		gpu_dp_simplify(ST_CollectionExtract(windows, 2), 10) OVER () AS ww FROM simplify_located) x;
-- a time window of a track with ST_FilterByM(traj, t0, t1, true): a LINESTRING M
SELECT count(*) AS tracks, bool_and(ST_GeometryType(w) = 'ST_LineString') AS lines,
	bool_and(ST_AsEWKB(gpu) IS NOT DISTINCT FROM ST_AsEWKB(ST_Simplify(w, 10))) AS equal
FROM (SELECT w, gpu_dp_simplify(w, 10) OVER () AS gpu
	FROM (SELECT ST_FilterByM(traj, extract(epoch FROM timestamptz '2020-06-05 12:00+00'),
			extract(epoch FROM timestamptz '2020-06-05 14:00+00'), true) AS w
		FROM ais_tracks) f
	WHERE NOT ST_IsEmpty(w)) x;
-- by hand: every line collapsed (NULL, or kept with preserve_collapsed); a line of two vertices at
-- one place stays while no other line loses a vertex
SELECT name, ST_AsText(gpu_dp_simplify(traj, 10, preserve) OVER (PARTITION BY name)) AS simplified,
	ST_AsText(ST_Simplify(traj, 10, preserve)) AS st_simplify
FROM (VALUES
	('collapsed', 'MULTILINESTRING M ((0 0 1, 5 0.1 2, 0 0 3), (1 1 4, 1 1 5))'::geometry, false),
	('collapsed, preserved', 'MULTILINESTRING M ((0 0 1, 5 0.1 2, 0 0 3), (1 1 4, 1 1 5))', true),
	('nothing removed', 'MULTILINESTRING M ((0 0 1, 50 50 2, 100 0 3), (1 1 4, 1 1 5))', false),
	('one line simplified', 'MULTILINESTRING M ((0 0 1, 1 1 2, 100 0 3), (1 1 4, 1 1 5), EMPTY)', false),
	('empty', 'MULTILINESTRING M EMPTY', false)) v(name, traj, preserve)
ORDER BY name;
SELECT geoacc_dp_simplify('MULTILINESTRING M ((0 0 1, 1 1 2, 2 0 3), (0 0 5, 1 1 4))'::geometry, 1);
SELECT geoacc_dp_simplify('GEOMETRYCOLLECTION M (LINESTRING M (0 0 1, 1 1 2))'::geometry, 1);

-- compression statistics, by hand: half the vertices removed, no length
-- lost, (1 0) and (2 0) are 1 from their nearest kept vertex
SELECT * FROM geoacc_compression_stats('LINESTRING (0 0, 1 0, 2 0, 3 0)', 'LINESTRING (0 0, 3 0)');
SELECT * FROM geoacc_compression_stats('LINESTRING M (0 0 1, 0 3 2, 4 3 3, 4 0 4)', 'LINESTRING M (0 0 1, 4 0 4)');
SELECT * FROM geoacc_compression_stats('LINESTRING (5 5, 5 5)', 'LINESTRING (5 5, 5 5)');
SELECT * FROM geoacc_compression_stats('LINESTRING EMPTY', 'LINESTRING (5 5, 5 5)');
SELECT * FROM geoacc_compression_stats('POINT (0 0)', 'LINESTRING (5 5, 5 5)');
SELECT * FROM geoacc_compression_stats('SRID=4326;LINESTRING (0 0, 1 1)', 'SRID=32618;LINESTRING (0 0, 1 1)');
SELECT * FROM geoacc_compression_stats('LINESTRING (0 0, 1 NaN, 2 0)', 'LINESTRING (0 0, 2 0)');
SELECT * FROM geoacc_compression_stats('LINESTRING M (0 0 1, 2 0 2)', ST_MakeLine(ST_MakePointM(0, 0, 1), ST_MakePointM(2, 0, 'Infinity')));

-- against an independent computation: point counts, ST_Length, and a
-- textbook DTW in PL/pgSQL with ST_Distance (on the shorter tracks)
CREATE FUNCTION pg_temp.dtw(a geometry, b geometry) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	pa geometry[] := ARRAY(SELECT ST_Force2D(geom) FROM ST_DumpPoints(a) ORDER BY path);
	pb geometry[] := ARRAY(SELECT ST_Force2D(geom) FROM ST_DumpPoints(b) ORDER BY path);
	n int := cardinality(pa);
	m int := cardinality(pb);
	d float8[] := array_fill('Infinity'::float8, ARRAY[n + 1, m + 1]);
BEGIN
	d[1][1] := 0;
	FOR i IN 1..n LOOP
		FOR j IN 1..m LOOP
			d[i + 1][j + 1] := ST_Distance(pa[i], pb[j]) + least(d[i][j + 1], d[i + 1][j], d[i][j]);
		END LOOP;
	END LOOP;
	RETURN d[n + 1][m + 1];
END
$$;
SELECT count(*) AS tracks,
	bool_and((s).compression_ratio = 1 - ST_NPoints(simplified)::float8 / ST_NPoints(traj)) AS ratio_ok,
	bool_and(abs((s).length_loss_rate - (ST_Length(traj) - ST_Length(simplified)) / ST_Length(traj)) < 1e-12)
		AS length_loss_ok,
	bool_and(abs((s).dtw_distance - pg_temp.dtw(traj, simplified)) <= 1e-9 * (s).dtw_distance)
		FILTER (WHERE ST_NPoints(traj) <= 150) AS dtw_ok
FROM (SELECT traj, preserved AS simplified, geoacc_compression_stats(traj, preserved) AS s
	FROM simplify_ais WHERE tolerance = 10 AND ST_Length(traj) > 0) x;

-- the DTW distance on its own: the same number, against the plain reference
SELECT count(*) AS tracks,
	bool_and(geoacc_dtw_distance(traj, preserved) = (geoacc_compression_stats(traj, preserved)).dtw_distance)
		AS same_as_stats,
	bool_and(abs(geoacc_dtw_distance(traj, preserved) - pg_temp.dtw(traj, preserved))
		<= 1e-9 * geoacc_dtw_distance(traj, preserved)) FILTER (WHERE ST_NPoints(traj) <= 150) AS dtw_ok
FROM simplify_ais WHERE tolerance = 10;
SELECT geoacc_dtw_distance('LINESTRING EMPTY', 'LINESTRING (0 0, 1 1)') IS NULL AS empty_is_null,
	geoacc_dtw_distance('LINESTRING (0 0, 3 4)', 'LINESTRING (0 0, 0 0, 3 4)') AS repeated_vertex_costs_nothing;
SELECT geoacc_dtw_distance('SRID=4326;LINESTRING (0 0, 1 1)', 'SRID=32618;LINESTRING (0 0, 1 1)');
SELECT geoacc_dtw_distance('LINESTRING (0 0, 1 NaN)', 'LINESTRING (0 0, 1 1)');
SELECT geoacc_dtw_distance('POINT (0 0)', 'LINESTRING (0 0, 1 1)');

-- the measures over the table, mean and standard deviation per tolerance
-- (the SQL of the documentation)
SELECT tolerance,
	round(avg((s).compression_ratio)::numeric, 3) AS ratio_mean,
	round(stddev((s).compression_ratio)::numeric, 3) AS ratio_stddev,
	round(avg((s).length_loss_rate)::numeric, 4) AS length_loss_mean,
	round(stddev((s).length_loss_rate)::numeric, 4) AS length_loss_stddev,
	round(avg((s).dtw_distance)::numeric, 0) AS dtw_mean,
	round(stddev((s).dtw_distance)::numeric, 0) AS dtw_stddev
FROM (SELECT tolerance, geoacc_compression_stats(traj, preserved) AS s FROM simplify_ais) x
GROUP BY tolerance ORDER BY tolerance;

DROP FUNCTION simplify_raw(geometry);
