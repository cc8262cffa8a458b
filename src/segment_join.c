/*
 * segment_join.c
 *
 * gpu_segment_join(): the pairs of trajectory segments of two inner queries
 * (or of one, with itself) that come within a distance of each other, with
 * when and how close.  The queries are read through SPI (pgRouting's
 * pattern), the trajectories handed to the core in id order, and the rows
 * put into a tuplestore batch by batch as the core produces them, so that a
 * large result never sits twice in memory.  Geography trajectories are
 * measured in metres: their points go to east-north-up axes over WGS 84
 * Earth-centred coordinates at the centre of all points of the call
 * (geography.c), where the core's 3D arithmetic measures chords.  The same
 * join of geometry trajectories over arrays of ids and trajectories runs
 * inside any query, such as one that Citus sends to the shards of a
 * distributed table (an inner query cannot be run there).
 */
#include "geoacc.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

/* Rows asked of the core at a time. */
#define JOIN_BATCH_ROWS 8192
/* rows per batch from the GPU service: fewer round trips */
#define SERVICE_BATCH_ROWS 65536

/* Bytes of a block of the geometries read by a query, at most. */
#define GEOMETRY_BLOCK ((Size) 8 << 20)

/*
 * Room for `bytes` of fresh memory, aligned to a huge page where it spans
 * one, with huge pages asked for: first writes to fresh memory are much of
 * what reading the rows and laying out their points cost.  Freed with the
 * memory context.
 */
static void *
HugePageRoom(Size bytes)
{
	char	   *raw;

	if (bytes < GEOACC_HUGE_PAGE)
		return palloc_extended(Max(bytes, 1), MCXT_ALLOC_HUGE);
	raw = palloc_extended(bytes + GEOACC_HUGE_PAGE, MCXT_ALLOC_HUGE);
	raw = (char *) TYPEALIGN(GEOACC_HUGE_PAGE, raw);
	GeoaccAdviseHugePages(raw, bytes);
	return raw;
}

/* A copy of a (detoasted) geometry in the rows' store, where it stays until its points are laid out. */
static const struct varlena *
RowsKeep(JoinRows *t, const struct varlena *geom)
{
	const Size	size = VARSIZE(geom);
	const Size	room = MAXALIGN(size);
	struct varlena *copy;

	if (room > t->store_left)
	{
		MemoryContext old = MemoryContextSwitchTo(t->geometries);

		/* a few rows take a small block; more take huge pages, in blocks doubling up to GEOMETRY_BLOCK */
		t->store_block = t->store_block == 0 ? 65536 :
			Min(Max(t->store_block * 2, GEOACC_HUGE_PAGE), GEOMETRY_BLOCK);
		t->store_left = Max(room, t->store_block);
		t->store_next = HugePageRoom(t->store_left);
		MemoryContextSwitchTo(old);
	}
	copy = (struct varlena *) t->store_next;
	memcpy(copy, geom, size);
	t->store_next += room;
	t->store_left -= room;
	return copy;
}

void
GeoaccJoinRowsInit(JoinRows *t, MemoryContext geometries)
{
	memset(t, 0, sizeof(*t));
	t->max_count = 64;
	t->rows = palloc(t->max_count * sizeof(JoinRow));
	t->geometries = geometries;
}

/*
 * Add the trajectory of one row, its geometry kept until the points are laid
 * out (a copy in the store where `copy`, else the value itself): a
 * LINESTRING M or ZM with M increasing, in the call's SRID.  Empty and
 * single-point lines have no segment: not kept (false).  A geography's
 * points count towards the centre of the call.
 */
