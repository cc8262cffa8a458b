/*
 * density_state.c
 *
 * The state of the aggregate gpu_density_raster (density_raster.c): the
 * cells of the raster and of a margin around it as wide as the kernel's
 * reach (integer counts, or fixed-point sums for weights and the time
 * mode), in tiles made when a sample first falls in them, and a chunk of
 * points not yet projected; a full chunk is projected on the chosen
 * device, so memory stays bounded by the raster plus one chunk whatever
 * the number of rows, and a partial state (a parallel worker's, a Citus
 * shard's) by the tiles it touched.
 *
 * The state's type is geoacc_density_state, not internal, so that Citus
 * splits the aggregate into partials on its workers and a combine on the
 * coordinator.  In memory the state is an expanded object
 * (utils/expandeddatum.h, as PostgreSQL's expanded arrays): rows are added
 * to it in place.  Its flat form, which parallel workers hand to the leader
 * and (as base64 text) Citus workers to the coordinator, is a header and
 * the cells with runs of zeros skipped and values as varints (StateEncode);
 * a combine adds a flat state's cells straight into its own.  The type's
 * input and output functions (text and binary) are here too.  Every use of
 * the state goes through the DensityState* functions (density_raster.h).
 */
#include "geoacc.h"

#include <math.h>

#include "access/parallel.h"
#include "common/base64.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "utils/expandeddatum.h"
#include "utils/memutils.h"

#include "density_raster.h"

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

#define TILE GEOACC_DENSITY_TILE
#define TILE_CELLS (TILE * TILE)

bool
DensityArgsEqual(const DensityArgs *a, const DensityArgs *b)
{
	return a->extent_has_srid == b->extent_has_srid && a->extent_srid == b->extent_srid &&
		a->grid.xmin == b->grid.xmin && a->grid.ymin == b->grid.ymin &&
		a->grid.xmax == b->grid.xmax && a->grid.ymax == b->grid.ymax &&
		a->grid.width == b->grid.width && a->grid.height == b->grid.height &&
		a->kernel == b->kernel && a->kernel_size == b->kernel_size && a->interpolate == b->interpolate &&
		a->mode == b->mode && a->weighted == b->weighted;
}

/* Fixed-point sums (weights or the time mode) rather than counts. */
bool
DensityHasSums(const DensityArgs *args)
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
	return DensityHasSums(args) ? sizeof(int64) : sizeof(uint32);
}

/* The largest value a cell may reach. */
static uint64
CellLimit(const DensityArgs *args)
{
	return DensityHasSums(args) ? (uint64) PG_INT64_MAX : (uint64) PG_UINT32_MAX;
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
	return DensityHasSums(&state->h.args) ? (uint64) ((const int64 *) tile)[j] : ((const uint32 *) tile)[j];
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

/*
 * With the GPU service, tiles are service memory, which the service makes
 * during a projection as well as this backend: freed with the state's
 * context.
 */
static void *
SharedTileAllocate(void *context, size_t bytes)
{
	return GeoaccSharedAllocZero(bytes);
}

static void
SharedTilesFree(void *arg)
{
	DensityState *state = arg;

	for (size_t k = 0; k < TileCount(state); k++)
		if (state->cells.tiles[k] != NULL)
			GeoaccSharedFree(state->cells.tiles[k]);
}

/* Tile k of the state, made when missing. */
static void *
StateTile(DensityState *state, size_t k)
{
	if (state->cells.tiles[k] == NULL)
	{
		state->cells.tiles[k] = state->cells.allocate(state->cells.context, TILE_CELLS * CellSize(&state->h.args));
		if (state->cells.tiles[k] == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("A density raster tile of %zu bytes could not be had.",
							   (size_t) TILE_CELLS * CellSize(&state->h.args))));
	}
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
DensityState *
DensityStateCreate(MemoryContext parent, const DensityHeader *h)
{
	MemoryContext context = AllocSetContextCreate(parent, "gpu_density_raster state", ALLOCSET_DEFAULT_SIZES);
	DensityState *state = MemoryContextAllocZero(context, sizeof(DensityState));

	EOH_init_header(&state->eoh, &density_state_methods, context);
	state->h = *h;
	state->chunk_max = ChunkMaxPoints();
	state->cells.tile_columns = (GridColumns(&h->args) + TILE - 1) / TILE;
	state->cells.tile_rows = (GridRows(&h->args) + TILE - 1) / TILE;
	state->cells.context = context;
	/* the core writes the tile pointers and the tiles: work memory */
	{
		MemoryContext old = MemoryContextSwitchTo(context);

		state->cells.tiles = GeoaccWorkAllocZero(sizeof(void *) * TileCount(state));
		MemoryContextSwitchTo(old);
	}
	if (GeoaccServiceActive())
	{
		MemoryContextCallback *cb = MemoryContextAlloc(context, sizeof(MemoryContextCallback));

		state->cells.allocate = SharedTileAllocate;
		cb->func = SharedTilesFree;
		cb->arg = state;
		MemoryContextRegisterResetCallback(context, cb);
	}
	else
		state->cells.allocate = TileAllocate;
	return state;
}

Datum
DensityStateDatum(DensityState *state)
{
	return EOHPGetRWDatum(&state->eoh);
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
	if (DensityHasSums(&state->h.args))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a density raster cell would exceed %.0f", (double) PG_INT64_MAX / 4294967296.0),
				 errhint("Divide the weights by a constant, or use smaller cells.")));
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("a density raster cell would hold more than %u samples", PG_UINT32_MAX),
			 errhint("Aggregate fewer rows into one raster, or use smaller cells.")));
}

