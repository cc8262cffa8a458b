-- Clipping triangle meshes by boxes: LOD tiles of reality meshes.

CREATE FUNCTION gpu_mesh_clip(mesh geometry, box box3d)
	RETURNS geometry
	AS 'MODULE_PATHNAME', 'gpu_mesh_clip' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000;
COMMENT ON FUNCTION gpu_mesh_clip(geometry, box3d) IS
	'The triangles of mesh (TIN Z, or POLYHEDRALSURFACE Z of triangles) clipped by the closed box: a TIN Z with the mesh''s SRID, empty when nothing is left; cut points shared by neighbouring triangles and tiles are bit-identical';

CREATE FUNCTION gpu_mesh_clip(mesh geometry, boxes box3d[])
	RETURNS TABLE(box_index int, mesh geometry)
	AS 'MODULE_PATHNAME', 'gpu_mesh_clip_boxes' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5000 ROWS 16;
COMMENT ON FUNCTION gpu_mesh_clip(geometry, box3d[]) IS
	'The mesh clipped by each box of the array in one call (one upload of the mesh): a row per box, box_index as the array subscript, empty TINs included';

CREATE FUNCTION geoacc_tile_grid(extent box3d, nx int, ny int, nz int DEFAULT 1)
	RETURNS TABLE(ix int, iy int, iz int, box box3d)
	AS 'MODULE_PATHNAME', 'geoacc_tile_grid' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 50 ROWS 16;
COMMENT ON FUNCTION geoacc_tile_grid(box3d, int, int, int) IS
	'The nx x ny x nz tiles of extent, indices from 0: plane i of n along an axis is min + (max - min) * i / n and the last is max, so neighbouring tiles share planes bit for bit';
