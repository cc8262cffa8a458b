/*
 * mesh_tileset.c
 *
 * gpu_mesh_tileset(): a triangle mesh (TIN Z, POLYHEDRALSURFACE Z of
 * triangles, or PLY in a bytea) as a 3D Tiles 1.1 tileset, one row per
 * file: tileset.json and a GLB per tile of a quadtree whose leaves are the
 * mesh's clips and whose parents are simplified (the core's
 * geoacc_mesh_tileset()).  The root transform, from the mesh's SRID to
 * Earth-centred coordinates (EPSG:4978), is PostGIS's ST_Transform at the
 * tileset's centre, differentiated along x, y and z; it is computed before
 * the core's work, which calls nothing of PostgreSQL.
 */
#include "geoacc.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

/* Half the step of the central differences, in the SRID's units (metres). */
#define FRAME_STEP 1.0

/* The GLB files and tileset.json, freed with the memory context that holds them, ERROR included. */
typedef struct TilesetOwner
{
	GeoaccTileset tileset;
	MemoryContextCallback callback;
} TilesetOwner;

static void
TilesetFree(void *arg)
{
	geoacc_tileset_free(&((TilesetOwner *) arg)->tileset);
}

/*
 * The root transform, column-major: from the tiles' coordinates (the mesh's
 * minus the origin, in the SRID's units) to ECEF, the linear part being the
 * derivative of ST_Transform(., 4978) at the origin (so the projection's
 * scale and grid convergence are in it) and the translation the origin's
 * ECEF position.  SRID 0: the identity, translated to the origin, so the
 * tileset keeps the mesh's own coordinates.
 */
static void
RootTransform(int32 srid, const double origin[3], double transform[16])
{
	const double h = FRAME_STEP;
	StringInfoData wkt;
	Oid			argtypes[2] = {TEXTOID, INT4OID};
	Datum		args[2];
	double		p[7][3];
	char	   *sql;
	bool		known;

	memset(transform, 0, sizeof(double) * 16);
	transform[15] = 1;
	if (srid == 0)
	{
		for (int i = 0; i < 3; i++)
		{
			transform[i * 5] = 1;
			transform[12 + i] = origin[i];
		}
		return;
	}
	/* PostGIS's ST_Transform raises an internal error for an SRID it does not know */
	sql = psprintf("SELECT 1 FROM %s.spatial_ref_sys WHERE srid = $1", GeoaccPostgisSchemaName());
	args[0] = Int32GetDatum(srid);
	argtypes[0] = INT4OID;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(sql, 1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read spatial_ref_sys");
	known = SPI_processed == 1;
	SPI_finish();
	if (!known)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("SRID %d is not in spatial_ref_sys", srid),
				 errdetail("The tileset is placed on the Earth from the mesh's SRID."),
				 errhint("Give the mesh a projected SRID PostGIS knows (ST_SetSRID), or SRID 0 to keep its own "
						 "coordinates.")));
	argtypes[0] = TEXTOID;
	if (GeoaccSridIsGeographic(srid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_mesh_tileset needs a mesh in a projected SRID, not SRID %d", srid),
				 errdetail("SRID %d measures in degrees; a tileset's tiles and errors are in metres.", srid),
				 errhint("Transform the mesh to a projected SRID first, for example ST_Transform(mesh, 32618) for "
						 "UTM zone 18N.")));

	/* the origin, then the origin -/+ h along x, y and z */
	initStringInfo(&wkt);
	appendStringInfoString(&wkt, "MULTIPOINT Z (");
	for (int i = 0; i < 7; i++)
	{
		double		q[3] = {origin[0], origin[1], origin[2]};

		if (i > 0)
			q[(i - 1) / 2] += (i % 2 == 1) ? -h : h;
		appendStringInfo(&wkt, "%s(%.17g %.17g %.17g)", i ? "," : "", q[0], q[1], q[2]);
	}
	appendStringInfoChar(&wkt, ')');
	args[0] = CStringGetTextDatum(wkt.data);
	args[1] = Int32GetDatum(srid);
	sql = psprintf("SELECT %1$s.ST_X(d.geom), %1$s.ST_Y(d.geom), %1$s.ST_Z(d.geom) FROM "
				   "%1$s.ST_DumpPoints(%1$s.ST_Transform(%1$s.ST_GeomFromText($1, $2), 4978)) d ORDER BY d.path",
				   GeoaccPostgisSchemaName());
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(sql, 2, argtypes, args, NULL, true, 7) != SPI_OK_SELECT || SPI_processed != 7)
		elog(ERROR, "could not transform the tileset's centre to EPSG:4978");
	for (int i = 0; i < 7; i++)
		for (int c = 0; c < 3; c++)
		{
			bool		isnull;
			Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, c + 1, &isnull);

			p[i][c] = isnull ? NAN : DatumGetFloat8(d);
		}
	SPI_finish();
	for (int i = 0; i < 7; i++)
		for (int c = 0; c < 3; c++)
			if (!isfinite(p[i][c]))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("the centre of the mesh has no Earth-centred position in SRID %d", srid),
						 errdetail("ST_Transform to EPSG:4978 of (%.17g %.17g %.17g) gave a non-finite coordinate.",
								   origin[0], origin[1], origin[2])));
	for (int axis = 0; axis < 3; axis++)
		for (int c = 0; c < 3; c++)
			transform[axis * 4 + c] = (p[2 + axis * 2][c] - p[1 + axis * 2][c]) / (2 * h);
	for (int c = 0; c < 3; c++)
		transform[12 + c] = p[0][c];
}

