/*
 * density_raster.c
 *
 * gpu_density_raster(geom, extent, width, height, kernel, kernel_size,
 * interpolate, mode, weight): an aggregate that draws points and
 * trajectories into a KDE traffic-density raster and returns it as PostGIS
 * raster WKB (and, through the geoacc_raster extension, as gpu_density_rast,
 * a PostGIS raster).  Its state holds the cells of the raster and of a
 * margin around it as wide as the kernel's reach (integer counts, or
 * fixed-point sums for weights and the time mode), in tiles made when a
 * sample first falls in them, and a chunk of points not yet projected; a
 * full chunk is projected on the chosen device, so memory stays bounded by
 * the raster plus one chunk whatever the number of rows, and a partial
 * state (a parallel worker's, a Citus shard's) by the tiles it touched.
 *
 * The state's type is geoacc_density_state, not internal, so that Citus
 * splits the aggregate into partials on its workers and a combine on the
 * coordinator.  In memory the state is an expanded object
 * (utils/expandeddatum.h, as PostgreSQL's expanded arrays): rows are added
 * to it in place.  Its flat form, which parallel workers hand to the leader
 * and (as base64 text) Citus workers to the coordinator, is a header and
 * the cells with runs of zeros skipped and values as varints (StateEncode);
 * a combine adds a flat state's cells straight into its own.  Every use of
 * the state goes through the State* functions here.
 * geoacc_density_kernel() shows a kernel's weights.
 */
#include "geoacc.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/base64.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/expandeddatum.h"
#include "utils/guc.h"
#include "utils/memutils.h"

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
#define POINT_BYTES (3 * sizeof(double) + 1)

/*
 * More amounts than one point can add to one cell: itself, and of its
 * incoming segment one sample per step along the main axis (and rounding
 * could put a sample next to its neighbour), or in the time mode half an
 * amount at each end; a safe bound for the overflow check.
 */
#define AMOUNTS_PER_POINT_PER_CELL 8

/* A sample's value (a weight, or weight x hours of a segment) must stay below 2^27 (geoacc_core.h). */
#define DENSITY_MAX_VALUE 134217728.0

/* PostGIS raster WKB (raster/rt_core/rt_wkb.c): header and 64-bit float band */
#define RASTER_WKB_HEADER 61
#define RASTER_PIXTYPE_64BF 11

/* PostGIS's serialized raster (raster/rt_core/rt_serialize.c): 64-byte header, then each band */
#define RASTER_SERIALIZED_HEADER 64

static const char *const kernel_names[GEOACC_DENSITY_KERNEL_COUNT] = {
	"uniform", "triangular", "epanechnikov", "quartic", "triweight", "tricube", "gaussian", "cosine"
};

/* The aggregate's arguments other than the geometry and the weight: the same on every row. */
typedef struct DensityArgs
{
	GeoaccDensityGrid grid;		/* margin: kernel_size / 2 */
	GeoaccDensityKernel kernel;
	int32		kernel_size;
	bool		interpolate;
	GeoaccDensityMode mode;
	bool		weighted;		/* a weight argument (every row has one) */
	bool		extent_has_srid;	/* the extent was a geometry: its SRID must be the rows' */
	int32		extent_srid;
} DensityArgs;

/* What a call site of the transition function prepares once (fn_extra). */
typedef struct DensityCallSite
{
	FmgrInfo	box2d;			/* PostGIS's box2d(geometry) */
} DensityCallSite;

/* What a state carries besides its cells and points; also the serial form's header. */
typedef struct DensityHeader
{
	DensityArgs args;
	int32		srid;
	int64		rows;			/* rows read (for messages) */
	uint64		cell_bound;		/* no cell holds more than this (counts, or units of 2^-32) */
} DensityHeader;

/*
 * The state, an expanded object whose memory context holds everything:
 * cells are uint32 counts, or int64 fixed-point sums (StateHasSums), in
 * tiles (GeoaccDensityTiles); points are buffered with their values until
 * a projection.
 */
typedef struct DensityState
{
	ExpandedObjectHeader eoh;	/* first, as utils/expandeddatum.h requires */
	DensityHeader h;
	GeoaccDensityTiles cells;	/* (height + 2 margin) rows of width + 2 margin, row 0 = north */
	uint32		npoints;
	uint32		capacity;
	uint32		chunk_max;
	uint64		chunk_bound;	/* what the buffered points can add to one cell */
	double	   *xy;
	uint8	   *flags;
	double	   *values;			/* with sums only */
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

/*
 * Arguments 2.. of the transition function (2: extent, a box2d or a
 * geometry, 3: width, 4: height, then the optional kernel, kernel_size,
 * interpolate, mode, weight).
 */
static void
ArgsFromCall(FunctionCallInfo fcinfo, bool extent_is_geometry, DensityArgs *args)
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
		site->box2d.fn_mcxt = fcinfo->flinfo->fn_mcxt;
		fcinfo->flinfo->fn_extra = site;
	}
	if (extent_is_geometry)
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
	if (nargs > 8)
	{
		CheckNotNull(fcinfo, 8, "mode");
		args->mode = ModeFromName(PG_GETARG_TEXT_PP(8));
	}
	args->weighted = nargs > 9;
	args->grid.margin = args->kernel_size / 2;
}