static bool
RowsAdd(JoinRows *t, JoinSrid *srid, int64 id, const struct varlena *geom, bool copy, const char *label)
{
	GeoaccLine	line;

	GeoaccLineFromGeometry(geom, &line, label);
	if (line.npoints == 0)
		return false;
	GeoaccCheckTrajectory(&line, label);
	GeoaccCheckUseZ(&line, srid->use_z, label);
	if (!srid->set)
	{
		srid->set = true;
		srid->srid = line.srid;
		srid->geodetic = line.geodetic;
		srid->first = pstrdup(label);
	}
	else if (srid->geodetic != line.geodetic)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("trajectories must all be geometries or all geographies"),
				 errdetail("%s is a %s, %s a %s.", srid->first, srid->geodetic ? "geography" : "geometry", label,
						   line.geodetic ? "geography" : "geometry"),
				 errhint("Cast one of the queries' trajectories, for example traj::geography.")));
	else if (srid->srid != line.srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("trajectories must all have the same SRID"),
				 errdetail("%s has SRID %d, %s has SRID %d.", srid->first, srid->srid, label, line.srid),
				 errhint("Use ST_Transform() to bring them to one projected SRID.")));
	if (line.npoints < 2)
		return false;

	if (t->count + 1 >= PG_UINT32_MAX / 4)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many trajectories")));
	if (t->npoints + line.npoints >= PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many trajectory points"),
				 errdetail("A join takes fewer than 2^32 points per side.")));
	if (t->count == t->max_count)
	{
		t->max_count *= 2;
		t->rows = repalloc_huge(t->rows, (Size) t->max_count * sizeof(JoinRow));
	}
	if (line.geodetic)
		for (uint32 i = 0; i < line.npoints; i++)
		{
			const double *p = line.coords + (size_t) i * line.ndims;

			GeoaccDirectionAdd(&srid->direction, p[0], p[1]);
		}
	if (copy)
		GeoaccLineFromGeometry(RowsKeep(t, geom), &line, label);
	t->rows[t->count].id = id;
	t->rows[t->count].order = t->count;
	t->rows[t->count].line = line;
	t->count++;
	t->npoints += line.npoints;
	return true;
}

/* Order of rows by id, then as read (a stable sort). */
static int
CompareRows(const void *x, const void *y)
{
	const JoinRow *a = x;
	const JoinRow *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->order < b->order ? -1 : (a->order > b->order);
}

/*
 * The rows' trajectories in the core's layout and in id order, so that a
 * self-join pairs a_id < b_id and rows come out ordered by id: the points
 * copied once, straight from the geometries; with a frame (a geography)
 * projected to east-north-up metres at the centre of the call; Z kept
 * where it is measured (with_z), the height where use_z.
 */
JoinTracks
GeoaccJoinTracksFromRows(JoinRows *rows, bool with_z, bool use_z, const GeoaccEnu *frame)
{
	JoinTracks	t;
	const Size	n = Max(rows->npoints, 1);
	/* the core reads the points and offsets: work memory with the GPU service */
	double	   *block = GeoaccServiceActive() ? GeoaccWorkAlloc(n * (with_z ? 4 : 3) * sizeof(double))
		: HugePageRoom(n * (with_z ? 4 : 3) * sizeof(double));

	qsort(rows->rows, rows->count, sizeof(JoinRow), CompareRows);
	t.count = rows->count;
	t.npoints = rows->npoints;
	t.ids = palloc(Max(t.count, 1) * sizeof(int64));
	t.offsets = GeoaccWorkAlloc((t.count + 1) * sizeof(uint32));
	t.x = block;
	t.y = block + n;
	t.m = block + 2 * n;
	t.z = with_z ? block + 3 * n : NULL;
	t.offsets[0] = 0;
	for (uint32 i = 0; i < t.count; i++)
	{
		const GeoaccLine *line = &rows->rows[i].line;
		uint32		to = t.offsets[i];

		t.ids[i] = rows->rows[i].id;
		for (uint32 k = 0; k < line->npoints; k++)
		{
			const double *p = line->coords + (size_t) k * line->ndims;
			const double height = use_z ? p[2] : 0;

			if (frame)
			{
				double		enu[3];

				GeoaccEnuProject(frame, p[0], p[1], height, enu);
				t.x[to + k] = enu[0];
				t.y[to + k] = enu[1];
				t.z[to + k] = enu[2];
			}
			else
			{
				t.x[to + k] = p[0];
				t.y[to + k] = p[1];
				if (with_z)
					t.z[to + k] = height;
			}
			t.m[to + k] = p[line->ndims - 1];
		}
		t.offsets[i + 1] = to + line->npoints;
	}
	return t;
}

GeoaccTrajectories
GeoaccJoinTracksView(const JoinTracks *t)
{
	GeoaccTrajectories v;

	v.ntrajectories = t->count;
	v.offsets = t->offsets;
	v.x = t->x;
	v.y = t->y;
	v.z = t->z;
	v.m = t->m;
	return v;
}

