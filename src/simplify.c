/*
 * simplify.c
 *
 * gpu_dp_simplify(traj, tolerance, preserve_collapsed, synchronized, use_z),
 * a window function in the manner of PostGIS's ST_ClusterDBSCAN
 * (lwgeom_window.c); geoacc_dp_simplify(), the same for one trajectory in a
 * scalar call; and geoacc_compression_stats(), the quality of a
 * simplification.  The positional arguments are ST_Simplify's, and so is
 * the result: NULL where a line collapsed to two vertices with the same XY,
 * unless preserve_collapsed.
 *
 * The window function works through its partition in chunks of rows: when
 * a row is asked for that the current chunk does not hold, it reads that
 * row and the following ones (checking each trajectory, splitting the
 * coordinates by axis) until the chunk holds CHUNK_POINTS vertices or what
 * the device can take, simplifies all of them in one call of the core, and
 * then answers each row of the chunk from the chunk's arrays and keep flags.
 * So memory stays bounded, no array nears PostgreSQL's 1 GB allocation
 * limit, and each trajectory is read once.
 */
#include "geoacc.h"

#include <math.h>

#include "access/htup_details.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "windowapi.h"

/* Vertices per chunk of rows (a larger row makes a chunk of its own). */
#define CHUNK_POINTS ((uint32) 1 << 24)

/* The arguments every row of a partition must share. */
typedef struct SimplifyParams
{
	bool		null;			/* one of them is NULL: every result is NULL */
	double		tolerance;
	bool		preserve_collapsed;
	bool		synchronized;
	bool		use_z;
} SimplifyParams;

/* A row of the current chunk. */
typedef struct ChunkRow
{
	uint32		first;			/* its first vertex in the chunk's arrays */
	uint32		npoints;		/* 0: returned as it is (NULL, empty, 1-2 vertices) */
	bool		has_z;
} ChunkRow;

/* The state of one partition, in its local memory. */
typedef struct SimplifyPartition
{
	bool		started;
	bool		ended;			/* the last row has been read */
	int64		nrows;			/* known once ended */
	bool		stable_params;	/* constants: no need to compare rows */
	SimplifyParams params;
	GeoaccSimplifyDistance distance;
	MemoryContext partcxt;
	MemoryContext rowcxt;
	bool		have_srid;
	int32		srid;
	int64		srid_row;

	/* the current chunk: rows [chunk_begin, chunk_end) */
	int64		chunk_begin;
	int64		chunk_end;
	ChunkRow   *rows;
	uint32		max_rows;
	uint32		ntrajectories;
	uint32		max_trajectories;
	uint32	   *offsets;
	uint32		npoints;
	uint32		max_points;
	double	   *x;
	double	   *y;
	double	   *z;				/* once a row has Z */
	double	   *m;
	uint8	   *keep;

	/* device choice and statistics */
	bool		call_begun;
	GeoaccCall	call;
	instr_time	start;
	uint64		device_budget;	/* GPU: device bytes a chunk may take; 0 on the CPU */
	int64		points_read;
	int			nchunks;
	GeoaccSimplifyTiming spent;
} SimplifyPartition;

/* ------------------------------------------------------------ arguments */

/* ERROR unless the tolerance is >= 0 (`row` names the row, 0-based; -1 for a scalar call). */
static void
CheckTolerance(double tolerance, int64 row)
{
	if (!(tolerance >= 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tolerance must be a non-negative number"),
				 row >= 0 ? errdetail("Row " INT64_FORMAT " has tolerance %g.", row + 1, tolerance)
				 : errdetail("tolerance is %g.", tolerance)));
}

