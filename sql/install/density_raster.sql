-- Density rasters: gpu_density_raster (aggregate), geoacc_density_kernel, geoacc_raster_png.

-- The aggregate's state: a type of its own rather than internal, so that Citus runs partial aggregates on
-- its workers (it passes their states to the coordinator as text).  Its text form is base64 of a compact
-- binary form (the cells with runs of zeros skipped and values as varints); in memory it is an expanded
-- object that rows are added to in place.  A type has no CREATE OR REPLACE: it is made where it is missing,
-- so that an upgrade can run this script over an earlier version's objects.
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_type
			WHERE typname = 'geoacc_density_state' AND typnamespace = '@extschema@'::regnamespace) THEN
		CREATE TYPE geoacc_density_state;
	END IF;
END $$;
CREATE OR REPLACE FUNCTION geoacc_density_state_in(cstring) RETURNS geoacc_density_state
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION geoacc_density_state_out(geoacc_density_state) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION geoacc_density_state_recv(internal) RETURNS geoacc_density_state
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION geoacc_density_state_send(geoacc_density_state) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
DO $$
BEGIN
	IF NOT (SELECT typisdefined FROM pg_type
			WHERE typname = 'geoacc_density_state' AND typnamespace = '@extschema@'::regnamespace) THEN
		CREATE TYPE geoacc_density_state (
			INPUT = geoacc_density_state_in,
			OUTPUT = geoacc_density_state_out,
			RECEIVE = geoacc_density_state_recv,
			SEND = geoacc_density_state_send,
			INTERNALLENGTH = VARIABLE,
			STORAGE = extended);
	END IF;
END $$;
COMMENT ON TYPE geoacc_density_state IS
	'partial state of gpu_density_raster: the arguments, the SRID, the rows read and the counts or sums of every cell';
COMMENT ON FUNCTION geoacc_density_state_in(cstring) IS
	'input of geoacc_density_state: base64 of its binary form (line breaks allowed), checked';
COMMENT ON FUNCTION geoacc_density_state_out(geoacc_density_state) IS
	'output of geoacc_density_state: base64 of its binary form';
COMMENT ON FUNCTION geoacc_density_state_recv(internal) IS
	'binary input of geoacc_density_state, checked';
COMMENT ON FUNCTION geoacc_density_state_send(geoacc_density_state) IS
	'binary output of geoacc_density_state: the header, then the cells with runs of zeros skipped and values as varints';

CREATE OR REPLACE FUNCTION gpu_density_raster_finalfn(state geoacc_density_state) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 10000;
CREATE OR REPLACE FUNCTION gpu_density_raster_combinefn(state geoacc_density_state, other geoacc_density_state)
	RETURNS geoacc_density_state
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 1000;

COMMENT ON FUNCTION gpu_density_raster_finalfn(geoacc_density_state) IS
	'final function of gpu_density_raster: convolution and raster WKB';
COMMENT ON FUNCTION gpu_density_raster_combinefn(geoacc_density_state, geoacc_density_state) IS
	'combine function of gpu_density_raster: adds the cells of two partial rasters';

-- Aggregates take neither defaults nor named arguments: one aggregate per number of arguments stands for
-- the defaults kernel 'gaussian', kernel_size 7, interpolate true, mode 'count' and weight 1, each with the
-- extent as a box2d or as a geometry (an envelope such as ST_TileEnvelope(z, x, y)) whose SRID must be the
-- rows'.  Two C functions, one per type of extent, are the transition functions of all of them.
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
			EXECUTE format('CREATE OR REPLACE FUNCTION gpu_density_raster_transfn(state geoacc_density_state, %s) '
				'RETURNS geoacc_density_state '
				'AS ''MODULE_PATHNAME'', %L LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100', args,
				CASE extent WHEN 'box2d' THEN 'gpu_density_raster_transfn' ELSE 'gpu_density_raster_transfn_geometry' END);
			EXECUTE format('COMMENT ON FUNCTION gpu_density_raster_transfn(geoacc_density_state, %s) IS %L', types,
				'transition function of gpu_density_raster');
			EXECUTE format('CREATE OR REPLACE AGGREGATE gpu_density_raster(%s) ('
				'SFUNC = gpu_density_raster_transfn, STYPE = geoacc_density_state, SSPACE = 16000000, '
				'FINALFUNC = gpu_density_raster_finalfn, COMBINEFUNC = gpu_density_raster_combinefn, '
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

CREATE OR REPLACE FUNCTION geoacc_density_kernel(kernel text DEFAULT 'gaussian', kernel_size int DEFAULT 7)
	RETURNS float8[]
	AS 'MODULE_PATHNAME', 'geoacc_density_kernel_weights' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;
COMMENT ON FUNCTION geoacc_density_kernel(text, int) IS
	'normalized kernel_size x kernel_size weights that gpu_density_raster convolves the counts with';

CREATE OR REPLACE FUNCTION geoacc_raster_png(raster bytea, colormap text DEFAULT 'viridis', scale text DEFAULT 'log',
	vmin float8 DEFAULT NULL, vmax float8 DEFAULT NULL, transparent_zero boolean DEFAULT false)
	RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 10000;
COMMENT ON FUNCTION geoacc_raster_png(bytea, text, text, float8, float8, boolean) IS
	'heatmap PNG of the first band of a raster WKB: colormap viridis, magma, inferno, plasma, cividis or gray; scale linear, sqrt or log '
	'from vmin to vmax (NULL: the band''s minimum and maximum; one scale for many tiles when given); nodata, and 0 with transparent_zero, transparent';
