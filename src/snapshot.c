/*
 * snapshot.c
 *
 * Snapshots: the result of a query kept in the GPU service's memory, so
 * that the calls a map or a dashboard repeats (a density tile) read it
 * there instead of scanning and sending the rows again.  As a materialized
 * view: a snapshot shows the rows as of its last refresh.
 *
 * The definitions are rows of the catalog table geoacc_snapshot (name,
 * owner, readers, kind, query, generation), written only through these
 * functions, with the rights of the table's owner.  The data are in the
 * service memory under (database, catalog table, id, generation)
 * (service.c); a refresh
 * makes a new generation, and the old one goes when the refresh commits.
 * A server restart empties the service memory: a snapshot is then built
 * again from its query on its first use, with its owner's rights, as
 * REFRESH MATERIALIZED VIEW runs as the view's owner.
 *
 * Who may use a snapshot: its owner, the roles it has granted it to
 * (geoacc_snapshot_grant) and superusers, with the privileges of any of
 * those roles (role membership).  A snapshot holds what its owner could
 * read, row-level security included.
 *
 * One kind so far, "points": rows (id, geom[, weight]) of points and lines,
 * as gpu_density_raster reads them, for density rasters and map tiles of
 * any extent that equal the aggregate's over the same rows, bit for bit.
 */
#include "geoacc.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "density_raster.h"

#define SNAPSHOT_TABLE "geoacc_snapshot"

/* A snapshot's index is a grid of about this many points a cell, at most GRID_MAX cells a side. */
#define GRID_POINTS 8
#define GRID_MAX 4096

/* What one point can add to one cell, in a cell's units (as density_state.c bounds it). */
#define AMOUNTS_PER_POINT_PER_CELL 8

typedef enum SnapshotKind
{
	KIND_POINTS,
	KIND_TRAJECTORIES,
	KIND_MESHES
} SnapshotKind;

static const char *const kind_names[] = {"points", "trajectories", "meshes"};

/* What the data of every snapshot start with. */
typedef struct SnapshotHead
{
	SnapshotKind kind;
	uint64		bytes;			/* of the block */
	int64		rows;			/* rows kept */
	uint64		points;
	int32		srid;
	TimestampTz built;
} SnapshotHead;

/*
 * The data of a trajectories snapshot: one block, this header and then the
 * arrays of the trajectories laid out as the segment join lays out an inner
 * query's (in id order, then in the order read).  Z where every trajectory
 * has it.
 */
typedef struct SnapshotTracks
{
	SnapshotHead head;
	bool		has_z;
	JoinTracks	tracks;
} SnapshotTracks;

/*
 * The data of a meshes snapshot: one block, this header, a GeoaccSnapshotMesh
 * per row (in the order read) and the rows' welded meshes, as gpu_mesh_clip
 * welds a TIN.
 */
typedef struct SnapshotMeshes
{
	SnapshotHead head;
	uint32		count;
	GeoaccSnapshotMesh *meshes;
} SnapshotMeshes;

/*
 * The data of a points snapshot: one block of the service memory, this
 * header and then its arrays.  Point i stands for what it adds to a
 * density raster: its own sample and, flagged GEOACC_DENSITY_JOIN, the
 * segment from point i - 1 (with the time of that segment, in hours times
 * the weight, in time_value).  The grid index lists each point in the cells
 * its box (with point i - 1's when joined) covers, or in the long list.
 */
typedef struct SnapshotPoints
{
	SnapshotHead head;
	uint32		n;
	bool		weighted;
	bool		has_points;		/* rows of points, which the time mode refuses */
	bool		lines_without_m;	/* likewise */
	double		time_too_large;	/* a time value a sample cannot hold, or 0 */
	/* what every point together can add to one cell: counts, weighted sums, time sums (saturated) */
	uint64		count_bound;
	uint64		weight_bound;
	uint64		time_bound;
	double	   *xy;
	uint8	   *flags;			/* GEOACC_DENSITY_COUNT, and GEOACC_DENSITY_JOIN */
	double	   *weight;			/* weighted only */
	double	   *time_value;		/* where the time mode can be asked for */
	GeoaccPointGrid index;
} SnapshotPoints;

/* A definition, as the catalog has it. */
typedef struct SnapshotDef
{
	Oid			catalog;		/* the catalog table's oid: part of the data's key */
	char	   *name;
	int64		id;
	Oid			owner;
	ArrayType  *readers;
	char	   *kind;
	char	   *query;
	int64		generation;
} SnapshotDef;

/* ---------------------------------------------------------- the catalog */

/* The catalog table, schema-qualified, its owner and its oid. */
static const char *
CatalogName(Oid *owner, Oid *catalog)
{
	Oid			schema = GeoaccExtensionSchema(get_extension_oid("geoacc", false));
	Oid			relid = get_relname_relid(SNAPSHOT_TABLE, schema);
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "geoacc's table %s is missing", SNAPSHOT_TABLE);
	*owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	*catalog = relid;
	ReleaseSysCache(tuple);
	return quote_qualified_identifier(get_namespace_name(schema), SNAPSHOT_TABLE);
}

/*
 * Run one statement on the catalog as its owner (the functions are the only
 * writers); its first row's columns in *def when def is given.  Returns
 * the rows processed.
 */
static uint64
CatalogExecute(const char *sql_format, int nargs, Oid *types, Datum *values, SnapshotDef *def)
{
	Oid			owner;
	Oid			relid;
	const char *catalog = CatalogName(&owner, &relid);
	Oid			save_user;
	int			save_sec;
	uint64		processed;
	char		nulls[8];
	MemoryContext caller = CurrentMemoryContext;

	memset(nulls, ' ', sizeof(nulls));
	GetUserIdAndSecContext(&save_user, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(psprintf(sql_format, catalog), nargs, types, values, nulls, false, 0) < 0)
		elog(ERROR, "geoacc: a statement on %s failed", SNAPSHOT_TABLE);
	processed = SPI_processed;
	if (def && processed > 0)
	{
		HeapTuple	tuple = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		/* in the caller's context: SPI_finish frees the tuple table */
		MemoryContext old = MemoryContextSwitchTo(caller);

		def->catalog = relid;
		def->name = SPI_getvalue(tuple, desc, 1);
		def->id = DatumGetInt64(SPI_getbinval(tuple, desc, 2, &isnull));
		def->owner = DatumGetObjectId(SPI_getbinval(tuple, desc, 3, &isnull));
		def->readers = DatumGetArrayTypePCopy(SPI_getbinval(tuple, desc, 4, &isnull));
		def->kind = SPI_getvalue(tuple, desc, 5);
		def->query = SPI_getvalue(tuple, desc, 6);
		def->generation = DatumGetInt64(SPI_getbinval(tuple, desc, 7, &isnull));
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	SetUserIdAndSecContext(save_user, save_sec);
	return processed;
}

#define DEF_COLUMNS "name, id, owner, readers, kind, query, generation"

/* The definition of `name`, locked against other changes when for_update; ERROR when there is none. */
static SnapshotDef
CatalogGet(const char *name, bool for_update, bool missing_ok, bool *found)
{
	SnapshotDef def = {0};
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	uint64		n = CatalogExecute(for_update ? "SELECT " DEF_COLUMNS " FROM %s WHERE name = $1 FOR UPDATE"
								   : "SELECT " DEF_COLUMNS " FROM %s WHERE name = $1", 1, types, values, &def);

	*found = n > 0;
	if (n == 0 && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("snapshot \"%s\" does not exist", name),
				 errhint("geoacc_snapshots() lists the snapshots of this database.")));
	return def;
}

