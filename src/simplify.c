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

/* Where the core's input goes: coordinates split by axis, and the lines' ends. */
typedef struct SplitArrays
{
	double	   *x;				/* X (a geography's longitude) as given */
	double	   *y;
	double	   *z;				/* when some row has Z */
	double	   *m;
	double	   *gx;				/* a geography: the metres the core measures */
	double	   *gy;
	uint32	   *offsets;		/* offsets[t + 1]: the end of line t */
} SplitArrays;

/* A row of the current chunk. */
typedef struct ChunkRow
{
	uint32		first;			/* its first line in the chunk's arrays */
	uint32		nlines;			/* 0: returned as it is (NULL, empty, no line of 3 vertices or more) */
	bool		multi;			/* a MULTILINESTRING */
	bool		has_z;
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
	bool		geodetic;		/* geographies (known from the first row read) */

	/* the current chunk: rows [chunk_begin, chunk_end) */
	int64		chunk_begin;
	int64		chunk_end;
	ChunkRow   *rows;
	uint32		max_rows;
	uint32		nlines;
	uint32		max_lines;
	uint32		npoints;
	uint32		max_points;
	SplitArrays arrays;
	uint8	   *keep;

	/* device choice and statistics */
	bool		call_begun;
	GeoaccCall	call;
	uint64		device_budget;	/* GPU: device bytes a chunk may take; 0 on the CPU */
	int64		points_read;
	int			nchunks;
	GeoaccSimplifyTiming spent;
	/* where the function's own time goes (DEBUG1): rows fetched from the window, detoasted, parsed and
	 * copied into the chunk; results built; and all the time in the function, from the first call on */
	GeoaccStages stages;
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
	GeoaccStagesStart(&part->stages);
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

/* How messages name a row: built only when a message needs it (the time of its first vertex costs). */
typedef struct RowName
{
	const char *fixed;			/* the scalar form's argument name; NULL in the window function */
	int64		row;			/* 1-based */
	const struct varlena *geom;
} RowName;

static const char *
NameOf(const RowName *name)
{
	return name->fixed ? name->fixed : GeoaccRowLabel(name->row, name->geom);
}

/* How messages name line i of a row: the row alone for a LINESTRING. */
static const char *
LineLabel(const GeoaccLines *lines, uint32 i, const RowName *name)
{
	return lines->type == GEOACC_LINETYPE ? NameOf(name) : psprintf("%s, line %u", NameOf(name), i + 1);
}

/*
 * Check every line of a row (a trajectory, with Z if use_z; the ERROR names
 * the row and line); the vertices and lines the core is to see: every
 * non-empty line when one of them has three vertices or more, none when no
 * line can lose a vertex (the row is then returned as it is).
 */
static uint64
CheckLines(const GeoaccLines *lines, bool use_z, const RowName *name, uint32 *nlines)
{
	uint64		points = 0;
	bool		simplifiable = false;

	*nlines = 0;
	for (uint32 i = 0; i < lines->nlines; i++)
	{
		const GeoaccLine *line = &lines->lines[i];

		if (!GeoaccCheckUseZ(line, use_z, NULL) || !GeoaccCheckTrajectory(line, NULL))
		{
			const char *label = LineLabel(lines, i, name);

			GeoaccCheckUseZ(line, use_z, label);
			GeoaccCheckTrajectory(line, label);
		}
		if (line->npoints > 0)
		{
			points += line->npoints;
			(*nlines)++;
		}
		simplifiable |= line->npoints >= 3;
	}
	if (!simplifiable)
		*nlines = 0;
	return simplifiable ? points : 0;
}

/*
 * Append the non-empty lines of a checked row from vertex offsets[first]
 * on, as lines first, first + 1, ...  A geography's vertices also go to gx,
 * gy in metres on the line's own gnomonic projection; a vertex too far from
 * its line's centre for it is an ERROR.
 */
static void
AppendLines(const GeoaccLines *lines, SplitArrays *a, uint32 first, const RowName *name)
{
	uint32		t = first;

	for (uint32 i = 0; i < lines->nlines; i++)
	{
		const GeoaccLine *line = &lines->lines[i];
		const double *p = line->coords;
		int			nd = line->ndims;
		uint32		v = a->offsets[t];

		if (line->npoints == 0)
			continue;
		for (uint32 k = 0; k < line->npoints; k++, p += nd)
		{
			a->x[v + k] = p[0];
			a->y[v + k] = p[1];
			if (a->z)
				a->z[v + k] = line->has_z ? p[2] : 0;
			a->m[v + k] = p[nd - 1];
		}
		if (line->geodetic)
		{
			GeoaccDirection sum = {{0, 0, 0}};
			GeoaccGnomonic g;
			bool		centred;
			double		degrees = 180;

			for (uint32 k = 0; k < line->npoints; k++)
				GeoaccDirectionAdd(&sum, a->x[v + k], a->y[v + k]);
			centred = GeoaccGnomonicInit(&g, &sum);
			for (uint32 k = 0; k < line->npoints; k++)
				if (!centred || !GeoaccGnomonicProject(&g, a->x[v + k], a->y[v + k], &a->gx[v + k], &a->gy[v + k],
													   &degrees))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("%s reaches too far from its centre to be simplified in metres",
									LineLabel(lines, i, name)),
							 errdetail("Vertex %u lies %.1f degrees from the centre; a geography trajectory is "
									   "simplified on a plane that keeps distances within 1%% up to %g degrees "
									   "(about 550 km).", k + 1, degrees, GEOACC_GNOMONIC_MAX_DEGREES),
							 errhint("Cut the trajectory into pieces, for example by day with ST_FilterByM(), or "
									 "simplify it as a geometry in a projected SRID.")));
		}
		a->offsets[++t] = v + line->npoints;
	}
}

