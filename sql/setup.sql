-- The extensions every test starts with (the Makefile has pg_regress create them), and the version.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS geoacc CASCADE;
RESET client_min_messages;
SELECT extname FROM pg_extension WHERE extname IN ('postgis', 'geoacc') ORDER BY 1;
SELECT geoacc_version() ~ '^geoacc \d+\.\d+\.\d+ \((CPU only|CUDA \d+\.\d+)\)$' AS version_ok;
