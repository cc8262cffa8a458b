-- 3D Tiles tilesets of triangle meshes: level-of-detail quadtrees in one call.

CREATE OR REPLACE FUNCTION gpu_mesh_tileset(mesh geometry, levels int, cells int DEFAULT 64)
	RETURNS TABLE(path text, content bytea)
	AS 'MODULE_PATHNAME', 'gpu_mesh_tileset' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000 ROWS 100;
COMMENT ON FUNCTION gpu_mesh_tileset(geometry, int, int) IS
	'A 3D Tiles 1.1 tileset of a TIN Z: tileset.json and a GLB per tile of a quadtree of levels levels, the leaves the mesh''s clips, the parents clustered on cells x cells per tile (crack-free), each level''s geometricError a measured bound of its distance from the mesh, placed on the Earth from the mesh''s SRID';

CREATE OR REPLACE FUNCTION gpu_mesh_tileset(ply bytea, levels int, srid int DEFAULT 0, cells int DEFAULT 64)
	RETURNS TABLE(path text, content bytea)
	AS 'MODULE_PATHNAME', 'gpu_mesh_tileset_ply' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000 ROWS 100;
COMMENT ON FUNCTION gpu_mesh_tileset(bytea, int, int, int) IS
	'The 3D Tiles 1.1 tileset of a PLY mesh whose coordinates are in SRID srid (0: no placement on the Earth), normals, colours and texture coordinates carried into the tiles';

-- a string literal is a geometry, as in PostGIS (without this it would match geometry and bytea alike)
CREATE OR REPLACE FUNCTION gpu_mesh_tileset(mesh text, levels int, cells int DEFAULT 64)
	RETURNS TABLE(path text, content bytea)
	AS $$ SELECT * FROM gpu_mesh_tileset($1::geometry, $2, $3) $$ LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 5000 ROWS 100;
COMMENT ON FUNCTION gpu_mesh_tileset(text, int, int) IS
	'gpu_mesh_tileset of a mesh written as text (WKT or EWKT), read as a geometry';
