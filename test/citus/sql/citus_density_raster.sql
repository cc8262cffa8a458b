-- gpu_density_raster on a distributed table: Citus runs a partial aggregate on each shard
-- (worker_partial_agg over the transition function), passes the states (geoacc_density_state, as
-- text) to the coordinator and combines them there (coord_combine_agg over the combine function);
-- the raster equals, bit for bit, the one of the same rows in a plain table.

-- partials on the workers, one per shard, combined on the coordinator
SELECT citus_plan($$SELECT gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600)
	FROM ais_by_id$$);
SELECT bool_or(line ~ 'Query: SELECT pg_catalog\.worker_partial_agg\(''public\.gpu_density_raster\(') AS partial_on_workers,
	bool_or(line ~ '^ +Output: coord_combine_agg\(') AS combined_on_coordinator
FROM citus_plan($$SELECT gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600)
	FROM ais_by_id$$, true) line;

-- the same raster as the plain table's, for each form of the arguments
CREATE TEMP TABLE density_calls (name text, args text);
INSERT INTO density_calls VALUES
	('count, box2d', $$traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600$$),
	('count, geometry extent', $$traj, ST_MakeEnvelope(560000, 4040000, 640000, 4120000, 32618), 256, 256$$),
	('kernel, size', $$traj, 'BOX(560000 4040000,640000 4120000)'::box2d, 400, 400, 'epanechnikov', 15$$),
	('points, no interpolation', $$traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'quartic', 9, false$$),
	('time mode', $$traj, 'BOX(560000 4040000,640000 4120000)'::box2d, 200, 200, 'gaussian', 7, true, 'time'$$),
	('weights', $$traj, 'BOX(560000 4040000,640000 4120000)'::box2d, 200, 200, 'triweight', 5, true, 'count', 1 + piece % 3$$);
CREATE OR REPLACE FUNCTION density_md5(tab text, args text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	EXECUTE format('SELECT md5(gpu_density_raster(%s)) FROM %s', args, tab) INTO result;
	RETURN result;
END $$;
SELECT name, density_md5('ais_by_id', args) = density_md5('ais_tracks', args) AS by_id_equal,
	density_md5('ais_by_bucket', args) = density_md5('ais_tracks', args) AS by_bucket_equal
FROM density_calls ORDER BY name;

-- grouped by something else than the distribution column: partials per group and shard
SELECT d.source, md5(d.r) = md5(p.r) AS equal
FROM (SELECT source, gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 150, 300) AS r
		FROM ais_by_id GROUP BY source) d
	JOIN (SELECT source, gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 150, 300) AS r
		FROM ais_tracks GROUP BY source) p USING (source)
ORDER BY source;

-- grouped by the distribution column: the whole aggregate runs on the workers
SELECT citus_plan($$SELECT bucket, gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 150, 300)
	FROM ais_by_bucket GROUP BY bucket$$);
SELECT count(*) AS buckets, bool_and(md5(d.r) = md5(p.r)) AS all_equal
FROM (SELECT bucket, gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 150, 300) AS r
		FROM ais_by_bucket GROUP BY bucket) d
	JOIN (SELECT (mmsi % 16)::int AS bucket, gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 150, 300) AS r
		FROM ais_tracks GROUP BY 1) p USING (bucket);

-- with coordinator aggregation forbidden (Citus would otherwise pull the rows to the coordinator for
-- an aggregate it cannot split), the aggregate still runs
SET citus.coordinator_aggregation_strategy = 'disabled';
SELECT density_md5('ais_by_id', args) = density_md5('ais_tracks', args) AS equal_without_coordinator_aggregation
FROM density_calls WHERE name = 'count, box2d';
RESET citus.coordinator_aggregation_strategy;

-- the states that travel are small: the cells with runs of zeros skipped, values as varints, in base64
SELECT length(worker_partial_agg('gpu_density_raster(geometry, box2d, integer, integer)'::regprocedure,
		ROW(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 1000, 2000))::text) AS state_text_length,
	1006 * 2006 * 4 AS cell_bytes
FROM ais_tracks;

-- the errors of the plain aggregate come back from the workers
\set VERBOSITY terse
SELECT gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'no-such-kernel') FROM ais_by_id;
SELECT gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 7, true, 'count', -1)
FROM ais_by_id;
SELECT gpu_density_raster(traj, ST_MakeEnvelope(560000, 4040000, 640000, 4120000, 4326), 30, 30) FROM ais_by_id;
\set VERBOSITY default

-- gpu_density_rast (geoacc_raster): the same PostGIS raster
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS postgis_raster;
CREATE EXTENSION IF NOT EXISTS geoacc_raster;
RESET client_min_messages;
SELECT md5(ST_AsBinary(d.r)) = md5(ST_AsBinary(p.r)) AS rast_equal
FROM (SELECT gpu_density_rast(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600) AS r FROM ais_by_id) d,
	(SELECT gpu_density_rast(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600) AS r FROM ais_tracks) p;
