-- Trajectories from raw fixes: sort by object and time, drop duplicate times, split at gaps and jumps,
-- simplify.

-- The positional arguments after max_gap are ST_Simplify's (tolerance, preserve_collapsed).
CREATE OR REPLACE FUNCTION gpu_make_trajectories(
	fixes_sql text,
	max_gap interval,
	tolerance float8 DEFAULT NULL,
	preserve_collapsed boolean DEFAULT false,
	synchronized boolean DEFAULT false,
	max_speed float8 DEFAULT NULL)
	RETURNS TABLE(object_id bigint, part int, trajectory geometry)
	AS 'MODULE_PATHNAME', 'gpu_make_trajectories'
	LANGUAGE C VOLATILE PARALLEL RESTRICTED COST 10000 ROWS 1000;
COMMENT ON FUNCTION gpu_make_trajectories(text, interval, float8, boolean, boolean, float8) IS
	'LINESTRING M trajectories (M = epoch seconds) from the fixes (object_id, t, geom POINT) that fixes_sql returns, in any order: '
	'sorted by object and time; of fixes of one object at one time the one with the smallest X, then Y, kept; '
	'a new part where a fix comes more than max_gap after the one before, or (max_speed, SRID units per second) '
	'faster than max_speed; parts of one fix dropped; with a tolerance each part simplified as gpu_dp_simplify does '
	'(NULL where ST_Simplify returns NULL, unless preserve_collapsed); rows with a NULL or an empty point skipped';
