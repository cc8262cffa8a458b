-- Batch Douglas-Peucker simplification of trajectories, and the quality
-- measures of a simplification.

-- The positional arguments are ST_Simplify's (geom, tolerance, preserveCollapsed).
CREATE OR REPLACE FUNCTION gpu_dp_simplify(
	traj geometry,
	tolerance float8,
	preserve_collapsed boolean DEFAULT false,
	synchronized boolean DEFAULT false,
	use_z boolean DEFAULT false)
	RETURNS geometry
	AS 'MODULE_PATHNAME', 'gpu_dp_simplify'
	LANGUAGE C IMMUTABLE WINDOW PARALLEL SAFE COST 100;
COMMENT ON FUNCTION gpu_dp_simplify(geometry, float8, boolean, boolean, boolean) IS
	'window function: Douglas-Peucker simplification of every LINESTRING M/ZM trajectory (MULTILINESTRING: line by line) '
	'of the partition in batched GPU (or CPU) launches, tolerance in SRID units; the planar result equals '
	'ST_Simplify(traj, tolerance, preserve_collapsed), NULL included; synchronized => true measures the synchronized '
	'Euclidean distance, use_z => true measures in 3D';

-- geography: the tolerance in metres, the result a geography with the original vertices
CREATE OR REPLACE FUNCTION gpu_dp_simplify(
	traj geography,
	tolerance float8,
	preserve_collapsed boolean DEFAULT false,
	synchronized boolean DEFAULT false,
	use_z boolean DEFAULT false)
	RETURNS geography
	AS 'MODULE_PATHNAME', 'gpu_dp_simplify'
	LANGUAGE C IMMUTABLE WINDOW PARALLEL SAFE COST 100;
COMMENT ON FUNCTION gpu_dp_simplify(geography, float8, boolean, boolean, boolean) IS
	'window function: Douglas-Peucker simplification of every geography LINESTRING M/ZM trajectory (MULTILINESTRING: '
	'line by line) of the partition, tolerance in metres (each line on its own gnomonic projection scaled to the WGS 84 '
	'ellipsoid); kept vertices are the original ones, bit for bit';

CREATE OR REPLACE FUNCTION geoacc_dp_simplify(
	traj geometry,
	tolerance float8,
	preserve_collapsed boolean DEFAULT false,
	synchronized boolean DEFAULT false,
	use_z boolean DEFAULT false)
	RETURNS geometry
	AS 'MODULE_PATHNAME', 'geoacc_dp_simplify_scalar'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 250;
COMMENT ON FUNCTION geoacc_dp_simplify(geometry, float8, boolean, boolean, boolean) IS
	'gpu_dp_simplify for one trajectory in a scalar call (UPDATE, WHERE, views, generated columns): the same result, '
	'without the batching of the window function';

CREATE OR REPLACE FUNCTION geoacc_dp_simplify(
	traj geography,
	tolerance float8,
	preserve_collapsed boolean DEFAULT false,
	synchronized boolean DEFAULT false,
	use_z boolean DEFAULT false)
	RETURNS geography
	AS 'MODULE_PATHNAME', 'geoacc_dp_simplify_scalar'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 250;
COMMENT ON FUNCTION geoacc_dp_simplify(geography, float8, boolean, boolean, boolean) IS
	'gpu_dp_simplify for one geography trajectory in a scalar call, tolerance in metres: the same result as the '
	'window function';

-- an untyped trajectory literal is a geometry, as in PostGIS (ST_Length(text) and the like)
CREATE OR REPLACE FUNCTION geoacc_dp_simplify(
	traj text,
	tolerance float8,
	preserve_collapsed boolean DEFAULT false,
	synchronized boolean DEFAULT false,
	use_z boolean DEFAULT false)
	RETURNS geometry
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 250
	RETURN geoacc_dp_simplify(traj::geometry, tolerance, preserve_collapsed, synchronized, use_z);
COMMENT ON FUNCTION geoacc_dp_simplify(text, float8, boolean, boolean, boolean) IS
	'geoacc_dp_simplify of a trajectory written as text (WKT or EWKT), read as a geometry';

CREATE OR REPLACE FUNCTION geoacc_compression_stats(
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

CREATE OR REPLACE FUNCTION geoacc_dtw_distance(a geometry, b geometry)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'geoacc_dtw_distance'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION geoacc_dtw_distance(geometry, geometry) IS
	'dynamic time warping distance between two lines: the sum of the XY distances of the matched vertices (SRID units); '
	'the measure geoacc_compression_stats reports; NULL for an empty line';