/* What errors call a row: "a_sql row 3 (id 7)", "a element 3 (id 7)". */
#define ROW_LABEL_SIZE 96

/* The columns of a trajectory query: (id, traj). */
static const GeoaccQueryForm JoinQueryForm = {2, {{"id", GeoaccIsIdType}, {"traj", GeoaccIsTrajectoryType}}};

/* Where a query's rows go. */
typedef struct JoinReading
{
	JoinRows   *rows;
	JoinSrid   *srid;
	const GeoaccInnerQuery *query;
	MemoryContext caller;		/* what outlives the row: the SRID's first row, the rows' arrays */
} JoinReading;

/* Keep a row's trajectory (a NULL one is skipped). */
static void
JoinReceive(const GeoaccQueryRow *row, void *arg)
{
	JoinReading *r = arg;
	struct varlena *geom;
	char	   *label;
	MemoryContext old;

	if (row->nulls[1])
		return;
	geom = PG_DETOAST_DATUM(row->values[1]);
	label = GeoaccQueryRowLabel(r->query, row);
	old = MemoryContextSwitchTo(r->caller);
	RowsAdd(r->rows, r->srid, row->id, geom, true, label);
	MemoryContextSwitchTo(old);
}

bool
GeoaccJoinRowsAdd(JoinRows *t, JoinSrid *srid, int64 id, const struct varlena *geom, const char *label)
{
	return RowsAdd(t, srid, id, geom, true, label);
}

/* Run an inner query and keep each row's trajectory. */
void
GeoaccJoinRowsFromQuery(JoinRows *t, JoinSrid *srid, const char *sql, const char *argname)
{
	JoinReading reading = {t, srid, NULL, CurrentMemoryContext};
	GeoaccInnerQuery query = {argname, &JoinQueryForm, 1, "(id, trajectory)",
		"The id is an integer and the trajectory (traj) a LINESTRING M or ZM geometry or geography.",
	false, JoinReceive, &reading};

	reading.query = &query;
	GeoaccInnerQueryRead(&query, sql);
}

static void
RowsFromArrays(JoinRows *t, JoinSrid *srid, ArrayType *ids, ArrayType *trajs, const char *argname)
{
	MemoryContext caller = CurrentMemoryContext;
	Datum	   *id_values,
			   *traj_values;
	bool	   *id_nulls,
			   *traj_nulls;
	int			n_ids,
				n_trajs;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	if (ARR_NDIM(ids) > 1 || ARR_NDIM(trajs) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s_ids and %s must be one-dimensional arrays", argname, argname)));
	if (ARR_ELEMTYPE(trajs) != GeoaccGeometryOid())
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s must be an array of geometry, not of %s", argname, format_type_be(ARR_ELEMTYPE(trajs)))));
	deconstruct_array(ids, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &id_values, &id_nulls, &n_ids);
	get_typlenbyvalalign(ARR_ELEMTYPE(trajs), &typlen, &typbyval, &typalign);
	deconstruct_array(trajs, ARR_ELEMTYPE(trajs), typlen, typbyval, typalign, &traj_values, &traj_nulls, &n_trajs);
	if (n_ids != n_trajs)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s_ids and %s must have as many elements", argname, argname),
				 errdetail("%s_ids has %d, %s has %d.", argname, n_ids, argname, n_trajs)));
	for (int i = 0; i < n_ids; i++)
	{
		struct varlena *geom;
		char		label[ROW_LABEL_SIZE];

		if (id_nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s_ids element %d is NULL", argname, i + 1)));
		if (traj_nulls[i])
			continue;
		/* the elements last as long as the call; a detoasted one is kept with the other geometries */
		MemoryContextSwitchTo(t->geometries);
		geom = PG_DETOAST_DATUM(traj_values[i]);
		MemoryContextSwitchTo(caller);
		snprintf(label, sizeof(label), "%s element %d (id " INT64_FORMAT ")", argname, i + 1,
				 DatumGetInt64(id_values[i]));
		if (!RowsAdd(t, srid, DatumGetInt64(id_values[i]), geom, false, label) &&
			(Pointer) geom != DatumGetPointer(traj_values[i]))
			pfree(geom);
		CHECK_FOR_INTERRUPTS();
	}
}

