-- geoacc extension script, assembled by the Makefile from sql/install/*.sql.  Every statement can run
-- again over an earlier version's objects (CREATE OR REPLACE; a type only where it is missing): the upgrade
-- script into this version is this script after sql/upgrade/geoacc--FROM--VERSION.sql.
-- This piece: version.

\echo Use "CREATE EXTENSION geoacc" to load this file. \quit

CREATE OR REPLACE FUNCTION geoacc_version() RETURNS text
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION geoacc_version() IS
	'geoacc version and whether this build has CUDA support';
