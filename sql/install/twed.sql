-- Time Warp Edit Distance (Marteau 2009) between series and trajectories.  nu and lambda default to
-- 0.001 and 1.0, the defaults of the aeon toolkit's TWED.

CREATE FUNCTION gpu_twed(a float8[], ta float8[], b float8[], tb float8[], nu float8 DEFAULT 0.001, lambda float8 DEFAULT 1.0,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'gpu_twed' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_twed(float8[], float8[], float8[], float8[], float8, float8, int, boolean, boolean) IS
	'Time Warp Edit Distance between series a and b (n x k or 1-D float8 arrays) with times ta and tb (NULL: 1..n); nu: stiffness, lambda: deletion penalty, degree: p of the Lp distance between points (root = false: without the p-th root), float32: single precision';

CREATE FUNCTION gpu_twed(a geometry, b geometry, nu float8 DEFAULT 0.001, lambda float8 DEFAULT 1.0,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'gpu_twed_geometry' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_twed(geometry, geometry, float8, float8, int, boolean, boolean) IS
	'Time Warp Edit Distance between trajectories a and b (LINESTRING M or ZM): X, Y (and Z) are the values, M the time';

CREATE FUNCTION gpu_twed_matrix(a_sql text, b_sql text, nu float8 DEFAULT 0.001, lambda float8 DEFAULT 1.0,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false, k int DEFAULT NULL)
	RETURNS TABLE(a_id bigint, b_id bigint, distance float8)
	AS 'MODULE_PATHNAME', 'gpu_twed_matrix' LANGUAGE C VOLATILE PARALLEL RESTRICTED COST 10 ROWS 10000;
COMMENT ON FUNCTION gpu_twed_matrix(text, text, float8, float8, int, boolean, boolean, int) IS
	'Time Warp Edit Distance of every series of a_sql against every series of b_sql, or of every pair of series of a_sql (a_id < b_id in query order) when b_sql is NULL; the queries return (id, values float8[][, times float8[]]) or (id, trajectory geometry), or columns named id, traj, values, times; with k, only the k nearest of each a_sql row (b_sql NULL: its k nearest other rows of a_sql), nearest first';