GeoaccJoinMethod
GeoaccJoinMethodFromText(const char *name)
{
	if (pg_strcasecmp(name, "auto") == 0)
		return GEOACC_JOIN_AUTO;
	if (pg_strcasecmp(name, "spatial") == 0)
		return GEOACC_JOIN_SPATIAL;
	if (pg_strcasecmp(name, "temporal") == 0)
		return GEOACC_JOIN_TEMPORAL;
	if (pg_strcasecmp(name, "spatiotemporal") == 0)
		return GEOACC_JOIN_SPATIOTEMPORAL;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown segment join method \"%s\"", name),
			 errhint("The methods are \"spatial\", \"temporal\", \"spatiotemporal\" and \"auto\".")));
	pg_unreachable();
}

static const char *
MethodName(GeoaccJoinMethod method)
{
	switch (method)
	{
		case GEOACC_JOIN_SPATIAL:
			return "spatial";
		case GEOACC_JOIN_TEMPORAL:
			return "temporal";
		case GEOACC_JOIN_SPATIOTEMPORAL:
			return "spatiotemporal";
		default:
			return "auto";
	}
}

/*
 * Closes the core's join when the memory context goes away (statement abort
 * included); a join the GPU service holds for this backend is abandoned
 * there, which closes it.
 */
typedef struct JoinHolder
{
	GeoaccSegmentJoin *join;
	bool		in_service;
	MemoryContextCallback callback;
} JoinHolder;

static void
JoinHolderRelease(void *arg)
{
	JoinHolder *holder = arg;

	if (holder->in_service)
		GeoaccServiceAbandon();
	else
		geoacc_segment_join_close(holder->join);
	holder->join = NULL;
	holder->in_service = false;
}

/* The distance argument, checked. */
static double
DistanceFromArg(double distance)
{
	if (!isfinite(distance) || !(distance > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("distance must be a positive, finite number"),
				 errdetail("distance is %g.", distance)));
	return distance;
}

/*
 * A self-join pairs rows with a_id < b_id, and names a segment by its id
 * and its number in the row: two rows with one id would be paired with
 * each other as a_id = b_id and their segments could not be told apart.
 */
void
GeoaccJoinCheckSelfIds(const JoinTracks *t)
{
	for (uint32 i = 1; i < t->count; i++)
		if (t->ids[i] == t->ids[i - 1])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a self-join needs one trajectory per id"),
					 errdetail("Id " INT64_FORMAT " is on more than one row.", t->ids[i]),
					 errhint("Give each row an id of its own, for example object_id * 1000 + part for the parts "
							 "of a track.")));
}

/* The join of two sets of trajectories, streamed into the tuplestore, as a step of a call. */
typedef struct JoinRun
{
	ReturnSetInfo *rsinfo;
	const GeoaccTrajectories *a;
	const GeoaccTrajectories *b;	/* NULL: a with itself */
	const int64 *a_ids;
	const int64 *b_ids;
	double		distance;
	GeoaccJoinMethod method;
	uint64		b_serial;		/* b is the snapshot entry's with this serial (0: none) */
	JoinHolder *holder;
	GeoaccJoinRow *rows;		/* JOIN_BATCH_ROWS */
	GeoaccStages *stages;
	GeoaccJoinStats stats;
} JoinRun;

/* Rows of the core as tuples. */
static void
PutRows(JoinRun *r, const GeoaccJoinRow *rows, uint32 n)
{
	for (uint32 i = 0; i < n; i++)
	{
		const GeoaccJoinRow *row = &rows[i];
		Datum		values[8];
		bool		nulls[8] = {false};

		/* segment k of the core is 0-based; SQL counts from 1, as ST_PointN */
		values[0] = Int64GetDatum(r->a_ids[row->a_traj]);
		values[1] = Int32GetDatum((int32) row->a_seg + 1);
		values[2] = Int64GetDatum(r->b_ids[row->b_traj]);
		values[3] = Int32GetDatum((int32) row->b_seg + 1);
		values[4] = Float8GetDatum(row->t_start);
		values[5] = Float8GetDatum(row->t_end);
		values[6] = Float8GetDatum(row->cpa_time);
		values[7] = Float8GetDatum(row->cpa_distance);
		tuplestore_putvalues(r->rsinfo->setResult, r->rsinfo->setDesc, values, nulls);
	}
}

