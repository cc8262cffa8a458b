-- gpu_twed and gpu_twed_matrix: Time Warp Edit Distance.
-- Distances are checked against twed_reference(), a plain PL/pgSQL
-- implementation of the definition (full matrix, a_0 = b_0 = 0, times 0
-- before the first points); outputs are booleans and counts, the same on
-- the CPU and on the GPU.
\i test/data/ais_fixture.sql

CREATE FUNCTION twed_reference(a float8[], ta float8[], b float8[], tb float8[], nu float8, lambda float8,
	degree int DEFAULT 2, root boolean DEFAULT true) RETURNS float8
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	k int := coalesce(array_length(a, 2), 1);
	n int := array_length(a, 1);
	m int := array_length(b, 1);
	w int := m + 1;
	-- point 0 is the origin at time 0
	av float8[] := array_fill(0::float8, ARRAY[k]) || array(SELECT unnest(a));
	bv float8[] := array_fill(0::float8, ARRAY[k]) || array(SELECT unnest(b));
	at float8[] := 0::float8 || coalesce(ta, array(SELECT generate_series(1, n)::float8));
	bt float8[] := 0::float8 || coalesce(tb, array(SELECT generate_series(1, m)::float8));
	dab float8[] := array_fill(0::float8, ARRAY[(n + 1) * w]);	-- d(a_i, b_j)
	da float8[] := array_fill(0::float8, ARRAY[n + 1]);			-- d(a_{i-1}, a_i)
	db float8[] := array_fill(0::float8, ARRAY[m + 1]);
	d float8[] := array_fill('Infinity'::float8, ARRAY[(n + 1) * w]);
	s float8;
BEGIN
	FOR i IN 0..n LOOP
		FOR j IN 0..m LOOP
			s := 0;
			FOR c IN 1..k LOOP
				s := s + abs(av[i * k + c] - bv[j * k + c]) ^ degree;
			END LOOP;
			dab[i * w + j + 1] := CASE WHEN root THEN s ^ (1.0 / degree) ELSE s END;
		END LOOP;
	END LOOP;
	FOR i IN 1..n LOOP
		s := 0;
		FOR c IN 1..k LOOP
			s := s + abs(av[(i - 1) * k + c] - av[i * k + c]) ^ degree;
		END LOOP;
		da[i + 1] := CASE WHEN root THEN s ^ (1.0 / degree) ELSE s END;
	END LOOP;
	FOR j IN 1..m LOOP
		s := 0;
		FOR c IN 1..k LOOP
			s := s + abs(bv[(j - 1) * k + c] - bv[j * k + c]) ^ degree;
		END LOOP;
		db[j + 1] := CASE WHEN root THEN s ^ (1.0 / degree) ELSE s END;
	END LOOP;
	d[1] := 0;
	FOR i IN 1..n LOOP
		FOR j IN 1..m LOOP
			d[i * w + j + 1] := least(
				d[(i - 1) * w + j] + dab[i * w + j + 1] + dab[(i - 1) * w + j]
					+ nu * (abs(at[i + 1] - bt[j + 1]) + abs(at[i] - bt[j])),
				d[(i - 1) * w + j + 1] + da[i + 1] + nu * (at[i + 1] - at[i]) + lambda,
				d[i * w + j] + db[j + 1] + nu * (bt[j + 1] - bt[j]) + lambda);
		END LOOP;
	END LOOP;
	RETURN d[n * w + m + 1];
END
$$;

-- the example of the improved TWED paper: 1..10 against 11..20, times 1..10
SELECT abs(gpu_twed(array(SELECT generate_series(1, 10)::float8), NULL,
	array(SELECT generate_series(11, 20)::float8), NULL, 0.001, 1) - 46.018) < 1e-12 AS paper_example,
	abs(twed_reference(array(SELECT generate_series(1, 10)::float8), NULL,
	array(SELECT generate_series(11, 20)::float8), NULL, 0.001, 1) - 46.018) < 1e-12 AS reference_agrees,
	abs(gpu_twed(array(SELECT generate_series(1, 10)::float8), NULL,
	array(SELECT generate_series(11, 20)::float8), NULL, 0.001, 1, float32 => true) - 46.018) < 1e-5
	AS float32_close;

-- random() below is seeded: every run draws the same inputs
SELECT setseed(0.75);

-- fresh random series of 1 to 3 values per point, 1 to 15 points, random times
CREATE TEMP TABLE twed_random AS
SELECT g AS id, k,
	CASE WHEN k = 1 THEN array(SELECT random() * 100 - 50 FROM generate_series(1, n) i)
	ELSE array(SELECT array(SELECT random() * 100 - 50 + 0 * i FROM generate_series(1, k))
		FROM generate_series(1, n) i) END AS vals,
	array(SELECT sum(0.01 + 3 * random()) OVER (ORDER BY i) FROM generate_series(1, n) i) AS times
