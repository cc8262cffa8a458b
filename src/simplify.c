/*
 * simplify.c
 *
 * gpu_dp_simplify(traj, tolerance, preserve_collapsed, synchronized, use_z),
 * a window function in the manner of PostGIS's ST_ClusterDBSCAN
 * (lwgeom_window.c); geoacc_dp_simplify(), the same for one trajectory in a
 * scalar call; and geoacc_compression_stats(), the quality of a
 * simplification.  The positional arguments are ST_Simplify's, and so is
 * the result, for a LINESTRING and, part by part, for a MULTILINESTRING
 * (what ST_LocateBetween returns): NULL where a line collapsed to two
 * vertices with the same XY, unless preserve_collapsed.  On a geography the
 * tolerance is in metres (geography.c): the core simplifies each line on its
 * own gnomonic projection, and the result keeps the original vertices.
 *
 * The window function works through its partition in chunks of rows: when
 * a row is asked for that the current chunk does not hold, it reads that
 * row and the following ones (checking each trajectory, splitting the
 * coordinates by axis) until the chunk holds CHUNK_POINTS vertices or what
 * the device can take, or a row comes with other arguments, simplifies all
 * of them in one call of the core, and then answers each row of the chunk
 * from its own geometry and the chunk's keep flags.  So memory stays
 * bounded, no array nears PostgreSQL's 1 GB allocation limit, each
 * trajectory is read into the chunk once, and arguments may change from
 * row to row (rows with the same arguments in a row share a core call).
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

/* The arguments besides the trajectory; a core call serves rows that share them. */
typedef struct SimplifyParams
{
	bool		null;			/* one of them is NULL: the row's result is NULL */
	double		tolerance;
	bool		preserve_collapsed;
	bool		synchronized;
	bool		use_z;
} SimplifyParams;

/* A row of the current chunk. */
typedef struct ChunkRow
{
	uint32		first;			/* its first vertex in the chunk's arrays */
	uint32		npoints;		/* 0: returned as it is (NULL, empty, lines of 1-2 vertices) */
	bool		null_result;	/* an argument is NULL */
} ChunkRow;

