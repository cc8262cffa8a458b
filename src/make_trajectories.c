/*
 * make_trajectories.c
 *
 * gpu_make_trajectories(fixes_sql, max_gap, tolerance, preserve_collapsed,
 * synchronized, max_speed): trajectories straight from raw fixes, one row
 * per (object_id, part).  The inner query runs to completion into a
 * receiver that checks each fix and appends it to arrays (so it may use
 * parallel workers, and no tuple is copied into an SPI table); the core
 * sorts, deduplicates, splits and simplifies all of them in one call; the
 * parts go into the result's tuplestore.
 */
#include "geoacc.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/int.h"
#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* How the time column is read. */
typedef enum TimeKind
{
	TIME_TIMESTAMP,				/* timestamptz or timestamp: epoch microseconds, whole numbers */
	TIME_FLOAT8,
	TIME_FLOAT4,
	TIME_INT2,
	TIME_INT4,
	TIME_INT8,
	TIME_NUMERIC
} TimeKind;

/* The fixes of the inner query's rows, in the core's layout. */
typedef struct FixReceiver
{
	MemoryContext cxt;			/* where the arrays live */
	TimeKind	time_kind;
	uint64		row;			/* rows received */
	uint64		skipped;		/* rows with a NULL or an empty point */
	uint32		count;
	uint32		capacity;
	int64	   *ids;
	double	   *t;
	double	   *x;
	double	   *y;
	bool		have_srid;
	int32		srid;
	uint64		srid_row;
} FixReceiver;

#define FIXES_ARG "fixes_sql"

/* ------------------------------------------------------------ reading */

/* How a time of this type is read; false for a type that is no time. */
static bool
TimeKindOf(Oid type, TimeKind *kind)
{
	switch (type)
	{
		case TIMESTAMPTZOID:
		case TIMESTAMPOID:
			*kind = TIME_TIMESTAMP;
			return true;
		case FLOAT8OID:
			*kind = TIME_FLOAT8;
			return true;
		case FLOAT4OID:
			*kind = TIME_FLOAT4;
			return true;
		case INT2OID:
			*kind = TIME_INT2;
			return true;
		case INT4OID:
			*kind = TIME_INT4;
			return true;
		case INT8OID:
			*kind = TIME_INT8;
			return true;
		case NUMERICOID:
			*kind = TIME_NUMERIC;
			return true;
		default:
			return false;
	}
}

static bool
IsTimeType(Oid type)
{
	TimeKind	kind;

	return TimeKindOf(type, &kind);
}

/* The columns of fixes_sql: (object_id, t, geom). */
static const GeoaccQueryForm FixQueryForm = {3, {{"object_id", GeoaccIsIdType}, {"t", IsTimeType},
												 {"geom", GeoaccIsGeometryType}}};

/*
 * Microseconds from 1970 whose M in seconds still tells every microsecond
 * apart: within 2^33 s (1697 to 2242) a double's step is below 1 us.
 */
#define EXACT_EPOCH_US (INT64CONST(8589934592) * USECS_PER_SEC)

/*
 * The time of a fix: microseconds from 1970 for a timestamp (a whole number,
 * so that gaps compare exactly; the core makes them seconds, us / 1e6, as
 * extract(epoch FROM t)::float8 does), else seconds.  ERROR when it is not
 * finite, or is a timestamp that a double does not hold to the microsecond.
 */