FROM generate_series(1, 15) g, LATERAL (SELECT g % 3 + 1 AS k, 1 + (random() * 14)::int + 0 * g AS n) s;

-- every pair of the same dimension, every degree, with and without the root
CREATE TEMP TABLE twed_random_pairs AS
SELECT x.id AS x, y.id AS y, degree, root,
	gpu_twed(x.vals, x.times, y.vals, y.times, 0.5, 1.5, degree, root) AS d,
	gpu_twed(x.vals, x.times, y.vals, y.times, 0.5, 1.5, degree, root, float32 => true) AS d32,
	twed_reference(x.vals, x.times, y.vals, y.times, 0.5, 1.5, degree, root) AS ref
FROM twed_random x JOIN twed_random y ON x.k = y.k AND x.id <= y.id,
	generate_series(1, 3) degree, (VALUES (true), (false)) r(root);
SELECT count(*) > 0 AS some_pairs,
	bool_and(abs(d - ref) <= 1e-12 * ref) AS matches_reference,
	bool_and(abs(d32 - ref) <= 1e-4 * ref) AS float32_close,
	bool_and((x = y) = (d = 0)) AS zero_only_on_itself
FROM twed_random_pairs;

-- the distance is symmetric to the bit, in float32 too; the matrix gives the scalar's values
SELECT bool_and(gpu_twed(x.vals, x.times, y.vals, y.times, 0.5, 1.5, 3)
	= gpu_twed(y.vals, y.times, x.vals, x.times, 0.5, 1.5, 3)) AS symmetric,
	bool_and(gpu_twed(x.vals, x.times, y.vals, y.times, 0.5, 1.5, 3, float32 => true)
	= gpu_twed(y.vals, y.times, x.vals, x.times, 0.5, 1.5, 3, float32 => true)) AS symmetric_float32
FROM twed_random x JOIN twed_random y ON x.k = y.k;
SELECT count(*) AS pairs, bool_and(m.distance = p.d) AS matrix_equals_scalar
FROM generate_series(1, 3) k,
	gpu_twed_matrix(format('SELECT id, vals, times FROM twed_random WHERE k = %s ORDER BY id', k), NULL,
		0.5, 1.5, 2, false) m
	JOIN twed_random_pairs p ON p.x = m.a_id AND p.y = m.b_id AND p.degree = 2 AND NOT p.root;

-- the UCI synthetic control set: 600 series of 60 values in 6 classes, times 0..59
CREATE TEMP TABLE uci_lines (id int, line text);
\copy uci_lines FROM PROGRAM 'cat -n data/twed/uci_synthetic_control.data'
CREATE TEMP TABLE uci AS
SELECT id, (id - 1) / 100 AS class, regexp_split_to_array(trim(line), '\s+')::float8[] AS vals,
	array(SELECT generate_series(0, 59)::float8) AS times
FROM uci_lines;
SELECT count(*) AS series, bool_and(array_length(vals, 1) = 60) AS all_60_values FROM uci;

-- two series of each class, every pair against the reference (nu = lambda = 1)
SELECT count(*) AS pairs, bool_and(abs(m.distance - twed_reference(x.vals, x.times, y.vals, y.times, 1, 1))
	<= 1e-12 * m.distance) AS matches_reference
FROM gpu_twed_matrix('SELECT id, vals, times FROM uci WHERE id % 100 IN (7, 58) ORDER BY id', NULL, 1, 1) m
	JOIN uci x ON x.id = m.a_id JOIN uci y ON y.id = m.b_id;

-- leave-one-out nearest-neighbour classification over all 179,700 pairs
CREATE TEMP TABLE uci_pairs AS
SELECT * FROM gpu_twed_matrix('SELECT id, vals FROM uci ORDER BY id', NULL, 1, 1);
SELECT count(*) AS pairs FROM uci_pairs;
SELECT count(*) FILTER (WHERE x.class = y.class) AS nn_same_class
FROM (SELECT DISTINCT ON (a) a, b FROM (
		SELECT a_id AS a, b_id AS b, distance FROM uci_pairs
		UNION ALL SELECT b_id, a_id, distance FROM uci_pairs) p
	ORDER BY a, distance, b) nn
	JOIN uci x ON x.id = nn.a JOIN uci y ON y.id = nn.b;

-- k => n: the n nearest of each series without the whole matrix; the same as ranking all pairs
-- (both directions, nearest first, the first in query order on a tie), in blocks too
CREATE TEMP TABLE uci_ranked AS
SELECT a, b, distance, row_number() OVER (PARTITION BY a ORDER BY distance, b) AS rank
FROM (SELECT a_id AS a, b_id AS b, distance FROM uci_pairs UNION ALL SELECT b_id, a_id, distance FROM uci_pairs) p;
SELECT count(*) AS rows, bool_and(r.rank IS NOT NULL AND r.rank <= 3) AS the_three_nearest, count(DISTINCT m.a_id) AS series
FROM gpu_twed_matrix('SELECT id, vals FROM uci ORDER BY id', NULL, 1, 1, k => 3) m
	LEFT JOIN uci_ranked r ON r.a = m.a_id AND r.b = m.b_id AND r.distance = m.distance;
