-- geoacc_raster: gpu_density_rast, the aggregate gpu_density_raster returning a PostGIS raster, and
-- geoacc_raster_png(raster).  Needs postgis_raster; the functions are geoacc's (module geoacc).

CREATE FUNCTION gpu_density_rast_finalfn(state geoacc_density_state) RETURNS raster
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 10000;
COMMENT ON FUNCTION gpu_density_rast_finalfn(geoacc_density_state) IS
	'final function of gpu_density_rast: convolution and a PostGIS raster';

-- The arguments of gpu_density_raster, one aggregate per number of them (aggregates have no defaults),
-- with gpu_density_raster's state type, transition and combine functions.
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
			EXECUTE format('CREATE AGGREGATE gpu_density_rast(%s) ('
				'SFUNC = gpu_density_raster_transfn, STYPE = geoacc_density_state, SSPACE = 16000000, '
				'FINALFUNC = gpu_density_rast_finalfn, COMBINEFUNC = gpu_density_raster_combinefn, '
				'PARALLEL = SAFE)', args);
			EXECUTE format('COMMENT ON AGGREGATE gpu_density_rast(%s) IS %L', types,
				'gpu_density_raster as a PostGIS raster (one 64BF band without nodata, north-up, '
				'upper-left corner xmin ymax, the rows'' SRID)');
		END LOOP;
	END LOOP;
END $$;

CREATE FUNCTION geoacc_raster_png(raster raster, colormap text DEFAULT 'viridis', scale text DEFAULT 'log',
	vmin float8 DEFAULT NULL, vmax float8 DEFAULT NULL, transparent_zero boolean DEFAULT false)
	RETURNS bytea
	AS 'MODULE_PATHNAME', 'geoacc_raster_png_raster' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 10000;
COMMENT ON FUNCTION geoacc_raster_png(raster, text, text, float8, float8, boolean) IS
	'heatmap PNG of the first band of a PostGIS raster, as geoacc_raster_png(bytea, ...) makes it';