static double
FixTime(FixReceiver *r, Datum datum, int64 id)
{
	double		t = 0;

	switch (r->time_kind)
	{
		case TIME_TIMESTAMP:
			{
				Timestamp	ts = DatumGetTimestamp(datum);
				int64		epoch_us;

				if (TIMESTAMP_NOT_FINITE(ts))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg(FIXES_ARG " row " UINT64_FORMAT " has an infinite time", r->row),
							 errdetail("Object " INT64_FORMAT " has t = %s.", id,
									   TIMESTAMP_IS_NOBEGIN(ts) ? "-infinity" : "infinity")));
				if (pg_add_s64_overflow(ts, (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY,
										&epoch_us) || epoch_us < -EXACT_EPOCH_US || epoch_us > EXACT_EPOCH_US)
					ereport(ERROR,
							(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
							 errmsg(FIXES_ARG " row " UINT64_FORMAT " has a time out of range", r->row),
							 errdetail("Object " INT64_FORMAT " has t = %s.", id,
									   DatumGetCString(DirectFunctionCall1(timestamptz_out, datum))),
							 errhint("Times are taken within 2^33 seconds of 1970 (the years 1697 to 2242), "
									 "where a trajectory's M holds every microsecond.")));
				return (double) epoch_us;
			}
		case TIME_FLOAT8:
			t = DatumGetFloat8(datum);
			break;
		case TIME_FLOAT4:
			t = DatumGetFloat4(datum);
			break;
		case TIME_INT2:
			return DatumGetInt16(datum);
		case TIME_INT4:
			return DatumGetInt32(datum);
		case TIME_INT8:
			return (double) DatumGetInt64(datum);
		case TIME_NUMERIC:
			t = DatumGetFloat8(DirectFunctionCall1(numeric_float8, datum));
			break;
	}
	if (!isfinite(t))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(FIXES_ARG " row " UINT64_FORMAT " has a time that is not a finite number", r->row),
				 errdetail("Object " INT64_FORMAT " has t = %g.", id, t)));
	return t;
}

/* Check the point of a fix and its SRID. */
static void
CheckPoint(FixReceiver *r, const GeoaccPoint *p, int64 id)
{
	if (p->type != GEOACC_POINTTYPE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(FIXES_ARG " row " UINT64_FORMAT " is a %s, not a Point", r->row,
						GeoaccGeometryTypeName(p->type)),
				 errdetail("The row is of object " INT64_FORMAT ".", id),
				 errhint("A fix is one position: a POINT geometry.")));
	if (p->has_z || p->has_m)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(FIXES_ARG " row " UINT64_FORMAT " has %s coordinates", r->row,
						p->has_z ? (p->has_m ? "Z and M" : "Z") : "M"),
				 errdetail("The row is of object " INT64_FORMAT ".", id),
				 errhint("Fixes are 2D points: use ST_Force2D(geom); the time comes from t.")));
	if (!r->have_srid)
	{
		r->have_srid = true;
		r->srid = p->srid;
		r->srid_row = r->row;
	}
	else if (p->srid != r->srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fixes have mixed SRIDs"),
				 errdetail(FIXES_ARG " row " UINT64_FORMAT " has SRID %d, row " UINT64_FORMAT " SRID %d.",
						   r->row, p->srid, r->srid_row, r->srid),
				 errhint("Use ST_Transform() to bring the fixes to one SRID.")));
	for (int d = 0; d < 2; d++)
		if (!isfinite(p->coords[d]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg(FIXES_ARG " row " UINT64_FORMAT " has a non-finite coordinate", r->row),
					 errdetail("Object " INT64_FORMAT " has %c = %g.", id, "XY"[d], p->coords[d])));
}

/* Room for one more fix. */
static void
Reserve(FixReceiver *r)
{
	MemoryContext old;
	uint32		capacity;

	if (r->count < r->capacity)
		return;
	if (r->count == PG_UINT32_MAX - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many fixes"),
				 errdetail("gpu_make_trajectories takes fewer than 2^32 - 1 fixes in one call."),
				 errhint("Make the trajectories of groups of objects in separate calls, for example with "
						 "WHERE object_id %% 4 = 0, 1, 2 and 3.")));
	capacity = r->capacity == 0 ? 65536 : (uint32) Min((uint64) r->capacity * 2, PG_UINT32_MAX - 1);
	old = MemoryContextSwitchTo(r->cxt);
	if (r->ids == NULL)
	{
		/* work memory: the core reads them (in the GPU service, when there is one) */
		r->ids = GeoaccWorkAlloc(capacity * sizeof(int64));
		r->t = GeoaccWorkAlloc(capacity * sizeof(double));
		r->x = GeoaccWorkAlloc(capacity * sizeof(double));
		r->y = GeoaccWorkAlloc(capacity * sizeof(double));
	}
	else
	{
		r->ids = GeoaccWorkRealloc(r->ids, capacity * sizeof(int64));
		r->t = GeoaccWorkRealloc(r->t, capacity * sizeof(double));
		r->x = GeoaccWorkRealloc(r->x, capacity * sizeof(double));
		r->y = GeoaccWorkRealloc(r->y, capacity * sizeof(double));
	}
	MemoryContextSwitchTo(old);
	GeoaccAdviseHugePages(r->ids, capacity * sizeof(int64));
	GeoaccAdviseHugePages(r->t, capacity * sizeof(double));
	GeoaccAdviseHugePages(r->x, capacity * sizeof(double));
	GeoaccAdviseHugePages(r->y, capacity * sizeof(double));
	r->capacity = capacity;
}