static bool
SameArgs(const DensityArgs *a, const DensityArgs *b)
{
	return a->extent_has_srid == b->extent_has_srid && a->extent_srid == b->extent_srid &&
		a->grid.xmin == b->grid.xmin && a->grid.ymin == b->grid.ymin &&
		a->grid.xmax == b->grid.xmax && a->grid.ymax == b->grid.ymax &&
		a->grid.width == b->grid.width && a->grid.height == b->grid.height &&
		a->kernel == b->kernel && a->kernel_size == b->kernel_size && a->interpolate == b->interpolate &&
		a->mode == b->mode && a->weighted == b->weighted;
}

/* ---------------------------------------------------------------- the state */

/* Fixed-point sums (weights or the time mode) rather than counts. */
static bool
StateHasSums(const DensityArgs *args)
{
	return args->weighted || args->mode == GEOACC_DENSITY_TIME;
}

/* Columns and rows of the grid's cells: the raster and its margin. */
static uint32
GridColumns(const DensityArgs *args)
{
	return args->grid.width + 2 * args->grid.margin;
}

static uint32
GridRows(const DensityArgs *args)
{
	return args->grid.height + 2 * args->grid.margin;
}

static size_t
GridCells(const DensityArgs *args)
{
	return (size_t) GridColumns(args) * GridRows(args);
}

static size_t
CellSize(const DensityArgs *args)
{
	return StateHasSums(args) ? sizeof(int64) : sizeof(uint32);
}

#define TILE GEOACC_DENSITY_TILE
#define TILE_CELLS (TILE * TILE)

/* The largest value a cell may reach. */
static uint64
CellLimit(const DensityArgs *args)
{
	return StateHasSums(args) ? (uint64) PG_INT64_MAX : (uint64) PG_UINT32_MAX;
}

static size_t
TileCount(const DensityState *state)
{
	return (size_t) state->cells.tile_rows * state->cells.tile_columns;
}

/* Cell j of a tile. */
static uint64
TileValue(const DensityState *state, const void *tile, size_t j)
{
	return StateHasSums(&state->h.args) ? (uint64) ((const int64 *) tile)[j] : ((const uint32 *) tile)[j];
}

/* Where grid cell i (row-major) lives: its tile's index, and its place in the tile. */
static size_t
CellTile(const DensityState *state, size_t i, size_t *place)
{
	uint32		columns = GridColumns(&state->h.args);
	size_t		row = i / columns;
	uint32		column = i % columns;

	*place = (row % TILE) * TILE + column % TILE;
	return (row / TILE) * state->cells.tile_columns + column / TILE;
}

static uint64
CellValue(const DensityState *state, size_t i)
{
	size_t		place;
	const void *tile = state->cells.tiles[CellTile(state, i, &place)];

	return tile == NULL ? 0 : TileValue(state, tile, place);
}

/*
 * The first cell from i on (before n, else n) that is nonzero, or with
 * `nonzero` the first that is zero: a missing tile's cells of a row are
 * passed over at once.
 */
static size_t
SkipCells(const DensityState *state, size_t i, size_t n, bool nonzero)
{
	uint32		columns = GridColumns(&state->h.args);

	while (i < n)
	{
		size_t		place;
		const void *tile = state->cells.tiles[CellTile(state, i, &place)];
		uint32		column = i % columns;
		uint32		run = Min(columns, (column / TILE + 1) * TILE) - column;	/* to the tile's east edge */

		if (tile == NULL)
		{
			if (nonzero)
				return i;
			i += run;
			continue;
		}
		for (uint32 j = 0; j < run; j++, i++)
			if ((TileValue(state, tile, place + j) != 0) != nonzero)
				return i;
	}
	return n;
}

/* A zeroed tile in the state's context (the core's allocator: NULL when memory ran out). */
static void *
TileAllocate(void *context, size_t bytes)
{
	return MemoryContextAllocExtended((MemoryContext) context, bytes, MCXT_ALLOC_ZERO | MCXT_ALLOC_NO_OOM);
}

/* Tile k of the state, made when missing. */
static void *
StateTile(DensityState *state, size_t k)
{
	if (state->cells.tiles[k] == NULL)
		state->cells.tiles[k] = MemoryContextAllocZero(state->eoh.eoh_context, TILE_CELLS * CellSize(&state->h.args));
	return state->cells.tiles[k];
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

static const ExpandedObjectMethods density_state_methods;

/*
 * A state with zero cells and no points: an expanded object in a memory
 * context of its own under `parent` (the aggregate's context, where
 * PostgreSQL and Citus keep a transition value without copying it).
 */
static DensityState *
StateCreate(MemoryContext parent, const DensityHeader *h)
{
	MemoryContext context = AllocSetContextCreate(parent, "gpu_density_raster state", ALLOCSET_DEFAULT_SIZES);
	DensityState *state = MemoryContextAllocZero(context, sizeof(DensityState));

	EOH_init_header(&state->eoh, &density_state_methods, context);
	state->h = *h;
	state->chunk_max = ChunkMaxPoints();
	state->cells.tile_columns = (GridColumns(&h->args) + TILE - 1) / TILE;
	state->cells.tile_rows = (GridRows(&h->args) + TILE - 1) / TILE;
	state->cells.tiles = MemoryContextAllocZero(context, sizeof(void *) * TileCount(state));
	state->cells.allocate = TileAllocate;
	state->cells.context = context;
	return state;
}

static uint64
MaxCell(const DensityState *state)
{
	uint64		max = 0;

	for (size_t k = 0; k < TileCount(state); k++)
		for (size_t j = 0; state->cells.tiles[k] != NULL && j < TILE_CELLS; j++)
			max = Max(max, TileValue(state, state->cells.tiles[k], j));
	return max;
}

static void
CellOverflow(const DensityState *state)
{
	if (StateHasSums(&state->h.args))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a density raster cell would exceed %.0f", (double) PG_INT64_MAX / 4294967296.0),
				 errhint("Divide the weights by a constant, or use smaller cells.")));
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("a density raster cell would hold more than %u samples", PG_UINT32_MAX),
			 errhint("Aggregate fewer rows into one raster, or use smaller cells.")));
}