/* The current row's tolerance, preserve_collapsed, synchronized and use_z, checked. */
static void
ReadParams(WindowObject win, int64 row, SimplifyParams *p)
{
	bool		nulls[4];
	Datum		args[4];

	for (int i = 0; i < 4; i++)
		args[i] = WinGetFuncArgCurrent(win, i + 1, &nulls[i]);
	memset(p, 0, sizeof(*p));
	p->null = nulls[0] || nulls[1] || nulls[2] || nulls[3];
	if (p->null)
		return;
	p->tolerance = DatumGetFloat8(args[0]);
	p->preserve_collapsed = DatumGetBool(args[1]);
	p->synchronized = DatumGetBool(args[2]);
	p->use_z = DatumGetBool(args[3]);
	CheckTolerance(p->tolerance, row);
}

static bool
SameParams(const SimplifyParams *a, const SimplifyParams *b)
{
	if (a->null || b->null)
		return a->null == b->null;
	return a->tolerance == b->tolerance && a->preserve_collapsed == b->preserve_collapsed &&
		a->synchronized == b->synchronized && a->use_z == b->use_z;
}

/* On the first row: the parameters and memory. */
static void
StartPartition(WindowObject win, FunctionCallInfo fcinfo, SimplifyPartition *part)
{
	INSTR_TIME_SET_CURRENT(part->start);
	part->stable_params = get_fn_expr_arg_stable(fcinfo->flinfo, 1) && get_fn_expr_arg_stable(fcinfo->flinfo, 2) &&
		get_fn_expr_arg_stable(fcinfo->flinfo, 3) && get_fn_expr_arg_stable(fcinfo->flinfo, 4);
	ReadParams(win, 0, &part->params);
	part->distance = part->params.synchronized
		? (part->params.use_z ? GEOACC_SIMPLIFY_SYNCHRONIZED_3D : GEOACC_SIMPLIFY_SYNCHRONIZED)
		: (part->params.use_z ? GEOACC_SIMPLIFY_3D : GEOACC_SIMPLIFY_PLANAR);
	part->partcxt = GetMemoryChunkContext(part);
	part->rowcxt = AllocSetContextCreate(part->partcxt, "gpu_dp_simplify row", ALLOCSET_DEFAULT_SIZES);
	part->started = true;
}

/* ---------------------------------------------------------------- chunks */

static void *
Grow(SimplifyPartition *part, void *array, Size bytes)
{
	return array == NULL ? MemoryContextAllocHuge(part->partcxt, bytes) : repalloc_huge(array, bytes);
}

/* Make room for one more row (and trajectory) in the chunk. */
static void
ChunkReserveRow(SimplifyPartition *part)
{
	uint32		k = (uint32) (part->chunk_end - part->chunk_begin);

	if (k + 1 > part->max_rows)
	{
		part->max_rows = Max(2 * part->max_rows, 1024);
		part->rows = Grow(part, part->rows, part->max_rows * sizeof(ChunkRow));
	}
	if (part->ntrajectories + 2 > part->max_trajectories)
	{
		part->max_trajectories = Max(2 * part->max_trajectories, 1024);
		part->offsets = Grow(part, part->offsets, part->max_trajectories * sizeof(uint32));
	}
}

/*
 * Give the chunk room for `points` vertices.  A chunk is closed when full
 * rather than grown, and each chunk gets twice the room of the one before
 * (up to CHUNK_POINTS), so nothing is copied and small partitions stay
 * small.
 */
static void
ChunkAllocate(SimplifyPartition *part, uint32 points, bool with_z)
{
	if (part->x != NULL)
	{
		pfree(part->x);
		pfree(part->y);
		pfree(part->m);
		pfree(part->keep);
		if (part->z)
			pfree(part->z);
	}
	part->x = MemoryContextAllocHuge(part->partcxt, (Size) points * sizeof(double));
	part->y = MemoryContextAllocHuge(part->partcxt, (Size) points * sizeof(double));
	part->m = MemoryContextAllocHuge(part->partcxt, (Size) points * sizeof(double));
	part->z = with_z ? MemoryContextAllocHuge(part->partcxt, (Size) points * sizeof(double)) : NULL;
	part->keep = MemoryContextAllocHuge(part->partcxt, points);
	part->max_points = points;
}

