-- The README demo: run by scripts/demo.sh in a fresh database geoacc_demo,
-- from the repository root.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS geoacc CASCADE;
RESET client_min_messages;

\echo
\echo '== geoacc and the GPUs it can use (no rows: no GPU, everything runs on the CPU)'
SELECT geoacc_version();
SELECT * FROM geoacc_devices();

\echo
\echo '== real AIS tracks (MarineCadastre, New York harbour and Virginia Beach), as LINESTRING M in UTM 18N'
\set QUIET on
SET client_min_messages = warning;
\i test/data/load_ais.sql
RESET client_min_messages;
\set QUIET off
SELECT source, count(*) AS tracks, sum(ST_NPoints(traj)) AS points,
	to_timestamp(min(ST_M(ST_StartPoint(traj)))) AT TIME ZONE 'UTC' AS first_fix_utc,
	to_timestamp(max(ST_M(ST_EndPoint(traj)))) AT TIME ZONE 'UTC' AS last_fix_utc,
	round(sum(ST_Length(traj)) / 1000) AS km
FROM ais_tracks GROUP BY source ORDER BY source;

\echo
\echo '== the raw fixes made into tracks in one call: sorted by vessel and time, duplicate times dropped, split'
\echo '   at gaps over 30 minutes, simplified at 10 m (the collapsed ones NULL, as ST_Simplify returns them)'
SELECT count(*) AS fixes, count(DISTINCT object_id) AS vessel_tracks FROM ais_fixes;
SELECT count(*) AS parts, sum(ST_NPoints(trajectory)) AS points, count(*) FILTER (WHERE trajectory IS NULL) AS collapsed
FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', '30 minutes', 10);

\echo
\echo '== traffic density of the New York harbour tracks: 50 m cells, gaussian 9 x 9, as a PNG'
CREATE TEMP TABLE ny_density AS
SELECT gpu_density_raster(traj, 'BOX(556000 4470000,618000 4526000)'::box2d, 1240, 1120, 'gaussian', 9) AS raster
FROM ais_tracks;
SELECT length(raster) AS raster_wkb_bytes, length(geoacc_raster_png(raster)) AS png_bytes FROM ny_density;
SELECT encode(geoacc_raster_png(raster), 'base64') FROM ny_density
\g (format=unaligned tuples_only=on) | base64 -d > /tmp/ais_density.png
\echo 'wrote /tmp/ais_density.png'

\echo
\echo '== Douglas-Peucker compression of every track at 1, 10 and 50 m, with the quality measures'
SELECT t AS tolerance_m, sum(ST_NPoints(traj)) AS points_before, sum(ST_NPoints(simplified)) AS points_after,
	round(avg((q).compression_ratio)::numeric, 3) AS ratio_mean,
	round(stddev((q).compression_ratio)::numeric, 3) AS ratio_stddev,
	round(avg((q).length_loss_rate)::numeric, 4) AS length_loss_mean,
	round(stddev((q).length_loss_rate)::numeric, 4) AS length_loss_stddev,
	round(avg((q).dtw_distance)::numeric) AS dtw_mean_m,
	round(stddev((q).dtw_distance)::numeric) AS dtw_stddev_m
FROM (SELECT t, traj, simplified, geoacc_compression_stats(traj, simplified) AS q
	FROM (SELECT t, traj, gpu_dp_simplify(traj, t, true) OVER (PARTITION BY t) AS simplified
		FROM ais_tracks, unnest(ARRAY[1, 10, 50]::float8[]) t) s) x
GROUP BY t ORDER BY t;

\echo
\echo '== the 5 tracks nearest to track 424 (vessel 366808550 on 2020-06-05) by Time Warp Edit Distance'
SELECT m.b_id AS track, t.mmsi, to_timestamp(ST_M(ST_StartPoint(t.traj)))::date AS day,
	ST_NPoints(t.traj) AS points, round(m.distance) AS twed
FROM gpu_twed_matrix('SELECT id, traj FROM ais_tracks WHERE id = 424',
	'SELECT id, traj FROM ais_tracks WHERE id <> 424',
	nu => 0.001, lambda => 100) m
JOIN ais_tracks t ON t.id = m.b_id
ORDER BY m.distance
LIMIT 5;

\echo
\echo '== vessels that came within 100 m of each other: when, for how long, how close'
SELECT a.mmsi AS vessel_a, b.mmsi AS vessel_b,
	to_timestamp(c.first_contact) AT TIME ZONE 'UTC' AS first_contact,
	round(c.time_within) AS seconds_within, round(c.min_distance::numeric, 1) AS closest_m
FROM gpu_segment_contacts('SELECT id, traj FROM ais_tracks', NULL, distance => 100) c
JOIN ais_tracks a ON a.id = c.a_id
JOIN ais_tracks b ON b.id = c.b_id
WHERE a.mmsi <> b.mmsi
ORDER BY c.min_distance
LIMIT 6;

\echo
\echo '== a terrain of 20,000 triangles at UTM coordinates cut into 3 x 3 LOD tiles (triangles and area per tile; the tiles add up to the whole)'
-- a table, not a temporary one: the README's mesh examples read it
CREATE TABLE terrain AS
SELECT ST_SetSRID(('TIN Z (' || string_agg(format(
	'((%1$s %2$s %5$s,%3$s %2$s %6$s,%3$s %4$s %7$s,%1$s %2$s %5$s)),((%1$s %2$s %5$s,%3$s %4$s %7$s,%1$s %4$s %8$s,%1$s %2$s %5$s))',
	x0, y0, x1, y1, z00, z10, z11, z01), ',') || ')')::geometry, 32618) AS mesh
FROM (SELECT x0, y0, x1, y1,
		round((sin(x0 / 150.0) * 20 + cos(y0 / 90.0) * 10)::numeric, 2) AS z00,
		round((sin(x1 / 150.0) * 20 + cos(y0 / 90.0) * 10)::numeric, 2) AS z10,
		round((sin(x1 / 150.0) * 20 + cos(y1 / 90.0) * 10)::numeric, 2) AS z11,
		round((sin(x0 / 150.0) * 20 + cos(y1 / 90.0) * 10)::numeric, 2) AS z01
	FROM (SELECT 583000 + 10 * i AS x0, 4507000 + 10 * j AS y0, 583010 + 10 * i AS x1, 4507010 + 10 * j AS y1
		FROM generate_series(0, 99) i, generate_series(0, 99) j) g) c;
SELECT c.box_index AS tile, ST_NumGeometries(c.mesh) AS triangles, round(ST_Area(c.mesh)) AS area_m2
FROM terrain,
	(SELECT array_agg(box ORDER BY ix, iy) AS boxes FROM terrain, geoacc_tile_grid(Box3D(mesh), 3, 3)) g,
	gpu_mesh_clip(terrain.mesh, g.boxes) c
ORDER BY c.box_index;

SELECT function, device, calls, items, round(total_ms::numeric, 1) AS total_ms FROM geoacc_stats() ORDER BY 1, 2;