/* The projection of the buffered points into the cells, as a step of a call. */
typedef struct ProjectRun
{
	DensityState *state;
	GeoaccDensityPoints points;
} ProjectRun;

static GeoaccStatus
ProjectOn(GeoaccDevice device, void *arg)
{
	ProjectRun *r = arg;
	DensityState *state = r->state;

	return StateHasSums(&state->h.args)
		? geoacc_density_project_values(device, &state->h.args.grid, &r->points, &state->cells)
		: geoacc_density_project(device, &state->h.args.grid, &r->points, &state->cells);
}

/* Project the buffered points into the cells on the chosen device. */
static void
StateFlush(DensityState *state)
{
	ProjectRun	run = {state, {state->xy, state->flags, state->values, state->npoints,
							   state->h.args.mode, state->h.args.interpolate}};
	GeoaccWork	work = {ProjectOn, &run,
						geoacc_density_project_need(&state->h.args.grid, state->npoints, StateHasSums(&state->h.args)),
						true};			/* the cells are added to */

	if (state->npoints == 0)
		return;
	GeoaccCallRun("gpu_density_raster (projection)", state->npoints, &work);
	state->h.cell_bound += state->chunk_bound;
	state->chunk_bound = 0;
	state->npoints = 0;
}

/* What one point can add to one cell, in the cells' units. */
static uint64
PointBound(const DensityState *state, double value)
{
	if (!StateHasSums(&state->h.args))
		return AMOUNTS_PER_POINT_PER_CELL;
	return AMOUNTS_PER_POINT_PER_CELL * ((uint64) (value * 4294967296.0) + 1);
}

/*
 * Buffer one point with its value.  When the chunk is full at its largest,
 * or when its points could push a cell past the cells' limit, project it
 * first (an ERROR when even one more point could, after the cells' true
 * maximum is taken); a point that joins the one before then starts the
 * next chunk after a copy of that one, which only anchors the segment and
 * adds nothing.
 */
static void
StateAppend(DensityState *state, double x, double y, uint8 flags, double value)
{
	MemoryContext context = state->eoh.eoh_context;
	uint64		bound = PointBound(state, value);
	uint64		limit = CellLimit(&state->h.args);
	bool		sums = StateHasSums(&state->h.args);

	if (state->npoints == state->capacity && state->capacity < state->chunk_max)
	{
		uint32		capacity = Min(state->chunk_max, Max(CHUNK_FIRST, state->capacity * 2));

		if (state->xy == NULL)
		{
			state->xy = MemoryContextAlloc(context, sizeof(double) * 2 * (size_t) capacity);
			state->flags = MemoryContextAlloc(context, capacity);
			if (sums)
				state->values = MemoryContextAlloc(context, sizeof(double) * (size_t) capacity);
		}
		else
		{
			state->xy = repalloc(state->xy, sizeof(double) * 2 * (size_t) capacity);
			state->flags = repalloc(state->flags, capacity);
			if (sums)
				state->values = repalloc(state->values, sizeof(double) * (size_t) capacity);
		}
		state->capacity = capacity;
	}
	else if (state->npoints == state->capacity || state->h.cell_bound + state->chunk_bound + bound > limit)
	{
		double		last_x = state->npoints > 0 ? state->xy[2 * state->npoints - 2] : 0;
		double		last_y = state->npoints > 0 ? state->xy[2 * state->npoints - 1] : 0;
		bool		anchor = (flags & GEOACC_DENSITY_JOIN) && state->npoints > 0;

		StateFlush(state);
		if (state->h.cell_bound + bound > limit)
		{
			state->h.cell_bound = MaxCell(state);
			if (state->h.cell_bound + bound > limit)
				CellOverflow(state);
		}
		if (anchor)
			StateAppend(state, last_x, last_y, 0, 0.0);
	}
	state->xy[2 * state->npoints] = x;
	state->xy[2 * state->npoints + 1] = y;
	state->flags[state->npoints] = flags;
	if (sums)
		state->values[state->npoints] = value;
	state->npoints++;
	state->chunk_bound += bound;
}

/* Add the cells of b to a's (both flushed, made with the same arguments): b's tiles that a lacks are copied. */
static void
StateAddCells(DensityState *a, const DensityState *b)
{
	for (size_t k = 0; k < TileCount(a); k++)
	{
		const void *from = b->cells.tiles[k];

		if (from == NULL)
			continue;
		if (a->cells.tiles[k] == NULL)
		{
			memcpy(StateTile(a, k), from, TILE_CELLS * CellSize(&a->h.args));
			continue;
		}
		if (StateHasSums(&a->h.args))
		{
			int64	   *x = a->cells.tiles[k];
			const int64 *y = from;

			for (size_t j = 0; j < TILE_CELLS; j++)
			{
				if (y[j] > PG_INT64_MAX - x[j])
					CellOverflow(a);
				x[j] += y[j];
			}
		}
		else
		{
			uint32	   *x = a->cells.tiles[k];
			const uint32 *y = from;

			for (size_t j = 0; j < TILE_CELLS; j++)
			{
				if ((uint64) x[j] + y[j] > PG_UINT32_MAX)
					CellOverflow(a);
				x[j] += y[j];
			}
		}
	}
	a->h.cell_bound = Min(a->h.cell_bound + b->h.cell_bound, CellLimit(&a->h.args));
	a->h.rows += b->h.rows;
}

