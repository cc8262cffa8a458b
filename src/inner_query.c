/*
 * inner_query.c
 *
 * What every function that runs a user's inner SQL needs (pgRouting's
 * pattern): the query checked to be one read-only SELECT before it runs,
 * column types recognised by OID with domains resolved to their base type
 * (a user's own type named "geometry" is not PostGIS's), integer ids, and
 * the PostGIS catalogue facts those functions check (the geometry type,
 * geographic SRIDs).
 */
#include "geoacc.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

/* PostGIS's extension OID and the objects found for it (redone when it changes) */
static Oid	postgis_extension = InvalidOid;
static Oid	postgis_schema = InvalidOid;
static Oid	postgis_geometry = InvalidOid;
static Oid	postgis_geography = InvalidOid;

Oid
GeoaccExtensionSchema(Oid extension)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			schema = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(extension));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		schema = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return schema;
}

/* Find PostGIS's schema and geometry type, once per installation of PostGIS. */
static void
LookupPostgis(void)
{
	Oid			extension = get_extension_oid("postgis", true);

	if (!OidIsValid(extension))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("PostGIS is not installed in this database"),
				 errhint("Run CREATE EXTENSION postgis.")));
	if (extension == postgis_extension)
		return;
	postgis_schema = GeoaccExtensionSchema(extension);
	postgis_geometry = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("geometry"),
									   ObjectIdGetDatum(postgis_schema));
	if (!OidIsValid(postgis_geometry))
		elog(ERROR, "PostGIS's geometry type not found in schema %u", postgis_schema);
	postgis_geography = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("geography"),
										ObjectIdGetDatum(postgis_schema));
	if (!OidIsValid(postgis_geography))
		elog(ERROR, "PostGIS's geography type not found in schema %u", postgis_schema);
	postgis_extension = extension;
}

Oid
GeoaccGeometryOid(void)
{
	LookupPostgis();
	return postgis_geometry;
}

const char *
GeoaccPostgisSchemaName(void)
{
	LookupPostgis();
	return quote_identifier(get_namespace_name(postgis_schema));
}

Oid
GeoaccGeographyOid(void)
{
	LookupPostgis();
	return postgis_geography;
}

Datum
GeoaccGeographyFromGeometry(Datum geometry)
{
	/* looked up once per installation of PostGIS, in memory that lasts the session */
	static FmgrInfo cast;
	static Oid	cast_extension = InvalidOid;

	LookupPostgis();
	if (cast_extension != postgis_extension)
	{
		Oid			argtype = postgis_geometry;
		Oid			function = LookupFuncName(list_make2(makeString(get_namespace_name(postgis_schema)),
														 makeString("geography")), 1, &argtype, false);

		fmgr_info_cxt(function, &cast, TopMemoryContext);
		cast_extension = postgis_extension;
	}
	return FunctionCall1(&cast, geometry);
}

Oid
GeoaccColumnType(TupleDesc desc, int attnum)
{
	return getBaseType(TupleDescAttr(desc, attnum - 1)->atttypid);
}

bool
GeoaccIsIdType(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID;
}

int64
GeoaccIdFromDatum(Datum datum, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(datum);
		case INT4OID:
			return DatumGetInt32(datum);
		case INT8OID:
			return DatumGetInt64(datum);
		default:
			elog(ERROR, "unexpected id type %u", type);
	}
	pg_unreachable();
}

/* ERROR naming `argname` unless `sql` was parsed into one read-only SELECT. */
static void
CheckOneSelect(SPIPlanPtr plan, const char *argname)
{
	List	   *sources = SPI_plan_get_plan_sources(plan);
	CachedPlanSource *source;
	ListCell   *lc;

	if (list_length(sources) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be one SELECT query", argname),
				 errdetail("It holds %d statements.", list_length(sources))));
	source = linitial(sources);
	if (source->commandTag != CMDTAG_SELECT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be one SELECT query", argname),
				 errdetail("It is a statement of type %s.", GetCommandTagName(source->commandTag))));
	foreach(lc, source->query_list)
	{
		Query	   *query = lfirst_node(Query, lc);

		if (query->commandType != CMD_SELECT || query->utilityStmt != NULL || query->hasModifyingCTE ||
			query->rowMarks != NIL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must be one SELECT query", argname),
					 errdetail("It changes data or locks rows.")));
	}
}

/* What a receiver that keeps its rows as they come needs at its end: nothing. */
static void
ReceiverEnd(DestReceiver *self)
{
}

/*
 * SPI's read_only stops the query's own statements from writing, not the
 * volatile functions it calls: those would INSERT, DROP or nextval() as
 * they please.  A read-only transaction refuses them all (temporary tables
 * excepted, as always), so the query runs as SET TRANSACTION READ ONLY
 * would run it, and the setting comes back whether it ends or fails (an
 * exception block of the caller's may go on after an ERROR).
 */
