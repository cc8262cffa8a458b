#!/bin/bash
# gpu_mesh_clip against the route a PostGIS user has today for cutting a mesh by a box: SFCGAL's
# ST_3DIntersection of a TIN with a box solid (postgis_sfcgal).  Runs wherever postgis_sfcgal is
# installed (Debian's postgresql-15-postgis-3 with libsfcgal1; not in the GPU machine's bundle), from the
# repository root with PG* set and geoacc installed (scripts/setup.sh):
#
#   test/bench/mesh_sfcgal.sh
#
# The pieces: SFCGAL refuses a TIN that is not connected, and CGAL's b9 urban scan (10,174 triangles)
# has 47 components, so a piece of n triangles is the first n of its largest component in breadth-first
# order from the triangle nearest to that component's centroid (ties by index): connected, and compact.
# The box: the middle quarter of the piece in x and y and its whole height, as a closed solid
# (ST_MakeSolid(ST_Extrude(...))) for SFCGAL and as a box3d for gpu_mesh_clip.  For each size
# (MESH_SFCGAL_SIZES, default "100 1000 3000"): ST_3DIntersection written with CREATE TABLE ... AS
# under statement_timeout = MESH_SFCGAL_TIMEOUT (default 3600s); gpu_mesh_clip with geoacc.device = cpu
# the same way (after a warm-up call); the areas of both results (the sum of ST_3DArea over their
# triangles); and SFCGAL again with statement_timeout = MESH_SFCGAL_CANCEL (default 2s): when does the
# cancel take effect?  Prints a markdown table.
set -euo pipefail
db=${MESH_SFCGAL_DB:-geoacc_mesh_sfcgal}
sizes=${MESH_SFCGAL_SIZES:-100 1000 3000}
timeout=${MESH_SFCGAL_TIMEOUT:-3600s}
cancel=${MESH_SFCGAL_CANCEL:-2s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make -s test/bench/mesh_clip_bench
test/bench/mesh_clip_bench model data/meshes/b9_mesh.off.gz 1 1 "$work/b9.ply" 500000 4000000 > /dev/null
dropdb --if-exists "$db" > /dev/null 2>&1
createdb "$db"
export PGDATABASE=$db
psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "CREATE EXTENSION geoacc CASCADE" \
	-c "CREATE EXTENSION postgis_sfcgal" || { echo "mesh_sfcgal: postgis_sfcgal is not available here"; exit 1; }
{ echo "COPY plys (ply) FROM STDIN;"; printf '\\\\x'; od -An -tx1 -v "$work/b9.ply" | tr -d ' \n'; printf '\n\\.\n'; } \
	| psql -X -q -v ON_ERROR_STOP=1 -c "CREATE TABLE plys (ply bytea)" -f -
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE TABLE b9t AS
SELECT (d).path[1] AS k, (d).geom AS tri FROM (SELECT ST_Dump(geoacc_mesh_from_ply(ply, 32633)) AS d FROM plys) s;
-- triangles sharing an edge (corners by their exact coordinates)
CREATE TABLE edges AS
SELECT k, least(a, b) AS lo, greatest(a, b) AS hi
FROM (SELECT k, ST_AsEWKB(ST_PointN(ST_ExteriorRing(tri), i)) AS a, ST_AsEWKB(ST_PointN(ST_ExteriorRing(tri), i + 1)) AS b
	  FROM b9t, generate_series(1, 3) i) s;
CREATE TABLE adj AS SELECT DISTINCT e.k, f.k AS n FROM edges e JOIN edges f USING (lo, hi) WHERE e.k <> f.k;
CREATE INDEX ON adj (k);
-- components: each triangle takes the least label among its neighbours until nothing changes
CREATE TABLE comp AS SELECT k, k AS c FROM b9t;
CREATE UNIQUE INDEX ON comp (k);
DO $$
BEGIN
	LOOP
		UPDATE comp SET c = m.c FROM (SELECT a.k, min(n.c) AS c FROM adj a JOIN comp n ON n.k = a.n GROUP BY a.k) m
		WHERE comp.k = m.k AND m.c < comp.c;
		EXIT WHEN NOT FOUND;
	END LOOP;
END $$;
-- breadth-first depths in the largest component from the triangle nearest to its centroid
CREATE TABLE depth AS
WITH RECURSIVE big AS (SELECT c FROM comp GROUP BY c ORDER BY count(*) DESC, c LIMIT 1),
members AS (SELECT b.k, b.tri FROM b9t b JOIN comp USING (k) WHERE comp.c = (SELECT c FROM big)),
seed AS (SELECT k FROM members, (SELECT ST_Centroid(ST_Collect(ST_Centroid(tri))) AS p FROM members) m
		 ORDER BY ST_Distance(ST_Centroid(tri), m.p), k LIMIT 1),
bfs(k, d) AS (SELECT k, 0 FROM seed UNION SELECT a.n, b.d + 1 FROM bfs b JOIN adj a ON a.k = b.k WHERE b.d < 200)
SELECT k, min(d) AS d FROM bfs GROUP BY k;
CREATE TABLE pieces (n int PRIMARY KEY, t geometry);
CREATE TABLE boxes (n int PRIMARY KEY, solid geometry, box box3d);
-- the sum of the 3D areas of a surface's patches (SFCGAL's ST_3DArea wants a connected TIN when given one)
CREATE FUNCTION patch_area(g geometry) RETURNS float8 LANGUAGE sql AS
	$f$ SELECT coalesce(sum(ST_3DArea((d).geom)), 0) FROM ST_Dump(g) d $f$;
