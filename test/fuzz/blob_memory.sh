#!/bin/bash
# How much a backend's peak resident memory (VmHWM of /proc/self/status) rises while geoacc reads a PLY
# file: for files of about 1 KB, 64 KB and 1 MB (a k x k grid of vertices, two triangles a cell; binary
# big-endian, and ASCII), valid and malformed (a face count of 0x30000000 in the header, a vertex count of
# 0xffffffff, a list count of 0x7fffffff in the first or in the last face, the data cut in half), the rise
# in kB for geoacc_mesh_from_ply, and for gpu_mesh_clip(bytea, box3d) and geoacc_mesh_to_glb(bytea) of the
# same file, with what geoacc_mesh_from_ply returned.
#
#   test/fuzz/blob_memory.sh            PG* environment variables name the server; FUZZ_DB (default
#                                       geoacc_fuzz) a database with geoacc; needs a superuser (it reads
#                                       /proc/self/status and resets the peak through /proc/self/clear_refs)
#
# The files are made first and kept in the table blob_memory_files (dropped at the end).  Each call runs in
# a session of its own: the three functions called once on a small valid file (libraries loaded), the peak
# reset to the resident size of the moment, then the call, reading the file from the table, measured; memory
# an earlier call freed but the allocator kept cannot hide a rise.
set -euo pipefail
db=${FUZZ_DB:-geoacc_fuzz}
prelude=$(mktemp)
trap 'rm -f "$prelude"; psql -X -q -d "$db" -c "DROP TABLE IF EXISTS blob_memory_files" 2>/dev/null' EXIT
cat > "$prelude" <<'EOF'
SET client_min_messages = warning;
CREATE FUNCTION pg_temp.kb(field text) RETURNS bigint LANGUAGE sql AS $$
	SELECT substring(pg_read_file('/proc/self/status') FROM field || ':\s*(\d+) kB')::bigint
$$;

-- A k x k grid of vertices, two triangles a cell, as PLY: binary big-endian (float x y z, list uchar int or
-- list int int faces) or ASCII; variant: valid, face_count (0x30000000 faces declared), vertex_count
-- (0xffffffff vertices), list_first or list_last (a list count of 0x7fffffff, list int int), cut (half the data).
CREATE FUNCTION pg_temp.ply(k int, fmt text, variant text) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE
	nv bigint := k::bigint * k;
	nf bigint := 2::bigint * (k - 1) * (k - 1);
	count_type text := CASE WHEN variant IN ('list_first', 'list_last') THEN 'int' ELSE 'uchar' END;
	header bytea;
	vertices bytea;
	faces bytea;
	data bytea;
BEGIN
	header := convert_to(format(E'ply\nformat %s 1.0\nelement vertex %s\nproperty float x\nproperty float y\n'
		'property float z\nelement face %s\nproperty list %s int vertex_indices\nend_header\n',
		CASE WHEN fmt = 'binary' THEN 'binary_big_endian' ELSE 'ascii' END,
		CASE WHEN variant = 'vertex_count' THEN '4294967295' ELSE nv::text END,
		CASE WHEN variant = 'face_count' THEN '805306368' ELSE nf::text END, count_type), 'UTF8');
	IF fmt = 'binary' THEN
		SELECT string_agg(float4send((i % k)::float4) || float4send((i / k)::float4) || float4send(((i * 7) % 5)::float4),
			'' ORDER BY i) INTO vertices FROM generate_series(0, nv - 1) i;
		SELECT string_agg(CASE WHEN count_type = 'uchar' THEN '\x03'::bytea
				WHEN (variant = 'list_first' AND n = 0) OR (variant = 'list_last' AND n = nf - 1)
				THEN int4send(2147483647) ELSE int4send(3) END
			|| int4send(a) || int4send(b) || int4send(c), '' ORDER BY n) INTO faces
		FROM (SELECT row_number() OVER () - 1 AS n, a, b, c FROM generate_series(0, k - 2) y,
			generate_series(0, k - 2) x,
			LATERAL (VALUES (y * k + x, y * k + x + 1, (y + 1) * k + x + 1),
				(y * k + x, (y + 1) * k + x + 1, (y + 1) * k + x)) t(a, b, c)) f;
	ELSE
		SELECT convert_to(string_agg(format(E'%s %s %s\n', i % k, i / k, (i * 7) % 5), '' ORDER BY i), 'UTF8')
			INTO vertices FROM generate_series(0, nv - 1) i;
		SELECT convert_to(string_agg(format(E'%s %s %s %s\n',
			CASE WHEN (variant = 'list_first' AND n = 0) OR (variant = 'list_last' AND n = nf - 1)
				THEN 2147483647 ELSE 3 END, a, b, c), '' ORDER BY n), 'UTF8') INTO faces
		FROM (SELECT row_number() OVER () - 1 AS n, a, b, c FROM generate_series(0, k - 2) y,
			generate_series(0, k - 2) x,
			LATERAL (VALUES (y * k + x, y * k + x + 1, (y + 1) * k + x + 1),
				(y * k + x, (y + 1) * k + x + 1, (y + 1) * k + x)) t(a, b, c)) f;
	END IF;
	data := vertices || faces;
	IF variant = 'cut' THEN
		data := substring(data FROM 1 FOR length(data) / 2);
	END IF;
	RETURN header || data;