SET work_mem = '64kB';
SELECT count(*) FILTER (WHERE x.class = y.class) AS nn_same_class_k1
FROM gpu_twed_matrix('SELECT id, vals FROM uci ORDER BY id', NULL, 1, 1, k => 1) m
	JOIN uci x ON x.id = m.a_id JOIN uci y ON y.id = m.b_id;
RESET work_mem;
SELECT count(*) AS rows, bool_and(m.b_id <> m.a_id) AS never_itself
FROM gpu_twed_matrix('SELECT id, vals FROM uci WHERE id <= 4', NULL, k => 10) m;
SELECT count(*) AS rows FROM gpu_twed_matrix('SELECT id, vals FROM uci WHERE id <= 5',
	'SELECT id, vals FROM uci WHERE id > 590', k => 2) m;
SELECT * FROM gpu_twed_matrix('SELECT id, vals FROM uci WHERE id <= 5', NULL, k => 0);

-- the matrix in blocks of bounded memory (work_mem 64kB: blocks of 131,072 pairs) gives the
-- same distances, float32 too (a distance depends on its pair alone)
SET work_mem = '64kB';
SELECT count(*) AS pairs, bool_and(m.distance = p.distance) AS blocks_equal
FROM gpu_twed_matrix('SELECT id, vals FROM uci ORDER BY id', NULL, 1, 1) m JOIN uci_pairs p USING (a_id, b_id);
CREATE TEMP TABLE uci_float32_blocks AS
SELECT * FROM gpu_twed_matrix('SELECT id, vals FROM uci ORDER BY id', NULL, 1, 1, float32 => true);
RESET work_mem;
SELECT count(*) AS pairs, bool_and(m.distance = p.distance) AS float32_blocks_equal
FROM gpu_twed_matrix('SELECT id, vals FROM uci ORDER BY id', NULL, 1, 1, float32 => true) m
	JOIN uci_float32_blocks p USING (a_id, b_id);

-- real AIS trajectories (New York harbour, one day): X, Y values, M epoch times
CREATE TEMP TABLE ny AS SELECT id, traj FROM ais_tracks WHERE source = 'ny_harbor_2020-12-08';
CREATE TEMP TABLE ny_pairs AS
SELECT * FROM gpu_twed_matrix('SELECT id, traj FROM ny ORDER BY id', NULL, 0.001, 1);
SELECT count(*) AS pairs,
	bool_and(m.distance = gpu_twed(x.traj, y.traj, 0.001, 1)) AS matrix_equals_scalar,
	bool_and(m.distance = gpu_twed(
		array(SELECT ARRAY[ST_X(g.geom), ST_Y(g.geom)] FROM ST_DumpPoints(x.traj) g ORDER BY g.path),
		array(SELECT ST_M(g.geom) FROM ST_DumpPoints(x.traj) g ORDER BY g.path),
		array(SELECT ARRAY[ST_X(g.geom), ST_Y(g.geom)] FROM ST_DumpPoints(y.traj) g ORDER BY g.path),
		array(SELECT ST_M(g.geom) FROM ST_DumpPoints(y.traj) g ORDER BY g.path), 0.001, 1)) AS arrays_agree,
	bool_and(abs(gpu_twed(x.traj, y.traj, 0.001, 1, float32 => true) - m.distance) <= 1e-4 * m.distance)
	AS float32_close
FROM ny_pairs m JOIN ny x ON x.id = m.a_id JOIN ny y ON y.id = m.b_id;

-- one against many, both orders, equals the symmetric matrix
SELECT bool_and(m.distance = p.distance) AS one_against_many
FROM (SELECT min(id) AS first FROM ny) f,
	gpu_twed_matrix(format('SELECT id, traj FROM ny WHERE id = %s', f.first), 'SELECT id, traj FROM ny', 0.001, 1) m
	JOIN ny_pairs p ON p.a_id = least(m.a_id, m.b_id) AND p.b_id = greatest(m.a_id, m.b_id);

