-- Settings, devices and statistics.
LOAD 'geoacc';

-- settings and their validation
SHOW geoacc.gpu_threshold;
SHOW geoacc.gpu_memory_limit;
SET geoacc.device = 'sometimes';
SET geoacc.gpu_threshold = -1;
SET geoacc.gpu_memory_limit = '-5MB';
SET geoacc.gpu_memory_limit = '1kB';
SET geoacc.gpu_memory_limit = 0;
SET geoacc.gpu_memory_limit = '600kB';
SHOW geoacc.gpu_memory_limit;
SET geoacc.gpu_memory_limit = '2GB';
SHOW geoacc.gpu_memory_limit;
RESET geoacc.gpu_memory_limit;
SET geoacc.no_such_setting = 1;
-- geoacc.gpu_devices: CUDA ordinals separated by commas, or empty for every visible device
SHOW geoacc.gpu_devices;
SET geoacc.gpu_devices = '1';
SET geoacc.gpu_devices = '0, 1,2';
SHOW geoacc.gpu_devices;
SET geoacc.gpu_devices = '0,x';
SET geoacc.gpu_devices = '-1';
SET geoacc.gpu_devices = '0,';
SET geoacc.gpu_devices = '1024';
SET geoacc.gpu_devices = '0 1';
RESET geoacc.gpu_devices;
SET geoacc.device = 'cpu';
SHOW geoacc.device;
RESET geoacc.device;

-- devices: every row is complete and plausible (no rows without a GPU)
SELECT count(*) = count(name) AND bool_and(free_memory <= total_memory AND total_memory > 0
	AND compute_capability ~ '^\d+\.\d+$' AND runtime_version ~ '^\d+\.\d+$') IS NOT FALSE AS devices_ok
FROM geoacc_devices();

-- statistics start empty after a reset
SELECT geoacc_stats_reset();
SELECT count(*) FROM geoacc_stats();

-- test-only helpers from the library
CREATE FUNCTION geoacc_test_device_alloc_then_error(bigint) RETURNS void
	AS '$libdir/geoacc' LANGUAGE C STRICT;
CREATE FUNCTION geoacc_test_memory_in_use() RETURNS bigint
	AS '$libdir/geoacc' LANGUAGE C STRICT;

-- geoacc.device = gpu: runs on a GPU, a clear error without one
-- (expected/device.out: no GPU; expected/device_1.out: a GPU)
SET geoacc.device = 'gpu';
DO $$
DECLARE
	message text;
	hint text;
BEGIN
	PERFORM geoacc_test_device_alloc_then_error(1048576);
EXCEPTION WHEN object_not_in_prerequisite_state OR raise_exception THEN
	GET STACKED DIAGNOSTICS message = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
	RAISE NOTICE 'error: %; hint: %', message, nullif(hint, '');
END
$$;
-- device memory held when the error was raised is released
SELECT geoacc_test_memory_in_use();
RESET geoacc.device;

-- geoacc_status(): the build, and whether this session can use a GPU (with the reason if not)
SELECT version ~ '^\d+\.\d+\.\d+$' AS version_ok, build ~ '^(CPU only|CUDA \d+\.\d+)$' AS build_ok,
	device_setting IN ('auto', 'gpu', 'cpu') AS setting_ok,
	gpu_usable = (SELECT count(*) > 0 FROM geoacc_devices()) AS usable_iff_devices,
	(gpu_unusable_reason IS NULL) = gpu_usable AS reason_iff_unusable,
	(gpu_memory_limit > 0) IS NOT FALSE AND (gpu_memory_limit IS NULL) = NOT gpu_usable AS limit_iff_usable,
	(gpu_device IS NULL) = NOT gpu_usable AS device_iff_usable,
	gpu_device IS NOT DISTINCT FROM (SELECT ordinal FROM geoacc_devices() WHERE in_use) AS device_in_use,
	pid = pg_backend_pid() AS own_pid
FROM geoacc_status();

-- geoacc_backends() reads shared memory, there only when geoacc is in shared_preload_libraries
SELECT count(*) FROM geoacc_backends();

-- geoacc.device = auto: a call whose GPU runs out of memory runs on the CPU instead, to the same
-- bits, and is counted as a fallback (without a GPU, auto runs on the CPU from the start)
CREATE FUNCTION geoacc_test_fail_device_allocations(int) RETURNS void
	AS '$libdir/geoacc' LANGUAGE C STRICT;
CREATE TEMP TABLE fallback_series AS
SELECT i AS id, ARRAY[i, i * 2, 3]::float8[] AS v FROM generate_series(1, 20) i;
SET geoacc.device = 'cpu';
CREATE TEMP TABLE fallback_cpu AS SELECT * FROM gpu_twed_matrix('SELECT id, v FROM fallback_series', NULL, 1, 1);
SET geoacc.device = 'auto';
SET geoacc.gpu_threshold = 0;
SELECT geoacc_stats_reset();
SELECT geoacc_test_fail_device_allocations(1000);
CREATE TEMP TABLE fallback_auto AS SELECT * FROM gpu_twed_matrix('SELECT id, v FROM fallback_series', NULL, 1, 1);
SELECT geoacc_test_fail_device_allocations(0);
SELECT count(*) AS pairs, NOT EXISTS (SELECT * FROM fallback_cpu EXCEPT SELECT * FROM fallback_auto) AS same
FROM fallback_auto;
SELECT device, calls, fallbacks = (SELECT gpu_usable::int FROM geoacc_status()) AS fallbacks_counted
FROM geoacc_stats() WHERE function = 'gpu_twed_matrix';
RESET geoacc.device;
RESET geoacc.gpu_threshold;

DROP FUNCTION geoacc_test_device_alloc_then_error(bigint), geoacc_test_memory_in_use(),
	geoacc_test_fail_device_allocations(int);

-- snapshots live in the GPU service's memory: without the service, a clear error (the suite `snapshot` runs
-- on a server with it)
SELECT geoacc_snapshot_create('no_service', 'SELECT 1 AS id, ''SRID=3857;POINT(1 2)''::geometry AS geom');
SELECT count(*) AS snapshots FROM geoacc_snapshots();
