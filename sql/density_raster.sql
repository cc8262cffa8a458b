-- gpu_density_raster, geoacc_density_kernel and geoacc_raster_png, without postgis_raster
-- (density_raster_postgis reads the rasters with PostGIS itself).
\i test/data/ais_fixture.sql

-- Readers of the raster WKB that gpu_density_raster returns (little-endian): header fields at fixed
-- offsets, float64 pixels row by row from byte 70.
CREATE FUNCTION dr_u16(r bytea, pos int) RETURNS int LANGUAGE sql IMMUTABLE STRICT
	AS $$ SELECT get_byte(r, pos) + 256 * get_byte(r, pos + 1) $$;
CREATE FUNCTION dr_f64(r bytea, pos int) RETURNS float8 LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
	bits bigint := 0;
	e int;
BEGIN
	FOR i IN REVERSE 7..0 LOOP
		bits := (bits << 8) | get_byte(r, pos + i);
	END LOOP;
	e := ((bits >> 52) & 2047)::int;
	RETURN (CASE WHEN bits < 0 THEN -1 ELSE 1 END) *
		CASE WHEN e = 0 THEN (bits & 4503599627370495)::float8 * 2::float8 ^ -1074
			ELSE ((bits & 4503599627370495) + 4503599627370496)::float8 * 2::float8 ^ (e - 1075) END;
END $$;
CREATE FUNCTION dr_cells(r bytea) RETURNS TABLE (row_no int, col_no int, value float8)
	LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
	-- one uncompressed copy: get_byte would decompress a compressed value on every call
	raster bytea := r || ''::bytea;
	width int := dr_u16(raster, 57);
BEGIN
	RETURN QUERY SELECT i / width, i % width, dr_f64(raster, 70 + 8 * i)
		FROM generate_series(0, width * dr_u16(raster, 59) - 1) i;
END $$;
-- the nonzero cells as (row,column)=value, rows from the north
CREATE FUNCTION dr_nonzero(r bytea) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
	SELECT string_agg(format('(%s,%s)=%s', row_no, col_no, value), ' ' ORDER BY row_no, col_no)
	FROM dr_cells(r) WHERE value <> 0 $$;
-- raw counts (kernel_size 1) of some tracks over [0, xmax] x [0, ymax] in cells of 1 x 1
CREATE FUNCTION dr_counts(tracks text[], xmax int, ymax int, interpolate boolean DEFAULT true) RETURNS text
	LANGUAGE sql AS $$
	SELECT dr_nonzero(gpu_density_raster(t::geometry, ST_MakeBox2D(ST_Point(0, 0), ST_Point(xmax, ymax)),
		xmax, ymax, 'gaussian', 1, interpolate))
	FROM unnest(tracks) t $$;

-- the raster WKB: header, one 64-bit float band (pixel type 11) without nodata, north-up
SELECT get_byte(r, 0) AS little_endian, dr_u16(r, 1) AS version, dr_u16(r, 3) AS bands,
	dr_f64(r, 5) AS scale_x, dr_f64(r, 13) AS scale_y, dr_f64(r, 21) AS upper_left_x,
	dr_f64(r, 29) AS upper_left_y, dr_f64(r, 37) AS skew_x, dr_f64(r, 45) AS skew_y,
	dr_u16(r, 53) + 65536 * dr_u16(r, 55) AS srid, dr_u16(r, 57) AS width, dr_u16(r, 59) AS height,
	get_byte(r, 61) AS band_type, dr_f64(r, 62) AS nodata, length(r) = 70 + 8 * 4 * 3 AS length_ok
FROM (SELECT gpu_density_raster(ST_SetSRID('LINESTRING M (101 201 1, 107 202.5 2)'::geometry, 32618),
	ST_MakeBox2D(ST_Point(100, 200), ST_Point(108, 203)), 4, 3) AS r) x;

