-- Snapshots: query results kept in the GPU service's memory (geoacc preloaded, geoacc.service on), and the
-- density rasters and map tiles read from them.

-- The definitions: written only by the functions below (with the rights of the table's owner), readable by
-- all, dumped with the database (pg_dump); the data are built again from the query on first use after a
-- restart.  Made where missing, so that an upgrade can run this script over an earlier version's objects.
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_class WHERE relname = 'geoacc_snapshot' AND relnamespace = '@extschema@'::regnamespace) THEN
		CREATE TABLE geoacc_snapshot (
			name text PRIMARY KEY,
			id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
			owner regrole NOT NULL,
			readers regrole[] NOT NULL DEFAULT '{}',
			kind text NOT NULL,
			query text NOT NULL,
			created timestamptz NOT NULL DEFAULT now(),
			refreshed timestamptz NOT NULL DEFAULT now(),
			generation bigint NOT NULL DEFAULT 1);
		PERFORM pg_catalog.pg_extension_config_dump('geoacc_snapshot', '');
		-- the ids go on from the dumped ones after a restore
		PERFORM pg_catalog.pg_extension_config_dump(pg_get_serial_sequence('geoacc_snapshot', 'id'), '');
		REVOKE ALL ON geoacc_snapshot FROM PUBLIC;
		GRANT SELECT ON geoacc_snapshot TO PUBLIC;
	END IF;
END $$;
COMMENT ON TABLE geoacc_snapshot IS
	'the snapshots of this database (geoacc_snapshot_create): name, owner, the roles it is granted to, kind, query, when made and last refreshed, and the generation of its data';

CREATE OR REPLACE FUNCTION geoacc_snapshot_create(name text, sql text)
	RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION geoacc_snapshot_create(text, text) IS
	'keep the rows (id, geom[, weight]) of a query, points and lines as gpu_density_raster reads them, in the GPU service''s memory under a name, owned by the current user; returns the rows kept';

CREATE OR REPLACE FUNCTION geoacc_snapshot_refresh(name text)
	RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION geoacc_snapshot_refresh(text) IS
	'run a snapshot''s query again, with its owner''s rights, and keep the new rows in place of the old once the transaction commits; returns the rows kept';

CREATE OR REPLACE FUNCTION geoacc_snapshot_drop(name text, if_exists boolean DEFAULT false)
	RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION geoacc_snapshot_drop(text, boolean) IS
	'drop a snapshot (its owner); its memory is freed when the transaction commits and no call reads it';

CREATE OR REPLACE FUNCTION geoacc_snapshot_grant(name text, role regrole)
	RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION geoacc_snapshot_grant(text, regrole) IS
	'let a role (and its members) read a snapshot: what its owner could read when it was made or refreshed';

CREATE OR REPLACE FUNCTION geoacc_snapshot_revoke(name text, role regrole)
	RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION geoacc_snapshot_revoke(text, regrole) IS
	'take back geoacc_snapshot_grant';

CREATE OR REPLACE FUNCTION geoacc_snapshot_memory(id bigint, generation bigint,
	OUT rows bigint, OUT points bigint, OUT bytes bigint, OUT built timestamptz, OUT device_copies int,
	OUT device_bytes bigint)
	RETURNS record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION geoacc_snapshot_memory(bigint, bigint) IS
	'what the GPU service''s memory holds of a generation of a snapshot (NULL: nothing, until its first use): its rows, points, bytes and when it was built; and the device processes that keep its points prepared (on the GPU: a copy in device memory each) with the device memory they hold';

CREATE OR REPLACE FUNCTION geoacc_snapshots(
	OUT name text, OUT owner regrole, OUT readers regrole[], OUT kind text, OUT rows bigint, OUT points bigint,
	OUT bytes bigint, OUT device_copies int, OUT device_bytes bigint, OUT created timestamptz,
	OUT refreshed timestamptz, OUT built timestamptz, OUT query text)
	RETURNS SETOF record
	AS $$
	SELECT s.name, s.owner, s.readers, s.kind, m.rows, m.points, m.bytes, m.device_copies, m.device_bytes,
		s.created, s.refreshed, m.built, s.query
	FROM @extschema@.geoacc_snapshot s, LATERAL @extschema@.geoacc_snapshot_memory(s.id, s.generation) m
	ORDER BY s.name
	$$ LANGUAGE sql VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION geoacc_snapshots() IS
	'the snapshots of this database: name, owner, readers, kind, and what the service memory holds of each (rows, points, bytes, when built; NULL until its first use after a restart), the device processes that keep its points prepared and the device memory they hold, when made and refreshed, and its query';

