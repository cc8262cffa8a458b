-- gpu_dp_simplify on Citus.  A window function partitioned by the distribution column runs on the
-- workers, one partition at a time; partitioned by a coarse key (here a vessel bucket; a day, or a
-- region, do as well) each partition holds many trajectories, which gpu_dp_simplify simplifies in
-- batched calls.  Every result equals the plain table's, bit for bit.

-- the window runs in the tasks on the shards (no WindowAgg on the coordinator)
SELECT citus_plan($$SELECT id, gpu_dp_simplify(traj, 5) OVER (PARTITION BY bucket) FROM ais_by_bucket$$);

-- the same geometries as the whole plain table as one partition, and as ST_Simplify, at several
-- tolerances (a partition per bucket and tolerance)
CREATE TEMP TABLE simplify_dist AS
SELECT t AS tolerance, id, gpu_dp_simplify(traj, t) OVER (PARTITION BY bucket, t) AS s
FROM ais_by_bucket CROSS JOIN unnest(ARRAY[0, 1, 5, 50]::float8[]) t;
SELECT d.tolerance, count(*) AS tracks,
	count(*) FILTER (WHERE ST_AsEWKB(d.s) IS NOT DISTINCT FROM ST_AsEWKB(p.s)) AS equal,
	count(*) FILTER (WHERE ST_AsEWKB(d.s) IS NOT DISTINCT FROM ST_AsEWKB(ST_Simplify(p.traj, d.tolerance))) AS equal_st_simplify,
	count(*) FILTER (WHERE d.s IS NULL) AS collapsed
FROM simplify_dist d
	JOIN (SELECT t AS tolerance, id, traj, gpu_dp_simplify(traj, t) OVER (PARTITION BY t) AS s
		FROM ais_tracks CROSS JOIN unnest(ARRAY[0, 1, 5, 50]::float8[]) t) p USING (tolerance, id)
GROUP BY d.tolerance ORDER BY d.tolerance;

-- the per-row form (a partition per trajectory, by the distribution column) gives the same rows
SELECT count(*) AS tracks, bool_and(ST_AsEWKB(d.s) IS NOT DISTINCT FROM ST_AsEWKB(p.s)) AS all_equal
FROM (SELECT id, gpu_dp_simplify(traj, 5, true) OVER (PARTITION BY id) AS s FROM ais_by_id) d
	JOIN (SELECT id, gpu_dp_simplify(traj, 5, true) OVER () AS s FROM ais_tracks) p USING (id);

-- synchronized distance and 3D, partitioned by bucket
SELECT count(*) AS tracks, bool_and(ST_AsEWKB(d.s) IS NOT DISTINCT FROM ST_AsEWKB(p.s)) AS all_equal
FROM (SELECT id, gpu_dp_simplify(traj, 20, synchronized => true) OVER (PARTITION BY bucket) AS s FROM ais_by_bucket) d
	JOIN (SELECT id, gpu_dp_simplify(traj, 20, synchronized => true) OVER () AS s FROM ais_tracks) p USING (id);

-- the results stored next to their source: INSERT ... SELECT into a co-located table runs on the workers
SET client_min_messages = warning;
DROP TABLE IF EXISTS ais_simplified;
RESET client_min_messages;
CREATE TABLE ais_simplified (bucket int NOT NULL, id int NOT NULL, simplified geometry);
SELECT create_distributed_table('ais_simplified', 'bucket', colocate_with => 'ais_by_bucket');
SELECT line FROM citus_plan($$INSERT INTO ais_simplified
	SELECT bucket, id, gpu_dp_simplify(traj, 5) OVER (PARTITION BY bucket) FROM ais_by_bucket$$) line
WHERE line ~ 'Custom Scan|Task Count|WindowAgg|INSERT';
INSERT INTO ais_simplified SELECT bucket, id, gpu_dp_simplify(traj, 5) OVER (PARTITION BY bucket) FROM ais_by_bucket;
SELECT count(*) AS stored, bool_and(ST_AsEWKB(s.simplified) IS NOT DISTINCT FROM ST_AsEWKB(p.s)) AS all_equal
FROM ais_simplified s JOIN (SELECT id, gpu_dp_simplify(traj, 5) OVER () AS s FROM ais_tracks) p USING (id);

-- OVER () over a distributed table has one partition for all shards: Citus pulls the rows to the coordinator
SELECT citus_plan($$SELECT id, gpu_dp_simplify(traj, 5) OVER () FROM ais_by_bucket$$);

-- errors come back from the workers
\set VERBOSITY terse
SELECT gpu_dp_simplify(traj, -1) OVER (PARTITION BY bucket) FROM ais_by_bucket;
\set VERBOSITY default
