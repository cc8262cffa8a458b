/*
 * density_raster.c
 *
 * gpu_density_raster(traj, extent, width, height, kernel, kernel_size,
 * interpolate): an aggregate that draws trajectories into a KDE traffic
 * density raster and returns it as PostGIS raster WKB.  Its state holds the
 * integer counts of the raster and a chunk of points not yet projected; a
 * full chunk is projected on the chosen device, so memory stays bounded by
 * the raster plus one chunk whatever the number of rows.  Serial, deserial
 * and combine functions let parallel workers each fill a raster of counts
 * that the leader adds up.  geoacc_density_kernel() shows a kernel's
 * weights.
 */
#include "geoacc.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"

/* PostGIS rasters have 16-bit dimensions; the result must stay well under 1 GB */
#define RASTER_MAX_SIDE 65535
#define RASTER_MAX_CELLS (8192 * 8192)

/*
 * Points buffered before a projection: the chunk starts small and doubles
 * up to CHUNK_MAX points, or to a quarter of geoacc.gpu_memory_limit when
 * that is set, so that a chunk reaches the GPU in one batch.
 */
#define CHUNK_FIRST 1024
#define CHUNK_MAX (1 << 22)
#define POINT_BYTES (2 * sizeof(double) + 1)

/*
 * More samples than one point can add to one cell: itself, and of its
 * incoming segment one per step along the main axis, or two where the east
 * or south border merges the last two columns or rows (and rounding could
 * put a sample next to its neighbour); a safe bound for the overflow check.
 */
#define SAMPLES_PER_POINT_PER_CELL 8

/* PostGIS raster WKB (raster/rt_core/rt_wkb.c): header and 64-bit float band */
#define RASTER_WKB_HEADER 61
#define RASTER_PIXTYPE_64BF 11

static const char *const kernel_names[GEOACC_DENSITY_KERNEL_COUNT] = {
	"uniform", "triangular", "epanechnikov", "quartic", "triweight", "tricube", "gaussian", "cosine"
};

/* The aggregate's arguments other than the trajectory: the same on every row. */
typedef struct DensityArgs
{
	GeoaccDensityGrid grid;
	GeoaccDensityKernel kernel;
	int32		kernel_size;
	bool		interpolate;
	bool		extent_has_srid;	/* the extent was a geometry: its SRID must be the rows' */
	int32		extent_srid;
} DensityArgs;

/* What a call site of the transition function prepares once (fn_extra). */
typedef struct DensityCallSite
{
	bool		extent_is_geometry;
	FmgrInfo	box2d;			/* PostGIS's box2d(geometry) */
} DensityCallSite;

/* What a state carries besides its counts and points; also the serial form's header. */
typedef struct DensityHeader
{
	DensityArgs args;
	int32		srid;
	int64		rows;			/* non-NULL rows seen (for messages) */
	uint64		cell_bound;		/* no cell holds more samples than this */
} DensityHeader;

typedef struct DensityState
{
	DensityHeader h;
	uint32	   *counts;			/* height * width, row 0 = north */
	/* points not yet projected */
	uint32		npoints;
	uint32		capacity;
	uint32		chunk_max;
	double	   *xy;
	uint8	   *flags;
} DensityState;

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
	if (value < 1 || value > RASTER_MAX_SIDE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between 1 and %d cells, not %d", name, RASTER_MAX_SIDE, value),
				 errdetail("PostGIS rasters have at most %d rows and columns.", RASTER_MAX_SIDE)));
	return (uint32) value;
}

/*
 * Arguments 2.. of the transition function (2: extent, 3: width, 4: height,
 * then the optional kernel, kernel_size, interpolate).
 */