/* What the core reads: the metres of a geography, the coordinates themselves otherwise. */
static GeoaccTrajectories
CoreBatch(const SplitArrays *a, uint32 nlines, bool geodetic, const SimplifyParams *params)
{
	GeoaccTrajectories batch;

	batch.ntrajectories = nlines;
	batch.offsets = a->offsets;
	batch.x = geodetic ? a->gx : a->x;
	batch.y = geodetic ? a->gy : a->y;
	batch.z = params->use_z ? a->z : NULL;
	batch.m = params->synchronized ? a->m : NULL;
	return batch;
}

/*
 * ST_Simplify's rule for lines (liblwgeom's lwgeom_simplify_in_place): a
 * line of two vertices with the same XY (within FP_TOLERANCE, 1e-12,
 * absolute, as its p2d_same) after simplification has collapsed and is
 * dropped unless preserve_collapsed.
 */
#define POSTGIS_FP_TOLERANCE 1e-12

static bool
SameXY(double x0, double y0, double x1, double y1)
{
	return fabs(x0 - x1) <= POSTGIS_FP_TOLERANCE && fabs(y0 - y1) <= POSTGIS_FP_TOLERANCE;
}

/* The shape of a row's result: what SimplifiedRow needs besides the arrays. */
typedef struct RowShape
{
	uint32		type;			/* GEOACC_LINETYPE or GEOACC_MULTILINETYPE */
	bool		has_z;
	int32		srid;
	bool		geodetic;
} RowShape;

/*
 * A row's result from its lines first .. first + nlines - 1 in the arrays
 * and their keep flags, by ST_Simplify's rules (LWGEOM_simplify2d and
 * lwgeom_simplify_in_place): the row itself when no line lost a vertex;
 * otherwise its lines with their kept vertices, copied bit for bit, without
 * those that collapsed (two vertices at the same XY, unless
 * preserve_collapsed; the row's empty lines are not in the arrays); NULL
 * (*isnull) when no line is left.  A geography stays a geography.
 */
