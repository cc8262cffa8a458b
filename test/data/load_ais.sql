-- Load the real AIS fixes in data/traj into the table ais_fixes, and make
-- them into the vessel tracks of ais_tracks with gpu_make_trajectories (so
-- the geoacc extension must be installed).  Run with psql from the
-- repository root:  psql -f test/data/load_ais.sql
--
-- Sources (data/SOURCES.md): MarineCadastre AIS for Virginia Beach
-- (2020-06-04..06) and New York harbour (2020-12-08, one day; 2020-06-30, one
-- hour of raw fixes).  Rules:
--   * a vessel track is a source trajectory id (the two tracktable files) or
--     an MMSI (the raw file): ais_fixes.object_id numbers them;
--   * positions are projected from WGS 84 to UTM zone 18N (EPSG:32618, metres);
--   * M is the fix time in epoch seconds (UTC);
--   * of fixes with the same time in a track one is kept, the one with the
--     smallest X, then Y (in these files such fixes share their position),
--     so M strictly increases;
--   * a track is split where two consecutive fixes are more than 30 minutes
--     apart (GAP_SECONDS below): one row per continuous piece, numbered from
--     0 in time order (pieces of one fix count);
--   * pieces of fewer than 2 fixes are dropped.
-- Every row is a LINESTRING M that ST_IsValidTrajectory accepts.

\set ON_ERROR_STOP 1
\set GAP_SECONDS 1800

DROP TABLE IF EXISTS ais_tracks, ais_fixes;
CREATE TEMP TABLE ais_fix_tracktable (traj_id int, mmsi bigint, t timestamp, lon float8, lat float8);
CREATE TEMP TABLE ais_fix_raw (t timestamp, lon float8, lat float8, mmsi bigint, sog text, cog text,
	heading text, vessel_name text, imo text, call_sign text, vessel_type text, status text,
	length text, width text, draft text, cargo text, transceiver_class text, eta text);
CREATE TEMP TABLE ais_fix (source text, track text, mmsi bigint, seq bigserial, t timestamp, lon float8, lat float8);

\copy ais_fix_tracktable FROM PROGRAM 'gzip -dc data/traj/marinecadastre_ais_virginia_beach_2020-06-04_06.csv.gz' CSV HEADER
INSERT INTO ais_fix (source, track, mmsi, t, lon, lat)
	SELECT 'virginia_beach_2020-06-04_06', traj_id::text, mmsi, t, lon, lat FROM ais_fix_tracktable;
TRUNCATE ais_fix_tracktable;
\copy ais_fix_tracktable FROM PROGRAM 'gzip -dc data/traj/marinecadastre_ais_ny_harbor_2020-12-08.csv.gz' CSV HEADER
INSERT INTO ais_fix (source, track, mmsi, t, lon, lat)
	SELECT 'ny_harbor_2020-12-08', traj_id::text, mmsi, t, lon, lat FROM ais_fix_tracktable;
\copy ais_fix_raw FROM PROGRAM 'gzip -dc data/traj/marinecadastre_ais_ny_harbor_2020-06-30_first_hour.csv.gz' CSV HEADER
INSERT INTO ais_fix (source, track, mmsi, t, lon, lat)
	SELECT 'ny_harbor_2020-06-30_first_hour', mmsi::text, mmsi, t, lon, lat FROM ais_fix_raw;

CREATE TABLE ais_fixes (
	object_id int NOT NULL,		-- one per source and track
	source text NOT NULL,
	track text NOT NULL,
	mmsi bigint NOT NULL,
	seq bigint NOT NULL,		-- the order of the files
	t timestamptz NOT NULL,
	geom geometry(Point, 32618) NOT NULL
);
INSERT INTO ais_fixes
SELECT dense_rank() OVER (ORDER BY source, track), source, track, mmsi, seq, t AT TIME ZONE 'UTC',
	ST_Transform(ST_SetSRID(ST_MakePoint(lon, lat), 4326), 32618)
FROM ais_fix;
ANALYZE ais_fixes;

CREATE TABLE ais_tracks (
	id int PRIMARY KEY,
	source text NOT NULL,
	track text NOT NULL,
	mmsi bigint NOT NULL,
	piece int NOT NULL,
	traj geometry(LineStringM, 32618) NOT NULL
);

INSERT INTO ais_tracks
SELECT row_number() OVER (ORDER BY o.source, ST_M(ST_StartPoint(m.trajectory)), o.track, m.part),
	o.source, o.track, o.mmsi, m.part - 1, m.trajectory
FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', make_interval(secs => :GAP_SECONDS)) m
JOIN (SELECT object_id, min(source) AS source, min(track) AS track, min(mmsi) AS mmsi
	FROM ais_fixes GROUP BY object_id) o USING (object_id);

ANALYZE ais_tracks;
