\set ECHO none
-- The AIS tables ais_fixes and ais_tracks for a regress test that needs them:
-- loaded by test/data/load_ais.sql (in one transaction) into the test
-- database when they are missing, kept for the tests after it.  Prints
-- nothing either way, so that each test runs alone or after any other.
SET client_min_messages = warning;
SELECT to_regclass('ais_tracks') IS NULL AS ais_missing \gset
\if :ais_missing
BEGIN;
\i test/data/load_ais.sql
COMMIT;
\endif
\unset ais_missing
\unset ON_ERROR_STOP
\unset GAP_SECONDS
RESET client_min_messages;
\set ECHO all
