/*
 * mesh_clip.c
 *
 * gpu_mesh_clip(): a triangle mesh (TIN Z or POLYHEDRALSURFACE Z of
 * triangles) clipped by one box3d, or by an array of them in one core call
 * (one upload of the mesh for all boxes, one row per box), and
 * geoacc_tile_grid(), the boxes of a grid whose neighbours share their
 * planes to the bit.  The mesh is welded into an indexed mesh (equal
 * corners become one vertex) so that the core sees which triangles share an
 * edge and cuts it once for both.
 *
 * Meshes also come and go as PLY files in a bytea (an indexed mesh with
 * per-vertex normals, colours and texture coordinates, about a quarter of
 * a TIN's size): gpu_mesh_clip() on PLY, conversions to and from TIN Z, and
 * binary glTF (GLB) for looking at a mesh in a viewer.
 */
#include "geoacc.h"

#include <math.h>

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

/* PostGIS's BOX3D (liblwgeom.h): six doubles, then the SRID; internallength 52. */
typedef struct Box3D
{
	double		xmin,
				ymin,
				zmin;
	double		xmax,
				ymax,
				zmax;
	int32		srid;
} Box3D;

/* A core result freed when the memory context that holds it goes, ERROR included. */
typedef struct MeshResultOwner
{
	GeoaccMeshResult result;
	MemoryContextCallback callback;
} MeshResultOwner;

static void
MeshResultFree(void *arg)
{
	geoacc_mesh_result_free(&((MeshResultOwner *) arg)->result);
}

static GeoaccMeshResult *
MeshResultInContext(void)
{
	MeshResultOwner *owner = palloc0(sizeof(MeshResultOwner));

	owner->callback.func = MeshResultFree;
	owner->callback.arg = owner;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &owner->callback);
	return &owner->result;
}

/*
 * Where the time of one call went, reported at DEBUG1: reading the argument
 * out of its TOAST storage, decoding and welding it, the core (upload,
 * kernels and download on the GPU), and making the result values.  Writing
 * the result into a table (its TOAST compression included) comes after the
 * call and is not here.
 */
typedef struct ClipProfile
{
	GeoaccStages stages;		/* detoast, read, clip, output */
	GeoaccDevice device;
	GeoaccMeshClipTiming core;
	uint32		ntriangles;
	uint32		nboxes;
	uint64		triangles_out;
} ClipProfile;

static void
ProfileStart(ClipProfile *prof)
{
	memset(prof, 0, sizeof(*prof));
	GeoaccStagesStart(&prof->stages);
}

static void
ProfileReport(const ClipProfile *prof, const char *function)
{
	elog(DEBUG1, "%s: %u triangles x %u boxes on the %s, " UINT64_FORMAT " triangles out; %s; in the core: "
		 "upload %.1f, kernels %.1f, download %.1f ms",
		 function, prof->ntriangles, prof->nboxes, GeoaccDeviceName(prof->device),
		 prof->triangles_out, GeoaccStagesText(&prof->stages), prof->core.upload_ms, prof->core.kernel_ms,
		 prof->core.download_ms);
}

/* No SRID to check a box against (a PLY mesh has none). */
#define NO_SRID (-1)

/*
 * A box3d argument as the core's box, checked (`what` names it in
 * messages): a box with an SRID must have the mesh's, as PostGIS refuses
 * mixed SRIDs; 0 is unknown and goes with any.
 */
static GeoaccBox
BoxFromBox3D(const Box3D *b, const char *what, int32 mesh_srid)
{
	GeoaccBox	box;
	const double lo[3] = {b->xmin, b->ymin, b->zmin};
	const double hi[3] = {b->xmax, b->ymax, b->zmax};

	for (int d = 0; d < 3; d++)
	{
		if (isnan(lo[d]) || isnan(hi[d]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s has a NaN bound", what)));
		if (lo[d] > hi[d])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s is inverted", what),
					 errdetail("Its %cmin %.17g is above its %cmax %.17g.", "xyz"[d], lo[d], "xyz"[d], hi[d]),
					 errhint("A box3d lists its lower corner first.")));
	}
	if (mesh_srid != NO_SRID && b->srid != 0 && mesh_srid != 0 && b->srid != mesh_srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s has SRID %d, the mesh SRID %d", what, b->srid, mesh_srid),
				 errhint("Give the box the mesh's SRID (ST_SetSRID) or none.")));
	box.xmin = b->xmin;
	box.ymin = b->ymin;
	box.zmin = b->zmin;
	box.xmax = b->xmax;
	box.ymax = b->ymax;
	box.zmax = b->zmax;
	return box;
}