/* Whether a trajectory of n vertices (with or without Z) still fits the chunk. */
static bool
ChunkFits(SimplifyPartition *part, uint32 n, bool has_z)
{
	uint64		points = (uint64) part->npoints + n;

	if (part->npoints == 0)
	{
		/* the chunk's first trajectory always fits: make the room it needs */
		if (part->x == NULL || n > part->max_points || (has_z && part->z == NULL))
			ChunkAllocate(part, Max(n, Max(part->max_points, 65536)), has_z || part->z != NULL);
		return true;
	}
	if (points > part->max_points || (has_z && part->z == NULL))
		return false;
	return part->device_budget == 0 ||
		geoacc_dp_simplify_device_bytes(points, part->ntrajectories + 1, part->distance,
										part->params.tolerance) <= part->device_budget;
}

/*
 * Add a trajectory of at least 3 vertices, its coordinates split by axis,
 * checking on the way that it is a trajectory; false if it is not (the
 * caller then raises the precise error).
 */
static bool
ChunkAppend(SimplifyPartition *part, const GeoaccLine *line, ChunkRow *row)
{
	const double *p = line->coords;
	int			nd = line->ndims;
	uint32		first = part->npoints;
	bool		valid = line->has_m;
	double		previous_m = -INFINITY;

	for (uint32 i = 0; i < line->npoints; i++, p += nd)
	{
		part->x[first + i] = p[0];
		part->y[first + i] = p[1];
		part->m[first + i] = p[nd - 1];
		valid &= isfinite(p[0]) && isfinite(p[1]) && isfinite(p[nd - 1]) && p[nd - 1] > previous_m;
		previous_m = p[nd - 1];
	}
	if (line->has_z)
	{
		p = line->coords;
		for (uint32 i = 0; i < line->npoints; i++, p += nd)
		{
			part->z[first + i] = p[2];
			valid &= isfinite(p[2]);
		}
	}
	if (!valid)
		return false;
	row->first = first;
	row->npoints = line->npoints;
	row->has_z = line->has_z;
	part->npoints += line->npoints;
	part->offsets[++part->ntrajectories] = part->npoints;
	return true;
}

/*
 * Choose the device once the choice cannot change: at once for
 * geoacc.device = gpu or cpu; for auto, when the vertices read reach
 * geoacc.gpu_threshold, or after the last row with all of them.  That is
 * the choice GeoaccCallBegin would make with the partition's total.
 */
static void
BeginCall(SimplifyPartition *part, bool at_end)
{
	if (part->call_begun ||
		(geoacc_device_setting == GEOACC_SETTING_AUTO && !at_end && part->points_read < geoacc_gpu_threshold))
		return;
	GeoaccCallBegin(&part->call, "gpu_dp_simplify", part->points_read);
	part->call.start = part->start; /* the clock covers reading the rows too */
	part->call_begun = true;
	if (part->call.device == GEOACC_DEVICE_GPU)
		part->device_budget = GeoaccDeviceMemoryAvailable();
}

/* What ChunkAddRow did with a row. */
typedef enum AddRowResult
{
	ROW_ADDED,
	ROW_FOR_NEXT_CHUNK,			/* its trajectory does not fit: it starts the next chunk */
	ROW_PAST_END				/* the partition has no such row */
} AddRowResult;