static int
ExecuteReadOnly(SPIPlanPtr plan, const SPIExecuteOptions *options)
{
	const bool	was_read_only = XactReadOnly;
	int			rc;

	XactReadOnly = true;
	PG_TRY();
	{
		rc = SPI_execute_plan_extended(plan, options);
	}
	PG_FINALLY();
	{
		XactReadOnly = was_read_only;
	}
	PG_END_TRY();
	return rc;
}

/*
 * Inside SPI_connect: run the user's query `sql`, given as argument
 * `argname`, to completion into `dest` (it may use parallel workers).  An
 * ERROR unless it is one SELECT that neither changes data nor locks rows;
 * it runs as in a read-only transaction, so that the functions it calls
 * cannot write either.
 */
static void
InnerQueryRun(const char *sql, const char *argname, DestReceiver *dest)
{
	SPIPlanPtr	plan = SPI_prepare_cursor(sql, 0, NULL, CURSOR_OPT_PARALLEL_OK);
	SPIExecuteOptions options;
	int			rc;

	if (plan == NULL)
		elog(ERROR, "SPI_prepare_cursor failed for %s: %s", argname, SPI_result_code_string(SPI_result));
	CheckOneSelect(plan, argname);
	memset(&options, 0, sizeof(options));
	options.read_only = true;
	options.dest = dest;
	rc = ExecuteReadOnly(plan, &options);
	/* SPI says SPI_OK_UTILITY for a SELECT into a receiver of its own (DestNone) */
	if (rc != SPI_OK_SELECT && rc != SPI_OK_UTILITY)
		elog(ERROR, "SPI_execute_plan_extended failed for %s: %s", argname, SPI_result_code_string(rc));
}

/* ------------------------------------------------------------ the reader */

/* The receiver of an inner query's rows, handing each to the caller's function. */
typedef struct QueryReceiver
{
	DestReceiver pub;
	const GeoaccInnerQuery *q;
	GeoaccQueryRow row;
	int			attnums[GEOACC_QUERY_MAX_COLUMNS];	/* of the matched form's columns; 0: absent */
	const GeoaccQueryForm *form;
	MemoryContext rowcxt;		/* reset after each row */
} QueryReceiver;

/* The column named `name` (case-insensitive), 0 if none. */
static int
ColumnNamed(TupleDesc desc, const char *name)
{
	for (int i = 0; i < desc->natts; i++)
		if (!TupleDescAttr(desc, i)->attisdropped && pg_strcasecmp(NameStr(TupleDescAttr(desc, i)->attname), name) == 0)
			return i + 1;
	return 0;
}

/* Whether the form's columns are all there by name, with types it accepts; their numbers into attnums. */
static bool
MatchByName(const GeoaccQueryForm *form, TupleDesc desc, int *attnums)
{
	for (int k = 0; k < form->ncolumns; k++)
	{
		const GeoaccQueryColumn *c = &form->columns[k];

		attnums[k] = ColumnNamed(desc, c->name);
		if (attnums[k] == 0 ? !c->optional : !c->accepts(GeoaccColumnType(desc, attnums[k])))
			return false;
	}
	return true;
}

/* Whether the query returns the form's columns in order (optional ones may be left off the end), nothing else. */
static bool
MatchByPosition(const GeoaccQueryForm *form, TupleDesc desc, int *attnums)
{
	if (desc->natts > form->ncolumns)
		return false;
	for (int k = 0; k < form->ncolumns; k++)
	{
		const GeoaccQueryColumn *c = &form->columns[k];

		attnums[k] = k < desc->natts ? k + 1 : 0;
		if (attnums[k] == 0 ? !c->optional : !c->accepts(GeoaccColumnType(desc, k + 1)))
			return false;
	}
	return true;
}

/* The ERROR of a query whose columns match no form. */
static void
ColumnsError(const GeoaccInnerQuery *q, TupleDesc desc)
{
	StringInfoData types;

	initStringInfo(&types);
	for (int i = 1; i <= desc->natts; i++)
		appendStringInfo(&types, "%s%s", i > 1 ? ", " : "", format_type_be(TupleDescAttr(desc, i - 1)->atttypid));
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("%s must return %s", q->argname, q->shape),
			 errdetail("It returns (%s).", types.data),
			 errhint("%s Columns are found by these names; without them, by position.", q->hint)));
}

/* The columns, matched before any row, so that a query returning none is checked too: by name, else by position. */
static void
QueryStartup(DestReceiver *self, int operation, TupleDesc desc)
{
	QueryReceiver *r = (QueryReceiver *) self;
	const GeoaccInnerQuery *q = r->q;

	for (int by_name = 1; by_name >= 0 && r->form == NULL; by_name--)
		for (int f = 0; f < q->nforms && r->form == NULL; f++)
			if (by_name ? MatchByName(&q->forms[f], desc, r->attnums) : MatchByPosition(&q->forms[f], desc, r->attnums))
			{
				r->form = &q->forms[f];
				r->row.form = f;
			}
	if (r->form == NULL)
		ColumnsError(q, desc);
	for (int k = 0; k < r->form->ncolumns; k++)
		r->row.types[k] = r->attnums[k] > 0 ? GeoaccColumnType(desc, r->attnums[k]) : InvalidOid;
}

