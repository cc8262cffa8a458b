-- Clipping triangle meshes by boxes: LOD tiles of reality meshes.

CREATE OR REPLACE FUNCTION gpu_mesh_clip(mesh geometry, box box3d)
	RETURNS geometry
	AS 'MODULE_PATHNAME', 'gpu_mesh_clip' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_mesh_clip(geometry, box3d) IS
	'The triangles of mesh (TIN Z, or POLYHEDRALSURFACE Z of triangles) clipped by the closed box: a TIN Z with the mesh''s SRID, empty when nothing is left; cut points shared by neighbouring triangles and tiles are bit-identical';

CREATE OR REPLACE FUNCTION gpu_mesh_clip(mesh geometry, boxes box3d[])
	RETURNS TABLE(box_index int, mesh geometry)
	AS 'MODULE_PATHNAME', 'gpu_mesh_clip_boxes' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000 ROWS 16;
COMMENT ON FUNCTION gpu_mesh_clip(geometry, box3d[]) IS
	'The mesh clipped by each box of the array in one call (one upload of the mesh): a row per box, box_index as the array subscript, empty TINs included';

CREATE OR REPLACE FUNCTION geoacc_tile_grid(extent box3d, nx int, ny int, nz int DEFAULT 1)
	RETURNS TABLE(ix int, iy int, iz int, box box3d)
	AS 'MODULE_PATHNAME', 'geoacc_tile_grid' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 50 ROWS 16;
COMMENT ON FUNCTION geoacc_tile_grid(box3d, int, int, int) IS
	'The nx x ny x nz tiles of extent, indices from 0: plane i of n along an axis is min + (max - min) * i / n and the last is max, so neighbouring tiles share planes bit for bit';

-- the same for indexed meshes in PLY files (bytea)

CREATE OR REPLACE FUNCTION gpu_mesh_clip(ply bytea, box box3d)
	RETURNS bytea
	AS 'MODULE_PATHNAME', 'gpu_mesh_clip_ply' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_mesh_clip(bytea, box3d) IS
	'A PLY mesh (ASCII or binary) clipped by the closed box, as binary little-endian PLY: vertices equal in position and attributes are one, shared cut points one vertex, normals, colours and texture coordinates of cut points interpolated';

CREATE OR REPLACE FUNCTION gpu_mesh_clip(ply bytea, boxes box3d[])
	RETURNS TABLE(box_index int, ply bytea)
	AS 'MODULE_PATHNAME', 'gpu_mesh_clip_ply_boxes' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000 ROWS 16;
COMMENT ON FUNCTION gpu_mesh_clip(bytea, box3d[]) IS
	'The PLY mesh clipped by each box of the array in one call: a row per box, box_index as the array subscript, empty meshes included';

-- a string literal is a geometry, as in PostGIS (without these it would match geometry and bytea alike)
CREATE OR REPLACE FUNCTION gpu_mesh_clip(mesh text, box box3d)
	RETURNS geometry
	AS $$ SELECT gpu_mesh_clip($1::geometry, $2) $$ LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_mesh_clip(text, box3d) IS
	'gpu_mesh_clip of a mesh written as text (WKT or EWKT), read as a geometry';

CREATE OR REPLACE FUNCTION gpu_mesh_clip(mesh text, boxes box3d[])
	RETURNS TABLE(box_index int, mesh geometry)
	AS $$ SELECT * FROM gpu_mesh_clip($1::geometry, $2) $$ LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 5000 ROWS 16;
COMMENT ON FUNCTION gpu_mesh_clip(text, box3d[]) IS
	'gpu_mesh_clip of a mesh written as text (WKT or EWKT), read as a geometry, by each box of the array';

CREATE OR REPLACE FUNCTION geoacc_mesh_from_ply(ply bytea, srid int DEFAULT 0)
	RETURNS geometry
	AS 'MODULE_PATHNAME', 'geoacc_mesh_from_ply' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 250;
COMMENT ON FUNCTION geoacc_mesh_from_ply(bytea, int) IS
	'The triangles of a PLY mesh (ASCII or binary; faces of more than three vertices fan-triangulated) as a TIN Z with the given SRID';

CREATE OR REPLACE FUNCTION geoacc_mesh_to_ply(mesh geometry)
	RETURNS bytea
	AS 'MODULE_PATHNAME', 'geoacc_mesh_to_ply' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 250;
COMMENT ON FUNCTION geoacc_mesh_to_ply(geometry) IS
	'A TIN Z (or POLYHEDRALSURFACE Z of triangles) as binary little-endian PLY: equal corners one vertex, double coordinates, uint faces';

CREATE OR REPLACE FUNCTION geoacc_mesh_to_glb(mesh geometry)
	RETURNS bytea
	AS 'MODULE_PATHNAME', 'geoacc_mesh_to_glb' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 250;
COMMENT ON FUNCTION geoacc_mesh_to_glb(geometry) IS
	'A TIN Z as binary glTF 2.0 (GLB) for viewers: float32 positions relative to the centre of the bounding box, which the node''s translation holds in float64; y-up, (x, y, z) written as (x, z, -y)';

CREATE OR REPLACE FUNCTION geoacc_mesh_to_glb(ply bytea)
	RETURNS bytea
	AS 'MODULE_PATHNAME', 'geoacc_mesh_to_glb_ply' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 250;
COMMENT ON FUNCTION geoacc_mesh_to_glb(bytea) IS
	'A PLY mesh as binary glTF 2.0 (GLB), with NORMAL (normalised), COLOR_0 and TEXCOORD_0 (v flipped) when the PLY has them';

CREATE OR REPLACE FUNCTION geoacc_mesh_to_glb(mesh text)
	RETURNS bytea
	AS $$ SELECT geoacc_mesh_to_glb($1::geometry) $$ LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 250;
COMMENT ON FUNCTION geoacc_mesh_to_glb(text) IS
	'geoacc_mesh_to_glb of a mesh written as text (WKT or EWKT), read as a geometry';