-- Hand-checked projections with raw counts.  A diagonal through the middle of four cells: one sample
-- in each cell between the ends.
SELECT dr_counts(ARRAY['LINESTRING M (0.5 0.5 1, 4.5 4.5 2)'], 5, 5);
-- a shallow line, 6 columns and 2 rows apart: every column once (an 8-connected line)
SELECT dr_counts(ARRAY['LINESTRING M (0.5 7.5 1, 6.5 5.5 2)'], 8, 8);
-- cells one apart are not joined
SELECT dr_counts(ARRAY['LINESTRING M (0.1 0.1 1, 1.9 1.9 2, 1.95 1.95 3)'], 4, 4);
-- points on cell edges go east and south; the extent's north and west borders are inside, its east and south
-- borders outside (as PostGIS's ST_WorldToRasterCoord places them), and so is what lies beyond
SELECT dr_counts(ARRAY['LINESTRING M (1 2 1, 1 2.5 2)', 'LINESTRING M (4 0 1, 4.5 0 2)',
	'LINESTRING M (0 4 1, 0.5 3.5 2)', 'LINESTRING M (2 3 1, 2 3.5 2)'], 4, 4);
-- out through the east border and back: the samples inside count, the rest are clipped away
SELECT dr_counts(ARRAY['LINESTRING M (0.5 1.5 1, 15.5 1.5 2, 15.5 1.7 3, 4.5 1.7 4)'], 10, 3);
-- a segment crossing the whole extent with both ends outside
SELECT dr_counts(ARRAY['LINESTRING M (-100.5 0.5 1, 109.5 0.5 2)'], 10, 3);
-- one trajectory through the same cell twice, with and without interpolation
SELECT dr_counts(ARRAY['LINESTRING M (1.5 2.5 1, 3.5 2.5 2, 3.5 0.5 3, 1.5 0.5 4, 1.5 2.5 5)'], 4, 4);
SELECT dr_counts(ARRAY['LINESTRING M (1.5 2.5 1, 3.5 2.5 2, 3.5 0.5 3, 1.5 0.5 4, 1.5 2.5 5)'], 4, 4, false);
-- LINESTRING ZM, and a track that stays in one cell
SELECT dr_counts(ARRAY['LINESTRING ZM (0.5 0.5 7 1, 2.5 0.5 7 2)', 'LINESTRING M (3.5 3.5 1, 3.6 3.4 2)'], 4, 4);

-- Kernels: normalized, non-negative, symmetric, largest in the centre, for every odd size
SELECT kernel, bool_and(abs(total - 1) < 1e-12) AS sums_to_one, bool_and(smallest >= 0) AS non_negative,
	bool_and(flat = transposed AND flat = flipped) AS symmetric, bool_and(centre = largest) AS centre_largest
FROM (SELECT kernel, size, sum(x) AS total, min(x) AS smallest, max(x) AS largest,
		max(x) FILTER (WHERE n = (size * size + 1) / 2) AS centre,
		array_agg(x ORDER BY n) AS flat,
		array_agg(x ORDER BY (n - 1) % size, (n - 1) / size) AS transposed,
		array_agg(x ORDER BY size - 1 - (n - 1) / size, (n - 1) % size) AS flipped
	FROM unnest(ARRAY['uniform', 'triangular', 'epanechnikov', 'quartic', 'triweight', 'tricube', 'gaussian',
		'cosine']) kernel,
		generate_series(1, 63, 2) size,
		unnest(geoacc_density_kernel(kernel, size)) WITH ORDINALITY AS w(x, n)
	GROUP BY kernel, size) s
GROUP BY kernel ORDER BY kernel;
-- size 3 has bandwidth 2: q = 0, 1/4, 1/2 at the centre, sides and corners
SELECT geoacc_density_kernel('epanechnikov', 3);
SELECT geoacc_density_kernel('uniform', 3);
SELECT geoacc_density_kernel(kernel_size => 1);
-- the gaussian has sigma = bandwidth / 3: a side cell of size 3 weighs exp(-1.125) of the centre
SELECT abs(w[1][2] / w[2][2] - exp(-1.125)) < 1e-14 AS gaussian_sigma FROM geoacc_density_kernel('gaussian', 3) w;

-- Two points in the middle cell of a 65 x 65 raster: each kernel's raster sums to 2, even at size 63;
-- at the north-west corner only a quarter (and the cells on the two borders) stays, the rest is lost
SELECT kernel, abs(centre.total - 2) < 1e-12 AS centre_sums_to_2, corner.total BETWEEN 0.5 AND 0.55 AS corner_keeps_a_quarter
FROM unnest(ARRAY['uniform', 'triangular', 'epanechnikov', 'quartic', 'triweight', 'tricube', 'gaussian',
	'cosine']) kernel,
	LATERAL (SELECT sum(value) AS total FROM dr_cells((
		SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(65, 65)), 65, 65, kernel, 63)
		FROM (VALUES ('LINESTRING M (32.5 32.5 1, 32.6 32.6 2)'::geometry)) t(traj)))) centre,
	LATERAL (SELECT sum(value) AS total FROM dr_cells((
		SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(65, 65)), 65, 65, kernel, 63)
		FROM (VALUES ('LINESTRING M (0.5 64.5 1, 0.6 64.6 2)'::geometry)) t(traj)))) corner
ORDER BY kernel;
-- a uniform 3 x 3 kernel spreads two points in one cell over nine cells
SELECT dr_nonzero(gpu_density_raster('LINESTRING M (2.5 2.5 1, 2.6 2.6 2)'::geometry,
	ST_MakeBox2D(ST_Point(0, 0), ST_Point(5, 5)), 5, 5, 'uniform', 3));

-- NULL rows are ignored; no rows (or only NULL rows) give NULL; empty tracks add nothing
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 2, 2) IS NULL AS no_rows
FROM ais_tracks WHERE false;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 2, 2) IS NULL AS null_rows
FROM (VALUES (NULL::geometry), (NULL)) t(traj);
SELECT dr_counts(ARRAY[NULL, 'LINESTRING M (0.5 0.5 1, 0.6 0.6 2)', NULL], 2, 2);
SELECT dr_counts(ARRAY['LINESTRING M EMPTY'], 2, 2) IS NULL AS empty_track_adds_nothing;

-- Real AIS tracks, New York harbour (cells of 416.67 x 500 m, tracks leaving the extent): raw counts
-- against the definition computed here in SQL, cell by cell.  Cell coordinates u = (x - x0) / cell width,
-- v = (y1 - y) / cell height; every vertex and every interpolated sample k / n of a segment whose cells
-- are n > 1 apart counts in its cell, floor(u0) + floor(frac(u0) + k / n (u - u0)) (and the same in v),
-- when that cell is in the raster or within the kernel's reach of it (the margin, here 4 cells).
CREATE TEMP TABLE dr_extent AS
SELECT 560000::float8 AS x0, 4480000::float8 AS y0, 600000::float8 AS x1, 4520000::float8 AS y1,
	96 AS w, 80 AS h, 4 AS m;
CREATE TEMP TABLE dr_vertices AS
SELECT t.id, d.path[1] AS i,
	(ST_X(d.geom) - e.x0) / ((e.x1 - e.x0) / e.w) AS u,
	(e.y1 - ST_Y(d.geom)) / ((e.y1 - e.y0) / e.h) AS v
FROM ais_tracks t, ST_DumpPoints(t.traj) d, dr_extent e;
CREATE TEMP TABLE dr_segments AS
SELECT u0, v0, u, v, greatest(abs(floor(u) - floor(u0)), abs(floor(v) - floor(v0))) AS n
FROM (SELECT lag(u) OVER w AS u0, lag(v) OVER w AS v0, u, v
	FROM dr_vertices WINDOW w AS (PARTITION BY id ORDER BY i)) s