static bool
QueryReceive(TupleTableSlot *slot, DestReceiver *self)
{
	QueryReceiver *r = (QueryReceiver *) self;
	GeoaccQueryRow *row = &r->row;
	MemoryContext old = MemoryContextSwitchTo(r->rowcxt);

	row->number++;
	for (int k = 0; k < r->form->ncolumns; k++)
	{
		row->nulls[k] = true;
		row->values[k] = (Datum) 0;
		if (r->attnums[k] > 0)
			row->values[k] = slot_getattr(slot, r->attnums[k], &row->nulls[k]);
	}
	if (row->nulls[0] && !r->q->null_ids_skipped)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s row " UINT64_FORMAT " has a NULL id", r->q->argname, row->number)));
	row->id = row->nulls[0] ? 0 : GeoaccIdFromDatum(row->values[0], row->types[0]);
	r->q->receive(row, r->q->arg);
	MemoryContextSwitchTo(old);
	MemoryContextReset(r->rowcxt);
	if ((row->number & 0x3FF) == 0)
		CHECK_FOR_INTERRUPTS();
	return true;
}

int
GeoaccInnerQueryRead(const GeoaccInnerQuery *q, const char *sql)
{
	QueryReceiver r;

	Assert(q->nforms > 0);
	memset(&r, 0, sizeof(r));
	r.pub.receiveSlot = QueryReceive;
	r.pub.rStartup = QueryStartup;
	r.pub.rShutdown = ReceiverEnd;
	r.pub.rDestroy = ReceiverEnd;
	r.pub.mydest = DestNone;
	r.q = q;
	r.rowcxt = AllocSetContextCreate(CurrentMemoryContext, "geoacc inner query row", ALLOCSET_DEFAULT_SIZES);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	InnerQueryRun(sql, q->argname, &r.pub);
	SPI_finish();
	MemoryContextDelete(r.rowcxt);
	return r.row.form;
}

char *
GeoaccQueryRowLabel(const GeoaccInnerQuery *q, const GeoaccQueryRow *row)
{
	return psprintf("%s row " UINT64_FORMAT " (id " INT64_FORMAT ")", q->argname, row->number, row->id);
}

bool
GeoaccIsTrajectoryType(Oid type)
{
	return type == GeoaccGeometryOid() || type == GeoaccGeographyOid();
}

bool
GeoaccIsGeometryType(Oid type)
{
	return type == GeoaccGeometryOid();
}

void *
GeoaccGeometryBox2d(FmgrInfo *fn, Datum geometry)
{
	LOCAL_FCINFO(call, 1);
	Datum		result;

	if (!OidIsValid(fn->fn_oid))
	{
		Oid			argtype = GeoaccGeometryOid();
		Oid			function = LookupFuncName(list_make2(makeString(get_namespace_name(postgis_schema)),
														 makeString("box2d")), 1, &argtype, false);

		fmgr_info_cxt(function, fn, fn->fn_mcxt ? fn->fn_mcxt : CurrentMemoryContext);
	}
	InitFunctionCallInfoData(*call, fn, 1, InvalidOid, NULL, NULL);
	call->args[0].value = geometry;
	call->args[0].isnull = false;
	result = FunctionCallInvoke(call);
	return call->isnull ? NULL : DatumGetPointer(result);
}

bool
GeoaccSridIsGeographic(int32 srid)
{
	/* the last answer: a statement over many rows asks about one SRID many times */
	static int32 cached_srid = 0;
	static bool cached_geographic = false;
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1] = {Int32GetDatum(srid)};
	bool		geographic = false;
	char	   *sql;

	if (srid <= 0)
		return false;
	if (srid == cached_srid)
		return cached_geographic;
	LookupPostgis();
	sql = psprintf("SELECT srtext ~ '^\\s*GEOG' OR proj4text ~ '\\+proj=(longlat|latlong)' FROM %s.spatial_ref_sys "
				   "WHERE srid = $1",
				   quote_identifier(get_namespace_name(postgis_schema)));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(sql, 1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read spatial_ref_sys");
	if (SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		geographic = !isnull && DatumGetBool(d);
	}
	SPI_finish();
	cached_srid = srid;
	cached_geographic = geographic;
	return geographic;
}

void
GeoaccNoticeIfGeographic(int32 srid, const char *function)
{
	static TimestampTz noticed_statement = 0;

	if (noticed_statement == GetCurrentStatementStartTimestamp() || !GeoaccSridIsGeographic(srid))
		return;
	noticed_statement = GetCurrentStatementStartTimestamp();
	ereport(NOTICE,
			(errmsg("%s measures in the units of SRID %d: degrees", function, srid),
			 errdetail("Tolerances and distances are then in degrees of longitude and latitude, not metres."),
			 errhint("Pass them as geography (traj::geography) to measure in metres, or transform them to a "
					 "projected SRID first, for example ST_Transform(traj, 32618) for UTM zone 18N.")));
}