/* The mesh of a geometry argument, welded into an indexed mesh. */
GeoaccMesh
GeoaccMeshFromGeometry(const struct varlena *geom, int32 *srid)
{
	GeoaccTriangles tris;
	GeoaccMeshResult *welded = MeshResultInContext();
	GeoaccMesh	mesh;

	GeoaccTrianglesFromGeometry(geom, &tris, "mesh");
	GeoaccCheck(geoacc_mesh_weld(tris.corners, tris.ntriangles, tris.stride, welded));
	if (tris.copy != NULL)
		pfree(tris.copy);
	*srid = tris.srid;
	memset(&mesh, 0, sizeof(mesh));
	mesh.nvertices = welded->nvertices;
	mesh.ntriangles = welded->ntriangles;
	mesh.positions = welded->positions;
	mesh.triangles = welded->triangles;
	return mesh;
}

/* The clip of the mesh by the boxes, as a step of a call (a work the GPU service can run). */
typedef struct ClipRun
{
	GeoaccMesh	mesh;
	const GeoaccBox *boxes;
	uint32		nboxes;
	GeoaccMeshResult *results;
	GeoaccMeshClipTiming timing;
} ClipRun;

static GeoaccStatus
ClipOn(GeoaccDevice device, void *arg)
{
	ClipRun    *r = arg;

	/* a failed clip leaves no result behind: the CPU can start afresh */
	return geoacc_mesh_clip(device, &r->mesh, r->boxes, r->nboxes, r->results, &r->timing);
}

/*
 * Clip on the chosen device; results[] live (and are freed) with
 * CurrentMemoryContext.  The device and the core's timing go into *prof.
 */
static GeoaccMeshResult **
ClipMesh(const GeoaccMesh *mesh, const GeoaccBox *boxes, uint32 nboxes, ClipProfile *prof)
{
	ClipRun		run = {*mesh, GeoaccWorkCopy(boxes, sizeof(GeoaccBox) * nboxes), nboxes,
	GeoaccWorkAllocZero(sizeof(GeoaccMeshResult) * Max(nboxes, 1)), {0}};
	GeoaccWork	work = {ClipOn, &run, geoacc_mesh_clip_need(mesh), false, sizeof(run)};
	GeoaccMeshResult *raw = run.results;
	GeoaccMeshResult **owned = palloc(sizeof(GeoaccMeshResult *) * Max(nboxes, 1));

	run.mesh.positions = GeoaccWorkCopy(mesh->positions, sizeof(double) * 3 * mesh->nvertices);
	run.mesh.triangles = GeoaccWorkCopy(mesh->triangles, sizeof(uint32) * 3 * mesh->ntriangles);
	run.mesh.attributes = GeoaccWorkCopy(mesh->attributes, sizeof(float) * mesh->nattributes * mesh->nvertices);
	/* the owners exist before the core allocates: nothing can fail in between */
	for (uint32 b = 0; b < nboxes; b++)
		owned[b] = MeshResultInContext();
	/* the work is the mesh's triangles, not x boxes: with few triangles the GPU loses at any number of boxes */
	prof->device = GeoaccCallRun("gpu_mesh_clip", (int64) mesh->ntriangles, &work);
	prof->core = run.timing;
	prof->ntriangles = mesh->ntriangles;
	prof->nboxes = nboxes;
	for (uint32 b = 0; b < nboxes; b++)
	{
		*owned[b] = raw[b];
		prof->triangles_out += raw[b].ntriangles;
	}
	GeoaccWorkFree(raw);
	return owned;
}

/*
 * gpu_mesh_clip(mesh geometry, box box3d): the mesh clipped by the box, a
 * TIN Z with the mesh's SRID (empty when nothing is left)
 */