WHERE u0 IS NOT NULL;
CREATE TEMP TABLE dr_reference AS
SELECT s.cv::int AS row_no, s.cu::int AS col_no, count(*) AS n, bool_or(interpolated) AS has_samples
FROM (SELECT floor(u) AS cu, floor(v) AS cv, false AS interpolated FROM dr_vertices
	UNION ALL
	SELECT floor(u0) + floor((u0 - floor(u0)) + (k::float8 / n) * (u - u0)),
		floor(v0) + floor((v0 - floor(v0)) + (k::float8 / n) * (v - v0)), true
	FROM dr_segments, generate_series(1, n::int - 1) k WHERE n >= 2) s, dr_extent e
WHERE s.cu >= -e.m AND s.cu < e.w + e.m AND s.cv >= -e.m AND s.cv < e.h + e.m
GROUP BY 1, 2;
CREATE TEMP TABLE dr_ny AS
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(e.x0, e.y0), ST_Point(e.x1, e.y1)), e.w, e.h,
	'gaussian', 1) AS raw,
	gpu_density_raster(traj, ST_MakeBox2D(ST_Point(e.x0, e.y0), ST_Point(e.x1, e.y1)), e.w, e.h,
	'quartic', 9) AS smooth
FROM ais_tracks, dr_extent e GROUP BY e.x0, e.y0, e.x1, e.y1, e.w, e.h;
SELECT count(*) AS cells, sum(r.n) AS samples, count(*) FILTER (WHERE has_samples) AS cells_with_interpolation,
	count(*) FILTER (WHERE c.value IS DISTINCT FROM r.n) AS mismatches
FROM (SELECT r.* FROM dr_reference r, dr_extent e WHERE row_no BETWEEN 0 AND e.h - 1 AND col_no BETWEEN 0 AND e.w - 1) r
	FULL JOIN (SELECT * FROM dr_cells((SELECT raw FROM dr_ny)) WHERE value <> 0) c USING (row_no, col_no);
-- the quartic 9 x 9 convolution of those counts, the margin's included, summed here in SQL (another
-- order: within 1e-12)
WITH k AS (
	SELECT (i - 1) / 9 - 4 AS di, (i - 1) % 9 - 4 AS dj, w
	FROM unnest(geoacc_density_kernel('quartic', 9)) WITH ORDINALITY AS x(w, i)
), expected AS (
	SELECT r.row_no + k.di AS row_no, r.col_no + k.dj AS col_no, sum(k.w * r.n) AS value
	FROM dr_reference r, k, dr_extent e
	WHERE r.row_no + k.di BETWEEN 0 AND e.h - 1 AND r.col_no + k.dj BETWEEN 0 AND e.w - 1
	GROUP BY 1, 2
)
SELECT count(*) AS cells, max(abs(coalesce(c.value, 0) - coalesce(x.value, 0))) < 1e-12 AS convolution_matches,
	abs(sum(c.value) - (SELECT sum(n) FROM dr_reference)) < 400 AS mass_mostly_kept
FROM expected x FULL JOIN (SELECT * FROM dr_cells((SELECT smooth FROM dr_ny)) WHERE value <> 0) c
	USING (row_no, col_no);
-- geoacc.cpu_threads: the CPU convolution in bands of rows (here 7 of at most 44 rows) on 3 threads gives the
-- raster of one thread, bit for bit
CREATE TEMP TABLE dr_one_thread AS
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(e.x0, e.y0), ST_Point(e.x1, e.y1)), 96, 300, 'gaussian', 63) AS r
FROM ais_tracks, dr_extent e GROUP BY e.x0, e.y0, e.x1, e.y1;
SET geoacc.cpu_threads = 3;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(e.x0, e.y0), ST_Point(e.x1, e.y1)), 96, 300, 'gaussian', 63) =
	(SELECT r FROM dr_one_thread) AS same_on_three_threads,
	(SELECT count(*) FROM dr_cells((SELECT r FROM dr_one_thread)) WHERE value <> 0) > 10000 AS mostly_nonzero
FROM ais_tracks, dr_extent e GROUP BY e.x0, e.y0, e.x1, e.y1;
RESET geoacc.cpu_threads;

-- Seamless tiles: the 2 x 2 tiles of an extent, each made on its own, equal the raster of the whole extent
-- cut into four, cell for cell and bit for bit: every tile counts what lies within the kernel's reach
-- around it.  Cells of 512 m (a power of two: cell coordinates are exact), raw counts and kernels of 9 and
-- 31 cells, the count and time modes, with and without weights; then cells of 500 m.
CREATE FUNCTION dr_tile_mismatches(x0 float8, y0 float8, x1 float8, y1 float8, w int, h int, kernel text,
	ks int, mode text, weighted boolean) RETURNS text LANGUAGE sql AS $$
	WITH whole AS (
		SELECT CASE WHEN weighted
			THEN gpu_density_raster(traj, ST_MakeBox2D(ST_Point(x0, y0), ST_Point(x1, y1)), w, h, kernel, ks, true,
				mode, id % 7)
			ELSE gpu_density_raster(traj, ST_MakeBox2D(ST_Point(x0, y0), ST_Point(x1, y1)), w, h, kernel, ks, true,
				mode) END AS r
		FROM ais_tracks
	), tiles AS (
		SELECT tr, tc, CASE WHEN weighted
			THEN gpu_density_raster(traj, ST_MakeBox2D(
				ST_Point(CASE tc WHEN 0 THEN x0 ELSE (x0 + x1) / 2 END, CASE tr WHEN 0 THEN (y0 + y1) / 2 ELSE y0 END),
				ST_Point(CASE tc WHEN 0 THEN (x0 + x1) / 2 ELSE x1 END, CASE tr WHEN 0 THEN y1 ELSE (y0 + y1) / 2 END)),
				w / 2, h / 2, kernel, ks, true, mode, id % 7)
			ELSE gpu_density_raster(traj, ST_MakeBox2D(
				ST_Point(CASE tc WHEN 0 THEN x0 ELSE (x0 + x1) / 2 END, CASE tr WHEN 0 THEN (y0 + y1) / 2 ELSE y0 END),
				ST_Point(CASE tc WHEN 0 THEN (x0 + x1) / 2 ELSE x1 END, CASE tr WHEN 0 THEN y1 ELSE (y0 + y1) / 2 END)),
				w / 2, h / 2, kernel, ks, true, mode) END AS r
		FROM ais_tracks, (VALUES (0, 0), (0, 1), (1, 0), (1, 1)) t(tr, tc)
		GROUP BY tr, tc
	), tile_cells AS (
		SELECT tr * (h / 2) + c.row_no AS row_no, tc * (w / 2) + c.col_no AS col_no, c.value
		FROM tiles, dr_cells(tiles.r) c
	)
	SELECT format('%s cells, %s nonzero, %s mismatches', count(*), count(*) FILTER (WHERE a.value <> 0),
		count(*) FILTER (WHERE a.value IS DISTINCT FROM b.value))
	FROM dr_cells((SELECT r FROM whole)) a FULL JOIN tile_cells b USING (row_no, col_no) $$;