static Datum
SimplifiedRow(const SplitArrays *a, const uint8 *keep, uint32 first, uint32 nlines, const RowShape *shape,
			  bool preserve_collapsed, Datum datum, bool *isnull)
{
	int			nd = shape->has_z ? 4 : 3;
	double	  **coords = palloc(nlines * sizeof(double *));
	uint32	   *npoints = palloc(nlines * sizeof(uint32));
	uint32		nout = 0;
	bool		modified = false;
	Datum		result;

	*isnull = false;
	for (uint32 t = first; t < first + nlines; t++)
	{
		uint32		kept = 0;
		double	   *out;

		for (uint32 v = a->offsets[t]; v < a->offsets[t + 1]; v++)
			kept += keep[v];
		modified |= kept != a->offsets[t + 1] - a->offsets[t];
		out = coords[nout] = palloc_extended((Size) kept * nd * sizeof(double), MCXT_ALLOC_HUGE);
		for (uint32 v = a->offsets[t]; v < a->offsets[t + 1]; v++)
			if (keep[v])
			{
				*out++ = a->x[v];
				*out++ = a->y[v];
				if (shape->has_z)
					*out++ = a->z[v];
				*out++ = a->m[v];
			}
		if (kept == 2 && !preserve_collapsed &&
			SameXY(coords[nout][0], coords[nout][1], coords[nout][nd], coords[nout][nd + 1]))
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
	result = GeoaccLinesToGeometry(shape->type, (const double *const *) coords, npoints, nout, shape->has_z, true,
								   shape->srid);
	return shape->geodetic ? GeoaccGeographyFromGeometry(result) : result;
}

/* ---------------------------------------------------------------- chunks */

static void *
Grow(SimplifyPartition *part, void *array, Size bytes)
{
	return array == NULL ? MemoryContextAllocHuge(part->partcxt, bytes) : repalloc_huge(array, bytes);
}

/* An array the core reads or writes: work memory of the partition (the GPU service reads it). */
static void *
WorkArray(SimplifyPartition *part, void *array, Size bytes)
{
	MemoryContext old = MemoryContextSwitchTo(part->partcxt);
	void	   *p = array == NULL ? GeoaccWorkAlloc(bytes) : GeoaccWorkRealloc(array, bytes);

	MemoryContextSwitchTo(old);
	return p;
}

/* Make room for one more row and `lines` more lines in the chunk. */
static void
ChunkReserveRow(SimplifyPartition *part, uint32 lines)
{
	uint32		k = (uint32) (part->chunk_end - part->chunk_begin);

	if (k + 1 > part->max_rows)
	{
		part->max_rows = Max(2 * part->max_rows, 1024);
		part->rows = Grow(part, part->rows, part->max_rows * sizeof(ChunkRow));
	}
	if ((uint64) part->nlines + lines + 1 > part->max_lines)
	{
		part->max_lines = Max(2 * part->max_lines, Max(1024, part->nlines + lines + 1));
		part->arrays.offsets = WorkArray(part, part->arrays.offsets, part->max_lines * sizeof(uint32));
	}
}

static void
FreeIfSet(void *p)
{
	if (p)
		GeoaccWorkFree(p);
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
	SplitArrays *a = &part->arrays;

	FreeIfSet(a->x);
	FreeIfSet(a->y);
	FreeIfSet(a->z);
	FreeIfSet(a->m);
	FreeIfSet(a->gx);
	FreeIfSet(a->gy);
	FreeIfSet(part->keep);
	a->x = WorkArray(part, NULL, (Size) points * sizeof(double));
	a->y = WorkArray(part, NULL, (Size) points * sizeof(double));
	a->m = WorkArray(part, NULL, (Size) points * sizeof(double));
	a->z = with_z ? WorkArray(part, NULL, (Size) points * sizeof(double)) : NULL;
	a->gx = part->geodetic ? WorkArray(part, NULL, (Size) points * sizeof(double)) : NULL;
	a->gy = part->geodetic ? WorkArray(part, NULL, (Size) points * sizeof(double)) : NULL;
	part->keep = WorkArray(part, NULL, points);
	part->max_points = points;
}

/* Whether n more vertices in `lines` more lines (with or without Z) still fit the chunk. */
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
		if (part->arrays.x == NULL || n > part->max_points || (has_z && part->arrays.z == NULL))
			ChunkAllocate(part, Max((uint32) n, Max(part->max_points, 65536)), has_z || part->arrays.z != NULL);
		return true;
	}
	if (points > part->max_points || (has_z && part->arrays.z == NULL))
		return false;
	return part->device_budget == 0 ||
		geoacc_dp_simplify_device_bytes(points, part->nlines + lines, DistanceOf(&part->params),
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
	part->call.start = part->stages.start;	/* the clock covers reading the rows too */
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
	ChunkRow	entry = {0};
	SimplifyParams params;
	bool		isnull,
				isout;
	Datum		datum;
	instr_time	start;

	if (row > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("window partition has too many rows for gpu_dp_simplify"),
				 errdetail("The limit is %d rows.", PG_INT32_MAX),
				 errhint("Use PARTITION BY to split the rows.")));
	INSTR_TIME_SET_CURRENT(start);
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
	GeoaccStagesAdd(&part->stages, "fetch", GeoaccMsSince(start));
	if (isout)
		return ROW_PAST_END;
	entry.null_result = params.null;
	if (!isnull && !params.null)
	{
		struct varlena *geom;
		char		what[32];
		RowName		name = {NULL, row + 1, NULL};
		GeoaccLines lines;
		uint64		points;
		uint32		nlines;

		/* a row with other arguments than the chunk's starts the next chunk */
		if (part->have_params && !SameParams(&params, &part->params) && part->chunk_end > part->chunk_begin)
			return ROW_FOR_NEXT_CHUNK;
		part->params = params;
		part->have_params = true;

		INSTR_TIME_SET_CURRENT(start);
		geom = PG_DETOAST_DATUM(datum);
		GeoaccStagesAdd(&part->stages, "detoast", GeoaccMsSince(start));
		INSTR_TIME_SET_CURRENT(start);
		name.geom = geom;
		snprintf(what, sizeof(what), "row " INT64_FORMAT, row + 1);
		GeoaccLinesFromGeometry(geom, &lines, what);
		if (!part->have_srid)
		{
			part->have_srid = true;
			part->srid = lines.srid;
			part->srid_row = row;
			/* all rows of a partition have the argument's type, geometry or geography */
			part->geodetic = lines.geodetic;
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
		points = CheckLines(&lines, params.use_z, &name, &nlines);
		if (points > 0)
		{
			if (!ChunkFits(part, points, nlines, lines.has_z))
				return ROW_FOR_NEXT_CHUNK;
			ChunkReserveRow(part, nlines);
			entry.first = part->nlines;
			entry.nlines = nlines;
			entry.multi = lines.type == GEOACC_MULTILINETYPE;
			entry.has_z = lines.has_z;
			part->arrays.offsets[0] = 0;
			AppendLines(&lines, &part->arrays, part->nlines, &name);
			part->nlines += nlines;
			part->npoints += (uint32) points;
			part->points_read += points;
			BeginCall(part, false);
		}
		else
			ChunkReserveRow(part, 0);
		GeoaccStagesAdd(&part->stages, "parse", GeoaccMsSince(start));
	}
	else
		ChunkReserveRow(part, 0);
	part->rows[part->chunk_end - part->chunk_begin] = entry;
	part->chunk_end++;
	return ROW_ADDED;
}