static void
ArgsFromCall(FunctionCallInfo fcinfo, DensityArgs *args)
{
	int			nargs = PG_NARGS();

	DensityCallSite *site = fcinfo->flinfo->fn_extra;

	memset(args, 0, sizeof(*args));
	CheckNotNull(fcinfo, 2, "extent");
	CheckNotNull(fcinfo, 3, "width");
	CheckNotNull(fcinfo, 4, "height");
	if (site == NULL)
	{
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(DensityCallSite));
		site->extent_is_geometry = get_fn_expr_argtype(fcinfo->flinfo, 2) == GeoaccGeometryOid();
		site->box2d.fn_mcxt = fcinfo->flinfo->fn_mcxt;
		fcinfo->flinfo->fn_extra = site;
	}
	if (site->extent_is_geometry)
	{
		struct varlena *extent = PG_DETOAST_DATUM(PG_GETARG_DATUM(2));
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
		GridFromBox2d(PG_GETARG_POINTER(2), &args->grid);
	args->grid.width = CheckSide(PG_GETARG_INT32(3), "width");
	args->grid.height = CheckSide(PG_GETARG_INT32(4), "height");
	if ((uint64) args->grid.width * args->grid.height > RASTER_MAX_CELLS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a density raster of %u x %u cells is too large",
						args->grid.width, args->grid.height),
				 errdetail("At most %d cells (8192 x 8192) are supported.", RASTER_MAX_CELLS)));

	args->kernel = GEOACC_KERNEL_GAUSSIAN;
	args->kernel_size = 7;
	args->interpolate = true;
	if (nargs > 5)
	{
		CheckNotNull(fcinfo, 5, "kernel");
		args->kernel = KernelFromName(PG_GETARG_TEXT_PP(5));
	}
	if (nargs > 6)
	{
		CheckNotNull(fcinfo, 6, "kernel_size");
		args->kernel_size = PG_GETARG_INT32(6);
		CheckKernelSize(args->kernel_size);
	}
	if (nargs > 7)
	{
		CheckNotNull(fcinfo, 7, "interpolate");
		args->interpolate = PG_GETARG_BOOL(7);
	}
}

static bool
SameArgs(const DensityArgs *a, const DensityArgs *b)
{
	return a->extent_has_srid == b->extent_has_srid && a->extent_srid == b->extent_srid &&
		a->grid.xmin == b->grid.xmin && a->grid.ymin == b->grid.ymin &&
		a->grid.xmax == b->grid.xmax && a->grid.ymax == b->grid.ymax &&
		a->grid.width == b->grid.width && a->grid.height == b->grid.height &&
		a->kernel == b->kernel && a->kernel_size == b->kernel_size && a->interpolate == b->interpolate;
}

static size_t
CellCount(const DensityArgs *args)
{
	return (size_t) args->grid.width * args->grid.height;
}

static uint32
ChunkMaxPoints(void)
{
	uint64		limit_mb = (uint64) Max(geoacc_gpu_memory_limit_mb, 0);
	uint64		points = limit_mb * 1024 * 1024 / 4 / POINT_BYTES;

	if (geoacc_gpu_memory_limit_mb < 0)	/* automatic */
		return CHUNK_MAX;
	return (uint32) Max(CHUNK_FIRST, Min(CHUNK_MAX, points));
}

/* A state with zero counts and no points, in the aggregate's memory context. */
static DensityState *
StateCreate(MemoryContext aggcontext, const DensityHeader *h)
{
	DensityState *state = MemoryContextAllocZero(aggcontext, sizeof(DensityState));

	state->h = *h;
	state->chunk_max = ChunkMaxPoints();
	state->counts = MemoryContextAllocZero(aggcontext, CellCount(&h->args) * sizeof(uint32));
	return state;
}

static uint32
MaxCount(const DensityState *state)
{
	uint32		max = 0;

	for (size_t i = 0; i < CellCount(&state->h.args); i++)
		max = Max(max, state->counts[i]);
	return max;
}

/* Make sure that adding `samples` to any cell cannot pass UINT32_MAX. */
static void
ReserveCellSamples(DensityState *state, uint64 samples)
{
	if (state->h.cell_bound + samples > PG_UINT32_MAX)
	{
		state->h.cell_bound = MaxCount(state);
		if (state->h.cell_bound + samples > PG_UINT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a density raster cell would hold more than %u samples", PG_UINT32_MAX),
					 errhint("Aggregate fewer rows into one raster, or use smaller cells.")));
	}
	state->h.cell_bound += samples;
}

