/*
 * simplify.c
 *
 * gpu_dp_simplify(traj, tolerance, synchronized, use_z), a window function
 * in the manner of PostGIS's ST_ClusterDBSCAN (lwgeom_window.c): its first
 * call in a partition reads and checks every row's trajectory, simplifies
 * them all in batches, and keeps one bit per vertex in the partition's
 * memory; each call then returns its row's trajectory with the kept
 * vertices, copied bit for bit.  Batches are chunks of rows of at most
 * CHUNK_POINTS vertices, so that no host array nears PostgreSQL's 1 GB
 * allocation limit; the core cuts each chunk further to fit the device.
 *
 * Also geoacc_compression_stats(), the quality of a simplification.
 */
#include "geoacc.h"

#include <math.h>

#include "access/htup_details.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "windowapi.h"

/* Vertices per chunk of rows (a row larger than this is a chunk of its own). */
#define CHUNK_POINTS ((uint32) 1 << 25)

/* The arguments every row of a partition must share. */
typedef struct SimplifyParams
{
	bool		null;			/* one of them is NULL: every result is NULL */
	double		tolerance;
	bool		synchronized;
	bool		use_z;
} SimplifyParams;

/* What the first call in a partition leaves for the others. */
typedef struct SimplifyPartition
{
	bool		computed;
	bool		all_null;
	int64	   *first_bit;		/* per row, its first keep bit; rows + 1 entries */
	uint8	   *keep_bits;		/* one bit per vertex of the rows simplified */
	int64		keep_bytes;
} SimplifyPartition;

/* Trajectories gathered for one call of the core, as arrays. */
typedef struct SimplifyChunk
{
	uint32		ntrajectories;
	uint32		npoints;
	uint32		max_points;		/* allocated */
	uint32		max_trajectories;
	uint32	   *offsets;
	double	   *x;
	double	   *y;
	double	   *z;				/* 3D distances only */
	double	   *m;				/* synchronized distances only */
	uint8	   *keep;
	int64		first_bit;		/* partition bit of the chunk's first vertex */
} SimplifyChunk;

/* The computation of one partition. */
typedef struct SimplifyState
{
	SimplifyPartition *part;
	MemoryContext partcxt;
	MemoryContext workcxt;
	SimplifyParams params;
	GeoaccSimplifyDistance distance;
	SimplifyChunk chunk;
	bool		have_srid;
	int32		srid;
	int64		srid_row;
	bool		call_begun;
	GeoaccCall	call;
	uint64		device_budget;	/* GPU: device bytes a chunk may take; 0 on the CPU */
	instr_time	start;
	int			nchunks;
	GeoaccSimplifyTiming spent;
} SimplifyState;

/* ------------------------------------------------------------ arguments */

static void
ReadParams(WindowObject win, int64 row, SimplifyParams *p)
{
	bool		null_tolerance,
				null_synchronized,
				null_use_z,
				isout;
	Datum		tolerance = WinGetFuncArgInPartition(win, 1, (int) row, WINDOW_SEEK_HEAD, false,
													 &null_tolerance, &isout);
	Datum		synchronized = WinGetFuncArgInPartition(win, 2, (int) row, WINDOW_SEEK_HEAD, false,
														&null_synchronized, &isout);
	Datum		use_z = WinGetFuncArgInPartition(win, 3, (int) row, WINDOW_SEEK_HEAD, false,
												 &null_use_z, &isout);

	memset(p, 0, sizeof(*p));
	p->null = null_tolerance || null_synchronized || null_use_z;
	if (p->null)
		return;
	p->tolerance = DatumGetFloat8(tolerance);
	p->synchronized = DatumGetBool(synchronized);
	p->use_z = DatumGetBool(use_z);
	if (!(p->tolerance >= 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tolerance must be a non-negative number"),
				 errdetail("Row " INT64_FORMAT " has tolerance %g.", row + 1, p->tolerance)));
}

static bool
SameParams(const SimplifyParams *a, const SimplifyParams *b)
{
	if (a->null || b->null)
		return a->null == b->null;
	return a->tolerance == b->tolerance && a->synchronized == b->synchronized && a->use_z == b->use_z;
}

/* --------------------------------------------------------------- chunks */

