-- gpu_mesh_clip and geoacc_tile_grid: clipping triangle meshes by boxes.
-- A terrain TIN at UTM coordinates (a height field, so that the 2-D area
-- PostGIS's ST_Area gives of a clip is the area of the box's footprint),
-- a closed cube and bad inputs; outputs are booleans and counts, the same
-- on the CPU and on the GPU.

-- heights rounded to micrometres, so that the WKT below carries them exactly
CREATE FUNCTION z(x float8, y float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$ SELECT round((10 * sin(x / 17) + 5 * cos(y / 13))::numeric, 6)::float8 $$;
-- n x n squares of `step` metres, two triangles each
CREATE FUNCTION mesh_terrain(n int, step float8, srid int) RETURNS geometry
LANGUAGE sql IMMUTABLE AS $$
	SELECT ST_GeomFromText('TIN Z (' || string_agg(format('((%1$s %2$s %5$s,%3$s %2$s %6$s,%3$s %4$s %7$s,%1$s %2$s %5$s)),'
		'((%1$s %2$s %5$s,%3$s %4$s %7$s,%1$s %4$s %8$s,%1$s %2$s %5$s))',
		x0, y0, x1, y1, z(x0, y0), z(x1, y0), z(x1, y1), z(x0, y1)), ',' ORDER BY i, j) || ')', srid)
	FROM generate_series(0, n - 1) i, generate_series(0, n - 1) j,
		LATERAL (SELECT 500000 + i * step AS x0, 4000000 + j * step AS y0,
			500000 + (i + 1) * step AS x1, 4000000 + (j + 1) * step AS y1) c
$$;

CREATE TEMP TABLE terrain AS SELECT t, ST_3DExtent(t) AS extent FROM mesh_terrain(16, 10, 32633) t GROUP BY t;
CREATE TEMP TABLE cube AS SELECT 'TIN Z (((0 0 0,0 1 0,1 1 0,0 0 0)),((0 0 0,1 1 0,1 0 0,0 0 0)),
	((0 0 1,1 0 1,1 1 1,0 0 1)),((0 0 1,1 1 1,0 1 1,0 0 1)),((0 0 0,1 0 0,1 0 1,0 0 0)),((0 0 0,1 0 1,0 0 1,0 0 0)),
	((0 1 0,0 1 1,1 1 1,0 1 0)),((0 1 0,1 1 1,1 1 0,0 1 0)),((0 0 0,0 0 1,0 1 1,0 0 0)),((0 0 0,0 1 1,0 1 0,0 0 0)),
	((1 0 0,1 1 0,1 1 1,1 0 0)),((1 0 0,1 1 1,1 0 1,1 0 0)))'::geometry AS c;
SELECT ST_NumGeometries(t) AS triangles, ST_Area(t) = 160 * 160 AS area_ok FROM terrain;

-- a box around everything keeps the mesh as it is
SELECT ST_AsBinary(gpu_mesh_clip(t, extent)) = ST_AsBinary(t) AS whole_kept,
	ST_AsBinary(gpu_mesh_clip(c, 'BOX3D(-1 -1 -1, 2 2 2)')) = ST_AsBinary(c) AS cube_kept
FROM terrain, cube;

-- the result is stored exactly as PostGIS stores it, with the input's SRID
SELECT r::bytea = ST_GeomFromEWKB(ST_AsEWKB(r))::bytea AS postgis_bytes, ST_SRID(r) AS srid,
	GeometryType(r) AS type, ST_NDims(r) AS dims
FROM terrain, gpu_mesh_clip(t, 'BOX3D(500033.3 4000051.1 -100, 500127.7 4000129.9 100)') r;

