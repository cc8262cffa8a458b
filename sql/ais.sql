-- The real AIS tracks that many tests use, loaded by test/data/load_ais.sql.
\i test/data/ais_fixture.sql

SELECT source, count(*) AS tracks, sum(ST_NPoints(traj)) AS points
FROM ais_tracks GROUP BY source ORDER BY source;

-- every row is a valid trajectory in UTM 18N with M in 2020
SELECT bool_and(ST_IsValidTrajectory(traj)) AS all_valid,
	bool_and(ST_SRID(traj) = 32618) AS all_utm18n,
	bool_and(ST_NPoints(traj) >= 2) AS all_two_points,
	min(ST_M(ST_StartPoint(traj))) >= extract(epoch FROM timestamptz '2020-01-01 UTC') AS m_is_epoch
FROM ais_tracks;

-- no piece contains a gap of more than 30 minutes, and no two fixes share a time
SELECT count(*) AS long_gaps
FROM ais_tracks, LATERAL (
	SELECT ST_M(geom) - lag(ST_M(geom)) OVER (ORDER BY path) AS dt FROM ST_DumpPoints(traj)) d
WHERE dt > 1800 OR dt <= 0;