SELECT ks, mode, weighted, dr_tile_mismatches(557056, 4472832, 606208, 4521984, 96, 96, 'gaussian', ks, mode, weighted)
FROM (VALUES (1, 'count', false), (9, 'count', false), (31, 'count', false), (9, 'count', true),
	(31, 'time', false), (9, 'time', true)) v(ks, mode, weighted);
SELECT dr_tile_mismatches(560000, 4480000, 600000, 4520000, 80, 80, 'quartic', 15, 'count', false) AS cells_of_500_m;

-- The CPU result equals this session's device's (the GPU under geoacc.device = gpu), bit for bit, also
-- with a 1 MB device memory cap (bands of rows on the GPU, chunks of about 15,000 points on both)
SET geoacc.device = 'cpu';
SELECT md5(gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 31))
	AS cpu_md5 FROM ais_tracks \gset
SELECT md5(gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 512, 512, 'epanechnikov', 63))
	AS cpu_md5_63 FROM ais_tracks \gset
RESET geoacc.device;
SELECT md5(gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 31))
	= :'cpu_md5' AS same_on_session_device FROM ais_tracks;
SELECT md5(gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 512, 512, 'epanechnikov', 63))
	= :'cpu_md5_63' AS same_on_session_device FROM ais_tracks;
SET geoacc.gpu_memory_limit = '1MB';
SELECT md5(gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 31))
	= :'cpu_md5' AS same_with_1mb_cap FROM ais_tracks;
SELECT md5(gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 512, 512, 'epanechnikov', 63))
	= :'cpu_md5_63' AS same_with_1mb_cap FROM ais_tracks;
RESET geoacc.gpu_memory_limit;

-- A parallel plan (partial rasters in workers, added up by the combine function) equals the serial one
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
-- force_parallel_mode is called debug_parallel_query from PostgreSQL 16 on
SELECT CASE WHEN current_setting('server_version_num')::int >= 160000 THEN 'debug_parallel_query'
	ELSE 'force_parallel_mode' END AS force_parallel \gset
SET :force_parallel = on;
EXPLAIN (COSTS OFF)
SELECT gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 31)
FROM ais_tracks;
SELECT md5(gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 31))
	= :'cpu_md5' AS parallel_equals_serial FROM ais_tracks;
SET geoacc.gpu_memory_limit = '1MB';
SELECT md5(gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 31))
	= :'cpu_md5' AS parallel_equals_serial_1mb FROM ais_tracks;
RESET geoacc.gpu_memory_limit;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET :force_parallel;

-- The state type geoacc_density_state: what Citus's workers send to the coordinator (as text) and
-- parallel workers to the leader.  An aggregate without a final function shows the states; partial
-- states combined later (per source, then together) give the whole raster, bit for bit, and so do
-- states that went through their text and binary forms.
CREATE AGGREGATE dr_partial(geometry, box2d, int, int, text, int) (
	SFUNC = gpu_density_raster_transfn, STYPE = geoacc_density_state, COMBINEFUNC = gpu_density_raster_combinefn);
CREATE AGGREGATE dr_partial(geometry, box2d, int, int, text, int, boolean, text, float8) (
	SFUNC = gpu_density_raster_transfn, STYPE = geoacc_density_state, COMBINEFUNC = gpu_density_raster_combinefn);
CREATE AGGREGATE dr_merge(geoacc_density_state) (
	SFUNC = gpu_density_raster_combinefn, STYPE = geoacc_density_state, FINALFUNC = gpu_density_raster_finalfn);
CREATE FUNCTION dr_state_send(geoacc_density_state) RETURNS bytea LANGUAGE internal IMMUTABLE STRICT
	AS 'byteasend';
CREATE TEMP TABLE dr_states AS
SELECT source, dr_partial(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 31) AS st,
	dr_partial(traj, 'BOX(560000 4040000,640000 4120000)'::box2d, 200, 200, 'cosine', 5, true, 'time',
		1 + piece % 3) AS st_sums
FROM ais_tracks GROUP BY source;
SELECT md5(dr_merge(st)) = :'cpu_md5' AS merged_equal_whole,
	md5(dr_merge(st::text::geoacc_density_state)) = :'cpu_md5' AS text_round_trip,
	md5(dr_merge(st_sums)) = (SELECT md5(gpu_density_raster(traj, 'BOX(560000 4040000,640000 4120000)'::box2d,
		200, 200, 'cosine', 5, true, 'time', 1 + piece % 3)) FROM ais_tracks) AS sums_merged_equal_whole,
	bool_and(st_sums::text::geoacc_density_state::text = st_sums::text) AS sums_text_stable
