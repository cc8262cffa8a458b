/*
 * events.c
 *
 * Vessel events: gpu_encounters() (the segment join's pairs merged into
 * encounters on the device), gpu_stops() and gpu_zone_visits().  The
 * trajectories are read as the segment join reads them (segment_join.c:
 * one inner query of (id, traj) rows, checked, laid out in id order); the
 * zones by an inner query of (id, polygon) rows.  The core forms the events
 * (events.cpp, events.cu); here they become rows: times as timestamptz
 * (to_timestamp()'s rounding), the filters that compare intervals
 * (min_duration, in microseconds as PostgreSQL compares intervals), the
 * numbering, and the positions, interpolated on the input's own
 * coordinates (for a geography its longitudes and latitudes).
 */
#include "geoacc.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/*
 * Frees the core's events of a work (its storage at *storage, in the
 * work's palloc'd arg) when the memory context goes away (statement abort
 * included), and when the call is done with them.
 */
typedef struct EventsHolder
{
	void	  **storage;
	MemoryContextCallback callback;
} EventsHolder;

static void
EventsHolderRelease(void *arg)
{
	EventsHolder *holder = arg;

	geoacc_events_free(*holder->storage);
	*holder->storage = NULL;
}

static EventsHolder *
EventsHolderNew(void **storage)
{
	EventsHolder *holder = palloc0(sizeof(EventsHolder));

	holder->storage = storage;
	holder->callback.func = EventsHolderRelease;
	holder->callback.arg = holder;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &holder->callback);
	return holder;
}

/* An interval argument in microseconds as PostgreSQL compares intervals (a month 30 days); ERROR if negative. */
static int64
IntervalArg(FunctionCallInfo fcinfo, int arg, const char *argname)
{
	const Interval *span = PG_GETARG_INTERVAL_P(arg);
	int128		us = (int128) span->time + (int128) span->day * USECS_PER_DAY +
		(int128) span->month * DAYS_PER_MONTH * USECS_PER_DAY;

	if (us < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative", argname),
				 errdetail("%s is %s.", argname,
						   DatumGetCString(DirectFunctionCall1(interval_out, PG_GETARG_DATUM(arg))))));
	if (us > PG_INT64_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is too large", argname)));
	return (int64) us;
}

/* Epoch seconds as timestamptz, as to_timestamp(float8) rounds them (to the microsecond). */
static Datum
TimeFromEpoch(double seconds)
{
	return DirectFunctionCall1(float8_timestamptz, Float8GetDatum(seconds));
}

/* The position of a trajectory at time t on its segment seg (from 0), in its own coordinates: a POINT. */
static Datum
PositionAt(const GeoaccLine *line, uint32 seg, double t)
{
	const int	nd = line->ndims;
	const double *p0 = line->coords + (Size) seg * nd;
	const double *p1 = p0 + nd;
	const double m0 = p0[nd - 1];
	const double m1 = p1[nd - 1];
	const int	n = line->has_z ? 3 : 2;
	double		out[3];

	for (int k = 0; k < n; k++)
	{
		if (t <= m0)
			out[k] = p0[k];
		else if (t >= m1)
			out[k] = p1[k];
		else
			out[k] = p0[k] + (p1[k] - p0[k]) * ((t - m0) / (m1 - m0));
	}
	return GeoaccPointToGeometry(out, line->has_z, line->srid);
}

/* ------------------------------------------------------------ encounters */

/*
 * The encounters as a work the GPU service can run: its inputs and outputs
 * in the arg by value, the trajectories' arrays in work memory, the core's
 * events in its output memory, run() calling the core only.
 */
typedef struct EncountersRun
{
	GeoaccTrajectories a;
	GeoaccTrajectories b;
	bool		self;			/* a with itself: b unused */
	double		distance;
	double		max_gap;
	GeoaccJoinMethod method;
	bool		speeds;
	GeoaccEncounters result;
	GeoaccJoinStats stats;
} EncountersRun;

static GeoaccStatus
EncountersOn(GeoaccDevice device, void *arg)
{
	EncountersRun *r = arg;

	/* a run on the CPU after the GPU failed starts afresh */
	geoacc_events_free(r->result.storage);
	memset(&r->result, 0, sizeof(r->result));
	return geoacc_encounters(device, &r->a, r->self ? NULL : &r->b, r->distance, r->max_gap, r->method, r->speeds,
							 &r->result, &r->stats);
}