/*
 * The projection of the buffered points into the cells, as a step of a
 * call (a work the GPU service can run: the points, the tile pointers and
 * the tiles are work memory).
 */
typedef struct ProjectRun
{
	GeoaccDensityGrid grid;
	GeoaccDensityPoints points;
	GeoaccDensityTiles cells;
	bool		sums;
} ProjectRun;

static GeoaccStatus
ProjectOn(GeoaccDevice device, void *arg)
{
	ProjectRun *r = arg;

	return r->sums
		? geoacc_density_project_values(device, &r->grid, &r->points, &r->cells)
		: geoacc_density_project(device, &r->grid, &r->points, &r->cells);
}

/* Project the buffered points into the cells on the chosen device. */
void
DensityStateFlush(DensityState *state)
{
	ProjectRun	run = {state->h.args.grid, {state->xy, state->flags, state->values, state->npoints,
											state->h.args.mode, state->h.args.interpolate},
	state->cells, DensityHasSums(&state->h.args)};
	GeoaccWork	work = {ProjectOn, &run,
						geoacc_density_project_need(&state->h.args.grid, state->npoints, DensityHasSums(&state->h.args)),
						true,			/* the cells are added to */
						sizeof(run)};

	instr_time	start,
				end;

	if (state->npoints == 0)
		return;
	INSTR_TIME_SET_CURRENT(start);
	GeoaccCallRun("gpu_density_raster (projection)", state->npoints, &work);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	state->project_ms += INSTR_TIME_GET_MILLISEC(end);
	state->projected += state->npoints;
	state->project_calls++;
	state->h.cell_bound += state->chunk_bound;
	state->chunk_bound = 0;
	state->npoints = 0;
}

/* A projection of the points of an index (geoacc_density_project_indexed), as a step the GPU service can run. */
typedef struct IndexedRun
{
	GeoaccDensityGrid grid;
	GeoaccDensityPoints points;
	GeoaccPointGrid index;
	GeoaccDensityTiles cells;
	DensityResidence residence;
} IndexedRun;

static void
ReleaseResident(void *resident)
{
	geoacc_density_resident_free(resident);
}

/*
 * The copy of the points this device process keeps, made now where it may
 * keep one and the GPU has room for it beside the projection; NULL: none.
 * A copy that cannot be made (no room, values it refuses) leaves the
 * projection to the index in the service memory: the same cells.
 */
static GeoaccDensityResident *
KeptPoints(GeoaccDevice device, IndexedRun *r)
{
	const DensityResidence *res = &r->residence;
	GeoaccDensityResident *kept;

	if (res->serial == 0 || !GeoaccServiceMayKeep())
		return NULL;
	kept = GeoaccServiceKept(res->serial, 0);
	if (kept)
		return kept;
	if (device == GEOACC_DEVICE_GPU &&
		geoacc_density_resident_bytes(r->points.n, res->nvalues, &r->index) +
		geoacc_density_project_resident_need(&r->grid, &r->index, r->points.values != NULL).bytes >
		geoacc_gpu_memory_available())
		return NULL;
	if (geoacc_density_resident_create(device, r->points.xy, r->points.flags, r->points.n, res->values,
									   res->nvalues, &r->index, &kept) != GEOACC_OK)
		return NULL;
	GeoaccServiceKeep(res->serial, 0, kept, geoacc_density_resident_device_bytes(kept), ReleaseResident);
	return kept;
}

static GeoaccStatus
ProjectIndexedOn(GeoaccDevice device, void *arg)
{
	IndexedRun *r = arg;
	GeoaccDensityResident *kept = KeptPoints(device, r);

	if (kept)
		return geoacc_density_project_resident(&r->grid, kept, r->residence.slot, r->points.mode,
											   r->points.interpolate, &r->cells);
	return geoacc_density_project_indexed(device, &r->grid, &r->points, &r->index, &r->cells);
}