FROM dr_states;
-- the binary form (COPY BINARY, the binary protocol): the flat bytes, read back the same
-- (through a file in the server's data directory)
CREATE TEMP TABLE dr_states_back (source text, st geoacc_density_state);
DO $$
DECLARE
	path text := current_setting('data_directory') || '/geoacc_dr_states.bin';
BEGIN
	EXECUTE format('COPY (SELECT source, st FROM dr_states ORDER BY source) TO %L (FORMAT binary)', path);
	EXECUTE format('COPY dr_states_back FROM %L (FORMAT binary)', path);
END $$;
SELECT count(*) AS states, bool_and(dr_state_send(b.st) = dr_state_send(s.st)) AS binary_round_trip,
	bool_and(b.st::text = s.st::text) AS same_text
FROM dr_states_back b JOIN dr_states s USING (source);
-- a compact form: the cells of 306 x 636 (with the kernel's margin) take far less than 4 bytes each
SELECT max(octet_length(dr_state_send(st))) < 300 * 600 / 4 AS compact,
	max(length(st::text)) < 4 * max(octet_length(dr_state_send(st))) / 3 + 4 AS base64_text
FROM dr_states;
-- a state of one argument list does not combine with another's
SELECT dr_merge(st) FROM (SELECT st FROM dr_states UNION ALL SELECT st_sums FROM dr_states) s;
-- bad states are refused with the reason
SELECT 'not base64!'::geoacc_density_state;
SELECT ''::geoacc_density_state;
SELECT encode('GDS1', 'base64')::geoacc_density_state;
SELECT encode(overlay(dr_state_send(st) PLACING '\x00'::bytea FROM 1), 'base64')::geoacc_density_state
FROM dr_states WHERE source = 'ny_harbor_2020-12-08';
SELECT encode(substring(dr_state_send(st) FROM 1 FOR 90), 'base64')::geoacc_density_state
FROM dr_states WHERE source = 'ny_harbor_2020-12-08';
SELECT encode(dr_state_send(st) || '\x00'::bytea, 'base64')::geoacc_density_state
FROM dr_states WHERE source = 'ny_harbor_2020-12-08';
-- width 0 (bytes 37 to 40), kernel 9 (bytes 45 to 48), a bound of 1 on every cell (bytes 73 to 80)
SELECT encode(overlay(dr_state_send(st) PLACING '\x00000000'::bytea FROM 37), 'base64')::geoacc_density_state
FROM dr_states WHERE source = 'ny_harbor_2020-12-08';
SELECT encode(overlay(dr_state_send(st) PLACING '\x09000000'::bytea FROM 45), 'base64')::geoacc_density_state
FROM dr_states WHERE source = 'ny_harbor_2020-12-08';
SELECT encode(overlay(dr_state_send(st) PLACING '\x0100000000000000'::bytea FROM 73), 'base64')::geoacc_density_state
FROM dr_states WHERE source = 'ny_harbor_2020-12-08';
-- the transition and combine functions work only inside aggregates
SELECT gpu_density_raster_combinefn(st, st) FROM dr_states LIMIT 1;
DROP AGGREGATE dr_partial(geometry, box2d, int, int, text, int);
DROP AGGREGATE dr_partial(geometry, box2d, int, int, text, int, boolean, text, float8);
DROP AGGREGATE dr_merge(geoacc_density_state);
DROP FUNCTION dr_state_send(geoacc_density_state);

-- PNG heatmaps: signature, size from the IHDR chunk, colour type 3 (a palette of the colormap's 256
-- colours; with a tRNS chunk when some pixels are transparent), 2 (RGB) or 6 (RGBA) for ramps
CREATE TEMP TABLE dr_png AS
SELECT gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600) AS r FROM ais_tracks;
CREATE FUNCTION dr_png_info(png bytea) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
	SELECT format('signature %s, %s x %s, colour type %s',
		substring(png FROM 1 FOR 8) = '\x89504e470d0a1a0a'::bytea,
		(get_byte(png, 16) << 24) | (get_byte(png, 17) << 16) | (get_byte(png, 18) << 8) | get_byte(png, 19),
		(get_byte(png, 20) << 24) | (get_byte(png, 21) << 16) | (get_byte(png, 22) << 8) | get_byte(png, 23),
		get_byte(png, 25)) $$;
SELECT dr_png_info(geoacc_raster_png(r)) FROM dr_png;
-- six colormaps times three scales: eighteen different images, each the same every time
SELECT count(DISTINCT md5(geoacc_raster_png(r, c, s))) AS images,
	bool_and(geoacc_raster_png(r, c, s) = geoacc_raster_png(r, c, s)) AS deterministic
FROM dr_png, unnest(ARRAY['viridis', 'magma', 'inferno', 'plasma', 'cividis', 'gray']) c,
	unnest(ARRAY['linear', 'sqrt', 'log']) s;
SELECT geoacc_raster_png(r, 'Viridis', 'LOG') = geoacc_raster_png(r) AS names_ignore_case FROM dr_png;
-- the same band flagged as having nodata 0: empty cells take an unused palette index, transparent by tRNS
SELECT dr_png_info(geoacc_raster_png(set_byte(r, 61, 64 + 11))) FROM dr_png;
-- a raster whose every pixel is equal still makes an image
SELECT dr_png_info(geoacc_raster_png(gpu_density_raster('LINESTRING M (0.5 0.5 1, 0.6 0.6 2)'::geometry,
	ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 1, 1)));

-- one colour scale for many tiles or frames: vmin and vmax (NULL: the band's own); values beyond take
-- the end colours; transparent_zero makes empty cells transparent (a tRNS chunk)
SELECT geoacc_raster_png(r, 'viridis', 'linear', vmin => 0) = geoacc_raster_png(r, 'viridis', 'linear')
		AS vmin_0_is_the_minimum,
	geoacc_raster_png(r, 'viridis', 'linear', 0, 1e9) <> geoacc_raster_png(r, 'viridis', 'linear') AS wider_scale_differs,
	geoacc_raster_png(r, 'gray', 'linear', 0, 1e-300) = geoacc_raster_png(r, 'gray', 'linear', 0, 1e-299)
		AS saturated_alike,
	dr_png_info(geoacc_raster_png(r, transparent_zero => true)) AS transparent_zero,
	geoacc_raster_png(NULL, 'viridis') IS NULL AND geoacc_raster_png(r, NULL) IS NULL AS nulls
FROM dr_png;
SELECT geoacc_raster_png(r, 'viridis', 'linear', 5, 5) FROM dr_png;
SELECT geoacc_raster_png(r, 'viridis', 'linear', 'NaN', 1) FROM dr_png;

-- The palette: PLTE holds matplotlib's 256 colours (viridis from #440154 to #fde725, entry 128 #21918c);
-- with transparent pixels, tRNS makes one unused entry transparent and the others opaque
CREATE FUNCTION dr_png_chunks(png bytea) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
	pos int := 8;
	len int;
	chunks text[] := '{}';
BEGIN
	WHILE pos < length(png) LOOP
		len := (get_byte(png, pos) << 24) | (get_byte(png, pos + 1) << 16) | (get_byte(png, pos + 2) << 8)
			| get_byte(png, pos + 3);
		chunks := chunks || format('%s(%s)', convert_from(substring(png FROM pos + 5 FOR 4), 'SQL_ASCII'), len);
		pos := pos + 12 + len;
	END LOOP;
	RETURN array_to_string(chunks, ' ');
END $$;
SELECT regexp_replace(dr_png_chunks(geoacc_raster_png(r)), 'IDAT\(\d+\)', 'IDAT', 'g') AS chunks,
	encode(substring(geoacc_raster_png(r) FROM 42 FOR 3), 'hex') AS first,
	encode(substring(geoacc_raster_png(r) FROM 42 + 3 * 128 FOR 3), 'hex') AS middle,
	encode(substring(geoacc_raster_png(r) FROM 42 + 3 * 255 FOR 3), 'hex') AS last,
	encode(substring(geoacc_raster_png(r, 'magma') FROM 42 FOR 3), 'hex') AS magma_first,
	encode(substring(geoacc_raster_png(r, 'gray') FROM 42 + 3 * 200 FOR 3), 'hex') AS gray_200
FROM dr_png;
SELECT regexp_replace(dr_png_chunks(png), 'IDAT\(\d+\)', 'IDAT', 'g') AS chunks,
	get_byte(png, 33 + 12 + 768 + 8) AS alpha_0, get_byte(png, 33 + 12 + 768 + 8 + 1) AS alpha_1
FROM (SELECT geoacc_raster_png(r, transparent_zero => true) AS png FROM dr_png) x;

-- Ramps in the style of ST_ColorMap: lines "value R G B [A]" (value a pixel value, a percentage of the colour
-- scale, or nv for nodata; fields split by spaces, tabs, commas or colons; # comments), interpolated: RGB, or
-- RGBA with alpha or transparent pixels.  The order of the lines does not matter; percentages are positions
-- on the scale from vmin to vmax, values are placed like the pixels.
SELECT dr_png_info(geoacc_raster_png(r, E'0% 0 0 255\n50% 255 255 255\n100% 255 0 0', 'linear')) AS diverging,
	dr_png_info(geoacc_raster_png(r, E'0% 0 0 255 0\n100% 255 0 0 255', 'linear')) AS with_alpha,
	dr_png_info(geoacc_raster_png(r, E'0% 0 0 255\n100% 255 0 0', 'linear', transparent_zero => true)) AS transparent_zero,
	dr_png_info(geoacc_raster_png(r, E'nv 0 0 0 255\n0% 0 0 255\n100% 255 0 0', 'linear', transparent_zero => true))
		AS opaque_nodata_colour
FROM dr_png;
SELECT geoacc_raster_png(r, E'0% 0 0 255\n50% 255 255 255\n100% 255 0 0', 'sqrt')
		= geoacc_raster_png(r, E'# a diverging ramp\n100%,255,0,0\n\n50%:255:255:255\n0%\t0 0 255', 'sqrt') AS order_free,
	geoacc_raster_png(r, E'0% 0 0 255\n100% 255 0 0', 'linear', 0, 50)
		= geoacc_raster_png(r, E'0 0 0 255\n50 255 0 0', 'linear', 0, 50) AS values_as_percentages,
	geoacc_raster_png(r, E'0% 0 0 255\n100% 255 0 0', 'linear', 0, 50)
		<> geoacc_raster_png(r, E'0 0 0 255\n25 255 0 0', 'linear', 0, 50) AS values_placed,
	geoacc_raster_png(r, E'0% 10 20 30\n100% 10 20 30') = geoacc_raster_png(r, '0 10 20 30') AS one_colour
FROM dr_png;
SELECT geoacc_raster_png(r, E'0% 0 0 255\n50% 300 0 0') FROM dr_png;
SELECT geoacc_raster_png(r, E'0% 0 0') FROM dr_png;
SELECT geoacc_raster_png(r, E'low 0 0 0') FROM dr_png;
SELECT geoacc_raster_png(r, E'0 0 0 0 0 0') FROM dr_png;
SELECT geoacc_raster_png(r, E'# nothing\n') FROM dr_png;

-- a large PNG stops at a cancel or statement_timeout (it is written row by row)
CREATE TEMP TABLE dr_big AS
SELECT gpu_density_raster('LINESTRING M (0.5 0.5 1, 0.6 0.6 2)'::geometry, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)),
	4096, 4096, 'uniform', 1) AS r;
SET statement_timeout = '100ms';
SELECT length(geoacc_raster_png(r)) FROM dr_big;
RESET statement_timeout;
DROP TABLE dr_big;

-- the extent as a geometry (an envelope such as ST_TileEnvelope) of the trajectories' SRID: the same raster
-- as its box2d; another SRID is an error; a WARNING when no weight fell inside the extent
SELECT gpu_density_raster(traj, ST_MakeEnvelope(369000, 3984000, 647000, 4526000, 32618), 300, 600)
	= (SELECT r FROM dr_png) AS geometry_extent_same
FROM ais_tracks;
SELECT gpu_density_raster(traj, ST_MakeEnvelope(369000, 3984000, 647000, 4526000, 3857), 300, 600) FROM ais_tracks;
SELECT length(gpu_density_raster(traj, ST_MakeEnvelope(0, 0, 10, 10, 32618), 30, 30)) AS empty_raster_bytes
FROM ais_tracks;
SELECT gpu_density_raster(traj, 'SRID=32618;POLYGON EMPTY'::geometry, 30, 30) FROM ais_tracks;

-- The inputs users have.  POINT and MULTIPOINT rows (raw position reports): each point is a sample, never
-- joined; lines without M (never read in the count mode); MULTILINESTRING part by part (no sample between
-- parts); Z is ignored.  EMPTY rows add nothing.
SELECT dr_counts(ARRAY['POINT (0.5 0.5)', 'MULTIPOINT ((2.5 0.5), (2.6 0.6), (0.5 3.5))', 'POINT Z (3.5 3.5 9)',
	'POINT EMPTY', 'MULTIPOINT EMPTY'], 4, 4);
SELECT dr_counts(ARRAY['LINESTRING (0.5 0.5, 3.5 3.5)'], 4, 4) = dr_counts(ARRAY['LINESTRING M (0.5 0.5 1, 3.5 3.5 2)'], 4, 4)
	AS without_m_as_with_m;
SELECT dr_counts(ARRAY['MULTILINESTRING M ((0.5 3.5 1, 3.5 3.5 2), (0.5 0.5 3, 3.5 0.5 4))'], 4, 4);
SELECT dr_counts(ARRAY['MULTILINESTRING ((0.5 3.5, 3.5 3.5), EMPTY)', 'LINESTRING EMPTY'], 4, 4);
-- the AIS tracks as raw position reports (their vertices as MULTIPOINTs) give the raster without interpolation
SELECT gpu_density_raster(ST_Points(traj), 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600)
	= gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 7, false)
	AS points_as_tracks_without_interpolation