/* ------------------------------------------------------- the flat form */

/*
 * The flat form of a state (a geoacc_density_state datum): after the
 * varlena header, in host byte order,
 *   uint32 magic; float8 xmin, ymin, xmax, ymax; uint32 width, height;
 *   int32 kernel, kernel_size; uint8 interpolate, mode, weighted,
 *   extent_has_srid; int32 extent_srid, srid; int64 rows; uint64 cell_bound;
 * then the cells, north row first, as runs: a varint count of zero cells,
 * a varint count of non-zero cells, and those cells' values as varints
 * (LEB128), until every cell of the grid and its margin is covered.
 * Buffered points are projected before a state is flattened.  Counts are
 * mostly small and most cells of a traffic raster are empty, so a state is
 * far smaller than its cells.
 */
#define DENSITY_STATE_MAGIC 0x31534447	/* "GDS1" in little-endian order */

/* Where a flat form is written (p NULL: only measured). */
typedef struct FlatWriter
{
	uint8	   *p;
	Size		size;
} FlatWriter;

/* Where a flat form is read, and the errcode that bad input raises. */
typedef struct FlatReader
{
	const uint8 *p;
	const uint8 *end;
	int			errcode;
} FlatReader;

static void
FlatPut(FlatWriter *w, const void *value, Size size)
{
	if (w->p != NULL)
		memcpy(w->p + w->size, value, size);
	w->size += size;
}

static void
FlatPutVarint(FlatWriter *w, uint64 value)
{
	uint8		bytes[10];
	int			n = 0;

	do
	{
		bytes[n] = value & 0x7F;
		value >>= 7;
		bytes[n++] |= value ? 0x80 : 0;
	} while (value);
	FlatPut(w, bytes, n);
}

static void
FlatCorrupt(const FlatReader *r, const char *detail)
{
	ereport(ERROR,
			(errcode(r->errcode),
			 errmsg("invalid geoacc_density_state"),
			 errdetail("%s", detail)));
}

static void
FlatGet(FlatReader *r, void *value, Size size)
{
	if ((Size) (r->end - r->p) < size)
		FlatCorrupt(r, "The state ends inside its header.");
	memcpy(value, r->p, size);
	r->p += size;
}

static uint64
FlatGetVarint(FlatReader *r)
{
	uint64		value = 0;

	for (int shift = 0; shift < 64; shift += 7)
	{
		uint8		byte;

		if (r->p == r->end)
			FlatCorrupt(r, "The state ends inside its cells.");
		byte = *r->p++;
		if (shift == 63 && byte > 1)
			break;
		value |= (uint64) (byte & 0x7F) << shift;
		if (!(byte & 0x80))
			return value;
	}
	FlatCorrupt(r, "The state has a number of more than 64 bits.");
	return 0;
}

static void
FlatPutHeader(FlatWriter *w, const DensityHeader *h)
{
	const DensityArgs *a = &h->args;
	uint32		magic = DENSITY_STATE_MAGIC;
	int32		kernel = (int32) a->kernel;
	uint8		flags[4] = {a->interpolate, (uint8) a->mode, a->weighted, a->extent_has_srid};

	FlatPut(w, &magic, sizeof(magic));
	FlatPut(w, &a->grid.xmin, sizeof(double));
	FlatPut(w, &a->grid.ymin, sizeof(double));
	FlatPut(w, &a->grid.xmax, sizeof(double));
	FlatPut(w, &a->grid.ymax, sizeof(double));
	FlatPut(w, &a->grid.width, sizeof(uint32));
	FlatPut(w, &a->grid.height, sizeof(uint32));
	FlatPut(w, &kernel, sizeof(int32));
	FlatPut(w, &a->kernel_size, sizeof(int32));
	FlatPut(w, flags, sizeof(flags));
	FlatPut(w, &a->extent_srid, sizeof(int32));
	FlatPut(w, &h->srid, sizeof(int32));
	FlatPut(w, &h->rows, sizeof(int64));
	FlatPut(w, &h->cell_bound, sizeof(uint64));
}