/* Read and check one row for the chunk. */
static AddRowResult
ChunkAddRow(WindowObject win, SimplifyPartition *part, int64 row)
{
	ChunkRow	entry = {0, 0, false};
	bool		isnull,
				isout;
	Datum		datum;

	if (row > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("window partition has too many rows for gpu_dp_simplify"),
				 errdetail("The limit is %d rows.", PG_INT32_MAX),
				 errhint("Use PARTITION BY to split the rows.")));
	datum = WinGetFuncArgInPartition(win, 0, (int) row, WINDOW_SEEK_HEAD, false, &isnull, &isout);
	if (isout)
		return ROW_PAST_END;
	if (!isnull)
	{
		struct varlena *geom = PG_DETOAST_DATUM(datum);
		char		what[64];
		GeoaccLine	line;

		snprintf(what, sizeof(what), "row " INT64_FORMAT, row + 1);
		GeoaccLineFromGeometry(geom, &line, what);
		if (!part->have_srid)
		{
			part->have_srid = true;
			part->srid = line.srid;
			part->srid_row = row;
			GeoaccNoticeIfGeographic(line.srid, "gpu_dp_simplify");
		}
		else if (line.srid != part->srid)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("mixed SRIDs in a window partition"),
					 errdetail("Row " INT64_FORMAT " has SRID %d, row " INT64_FORMAT " has SRID %d.",
							   row + 1, line.srid, part->srid_row + 1, part->srid),
					 errhint("Transform the trajectories to one SRID, or partition by SRID.")));
		if (part->params.use_z && line.npoints > 0 && !line.has_z)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s has no Z values", what),
					 errhint("use_z => true needs LINESTRING ZM trajectories.")));
		if (line.npoints >= 3)
		{
			if (!ChunkFits(part, line.npoints, line.has_z))
				return ROW_FOR_NEXT_CHUNK;
			ChunkReserveRow(part);
			if (!ChunkAppend(part, &line, &entry))
				GeoaccCheckTrajectory(&line, what); /* raises the error */
			part->points_read += line.npoints;
			BeginCall(part, false);
		}
		else
		{
			if (line.npoints > 0)
				GeoaccCheckTrajectory(&line, what);
			ChunkReserveRow(part);
		}
	}
	else
		ChunkReserveRow(part);
	part->rows[part->chunk_end - part->chunk_begin] = entry;
	part->chunk_end++;
	return ROW_ADDED;
}

/* Simplify rows from `begin` on, as many as a chunk holds. */
static void
ComputeChunk(WindowObject win, SimplifyPartition *part, int64 begin)
{
	GeoaccTrajectories batch;
	GeoaccSimplifyTiming spent;
	GeoaccStatus status;

	WinSetMarkPosition(win, begin);		/* earlier rows are answered */
	if (part->x != NULL && part->max_points < CHUNK_POINTS)
		ChunkAllocate(part, Min(2 * part->max_points, CHUNK_POINTS), part->z != NULL);
	part->chunk_begin = part->chunk_end = begin;
	part->ntrajectories = 0;
	part->npoints = 0;
	for (int64 row = begin;; row++)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(part->rowcxt);
		AddRowResult added;

		CHECK_FOR_INTERRUPTS();
		added = ChunkAddRow(win, part, row);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(part->rowcxt);
		if (added == ROW_PAST_END)
		{
			part->ended = true;
			part->nrows = row;
		}
		if (added != ROW_ADDED)
			break;
	}
	BeginCall(part, part->ended);
	if (part->ntrajectories == 0)
		return;
	part->offsets[0] = 0;
	batch.ntrajectories = part->ntrajectories;
	batch.offsets = part->offsets;
	batch.x = part->x;
	batch.y = part->y;
	batch.z = part->params.use_z ? part->z : NULL;
	batch.m = part->params.synchronized ? part->m : NULL;
	status = geoacc_dp_simplify(part->call.device, &batch, part->distance, part->params.tolerance, part->keep,
								&spent);
	if (status != GEOACC_OK && GeoaccRetryOnCpu(&part->call, status))
		status = geoacc_dp_simplify(part->call.device, &batch, part->distance, part->params.tolerance, part->keep,
									&spent);
	GeoaccCheck(status);
	part->spent.transfer_ms += spent.transfer_ms;
	part->spent.compute_ms += spent.compute_ms;
	part->spent.pieces += spent.pieces;
	part->spent.rounds += spent.rounds;
	part->spent.cpu_points += spent.cpu_points;
	part->nchunks++;
}

