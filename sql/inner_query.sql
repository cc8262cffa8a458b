-- Inner SQL queries (gpu_twed_matrix, gpu_segment_join, gpu_make_trajectories): one read-only SELECT, columns by
-- name or position, column types recognised by OID.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS geoacc CASCADE;
RESET client_min_messages;

-- a user's own types named "geometry" are not PostGIS's geometry (this crashed the server)
CREATE SCHEMA evil;
CREATE TYPE evil.geometry AS ENUM ('x');
CREATE DOMAIN evil.int_geometry AS int;
SELECT * FROM gpu_twed_matrix('SELECT 1, ''x''::evil.geometry', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT 1, 7::evil.int_geometry', NULL, 1, 1);
SET search_path = evil, public;
SELECT * FROM gpu_twed_matrix('SELECT 1, ''x''::geometry', NULL, 1, 1);
CREATE SCHEMA evil2;
CREATE DOMAIN evil2.geometry AS text;
SET search_path = evil2, public;
SELECT * FROM gpu_twed_matrix('SELECT 1, ''LINESTRING M (0 0 1, 1 1 2)''::geometry', NULL, 1, 1);
CREATE DOMAIN bytea_geometry AS bytea;
SELECT * FROM gpu_twed_matrix('SELECT 1, ''\x00''::bytea_geometry', NULL, 1, 1);
RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA evil, evil2 CASCADE;
RESET client_min_messages;

-- domains over geometry, float8[] and the integer types are read through their base types
CREATE DOMAIN track AS geometry CHECK (ST_GeometryType(VALUE) = 'ST_LineString');
CREATE DOMAIN vector AS float8[];
CREATE DOMAIN vessel_id AS int;
SELECT a_id, b_id, distance = gpu_twed('LINESTRING M (0 0 1, 1 1 2)'::geometry, 'LINESTRING M (0 1 1, 1 3 2)', 1, 1)
	AS same
FROM gpu_twed_matrix('SELECT 1::vessel_id, ''LINESTRING M (0 0 1, 1 1 2)''::track
	UNION ALL SELECT 2, ''LINESTRING M (0 1 1, 1 3 2)''::track', NULL, 1, 1);
SELECT a_id, b_id, distance = gpu_twed('{1, 2, 3}'::float8[], NULL, '{1, 5}', NULL, 1, 1) AS same
FROM gpu_twed_matrix('SELECT 1::vessel_id, ''{1, 2, 3}''::vector', 'SELECT 2, ''{1, 5}''::vector', 1, 1);
DROP DOMAIN track, vector, vessel_id;

-- an inner query must be one SELECT that changes nothing
CREATE TABLE scratch (id int, v float8[]);
SELECT * FROM gpu_twed_matrix('', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT 1, ''{1}''::float8[]', '', 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT 1, ''{1}''::float8[]; SELECT 2, ''{2}''::float8[]', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('INSERT INTO scratch VALUES (1, ''{1}'') RETURNING id, v', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('WITH x AS (INSERT INTO scratch VALUES (1, ''{1}'') RETURNING id, v) SELECT * FROM x',
	NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT id, v FROM scratch FOR UPDATE', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SHOW geoacc.device', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('EXPLAIN SELECT 1', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT 1 AS id, ''{1}''::float8[] AS v INTO scratch2', NULL, 1, 1);
SELECT count(*) AS untouched FROM scratch;
-- TABLE and VALUES are SELECTs
INSERT INTO scratch VALUES (1, '{1, 2}'), (2, '{2, 2}');
SELECT count(*) AS pairs FROM gpu_twed_matrix('TABLE scratch', 'VALUES (3, ''{1}''::float8[])', 1, 1);
DROP TABLE scratch;

-- column types are checked when the query returns no rows too
SELECT * FROM gpu_twed_matrix('SELECT 1, ''x''::text WHERE false', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT 1, ''{1}''::float8[]', 'SELECT 1.5, ''{1}''::float8[] WHERE false', 1, 1);

-- columns found by name (id, traj; id, values[, times]) in any order, other columns ignored
CREATE TEMP TABLE named (id int, name text, traj geometry, vals float8[], stamps float8[]);
INSERT INTO named VALUES
	(1, 'a', 'LINESTRING M (0 0 1, 1 1 2)', '{1, 2}', '{1, 2}'),
	(2, 'b', 'LINESTRING M (0 1 1, 1 3 2)', '{1, 5}', '{1, 3}'),
	(3, 'c', 'LINESTRING M (2 1 1, 1 3 4)', '{4, 5}', '{2, 3}');
SELECT bool_and(n.distance = p.distance) AS by_name_equals_by_position, count(*) AS pairs
FROM gpu_twed_matrix('SELECT name, traj, 0.5 AS weight, id FROM named', NULL) n
	JOIN gpu_twed_matrix('SELECT id, traj FROM named', NULL) p USING (a_id, b_id);
SELECT bool_and(n.distance = p.distance) AS values_and_times_by_name, count(*) AS pairs
FROM gpu_twed_matrix('SELECT stamps AS times, name, vals AS values, id FROM named', NULL) n
	JOIN gpu_twed_matrix('SELECT id, vals, stamps FROM named', NULL) p USING (a_id, b_id);
SELECT * FROM gpu_twed_matrix('SELECT name, traj, id::numeric AS id FROM named', NULL);
-- the segment join and gpu_make_trajectories read their columns the same way: by name (id, traj; object_id, t,
-- geom) in any order with other columns ignored, else by position
SELECT bool_and(n IS NOT DISTINCT FROM p) AS join_by_name_equals_by_position, count(*) AS pairs
FROM gpu_segment_join('SELECT name, traj, 0.5 AS weight, id FROM named', NULL, 5) n
	FULL JOIN gpu_segment_join('SELECT id, traj FROM named', NULL, 5) p USING (a_id, a_seg, b_id, b_seg);
SELECT * FROM gpu_segment_join('SELECT id, traj, name FROM named', 'SELECT traj AS trajectory, id FROM named', 5);
CREATE TEMP TABLE named_fixes AS
	SELECT id AS object_id, (ST_DumpPoints(traj)).geom AS point, 'x'::text AS note FROM named;
SELECT bool_and(ST_AsEWKB(n.trajectory) = ST_AsEWKB(p.trajectory)) AS fixes_by_name_equal_by_position, count(*) AS parts
FROM gpu_make_trajectories('SELECT note, ST_Force2D(point) AS geom, ST_M(point) AS t, object_id FROM named_fixes',
		'1 hour') n
	JOIN gpu_make_trajectories('SELECT object_id, ST_M(point), ST_Force2D(point) FROM named_fixes', '1 hour') p
	USING (object_id, part);
SELECT * FROM gpu_make_trajectories('SELECT object_id, ST_M(point) AS time, point, note FROM named_fixes', '1 hour');

-- inner queries run read-only: a volatile function they call cannot write, whatever the function
CREATE TABLE written (x int);
CREATE SEQUENCE written_seq;
CREATE FUNCTION inner_writes() RETURNS int LANGUAGE plpgsql AS $$ BEGIN INSERT INTO written VALUES (1); RETURN 1; END $$;
CREATE FUNCTION inner_drops() RETURNS int LANGUAGE plpgsql AS $$ BEGIN DROP TABLE written; RETURN 1; END $$;
SELECT * FROM gpu_segment_join('SELECT inner_writes(), ''LINESTRING M (0 0 10,10 0 15)''::geometry', NULL, 3);
SELECT * FROM gpu_segment_join('SELECT inner_drops(), ''LINESTRING M (0 0 10,10 0 15)''::geometry', NULL, 3);
SELECT * FROM gpu_segment_join('SELECT 1, ''LINESTRING M (0 0 10,10 0 15)''::geometry',
	'SELECT nextval(''written_seq''), ''LINESTRING M (0 0 10,10 0 15)''::geometry', 3);
SELECT * FROM gpu_segment_contacts('SELECT inner_writes(), ''LINESTRING M (0 0 10,10 0 15)''::geometry', NULL, 3);
SELECT * FROM gpu_twed_matrix('SELECT inner_writes(), ''{1, 2}''::float8[]', NULL);
SELECT * FROM gpu_make_trajectories('SELECT inner_writes(), now(), ''POINT(0 0)''::geometry', NULL);
SELECT count(*) AS written_rows, (SELECT last_value FROM written_seq) AS seq_last_value,
	(SELECT is_called FROM written_seq) AS seq_called FROM written;
-- an exception block that catches the error goes on in a read-write transaction
DO $$
BEGIN
	PERFORM * FROM gpu_segment_join('SELECT inner_writes(), ''LINESTRING M (0 0 10,10 0 15)''::geometry', NULL, 3);
EXCEPTION WHEN read_only_sql_transaction THEN
	RAISE NOTICE 'caught: %', SQLERRM;
END $$;
SHOW transaction_read_only;
INSERT INTO written VALUES (2);
SELECT count(*) FROM written;
DROP TABLE written;
DROP SEQUENCE written_seq;
DROP FUNCTION inner_writes(), inner_drops();