/*
 * One row of the inner query: a row with a NULL or an empty point is
 * skipped (as a strict aggregate skips it, and ST_MakeLine an empty point);
 * anything else must be a valid fix.
 */
static void
FixReceive(const GeoaccQueryRow *row, void *arg)
{
	FixReceiver *r = arg;
	GeoaccPoint point;
	double		t;

	r->row = row->number;
	if (row->nulls[0] || row->nulls[1] || row->nulls[2])
	{
		r->skipped++;
		return;
	}
	GeoaccPointFromGeometry((struct varlena *) PG_DETOAST_DATUM_PACKED(row->values[2]), &point);
	if (point.type == GEOACC_POINTTYPE && point.empty)
	{
		r->skipped++;
		return;
	}
	CheckPoint(r, &point, row->id);
	TimeKindOf(row->types[1], &r->time_kind);
	t = FixTime(r, row->values[1], row->id);
	Reserve(r);
	r->ids[r->count] = row->id;
	r->t[r->count] = t;
	r->x[r->count] = point.coords[0];
	r->y[r->count] = point.coords[1];
	r->count++;
}

/* Run fixes_sql and collect its fixes. */
static void
ReadFixes(FixReceiver *r, const char *sql)
{
	GeoaccInnerQuery query = {FIXES_ARG, &FixQueryForm, 1, "(object_id, t, geom)",
		"object_id is an integer; t a timestamptz, a timestamp or a number of seconds; geom a POINT geometry.",
	true, FixReceive, r};

	memset(r, 0, sizeof(*r));
	r->cxt = CurrentMemoryContext;
	GeoaccInnerQueryRead(&query, sql);
}

/* ------------------------------------------------------------ arguments */

/* An interval in microseconds as PostgreSQL compares intervals: a month is 30 days, a day 24 hours. */
static double
IntervalMicroseconds(const Interval *span)
{
	int128		us = (int128) span->time + (int128) span->day * USECS_PER_DAY +
		(int128) span->month * DAYS_PER_MONTH * USECS_PER_DAY;

	return (double) us;
}

/* The rules with max_gap in microseconds; SetTimeUnit() fixes the unit once the time column's type is known. */
static void
RulesFromArgs(FunctionCallInfo fcinfo, GeoaccTrajectoryRules *rules, bool *preserve_collapsed)
{
	memset(rules, 0, sizeof(*rules));
	rules->time_unit = 1e6;
	rules->max_gap = PG_ARGISNULL(1) ? INFINITY : IntervalMicroseconds(PG_GETARG_INTERVAL_P(1));
	if (rules->max_gap < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_gap must not be negative"),
				 errdetail("max_gap is %s.",
						   DatumGetCString(DirectFunctionCall1(interval_out, PG_GETARG_DATUM(1))))));
	rules->simplify = !PG_ARGISNULL(2);
	if (rules->simplify)
	{
		rules->tolerance = PG_GETARG_FLOAT8(2);
		if (!(rules->tolerance >= 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("tolerance must be a non-negative number"),
					 errdetail("tolerance is %g.", rules->tolerance)));
	}
	*preserve_collapsed = !PG_ARGISNULL(3) && PG_GETARG_BOOL(3);
	rules->distance = !PG_ARGISNULL(4) && PG_GETARG_BOOL(4) ? GEOACC_SIMPLIFY_SYNCHRONIZED : GEOACC_SIMPLIFY_PLANAR;
	rules->max_speed = PG_ARGISNULL(5) ? INFINITY : PG_GETARG_FLOAT8(5);
	if (!(rules->max_speed >= 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_speed must be a non-negative number"),
				 errdetail("max_speed is %g.", rules->max_speed)));
}

