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