/* Opening the join in the GPU service, which keeps it for the batches. */
typedef struct JoinOpenRun
{
	GeoaccTrajectories a;
	GeoaccTrajectories b;
	bool		self;
	double		distance;
	GeoaccJoinMethod method;
	uint64		b_serial;		/* b is a snapshot's: the device process keeps its segments (0: not) */
	GeoaccSegmentJoin *join;	/* the service's */
} JoinOpenRun;

static void
CloseHeldJoin(void *join)
{
	geoacc_segment_join_close(join);
}

static void
ReleaseEntries(void *entries)
{
	geoacc_join_entries_free(entries);
}

/*
 * The segments of a snapshot's trajectories as this device process keeps
 * them (in X Y, or X Y Z: the forms of GEOACC_KEPT_VARIANTS), made now
 * where the GPU has room for them beside the join; NULL: none, and the
 * join makes them from the trajectories, as any join does.
 */
static GeoaccJoinEntries *
KeptEntries(GeoaccDevice device, JoinOpenRun *r)
{
	int			variant = r->b.z != NULL;
	GeoaccJoinEntries *kept;

	if (r->b_serial == 0 || r->self || !GeoaccServiceMayKeep())
		return NULL;
	kept = GeoaccServiceKept(r->b_serial, variant);
	if (kept)
		return kept;
	if (device == GEOACC_DEVICE_GPU &&
		geoacc_join_entries_bytes(&r->b) + geoacc_segment_join_need(&r->a, &r->b).least > geoacc_gpu_memory_available())
		return NULL;
	if (geoacc_join_entries_create(device, &r->b, &kept) != GEOACC_OK)
		return NULL;
	GeoaccServiceKeep(r->b_serial, variant, kept, geoacc_join_entries_device_bytes(kept), ReleaseEntries);
	return kept;
}

static GeoaccStatus
JoinOpenOn(GeoaccDevice device, void *arg)
{
	JoinOpenRun *r = arg;
	GeoaccJoinEntries *kept = KeptEntries(device, r);
	GeoaccStatus status = kept
		? geoacc_segment_join_open_entries(&r->a, kept, r->distance, r->method, &r->join)
		: geoacc_segment_join_open(device, &r->a, r->self ? NULL : &r->b, r->distance, r->method, &r->join);

	/* the join may have kept its index with the segments, or replaced it */
	if (kept)
		GeoaccServiceKeptResize(r->b_serial, r->b.z != NULL, geoacc_join_entries_device_bytes(kept));
	if (status == GEOACC_OK)
		GeoaccServiceHold(r->join, CloseHeldJoin);
	return status;
}

/* A batch of rows from the join the service holds; the last (none left) or a failure closes it. */
typedef struct JoinNextRun
{
	GeoaccSegmentJoin *join;
	GeoaccJoinRow *rows;
	uint32		capacity;
	uint32		n;
	GeoaccJoinStats stats;
} JoinNextRun;

static GeoaccStatus
JoinNextOn(GeoaccDevice device, void *arg)
{
	JoinNextRun *r = arg;
	GeoaccStatus status;

	/* the join lived in a device process that died: this one has nothing of it */
	if (!GeoaccServiceHolds(r->join))
	{
		geoacc_set_status_message("The device process that held the join stopped during the call.");
		return GEOACC_ERR_SERVICE;
	}
	status = geoacc_segment_join_next(r->join, r->rows, r->capacity, &r->n);

	if (status == GEOACC_OK && r->n > 0)
		return status;
	if (status == GEOACC_OK)
		geoacc_segment_join_stats(r->join, &r->stats);
	/* holding nothing from now on closes the join */
	GeoaccServiceHold(NULL, NULL);
	return status;
}

