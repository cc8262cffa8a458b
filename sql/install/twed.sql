-- Time Warp Edit Distance (Marteau 2009) between series and trajectories.  nu and lambda default to
-- 0.001 and 1.0, the defaults of the aeon toolkit's TWED.

-- ta and tb are "any": float8[] seconds or timestamptz[], and an untyped NULL (1..n) still resolves
CREATE OR REPLACE FUNCTION gpu_twed(a float8[], ta "any", b float8[], tb "any", nu float8 DEFAULT 0.001, lambda float8 DEFAULT 1.0,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'gpu_twed' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_twed(float8[], "any", float8[], "any", float8, float8, int, boolean, boolean) IS
	'Time Warp Edit Distance between series a and b (n x k or 1-D float8 arrays) with times ta and tb (float8[] seconds or timestamptz[]; NULL: 1..n); nu: stiffness, lambda: deletion penalty, degree: p of the Lp distance between points (root = false: without the p-th root), float32: single precision';

CREATE OR REPLACE FUNCTION gpu_twed(a geometry, b geometry, nu float8 DEFAULT 0.001, lambda float8 DEFAULT 1.0,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false, use_z boolean DEFAULT false)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'gpu_twed_geometry' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_twed(geometry, geometry, float8, float8, int, boolean, boolean, boolean) IS
	'Time Warp Edit Distance between trajectories a and b (LINESTRING M or ZM): X and Y (and Z with use_z) are the values, in SRID units, M the time';

CREATE OR REPLACE FUNCTION gpu_twed(a geography, b geography, nu float8 DEFAULT 0.001, lambda float8 DEFAULT 1.0,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false, use_z boolean DEFAULT false)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'gpu_twed_geometry' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_twed(geography, geography, float8, float8, int, boolean, boolean, boolean) IS
	'Time Warp Edit Distance between geography trajectories a and b (LINESTRING M or ZM): points measured in metres (straight-line distance of their WGS 84 Earth-centred coordinates; heights Z with use_z), M the time';

-- an untyped trajectory literal is a geometry, as in PostGIS (ST_Length(text) and the like)
CREATE OR REPLACE FUNCTION gpu_twed(a text, b text, nu float8 DEFAULT 0.001, lambda float8 DEFAULT 1.0,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false, use_z boolean DEFAULT false)
	RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 5000
	RETURN gpu_twed(a::geometry, b::geometry, nu, lambda, degree, root, float32, use_z);
COMMENT ON FUNCTION gpu_twed(text, text, float8, float8, int, boolean, boolean, boolean) IS
	'gpu_twed of two trajectories written as text (WKT or EWKT), read as geometries';

CREATE OR REPLACE FUNCTION gpu_twed_matrix(a_sql text, b_sql text, nu float8 DEFAULT 0.001, lambda float8 DEFAULT 1.0,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false, k int DEFAULT NULL,
	use_z boolean DEFAULT false)
	RETURNS TABLE(a_id bigint, b_id bigint, distance float8)
	AS 'MODULE_PATHNAME', 'gpu_twed_matrix' LANGUAGE C VOLATILE PARALLEL RESTRICTED COST 10 ROWS 10000;
COMMENT ON FUNCTION gpu_twed_matrix(text, text, float8, float8, int, boolean, boolean, int, boolean) IS
	'Time Warp Edit Distance of every series of a_sql against every series of b_sql, or of every pair of series of a_sql (a_id < b_id in query order) when b_sql is NULL; the queries return (id, values float8[][, times float8[] or timestamptz[]]) or (id, trajectory geometry or geography), or columns named id, traj, values, times; with k, only the k nearest of each a_sql row (b_sql NULL: its k nearest other rows of a_sql), nearest first; use_z: measure the trajectories'' Z';

CREATE OR REPLACE FUNCTION gpu_twed_pairs(a geometry, b geometry, nu float8 DEFAULT 0.001, lambda float8 DEFAULT 1.0,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false, use_z boolean DEFAULT false)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'gpu_twed_pairs' LANGUAGE C IMMUTABLE WINDOW PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_twed_pairs(geometry, geometry, float8, float8, int, boolean, boolean, boolean) IS
	'window function: gpu_twed(a, b, ...) of each row''s pair of trajectories, the pairs of the whole partition computed in batches '
	'(each distinct trajectory packed once; every pair of the partition''s a''s and b''s, as from a join with a reference table, '
	'as one matrix); NULL where an argument is NULL; under Citus, OVER (PARTITION BY the distribution column) runs on the workers';

CREATE OR REPLACE FUNCTION gpu_twed_pairs(a geography, b geography, nu float8 DEFAULT 0.001, lambda float8 DEFAULT 1.0,
	degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false, use_z boolean DEFAULT false)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'gpu_twed_pairs' LANGUAGE C IMMUTABLE WINDOW PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_twed_pairs(geography, geography, float8, float8, int, boolean, boolean, boolean) IS
	'window function: gpu_twed(a, b, ...) of each row''s pair of geography trajectories (metres), the pairs of the whole partition computed in batches';