/* Make room for n more vertices and one more trajectory. */
static void
ChunkReserve(SimplifyState *st, uint32 n)
{
	SimplifyChunk *c = &st->chunk;
	uint64		need = (uint64) c->npoints + n;

	if (need > c->max_points)
	{
		uint64		size = Max(c->max_points, 65536);

		while (size < need)
			size *= 2;
		size = Max(Min(size, CHUNK_POINTS), need);
		if (c->x == NULL)
		{
			c->x = MemoryContextAllocHuge(st->workcxt, size * sizeof(double));
			c->y = MemoryContextAllocHuge(st->workcxt, size * sizeof(double));
			if (st->params.use_z)
				c->z = MemoryContextAllocHuge(st->workcxt, size * sizeof(double));
			if (st->params.synchronized)
				c->m = MemoryContextAllocHuge(st->workcxt, size * sizeof(double));
			c->keep = MemoryContextAllocHuge(st->workcxt, size);
		}
		else
		{
			c->x = repalloc_huge(c->x, size * sizeof(double));
			c->y = repalloc_huge(c->y, size * sizeof(double));
			if (c->z)
				c->z = repalloc_huge(c->z, size * sizeof(double));
			if (c->m)
				c->m = repalloc_huge(c->m, size * sizeof(double));
			c->keep = repalloc_huge(c->keep, size);
		}
		c->max_points = (uint32) size;
	}
	if (c->ntrajectories + 2 > c->max_trajectories)
	{
		uint32		size = Max(c->max_trajectories * 2, 1024);

		c->offsets = c->offsets == NULL
			? MemoryContextAllocHuge(st->workcxt, size * sizeof(uint32))
			: repalloc_huge(c->offsets, size * sizeof(uint32));
		c->offsets[0] = 0;
		c->max_trajectories = size;
	}
}

/* Record the kept vertices of the chunk in the partition's bits. */
static void
ChunkStoreBits(SimplifyState *st)
{
	SimplifyPartition *part = st->part;
	SimplifyChunk *c = &st->chunk;
	int64		need = (c->first_bit + c->npoints + 7) / 8;

	if (need > part->keep_bytes)
	{
		int64		size = Max(need, 2 * part->keep_bytes);

		part->keep_bits = part->keep_bits == NULL
			? MemoryContextAllocHuge(st->partcxt, size)
			: repalloc_huge(part->keep_bits, size);
		memset(part->keep_bits + part->keep_bytes, 0, size - part->keep_bytes);
		part->keep_bytes = size;
	}
	for (uint32 i = 0; i < c->npoints; i++)
		if (c->keep[i])
		{
			int64		bit = c->first_bit + i;

			part->keep_bits[bit >> 3] |= (uint8) (1 << (bit & 7));
		}
}

/*
 * Choose the device once the choice cannot change: at once for
 * geoacc.device = gpu or cpu; for auto, when the vertices read so far reach
 * geoacc.gpu_threshold, or at the end with all of them.  That is the choice
 * GeoaccCallBegin would make with the partition's total.
 */
static void
BeginCall(SimplifyState *st, bool at_end)
{
	int64		points = st->chunk.first_bit + st->chunk.npoints;

	if (st->call_begun ||
		(geoacc_device_setting == GEOACC_SETTING_AUTO && !at_end && points < geoacc_gpu_threshold))
		return;
	GeoaccCallBegin(&st->call, "gpu_dp_simplify", points);
	st->call.start = st->start; /* the clock covers reading the rows too */
	st->call_begun = true;
	if (st->call.device == GEOACC_DEVICE_GPU)
		st->device_budget = GeoaccDeviceMemoryAvailable();
}

/* Simplify the gathered trajectories. */
static void
ChunkFlush(SimplifyState *st, bool at_end)
{
	SimplifyChunk *c = &st->chunk;
	GeoaccTrajectories batch;
	GeoaccSimplifyTiming spent;

	BeginCall(st, at_end);
	if (c->ntrajectories == 0)
		return;
	batch.ntrajectories = c->ntrajectories;
	batch.offsets = c->offsets;
	batch.x = c->x;
	batch.y = c->y;
	batch.z = c->z;
	batch.m = c->m;
	GeoaccCheck(geoacc_dp_simplify(st->call.device, &batch, st->distance, st->params.tolerance, c->keep, &spent));
	ChunkStoreBits(st);
	st->spent.transfer_ms += spent.transfer_ms;
	st->spent.compute_ms += spent.compute_ms;
	st->spent.pieces += spent.pieces;
	st->spent.rounds += spent.rounds;
	st->spent.cpu_points += spent.cpu_points;
	st->nchunks++;
	c->first_bit += c->npoints;
	c->npoints = 0;
	c->ntrajectories = 0;
}

