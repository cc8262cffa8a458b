/*
 * density_raster.c
 *
 * gpu_density_raster(geom, extent, width, height, kernel, kernel_size,
 * interpolate, mode, weight): an aggregate that draws points and
 * trajectories into a KDE traffic-density raster and returns it as PostGIS
 * raster WKB (and, through the geoacc_raster extension, as gpu_density_rast,
 * a PostGIS raster).  Here are its arguments, its transition, combine and
 * final functions; its state, which holds the cells and buffers the points,
 * is in density_state.c, and the raster's bytes are written by
 * raster_wkb.c.  geoacc_density_kernel() shows a kernel's weights.
 */
#include "geoacc.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "density_raster.h"

static const char *const kernel_names[GEOACC_DENSITY_KERNEL_COUNT] = {
	"uniform", "triangular", "epanechnikov", "quartic", "triweight", "tricube", "gaussian", "cosine"
};

/* What a call site of the transition function prepares once (fn_extra). */
typedef struct DensityCallSite
{
	FmgrInfo	box2d;			/* PostGIS's box2d(geometry) */
} DensityCallSite;

/* ---------------------------------------------------------- the arguments */

static GeoaccDensityKernel
KernelFromName(text *name)
{
	char	   *s = text_to_cstring(name);

	for (int i = 0; i < GEOACC_DENSITY_KERNEL_COUNT; i++)
		if (pg_strcasecmp(s, kernel_names[i]) == 0)
			return (GeoaccDensityKernel) i;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown kernel \"%s\"", s),
			 errhint("Use one of uniform, triangular, epanechnikov, quartic, triweight, tricube, gaussian, cosine.")));
	return GEOACC_KERNEL_GAUSSIAN;
}

static void
CheckKernelSize(int32 size)
{
	if (size < 1 || size > GEOACC_DENSITY_MAX_KERNEL_SIZE || size % 2 == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kernel_size must be an odd number from 1 to %d, not %d",
						GEOACC_DENSITY_MAX_KERNEL_SIZE, size),
				 errhint("kernel_size is the side of the kernel in cells; 1 gives the raw counts.")));
}

static void
CheckNotNull(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("gpu_density_raster argument \"%s\" must not be NULL", name)));
}

/*
 * The extent from a PostGIS box2d: a GBOX (liblwgeom.h), flags then
 * xmin, xmax, ymin, ymax as doubles from byte 8.
 */
static void
GridFromBox2d(const void *box, GeoaccDensityGrid *grid)
{
	double		v[4];

	memcpy(v, (const char *) box + 8, sizeof(v));
	grid->xmin = v[0];
	grid->xmax = v[1];
	grid->ymin = v[2];
	grid->ymax = v[3];
	if (!(isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]) && isfinite(v[3])) ||
		!(grid->xmin < grid->xmax && grid->ymin < grid->ymax) ||
		!isfinite(grid->xmax - grid->xmin) || !isfinite(grid->ymax - grid->ymin))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("extent must be finite and have a positive width and height"),
				 errdetail("The extent is BOX(%.17g %.17g,%.17g %.17g).",
						   grid->xmin, grid->ymin, grid->xmax, grid->ymax)));
}

static uint32
CheckSide(int32 value, const char *name)
{
	if (value < 1 || value > GEOACC_RASTER_MAX_SIDE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between 1 and %d cells, not %d", name, GEOACC_RASTER_MAX_SIDE, value),
				 errdetail("PostGIS rasters have at most %d rows and columns.", GEOACC_RASTER_MAX_SIDE)));
	return (uint32) value;
}

static GeoaccDensityMode
ModeFromName(text *name)
{
	char	   *s = text_to_cstring(name);

	if (pg_strcasecmp(s, "count") == 0)
		return GEOACC_DENSITY_SAMPLES;
	if (pg_strcasecmp(s, "time") == 0)
		return GEOACC_DENSITY_TIME;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown mode \"%s\"", s),
			 errhint("Use \"count\" (samples per cell) or \"time\" (hours per cell).")));
	return GEOACC_DENSITY_SAMPLES;
}