/* Project the buffered points into the counts on the chosen device. */
static void
StateFlush(DensityState *state)
{
	GeoaccCall	call;
	GeoaccStatus status;

	if (state->npoints == 0)
		return;
	ReserveCellSamples(state, (uint64) SAMPLES_PER_POINT_PER_CELL * state->npoints);
	GeoaccCallBegin(&call, "gpu_density_raster (projection)", state->npoints);
	status = geoacc_density_project(call.device, &state->h.args.grid, state->xy, state->flags, state->npoints,
									state->counts);
	/* the counts are added to: only a failure to allocate, before any was written, can run again */
	if (status == GEOACC_ERR_DEVICE_MEMORY && GeoaccRetryOnCpu(&call, status))
		status = geoacc_density_project(call.device, &state->h.args.grid, state->xy, state->flags, state->npoints,
										state->counts);
	GeoaccCheck(status);
	GeoaccCallEnd(&call);
	state->npoints = 0;
}

/*
 * Buffer one point.  When the chunk is full at its largest, project it; a
 * point that joins the one before then starts the next chunk after a copy
 * of that one, which only anchors the segment and does not count.
 */
static void
StateAppend(DensityState *state, MemoryContext aggcontext, double x, double y, uint8 flags)
{
	if (state->npoints == state->capacity)
	{
		if (state->capacity < state->chunk_max)
		{
			uint32		capacity = Min(state->chunk_max, Max(CHUNK_FIRST, state->capacity * 2));

			if (state->xy == NULL)
			{
				state->xy = MemoryContextAlloc(aggcontext, sizeof(double) * 2 * (size_t) capacity);
				state->flags = MemoryContextAlloc(aggcontext, capacity);
			}
			else
			{
				state->xy = repalloc(state->xy, sizeof(double) * 2 * (size_t) capacity);
				state->flags = repalloc(state->flags, capacity);
			}
			state->capacity = capacity;
		}
		else
		{
			double		last_x = state->xy[2 * state->npoints - 2];
			double		last_y = state->xy[2 * state->npoints - 1];

			StateFlush(state);
			if (flags & GEOACC_DENSITY_JOIN)
				StateAppend(state, aggcontext, last_x, last_y, 0);
		}
	}
	state->xy[2 * state->npoints] = x;
	state->xy[2 * state->npoints + 1] = y;
	state->flags[state->npoints] = flags;
	state->npoints++;
}

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

/* A WARNING when rows were read but no sample fell inside the extent (a wrong extent or SRID). */
static void
WarnIfEmpty(const DensityState *state)
{
	size_t		cells = CellCount(&state->h.args);

	if (state->h.cell_bound == 0)	/* no point was read at all */
		return;
	for (size_t i = 0; i < cells; i++)
		if (state->counts[i] != 0)
			return;
	ereport(WARNING,
			(errmsg("no point of the %lld trajectories fell inside the extent", (long long) state->h.rows),
			 errdetail("The extent is BOX(%.17g %.17g,%.17g %.17g); the trajectories have SRID %d.",
					   state->h.args.grid.xmin, state->h.args.grid.ymin, state->h.args.grid.xmax,
					   state->h.args.grid.ymax, state->h.srid),
			 errhint("Check that the extent is in the trajectories' coordinates.")));
}

/*
 * Transition: buffer the vertices of one trajectory
 */
