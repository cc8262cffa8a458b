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

-- The same with the extent as a geometry (an envelope such as ST_TileEnvelope(z, x, y)), whose SRID must be
-- the trajectories'.
CREATE FUNCTION gpu_density_raster_transfn(state internal, traj geometry, extent geometry, width int, height int)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100;
CREATE FUNCTION gpu_density_raster_transfn(state internal, traj geometry, extent geometry, width int, height int,
	kernel text)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100;
CREATE FUNCTION gpu_density_raster_transfn(state internal, traj geometry, extent geometry, width int, height int,
	kernel text, kernel_size int)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100;
CREATE FUNCTION gpu_density_raster_transfn(state internal, traj geometry, extent geometry, width int, height int,
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
COMMENT ON FUNCTION gpu_density_raster_transfn(internal, geometry, geometry, int, int) IS
	'transition function of gpu_density_raster';
COMMENT ON FUNCTION gpu_density_raster_transfn(internal, geometry, geometry, int, int, text) IS
	'transition function of gpu_density_raster';
COMMENT ON FUNCTION gpu_density_raster_transfn(internal, geometry, geometry, int, int, text, int) IS
	'transition function of gpu_density_raster';
COMMENT ON FUNCTION gpu_density_raster_transfn(internal, geometry, geometry, int, int, text, int, boolean) IS
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

-- with the extent as a geometry of the trajectories' SRID
CREATE AGGREGATE gpu_density_raster(traj geometry, extent geometry, width int, height int) (
	SFUNC = gpu_density_raster_transfn, STYPE = internal, SSPACE = 16000000,
	FINALFUNC = gpu_density_raster_finalfn,
	COMBINEFUNC = gpu_density_raster_combinefn,
	SERIALFUNC = gpu_density_raster_serialfn, DESERIALFUNC = gpu_density_raster_deserialfn,
	PARALLEL = SAFE);
CREATE AGGREGATE gpu_density_raster(traj geometry, extent geometry, width int, height int, kernel text) (
	SFUNC = gpu_density_raster_transfn, STYPE = internal, SSPACE = 16000000,
	FINALFUNC = gpu_density_raster_finalfn,
	COMBINEFUNC = gpu_density_raster_combinefn,
	SERIALFUNC = gpu_density_raster_serialfn, DESERIALFUNC = gpu_density_raster_deserialfn,
	PARALLEL = SAFE);
CREATE AGGREGATE gpu_density_raster(traj geometry, extent geometry, width int, height int, kernel text,
	kernel_size int) (
	SFUNC = gpu_density_raster_transfn, STYPE = internal, SSPACE = 16000000,
	FINALFUNC = gpu_density_raster_finalfn,
	COMBINEFUNC = gpu_density_raster_combinefn,
	SERIALFUNC = gpu_density_raster_serialfn, DESERIALFUNC = gpu_density_raster_deserialfn,
	PARALLEL = SAFE);
CREATE AGGREGATE gpu_density_raster(traj geometry, extent geometry, width int, height int, kernel text,
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
COMMENT ON AGGREGATE gpu_density_raster(geometry, geometry, int, int) IS
	'gpu_density_raster with the extent as a geometry (an envelope such as ST_TileEnvelope) of the trajectories'' SRID';
COMMENT ON AGGREGATE gpu_density_raster(geometry, geometry, int, int, text) IS
	'gpu_density_raster with the extent as a geometry (an envelope such as ST_TileEnvelope) of the trajectories'' SRID';
COMMENT ON AGGREGATE gpu_density_raster(geometry, geometry, int, int, text, int) IS
	'gpu_density_raster with the extent as a geometry (an envelope such as ST_TileEnvelope) of the trajectories'' SRID';
COMMENT ON AGGREGATE gpu_density_raster(geometry, geometry, int, int, text, int, boolean) IS
	'gpu_density_raster with the extent as a geometry (an envelope such as ST_TileEnvelope) of the trajectories'' SRID';
COMMENT ON AGGREGATE gpu_density_raster(geometry, box2d, int, int, text, int, boolean) IS
	'KDE traffic-density raster of trajectories as PostGIS raster WKB (one 64-bit float band): kernel uniform, triangular, epanechnikov, quartic, triweight, tricube, gaussian or cosine; odd kernel_size 1..63; interpolate joins points more than one cell apart';

CREATE FUNCTION geoacc_density_kernel(kernel text DEFAULT 'gaussian', kernel_size int DEFAULT 7)
	RETURNS float8[]
	AS 'MODULE_PATHNAME', 'geoacc_density_kernel_weights' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;
COMMENT ON FUNCTION geoacc_density_kernel(text, int) IS
	'normalized kernel_size x kernel_size weights that gpu_density_raster convolves the counts with';

CREATE FUNCTION geoacc_raster_png(raster bytea, colormap text DEFAULT 'viridis', scale text DEFAULT 'log',
	vmin float8 DEFAULT NULL, vmax float8 DEFAULT NULL, transparent_zero boolean DEFAULT false)
	RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 10000;
COMMENT ON FUNCTION geoacc_raster_png(bytea, text, text, float8, float8, boolean) IS
	'heatmap PNG of the first band of a raster WKB: colormap viridis, magma, inferno, plasma, cividis or gray; scale linear, sqrt or log '
	'from vmin to vmax (NULL: the band''s minimum and maximum; one scale for many tiles when given); nodata, and 0 with transparent_zero, transparent';