/* Read and check a header: every argument as the transition function would accept it. */
static void
FlatGetHeader(FlatReader *r, DensityHeader *h)
{
	DensityArgs *a = &h->args;
	uint32		magic;
	int32		kernel;
	uint8		flags[4];

	memset(h, 0, sizeof(*h));
	FlatGet(r, &magic, sizeof(magic));
	if (magic != DENSITY_STATE_MAGIC)
		FlatCorrupt(r, "The state does not start with the geoacc_density_state signature.");
	FlatGet(r, &a->grid.xmin, sizeof(double));
	FlatGet(r, &a->grid.ymin, sizeof(double));
	FlatGet(r, &a->grid.xmax, sizeof(double));
	FlatGet(r, &a->grid.ymax, sizeof(double));
	FlatGet(r, &a->grid.width, sizeof(uint32));
	FlatGet(r, &a->grid.height, sizeof(uint32));
	FlatGet(r, &kernel, sizeof(int32));
	FlatGet(r, &a->kernel_size, sizeof(int32));
	FlatGet(r, flags, sizeof(flags));
	FlatGet(r, &a->extent_srid, sizeof(int32));
	FlatGet(r, &h->srid, sizeof(int32));
	FlatGet(r, &h->rows, sizeof(int64));
	FlatGet(r, &h->cell_bound, sizeof(uint64));

	if (!(isfinite(a->grid.xmin) && isfinite(a->grid.xmax) && isfinite(a->grid.ymin) && isfinite(a->grid.ymax) &&
		  a->grid.xmin < a->grid.xmax && a->grid.ymin < a->grid.ymax &&
		  isfinite(a->grid.xmax - a->grid.xmin) && isfinite(a->grid.ymax - a->grid.ymin)))
		FlatCorrupt(r, "The state's extent is not finite or has no width or height.");
	if (a->grid.width < 1 || a->grid.width > RASTER_MAX_SIDE || a->grid.height < 1 ||
		a->grid.height > RASTER_MAX_SIDE || (uint64) a->grid.width * a->grid.height > RASTER_MAX_CELLS ||
		!((a->grid.xmax - a->grid.xmin) / a->grid.width > 0 && (a->grid.ymax - a->grid.ymin) / a->grid.height > 0))
		FlatCorrupt(r, "The state's width or height is out of range.");
	if (kernel < 0 || kernel >= GEOACC_DENSITY_KERNEL_COUNT || a->kernel_size < 1 ||
		a->kernel_size > GEOACC_DENSITY_MAX_KERNEL_SIZE || a->kernel_size % 2 == 0)
		FlatCorrupt(r, "The state's kernel is out of range.");
	if (flags[0] > 1 || (flags[1] != GEOACC_DENSITY_SAMPLES && flags[1] != GEOACC_DENSITY_TIME) ||
		flags[2] > 1 || flags[3] > 1)
		FlatCorrupt(r, "The state's flags are out of range.");
	a->kernel = (GeoaccDensityKernel) kernel;
	a->interpolate = flags[0];
	a->mode = (GeoaccDensityMode) flags[1];
	a->weighted = flags[2];
	a->extent_has_srid = flags[3];
	a->grid.margin = a->kernel_size / 2;
	if (h->rows < 0 || h->cell_bound > CellLimit(a))
		FlatCorrupt(r, "The state's row count or cell bound is out of range.");
}

/* Write a flushed state's flat form (w->p NULL: only its size). */
static void
StateEncode(const DensityState *state, FlatWriter *w)
{
	size_t		n = GridCells(&state->h.args);

	FlatPutHeader(w, &state->h);
	for (size_t i = 0; i < n;)
	{
		size_t		nonzero = SkipCells(state, i, n, false);
		size_t		end = SkipCells(state, nonzero, n, true);

		FlatPutVarint(w, nonzero - i);
		FlatPutVarint(w, end - nonzero);
		for (size_t j = nonzero; j < end; j++)
			FlatPutVarint(w, CellValue(state, j));
		i = end;
	}
}

/*
 * Read the cells that follow a header h, checking that the runs cover the
 * grid exactly and that no value exceeds the header's cell bound; add them
 * to into's cells (into NULL: only check).
 */
static void
FlatAddCells(FlatReader *r, const DensityHeader *h, DensityState *into)
{
	size_t		n = GridCells(&h->args);
	bool		sums = StateHasSums(&h->args);

	for (size_t i = 0; i < n;)
	{
		uint64		zeros = FlatGetVarint(r);
		uint64		nonzero = FlatGetVarint(r);

		if (zeros > n - i || nonzero > n - i - zeros || zeros + nonzero == 0)
			FlatCorrupt(r, "The state's runs do not cover its cells.");
		i += zeros;
		for (uint64 j = 0; j < nonzero; j++, i++)
		{
			uint64		value = FlatGetVarint(r);
			size_t		place;
			void	   *tile;

			if (value == 0 || value > h->cell_bound)
				FlatCorrupt(r, "The state has a cell beyond its bound.");
			if (into == NULL)
				continue;
			tile = StateTile(into, CellTile(into, i, &place));

			if (sums)
			{
				int64	   *cell = (int64 *) tile + place;

				if ((int64) value > PG_INT64_MAX - *cell)
					CellOverflow(into);
				*cell += (int64) value;
			}
			else
			{
				uint32	   *cell = (uint32 *) tile + place;

				if (value + *cell > PG_UINT32_MAX)
					CellOverflow(into);
				*cell += (uint32) value;
			}
		}
	}
	if (r->p != r->end)
		FlatCorrupt(r, "The state has bytes after its cells.");
}

/* Check a flat form given without its varlena header; its header into *h. */
static void
FlatCheck(const uint8 *data, Size size, int errcode, DensityHeader *h)
{
	FlatReader	r = {data, data + size, errcode};

	FlatGetHeader(&r, h);
	FlatAddCells(&r, h, NULL);
}

/* Expanded-object methods: the flat form's size (the buffered points projected first), and the form itself. */
static Size
DensityStateFlatSize(ExpandedObjectHeader *eoh)
{
	DensityState *state = (DensityState *) eoh;
	FlatWriter	w = {NULL, 0};

	StateFlush(state);
	StateEncode(state, &w);
	return VARHDRSZ + w.size;
}

static void
DensityStateFlattenInto(ExpandedObjectHeader *eoh, void *result, Size allocated_size)
{
	DensityState *state = (DensityState *) eoh;
	FlatWriter	w = {(uint8 *) VARDATA(result), 0};

	StateFlush(state);
	StateEncode(state, &w);
	Assert(VARHDRSZ + w.size == allocated_size);
	SET_VARSIZE(result, VARHDRSZ + w.size);
}

