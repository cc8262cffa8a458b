-- geoacc.* settings across the nodes, and a cluster-wide view of geoacc's devices and statistics.
-- geoacc_status() run in the shard tasks shows the setting the workers' backends see.

-- a session's SET stays on the coordinator: the workers keep their own value
SET geoacc.device = 'cpu';
SELECT DISTINCT (geoacc_status()).device_setting AS on_workers FROM ais_by_id;
RESET geoacc.device;

-- SET LOCAL, with citus.propagate_set_commands = 'local', reaches the workers for the transaction
BEGIN;
SET LOCAL citus.propagate_set_commands = 'local';
SET LOCAL geoacc.device = 'cpu';
SET LOCAL geoacc.gpu_threshold = 123;
SELECT DISTINCT (geoacc_status()).device_setting AS on_workers, current_setting('geoacc.gpu_threshold') AS threshold
FROM ais_by_id;
COMMIT;

-- ALTER DATABASE ... SET is propagated to every node, for the connections opened after it
ALTER DATABASE :"DBNAME" SET geoacc.gpu_threshold = 4242;
SELECT nodeid, success, result FROM run_command_on_all_nodes($$SELECT current_setting('geoacc.gpu_threshold')$$)
ORDER BY nodeid;
ALTER DATABASE :"DBNAME" RESET geoacc.gpu_threshold;
SELECT nodeid, success, result FROM run_command_on_all_nodes($$SELECT current_setting('geoacc.gpu_threshold')$$)
ORDER BY nodeid;

-- geoacc.gpu_devices is checked on every node like any other setting
SELECT nodeid, success, result FROM run_command_on_all_nodes($$SET geoacc.gpu_devices = '0,x'$$) ORDER BY nodeid;

-- devices of every node (no rows without a GPU), as one view
SELECT bool_and(success) AS answered, count(*) AS nodes
FROM run_command_on_all_nodes($$SELECT count(*) FROM geoacc_devices()$$);
SELECT count(*) AS device_rows_consistent
FROM run_command_on_all_nodes($$SELECT coalesce(json_agg(d), '[]') FROM geoacc_devices() d$$) r,
	json_to_recordset(r.result::json) AS d(ordinal int, name text, total_memory bigint, in_use boolean)
WHERE d.total_memory <= 0;

-- per-backend statistics of every node (geoacc in shared_preload_libraries on each): after a
-- distributed aggregate, the workers' backends that ran its shard tasks show their calls
SELECT length(r) > 0 AS raster
FROM (SELECT gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 100, 100) AS r FROM ais_by_id) s;
SELECT count(DISTINCT n.nodeid) AS workers_with_calls, bool_and(b.pid > 0) AS pids
FROM run_command_on_all_nodes($$SELECT coalesce(json_agg(b), '[]') FROM geoacc_backends() b$$) r
	JOIN pg_dist_node n USING (nodeid),
	json_to_recordset(r.result::json) AS b(pid int, gpu_device int, gpu_calls bigint, cpu_calls bigint)
WHERE n.groupid > 0 AND b.gpu_calls + b.cpu_calls > 0;