/*
 * The tileset as a step of a call (a work the GPU service can run: the
 * mesh's arrays in work memory, the files in the core's output memory).
 */
typedef struct TilesetRun
{
	GeoaccMesh	mesh;
	GeoaccTilesetOptions options;	/* its generator a string of this library: the same address everywhere */
	GeoaccTileset tileset;
	GeoaccTilesetTiming timing;
} TilesetRun;

static GeoaccStatus
TilesetOn(GeoaccDevice device, void *arg)
{
	TilesetRun *r = arg;

	/* a failed run leaves nothing behind: the CPU can start afresh */
	return geoacc_mesh_tileset(device, &r->mesh, &r->options, &r->tileset, &r->timing);
}

/*
 * The tileset of a mesh as the function's rows (path, content).  An empty
 * mesh has no tileset: no rows.
 */
static void
TilesetRows(FunctionCallInfo fcinfo, const GeoaccMesh *mesh, uint32 layout, int32 srid, int32 levels, int32 cells,
			GeoaccStages *stages)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GeoaccTilesetOptions options;
	GeoaccTilesetTiming timing;
	GeoaccBox	extent;
	double		origin[3];
	TilesetOwner *owner;
	TilesetRun	run;
	GeoaccWork	work = {TilesetOn, &run, {0, 0}, false, sizeof(run)};
	GeoaccDevice device;

	if (levels < 1 || levels > GEOACC_TILESET_MAX_LEVELS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("levels must be between 1 and %d", GEOACC_TILESET_MAX_LEVELS),
				 errdetail("levels is %d.", levels),
				 errhint("Level l has 4^l tiles; the leaves are the full-resolution clips.")));
	if (cells < 1 || cells > GEOACC_TILESET_MAX_CELLS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cells must be between 1 and %d", GEOACC_TILESET_MAX_CELLS),
				 errdetail("cells is %d.", cells)));
	if (mesh->ntriangles == 0)
		return;
	GeoaccCheck(geoacc_mesh_tileset_extent(mesh, &extent, origin));

	memset(&options, 0, sizeof(options));
	options.levels = (uint32) levels;
	options.cells = (uint32) cells;
	options.layout = layout;
	options.generator = "geoacc " GEOACC_VERSION;
	RootTransform(srid, origin, options.transform);
	GeoaccStagesLap(stages, "frame");

	owner = palloc0(sizeof(TilesetOwner));
	owner->callback.func = TilesetFree;
	owner->callback.arg = owner;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &owner->callback);
	memset(&run, 0, sizeof(run));
	run.mesh = *mesh;
	run.mesh.positions = GeoaccWorkCopy(mesh->positions, sizeof(double) * 3 * mesh->nvertices);
	run.mesh.triangles = GeoaccWorkCopy(mesh->triangles, sizeof(uint32) * 3 * mesh->ntriangles);
	run.mesh.attributes = GeoaccWorkCopy(mesh->attributes, sizeof(float) * mesh->nattributes * mesh->nvertices);
	run.options = options;
	work.need = geoacc_mesh_tileset_need(mesh, &options);
	device = GeoaccCallRun("gpu_mesh_tileset", (int64) mesh->ntriangles, &work);
	/* nothing can fail between the core's return and the files having their owner */
	owner->tileset = run.tileset;
	timing = run.timing;
	GeoaccStagesLap(stages, "tileset");

	for (uint32 i = 0; i < owner->tileset.nfiles; i++)
	{
		const GeoaccTilesetFile *f = &owner->tileset.files[i];
		Datum		values[2];
		bool		nulls[2] = {false, false};
		bytea	   *content;

		if (f->size > MaxAllocSize - VARHDRSZ)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("tile %s takes %zu bytes, more than a bytea value holds", f->path, f->size),
					 errhint("Use more levels, so that the leaves are smaller.")));
		content = palloc(f->size + VARHDRSZ);
		SET_VARSIZE(content, f->size + VARHDRSZ);
		memcpy(VARDATA(content), f->data, f->size);
		values[0] = CStringGetTextDatum(f->path);
		values[1] = PointerGetDatum(content);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(content);
		pfree(DatumGetPointer(values[0]));
	}
	GeoaccStagesLap(stages, "output");
	elog(DEBUG1, "gpu_mesh_tileset: %u triangles, %d levels on the %s, %u files; %s; in the core: simplify %.1f, "
		 "error %.1f, clip %.1f, write %.1f, kernels %.1f ms",
		 mesh->ntriangles, levels, GeoaccDeviceName(device), owner->tileset.nfiles,
		 GeoaccStagesText(stages), timing.simplify_ms, timing.error_ms, timing.clip_ms, timing.write_ms,
		 timing.kernel_ms);
	for (uint32 l = 0; l + 1 < owner->tileset.levels; l++)
		elog(DEBUG1, "gpu_mesh_tileset: level %u: " UINT64_FORMAT " triangles, %u tiles, measured %.6g, "
			 "geometricError %.6g", l, owner->tileset.triangles[l], owner->tileset.tiles[l],
			 owner->tileset.measured[l], owner->tileset.geometric_error[l]);
	geoacc_tileset_free(&owner->tileset);
}