PG_FUNCTION_INFO_V1(gpu_density_raster_transfn);
Datum
gpu_density_raster_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = AggregateContext(fcinfo, "gpu_density_raster_transfn");
	DensityState *state = PG_ARGISNULL(0) ? NULL : (DensityState *) PG_GETARG_POINTER(0);
	DensityArgs args;
	struct varlena *geom;
	GeoaccLine	line;
	int64		row;
	char	   *what;

	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}
	ArgsFromCall(fcinfo, &args);
	geom = PG_GETARG_VARLENA_P(1);
	row = (state == NULL ? 0 : state->h.rows) + 1;
	what = psprintf("row %lld", (long long) row);
	GeoaccLineFromGeometry(geom, &line, what);
	if (state == NULL)
	{
		DensityHeader h = {0};

		h.args = args;
		h.srid = line.srid;
		state = StateCreate(aggcontext, &h);
	}
	else if (!SameArgs(&args, &state->h.args))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_density_raster arguments must be the same on every row"),
				 errdetail("Row %lld has other arguments than the first row.", (long long) row)));
	else if (line.srid != state->h.srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_density_raster input has mixed SRIDs"),
				 errdetail("Row %lld has SRID %d; the rows before it have SRID %d.",
						   (long long) row, line.srid, state->h.srid),
				 errhint("Use ST_Transform() to bring the trajectories to one SRID.")));
	if (args.extent_has_srid && line.srid != args.extent_srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the extent and the trajectories have different SRIDs"),
				 errdetail("The extent has SRID %d, row %lld SRID %d.", args.extent_srid, (long long) row, line.srid),
				 errhint("Transform the extent to the trajectories' SRID, for example "
						 "ST_Transform(ST_TileEnvelope(z, x, y), %d).", line.srid)));
	state->h.rows = row;
	GeoaccCheckTrajectory(&line, what);

	for (uint32 i = 0; i < line.npoints; i++)
	{
		const double *p = line.coords + (size_t) i * line.ndims;
		uint8		flags = GEOACC_DENSITY_COUNT;

		if (i > 0 && args.interpolate)
			flags |= GEOACC_DENSITY_JOIN;
		StateAppend(state, aggcontext, p[0], p[1], flags);
	}
	PG_RETURN_POINTER(state);
}

/*
 * Combine: add the second state's counts to the first's
 */
PG_FUNCTION_INFO_V1(gpu_density_raster_combinefn);
Datum
gpu_density_raster_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = AggregateContext(fcinfo, "gpu_density_raster_combinefn");
	DensityState *a = PG_ARGISNULL(0) ? NULL : (DensityState *) PG_GETARG_POINTER(0);
	DensityState *b = PG_ARGISNULL(1) ? NULL : (DensityState *) PG_GETARG_POINTER(1);

	if (b == NULL)
	{
		if (a == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(a);
	}
	StateFlush(b);
	if (a == NULL)
	{
		a = StateCreate(aggcontext, &b->h);
		memcpy(a->counts, b->counts, CellCount(&b->h.args) * sizeof(uint32));
		PG_RETURN_POINTER(a);
	}
	if (!SameArgs(&a->h.args, &b->h.args))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_density_raster arguments must be the same on every row")));
	if (a->h.srid != b->h.srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_density_raster input has mixed SRIDs"),
				 errdetail("Some rows have SRID %d, others SRID %d.", a->h.srid, b->h.srid),
				 errhint("Use ST_Transform() to bring the trajectories to one SRID.")));
	for (size_t i = 0; i < CellCount(&a->h.args); i++)
	{
		uint64		sum = (uint64) a->counts[i] + b->counts[i];

		if (sum > PG_UINT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a density raster cell would hold more than %u samples", PG_UINT32_MAX),
					 errhint("Aggregate fewer rows into one raster, or use smaller cells.")));
		a->counts[i] = (uint32) sum;
	}
	a->h.cell_bound = Min(a->h.cell_bound + b->h.cell_bound, PG_UINT32_MAX);
	a->h.rows += b->h.rows;
	PG_RETURN_POINTER(a);
}

/*
 * Serial form: the header, then the counts (buffered points are projected first)
 */
PG_FUNCTION_INFO_V1(gpu_density_raster_serialfn);
Datum
gpu_density_raster_serialfn(PG_FUNCTION_ARGS)
{
	DensityState *state = (DensityState *) PG_GETARG_POINTER(0);
	size_t		count_bytes = CellCount(&state->h.args) * sizeof(uint32);
	size_t		size = VARHDRSZ + sizeof(DensityHeader) + count_bytes;
	bytea	   *result = palloc(size);

	StateFlush(state);
	SET_VARSIZE(result, size);
	memcpy(VARDATA(result), &state->h, sizeof(DensityHeader));
	memcpy(VARDATA(result) + sizeof(DensityHeader), state->counts, count_bytes);
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(gpu_density_raster_deserialfn);
Datum
gpu_density_raster_deserialfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = AggregateContext(fcinfo, "gpu_density_raster_deserialfn");
	bytea	   *data = PG_GETARG_BYTEA_PP(0);
	DensityHeader h;
	DensityState *state;

	memcpy(&h, VARDATA_ANY(data), sizeof(h));
	if (VARSIZE_ANY_EXHDR(data) != sizeof(h) + CellCount(&h.args) * sizeof(uint32))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("gpu_density_raster state has the wrong size")));
	state = StateCreate(aggcontext, &h);
	memcpy(state->counts, VARDATA_ANY(data) + sizeof(h), CellCount(&h.args) * sizeof(uint32));
	PG_RETURN_POINTER(state);
}

