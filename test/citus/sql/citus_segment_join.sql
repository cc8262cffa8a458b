-- gpu_segment_join on Citus.  gpu_segment_join(a_sql, b_sql, ...) runs its inner queries where it is
-- called; inside a query that Citus sends to the shards an inner query on a distributed or reference
-- table cannot run.  The array form runs anywhere: the trajectories of each group of the distributed
-- table (grouped by its distribution column, so on the workers) against the query set of a reference
-- table, which Citus computes once and sends to every worker.  The rows are those of the single-node
-- function on the plain tables, exactly: segment pairs do not depend on the other trajectories.

SELECT citus_plan($$
	SELECT j.*
	FROM (SELECT array_agg(id) AS ids, array_agg(traj) AS trajs FROM ais_queries) q,
		(SELECT bucket, array_agg(id) AS ids, array_agg(traj) AS trajs FROM ais_by_bucket GROUP BY bucket) t,
		LATERAL gpu_segment_join(t.ids, t.trajs, q.ids, q.trajs, 200) j$$);

CREATE TEMP TABLE join_plain AS
SELECT * FROM gpu_segment_join('SELECT id, traj FROM ais_tracks', 'SELECT id, traj FROM ais_queries', 200);
CREATE TEMP TABLE join_dist AS
SELECT j.*
FROM (SELECT array_agg(id) AS ids, array_agg(traj) AS trajs FROM ais_queries) q,
	(SELECT bucket, array_agg(id) AS ids, array_agg(traj) AS trajs FROM ais_by_bucket GROUP BY bucket) t,
	LATERAL gpu_segment_join(t.ids, t.trajs, q.ids, q.trajs, 200) j;
SELECT (SELECT count(*) FROM join_plain) AS plain_rows, (SELECT count(*) FROM join_dist) AS distributed_rows,
	(SELECT count(*) FROM (SELECT * FROM join_plain EXCEPT ALL SELECT * FROM join_dist) x) AS only_plain,
	(SELECT count(*) FROM (SELECT * FROM join_dist EXCEPT ALL SELECT * FROM join_plain) x) AS only_distributed;

-- every method gives those rows, and so does the distribution by track id (a group per trajectory)
CREATE TEMP TABLE join_methods (method text, a_id bigint, a_seg int, b_id bigint, b_seg int,
	t_start float8, t_end float8, cpa_time float8, cpa_distance float8);
DO $$
DECLARE
	m text;
BEGIN
	FOREACH m IN ARRAY ARRAY['spatial', 'temporal', 'spatiotemporal'] LOOP
		INSERT INTO join_methods
		SELECT m, j.*
		FROM (SELECT array_agg(id) AS ids, array_agg(traj) AS trajs FROM ais_queries) q,
			(SELECT id, array_agg(id) AS ids, array_agg(traj) AS trajs FROM ais_by_id GROUP BY id) t,
			LATERAL gpu_segment_join(t.ids, t.trajs, q.ids, q.trajs, 200, m) j;
	END LOOP;
END $$;
SELECT method, count(*) AS rows, count(*) = (SELECT count(*) FROM join_plain) AND count(*) = count(p.a_id) AS same_rows
FROM join_methods d
	LEFT JOIN join_plain p USING (a_id, a_seg, b_id, b_seg, t_start, t_end, cpa_time, cpa_distance)
GROUP BY method ORDER BY method;

-- the array form on one node: the inner-query form's rows, and its errors
SELECT count(*) = (SELECT count(*) FROM join_plain) AS same_count
FROM gpu_segment_join((SELECT array_agg(id) FROM ais_tracks), (SELECT array_agg(traj) FROM ais_tracks),
	(SELECT array_agg(id) FROM ais_queries), (SELECT array_agg(traj) FROM ais_queries), 200);
SELECT count(*) = (SELECT count(*) FROM gpu_segment_join('SELECT id, traj FROM ais_queries', NULL, 500)) AS self_join_same
FROM gpu_segment_join((SELECT array_agg(id) FROM ais_queries), (SELECT array_agg(traj) FROM ais_queries), NULL, NULL, 500);
SELECT * FROM gpu_segment_join(ARRAY[1, 2], ARRAY['LINESTRING M (0 0 1, 1 1 2)'::geometry], NULL, NULL, 10);
SELECT * FROM gpu_segment_join(ARRAY[1, NULL], ARRAY['LINESTRING M (0 0 1, 1 1 2)'::geometry, NULL], NULL, NULL, 10);
SELECT * FROM gpu_segment_join(ARRAY[1], ARRAY['LINESTRING M (0 0 1, 1 1 2)'::geometry], ARRAY[1], NULL, 10);
SELECT * FROM gpu_segment_join(ARRAY[1], ARRAY['LINESTRING M (0 0 1, 1 1 2)'::geometry], NULL, NULL, 0);
