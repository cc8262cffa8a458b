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
	'CUDA devices this session can use (no rows without a GPU): name, compute capability, memory, driver and runtime versions';

CREATE FUNCTION geoacc_stats(
	OUT function text,
	OUT device text,
	OUT calls bigint,
	OUT items bigint,
	OUT total_ms float8,
	OUT last_ms float8)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION geoacc_stats() IS
	'geoacc calls of this session per function and device: count, items processed, total and last time in milliseconds';

CREATE FUNCTION geoacc_stats_reset() RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION geoacc_stats_reset() IS
	'clears this session''s geoacc_stats()';
