-- Vessel events on the segment join: encounters, stops and zone visits.

CREATE OR REPLACE FUNCTION gpu_encounters(a_sql text, b_sql text, distance float8, min_duration interval DEFAULT '0',
	max_gap interval DEFAULT '0', max_speed float8 DEFAULT NULL, method text DEFAULT 'auto')
	RETURNS TABLE(a_id bigint, b_id bigint, encounter int, start_time timestamptz, end_time timestamptz,
		duration interval, min_distance float8, cpa_time timestamptz, a_position geometry, b_position geometry)
	AS 'MODULE_PATHNAME', 'gpu_encounters' LANGUAGE C VOLATILE PARALLEL RESTRICTED COST 10000 ROWS 1000;
COMMENT ON FUNCTION gpu_encounters(text, text, float8, interval, interval, float8, text) IS
	'Encounters of the trajectories of a_sql with those of b_sql (of a_sql, a_id < b_id, when b_sql is NULL): the maximal unions of the times their segments are within distance (SRID units for geometry, metres for geography) that overlap or lie at most max_gap apart, numbered per pair in time order, kept when they last min_duration and, with max_speed (SRID units or metres per second), when both objects'' median speeds over them are at most max_speed; min_distance, cpa_time, a_position and b_position are the closest approach';

CREATE OR REPLACE FUNCTION gpu_stops(traj_sql text, max_diameter float8, min_duration interval)
	RETURNS TABLE(id bigint, stop int, start_time timestamptz, end_time timestamptz, duration interval,
		"position" geometry)
	AS 'MODULE_PATHNAME', 'gpu_stops' LANGUAGE C VOLATILE PARALLEL RESTRICTED COST 1000 ROWS 1000;
COMMENT ON FUNCTION gpu_stops(text, float8, interval) IS
	'Stops of the trajectories of traj_sql (MovingPandas'' stop detector): runs of consecutive fixes whose bounding box has a diagonal of at most max_diameter (SRID units for geometry, metres for geography), lasting at least min_duration, numbered per id in time order; position is the centroid of the stop''s fixes';

CREATE OR REPLACE FUNCTION gpu_zone_visits(traj_sql text, zones_sql text)
	RETURNS TABLE(id bigint, zone_id bigint, visit int, enter_time timestamptz, exit_time timestamptz,
		duration interval)
	AS 'MODULE_PATHNAME', 'gpu_zone_visits' LANGUAGE C VOLATILE PARALLEL RESTRICTED COST 1000 ROWS 1000;
COMMENT ON FUNCTION gpu_zone_visits(text, text) IS
	'Visits of the trajectories of traj_sql (geometry) to the zones of zones_sql ((id, polygon): POLYGON or MULTIPOLYGON in the trajectories'' SRID): the exact times at which the linearly moving point enters and leaves each zone (boundary included), numbered per trajectory and zone in time order';