END
$$;

-- The rise of VmHWM (kB) while `call` runs on the file $1, and what it returned.
CREATE FUNCTION pg_temp.measure(call text, blob bytea, OUT rise_kb bigint, OUT outcome text) LANGUAGE plpgsql AS $$
DECLARE
	before bigint;
BEGIN
	EXECUTE 'COPY (SELECT 5) TO ''/proc/self/clear_refs''';
	before := pg_temp.kb('VmHWM');
	BEGIN
		EXECUTE call INTO outcome USING blob;
	EXCEPTION WHEN OTHERS THEN
		outcome := 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
	END;
	rise_kb := pg_temp.kb('VmHWM') - before;
END
$$;

EOF

psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$prelude" -c "
DROP TABLE IF EXISTS blob_memory_files;
CREATE TABLE blob_memory_files AS
SELECT row_number() OVER (ORDER BY s.k, f.fmt DESC, v.n) AS id, s.label, f.fmt, v.variant,
	pg_temp.ply(s.k, f.fmt, v.variant) AS blob
FROM (VALUES ('1 KB', 6), ('64 KB', 41), ('1 MB', 166)) s(label, k),
	(VALUES ('binary'), ('ascii')) f(fmt),
	(VALUES (1, 'valid'), (2, 'face_count'), (3, 'vertex_count'), (4, 'list_first'), (5, 'list_last'),
		(6, 'cut')) v(n, variant)"

calls=("SELECT ST_NumGeometries(geoacc_mesh_from_ply(\$1)) || ' triangles'"
	"SELECT length(gpu_mesh_clip(\$1, 'BOX3D(0 0 0, 1000 1000 1000)'::box3d)) || ' bytes of PLY'"
	"SELECT length(geoacc_mesh_to_glb(\$1)) || ' bytes of GLB'")
warm="DO \$\$ BEGIN PERFORM geoacc_mesh_from_ply(pg_temp.ply(3, 'binary', 'valid')),
	gpu_mesh_clip(pg_temp.ply(3, 'ascii', 'valid'), 'BOX3D(0 0 0, 1 1 1)'::box3d),
	geoacc_mesh_to_glb(pg_temp.ply(3, 'binary', 'valid')); END \$\$"
printf '%-6s %-7s %-13s %9s %12s %9s %8s  %s\n' size format variant bytes from_ply_kB clip_kB glb_kB \
	"geoacc_mesh_from_ply returned"
psql -X -At -F '|' -d "$db" -c "SELECT id, label, fmt, variant, length(blob) FROM blob_memory_files ORDER BY id" |
while IFS='|' read -r id label fmt variant bytes; do
	rises=()
	outcome=
	for call in "${calls[@]}"; do
		line=$(psql -X -At -F '|' -d "$db" -f "$prelude" -c "$warm" \
			-c "SELECT m.rise_kb, m.outcome FROM blob_memory_files b,
				pg_temp.measure(\$\$$call\$\$, b.blob) m WHERE b.id = $id" | tail -1)
		rises+=("${line%%|*}")
		[ -n "$outcome" ] || outcome=${line#*|}
	done
	printf '%-6s %-7s %-13s %9s %12s %9s %8s  %s\n' "$label" "$fmt" "$variant" "$bytes" "${rises[0]}" \
		"${rises[1]}" "${rises[2]}" "${outcome:0:100}"
done