/*
 * gpu_encounters(a_sql, b_sql, distance, min_duration, max_gap, max_speed,
 * method): (a_id, b_id, encounter, start_time, end_time, duration,
 * min_distance, cpa_time, a_position, b_position) for every encounter of a
 * trajectory of a_sql with one of b_sql (of a_sql, a_id < b_id, when b_sql
 * is NULL)
 */
PG_FUNCTION_INFO_V1(gpu_encounters);
Datum
gpu_encounters(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	JoinRows	a_rows,
				b_rows;
	JoinSrid	srid = {0};
	bool		self = PG_ARGISNULL(1);
	double		distance;
	int64		min_duration;
	int64		max_gap;
	bool		speeds = !PG_ARGISNULL(5);
	double		max_speed = 0;
	GeoaccJoinMethod method;
	GeoaccEnu	frame;
	bool		geodetic;
	JoinTracks	a,
				b;
	GeoaccTrajectories va,
				vb;
	EncountersRun *run = palloc0(sizeof(EncountersRun));
	EventsHolder *holder = EventsHolderNew(&run->result.storage);
	GeoaccWork	work = {EncountersOn, run, {0, 0}, false, sizeof(*run)};
	GeoaccStages stages;
	GeoaccDevice device;
	MemoryContext geometries;
	uint32		previous_a = 0,
				previous_b = 0;
	int32		number = 0;
	uint64		kept = 0;
	uint64		encounters;

	GeoaccStagesStart(&stages);
	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(2) || PG_ARGISNULL(3) || PG_ARGISNULL(4) || PG_ARGISNULL(6))
		return (Datum) 0;
	distance = PG_GETARG_FLOAT8(2);
	if (!isfinite(distance) || !(distance > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("distance must be a positive, finite number"),
				 errdetail("distance is %g.", distance)));
	min_duration = IntervalArg(fcinfo, 3, "min_duration");
	max_gap = IntervalArg(fcinfo, 4, "max_gap");
	if (speeds)
	{
		max_speed = PG_GETARG_FLOAT8(5);
		if (isnan(max_speed) || !(max_speed >= 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_speed must be a number, at least 0"),
					 errdetail("max_speed is %g.", max_speed),
					 errhint("Leave max_speed NULL to keep encounters at any speed.")));
	}
	method = GeoaccJoinMethodFromText(text_to_cstring(PG_GETARG_TEXT_PP(6)));

	geometries = AllocSetContextCreate(CurrentMemoryContext, "gpu_encounters geometries", ALLOCSET_DEFAULT_SIZES);
	GeoaccJoinRowsInit(&a_rows, geometries);
	GeoaccJoinRowsInit(&b_rows, geometries);
	GeoaccJoinRowsFromQuery(&a_rows, &srid, text_to_cstring(PG_GETARG_TEXT_PP(0)), "a_sql");
	if (!self)
		GeoaccJoinRowsFromQuery(&b_rows, &srid, text_to_cstring(PG_GETARG_TEXT_PP(1)), "b_sql");
	GeoaccStagesLap(&stages, "read");
	GeoaccJoinCheckProjected(&srid, "gpu_encounters");
	geodetic = GeoaccJoinFrame(&srid, &frame);

	/* measured in X Y, a geography in its Earth-centred frame (3D); the lines stay for the positions */
	a = GeoaccJoinTracksFromRows(&a_rows, geodetic, false, geodetic ? &frame : NULL);
	if (self)
		GeoaccJoinCheckSelfIds(&a);
	b = self ? a : GeoaccJoinTracksFromRows(&b_rows, geodetic, false, geodetic ? &frame : NULL);
	va = GeoaccJoinTracksView(&a);
	vb = GeoaccJoinTracksView(&b);
	GeoaccStagesLap(&stages, "prepare");

	run->a = va;
	run->b = vb;
	run->self = self;
	run->distance = distance;
	run->max_gap = (double) max_gap / USECS_PER_SEC;
	run->method = method;
	run->speeds = speeds;
	work.need = geoacc_encounters_need(&va, self ? NULL : &vb);
	device = GeoaccCallRun("gpu_encounters",
						   (int64) (a.npoints - a.count) + (self ? 0 : (int64) (b.npoints - b.count)), &work);
	GeoaccStagesLap(&stages, "events");

	for (uint64 i = 0; i < run->result.count; i++)
	{
		const GeoaccEncounter *e = &run->result.items[i];
		const JoinRows *b_side = self ? &a_rows : &b_rows;
		Datum		values[10];
		bool		nulls[10] = {false};
		Datum		start,
					end;

		if (speeds && !(e->a_speed <= max_speed && e->b_speed <= max_speed))
			continue;
		start = TimeFromEpoch(e->start);
		end = TimeFromEpoch(e->end);
		if (DatumGetTimestampTz(end) - DatumGetTimestampTz(start) < min_duration)
			continue;
		number = kept > 0 && e->a_traj == previous_a && e->b_traj == previous_b ? number + 1 : 1;
		previous_a = e->a_traj;
		previous_b = e->b_traj;
		kept++;
		values[0] = Int64GetDatum(a.ids[e->a_traj]);
		values[1] = Int64GetDatum(b.ids[e->b_traj]);
		values[2] = Int32GetDatum(number);
		values[3] = start;
		values[4] = end;
		values[5] = DirectFunctionCall2(timestamp_mi, end, start);
		values[6] = Float8GetDatum(e->cpa_distance);
		values[7] = TimeFromEpoch(e->cpa_time);
		values[8] = PositionAt(&a_rows.rows[e->a_traj].line, e->a_seg, e->cpa_time);
		values[9] = PositionAt(&b_side->rows[e->b_traj].line, e->b_seg, e->cpa_time);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		if (i % 1024 == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	GeoaccStagesLap(&stages, "tuples");
	encounters = run->result.count;
	EventsHolderRelease(holder);
	MemoryContextDelete(geometries);
	GeoaccStagesLap(&stages, "release");
	elog(DEBUG1, "gpu_encounters: on the %s, " UINT64_FORMAT " x " UINT64_FORMAT " segments, " UINT64_FORMAT
		 " candidates, " UINT64_FORMAT " segment pairs merged into " UINT64_FORMAT " encounters, " UINT64_FORMAT
		 " kept; %s", GeoaccDeviceName(device), run->stats.queries, run->stats.entries,
		 run->stats.candidates, run->stats.rows, encounters, kept,
		 GeoaccStagesText(&stages));
	return (Datum) 0;
}

/* ------------------------------------------------------------------ stops */

/* The stops as a work (as EncountersRun). */
typedef struct StopsRun
{
	GeoaccTrajectories t;
	double		max_diameter;
	double		min_duration;
	GeoaccStops result;
} StopsRun;

static GeoaccStatus
StopsOn(GeoaccDevice device, void *arg)
{
	StopsRun   *r = arg;

	geoacc_events_free(r->result.storage);
	memset(&r->result, 0, sizeof(r->result));
	return geoacc_stops(device, &r->t, r->max_diameter, r->min_duration, &r->result);
}

/* The centroid of points first .. last of a line (in its own coordinates), as a POINT. */
static Datum
CentroidOf(const GeoaccLine *line, uint32 first, uint32 last)
{
	const int	nd = line->ndims;
	const int	n = line->has_z ? 3 : 2;
	double		sum[3] = {0, 0, 0};

	for (uint32 i = first; i <= last; i++)
		for (int k = 0; k < n; k++)
			sum[k] += line->coords[(Size) i * nd + k];
	for (int k = 0; k < n; k++)
		sum[k] /= (double) (last - first + 1);
	return GeoaccPointToGeometry(sum, line->has_z, line->srid);
}

/*
 * gpu_stops(traj_sql, max_diameter, min_duration): (id, stop, start_time,
 * end_time, duration, position) for every stop of the trajectories of
 * traj_sql
 */
PG_FUNCTION_INFO_V1(gpu_stops);
Datum
gpu_stops(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	JoinRows	rows;
	JoinSrid	srid = {0};
	double		max_diameter;
	int64		min_duration;
	GeoaccEnu	frame;
	bool		geodetic;
	JoinTracks	tracks;
	GeoaccTrajectories view;
	StopsRun   *run = palloc0(sizeof(StopsRun));
	EventsHolder *holder = EventsHolderNew(&run->result.storage);
	GeoaccWork	work = {StopsOn, run, {0, 0}, false, sizeof(*run)};
	GeoaccStages stages;
	GeoaccDevice device;
	MemoryContext geometries;
	int32		number = 0;

	GeoaccStagesStart(&stages);
	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		return (Datum) 0;
	max_diameter = PG_GETARG_FLOAT8(1);
	if (!isfinite(max_diameter) || !(max_diameter >= 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_diameter must be a finite number, at least 0"),
				 errdetail("max_diameter is %g.", max_diameter)));
	min_duration = IntervalArg(fcinfo, 2, "min_duration");

	geometries = AllocSetContextCreate(CurrentMemoryContext, "gpu_stops geometries", ALLOCSET_DEFAULT_SIZES);
	GeoaccJoinRowsInit(&rows, geometries);
	GeoaccJoinRowsFromQuery(&rows, &srid, text_to_cstring(PG_GETARG_TEXT_PP(0)), "traj_sql");
	GeoaccStagesLap(&stages, "read");
	GeoaccJoinCheckProjected(&srid, "gpu_stops");
	geodetic = GeoaccJoinFrame(&srid, &frame);
	tracks = GeoaccJoinTracksFromRows(&rows, geodetic, false, geodetic ? &frame : NULL);
	view = GeoaccJoinTracksView(&tracks);
	GeoaccStagesLap(&stages, "prepare");

	run->t = view;
	run->max_diameter = max_diameter;
	run->min_duration = (double) min_duration / USECS_PER_SEC;
	work.need = geoacc_stops_need(&view);
	device = GeoaccCallRun("gpu_stops", (int64) tracks.npoints, &work);
	GeoaccStagesLap(&stages, "events");

	for (uint64 i = 0; i < run->result.count; i++)
	{
		const GeoaccStop *s = &run->result.items[i];
		const uint32 base = tracks.offsets[s->traj];
		Datum		values[6];
		bool		nulls[6] = {false};
		Datum		start = TimeFromEpoch(tracks.m[s->first]);
		Datum		end = TimeFromEpoch(tracks.m[s->last]);

		/* rows of one id follow each other: their stops are numbered on */
		number = i > 0 && tracks.ids[run->result.items[i - 1].traj] == tracks.ids[s->traj] ? number + 1 : 1;
		values[0] = Int64GetDatum(tracks.ids[s->traj]);
		values[1] = Int32GetDatum(number);
		values[2] = start;
		values[3] = end;
		values[4] = DirectFunctionCall2(timestamp_mi, end, start);
		values[5] = CentroidOf(&rows.rows[s->traj].line, s->first - base, s->last - base);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	GeoaccStagesLap(&stages, "tuples");
	elog(DEBUG1, "gpu_stops: on the %s, " UINT64_FORMAT " fixes of %u trajectories, " UINT64_FORMAT " stops; %s",
		 GeoaccDeviceName(device), tracks.npoints, tracks.count, (uint64) run->result.count,
		 GeoaccStagesText(&stages));
	EventsHolderRelease(holder);
	MemoryContextDelete(geometries);
	return (Datum) 0;
}

/* ------------------------------------------------------------ zone visits */

/* One zone as read: its id and its rings in the gathered rings. */
typedef struct ZoneRow
{
	int64		id;
	uint32		order;
	uint32		first_ring;
	uint32		nrings;
} ZoneRow;

typedef struct ZoneReading
{
	const GeoaccInnerQuery *query;
	MemoryContext caller;
	GeoaccRings rings;			/* in place in the geometries, which are kept */
	ZoneRow    *zones;
	uint32		count;
	uint32		max_count;
	bool		srid_set;
	int32		srid;
	char	   *first;
} ZoneReading;

static bool
IsZoneType(Oid type)
{
	return GeoaccIsGeometryType(type);
}

/* The columns of a zones query: (id, polygon). */
static const GeoaccQueryForm ZoneQueryForm = {2, {{"id", GeoaccIsIdType}, {"polygon", IsZoneType}}};

static void
ZoneReceive(const GeoaccQueryRow *row, void *arg)
{
	ZoneReading *r = arg;
	MemoryContext old;
	struct varlena *geom;
	char	   *label;
	uint32		before;

	if (row->nulls[1])
		return;
	old = MemoryContextSwitchTo(r->caller);
	/* a copy that lasts the call: the rings are read in place */
	geom = (struct varlena *) PG_DETOAST_DATUM_COPY(row->values[1]);
	label = GeoaccQueryRowLabel(r->query, row);
	before = r->rings.count;
	GeoaccRingsFromGeometry(geom, &r->rings, label);
	if (!r->srid_set)
	{
		r->srid_set = true;
		r->srid = r->rings.srid;
		r->first = label;
	}
	else if (r->rings.srid != r->srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("zones must all have the same SRID"),
				 errdetail("%s has SRID %d, %s has SRID %d.", r->first, r->srid, label, r->rings.srid),
				 errhint("Use ST_Transform() to bring them to the trajectories' SRID.")));
	if (r->count == r->max_count)
	{
		r->max_count = Max(64, r->max_count * 2);
		r->zones = r->zones ? repalloc_huge(r->zones, (Size) r->max_count * sizeof(ZoneRow))
			: palloc((Size) r->max_count * sizeof(ZoneRow));
	}
	r->zones[r->count].id = row->id;
	r->zones[r->count].order = r->count;
	r->zones[r->count].first_ring = before;
	r->zones[r->count].nrings = r->rings.count - before;
	r->count++;
	MemoryContextSwitchTo(old);
}

static int
CompareZones(const void *x, const void *y)
{
	const ZoneRow *a = x;
	const ZoneRow *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->order < b->order ? -1 : (a->order > b->order);
}

/* The zone visits as a work (as EncountersRun). */
typedef struct VisitsRun
{
	GeoaccTrajectories t;
	GeoaccZones zones;
	GeoaccVisits result;
} VisitsRun;

static GeoaccStatus
VisitsOn(GeoaccDevice device, void *arg)
{
	VisitsRun  *r = arg;

	geoacc_events_free(r->result.storage);
	memset(&r->result, 0, sizeof(r->result));
	return geoacc_zone_visits(device, &r->t, &r->zones, &r->result);
}

/*
 * gpu_zone_visits(traj_sql, zones_sql): (id, zone_id, visit, enter_time,
 * exit_time, duration) for every visit of a trajectory of traj_sql to a
 * zone of zones_sql
 */
PG_FUNCTION_INFO_V1(gpu_zone_visits);
Datum
gpu_zone_visits(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	JoinRows	rows;
	JoinSrid	srid = {0};
	ZoneReading reading = {0};
	GeoaccInnerQuery query = {"zones_sql", &ZoneQueryForm, 1, "(id, polygon)",
		"The id is an integer and the polygon a POLYGON or MULTIPOLYGON geometry.",
	false, ZoneReceive, &reading};
	JoinTracks	tracks;
	GeoaccTrajectories view;
	GeoaccZones zones;
	uint32	   *zone_rings;
	uint32	   *ring_points;
	double	   *zx;
	double	   *zy;
	uint64		npoints = 0;
	VisitsRun  *run = palloc0(sizeof(VisitsRun));
	EventsHolder *holder = EventsHolderNew(&run->result.storage);
	GeoaccWork	work = {VisitsOn, run, {0, 0}, false, sizeof(*run)};
	GeoaccStages stages;
	GeoaccDevice device;
	MemoryContext geometries;
	int32		number = 0;

	GeoaccStagesStart(&stages);
	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return (Datum) 0;
	geometries = AllocSetContextCreate(CurrentMemoryContext, "gpu_zone_visits geometries", ALLOCSET_DEFAULT_SIZES);
	GeoaccJoinRowsInit(&rows, geometries);
	GeoaccJoinRowsFromQuery(&rows, &srid, text_to_cstring(PG_GETARG_TEXT_PP(0)), "traj_sql");
	if (srid.set && srid.geodetic)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("gpu_zone_visits takes geometry trajectories, not geography"),
				 errhint("Cast the trajectories to geometry (traj::geometry) and give the zones in the same SRID; "
						 "a projected SRID keeps the straight lines between fixes close to the vessels' tracks.")));
	reading.query = &query;
	reading.caller = geometries;
	GeoaccInnerQueryRead(&query, text_to_cstring(PG_GETARG_TEXT_PP(1)));
	if (srid.set && reading.srid_set && reading.srid != srid.srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the zones and the trajectories must have the same SRID"),
				 errdetail("The trajectories have SRID %d, %s has SRID %d.", srid.srid, reading.first, reading.srid),
				 errhint("Use ST_Transform() on the zones, for example ST_Transform(polygon, %d).", srid.srid)));
	GeoaccStagesLap(&stages, "read");

	tracks = GeoaccJoinTracksFromRows(&rows, false, false, NULL);
	view = GeoaccJoinTracksView(&tracks);

	/* the zones in id order, their rings' points as the core takes them */
	if (reading.count > 1)
		qsort(reading.zones, reading.count, sizeof(ZoneRow), CompareZones);
	for (uint32 r = 0; r < reading.rings.count; r++)
		npoints += reading.rings.rings[r].npoints;
	if (npoints >= PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many zone points"),
				 errdetail("A call takes fewer than 2^32 points of zones.")));
	/* work memory: the core reads them (in the GPU service, when there is one) */
	zone_rings = GeoaccWorkAlloc((reading.count + 1) * sizeof(uint32));
	ring_points = GeoaccWorkAlloc((reading.rings.count + 1) * sizeof(uint32));
	zx = GeoaccWorkAlloc(Max(npoints, 1) * sizeof(double));
	zy = GeoaccWorkAlloc(Max(npoints, 1) * sizeof(double));
	zone_rings[0] = 0;
	ring_points[0] = 0;
	{
		uint32		ring = 0;
		uint32		point = 0;

		for (uint32 z = 0; z < reading.count; z++)
		{
			const ZoneRow *zr = &reading.zones[z];

			for (uint32 k = 0; k < zr->nrings; k++)
			{
				const GeoaccRing *g = &reading.rings.rings[zr->first_ring + k];

				for (uint32 i = 0; i < g->npoints; i++)
				{
					memcpy(&zx[point], g->coords + ((Size) i * g->ndims) * sizeof(double), sizeof(double));
					memcpy(&zy[point], g->coords + ((Size) i * g->ndims + 1) * sizeof(double), sizeof(double));
					point++;
				}
				ring_points[++ring] = point;
			}
			zone_rings[z + 1] = ring;
		}
	}
	zones.nzones = reading.count;
	zones.zone_rings = zone_rings;
	zones.ring_points = ring_points;
	zones.x = zx;
	zones.y = zy;
	GeoaccStagesLap(&stages, "prepare");

	run->t = view;
	run->zones = zones;
	work.need = geoacc_zone_visits_need(&view, &zones);
	device = GeoaccCallRun("gpu_zone_visits", (int64) (tracks.npoints - tracks.count), &work);
	GeoaccStagesLap(&stages, "events");

	for (uint64 i = 0; i < run->result.count; i++)
	{
		const GeoaccVisit *v = &run->result.items[i];
		const GeoaccVisit *before = i > 0 ? &run->result.items[i - 1] : NULL;
		Datum		values[6];
		bool		nulls[6] = {false};
		Datum		enter = TimeFromEpoch(v->enter);
		Datum		exit = TimeFromEpoch(v->exit);

		number = before && tracks.ids[before->traj] == tracks.ids[v->traj]
			&& reading.zones[before->zone].id == reading.zones[v->zone].id ? number + 1 : 1;
		values[0] = Int64GetDatum(tracks.ids[v->traj]);
		values[1] = Int64GetDatum(reading.zones[v->zone].id);
		values[2] = Int32GetDatum(number);
		values[3] = enter;
		values[4] = exit;
		values[5] = DirectFunctionCall2(timestamp_mi, exit, enter);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	GeoaccStagesLap(&stages, "tuples");
	elog(DEBUG1, "gpu_zone_visits: on the %s, " UINT64_FORMAT " segments, %u zones, " UINT64_FORMAT " visits; %s",
		 GeoaccDeviceName(device), tracks.npoints - tracks.count, reading.count,
		 (uint64) run->result.count, GeoaccStagesText(&stages));
	EventsHolderRelease(holder);
	MemoryContextDelete(geometries);
	return (Datum) 0;
}