static uint8 *
PutBytes(uint8 *p, const void *value, size_t size)
{
	memcpy(p, value, size);
	return p + size;
}

/*
 * The raster as PostGIS raster WKB: one band of 64-bit floats without a
 * nodata value, north-up (upper-left corner at xmin, ymax; negative scale
 * in y), in host byte order with its endianness flag.
 */
static bytea *
RasterWkb(const DensityState *state, const double *pixels)
{
	const GeoaccDensityGrid *g = &state->h.args.grid;
	size_t		pixel_bytes = CellCount(&state->h.args) * sizeof(double);
	size_t		size = VARHDRSZ + RASTER_WKB_HEADER + 1 + sizeof(double) + pixel_bytes;
	bytea	   *wkb = palloc(size);
	uint8	   *p = (uint8 *) VARDATA(wkb);
	uint16		version = 0,
				nbands = 1,
				width = (uint16) g->width,
				height = (uint16) g->height;
	double		geo[6] = {(g->xmax - g->xmin) / g->width, -((g->ymax - g->ymin) / g->height),
						  g->xmin, g->ymax, 0.0, 0.0};	/* scale x y, upper left x y, skew x y */
	int32		srid = state->h.srid;
	uint8		band = RASTER_PIXTYPE_64BF;
	double		nodata = 0.0;

	SET_VARSIZE(wkb, size);
#ifdef WORDS_BIGENDIAN
	*p++ = 0;
#else
	*p++ = 1;
#endif
	p = PutBytes(p, &version, 2);
	p = PutBytes(p, &nbands, 2);
	p = PutBytes(p, geo, sizeof(geo));
	p = PutBytes(p, &srid, 4);
	p = PutBytes(p, &width, 2);
	p = PutBytes(p, &height, 2);
	p = PutBytes(p, &band, 1);
	p = PutBytes(p, &nodata, sizeof(nodata));
	memcpy(p, pixels, pixel_bytes);
	return wkb;
}

/*
 * Final: convolve the counts and return the raster (NULL without rows)
 */
PG_FUNCTION_INFO_V1(gpu_density_raster_finalfn);
Datum
gpu_density_raster_finalfn(PG_FUNCTION_ARGS)
{
	DensityState *state;
	double	   *pixels;
	GeoaccCall	call;
	GeoaccStatus status;
	bytea	   *result;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (DensityState *) PG_GETARG_POINTER(0);

	/* projecting the buffered points leaves what the state stands for unchanged */
	StateFlush(state);
	WarnIfEmpty(state);
	pixels = palloc(CellCount(&state->h.args) * sizeof(double));
	GeoaccCallBegin(&call, "gpu_density_raster (convolution)", (int64) CellCount(&state->h.args));
	status = geoacc_density_convolve(call.device, state->h.args.grid.width, state->h.args.grid.height,
									 state->counts, state->h.args.kernel, state->h.args.kernel_size, pixels);
	if (status != GEOACC_OK && GeoaccRetryOnCpu(&call, status))
		status = geoacc_density_convolve(call.device, state->h.args.grid.width, state->h.args.grid.height,
										 state->counts, state->h.args.kernel, state->h.args.kernel_size, pixels);
	GeoaccCheck(status);
	GeoaccCallEnd(&call);
	result = RasterWkb(state, pixels);
	pfree(pixels);
	PG_RETURN_BYTEA_P(result);
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