/* The join on the GPU service: opened there, its rows fetched in batches. */
static GeoaccStatus
JoinInService(JoinRun *r)
{
	JoinOpenRun open = {*r->a, r->b ? *r->b : *r->a, r->b == NULL, r->distance, r->method, r->b_serial, NULL};
	GeoaccWork	open_work = {JoinOpenOn, &open, {0, 0}, false, sizeof(open)};
	JoinNextRun next = {NULL, GeoaccWorkAlloc(SERVICE_BATCH_ROWS * sizeof(GeoaccJoinRow)), SERVICE_BATCH_ROWS, 0,
	{0}};
	GeoaccWork	next_work = {JoinNextOn, &next, {0, 0}, false, sizeof(next)};
	GeoaccStatus status;

	status = GeoaccServiceRun(&open_work, GeoaccCallReservation());
	r->holder->in_service = status == GEOACC_OK;
	next.join = open.join;
	while (status == GEOACC_OK)
	{
		status = GeoaccServiceRun(&next_work, GeoaccCallReservation());
		GeoaccStagesLap(r->stages, "join");
		if (status != GEOACC_OK || next.n == 0)
			break;
		PutRows(r, next.rows, next.n);
		GeoaccStagesLap(r->stages, "tuples");
		CHECK_FOR_INTERRUPTS();
	}
	/* the last batch, or the failure, closed it */
	r->holder->in_service = false;
	GeoaccWorkFree(next.rows);
	if (status == GEOACC_OK)
		r->stats = next.stats;
	return status;
}

static GeoaccStatus
JoinOn(GeoaccDevice device, void *arg)
{
	JoinRun    *r = arg;
	GeoaccStatus status;
	uint32		n;

	/* a run on the CPU after the GPU failed part way starts afresh, and gives the same rows */
	JoinHolderRelease(r->holder);
	tuplestore_clear(r->rsinfo->setResult);
	if (device == GEOACC_DEVICE_GPU && GeoaccServiceActive())
		return JoinInService(r);
	status = geoacc_segment_join_open(device, r->a, r->b, r->distance, r->method, &r->holder->join);
	while (status == GEOACC_OK)
	{
		status = geoacc_segment_join_next(r->holder->join, r->rows, JOIN_BATCH_ROWS, &n);
		GeoaccStagesLap(r->stages, "join");
		if (status != GEOACC_OK || n == 0)
			break;
		PutRows(r, r->rows, n);
		GeoaccStagesLap(r->stages, "tuples");
		CHECK_FOR_INTERRUPTS();
	}
	if (status == GEOACC_OK)
		geoacc_segment_join_stats(r->holder->join, &r->stats);
	return status;
}

void
GeoaccJoinCheckProjected(const JoinSrid *srid, const char *function)
{
	if (srid->set && !srid->geodetic && GeoaccSridIsGeographic(srid->srid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s needs projected coordinates", function),
				 errdetail("The trajectories have SRID %d, whose coordinates are longitude and latitude in degrees.",
						   srid->srid),
				 errhint("Pass them as geography (traj::geography) to measure in metres, or transform them to a "
						 "projected SRID first, for example ST_Transform(traj, 32618) for UTM zone 18N.")));
}

bool
GeoaccJoinFrame(JoinSrid *srid, GeoaccEnu *frame)
{
	if (!srid->set || !srid->geodetic)
		return false;
	/* the points cannot cancel out unless spread over the whole globe; any frame measures chords then */
	if (!GeoaccEnuInit(frame, &srid->direction))
	{
		srid->direction.v[2] = 1;
		GeoaccEnuInit(frame, &srid->direction);
	}
	return true;
}

