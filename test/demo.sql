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
	FROM (SELECT t, traj, gpu_dp_simplify(traj, t) OVER (PARTITION BY t) AS simplified
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
\echo '== which device served each call, and how long it took'
SELECT function, device, calls, items, round(total_ms::numeric, 1) AS total_ms FROM geoacc_stats() ORDER BY 1, 2;