/* ERROR unless the current user may change the snapshot (its owner's privileges, or a superuser). */
static void
CheckOwner(const SnapshotDef *def, const char *action)
{
	if (!has_privs_of_role(GetUserId(), def->owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be the owner of snapshot \"%s\" to %s it", def->name, action),
				 errdetail("Its owner is %s.", GetUserNameFromId(def->owner, true))));
}

/* ERROR unless the current user may read the snapshot: its owner's, or a reader's privileges. */
static void
CheckReader(const SnapshotDef *def)
{
	Datum	   *readers;
	int			n;

	if (has_privs_of_role(GetUserId(), def->owner))
		return;
	deconstruct_array(def->readers, REGROLEOID, sizeof(Oid), true, TYPALIGN_INT, &readers, NULL, &n);
	for (int i = 0; i < n; i++)
		if (has_privs_of_role(GetUserId(), DatumGetObjectId(readers[i])))
			return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for snapshot \"%s\"", def->name),
			 errhint("Its owner (%s) can grant it with geoacc_snapshot_grant().",
					 GetUserNameFromId(def->owner, true))));
}

static void
CheckName(text *name)
{
	if (VARSIZE_ANY_EXHDR(name) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a snapshot's name must not be empty")));
}

static void
CheckService(void)
{
	if (!GeoaccServiceActive())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snapshots need the geoacc service"),
				 errdetail("They are kept in the service's memory, and geoacc.service is off."),
				 errhint("Add geoacc to shared_preload_libraries, set geoacc.service = gpu (or cpu), and restart.")));
}

/* ------------------------------------------- changes at the transaction's end */

/*
 * The data of a database's snapshots, or of a catalog table's, go when it
 * is dropped (DROP DATABASE, DROP EXTENSION geoacc): a catalog made again
 * starts its ids afresh, and so may a database that gets the same oid, and
 * neither may meet the old data.  A drop that rolls back leaves the
 * definitions, whose data are built again on first use.
 */
static object_access_hook_type prev_object_access_hook = NULL;

static void
SnapshotObjectAccess(ObjectAccessType access, Oid class_id, Oid object_id, int sub_id, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, class_id, object_id, sub_id, arg);
	if (access != OAT_DROP || !GeoaccServiceActive())
		return;
	if (class_id == DatabaseRelationId)
		GeoaccSnapshotForgetAll(object_id, InvalidOid);
	else if (class_id == RelationRelationId && sub_id == 0)
	{
		char	   *name = get_rel_name(object_id);

		if (name && strcmp(name, SNAPSHOT_TABLE) == 0)
			GeoaccSnapshotForgetAll(MyDatabaseId, object_id);
	}
}

void
GeoaccSnapshotInit(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = SnapshotObjectAccess;
}

/*
 * What a transaction made or dropped of the service memory, settled when
 * it ends: data published for a new generation goes if the transaction (or
 * its subtransaction) aborts; the generations a committed refresh or drop
 * replaced go when it commits.
 */
typedef struct Pending
{
	Oid			database;
	Oid			catalog;
	int64		id;
	int64		generation;		/* published (the generations before it go on commit, it on abort); -1: a drop */
	SubTransactionId subxact;
	struct Pending *next;
} Pending;

static Pending *pending = NULL;
static bool callbacks_registered = false;

static void
SettlePending(bool commit, SubTransactionId subxact, SubTransactionId parent)
{
	Pending   **link = &pending;

	while (*link)
	{
		Pending    *p = *link;

		if (subxact != InvalidSubTransactionId && p->subxact != subxact)
		{
			link = &p->next;
			continue;
		}
		if (subxact != InvalidSubTransactionId && commit)
		{
			p->subxact = parent;	/* the parent decides */
			link = &p->next;
			continue;
		}
		if (commit)
			GeoaccSnapshotForget(p->database, p->catalog, p->id, PG_INT64_MIN,
								 p->generation < 0 ? PG_INT64_MAX : p->generation - 1);
		else if (p->generation >= 0)
			GeoaccSnapshotForget(p->database, p->catalog, p->id, p->generation, p->generation);
		*link = p->next;
		pfree(p);
	}
}

static void
SnapshotXactCallback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT)
		SettlePending(true, InvalidSubTransactionId, InvalidSubTransactionId);
	else if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		SettlePending(false, InvalidSubTransactionId, InvalidSubTransactionId);
}

static void
SnapshotSubXactCallback(SubXactEvent event, SubTransactionId subxact, SubTransactionId parent, void *arg)
{
	if (event == SUBXACT_EVENT_COMMIT_SUB)
		SettlePending(true, subxact, parent);
	else if (event == SUBXACT_EVENT_ABORT_SUB)
		SettlePending(false, subxact, parent);
}

static void
AddPending(const SnapshotDef *def, int64 generation)
{
	Pending    *p = MemoryContextAlloc(TopMemoryContext, sizeof(Pending));

	if (!callbacks_registered)
	{
		RegisterXactCallback(SnapshotXactCallback, NULL);
		RegisterSubXactCallback(SnapshotSubXactCallback, NULL);
		callbacks_registered = true;
	}
	*p = (Pending) {MyDatabaseId, def->catalog, def->id, generation, GetCurrentSubTransactionId(), pending};
	pending = p;
}

/* --------------------------------------------------- building a snapshot */