FROM ais_tracks;

-- Weights (one per row, NULL leaves the row out): each sample adds its row's weight.  A weight of 1 gives
-- the counts bit for bit; the AIS tracks weighted by id % 5 give the sum over the five classes of tracks.
SELECT dr_nonzero(gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(4, 4)), 4, 4, 'gaussian', 1,
	true, 'count', w))
FROM (VALUES ('LINESTRING (0.5 0.5, 3.5 0.5)'::geometry, 2.5), ('POINT (0.5 0.5)', 0.25),
	('POINT (1.5 1.5)', NULL)) t(traj, w);
SELECT gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 31, true, 'count', 1)
	= gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 31) AS weight_1_is_count
FROM ais_tracks;
WITH weighted AS (
	SELECT gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 150, 300, 'gaussian', 1, true,
		'count', id % 5) AS r
	FROM ais_tracks
), per_class AS (
	SELECT c.row_no, c.col_no, sum(k * c.value) AS value
	FROM generate_series(1, 4) k,
		LATERAL (SELECT gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 150, 300, 'gaussian', 1)
			AS r FROM ais_tracks WHERE id % 5 = k) x,
		dr_cells(x.r) c
	GROUP BY 1, 2
)
SELECT count(*) FILTER (WHERE a.value <> b.value) AS mismatches, sum(a.value) AS total
FROM dr_cells((SELECT r FROM weighted)) a JOIN per_class b USING (row_no, col_no);