/* The simplification of a batch of lines, as a step of a call. */
typedef struct SimplifyRun
{
	GeoaccTrajectories batch;
	GeoaccSimplifyDistance distance;
	double		tolerance;
	uint8	   *keep;
	GeoaccSimplifyTiming spent;
} SimplifyRun;

static GeoaccStatus
SimplifyOn(GeoaccDevice device, void *arg)
{
	SimplifyRun *r = arg;

	return geoacc_dp_simplify(device, &r->batch, r->distance, r->tolerance, r->keep, &r->spent);
}

/* Simplify rows from `begin` on, as many as a chunk holds. */
static void
ComputeChunk(WindowObject win, SimplifyPartition *part, int64 begin)
{
	GeoaccSimplifyTiming spent;
	GeoaccSimplifyDistance distance;
	SimplifyRun run;
	GeoaccWork	work = {SimplifyOn, &run, {0, 0}, false, sizeof(run)};

	WinSetMarkPosition(win, begin);		/* earlier rows are answered */
	if (part->arrays.x != NULL && part->max_points < CHUNK_POINTS)
		ChunkAllocate(part, Min(2 * part->max_points, CHUNK_POINTS), part->arrays.z != NULL);
	part->chunk_begin = part->chunk_end = begin;
	part->nlines = 0;
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
	if (part->nlines == 0)
		return;
	distance = DistanceOf(&part->params);
	/* the memory budget is held chunk by chunk, not while the rows are read */
	run = (SimplifyRun) {CoreBatch(&part->arrays, part->nlines, part->geodetic, &part->params), distance,
		part->params.tolerance, part->keep, {0}};
	work.need.bytes = work.need.least = geoacc_dp_simplify_device_bytes(part->npoints, part->nlines, distance,
																		part->params.tolerance);
	GeoaccCallStep(&part->call, &work);
	spent = run.spent;
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
		 "compute %.3f ms, transfers %.3f ms; %s",
		 part->nrows, part->points_read, GeoaccDeviceName(part->call.device),
		 part->nchunks, part->spent.pieces, part->spent.rounds, (uint64) part->spent.cpu_points,
		 part->spent.compute_ms, part->spent.transfer_ms, GeoaccStagesText(&part->stages));
}