void
DensityArgsFromCall(FunctionCallInfo fcinfo, int first, bool extent_is_geometry, DensityArgs *args)
{
	int			nargs = PG_NARGS() - first + 2;

	DensityCallSite *site = fcinfo->flinfo->fn_extra;

	memset(args, 0, sizeof(*args));
	CheckNotNull(fcinfo, first, "extent");
	CheckNotNull(fcinfo, first + 1, "width");
	CheckNotNull(fcinfo, first + 2, "height");
	if (site == NULL)
	{
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(DensityCallSite));
		site->box2d.fn_mcxt = fcinfo->flinfo->fn_mcxt;
		fcinfo->flinfo->fn_extra = site;
	}
	if (extent_is_geometry)
	{
		struct varlena *extent = PG_DETOAST_DATUM(PG_GETARG_DATUM(first));
		void	   *box = GeoaccGeometryBox2d(&site->box2d, PointerGetDatum(extent));

		if (box == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("extent must not be an empty geometry")));
		GridFromBox2d(box, &args->grid);
		args->extent_has_srid = true;
		args->extent_srid = GeoaccGeometrySrid(extent);
	}
	else
		GridFromBox2d(PG_GETARG_POINTER(first), &args->grid);
	args->grid.width = CheckSide(PG_GETARG_INT32(first + 1), "width");
	args->grid.height = CheckSide(PG_GETARG_INT32(first + 2), "height");
	if ((uint64) args->grid.width * args->grid.height > DENSITY_MAX_CELLS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a density raster of %u x %u cells is too large",
						args->grid.width, args->grid.height),
				 errdetail("At most %d cells (8192 x 8192) are supported.", DENSITY_MAX_CELLS)));
	if (!((args->grid.xmax - args->grid.xmin) / args->grid.width > 0 &&
		  (args->grid.ymax - args->grid.ymin) / args->grid.height > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("density raster cells would have no size"),
				 errdetail("The extent BOX(%.17g %.17g,%.17g %.17g) is too small for %u x %u cells.",
						   args->grid.xmin, args->grid.ymin, args->grid.xmax, args->grid.ymax,
						   args->grid.width, args->grid.height)));

	args->kernel = GEOACC_KERNEL_GAUSSIAN;
	args->kernel_size = 7;
	args->interpolate = true;
	args->mode = GEOACC_DENSITY_SAMPLES;
	if (nargs > 5)
	{
		CheckNotNull(fcinfo, first + 3, "kernel");
		args->kernel = KernelFromName(PG_GETARG_TEXT_PP(first + 3));
	}
	if (nargs > 6)
	{
		CheckNotNull(fcinfo, first + 4, "kernel_size");
		args->kernel_size = PG_GETARG_INT32(first + 4);
		CheckKernelSize(args->kernel_size);
	}
	if (nargs > 7)
	{
		CheckNotNull(fcinfo, first + 5, "interpolate");
		args->interpolate = PG_GETARG_BOOL(first + 5);
	}
	if (nargs > 8)
	{
		CheckNotNull(fcinfo, first + 6, "mode");
		args->mode = ModeFromName(PG_GETARG_TEXT_PP(first + 6));
	}
	args->weighted = nargs > 9;
	args->grid.margin = args->kernel_size / 2;
}

/* ---------------------------------------------------------- the aggregate */

static MemoryContext
AggregateContext(FunctionCallInfo fcinfo, const char *function)
{
	MemoryContext aggcontext;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s called in non-aggregate context", function)));
	return aggcontext;
}

/*
 * How messages name a row (and a part of a multi geometry): by the time of
 * its first vertex, which costs, so the name is made only for a message.
 */
typedef struct RowName
{
	int64		row;			/* 1-based */
	const struct varlena *geom;
	uint32		part;			/* 1-based; 0: a single geometry */
} RowName;

static const char *
NameOf(const RowName *name)
{
	char	   *row = GeoaccRowLabel(name->row, name->geom);

	return name->part == 0 ? row : psprintf("%s, part %u", row, name->part);
}

bool
DensityCheckPart(const GeoaccLine *line, const char *name)
{
	if (line->has_m && line->npoints > 1)
		return GeoaccCheckTrajectory(line, name);
	for (uint32 i = 0; i < line->npoints; i++)
	{
		const double *p = line->coords + (size_t) i * line->ndims;

		for (int d = 0; d < 2; d++)
			if (!isfinite(p[d]))
			{
				if (name == NULL)
					return false;
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s has a non-finite coordinate", name),
						 errdetail("Vertex %u has %c = %g.", i + 1, "XY"[d], p[d])));
			}
	}
	return true;
}

/*
 * Buffer the points of one part.  Count mode: every vertex is a sample and
 * joins the one before on lines.  Time mode: each segment's value is
 * weight x its duration in hours.
 */