-- The time mode: each segment adds the time between its ends, in hours (vessel-hours per cell), half a
-- share at each end and a share at each of the n - 1 samples between (n shares in all).  8 hours over 4
-- cells; without interpolation half at each end; a vessel lying still keeps its time in its cell.
SELECT dr_nonzero(gpu_density_raster('LINESTRING M (0.5 0.5 0, 4.5 0.5 28800)'::geometry,
	ST_MakeBox2D(ST_Point(0, 0), ST_Point(8, 2)), 8, 2, 'gaussian', 1, true, 'time'));
SELECT dr_nonzero(gpu_density_raster('LINESTRING M (0.5 0.5 0, 4.5 0.5 28800)'::geometry,
	ST_MakeBox2D(ST_Point(0, 0), ST_Point(8, 2)), 8, 2, 'gaussian', 1, false, 'time'));
SELECT dr_nonzero(gpu_density_raster('LINESTRING M (6.5 1.5 0, 6.6 1.5 3600, 6.7 1.6 5400)'::geometry,
	ST_MakeBox2D(ST_Point(0, 0), ST_Point(8, 2)), 8, 2, 'gaussian', 1, true, 'time'));
-- with weights, and MULTILINESTRING M part by part (no time between parts)
SELECT dr_nonzero(gpu_density_raster('MULTILINESTRING M ((0.5 0.5 0, 0.6 0.5 3600), (2.5 0.5 7200, 2.6 0.5 10800))'::geometry,
	ST_MakeBox2D(ST_Point(0, 0), ST_Point(8, 2)), 8, 2, 'gaussian', 1, true, 'time', 3));