/* The rows of a points snapshot as they are read: growing arrays. */
typedef struct PointsReader
{
	MemoryContext cxt;
	uint64		n;
	uint64		capacity;
	double	   *xy;
	double	   *m;
	double	   *weight;
	uint8	   *flags;
	int64		rows;
	int32		srid;
	bool		weighted;
	bool		has_points;
	bool		lines_without_m;
	const GeoaccInnerQuery *query;
} PointsReader;

static bool
IsWeightType(Oid type)
{
	return type == FLOAT8OID || type == FLOAT4OID || type == INT2OID || type == INT4OID || type == INT8OID ||
		type == NUMERICOID;
}

static double
WeightFromDatum(Datum d, Oid type)
{
	switch (type)
	{
		case FLOAT8OID:
			return DatumGetFloat8(d);
		case FLOAT4OID:
			return DatumGetFloat4(d);
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		case INT8OID:
			return (double) DatumGetInt64(d);
		default:
			return DatumGetFloat8(DirectFunctionCall1(numeric_float8, d));
	}
}

static void
PointsGrow(PointsReader *r)
{
	uint64		capacity = Max(r->capacity * 2, 4096);
	MemoryContext old = MemoryContextSwitchTo(r->cxt);

	if ((uint64) capacity > (uint64) UINT32_MAX)
		capacity = UINT32_MAX;
	if (r->n >= capacity)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a snapshot holds at most %u points", UINT32_MAX - 1),
				 errhint("Make several snapshots of parts of the rows.")));
	r->xy = r->xy ? repalloc_huge(r->xy, sizeof(double) * 2 * capacity) : palloc_extended(sizeof(double) * 2 * capacity, MCXT_ALLOC_HUGE);
	r->m = r->m ? repalloc_huge(r->m, sizeof(double) * capacity) : palloc_extended(sizeof(double) * capacity, MCXT_ALLOC_HUGE);
	r->weight = r->weight ? repalloc_huge(r->weight, sizeof(double) * capacity) : palloc_extended(sizeof(double) * capacity, MCXT_ALLOC_HUGE);
	r->flags = r->flags ? repalloc_huge(r->flags, capacity) : palloc_extended(capacity, MCXT_ALLOC_HUGE);
	r->capacity = capacity;
	MemoryContextSwitchTo(old);
}

static void
PointsReceive(const GeoaccQueryRow *row, void *arg)
{
	PointsReader *r = arg;
	struct varlena *geom;
	GeoaccParts parts;
	GeoaccLine	line;
	double		weight = 1.0;
	char		label[40] = "sql row ";

	r->weighted = OidIsValid(row->types[2]);

	/* the aggregate leaves out rows without a geometry or a weight */
	if (row->nulls[1] || (r->weighted && row->nulls[2]))
		return;
	if (r->weighted)
	{
		weight = WeightFromDatum(row->values[2], row->types[2]);
		if (!(weight >= 0 && weight < DENSITY_MAX_VALUE))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("weight must be at least 0 and below %.0f, not %g", DENSITY_MAX_VALUE, weight),
					 errdetail("%s has that weight.", GeoaccQueryRowLabel(r->query, row))));
	}
	geom = PG_DETOAST_DATUM(row->values[1]);
	/* the row by its number, made without palloc, for messages about a corrupt geometry value */
	label[8 + pg_ulltoa_n(row->number, label + 8)] = '\0';
	GeoaccPartsBegin(&parts, geom, label);
	if (r->rows == 0)
		r->srid = parts.srid;
	else if (parts.srid != r->srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a snapshot's rows must have one SRID"),
				 errdetail("%s has SRID %d; the rows before it have SRID %d.",
						   GeoaccQueryRowLabel(r->query, row), parts.srid, r->srid),
				 errhint("Use ST_Transform() in the query.")));
	r->rows++;
	while (GeoaccPartsNext(&parts, &line))
	{
		bool		is_line = parts.type == GEOACC_LINETYPE || parts.type == GEOACC_MULTILINETYPE;

		if (!DensityCheckPart(&line, NULL))
			DensityCheckPart(&line, GeoaccQueryRowLabel(r->query, row));
		r->has_points |= !is_line;
		r->lines_without_m |= is_line && !line.has_m && line.npoints > 0;
		for (uint32 i = 0; i < line.npoints; i++)
		{
			const double *p = line.coords + (size_t) i * line.ndims;

			if (r->n == r->capacity)
				PointsGrow(r);
			r->xy[2 * r->n] = p[0];
			r->xy[2 * r->n + 1] = p[1];
			r->m[r->n] = line.has_m ? p[line.ndims - 1] : NAN;
			r->weight[r->n] = weight;
			r->flags[r->n] = GEOACC_DENSITY_COUNT | (i > 0 && is_line ? GEOACC_DENSITY_JOIN : 0);
			r->n++;
		}
	}
}

/* a + b, saturated */
static inline uint64
AddBound(uint64 a, uint64 b)
{
	return a > PG_UINT64_MAX - b ? PG_UINT64_MAX : a + b;
}

/* What a point of fixed-point value `value` can add to a cell (as density_state.c bounds it). */
static inline uint64
ValueBound(double value)
{
	double		units = floor(value * 4294967296.0) + 1;

	return units >= (double) (PG_UINT64_MAX / AMOUNTS_PER_POINT_PER_CELL)
		? PG_UINT64_MAX : AMOUNTS_PER_POINT_PER_CELL * (uint64) units;
}

/*
 * The time a joined point adds in the time mode, in hours times its weight,
 * as the aggregate computes it; the first value too large for a sample is
 * kept to be reported when the time mode is asked for.
 */
static void
PointsTimeValues(const PointsReader *r, SnapshotPoints *s)
{
	for (uint32 i = 0; i < s->n; i++)
	{
		double		value = (s->flags[i] & GEOACC_DENSITY_JOIN)
			? r->weight[i] * ((r->m[i] - r->m[i - 1]) / 3600.0) : 0.0;

		if (!(value < DENSITY_MAX_VALUE) && s->time_too_large == 0)
			s->time_too_large = isnan(value) ? INFINITY : value;
		s->time_value[i] = value;
		s->time_bound = AddBound(s->time_bound, ValueBound(value < DENSITY_MAX_VALUE ? value : 0));
	}
}

