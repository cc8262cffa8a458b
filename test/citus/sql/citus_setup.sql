-- The Citus suite (scripts/citus.sh, make installcheck-citus): a coordinator and two workers.  Every
-- later test runs in this database after this one: the real AIS tracks as a plain table, and the same
-- rows in distributed tables, so that each result can be compared with the same query on the plain one.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS geoacc;
RESET client_min_messages;

-- two workers, each with geoacc at the coordinator's version (CREATE EXTENSION reached them)
SELECT count(*) AS workers FROM citus_get_active_worker_nodes();
SELECT bool_and(success AND result = (SELECT extversion FROM pg_extension WHERE extname = 'geoacc')) AS geoacc_on_workers
FROM run_command_on_workers($$SELECT extversion FROM pg_extension WHERE extname = 'geoacc'$$);

\set ECHO none
\set QUIET on
SET client_min_messages = warning;
\i test/data/load_ais.sql
RESET client_min_messages;
\set QUIET off
\set ECHO all

-- ais_by_id: distributed by track id, 8 shards
SET client_min_messages = warning;
DROP TABLE IF EXISTS ais_by_id, ais_by_bucket, ais_queries;
RESET client_min_messages;
CREATE TABLE ais_by_id (LIKE ais_tracks INCLUDING ALL);
SELECT create_distributed_table('ais_by_id', 'id', shard_count => 8);
INSERT INTO ais_by_id SELECT * FROM ais_tracks;

-- ais_by_bucket: distributed by a coarse key, a vessel bucket (MMSI modulo 16), 4 shards: the key that
-- window functions partition by, so that each partition holds many trajectories
CREATE TABLE ais_by_bucket (bucket int NOT NULL, LIKE ais_tracks, PRIMARY KEY (bucket, id));
SELECT create_distributed_table('ais_by_bucket', 'bucket', shard_count => 4);
INSERT INTO ais_by_bucket SELECT (mmsi % 16)::int, * FROM ais_tracks;

-- ais_queries: a reference table (a copy on every node) of query trajectories
CREATE TABLE ais_queries (id int PRIMARY KEY, traj geometry(LineStringM, 32618) NOT NULL);
SELECT create_reference_table('ais_queries');
INSERT INTO ais_queries SELECT id, traj FROM ais_tracks WHERE id % 40 = 7 AND ST_NPoints(traj) BETWEEN 20 AND 400;

SELECT (SELECT count(*) FROM ais_by_id) AS by_id, (SELECT count(DISTINCT bucket) FROM ais_by_bucket) AS buckets,
	(SELECT count(*) FROM ais_by_bucket) AS by_bucket, (SELECT count(*) FROM ais_queries) AS queries,
	(SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'ais_by_id'::regclass) AS id_shards,
	(SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'ais_by_bucket'::regclass) AS bucket_shards;

-- a query's plan, with what varies between clusters (ports, shard and type ids) replaced
CREATE OR REPLACE FUNCTION citus_plan(query text, with_verbose boolean DEFAULT false) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE format('EXPLAIN (COSTS OFF%s) %s', CASE WHEN with_verbose THEN ', VERBOSE' ELSE '' END, query) LOOP
		line := regexp_replace(line, 'host=\S+ port=\d+ dbname=\S+', 'host=H port=P dbname=D');
		line := regexp_replace(line, '_\d{6,}\M', '_N', 'g');
		line := regexp_replace(line, '''\d+''::oid', '''N''::oid', 'g');
		RETURN NEXT line;
	END LOOP;
END $$;