/* The row's result from the chunk (the row itself for those the core did not see). */
static Datum
RowResult(const SimplifyPartition *part, int64 row, Datum datum, bool *isnull)
{
	const ChunkRow *r = &part->rows[row - part->chunk_begin];
	RowShape	shape = {r->multi ? GEOACC_MULTILINETYPE : GEOACC_LINETYPE, r->has_z, part->srid, part->geodetic};

	*isnull = false;
	if (r->nlines == 0)
		return datum;
	return SimplifiedRow(&part->arrays, part->keep, r->first, r->nlines, &shape, part->params.preserve_collapsed,
						 datum, isnull);
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
	instr_time	entered,
				start;

	INSTR_TIME_SET_CURRENT(entered);
	/* geoacc 0.1.0 declared (traj, tolerance, synchronized, use_z) */
	if (PG_NARGS() != 5)
		GeoaccOlderDeclaration("gpu_dp_simplify");
	if (!part->started)
		StartPartition(win, fcinfo, part);
	/* constant arguments with a NULL among them: every row is NULL, nothing is read */
	if (part->stable_params && part->params.null)
		PG_RETURN_NULL();
	if (row >= part->chunk_end)
		ComputeChunk(win, part, row);
	INSTR_TIME_SET_CURRENT(start);
	datum = WinGetFuncArgCurrent(win, 0, &isnull);
	GeoaccStagesAdd(&part->stages, "fetch", GeoaccMsSince(start));
	if (!isnull && part->rows[row - part->chunk_begin].null_result)
		isnull = true;
	INSTR_TIME_SET_CURRENT(start);
	if (!isnull)
		result = RowResult(part, row, datum, &isnull);
	GeoaccStagesAdd(&part->stages, "results", GeoaccMsSince(start));
	GeoaccStagesAdd(&part->stages, "in the function", GeoaccMsSince(entered));
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
	struct varlena *geom = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	SimplifyParams params = {false, PG_GETARG_FLOAT8(1), PG_GETARG_BOOL(2), PG_GETARG_BOOL(3), PG_GETARG_BOOL(4)};
	RowName		name = {"traj", 0, NULL};
	GeoaccLines lines;
	RowShape	shape;
	SplitArrays a = {0};
	uint64		points;
	uint32		nlines;
	uint8	   *keep;
	GeoaccSimplifyDistance distance = DistanceOf(&params);
	SimplifyRun run;
	GeoaccWork	work = {SimplifyOn, &run, {0, 0}, false, sizeof(run)};
	bool		isnull;
	Datum		result;

	CheckTolerance(params.tolerance, 0);
	GeoaccLinesFromGeometry(geom, &lines, "traj");
	points = CheckLines(&lines, params.use_z, &name, &nlines);
	if (points == 0)
		PG_RETURN_POINTER(geom);
	if (points >= PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a trajectory of " UINT64_FORMAT " vertices is too large for geoacc_dp_simplify", points)));
	if (!lines.geodetic)
		GeoaccNoticeIfGeographic(lines.srid, "geoacc_dp_simplify");

	/* the window function's arrays for one row, in work memory */
	a.x = GeoaccWorkAlloc((Size) points * sizeof(double));
	a.y = GeoaccWorkAlloc((Size) points * sizeof(double));
	a.m = GeoaccWorkAlloc((Size) points * sizeof(double));
	if (lines.has_z)
		a.z = GeoaccWorkAlloc((Size) points * sizeof(double));
	if (lines.geodetic)
	{
		a.gx = GeoaccWorkAlloc((Size) points * sizeof(double));
		a.gy = GeoaccWorkAlloc((Size) points * sizeof(double));
	}
	a.offsets = GeoaccWorkAlloc((nlines + 1) * sizeof(uint32));
	a.offsets[0] = 0;
	keep = GeoaccWorkAlloc((Size) points);
	AppendLines(&lines, &a, 0, &name);

	run = (SimplifyRun) {CoreBatch(&a, nlines, lines.geodetic, &params), distance, params.tolerance, keep, {0}};
	work.need.bytes = work.need.least = geoacc_dp_simplify_device_bytes(points, nlines, distance, params.tolerance);
	GeoaccCallRun("geoacc_dp_simplify", (int64) points, &work);

	shape.type = lines.type;
	shape.has_z = lines.has_z;
	shape.srid = lines.srid;
	shape.geodetic = lines.geodetic;
	result = SimplifiedRow(&a, keep, 0, nlines, &shape, params.preserve_collapsed, PointerGetDatum(geom), &isnull);
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
