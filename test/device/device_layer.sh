#!/bin/bash
# Device-layer measurements on the GPU machine (PG* variables set, geoacc
# installed): devices; device memory before and after 1,000 statements that
# raise an ERROR while holding device memory; cancellation latency of a
# long GPU call by pg_cancel_backend and by statement_timeout, and that the
# backend keeps working afterwards.
set -euo pipefail
db=geoacc_device_layer
dropdb --if-exists $db >/dev/null
createdb $db
psql -X -q -d $db <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION geoacc CASCADE;
CREATE FUNCTION geoacc_test_device_alloc_then_error(bigint) RETURNS void AS '$libdir/geoacc' LANGUAGE C STRICT;
CREATE FUNCTION geoacc_test_memory_in_use() RETURNS bigint AS '$libdir/geoacc' LANGUAGE C STRICT;
CREATE FUNCTION geoacc_test_gpu_busy(float8) RETURNS void AS '$libdir/geoacc' LANGUAGE C STRICT;
SQL

echo "## devices"
psql -X -d $db -c "SELECT * FROM geoacc_devices()"

echo "## 1,000 statements raising an ERROR after allocating 64 MB of device memory"
{
	echo "SET geoacc.device = gpu;"
	echo "SELECT gpu_usable FROM geoacc_status() \\gset"	# free memory shows once the session uses the GPU
	echo "SELECT free_memory AS free_before FROM geoacc_devices() WHERE ordinal = 0 \\gset"
	for i in $(seq 1000); do echo "SELECT geoacc_test_device_alloc_then_error(67108864);"; done
	echo "SELECT :free_before AS free_before, free_memory AS free_after, free_memory - :free_before AS difference,"
	echo "       geoacc_test_memory_in_use() AS geoacc_in_use FROM geoacc_devices() WHERE ordinal = 0;"
} > /tmp/leak.sql
psql -X -d $db -f /tmp/leak.sql 2>/tmp/leak.err | tail -4
echo "errors raised: $(grep -c 'raised after allocating 67108864 bytes' /tmp/leak.err)"

echo "## pg_cancel_backend during a 30 s GPU call"
cat > /tmp/cancel.sql <<'SQL'
SET geoacc.device = gpu;
SELECT pg_backend_pid() AS pid \gset
\o /tmp/cancel.pid
SELECT :pid;
\o
SELECT geoacc_test_gpu_busy(30);
SELECT clock_timestamp() AS returned_at \gset
\o /tmp/cancel.returned
SELECT :'returned_at';
\o
SELECT 'backend still works: ' || count(*) AS after_cancel FROM generate_series(1, 1000);
SELECT geoacc_test_gpu_busy(0.2);
SELECT 'a GPU call after the cancel works';
SQL
rm -f /tmp/cancel.pid /tmp/cancel.returned
psql -X -At -d $db -f /tmp/cancel.sql > /tmp/cancel.out 2>&1 &
bg=$!
sleep 3
cancel_at=$(psql -X -At -d $db -c "SELECT clock_timestamp()::text || '|' || pg_cancel_backend($(cat /tmp/cancel.pid))")
wait $bg || true
cat /tmp/cancel.out
psql -X -At -d $db -c "SELECT 'cancel latency: ' || round(extract(epoch FROM '$(cat /tmp/cancel.returned)'::timestamptz - '${cancel_at%|*}'::timestamptz) * 1000) || ' ms (signal sent: ${cancel_at#*|})'"

echo "## statement_timeout = 2s on a 30 s GPU call"
psql -X -At -d $db <<'SQL' 2>&1
SET geoacc.device = gpu;
SET statement_timeout = '2s';
SELECT clock_timestamp() AS t0 \gset
SELECT geoacc_test_gpu_busy(30);
SELECT 'returned after ' || round(extract(epoch FROM clock_timestamp() - :'t0') * 1000) || ' ms (timeout 2000 ms)';
RESET statement_timeout;
SELECT 'in use after timeout: ' || geoacc_test_memory_in_use();
SQL
