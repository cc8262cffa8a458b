-- Tilesets for the 3D Tiles checks (scripts/test.sh): one row a file, the
-- tileset's name, the file's path in it and its bytes in base64.  A terrain
-- TIN at UTM 18N coordinates (placed on the Earth), a PLY mesh with normals,
-- colours and texture coordinates at UTM coordinates, CGAL's colored
-- tetrahedron (SRID 0: the mesh's own coordinates).
\set QUIET on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS geoacc;
CREATE TEMP TABLE b64 (line text);
\copy b64 FROM PROGRAM 'base64 -w0 data/meshes/colored_tetra.ply'
\pset format unaligned
\pset tuples_only on
\pset fieldsep ' '
CREATE TEMP TABLE terrain AS
WITH h AS (
	SELECT i, j, 583000 + i * 10 AS x, 4507000 + j * 10 AS y,
		round((10 * sin((583000 + i * 10) / 37.0) + 5 * cos((4507000 + j * 10) / 23.0) + 30)::numeric, 6) AS z
	FROM generate_series(0, 40) i, generate_series(0, 40) j)
SELECT ST_GeomFromText('TIN Z (' || string_agg(format('((%s %s %s,%s %s %s,%s %s %s,%s %s %s)),((%s %s %s,%s %s %s,%s %s %s,%s %s %s))',
		a.x, a.y, a.z, b.x, b.y, b.z, c.x, c.y, c.z, a.x, a.y, a.z,
		a.x, a.y, a.z, c.x, c.y, c.z, d.x, d.y, d.z, a.x, a.y, a.z), ',' ORDER BY a.i, a.j) || ')', 32618) AS mesh
FROM h a
JOIN h b ON b.i = a.i + 1 AND b.j = a.j
JOIN h c ON c.i = a.i + 1 AND c.j = a.j + 1
JOIN h d ON d.i = a.i AND d.j = a.j + 1;
WITH ply AS (
	SELECT convert_to(E'ply\nformat ascii 1.0\nelement vertex 9\nproperty double x\nproperty double y\nproperty double z\n'
		'property float nx\nproperty float ny\nproperty float nz\nproperty uchar red\nproperty uchar green\n'
		'property uchar blue\nproperty uchar alpha\nproperty float u\nproperty float v\nelement face 8\n'
		'property list uchar int vertex_indices\nend_header\n'
		'500000 4000000 10 0 0 1 255 0 0 255 0 0\n500010 4000000 11 0 0.6 0.8 0 255 0 255 0.5 0\n'
		'500020 4000000 10 0 0 1 0 0 255 128 1 0\n500000 4000010 12 0.6 0 0.8 10 20 30 40 0 0.5\n'
		'500010 4000010 14 0 0 1 50 60 70 80 0.5 0.5\n500020 4000010 12 0 0 1 90 100 110 120 1 0.5\n'
		'500000 4000020 10 0 0 1 1 2 3 255 0 1\n500010 4000020 11 0 0 1 4 5 6 255 0.5 1\n'
		'500020 4000020 10 0 0 1 7 8 9 255 1 1\n'
		'3 0 1 4\n3 0 4 3\n3 1 2 5\n3 1 5 4\n3 3 4 7\n3 3 7 6\n3 4 5 8\n3 4 8 7\n', 'UTF8') AS p)
SELECT 'terrain_utm', path, translate(encode(content, 'base64'), E'\n', '') FROM terrain, gpu_mesh_tileset(mesh, 4, 8)
UNION ALL
SELECT 'attributes_utm', path, translate(encode(content, 'base64'), E'\n', '') FROM ply, gpu_mesh_tileset(p, 3, 32618, 2)
UNION ALL
SELECT 'colored_tetra', path, translate(encode(content, 'base64'), E'\n', '')
FROM b64, gpu_mesh_tileset(decode(line, 'base64'), 2, 0, 2);
