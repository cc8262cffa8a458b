-- Meshes as PLY files (bytea) and binary glTF: conversions from and to TIN Z,
-- gpu_mesh_clip on PLY (the same triangles as on TIN, attributes of cut
-- points interpolated), a real PLY file (CGAL's colored tetrahedron) and the
-- elephant (its OFF file turned into PLY), GLB structure, and malformed PLY
-- of every kind.  Outputs are booleans, counts and error texts, the same on
-- the CPU and on the GPU.

-- a terrain of 16 x 16 squares of 10 m at UTM coordinates, heights rounded to micrometres
CREATE TEMP TABLE terrain AS
WITH h AS (
	SELECT i, j, 500000 + i * 10 AS x, 4000000 + j * 10 AS y,
		round((10 * sin((500000 + i * 10) / 17.0) + 5 * cos((4000000 + j * 10) / 13.0))::numeric, 6) AS z
	FROM generate_series(0, 16) i, generate_series(0, 16) j)
SELECT ST_GeomFromText('TIN Z (' || string_agg(format('((%s %s %s,%s %s %s,%s %s %s,%s %s %s)),((%s %s %s,%s %s %s,%s %s %s,%s %s %s))',
		a.x, a.y, a.z, b.x, b.y, b.z, c.x, c.y, c.z, a.x, a.y, a.z,
		a.x, a.y, a.z, c.x, c.y, c.z, d.x, d.y, d.z, a.x, a.y, a.z), ',' ORDER BY a.i, a.j) || ')', 32633) AS t
FROM h a
JOIN h b ON b.i = a.i + 1 AND b.j = a.j
JOIN h c ON c.i = a.i + 1 AND c.j = a.j + 1
JOIN h d ON d.i = a.i AND d.j = a.j + 1;
CREATE TEMP TABLE cube AS SELECT 'TIN Z (((0 0 0,0 1 0,1 1 0,0 0 0)),((0 0 0,1 1 0,1 0 0,0 0 0)),
	((0 0 1,1 0 1,1 1 1,0 0 1)),((0 0 1,1 1 1,0 1 1,0 0 1)),((0 0 0,1 0 0,1 0 1,0 0 0)),((0 0 0,1 0 1,0 0 1,0 0 0)),
	((0 1 0,0 1 1,1 1 1,0 1 0)),((0 1 0,1 1 1,1 1 0,0 1 0)),((0 0 0,0 0 1,0 1 1,0 0 0)),((0 0 0,0 1 1,0 1 0,0 0 0)),
	((1 0 0,1 1 0,1 1 1,1 0 0)),((1 0 0,1 1 1,1 0 1,1 0 0)))'::geometry AS c;
SELECT ST_NumGeometries(t) AS triangles, ST_Area(t) = 160 * 160 AS area_ok FROM terrain;

-- TIN -> PLY -> TIN gives the TIN back, byte for byte (the SRID given back)
SELECT geoacc_mesh_from_ply(geoacc_mesh_to_ply(t), 32633)::bytea = t::bytea AS terrain_round_trip,
	ST_AsEWKB(geoacc_mesh_from_ply(geoacc_mesh_to_ply(c))) = ST_AsEWKB(c) AS cube_round_trip,
	ST_SRID(geoacc_mesh_from_ply(geoacc_mesh_to_ply(t))) AS default_srid
FROM terrain, cube;

-- a POLYHEDRALSURFACE Z of triangles gives the same PLY
SELECT geoacc_mesh_to_ply(ST_GeomFromText(replace(ST_AsText(c), 'TIN', 'POLYHEDRALSURFACE')))
	= geoacc_mesh_to_ply(c) AS polyhedral_same
FROM cube;

-- PLY: a header, then 24 bytes a vertex (equal corners are one vertex) and 13 a face: a quarter of the TIN
SELECT length(p) - 13 * ST_NumGeometries(t) - 24 * 17 * 17 AS header_bytes,
	round(length(t::bytea)::numeric / length(p), 1) AS tin_to_ply_ratio,
	encode(substring(p FROM 1 FOR 214), 'escape') AS header
FROM terrain, geoacc_mesh_to_ply(t) p;