SQL
for n in $sizes; do
	psql -X -q -v ON_ERROR_STOP=1 <<SQL
INSERT INTO pieces
SELECT $n, ST_GeomFromText('TIN Z (' || string_agg(substr(ST_AsText(tri), 12), ',' ORDER BY k) || ')', 32633)
FROM (SELECT b.k, b.tri FROM b9t b JOIN depth USING (k) ORDER BY d, k LIMIT $n) s;
INSERT INTO boxes
SELECT $n, ST_MakeSolid(ST_Extrude(ST_Translate(ST_Force3D(ST_MakeEnvelope(x0, y0, x1, y1, 32633)), 0, 0, z0), 0, 0, z1 - z0)),
	ST_3DMakeBox(ST_MakePoint(x0, y0, z0), ST_MakePoint(x1, y1, z1))
FROM (SELECT (3 * ST_XMin(t) + ST_XMax(t)) / 4 AS x0, (3 * ST_YMin(t) + ST_YMax(t)) / 4 AS y0, ST_ZMin(t) AS z0,
			 (ST_XMin(t) + 3 * ST_XMax(t)) / 4 AS x1, (ST_YMin(t) + 3 * ST_YMax(t)) / 4 AS y1, ST_ZMax(t) AS z1
	  FROM pieces WHERE n = $n) e;
SQL
done

# timed SETTINGS QUERY: the milliseconds of QUERY, or "ERROR after N ms: message"
timed() {
	local out
	out=$(psql -X -q -c "SET client_min_messages = warning" -c "SELECT ST_IsEmpty(gpu_mesh_clip('TIN Z (((0 0 0,1 0 0,0 1 0,0 0 0)))', 'BOX3D(0 0 0, 1 1 1)'::box3d))" \
		-c "$1" -c '\timing on' -c "$2" 2>&1 || true)
	awk '/^Time:/ { ms = $2 } /^ERROR:/ { sub(/^ERROR: +/, ""); error = substr($0, 1, 60) }
		END { if (error != "") printf "ERROR after %.0f ms: %s", ms, error; else printf "%.0f", ms }' <<< "$out"
}

echo "mesh_sfcgal: $(date -u +%F), $(nproc) CPU cores ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)),"\
	"commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(psql -X -At -c "SELECT 'PostGIS ' ||
	postgis_lib_version() || ', SFCGAL ' || postgis_sfcgal_version()")"
echo
echo "| triangles | SFCGAL ST_3DIntersection ms | its patches, area | gpu_mesh_clip (CPU path) ms | its triangles, area | ratio | SFCGAL with statement_timeout = $cancel |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | --- |"
for n in $sizes; do
	s=$(timed "SET statement_timeout = '$timeout'" "CREATE TABLE s AS SELECT ST_3DIntersection(t, solid) AS r
		FROM pieces JOIN boxes USING (n) WHERE n = $n")
	s_out=$(psql -X -At -c "SELECT ST_NumGeometries(r) || ', ' || round(patch_area(r)::numeric, 9) FROM s" 2>/dev/null || echo "-")
	g=$(timed "SET geoacc.device = cpu" "CREATE TABLE g AS SELECT gpu_mesh_clip(t, box) AS r
		FROM pieces JOIN boxes USING (n) WHERE n = $n")
	g_out=$(psql -X -At -c "SELECT ST_NumGeometries(r) || ', ' || round(patch_area(r)::numeric, 9) FROM g" 2>/dev/null || echo "-")
	c=$(timed "SET statement_timeout = '$cancel'" "SELECT ST_NumGeometries(ST_3DIntersection(t, solid))
		FROM pieces JOIN boxes USING (n) WHERE n = $n")
	psql -X -q -c "DROP TABLE IF EXISTS s, g"
	echo "| $n | $s | $s_out | $g | $g_out | $(awk -v s="$s" -v g="$g" 'BEGIN { if (s + 0 > 0 && g + 0 > 0) printf "%.0fx", s / g; else print "-" }') | $c |"
done