/*
 * Timestamps are read in microseconds and compared with max_gap in
 * microseconds, exactly; times that are numbers are seconds, and so is
 * max_gap then.
 */
static void
SetTimeUnit(GeoaccTrajectoryRules *rules, TimeKind kind)
{
	if (kind == TIME_TIMESTAMP)
		return;
	rules->time_unit = 1;
	rules->max_gap /= 1e6;
}

/* ------------------------------------------------------------- results */

/* Frees the core's parts when the memory context goes away (statement abort included). */
typedef struct PartsHolder
{
	GeoaccTrajectoryParts parts;
	MemoryContextCallback callback;
} PartsHolder;

static void
PartsHolderRelease(void *arg)
{
	geoacc_trajectory_parts_free(&((PartsHolder *) arg)->parts);
}

/* One row per part into the tuplestore; a collapsed simplification is NULL, as ST_Simplify returns it. */
static void
PutParts(ReturnSetInfo *rsinfo, const GeoaccTrajectoryParts *parts, int32 srid, bool simplified,
		 bool preserve_collapsed)
{
	MemoryContext rowcxt = AllocSetContextCreate(CurrentMemoryContext, "gpu_make_trajectories row",
												 ALLOCSET_DEFAULT_SIZES);
	uint32		max_points = 0;
	double	   *coords;

	for (uint32 p = 0; p < parts->nparts; p++)
		max_points = Max(max_points, parts->offsets[p + 1] - parts->offsets[p]);
	coords = palloc_extended((Size) Max(max_points, 1) * 3 * sizeof(double), MCXT_ALLOC_HUGE);
	for (uint32 p = 0; p < parts->nparts; p++)
	{
		uint32		first = parts->offsets[p];
		uint32		n = parts->offsets[p + 1] - first;
		Datum		values[3];
		bool		nulls[3] = {false, false, false};
		MemoryContext old = MemoryContextSwitchTo(rowcxt);

		values[0] = Int64GetDatum(parts->object_ids[p]);
		values[1] = Int32GetDatum((int32) parts->part_numbers[p]);
		if (simplified && !preserve_collapsed &&
			GeoaccLineCollapsed(parts->fixes[p], n, parts->x[first], parts->y[first],
								parts->x[first + n - 1], parts->y[first + n - 1]))
			nulls[2] = true;
		else
		{
			for (uint32 i = 0; i < n; i++)
			{
				coords[3 * i] = parts->x[first + i];
				coords[3 * i + 1] = parts->y[first + i];
				coords[3 * i + 2] = parts->m[first + i];
			}
			values[2] = GeoaccLinesToGeometry(GEOACC_LINETYPE, (const double *const *) &coords, &n, 1, false, true,
											  srid);
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(old);
		MemoryContextReset(rowcxt);
		if ((p & 0xFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(coords);
	MemoryContextDelete(rowcxt);
}

/* The core's trajectories of the fixes, as a step of a call. */
typedef struct MakeRun
{
	GeoaccFixes fixes;
	GeoaccTrajectoryRules rules;
	GeoaccTrajectoryParts parts;	/* the core's, in shared memory when the GPU service made them */
	GeoaccMakeTrajectoriesTiming spent;
} MakeRun;

static GeoaccStatus
MakeOn(GeoaccDevice device, void *arg)
{
	MakeRun    *r = arg;

	/* a failed run leaves no parts behind */
	return geoacc_make_trajectories(device, &r->fixes, &r->rules, &r->parts, &r->spent);
}

/*
 * gpu_make_trajectories(fixes_sql, max_gap, tolerance, preserve_collapsed,
 * synchronized, max_speed): (object_id, part, trajectory) for every part of
 * every object of the fixes (object_id, t, geom) that fixes_sql returns
 */
PG_FUNCTION_INFO_V1(gpu_make_trajectories);
Datum
gpu_make_trajectories(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GeoaccTrajectoryRules rules;
	bool		preserve_collapsed;
	FixReceiver fixes;
	GeoaccMakeTrajectoriesTiming spent;
	MakeRun		run = {{0}};
	GeoaccWork	work = {MakeOn, &run, {0, 0}, false, sizeof(run)};
	GeoaccDevice device;
	PartsHolder *holder;
	GeoaccStages stages;

	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0))
		return (Datum) 0;
	RulesFromArgs(fcinfo, &rules, &preserve_collapsed);

	GeoaccStagesStart(&stages);
	ReadFixes(&fixes, text_to_cstring(PG_GETARG_TEXT_PP(0)));
	GeoaccStagesLap(&stages, "reading");
	if (fixes.count == 0)
		return (Datum) 0;
	SetTimeUnit(&rules, fixes.time_kind);
	if ((rules.simplify || isfinite(rules.max_speed)) && GeoaccSridIsGeographic(fixes.srid))
		ereport(NOTICE,
				(errmsg("gpu_make_trajectories measures in the units of SRID %d: degrees", fixes.srid),
				 errdetail("The tolerance is then in degrees and max_speed in degrees per second, not metres."),
				 errhint("Transform the fixes to a projected SRID in fixes_sql, for example ST_Transform(geom, 32618) "
						 "for UTM zone 18N.")));

	run.fixes.count = fixes.count;
	run.fixes.object_ids = fixes.ids;
	run.fixes.t = fixes.t;
	run.fixes.x = fixes.x;
	run.fixes.y = fixes.y;
	run.rules = rules;
	holder = palloc0(sizeof(PartsHolder));
	holder->callback.func = PartsHolderRelease;
	holder->callback.arg = holder;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &holder->callback);
	work.need.bytes = work.need.least = geoacc_make_trajectories_device_bytes(fixes.count);
	GeoaccStagesSkip(&stages);
	device = GeoaccCallRun("gpu_make_trajectories", fixes.count, &work);
	/* nothing can fail between the core's return and the parts having their owner */
	holder->parts = run.parts;
	spent = run.spent;
	GeoaccStagesLap(&stages, "making the parts");
	GeoaccWorkFree(fixes.ids);
	GeoaccWorkFree(fixes.t);
	GeoaccWorkFree(fixes.x);
	GeoaccWorkFree(fixes.y);

	GeoaccStagesSkip(&stages);
	PutParts(rsinfo, &holder->parts, fixes.srid, rules.simplify, preserve_collapsed);
	GeoaccStagesLap(&stages, "writing the rows");
	elog(DEBUG1, "gpu_make_trajectories: " UINT64_FORMAT " rows (" UINT64_FORMAT " skipped for a NULL or an empty "
		 "point), %u fixes on the %s: %u duplicates dropped, %u parts (%u more of one fix dropped); "
		 "%u GPU pieces, %u sorted runs, " UINT64_FORMAT " fixes of objects too large for the device; %s; "
		 "in the core: sorting and splitting %.1f ms, transfers %.1f ms, host merging %.1f ms, simplifying %.1f ms",
		 fixes.row, fixes.skipped, fixes.count, GeoaccDeviceName(device),
		 holder->parts.duplicates, holder->parts.nparts, holder->parts.single_fix_parts, spent.pieces, spent.runs,
		 (uint64) spent.cpu_fixes, GeoaccStagesText(&stages), spent.compute_ms, spent.transfer_ms, spent.host_ms,
		 spent.simplify_ms);
	geoacc_trajectory_parts_free(&holder->parts);
	return (Datum) 0;
}
