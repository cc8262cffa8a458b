-- gpu_make_trajectories: trajectories from raw fixes, against the SQL pipeline a user writes without it
-- (DISTINCT ON for duplicate times, lag() for gaps and jumps, ST_MakeLine ... ORDER BY, ST_Simplify), on the
-- real AIS fixes of test/data/load_ais.sql and the whole-US day of MarineCadastre fixes.
\i test/data/ais_fixture.sql

-- A few fixes out of order: a duplicate time (the fix with the smaller X, then Y, is kept), a gap of more than
-- a minute (a new part), a part of one fix (dropped, but counted in the numbering), NULLs and an empty point
-- (skipped).
SELECT object_id, part, ST_AsText(trajectory) AS trajectory, ST_SRID(trajectory) AS srid
FROM gpu_make_trajectories($$
	SELECT * FROM (VALUES
		(7, timestamptz '2020-06-04 10:00:30+00', 'SRID=32618;POINT(30 0)'::geometry),
		(7, '2020-06-04 10:00:10+00', 'SRID=32618;POINT(10 0)'),
		(-2, '2020-06-04 09:00:00+00', 'SRID=32618;POINT(0 0)'),
		(7, '2020-06-04 10:00:20+00', 'SRID=32618;POINT(20 9)'),
		(7, '2020-06-04 10:00:20+00', 'SRID=32618;POINT(20 1)'),
		(7, '2020-06-04 10:02:00+00', 'SRID=32618;POINT(40 0)'),
		(7, '2020-06-04 10:05:00+00', 'SRID=32618;POINT(50 0)'),
		(7, '2020-06-04 10:05:10+00', 'SRID=32618;POINT(60 0)'),
		(-2, '2020-06-04 09:00:01+00', 'SRID=32618;POINT(0 1)'),
		(NULL, '2020-06-04 09:00:02+00', 'SRID=32618;POINT(0 2)'),
		(-2, NULL, 'SRID=32618;POINT(0 3)'),
		(-2, '2020-06-04 09:00:04+00', NULL),
		(-2, '2020-06-04 09:00:05+00', 'SRID=32618;POINT EMPTY')
	) v(id, t, geom)$$, interval '1 minute')
ORDER BY object_id, part;

-- t as a timestamp (read as UTC, as extract(epoch FROM t)), as seconds of any numeric type: the same parts
-- (M is t in seconds: from other origins for float4 and int2)
CREATE TEMP TABLE few_fixes AS
SELECT * FROM (VALUES (1, timestamptz '2020-06-04 10:00:00+00', 'POINT(0 0)'::geometry),
	(1, '2020-06-04 10:00:10+00', 'POINT(3 4)'), (1, '2020-06-04 10:00:05+00', 'POINT(1 1)'),
	(2, '2020-06-04 10:00:00+00', 'POINT(5 5)'), (2, '2020-06-04 11:00:00+00', 'POINT(5 6)'),
	(2, '2020-06-04 11:00:01+00', 'POINT(5 7)')) v(id, t, geom);
SELECT format, count(*) AS rows, string_agg(object_id || '/' || part || ': ' || ST_AsText(ST_Force2D(trajectory)),
	'; ' ORDER BY object_id, part) = (SELECT string_agg(object_id || '/' || part || ': '
		|| ST_AsText(ST_Force2D(trajectory)), '; ' ORDER BY object_id, part)
		FROM gpu_make_trajectories('SELECT id, t, geom FROM few_fixes', '30 minutes')) AS same_parts,
	min(ST_M(ST_StartPoint(trajectory))) AS first_m
FROM (VALUES ('timestamp', 'SELECT id::int2, t AT TIME ZONE ''UTC'', geom FROM few_fixes'),
	('float8', 'SELECT id::int8, extract(epoch FROM t)::float8, geom FROM few_fixes'),
	('float4', 'SELECT id, extract(epoch FROM t - timestamptz ''2020-06-04 00:00+00'')::float4, geom FROM few_fixes'),
	('int8', 'SELECT id, extract(epoch FROM t)::int8, geom FROM few_fixes'),
	('int4', 'SELECT id, extract(epoch FROM t)::int4, geom FROM few_fixes'),
	('int2', 'SELECT id, extract(epoch FROM t - timestamptz ''2020-06-04 10:00+00'')::int2, geom FROM few_fixes'),
	('numeric', 'SELECT id, extract(epoch FROM t), geom FROM few_fixes')) f(format, sql),
	LATERAL gpu_make_trajectories(f.sql, '30 minutes') m
GROUP BY format ORDER BY format;