-- a PLY clip has the triangles of the TIN clip (one box, and tiles of a grid in one call)
SELECT geoacc_mesh_from_ply(gpu_mesh_clip(geoacc_mesh_to_ply(t), 'BOX3D(500033.3 4000051.1 -2, 500127.7 4000129.9 3)'::box3d),
		32633)::bytea
	= gpu_mesh_clip(t, 'BOX3D(500033.3 4000051.1 -2, 500127.7 4000129.9 3)'::box3d)::bytea AS same_as_tin_clip,
	ST_NumGeometries(gpu_mesh_clip(t, 'BOX3D(500033.3 4000051.1 -2, 500127.7 4000129.9 3)'::box3d)) AS triangles
FROM terrain;
WITH e AS (SELECT ST_3DExtent(t) AS extent FROM terrain),
g AS (SELECT ARRAY(SELECT box FROM e, geoacc_tile_grid(extent, 3, 4, 2) ORDER BY ix, iy, iz) AS boxes)
SELECT count(*) AS tiles,
	bool_and(geoacc_mesh_from_ply(p.ply, 32633)::bytea = m.mesh::bytea) AS tiles_same_as_tin,
	bool_and(p.ply = gpu_mesh_clip(geoacc_mesh_to_ply(t), g.boxes[p.box_index])) AS same_as_single,
	abs(sum(ST_Area(ST_Translate(geoacc_mesh_from_ply(p.ply), -500000, -4000000))) - 160 * 160) < 1e-9 * 160 * 160
		AS tiles_add_up
FROM terrain, g, gpu_mesh_clip(geoacc_mesh_to_ply(t), g.boxes) p
JOIN gpu_mesh_clip(t, g.boxes) m USING (box_index);

-- nothing inside: a PLY of no vertices and no faces
SELECT encode(gpu_mesh_clip(geoacc_mesh_to_ply(c), 'BOX3D(5 5 5, 6 6 6)'::box3d), 'escape') AS empty_ply,
	ST_AsText(geoacc_mesh_from_ply(gpu_mesh_clip(geoacc_mesh_to_ply(c), 'BOX3D(5 5 5, 6 6 6)'::box3d))) AS empty_tin,
	(SELECT count(*) FROM gpu_mesh_clip(geoacc_mesh_to_ply(c), '{}'::box3d[])) AS no_boxes
FROM cube;

-- ASCII in, binary out: the same mesh; a quad is two triangles (a fan from its first vertex)
SELECT ST_AsText(geoacc_mesh_from_ply(convert_to(E'ply\nformat ascii 1.0\nelement vertex 5\nproperty float x\n'
	'property float y\nproperty float z\nelement face 2\nproperty list uchar int vertex_indices\nend_header\n'
	'0 0 0\n2 0 0\n2 2 0\n0 2 0\n1 3 1\n4 0 1 2 3\n3 3 2 4\n', 'UTF8'))) AS quad_and_triangle;
SELECT geoacc_mesh_to_ply(geoacc_mesh_from_ply(p)) = geoacc_mesh_to_ply(geoacc_mesh_from_ply(
		gpu_mesh_clip(p, 'BOX3D(-1 -1 -1, 9 9 9)'::box3d))) AS ascii_and_binary_same
FROM convert_to(E'ply\nformat ascii 1.0\nelement vertex 4\nproperty double x\nproperty double y\nproperty double z\n'
	'element face 2\nproperty list uchar int vertex_indices\nend_header\n'
	'0.1 0.2 0.3\n2.5 0 0\n2 2.25 0\n0 2 1e-3\n3 0 1 2\n3 0 2 3\n', 'UTF8') p;