static void
AppendPart(DensityState *state, const GeoaccLine *line, bool is_line, double weight, const RowName *name)
{
	bool		time_mode = state->h.args.mode == GEOACC_DENSITY_TIME;
	int			nd = line->ndims;

	if (time_mode && !is_line)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is a point: the time mode needs lines", NameOf(name)),
				 errhint("In the time mode each segment adds the time between its ends; make tracks with ST_MakeLine().")));
	if (time_mode && !line->has_m && line->npoints > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s has no M values", NameOf(name)),
				 errhint("The time mode reads the time of each vertex from M, in seconds.")));
	if (!DensityCheckPart(line, NULL))
		DensityCheckPart(line, NameOf(name));
	if (!time_mode)
	{
		/* every vertex a sample of the row's weight (checked by the caller), joined to the one before on lines */
		uint8		join = is_line && state->h.args.interpolate ? GEOACC_DENSITY_JOIN : 0;

		DensityStateAppendRun(state, line->coords, nd, line->npoints, GEOACC_DENSITY_COUNT,
							  GEOACC_DENSITY_COUNT | join, weight);
		return;
	}
	for (uint32 i = 0; i < line->npoints; i++)
	{
		const double *p = line->coords + (size_t) i * nd;
		uint8		flags = i > 0 ? GEOACC_DENSITY_JOIN : 0;
		double		value = i > 0 ? weight * ((p[nd - 1] - p[-1]) / 3600.0) : 0.0;

		if (!(value < DENSITY_MAX_VALUE))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("%s adds %g at vertex %u, more than a sample can hold", NameOf(name), value, i + 1),
					 errdetail("A sample's weight, or the weight times the hours of a segment, must be below %.0f.",
							   DENSITY_MAX_VALUE),
					 errhint("Divide the weights by a constant.")));
		DensityStateAppend(state, p[0], p[1], flags, value);
	}
}

/*
 * Transition: buffer the points of one row.  The extent's type comes from
 * the entry point, not from the call's expression: Citus calls the
 * transition function of its partial aggregates without one.
 */
static Datum
DensityTransition(FunctionCallInfo fcinfo, bool extent_is_geometry)
{
	MemoryContext aggcontext = AggregateContext(fcinfo, "gpu_density_raster_transfn");
	DensityState *state = PG_ARGISNULL(0) ? NULL : DensityStateForWriting(PG_GETARG_DATUM(0), aggcontext);
	DensityArgs args;
	struct varlena *geom;
	GeoaccParts parts;
	GeoaccLine	line;
	double		weight = 1.0;
	int64		row;
	RowName		name;
	char		row_number[32] = "row ";

	/* NULL rows, and rows with a NULL weight, are left out */
	if (PG_ARGISNULL(1) || (PG_NARGS() > 9 && PG_ARGISNULL(9)))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_DATUM(DensityStateDatum(state));
	}
	DensityArgsFromCall(fcinfo, 2, extent_is_geometry, &args);
	geom = PG_GETARG_VARLENA_P(1);
	row = (state == NULL ? 0 : state->h.rows) + 1;
	name = (RowName) {row, geom, 0};
	if (args.weighted)
	{
		weight = PG_GETARG_FLOAT8(9);
		if (!(weight >= 0 && weight < DENSITY_MAX_VALUE))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("weight must be at least 0 and below %.0f, not %g", DENSITY_MAX_VALUE, weight),
					 errdetail("Row %lld has that weight.", (long long) row)));
	}
	/* the row by its number, made without palloc, for messages about a corrupt geometry value */
	pg_lltoa(row, row_number + 4);
	GeoaccPartsBegin(&parts, geom, row_number);
	if (state == NULL)
	{
		DensityHeader h = {0};

		h.args = args;
		h.srid = parts.srid;
		state = DensityStateCreate(aggcontext, &h);
	}
	else if (!DensityArgsEqual(&args, &state->h.args))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_density_raster arguments must be the same on every row"),
				 errdetail("Row %lld has other arguments than the first row.", (long long) row)));
	else if (parts.srid != state->h.srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_density_raster input has mixed SRIDs"),
				 errdetail("Row %lld has SRID %d; the rows before it have SRID %d.",
						   (long long) row, parts.srid, state->h.srid),
				 errhint("Use ST_Transform() to bring the trajectories to one SRID.")));
	if (args.extent_has_srid && parts.srid != args.extent_srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the extent and the trajectories have different SRIDs"),
				 errdetail("The extent has SRID %d, row %lld SRID %d.", args.extent_srid, (long long) row, parts.srid),
				 errhint("Transform the extent to the trajectories' SRID, for example "
						 "ST_Transform(ST_TileEnvelope(z, x, y), %d).", parts.srid)));
	state->h.rows = row;
	while (GeoaccPartsNext(&parts, &line))
	{
		bool		is_line = parts.type == GEOACC_LINETYPE || parts.type == GEOACC_MULTILINETYPE;

		name.part = parts.type == GEOACC_MULTILINETYPE || parts.type == GEOACC_MULTIPOINTTYPE ? parts.next : 0;
		AppendPart(state, &line, is_line, weight, &name);
	}
	PG_RETURN_DATUM(DensityStateDatum(state));
}