/* The state of one partition, in its local memory. */
typedef struct SimplifyPartition
{
	bool		started;
	bool		ended;			/* the last row has been read */
	int64		nrows;			/* known once ended */
	bool		stable_params;	/* constants: read once, for every row */
	SimplifyParams params;		/* the current chunk's (once it has a row with arguments) */
	bool		have_params;
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

/* ERROR unless the tolerance is >= 0 (`row` names the row, 1-based; 0 for a scalar call). */
static void
CheckTolerance(double tolerance, int64 row)
{
	if (!(tolerance >= 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tolerance must be a non-negative number"),
				 row > 0 ? errdetail("Row " INT64_FORMAT " has tolerance %g.", row, tolerance)
				 : errdetail("tolerance is %g.", tolerance)));
}

/* Row `row`'s tolerance, preserve_collapsed, synchronized and use_z, checked. */
static void
ReadParams(WindowObject win, int64 row, SimplifyParams *p)
{
	bool		nulls[4];
	Datum		args[4];

	for (int i = 0; i < 4; i++)
	{
		bool		isout;

		args[i] = WinGetFuncArgInPartition(win, i + 1, (int) row, WINDOW_SEEK_HEAD, false, &nulls[i], &isout);
	}
	memset(p, 0, sizeof(*p));
	p->null = nulls[0] || nulls[1] || nulls[2] || nulls[3];
	if (p->null)
		return;
	p->tolerance = DatumGetFloat8(args[0]);
	p->preserve_collapsed = DatumGetBool(args[1]);
	p->synchronized = DatumGetBool(args[2]);
	p->use_z = DatumGetBool(args[3]);
	CheckTolerance(p->tolerance, row + 1);
}

static bool
SameParams(const SimplifyParams *a, const SimplifyParams *b)
{
	return a->tolerance == b->tolerance && a->preserve_collapsed == b->preserve_collapsed &&
		a->synchronized == b->synchronized && a->use_z == b->use_z;
}

static GeoaccSimplifyDistance
DistanceOf(const SimplifyParams *p)
{
	return p->synchronized ? (p->use_z ? GEOACC_SIMPLIFY_SYNCHRONIZED_3D : GEOACC_SIMPLIFY_SYNCHRONIZED)
		: (p->use_z ? GEOACC_SIMPLIFY_3D : GEOACC_SIMPLIFY_PLANAR);
}

/* On the first row: memory, and the arguments when they are the same for every row. */
static void
StartPartition(WindowObject win, FunctionCallInfo fcinfo, SimplifyPartition *part)
{
	INSTR_TIME_SET_CURRENT(part->start);
	part->stable_params = get_fn_expr_arg_stable(fcinfo->flinfo, 1) && get_fn_expr_arg_stable(fcinfo->flinfo, 2) &&
		get_fn_expr_arg_stable(fcinfo->flinfo, 3) && get_fn_expr_arg_stable(fcinfo->flinfo, 4);
	if (part->stable_params)
	{
		ReadParams(win, 0, &part->params);
		part->have_params = true;
	}
	part->partcxt = GetMemoryChunkContext(part);
	part->rowcxt = AllocSetContextCreate(part->partcxt, "gpu_dp_simplify row", ALLOCSET_DEFAULT_SIZES);
	part->started = true;
}

/* ---------------------------------------------------------------- lines */

/* How messages name line i of a row: the row alone for a LINESTRING. */
static const char *
LineLabel(const GeoaccLines *lines, uint32 i, const char *row)
{
	return lines->type == GEOACC_LINETYPE ? row : psprintf("%s, line %u", row, i + 1);
}

/* Lines of at least three vertices go to the core; shorter ones stay as they are. */
static inline bool
Simplifiable(const GeoaccLine *line)
{
	return line->npoints >= 3;
}

/*
 * Check every line of a row (a trajectory, with Z if use_z); the vertices
 * the core will see.
 */
static uint64
CheckLines(const GeoaccLines *lines, bool use_z, const char *what)
{
	uint64		points = 0;

	for (uint32 i = 0; i < lines->nlines; i++)
	{
		const GeoaccLine *line = &lines->lines[i];
		const char *label = LineLabel(lines, i, what);

		GeoaccCheckUseZ(line, use_z, label);
		if (line->npoints > 0)
			GeoaccCheckTrajectory(line, label);
		if (Simplifiable(line))
			points += line->npoints;
	}
	return points;
}

/*
 * Copy a checked line's vertices, split by axis, to x, y, z, m from `first`
 * (z when not NULL).  A geography's longitudes and latitudes become metres
 * on the line's own gnomonic projection; a vertex too far from the line's
 * centre for it is an ERROR naming `what`.
 */
static void
SplitLine(const GeoaccLine *line, uint32 first, double *x, double *y, double *z, double *m, const char *what)
{
	const double *p = line->coords;
	int			nd = line->ndims;

	if (line->geodetic)
	{
		GeoaccDirection sum = {{0, 0, 0}};
		GeoaccGnomonic g;
		bool		centred;
		double		degrees = 180;

		for (uint32 i = 0; i < line->npoints; i++)
			GeoaccDirectionAdd(&sum, p[(size_t) i * nd], p[(size_t) i * nd + 1]);
		centred = GeoaccGnomonicInit(&g, &sum);
		for (uint32 i = 0; i < line->npoints; i++, p += nd)
			if (!centred || !GeoaccGnomonicProject(&g, p[0], p[1], &x[first + i], &y[first + i], &degrees))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s reaches too far from its centre to be simplified in metres", what),
						 errdetail("Vertex %u lies %.1f degrees from the centre; a geography trajectory is simplified "
								   "on a plane that keeps distances within 1%% up to %g degrees (about 550 km).",
								   i + 1, degrees, GEOACC_GNOMONIC_MAX_DEGREES),
						 errhint("Cut the trajectory into pieces, for example by day with ST_FilterByM(), or "
								 "simplify it as a geometry in a projected SRID.")));
	}
	else
		for (uint32 i = 0; i < line->npoints; i++, p += nd)
		{
			x[first + i] = p[0];
			y[first + i] = p[1];
		}
	p = line->coords;
	for (uint32 i = 0; i < line->npoints; i++, p += nd)
	{
		if (z)
			z[first + i] = line->has_z ? p[2] : 0;
		m[first + i] = p[nd - 1];
	}
}

/*
 * ST_Simplify's rule for lines (liblwgeom's lwgeom_simplify_in_place): a
 * line of two vertices with the same XY (within FP_TOLERANCE, 1e-12,
 * absolute, as its p2d_same) after simplification has collapsed and is
 * dropped unless preserve_collapsed.
 */
#define POSTGIS_FP_TOLERANCE 1e-12

static bool
SameXY(const double *a, const double *b)
{
	return fabs(a[0] - b[0]) <= POSTGIS_FP_TOLERANCE && fabs(a[1] - b[1]) <= POSTGIS_FP_TOLERANCE;
}