/* The snapshot's block: the points copied in, the grid index made (in work memory, published afterwards). */
static SnapshotPoints *
PointsBuild(const PointsReader *r)
{
	uint32		n = (uint32) r->n;
	bool		timed = n > 0 && !r->has_points && !r->lines_without_m;
	GeoaccPointGrid index = {0};
	uint64		ncells,
				bytes;
	SnapshotPoints *s;
	char	   *p;

	GeoaccCheck(geoacc_point_grid_shape(r->xy, r->flags, n, GRID_POINTS, GRID_MAX, &index));
	ncells = (uint64) index.gx * index.gy;
	bytes = MAXALIGN(sizeof(SnapshotPoints)) + sizeof(double) * 2 * n + (r->weighted ? sizeof(double) * n : 0) +
		(timed ? sizeof(double) * n : 0) + sizeof(uint64) * (ncells + 1) +
		sizeof(uint32) * (index.nentries + index.nlong) + n + 64;
	/* the arrays are written whole: only the header is zeroed */
	s = GeoaccWorkAlloc(bytes);
	memset(s, 0, sizeof(SnapshotPoints));
	s->head = (SnapshotHead) {KIND_POINTS, bytes, r->rows, n, r->srid, GetCurrentTimestamp()};
	s->n = n;
	s->weighted = r->weighted;
	s->has_points = r->has_points;
	s->lines_without_m = r->lines_without_m;
	s->index = index;
	p = (char *) s + MAXALIGN(sizeof(SnapshotPoints));
	s->xy = (double *) p;
	p += sizeof(double) * 2 * n;
	s->weight = r->weighted ? (double *) p : NULL;
	p += r->weighted ? sizeof(double) * n : 0;
	s->time_value = timed ? (double *) p : NULL;
	p += timed ? sizeof(double) * n : 0;
	s->index.cell_start = (uint64 *) p;
	p += sizeof(uint64) * (ncells + 1);
	s->index.entries = (uint32 *) p;
	p += sizeof(uint32) * index.nentries;
	s->index.longs = (uint32 *) p;
	p += sizeof(uint32) * index.nlong;
	s->flags = (uint8 *) p;
	if (n > 0)
	{
		memcpy(s->xy, r->xy, sizeof(double) * 2 * n);
		memcpy(s->flags, r->flags, n);
		if (r->weighted)
			memcpy(s->weight, r->weight, sizeof(double) * n);
	}
	s->count_bound = (uint64) AMOUNTS_PER_POINT_PER_CELL * n;
	for (uint32 i = 0; r->weighted && i < n; i++)
		s->weight_bound = AddBound(s->weight_bound, ValueBound(r->weight[i]));
	if (timed)
		PointsTimeValues(r, s);
	GeoaccCheck(geoacc_point_grid_fill(s->xy, s->flags, n, &s->index));
	return s;
}

/* The rows of a trajectories snapshot as they are read, as the segment join reads an inner query's. */
typedef struct TracksReader
{
	JoinRows	rows;
	JoinSrid	srid;
	MemoryContext cxt;
	const GeoaccInnerQuery *query;
} TracksReader;

static void
TracksReceive(const GeoaccQueryRow *row, void *arg)
{
	TracksReader *r = arg;
	char	   *label;
	MemoryContext old;

	if (row->nulls[1])
		return;
	label = GeoaccQueryRowLabel(r->query, row);
	old = MemoryContextSwitchTo(r->cxt);
	GeoaccJoinRowsAdd(&r->rows, &r->srid, row->id, PG_DETOAST_DATUM(row->values[1]), label);
	MemoryContextSwitchTo(old);
}

/* The snapshot's block: the trajectories laid out once, as a join would lay out the query's rows. */
static SnapshotTracks *
TracksBuild(TracksReader *r)
{
	bool		has_z = r->rows.count > 0;
	JoinTracks	t;
	uint64		n;
	Size		bytes;
	SnapshotTracks *s;
	char	   *p;

	/* geographies are not read (the query's columns); a join of geometries needs projected ones */
	if (r->srid.set && GeoaccSridIsGeographic(r->srid.srid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a snapshot of trajectories needs projected coordinates"),
				 errdetail("The trajectories have SRID %d, whose coordinates are longitude and latitude in degrees.",
						   r->srid.srid),
				 errhint("Make it of trajectories transformed to a projected SRID, for example ST_Transform(traj, 32618) "
						 "for UTM zone 18N.")));
	for (uint32 i = 0; i < r->rows.count; i++)
		has_z &= r->rows.rows[i].line.has_z;
	t = GeoaccJoinTracksFromRows(&r->rows, has_z, has_z, NULL);
	n = t.npoints;
	bytes = MAXALIGN(sizeof(SnapshotTracks)) + sizeof(int64) * t.count + sizeof(uint32) * (t.count + 1) +
		sizeof(double) * n * (has_z ? 4 : 3) + 64;
	s = GeoaccWorkAlloc(bytes);
	s->head = (SnapshotHead) {KIND_TRAJECTORIES, bytes, t.count, n, r->srid.srid, GetCurrentTimestamp()};
	s->has_z = has_z;
	s->tracks.count = t.count;
	s->tracks.npoints = n;
	p = (char *) s + MAXALIGN(sizeof(SnapshotTracks));
	s->tracks.x = (double *) p;
	s->tracks.y = s->tracks.x + n;
	s->tracks.m = s->tracks.y + n;
	s->tracks.z = has_z ? s->tracks.m + n : NULL;
	p += sizeof(double) * n * (has_z ? 4 : 3);
	s->tracks.ids = (int64 *) p;
	p += sizeof(int64) * t.count;
	s->tracks.offsets = (uint32 *) p;
	memcpy(s->tracks.x, t.x, sizeof(double) * n);
	memcpy(s->tracks.y, t.y, sizeof(double) * n);
	memcpy(s->tracks.m, t.m, sizeof(double) * n);
	if (has_z)
		memcpy(s->tracks.z, t.z, sizeof(double) * n);
	memcpy(s->tracks.ids, t.ids, sizeof(int64) * t.count);
	memcpy(s->tracks.offsets, t.offsets, sizeof(uint32) * (t.count + 1));
	return s;
}

/* The rows of a meshes snapshot as they are read: each row's welded mesh. */
typedef struct MeshesReader
{
	List	   *meshes;			/* of GeoaccSnapshotMesh, in CurrentMemoryContext of the read */
	MemoryContext cxt;
	uint64		vertices;
	uint64		triangles;
	const GeoaccInnerQuery *query;
} MeshesReader;

static void
MeshesReceive(const GeoaccQueryRow *row, void *arg)
{
	MeshesReader *r = arg;
	MemoryContext old;
	GeoaccSnapshotMesh *m;

	if (row->nulls[1])
		return;
	old = MemoryContextSwitchTo(r->cxt);
	m = palloc0(sizeof(GeoaccSnapshotMesh));
	m->id = row->id;
	m->mesh = GeoaccMeshFromGeometry(PG_DETOAST_DATUM(row->values[1]), &m->srid);
	r->meshes = lappend(r->meshes, m);
	r->vertices += m->mesh.nvertices;
	r->triangles += m->mesh.ntriangles;
	MemoryContextSwitchTo(old);
}

