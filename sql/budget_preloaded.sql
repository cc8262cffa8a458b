-- The GPU memory budget the sessions of a server share, on a server with geoacc in
-- shared_preload_libraries (make installcheck-preloaded).  No GPU is needed: a test helper takes a call's
-- path through the budget on a GPU it names, ordinal 1000 with 4GB of memory: a budget of 3GB (3/4).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS geoacc CASCADE;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;
CREATE FUNCTION geoacc_test_budget_call(device int, device_memory bigint, bytes bigint, least_bytes bigint,
	hold_seconds float8 DEFAULT 0, raise boolean DEFAULT false) RETURNS bigint
	AS '$libdir/geoacc' LANGUAGE C STRICT;
CREATE FUNCTION geoacc_test_budget_hold(device int, device_memory bigint, bytes bigint) RETURNS bigint
	AS '$libdir/geoacc' LANGUAGE C STRICT;

-- what has happened on that GPU since this test began
CREATE TEMP TABLE budget_start AS SELECT * FROM geoacc_gpu_budget();
CREATE TEMP VIEW fake_gpu AS
SELECT pg_size_pretty(b.device_memory) AS memory, pg_size_pretty(b.gpu_memory_total) AS budget,
	pg_size_pretty(b.gpu_memory_reserved) AS reserved, b.calls - coalesce(s.calls, 0) AS calls,
	b.waits - coalesce(s.waits, 0) AS waits, b.fallbacks - coalesce(s.fallbacks, 0) AS fallbacks,
	b.timeouts - coalesce(s.timeouts, 0) AS timeouts
FROM geoacc_gpu_budget() b LEFT JOIN budget_start s USING (gpu_device) WHERE b.gpu_device = 1000;

SET geoacc.device = auto;
-- a call takes what it needs and gives it back
SELECT pg_size_pretty(geoacc_test_budget_call(1000, pg_size_bytes('4GB'), pg_size_bytes('1GB'), pg_size_bytes('1GB'))) AS reserved;
SELECT * FROM fake_gpu;
-- never more than the budget (the call then runs in chunks), nor than geoacc.gpu_memory_limit
SELECT pg_size_pretty(geoacc_test_budget_call(1000, pg_size_bytes('4GB'), pg_size_bytes('5GB'), pg_size_bytes('1GB'))) AS reserved;
SET geoacc.gpu_memory_limit = '512MB';
SELECT pg_size_pretty(geoacc_test_budget_call(1000, pg_size_bytes('4GB'), pg_size_bytes('1GB'), pg_size_bytes('1GB'))) AS reserved;
RESET geoacc.gpu_memory_limit;

-- another session holds 2.5GB: 0.5GB is left
SELECT dblink_connect('other', 'dbname=' || current_database());
SELECT pg_size_pretty(held) AS held
FROM dblink('other', 'SELECT geoacc_test_budget_hold(1000, pg_size_bytes(''4GB''), pg_size_bytes(''2560MB''))') AS t(held bigint);
SELECT pg_size_pretty(gpu_memory_reserved) AS reserved, gpu_calls + cpu_calls AS calls
FROM geoacc_backends() WHERE pid = (SELECT pid FROM dblink('other', 'SELECT pg_backend_pid()') AS t(pid int));
-- auto: a call the budget cannot serve runs on the CPU (0 reserved: a fallback) ...
SELECT geoacc_test_budget_call(1000, pg_size_bytes('4GB'), pg_size_bytes('1GB'), pg_size_bytes('1GB')) AS reserved;
-- ... but one that runs in chunks takes what is left, from its least up
SELECT pg_size_pretty(geoacc_test_budget_call(1000, pg_size_bytes('4GB'), pg_size_bytes('1GB'), pg_size_bytes('256MB'))) AS reserved;
SELECT * FROM fake_gpu;

-- gpu: the call waits up to geoacc.gpu_memory_wait for memory to come back, then raises an ERROR
SET geoacc.device = gpu;
SET geoacc.gpu_memory_wait = '200ms';
SELECT geoacc_test_budget_call(1000, pg_size_bytes('4GB'), pg_size_bytes('1GB'), pg_size_bytes('1GB'));
SET geoacc.gpu_memory_wait = 0;
SELECT geoacc_test_budget_call(1000, pg_size_bytes('4GB'), pg_size_bytes('1GB'), pg_size_bytes('1GB'));
-- a cancel ends the wait
SET geoacc.gpu_memory_wait = '1min';
SET statement_timeout = '300ms';
SELECT geoacc_test_budget_call(1000, pg_size_bytes('4GB'), pg_size_bytes('1GB'), pg_size_bytes('1GB'));
RESET statement_timeout;
-- memory given back wakes the call: the other session gives its 2.5GB back after 2 seconds
SELECT dblink_send_query('other', 'SELECT pg_sleep(2)::text, geoacc_test_budget_hold(1000, pg_size_bytes(''4GB''), 0)');
SELECT pg_size_pretty(geoacc_test_budget_call(1000, pg_size_bytes('4GB'), pg_size_bytes('1GB'), pg_size_bytes('1GB'))) AS reserved;
SELECT held FROM dblink_get_result('other') AS t(slept text, held bigint);
SELECT count(*) AS done FROM dblink_get_result('other') AS t(slept text, held bigint);
SELECT * FROM fake_gpu;
RESET geoacc.gpu_memory_wait;
RESET geoacc.device;

-- what a call holds goes back when it raises an ERROR, when it is cancelled, in a failed subtransaction
SELECT geoacc_test_budget_call(1000, pg_size_bytes('4GB'), pg_size_bytes('1GB'), pg_size_bytes('1GB'), raise => true);
SET statement_timeout = '300ms';
SELECT geoacc_test_budget_call(1000, pg_size_bytes('4GB'), pg_size_bytes('1GB'), pg_size_bytes('1GB'), hold_seconds => 60);
RESET statement_timeout;
DO $$
BEGIN
	PERFORM geoacc_test_budget_call(1000, pg_size_bytes('4GB'), pg_size_bytes('1GB'), pg_size_bytes('1GB'), raise => true);
EXCEPTION WHEN raise_exception THEN
	RAISE NOTICE 'caught: %', SQLERRM;
END
$$;
SELECT reserved FROM fake_gpu;
-- ... and when its backend exits: the other session holds 1GB, then disconnects
SELECT pg_size_pretty(held) AS held
FROM dblink('other', 'SELECT geoacc_test_budget_hold(1000, pg_size_bytes(''4GB''), pg_size_bytes(''1GB''))') AS t(held bigint);
SELECT reserved FROM fake_gpu;
SELECT dblink_disconnect('other');
DO $$
BEGIN
	-- the backend exits after the connection closes: wait for it (30 s at most)
	FOR i IN 1 .. 300 LOOP
		EXIT WHEN (SELECT gpu_memory_reserved FROM geoacc_gpu_budget() WHERE gpu_device = 1000) = 0;
		PERFORM pg_sleep(0.1);
	END LOOP;
END
$$;
SELECT * FROM fake_gpu;

-- the budget is set server-wide
SET geoacc.gpu_memory_total = '1GB';