/*
 * The device memory of a projection of an index: with the points kept on
 * the GPU by every device process, the cells alone; else the copy of the
 * points, for the device process that makes it, or at least what the
 * projection from the service memory takes.
 */
static GeoaccDeviceNeed
IndexedNeed(const IndexedRun *r)
{
	bool		sums = r->points.values != NULL;
	GeoaccDeviceNeed need = geoacc_density_project_indexed_need(&r->grid, &r->index, sums);
	GeoaccDeviceNeed kept = geoacc_density_project_resident_need(&r->grid, &r->index, sums);

	if (r->residence.serial == 0)
		return need;
	if (GeoaccSnapshotKeptEverywhere(r->residence.serial, 0))
		return kept;
	need.bytes = Max(need.bytes, kept.bytes + geoacc_density_resident_bytes(r->points.n, r->residence.nvalues,
																			 &r->index));
	return need;
}

/*
 * Project what the points of an index (in work memory) add to the state's
 * cells, all that can reach its grid, when `bound`, what they can add to a
 * cell together, cannot take a cell past its limit; false, with nothing
 * projected, when it could (the caller appends them instead, in chunks).
 */
bool
DensityStateProjectIndexed(DensityState *state, const GeoaccDensityPoints *points, const GeoaccPointGrid *index,
						   uint64 bound, const DensityResidence *residence)
{
	IndexedRun	run = {state->h.args.grid, *points, *index, state->cells, {0, {NULL, NULL}, 0, -1}};
	uint64		candidates;
	GeoaccWork	work = {ProjectIndexedOn, &run, {0, 0},
						true,			/* the cells are added to */
						sizeof(run)};

	DensityStateFlush(state);
	if (bound > CellLimit(&state->h.args) - state->h.cell_bound)
		return false;
	candidates = points->n == 0 ? 0 : geoacc_density_indexed_candidates(&run.grid, index);
	if (candidates == 0)
		return true;			/* nothing near the grid (a map's empty tile): no call */
	if (residence)
		run.residence = *residence;
	work.need = IndexedNeed(&run);
	/* the device is chosen for the points looked at, not for all the index holds */
	GeoaccCallRun("gpu_density_raster (projection)", (int64) candidates, &work);
	state->h.cell_bound += bound;
	return true;
}