/* The transition function with the extent as a box2d, */
PG_FUNCTION_INFO_V1(gpu_density_raster_transfn);
Datum
gpu_density_raster_transfn(PG_FUNCTION_ARGS)
{
	/* geoacc 0.1.0's aggregates kept an internal state */
	if (get_fn_expr_argtype(fcinfo->flinfo, 0) == INTERNALOID)
		GeoaccOlderDeclaration("gpu_density_raster");
	return DensityTransition(fcinfo, false);
}

/* and as a geometry. */
PG_FUNCTION_INFO_V1(gpu_density_raster_transfn_geometry);
Datum
gpu_density_raster_transfn_geometry(PG_FUNCTION_ARGS)
{
	return DensityTransition(fcinfo, true);
}

/*
 * Combine: add the second state's cells to the first's (the first changed
 * in place when it is the aggregate's own)
 */
PG_FUNCTION_INFO_V1(gpu_density_raster_combinefn);
Datum
gpu_density_raster_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = AggregateContext(fcinfo, "gpu_density_raster_combinefn");
	DensityState *a;

	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(DensityStateDatum(DensityStateForWriting(PG_GETARG_DATUM(0), aggcontext)));
	}
	if (PG_ARGISNULL(0))
		a = DensityStateCopy(PG_GETARG_DATUM(1), aggcontext);
	else
	{
		a = DensityStateForWriting(PG_GETARG_DATUM(0), aggcontext);
		DensityStateAdd(a, PG_GETARG_DATUM(1));
	}
	PG_RETURN_DATUM(DensityStateDatum(a));
}

/* ---------------------------------------------------------- the results */

/*
 * A WARNING when rows were read but the raster is all zero: no weight fell
 * inside the extent or its margin (a wrong extent or SRID, or weights of
 * zero).
 */
static void
WarnIfEmpty(const DensityState *state)
{
	if (state->h.cell_bound == 0)	/* no point was read at all */
		return;
	if (!DensityStateIsZero(state))
		return;
	ereport(WARNING,
			(errmsg("the raster is all zero: none of the %lld rows put weight inside the extent",
					(long long) state->h.rows),
			 errdetail("The extent is BOX(%.17g %.17g,%.17g %.17g); the rows have SRID %d.",
					   state->h.args.grid.xmin, state->h.args.grid.ymin, state->h.args.grid.xmax,
					   state->h.args.grid.ymax, state->h.srid),
			 errhint("Check that the extent is in the rows' coordinates, and the weights.")));
}

/* The convolution of the cells into the pixels, as a step of a call (a work the GPU service can run). */
typedef struct ConvolveRun
{
	uint32		width;
	uint32		height;
	GeoaccDensityKernel kernel;
	int32		kernel_size;
	bool		sums;
	void	   *cells;
	double	   *pixels;
} ConvolveRun;

static GeoaccStatus
ConvolveOn(GeoaccDevice device, void *arg)
{
	ConvolveRun *r = arg;

	return r->sums
		? geoacc_density_convolve_sums(device, r->width, r->height, r->cells, r->kernel, r->kernel_size, r->pixels)
		: geoacc_density_convolve(device, r->width, r->height, r->cells, r->kernel, r->kernel_size, r->pixels);
}