/* The snapshot's block: the welded meshes copied in. */
static SnapshotMeshes *
MeshesBuild(MeshesReader *r)
{
	uint32		count = list_length(r->meshes);
	Size		bytes = MAXALIGN(sizeof(SnapshotMeshes)) + MAXALIGN(sizeof(GeoaccSnapshotMesh) * count) +
		sizeof(double) * 3 * r->vertices + sizeof(uint32) * 3 * r->triangles + 64;
	SnapshotMeshes *s = GeoaccWorkAlloc(bytes);
	char	   *p = (char *) s + MAXALIGN(sizeof(SnapshotMeshes));
	double	   *positions;
	uint32	   *triangles;
	uint32		i = 0;
	ListCell   *lc;

	s->head = (SnapshotHead) {KIND_MESHES, bytes, count, r->vertices, 0, GetCurrentTimestamp()};
	s->count = count;
	s->meshes = (GeoaccSnapshotMesh *) p;
	p += MAXALIGN(sizeof(GeoaccSnapshotMesh) * count);
	positions = (double *) p;
	triangles = (uint32 *) (positions + 3 * r->vertices);
	foreach(lc, r->meshes)
	{
		const GeoaccSnapshotMesh *m = lfirst(lc);
		GeoaccSnapshotMesh *to = &s->meshes[i++];

		*to = *m;
		memcpy(positions, m->mesh.positions, sizeof(double) * 3 * m->mesh.nvertices);
		memcpy(triangles, m->mesh.triangles, sizeof(uint32) * 3 * m->mesh.ntriangles);
		to->mesh.positions = positions;
		to->mesh.triangles = triangles;
		positions += 3 * m->mesh.nvertices;
		triangles += 3 * m->mesh.ntriangles;
		if (i == 1)
			s->head.srid = m->srid;
	}
	return s;
}

/* The columns of the kinds, told apart by name: (id, geom[, weight]), (id, traj) or (id, mesh). */
static const GeoaccQueryForm SnapshotQueryForms[] = {
	{3, {{"id", GeoaccIsIdType}, {"geom", GeoaccIsGeometryType}, {"weight", IsWeightType, true}}},
	{2, {{"id", GeoaccIsIdType}, {"traj", GeoaccIsGeometryType}}},
	{2, {{"id", GeoaccIsIdType}, {"mesh", GeoaccIsGeometryType}}}
};

/* The readers: the query's columns decide which one takes its rows. */
typedef struct SnapshotReader
{
	PointsReader points;
	TracksReader tracks;
	MeshesReader meshes;
} SnapshotReader;

static void
SnapshotReceive(const GeoaccQueryRow *row, void *arg)
{
	SnapshotReader *r = arg;

	if (row->form == KIND_POINTS)
		PointsReceive(row, &r->points);
	else if (row->form == KIND_TRAJECTORIES)
		TracksReceive(row, &r->tracks);
	else
		MeshesReceive(row, &r->meshes);
}

/*
 * Run the query (as `as_user`, with the restrictions of a maintenance
 * operation when that is not the current user) and build its data.
 */
static SnapshotHead *
SnapshotFromQuery(const char *sql, Oid as_user)
{
	SnapshotReader *r = palloc0(sizeof(SnapshotReader));
	GeoaccInnerQuery query = {"sql", SnapshotQueryForms, lengthof(SnapshotQueryForms),
		"(id, geom[, weight]), (id, traj) or (id, mesh)",
		"id is an integer; geom a geometry of points or lines, weight a number (for density tiles); traj a "
		"LINESTRING M geometry (for segment joins and TWED); mesh a TIN Z (for clips).", false, SnapshotReceive, r};
	Oid			save_user;
	int			save_sec;
	int			form;

	r->points.cxt = r->tracks.cxt = r->meshes.cxt = CurrentMemoryContext;
	r->points.query = r->tracks.query = r->meshes.query = &query;
	GeoaccJoinRowsInit(&r->tracks.rows, AllocSetContextCreate(CurrentMemoryContext, "snapshot geometries",
															 ALLOCSET_DEFAULT_SIZES));
	GetUserIdAndSecContext(&save_user, &save_sec);
	if (as_user != save_user)
		SetUserIdAndSecContext(as_user, save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	form = GeoaccInnerQueryRead(&query, sql);
	SetUserIdAndSecContext(save_user, save_sec);
	if (form == KIND_POINTS)
		return &PointsBuild(&r->points)->head;
	if (form == KIND_TRAJECTORIES)
		return &TracksBuild(&r->tracks)->head;
	return &MeshesBuild(&r->meshes)->head;
}

/* --------------------------------------------------------------- functions */

/*
 * The data of a snapshot of `kind` the current user may read, pinned (built
 * first when the service memory lacks it).
 */
static pg_noinline SnapshotHead *
SnapshotOpen(const char *name, SnapshotKind kind)
{
	bool		found;
	SnapshotDef def;
	SnapshotHead *data;

	CheckService();
	def = CatalogGet(name, false, false, &found);
	CheckReader(&def);
	if (strcmp(def.kind, kind_names[kind]) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("snapshot \"%s\" holds %s, not %s", name, def.kind, kind_names[kind]),
				 errhint("A snapshot of (id, geom[, weight]) rows holds points, for density tiles; one of (id, traj) "
						 "rows trajectories, for segment joins and TWED; one of (id, mesh) rows meshes, for clips.")));
	data = GeoaccSnapshotPin(MyDatabaseId, def.catalog, def.id, def.generation);
	if (data == NULL)
	{
		SnapshotHead *s = SnapshotFromQuery(def.query, def.owner);

		if (s->kind != kind)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("snapshot \"%s\"'s query no longer returns %s", name, kind_names[kind]),
					 errhint("Drop the snapshot and make it again.")));
		data = GeoaccSnapshotPublish(MyDatabaseId, def.catalog, def.id, def.generation, s);
	}
	return data;
}

/*
 * geoacc_snapshot_create(name, sql): a snapshot of the query's rows, owned
 * by the current user; returns the rows kept
 */
