-- Density rasters: gpu_density_raster (aggregate), geoacc_density_kernel, geoacc_raster_png.

CREATE FUNCTION gpu_density_raster_finalfn(state internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 10000;
CREATE FUNCTION gpu_density_raster_combinefn(state internal, other internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 1000;
CREATE FUNCTION gpu_density_raster_serialfn(state internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
CREATE FUNCTION gpu_density_raster_deserialfn(data bytea, state internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;

COMMENT ON FUNCTION gpu_density_raster_finalfn(internal) IS
	'final function of gpu_density_raster: convolution and raster WKB';
COMMENT ON FUNCTION gpu_density_raster_combinefn(internal, internal) IS
	'combine function of gpu_density_raster: adds the cells of two partial rasters';
COMMENT ON FUNCTION gpu_density_raster_serialfn(internal) IS
	'serial function of gpu_density_raster';
COMMENT ON FUNCTION gpu_density_raster_deserialfn(bytea, internal) IS
	'deserial function of gpu_density_raster';

-- Aggregates take neither defaults nor named arguments: one aggregate per number of arguments stands for
-- the defaults kernel 'gaussian', kernel_size 7, interpolate true, mode 'count' and weight 1, each with the
-- extent as a box2d or as a geometry (an envelope such as ST_TileEnvelope(z, x, y)) whose SRID must be the
-- rows'.  One C function is the transition function of all of them.
DO $$
DECLARE
	optional text[] := ARRAY['kernel text', 'kernel_size int', 'interpolate boolean', 'mode text', 'weight float8'];
	extent text;
	args text;
	types text;
BEGIN
	FOREACH extent IN ARRAY ARRAY['box2d', 'geometry'] LOOP
		FOR n IN 0..5 LOOP
			args := format('geom geometry, extent %s, width int, height int', extent);
			IF n > 0 THEN
				args := args || ', ' || array_to_string(optional[1:n], ', ');
			END IF;
			types := regexp_replace(args, '(^|, )\w+ ', '\1', 'g');
			EXECUTE format('CREATE FUNCTION gpu_density_raster_transfn(state internal, %s) RETURNS internal '
				'AS ''MODULE_PATHNAME'' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100', args);
			EXECUTE format('COMMENT ON FUNCTION gpu_density_raster_transfn(internal, %s) IS %L', types,
				'transition function of gpu_density_raster');
			EXECUTE format('CREATE AGGREGATE gpu_density_raster(%s) ('
				'SFUNC = gpu_density_raster_transfn, STYPE = internal, SSPACE = 16000000, '
				'FINALFUNC = gpu_density_raster_finalfn, COMBINEFUNC = gpu_density_raster_combinefn, '
				'SERIALFUNC = gpu_density_raster_serialfn, DESERIALFUNC = gpu_density_raster_deserialfn, '
				'PARALLEL = SAFE)', args);
			EXECUTE format('COMMENT ON AGGREGATE gpu_density_raster(%s) IS %L', types,
				'KDE traffic-density raster of points and lines as PostGIS raster WKB (one 64-bit float band): '
				'kernel uniform, triangular, epanechnikov, quartic, triweight, tricube, gaussian (default) or '
				'cosine; odd kernel_size 1..63 (default 7); interpolate (default true) joins points more than one '
				'cell apart; mode count (samples per cell, the default) or time (hours per cell); weight per row '
				'(default 1)');
		END LOOP;
	END LOOP;
END $$;

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