/* After the last row: statistics, and what the computation took at DEBUG1. */
static void
FinishPartition(SimplifyPartition *part)
{
	part->call.items = part->points_read;
	GeoaccCallEnd(&part->call);
	elog(DEBUG1, "gpu_dp_simplify: " INT64_FORMAT " rows, " INT64_FORMAT " vertices simplified on the %s in %d chunks "
		 "(%u GPU pieces, %u rounds, " UINT64_FORMAT " vertices in trajectories too large for the device): "
		 "compute %.3f ms, transfers %.3f ms",
		 part->nrows, part->points_read, part->call.device == GEOACC_DEVICE_GPU ? "GPU" : "CPU",
		 part->nchunks, part->spent.pieces, part->spent.rounds, (uint64) part->spent.cpu_points,
		 part->spent.compute_ms, part->spent.transfer_ms);
}

/*
 * ST_Simplify's rule for lines (liblwgeom's lwgeom_simplify_in_place): a
 * line of more than two vertices that keeps only its ends, and those ends
 * the same XY within FP_TOLERANCE (1e-12, absolute, as its p2d_same), has
 * collapsed; it is NULL unless preserve_collapsed.  A line of two vertices
 * is returned as it is.
 */
#define POSTGIS_FP_TOLERANCE 1e-12

static bool
Collapsed(uint32 npoints, uint32 kept, double x0, double y0, double x1, double y1, bool preserve_collapsed)
{
	return !preserve_collapsed && npoints > 2 && kept == 2 &&
		fabs(x0 - x1) <= POSTGIS_FP_TOLERANCE && fabs(y0 - y1) <= POSTGIS_FP_TOLERANCE;
}

/*
 * The trajectory of `npoints` vertices (x, y, [z,] m arrays, from index
 * first) with its kept vertices, or the row's own datum if all stay; NULL
 * (*isnull) where it collapsed.
 */
static Datum
KeptLine(const double *x, const double *y, const double *z, const double *m, const uint8 *keep, uint32 first,
		 uint32 npoints, bool has_z, int32 srid, bool preserve_collapsed, Datum datum, bool *isnull)
{
	int			nd = has_z ? 4 : 3;
	uint32		kept = 0;
	double	   *coords;
	double	   *out;

	*isnull = false;
	for (uint32 i = first; i < first + npoints; i++)
		kept += keep[i];
	if (Collapsed(npoints, kept, x[first], y[first], x[first + npoints - 1], y[first + npoints - 1],
				  preserve_collapsed))
	{
		*isnull = true;
		return (Datum) 0;
	}
	if (kept == npoints)
		return datum;
	coords = palloc_extended((Size) kept * nd * sizeof(double), MCXT_ALLOC_HUGE);
	out = coords;
	for (uint32 i = first; i < first + npoints; i++)
		if (keep[i])
		{
			*out++ = x[i];
			*out++ = y[i];
			if (has_z)
				*out++ = z[i];
			*out++ = m[i];
		}
	return GeoaccLineToGeometry(coords, kept, has_z, true, srid);
}

/* The row's result from the chunk (the row itself for those of at most two vertices). */
static Datum
RowResult(const SimplifyPartition *part, int64 row, Datum datum, bool *isnull)
{
	const ChunkRow *r = &part->rows[row - part->chunk_begin];

	*isnull = false;
	if (r->npoints == 0)
		return datum;
	return KeptLine(part->x, part->y, part->z, part->m, part->keep, r->first, r->npoints, r->has_z, part->srid,
					part->params.preserve_collapsed, datum, isnull);
}

/*
 * gpu_dp_simplify(traj, tolerance, preserve_collapsed, synchronized, use_z)
 * OVER (...)
 */