PG_FUNCTION_INFO_V1(geoacc_snapshot_create);
Datum
geoacc_snapshot_create(PG_FUNCTION_ARGS)
{
	text	   *name = PG_GETARG_TEXT_PP(0);
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(1));
	bool		found;
	SnapshotDef def;
	Oid			types[4] = {TEXTOID, OIDOID, TEXTOID};
	Datum		values[4] = {PointerGetDatum(name), ObjectIdGetDatum(GetUserId()), CStringGetTextDatum(sql)};
	SnapshotHead *s;

	CheckService();
	CheckName(name);
	CatalogGet(text_to_cstring(name), true, true, &found);
	if (found)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("snapshot \"%s\" already exists", text_to_cstring(name)),
				 errhint("Refresh it with geoacc_snapshot_refresh(), or drop it first.")));
	s = SnapshotFromQuery(sql, GetUserId());
	types[3] = TEXTOID;
	values[3] = CStringGetTextDatum(kind_names[s->kind]);
	CatalogExecute("INSERT INTO %s (name, owner, query, kind) VALUES ($1, $2, $3, $4) RETURNING "
				   DEF_COLUMNS, 4, types, values, &def);
	GeoaccSnapshotPublish(MyDatabaseId, def.catalog, def.id, def.generation, s);
	AddPending(&def, def.generation);
	GeoaccSnapshotUnpin();
	PG_RETURN_INT64(s->rows);
}

/* geoacc_snapshot_refresh(name): the query run again, as the owner; returns the rows kept */
PG_FUNCTION_INFO_V1(geoacc_snapshot_refresh);
Datum
geoacc_snapshot_refresh(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		found;
	SnapshotDef def;
	SnapshotHead *s;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(name)};

	CheckService();
	def = CatalogGet(name, true, false, &found);
	CheckOwner(&def, "refresh");
	s = SnapshotFromQuery(def.query, def.owner);
	/* its kind follows its query's columns */
	values[1] = CStringGetTextDatum(kind_names[s->kind]);
	CatalogExecute("UPDATE %s SET generation = generation + 1, refreshed = now(), kind = $2 WHERE name = $1 "
				   "RETURNING " DEF_COLUMNS, 2, types, values, &def);
	GeoaccSnapshotPublish(MyDatabaseId, def.catalog, def.id, def.generation, s);
	AddPending(&def, def.generation);
	GeoaccSnapshotUnpin();
	PG_RETURN_INT64(s->rows);
}

/* geoacc_snapshot_drop(name, if_exists) */
PG_FUNCTION_INFO_V1(geoacc_snapshot_drop);
Datum
geoacc_snapshot_drop(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		if_exists = PG_GETARG_BOOL(1);
	bool		found;
	SnapshotDef def;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};

	def = CatalogGet(name, true, if_exists, &found);
	if (!found)
	{
		ereport(NOTICE, (errmsg("snapshot \"%s\" does not exist, skipping", name)));
		PG_RETURN_VOID();
	}
	CheckOwner(&def, "drop");
	CatalogExecute("DELETE FROM %s WHERE name = $1", 1, types, values, NULL);
	/* every generation goes when the drop commits */
	AddPending(&def, -1);
	PG_RETURN_VOID();
}

/* geoacc_snapshot_grant(name, role) and geoacc_snapshot_revoke(name, role): who else may read it */
static Datum
ChangeReaders(FunctionCallInfo fcinfo, bool grant)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			role = PG_GETARG_OID(1);
	bool		found;
	SnapshotDef def;
	Oid			types[2] = {TEXTOID, OIDOID};
	Datum		values[2] = {CStringGetTextDatum(name), ObjectIdGetDatum(role)};

	def = CatalogGet(name, true, false, &found);
	CheckOwner(&def, grant ? "grant" : "revoke");
	CatalogExecute(grant
				   ? "UPDATE %s SET readers = array_append(array_remove(readers, $2::regrole), $2::regrole) WHERE name = $1"
				   : "UPDATE %s SET readers = array_remove(readers, $2::regrole) WHERE name = $1",
				   2, types, values, NULL);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(geoacc_snapshot_grant);
Datum
geoacc_snapshot_grant(PG_FUNCTION_ARGS)
{
	return ChangeReaders(fcinfo, true);
}

PG_FUNCTION_INFO_V1(geoacc_snapshot_revoke);
Datum
geoacc_snapshot_revoke(PG_FUNCTION_ARGS)
{
	return ChangeReaders(fcinfo, false);
}

/*
 * geoacc_snapshot_memory(id, generation): the rows, points and bytes of a
 * snapshot's data, when it was built, and the device processes that keep it
 * prepared with the device memory they hold for it; NULL when the service
 * memory does not hold it (geoacc_snapshots() shows it beside the catalog)
 */