-- texture coordinates of cut points, by hand: the triangle (0,0) (2,0) (0,2) with UVs (0,0) (1,0) (0,1)
-- and its neighbour (2,0) (2,2) (0,2) with its own vertices and UVs across the common edge (a seam),
-- cut at x = 1.  Cut points: (1,0) UV (0.5,0); (1,1) twice, UV (0.5,0.5) and, on the seam's other side,
-- the middle of (0.25,0.75) and (0.75,0.75); (1,2) UV the middle of (0.75,0.75) and (1,1).  Written in
-- the clip's order (used vertices, then cut points by edge) as a PLY that a box around it keeps as it is.
SELECT gpu_mesh_clip(convert_to(E'ply\nformat ascii 1.0\nelement vertex 6\nproperty double x\nproperty double y\n'
		'property double z\nproperty float u\nproperty float v\nelement face 2\nproperty list uchar int vertex_indices\n'
		'end_header\n0 0 0 0 0\n2 0 0 1 0\n0 2 0 0 1\n2 0 0 0.25 0.75\n0 2 0 0.75 0.75\n2 2 0 1 1\n3 0 1 2\n3 3 5 4\n',
		'UTF8'), 'BOX3D(-1 -1 -1, 1 3 1)'::box3d)
	= gpu_mesh_clip(convert_to(E'ply\nformat ascii 1.0\nelement vertex 7\nproperty double x\nproperty double y\n'
		'property double z\nproperty float u\nproperty float v\nelement face 3\nproperty list uchar int vertex_indices\n'
		'end_header\n0 0 0 0 0\n0 2 0 0 1\n0 2 0 0.75 0.75\n1 0 0 0.5 0\n1 1 0 0.5 0.5\n1 1 0 0.5 0.75\n'
		'1 2 0 0.875 0.875\n3 0 3 4\n3 0 4 1\n3 6 2 5\n', 'UTF8'), 'BOX3D(-9 -9 -9, 9 9 9)'::box3d) AS uv_by_hand;

-- the real file: a tetrahedron with normals, colours, an id per vertex, face colours and an edge element
CREATE TEMP TABLE files (name text, data bytea);
CREATE TEMP TABLE b64 (line text);
\copy b64 FROM PROGRAM 'base64 -w0 data/meshes/colored_tetra.ply'
INSERT INTO files SELECT 'colored_tetra', decode(line, 'base64') FROM b64;
TRUNCATE b64;
SELECT ST_NumGeometries(geoacc_mesh_from_ply(data)) AS triangles, ST_NPoints(geoacc_mesh_from_ply(data)) AS points,
	abs(ST_Area(geoacc_mesh_from_ply(data)) - 1) < 1e-15 AS xy_area_ok,
	length(geoacc_mesh_to_ply(geoacc_mesh_from_ply(data))) < length(data) AS smaller_as_binary
FROM files WHERE name = 'colored_tetra';
-- clipped halfway up: the attributes (normals, uchar colours) stay, as a binary PLY header says
SELECT encode(substring(p FROM 1 FOR position('end_header' IN p) + 10), 'escape') AS clipped_header,
	ST_NumGeometries(geoacc_mesh_from_ply(p)) AS triangles
FROM files, gpu_mesh_clip(data, 'BOX3D(-1 -1 0.5, 2 2 2)'::box3d) p WHERE name = 'colored_tetra';

-- the elephant (a closed mesh of 5,558 triangles): its OFF file written as ASCII PLY, and as a TIN from the
-- same text; the two agree, and the PLY clip equals the TIN clip
CREATE TEMP TABLE off (n int, line text);
\copy off FROM PROGRAM 'gzip -dc data/meshes/elephant.off.gz | cat -n'
CREATE TEMP TABLE off_rows AS
SELECT row_number() OVER (ORDER BY n) - 1 AS r, regexp_split_to_array(btrim(line), '\s+') AS w
FROM off WHERE btrim(line) <> '';
INSERT INTO files
SELECT 'elephant', convert_to(format(E'ply\nformat ascii 1.0\ncomment CGAL elephant.off\nelement vertex %s\n'
	'property double x\nproperty double y\nproperty double z\nelement face %s\n'
	'property list uchar int vertex_indices\nend_header\n', c.w[1], c.w[2])
	|| (SELECT string_agg(array_to_string(w, ' '), E'\n' ORDER BY r) FROM off_rows WHERE r >= 2) || E'\n', 'UTF8')
FROM off_rows c WHERE c.r = 1;
CREATE TEMP TABLE elephant AS
SELECT ST_GeomFromText('TIN Z (' || string_agg(format('((%s,%s,%s,%s))',
		array_to_string(a.w, ' '), array_to_string(b.w, ' '), array_to_string(c.w, ' '), array_to_string(a.w, ' ')),
		',' ORDER BY f.r) || ')') AS t