CREATE OR REPLACE FUNCTION geoacc_snapshot_density(snapshot text, extent geometry, width int, height int,
	kernel text DEFAULT 'gaussian', kernel_size int DEFAULT 7, interpolate boolean DEFAULT true, mode text DEFAULT 'count')
	RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL RESTRICTED COST 1000;
COMMENT ON FUNCTION geoacc_snapshot_density(text, geometry, int, int, text, int, boolean, text) IS
	'the density raster (raster WKB) that gpu_density_raster(geom, extent, width, height, kernel, kernel_size, interpolate, mode[, weight]) gives over a snapshot''s rows, read from the GPU service''s memory; zeros, not NULL, where no row adds anything';

CREATE OR REPLACE FUNCTION geoacc_snapshot_density_png(snapshot text, extent geometry, width int, height int,
	kernel text DEFAULT 'gaussian', kernel_size int DEFAULT 7, interpolate boolean DEFAULT true, mode text DEFAULT 'count',
	colormap text DEFAULT 'viridis', scale text DEFAULT 'log', vmin float8 DEFAULT 0, vmax float8 DEFAULT NULL,
	transparent_zero boolean DEFAULT true)
	RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL RESTRICTED COST 1000;
COMMENT ON FUNCTION geoacc_snapshot_density_png(text, geometry, int, int, text, int, boolean, text, text, text, float8, float8, boolean) IS
	'geoacc_raster_png(geoacc_snapshot_density(snapshot, extent, width, height, kernel, kernel_size, interpolate, mode), colormap, scale, vmin, vmax, transparent_zero), the same bytes, made from the pixels without the raster in between';

-- Web map tiles: ST_TileEnvelope(z, x, y) (EPSG:3857) as the extent, named with PostGIS's schema so that
-- the caller's search_path does not matter.
DO $$
DECLARE
	postgis text := (SELECT quote_ident(extnamespace::regnamespace::text) FROM pg_extension WHERE extname = 'postgis');
BEGIN
	EXECUTE format($f$
CREATE OR REPLACE FUNCTION @extschema@.geoacc_density_tile_raster(snapshot text, z int, x int, y int, size int DEFAULT 256,
	kernel text DEFAULT 'gaussian', kernel_size int DEFAULT 7, interpolate boolean DEFAULT true, mode text DEFAULT 'count')
	RETURNS bytea
	AS 'SELECT @extschema@.geoacc_snapshot_density(snapshot, %1$s.ST_TileEnvelope(z, x, y), size, size, kernel, kernel_size, interpolate, mode)'
	LANGUAGE sql STABLE PARALLEL RESTRICTED COST 1000$f$, postgis);
	EXECUTE format($f$
CREATE OR REPLACE FUNCTION @extschema@.geoacc_density_tile(snapshot text, z int, x int, y int, size int DEFAULT 256,
	kernel text DEFAULT 'gaussian', kernel_size int DEFAULT 7, interpolate boolean DEFAULT true, mode text DEFAULT 'count',
	colormap text DEFAULT 'viridis', scale text DEFAULT 'log', vmin float8 DEFAULT 0, vmax float8 DEFAULT NULL,
	transparent_zero boolean DEFAULT true)
	RETURNS bytea
	AS 'SELECT @extschema@.geoacc_snapshot_density_png(snapshot, %1$s.ST_TileEnvelope(z, x, y), size, size, kernel,
		kernel_size, interpolate, mode, colormap, scale, vmin, vmax, transparent_zero)'
	LANGUAGE sql STABLE PARALLEL RESTRICTED COST 1000$f$, postgis);
END $$;
COMMENT ON FUNCTION geoacc_density_tile_raster(text, int, int, int, int, text, int, boolean, text) IS
	'the density raster of the XYZ web map tile z/x/y (ST_TileEnvelope, EPSG:3857) over a snapshot''s rows, size x size cells';
