-- Batch Douglas-Peucker simplification of trajectories, and the quality
-- measures of a simplification.

-- The positional arguments are ST_Simplify's (geom, tolerance, preserveCollapsed).
CREATE FUNCTION gpu_dp_simplify(
	traj geometry,
	tolerance float8,
	preserve_collapsed boolean DEFAULT false,
	synchronized boolean DEFAULT false,
	use_z boolean DEFAULT false)
	RETURNS geometry
	AS 'MODULE_PATHNAME', 'gpu_dp_simplify'
	LANGUAGE C IMMUTABLE WINDOW PARALLEL SAFE COST 100;
COMMENT ON FUNCTION gpu_dp_simplify(geometry, float8, boolean, boolean, boolean) IS
	'window function: Douglas-Peucker simplification of every LINESTRING M/ZM trajectory of the partition in batched GPU (or CPU) launches; '
	'the planar result equals ST_Simplify(traj, tolerance, preserve_collapsed), NULL included; synchronized => true measures the '
	'synchronized Euclidean distance, use_z => true measures in 3D';

CREATE FUNCTION geoacc_dp_simplify(
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

CREATE FUNCTION geoacc_dtw_distance(a geometry, b geometry)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'geoacc_dtw_distance'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION geoacc_dtw_distance(geometry, geometry) IS
	'dynamic time warping distance between two lines: the sum of the XY distances of the matched vertices (SRID units); '
	'the measure geoacc_compression_stats reports; NULL for an empty line';