FROM off_rows f
JOIN off_rows a ON a.r = f.w[2]::int + 2
JOIN off_rows b ON b.r = f.w[3]::int + 2
JOIN off_rows c ON c.r = f.w[4]::int + 2
WHERE f.r >= 2 + (SELECT w[1]::int FROM off_rows WHERE r = 1);
SELECT ST_NumGeometries(t) AS triangles, geoacc_mesh_from_ply(data)::bytea = t::bytea AS ply_same_as_tin,
	ST_AsEWKB(geoacc_mesh_from_ply(geoacc_mesh_to_ply(t))) = ST_AsEWKB(t) AS round_trip
FROM elephant, files WHERE name = 'elephant';
WITH e AS (SELECT ST_3DExtent(t) AS extent FROM elephant),
g AS (SELECT ARRAY(SELECT box FROM e, geoacc_tile_grid(extent, 3, 3, 3) ORDER BY ix, iy, iz) AS boxes)
SELECT count(*) AS tiles, count(*) FILTER (WHERE ST_NumGeometries(m.mesh) > 0) AS tiles_with_triangles,
	bool_and(geoacc_mesh_from_ply(p.ply)::bytea = m.mesh::bytea) AS ply_tiles_same_as_tin,
	abs(sum(ST_Area(m.mesh)) - (SELECT ST_Area(t) FROM elephant)) < 1e-9 * (SELECT ST_Area(t) FROM elephant)
		AS tiles_add_up
FROM elephant, files, g, gpu_mesh_clip(data, g.boxes) p
JOIN gpu_mesh_clip(t, g.boxes) m USING (box_index)
WHERE name = 'elephant';

-- binary glTF: the 12-byte header, a JSON chunk and a binary chunk, each 4-byte aligned
CREATE FUNCTION pg_temp.u32(b bytea, o int) RETURNS bigint LANGUAGE sql IMMUTABLE AS
$$ SELECT get_byte(b, o)::bigint + (get_byte(b, o + 1)::bigint << 8) + (get_byte(b, o + 2)::bigint << 16)
	+ (get_byte(b, o + 3)::bigint << 24) $$;
CREATE FUNCTION pg_temp.glb_json(b bytea) RETURNS jsonb LANGUAGE sql IMMUTABLE AS
$$ SELECT convert_from(substring(b FROM 21 FOR pg_temp.u32(b, 12)::int), 'UTF8')::jsonb $$;
SELECT substring(g FROM 1 FOR 4) = 'glTF'::bytea AS magic, pg_temp.u32(g, 4) AS version,
	pg_temp.u32(g, 8) = length(g) AS total_length,
	pg_temp.u32(g, 12) % 4 = 0 AND substring(g FROM 17 FOR 4) = 'JSON'::bytea AS json_chunk,
	pg_temp.u32(g, 20 + pg_temp.u32(g, 12)::int) % 4 = 0
		AND substring(g FROM 25 + pg_temp.u32(g, 12)::int FOR 4) = E'BIN\\000'::bytea AS bin_chunk,
	20 + pg_temp.u32(g, 12) + 8 + pg_temp.u32(g, 20 + pg_temp.u32(g, 12)::int) = length(g) AS chunks_fill_it,
	(pg_temp.glb_json(g) -> 'buffers' -> 0 ->> 'byteLength')::int = pg_temp.u32(g, 20 + pg_temp.u32(g, 12)::int)
		AS buffer_is_bin_chunk