/* Append a trajectory of at least 3 vertices, coordinates split by axis. */
static void
ChunkAppend(SimplifyState *st, const GeoaccLine *line)
{
	SimplifyChunk *c = &st->chunk;
	const double *p = line->coords;
	int			nd = line->ndims;
	uint32		n = line->npoints;

	/* a chunk fits the host limit, and the device once it is chosen */
	BeginCall(st, false);
	if (c->npoints > 0 &&
		((uint64) c->npoints + n > CHUNK_POINTS ||
		 (st->device_budget > 0 &&
		  geoacc_dp_simplify_device_bytes((uint64) c->npoints + n, c->ntrajectories + 1, st->distance,
										  st->params.tolerance) > st->device_budget)))
		ChunkFlush(st, false);
	ChunkReserve(st, n);
	for (uint32 i = 0; i < n; i++, p += nd)
	{
		uint32		k = c->npoints + i;

		c->x[k] = p[0];
		c->y[k] = p[1];
		if (c->z)
			c->z[k] = p[2];
		if (c->m)
			c->m[k] = p[nd - 1];
	}
	c->npoints += n;
	c->offsets[++c->ntrajectories] = c->npoints;
}

/* ---------------------------------------------------------- partitions */

/* Check one row's trajectory and gather it if it has anything to drop. */
static void
ReadRow(SimplifyState *st, int64 row, Datum datum)
{
	struct varlena *geom = PG_DETOAST_DATUM(datum);
	char		what[64];
	GeoaccLine	line;

	snprintf(what, sizeof(what), "row " INT64_FORMAT, row + 1);
	GeoaccLineFromGeometry(geom, &line, what);
	if (!st->have_srid)
	{
		st->have_srid = true;
		st->srid = line.srid;
		st->srid_row = row;
	}
	else if (line.srid != st->srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("mixed SRIDs in a window partition"),
				 errdetail("Row " INT64_FORMAT " has SRID %d, row " INT64_FORMAT " has SRID %d.",
						   row + 1, line.srid, st->srid_row + 1, st->srid),
				 errhint("Transform the trajectories to one SRID, or partition by SRID.")));
	if (line.npoints == 0)
		return;					/* empty stays empty */
	GeoaccCheckTrajectory(&line, what);
	if (st->params.use_z && !line.has_z)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s has no Z values", what),
				 errhint("use_z => true needs LINESTRING ZM trajectories.")));
	if (line.npoints >= 3)
		ChunkAppend(st, &line);
}

/*
 * Read every row of the partition, simplify in chunks, and leave the keep
 * bits and each row's first bit in the partition's memory.
 */
static void
ComputePartition(WindowObject win, FunctionCallInfo fcinfo, SimplifyPartition *part)
{
	int64		nrows = WinGetPartitionRowCount(win);
	bool		stable_params = get_fn_expr_arg_stable(fcinfo->flinfo, 1) &&
		get_fn_expr_arg_stable(fcinfo->flinfo, 2) && get_fn_expr_arg_stable(fcinfo->flinfo, 3);
	SimplifyState st;
	MemoryContext rowcxt;

	if (nrows > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("window partition has too many rows for gpu_dp_simplify"),
				 errdetail("The partition has " INT64_FORMAT " rows; the limit is %d.", nrows, PG_INT32_MAX),
				 errhint("Use PARTITION BY to split the rows.")));

	memset(&st, 0, sizeof(st));
	INSTR_TIME_SET_CURRENT(st.start);
	st.part = part;
	st.partcxt = GetMemoryChunkContext(part);
	st.workcxt = AllocSetContextCreate(CurrentMemoryContext, "gpu_dp_simplify", ALLOCSET_DEFAULT_SIZES);
	rowcxt = AllocSetContextCreate(st.workcxt, "gpu_dp_simplify row", ALLOCSET_DEFAULT_SIZES);
	part->first_bit = MemoryContextAllocHuge(st.partcxt, (nrows + 1) * sizeof(int64));

	ReadParams(win, 0, &st.params);
	st.distance = st.params.synchronized
		? (st.params.use_z ? GEOACC_SIMPLIFY_SYNCHRONIZED_3D : GEOACC_SIMPLIFY_SYNCHRONIZED)
		: (st.params.use_z ? GEOACC_SIMPLIFY_3D : GEOACC_SIMPLIFY_PLANAR);

	for (int64 row = 0; row < nrows; row++)
	{
		MemoryContext oldcxt;
		bool		isnull,
					isout;
		Datum		datum;

		CHECK_FOR_INTERRUPTS();
		oldcxt = MemoryContextSwitchTo(rowcxt);
		part->first_bit[row] = st.chunk.first_bit + st.chunk.npoints;
		if (!stable_params && row > 0)
		{
			SimplifyParams p;

			ReadParams(win, row, &p);
			if (!SameParams(&p, &st.params))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("tolerance, synchronized and use_z must be the same on every row of a window partition"),
						 errdetail("Row " INT64_FORMAT " differs from row 1.", row + 1)));
		}
		if (!st.params.null)
		{
			datum = WinGetFuncArgInPartition(win, 0, (int) row, WINDOW_SEEK_HEAD, false, &isnull, &isout);
			if (!isnull)
				ReadRow(&st, row, datum);
		}
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(rowcxt);
	}
	ChunkFlush(&st, true);
	part->first_bit[nrows] = st.chunk.first_bit;
	part->all_null = st.params.null;
	part->computed = true;

	st.call.items = st.chunk.first_bit;
	GeoaccCallEnd(&st.call);
	elog(DEBUG1, "gpu_dp_simplify: " INT64_FORMAT " rows, " INT64_FORMAT " vertices simplified on the %s "
		 "in %d chunks, %u device pieces, %u rounds: device compute %.3f ms, transfers %.3f ms, "
		 UINT64_FORMAT " vertices on the CPU",
		 nrows, st.chunk.first_bit, st.call.device == GEOACC_DEVICE_GPU ? "GPU" : "CPU", st.nchunks,
		 st.spent.pieces, st.spent.rounds, st.spent.compute_ms, st.spent.transfer_ms,
		 (uint64) st.spent.cpu_points);
	MemoryContextDelete(st.workcxt);
}

