-- Objects the fuzz driver (fuzz.py) runs its cases with: the result table, the
-- wrappers that turn a case into pass or fail, and an independent TWED in
-- numeric precision.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS geoacc CASCADE;
CREATE EXTENSION geoacc CASCADE;

-- a user's types whose names say "geometry" (decided by name, they once crashed the server)
DROP SCHEMA IF EXISTS fuzz_evil CASCADE;
CREATE SCHEMA fuzz_evil;
CREATE TYPE fuzz_evil.geometry AS ENUM ('x');
CREATE DOMAIN fuzz_evil.int_geometry AS int;
CREATE DOMAIN fuzz_evil.bytea_geometry AS bytea;
CREATE DOMAIN fuzz_evil.id AS bigint;

-- Run one case (SQL ending in a boolean) and record whether it passed in the session's temporary
-- fuzz_result; an ERROR fails it.
CREATE OR REPLACE FUNCTION fuzz_record(id int, name text, cond text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	ok boolean;
	state text;
	message text;
BEGIN
	PERFORM set_config('fuzz.detail', '', false);
	EXECUTE 'SELECT ' || cond INTO ok;
	INSERT INTO fuzz_result VALUES (id, coalesce(ok, false),
		nullif(current_setting('fuzz.detail'), '') || CASE WHEN ok IS NULL THEN ' (NULL)' ELSE '' END);
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
	INSERT INTO fuzz_result VALUES (id, false, format('ERROR %s: %s', state, message));
END
$$;

-- A hostile case: a result or a clean ERROR passes; an internal error (XX000) fails.
CREATE OR REPLACE FUNCTION fuzz_try(sql text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	state text;
	message text;
BEGIN
	EXECUTE sql;
	RETURN true;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
	IF state = 'XX000' OR message ~* 'memory alloc request|unexpected|cache lookup' THEN
		PERFORM set_config('fuzz.detail', format('ERROR %s: %s', state, message), false);
		RETURN false;
	END IF;
	RETURN true;
END
$$;

-- got within rel of want (numeric); infinity where want is beyond the float8 range.  got's
-- shortest decimal form is within half a unit in the last place of it: far below rel.
CREATE OR REPLACE FUNCTION fuzz_close(got float8, want numeric, rel float8) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	IF got IS NULL OR want IS NULL THEN
		PERFORM set_config('fuzz.detail', format('got %s, want %s', got, want), false);
		RETURN got IS NULL AND want IS NULL;
	END IF;
	IF abs(want) > 1.7976931348623157e308 THEN
		RETURN got = 'Infinity';
	END IF;
	IF got = 'Infinity' OR got = '-Infinity' OR got = 'NaN'
		OR abs(got::text::numeric - want) > rel::numeric * abs(want) + 1e-300 THEN
		PERFORM set_config('fuzz.detail', format('got %s, want %s', got, want), false);
		RETURN false;
	END IF;
	RETURN true;
END
$$;

-- float32 against the reference: |got - want| <= scale * (want + extent), the README's bound
-- 2^-22 (n + m) (d + q E) with scale = 2^-22 (n + m) and extent = q E.
CREATE OR REPLACE FUNCTION fuzz_within(got float8, want numeric, scale float8, extent float8) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	IF got IS NULL OR want IS NULL OR got = 'Infinity' OR got = 'NaN'
		OR abs(got::text::numeric - want) > scale::numeric * (want + extent::numeric) THEN
		PERFORM set_config('fuzz.detail', format('got %s, want %s, allowed %s', got, want,
			scale::numeric * (want + extent::numeric)), false);
		RETURN false;
	END IF;
	RETURN true;
END
$$;

-- The Lp distance of the definition, in numeric, between points given as 1 x k arrays; the powers
-- are taken of |x - y| / max |x - y|, exactly the same sum scaled, since numeric's own powers of
-- small numbers lose their digits past its scale limit.
CREATE OR REPLACE FUNCTION fuzz_lp(x numeric[], y numeric[], degree int, root boolean) RETURNS numeric
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	s numeric := 0;
	top numeric := 0;
	k int := array_length(x, 2);
BEGIN
	FOR d IN 1 .. k LOOP
		top := greatest(top, abs(x[1][d] - y[1][d]));
	END LOOP;
	IF top = 0 THEN
		RETURN 0;
	END IF;
	FOR d IN 1 .. k LOOP
		s := s + CASE WHEN degree = 1 OR (root AND k = 1) THEN abs(x[1][d] - y[1][d]) / top
			ELSE power(round(abs(x[1][d] - y[1][d]) / top, 60), degree) END;
	END LOOP;
	IF NOT root OR degree = 1 OR k = 1 THEN
		RETURN CASE WHEN degree = 1 OR (root AND k = 1) THEN s * top ELSE s * power(top, degree) END;
	END IF;
	RETURN top * CASE WHEN degree = 2 THEN sqrt(s) ELSE exp(ln(s) / degree) END;
END
$$;

-- The values come as numeric, the exact values of the float8 inputs (float8::numeric keeps 15 digits).
CREATE OR REPLACE FUNCTION fuzz_twed_reference(a numeric[], ta numeric[], b numeric[], tb numeric[], nu float8,
	lambda float8, degree int, root boolean) RETURNS numeric LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	n int := array_length(a, 1);
	m int := array_length(b, 1);
	k int := CASE WHEN array_ndims(a) = 2 THEN array_length(a, 2) ELSE 1 END;
	pa numeric[][];
	pb numeric[][];
	d numeric[];
	del_a numeric[];
	del_b numeric[];
	c numeric[];
	t_a numeric[];
	t_b numeric[];
	w int := m + 1;
	inf numeric := 1e100000;
	match numeric;
BEGIN
	-- rows as 1-D arrays: point i of a is pa[i], with point 0 at the origin
	pa := array_fill(0::numeric, ARRAY[n + 1, k]);
	pb := array_fill(0::numeric, ARRAY[m + 1, k]);
	t_a := array_fill(0::numeric, ARRAY[n + 1], ARRAY[0]);
	t_b := array_fill(0::numeric, ARRAY[m + 1], ARRAY[0]);
	FOR i IN 1 .. n LOOP
		t_a[i] := ta[i];
		FOR j IN 1 .. k LOOP
			pa[i + 1][j] := CASE WHEN k = 1 AND array_ndims(a) = 1 THEN a[i] ELSE a[i][j] END;
		END LOOP;
	END LOOP;
	FOR i IN 1 .. m LOOP
		t_b[i] := tb[i];
		FOR j IN 1 .. k LOOP
			pb[i + 1][j] := CASE WHEN k = 1 AND array_ndims(b) = 1 THEN b[i] ELSE b[i][j] END;
		END LOOP;
	END LOOP;
	del_a := array_fill(0::numeric, ARRAY[n + 1], ARRAY[0]);
	del_b := array_fill(0::numeric, ARRAY[m + 1], ARRAY[0]);
	FOR i IN 1 .. n LOOP
		del_a[i] := fuzz_lp(pa[i:i][:], pa[i + 1:i + 1][:], degree, root) + nu::text::numeric * (t_a[i] - t_a[i - 1])
			+ lambda::text::numeric;
	END LOOP;
	FOR j IN 1 .. m LOOP
		del_b[j] := fuzz_lp(pb[j:j][:], pb[j + 1:j + 1][:], degree, root) + nu::text::numeric * (t_b[j] - t_b[j - 1])
			+ lambda::text::numeric;
	END LOOP;
	-- c(i, j) and D(i, j) at (i * w + j)
	c := array_fill(0::numeric, ARRAY[(n + 1) * w], ARRAY[0]);
	d := array_fill(inf, ARRAY[(n + 1) * w], ARRAY[0]);
	FOR i IN 0 .. n LOOP
		FOR j IN 0 .. m LOOP
			c[i * w + j] := fuzz_lp(pa[i + 1:i + 1][:], pb[j + 1:j + 1][:], degree, root)
				+ nu::text::numeric * abs(t_a[i] - t_b[j]);
		END LOOP;
	END LOOP;
	d[0] := 0;
	FOR i IN 1 .. n LOOP
		FOR j IN 1 .. m LOOP
			match := d[(i - 1) * w + j - 1] + c[i * w + j] + c[(i - 1) * w + j - 1];
			d[i * w + j] := least(match, d[(i - 1) * w + j] + del_a[i], d[i * w + j - 1] + del_b[j]);
		END LOOP;
	END LOOP;
	RETURN d[n * w + m];
END
$$;

-- gpu_segment_join of the tracks in `tracks` (a VALUES list of (id, trajectory)) against PostGIS:
-- ST_CPAWithin over every pair of 2-point segments of different tracks (in 3D with use_z, else of
-- the segments without Z, by the Z rule of every trajectory function), the same rows (but for
-- pairs whose closest approach is within 1e-9 of the distance, where the two roundings may
-- disagree), and ST_DistanceCPA equal to cpa_distance to 1e-9.
DROP FUNCTION IF EXISTS fuzz_segment_join_agrees(text, float8, text);
CREATE OR REPLACE FUNCTION fuzz_segment_join_agrees(tracks text, d float8, method text, use_z boolean)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	bad bigint;
BEGIN
	EXECUTE format($q$
		WITH t(id, g) AS (%1$s),
		segs AS (SELECT id, n AS seg, CASE WHEN %5$L THEN s ELSE ST_Force3DM(s) END AS s
			FROM t, generate_series(1, ST_NPoints(g) - 1) n,
				LATERAL (SELECT ST_MakeLine(ST_PointN(g, n), ST_PointN(g, n + 1)) AS s) m),
		ref AS (SELECT a.id AS a_id, a.seg AS a_seg, b.id AS b_id, b.seg AS b_seg
			FROM segs a JOIN segs b ON a.id < b.id WHERE ST_CPAWithin(a.s, b.s, %2$s)),
		got AS (SELECT * FROM gpu_segment_join(%3$L, NULL, %2$s::float8, %4$L, %5$L)),
		diff AS (SELECT coalesce(r.a_id, g.a_id) AS a_id, coalesce(r.a_seg, g.a_seg) AS a_seg,
				coalesce(r.b_id, g.b_id) AS b_id, coalesce(r.b_seg, g.b_seg) AS b_seg, g.cpa_distance,
				r.a_id IS NULL OR g.a_id IS NULL AS one_side
			FROM ref r FULL JOIN got g USING (a_id, a_seg, b_id, b_seg))
		SELECT count(*) FROM diff
			JOIN segs sa ON sa.id = diff.a_id AND sa.seg = diff.a_seg
			JOIN segs sb ON sb.id = diff.b_id AND sb.seg = diff.b_seg
		WHERE (one_side AND abs(ST_DistanceCPA(sa.s, sb.s) - %2$s) > 1e-9 * %2$s)
			OR (NOT one_side AND abs(ST_DistanceCPA(sa.s, sb.s) - cpa_distance) > 1e-9 * greatest(1, cpa_distance))
		$q$, tracks, d, 'SELECT * FROM (' || tracks || ') t(id, g)', method, use_z) INTO bad;
	IF bad > 0 THEN
		PERFORM set_config('fuzz.detail', format('%s pairs disagree with PostGIS', bad), false);
	END IF;
	RETURN bad = 0;
END
$$;

-- gpu_mesh_clip of the TIN `mesh` (SQL text): the nx x ny x nz tiles of its extent add up to its area
-- (ST_Area, to 1e-9 relative), and a box at fraction f of the extent clips the same as one box of the
-- multi-box form and as the PLY form read back; no triangle of a tile, of the one box or of its PLY form
-- has two corners at one position (fuzz_repeated_corners).
CREATE OR REPLACE FUNCTION fuzz_mesh_clip_agrees(mesh text, nx int, ny int, nz int, f float8) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	m geometry;
	whole float8;
	tiles float8;
	perimeter float8;
	slack float8;
	box box3d;
	single geometry;
	multi geometry;
	ply geometry;
	repeated bigint;
BEGIN
	EXECUTE 'SELECT ' || mesh INTO m;
	-- areas measured from the mesh's corner (exact differences): at UTM magnitudes ST_Area's products cancel
	whole := ST_Area(ST_Translate(m, -ST_XMin(m), -ST_YMin(m)));
	SELECT coalesce(sum(ST_Area(ST_Translate(c, -ST_XMin(m), -ST_YMin(m)))), 0),
		coalesce(sum(ST_Perimeter(c)), 0) + ST_Perimeter(m), coalesce(sum(fuzz_repeated_corners(c)), 0)
		INTO tiles, perimeter, repeated
	FROM geoacc_tile_grid(Box3D(m), nx, ny, nz) g, gpu_mesh_clip(m, g.box) c;
	-- a cut point is rounded to the coordinates' ulp: triangles a few ulps wide (1e-3 at UTM
	-- magnitudes) can be held to that, not to 1e-9
	slack := 16 * 2.220446049250313e-16 * greatest(abs(ST_XMin(m)), abs(ST_XMax(m)), abs(ST_YMin(m)),
		abs(ST_YMax(m))) * perimeter;
	box := ST_3DMakeBox(ST_MakePoint(ST_XMin(m), ST_YMin(m), ST_ZMin(m)),
		ST_MakePoint(ST_XMin(m) + f * (ST_XMax(m) - ST_XMin(m)), ST_YMin(m) + f * (ST_YMax(m) - ST_YMin(m)),
			ST_ZMax(m)));
	single := gpu_mesh_clip(m, box);
	SELECT c.mesh INTO multi FROM gpu_mesh_clip(m, ARRAY[box]) c;
	ply := geoacc_mesh_from_ply(gpu_mesh_clip(geoacc_mesh_to_ply(m), box), 32633);
	repeated := repeated + fuzz_repeated_corners(single) + fuzz_repeated_corners(ply);
	IF repeated > 0 THEN
		PERFORM set_config('fuzz.detail', format('%s triangles of the tiles, the one box and its PLY form have two '
			'corners at one position', repeated), false);
		RETURN false;
	END IF;
	IF abs(tiles - whole) > 1e-9 * whole + slack THEN
		PERFORM set_config('fuzz.detail', format('tiles add up to %s, the mesh has %s', tiles, whole), false);
		RETURN false;
	END IF;
	IF ST_AsEWKB(single) IS DISTINCT FROM ST_AsEWKB(multi) THEN
		PERFORM set_config('fuzz.detail', 'one box differs from the multi-box form', false);
		RETURN false;
	END IF;
	IF ST_AsEWKB(ST_Normalize(ply)) IS DISTINCT FROM ST_AsEWKB(ST_Normalize(single))
		AND (abs(ST_Area(ST_Translate(ply, -ST_XMin(m), -ST_YMin(m))) - ST_Area(ST_Translate(single, -ST_XMin(m),
			-ST_YMin(m)))) > 1e-9 * ST_Area(ST_Translate(single, -ST_XMin(m), -ST_YMin(m))) + slack
			OR ST_NumGeometries(ply) IS DISTINCT FROM ST_NumGeometries(single)) THEN
		PERFORM set_config('fuzz.detail', format('the PLY form has %s triangles, area %s; the TIN form %s, %s',
			ST_NumGeometries(ply), ST_Area(ply), ST_NumGeometries(single), ST_Area(single)), false);
		RETURN false;
	END IF;
	RETURN true;
END
$$;
-- gpu_make_trajectories of the fixes (id, t, geom) of `fixes` (a query; t in epoch seconds, float8) against
-- the SQL pipeline: DISTINCT ON (id, t) keeping the smallest X, then Y; a new part where t - lag(t) > max_gap
-- or ST_Distance / (t - lag(t)) > max_speed; ST_MakeLine ... ORDER BY t of parts of 2 fixes or more;
-- ST_Simplify (geoacc_dp_simplify for the synchronized distance).  as_timestamptz: the function reads t as
-- to_timestamp(t).  Every row the same to the bit, NULLs included.
CREATE OR REPLACE FUNCTION fuzz_make_trajectories_agrees(fixes text, as_timestamptz boolean, max_gap interval,
	tolerance float8, preserve_collapsed boolean, synchronized boolean, max_speed float8) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	rows bigint;
	same bigint;
BEGIN
	EXECUTE format($q$
		WITH firsts AS (
			SELECT DISTINCT ON (f.id, f.t) f.id, f.t + 0.0 AS t, f.geom
			FROM (%1$s) f(id, t, geom)
			WHERE f.id IS NOT NULL AND f.t IS NOT NULL AND f.geom IS NOT NULL AND NOT ST_IsEmpty(f.geom)
			ORDER BY f.id, f.t, ST_X(f.geom), ST_Y(f.geom)
		), starts AS (
			SELECT *, CASE WHEN t - lag(t) OVER w > coalesce(extract(epoch FROM $1)::float8, 'Infinity')
				OR ST_Distance(geom, lag(geom) OVER w) / (t - lag(t) OVER w) > coalesce($5, 'Infinity')
				THEN 1 ELSE 0 END AS starts
			FROM firsts WINDOW w AS (PARTITION BY id ORDER BY t)
		), parts AS (
			SELECT *, sum(starts) OVER (PARTITION BY id ORDER BY t) + 1 AS part FROM starts
		), lines AS (
			SELECT id, part, ST_SetSRID(ST_MakeLine(ST_MakePointM(ST_X(geom), ST_Y(geom), t) ORDER BY t),
				min(ST_SRID(geom))) AS line
			FROM parts GROUP BY id, part HAVING count(*) >= 2
		), ref AS (
			SELECT id::bigint AS object_id, part::int AS part, CASE WHEN $2 IS NULL THEN line
				WHEN $4 THEN geoacc_dp_simplify(line, $2, $3, synchronized => true)
				ELSE ST_Simplify(line, $2, $3) END AS trajectory
			FROM lines
		), got AS (
			SELECT * FROM gpu_make_trajectories(%2$L, $1, $2, $3, $4, $5)
		)
		SELECT count(*), count(*) FILTER (WHERE r.object_id IS NOT NULL AND g.object_id IS NOT NULL
			AND ST_AsEWKB(r.trajectory) IS NOT DISTINCT FROM ST_AsEWKB(g.trajectory))
		FROM ref r FULL JOIN got g USING (object_id, part)$q$,
		fixes, CASE WHEN as_timestamptz THEN 'SELECT id, to_timestamp(t), geom FROM (' || fixes || ') f(id, t, geom)'
			ELSE fixes END)
	INTO rows, same USING max_gap, tolerance, preserve_collapsed, synchronized, max_speed;
	IF rows <> same THEN
		PERFORM set_config('fuzz.detail', format('%s of %s rows differ from the SQL pipeline', rows - same, rows),
			false);
	END IF;
	RETURN rows = same;
END
$$;
RESET client_min_messages;

-- The density raster's state: partial states of an aggregate without a final function, their merge, and
-- their binary form with bytes changed.
DROP AGGREGATE IF EXISTS fuzz_density_partial(geometry, box2d, int, int, text, int);
CREATE AGGREGATE fuzz_density_partial(geometry, box2d, int, int, text, int) (
	SFUNC = gpu_density_raster_transfn, STYPE = geoacc_density_state, COMBINEFUNC = gpu_density_raster_combinefn);
DROP AGGREGATE IF EXISTS fuzz_density_merge(geoacc_density_state);
CREATE AGGREGATE fuzz_density_merge(geoacc_density_state) (
	SFUNC = gpu_density_raster_combinefn, STYPE = geoacc_density_state, FINALFUNC = gpu_density_raster_finalfn);
CREATE OR REPLACE FUNCTION fuzz_state_send(geoacc_density_state) RETURNS bytea LANGUAGE internal IMMUTABLE STRICT
	AS 'byteasend';
CREATE OR REPLACE FUNCTION fuzz_set_bytes(b bytea, changes int[][]) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	FOR i IN 1 .. array_length(changes, 1) LOOP
		IF changes[i][1] < length(b) THEN
			b := set_byte(b, changes[i][1], changes[i][2]);
		END IF;
	END LOOP;
	RETURN b;
END $$;

-- ------------------------------------------------------------------------------------------------
-- Cases that must fail in one way, measured memory, rows compared across forms and scales.

-- A line of /proc/self/status of this backend, in kB (VmHWM: peak resident memory; VmPeak: peak address space).
CREATE OR REPLACE FUNCTION fuzz_status_kb(field text) RETURNS bigint LANGUAGE sql AS $$
	SELECT substring(pg_read_file('/proc/self/status') FROM field || ':\s*(\d+) kB')::bigint
$$;

-- The statement `sql` (a malformed PLY file read) must end in a clean ERROR: SQLSTATE of class 22 or 54
-- (never XX000) and a message about PLY data; and the backend's peak resident memory (VmHWM, reset to the
-- current resident size first by writing 5 to /proc/self/clear_refs) must rise by at most limit_kb, its peak
-- address space (VmPeak, which cannot be reset: a rise only shows past the session's earlier peak) by at
-- most 1 GB.  what: how the file is malformed, for the failure's detail.
CREATE OR REPLACE FUNCTION fuzz_refused_small(sql text, what text, limit_kb bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	hwm bigint;
	peak bigint;
	state text := 'none';
	message text := '';
BEGIN
	EXECUTE 'COPY (SELECT 5) TO ''/proc/self/clear_refs''';
	hwm := fuzz_status_kb('VmHWM');
	peak := fuzz_status_kb('VmPeak');
	BEGIN
		EXECUTE sql;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
	END;
	hwm := fuzz_status_kb('VmHWM') - hwm;
	peak := fuzz_status_kb('VmPeak') - peak;
	IF hwm > limit_kb OR peak > 1048576 THEN
		PERFORM set_config('fuzz.detail', format('%s: peak resident memory rose by %s kB, peak address space by '
			'%s kB (%s %s)', what, hwm, peak, state, message), false);
		RETURN false;
	END IF;
	IF state = 'none' THEN
		PERFORM set_config('fuzz.detail', format('%s: no ERROR', what), false);
		RETURN false;
	END IF;
	IF state = 'XX000' OR state !~ '^(22|54)' OR message !~ 'PLY' OR message ~* 'memory alloc request' THEN
		PERFORM set_config('fuzz.detail', format('%s: ERROR %s: %s', what, state, message), false);
		RETURN false;
	END IF;
	RETURN true;
END
$$;

-- The statement `sql` must end in an ERROR of SQLSTATE `state` whose message matches the regular expression
-- `pattern` (anchored at both ends).
CREATE OR REPLACE FUNCTION fuzz_error_like(sql text, want_state text, pattern text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	state text;
	message text;
BEGIN
	EXECUTE sql;
	PERFORM set_config('fuzz.detail', format('no ERROR, want %s: %s', want_state, pattern), false);
	RETURN false;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
	IF state IS DISTINCT FROM want_state OR message !~ ('^(' || pattern || ')$') THEN
		PERFORM set_config('fuzz.detail', format('ERROR %s: %s; want %s: %s', state, message, want_state, pattern),
			false);
		RETURN false;
	END IF;
	RETURN true;
END
$$;

-- The same exactly: the ERROR of SQLSTATE `state` with the message `message`.
CREATE OR REPLACE FUNCTION fuzz_error_is(sql text, want_state text, want_message text) RETURNS boolean
LANGUAGE sql AS $$
	SELECT fuzz_error_like(sql, want_state, regexp_replace(want_message, '([][\\^$.|?*+(){}])', '\\\1', 'g'))
$$;

-- The two queries return the same rows (as multisets, every column compared with IS NOT DISTINCT FROM).
CREATE OR REPLACE FUNCTION fuzz_same_rows(a text, b text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	only_a bigint;
	only_b bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', a, b) INTO only_a;
	EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', b, a) INTO only_b;
	IF only_a > 0 OR only_b > 0 THEN
		PERFORM set_config('fuzz.detail', format('%s rows only in the first, %s only in the second', only_a, only_b),
			false);
		RETURN false;
	END IF;
	RETURN true;
END
$$;

-- Triangles of a TIN with two corners at the same position (x, y and z equal; -0 equals 0).
CREATE OR REPLACE FUNCTION fuzz_repeated_corners(m geometry) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
	SELECT count(*) FROM (
		SELECT ST_PointN(r, 1) AS p, ST_PointN(r, 2) AS q, ST_PointN(r, 3) AS s
		FROM (SELECT ST_ExteriorRing(d.geom) AS r FROM ST_Dump(m) d) t) c
	WHERE (ST_X(p) = ST_X(q) AND ST_Y(p) = ST_Y(q) AND ST_Z(p) = ST_Z(q))
		OR (ST_X(q) = ST_X(s) AND ST_Y(q) = ST_Y(s) AND ST_Z(q) = ST_Z(s))
		OR (ST_X(p) = ST_X(s) AND ST_Y(p) = ST_Y(s) AND ST_Z(p) = ST_Z(s))
$$;

-- A box3d with every bound multiplied by f (exact for a power of two), SRID 0.
CREATE OR REPLACE FUNCTION fuzz_scale_box(b box3d, f float8) RETURNS box3d LANGUAGE sql IMMUTABLE AS $$
	SELECT ST_3DMakeBox(ST_MakePoint(ST_XMin(b) * f, ST_YMin(b) * f, ST_ZMin(b) * f),
		ST_MakePoint(ST_XMax(b) * f, ST_YMax(b) * f, ST_ZMax(b) * f))
$$;

-- gpu_mesh_clip of the TIN `mesh` (coordinates a few units from 0) and of the same mesh with every coordinate
-- multiplied by f = 2^k (k up to 1019: near the top of the double range): the scaled mesh clipped by the box
-- scaled gives exactly f times the unscaled result, for one box, for the tiles of geoacc_tile_grid (whose
-- boxes over the scaled extent are f times those over the unscaled one) and through PLY.
CREATE OR REPLACE FUNCTION fuzz_mesh_clip_scaled(mesh text, box box3d, f float8, nx int, ny int, nz int)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	m geometry;
	big geometry;
	bad bigint;
BEGIN
	EXECUTE 'SELECT ' || mesh INTO m;
	big := ST_Scale(m, f, f, f);
	IF ST_AsEWKB(gpu_mesh_clip(big, fuzz_scale_box(box, f))) IS DISTINCT FROM
		ST_AsEWKB(ST_Scale(gpu_mesh_clip(m, box), f, f, f)) THEN
		PERFORM set_config('fuzz.detail', format('one box: %s scaled is not %s',
			ST_AsText(gpu_mesh_clip(m, box)), ST_AsText(gpu_mesh_clip(big, fuzz_scale_box(box, f)))), false);
		RETURN false;
	END IF;
	SELECT count(*) INTO bad
	FROM geoacc_tile_grid(Box3D(m), nx, ny, nz) s FULL JOIN geoacc_tile_grid(Box3D(big), nx, ny, nz) b
		USING (ix, iy, iz)
	WHERE s.box IS NULL OR b.box IS NULL OR ST_XMin(b.box) <> ST_XMin(s.box) * f OR ST_XMax(b.box) <> ST_XMax(s.box) * f
		OR ST_YMin(b.box) <> ST_YMin(s.box) * f OR ST_YMax(b.box) <> ST_YMax(s.box) * f
		OR ST_ZMin(b.box) <> ST_ZMin(s.box) * f OR ST_ZMax(b.box) <> ST_ZMax(s.box) * f
		OR ST_AsEWKB(gpu_mesh_clip(big, b.box)) IS DISTINCT FROM ST_AsEWKB(ST_Scale(gpu_mesh_clip(m, s.box), f, f, f));
	IF bad > 0 THEN
		PERFORM set_config('fuzz.detail', format('%s tiles of %s x %s x %s are not f times the unscaled ones', bad,
			nx, ny, nz), false);
		RETURN false;
	END IF;
	IF ST_AsEWKB(geoacc_mesh_from_ply(gpu_mesh_clip(geoacc_mesh_to_ply(big), fuzz_scale_box(box, f)))) IS DISTINCT
		FROM ST_AsEWKB(ST_Scale(geoacc_mesh_from_ply(gpu_mesh_clip(geoacc_mesh_to_ply(m), box)), f, f, f)) THEN
		PERFORM set_config('fuzz.detail', 'the PLY form scaled differs', false);
		RETURN false;
	END IF;
	RETURN true;
END
$$;

-- gpu_segment_join of the tracks of `tracks` (a VALUES list of (id, LINESTRING M or ZM)) with x, y (and z)
-- and the distance multiplied by f1 and by f2 (powers of two far past 2^250): the same rows, with t_start,
-- t_end and cpa_time equal to the bit and cpa_distance / f1 = cpa_distance / f2 to the bit; and at scale 1
-- the same rows (but for pairs whose closest approach is within 1e-9 of the distance, where the roundings of
-- two scales may fall either way), times within 1e-6 s and distances within 1e-9 relative.
CREATE OR REPLACE FUNCTION fuzz_segment_join_scaled(tracks text, d float8, f1 float8, f2 float8, method text,
	use_z boolean) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	q text := 'SELECT * FROM gpu_segment_join(''SELECT id, ST_Scale(g, %1$s, %1$s, %1$s) FROM (%2$s) t(id, g)'', '
		'NULL, %3$s::float8 * %1$s, %4$L, %5$L)';
	apart bigint;
	off bigint;
BEGIN
	EXECUTE format($x$
		WITH a AS (%s), b AS (%s)
		SELECT count(*) FROM a FULL JOIN b USING (a_id, a_seg, b_id, b_seg)
		WHERE a.a_id IS NULL OR b.a_id IS NULL OR a.t_start IS DISTINCT FROM b.t_start
			OR a.t_end IS DISTINCT FROM b.t_end OR a.cpa_time IS DISTINCT FROM b.cpa_time
			OR a.cpa_distance / %s IS DISTINCT FROM b.cpa_distance / %s$x$,
		format(q, f1, replace(tracks, '''', ''''''), d, method, use_z),
		format(q, f2, replace(tracks, '''', ''''''), d, method, use_z), f1, f2) INTO apart;
	IF apart > 0 THEN
		PERFORM set_config('fuzz.detail', format('%s rows differ between scales %s and %s', apart, f1, f2), false);
		RETURN false;
	END IF;
	EXECUTE format($x$
		WITH a AS (%s), b AS (%s)
		SELECT count(*) FROM a FULL JOIN b USING (a_id, a_seg, b_id, b_seg)
		WHERE CASE WHEN a.a_id IS NULL THEN abs(b.cpa_distance / %s - %s) > 1e-9 * %s
			WHEN b.a_id IS NULL THEN abs(a.cpa_distance - %s) > 1e-9 * %s
			ELSE abs(a.t_start - b.t_start) > 1e-6 OR abs(a.t_end - b.t_end) > 1e-6
				OR abs(a.cpa_time - b.cpa_time) > 1e-6
				OR abs(a.cpa_distance - b.cpa_distance / %s) > 1e-9 * greatest(%s, a.cpa_distance) END$x$,
		format(q, 1, replace(tracks, '''', ''''''), d, method, use_z),
		format(q, f1, replace(tracks, '''', ''''''), d, method, use_z), f1, d, d, d, d, f1, d) INTO off;
	IF off > 0 THEN
		PERFORM set_config('fuzz.detail', format('%s rows at scale %s are not those at scale 1', off, f1), false);
		RETURN false;
	END IF;
	RETURN true;
END
$$;

-- A plane of geoacc_tile_grid as its reference gives it: plane i of n is lo + (hi - lo) * i / n, the last hi.
CREATE OR REPLACE FUNCTION fuzz_grid_plane(lo float8, hi float8, i bigint, n bigint) RETURNS float8 LANGUAGE sql
IMMUTABLE AS $$
	SELECT CASE WHEN i >= n THEN hi ELSE lo + (hi - lo) * i::float8 / n::float8 END
$$;

-- The first k rows of geoacc_tile_grid in the select-list form (a row made per call, so that a LIMIT ends it
-- however many tiles the grid has): min(k, nx ny nz) rows, row r the tile (r / (ny nz), r / nz mod ny, r mod nz)
-- with the planes of fuzz_grid_plane to the bit and the extent's SRID.
CREATE OR REPLACE FUNCTION fuzz_tile_grid_head(ext box3d, nx int, ny int, nz int, k int) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	got bigint;
	bad bigint;
BEGIN
	SELECT count(*), count(*) FILTER (WHERE (g).ix IS DISTINCT FROM i.ix::int OR (g).iy IS DISTINCT FROM i.iy::int
			OR (g).iz IS DISTINCT FROM i.iz::int
			OR ST_XMin((g).box) IS DISTINCT FROM fuzz_grid_plane(ST_XMin(ext), ST_XMax(ext), i.ix, nx)
			OR ST_XMax((g).box) IS DISTINCT FROM fuzz_grid_plane(ST_XMin(ext), ST_XMax(ext), i.ix + 1, nx)
			OR ST_YMin((g).box) IS DISTINCT FROM fuzz_grid_plane(ST_YMin(ext), ST_YMax(ext), i.iy, ny)
			OR ST_YMax((g).box) IS DISTINCT FROM fuzz_grid_plane(ST_YMin(ext), ST_YMax(ext), i.iy + 1, ny)
			OR ST_ZMin((g).box) IS DISTINCT FROM fuzz_grid_plane(ST_ZMin(ext), ST_ZMax(ext), i.iz, nz)
			OR ST_ZMax((g).box) IS DISTINCT FROM fuzz_grid_plane(ST_ZMin(ext), ST_ZMax(ext), i.iz + 1, nz))
	INTO got, bad
	FROM (SELECT row_number() OVER () - 1 AS r, g FROM (SELECT geoacc_tile_grid(ext, nx, ny, nz) AS g LIMIT k) s) t,
		LATERAL (SELECT t.r / (ny::bigint * nz) AS ix, t.r / nz % ny AS iy, t.r % nz AS iz) i;
	IF got <> least(k, nx::numeric * ny * nz) OR bad > 0 THEN
		PERFORM set_config('fuzz.detail', format('%s rows, %s of them not the tiles their order gives', got, bad),
			false);
		RETURN false;
	END IF;
	RETURN true;
END
$$;

-- The statement `sql` must be cancelled by the statement_timeout set around the case (57014), within 30 s of
-- the statement's start; a statement that ends, or fails otherwise, fails the case.
CREATE OR REPLACE FUNCTION fuzz_cancelled(sql text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	took float8;
BEGIN
	EXECUTE sql;
	PERFORM set_config('fuzz.detail', 'the statement ended: no cancel', false);
	RETURN false;
EXCEPTION WHEN query_canceled THEN
	took := extract(epoch FROM clock_timestamp() - statement_timestamp());
	IF took > 30 THEN
		PERFORM set_config('fuzz.detail', format('cancelled only after %s s', took), false);
		RETURN false;
	END IF;
	RETURN true;
END
$$;

-- gpu_make_trajectories of the fixes (id, t, geom) of `fixes` (a query; t a timestamp literal with its zone,
-- read as ttype: timestamptz, or timestamp read as UTC) against the SQL pipeline in intervals: DISTINCT ON
-- (id, t) keeping the smallest X, then Y; a new part where t - lag(t) > max_gap (interval comparison: a
-- month is 30 days, a day 24 hours) or ST_Distance / extract(epoch FROM t - lag(t)) > max_speed;
-- ST_MakeLine with M = extract(epoch FROM t)::float8 ORDER BY t of parts of 2 fixes or more; ST_Simplify
-- (geoacc_dp_simplify for the synchronized distance).  Every row the same to the bit, NULLs included.
CREATE OR REPLACE FUNCTION fuzz_make_trajectories_ts_agrees(fixes text, ttype text, max_gap interval,
	tolerance float8, preserve_collapsed boolean, synchronized boolean, max_speed float8) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	typed text := format('SELECT id::bigint, t::%s, geom FROM (%s) f(id, t, geom)', ttype, fixes);
	rows bigint;
	same bigint;
	broken bigint;
	invalid bigint;
BEGIN
	-- every trajectory's M strictly increasing (ST_IsValidTrajectory), as the reference documents
	EXECUTE format('SELECT count(*) FROM gpu_make_trajectories(%L, $1, $2, $3, $4, $5) g '
		'WHERE NOT ST_IsValidTrajectory(g.trajectory)', typed)
	INTO invalid USING max_gap, tolerance, preserve_collapsed, synchronized, max_speed;
	IF invalid > 0 THEN
		PERFORM set_config('fuzz.detail', format('%s trajectories whose M does not increase', invalid), false);
		RETURN false;
	END IF;
	EXECUTE format($q$
		WITH firsts AS (
			SELECT DISTINCT ON (f.id, f.t) f.id, f.t, f.geom
			FROM (%1$s) f(id, t, geom)
			ORDER BY f.id, f.t, ST_X(f.geom), ST_Y(f.geom)
		), starts AS (
			SELECT *, CASE WHEN t - lag(t) OVER w > $1
				OR ST_Distance(geom, lag(geom) OVER w) / extract(epoch FROM t - lag(t) OVER w)::float8
					> coalesce($5, 'Infinity')
				THEN 1 ELSE 0 END AS starts
			FROM firsts WINDOW w AS (PARTITION BY id ORDER BY t)
		), parts AS (
			SELECT *, sum(starts) OVER (PARTITION BY id ORDER BY t) + 1 AS part FROM starts
		), lines AS (
			SELECT id, part, ST_SetSRID(ST_MakeLine(ST_MakePointM(ST_X(geom), ST_Y(geom),
				extract(epoch FROM t)::float8) ORDER BY t), min(ST_SRID(geom))) AS line
			FROM parts GROUP BY id, part HAVING count(*) >= 2
		), ref AS (
			SELECT id::bigint AS object_id, part::int AS part, ST_IsValidTrajectory(line) AS valid,
				CASE WHEN $2 IS NULL OR NOT ST_IsValidTrajectory(line) THEN line
				WHEN $4 THEN geoacc_dp_simplify(line, $2, $3, synchronized => true)
				ELSE ST_Simplify(line, $2, $3) END AS trajectory
			FROM lines
		), got AS (
			SELECT * FROM gpu_make_trajectories(%2$L, $1, $2, $3, $4, $5)
		)
		SELECT count(*), count(*) FILTER (WHERE r.object_id IS NOT NULL AND g.object_id IS NOT NULL
			AND ST_AsEWKB(r.trajectory) IS NOT DISTINCT FROM ST_AsEWKB(g.trajectory)),
			count(*) FILTER (WHERE NOT r.valid)
		FROM ref r FULL JOIN got g USING (object_id, part)$q$, typed, typed)
	INTO rows, same, broken USING max_gap, tolerance, preserve_collapsed, synchronized, max_speed;
	-- a part of fixes a microsecond or more apart whose M (epoch seconds as float8) is the same: the times were
	-- taken (within 2^53 microseconds of 1970), but past 2^33 seconds from 1970 (before 1697, after 2242) a
	-- float8 of seconds no longer holds every microsecond, and no LINESTRING M of them has M increasing
	IF broken > 0 THEN
		PERFORM set_config('fuzz.detail', format('%s parts have fixes a microsecond or more apart at one M (epoch '
			'seconds as float8): times accepted where M cannot increase', broken), false);
		RETURN false;
	END IF;
	IF rows <> same THEN
		PERFORM set_config('fuzz.detail', format('%s of %s rows differ from the SQL pipeline (max_gap %s)',
			rows - same, rows, max_gap), false);
	END IF;
	RETURN rows = same;
END
$$;

-- Vessel events.  gpu_encounters of the (id, trajectory) VALUES `tracks` against gpu_segment_join's rows merged by
-- a gaps-and-islands query (every encounter, its ends and closest approach to the bit).
CREATE OR REPLACE FUNCTION fuzz_encounters_agree(tracks text, d float8, gap float8, method text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	q text := 'SELECT * FROM (' || tracks || ') t(id, traj)';
	total bigint;
	same bigint;
BEGIN
	EXECUTE format($q$
		WITH s AS (
			SELECT *, max(t_end) OVER (PARTITION BY a_id, b_id ORDER BY t_start, t_end
				ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS latest
			FROM gpu_segment_join(%1$L, NULL, %2$s::float8, %4$L)
		), f AS (
			SELECT *, sum(CASE WHEN latest IS NULL OR t_start > latest + %3$s::float8 THEN 1 ELSE 0 END)
				OVER (PARTITION BY a_id, b_id ORDER BY t_start, t_end ROWS UNBOUNDED PRECEDING) AS island
			FROM s
		), r AS (
			SELECT a_id, b_id, row_number() OVER (PARTITION BY a_id, b_id ORDER BY min(t_start))::int AS encounter,
				min(t_start) AS t0, max(t_end) AS t1,
				(array_agg(cpa_distance ORDER BY cpa_distance, cpa_time, a_seg, b_seg))[1] AS d,
				(array_agg(cpa_time ORDER BY cpa_distance, cpa_time, a_seg, b_seg))[1] AS ct
			FROM f GROUP BY a_id, b_id, island
		), g AS (
			SELECT * FROM gpu_encounters(%1$L, NULL, %2$s::float8, max_gap => make_interval(secs => %3$s::float8),
				method => %4$L)
		)
		SELECT count(*), count(*) FILTER (WHERE g.start_time = to_timestamp(r.t0) AND g.end_time = to_timestamp(r.t1)
			AND g.min_distance = r.d AND g.cpa_time = to_timestamp(r.ct))
		FROM r FULL JOIN g USING (a_id, b_id, encounter)$q$, q, d, gap, method) INTO total, same;
	IF total <> same THEN
		PERFORM set_config('fuzz.detail', format('%s of %s encounters differ from the merged join', total - same,
			total), false);
	END IF;
	RETURN total = same;
END
$$;

-- gpu_stops against the rule run plainly (each box recomputed from scratch).
CREATE OR REPLACE FUNCTION fuzz_stops_reference(xs float8[], ys float8[], ms float8[], d float8, dur float8)
RETURNS TABLE(first int, last int) LANGUAGE plpgsql AS $$
DECLARE
	n int := array_length(xs, 1);
	i int := 1;
	k int;
	lx float8; hx float8; ly float8; hy float8;
BEGIN
	FOR j IN 2..n LOOP
		lx := xs[i]; hx := xs[i]; ly := ys[i]; hy := ys[i];
		FOR q IN i..j LOOP
			lx := least(lx, xs[q]); hx := greatest(hx, xs[q]); ly := least(ly, ys[q]); hy := greatest(hy, ys[q]);
		END LOOP;
		CONTINUE WHEN (hx - lx) * (hx - lx) + (hy - ly) * (hy - ly) + 0.0 <= d * d;
		IF j - 1 > i AND ms[j - 1] - ms[i] >= dur THEN
			first := i; last := j - 1;
			RETURN NEXT;
			i := j;
			CONTINUE;
		END IF;
		k := i + 1;
		LOOP
			lx := xs[k]; hx := xs[k]; ly := ys[k]; hy := ys[k];
			FOR q IN k..j LOOP
				lx := least(lx, xs[q]); hx := greatest(hx, xs[q]); ly := least(ly, ys[q]); hy := greatest(hy, ys[q]);
			END LOOP;
			EXIT WHEN (hx - lx) * (hx - lx) + (hy - ly) * (hy - ly) + 0.0 <= d * d;
			k := k + 1;
		END LOOP;
		i := k;
	END LOOP;
	IF n > i AND ms[n] - ms[i] >= dur THEN
		first := i; last := n;
		RETURN NEXT;
	END IF;
END
$$;

CREATE OR REPLACE FUNCTION fuzz_stops_agree(tracks text, d float8, dur float8) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	total bigint;
	same bigint;
BEGIN
	EXECUTE format($q$
		WITH t AS (SELECT * FROM (%1$s) t(id, traj)),
		f AS (
			SELECT id, array_agg(ST_X(geom) ORDER BY path) AS xs, array_agg(ST_Y(geom) ORDER BY path) AS ys,
				array_agg(ST_M(geom) ORDER BY path) AS ms
			FROM t, ST_DumpPoints(traj) GROUP BY id
		), r AS (
			SELECT f.id, row_number() OVER (PARTITION BY f.id ORDER BY s.first)::int AS stop, f.ms[s.first] AS t0,
				f.ms[s.last] AS t1
			FROM f, fuzz_stops_reference(f.xs, f.ys, f.ms, %2$s, %3$s) s
		), g AS (
			SELECT * FROM gpu_stops(%4$L, %2$s, make_interval(secs => %3$s))
		)
		SELECT count(*), count(*) FILTER (WHERE g.start_time = to_timestamp(r.t0) AND g.end_time = to_timestamp(r.t1))
		FROM r FULL JOIN g USING (id, stop)$q$, tracks, d, dur, 'SELECT * FROM (' || tracks || ') t(id, traj)')
	INTO total, same;
	IF total <> same THEN
		PERFORM set_config('fuzz.detail', format('%s of %s stops differ from the rule', total - same, total), false);
	END IF;
	RETURN total = same;
END
$$;

-- gpu_zone_visits against PostGIS: ST_Intersection of each segment with each zone, the pieces' ends timed on their
-- segment (ST_InterpolatePoint), a segment of no length counted by its point, pieces that touch merged; times
-- within 1e-4 s (the zones' vertices are random: GEOS and geoacc cut a segment in a few ulps of each other).
CREATE OR REPLACE FUNCTION fuzz_visits_agree(tracks text, zones text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	total bigint;
	same bigint;
BEGIN
	EXECUTE format($q$
		WITH t AS (SELECT * FROM (%1$s) t(id, traj)), z AS (SELECT * FROM (%2$s) z(id, polygon)),
		pieces AS (
			SELECT t.id, z.id AS zone_id, ST_InterpolatePoint(s.geom, ST_StartPoint(p.geom)) AS t0,
				ST_InterpolatePoint(s.geom, ST_EndPoint(p.geom)) AS t1
			FROM t, ST_DumpSegments(t.traj) s, z, ST_Dump(ST_Intersection(s.geom, z.polygon)) p
			WHERE ST_Length(s.geom) > 0 AND GeometryType(p.geom) = 'LINESTRING'
			UNION ALL
			SELECT t.id, z.id, ST_M(ST_StartPoint(s.geom)), ST_M(ST_EndPoint(s.geom))
			FROM t, ST_DumpSegments(t.traj) s, z
			WHERE ST_Length(s.geom) = 0 AND ST_Intersects(ST_StartPoint(s.geom), z.polygon)
		), o AS (
			SELECT id, zone_id, least(t0, t1) AS t0, greatest(t0, t1) AS t1 FROM pieces
		), s AS (
			SELECT *, max(t1) OVER (PARTITION BY id, zone_id ORDER BY t0 ROWS BETWEEN UNBOUNDED PRECEDING
				AND 1 PRECEDING) AS latest FROM o
		), f AS (
			SELECT *, sum(CASE WHEN latest IS NULL OR t0 > latest + 1e-6 THEN 1 ELSE 0 END)
				OVER (PARTITION BY id, zone_id ORDER BY t0 ROWS UNBOUNDED PRECEDING) AS visit FROM s
		), r AS (
			SELECT id, zone_id, visit::int, min(t0) AS enter, max(t1) AS exit FROM f GROUP BY id, zone_id, visit
			HAVING max(t1) - min(t0) > 1e-4
		), g AS (
			SELECT * FROM gpu_zone_visits(%3$L, %4$L) WHERE extract(epoch FROM duration) > 1e-4
		)
		SELECT count(*), count(*) FILTER (WHERE abs(extract(epoch FROM g.enter_time) - r.enter) < 1e-4
			AND abs(extract(epoch FROM g.exit_time) - r.exit) < 1e-4)
		FROM r FULL JOIN g USING (id, zone_id, visit)$q$, tracks, zones, 'SELECT * FROM (' || tracks || ') t(id, traj)',
		'SELECT * FROM (' || zones || ') z(id, polygon)') INTO total, same;
	IF total <> same THEN
		PERFORM set_config('fuzz.detail', format('%s of %s visits differ from PostGIS', total - same, total), false);
	END IF;
	RETURN total = same;
END
$$;

-- A tileset of a valid mesh: tileset.json parses, its content uris are the GLB rows (each once), geometric
-- errors do not rise down the tree and are 0 at the leaves, and the mesh as PLY (same SRID) gives the same rows.
CREATE OR REPLACE FUNCTION fuzz_mesh_tileset_agrees(mesh text, levels int, cells int) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	m geometry;
	doc jsonb;
	glbs bigint;
	named bigint;
	distinct_named bigint;
	rising bigint;
	leaves_bad bigint;
	differ bigint;
BEGIN
	EXECUTE 'SELECT ' || mesh INTO m;
	CREATE TEMP TABLE IF NOT EXISTS fuzz_tiles (path text, content bytea);
	TRUNCATE fuzz_tiles;
	INSERT INTO fuzz_tiles SELECT * FROM gpu_mesh_tileset(m, levels, cells);
	SELECT convert_from(content, 'UTF8')::jsonb INTO doc FROM fuzz_tiles WHERE path = 'tileset.json';
	-- triangles that all have two equal corners leave no tile: no rows
	IF doc IS NULL AND NOT EXISTS (SELECT FROM fuzz_tiles) AND NOT EXISTS (
		SELECT FROM ST_Dump(m) d WHERE ST_NPoints(ST_RemoveRepeatedPoints(ST_ExteriorRing(d.geom))) >= 4) THEN
		RETURN true;
	END IF;
	SELECT count(*) INTO glbs FROM fuzz_tiles WHERE path LIKE 'tiles/%.glb' AND substring(content FROM 1 FOR 4) = 'glTF';
	WITH RECURSIVE tree(tile, parent_error) AS (
		SELECT doc -> 'root', (doc ->> 'geometricError')::float8
		UNION ALL
		SELECT c, (tile ->> 'geometricError')::float8 FROM tree, jsonb_array_elements(tile -> 'children') c)
	SELECT count(tile #>> '{content,uri}'), count(DISTINCT tile #>> '{content,uri}'),
		count(*) FILTER (WHERE (tile ->> 'geometricError')::float8 > parent_error),
		count(*) FILTER (WHERE tile -> 'children' IS NULL AND (tile ->> 'geometricError')::float8 <> 0)
		INTO named, distinct_named, rising, leaves_bad FROM tree;
	SELECT count(*) INTO differ
	FROM fuzz_tiles t FULL JOIN gpu_mesh_tileset(geoacc_mesh_to_ply(m), levels, ST_SRID(m), cells) p USING (path)
	WHERE t.content IS DISTINCT FROM p.content;
	IF doc #>> '{asset,version}' = '1.1' AND named = glbs AND distinct_named = glbs AND rising = 0
		AND leaves_bad = 0 AND differ = 0 AND glbs = (SELECT count(*) - 1 FROM fuzz_tiles) THEN
		RETURN true;
	END IF;
	PERFORM set_config('fuzz.detail', format('glbs %s, named %s (%s distinct), rising errors %s, leaves with an '
		'error %s, rows unlike the PLY form''s %s', glbs, named, distinct_named, rising, leaves_bad, differ), false);
	RETURN false;
END
$$;

-- Snapshots (a server with the GPU service: --functions snapshot): the rows `vals` ((i, g) values) as a snapshot
-- of points and one of trajectories; the density raster of an extent around them from the snapshot against the
-- aggregate over the rows (mode, weights), the segment join of the rows against the snapshot against
-- gpu_segment_join with the rows as b_sql: the same result, or the same SQLSTATE when one raises an error.
CREATE OR REPLACE FUNCTION fuzz_outcome(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text;
	state text;
BEGIN
	EXECUTE sql INTO result;
	RETURN 'ok ' || coalesce(md5(result), 'NULL');
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE;
	RETURN 'ERROR ' || state;
END
$$;

CREATE OR REPLACE FUNCTION fuzz_snapshot_agrees(vals text, w int, h int, kernel text, ks int, mode text,
	weighted boolean, distance float8, colouring text, empty boolean, w2 int, h2 int) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	extent text;
	png_extent text;
	density_snapshot text;
	density_rows text;
	png_snapshot text;
	png_again text;
	png_raster text;
	png_raster2 text;
	join_snapshot text;
	join_rows text;
	weight text := CASE WHEN weighted THEN ', weight' ELSE '' END;
BEGIN
	DROP TABLE IF EXISTS fuzz_snapshot_rows;
	EXECUTE 'CREATE TEMP TABLE fuzz_snapshot_rows AS SELECT i AS id, g AS geom, g AS traj, (i % 3) + 0.25 AS weight '
		'FROM (VALUES ' || vals || ') v(i, g)';
	SELECT format('ST_SetSRID(%L::box2d::geometry, ST_SRID(%L::geometry))',
		ST_Expand(ST_Extent(geom), greatest(1, abs(ST_XMin(ST_Extent(geom))), abs(ST_XMax(ST_Extent(geom))),
			abs(ST_YMin(ST_Extent(geom))), abs(ST_YMax(ST_Extent(geom)))) * 1e-3)::box2d::text, min(geom::text))
		INTO extent FROM fuzz_snapshot_rows;
	PERFORM geoacc_snapshot_drop(name, true) FROM geoacc_snapshot WHERE name IN ('fuzz_points', 'fuzz_traj');
	PERFORM geoacc_snapshot_create('fuzz_points', 'SELECT id, geom' || weight || ' FROM fuzz_snapshot_rows');
	density_snapshot := fuzz_outcome(format('SELECT geoacc_snapshot_density(%L, %s, %s, %s, %L, %s, true, %L)::text',
		'fuzz_points', extent, w, h, kernel, ks, mode));
	density_rows := fuzz_outcome(format('SELECT gpu_density_raster(geom, %s, %s, %s, %L, %s, true, %L%s)::text FROM fuzz_snapshot_rows',
		extent, w, h, kernel, ks, mode, weight));
	-- the PNG from the pixels against geoacc_raster_png of the raster, over the extent or, empty, beside it; then
	-- at w2 x h2 (the same size, or one more column or row) with the same colouring, where an empty one kept from
	-- the first may not be taken for it
	png_extent := CASE WHEN empty THEN format('ST_Translate(%1$s, 3 * (ST_XMax(%1$s) - ST_XMin(%1$s)) + 1, 0)', extent)
		ELSE extent END;
	png_snapshot := fuzz_outcome(format('SELECT md5(geoacc_snapshot_density_png(%L, %s, %s, %s, %L, %s, true, %L, %s))',
		'fuzz_points', png_extent, w, h, kernel, ks, mode, colouring));
	png_raster := fuzz_outcome(format('SELECT md5(geoacc_raster_png(geoacc_snapshot_density(%L, %s, %s, %s, %L, %s, true, %L), %s))',
		'fuzz_points', png_extent, w, h, kernel, ks, mode, colouring));
	png_again := fuzz_outcome(format('SELECT md5(geoacc_snapshot_density_png(%L, %s, %s, %s, %L, %s, true, %L, %s))',
		'fuzz_points', png_extent, w2, h2, kernel, ks, mode, colouring));
	png_raster2 := fuzz_outcome(format('SELECT md5(geoacc_raster_png(geoacc_snapshot_density(%L, %s, %s, %s, %L, %s, true, %L), %s))',
		'fuzz_points', png_extent, w2, h2, kernel, ks, mode, colouring));
	join_snapshot := fuzz_outcome('SELECT geoacc_snapshot_create(''fuzz_traj'', ''SELECT id, traj FROM fuzz_snapshot_rows'')::text');
	IF join_snapshot LIKE 'ok %' THEN
		join_snapshot := fuzz_outcome(format('SELECT string_agg(j::text, '','' ORDER BY j::text) FROM '
			'gpu_segment_join_snapshot(''SELECT id, traj FROM fuzz_snapshot_rows WHERE id %% 2 = 0'', ''fuzz_traj'', %s) j',
			distance));
	END IF;
	join_rows := fuzz_outcome(format('SELECT string_agg(j::text, '','' ORDER BY j::text) FROM '
		'gpu_segment_join(''SELECT id, traj FROM fuzz_snapshot_rows WHERE id %% 2 = 0'', '
		'''SELECT id, traj FROM fuzz_snapshot_rows'', %s) j', distance));
	PERFORM geoacc_snapshot_drop(name, true) FROM geoacc_snapshot WHERE name IN ('fuzz_points', 'fuzz_traj');
	DROP TABLE fuzz_snapshot_rows;
	-- a density raster of zeros where the aggregate warns; an error of the snapshot's creation stands for the join's
	IF density_snapshot = density_rows AND png_snapshot = png_raster AND png_again = png_raster2
		AND (join_snapshot = join_rows OR (join_snapshot LIKE 'ERROR %' AND join_rows LIKE 'ERROR %')) THEN
		RETURN true;
	END IF;
	PERFORM set_config('fuzz.detail', format('density: snapshot %s, rows %s; png: %s, of the raster %s; at %s x %s: '
		'%s, of the raster %s; join: snapshot %s, rows %s', density_snapshot, density_rows, png_snapshot, png_raster,
		w2, h2, png_again, png_raster2, join_snapshot, join_rows), false);
	RETURN false;
END
$$;
