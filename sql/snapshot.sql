-- Snapshots (a server with the GPU service: make installcheck-service): density rasters and web map tiles
-- read from a snapshot equal gpu_density_raster over the same rows, bit for bit, in every mode and on
-- fresh random rows; segment joins against a snapshot of trajectories equal gpu_segment_join with its query;
-- a snapshot shows its rows as of its last refresh; transactions; who may read it (its owner, roles it is
-- granted to, superusers; row-level security holds); errors.
SET client_min_messages = warning;
-- what the service keeps of other databases' snapshots, if any: the copies of this test's go by its end
CREATE TEMP TABLE copies_before AS SELECT snapshot_copies AS n FROM geoacc_service();
-- the copies left beyond those, once the device processes have released what they can (they look at least once
-- a second; up to 10 s)
CREATE FUNCTION pg_temp.copies_left() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..100 LOOP
		EXIT WHEN (SELECT snapshot_copies FROM geoacc_service()) = (SELECT n FROM copies_before);
		PERFORM pg_sleep(0.1);
	END LOOP;
	RETURN (SELECT snapshot_copies - (SELECT n FROM copies_before) FROM geoacc_service());
END $$;

SELECT geoacc_snapshot_create('ais', 'SELECT id, ST_Transform(traj, 3857) AS geom FROM ais_tracks') AS rows;
SELECT name, owner, kind, rows, points, bytes > points * 16 AS bytes_held, built IS NOT NULL AS built, query
FROM geoacc_snapshots();

-- tiles over the New York harbour at zooms 8 to 13, and empty ones: the aggregate's raster, bit for bit
CREATE TEMP TABLE tracks_3857 AS SELECT id, ST_Transform(traj, 3857) AS geom, 1 + id % 5 AS w FROM ais_tracks;
CREATE TEMP TABLE tiles AS
SELECT z, x, y FROM (VALUES (8, 75, 96), (9, 150, 192), (10, 301, 385), (11, 603, 770), (12, 1206, 1540),
	(13, 2412, 3080), (12, 1207, 1540), (3, 0, 0), (13, 0, 0)) t(z, x, y);
SELECT z, x, y, geoacc_density_tile_raster('ais', z, x, y) =
	(SELECT gpu_density_raster(geom, ST_TileEnvelope(z, x, y), 256, 256) FROM tracks_3857) AS same
FROM tiles ORDER BY z, x, y;

-- every mode and option: time (vessel-hours), weights, no interpolation, other kernels and sizes
SELECT geoacc_snapshot_create('ais_weighted', 'SELECT id, geom, w AS weight FROM tracks_3857') AS rows;
SELECT z, x, y,
	geoacc_density_tile_raster('ais', z, x, y, 128, 'quartic', 15, false) =
		(SELECT gpu_density_raster(geom, ST_TileEnvelope(z, x, y), 128, 128, 'quartic', 15, false) FROM tracks_3857) AS no_interpolation,
	geoacc_density_tile_raster('ais', z, x, y, 64, 'uniform', 3, true, 'time') =
		(SELECT gpu_density_raster(geom, ST_TileEnvelope(z, x, y), 64, 64, 'uniform', 3, true, 'time') FROM tracks_3857) AS time_mode,
	geoacc_density_tile_raster('ais_weighted', z, x, y, 256, 'epanechnikov', 9) =
		(SELECT gpu_density_raster(geom, ST_TileEnvelope(z, x, y), 256, 256, 'epanechnikov', 9, true, 'count', w) FROM tracks_3857) AS weighted,
	geoacc_density_tile_raster('ais_weighted', z, x, y, 32, 'gaussian', 1, true, 'time') =
		(SELECT gpu_density_raster(geom, ST_TileEnvelope(z, x, y), 32, 32, 'gaussian', 1, true, 'time', w) FROM tracks_3857) AS weighted_time
FROM tiles WHERE z BETWEEN 8 AND 12 ORDER BY z, x, y;

-- the device processes that ran those tiles keep the snapshot's points prepared (on the GPU a copy in device
-- memory, counted apart from the calls' budget; in the cpu mode the service memory itself, no device bytes)
SELECT device_copies > 0 AS kept, (device_bytes > 0) = ((SELECT mode FROM geoacc_service()) = 'gpu') AS device_bytes_as_mode
FROM geoacc_snapshots() WHERE name = 'ais';
SELECT snapshot_copies > 0 AS service_keeps FROM geoacc_service();