/* The row's trajectory with only its kept vertices (itself if all stay). */
static Datum
SimplifiedRow(const SimplifyPartition *part, int64 row, Datum datum)
{
	int64		bit = part->first_bit[row];
	int64		end = part->first_bit[row + 1];
	struct varlena *geom;
	GeoaccLine	line;
	uint32		kept = 0;
	double	   *coords;
	double	   *out;

	if (bit == end)
		return datum;			/* empty, or 1-2 vertices: nothing to drop */
	for (int64 b = bit; b < end; b++)
		kept += (part->keep_bits[b >> 3] >> (b & 7)) & 1;

	geom = PG_DETOAST_DATUM(datum);
	GeoaccLineFromGeometry(geom, &line, "the current row");
	if (kept == line.npoints)
		return PointerGetDatum(geom);

	coords = palloc_extended((Size) kept * line.ndims * sizeof(double), MCXT_ALLOC_HUGE);
	out = coords;
	for (uint32 i = 0; i < line.npoints; i++)
	{
		int64		b = bit + i;

		if ((part->keep_bits[b >> 3] >> (b & 7)) & 1)
		{
			memcpy(out, line.coords + (size_t) i * line.ndims, line.ndims * sizeof(double));
			out += line.ndims;
		}
	}
	return GeoaccLineToGeometry(coords, kept, line.has_z, line.has_m, line.srid);
}

/*
 * gpu_dp_simplify(traj, tolerance, synchronized, use_z) OVER (...)
 */
PG_FUNCTION_INFO_V1(gpu_dp_simplify);
Datum
gpu_dp_simplify(PG_FUNCTION_ARGS)
{
	WindowObject win = PG_WINDOW_OBJECT();
	SimplifyPartition *part = WinGetPartitionLocalMemory(win, sizeof(SimplifyPartition));
	bool		isnull;
	Datum		datum;

	if (!part->computed)
		ComputePartition(win, fcinfo, part);
	datum = WinGetFuncArgCurrent(win, 0, &isnull);
	if (isnull || part->all_null)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(SimplifiedRow(part, WinGetCurrentPosition(win), datum));
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
				 errdetail("The original has SRID %d, the simplified line SRID %d.", o.srid, s.srid)));
	if (o.npoints == 0 || s.npoints == 0)
		PG_RETURN_NULL();
	GeoaccCheck(geoacc_compression_measures(o.coords, o.npoints, o.ndims, s.coords, s.npoints, s.ndims,
											&measures));
	values[0] = Float8GetDatum(measures.compression_ratio);
	values[1] = Float8GetDatum(measures.length_loss_rate);
	nulls[1] = isnan(measures.length_loss_rate);
	values[2] = Float8GetDatum(measures.dtw_distance);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
