-- GLB files for the glTF validator (scripts/test.sh): one row each, name and
-- base64, covering a TIN at UTM coordinates, clipped PLY with normals, colours
-- and texture coordinates, a real PLY file and an empty mesh.
\set QUIET on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS geoacc;
CREATE TEMP TABLE b64 (line text);
\copy b64 FROM PROGRAM 'base64 -w0 data/meshes/colored_tetra.ply'
\pset format unaligned
\pset tuples_only on
\pset fieldsep ' '
WITH ply AS (
	SELECT convert_to(E'ply\nformat ascii 1.0\nelement vertex 6\nproperty double x\nproperty double y\nproperty double z\n'
		'property float nx\nproperty float ny\nproperty float nz\nproperty uchar red\nproperty uchar green\n'
		'property uchar blue\nproperty uchar alpha\nproperty float u\nproperty float v\nelement face 2\n'
		'property list uchar int vertex_indices\nend_header\n'
		'500000 4000000 10 0 0 1 255 0 0 255 0 0\n500002 4000000 10 0 0.6 0.8 0 255 0 255 1 0\n'
		'500000 4000002 11 0 0 1 0 0 255 128 0 1\n500002 4000000 10 0.6 0 0.8 10 20 30 40 0.25 0.75\n'
		'500000 4000002 11 0 0 1 50 60 70 80 0.75 0.75\n500002 4000002 12 0 0 1 90 100 110 120 1 1\n'
		'3 0 1 2\n3 3 5 4\n', 'UTF8') AS p)
SELECT 'terrain_utm.glb', translate(encode(geoacc_mesh_to_glb(ST_Translate(
		'TIN Z (((0 0 0,10 0 1,10 10 2,0 0 0)),((0 0 0,10 10 2,0 10 1,0 0 0)))'::geometry, 500000, 4000000, 0)), 'base64'), E'\n', '')
UNION ALL
SELECT 'attributes_clipped.glb', translate(encode(geoacc_mesh_to_glb(gpu_mesh_clip(p, 'BOX3D(499999 3999999 0, 500001 4000003 20)'::box3d)),
	'base64'), E'\n', '') FROM ply
UNION ALL
SELECT 'colored_tetra.glb', translate(encode(geoacc_mesh_to_glb(decode(line, 'base64')), 'base64'), E'\n', '') FROM b64
UNION ALL
SELECT 'empty.glb', translate(encode(geoacc_mesh_to_glb('TIN Z EMPTY'::geometry), 'base64'), E'\n', '');
