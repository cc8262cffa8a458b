-- 3D Tiles tilesets of meshes: the files and their paths, tileset.json read as
-- jsonb (3D Tiles 1.1, a quadtree, errors falling to 0 at the leaves, bounding
-- boxes), the root transform against PostGIS's ST_Transform to EPSG:4978, the
-- GLB tiles (glTF 2.0 headers, attributes of PLY meshes), the same rows on
-- every device setting, and every bad input.  Outputs are booleans, counts and
-- error texts, the same on the CPU and on the GPU.

-- a terrain of 24 x 24 squares of 10 m at UTM 18N coordinates (New York), heights rounded to micrometres
CREATE TEMP TABLE terrain AS
WITH h AS (
	SELECT i, j, 583000 + i * 10 AS x, 4507000 + j * 10 AS y,
		round((10 * sin((583000 + i * 10) / 37.0) + 5 * cos((4507000 + j * 10) / 23.0) + 30)::numeric, 6) AS z
	FROM generate_series(0, 24) i, generate_series(0, 24) j)
SELECT ST_GeomFromText('TIN Z (' || string_agg(format('((%s %s %s,%s %s %s,%s %s %s,%s %s %s)),((%s %s %s,%s %s %s,%s %s %s,%s %s %s))',
		a.x, a.y, a.z, b.x, b.y, b.z, c.x, c.y, c.z, a.x, a.y, a.z,
		a.x, a.y, a.z, c.x, c.y, c.z, d.x, d.y, d.z, a.x, a.y, a.z), ',' ORDER BY a.i, a.j) || ')', 32618) AS mesh
FROM h a
JOIN h b ON b.i = a.i + 1 AND b.j = a.j
JOIN h c ON c.i = a.i + 1 AND c.j = a.j + 1
JOIN h d ON d.i = a.i AND d.j = a.j + 1;
SELECT ST_NumGeometries(mesh) AS triangles FROM terrain;

CREATE TEMP TABLE tiles AS SELECT t.* FROM terrain, gpu_mesh_tileset(mesh, 3, 8) t;

-- tileset.json first, then a GLB per tile of 3 levels: 1 + 4 + 16
SELECT count(*) AS files, (array_agg(path))[1] AS first, count(*) FILTER (WHERE path LIKE 'tiles/2/%') AS leaves,
	bool_and(substring(content FROM 1 FOR 4) = '\x676c5446'::bytea) FILTER (WHERE path LIKE '%.glb') AS glb_magic,
	bool_and(get_byte(content, 4) = 2) FILTER (WHERE path LIKE '%.glb') AS gltf_version_2
FROM tiles;
SELECT path FROM tiles ORDER BY path LIMIT 7;