-- any extent, not only tiles: the harbour's extent in 3857, 600 x 500 cells
SELECT geoacc_snapshot_density('ais', e, 600, 500) = (SELECT gpu_density_raster(geom, e, 600, 500) FROM tracks_3857) AS same_extent
FROM (SELECT ST_SetSRID(ST_Extent(geom), 3857)::geometry AS e FROM tracks_3857) x;

-- fresh random rows: points, lines and multi-geometries of random lengths, some crossing the whole extent
-- (the grid's long entries), with NULL geometries and weights (left out, as the aggregate leaves them)
CREATE TEMP TABLE random_rows AS
SELECT i AS id,
	CASE WHEN random() < 0.05 THEN NULL
		WHEN i % 4 = 0 THEN ST_SetSRID(ST_MakePoint(random() * 2e6, random() * 2e6), 3857)
		WHEN i % 4 = 1 THEN ST_SetSRID(ST_Collect(ST_MakePoint(random() * 2e6, random() * 2e6), ST_MakePoint(random() * 2e6, random() * 2e6)), 3857)
		WHEN i % 4 = 2 THEN (SELECT ST_SetSRID(ST_MakeLine(ST_MakePointM(x0 + s * k * cos(a + k), y0 + s * k * sin(a + k), 1.6e9 + k * 60) ORDER BY k), 3857)
			FROM generate_series(0, 2 + (random() * 40)::int) k)
		ELSE ST_SetSRID(ST_MakeLine(ST_MakePointM(random() * 2e6, random() * 2e6, 1.6e9), ST_MakePointM(random() * 2e6, random() * 2e6, 1.6e9 + 3600)), 3857)
	END AS geom,
	CASE WHEN random() < 0.05 THEN NULL ELSE random() * 10 END AS weight
FROM (SELECT i, random() * 2e6 AS x0, random() * 2e6 AS y0, random() * 2e4 AS s, random() * 6.28 AS a
	FROM generate_series(1, 3000) i) r;
SELECT geoacc_snapshot_create('random', 'SELECT id, geom, weight FROM random_rows') =
	(SELECT count(*) FROM random_rows WHERE geom IS NOT NULL AND weight IS NOT NULL) AS rows_kept;
-- (an extent that no row reaches is a valid case: the aggregate's warning about it is not the point here)
SET client_min_messages = error;
SELECT count(*) AS extents, count(*) FILTER (WHERE
	geoacc_snapshot_density('random', e, 200, 150, 'triweight', 11) =
		(SELECT gpu_density_raster(geom, e, 200, 150, 'triweight', 11, true, 'count', weight) FROM random_rows)) AS same
FROM (SELECT ST_MakeEnvelope(x, y, x + d, y + d * 0.75, 3857) AS e
	FROM (SELECT random() * 2e6 AS x, random() * 2e6 AS y, 1e3 + random() * 1e6 AS d FROM generate_series(1, 20)) r) q;
SET client_min_messages = warning;

-- weights so large that the points together could take a cell past its limit: they are appended in chunks
-- and the cells checked, as the aggregate does, for the same raster; a time value no sample can hold is refused
CREATE TEMP TABLE heavy_rows AS
SELECT i AS id, ST_SetSRID(ST_MakeLine(ST_MakePointM(i * 10, 0, 0), ST_MakePointM(i * 10 + 5, 7, 3600 * (1 + i / 4))), 3857) AS geom,
	1e8 AS weight
FROM generate_series(1, 4) i;
SELECT geoacc_snapshot_create('heavy', 'SELECT id, geom, weight FROM heavy_rows WHERE id < 4') AS rows,
	geoacc_snapshot_create('too_long', 'SELECT id, geom, weight FROM heavy_rows') AS rows_too_long;
SELECT geoacc_snapshot_density('heavy', e, 16, 16, 'gaussian', 7, true, 'count') =
		(SELECT gpu_density_raster(geom, e, 16, 16, 'gaussian', 7, true, 'count', weight) FROM heavy_rows WHERE id < 4) AS same_count,
	geoacc_snapshot_density('heavy', e, 16, 16, 'quartic', 5, true, 'time') =
		(SELECT gpu_density_raster(geom, e, 16, 16, 'quartic', 5, true, 'time', weight) FROM heavy_rows WHERE id < 4) AS same_time
FROM (SELECT 'SRID=3857;POLYGON((0 -10,0 20,50 20,50 -10,0 -10))'::geometry AS e) q;
SELECT geoacc_snapshot_density('too_long', 'SRID=3857;POLYGON((0 -10,0 20,50 20,50 -10,0 -10))', 16, 16, 'gaussian', 7, true, 'time');
SELECT gpu_density_raster(geom, 'SRID=3857;POLYGON((0 -10,0 20,50 20,50 -10,0 -10))'::geometry, 16, 16, 'gaussian', 7, true, 'time', weight)
FROM heavy_rows;
SELECT geoacc_snapshot_drop('heavy'), geoacc_snapshot_drop('too_long');

-- the PNG tile: geoacc_raster_png of the raster; an empty tile is a transparent PNG, not NULL
SELECT geoacc_density_tile('ais', 12, 1206, 1540, vmax => 50) =
	geoacc_raster_png((SELECT gpu_density_raster(geom, ST_TileEnvelope(12, 1206, 1540), 256, 256) FROM tracks_3857),
		'viridis', 'log', 0, 50, true) AS same_png;
SELECT substring(png FROM 2 FOR 3) AS signature, length(png) < 2000 AS small, position('tRNS'::bytea IN png) > 0 AS transparent
FROM (SELECT geoacc_density_tile('ais', 13, 0, 0) AS png) t;
-- the PNG made from the pixels: the bytes of geoacc_raster_png of geoacc_snapshot_density, for each colouring, whole
-- tiles and extents of other shapes, bounds given or taken from the pixels; NULL where geoacc_raster_png gives NULL
SELECT count(*) AS pngs, count(*) FILTER (WHERE
	geoacc_snapshot_density_png('ais', e, w, h, k, 7, true, 'count', cm, sc, lo, hi, tz) IS NOT DISTINCT FROM
	geoacc_raster_png(geoacc_snapshot_density('ais', e, w, h, k, 7, true, 'count'), cm, sc, lo, hi, tz)) AS same
FROM (VALUES (ST_TileEnvelope(12, 1206, 1540), 256, 256), (ST_TileEnvelope(11, 603, 770), 300, 100),
	(ST_TileEnvelope(13, 0, 0), 64, 64)) e(e, w, h),
	(VALUES ('gaussian'), ('epanechnikov')) k(k),
	(VALUES ('viridis', 'log', 0::float8, NULL::float8, true), ('magma', 'linear', NULL, 50, false),
		('cividis', 'sqrt', 1, 5, NULL), (E'0% 0 0 255 0\n50% 0 255 0\n100% 255 0 0', 'linear', NULL, NULL, true),
		('viridis', NULL, 0, 1, true)) o(cm, sc, lo, hi, tz);
SELECT geoacc_snapshot_density_png('ais', ST_TileEnvelope(12, 1206, 1540), 256, 256, vmin => 5, vmax => 1);
-- an empty tile's PNG is kept for the next empty tile of the same size and colouring: for each colouring, the
-- same bytes as geoacc_raster_png's when made (a), kept (b), kept for another empty tile (c), and for a tile whose
-- size differs only in width, made (d)
SELECT count(*) AS colourings, count(*) FILTER (WHERE a IS NOT DISTINCT FROM r AND b IS NOT DISTINCT FROM r
	AND c IS NOT DISTINCT FROM r AND d IS NOT DISTINCT FROM r_narrow) AS same
FROM (SELECT geoacc_snapshot_density_png('ais', ST_TileEnvelope(13, 0, 0), 64, 64, 'gaussian', 7, true, 'count', cm, sc, lo, hi, tz) AS a,
		geoacc_snapshot_density_png('ais', ST_TileEnvelope(13, 0, 0), 64, 64, 'gaussian', 7, true, 'count', cm, sc, lo, hi, tz) AS b,
		geoacc_snapshot_density_png('ais', ST_TileEnvelope(14, 1, 1), 64, 64, 'quartic', 9, true, 'count', cm, sc, lo, hi, tz) AS c,
		geoacc_snapshot_density_png('ais', ST_TileEnvelope(13, 0, 0), 32, 64, 'gaussian', 7, true, 'count', cm, sc, lo, hi, tz) AS d,
		geoacc_raster_png(geoacc_snapshot_density('ais', ST_TileEnvelope(13, 0, 0), 64, 64, 'gaussian', 7, true, 'count'), cm, sc, lo, hi, tz) AS r,
		geoacc_raster_png(geoacc_snapshot_density('ais', ST_TileEnvelope(13, 0, 0), 32, 64, 'gaussian', 7, true, 'count'), cm, sc, lo, hi, tz) AS r_narrow
	FROM (VALUES ('viridis', 'log', 0::float8, NULL::float8, true), ('viridis', 'log', 0, 10, false),
		('magma', 'linear', NULL, 50, false), ('cividis', 'sqrt', 1, 5, NULL),
		(E'0% 0 0 255 0\n50% 0 255 0\n100% 255 0 0', 'linear', NULL, NULL, true), ('viridis', NULL, 0, 1, true)) o(cm, sc, lo, hi, tz)) t;
SELECT geoacc_snapshot_density_png('ais', ST_TileEnvelope(13, 0, 0), 64, 64, vmin => 5, vmax => 1);
-- an empty tile makes no projection or convolution call on any device; a tile over the tracks makes both
SELECT geoacc_stats_reset();
SELECT length(geoacc_density_tile('ais', 13, 0, 0)) > 0 AS empty_png;
SELECT count(*) AS calls_for_the_empty_tile FROM geoacc_stats() WHERE function LIKE 'gpu_density_raster%';
SELECT length(geoacc_density_tile('ais', 12, 1206, 1540)) > 0 AS png;
SELECT function, sum(calls) AS calls FROM geoacc_stats() WHERE function LIKE 'gpu_density_raster%'
GROUP BY function ORDER BY function;

-- a snapshot of trajectories: segment joins of new tracks against it equal gpu_segment_join with its query
SELECT geoacc_snapshot_create('traffic', 'SELECT id, traj FROM ais_tracks') AS rows;
SELECT name, kind, rows, points FROM geoacc_snapshots() WHERE name = 'traffic';
CREATE TEMP TABLE join_snapshot AS
SELECT * FROM gpu_segment_join_snapshot('SELECT id, traj FROM ais_tracks WHERE id % 7 = 0', 'traffic', 100);
CREATE TEMP TABLE join_query AS
SELECT * FROM gpu_segment_join('SELECT id, traj FROM ais_tracks WHERE id % 7 = 0', 'SELECT id, traj FROM ais_tracks', 100);
SELECT count(*) AS pairs, (SELECT count(*) FROM ((TABLE join_snapshot EXCEPT ALL TABLE join_query)
	UNION ALL (TABLE join_query EXCEPT ALL TABLE join_snapshot)) d) AS differ FROM join_snapshot;
SELECT count(*) AS contacts, bool_and(s IS NOT DISTINCT FROM q) AS same
FROM gpu_segment_contacts_snapshot('SELECT id, traj FROM ais_tracks WHERE id % 7 = 0', 'traffic', 500) s
FULL JOIN gpu_segment_contacts('SELECT id, traj FROM ais_tracks WHERE id % 7 = 0', 'SELECT id, traj FROM ais_tracks', 500) q
	USING (a_id, b_id);
-- the device processes that ran those joins keep the snapshot's segments; joins with the distance again (with
-- the index plans, on the CPU the index, they kept) give the same rows
SELECT device_copies > 0 AS kept FROM geoacc_snapshots() WHERE name = 'traffic';
SELECT count(*) AS differ_again FROM (
	(TABLE join_snapshot EXCEPT ALL SELECT * FROM gpu_segment_join_snapshot('SELECT id, traj FROM ais_tracks WHERE id % 7 = 0', 'traffic', 100))
	UNION ALL (SELECT * FROM gpu_segment_join_snapshot('SELECT id, traj FROM ais_tracks WHERE id % 7 = 0', 'traffic', 100)
	EXCEPT ALL TABLE join_snapshot)) d;
-- fresh random tracks with Z, repeated ids, NULL and one-point rows: every method, with and without Z
CREATE TEMP TABLE random_tracks AS
SELECT i % 150 AS id, CASE WHEN i % 37 = 0 THEN NULL ELSE
	(SELECT ST_SetSRID(ST_MakeLine(ST_MakePoint(x0 + 300 * k * cos(a + k / 3.0), y0 + 300 * k * sin(a + k / 5.0), k * 10 * random(),
		1.6e9 + t0 + k * 60) ORDER BY k), 32618)
	 FROM generate_series(0, (i % 13)) k) END AS traj
FROM (SELECT i, 580000 + random() * 20000 AS x0, 4500000 + random() * 20000 AS y0, random() * 6.28 AS a,
	(random() * 3600)::int AS t0 FROM generate_series(1, 400) i) r;
SELECT geoacc_snapshot_create('random_traffic', 'SELECT id, traj FROM random_tracks WHERE id % 2 = 0') AS rows;
SELECT method, use_z, count(*) > 100 AS pairs_found, count(*) = (SELECT count(*) FROM gpu_segment_join(
		'SELECT id, traj FROM random_tracks WHERE id % 3 = 0', 'SELECT id, traj FROM random_tracks WHERE id % 2 = 0', 250, method, use_z))
	AND NOT EXISTS (SELECT * FROM gpu_segment_join_snapshot('SELECT id, traj FROM random_tracks WHERE id % 3 = 0', 'random_traffic', 250, method, use_z)
		EXCEPT ALL SELECT * FROM gpu_segment_join('SELECT id, traj FROM random_tracks WHERE id % 3 = 0',
			'SELECT id, traj FROM random_tracks WHERE id % 2 = 0', 250, method, use_z)) AS same
FROM (VALUES ('spatial'), ('temporal'), ('spatiotemporal'), ('auto')) m(method), (VALUES (false), (true)) z(use_z),
	gpu_segment_join_snapshot('SELECT id, traj FROM random_tracks WHERE id % 3 = 0', 'random_traffic', 250, method, use_z) j
GROUP BY method, use_z ORDER BY method, use_z;

-- TWED nearest neighbours of query tracks among a snapshot's: gpu_twed_matrix with its trajectories in id order
SELECT count(*) AS pairs, (SELECT count(*) FROM (
	(SELECT * FROM gpu_twed_matrix_snapshot('SELECT id, traj FROM ais_tracks WHERE id % 50 = 0', 'traffic', 0.001, 100, k => 3)
	 EXCEPT ALL SELECT * FROM gpu_twed_matrix('SELECT id, traj FROM ais_tracks WHERE id % 50 = 0',
		'SELECT id, traj FROM ais_tracks WHERE ST_NPoints(traj) >= 2 ORDER BY id', 0.001, 100, k => 3))
	UNION ALL
	(SELECT * FROM gpu_twed_matrix('SELECT id, traj FROM ais_tracks WHERE id % 50 = 0',
		'SELECT id, traj FROM ais_tracks WHERE ST_NPoints(traj) >= 2 ORDER BY id', 0.001, 100, k => 3)
	 EXCEPT ALL SELECT * FROM gpu_twed_matrix_snapshot('SELECT id, traj FROM ais_tracks WHERE id % 50 = 0', 'traffic', 0.001, 100, k => 3))) d) AS differ
FROM gpu_twed_matrix_snapshot('SELECT id, traj FROM ais_tracks WHERE id % 50 = 0', 'traffic', 0.001, 100, k => 3);
-- fresh random tracks (ids repeat): every pair, with Z, in float32, degree 1 without the root
SELECT use_z, float32, (SELECT count(*) FROM (
	(SELECT * FROM gpu_twed_matrix_snapshot('SELECT id, traj FROM random_tracks WHERE id % 5 = 0 AND ST_NPoints(traj) >= 2',
		'random_traffic', 0.01, 3, 1, false, float32, NULL, use_z)
	 EXCEPT ALL SELECT * FROM gpu_twed_matrix('SELECT id, traj FROM random_tracks WHERE id % 5 = 0 AND ST_NPoints(traj) >= 2',
		'SELECT id, traj FROM random_tracks WHERE id % 2 = 0 AND ST_NPoints(traj) >= 2 ORDER BY id', 0.01, 3, 1, false, float32, NULL, use_z))
	UNION ALL
	(SELECT * FROM gpu_twed_matrix('SELECT id, traj FROM random_tracks WHERE id % 5 = 0 AND ST_NPoints(traj) >= 2',
		'SELECT id, traj FROM random_tracks WHERE id % 2 = 0 AND ST_NPoints(traj) >= 2 ORDER BY id', 0.01, 3, 1, false, float32, NULL, use_z)
	 EXCEPT ALL SELECT * FROM gpu_twed_matrix_snapshot('SELECT id, traj FROM random_tracks WHERE id % 5 = 0 AND ST_NPoints(traj) >= 2',
		'random_traffic', 0.01, 3, 1, false, float32, NULL, use_z))) d) AS differ
FROM (VALUES (false, false), (true, false), (false, true)) o(use_z, float32) ORDER BY use_z, float32;
SELECT * FROM gpu_twed_matrix_snapshot('SELECT 1 AS id, ARRAY[1, 2, 3]::float8[] AS values', 'traffic');
SELECT * FROM gpu_twed_matrix_snapshot('SELECT id, traj FROM ais_tracks', 'ais');

-- a snapshot of meshes: clips by a tile grid equal gpu_mesh_clip of each row's mesh; fresh random terrain
-- pieces (heights random, a piece a row, one of them empty, one NULL)
CREATE TEMP TABLE pieces AS
SELECT p AS id, CASE WHEN p = 4 THEN NULL WHEN p = 3 THEN 'SRID=32618;TIN Z EMPTY'::geometry ELSE (
	SELECT ST_GeomFromText('TIN Z (' || string_agg(format('((%s %s %s,%s %s %s,%s %s %s,%s %s %s))',
		x, y, z0, x + 10, y, z1, x, y + 10, z2, x, y, z0), ',') || ')', 32618)
	FROM (SELECT x, y, random() AS z0, random() AS z1, random() AS z2
	      FROM generate_series(0, 190, 10) x, generate_series(p * 200, p * 200 + 190, 10) y) t) END AS mesh
FROM generate_series(0, 4) p;
SELECT geoacc_snapshot_create('terrain_pieces', 'SELECT id, mesh FROM pieces') AS rows;
CREATE TEMP TABLE grid AS SELECT array_agg(box ORDER BY ix, iy, iz) AS boxes
FROM geoacc_tile_grid('BOX3D(0 0 0, 200 1000 1)'::box3d, 3, 7, 1);
SELECT count(*) AS clips, count(*) FILTER (WHERE NOT ST_IsEmpty(s.mesh)) AS with_triangles,
	bool_and(ST_AsEWKB(s.mesh) = ST_AsEWKB(q.mesh)) AS same
FROM grid, gpu_mesh_clip_snapshot('terrain_pieces', boxes) s
FULL JOIN (SELECT p.id, c.box_index, c.mesh FROM grid, pieces p, gpu_mesh_clip(p.mesh, grid.boxes) c) q USING (id, box_index);
SELECT * FROM gpu_mesh_clip_snapshot('traffic', ARRAY['BOX3D(0 0 0, 1 1 1)'::box3d]);
SELECT * FROM gpu_mesh_clip_snapshot('terrain_pieces', ARRAY[ST_SetSRID('BOX3D(0 0 0, 1 1 1)'::box3d, 4326)]);

-- a snapshot shows the rows as of its last refresh; a refresh rolled back leaves the old rows
CREATE TEMP TABLE moving (id int, geom geometry);
INSERT INTO moving VALUES (1, 'SRID=3857;POINT(10 10)');
SELECT geoacc_snapshot_create('moving', 'SELECT id, geom FROM moving') AS rows;
INSERT INTO moving VALUES (2, 'SRID=3857;POINT(20 20)');
SELECT (SELECT rows FROM geoacc_snapshots() WHERE name = 'moving') AS rows_before_refresh;
BEGIN;
SELECT geoacc_snapshot_refresh('moving') AS rows_in_refresh;
SELECT (SELECT rows FROM geoacc_snapshots() WHERE name = 'moving') AS rows_seen_in_refresh;
ROLLBACK;
SELECT (SELECT rows FROM geoacc_snapshots() WHERE name = 'moving') AS rows_after_rollback;
SELECT geoacc_snapshot_refresh('moving') AS rows_refreshed;
SELECT (SELECT rows FROM geoacc_snapshots() WHERE name = 'moving') AS rows_after_refresh;
-- a create rolled back (or in a savepoint rolled back) leaves nothing; a drop rolled back leaves the snapshot
BEGIN;
SELECT geoacc_snapshot_create('gone', 'SELECT id, geom FROM moving') AS rows;
SAVEPOINT s;
SELECT geoacc_snapshot_create('gone_too', 'SELECT id, geom FROM moving') AS rows;
ROLLBACK TO s;
SELECT name FROM geoacc_snapshots() WHERE name LIKE 'gone%';
ROLLBACK;
SELECT count(*) AS gone FROM geoacc_snapshots() WHERE name LIKE 'gone%';
BEGIN;
SELECT geoacc_snapshot_drop('moving');
ROLLBACK;
SELECT name, rows FROM geoacc_snapshots() WHERE name = 'moving';

-- who may read a snapshot: alice's holds what alice sees (row-level security); bob reads it once granted
CREATE ROLE geoacc_alice;
CREATE ROLE geoacc_bob;
CREATE TABLE snapshot_fixes (id int, geom geometry, owner name);
INSERT INTO snapshot_fixes SELECT i, ST_SetSRID(ST_MakePoint(i * 100, i * 50), 3857), CASE WHEN i % 2 = 0 THEN 'geoacc_alice' ELSE 'geoacc_bob' END
FROM generate_series(1, 100) i;
ALTER TABLE snapshot_fixes ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON snapshot_fixes USING (owner = current_user);
GRANT SELECT ON snapshot_fixes TO geoacc_alice, geoacc_bob;
SET ROLE geoacc_alice;
SELECT geoacc_snapshot_create('alice', 'SELECT id, geom FROM snapshot_fixes') AS alice_rows;
SELECT geoacc_snapshot_density('alice', 'SRID=3857;POLYGON((0 0,0 5000,10000 5000,10000 0,0 0))', 50, 25) =
	(SELECT gpu_density_raster(geom, 'SRID=3857;POLYGON((0 0,0 5000,10000 5000,10000 0,0 0))'::geometry, 50, 25) FROM snapshot_fixes) AS alice_same;
SET ROLE geoacc_bob;
SELECT geoacc_snapshot_density('alice', 'SRID=3857;POLYGON((0 0,0 5000,10000 5000,10000 0,0 0))', 50, 25) IS NOT NULL AS bob_reads;
SELECT geoacc_density_tile('ais', 12, 1206, 1540) IS NOT NULL AS bob_reads_postgres_snapshot;
SELECT geoacc_snapshot_refresh('alice');
SELECT geoacc_snapshot_drop('alice');
SELECT geoacc_snapshot_grant('alice', 'geoacc_bob');
UPDATE geoacc_snapshot SET query = 'SELECT 1' WHERE name = 'alice';
SET ROLE geoacc_alice;
SELECT geoacc_snapshot_grant('alice', 'geoacc_bob');
SELECT readers FROM geoacc_snapshots() WHERE name = 'alice';
SET ROLE geoacc_bob;
-- bob reads alice's rows (the ones alice could read), not his own
SELECT geoacc_snapshot_density('alice', 'SRID=3857;POLYGON((0 0,0 5000,10000 5000,10000 0,0 0))', 50, 25) =
	(SELECT gpu_density_raster(geom, 'SRID=3857;POLYGON((0 0,0 5000,10000 5000,10000 0,0 0))'::geometry, 50, 25)
	 FROM snapshot_fixes) AS bob_sees_his_own_rows_in_it;
RESET ROLE;
SELECT geoacc_snapshot_density('alice', 'SRID=3857;POLYGON((0 0,0 5000,10000 5000,10000 0,0 0))', 50, 25) =
	(SELECT gpu_density_raster(geom, 'SRID=3857;POLYGON((0 0,0 5000,10000 5000,10000 0,0 0))'::geometry, 50, 25)
	 FROM snapshot_fixes WHERE id % 2 = 0) AS bob_saw_alices_rows;
SET ROLE geoacc_alice;
SELECT geoacc_snapshot_revoke('alice', 'geoacc_bob');
SET ROLE geoacc_bob;
SELECT geoacc_snapshot_density('alice', 'SRID=3857;POLYGON((0 0,0 5000,10000 5000,10000 0,0 0))', 50, 25) IS NOT NULL AS bob_reads_after_revoke;
RESET ROLE;
-- a superuser may drop it; the refresh runs the query as its owner (alice's rows still)
SELECT geoacc_snapshot_refresh('alice') AS refreshed_as_alice;
SELECT geoacc_snapshot_drop('alice');

-- bad input
SELECT geoacc_snapshot_create('ais', 'SELECT id, geom FROM tracks_3857');
SELECT geoacc_snapshot_create('', 'SELECT id, geom FROM tracks_3857');
SELECT geoacc_snapshot_create('bad', 'SELECT id FROM tracks_3857');
SELECT geoacc_snapshot_create('bad', 'SELECT id, geom FROM tracks_3857 UNION ALL SELECT 0, ''SRID=4326;POINT(1 2)''::geometry');
SELECT geoacc_snapshot_create('bad', 'SELECT 1 AS id, ''SRID=3857;POINT(1 2)''::geometry AS geom, -1 AS weight');
SELECT geoacc_snapshot_create('bad', 'SELECT 1 AS id, ''SRID=3857;POLYGON((0 0,1 0,1 1,0 0))''::geometry AS geom');
SELECT geoacc_snapshot_refresh('missing');
SELECT geoacc_snapshot_drop('missing');
SELECT geoacc_snapshot_drop('missing', if_exists => true);
SELECT geoacc_density_tile_raster('missing', 1, 0, 0);
SELECT geoacc_snapshot_density('ais', 'SRID=4326;POLYGON((0 0,0 1,1 1,1 0,0 0))', 10, 10);
SELECT geoacc_density_tile_raster('random', 3, 1, 1, mode => 'time');
SELECT geoacc_density_tile_raster('ais', 3, 1, 1, 0);
SELECT geoacc_density_tile_raster('ais', 3, 1, 1, kernel => 'box');
SELECT geoacc_density_tile_raster(NULL, 3, 1, 1) IS NULL AS null_name;
SELECT geoacc_density_tile_raster('traffic', 3, 1, 1);
SELECT * FROM gpu_segment_join_snapshot('SELECT id, traj FROM ais_tracks', 'ais', 100);
SELECT * FROM gpu_segment_join_snapshot('SELECT id, ST_Transform(traj, 4326) AS traj FROM ais_tracks', 'traffic', 100);
SELECT * FROM gpu_segment_join_snapshot('SELECT id, ST_Transform(traj, 4326)::geography AS traj FROM ais_tracks', 'traffic', 100);
SELECT * FROM gpu_segment_join_snapshot('SELECT id, traj FROM random_tracks', 'traffic', 100, use_z => true);
SELECT * FROM gpu_segment_join_snapshot('SELECT id, traj FROM ais_tracks', 'traffic', -1);
SELECT count(*) AS no_a_rows FROM gpu_segment_join_snapshot('SELECT id, traj FROM ais_tracks WHERE false', 'traffic', 100);
SELECT geoacc_snapshot_create('bad', 'SELECT id, ST_Transform(traj, 4326)::geography AS traj FROM ais_tracks');
SELECT geoacc_snapshot_create('bad', 'SELECT id, ST_Transform(traj, 4326) AS traj FROM ais_tracks');
SELECT geoacc_snapshot_create('bad', 'SELECT id, ST_Force2D(traj) AS traj FROM ais_tracks');

SELECT geoacc_snapshot_drop(name) FROM geoacc_snapshots();
SELECT count(*) AS left FROM geoacc_snapshots();
-- what the device processes kept of the dropped snapshots is released
SELECT pg_temp.copies_left() AS copies_left;
DROP TABLE snapshot_fixes;
DROP ROLE geoacc_alice;
DROP ROLE geoacc_bob;

-- the extension made again starts its catalog's ids afresh: a new snapshot holds its own rows, never those of
-- the dropped catalog's snapshot with the same id, whose data went with the catalog
DROP EXTENSION geoacc;
CREATE EXTENSION geoacc;
SELECT geoacc_snapshot_create('first', 'SELECT 1 AS id, ''SRID=3857;POINT(0 0)''::geometry AS geom') AS rows;
SELECT length(geoacc_density_tile('first', 0, 0, 0)) > 0 AS tile;
SELECT snapshot_copies > 0 AS kept FROM geoacc_service();
DROP EXTENSION geoacc;
CREATE EXTENSION geoacc;
SELECT pg_temp.copies_left() AS kept_after_drop;
SELECT geoacc_snapshot_create('first', 'SELECT g AS id, ST_SetSRID(ST_MakePoint(g, g), 3857) AS geom FROM generate_series(1, 50) g') AS rows;
SELECT name, rows, points FROM geoacc_snapshots();
SELECT geoacc_snapshot_drop('first');