PG_FUNCTION_INFO_V1(gpu_dp_simplify);
Datum
gpu_dp_simplify(PG_FUNCTION_ARGS)
{
	WindowObject win = PG_WINDOW_OBJECT();
	SimplifyPartition *part = WinGetPartitionLocalMemory(win, sizeof(SimplifyPartition));
	int64		row = WinGetCurrentPosition(win);
	bool		isnull;
	Datum		datum;
	Datum		result;

	if (!part->started)
		StartPartition(win, fcinfo, part);
	else if (!part->stable_params)
	{
		SimplifyParams p;

		ReadParams(win, row, &p);
		if (!SameParams(&p, &part->params))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("tolerance, preserve_collapsed, synchronized and use_z must be the same on every row of a window partition"),
					 errdetail("Row " INT64_FORMAT " differs from row 1.", row + 1)));
	}
	if (part->params.null)
		PG_RETURN_NULL();
	if (row >= part->chunk_end)
		ComputeChunk(win, part, row);
	datum = WinGetFuncArgCurrent(win, 0, &isnull);
	result = isnull ? (Datum) 0 : RowResult(part, row, datum, &isnull);
	if (part->ended && row == part->nrows - 1)
		FinishPartition(part);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

/*
 * geoacc_dp_simplify(traj, tolerance, preserve_collapsed, synchronized,
 * use_z): the window function's result for one trajectory, computed alone
 * (for UPDATE, WHERE, views and generated columns)
 */
PG_FUNCTION_INFO_V1(geoacc_dp_simplify_scalar);
Datum
geoacc_dp_simplify_scalar(PG_FUNCTION_ARGS)
{
	struct varlena *geom = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	double		tolerance = PG_GETARG_FLOAT8(1);
	bool		preserve_collapsed = PG_GETARG_BOOL(2);
	bool		synchronized = PG_GETARG_BOOL(3);
	bool		use_z = PG_GETARG_BOOL(4);
	GeoaccLine	line;
	GeoaccTrajectories batch;
	uint32		offsets[2];
	double	   *x,
			   *y,
			   *z = NULL,
			   *m;
	uint8	   *keep;
	int			nd;
	GeoaccCall	call;
	GeoaccStatus status;
	GeoaccSimplifyDistance distance = synchronized ? (use_z ? GEOACC_SIMPLIFY_SYNCHRONIZED_3D : GEOACC_SIMPLIFY_SYNCHRONIZED)
		: (use_z ? GEOACC_SIMPLIFY_3D : GEOACC_SIMPLIFY_PLANAR);
	bool		isnull;
	Datum		result;

	CheckTolerance(tolerance, -1);
	GeoaccLineFromGeometry(geom, &line, "traj");
	if (use_z && line.npoints > 0 && !line.has_z)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("traj has no Z values"),
				 errhint("use_z => true needs LINESTRING ZM trajectories.")));
	if (line.npoints > 0)
		GeoaccCheckTrajectory(&line, "traj");
	if (line.npoints <= 2)
		PG_RETURN_POINTER(geom);
	GeoaccNoticeIfGeographic(line.srid, "geoacc_dp_simplify");

	/* the window function's arrays for one trajectory */
	nd = line.ndims;
	x = palloc_extended((Size) line.npoints * sizeof(double), MCXT_ALLOC_HUGE);
	y = palloc_extended((Size) line.npoints * sizeof(double), MCXT_ALLOC_HUGE);
	m = palloc_extended((Size) line.npoints * sizeof(double), MCXT_ALLOC_HUGE);
	if (line.has_z)
		z = palloc_extended((Size) line.npoints * sizeof(double), MCXT_ALLOC_HUGE);
	keep = palloc_extended((Size) line.npoints, MCXT_ALLOC_HUGE);
	for (uint32 i = 0; i < line.npoints; i++)
	{
		const double *p = line.coords + (size_t) i * nd;

		x[i] = p[0];
		y[i] = p[1];
		if (z)
			z[i] = p[2];
		m[i] = p[nd - 1];
	}
	offsets[0] = 0;
	offsets[1] = line.npoints;
	batch.ntrajectories = 1;
	batch.offsets = offsets;
	batch.x = x;
	batch.y = y;
	batch.z = use_z ? z : NULL;
	batch.m = synchronized ? m : NULL;

	GeoaccCallBegin(&call, "geoacc_dp_simplify", line.npoints);
	status = geoacc_dp_simplify(call.device, &batch, distance, tolerance, keep, NULL);
	if (status != GEOACC_OK && GeoaccRetryOnCpu(&call, status))
		status = geoacc_dp_simplify(call.device, &batch, distance, tolerance, keep, NULL);
	GeoaccCheck(status);
	GeoaccCallEnd(&call);

	result = KeptLine(x, y, z, m, keep, 0, line.npoints, line.has_z, line.srid, preserve_collapsed,
					  PointerGetDatum(geom), &isnull);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

