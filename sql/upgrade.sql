-- Upgrades, in a database of their own.  geoacc 0.1.0, the first release, installed and then updated with
-- ALTER EXTENSION geoacc UPDATE has the same catalog as the current version installed directly; between the
-- two, the 0.1.0 declarations run against this library, or refuse with an ERROR that asks for the update.
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS geoacc_upgrade_check;
CREATE DATABASE geoacc_upgrade_check TEMPLATE template0;
\c geoacc_upgrade_check
SET client_min_messages = warning;
CREATE EXTENSION postgis;
RESET client_min_messages;

-- The catalog of the extension: every member with its whole definition (pg_get_functiondef: arguments,
-- defaults, result, language, C symbol, volatility, strictness, parallel safety, cost, rows; an aggregate's
-- functions, state and parallel safety; a type's functions and storage; casts; operators; other kinds by
-- name) and its comment; the extension's own row; and objects in its schema that no extension owns (what an
-- upgrade took out of the extension without dropping it).
CREATE FUNCTION pg_temp.geoacc_catalog() RETURNS TABLE (object text, definition text)
LANGUAGE sql SET search_path = pg_catalog AS $$
WITH ext AS (SELECT oid, extnamespace FROM pg_extension WHERE extname = 'geoacc'),
members AS (
	SELECT d.classid, d.objid FROM pg_depend d, ext
	WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e')
SELECT pg_describe_object(m.classid, m.objid, 0),
	CASE m.classid
	WHEN 'pg_proc'::regclass THEN (
		SELECT CASE WHEN p.prokind = 'a' THEN format(
			E'aggregate (%s) returns %s, parallel %s\nkind %s, direct arguments %s, sfunc %s, stype %s, '
			'sspace %s, finalfunc %s (extra %s, modify %s), combinefunc %s, serialfunc %s, deserialfunc %s, '
			'initcond %s; moving: sfunc %s, invfunc %s, stype %s, sspace %s, finalfunc %s (extra %s, modify %s), '
			'initcond %s; sortop %s',
			pg_get_function_arguments(p.oid), pg_get_function_result(p.oid), p.proparallel,
			a.aggkind, a.aggnumdirectargs, a.aggtransfn::regprocedure, a.aggtranstype::regtype, a.aggtransspace,
			a.aggfinalfn::regprocedure, a.aggfinalextra, a.aggfinalmodify, a.aggcombinefn::regprocedure,
			a.aggserialfn::regprocedure, a.aggdeserialfn::regprocedure, a.agginitval,
			a.aggmtransfn::regprocedure, a.aggminvtransfn::regprocedure, a.aggmtranstype::regtype,
			a.aggmtransspace, a.aggmfinalfn::regprocedure, a.aggmfinalextra, a.aggmfinalmodify, a.aggminitval,
			a.aggsortop::regoperator)
		ELSE pg_get_functiondef(p.oid) END
		FROM pg_proc p LEFT JOIN pg_aggregate a ON a.aggfnoid = p.oid WHERE p.oid = m.objid)
	WHEN 'pg_type'::regclass THEN (
		SELECT format(
			'type %s, length %s, by value %s, category %s, preferred %s, delimiter %s, element %s, array %s, '
			'input %s, output %s, receive %s, send %s, typmod in %s, typmod out %s, analyze %s, subscript %s, '
			'align %s, storage %s, not null %s, base type %s, typmod %s, dimensions %s, collation %s, default %s',
			t.typtype, t.typlen, t.typbyval, t.typcategory, t.typispreferred, t.typdelim, t.typelem::regtype,
			t.typarray::regtype, t.typinput::regprocedure, t.typoutput::regprocedure,
			t.typreceive::regprocedure, t.typsend::regprocedure, t.typmodin::regprocedure,
			t.typmodout::regprocedure, t.typanalyze::regprocedure, t.typsubscript::regprocedure, t.typalign,
			t.typstorage, t.typnotnull, t.typbasetype::regtype, t.typtypmod, t.typndims,
			t.typcollation::regcollation, t.typdefault)
		FROM pg_type t WHERE t.oid = m.objid)
	WHEN 'pg_cast'::regclass THEN (
		SELECT format('context %s, method %s, function %s', c.castcontext, c.castmethod,
			c.castfunc::regprocedure)
		FROM pg_cast c WHERE c.oid = m.objid)
	WHEN 'pg_operator'::regclass THEN (
		SELECT format('returns %s, function %s, commutator %s, negator %s, restrict %s, join %s, merges %s, '
			'hashes %s', o.oprresult::regtype, o.oprcode::regprocedure, o.oprcom::regoperator,
			o.oprnegate::regoperator, o.oprrest::regprocedure, o.oprjoin::regprocedure, o.oprcanmerge,
			o.oprcanhash)
		FROM pg_operator o WHERE o.oid = m.objid)
	ELSE 'member'
	END || coalesce(E'\ncomment: ' || obj_description(m.objid, m.classid::regclass::name), '')
FROM members m
UNION ALL
SELECT 'extension geoacc', format(E'version %s, schema %s, relocatable %s, configuration %s %s, requires %s\n'
	'comment: %s', e.extversion, e.extnamespace::regnamespace, e.extrelocatable, e.extconfig::regclass[],
	e.extcondition,
	(SELECT string_agg(r.extname, ', ' ORDER BY r.extname) FROM pg_depend d JOIN pg_extension r ON r.oid = d.refobjid
	 WHERE d.classid = 'pg_extension'::regclass AND d.objid = e.oid AND d.refclassid = 'pg_extension'::regclass),
	obj_description(e.oid, 'pg_extension'))
FROM pg_extension e WHERE e.extname = 'geoacc'
UNION ALL
SELECT 'in no extension: ' || pg_describe_object(o.classid, o.objid, 0), ''
FROM (SELECT 'pg_proc'::regclass AS classid, oid AS objid, pronamespace AS nsp FROM pg_proc
	UNION ALL
	SELECT 'pg_type'::regclass, oid, typnamespace FROM pg_type WHERE typcategory <> 'A' AND typrelid = 0
	UNION ALL
	SELECT 'pg_operator'::regclass, oid, oprnamespace FROM pg_operator) o, ext
WHERE o.nsp = ext.extnamespace AND NOT EXISTS (
	SELECT FROM pg_depend d WHERE d.classid = o.classid AND d.objid = o.objid AND d.deptype = 'e')
$$;

-- the current version, installed directly
CREATE EXTENSION geoacc;
CREATE TEMP TABLE installed AS SELECT * FROM pg_temp.geoacc_catalog();
SELECT count(*) FILTER (WHERE definition LIKE 'CREATE OR REPLACE FUNCTION%') > 0
	AND count(*) FILTER (WHERE definition LIKE 'aggregate%') > 0 AND count(*) FILTER (WHERE definition LIKE 'type%') > 0
	AND bool_and(definition IS NOT NULL) AS every_kind_described
FROM installed;
DROP EXTENSION geoacc;

-- 0.1.0 installs against this library (every C function it names exists)
CREATE EXTENSION geoacc VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'geoacc';

-- its declarations whose C functions read the arguments they pass run as before
SELECT geoacc_version() ~ '^geoacc \d+\.\d+\.\d+ \((CPU only|CUDA \d+\.\d+)\)$' AS version_ok;
SELECT version = (SELECT default_version FROM pg_available_extensions WHERE name = 'geoacc') AS library_version
FROM geoacc_status();
SELECT count(*) >= 0 AS devices_listed FROM geoacc_devices();
SELECT geoacc_stats_reset();
SELECT count(*) AS calls FROM geoacc_stats();
SELECT round(gpu_twed(ARRAY[1, 2, 3]::float8[], NULL, ARRAY[1, 3]::float8[], NULL, 0.001, 1, 2, true, false)::numeric, 9)
	AS twed;
SELECT round(sum(w)::numeric, 12) AS kernel_sum FROM unnest(geoacc_density_kernel('gaussian', 3)) w;
SELECT round(compression_ratio::numeric, 9) AS compression_ratio, round(length_loss_rate::numeric, 9) AS length_loss_rate,
	round(dtw_distance::numeric, 9) AS dtw_distance
FROM geoacc_compression_stats('LINESTRING M (0 0 0, 1 1 1, 2 0 2)', 'LINESTRING M (0 0 0, 2 0 2)');

-- those whose arguments changed refuse, asking for the update
SELECT gpu_dp_simplify('LINESTRING M (0 0 0, 1 1 1, 2 0 2)'::geometry, 0.5, false, false) OVER ();
SELECT gpu_twed('LINESTRING M (0 0 0, 1 1 1)'::geometry, 'LINESTRING M (0 0 0, 1 0 1)'::geometry, 0.001, 1, 2,
	true, false);
SELECT * FROM gpu_twed_matrix('SELECT 1, ARRAY[1, 2]::float8[]', NULL, 0.001, 1, 2, true, false);
SELECT gpu_density_raster('SRID=32618;LINESTRING M (0 0 0, 10 10 1)'::geometry, 'BOX(0 0,10 10)'::box2d, 4, 4);
SELECT geoacc_raster_png('\x00'::bytea, 'viridis', 'log');

-- the update, to the default version, and what it left otherwise than installing directly: nothing
ALTER EXTENSION geoacc UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'geoacc') AS updated
FROM pg_extension WHERE extname = 'geoacc';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.geoacc_catalog();
\x on
SELECT object, i.definition AS installed, u.definition AS updated
FROM installed i FULL JOIN updated u USING (object)
WHERE i.definition IS DISTINCT FROM u.definition
ORDER BY object;
\x off

-- after the update: the same distance as before, and the functions that refused run
SELECT round(gpu_twed(ARRAY[1, 2, 3]::float8[], NULL, ARRAY[1, 3]::float8[], NULL, 0.001, 1, 2, true, false)::numeric, 9)
	AS twed;
SELECT ST_AsText(gpu_dp_simplify('LINESTRING M (0 0 0, 1 1 1, 2 0 2)'::geometry, 0.5, false, false) OVER ())
	AS simplified;
SELECT round(gpu_twed('LINESTRING M (0 0 0, 1 1 1)'::geometry, 'LINESTRING M (0 0 0, 1 0 1)'::geometry, 0.001, 1, 2,
	true, false)::numeric, 9) AS twed;

\c :regress_db
DROP DATABASE geoacc_upgrade_check WITH (FORCE);
