-- Load the real AIS tracks in data/traj into the table ais_tracks.
-- Run with psql from the repository root:  psql -f test/data/load_ais.sql
--
-- Sources (data/SOURCES.md): MarineCadastre AIS for Virginia Beach
-- (2020-06-04..06) and New York harbour (2020-12-08, one day; 2020-06-30, one
-- hour of raw fixes).  Rules:
--   * a vessel track is a source trajectory id (the two tracktable files) or
--     an MMSI (the raw file);
--   * positions are projected from WGS 84 to UTM zone 18N (EPSG:32618, metres);
--   * M is the fix time in epoch seconds (UTC);
--   * fixes with the same time as an earlier fix of the track are dropped
--     (the first in file order is kept), so M strictly increases;
--   * a track is split where two consecutive fixes are more than 30 minutes
--     apart (GAP_SECONDS below): one row per continuous piece;
--   * pieces of fewer than 2 fixes are dropped.
-- Every row is a LINESTRING M that ST_IsValidTrajectory accepts.

\set ON_ERROR_STOP 1
\set GAP_SECONDS 1800

DROP TABLE IF EXISTS ais_tracks;
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

CREATE TABLE ais_tracks (
	id int PRIMARY KEY,
	source text NOT NULL,
	track text NOT NULL,
	mmsi bigint NOT NULL,
	piece int NOT NULL,
	traj geometry(LineStringM, 32618) NOT NULL
);

WITH firsts AS (			-- one fix per track and time: the first in file order
	SELECT DISTINCT ON (source, track, t) *
	FROM ais_fix
	ORDER BY source, track, t, seq
), gaps AS (				-- a new piece starts after a gap of more than GAP_SECONDS
	SELECT *, CASE WHEN t - lag(t) OVER w > make_interval(secs => :GAP_SECONDS) THEN 1 ELSE 0 END AS starts
	FROM firsts
	WINDOW w AS (PARTITION BY source, track ORDER BY t)
), pieces AS (
	SELECT *, sum(starts) OVER (PARTITION BY source, track ORDER BY t) AS piece
	FROM gaps
), lines AS (
	SELECT source, track, min(mmsi) AS mmsi, piece::int AS piece, min(t) AS t0,
		ST_SetSRID(ST_MakeLine(
			ST_MakePointM(ST_X(p), ST_Y(p), extract(epoch FROM t AT TIME ZONE 'UTC')::float8)
			ORDER BY t), 32618) AS traj
	FROM (SELECT *, ST_Transform(ST_SetSRID(ST_MakePoint(lon, lat), 4326), 32618) AS p FROM pieces) q
	GROUP BY source, track, piece
	HAVING count(*) >= 2
)
INSERT INTO ais_tracks
SELECT row_number() OVER (ORDER BY source, t0, track, piece), source, track, mmsi, piece, traj
FROM lines;

ANALYZE ais_tracks;