COMMENT ON FUNCTION geoacc_density_tile(text, int, int, int, int, text, int, boolean, text, text, text, float8, float8, boolean) IS
	'the PNG of the XYZ web map tile z/x/y over a snapshot''s rows: geoacc_raster_png of geoacc_density_tile_raster (give vmax for one colour scale across tiles); an empty tile is a transparent PNG';

-- Segment joins against a snapshot of trajectories
CREATE OR REPLACE FUNCTION gpu_segment_join_snapshot(a_sql text, snapshot text, distance float8, method text DEFAULT 'auto',
	use_z boolean DEFAULT false)
	RETURNS TABLE(a_id bigint, a_seg int, b_id bigint, b_seg int, t_start float8, t_end float8,
		cpa_time float8, cpa_distance float8)
	AS 'MODULE_PATHNAME', 'gpu_segment_join_snapshot' LANGUAGE C VOLATILE PARALLEL RESTRICTED COST 10000 ROWS 10000;
COMMENT ON FUNCTION gpu_segment_join_snapshot(text, text, float8, text, boolean) IS
	'gpu_segment_join of a_sql''s trajectories with those of a snapshot of (id, traj) rows, read from the GPU service''s memory: the rows gpu_segment_join gives with the snapshot''s rows as b_sql';

CREATE OR REPLACE FUNCTION gpu_segment_contacts_snapshot(a_sql text, snapshot text, distance float8,
	method text DEFAULT 'auto', use_z boolean DEFAULT false)
	RETURNS TABLE(a_id bigint, b_id bigint, first_contact float8, last_contact float8,
		time_within float8, min_distance float8, segment_pairs bigint)
	LANGUAGE sql VOLATILE PARALLEL RESTRICTED COST 10000 ROWS 1000
	BEGIN ATOMIC
		SELECT j.a_id, j.b_id, min(j.t_start), max(j.t_end), sum(j.t_end - j.t_start), min(j.cpa_distance), count(*)
		FROM gpu_segment_join_snapshot(a_sql, snapshot, distance, method, use_z) j
		GROUP BY j.a_id, j.b_id
		ORDER BY j.a_id, j.b_id;
	END;
COMMENT ON FUNCTION gpu_segment_contacts_snapshot(text, text, float8, text, boolean) IS
	'gpu_segment_contacts of a_sql''s trajectories with those of a snapshot of (id, traj) rows: gpu_segment_join_snapshot summed up per pair of trajectories';

-- TWED of series against a snapshot of trajectories
CREATE OR REPLACE FUNCTION gpu_twed_matrix_snapshot(a_sql text, snapshot text, nu float8 DEFAULT 0.001,
	lambda float8 DEFAULT 1.0, degree int DEFAULT 2, root boolean DEFAULT true, float32 boolean DEFAULT false,
	k int DEFAULT NULL, use_z boolean DEFAULT false)
	RETURNS TABLE(a_id bigint, b_id bigint, distance float8)
	AS 'MODULE_PATHNAME', 'gpu_twed_matrix_snapshot' LANGUAGE C VOLATILE PARALLEL RESTRICTED COST 10000 ROWS 10000;
COMMENT ON FUNCTION gpu_twed_matrix_snapshot(text, text, float8, float8, int, boolean, boolean, int, boolean) IS
	'gpu_twed_matrix of a_sql''s series against the trajectories of a snapshot of (id, traj) rows, read from the GPU service''s memory: the rows gpu_twed_matrix gives with b_sql the snapshot''s trajectories of two points or more in id order';

-- Clips of a snapshot of meshes
CREATE OR REPLACE FUNCTION gpu_mesh_clip_snapshot(snapshot text, boxes box3d[])
	RETURNS TABLE(id bigint, box_index int, mesh geometry)
	AS 'MODULE_PATHNAME', 'gpu_mesh_clip_snapshot' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED COST 5000 ROWS 100;
COMMENT ON FUNCTION gpu_mesh_clip_snapshot(text, box3d[]) IS
	'every row of a snapshot of (id, mesh) rows clipped by every box: (id, box_index, mesh), the rows gpu_mesh_clip(mesh, boxes) gives each row, its mesh read from the GPU service''s memory already welded';