PG_FUNCTION_INFO_V1(geoacc_snapshot_memory);
Datum
geoacc_snapshot_memory(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[6];
	bool		nulls[6] = {false, false, false, false, false, false};
	const SnapshotHead *s;
	uint64		serial;
	int			copies;
	uint64		device_bytes;
	Oid			owner;
	Oid			catalog;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (!GeoaccServiceActive())
		PG_RETURN_NULL();
	(void) CatalogName(&owner, &catalog);
	s = GeoaccSnapshotPin(MyDatabaseId, catalog, PG_GETARG_INT64(0), PG_GETARG_INT64(1));
	if (s == NULL)
		PG_RETURN_NULL();
	values[0] = Int64GetDatum(s->rows);
	values[1] = Int64GetDatum((int64) s->points);
	values[2] = Int64GetDatum((int64) s->bytes);
	values[3] = TimestampTzGetDatum(s->built);
	GeoaccSnapshotPinnedResidence(&serial, &copies, &device_bytes);
	values[4] = Int32GetDatum(copies);
	values[5] = Int64GetDatum((int64) device_bytes);
	GeoaccSnapshotUnpin();
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/* ------------------------------------------------------- density rasters */

/*
 * The snapshot's points as the device processes keep them prepared: with
 * the weights and the times (those a sample can hold), under the serial of
 * the entry this backend has pinned; `values` is the array the projection
 * takes.
 */
static DensityResidence *
SnapshotResidence(const SnapshotPoints *s, DensityResidence *r, const double *values)
{
	int			copies;
	uint64		device_bytes;

	*r = (DensityResidence) {0, {NULL, NULL}, 0, -1};
	GeoaccSnapshotPinnedResidence(&r->serial, &copies, &device_bytes);
	if (s->weight)
		r->values[r->nvalues++] = s->weight;
	if (s->time_value && s->time_too_large == 0)
		r->values[r->nvalues++] = s->time_value;
	for (int k = 0; k < r->nvalues; k++)
		if (r->values[k] == values)
			r->slot = k;
	if (values != NULL && r->slot < 0)
		r->serial = 0;			/* values it does not keep: projected from the service memory */
	return r;
}

/*
 * Add what the snapshot's points add to the state's cells: the points near
 * the grid, found through the index, when no cell can overflow whatever
 * they add; otherwise every point, as the aggregate appends them (each with
 * the flags and value of its mode, a joined point after its predecessor),
 * whose chunks and cell checks guard the cells.
 */
static void
ProjectSnapshot(DensityState *state, const SnapshotPoints *s, const char *name)
{
	const DensityArgs *args = &state->h.args;
	bool		time_mode = args->mode == GEOACC_DENSITY_TIME;
	const double *values = time_mode ? s->time_value : s->weight;
	GeoaccDensityPoints points = {s->xy, s->flags, values, s->n, args->mode, args->interpolate};
	DensityResidence residence;
	int64		last = -1;

	/* as the aggregate over the snapshot's rows refuses them, wherever they lie */
	if (time_mode && s->has_points)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snapshot \"%s\" has points: the time mode needs lines", name),
				 errhint("In the time mode each segment adds the time between its ends.")));
	if (time_mode && s->lines_without_m)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snapshot \"%s\" has lines without M values", name),
				 errhint("The time mode reads the time of each vertex from M, in seconds.")));
	if (time_mode && s->time_too_large != 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("snapshot \"%s\" adds %g at a vertex, more than a sample can hold", name, s->time_too_large),
				 errhint("Divide the weights by a constant.")));
	if (s->n == 0 ||
		DensityStateProjectIndexed(state, &points, &s->index,
								   time_mode ? s->time_bound : s->weighted ? s->weight_bound : s->count_bound,
								   SnapshotResidence(s, &residence, values)))
		return;
	for (uint32 i = 0; i < s->n; i++)
	{
		bool		joined = (s->flags[i] & GEOACC_DENSITY_JOIN) != 0;
		uint8		flags = time_mode ? 0 : GEOACC_DENSITY_COUNT;

		if (time_mode && !joined)
			continue;			/* a line's first vertex adds nothing in the time mode */
		if (joined && (time_mode || args->interpolate))
			flags |= GEOACC_DENSITY_JOIN;
		if ((flags & GEOACC_DENSITY_JOIN) && last != (int64) i - 1)
			DensityStateAppend(state, s->xy[2 * (size_t) i - 2], s->xy[2 * (size_t) i - 1], 0, 0.0);
		DensityStateAppend(state, s->xy[2 * (size_t) i], s->xy[2 * (size_t) i + 1], flags, values ? values[i] : 1.0);
		last = i;
	}
}

/*
 * The density state over a snapshot's rows of a call whose arguments from
 * the first are (snapshot, extent, width, height, kernel, kernel_size,
 * interpolate, mode), every point projected: DensityPixels makes the pixels
 * gpu_density_raster makes (zeros where no row adds anything); the header
 * tells their grid and SRID.
 */
static DensityState *
SnapshotDensityState(FunctionCallInfo fcinfo, DensityHeader *h)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	SnapshotPoints *s;
	DensityState *volatile state = NULL;

	DensityArgsFromCall(fcinfo, 1, true, &h->args);
	s = (SnapshotPoints *) SnapshotOpen(name, KIND_POINTS);
	PG_TRY();
	{
		h->args.weighted = s->weighted;
		if (s->n > 0 && h->args.extent_srid != s->head.srid)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the extent and snapshot \"%s\" have different SRIDs", name),
					 errdetail("The extent has SRID %d, the snapshot SRID %d.", h->args.extent_srid, s->head.srid),
					 errhint("Make the snapshot of ST_Transform(geom, %d) for tiles in that SRID.", h->args.extent_srid)));
		h->srid = s->n > 0 ? s->head.srid : h->args.extent_srid;
		h->rows = s->head.rows;
		state = DensityStateCreate(CurrentMemoryContext, h);
		ProjectSnapshot(state, s, name);
		DensityStateFlush(state);
	}
	PG_FINALLY();
	{
		GeoaccSnapshotUnpin();
	}
	PG_END_TRY();
	return state;
}

/*
 * The PNG of the last empty tile made (every pixel zero) and what it was
 * made with: most tiles of a map lie where nothing is, and their PNG depends
 * on the size and the colouring alone.
 */
static struct
{
	uint32		width;
	uint32		height;
	GeoaccHeatmapArgs args;		/* colormap and scale in png's block, after it */
	bytea	   *png;			/* in TopMemoryContext; NULL: none kept */
} EmptyTile;

static bool
SameHeatmapArgs(const GeoaccHeatmapArgs *a, const GeoaccHeatmapArgs *b)
{
	/* the bounds bit for bit: -0 and 0 need not colour alike */
	return strcmp(a->colormap, b->colormap) == 0 && strcmp(a->scale, b->scale) == 0 &&
		a->has_vmin == b->has_vmin && memcmp(&a->vmin, &b->vmin, sizeof(double)) == 0 &&
		a->has_vmax == b->has_vmax && memcmp(&a->vmax, &b->vmax, sizeof(double)) == 0 &&
		a->transparent_zero == b->transparent_zero;
}

