-- Trajectory similarity on Citus: gpu_twed_pairs, a window function, over the rows of a join of a
-- distributed table with a reference table of query trajectories, partitioned by the distribution
-- column: each shard computes the pairs of its partitions on its worker, every pair of a partition
-- in one batch.  The nearest k of each query: rank within each partition on the workers (the window
-- partitioned by the distribution column and the query), then among those k per partition on the
-- coordinator, so that only k rows per partition and query leave the workers, never the matrix.

-- both windows run in the tasks on the shards
SELECT citus_plan($$
	SELECT q_id, t_id, d FROM (
		SELECT q_id, t_id, d, row_number() OVER (PARTITION BY bucket, q_id ORDER BY d, t_id) AS r
		FROM (SELECT t.bucket, q.id AS q_id, t.id AS t_id,
				gpu_twed_pairs(t.traj, q.traj) OVER (PARTITION BY t.bucket) AS d
			FROM ais_by_bucket t CROSS JOIN ais_queries q) pairs) ranked
	WHERE r <= 3$$);

-- every pair: the distance of gpu_twed on the same two trajectories, bit for bit
CREATE TEMP TABLE twed_dist AS
SELECT t.bucket, q.id AS q_id, t.id AS t_id, gpu_twed_pairs(t.traj, q.traj) OVER (PARTITION BY t.bucket) AS d
FROM ais_by_bucket t CROSS JOIN ais_queries q;
SELECT count(*) AS pairs, bool_and(d.d = gpu_twed(t.traj, q.traj)) AS equal_to_gpu_twed
FROM twed_dist d JOIN ais_tracks t ON t.id = d.t_id JOIN ais_queries q ON q.id = d.q_id;

-- and gpu_twed_matrix's distances on the plain table
SELECT count(*) AS pairs, bool_and(d.d = m.distance) AS equal_to_matrix
FROM twed_dist d JOIN gpu_twed_matrix('SELECT id, traj FROM ais_queries', 'SELECT id, traj FROM ais_tracks') m
	ON m.a_id = d.q_id AND m.b_id = d.t_id;

-- the 3 nearest of each query: the rows of gpu_twed_matrix(..., k => 3) on the plain table
CREATE TEMP TABLE twed_nearest AS
SELECT q_id, t_id, d, row_number() OVER (PARTITION BY q_id ORDER BY d, t_id) AS rank
FROM (
	SELECT q_id, t_id, d FROM (
		SELECT q_id, t_id, d, row_number() OVER (PARTITION BY bucket, q_id ORDER BY d, t_id) AS r
		FROM (SELECT t.bucket, q.id AS q_id, t.id AS t_id,
				gpu_twed_pairs(t.traj, q.traj) OVER (PARTITION BY t.bucket) AS d
			FROM ais_by_bucket t CROSS JOIN ais_queries q) pairs) ranked
	WHERE r <= 3) per_partition;
SELECT count(*) AS nearest, bool_and(n.t_id = m.b_id AND n.d = m.distance) AS equal_to_matrix_k
FROM (SELECT * FROM twed_nearest WHERE rank <= 3) n
	JOIN (SELECT a_id, b_id, distance, row_number() OVER (PARTITION BY a_id) AS rank
		FROM gpu_twed_matrix('SELECT id, traj FROM ais_queries', 'SELECT id, traj FROM ais_tracks ORDER BY id',
			k => 3)) m ON m.a_id = n.q_id AND m.rank = n.rank;
-- at most 3 rows per bucket and query came to the coordinator
SELECT count(*) <= 3 * 16 * (SELECT count(*) FROM ais_queries) AS few_rows_moved FROM twed_nearest;

-- pairs that are not every pair of the partition (a join condition), float32, other parameters
SELECT count(*) AS pairs, bool_and(d = gpu_twed(a, b, 0.01, 0.5, 1, false)) AS equal
FROM (SELECT t.traj AS a, q.traj AS b,
		gpu_twed_pairs(t.traj, q.traj, 0.01, 0.5, 1, false) OVER (PARTITION BY t.bucket) AS d
	FROM ais_by_bucket t JOIN ais_queries q ON (t.id + q.id) % 5 = 0) s;
SELECT count(*) AS pairs, bool_and(d = gpu_twed(a, b, float32 => true)) AS equal
FROM (SELECT t.traj AS a, q.traj AS b, gpu_twed_pairs(t.traj, q.traj, float32 => true) OVER (PARTITION BY t.bucket) AS d
	FROM ais_by_bucket t CROSS JOIN ais_queries q) s;

-- errors come back from the workers
\set VERBOSITY terse
SELECT gpu_twed_pairs(t.traj, q.traj, nu => -1) OVER (PARTITION BY t.bucket) FROM ais_by_bucket t, ais_queries q;
\set VERBOSITY default