/* What one point can add to one cell, in the cells' units. */
static uint64
PointBound(const DensityState *state, double value)
{
	if (!DensityHasSums(&state->h.args))
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
void
DensityStateAppend(DensityState *state, double x, double y, uint8 flags, double value)
{
	MemoryContext context = state->eoh.eoh_context;
	uint64		bound = PointBound(state, value);
	uint64		limit = CellLimit(&state->h.args);
	bool		sums = DensityHasSums(&state->h.args);

	if (state->npoints == state->capacity && state->capacity < state->chunk_max)
	{
		uint32		capacity = Min(state->chunk_max, Max(CHUNK_FIRST, state->capacity * 2));

		MemoryContext old = MemoryContextSwitchTo(context);

		/* work memory: the core reads the points (in the GPU service, when there is one) */
		if (state->xy == NULL)
		{
			state->xy = GeoaccWorkAlloc(sizeof(double) * 2 * (size_t) capacity);
			state->flags = GeoaccWorkAlloc(capacity);
			if (sums)
				state->values = GeoaccWorkAlloc(sizeof(double) * (size_t) capacity);
		}
		else
		{
			state->xy = GeoaccWorkRealloc(state->xy, sizeof(double) * 2 * (size_t) capacity);
			state->flags = GeoaccWorkRealloc(state->flags, capacity);
			if (sums)
				state->values = GeoaccWorkRealloc(state->values, sizeof(double) * (size_t) capacity);
		}
		MemoryContextSwitchTo(old);
		state->capacity = capacity;
	}
	else if (state->npoints == state->capacity || state->h.cell_bound + state->chunk_bound + bound > limit)
	{
		double		last_x = state->npoints > 0 ? state->xy[2 * state->npoints - 2] : 0;
		double		last_y = state->npoints > 0 ? state->xy[2 * state->npoints - 1] : 0;
		bool		anchor = (flags & GEOACC_DENSITY_JOIN) && state->npoints > 0;

		DensityStateFlush(state);
		if (state->h.cell_bound + bound > limit)
		{
			state->h.cell_bound = MaxCell(state);
			if (state->h.cell_bound + bound > limit)
				CellOverflow(state);
		}
		if (anchor)
			DensityStateAppend(state, last_x, last_y, 0, 0.0);
	}
	state->xy[2 * state->npoints] = x;
	state->xy[2 * state->npoints + 1] = y;
	state->flags[state->npoints] = flags;
	if (sums)
		state->values[state->npoints] = value;
	state->npoints++;
	state->chunk_bound += bound;
}

/*
 * DensityStateAppend of n points with one value, coords[i * stride] the x of
 * point i: the first with first_flags, the others with rest_flags.  The
 * points that the chunk holds without growing and without nearing the
 * cells' limit are copied in one loop; the one that needs more goes through
 * DensityStateAppend, so the chunks break where they would point by point.
 */
void
DensityStateAppendRun(DensityState *state, const double *coords, int stride, uint32 n, uint8 first_flags,
					  uint8 rest_flags, double value)
{
	const uint64 bound = PointBound(state, value);
	const uint64 limit = CellLimit(&state->h.args);
	const bool	sums = DensityHasSums(&state->h.args);
	uint32		i = 0;

	while (i < n)
	{
		uint64		used = state->h.cell_bound + state->chunk_bound;
		uint64		k = Min((uint64) (state->capacity - state->npoints), (uint64) (n - i));

		/* point j of the run (from 0) is appended as is while used + (j + 1) * bound <= limit */
		k = used >= limit ? 0 : Min(k, (limit - used) / bound);
		if (k == 0)
		{
			const double *p = coords + (size_t) i * stride;

			DensityStateAppend(state, p[0], p[1], i == 0 ? first_flags : rest_flags, value);
			i++;
			continue;
		}
		for (uint64 j = 0; j < k; j++, i++)
		{
			const double *p = coords + (size_t) i * stride;
			uint32		at = state->npoints + (uint32) j;

			state->xy[2 * (size_t) at] = p[0];
			state->xy[2 * (size_t) at + 1] = p[1];
			state->flags[at] = i == 0 ? first_flags : rest_flags;
			if (sums)
				state->values[at] = value;
		}
		state->npoints += (uint32) k;
		state->chunk_bound += k * bound;
	}
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
		if (DensityHasSums(&a->h.args))
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
	if (a->grid.width < 1 || a->grid.width > GEOACC_RASTER_MAX_SIDE || a->grid.height < 1 ||
		a->grid.height > GEOACC_RASTER_MAX_SIDE || (uint64) a->grid.width * a->grid.height > DENSITY_MAX_CELLS ||
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
	bool		sums = DensityHasSums(&h->args);

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

/* Check a flat form given without its varlena header. */
static void
FlatCheck(const uint8 *data, Size size, int errcode)
{
	FlatReader	r = {data, data + size, errcode};
	DensityHeader h;

	FlatGetHeader(&r, &h);
	FlatAddCells(&r, &h, NULL);
}

/* A reader of a detoasted geoacc_density_state datum: bad bytes in it are corrupt data. */
static FlatReader
FlatOpen(const struct varlena *flat)
{
	const uint8 *data = (const uint8 *) VARDATA_ANY(flat);

	return (FlatReader) {data, data + VARSIZE_ANY_EXHDR(flat), ERRCODE_DATA_CORRUPTED};
}

/* Expanded-object methods: the flat form's size (the buffered points projected first), and the form itself. */
static Size
DensityStateFlatSize(ExpandedObjectHeader *eoh)
{
	DensityState *state = (DensityState *) eoh;
	FlatWriter	w = {NULL, 0};

	DensityStateFlush(state);
	StateEncode(state, &w);
	return VARHDRSZ + w.size;
}

static void
DensityStateFlattenInto(ExpandedObjectHeader *eoh, void *result, Size allocated_size)
{
	DensityState *state = (DensityState *) eoh;
	FlatWriter	w = {(uint8 *) VARDATA(result), 0};
	instr_time	start,
				end;

	DensityStateFlush(state);
	INSTR_TIME_SET_CURRENT(start);
	StateEncode(state, &w);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	Assert(VARHDRSZ + w.size == allocated_size);
	SET_VARSIZE(result, VARHDRSZ + w.size);
	/*
	 * A partial state is handed on flat (from a parallel worker or the
	 * leader's own partial aggregate to the final one, from a Citus shard):
	 * where its process's part of the time went.
	 */
	elog(DEBUG1, "gpu_density_raster: a partial state%s: " INT64_FORMAT " rows, " UINT64_FORMAT
		 " points projected in %u calls, %.1f ms; flattened to %zu bytes in %.1f ms",
		 IsParallelWorker() ? " of a parallel worker" : "", state->h.rows, state->projected, state->project_calls,
		 state->project_ms, (size_t) (VARHDRSZ + w.size), INSTR_TIME_GET_MILLISEC(end));
}

static const ExpandedObjectMethods density_state_methods = {
	DensityStateFlatSize,
	DensityStateFlattenInto
};

/* Count b's projections, made in this process, as a's (for the DEBUG1 lines). */
static void
AddProjections(DensityState *a, const DensityState *b)
{
	a->projected += b->projected;
	a->project_calls += b->project_calls;
	a->project_ms += b->project_ms;
}

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
DensityState *
DensityStateCopy(Datum datum, MemoryContext parent)
{
	DensityState *state = ExpandedState(datum);
	DensityState *copy;
	struct varlena *flat;
	DensityHeader h;
	FlatReader	r;

	if (state != NULL)
	{
		DensityStateFlush(state);
		copy = DensityStateCreate(parent, &state->h);
		StateAddCells(copy, state);
		AddProjections(copy, state);
		copy->combined = 1;
		return copy;
	}
	flat = PG_DETOAST_DATUM(datum);
	r = FlatOpen(flat);
	FlatGetHeader(&r, &h);
	copy = DensityStateCreate(parent, &h);
	FlatAddCells(&r, &h, copy);
	copy->combined = 1;
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
DensityState *
DensityStateForWriting(Datum datum, MemoryContext parent)
{
	DensityState *state = ExpandedState(datum);

	if (state != NULL && VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(datum)) &&
		MemoryContextGetParent(state->eoh.eoh_context) == parent)
		return state;
	return DensityStateCopy(datum, parent);
}

/* The state a datum stands for, to be read (and flushed) only. */
DensityState *
DensityStateForReading(Datum datum)
{
	DensityState *state = ExpandedState(datum);

	return state != NULL ? state : DensityStateCopy(datum, CurrentMemoryContext);
}

/*
 * Add a state given as a datum (flat, or another expanded state) to a's
 * cells, after checking that both were made with the same arguments.
 */
void
DensityStateAdd(DensityState *a, Datum datum)
{
	DensityState *b = ExpandedState(datum);
	struct varlena *flat = NULL;
	DensityHeader h;
	FlatReader	r = {0};
	instr_time	start,
				end;

	if (b != NULL)
	{
		DensityStateFlush(b);
		h = b->h;
	}
	else
	{
		flat = PG_DETOAST_DATUM(datum);
		r = FlatOpen(flat);
		FlatGetHeader(&r, &h);
	}
	if (!DensityArgsEqual(&a->h.args, &h.args))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_density_raster arguments must be the same on every row")));
	if (a->h.srid != h.srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpu_density_raster input has mixed SRIDs"),
				 errdetail("Some rows have SRID %d, others SRID %d.", a->h.srid, h.srid),
				 errhint("Use ST_Transform() to bring the trajectories to one SRID.")));
	DensityStateFlush(a);
	INSTR_TIME_SET_CURRENT(start);
	if (b != NULL)
	{
		StateAddCells(a, b);
		AddProjections(a, b);
	}
	else
	{
		FlatAddCells(&r, &h, a);
		a->h.cell_bound = Min(a->h.cell_bound + h.cell_bound, CellLimit(&a->h.args));
		a->h.rows += h.rows;
		if ((Pointer) flat != DatumGetPointer(datum))
			pfree(flat);
	}
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	a->combine_ms += INSTR_TIME_GET_MILLISEC(end);
	a->combined++;
}

bool
DensityStateHasCells(const DensityState *state)
{
	for (size_t t = 0; t < (size_t) state->cells.tile_rows * state->cells.tile_columns; t++)
		if (state->cells.tiles[t] != NULL)
			return true;
	return false;
}

bool
DensityStateIsZero(const DensityState *state)
{
	return SkipCells(state, 0, GridCells(&state->h.args), false) == GridCells(&state->h.args);
}

void *
DensityStateCells(const DensityState *state)
{
	const DensityArgs *args = &state->h.args;
	size_t		size = CellSize(args);
	uint32		columns = GridColumns(args);
	uint32		rows = GridRows(args);
	char	   *cells = GeoaccWorkAllocZero(GridCells(args) * size);

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
	FlatCheck((const uint8 *) VARDATA(flat), size, ERRCODE_INVALID_TEXT_REPRESENTATION);
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

	SET_VARSIZE(flat, VARHDRSZ + size);
	pq_copymsgbytes(buf, VARDATA(flat), size);
	FlatCheck((const uint8 *) VARDATA(flat), size, ERRCODE_INVALID_BINARY_REPRESENTATION);
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