-- the nearest neighbours of one track among all others (the README's example): the same vessel first
SELECT m.b_id AS track, t.mmsi, to_timestamp(ST_M(ST_StartPoint(t.traj)))::date AS day
FROM gpu_twed_matrix('SELECT id, traj FROM ais_tracks WHERE id = 424',
	'SELECT id, traj FROM ais_tracks WHERE id <> 424', nu => 0.001, lambda => 100) m
	JOIN ais_tracks t ON t.id = m.b_id
ORDER BY m.distance, m.b_id LIMIT 3;

-- gpu_twed_pairs: the window function over rows of pairs gives each row gpu_twed of its pair, bit
-- for bit, whether the partition holds every pair of its trajectories (one matrix), a part of them
-- (grouped by a), repeated pairs, NULLs, float32 (always per a, rebased to a's first point as the scalar
-- gpu_twed rebases), or other parameters; each row's distance does not depend on its partition
CREATE TEMP TABLE ny_queries AS SELECT id, traj FROM ny WHERE id % 4 = 1;
SELECT count(*) AS pairs, bool_and(d = gpu_twed(a, b)) AS cross_join_equal,
	bool_and(d = m.distance) AS matrix_equal
FROM (SELECT x.id AS a_id, y.id AS b_id, x.traj AS a, y.traj AS b, gpu_twed_pairs(x.traj, y.traj) OVER () AS d
	FROM ny x CROSS JOIN ny_queries y) s
	JOIN gpu_twed_matrix('SELECT id, traj FROM ny', 'SELECT id, traj FROM ny_queries') m USING (a_id, b_id);
SELECT count(*) AS pairs, bool_and(d = gpu_twed(a, b, 0.01, 10, 1, false)) AS part_equal
FROM (SELECT x.traj AS a, y.traj AS b,
		gpu_twed_pairs(x.traj, y.traj, 0.01, 10, 1, false) OVER (PARTITION BY x.id % 3 ORDER BY y.id DESC) AS d
	FROM ny x JOIN ny y ON (x.id * 7 + y.id) % 5 = 0) s;
SELECT count(*) AS pairs, bool_and(d = gpu_twed(a, b, float32 => true)) AS float32_equal
FROM (SELECT x.traj AS a, y.traj AS b, gpu_twed_pairs(x.traj, y.traj, float32 => true) OVER () AS d
	FROM ny x CROSS JOIN ny_queries y) s;
SELECT count(*) AS rows, count(d) AS distances, bool_and(d = gpu_twed(a, b)) AS repeated_equal
FROM (SELECT a, b, gpu_twed_pairs(a, b) OVER (PARTITION BY k) AS d
	FROM (SELECT x.traj AS a, CASE WHEN y.id % 3 = 0 THEN NULL ELSE y.traj END AS b, r % 2 AS k
		FROM ny x CROSS JOIN ny_queries y CROSS JOIN generate_series(1, 2) r WHERE x.id % 3 = 0) t) s;
SELECT count(*) AS rows, count(d) AS distances
FROM (SELECT gpu_twed_pairs(x.traj, y.traj, nu => NULL) OVER () AS d FROM ny x CROSS JOIN ny_queries y) s;
-- geography trajectories (metres) and use_z, as gpu_twed measures them
SELECT count(*) AS pairs, bool_and(d = gpu_twed(a, b, lambda => 100)) AS geography_equal
FROM (SELECT x.g AS a, y.g AS b, gpu_twed_pairs(x.g, y.g, lambda => 100) OVER () AS d
	FROM (SELECT id, ST_Transform(traj, 4326)::geography AS g FROM ny) x
		CROSS JOIN (SELECT id, ST_Transform(traj, 4326)::geography AS g FROM ny_queries) y) s;
SELECT count(*) AS pairs, bool_and(d = gpu_twed(a, b, use_z => true)) AS use_z_equal
FROM (SELECT x.traj AS a, y.traj AS b, gpu_twed_pairs(x.traj, y.traj, use_z => true) OVER () AS d
	FROM (SELECT id, ST_Force4D(traj, id % 7) AS traj FROM ny) x
		CROSS JOIN (SELECT id, ST_Force4D(traj, 3) AS traj FROM ny_queries) y) s;
-- a partition of every pair is computed in one call of the core
SELECT geoacc_stats_reset();
SELECT count(d) AS pairs FROM (SELECT gpu_twed_pairs(x.traj, y.traj) OVER () AS d FROM ny x CROSS JOIN ny_queries y) s;
SELECT sum(calls) AS core_calls FROM geoacc_stats() WHERE function = 'gpu_twed_pairs';
-- errors name the row of the partition
SELECT gpu_twed_pairs(a, b, nu => x) OVER ()
FROM (VALUES (0.1, 'LINESTRING M (0 0 1, 1 1 2)'::geometry, 'LINESTRING M (0 0 1, 1 1 2)'::geometry),
	(0.2, 'LINESTRING M (0 0 1, 1 1 2)', 'LINESTRING M (0 0 1, 1 1 3)')) v(x, a, b);
SELECT gpu_twed_pairs(a, b) OVER ()
FROM (VALUES ('LINESTRING M (0 0 1, 1 1 2)'::geometry, 'LINESTRING M (0 0 1, 1 1 2)'::geometry),
	('LINESTRING M (0 0 1, 1 1 2)', 'LINESTRING (0 0, 1 1)')) v(a, b);
SELECT gpu_twed_pairs(a, b) OVER ()
FROM (VALUES ('LINESTRING M (0 0 1, 1 1 2)'::geometry, 'LINESTRING M (0 0 1, 1 1 0)'::geometry)) v(a, b);
SELECT gpu_twed_pairs(a, b, use_z => true) OVER ()
FROM (VALUES ('LINESTRING ZM (0 0 0 1, 1 1 0 2)'::geometry, 'LINESTRING M (0 0 1, 1 1 2)'::geometry)) v(a, b);
SELECT gpu_twed_pairs(a, b, lambda => -1) OVER ()
FROM (VALUES ('LINESTRING M (0 0 1, 1 1 2)'::geometry, 'LINESTRING M (0 0 1, 1 1 2)'::geometry)) v(a, b);
SELECT gpu_twed_pairs(a, b) OVER ()
FROM (VALUES ('SRID=32618;LINESTRING M (0 0 1, 1 1 2)'::geometry, 'SRID=32619;LINESTRING M (0 0 1, 1 1 2)'::geometry)) v(a, b);

-- a 1 MB device-memory cap splits the work; the distances do not change
SET geoacc.gpu_memory_limit = '1MB';
SELECT bool_and(m.distance = p.distance) AS capped_equals
FROM gpu_twed_matrix('SELECT id, traj FROM ny ORDER BY id', NULL, 0.001, 1) m
	JOIN ny_pairs p USING (a_id, b_id);
SELECT bool_and(m.distance = p.distance) AS capped_equals
FROM gpu_twed_matrix('SELECT id, vals FROM uci WHERE id % 5 = 0 ORDER BY id', 'SELECT id, vals FROM uci ORDER BY id',
	1, 1) m
	JOIN uci_pairs p ON p.a_id = least(m.a_id, m.b_id) AND p.b_id = greatest(m.a_id, m.b_id);
RESET geoacc.gpu_memory_limit;

-- ids of any integer type; a NULL times column means 1..n
SELECT array_agg(a_id ORDER BY a_id, b_id) AS a_ids, array_agg(b_id ORDER BY a_id, b_id) AS b_ids,
	bool_and(distance = gpu_twed(ARRAY[a_id, 1], NULL, ARRAY[b_id, 1], NULL, 1, 1)) AS times_default
FROM gpu_twed_matrix('SELECT i::int2, ARRAY[i, 1]::float8[], NULL::float8[] FROM generate_series(1, 3) i',
	'SELECT i, ARRAY[i, 1]::float8[] FROM generate_series(2, 3) i', 1, 1);

-- NULL arguments give NULL, empty queries no rows
SELECT gpu_twed(NULL, NULL, '{1}'::float8[], NULL, 1, 1) IS NULL AS null_a,
	gpu_twed('{1}'::float8[], NULL, '{1}', NULL, 1, NULL) IS NULL AS null_lambda,
	gpu_twed(NULL::geometry, 'LINESTRING M (0 0 1, 1 1 2)', 1, 1) IS NULL AS null_trajectory;
SELECT count(*) AS no_rows FROM gpu_twed_matrix(NULL, NULL, 1, 1);
SELECT count(*) AS no_rows FROM gpu_twed_matrix('SELECT 1, ''{1}''::float8[] WHERE false', NULL, 1, 1);
SELECT count(*) AS no_rows FROM gpu_twed_matrix('SELECT 1, ''{1}''::float8[]', NULL, 1, 1);
SELECT count(*) AS no_rows FROM gpu_twed_matrix('SELECT 1, ''{1}''::float8[]', 'SELECT 1, ''{1}''::float8[]', 1, NULL);

-- times as timestamptz[] beside epoch seconds: the same distances, scalar and matrix; an untyped
-- NULL still means 1..n, an untyped literal is read as float8[]
CREATE TEMP TABLE twed_stamped AS
SELECT id, k, vals, secs, array(SELECT to_timestamp(t) FROM unnest(secs) t) AS stamps
FROM (SELECT id, k, vals,
		array(SELECT 1591272000 + 0.25 * sum(1 + floor(random() * 12)) OVER (ORDER BY i)
			FROM generate_series(1, array_length(vals, 1)) i) AS secs
	FROM twed_random) x;
SELECT count(*) AS pairs,
	bool_and(gpu_twed(x.vals, x.stamps, y.vals, y.stamps, 0.5, 1.5) = gpu_twed(x.vals, x.secs, y.vals, y.secs, 0.5, 1.5))
		AS timestamps_as_seconds
FROM twed_stamped x JOIN twed_stamped y ON x.k = y.k;
SELECT count(*) AS pairs, bool_and(s.distance = f.distance) AS matrix_timestamps_as_seconds
FROM gpu_twed_matrix('SELECT id, vals AS values, stamps AS times FROM twed_stamped WHERE k = 2', NULL, 0.5, 1.5) s
JOIN gpu_twed_matrix('SELECT id, vals, secs FROM twed_stamped WHERE k = 2', NULL, 0.5, 1.5) f USING (a_id, b_id);
SELECT gpu_twed('{1, 2}'::float8[], '{1, 2}', '{3}'::float8[], '{5}') AS untyped_times,
	gpu_twed('{1, 2}'::float8[], '{1, 2}'::int[], '{3}'::float8[], '{5}'::numeric[]) AS integer_and_numeric_times,
	gpu_twed(ARRAY[1, 2], NULL, ARRAY[3], NULL, nu => 0.001, lambda => 1) AS null_times;
SELECT gpu_twed('{1, 2}'::float8[], ARRAY[timestamptz '2020-06-04 12:00:00.5+00', '2020-06-04 12:00:00.5+00'],
	'{3}'::float8[], NULL);
SELECT gpu_twed('{1, 2}'::float8[], ARRAY['2020-06-04', '2020-06-05'], '{3}'::float8[], NULL);
SELECT gpu_twed('{1, 2}'::float8[], ARRAY[timestamptz '2020-06-04', 'infinity'], '{3}'::float8[], NULL);
SELECT * FROM gpu_twed_matrix('SELECT 1 AS id, ''{1, 2}''::float8[] AS values, ARRAY[timestamptz ''2020-06-04 12:00+00'', ''2020-06-04 11:00+00''] AS times', NULL);

-- bad input (array literals in a call with an untyped last argument need a cast, as the
-- trajectory form would match too)
SELECT gpu_twed('{}', NULL, '{1}', NULL, 1, 1);
SELECT gpu_twed('{{{1}}}', NULL, '{1}', NULL, 1, 1);
SELECT gpu_twed('{1, NULL, 3}', NULL, '{1}', NULL, 1, 1);
SELECT gpu_twed('{{1, 2}}', NULL, '{{1, 2}, {3, NULL}}', NULL, 1, 1);
SELECT gpu_twed('{1, NaN}', NULL, '{1}', NULL, 1, 1);
SELECT gpu_twed('{{1, 2}}', NULL, '{{1, 2}, {-Infinity, 4}}', NULL, 1, 1);
SELECT gpu_twed('{1, 2}', '{1, 2, 3}', '{1}', NULL, 1, 1);
SELECT gpu_twed('{1, 2}', '{{1, 2}}', '{1}', NULL, 1, 1);
SELECT gpu_twed('{1, 2}', '{1, NULL}', '{1}', NULL, 1, 1);
SELECT gpu_twed('{1, 2}', '{1, Infinity}', '{1}', NULL, 1, 1);
SELECT gpu_twed('{1, 2, 3}', NULL, '{1, 2, 3}', '{5, 6, 6}', 1, 1);
SELECT gpu_twed('{1, 2, 3}', '{5, 4, 6}', '{1}', NULL, 1, 1);
SELECT gpu_twed('{{1, 2}}', NULL, '{1}', NULL, 1, 1);
SELECT gpu_twed('{1}', NULL, '{1}', NULL, -1, 1);
SELECT gpu_twed('{1}', NULL, '{1}', NULL, 'NaN', 1);
SELECT gpu_twed('{1}', NULL, '{1}', NULL, 1, -0.5);
SELECT gpu_twed('{1}'::float8[], NULL, '{1}', NULL, 1, 'Infinity');
SELECT gpu_twed('{1}', NULL, '{1}', NULL, 1, 1, 0);
SELECT gpu_twed('{1}', NULL, '{1e300}', NULL, 1, 1, float32 => true);
SELECT gpu_twed('{1}', '{-1e38}', '{1}', '{1e38}', 1, 1, float32 => true);
SELECT gpu_twed('POINT M (0 0 1)', 'LINESTRING M (0 0 1, 1 1 2)', 1, 1);
SELECT gpu_twed('LINESTRING (0 0, 1 1)', 'LINESTRING M (0 0 1, 1 1 2)', 1, 1);
SELECT gpu_twed('LINESTRING M (0 0 1, 1 1 2)', 'LINESTRING M (0 0 1, 1 1 1)', 1, 1);
SELECT gpu_twed('LINESTRING M EMPTY', 'LINESTRING M (0 0 1, 1 1 2)', 1, 1);
SELECT gpu_twed('SRID=32618;LINESTRING M (0 0 1, 1 1 2)', 'SRID=4326;LINESTRING M (0 0 1, 1 1 2)', 1, 1);
-- Z, the rule of every trajectory function: not measured unless use_z => true, which needs Z on
-- every trajectory (3 apart at the first fix: 3 + 0 + 3 along the diagonal)
SELECT gpu_twed('LINESTRING ZM (0 0 0 1, 1 1 1 2)', 'LINESTRING M (0 0 1, 1 1 2)', 1, 1) AS z_not_measured,
	gpu_twed('LINESTRING ZM (0 0 0 1, 1 1 1 2)', 'LINESTRING ZM (0 0 3 1, 1 1 1 2)', 1, 1, use_z => true) AS z_measured;
SELECT gpu_twed('LINESTRING ZM (0 0 0 1, 1 1 1 2)', 'LINESTRING M (0 0 1, 1 1 2)', 1, 1, use_z => true);
SELECT * FROM gpu_twed_matrix('SELECT 1, ''LINESTRING ZM (0 0 0 1, 1 1 1 2)''::geometry',
	'SELECT 2, ''LINESTRING M (0 0 1, 1 1 2)''::geometry', 1, 1, use_z => true);
SELECT * FROM gpu_twed_matrix('SELECT ''x''::text, ''{1}''::float8[]', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT 1, ''{1}''::float8[], NULL::float8[], 4', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT 1, ''{1}''::float8[]', 'SELECT 1, ''{1}''::text', 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT NULL::int, ''{1}''::float8[]', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT i, CASE WHEN i = 2 THEN NULL ELSE ''{1}''::float8[] END
	FROM generate_series(1, 3) i', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT id, traj FROM ny UNION ALL SELECT 99, NULL', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT i, ARRAY[1, i]::float8[], ARRAY[2, 2 - i]::float8[] FROM generate_series(1, 3) i',
	NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT 7, ''{1, 2}''::float8[]', 'SELECT 8, ''{{1, 2}}''::float8[]', 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT id, traj FROM ny', 'SELECT 5, ST_SetSRID(traj, 4326) FROM ny LIMIT 1', 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT id, traj FROM ny', 'SELECT 5, ''POINT M (1 2 3)''::geometry', 1, 1);
SELECT * FROM gpu_twed_matrix('SELEC 1', NULL, 1, 1);
SELECT * FROM gpu_twed_matrix('SELECT 1, ''{1}''::float8[]', NULL, -2, 1);

-- large degrees and extreme magnitudes: the Lp norm is scaled, so nothing overflows or vanishes
SELECT abs(gpu_twed(ARRAY[[0, 0]]::float8[], NULL, ARRAY[[1, 1]]::float8[], NULL, 0, 0, degree => 200)
		- 2 ^ (1 / 200.0)) < 1e-15 AS degree_200,
	abs(gpu_twed(ARRAY[[0, 0]]::float8[], NULL, ARRAY[[0.5, 0.5]]::float8[], NULL, 0, 0, degree => 1100)
		- 0.5 * 2 ^ (1 / 1100.0)) < 1e-15 AS degree_1100,
	abs(gpu_twed(ARRAY[[0, 0]]::float8[], NULL, ARRAY[[3000, 4000]]::float8[], NULL, 0, 0, degree => 88)
		- 4000 * (1 + 0.75 ^ 88) ^ (1 / 88.0)) < 1e-11 AS degree_88,
	abs(gpu_twed(ARRAY[[1e200, 0]]::float8[], NULL, ARRAY[[0, 1e200]]::float8[], NULL, 0, 0)
		/ (sqrt(2) * 1e200) - 1) < 1e-15 AS near_1e200,
	gpu_twed('{1.5e308}'::float8[], NULL, '{-1.5e308}', NULL, 0, 0) = 'Infinity' AS beyond_float8;
SELECT gpu_twed('{1, 2}'::float8[], '{-1e308, 1e308}', '{1}', NULL, 0, 1);

-- float32: each pair in the frame of one of its series.  With one origin for a whole matrix (the
-- first point of its first row), the pair (2, 3) far from series 1 came out 0 against 11.004 in
-- float64; now the matrix gives the pair's own bits, close to float64
CREATE TEMP TABLE twed_far (id int, vals float8[]);
INSERT INTO twed_far VALUES (1, '{0, 1, 2}'), (2, '{1e9, 1e9, 1e9}'), (3, '{1000000007, 1000000007, 1000000007}');
SELECT m.a_id, m.b_id, round(d.distance::numeric, 6) AS float64,
	abs(m.distance - d.distance) <= 1e-6 * d.distance AS float32_close,
	m.distance = gpu_twed(x.vals, NULL, y.vals, NULL, 0.001, 1, float32 => true) AS equals_pair_alone
FROM gpu_twed_matrix('SELECT id, vals FROM twed_far ORDER BY id', NULL, 0.001, 1, float32 => true) m
	JOIN gpu_twed_matrix('SELECT id, vals FROM twed_far ORDER BY id', NULL, 0.001, 1) d USING (a_id, b_id)
	JOIN twed_far x ON x.id = m.a_id JOIN twed_far y ON y.id = m.b_id
ORDER BY 1, 2;

-- degrees beyond 2 at a 400 km step: 400001 in float32 (degree 7 gave Infinity); the powered
-- form of degree 7, 1.6e39, is beyond the float32 range: an error
SELECT array_agg(gpu_twed(ARRAY[[5e5, 4.5e6], [9e5, 4.5e6]]::float8[], NULL, ARRAY[[5e5, 4.5e6]]::float8[], NULL,
	0, 1, degree => d, float32 => true) ORDER BY d) AS degrees_1_to_8
FROM generate_series(1, 8) d;
SELECT gpu_twed(ARRAY[[5e5, 4.5e6], [9e5, 4.5e6]]::float8[], NULL, ARRAY[[5e5, 4.5e6]]::float8[], NULL,
	0, 1, degree => 7, root => false) AS float64;
SELECT gpu_twed(ARRAY[[5e5, 4.5e6], [9e5, 4.5e6]]::float8[], NULL, ARRAY[[5e5, 4.5e6]]::float8[], NULL,
	0, 1, degree => 7, root => false, float32 => true);

-- random trajectories in UTM coordinates and epoch seconds, up to 2,000 km apart, steps up to
-- 400 km: every float32 distance within the README's bound 2^-22 (n + m) (d + E) of float64, E the
-- diagonal of the box around the pair plus nu times its time range
CREATE TEMP TABLE twed_far_tracks AS
SELECT g AS id, ST_MakeLine(array_agg(ST_MakePointM(x, y, t) ORDER BY i)) AS traj
FROM generate_series(1, 12) g,
	LATERAL (SELECT 5e5 + (random() - 0.5) * 4e6 + 0 * g AS x0, 4.5e6 + (random() - 0.5) * 4e6 AS y0,
		1.6e9 + (random() - 0.5) * 2e7 AS t0, 10 ^ (random() * 5.6) AS step, 1 + (random() * 60)::int AS n) s,
	LATERAL (SELECT i, x0 + sum((random() - 0.5) * 2 * step) OVER w AS x, y0 + sum((random() - 0.5) * 2 * step) OVER w AS y,
		t0 + sum(1 + random() * 600) OVER w AS t
		FROM generate_series(1, n) i WINDOW w AS (ORDER BY i)) p
GROUP BY g;
SELECT count(*) AS pairs,
	bool_and(abs(f.distance - d.distance) <= 2 ^ -22 * (ST_NPoints(x.traj) + ST_NPoints(y.traj)) * (d.distance
		+ sqrt((ST_XMax(b) - ST_XMin(b)) ^ 2 + (ST_YMax(b) - ST_YMin(b)) ^ 2)
		+ 0.01 * (greatest(ST_M(ST_EndPoint(x.traj)), ST_M(ST_EndPoint(y.traj)))
			- least(ST_M(ST_StartPoint(x.traj)), ST_M(ST_StartPoint(y.traj)))))) AS float32_within_bound,
	bool_and(f.distance = gpu_twed(y.traj, x.traj, 0.01, 10, float32 => true)) AS either_order
FROM gpu_twed_matrix('SELECT id, traj FROM twed_far_tracks', NULL, 0.01, 10, float32 => true) f
	JOIN gpu_twed_matrix('SELECT id, traj FROM twed_far_tracks', NULL, 0.01, 10) d USING (a_id, b_id)
	JOIN twed_far_tracks x ON x.id = f.a_id JOIN twed_far_tracks y ON y.id = f.b_id,
	LATERAL (SELECT ST_Collect(x.traj, y.traj)::box2d AS b) box;

-- nu and lambda default to 0.001 and 1.0 (aeon's defaults)
SELECT gpu_twed(x.traj, y.traj) = gpu_twed(x.traj, y.traj, 0.001, 1.0) AS geometry_defaults,
	gpu_twed('{1, 2, 3}'::float8[], NULL, '{1, 5}'::float8[], NULL) = gpu_twed('{1, 2, 3}'::float8[], NULL, '{1, 5}',
		NULL, 0.001, 1.0) AS array_defaults
FROM ny x, ny y WHERE x.id = (SELECT min(id) FROM ny) AND y.id = (SELECT max(id) FROM ny);
SELECT bool_and(m.distance = p.distance) AS matrix_defaults
FROM gpu_twed_matrix('SELECT id, traj FROM ny ORDER BY id', NULL) m
	JOIN gpu_twed_matrix('SELECT id, traj FROM ny ORDER BY id', NULL, 0.001, 1.0) p USING (a_id, b_id);

-- lon/lat trajectories: a NOTICE, once per statement, that the distances are in degrees
SELECT count(gpu_twed(ST_SetSRID(x.traj, 4326), ST_SetSRID(y.traj, 4326))) AS distances
FROM ny x JOIN ny y ON x.id < y.id WHERE x.id < (SELECT min(id) + 3 FROM ny);

DROP FUNCTION twed_reference(float8[], float8[], float8[], float8[], float8, float8, int, boolean);
