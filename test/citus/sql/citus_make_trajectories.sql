-- gpu_make_trajectories on Citus.  Its inner query runs where it is called, and inside a query that Citus
-- sends to the shards an inner query on a distributed table cannot run; so the fixes, distributed by
-- vessel, are made into trajectories shard by shard with run_command_on_colocated_placements, each
-- placement's call reading its shard of fixes and writing into the co-located shard of the trajectories,
-- on the worker that holds both.  A vessel's fixes all lie in one shard, so the rows are those of the
-- single-node call on the plain table, exactly.

SET client_min_messages = warning;
DROP TABLE IF EXISTS fixes_by_object, tracks_by_object;
RESET client_min_messages;
CREATE TABLE fixes_by_object (object_id bigint NOT NULL, t timestamptz NOT NULL, geom geometry(Point, 32618) NOT NULL);
SELECT create_distributed_table('fixes_by_object', 'object_id', shard_count => 8);
INSERT INTO fixes_by_object SELECT object_id, t, geom FROM ais_fixes;
CREATE TABLE tracks_by_object (object_id bigint NOT NULL, part int NOT NULL, trajectory geometry,
	tolerance float8);
SELECT create_distributed_table('tracks_by_object', 'object_id', colocate_with => 'fixes_by_object');

-- raw and simplified, every placement on its worker (%1$s: the shard of fixes, %2$s: of tracks)
SELECT count(*) AS placements, bool_and(success) AS all_succeeded,
	count(DISTINCT nodeport) AS workers
FROM run_command_on_colocated_placements('fixes_by_object', 'tracks_by_object', $cmd$
	INSERT INTO %2$s SELECT object_id, part, trajectory, NULL
	FROM gpu_make_trajectories('SELECT object_id, t, geom FROM %1$s', interval '30 minutes');
	INSERT INTO %2$s SELECT object_id, part, trajectory, 10
	FROM gpu_make_trajectories('SELECT object_id, t, geom FROM %1$s', interval '30 minutes', 10)$cmd$);

CREATE TEMP TABLE tracks_plain AS
SELECT object_id, part, trajectory, NULL::float8 AS tolerance
FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', interval '30 minutes')
UNION ALL
SELECT object_id, part, trajectory, 10
FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', interval '30 minutes', 10);
CREATE TEMP TABLE tracks_dist AS SELECT object_id, part, trajectory, tolerance FROM tracks_by_object;
SELECT tolerance, count(*) AS parts, sum(ST_NPoints(trajectory)) AS points
FROM tracks_dist GROUP BY tolerance ORDER BY tolerance NULLS FIRST;
-- the same rows, bit for bit
SELECT (SELECT count(*) FROM (SELECT object_id, part, ST_AsEWKB(trajectory), tolerance FROM tracks_plain
		EXCEPT ALL SELECT object_id, part, ST_AsEWKB(trajectory), tolerance FROM tracks_dist) x) AS only_plain,
	(SELECT count(*) FROM (SELECT object_id, part, ST_AsEWKB(trajectory), tolerance FROM tracks_dist
		EXCEPT ALL SELECT object_id, part, ST_AsEWKB(trajectory), tolerance FROM tracks_plain) x) AS only_distributed;

-- a call inside a query that Citus sends to the shards cannot read a distributed table: a clear error
\set VERBOSITY terse
SELECT count(*) FROM fixes_by_object f, LATERAL gpu_make_trajectories('SELECT object_id, t, geom FROM fixes_by_object',
	interval '30 minutes') m WHERE f.object_id = 1;
\set VERBOSITY default

DROP TABLE fixes_by_object, tracks_by_object;