FROM terrain, geoacc_mesh_to_glb(t) g;
-- the local origin: the centre of the bounding box in the node's translation (y-up: x, z, -y), positions
-- float32 around it, their bounds in the POSITION accessor; indices uint32, three per triangle
SELECT j -> 'asset' ->> 'version' AS gltf_version,
	(j -> 'nodes' -> 0 -> 'translation' ->> 0)::float8 = 500080 AS origin_x,
	(j -> 'nodes' -> 0 -> 'translation' ->> 2)::float8 = -4000080 AS origin_y_as_minus_z,
	j -> 'accessors' -> 0 -> 'min' -> 0 = '-80'::jsonb AND j -> 'accessors' -> 0 -> 'max' -> 0 = '80'::jsonb
		AND j -> 'accessors' -> 0 -> 'min' -> 2 = '-80'::jsonb AS position_bounds,
	(j -> 'accessors' -> 0 ->> 'count')::int AS vertices,
	(j -> 'accessors' -> 1 ->> 'count')::int / 3 AS triangles,
	j -> 'accessors' -> 1 ->> 'componentType' AS index_type,
	jsonb_object_keys(j -> 'meshes' -> 0 -> 'primitives' -> 0 -> 'attributes') AS attributes
FROM terrain, pg_temp.glb_json(geoacc_mesh_to_glb(t)) j;
-- from PLY: normals, colours and texture coordinates when the file has them; an empty mesh has no mesh
SELECT array(SELECT jsonb_object_keys(j -> 'meshes' -> 0 -> 'primitives' -> 0 -> 'attributes') ORDER BY 1) AS attributes,
	j -> 'accessors' -> 2 ->> 'type' AS colour_type
FROM files, pg_temp.glb_json(geoacc_mesh_to_glb(data)) j WHERE name = 'colored_tetra';
SELECT array(SELECT jsonb_object_keys(j -> 'meshes' -> 0 -> 'primitives' -> 0 -> 'attributes') ORDER BY 1) AS attributes
FROM pg_temp.glb_json(geoacc_mesh_to_glb(convert_to(E'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n'
	'property float y\nproperty float z\nproperty float s\nproperty float t\nelement face 1\n'
	'property list uchar int vertex_indices\nend_header\n0 0 0 0 0\n1 0 0 1 0\n0 1 0 0 1\n3 0 1 2\n', 'UTF8'))) j;
SELECT j AS empty_glb_json, length(g) AS bytes
FROM geoacc_mesh_to_glb('TIN Z EMPTY') g, pg_temp.glb_json(g) j;
SELECT geoacc_mesh_to_glb(geoacc_mesh_to_ply(t)) = geoacc_mesh_to_glb(t) AS glb_from_ply_same FROM terrain;

-- NULL in, NULL out
SELECT geoacc_mesh_from_ply(NULL) IS NULL AS null_from, geoacc_mesh_to_ply(NULL) IS NULL AS null_to,
	gpu_mesh_clip(NULL::bytea, 'BOX3D(0 0 0, 1 1 1)'::box3d) IS NULL AS null_clip,
	geoacc_mesh_to_glb(NULL::bytea) IS NULL AS null_glb;

-- bad input: what is wrong and where
SELECT geoacc_mesh_from_ply('');
SELECT geoacc_mesh_from_ply('solid cube'::bytea);
SELECT geoacc_mesh_from_ply(geoacc_mesh_to_ply(c), -1) FROM cube;
SELECT geoacc_mesh_to_ply('LINESTRING Z (0 0 0, 1 1 1)');
SELECT geoacc_mesh_to_glb('TIN (((0 0,1 0,0 1,0 0)))');
SELECT gpu_mesh_clip(geoacc_mesh_to_ply(c), 'BOX3D(0 0 NaN, 1 1 1)'::box3d) FROM cube;
SELECT * FROM cube, gpu_mesh_clip(geoacc_mesh_to_ply(c), ARRAY['BOX3D(0 0 0, 1 1 1)'::box3d, NULL]);
CREATE TEMP TABLE bad (n serial, ply text);
INSERT INTO bad (ply) VALUES
	(E'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n'),
	(E'ply\nelement vertex 0\nproperty float x\nproperty float y\nproperty float z\nend_header\n'),
	(E'ply\nformat binary_middle_endian 1.0\nend_header\n'),
	(E'ply\nformat ascii 1.1\nend_header\n'),
	(E'ply\nformat ascii 1.0\nelement vertex many\nend_header\n'),
	(E'ply\nformat ascii 1.0\nproperty float x\nend_header\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 1\nproperty float16 x\nend_header\n'),
	(E'ply\nformat ascii 1.0\nelement face 1\nproperty list double int vertex_indices\nend_header\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float y\nend_header\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nend header\n'),
	(E'ply\nformat ascii 1.0\nelement face 0\nproperty list uchar int vertex_indices\nend_header\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nend_header\n0 0\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 1\nproperty short x\nproperty short y\nproperty short z\nend_header\n0 0 0\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\n'
		'property float nx\nend_header\n0 0 0 1\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\n'
		'property int red\nproperty int green\nproperty int blue\nend_header\n0 0 0 1 1 1\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n'
		'element face 1\nproperty list uchar int vertices\nend_header\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n'
		'element face 1\nproperty list uchar float vertex_indices\nend_header\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 100\nproperty float x\nproperty float y\nproperty float z\n'
		'end_header\n0 0 0\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n'
		'element face 2\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n3 0 1\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n'
		'element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n3 0 1 2\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n'
		'element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n'
		'element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n2 0 1\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n'
		'element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n256 0 1 2\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n'
		'element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 x\n3 0 1 2\n'),
	(E'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n'
		'element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 NaN\n3 0 1 2\n');