static const ExpandedObjectMethods density_state_methods = {
	DensityStateFlatSize,
	DensityStateFlattenInto
};

/* The expanded state a datum points to, NULL when the datum is flat. */
static DensityState *
ExpandedState(Datum datum)
{
	ExpandedObjectHeader *eoh;

	if (!VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(datum)))
		return NULL;
	eoh = DatumGetEOHP(datum);
	if (eoh->eoh_methods != &density_state_methods)
		elog(ERROR, "expanded object is not a geoacc_density_state");
	return (DensityState *) eoh;
}

/* A new expanded state under `parent` with the cells of the state a datum stands for. */
static DensityState *
StateCopy(Datum datum, MemoryContext parent)
{
	DensityState *state = ExpandedState(datum);
	DensityState *copy;
	struct varlena *flat;
	DensityHeader h;
	FlatReader	r;

	if (state != NULL)
	{
		StateFlush(state);
		copy = StateCreate(parent, &state->h);
		StateAddCells(copy, state);
		return copy;
	}
	flat = PG_DETOAST_DATUM(datum);
	r = (FlatReader) {(const uint8 *) VARDATA_ANY(flat), (const uint8 *) VARDATA_ANY(flat) + VARSIZE_ANY_EXHDR(flat),
		ERRCODE_DATA_CORRUPTED};
	FlatGetHeader(&r, &h);
	copy = StateCreate(parent, &h);
	FlatAddCells(&r, &h, copy);
	if ((Pointer) flat != DatumGetPointer(datum))
		pfree(flat);
	return copy;
}

/*
 * The state a datum stands for, to be changed in place: the datum's own
 * expanded object when it is a read-write one that lives under `parent`
 * (the transition value the aggregate keeps), else a copy under `parent`
 * (of a flat state, or of one that belongs to someone else).
 */
static DensityState *
StateForWriting(Datum datum, MemoryContext parent)
{
	DensityState *state = ExpandedState(datum);

	if (state != NULL && VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(datum)) &&
		MemoryContextGetParent(state->eoh.eoh_context) == parent)
		return state;
	return StateCopy(datum, parent);
}

/* The state a datum stands for, to be read (and flushed) only. */
static DensityState *
StateForReading(Datum datum)
{
	DensityState *state = ExpandedState(datum);

	return state != NULL ? state : StateCopy(datum, CurrentMemoryContext);
}

/*
 * Add a state given as a datum (flat, or another expanded state) to a's
 * cells, after checking that both were made with the same arguments.
 */
static void
StateAddDatum(DensityState *a, Datum datum)
{
	DensityState *b = ExpandedState(datum);
	struct varlena *flat = NULL;
	DensityHeader h;
	FlatReader	r = {0};

	if (b != NULL)
	{
		StateFlush(b);
		h = b->h;
	}
	else
	{
		flat = PG_DETOAST_DATUM(datum);
		r = (FlatReader) {(const uint8 *) VARDATA_ANY(flat), (const uint8 *) VARDATA_ANY(flat) + VARSIZE_ANY_EXHDR(flat),
			ERRCODE_DATA_CORRUPTED};
		FlatGetHeader(&r, &h);
	}
	if (!SameArgs(&a->h.args, &h.args))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_density_raster arguments must be the same on every row")));
	if (a->h.srid != h.srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_density_raster input has mixed SRIDs"),
				 errdetail("Some rows have SRID %d, others SRID %d.", a->h.srid, h.srid),
				 errhint("Use ST_Transform() to bring the trajectories to one SRID.")));
	StateFlush(a);
	if (b != NULL)
	{
		StateAddCells(a, b);
		return;
	}
	FlatAddCells(&r, &h, a);
	a->h.cell_bound = Min(a->h.cell_bound + h.cell_bound, CellLimit(&a->h.args));
	a->h.rows += h.rows;
	if ((Pointer) flat != DatumGetPointer(datum))
		pfree(flat);
}

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
	if (SkipCells(state, 0, GridCells(&state->h.args), false) < GridCells(&state->h.args))
		return;
	ereport(WARNING,
			(errmsg("the raster is all zero: none of the %lld rows put weight inside the extent",
					(long long) state->h.rows),
			 errdetail("The extent is BOX(%.17g %.17g,%.17g %.17g); the rows have SRID %d.",
					   state->h.args.grid.xmin, state->h.args.grid.ymin, state->h.args.grid.xmax,
					   state->h.args.grid.ymax, state->h.srid),
			 errhint("Check that the extent is in the rows' coordinates, and the weights.")));
}

/* The grid's cells in one row-major array (palloc'd), for the convolution. */
static void *
DenseCells(const DensityState *state)
{
	const DensityArgs *args = &state->h.args;
	size_t		size = CellSize(args);
	uint32		columns = GridColumns(args);
	uint32		rows = GridRows(args);
	char	   *cells = palloc_extended(GridCells(args) * size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);

	for (uint32 tr = 0; tr < state->cells.tile_rows; tr++)
		for (uint32 tc = 0; tc < state->cells.tile_columns; tc++)
		{
			const char *tile = state->cells.tiles[(size_t) tr * state->cells.tile_columns + tc];
			uint32		width = Min(TILE, columns - tc * TILE);

			for (uint32 r = 0; tile != NULL && r < TILE && tr * TILE + r < rows; r++)
				memcpy(cells + ((size_t) (tr * TILE + r) * columns + tc * TILE) * size,
					   tile + (size_t) r * TILE * size, width * size);
		}
	return cells;
}