-- The SQL pipeline: fixes_sql returns (object_id, t as epoch seconds, geom); the same rules in SQL.
CREATE FUNCTION pg_temp.sql_make_trajectories(fixes_sql text, max_gap float8, tolerance float8 DEFAULT NULL,
	preserve_collapsed boolean DEFAULT false, max_speed float8 DEFAULT 'Infinity')
	RETURNS TABLE(object_id bigint, part int, trajectory geometry) LANGUAGE plpgsql AS $f$
BEGIN
	RETURN QUERY EXECUTE format($q$
		WITH firsts AS (			-- one fix per object and time: the smallest X, then Y
			SELECT DISTINCT ON (f.id, f.t) f.id, f.t, f.geom
			FROM (%s) f(id, t, geom)
			WHERE f.id IS NOT NULL AND f.t IS NOT NULL AND f.geom IS NOT NULL AND NOT ST_IsEmpty(f.geom)
			ORDER BY f.id, f.t, ST_X(f.geom), ST_Y(f.geom)
		), starts AS (				-- a new part after a gap or a jump
			SELECT *, CASE WHEN t - lag(t) OVER w > $1
				OR ST_Distance(geom, lag(geom) OVER w) / (t - lag(t) OVER w) > $4 THEN 1 ELSE 0 END AS starts
			FROM firsts WINDOW w AS (PARTITION BY id ORDER BY t)
		), parts AS (
			SELECT *, sum(starts) OVER (PARTITION BY id ORDER BY t) + 1 AS part FROM starts
		), lines AS (
			SELECT id, part, ST_SetSRID(ST_MakeLine(ST_MakePointM(ST_X(geom), ST_Y(geom), t) ORDER BY t),
				min(ST_SRID(geom))) AS line
			FROM parts GROUP BY id, part HAVING count(*) >= 2
		)
		SELECT id::bigint, part::int, CASE WHEN $2 IS NULL THEN line ELSE ST_Simplify(line, $2, $3) END
		FROM lines$q$, fixes_sql)
	USING max_gap, tolerance, preserve_collapsed, max_speed;
END
$f$;

-- How a result compares with another: rows (object_id, part) in either, rows in both with the same
-- trajectory to the bit (or both NULL), NULL trajectories.
CREATE FUNCTION pg_temp.compare(a_sql text, b_sql text,
	OUT rows bigint, OUT identical bigint, OUT null_trajectories bigint) LANGUAGE plpgsql AS $f$
BEGIN
	EXECUTE format($q$
		SELECT count(*), count(*) FILTER (WHERE a.object_id IS NOT NULL AND b.object_id IS NOT NULL
			AND ST_AsEWKB(a.trajectory) IS NOT DISTINCT FROM ST_AsEWKB(b.trajectory)),
			count(*) FILTER (WHERE a.trajectory IS NULL)
		FROM (%s) a FULL JOIN (%s) b USING (object_id, part)$q$, a_sql, b_sql)
	INTO rows, identical, null_trajectories;
END
$f$;

-- the real AIS fixes (57,602 in 458 tracks): gap 30 minutes, without and with simplification, with the speed
-- rule (20 m/s, about 39 knots); synchronized against the SQL pipeline's lines simplified by geoacc_dp_simplify
SELECT 'no tolerance' AS run, * FROM pg_temp.compare(
	$$SELECT * FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', '30 minutes')$$,
	$$SELECT * FROM pg_temp.sql_make_trajectories('SELECT object_id, extract(epoch FROM t)::float8, geom FROM ais_fixes', 1800)$$)
UNION ALL
SELECT 'tolerance 10 m', * FROM pg_temp.compare(
	$$SELECT * FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', '30 minutes', 10)$$,
	$$SELECT * FROM pg_temp.sql_make_trajectories('SELECT object_id, extract(epoch FROM t)::float8, geom FROM ais_fixes', 1800, 10)$$)
UNION ALL
SELECT 'tolerance 50 m, preserve_collapsed', * FROM pg_temp.compare(
	$$SELECT * FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', '30 minutes', 50, true)$$,
	$$SELECT * FROM pg_temp.sql_make_trajectories('SELECT object_id, extract(epoch FROM t)::float8, geom FROM ais_fixes', 1800, 50, true)$$)
UNION ALL
SELECT 'tolerance 0', * FROM pg_temp.compare(
	$$SELECT * FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', '30 minutes', 0)$$,
	$$SELECT * FROM pg_temp.sql_make_trajectories('SELECT object_id, extract(epoch FROM t)::float8, geom FROM ais_fixes', 1800, 0)$$)
