-- Distance-threshold join of trajectory segments (Gowanlock and Casanova).

CREATE OR REPLACE FUNCTION gpu_segment_join(a_sql text, b_sql text, distance float8, method text DEFAULT 'auto',
	use_z boolean DEFAULT false)
	RETURNS TABLE(a_id bigint, a_seg int, b_id bigint, b_seg int,
		t_start float8, t_end float8, cpa_time float8, cpa_distance float8)
	AS 'MODULE_PATHNAME', 'gpu_segment_join' LANGUAGE C VOLATILE PARALLEL RESTRICTED COST 10000 ROWS 10000;
COMMENT ON FUNCTION gpu_segment_join(text, text, float8, text, boolean) IS
	'Pairs of segments of the trajectories of a_sql and b_sql (of a_sql, a_id < b_id, when b_sql is NULL) that come within distance (SRID units for geometry, metres for geography; 3D with use_z): segment k joins vertices k and k + 1, [t_start, t_end] is when they are within distance, cpa_time and cpa_distance their closest approach then; the queries return (id, trajectory LINESTRING M or ZM geometry or geography); method: spatial, temporal, spatiotemporal or auto';

CREATE OR REPLACE FUNCTION gpu_segment_join(a_ids bigint[], a geometry[], b_ids bigint[], b geometry[], distance float8,
	method text DEFAULT 'auto', use_z boolean DEFAULT false)
	RETURNS TABLE(a_id bigint, a_seg int, b_id bigint, b_seg int,
		t_start float8, t_end float8, cpa_time float8, cpa_distance float8)
	AS 'MODULE_PATHNAME', 'gpu_segment_join_arrays' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 10000 ROWS 10000;
COMMENT ON FUNCTION gpu_segment_join(bigint[], geometry[], bigint[], geometry[], float8, text, boolean) IS
	'gpu_segment_join of the geometry trajectories of arrays rather than of inner queries (a_ids and a as many elements; b_ids and b NULL: a with itself, a_id < b_id): runs inside any query, such as the per-shard queries of a Citus distributed table grouped by its distribution column';

CREATE OR REPLACE FUNCTION gpu_segment_contacts(a_sql text, b_sql text, distance float8, method text DEFAULT 'auto',
	use_z boolean DEFAULT false)
	RETURNS TABLE(a_id bigint, b_id bigint, first_contact float8, last_contact float8,
		time_within float8, min_distance float8, segment_pairs bigint)
	LANGUAGE sql VOLATILE PARALLEL RESTRICTED COST 10000 ROWS 1000
	BEGIN ATOMIC
		SELECT j.a_id, j.b_id, min(j.t_start), max(j.t_end), sum(j.t_end - j.t_start), min(j.cpa_distance), count(*)
		FROM gpu_segment_join(a_sql, b_sql, distance, method, use_z) j
		GROUP BY j.a_id, j.b_id
		ORDER BY j.a_id, j.b_id;
	END;
COMMENT ON FUNCTION gpu_segment_contacts(text, text, float8, text, boolean) IS
	'gpu_segment_join summed up per pair of trajectories: first and last instant within distance, the time within distance (the segments of a trajectory follow each other, so the intervals add up), the minimum distance and the number of segment pairs; separate meetings of a pair are one row here, gpu_encounters gives one row each';