void
GeoaccJoinTrajectories(ReturnSetInfo *rsinfo, JoinRows *a_rows, JoinRows *b_rows, const JoinTracks *b_tracks,
					   uint64 b_serial, JoinSrid *srid, double distance, GeoaccJoinMethod method,
					   GeoaccStages *stages)
{
	bool		self = b_rows == NULL && b_tracks == NULL;
	JoinTracks	a,
				b;
	bool		with_z;
	GeoaccEnu	frame;
	GeoaccTrajectories va,
				vb;
	JoinRun		run = {0};
	/* it runs here, streaming its rows into the tuplestore, and fetches them from the GPU service itself */
	GeoaccWork	work = {JoinOn, &run, {0, 0}, false, 0, true};
	GeoaccDevice device;

	GeoaccJoinCheckProjected(srid, "gpu_segment_join");
	GeoaccJoinFrame(srid, &frame);

	/* 3D with use_z; a geography always, its points being Earth-centred */
	with_z = srid->use_z || srid->geodetic;
	a = GeoaccJoinTracksFromRows(a_rows, with_z, srid->use_z, srid->geodetic ? &frame : NULL);
	if (self)
		GeoaccJoinCheckSelfIds(&a);
	b = self ? a : b_tracks ? *b_tracks : GeoaccJoinTracksFromRows(b_rows, with_z, srid->use_z, srid->geodetic ? &frame : NULL);
	/* the points are laid out: the geometries they came from are no longer needed */
	MemoryContextDelete(a_rows->geometries);
	va = GeoaccJoinTracksView(&a);
	vb = GeoaccJoinTracksView(&b);
	GeoaccStagesLap(stages, "prepare");

	run.rsinfo = rsinfo;
	run.a = &va;
	run.b = self ? NULL : &vb;
	run.a_ids = a.ids;
	run.b_ids = b.ids;
	run.distance = distance;
	run.method = method;
	run.b_serial = self ? 0 : b_serial;
	run.rows = palloc(JOIN_BATCH_ROWS * sizeof(GeoaccJoinRow));
	run.stages = stages;
	run.holder = palloc0(sizeof(JoinHolder));
	run.holder->callback.func = JoinHolderRelease;
	run.holder->callback.arg = run.holder;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &run.holder->callback);
	work.need = geoacc_segment_join_need(&va, run.b);
	/* a snapshot's segments a device process does not keep yet: the room to make them there */
	if (run.b_serial != 0 && !GeoaccSnapshotKeptEverywhere(run.b_serial, vb.z != NULL))
		work.need.bytes += geoacc_join_entries_bytes(&vb);
	device = GeoaccCallRun("gpu_segment_join",
						   (int64) (a.npoints - a.count) + (self ? 0 : (int64) (b.npoints - b.count)), &work);
	JoinHolderRelease(run.holder);
	GeoaccStagesLap(stages, "release");
	elog(DEBUG1, "gpu_segment_join: %s on the %s, " UINT64_FORMAT " x " UINT64_FORMAT " segments, " UINT64_FORMAT
		 " candidates, " UINT64_FORMAT " rows; %s; in the core: segments %.1f ms, plan %.1f ms, "
		 "device memory %.1f ms, upload %.1f ms, index %.1f ms, search %.1f ms, refine %.1f ms, output %.1f ms; "
		 "%u entry chunks, %u batches, " UINT64_FORMAT " overflowed queries, %u device allocations, %u syncs",
		 MethodName(run.stats.method), GeoaccDeviceName(device), run.stats.queries,
		 run.stats.entries, run.stats.candidates, run.stats.rows, GeoaccStagesText(stages), run.stats.segments_ms,
		 run.stats.plan_ms, run.stats.memory_ms, run.stats.upload_ms, run.stats.index_ms, run.stats.search_ms,
		 run.stats.refine_ms, run.stats.output_ms, run.stats.entry_chunks, run.stats.batches,
		 run.stats.overflow_queries, run.stats.device_allocations, run.stats.syncs);
}

/*
 * gpu_segment_join(a_sql, b_sql, distance, method, use_z): (a_id, a_seg, b_id,
 * b_seg, t_start, t_end, cpa_time, cpa_distance) for every pair of segments
 * of a_sql's and b_sql's trajectories (of a_sql's, a_id < b_id, when b_sql
 * is NULL) that come within `distance`
 */
PG_FUNCTION_INFO_V1(gpu_segment_join);
Datum
gpu_segment_join(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	JoinRows	a_rows,
				b_rows;
	MemoryContext geometries;
	JoinSrid	srid = {0};
	bool		self = PG_ARGISNULL(1);
	double		distance;
	GeoaccJoinMethod method;
	GeoaccStages stages;

	GeoaccStagesStart(&stages);
	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(2) || PG_ARGISNULL(3) || PG_ARGISNULL(4))
		return (Datum) 0;
	srid.use_z = PG_GETARG_BOOL(4);
	distance = DistanceFromArg(PG_GETARG_FLOAT8(2));
	method = GeoaccJoinMethodFromText(text_to_cstring(PG_GETARG_TEXT_PP(3)));
	geometries = AllocSetContextCreate(CurrentMemoryContext, "gpu_segment_join geometries", ALLOCSET_DEFAULT_SIZES);
	GeoaccJoinRowsInit(&a_rows, geometries);
	GeoaccJoinRowsInit(&b_rows, geometries);
	GeoaccJoinRowsFromQuery(&a_rows, &srid, text_to_cstring(PG_GETARG_TEXT_PP(0)), "a_sql");
	if (!self)
		GeoaccJoinRowsFromQuery(&b_rows, &srid, text_to_cstring(PG_GETARG_TEXT_PP(1)), "b_sql");
	GeoaccStagesLap(&stages, "read");
	GeoaccJoinTrajectories(rsinfo, &a_rows, self ? NULL : &b_rows, NULL, 0, &srid, distance, method, &stages);
	return (Datum) 0;
}