-- tileset.json: 3D Tiles 1.1, the root with its transform, REPLACE refinement, a box a tile
CREATE TEMP TABLE tileset AS SELECT convert_from(content, 'UTF8')::jsonb AS j FROM tiles WHERE path = 'tileset.json';
SELECT j #>> '{asset,version}' AS version, j #>> '{asset,generator}' LIKE 'geoacc %' AS generator,
	jsonb_array_length(j #> '{root,transform}') AS transform_length, j #>> '{root,refine}' AS refine,
	jsonb_array_length(j #> '{root,children}') AS root_children,
	jsonb_array_length(j #> '{root,boundingVolume,box}') AS box_length,
	(j ->> 'geometricError')::float8 >= (j #>> '{root,geometricError}')::float8 AS tileset_error_above_root
FROM tileset;

-- the tiles in the tree: every content uri is a row, every GLB row is in the tree once
WITH RECURSIVE tree(tile, level) AS (
	SELECT j -> 'root', 0 FROM tileset
	UNION ALL
	SELECT c, level + 1 FROM tree, jsonb_array_elements(tile -> 'children') c)
SELECT level, count(*) AS tiles, min((tile ->> 'geometricError')::float8) = max((tile ->> 'geometricError')::float8) AS one_error,
	bool_and(tile #>> '{content,uri}' = ANY (SELECT path FROM tiles)) AS uris_are_rows,
	bool_and((tile ->> 'geometricError')::float8 = 0) AS error_zero
FROM tree GROUP BY level ORDER BY level;

-- errors fall with the levels: the root's cells are 240 m / 8 = 30 m wide, level 1's 15 m (the border planes
-- keep the mesh's open border in place; without them clustering pulls it into the cells, 31.5 m at the root)
WITH RECURSIVE tree(tile, level) AS (
	SELECT j -> 'root', 0 FROM tileset
	UNION ALL
	SELECT c, level + 1 FROM tree, jsonb_array_elements(tile -> 'children') c),
e AS (SELECT level, max((tile ->> 'geometricError')::float8) AS e FROM tree GROUP BY level)
SELECT (SELECT e FROM e WHERE level = 0) > (SELECT e FROM e WHERE level = 1) AS falls,
	(SELECT e FROM e WHERE level = 1) > 0 AS parents_positive,
	round((SELECT e FROM e WHERE level = 0)::numeric, 2) AS root_error,
	round((SELECT e FROM e WHERE level = 1)::numeric, 2) AS level_1_error;

-- the root transform takes the tiles' origin (the extent's centre) to its EPSG:4978 position, and a point
-- 150 m away to within 5 mm of PostGIS's (the tangent frame leaves d^2 / 2R: 1.8 mm at 150 m)
WITH m AS (SELECT j #> '{root,transform}' AS t FROM tileset),
c AS (SELECT 583120.0 AS x, 4507120.0 AS y, (ST_ZMin(mesh) + ST_ZMax(mesh)) / 2 AS z FROM terrain),
p AS (SELECT ST_Transform(ST_SetSRID(ST_MakePoint(x, y, z), 32618), 4978) AS centre,
			 ST_Transform(ST_SetSRID(ST_MakePoint(x + 100, y - 80, z + 60), 32618), 4978) AS far FROM c)
SELECT abs((t ->> 12)::float8 - ST_X(centre)) < 1e-6 AND abs((t ->> 13)::float8 - ST_Y(centre)) < 1e-6
		AND abs((t ->> 14)::float8 - ST_Z(centre)) < 1e-6 AS translation_is_centre,
	sqrt(power((t ->> 12)::float8 + 100 * (t ->> 0)::float8 - 80 * (t ->> 4)::float8 + 60 * (t ->> 8)::float8 - ST_X(far), 2)
		+ power((t ->> 13)::float8 + 100 * (t ->> 1)::float8 - 80 * (t ->> 5)::float8 + 60 * (t ->> 9)::float8 - ST_Y(far), 2)
		+ power((t ->> 14)::float8 + 100 * (t ->> 2)::float8 - 80 * (t ->> 6)::float8 + 60 * (t ->> 10)::float8 - ST_Z(far), 2))
		< 0.005 AS frame_within_5mm,
	(t ->> 3)::float8 = 0 AND (t ->> 7)::float8 = 0 AND (t ->> 11)::float8 = 0 AND (t ->> 15)::float8 = 1 AS affine
FROM m, p;

-- the same rows whatever the device setting (the CPU twin gives the GPU's bits)
SET geoacc.device = cpu;
SELECT bool_and(t.content = c.content) AND count(*) = (SELECT count(*) FROM tiles) AS same_on_cpu
FROM terrain, gpu_mesh_tileset(mesh, 3, 8) c JOIN tiles t USING (path);
-- and whatever the CPU threads
SET geoacc.cpu_threads = 3;
SELECT bool_and(t.content = c.content) AND count(*) = (SELECT count(*) FROM tiles) AS same_on_3_threads
FROM terrain, gpu_mesh_tileset(mesh, 3, 8) c JOIN tiles t USING (path);
RESET geoacc.cpu_threads;
RESET geoacc.device;

-- a text literal is a geometry; one level is the mesh itself; more cells, finer parents
SELECT count(*) AS files FROM gpu_mesh_tileset('TIN Z (((0 0 0,1 0 0,0 1 0,0 0 0)))', 2);
SELECT count(*) AS files, sum(length(content)) FILTER (WHERE path LIKE '%.glb') > 0 AS has_glb
FROM terrain, gpu_mesh_tileset(mesh, 1);
SELECT (SELECT sum(length(content)) FROM terrain, gpu_mesh_tileset(mesh, 2, 16) WHERE path = 'tiles/0/0/0.glb')
	> (SELECT sum(length(content)) FROM terrain, gpu_mesh_tileset(mesh, 2, 4) WHERE path = 'tiles/0/0/0.glb') AS more_cells_finer;

-- PLY: colours and normals carried into every tile; SRID 0 keeps the mesh's coordinates (identity, translated)
WITH ply AS (
	SELECT convert_to(E'ply\nformat ascii 1.0\nelement vertex 5\nproperty double x\nproperty double y\nproperty double z\n'
		'property float nx\nproperty float ny\nproperty float nz\nproperty uchar red\nproperty uchar green\n'
		'property uchar blue\nelement face 4\nproperty list uchar int vertex_indices\nend_header\n'
		'0 0 0 0 0 1 255 0 0\n10 0 1 0 0 1 0 255 0\n10 10 2 0 0 1 0 0 255\n0 10 1 0 0 1 255 255 0\n5 5 3 0 0 1 9 9 9\n'
		'3 0 1 4\n3 1 2 4\n3 2 3 4\n3 3 0 4\n', 'UTF8') AS p)
SELECT count(*) FILTER (WHERE path LIKE '%.glb') AS glb_files,
	bool_and(position('"COLOR_0"'::bytea IN content) > 0 AND position('"NORMAL"'::bytea IN content) > 0)
		FILTER (WHERE path LIKE '%.glb') AS attributes_in_every_tile,
	bool_and(convert_from(content, 'UTF8')::jsonb #> '{root,transform}' = '[1,0,0,0,0,1,0,0,0,0,1,0,5,5,1.5,1]'::jsonb)
		FILTER (WHERE path = 'tileset.json') AS identity_at_origin
FROM ply, gpu_mesh_tileset(p, 2, cells => 2);

-- empty and NULL meshes, and triangles that all have two equal corners (which clips drop): no rows
SELECT count(*) AS rows_of_empty FROM gpu_mesh_tileset('TIN Z EMPTY'::geometry, 3);
SELECT count(*) AS rows_of_repeated_corners FROM gpu_mesh_tileset('TIN Z (((0 0 0,0 0 0,1 1 1,0 0 0)))', 3);
SELECT count(*) AS rows_of_null FROM gpu_mesh_tileset(NULL::geometry, 3);

-- two small triangles 140 m apart: the root (one cell) and level 1 (2 x 2 cells) cluster them to nothing; those
-- levels show nothing, so their error is the extent's diagonal (141.42 m), finite, JSON's numbers
WITH ts AS (SELECT convert_from(content, 'UTF8')::jsonb AS j
	FROM gpu_mesh_tileset('TIN Z (((0 0 0,1 0 0,0 1 0,0 0 0)),((99 99 1,100 99 1,99 100 1,99 99 1)))', 3, cells => 1)
	WHERE path = 'tileset.json')
SELECT round((j ->> 'geometricError')::numeric, 2) AS tileset_error, round((j #>> '{root,geometricError}')::numeric, 2) AS root_error,
	round((j #>> '{root,children,0,geometricError}')::numeric, 2) AS level_1_error, j #> '{root,content}' IS NULL AS root_empty
FROM ts;

-- a clustered triangle can reach a tile where the full mesh has nothing (here the clusters of levels 1 and 2
-- stretch three triangles over tiles that no leaf fills): that content is left out, so every leaf is at the last level
WITH RECURSIVE ts AS (SELECT convert_from(content, 'UTF8')::jsonb AS j
	FROM gpu_mesh_tileset('TIN Z (((38.6 12.8 23.8,16.9 73.2 76.9,16.3 48.1 36.7,38.6 12.8 23.8)),
		((35.0 4.3 0.4,9.2 99.1 11.6,90.4 74.2 27.0,35.0 4.3 0.4)),((60.8 82.6 66.5,3.3 99.4 94.6,73.8 64.1 28.4,60.8 82.6 66.5)))',
		4, cells => 1)
	WHERE path = 'tileset.json'),
tree(tile, level) AS (SELECT j -> 'root', 0 FROM ts UNION ALL
	SELECT c, level + 1 FROM tree, jsonb_array_elements(tile -> 'children') c)
SELECT count(*) FILTER (WHERE tile -> 'children' IS NULL) AS leaves,
	count(*) FILTER (WHERE tile -> 'children' IS NULL AND (level <> 3 OR (tile ->> 'geometricError')::float8 <> 0))
		AS leaves_above_the_last_level
FROM tree;

-- bad input
SELECT * FROM terrain, gpu_mesh_tileset(mesh, 0);
SELECT * FROM terrain, gpu_mesh_tileset(mesh, 11);
SELECT * FROM terrain, gpu_mesh_tileset(mesh, 2, 0);
SELECT * FROM terrain, gpu_mesh_tileset(mesh, 2, 1025);
SELECT * FROM gpu_mesh_tileset(ST_SetSRID('TIN Z (((0 0 0,1 0 0,0 1 0,0 0 0)))'::geometry, 4326), 2);
SELECT * FROM gpu_mesh_tileset(ST_SetSRID('TIN Z (((0 0 0,1 0 0,0 1 0,0 0 0)))'::geometry, 123456), 2);
SELECT * FROM gpu_mesh_tileset('LINESTRING Z (0 0 0,1 1 1)'::geometry, 2);
SELECT * FROM gpu_mesh_tileset('\x00'::bytea, 2);
SELECT * FROM gpu_mesh_tileset(geoacc_mesh_to_ply('TIN Z (((0 0 0,1 0 0,0 1 0,0 0 0)))'), 2, -1);

DROP TABLE terrain, tiles, tileset;
