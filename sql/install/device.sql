-- Devices and per-call statistics.

CREATE OR REPLACE FUNCTION geoacc_devices(
	OUT ordinal int,
	OUT name text,
	OUT compute_capability text,
	OUT multiprocessors int,
	OUT total_memory bigint,
	OUT free_memory bigint,
	OUT driver_version text,
	OUT runtime_version text,
	OUT in_use boolean)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION geoacc_devices() IS
	'CUDA devices this session can see (no rows without a GPU): name, compute capability, memory (free memory only for the device this session uses), driver and runtime versions, and whether this session uses it (geoacc.gpu_devices)';

CREATE OR REPLACE FUNCTION geoacc_status(
	OUT version text,
	OUT build text,
	OUT device_setting text,
	OUT gpu_usable boolean,
	OUT gpu_unusable_reason text,
	OUT gpu_memory_limit bigint,
	OUT gpu_device int,
	OUT pid int,
	OUT gpu_memory_total bigint,
	OUT gpu_memory_reserved bigint)
	RETURNS record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION geoacc_status() IS
	'the geoacc version and build, geoacc.device, whether this session can use a GPU (and the CUDA error that says why not), the device memory one call may use, the CUDA ordinal of the GPU this session uses (geoacc.gpu_devices), the backend''s process id, and with geoacc preloaded that GPU''s memory budget (geoacc.gpu_memory_total) and what the server''s calls hold of it now';

CREATE OR REPLACE FUNCTION geoacc_stats(
	OUT function text,
	OUT device text,
	OUT calls bigint,
	OUT items bigint,
	OUT total_ms float8,
	OUT last_ms float8,
	OUT fallbacks bigint,
	OUT waits bigint,
	OUT wait_ms float8)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION geoacc_stats() IS
	'geoacc calls of this session per function and device: count, items processed, total and last time in milliseconds, calls that geoacc.device = auto ran on the CPU after the GPU failed or when the GPU memory budget was taken, and calls that waited for the budget and how long';

CREATE OR REPLACE FUNCTION geoacc_stats_reset() RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION geoacc_stats_reset() IS
	'clears this session''s geoacc_stats() and its counts in geoacc_backends()';

CREATE OR REPLACE FUNCTION geoacc_backends(
	OUT pid int,
	OUT gpu_device int,
	OUT gpu_calls bigint,
	OUT gpu_items bigint,
	OUT gpu_ms float8,
	OUT cpu_calls bigint,
	OUT cpu_items bigint,
	OUT cpu_ms float8,
	OUT fallbacks bigint,
	OUT waits bigint,
	OUT gpu_memory_reserved bigint,
	OUT last_function text,
	OUT last_call timestamptz)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION geoacc_backends() IS
	'every backend of this server that has made a geoacc call or holds GPU memory budget (needs geoacc in shared_preload_libraries): its process id, the CUDA ordinal of the GPU it uses, its calls, items and milliseconds on the GPU and on the CPU, its fallbacks to the CPU, its waits for the memory budget, what it holds of the budget now, and its last call';

CREATE OR REPLACE FUNCTION geoacc_service(
	OUT mode text,
	OUT supervisor_pid int,
	OUT pids int[],
	OUT starts bigint,
	OUT started timestamptz,
	OUT gpu text,
	OUT gpu_device int,
	OUT gpu_unusable_reason text,
	OUT queued int,
	OUT running int,
	OUT calls bigint,
	OUT failed_calls bigint,
	OUT lost_calls bigint,
	OUT memory_size bigint,
	OUT memory_used bigint,
	OUT memory_peak bigint,
	OUT snapshot_copies int,
	OUT snapshot_device_bytes bigint)
	RETURNS record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION geoacc_service() IS
	'the GPU service (geoacc.service): its mode, the pids of its supervisor and of its device processes (the only processes that hold a CUDA context), how often a device process was started and when last, its GPU (ready, starting, failed with the reason, or none in cpu mode), the calls queued and running now, the calls it has run, failed and lost (its process died during them), the shared memory for the calls'' inputs and outputs (its size, what is in use and the most that was), and the copies of snapshots its device processes keep prepared (on the GPU: in device memory) with the device memory they hold';

CREATE OR REPLACE FUNCTION geoacc_gpu_budget(
	OUT gpu_device int,
	OUT device_memory bigint,
	OUT gpu_memory_total bigint,
	OUT gpu_memory_reserved bigint,
	OUT calls bigint,
	OUT waits bigint,
	OUT fallbacks bigint,
	OUT timeouts bigint,
	OUT gpu_memory_snapshots bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION geoacc_gpu_budget() IS
	'the GPU memory budget of each GPU the server''s backends have used (needs geoacc in shared_preload_libraries): the device''s memory, its budget (geoacc.gpu_memory_total), what calls hold of it now, and since the server started the calls that reserved from it, those of them that waited, those that geoacc.device = auto ran on the CPU instead and those that gave up waiting; and what the GPU service''s device processes keep of snapshots in its memory (not the calls'')';
