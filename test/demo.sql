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