/* The convolution of the cells into the pixels, as a step of a call. */
typedef struct ConvolveRun
{
	const DensityArgs *args;
	void	   *cells;
	double	   *pixels;
} ConvolveRun;

static GeoaccStatus
ConvolveOn(GeoaccDevice device, void *arg)
{
	ConvolveRun *r = arg;
	const DensityArgs *args = r->args;

	return StateHasSums(args)
		? geoacc_density_convolve_sums(device, args->grid.width, args->grid.height, r->cells, args->kernel,
									   args->kernel_size, r->pixels)
		: geoacc_density_convolve(device, args->grid.width, args->grid.height, r->cells, args->kernel,
								  args->kernel_size, r->pixels);
}

/* The raster's pixels: the buffered points projected, the cells convolved (palloc'd, height * width). */
static double *
StatePixels(DensityState *state)
{
	const DensityArgs *args = &state->h.args;
	double	   *pixels = palloc(sizeof(double) * args->grid.width * args->grid.height);
	ConvolveRun run = {args, NULL, pixels};
	GeoaccWork	work = {ConvolveOn, &run,
						geoacc_density_convolve_need(args->grid.width, args->grid.height, args->kernel_size,
													 StateHasSums(args)),
						false};

	/* projecting the buffered points leaves what the state stands for unchanged */
	StateFlush(state);
	WarnIfEmpty(state);
	run.cells = DenseCells(state);
	GeoaccCallRun("gpu_density_raster (convolution)", (int64) args->grid.width * args->grid.height, &work);
	pfree(run.cells);
	return pixels;
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

/* ERROR unless a part's X and Y are finite (M lines: the whole trajectory rule). */
static void
CheckPart(const GeoaccLine *line, const RowName *name)
{
	if (line->has_m && line->npoints > 1)
	{
		if (!GeoaccCheckTrajectory(line, NULL))
			GeoaccCheckTrajectory(line, NameOf(name));
		return;
	}
	for (uint32 i = 0; i < line->npoints; i++)
	{
		const double *p = line->coords + (size_t) i * line->ndims;

		for (int d = 0; d < 2; d++)
			if (!isfinite(p[d]))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s has a non-finite coordinate", NameOf(name)),
						 errdetail("Vertex %u has %c = %g.", i + 1, "XY"[d], p[d])));
	}
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
	CheckPart(line, name);
	for (uint32 i = 0; i < line->npoints; i++)
	{
		const double *p = line->coords + (size_t) i * nd;
		uint8		flags = time_mode ? 0 : GEOACC_DENSITY_COUNT;
		double		value = weight;

		if (i > 0 && is_line && (time_mode || state->h.args.interpolate))
			flags |= GEOACC_DENSITY_JOIN;
		if (time_mode)
			value = i > 0 ? weight * ((p[nd - 1] - p[-1]) / 3600.0) : 0.0;
		if (!(value < DENSITY_MAX_VALUE))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("%s adds %g at vertex %u, more than a sample can hold", NameOf(name), value, i + 1),
					 errdetail("A sample's weight, or the weight times the hours of a segment, must be below %.0f.",
							   DENSITY_MAX_VALUE),
					 errhint("Divide the weights by a constant.")));
		StateAppend(state, p[0], p[1], flags, value);
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
	DensityState *state = PG_ARGISNULL(0) ? NULL : StateForWriting(PG_GETARG_DATUM(0), aggcontext);
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
		PG_RETURN_DATUM(EOHPGetRWDatum(&state->eoh));
	}
	ArgsFromCall(fcinfo, extent_is_geometry, &args);
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
		state = StateCreate(aggcontext, &h);
	}
	else if (!SameArgs(&args, &state->h.args))
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
	PG_RETURN_DATUM(EOHPGetRWDatum(&state->eoh));
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
		PG_RETURN_DATUM(EOHPGetRWDatum(&StateForWriting(PG_GETARG_DATUM(0), aggcontext)->eoh));
	}
	if (PG_ARGISNULL(0))
		a = StateCopy(PG_GETARG_DATUM(1), aggcontext);
	else
	{
		a = StateForWriting(PG_GETARG_DATUM(0), aggcontext);
		StateAddDatum(a, PG_GETARG_DATUM(1));
	}
	PG_RETURN_DATUM(EOHPGetRWDatum(&a->eoh));
}

/* ------------------------------------------------------- the state type */

/*
 * geoacc_density_state's text form: the flat form in base64 (a third
 * larger, not twice as hex); read with or without the line breaks that
 * encode(..., 'base64') puts in.
 */