PG_FUNCTION_INFO_V1(gpu_mesh_clip);
Datum
gpu_mesh_clip(PG_FUNCTION_ARGS)
{
	ClipProfile prof;
	struct varlena *geom;
	int32		srid;
	GeoaccMesh	mesh;
	GeoaccBox	box;
	GeoaccMeshResult *r;
	Datum		result;

	ProfileStart(&prof);
	geom = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	GeoaccStagesLap(&prof.stages, "detoast");
	mesh = GeoaccMeshFromGeometry(geom, &srid);
	GeoaccStagesLap(&prof.stages, "read");
	box = BoxFromBox3D((Box3D *) PG_GETARG_POINTER(1), "box", srid);
	r = ClipMesh(&mesh, &box, 1, &prof)[0];
	GeoaccStagesLap(&prof.stages, "clip");
	result = GeoaccTinToGeometry(r->positions, r->triangles, r->ntriangles, srid);
	GeoaccStagesLap(&prof.stages, "output");
	ProfileReport(&prof, "gpu_mesh_clip");
	PG_RETURN_DATUM(result);
}

/*
 * The boxes of a box3d[] argument, in array order, and the subscript of the
 * first (1 unless the array says otherwise, as '[5:6]={...}' does); NULL
 * elements raise an ERROR.
 */
static GeoaccBox *
BoxesFromArray(ArrayType *array, int32 mesh_srid, int *nboxes, int *first)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	GeoaccBox  *boxes;

	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("boxes must be a one-dimensional array"),
				 errdetail("It has %d dimensions.", ARR_NDIM(array))));
	*first = ARR_NDIM(array) == 1 ? ARR_LBOUND(array)[0] : 1;
	get_typlenbyvalalign(ARR_ELEMTYPE(array), &typlen, &typbyval, &typalign);
	deconstruct_array(array, ARR_ELEMTYPE(array), typlen, typbyval, typalign, &elems, &nulls, &n);
	boxes = palloc(sizeof(GeoaccBox) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("boxes must not contain NULLs"),
					 errdetail("Element %d is NULL.", *first + i)));
		boxes[i] = BoxFromBox3D((Box3D *) DatumGetPointer(elems[i]), psprintf("box %d", *first + i), mesh_srid);
	}
	*nboxes = n;
	return boxes;
}

/*
 * gpu_mesh_clip(mesh geometry, boxes box3d[]): (box_index, mesh) for every
 * box, 1-based as array subscripts, in array order; empty TINs included
 */
PG_FUNCTION_INFO_V1(gpu_mesh_clip_boxes);
Datum
gpu_mesh_clip_boxes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ClipProfile prof;
	struct varlena *geom;
	int32		srid;
	GeoaccMesh	mesh;
	GeoaccBox  *boxes;
	int			nboxes;
	int			first;
	GeoaccMeshResult **results;

	InitMaterializedSRF(fcinfo, 0);
	ProfileStart(&prof);
	geom = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	GeoaccStagesLap(&prof.stages, "detoast");
	mesh = GeoaccMeshFromGeometry(geom, &srid);
	GeoaccStagesLap(&prof.stages, "read");
	boxes = BoxesFromArray(PG_GETARG_ARRAYTYPE_P(1), srid, &nboxes, &first);
	results = ClipMesh(&mesh, boxes, nboxes, &prof);
	GeoaccStagesLap(&prof.stages, "clip");
	for (int b = 0; b < nboxes; b++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = Int32GetDatum(first + b);
		values[1] = GeoaccTinToGeometry(results[b]->positions, results[b]->triangles, results[b]->ntriangles,
										srid);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(DatumGetPointer(values[1]));
		geoacc_mesh_result_free(results[b]);
	}
	GeoaccStagesLap(&prof.stages, "output");
	ProfileReport(&prof, "gpu_mesh_clip");
	PG_RETURN_NULL();
}

void
GeoaccMeshClipRows(ReturnSetInfo *rsinfo, ArrayType *array, const GeoaccSnapshotMesh *rows, uint32 count)
{
	for (uint32 r = 0; r < count; r++)
	{
		ClipProfile prof;
		GeoaccBox  *boxes;
		int			nboxes;
		int			first;
		GeoaccMeshResult **results;

		ProfileStart(&prof);
		boxes = BoxesFromArray(array, rows[r].srid, &nboxes, &first);
		results = ClipMesh(&rows[r].mesh, boxes, nboxes, &prof);
		GeoaccStagesLap(&prof.stages, "clip");
		for (int b = 0; b < nboxes; b++)
		{
			Datum		values[3];
			bool		nulls[3] = {false, false, false};

			values[0] = Int64GetDatum(rows[r].id);
			values[1] = Int32GetDatum(first + b);
			values[2] = GeoaccTinToGeometry(results[b]->positions, results[b]->triangles, results[b]->ntriangles,
											rows[r].srid);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			pfree(DatumGetPointer(values[2]));
			geoacc_mesh_result_free(results[b]);
		}
		GeoaccStagesLap(&prof.stages, "output");
		ProfileReport(&prof, "gpu_mesh_clip_snapshot");
		CHECK_FOR_INTERRUPTS();
	}
}