/*
 * gpu_mesh_tileset(mesh geometry, levels int, cells int): the tileset of a
 * TIN Z, placed on the Earth from the mesh's SRID
 */
PG_FUNCTION_INFO_V1(gpu_mesh_tileset);
Datum
gpu_mesh_tileset(PG_FUNCTION_ARGS)
{
	GeoaccStages stages;
	int32		srid;
	GeoaccMesh	mesh;

	InitMaterializedSRF(fcinfo, 0);
	GeoaccStagesStart(&stages);
	mesh = GeoaccMeshFromGeometry(PG_DETOAST_DATUM(PG_GETARG_DATUM(0)), &srid);
	GeoaccStagesLap(&stages, "read");
	TilesetRows(fcinfo, &mesh, 0, srid, PG_GETARG_INT32(1), PG_GETARG_INT32(2), &stages);
	PG_RETURN_NULL();
}

/*
 * gpu_mesh_tileset(ply bytea, levels int, srid int, cells int): the tileset
 * of a PLY mesh in SRID srid, with its normals, colours and texture
 * coordinates
 */
PG_FUNCTION_INFO_V1(gpu_mesh_tileset_ply);
Datum
gpu_mesh_tileset_ply(PG_FUNCTION_ARGS)
{
	GeoaccStages stages;
	int32		srid = PG_GETARG_INT32(2);
	uint32		layout;
	GeoaccMesh	mesh;

	/* PostGIS's SRID_MAXIMUM */
	if (srid < 0 || srid > 999999)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("SRID %d is out of range", srid),
				 errhint("An SRID lies between 0 (unknown) and 999999.")));
	InitMaterializedSRF(fcinfo, 0);
	GeoaccStagesStart(&stages);
	mesh = GeoaccMeshFromPlyWelded(PG_GETARG_BYTEA_PP(0), &layout);
	GeoaccStagesLap(&stages, "read");
	TilesetRows(fcinfo, &mesh, layout, srid, PG_GETARG_INT32(1), PG_GETARG_INT32(3), &stages);
	PG_RETURN_NULL();
}
