/*
 * density_raster.h
 *
 * What the aggregate gpu_density_raster (density_raster.c) and its state
 * (density_state.c) share: the aggregate's arguments, and the state with
 * the functions that make, fill, combine and read it.
 */
#ifndef DENSITY_RASTER_H
#define DENSITY_RASTER_H

#include "geoacc.h"

#include "utils/expandeddatum.h"

/* The most cells a raster may have: its WKB must stay well under 1 GB. */
#define DENSITY_MAX_CELLS (8192 * 8192)

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

/* What a state carries besides its cells and points; also the flat form's header. */
typedef struct DensityHeader
{
	DensityArgs args;
	int32		srid;
	int64		rows;			/* rows read (for messages) */
	uint64		cell_bound;		/* no cell holds more than this (counts, or units of 2^-32) */
} DensityHeader;

/*
 * The state, an expanded object whose memory context holds everything:
 * cells are uint32 counts, or int64 fixed-point sums (DensityHasSums), in
 * tiles (GeoaccDensityTiles); points are buffered with their values until
 * a projection.  The aggregate reads and sets h; the rest belongs to
 * density_state.c.
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
	/* for the DEBUG1 lines only (not in the flat form): this process's projections and combines */
	uint64		projected;		/* points */
	uint32		project_calls;
	double		project_ms;
	uint32		combined;		/* states added to this one */
	double		combine_ms;
} DensityState;

/* A sample's value (a weight, or weight x hours of a segment) must stay below 2^27 (geoacc_core.h). */
#define DENSITY_MAX_VALUE 134217728.0

/*
 * The arguments of a call from argument `first` on (the extent, a box2d or
 * a geometry, width, height, then the optional kernel, kernel_size,
 * interpolate, mode, and a weight argument when there is one after them):
 * 2 in the aggregate's transition function.
 */
void		DensityArgsFromCall(FunctionCallInfo fcinfo, int first, bool extent_is_geometry, DensityArgs *args);

/*
 * ERROR unless a part's X and Y are finite (M lines: the whole trajectory
 * rule), naming the row `name`; with `name` NULL, false instead.
 */
bool		DensityCheckPart(const GeoaccLine *line, const char *name);

/*
 * The raster's pixels: the state's buffered points projected, its cells
 * convolved (work memory, height * width), with a WARNING when rows were
 * read but put nothing in the extent if warn_if_empty; the steps' times
 * go to `stages` when not NULL, and the convolution's device to `device`
 * (GEOACC_DEVICE_CPU when no sample left a cell to convolve).
 */
double	   *DensityPixels(DensityState *state, bool warn_if_empty, GeoaccStages *stages, GeoaccDevice *device);

/* Whether two calls' arguments are the same. */
bool		DensityArgsEqual(const DensityArgs *a, const DensityArgs *b);

/* Fixed-point sums (weights or the time mode) rather than counts. */
bool		DensityHasSums(const DensityArgs *args);

/*
 * A state with zero cells and no points: an expanded object in a memory
 * context of its own under `parent` (the aggregate's context, where
 * PostgreSQL and Citus keep a transition value without copying it).
 */
DensityState *DensityStateCreate(MemoryContext parent, const DensityHeader *h);

/* The state as a read-write datum, the transition value to return. */
Datum		DensityStateDatum(DensityState *state);

/*
 * The state a datum (flat, or expanded) stands for: to be changed in place
 * (the datum's own when it is the aggregate's, else a copy under
 * `parent`), a new copy under `parent`, or to be read (and flushed) only.
 */
DensityState *DensityStateForWriting(Datum datum, MemoryContext parent);
DensityState *DensityStateCopy(Datum datum, MemoryContext parent);
DensityState *DensityStateForReading(Datum datum);

/* Buffer one point with its value (GEOACC_DENSITY_* flags); a full chunk is projected first. */
void		DensityStateAppend(DensityState *state, double x, double y, uint8 flags, double value);
/* The same for n points of one value, coords[i * stride] the x of point i, the first with first_flags. */
void		DensityStateAppendRun(DensityState *state, const double *coords, int stride, uint32 n, uint8 first_flags,
								  uint8 rest_flags, double value);

/* Project the buffered points into the cells on the chosen device. */
void		DensityStateFlush(DensityState *state);

/*
 * A snapshot's points as a device process may keep them prepared
 * (geoacc_density_resident_create): the snapshot entry's serial (0: not to
 * be kept), the arrays of values kept with them, and which of those the
 * projection takes (-1: none).
 */
typedef struct DensityResidence
{
	uint64		serial;
	const double *values[GEOACC_DENSITY_RESIDENT_VALUES];
	int			nvalues;
	int			slot;
} DensityResidence;

/*
 * Project the points of an index that can reach the grid, unless together
 * they could overflow a cell (false); from the device process's prepared
 * copy where `residence` allows one.
 */
bool		DensityStateProjectIndexed(DensityState *state, const GeoaccDensityPoints *points,
									   const GeoaccPointGrid *index, uint64 bound,
									   const DensityResidence *residence);

/* Add the state a datum stands for to a's cells: an ERROR unless both have the same arguments and SRID. */
void		DensityStateAdd(DensityState *a, Datum datum);

/* Whether a flushed state has cells that a sample fell in (without them, every cell is zero). */
bool		DensityStateHasCells(const DensityState *state);

/* Whether every cell of a flushed state is zero. */
bool		DensityStateIsZero(const DensityState *state);

/* A flushed state's cells, raster and margin, in one row-major array (palloc'd), for the convolution. */
void	   *DensityStateCells(const DensityState *state);

#endif							/* DENSITY_RASTER_H */