/* What geoacc_tile_grid() keeps between the rows it returns. */
typedef struct TileGrid
{
	GeoaccBox	extent;
	int32		srid;
	uint32		n[3];
} TileGrid;

/* The extent and the tile counts of a call, checked once, before the first row. */
static TileGrid *
TileGridFromArgs(FunctionCallInfo fcinfo, uint64 *count)
{
	TileGrid   *grid = palloc(sizeof(TileGrid));
	Box3D	   *extent = (Box3D *) PG_GETARG_POINTER(0);
	int32		n[3] = {PG_GETARG_INT32(1), PG_GETARG_INT32(2), PG_GETARG_INT32(3)};
	GeoaccBox	first;

	for (int d = 0; d < 3; d++)
	{
		if (n[d] < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("n%c must be at least 1", "xyz"[d]),
					 errdetail("n%c is %d.", "xyz"[d], n[d])));
		grid->n[d] = (uint32) n[d];
	}
	/* the rows are numbered by an int64 counter; ix, iy and iz are int columns */
	*count = (uint64) n[0] * (uint64) n[1];
	if (*count > (uint64) PG_INT64_MAX / (uint64) n[2])
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a grid of %.0f tiles is too large", (double) n[0] * n[1] * n[2]),
				 errhint("Ask for at most 2^63 - 1 tiles.")));
	*count *= (uint64) n[2];
	grid->extent = BoxFromBox3D(extent, "extent", NO_SRID);
	grid->srid = extent->srid;
	/* the extent's own errors (a width that overflows) before any row */
	GeoaccCheck(geoacc_grid_tile(&grid->extent, grid->n[0], grid->n[1], grid->n[2], 0, 0, 0, &first));
	return grid;
}

/*
 * geoacc_tile_grid(extent box3d, nx int, ny int, nz int): (ix, iy, iz, box)
 * for the nx * ny * nz tiles of the extent, 0-based indices in the order
 * ix, iy, iz; plane i of n along an axis is lo + (hi - lo) * i / n and the
 * last is hi itself, so neighbouring tiles share planes to the bit.  A row
 * is made when the executor asks for it, so a large grid costs no memory
 * of its own and a cancel stops it between rows.
 */
PG_FUNCTION_INFO_V1(geoacc_tile_grid);
Datum
geoacc_tile_grid(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	TileGrid   *grid;
	uint64		i;
	GeoaccBox	t;
	Box3D	   *b;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (SRF_IS_FIRSTCALL())
	{
		MemoryContext old;
		uint64		count;

		funcctx = SRF_FIRSTCALL_INIT();
		old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		funcctx->user_fctx = TileGridFromArgs(fcinfo, &count);
		funcctx->max_calls = count;
		if (get_call_result_type(fcinfo, NULL, &funcctx->tuple_desc) != TYPEFUNC_COMPOSITE)
			elog(ERROR, "geoacc_tile_grid must return a composite type");
		funcctx->tuple_desc = BlessTupleDesc(funcctx->tuple_desc);
		MemoryContextSwitchTo(old);
	}
	funcctx = SRF_PERCALL_SETUP();
	grid = (TileGrid *) funcctx->user_fctx;
	if (funcctx->call_cntr >= funcctx->max_calls)
		SRF_RETURN_DONE(funcctx);
	CHECK_FOR_INTERRUPTS();
	i = funcctx->call_cntr;
	values[2] = Int32GetDatum((int32) (i % grid->n[2]));
	i /= grid->n[2];
	values[1] = Int32GetDatum((int32) (i % grid->n[1]));
	values[0] = Int32GetDatum((int32) (i / grid->n[1]));
	GeoaccCheck(geoacc_grid_tile(&grid->extent, grid->n[0], grid->n[1], grid->n[2], DatumGetInt32(values[0]),
								 DatumGetInt32(values[1]), DatumGetInt32(values[2]), &t));
	b = palloc0(sizeof(Box3D));
	b->xmin = t.xmin;
	b->ymin = t.ymin;
	b->zmin = t.zmin;
	b->xmax = t.xmax;
	b->ymax = t.ymax;
	b->zmax = t.zmax;
	b->srid = grid->srid;
	values[3] = PointerGetDatum(b);
	SRF_RETURN_NEXT(funcctx, HeapTupleGetDatum(heap_form_tuple(funcctx->tuple_desc, values, nulls)));
}