/*
 * A row's result from the keep flags of its simplifiable lines (from
 * keep[0] on, in line order), by ST_Simplify's rules (LWGEOM_simplify2d
 * and lwgeom_simplify_in_place): the row itself when no line lost a vertex;
 * otherwise its lines with their kept vertices, copied bit for bit, without
 * the lines that collapsed (two vertices, the same XY, not
 * preserve_collapsed) or are empty; NULL (*isnull) when no line is left.  A
 * geography stays a geography.
 */
static Datum
SimplifiedRow(Datum datum, const GeoaccLines *lines, const uint8 *keep, bool preserve_collapsed, bool *isnull)
{
	int			nd = 2 + lines->has_z + lines->has_m;
	double	  **coords = palloc(Max(lines->nlines, 1) * sizeof(double *));
	uint32	   *npoints = palloc(Max(lines->nlines, 1) * sizeof(uint32));
	uint32		nout = 0;
	bool		modified = false;
	Datum		result;

	*isnull = false;
	for (uint32 i = 0; i < lines->nlines; i++)
	{
		const GeoaccLine *line = &lines->lines[i];
		uint32		kept = line->npoints;
		double	   *out;

		if (Simplifiable(line))
		{
			kept = 0;
			for (uint32 k = 0; k < line->npoints; k++)
				kept += keep[k];
		}
		modified |= kept != line->npoints;
		out = coords[nout] = palloc_extended(Max((Size) kept * nd * sizeof(double), 1), MCXT_ALLOC_HUGE);
		for (uint32 k = 0; k < line->npoints; k++)
			if (!Simplifiable(line) || keep[k])
			{
				memcpy(out, line->coords + (size_t) k * nd, nd * sizeof(double));
				out += nd;
			}
		if (Simplifiable(line))
			keep += line->npoints;
		/* an empty line, or one collapsed to two vertices at one place, is dropped */
		if (kept == 0 || (kept == 2 && !preserve_collapsed && SameXY(coords[nout], coords[nout] + nd)))
			pfree(coords[nout]);
		else
			npoints[nout++] = kept;
	}
	if (!modified)
		return datum;
	if (nout == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	result = GeoaccLinesToGeometry(lines->type, (const double *const *) coords, npoints, nout, lines->has_z,
								   lines->has_m, lines->srid);
	return lines->geodetic ? GeoaccGeographyFromGeometry(result) : result;
}

/* ---------------------------------------------------------------- chunks */

static void *
Grow(SimplifyPartition *part, void *array, Size bytes)
{
	return array == NULL ? MemoryContextAllocHuge(part->partcxt, bytes) : repalloc_huge(array, bytes);
}

/* Make room for one more row and `lines` more trajectories in the chunk. */
static void
ChunkReserveRow(SimplifyPartition *part, uint32 lines)
{
	uint32		k = (uint32) (part->chunk_end - part->chunk_begin);

	if (k + 1 > part->max_rows)
	{
		part->max_rows = Max(2 * part->max_rows, 1024);
		part->rows = Grow(part, part->rows, part->max_rows * sizeof(ChunkRow));
	}
	if ((uint64) part->ntrajectories + lines + 1 > part->max_trajectories)
	{
		part->max_trajectories = Max(2 * part->max_trajectories, Max(1024, part->ntrajectories + lines + 1));
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

/* Whether n more vertices in `lines` more trajectories (with or without Z) still fit the chunk. */
static bool
ChunkFits(SimplifyPartition *part, uint64 n, uint32 lines, bool has_z)
{
	uint64		points = (uint64) part->npoints + n;

	if (n >= PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a row of " UINT64_FORMAT " vertices is too large for gpu_dp_simplify", n)));
	if (part->npoints == 0)
	{
		/* the chunk's first row always fits: make the room it needs */
		if (part->x == NULL || n > part->max_points || (has_z && part->z == NULL))
			ChunkAllocate(part, Max((uint32) n, Max(part->max_points, 65536)), has_z || part->z != NULL);
		return true;
	}
	if (points > part->max_points || (has_z && part->z == NULL))
		return false;
	return part->device_budget == 0 ||
		geoacc_dp_simplify_device_bytes(points, part->ntrajectories + lines, DistanceOf(&part->params),
										part->params.tolerance) <= part->device_budget;
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
	ROW_FOR_NEXT_CHUNK,			/* other arguments, or its vertices do not fit: it starts the next chunk */
	ROW_PAST_END				/* the partition has no such row */
} AddRowResult;

/* Read and check one row for the chunk. */
static AddRowResult
ChunkAddRow(WindowObject win, SimplifyPartition *part, int64 row)
{
	ChunkRow	entry = {0, 0, false};
	SimplifyParams params;
	bool		isnull,
				isout;
	Datum		datum;
	uint32		nsimplifiable = 0;

	if (row > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("window partition has too many rows for gpu_dp_simplify"),
				 errdetail("The limit is %d rows.", PG_INT32_MAX),
				 errhint("Use PARTITION BY to split the rows.")));
	/* the arguments first: fetching one may free the row fetched before it */
	if (part->stable_params)
		params = part->params;
	else
	{
		datum = WinGetFuncArgInPartition(win, 0, (int) row, WINDOW_SEEK_HEAD, false, &isnull, &isout);
		if (isout)
			return ROW_PAST_END;
		ReadParams(win, row, &params);
	}
	datum = WinGetFuncArgInPartition(win, 0, (int) row, WINDOW_SEEK_HEAD, false, &isnull, &isout);
	if (isout)
		return ROW_PAST_END;
	entry.null_result = params.null;
	if (!isnull && !params.null)
	{
		struct varlena *geom;
		char	   *what;
		GeoaccLines lines;
		uint64		points;

		/* a row with other arguments than the chunk's starts the next chunk */
		if (part->have_params && !SameParams(&params, &part->params) && part->chunk_end > part->chunk_begin)
			return ROW_FOR_NEXT_CHUNK;
		part->params = params;
		part->have_params = true;

		geom = PG_DETOAST_DATUM(datum);
		what = GeoaccRowLabel(row + 1, geom);
		GeoaccLinesFromGeometry(geom, &lines, what);
		if (!part->have_srid)
		{
			part->have_srid = true;
			part->srid = lines.srid;
			part->srid_row = row;
			if (!lines.geodetic)
				GeoaccNoticeIfGeographic(lines.srid, "gpu_dp_simplify");
		}
		else if (lines.srid != part->srid)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("mixed SRIDs in a window partition"),
					 errdetail("Row " INT64_FORMAT " has SRID %d, row " INT64_FORMAT " has SRID %d.",
							   row + 1, lines.srid, part->srid_row + 1, part->srid),
					 errhint("Transform the trajectories to one SRID with ST_Transform(), or partition by SRID.")));
		points = CheckLines(&lines, params.use_z, what);
		for (uint32 i = 0; i < lines.nlines; i++)
			nsimplifiable += Simplifiable(&lines.lines[i]);
		if (points > 0)
		{
			if (!ChunkFits(part, points, nsimplifiable, lines.has_z))
				return ROW_FOR_NEXT_CHUNK;
			ChunkReserveRow(part, nsimplifiable);
			entry.first = part->npoints;
			entry.npoints = (uint32) points;
			for (uint32 i = 0; i < lines.nlines; i++)
			{
				const GeoaccLine *line = &lines.lines[i];

				if (!Simplifiable(line))
					continue;
				SplitLine(line, part->npoints, part->x, part->y, part->z, part->m, LineLabel(&lines, i, what));
				part->npoints += line->npoints;
				part->offsets[++part->ntrajectories] = part->npoints;
			}
			part->points_read += points;
			BeginCall(part, false);
		}
		else
			ChunkReserveRow(part, 0);
	}
	else
		ChunkReserveRow(part, 0);
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
	GeoaccSimplifyDistance distance;

	WinSetMarkPosition(win, begin);		/* earlier rows are answered */
	if (part->x != NULL && part->max_points < CHUNK_POINTS)
		ChunkAllocate(part, Min(2 * part->max_points, CHUNK_POINTS), part->z != NULL);
	part->chunk_begin = part->chunk_end = begin;
	part->ntrajectories = 0;
	part->npoints = 0;
	if (!part->stable_params)
		part->have_params = false;
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
	distance = DistanceOf(&part->params);
	part->offsets[0] = 0;
	batch.ntrajectories = part->ntrajectories;
	batch.offsets = part->offsets;
	batch.x = part->x;
	batch.y = part->y;
	batch.z = part->params.use_z ? part->z : NULL;
	batch.m = part->params.synchronized ? part->m : NULL;
	status = geoacc_dp_simplify(part->call.device, &batch, distance, part->params.tolerance, part->keep, &spent);
	if (status != GEOACC_OK && GeoaccRetryOnCpu(&part->call, status))
		status = geoacc_dp_simplify(part->call.device, &batch, distance, part->params.tolerance, part->keep, &spent);
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

/* The row's result from the chunk (the row itself for those the core did not see). */
static Datum
RowResult(const SimplifyPartition *part, int64 row, Datum datum, bool *isnull)
{
	const ChunkRow *r = &part->rows[row - part->chunk_begin];
	GeoaccLines lines;

	*isnull = false;
	if (r->npoints == 0)
		return datum;
	GeoaccLinesFromGeometry(PG_DETOAST_DATUM(datum), &lines, "row");
	return SimplifiedRow(datum, &lines, part->keep + r->first, part->params.preserve_collapsed, isnull);
}

/*
 * gpu_dp_simplify(traj, tolerance, preserve_collapsed, synchronized, use_z)
 * OVER (...), for geometry and geography
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
	Datum		result = (Datum) 0;

	if (!part->started)
		StartPartition(win, fcinfo, part);
	/* constant arguments with a NULL among them: every row is NULL, nothing is read */
	if (part->stable_params && part->params.null)
		PG_RETURN_NULL();
	if (row >= part->chunk_end)
		ComputeChunk(win, part, row);
	datum = WinGetFuncArgCurrent(win, 0, &isnull);
	if (!isnull && part->rows[row - part->chunk_begin].null_result)
		isnull = true;
	if (!isnull)
		result = RowResult(part, row, datum, &isnull);
	if (part->ended && row == part->nrows - 1)
		FinishPartition(part);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

/*
 * geoacc_dp_simplify(traj, tolerance, preserve_collapsed, synchronized,
 * use_z): the window function's result for one trajectory, computed alone
 * (for UPDATE, WHERE, views and generated columns), for geometry and
 * geography
 */
PG_FUNCTION_INFO_V1(geoacc_dp_simplify_scalar);
Datum
geoacc_dp_simplify_scalar(PG_FUNCTION_ARGS)
{
	Datum		datum = PG_GETARG_DATUM(0);
	struct varlena *geom = PG_DETOAST_DATUM(datum);
	SimplifyParams params = {false, PG_GETARG_FLOAT8(1), PG_GETARG_BOOL(2), PG_GETARG_BOOL(3), PG_GETARG_BOOL(4)};
	GeoaccLines lines;
	GeoaccTrajectories batch;
	uint64		points;
	uint32	   *offsets;
	uint32		ntrajectories = 0;
	uint32		first = 0;
	double	   *x,
			   *y,
			   *z = NULL,
			   *m;
	uint8	   *keep;
	GeoaccCall	call;
	GeoaccStatus status;
	GeoaccSimplifyDistance distance = DistanceOf(&params);
	bool		isnull;
	Datum		result;

	CheckTolerance(params.tolerance, 0);
	GeoaccLinesFromGeometry(geom, &lines, "traj");
	points = CheckLines(&lines, params.use_z, "traj");
	if (points == 0)
		PG_RETURN_POINTER(geom);
	if (points >= PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a trajectory of " UINT64_FORMAT " vertices is too large for geoacc_dp_simplify", points)));
	if (!lines.geodetic)
		GeoaccNoticeIfGeographic(lines.srid, "geoacc_dp_simplify");

	/* the window function's arrays for one row */
	x = palloc_extended((Size) points * sizeof(double), MCXT_ALLOC_HUGE);
	y = palloc_extended((Size) points * sizeof(double), MCXT_ALLOC_HUGE);
	m = palloc_extended((Size) points * sizeof(double), MCXT_ALLOC_HUGE);
	if (lines.has_z)
		z = palloc_extended((Size) points * sizeof(double), MCXT_ALLOC_HUGE);
	keep = palloc_extended((Size) points, MCXT_ALLOC_HUGE);
	offsets = palloc((lines.nlines + 1) * sizeof(uint32));
	offsets[0] = 0;
	for (uint32 i = 0; i < lines.nlines; i++)
		if (Simplifiable(&lines.lines[i]))
		{
			SplitLine(&lines.lines[i], first, x, y, z, m, LineLabel(&lines, i, "traj"));
			first += lines.lines[i].npoints;
			offsets[++ntrajectories] = first;
		}
	batch.ntrajectories = ntrajectories;
	batch.offsets = offsets;
	batch.x = x;
	batch.y = y;
	batch.z = params.use_z ? z : NULL;
	batch.m = params.synchronized ? m : NULL;

	GeoaccCallBegin(&call, "geoacc_dp_simplify", (int64) points);
	status = geoacc_dp_simplify(call.device, &batch, distance, params.tolerance, keep, NULL);
	if (status != GEOACC_OK && GeoaccRetryOnCpu(&call, status))
		status = geoacc_dp_simplify(call.device, &batch, distance, params.tolerance, keep, NULL);
	GeoaccCheck(status);
	GeoaccCallEnd(&call);

	result = SimplifiedRow(PointerGetDatum(geom), &lines, keep, params.preserve_collapsed, &isnull);
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