-- a box spanning every z cuts out its footprint, about 94.4 x 78.8 m (areas near the origin:
-- ST_Area's shoelace at UTM coordinates is only good to about 1e-4 m2 per triangle)
SELECT abs(ST_Area(ST_Translate(gpu_mesh_clip(t, 'BOX3D(500033.3 4000051.1 -100, 500127.7 4000129.9 100)'),
		-500000, -4000000)) - (500127.7::float8 - 500033.3) * (4000129.9::float8 - 4000051.1)) < 1e-9
	AS footprint_area
FROM terrain;

-- every point of the result lies in the (closed) box
SELECT bool_and(ST_X(p.geom) BETWEEN 500033.3 AND 500127.7 AND ST_Y(p.geom) BETWEEN 4000051.1 AND 4000129.9
		AND ST_Z(p.geom) BETWEEN -2 AND 3) AS inside,
	count(DISTINCT ST_Z(p.geom)) FILTER (WHERE ST_Z(p.geom) IN (-2, 3)) = 2 AS cut_exactly_at_planes
FROM terrain, ST_DumpPoints(gpu_mesh_clip(t, 'BOX3D(500033.3 4000051.1 -2, 500127.7 4000129.9 3)')) p;
SELECT count(DISTINCT ST_X(p.geom)) FILTER (WHERE ST_X(p.geom) IN (500033.3, 500127.7)) AS x_planes,
	count(DISTINCT ST_Y(p.geom)) FILTER (WHERE ST_Y(p.geom) IN (4000051.1, 4000129.9)) AS y_planes
FROM terrain, ST_DumpPoints(gpu_mesh_clip(t, 'BOX3D(500033.3 4000051.1 -100, 500127.7 4000129.9 100)')) p;

-- the same clip of the cube from above, below, and through a corner
SELECT ST_NumGeometries(gpu_mesh_clip(c, 'BOX3D(-1 -1 0.5, 2 2 2)')) AS top_half,
	ST_NumGeometries(gpu_mesh_clip(c, 'BOX3D(0.5 0.5 0.5, 2 2 2)')) AS corner,
	abs(ST_Area(gpu_mesh_clip(c, 'BOX3D(-1 -1 -1, 2 2 0.25)')) - 1) < 1e-12 AS bottom_area
FROM cube;

-- nothing inside: an empty TIN Z, SRID kept
SELECT ST_AsText(r) AS empty, ST_SRID(r) AS srid
FROM terrain, gpu_mesh_clip(t, 'BOX3D(0 0 0, 1 1 1)') r;

-- a POLYHEDRALSURFACE Z of triangles gives the same TIN
SELECT gpu_mesh_clip(ST_GeomFromText(replace(ST_AsText(t), 'TIN', 'POLYHEDRALSURFACE'), 32633),
		'BOX3D(500033.3 4000051.1 -100, 500127.7 4000129.9 100)')::bytea
	= gpu_mesh_clip(t, 'BOX3D(500033.3 4000051.1 -100, 500127.7 4000129.9 100)')::bytea AS polyhedral_same
FROM terrain;

-- the tiles of a grid: planes shared bit for bit, the last one exactly the extent's
SELECT count(*) AS tiles,
	bool_and(ST_XMin(box) < ST_XMax(box) AND ST_YMin(box) < ST_YMax(box) AND ST_ZMin(box) < ST_ZMax(box)) AS proper
FROM geoacc_tile_grid('BOX3D(500000.1 4000000.3 -7.25, 500123.7 4000099.9 31.5)', 7, 5, 3);
WITH g AS (SELECT * FROM geoacc_tile_grid('BOX3D(500000.1 4000000.3 -7.25, 500123.7 4000099.9 31.5)', 7, 5, 3))
SELECT bool_and(ST_XMax(a.box) = ST_XMin(b.box)) AS x_shared
FROM g a JOIN g b ON b.ix = a.ix + 1 AND b.iy = a.iy AND b.iz = a.iz;
WITH g AS (SELECT * FROM geoacc_tile_grid('BOX3D(500000.1 4000000.3 -7.25, 500123.7 4000099.9 31.5)', 7, 5, 3))
SELECT bool_and(ST_ZMax(a.box) = ST_ZMin(b.box)) AS z_shared
FROM g a JOIN g b ON b.iz = a.iz + 1 AND b.iy = a.iy AND b.ix = a.ix;
SELECT ST_XMax(box) = 500123.7 AND ST_YMax(box) = 4000099.9 AND ST_ZMax(box) = 31.5 AS last_is_max,
	(SELECT count(*) FROM geoacc_tile_grid('BOX3D(0 0 0, 1 1 1)', 2, 3)) AS default_nz
FROM geoacc_tile_grid('BOX3D(500000.1 4000000.3 -7.25, 500123.7 4000099.9 31.5)', 7, 5, 3)
WHERE ix = 6 AND iy = 4 AND iz = 2;

-- the tiles of a grid add up to the whole
SELECT abs(sum(ST_Area(ST_Translate(gpu_mesh_clip(t, g.box), -500000, -4000000))) - 160 * 160) < 1e-9 * 160 * 160
	AS tiles_add_up
FROM terrain, geoacc_tile_grid(extent, 3, 4, 2) g;

-- neighbouring tiles meet: the points of both on their common plane are the same
WITH p AS (
	SELECT g.ix, d.geom
	FROM terrain, geoacc_tile_grid(extent, 3, 4) g,
		ST_DumpPoints(gpu_mesh_clip(t, g.box)) d
	WHERE ST_X(d.geom) = (SELECT ST_XMax(box) FROM terrain, geoacc_tile_grid(extent, 3, 4) WHERE ix = 0 AND iy = 0))
SELECT count(DISTINCT ST_AsEWKB(geom)) FILTER (WHERE ix = 0) AS left_points,
	(SELECT array_agg(DISTINCT ST_AsEWKB(geom)) FROM p WHERE ix = 0)
	= (SELECT array_agg(DISTINCT ST_AsEWKB(geom)) FROM p WHERE ix = 1) AS same_points
FROM p;

-- many boxes in one call: a row per box, equal to the single-box calls, empty tiles included
WITH b AS (SELECT ARRAY(SELECT box FROM geoacc_tile_grid('BOX3D(500020 4000020 -20, 500260 4000260 20)', 4, 4)
		ORDER BY ix, iy) AS boxes)
SELECT count(*) AS rows, count(*) FILTER (WHERE ST_IsEmpty(m.mesh)) AS empty,
	bool_and(m.mesh::bytea = gpu_mesh_clip(t, b.boxes[m.box_index])::bytea) AS same_as_single
FROM terrain, b, gpu_mesh_clip(t, b.boxes) m;
SELECT count(*) AS no_boxes FROM terrain, gpu_mesh_clip(t, '{}'::box3d[]);

-- NULL in, NULL out
SELECT gpu_mesh_clip(NULL::geometry, 'BOX3D(0 0 0, 1 1 1)'::box3d) IS NULL AS null_mesh,
	gpu_mesh_clip(c, NULL::box3d) IS NULL AS null_box,
	(SELECT count(*) FROM gpu_mesh_clip(c, NULL::box3d[])) AS null_boxes
FROM cube;

-- bad input
SELECT gpu_mesh_clip('LINESTRING Z (0 0 0, 1 1 1)', 'BOX3D(0 0 0, 1 1 1)'::box3d);
SELECT gpu_mesh_clip('TIN (((0 0,1 0,0 1,0 0)))', 'BOX3D(0 0 0, 1 1 1)'::box3d);
SELECT gpu_mesh_clip('TIN ZM (((0 0 0 1,1 0 0 1,0 1 0 1,0 0 0 1)))', 'BOX3D(0 0 0, 1 1 1)'::box3d);
SELECT gpu_mesh_clip('POLYHEDRALSURFACE Z (((0 0 0,1 0 0,1 1 0,0 1 0,0 0 0)))', 'BOX3D(0 0 0, 1 1 1)'::box3d);
SELECT gpu_mesh_clip('POLYHEDRALSURFACE Z (((0 0 0,4 0 0,0 4 0,0 0 0),(1 1 0,2 1 0,1 2 0,1 1 0)))',
	'BOX3D(0 0 0, 1 1 1)'::box3d);
SELECT gpu_mesh_clip('TIN Z (((0 0 0,1 0 0,0 1 0,0 0 0)),((0 0 0,1 0 0,0 1 NaN,0 0 0)))', 'BOX3D(0 0 0, 1 1 1)'::box3d);
SELECT gpu_mesh_clip(ST_Translate('TIN Z (((0 0 0,1 0 0,0 1 0,0 0 0)))', 'Infinity'::float8, 0, 0),
	'BOX3D(0 0 0, 1 1 1)'::box3d);
SELECT gpu_mesh_clip(c, ST_3DMakeBox(ST_MakePoint(1, 0, 0), ST_MakePoint(0, 1, 1))) FROM cube;
SELECT gpu_mesh_clip(c, 'BOX3D(0 0 NaN, 1 1 1)'::box3d) FROM cube;
SELECT * FROM cube, gpu_mesh_clip(c, ARRAY['BOX3D(0 0 0, 1 1 1)'::box3d, NULL]);
SELECT * FROM cube, gpu_mesh_clip(c, ARRAY[['BOX3D(0 0 0, 1 1 1)'::box3d], ['BOX3D(0 0 0, 1 1 1)'::box3d]]);
SELECT * FROM cube, gpu_mesh_clip(c, ARRAY['BOX3D(0 0 0, 1 1 1)'::box3d,
	ST_3DMakeBox(ST_MakePoint(0, 1, 0), ST_MakePoint(1, 0, 1))]);
SELECT * FROM geoacc_tile_grid('BOX3D(0 0 0, 1 1 1)', 0, 1);
SELECT * FROM geoacc_tile_grid(ST_3DMakeBox(ST_MakePoint(0, 0, 1), ST_MakePoint(1, 1, 0)), 2, 2);
-- more tiles than 64 bits count
SELECT count(*) FROM geoacc_tile_grid('BOX3D(0 0 0, 1 1 1)', 65535, 2147483647, 2147483647);
-- tiles come one at a time: a large grid streams (in the select list; in FROM the executor keeps every row
-- it is given) and a cancel stops it (the grid was once made whole first: 4.7 GB for 10^8 tiles)
SELECT (geoacc_tile_grid('BOX3D(0 0 0, 1 1 1)', 100000, 100000, 1000)).* LIMIT 2;
SET statement_timeout = '200ms';
SELECT count(*) FROM geoacc_tile_grid('BOX3D(0 0 0, 1 1 1)', 10000, 10000);
RESET statement_timeout;
-- an extent whose planes would overflow has no tiles
SELECT * FROM geoacc_tile_grid('BOX3D(0 0 0, 1e308 1 1)', 3, 1);
SELECT * FROM geoacc_tile_grid('BOX3D(-1e308 0 0, 1e308 1 1)', 1, 1);
SELECT * FROM geoacc_tile_grid(ST_3DMakeBox(ST_MakePoint(0, 0, 0), ST_MakePoint('Infinity', 1, 1)), 1, 1);
SELECT count(*) AS tiles, bool_and(ST_XMin(box) <= ST_XMax(box)) AS in_order
FROM geoacc_tile_grid('BOX3D(-1e307 0 0, 1e307 1 1)', 8, 1);

-- no output triangle has two equal corners: an edge along a box face leaves nothing, not a sliver
SELECT ST_AsText(gpu_mesh_clip('TIN Z (((0 0 0,2 0 0,0 2 0,0 0 0)))', 'BOX3D(-1 0 -1, 0 1 1)'::box3d)) AS edge_on_x_face,
	ST_AsText(gpu_mesh_clip('TIN Z (((0 0 0,2 0 0,0 2 0,0 0 0)))', 'BOX3D(0 -1 -1, 1 0 1)'::box3d)) AS edge_on_y_face;
-- a terrain cut by tiles whose planes run along its edges: every triangle valid, the area kept
WITH t AS (SELECT ST_DelaunayTriangles(ST_Collect(ST_MakePoint(x, y, (x * y) % 3)), 0, 2) AS mesh
		FROM generate_series(0, 10) x, generate_series(0, 10) y),
	pieces AS (SELECT (ST_Dump(gpu_mesh_clip(t.mesh, g.box))).geom AS tri
		FROM t, geoacc_tile_grid('BOX3D(0 0 -1, 10 10 3)', 10, 3) g)
SELECT count(*) AS triangles,
	count(*) FILTER (WHERE NOT ST_IsValid(tri)) AS invalid,
	count(*) FILTER (WHERE ST_PointN(ST_ExteriorRing(tri), 1) ~= ST_PointN(ST_ExteriorRing(tri), 2)
		OR ST_PointN(ST_ExteriorRing(tri), 2) ~= ST_PointN(ST_ExteriorRing(tri), 3)
		OR ST_PointN(ST_ExteriorRing(tri), 1) ~= ST_PointN(ST_ExteriorRing(tri), 3)) AS degenerate,
	round(sum(ST_Area(tri))::numeric, 9) AS plan_area
FROM pieces;
-- a clip's PLY has one vertex per position there too
WITH t AS (SELECT ST_DelaunayTriangles(ST_Collect(ST_MakePoint(x, y, 0)), 0, 2) AS mesh
		FROM generate_series(0, 10) x, generate_series(0, 10) y),
	m AS (SELECT geoacc_mesh_from_ply(gpu_mesh_clip(geoacc_mesh_to_ply(t.mesh), 'BOX3D(0 0 -1, 3.3333333333333335 10 1)'::box3d)) AS tin FROM t)
SELECT ST_NPoints(tin) / 4 AS triangles, (SELECT count(DISTINCT ST_AsText(p.geom)) FROM ST_DumpPoints(tin) p) AS positions
FROM m;

-- coordinates near the ends of the double range: cut points stay finite and the area is the box's
SELECT ST_AsText(c) AS clipped, ST_Area(c) AS area
FROM gpu_mesh_clip('TIN Z (((-1e308 -1e308 -1e308,1e308 -1e308 1e308,0 1e308 0,-1e308 -1e308 -1e308)))',
	'BOX3D(-1 -1 -1, 1 1 1)'::box3d) c;

-- box_index is the array's own subscript
SELECT box_index, ST_NPoints(mesh) AS points
FROM gpu_mesh_clip('TIN Z (((0 0 0,2 0 0,0 2 0,0 0 0)))', '[5:6]={"BOX3D(0 0 -1,1 1 1)","BOX3D(5 5 5,6 6 6)"}'::box3d[]);
-- a box with an SRID must have the mesh's (0 goes with any)
SELECT gpu_mesh_clip('SRID=32618;TIN Z (((0 0 0,2 0 0,0 2 0,0 0 0)))', ST_SetSRID('BOX3D(0 0 -1,1 1 1)'::box3d, 4326));
SELECT * FROM gpu_mesh_clip('SRID=32618;TIN Z (((0 0 0,2 0 0,0 2 0,0 0 0)))', ARRAY[ST_SetSRID('BOX3D(0 0 -1,1 1 1)'::box3d, 32619)]);
SELECT ST_SRID(gpu_mesh_clip('SRID=32618;TIN Z (((0 0 0,2 0 0,0 2 0,0 0 0)))', 'BOX3D(0 0 -1,1 1 1)'::box3d)) AS srid;
-- arguments swapped: the box, cast to a geometry, is the six faces of a box
SELECT gpu_mesh_clip('BOX3D(0 0 -1,1 1 1)'::box3d, 'TIN Z (((0 0 0,2 0 0,0 2 0,0 0 0)))'::geometry);

DROP FUNCTION mesh_terrain(int, float8, int), z(float8, float8);