/* ------------------------------------------------------- PLY and glTF */

/* A core mesh (read, welded or clipped) as the clipper's input. */
static GeoaccMesh
MeshView(const GeoaccMeshResult *r)
{
	GeoaccMesh	mesh;

	mesh.nvertices = r->nvertices;
	mesh.ntriangles = r->ntriangles;
	mesh.positions = r->positions;
	mesh.triangles = r->triangles;
	mesh.nattributes = r->nattributes;
	mesh.attributes = r->attributes;
	return mesh;
}

/* The mesh of a PLY argument, with its attributes (what they are in *layout). */
static GeoaccMesh
MeshFromPly(const bytea *ply, uint32 *layout)
{
	GeoaccMeshResult *read = MeshResultInContext();

	GeoaccCheck(geoacc_ply_read(VARDATA_ANY(ply), VARSIZE_ANY_EXHDR(ply), read, layout));
	return MeshView(read);
}

typedef GeoaccStatus (*MeshWriter) (const GeoaccMesh *mesh, uint32_t layout, uint8_t *out, size_t capacity,
									size_t *size);

/* A mesh written by `write` (PLY or GLB, named by `format`) into a new bytea. */
static bytea *
MeshToBytea(MeshWriter write, const char *format, const GeoaccMesh *mesh, uint32 layout)
{
	size_t		size;
	bytea	   *out;

	GeoaccCheck(write(mesh, layout, NULL, 0, &size));
	if (size > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a %s file of %u vertices and %u triangles is too large for a bytea value",
						format, mesh->nvertices, mesh->ntriangles),
				 errdetail("It takes %zu bytes; a value takes at most 1 GB.", size),
				 errhint("Clip the mesh into tiles and keep one row per tile.")));
	out = palloc(size + VARHDRSZ);
	SET_VARSIZE(out, size + VARHDRSZ);
	GeoaccCheck(write(mesh, layout, (uint8 *) VARDATA(out), size, &size));
	return out;
}

/* The mesh of a PLY argument for clipping: vertices equal in position and attributes welded. */
GeoaccMesh
GeoaccMeshFromPlyWelded(const bytea *ply, uint32 *layout)
{
	GeoaccMesh	read = MeshFromPly(ply, layout);
	GeoaccMeshResult *welded = MeshResultInContext();

	GeoaccCheck(geoacc_mesh_weld_vertices(&read, welded));
	return MeshView(welded);
}

/*
 * gpu_mesh_clip(ply bytea, box box3d): a PLY mesh clipped by the box, as
 * binary little-endian PLY with the same attributes (cut points'
 * attributes interpolated with their positions)
 */
PG_FUNCTION_INFO_V1(gpu_mesh_clip_ply);
Datum
gpu_mesh_clip_ply(PG_FUNCTION_ARGS)
{
	ClipProfile prof;
	bytea	   *ply;
	uint32		layout;
	GeoaccMesh	mesh;
	GeoaccBox	box;
	GeoaccMesh	clipped;
	bytea	   *result;

	ProfileStart(&prof);
	ply = PG_GETARG_BYTEA_PP(0);
	GeoaccStagesLap(&prof.stages, "detoast");
	mesh = GeoaccMeshFromPlyWelded(ply, &layout);
	GeoaccStagesLap(&prof.stages, "read");
	box = BoxFromBox3D((Box3D *) PG_GETARG_POINTER(1), "box", NO_SRID);
	clipped = MeshView(ClipMesh(&mesh, &box, 1, &prof)[0]);
	GeoaccStagesLap(&prof.stages, "clip");
	result = MeshToBytea(geoacc_ply_write, "PLY", &clipped, layout);
	GeoaccStagesLap(&prof.stages, "output");
	ProfileReport(&prof, "gpu_mesh_clip");
	PG_RETURN_BYTEA_P(result);
}

