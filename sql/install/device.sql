-- Devices and per-call statistics.

CREATE FUNCTION geoacc_devices(
	OUT ordinal int,
	OUT name text,
	OUT compute_capability text,
	OUT multiprocessors int,
	OUT total_memory bigint,
	OUT free_memory bigint,
	OUT driver_version text,
	OUT runtime_version text)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION geoacc_devices() IS
	'CUDA devices this session can use (no rows without a GPU): name, compute capability, memory (free memory only for the device this session uses), driver and runtime versions';

CREATE FUNCTION geoacc_status(
	OUT version text,
	OUT build text,
	OUT device_setting text,
	OUT gpu_usable boolean,
	OUT gpu_unusable_reason text,
	OUT gpu_memory_limit bigint)
	RETURNS record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION geoacc_status() IS
	'the geoacc version and build, geoacc.device, whether this session can use a GPU (and the CUDA error that says why not), and the device memory one call may use';

CREATE FUNCTION geoacc_stats(
	OUT function text,
	OUT device text,
	OUT calls bigint,
	OUT items bigint,
	OUT total_ms float8,
	OUT last_ms float8,
	OUT fallbacks bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION geoacc_stats() IS
	'geoacc calls of this session per function and device: count, items processed, total and last time in milliseconds, and calls that geoacc.device = auto ran on the CPU after the GPU failed';

CREATE FUNCTION geoacc_stats_reset() RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION geoacc_stats_reset() IS
	'clears this session''s geoacc_stats()';