-- each as one row: the error text is caught, so that one query lists them all
CREATE FUNCTION pg_temp.ply_error(ply bytea) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	PERFORM geoacc_mesh_from_ply(ply);
	RETURN 'no error';
EXCEPTION WHEN invalid_parameter_value THEN
	RETURN SQLERRM;
END $$;
SELECT n, pg_temp.ply_error(convert_to(ply, 'UTF8')) AS error FROM bad ORDER BY n;
-- binary: truncated, and longer than its counts say
SELECT pg_temp.ply_error(substring(p FROM 1 FOR length(p) - 1)) AS truncated,
	pg_temp.ply_error(p || '\x00'::bytea) AS surplus,
	pg_temp.ply_error(substring(p FROM 1 FOR length(p) - 13 * 12 - 1)) AS truncated_counts
FROM cube, geoacc_mesh_to_ply(c) p;
-- the same errors from the clip and from the GLB writer
SELECT gpu_mesh_clip(convert_to(ply, 'UTF8'), 'BOX3D(0 0 0, 1 1 1)'::box3d) FROM bad WHERE n = 21;
SELECT geoacc_mesh_to_glb(convert_to(ply, 'UTF8')) FROM bad WHERE n = 22;

-- a count larger than the data is refused before anything is allocated for it: a face of 805,306,368 or
-- 2^31 - 1 corners in 219 bytes (once 6 GB and 16 GB of memory), a list in another element, ASCII too
WITH h AS (SELECT convert_to(E'ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\n'
		'property float y\nproperty float z\nelement face 1\nproperty list int int vertex_indices\nend_header\n',
		'UTF8') AS header)
SELECT pg_temp.ply_error(header || decode(repeat('00', 36) || '00000030' || '000000000100000002000000', 'hex')) AS face_count,
	pg_temp.ply_error(header || decode(repeat('00', 36) || 'ffffff7f' || '000000000100000002000000', 'hex')) AS face_count_max
FROM h;
SELECT pg_temp.ply_error(convert_to(E'ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\n'
		'property float y\nproperty float z\nproperty list uint float junk\nend_header\n', 'UTF8')
		|| decode(repeat('00', 12) || 'ffffffff' || '00000000', 'hex')) AS vertex_list,
	pg_temp.ply_error(convert_to(E'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n'
		'property float z\nelement face 1\nproperty list int int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n'
		'2147483647 0 1 2\n', 'UTF8')) AS ascii_face;
-- words of the file in messages: ASCII, other bytes as \xNN, cut at 40 characters
SELECT pg_temp.ply_error(convert_to(E'ply\nformat \u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9 1.0\nend_header\n', 'UTF8')) AS multibyte,
	pg_temp.ply_error(convert_to(E'ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n'
		'property float z\nend_header\n0 0 \u00e9\n', 'UTF8')) AS multibyte_data;
-- a mesh too wide for glTF's float32 positions is refused, not written with infinite bounds
SELECT geoacc_mesh_to_glb('TIN Z (((0 0 0,1e300 0 0,0 1e300 0,0 0 0)))'::geometry);