/*
 * gpu_mesh_clip(ply bytea, boxes box3d[]): (box_index, ply) for every box,
 * in array order, empty meshes included
 */
PG_FUNCTION_INFO_V1(gpu_mesh_clip_ply_boxes);
Datum
gpu_mesh_clip_ply_boxes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ClipProfile prof;
	bytea	   *ply;
	uint32		layout;
	GeoaccMesh	mesh;
	GeoaccBox  *boxes;
	int			nboxes;
	int			first;
	GeoaccMeshResult **results;

	InitMaterializedSRF(fcinfo, 0);
	boxes = BoxesFromArray(PG_GETARG_ARRAYTYPE_P(1), NO_SRID, &nboxes, &first);
	ProfileStart(&prof);
	ply = PG_GETARG_BYTEA_PP(0);
	GeoaccStagesLap(&prof.stages, "detoast");
	mesh = GeoaccMeshFromPlyWelded(ply, &layout);
	GeoaccStagesLap(&prof.stages, "read");
	results = ClipMesh(&mesh, boxes, nboxes, &prof);
	GeoaccStagesLap(&prof.stages, "clip");
	for (int b = 0; b < nboxes; b++)
	{
		GeoaccMesh	clipped = MeshView(results[b]);
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = Int32GetDatum(first + b);
		values[1] = PointerGetDatum(MeshToBytea(geoacc_ply_write, "PLY", &clipped, layout));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(DatumGetPointer(values[1]));
		geoacc_mesh_result_free(results[b]);
	}
	GeoaccStagesLap(&prof.stages, "output");
	ProfileReport(&prof, "gpu_mesh_clip");
	PG_RETURN_NULL();
}

/* geoacc_mesh_from_ply(ply bytea, srid int): the PLY mesh's triangles as a TIN Z */
PG_FUNCTION_INFO_V1(geoacc_mesh_from_ply);
Datum
geoacc_mesh_from_ply(PG_FUNCTION_ARGS)
{
	uint32		layout;
	GeoaccMesh	mesh = MeshFromPly(PG_GETARG_BYTEA_PP(0), &layout);
	int32		srid = PG_GETARG_INT32(1);

	/* PostGIS's SRID_MAXIMUM */
	if (srid < 0 || srid > 999999)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("SRID %d is out of range", srid),
				 errhint("An SRID lies between 0 (unknown) and 999999.")));
	PG_RETURN_DATUM(GeoaccTinToGeometry(mesh.positions, mesh.triangles, mesh.ntriangles, srid));
}

/* geoacc_mesh_to_ply(mesh geometry): a TIN Z as binary PLY, equal corners one vertex */
PG_FUNCTION_INFO_V1(geoacc_mesh_to_ply);
Datum
geoacc_mesh_to_ply(PG_FUNCTION_ARGS)
{
	int32		srid;
	GeoaccMesh	mesh = GeoaccMeshFromGeometry(PG_DETOAST_DATUM(PG_GETARG_DATUM(0)), &srid);

	PG_RETURN_BYTEA_P(MeshToBytea(geoacc_ply_write, "PLY", &mesh, 0));
}

/* geoacc_mesh_to_glb(mesh geometry): a TIN Z as binary glTF */
PG_FUNCTION_INFO_V1(geoacc_mesh_to_glb);
Datum
geoacc_mesh_to_glb(PG_FUNCTION_ARGS)
{
	int32		srid;
	GeoaccMesh	mesh = GeoaccMeshFromGeometry(PG_DETOAST_DATUM(PG_GETARG_DATUM(0)), &srid);

	PG_RETURN_BYTEA_P(MeshToBytea(geoacc_glb_write, "glTF", &mesh, 0));
}

/* geoacc_mesh_to_glb(ply bytea): a PLY mesh as binary glTF, normals, colours and UVs kept */
PG_FUNCTION_INFO_V1(geoacc_mesh_to_glb_ply);
Datum
geoacc_mesh_to_glb_ply(PG_FUNCTION_ARGS)
{
	uint32		layout;
	GeoaccMesh	mesh = MeshFromPly(PG_GETARG_BYTEA_PP(0), &layout);

	PG_RETURN_BYTEA_P(MeshToBytea(geoacc_glb_write, "glTF", &mesh, layout));
}
