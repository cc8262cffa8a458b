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
-- multi-box form and as the PLY form read back.
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
BEGIN
	EXECUTE 'SELECT ' || mesh INTO m;
	-- areas measured from the mesh's corner (exact differences): at UTM magnitudes ST_Area's products cancel
	whole := ST_Area(ST_Translate(m, -ST_XMin(m), -ST_YMin(m)));
	SELECT coalesce(sum(ST_Area(ST_Translate(c, -ST_XMin(m), -ST_YMin(m)))), 0),
		coalesce(sum(ST_Perimeter(c)), 0) + ST_Perimeter(m) INTO tiles, perimeter
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
