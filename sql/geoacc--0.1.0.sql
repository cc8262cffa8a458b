-- geoacc extension script, assembled by the Makefile from sql/install/*.sql.
-- This piece: version.

\echo Use "CREATE EXTENSION geoacc" to load this file. \quit

CREATE FUNCTION geoacc_version() RETURNS text
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION geoacc_version() IS
	'geoacc version and whether this build has CUDA support';
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
-- Density rasters: gpu_density_raster (aggregate), geoacc_density_kernel, geoacc_raster_png.

CREATE FUNCTION gpu_density_raster_transfn(state internal, traj geometry, extent box2d, width int, height int)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100;
CREATE FUNCTION gpu_density_raster_transfn(state internal, traj geometry, extent box2d, width int, height int,
	kernel text)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100;
CREATE FUNCTION gpu_density_raster_transfn(state internal, traj geometry, extent box2d, width int, height int,
	kernel text, kernel_size int)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100;
CREATE FUNCTION gpu_density_raster_transfn(state internal, traj geometry, extent box2d, width int, height int,
	kernel text, kernel_size int, interpolate boolean)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100;

CREATE FUNCTION gpu_density_raster_finalfn(state internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 10000;
CREATE FUNCTION gpu_density_raster_combinefn(state internal, other internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 1000;
CREATE FUNCTION gpu_density_raster_serialfn(state internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
CREATE FUNCTION gpu_density_raster_deserialfn(data bytea, state internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;

COMMENT ON FUNCTION gpu_density_raster_transfn(internal, geometry, box2d, int, int) IS
	'transition function of gpu_density_raster';
COMMENT ON FUNCTION gpu_density_raster_transfn(internal, geometry, box2d, int, int, text) IS
	'transition function of gpu_density_raster';
COMMENT ON FUNCTION gpu_density_raster_transfn(internal, geometry, box2d, int, int, text, int) IS
	'transition function of gpu_density_raster';
COMMENT ON FUNCTION gpu_density_raster_transfn(internal, geometry, box2d, int, int, text, int, boolean) IS
	'transition function of gpu_density_raster';
COMMENT ON FUNCTION gpu_density_raster_finalfn(internal) IS
	'final function of gpu_density_raster: convolution and raster WKB';
COMMENT ON FUNCTION gpu_density_raster_combinefn(internal, internal) IS
	'combine function of gpu_density_raster: adds the counts of two partial rasters';
COMMENT ON FUNCTION gpu_density_raster_serialfn(internal) IS
	'serial function of gpu_density_raster';
COMMENT ON FUNCTION gpu_density_raster_deserialfn(bytea, internal) IS
	'deserial function of gpu_density_raster';

-- Aggregates cannot take default arguments: one aggregate per arity stands for the defaults
-- kernel 'gaussian', kernel_size 7, interpolate true.
CREATE AGGREGATE gpu_density_raster(traj geometry, extent box2d, width int, height int) (
	SFUNC = gpu_density_raster_transfn, STYPE = internal, SSPACE = 16000000,
	FINALFUNC = gpu_density_raster_finalfn,
	COMBINEFUNC = gpu_density_raster_combinefn,
	SERIALFUNC = gpu_density_raster_serialfn, DESERIALFUNC = gpu_density_raster_deserialfn,
	PARALLEL = SAFE);
CREATE AGGREGATE gpu_density_raster(traj geometry, extent box2d, width int, height int, kernel text) (
	SFUNC = gpu_density_raster_transfn, STYPE = internal, SSPACE = 16000000,
	FINALFUNC = gpu_density_raster_finalfn,
	COMBINEFUNC = gpu_density_raster_combinefn,
	SERIALFUNC = gpu_density_raster_serialfn, DESERIALFUNC = gpu_density_raster_deserialfn,
	PARALLEL = SAFE);
CREATE AGGREGATE gpu_density_raster(traj geometry, extent box2d, width int, height int, kernel text,
	kernel_size int) (
	SFUNC = gpu_density_raster_transfn, STYPE = internal, SSPACE = 16000000,
	FINALFUNC = gpu_density_raster_finalfn,
	COMBINEFUNC = gpu_density_raster_combinefn,
	SERIALFUNC = gpu_density_raster_serialfn, DESERIALFUNC = gpu_density_raster_deserialfn,
	PARALLEL = SAFE);
CREATE AGGREGATE gpu_density_raster(traj geometry, extent box2d, width int, height int, kernel text,
	kernel_size int, interpolate boolean) (
	SFUNC = gpu_density_raster_transfn, STYPE = internal, SSPACE = 16000000,
	FINALFUNC = gpu_density_raster_finalfn,
	COMBINEFUNC = gpu_density_raster_combinefn,
	SERIALFUNC = gpu_density_raster_serialfn, DESERIALFUNC = gpu_density_raster_deserialfn,
	PARALLEL = SAFE);

COMMENT ON AGGREGATE gpu_density_raster(geometry, box2d, int, int) IS
	'KDE traffic-density raster of trajectories as PostGIS raster WKB (one 64-bit float band): gaussian kernel of 7 x 7 cells, with interpolation';
COMMENT ON AGGREGATE gpu_density_raster(geometry, box2d, int, int, text) IS
	'KDE traffic-density raster of trajectories as PostGIS raster WKB (one 64-bit float band): the given kernel, 7 x 7 cells, with interpolation';
COMMENT ON AGGREGATE gpu_density_raster(geometry, box2d, int, int, text, int) IS
	'KDE traffic-density raster of trajectories as PostGIS raster WKB (one 64-bit float band): the given kernel and size, with interpolation';
COMMENT ON AGGREGATE gpu_density_raster(geometry, box2d, int, int, text, int, boolean) IS
	'KDE traffic-density raster of trajectories as PostGIS raster WKB (one 64-bit float band): kernel uniform, triangular, epanechnikov, quartic, triweight, tricube, gaussian or cosine; odd kernel_size 1..63; interpolate joins points more than one cell apart';

CREATE FUNCTION geoacc_density_kernel(kernel text DEFAULT 'gaussian', kernel_size int DEFAULT 7)
	RETURNS float8[]
	AS 'MODULE_PATHNAME', 'geoacc_density_kernel_weights' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;
COMMENT ON FUNCTION geoacc_density_kernel(text, int) IS
	'normalized kernel_size x kernel_size weights that gpu_density_raster convolves the counts with';

CREATE FUNCTION geoacc_raster_png(raster bytea, colormap text DEFAULT 'viridis', scale text DEFAULT 'log')
	RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10000;
COMMENT ON FUNCTION geoacc_raster_png(bytea, text, text) IS
	'heatmap PNG of the first band of a raster WKB: colormap viridis, magma, inferno, plasma, cividis or gray; scale linear, sqrt or log; nodata transparent';
-- Batch Douglas-Peucker simplification of trajectories, and the quality
-- measures of a simplification.

CREATE FUNCTION gpu_dp_simplify(
	traj geometry,
	tolerance float8,
	synchronized boolean DEFAULT false,
	use_z boolean DEFAULT false)
	RETURNS geometry
	AS 'MODULE_PATHNAME', 'gpu_dp_simplify'
	LANGUAGE C IMMUTABLE WINDOW PARALLEL SAFE COST 100;
COMMENT ON FUNCTION gpu_dp_simplify(geometry, float8, boolean, boolean) IS
	'window function: Douglas-Peucker simplification of every LINESTRING M/ZM trajectory of the partition in batched GPU (or CPU) launches; '
	'the planar result equals ST_Simplify vertex for vertex; synchronized => true measures the synchronized Euclidean distance, '
	'use_z => true measures in 3D';

CREATE FUNCTION geoacc_compression_stats(
	original geometry,
	simplified geometry,
	OUT compression_ratio float8,
	OUT length_loss_rate float8,
	OUT dtw_distance float8)
	AS 'MODULE_PATHNAME', 'geoacc_compression_stats'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION geoacc_compression_stats(geometry, geometry) IS
	'quality of a simplification: compression ratio (share of vertices removed), rate of length loss, '
	'and dynamic time warping distance between original and simplified (XY, in SRID units)';
-- Time Warp Edit Distance (Marteau 2009) between series and trajectories.

CREATE FUNCTION gpu_twed(a float8[], ta float8[], b float8[], tb float8[], nu float8, lambda float8,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'gpu_twed' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_twed(float8[], float8[], float8[], float8[], float8, float8, int, boolean, boolean) IS
	'Time Warp Edit Distance between series a and b (n x k or 1-D float8 arrays) with times ta and tb (NULL: 1..n); nu: stiffness, lambda: deletion penalty, degree: p of the Lp distance between points (root = false: without the p-th root), float32: single precision';

CREATE FUNCTION gpu_twed(a geometry, b geometry, nu float8, lambda float8,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'gpu_twed_geometry' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_twed(geometry, geometry, float8, float8, int, boolean, boolean) IS
	'Time Warp Edit Distance between trajectories a and b (LINESTRING M or ZM): X, Y (and Z) are the values, M the time';

CREATE FUNCTION gpu_twed_matrix(a_sql text, b_sql text, nu float8, lambda float8,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false)
	RETURNS TABLE(a_id bigint, b_id bigint, distance float8)
	AS 'MODULE_PATHNAME', 'gpu_twed_matrix' LANGUAGE C VOLATILE PARALLEL RESTRICTED COST 10 ROWS 10000;
COMMENT ON FUNCTION gpu_twed_matrix(text, text, float8, float8, int, boolean, boolean) IS
	'Time Warp Edit Distance of every series of a_sql against every series of b_sql, or of every pair of series of a_sql (a_id < b_id in query order) when b_sql is NULL; the queries return (id, values float8[][, times float8[]]) or (id, trajectory geometry)';