PG_FUNCTION_INFO_V1(geoacc_density_state_in);
Datum
geoacc_density_state_in(PG_FUNCTION_ARGS)
{
	const char *input = PG_GETARG_CSTRING(0);
	char	   *text = palloc(strlen(input) + 1);
	int			length = 0;
	bytea	   *flat;
	int			size;
	DensityHeader h;

	for (const char *p = input; *p != '\0'; p++)
		if (!(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			text[length++] = *p;
	text[length] = '\0';
	flat = palloc(VARHDRSZ + pg_b64_dec_len(length));
	size = pg_b64_decode(text, length, VARDATA(flat), pg_b64_dec_len(length));

	if (size < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type geoacc_density_state"),
				 errdetail("The text is not base64.")));
	SET_VARSIZE(flat, VARHDRSZ + size);
	FlatCheck((const uint8 *) VARDATA(flat), size, ERRCODE_INVALID_TEXT_REPRESENTATION, &h);
	PG_RETURN_BYTEA_P(flat);
}

PG_FUNCTION_INFO_V1(geoacc_density_state_out);
Datum
geoacc_density_state_out(PG_FUNCTION_ARGS)
{
	bytea	   *flat = PG_GETARG_BYTEA_PP(0);
	int			size = VARSIZE_ANY_EXHDR(flat);
	char	   *text = palloc(pg_b64_enc_len(size) + 1);
	int			length = pg_b64_encode(VARDATA_ANY(flat), size, text, pg_b64_enc_len(size));

	if (length < 0)
		elog(ERROR, "base64 encoding of a geoacc_density_state failed");
	text[length] = '\0';
	PG_RETURN_CSTRING(text);
}

/* Binary form: the flat form's bytes. */
PG_FUNCTION_INFO_V1(geoacc_density_state_recv);
Datum
geoacc_density_state_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			size = buf->len - buf->cursor;
	bytea	   *flat = palloc(VARHDRSZ + size);
	DensityHeader h;

	SET_VARSIZE(flat, VARHDRSZ + size);
	pq_copymsgbytes(buf, VARDATA(flat), size);
	FlatCheck((const uint8 *) VARDATA(flat), size, ERRCODE_INVALID_BINARY_REPRESENTATION, &h);
	PG_RETURN_BYTEA_P(flat);
}

PG_FUNCTION_INFO_V1(geoacc_density_state_send);
Datum
geoacc_density_state_send(PG_FUNCTION_ARGS)
{
	bytea	   *flat = PG_GETARG_BYTEA_PP(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA_ANY(flat), VARSIZE_ANY_EXHDR(flat));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* ------------------------------------------------------------ the results */

static uint8 *
PutBytes(uint8 *p, const void *value, size_t size)
{
	memcpy(p, value, size);
	return p + size;
}

/*
 * The georeference of a result: scale x and y (negative: north-up), upper
 * left x and y, skew x and y, as PostGIS orders them.
 */
static void
Georeference(const GeoaccDensityGrid *g, double geo[6])
{
	geo[0] = (g->xmax - g->xmin) / g->width;
	geo[1] = -((g->ymax - g->ymin) / g->height);
	geo[2] = g->xmin;
	geo[3] = g->ymax;
	geo[4] = 0.0;
	geo[5] = 0.0;
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
	size_t		pixel_bytes = sizeof(double) * g->width * g->height;
	size_t		size = VARHDRSZ + RASTER_WKB_HEADER + 1 + sizeof(double) + pixel_bytes;
	bytea	   *wkb = palloc(size);
	uint8	   *p = (uint8 *) VARDATA(wkb);
	uint16		version = 0,
				nbands = 1,
				width = (uint16) g->width,
				height = (uint16) g->height;
	double		geo[6];
	int32		srid = state->h.srid;
	uint8		band = RASTER_PIXTYPE_64BF;
	double		nodata = 0.0;

	Georeference(g, geo);
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
 * The raster as a PostGIS raster value, serialized as rt_raster_serialize
 * writes it: the 64-byte header (varlena size, version 0, one band, the
 * georeference, SRID, width, height), then the band: its type byte, 7 bytes
 * of padding to the 8-byte pixel alignment, the nodata value (unused: no
 * nodata flag), the pixels; the whole a multiple of 8 bytes.
 */
static struct varlena *
RasterSerialized(const DensityState *state, const double *pixels)
{
	const GeoaccDensityGrid *g = &state->h.args.grid;
	size_t		pixel_bytes = sizeof(double) * g->width * g->height;
	size_t		size = RASTER_SERIALIZED_HEADER + 8 + sizeof(double) + pixel_bytes;
	struct varlena *raster = palloc0(size);
	uint8	   *p = (uint8 *) raster + 4;
	uint16		version = 0,
				nbands = 1,
				width = (uint16) g->width,
				height = (uint16) g->height;
	double		geo[6];
	int32		srid = state->h.srid;

	Georeference(g, geo);
	SET_VARSIZE(raster, size);
	p = PutBytes(p, &version, 2);
	p = PutBytes(p, &nbands, 2);
	p = PutBytes(p, geo, sizeof(geo));
	p = PutBytes(p, &srid, 4);
	p = PutBytes(p, &width, 2);
	p = PutBytes(p, &height, 2);
	*p = RASTER_PIXTYPE_64BF;
	p += 8 + sizeof(double);	/* type, padding, nodata 0 */
	memcpy(p, pixels, pixel_bytes);
	return raster;
}

/*
 * Final: convolve the cells and return the raster WKB (NULL without rows)
 */
PG_FUNCTION_INFO_V1(gpu_density_raster_finalfn);
Datum
gpu_density_raster_finalfn(PG_FUNCTION_ARGS)
{
	DensityState *state;
	double	   *pixels;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = StateForReading(PG_GETARG_DATUM(0));
	pixels = StatePixels(state);
	PG_RETURN_BYTEA_P(RasterWkb(state, pixels));
}

/*
 * Final of gpu_density_rast (geoacc_raster): the same raster as a PostGIS raster
 */
PG_FUNCTION_INFO_V1(gpu_density_rast_finalfn);
Datum
gpu_density_rast_finalfn(PG_FUNCTION_ARGS)
{
	DensityState *state;
	double	   *pixels;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = StateForReading(PG_GETARG_DATUM(0));
	pixels = StatePixels(state);
	PG_RETURN_POINTER(RasterSerialized(state, pixels));
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