-- the AIS tracks: the raster's raw total is their hours inside the extent (tracks wholly inside it: all of
-- them, to within the fixed point's rounding of each share, here 3.6 s in all)
SELECT abs(sum(c.value) - (SELECT sum(ST_M(ST_EndPoint(traj)) - ST_M(ST_StartPoint(traj))) / 3600 FROM ais_tracks))
	< 1e-3 AS total_is_vessel_hours
FROM dr_cells((SELECT gpu_density_raster(traj, 'BOX(300000 3900000,700000 4600000)'::box2d, 100, 175, 'gaussian', 1,
	true, 'time') FROM ais_tracks)) c;

-- Bad arguments
CREATE TEMP TABLE dr_one AS SELECT ST_SetSRID('LINESTRING M (0.5 0.5 1, 2.5 0.5 2)'::geometry, 32618) AS traj;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 0, 10) FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, -5) FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 70000, 10) FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 9000, 9000) FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10, 'box') FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10, 'gaussian', 4) FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10, 'gaussian', 0) FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10, 'gaussian', 65) FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10, NULL) FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10, 'gaussian', 7, NULL) FROM dr_one;
SELECT gpu_density_raster(traj, NULL::box2d, 10, 10) FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), NULL, 10) FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(0, 10)), 10, 10) FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point('Infinity', 10)), 10, 10) FROM dr_one;
-- PostGIS normalizes an inverted box, so it stands for the same extent
SELECT gpu_density_raster(traj, 'BOX(10 10,0 0)'::box2d, 10, 10)
	= gpu_density_raster(traj, 'BOX(0 0,10 10)'::box2d, 10, 10) AS inverted_box_is_normalized FROM dr_one;
-- arguments that change from row to row
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), w, 10)
FROM dr_one, (VALUES (10), (20)) v(w);
-- geometries that are neither points nor lines, non-finite coordinates, and mixed SRIDs
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10)
FROM (VALUES ('LINESTRING M (0 0 1, 1 1 2)'::geometry), ('POLYGON ((0 0, 1 0, 1 1, 0 0))')) t(traj);
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10)
FROM (VALUES ('GEOMETRYCOLLECTION (POINT (0 0))'::geometry)) t(traj);
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10)
FROM (VALUES ('MULTIPOINT (0 0, 1 1)'::geometry), (ST_MakePoint('NaN', 0))) t(traj);
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10)
FROM (VALUES (ST_Collect(ST_MakeLine(ST_MakePoint(0, 0), ST_MakePoint(1, 1)),
	ST_MakeLine(ST_MakePoint(0, 0), ST_MakePoint(1, 'Infinity'))))) t(traj);
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10)
FROM (VALUES ('LINESTRING M (0 0 1, 1 1 2)'::geometry), ('LINESTRING M (0 0 5, 1 1 5)')) t(traj);
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10)
FROM (VALUES (ST_SetSRID('LINESTRING M (0 0 1, 1 1 2)'::geometry, 32618)),
	(ST_SetSRID('LINESTRING M (0 0 1, 1 1 2)'::geometry, 4326))) t(traj);
-- named arguments are not available for aggregates: PostgreSQL refuses them
SELECT gpu_density_raster(traj, extent => ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), width => 10, height => 10)
FROM dr_one;
-- modes and weights
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10, 'gaussian', 7, true, 'hours') FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10, 'gaussian', 7, true, NULL) FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10, 'gaussian', 7, true, 'count', -1)
FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10, 'gaussian', 7, true, 'count', 'NaN')
FROM dr_one;
SELECT gpu_density_raster(traj, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10, 'gaussian', 7, true, 'count', 1e9)
FROM dr_one;
SELECT gpu_density_raster('POINT M (0 0 1)'::geometry, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10, 'gaussian',
	7, true, 'time');
SELECT gpu_density_raster('LINESTRING (0 0, 1 1)'::geometry, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10, 10,
	'gaussian', 7, true, 'time');
SELECT gpu_density_raster('LINESTRING M (0 0 0, 1 1 1e15)'::geometry, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10,
	10, 'gaussian', 7, true, 'time');
SELECT gpu_density_raster('LINESTRING M (0 0 1, 1 1 1)'::geometry, ST_MakeBox2D(ST_Point(0, 0), ST_Point(1, 1)), 10,
	10, 'gaussian', 7, true, 'time');
-- kernels
SELECT geoacc_density_kernel('parabolic', 3);
SELECT geoacc_density_kernel('gaussian', 8);
-- PNG
SELECT geoacc_raster_png(r, 'jet') FROM dr_png;
SELECT geoacc_raster_png(r, 'viridis', 'cubic') FROM dr_png;
SELECT geoacc_raster_png('\x0102'::bytea);
SELECT geoacc_raster_png(set_byte(r, 0, 7)) FROM dr_png;
SELECT geoacc_raster_png(substring(r FROM 1 FOR 1000)) FROM dr_png;
SELECT geoacc_raster_png(set_byte(r, 1, 1)) FROM dr_png;
SELECT geoacc_raster_png(set_byte(r, 3, 0)) FROM dr_png;
SELECT geoacc_raster_png(set_byte(set_byte(r, 57, 0), 58, 0)) FROM dr_png;
SELECT geoacc_raster_png(set_byte(r, 61, 9)) FROM dr_png;
SELECT geoacc_raster_png(set_byte(r, 61, 128 + 11)) FROM dr_png;

DROP FUNCTION dr_png_info(bytea);
DROP FUNCTION dr_png_chunks(bytea);
DROP FUNCTION dr_tile_mismatches(float8, float8, float8, float8, int, int, text, int, text, boolean);
DROP FUNCTION dr_counts(text[], int, int, boolean);
DROP FUNCTION dr_nonzero(bytea);
DROP FUNCTION dr_cells(bytea);
DROP FUNCTION dr_f64(bytea, int);
DROP FUNCTION dr_u16(bytea, int);