/*
 * gpu_segment_join(a_ids, a, b_ids, b, distance, method, use_z): the same
 * join of the geometry trajectories of two arrays (b_ids and b NULL: of a
 * with itself)
 */
PG_FUNCTION_INFO_V1(gpu_segment_join_arrays);
Datum
gpu_segment_join_arrays(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	JoinRows	a_rows,
				b_rows;
	MemoryContext geometries;
	JoinSrid	srid = {0};
	bool		self = PG_ARGISNULL(2) && PG_ARGISNULL(3);
	double		distance;
	GeoaccJoinMethod method;
	GeoaccStages stages;

	GeoaccStagesStart(&stages);
	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(4) || PG_ARGISNULL(5) || PG_ARGISNULL(6))
		return (Datum) 0;
	if (PG_ARGISNULL(2) != PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("b_ids and b must both be NULL (a self-join of a) or both be given")));
	srid.use_z = PG_GETARG_BOOL(6);
	distance = DistanceFromArg(PG_GETARG_FLOAT8(4));
	method = GeoaccJoinMethodFromText(text_to_cstring(PG_GETARG_TEXT_PP(5)));
	geometries = AllocSetContextCreate(CurrentMemoryContext, "gpu_segment_join geometries", ALLOCSET_DEFAULT_SIZES);
	GeoaccJoinRowsInit(&a_rows, geometries);
	GeoaccJoinRowsInit(&b_rows, geometries);
	RowsFromArrays(&a_rows, &srid, PG_GETARG_ARRAYTYPE_P(0), PG_GETARG_ARRAYTYPE_P(1), "a");
	if (!self)
		RowsFromArrays(&b_rows, &srid, PG_GETARG_ARRAYTYPE_P(2), PG_GETARG_ARRAYTYPE_P(3), "b");
	GeoaccStagesLap(&stages, "read");
	GeoaccJoinTrajectories(rsinfo, &a_rows, self ? NULL : &b_rows, NULL, 0, &srid, distance, method, &stages);
	return (Datum) 0;
}

void
GeoaccJoinAgainst(FunctionCallInfo fcinfo, const char *label, const JoinTracks *tracks, uint64 serial,
				  int32 tracks_srid, bool has_z)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	JoinRows	a_rows;
	JoinSrid	srid = {0};
	double		distance;
	GeoaccJoinMethod method;
	GeoaccStages stages;
	JoinTracks	b = *tracks;

	GeoaccStagesStart(&stages);
	srid.use_z = PG_GETARG_BOOL(4);
	distance = DistanceFromArg(PG_GETARG_FLOAT8(2));
	method = GeoaccJoinMethodFromText(text_to_cstring(PG_GETARG_TEXT_PP(3)));
	GeoaccJoinRowsInit(&a_rows, AllocSetContextCreate(CurrentMemoryContext, "gpu_segment_join geometries",
													  ALLOCSET_DEFAULT_SIZES));
	GeoaccJoinRowsFromQuery(&a_rows, &srid, text_to_cstring(PG_GETARG_TEXT_PP(0)), "a_sql");
	GeoaccStagesLap(&stages, "read");
	GeoaccCheckLaidOutTracks(srid.set, srid.geodetic, srid.srid, srid.first, srid.use_z, label, tracks_srid, has_z);
	if (!srid.use_z)
		b.z = NULL;
	GeoaccJoinTrajectories(rsinfo, &a_rows, NULL, &b, serial, &srid, distance, method, &stages);
}