/* The heatmap PNG of a tile of zeros, the one kept when it was made with the same size and colouring. */
static bytea *
EmptyTilePng(const GeoaccDensityGrid *grid, const GeoaccHeatmapArgs *args)
{
	size_t		bytes = sizeof(double) * grid->width * grid->height;
	double	   *zeros;
	GeoaccRasterBand band;
	bytea	   *png;
	bytea	   *kept;
	char	   *colormap;
	char	   *scale;
	size_t		colormap_bytes;

	if (EmptyTile.png != NULL && EmptyTile.width == grid->width && EmptyTile.height == grid->height &&
		SameHeatmapArgs(&EmptyTile.args, args))
	{
		png = palloc(VARSIZE(EmptyTile.png));
		memcpy(png, EmptyTile.png, VARSIZE(EmptyTile.png));
		return png;
	}

	zeros = palloc_extended(bytes, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	GeoaccRasterBandOfPixels(grid, zeros, &band);
	png = GeoaccHeatmapPng(&band, args);	/* may raise an ERROR: nothing kept then */
	pfree(zeros);

	/*
	 * one block for the PNG and its arguments' strings, allocated before the
	 * entry kept is touched: an ERROR on the way leaves that entry whole
	 */
	colormap_bytes = strlen(args->colormap) + 1;
	kept = MemoryContextAlloc(TopMemoryContext, VARSIZE(png) + colormap_bytes + strlen(args->scale) + 1);
	memcpy(kept, png, VARSIZE(png));
	colormap = (char *) kept + VARSIZE(png);
	memcpy(colormap, args->colormap, colormap_bytes);
	scale = colormap + colormap_bytes;
	strcpy(scale, args->scale);
	if (EmptyTile.png != NULL)
		pfree(EmptyTile.png);
	EmptyTile.args = *args;
	EmptyTile.args.colormap = colormap;
	EmptyTile.args.scale = scale;
	EmptyTile.width = grid->width;
	EmptyTile.height = grid->height;
	EmptyTile.png = kept;
	return png;
}

/*
 * geoacc_snapshot_density(snapshot, extent, width, height, kernel,
 * kernel_size, interpolate, mode): the raster WKB gpu_density_raster gives
 * over the snapshot's rows (with their weights), read from the service
 * memory; a raster of zeros where no row adds anything
 */
PG_FUNCTION_INFO_V1(geoacc_snapshot_density);
Datum
geoacc_snapshot_density(PG_FUNCTION_ARGS)
{
	DensityHeader h = {0};
	double	   *pixels;
	bytea	   *raster;

	for (int a = 0; a < PG_NARGS(); a++)
		if (PG_ARGISNULL(a))
			PG_RETURN_NULL();
	pixels = DensityPixels(SnapshotDensityState(fcinfo, &h), false, NULL, NULL);
	raster = GeoaccRasterWkb(&h.args.grid, h.srid, pixels);
	GeoaccWorkFree(pixels);
	PG_RETURN_BYTEA_P(raster);
}

/*
 * geoacc_snapshot_density_png(snapshot, extent, width, height, kernel,
 * kernel_size, interpolate, mode, colormap, scale, vmin, vmax,
 * transparent_zero): geoacc_raster_png of geoacc_snapshot_density, from the
 * pixels without the raster WKB in between (a map tile's 512 kB); where no
 * point adds anything, the PNG of zeros last made with the same size and
 * colouring
 */
PG_FUNCTION_INFO_V1(geoacc_snapshot_density_png);
Datum
geoacc_snapshot_density_png(PG_FUNCTION_ARGS)
{
	DensityHeader h = {0};
	GeoaccHeatmapArgs heatmap;
	DensityState *state;
	GeoaccRasterBand band;
	double	   *pixels;
	bytea	   *png;

	/* vmin, vmax and transparent_zero (arguments 10 to 12) may be NULL, as geoacc_raster_png's */
	for (int a = 0; a < 10; a++)
		if (PG_ARGISNULL(a))
			PG_RETURN_NULL();
	GeoaccHeatmapArgsFromCall(fcinfo, 8, &heatmap);
	state = SnapshotDensityState(fcinfo, &h);
	if (!DensityStateHasCells(state))
		PG_RETURN_BYTEA_P(EmptyTilePng(&h.args.grid, &heatmap));
	pixels = DensityPixels(state, false, NULL, NULL);
	GeoaccRasterBandOfPixels(&h.args.grid, pixels, &band);
	png = GeoaccHeatmapPng(&band, &heatmap);
	GeoaccWorkFree(pixels);
	PG_RETURN_BYTEA_P(png);
}

/* ------------------------------------------- joins, TWED and clips of a snapshot */

/*
 * gpu_segment_join_snapshot(a_sql, snapshot, distance, method, use_z): the
 * join of a_sql's trajectories with a snapshot's, read from the GPU
 * service's memory: the rows gpu_segment_join(a_sql, the snapshot's query,
 * ...) gives on the rows the snapshot holds
 */
PG_FUNCTION_INFO_V1(gpu_segment_join_snapshot);
Datum
gpu_segment_join_snapshot(PG_FUNCTION_ARGS)
{
	char	   *name;

	InitMaterializedSRF(fcinfo, 0);
	for (int a = 0; a < 5; a++)
		if (PG_ARGISNULL(a))
			return (Datum) 0;
	name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	PG_TRY();
	{
		SnapshotTracks *s = (SnapshotTracks *) SnapshotOpen(name, KIND_TRAJECTORIES);
		uint64		serial;
		int			copies;
		uint64		device_bytes;

		GeoaccSnapshotPinnedResidence(&serial, &copies, &device_bytes);
		GeoaccJoinAgainst(fcinfo, psprintf("snapshot \"%s\"", name), &s->tracks, serial, s->head.srid, s->has_z);
	}
	PG_FINALLY();
	{
		GeoaccSnapshotUnpin();
	}
	PG_END_TRY();
	return (Datum) 0;
}

/*
 * gpu_twed_matrix_snapshot(a_sql, snapshot, nu, lambda, degree, root,
 * float32, k, use_z): gpu_twed_matrix of a_sql's series against the
 * trajectories of a snapshot, read from the GPU service's memory
 */
PG_FUNCTION_INFO_V1(gpu_twed_matrix_snapshot);
Datum
gpu_twed_matrix_snapshot(PG_FUNCTION_ARGS)
{
	char	   *name;

	InitMaterializedSRF(fcinfo, 0);
	/* k (argument 7) NULL: every pair */
	for (int a = 0; a < 9; a++)
		if (PG_ARGISNULL(a) && a != 7)
			return (Datum) 0;
	name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	PG_TRY();
	{
		SnapshotTracks *s = (SnapshotTracks *) SnapshotOpen(name, KIND_TRAJECTORIES);

		GeoaccTwedMatrixAgainst(fcinfo, psprintf("snapshot \"%s\"", name), &s->tracks, s->head.srid, s->has_z);
	}
	PG_FINALLY();
	{
		GeoaccSnapshotUnpin();
	}
	PG_END_TRY();
	return (Datum) 0;
}

/*
 * gpu_mesh_clip_snapshot(snapshot, boxes box3d[]): (id, box_index, mesh) for
 * every row of a snapshot of meshes and every box: the rows gpu_mesh_clip
 * gives each row's mesh, read from the GPU service's memory, already welded
 */
PG_FUNCTION_INFO_V1(gpu_mesh_clip_snapshot);
Datum
gpu_mesh_clip_snapshot(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ArrayType  *boxes = PG_GETARG_ARRAYTYPE_P(1);

	InitMaterializedSRF(fcinfo, 0);
	PG_TRY();
	{
		SnapshotMeshes *s = (SnapshotMeshes *) SnapshotOpen(name, KIND_MESHES);

		GeoaccMeshClipRows((ReturnSetInfo *) fcinfo->resultinfo, boxes, s->meshes, s->count);
	}
	PG_FINALLY();
	{
		GeoaccSnapshotUnpin();
	}
	PG_END_TRY();
	PG_RETURN_NULL();
}