/* ERROR unless every coordinate of the line is a finite number. */
static void
CheckFiniteLine(const GeoaccLine *line, const char *what)
{
	for (uint32 i = 0; i < line->npoints; i++)
		for (int d = 0; d < line->ndims; d++)
			if (!isfinite(line->coords[(size_t) i * line->ndims + d]))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s has a coordinate that is not a finite number", what),
						 errdetail("Vertex %u has %c = %g.", i + 1, "XYZM"[d == 2 && !line->has_z ? 3 : d],
								   line->coords[(size_t) i * line->ndims + d])));
}

/*
 * geoacc_compression_stats(original, simplified): compression ratio, rate
 * of length loss and DTW distance
 */
PG_FUNCTION_INFO_V1(geoacc_compression_stats);
Datum
geoacc_compression_stats(PG_FUNCTION_ARGS)
{
	struct varlena *original = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	struct varlena *simplified = PG_DETOAST_DATUM(PG_GETARG_DATUM(1));
	GeoaccLine	o,
				s;
	GeoaccCompressionMeasures measures;
	TupleDesc	desc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	GeoaccLineFromGeometry(original, &o, "original");
	GeoaccLineFromGeometry(simplified, &s, "simplified");
	if (o.srid != s.srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("original and simplified have different SRIDs"),
				 errdetail("The original has SRID %d, the simplified line SRID %d.", o.srid, s.srid),
				 errhint("Use ST_Transform() to bring them to one SRID.")));
	if (o.npoints == 0 || s.npoints == 0)
		PG_RETURN_NULL();
	CheckFiniteLine(&o, "the original line");
	CheckFiniteLine(&s, "the simplified line");
	GeoaccCheck(geoacc_compression_measures(o.coords, o.npoints, o.ndims, s.coords, s.npoints, s.ndims,
											&measures));
	values[0] = Float8GetDatum(measures.compression_ratio);
	values[1] = Float8GetDatum(measures.length_loss_rate);
	nulls[1] = isnan(measures.length_loss_rate);
	values[2] = Float8GetDatum(measures.dtw_distance);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/*
 * geoacc_dtw_distance(a, b): the dynamic time warping distance between two
 * lines (XY, the sum of the matched vertices' distances), the measure
 * geoacc_compression_stats reports
 */
PG_FUNCTION_INFO_V1(geoacc_dtw_distance);
Datum
geoacc_dtw_distance(PG_FUNCTION_ARGS)
{
	struct varlena *a_geom = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	struct varlena *b_geom = PG_DETOAST_DATUM(PG_GETARG_DATUM(1));
	GeoaccLine	a,
				b;
	GeoaccCompressionMeasures measures;

	GeoaccLineFromGeometry(a_geom, &a, "a");
	GeoaccLineFromGeometry(b_geom, &b, "b");
	if (a.srid != b.srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a and b have different SRIDs"),
				 errdetail("a has SRID %d, b SRID %d.", a.srid, b.srid),
				 errhint("Transform one of them with ST_Transform().")));
	if (a.npoints == 0 || b.npoints == 0)
		PG_RETURN_NULL();
	CheckFiniteLine(&a, "a");
	CheckFiniteLine(&b, "b");
	GeoaccCheck(geoacc_compression_measures(a.coords, a.npoints, a.ndims, b.coords, b.npoints, b.ndims, &measures));
	PG_RETURN_FLOAT8(measures.dtw_distance);
}