UNION ALL
SELECT 'max_speed 20 m/s, tolerance 10 m', * FROM pg_temp.compare(
	$$SELECT * FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', '30 minutes', 10, max_speed => 20)$$,
	$$SELECT * FROM pg_temp.sql_make_trajectories('SELECT object_id, extract(epoch FROM t)::float8, geom FROM ais_fixes', 1800, 10, false, 20)$$)
UNION ALL
SELECT 'no gap rule, max_speed 5 m/s', * FROM pg_temp.compare(
	$$SELECT * FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', NULL, max_speed => 5)$$,
	$$SELECT * FROM pg_temp.sql_make_trajectories('SELECT object_id, extract(epoch FROM t)::float8, geom FROM ais_fixes', 'Infinity', max_speed => 5)$$)
UNION ALL
SELECT 'synchronized 10 m', * FROM pg_temp.compare(
	$$SELECT * FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', '30 minutes', 10, synchronized => true)$$,
	$$SELECT object_id, part, geoacc_dp_simplify(trajectory, 10, synchronized => true) AS trajectory
	FROM pg_temp.sql_make_trajectories('SELECT object_id, extract(epoch FROM t)::float8, geom FROM ais_fixes', 1800)$$);

-- test/data/load_ais.sql builds ais_tracks with gpu_make_trajectories: the same rows as its former SQL
-- pipeline (duplicate times: the first fix in file order; in these files duplicates share their position)
WITH firsts AS (
	SELECT DISTINCT ON (source, track, t) * FROM ais_fixes ORDER BY source, track, t, seq
), gaps AS (
	SELECT *, CASE WHEN t - lag(t) OVER w > interval '30 minutes' THEN 1 ELSE 0 END AS starts
	FROM firsts WINDOW w AS (PARTITION BY source, track ORDER BY t)
), pieces AS (
	SELECT *, sum(starts) OVER (PARTITION BY source, track ORDER BY t) AS piece FROM gaps
), lines AS (
	SELECT source, track, min(mmsi) AS mmsi, piece::int AS piece, min(t) AS t0,
		ST_SetSRID(ST_MakeLine(ST_MakePointM(ST_X(geom), ST_Y(geom), extract(epoch FROM t)::float8) ORDER BY t),
			32618) AS traj
	FROM pieces GROUP BY source, track, piece HAVING count(*) >= 2
), former AS (
	SELECT row_number() OVER (ORDER BY source, t0, track, piece) AS id, source, track, mmsi, piece, traj FROM lines
)
SELECT count(*) AS rows, count(*) FILTER (WHERE (a.source, a.track, a.mmsi, a.piece, ST_AsEWKB(a.traj))
	IS NOT DISTINCT FROM (b.source, b.track, b.mmsi, b.piece, ST_AsEWKB(b.traj))) AS identical
FROM ais_tracks a FULL JOIN former b USING (id);

-- The whole-US day of raw fixes (99,999 fixes of 10,631 vessels, 43 of their times given twice with two
-- positions): in lon/lat; in Web Mercator (the inner query transforms) with simplification and the speed rule
CREATE TEMP TABLE us_fixes (mmsi bigint, t timestamp, lat float8, lon float8, sog text, cog text, heading text,
	vessel_name text, imo text, call_sign text, vessel_type text, status text, length text, width text,
	draft text, cargo text, transceiver_class text);
\copy us_fixes FROM PROGRAM 'gzip -dc data/traj/marinecadastre_ais_2022-01-03.csv.gz' CSV HEADER
ALTER TABLE us_fixes ADD COLUMN geom geometry;
UPDATE us_fixes SET geom = ST_SetSRID(ST_MakePoint(lon, lat), 4326);
SELECT 'lon/lat, gap 2 hours' AS run, * FROM pg_temp.compare(
	$$SELECT * FROM gpu_make_trajectories('SELECT mmsi, t, geom FROM us_fixes', '2 hours')$$,
	$$SELECT * FROM pg_temp.sql_make_trajectories('SELECT mmsi, extract(epoch FROM t)::float8, geom FROM us_fixes', 7200)$$)
