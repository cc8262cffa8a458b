-- geoacc extension script, assembled by the Makefile from sql/install/*.sql.
-- This piece: version.

\echo Use "CREATE EXTENSION geoacc" to load this file. \quit

CREATE FUNCTION geoacc_version() RETURNS text
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION geoacc_version() IS
	'geoacc version and whether this build has CUDA support';