double *
DensityPixels(DensityState *state, bool warn_if_empty, GeoaccStages *stages, GeoaccDevice *device)
{
	const DensityArgs *args = &state->h.args;
	ConvolveRun run = {args->grid.width, args->grid.height, args->kernel, args->kernel_size, DensityHasSums(args),
	NULL, GeoaccWorkAlloc(sizeof(double) * args->grid.width * args->grid.height)};
	GeoaccWork	work = {ConvolveOn, &run,
						geoacc_density_convolve_need(args->grid.width, args->grid.height, args->kernel_size,
													 DensityHasSums(args)),
						false, sizeof(run)};
	GeoaccDevice convolved_on = GEOACC_DEVICE_CPU;

	/* projecting the buffered points leaves what the state stands for unchanged */
	DensityStateFlush(state);
	if (stages)
		GeoaccStagesLap(stages, "projection");
	if (warn_if_empty)
		WarnIfEmpty(state);
	if (!DensityStateHasCells(state))
		/* no sample: every pixel is zero, as the convolution would make it */
		memset(run.pixels, 0, sizeof(double) * args->grid.width * args->grid.height);
	else
	{
		run.cells = DensityStateCells(state);
		if (stages)
			GeoaccStagesLap(stages, "cells");
		convolved_on = GeoaccCallRun("gpu_density_raster (convolution)", (int64) args->grid.width * args->grid.height,
									 &work);
		GeoaccWorkFree(run.cells);
	}
	if (stages)
		GeoaccStagesLap(stages, "convolution");
	if (device)
		*device = convolved_on;
	return run.pixels;
}

/*
 * An aggregate's final step: the cells convolved, the raster made by
 * `make`, and a DEBUG1 line of where the step's time went (the rows were
 * read and projected before it, in the leader and in each parallel worker).
 */
static struct varlena *
FinalRaster(DensityState *state, const char *function,
			struct varlena *(*make) (const GeoaccDensityGrid *grid, int32 srid, const double *pixels))
{
	const DensityArgs *args = &state->h.args;
	GeoaccStages stages;
	GeoaccDevice device;
	double	   *pixels;
	struct varlena *raster;

	GeoaccStagesStart(&stages);
	pixels = DensityPixels(state, true, &stages, &device);
	raster = make(&args->grid, state->h.srid, pixels);
	GeoaccWorkFree(pixels);
	GeoaccStagesLap(&stages, "raster");
	elog(DEBUG1, "%s: %u x %u cells, kernel %d, " INT64_FORMAT " rows; here " UINT64_FORMAT " points projected in %u "
		 "calls, %.1f ms, %u states combined, %.1f ms; convolved on the %s; %zu bytes; final step: %s",
		 function, args->grid.width, args->grid.height, args->kernel_size, state->h.rows, state->projected,
		 state->project_calls, state->project_ms, state->combined, state->combine_ms,
		 GeoaccDeviceName(device), (size_t) VARSIZE(raster), GeoaccStagesText(&stages));
	return raster;
}

/*
 * Final: convolve the cells and return the raster WKB (NULL without rows)
 */
PG_FUNCTION_INFO_V1(gpu_density_raster_finalfn);
Datum
gpu_density_raster_finalfn(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(FinalRaster(DensityStateForReading(PG_GETARG_DATUM(0)), "gpu_density_raster", GeoaccRasterWkb));
}

/*
 * Final of gpu_density_rast (geoacc_raster): the same raster as a PostGIS raster
 */
PG_FUNCTION_INFO_V1(gpu_density_rast_finalfn);
Datum
gpu_density_rast_finalfn(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(FinalRaster(DensityStateForReading(PG_GETARG_DATUM(0)), "gpu_density_rast",
								  GeoaccRasterSerialized));
}

/*
 * geoacc_density_kernel(kernel, kernel_size): the normalized weights as a
 * kernel_size x kernel_size array
 */
PG_FUNCTION_INFO_V1(geoacc_density_kernel_weights);
Datum
geoacc_density_kernel_weights(PG_FUNCTION_ARGS)
{
	GeoaccDensityKernel kernel = KernelFromName(PG_GETARG_TEXT_PP(0));
	int32		size = PG_GETARG_INT32(1);
	double	   *weights;
	Datum	   *elems;
	int			dims[2];
	int			lbs[2] = {1, 1};

	CheckKernelSize(size);
	weights = palloc(sizeof(double) * size * size);
	elems = palloc(sizeof(Datum) * size * size);
	GeoaccCheck(geoacc_density_kernel(kernel, size, weights));
	for (int i = 0; i < size * size; i++)
		elems[i] = Float8GetDatum(weights[i]);
	dims[0] = dims[1] = size;
	PG_RETURN_ARRAYTYPE_P(construct_md_array(elems, NULL, 2, dims, lbs, FLOAT8OID, sizeof(float8),
											 FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}