UNION ALL
SELECT 'Web Mercator, gap 2 hours, 100 m, 30 m/s', * FROM pg_temp.compare(
	$$SELECT * FROM gpu_make_trajectories('SELECT mmsi, t, ST_Transform(geom, 3857) FROM us_fixes', '2 hours', 100,
		max_speed => 30)$$,
	$$SELECT * FROM pg_temp.sql_make_trajectories('SELECT mmsi, extract(epoch FROM t)::float8, ST_Transform(geom, 3857)
		FROM us_fixes', 7200, 100, max_speed => 30)$$);
SELECT count(*) AS parts, sum(ST_NPoints(trajectory)) AS points, count(DISTINCT object_id) AS vessels,
	bool_and(ST_IsValidTrajectory(trajectory)) AS valid
FROM gpu_make_trajectories('SELECT mmsi, t, geom FROM us_fixes', '2 hours');

-- The input order does not matter: shuffled fixes, the same rows
SELECT (SELECT md5(string_agg(object_id || ' ' || part || ' ' || ST_AsEWKT(trajectory), ',' ORDER BY object_id, part))
	FROM gpu_make_trajectories('SELECT mmsi, t, ST_Transform(geom, 3857) FROM us_fixes ORDER BY md5(mmsi || '' '' || t || '' '' || lon)',
		'2 hours', 100))
	= (SELECT md5(string_agg(object_id || ' ' || part || ' ' || ST_AsEWKT(trajectory), ',' ORDER BY object_id, part))
	FROM gpu_make_trajectories('SELECT mmsi, t, ST_Transform(geom, 3857) FROM us_fixes ORDER BY lat DESC, lon',
		'2 hours', 100)) AS same_for_shuffled_input;

-- The inner query may use parallel workers; a device memory cap cuts the GPU's work into sorted runs and
-- pieces (the CPU has none): the same rows
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET geoacc.gpu_memory_limit = '1MB';
SELECT 'parallel inner query, 1MB device memory' AS run, * FROM pg_temp.compare(
	$$SELECT * FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', '30 minutes', 10)$$,
	$$SELECT * FROM pg_temp.sql_make_trajectories('SELECT object_id, extract(epoch FROM t)::float8, geom FROM ais_fixes', 1800, 10)$$);
SET geoacc.gpu_memory_limit = '3MB';
SELECT 'parallel inner query, 3MB device memory' AS run, * FROM pg_temp.compare(
	$$SELECT * FROM gpu_make_trajectories('SELECT object_id, t, geom FROM ais_fixes', '30 minutes', 10)$$,
	$$SELECT * FROM pg_temp.sql_make_trajectories('SELECT object_id, extract(epoch FROM t)::float8, geom FROM ais_fixes', 1800, 10)$$);
RESET geoacc.gpu_memory_limit;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- A gap equal to max_gap does not split, to the microsecond, as PostgreSQL compares t - lag(t) > max_gap:
-- 0.3 s to 2.0 s is 1.7 s (once split, the times compared as doubles)
SELECT count(*) AS parts FROM gpu_make_trajectories($$SELECT * FROM (VALUES
	(1, timestamptz '2020-06-04 12:00:00.3+00', 'POINT(0 0)'::geometry), (1, '2020-06-04 12:00:02.0+00', 'POINT(1 0)')) f(o, t, g)$$,
	'1.7 seconds');
-- random microsecond times whose gaps are max_gap, one microsecond less or more, for fractional gaps
CREATE TEMP TABLE gap_fixes AS
WITH objects AS (
	SELECT max_gap, o AS object_id, timestamptz '2020-06-04 00:00+00' + (random() * 1e6)::int8 * interval '1 microsecond' AS t0
	FROM unnest(ARRAY[interval '0.1 s', '0.3 s', '1.7 s', '1 microsecond', '01:00:00.000003']) max_gap,
		generate_series(1, 40) o
), steps AS (
	SELECT objects.*, i, greatest(max_gap + (floor(random() * 3) - 1)::int * interval '1 microsecond',
		interval '1 microsecond') AS step
	FROM objects, generate_series(1, 20) i
)
SELECT max_gap, object_id, t0 + sum(step) OVER (PARTITION BY max_gap, object_id ORDER BY i) AS t,
	ST_MakePoint(i, 0) AS geom
FROM steps;
WITH gaps AS (
	SELECT max_gap, object_id, t - lag(t) OVER (PARTITION BY max_gap, object_id ORDER BY t) AS gap
	FROM gap_fixes
), sql_parts AS (			-- parts of at least two fixes, as PostgreSQL compares intervals
	SELECT max_gap, count(*) AS parts FROM (
		SELECT max_gap, object_id, part FROM (
			SELECT max_gap, object_id, sum(coalesce((gap > max_gap)::int, 0)) OVER (PARTITION BY max_gap, object_id ORDER BY t) AS part
			FROM (SELECT *, t - lag(t) OVER (PARTITION BY max_gap, object_id ORDER BY t) AS gap FROM gap_fixes) f) p
		GROUP BY 1, 2, 3 HAVING count(*) >= 2) q
	GROUP BY max_gap
)
SELECT g.max_gap,
	(SELECT count(*) FROM gpu_make_trajectories(format('SELECT object_id, t, geom FROM gap_fixes WHERE max_gap = %L',
		g.max_gap), g.max_gap)) = s.parts AS same_parts_as_sql,
	(SELECT count(*) FILTER (WHERE gap = g.max_gap) > 0 AND count(*) FILTER (WHERE gap > g.max_gap) > 0
		FROM gaps WHERE gaps.max_gap = g.max_gap) AS has_equal_and_longer_gaps
FROM (SELECT DISTINCT max_gap FROM gap_fixes) g JOIN sql_parts s USING (max_gap) ORDER BY g.max_gap;
DROP TABLE gap_fixes;

-- NULL arguments: no fixes_sql, no rows; no max_gap, no gap rule; no tolerance, no simplification
SELECT count(*) FROM gpu_make_trajectories(NULL, '1 hour');
SELECT count(*) AS parts, sum(ST_NPoints(trajectory)) AS points FROM gpu_make_trajectories('SELECT id, t, geom FROM few_fixes', NULL);
SELECT count(*) AS parts, sum(ST_NPoints(trajectory)) AS points FROM gpu_make_trajectories('SELECT id, t, geom FROM few_fixes', '1 hour', NULL);
SELECT count(*) FROM gpu_make_trajectories('SELECT id, t, geom FROM few_fixes WHERE false', '1 hour');

-- a tolerance or a speed in degrees: a NOTICE
SELECT count(*) FROM gpu_make_trajectories('SELECT id, t, ST_SetSRID(geom, 4326) FROM few_fixes', '1 hour', 0.001);

-- Errors
SELECT * FROM gpu_make_trajectories('DELETE FROM few_fixes RETURNING id, t, geom', '1 hour');
SELECT * FROM gpu_make_trajectories('SELECT id, geom FROM few_fixes', '1 hour');
SELECT * FROM gpu_make_trajectories('SELECT id::text, t, geom FROM few_fixes', '1 hour');
SELECT * FROM gpu_make_trajectories('SELECT id, t::date, geom FROM few_fixes', '1 hour');
SELECT * FROM gpu_make_trajectories($$SELECT 1, 1.0, 'LINESTRING(0 0, 1 1)'::geometry$$, '1 hour');
SELECT * FROM gpu_make_trajectories($$SELECT 1, 1.0, 'POINT Z (0 0 1)'::geometry$$, '1 hour');
SELECT * FROM gpu_make_trajectories($$SELECT 1, 1.0, 'POINT M (0 0 1)'::geometry$$, '1 hour');
SELECT * FROM gpu_make_trajectories($$SELECT * FROM (VALUES (1, 1.0, 'POINT(0 0)'::geometry), (2, 2, ST_MakePoint('NaN', 0))) v$$, '1 hour');
SELECT * FROM gpu_make_trajectories($$SELECT 5, 'NaN'::float8, 'POINT(0 0)'::geometry$$, '1 hour');
SELECT * FROM gpu_make_trajectories($$SELECT 5, 'infinity'::timestamptz, 'POINT(0 0)'::geometry$$, '1 hour');
-- finite, but farther from 1970 than a double holds every microsecond of
SELECT * FROM gpu_make_trajectories($$SELECT 5, timestamptz '294276-12-31 00:00+00', 'POINT(0 0)'::geometry$$, '1 hour');
SELECT * FROM gpu_make_trajectories($$SELECT 5, timestamptz '1600-01-01 00:00+00', 'POINT(0 0)'::geometry$$, '1 hour');
SELECT * FROM gpu_make_trajectories($$SELECT * FROM (VALUES (1, 1.0, 'SRID=32618;POINT(0 0)'::geometry), (1, 2, 'SRID=4326;POINT(0 0)')) v$$, '1 hour');
SELECT * FROM gpu_make_trajectories('SELECT id, t, geom FROM few_fixes', '-1 hour');
SELECT * FROM gpu_make_trajectories('SELECT id, t, geom FROM few_fixes', '1 hour', -1);
SELECT * FROM gpu_make_trajectories('SELECT id, t, geom FROM few_fixes', '1 hour', 'NaN');
SELECT * FROM gpu_make_trajectories('SELECT id, t, geom FROM few_fixes', '1 hour', max_speed => -1);
SELECT * FROM gpu_make_trajectories('SELECT id, t, geom FROM few_fixes', '1 hour', max_speed => 'NaN');
