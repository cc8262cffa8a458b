/*
 * twed.c
 *
 * gpu_twed(): Time Warp Edit Distance between two series (float8 arrays
 * with times in seconds or as timestamps) or two trajectories (X, Y [, Z]
 * values, M times; a geography's points in metres, as Earth-centred
 * coordinates: geography.c), and gpu_twed_matrix(), the distances between
 * the series of two inner queries (or among those of one): the query
 * results are fetched through SPI (as pgRouting does), the distances
 * computed in blocks of bounded size and returned through a tuplestore;
 * and gpu_twed_pairs(), a window function giving each row the distance of
 * its pair of trajectories, a partition's pairs computed in batches (under
 * Citus, on the workers).
 */
#include "geoacc.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "windowapi.h"

/* Series packed end to end for the core, with the ids of their rows. */
typedef struct TwedSeries
{
	MemoryContext context;		/* where the arrays live */
	uint32		count;
	uint32		max_count;
	uint64		npoints;
	uint64		max_points;
	int64	   *ids;
	uint64	   *offsets;		/* count + 1 */
	double	   *values;			/* npoints * dims */
	double	   *times;
} TwedSeries;

/* What every series of one call must share: values per point, SRID, geometry or geography. */
typedef struct TwedShape
{
	int			dims;			/* 0 until the first series */
	const char *first;			/* the series that set it */
	bool		has_srid;
	int32		srid;
	bool		geodetic;		/* the trajectories are geographies */
	const char *srid_first;
	bool		use_z;			/* trajectories: measure Z */
} TwedShape;

static void
SeriesInit(TwedSeries *s, MemoryContext context)
{
	memset(s, 0, sizeof(*s));
	s->context = context;
	s->max_count = 16;
	s->max_points = 1024;
	s->ids = MemoryContextAlloc(context, s->max_count * sizeof(int64));
	/* what the core reads is work memory (the GPU service reads it) */
	{
		MemoryContext old = MemoryContextSwitchTo(context);

		s->offsets = GeoaccWorkAlloc((s->max_count + 1) * sizeof(uint64));
		s->values = GeoaccWorkAlloc(s->max_points * sizeof(double));
		s->times = GeoaccWorkAlloc(s->max_points * sizeof(double));
		MemoryContextSwitchTo(old);
	}
	s->offsets[0] = 0;
}

/* Room for one more series of `points` points of `dims` values (times get as many slots as values). */
static void
SeriesReserve(TwedSeries *s, uint64 points, int dims)
{
	uint64		need = (s->npoints + points) * dims;

	if (s->count + 1 >= s->max_count)
	{
		if (s->max_count >= PG_UINT32_MAX / 4)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many series")));
		s->max_count *= 2;
		s->ids = repalloc(s->ids, s->max_count * sizeof(int64));
		s->offsets = GeoaccWorkRealloc(s->offsets, (s->max_count + 1) * sizeof(uint64));
	}
	if (need > s->max_points)
	{
		while (s->max_points < need)
			s->max_points *= 2;
		s->values = GeoaccWorkRealloc(s->values, s->max_points * sizeof(double));
		s->times = GeoaccWorkRealloc(s->times, s->max_points * sizeof(double));
	}
}

static void
SeriesClose(TwedSeries *s, int64 id, uint64 points)
{
	s->ids[s->count] = id;
	s->npoints += points;
	s->count++;
	s->offsets[s->count] = s->npoints;
}

static GeoaccTwedSet
SeriesView(const TwedSeries *s, const TwedShape *shape)
{
	GeoaccTwedSet set;

	set.count = s->count;
	set.dims = shape->dims > 0 ? shape->dims : 1;
	set.offsets = s->offsets;
	set.values = s->values;
	set.times = s->times;
	return set;
}

static void
CheckDims(TwedShape *shape, int dims, const char *label)
{
	if (shape->dims == 0)
	{
		shape->dims = dims;
		shape->first = label;
	}
	else if (shape->dims != dims)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("series must all have the same number of values per point"),
				 errdetail("%s has %d, %s has %d.", shape->first, shape->dims, label, dims)));
}

/* Index of the first NULL of an array with NULLs. */
static int
FirstNull(ArrayType *array, int n)
{
	bits8	   *bitmap = ARR_NULLBITMAP(array);

	for (int i = 0; i < n; i++)
		if (!(bitmap[i / 8] & (1 << (i % 8))))
			return i;
	return n;
}

/* A time for messages: as a timestamp when the times came as timestamps. */
static char *
TimeText(double t, bool timestamps)
{
	char	   *text = timestamps ? GeoaccTimeText(t) : NULL;

	return text ? text : psprintf("%.17g", t);
}

/*
 * Add a series from float8 arrays: values n x k (or n for k = 1), times n
 * (NULL: 1..n; epoch seconds converted from timestamps when
 * `timestamps`).  `label` names it in errors ("a", "a_sql row 3 (id 7)").
 */
static void
SeriesAddArrays(TwedSeries *s, TwedShape *shape, int64 id, ArrayType *values, ArrayType *times, bool timestamps,
				const char *values_label, const char *times_label, const char *label)
{
	int			ndim = ARR_NDIM(values);
	int			n,
				k;
	const double *v;

	if (ndim == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", values_label)));
	if (ndim > 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one- or two-dimensional array", values_label),
				 errdetail("It has %d dimensions.", ndim),
				 errhint("Pass points as rows: ARRAY[[x1, y1], [x2, y2], ...].")));
	n = ARR_DIMS(values)[0];
	k = ndim == 2 ? ARR_DIMS(values)[1] : 1;
	CheckDims(shape, k, label);
	if (array_contains_nulls(values))
	{
		int			i = FirstNull(values, n * k);

		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not contain NULLs", values_label),
				 ndim == 2 ? errdetail("Point %d, value %d is NULL.", i / k + 1, i % k + 1)
				 : errdetail("Point %d is NULL.", i + 1)));
	}
	v = (const double *) ARR_DATA_PTR(values);
	for (int i = 0; i < n * k; i++)
		if (!isfinite(v[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must contain only finite numbers", values_label),
					 ndim == 2 ? errdetail("Point %d, value %d is %g.", i / k + 1, i % k + 1, v[i])
					 : errdetail("Point %d is %g.", i + 1, v[i])));

	SeriesReserve(s, n, k);
	memcpy(s->values + s->npoints * k, v, (size_t) n * k * sizeof(double));
	if (times == NULL)
	{
		for (int i = 0; i < n; i++)
			s->times[s->npoints + i] = i + 1;
	}
	else
	{
		const double *t;

		if (ARR_NDIM(times) != 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must be a one-dimensional array", times_label)));
		if (ARR_DIMS(times)[0] != n)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must have one element per point", times_label),
					 errdetail("It has %d elements for %d points.", ARR_DIMS(times)[0], n)));
		if (array_contains_nulls(times))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain NULLs", times_label),
					 errdetail("Element %d is NULL.", FirstNull(times, n) + 1)));
		t = (const double *) ARR_DATA_PTR(times);
		for (int i = 0; i < n; i++)
		{
			if (!isfinite(t[i]))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s must contain only finite numbers", times_label),
						 errdetail("Element %d is %g.", i + 1, t[i])));
			if (i > 0 && !(t[i] > t[i - 1]))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s must increase", times_label),
						 errdetail("Element %d is %s after %s.", i + 1, TimeText(t[i], timestamps),
								   TimeText(t[i - 1], timestamps))));
		}
		memcpy(s->times + s->npoints, t, (size_t) n * sizeof(double));
	}
	SeriesClose(s, id, n);
}

/*
 * Add a trajectory: X and Y (and Z with use_z) are the values, M the time;
 * for a geography, its points in metres as Earth-centred coordinates (the
 * height Z with use_z, the ellipsoid otherwise), so that the Euclidean
 * distance between two points is their chord.
 */
static void
SeriesAddTrajectory(TwedSeries *s, TwedShape *shape, int64 id, const struct varlena *geom, const char *label)
{
	GeoaccLine	line;
	int			k;

	GeoaccLineFromGeometry(geom, &line, label);
	if (line.npoints == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", label)));
	GeoaccCheckTrajectory(&line, label);
	GeoaccCheckUseZ(&line, shape->use_z, label);
	k = line.geodetic ? 3 : 2 + shape->use_z;
	if (shape->has_srid && shape->geodetic != line.geodetic)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("trajectories must all be geometries or all geographies"),
				 errdetail("%s is a %s, %s a %s.", shape->srid_first, shape->geodetic ? "geography" : "geometry",
						   label, line.geodetic ? "geography" : "geometry"),
				 errhint("Cast one of the queries' trajectories, for example traj::geography.")));
	CheckDims(shape, k, label);
	if (!shape->has_srid)
	{
		shape->has_srid = true;
		shape->srid = line.srid;
		shape->geodetic = line.geodetic;
		shape->srid_first = label;
		if (!line.geodetic)
			GeoaccNoticeIfGeographic(line.srid, "gpu_twed");
	}
	else if (shape->srid != line.srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("trajectories must all have the same SRID"),
				 errdetail("%s has SRID %d, %s has SRID %d.", shape->srid_first, shape->srid, label, line.srid),
				 errhint("Use ST_Transform() to bring them to one projected SRID.")));

	SeriesReserve(s, line.npoints, k);
	for (uint32 i = 0; i < line.npoints; i++)
	{
		const double *p = line.coords + (size_t) i * line.ndims;
		double	   *v = s->values + (s->npoints + i) * k;

		if (line.geodetic)
			GeoaccEcef(p[0], p[1], shape->use_z ? p[2] : 0, v);
		else
		{
			v[0] = p[0];
			v[1] = p[1];
			if (shape->use_z)
				v[2] = p[2];
		}
		s->times[s->npoints + i] = p[line.ndims - 1];
	}
	SeriesClose(s, id, line.npoints);
}

/* Geographies are measured by the Euclidean distance of their Earth-centred points: degree 2 only. */
static void
CheckGeographyDegree(const TwedShape *shape, const GeoaccTwedParams *params)
{
	if (shape->geodetic && params->degree != 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("degree must be 2 for geography trajectories"),
				 errdetail("degree is %d.", params->degree),
				 errhint("Points of a geography are measured by their distance in metres; other degrees have no "
						 "meaning on the Earth.")));
}

/* nu, lambda, degree, root, float32 from their datums, checked. */
static GeoaccTwedParams
ParamsFromDatums(const Datum *args)
{
	GeoaccTwedParams p;

	p.nu = DatumGetFloat8(args[0]);
	p.lambda = DatumGetFloat8(args[1]);
	p.degree = DatumGetInt32(args[2]);
	p.root = DatumGetBool(args[3]);
	p.float32 = DatumGetBool(args[4]);
	if (!isfinite(p.nu) || p.nu < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nu must be a finite, non-negative number"),
				 errdetail("nu is %g.", p.nu)));
	if (!isfinite(p.lambda) || p.lambda < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lambda must be a finite, non-negative number"),
				 errdetail("lambda is %g.", p.lambda)));
	if (p.degree < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("degree must be at least 1"),
				 errdetail("degree is %d.", p.degree)));
	return p;
}

/* nu, lambda, degree, root, float32 from arguments first .. first + 4, checked. */
static GeoaccTwedParams
ParamsFromArgs(FunctionCallInfo fcinfo, int first)
{
	Datum		args[5];

	for (int i = 0; i < 5; i++)
		args[i] = PG_GETARG_DATUM(first + i);
	return ParamsFromDatums(args);
}

static bool
AnyArgIsNull(FunctionCallInfo fcinfo, int first, int last)
{
	for (int i = first; i <= last; i++)
		if (PG_ARGISNULL(i))
			return true;
	return false;
}

/* The distances of all pairs of a x b, as a step of a call (a work the GPU service can run). */
typedef struct TwedRun
{
	GeoaccTwedSet a;
	GeoaccTwedSet b;
	GeoaccTwedParams params;
	double	   *distances;
} TwedRun;

static GeoaccStatus
TwedOn(GeoaccDevice device, void *arg)
{
	TwedRun    *r = arg;

	return geoacc_twed(device, &r->a, &r->b, &r->params, r->distances);
}

/* Distances of all pairs of a x b on the chosen device (GPU failures under auto: the CPU). */
static void
TwedBlock(const char *function, const GeoaccTwedSet *a, const GeoaccTwedSet *b, const GeoaccTwedParams *params,
		  double *distances)
{
	uint64		npairs = (uint64) a->count * b->count;
	TwedRun		run = {*a, *b, *params, distances};
	GeoaccWork	work = {TwedOn, &run, geoacc_twed_need(a, b, params), false, sizeof(run)};
	double		cells = (double) (a->offsets[a->count] - a->offsets[0]) * (b->offsets[b->count] - b->offsets[0]);

	/* the distances land in work memory, then where the caller wants them */
	if (GeoaccServiceActive() && !GeoaccInServiceMemory(distances))
		run.distances = GeoaccWorkAlloc(Max(npairs, 1) * sizeof(double));
	GeoaccCallRun(function, cells < (double) PG_INT64_MAX ? (int64) cells : PG_INT64_MAX, &work);
	if (run.distances != distances)
	{
		memcpy(distances, run.distances, npairs * sizeof(double));
		GeoaccWorkFree(run.distances);
	}
}

/* Whether times of this type are taken: float8[] (seconds) or timestamptz[]. */
static bool
IsTimesType(Oid type)
{
	return type == FLOAT8ARRAYOID || type == TIMESTAMPTZARRAYOID;
}

/*
 * Times as float8[] seconds: a float8[] as it is, a timestamptz[] as epoch
 * seconds (as date_part('epoch', ...) computes them; infinite timestamps
 * become infinite, which the series check refuses), other arrays of
 * numbers through their cast to float8.  *timestamps says whether they
 * were timestamps.  `type` is the array's type, domains resolved.
 */
static ArrayType *
TimesAsSeconds(Datum datum, Oid type, const char *name, bool *timestamps)
{
	ArrayType  *array;
	Oid			element;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elements;
	bool	   *nulls;
	int			n;
	double	   *seconds;
	Datum	   *out;
	ArrayType  *result;

	*timestamps = type == TIMESTAMPTZARRAYOID;
	if (type == FLOAT8ARRAYOID)
		return DatumGetArrayTypeP(datum);
	element = get_element_type(type);
	if (type != TIMESTAMPTZARRAYOID && element != INT2OID && element != INT4OID && element != INT8OID &&
		element != FLOAT4OID && element != NUMERICOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s must be a float8[] or timestamptz[] array", name),
				 errdetail("It is %s.", format_type_be(type)),
				 errhint("Times are seconds (float8[], as the epoch seconds of M) or timestamps (timestamptz[]).")));
	array = DatumGetArrayTypeP(datum);
	get_typlenbyvalalign(element, &typlen, &typbyval, &typalign);
	deconstruct_array(array, element, typlen, typbyval, typalign, &elements, &nulls, &n);
	seconds = palloc(Max(n, 1) * sizeof(double));
	out = palloc(Max(n, 1) * sizeof(Datum));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			seconds[i] = 0;
		else if (element == TIMESTAMPTZOID)
		{
			TimestampTz ts = DatumGetTimestampTz(elements[i]);

			if (TIMESTAMP_NOT_FINITE(ts))
				seconds[i] = TIMESTAMP_IS_NOBEGIN(ts) ? -INFINITY : INFINITY;
			else
				seconds[i] = (double) (ts - SetEpochTimestamp()) / 1000000.0;
		}
		else if (element == NUMERICOID)
			seconds[i] = DatumGetFloat8(DirectFunctionCall1(numeric_float8, elements[i]));
		else if (element == FLOAT4OID)
			seconds[i] = DatumGetFloat4(elements[i]);
		else
			seconds[i] = element == INT2OID ? DatumGetInt16(elements[i])
				: element == INT4OID ? DatumGetInt32(elements[i]) : (double) DatumGetInt64(elements[i]);
		out[i] = Float8GetDatum(seconds[i]);
	}
	result = construct_md_array(out, nulls, ARR_NDIM(array), ARR_DIMS(array), ARR_LBOUND(array), FLOAT8OID,
								sizeof(double), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	return result;
}

/*
 * Argument `argno` of gpu_twed, declared "any" so that float8[] and
 * timestamptz[] times both work and an untyped NULL means 1..n: NULL for
 * NULL, else the times as float8[] seconds; an untyped literal is read as
 * float8[].
 */
static ArrayType *
TimesArgument(FunctionCallInfo fcinfo, int argno, const char *name, bool *timestamps)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, argno);
	Oid			input;
	Oid			ioparam;

	*timestamps = false;
	if (PG_ARGISNULL(argno))
		return NULL;
	if (!OidIsValid(type))
		elog(ERROR, "could not determine the type of %s", name);
	if (type == UNKNOWNOID)
	{
		getTypeInputInfo(FLOAT8ARRAYOID, &input, &ioparam);
		return DatumGetArrayTypeP(OidInputFunctionCall(input, DatumGetCString(PG_GETARG_DATUM(argno)), ioparam, -1));
	}
	return TimesAsSeconds(PG_GETARG_DATUM(argno), getBaseType(type), name, timestamps);
}

/*
 * gpu_twed(a float8[], ta, b float8[], tb, nu, lambda, degree, root,
 * float32): TWED of two series; times float8[] or timestamptz[], NULL
 * meaning 1..n
 */
PG_FUNCTION_INFO_V1(gpu_twed);
Datum
gpu_twed(PG_FUNCTION_ARGS)
{
	TwedSeries	a,
				b;
	TwedShape	shape = {0};
	GeoaccTwedParams params;
	GeoaccTwedSet va,
				vb;
	ArrayType  *ta,
			   *tb;
	bool		ta_timestamps,
				tb_timestamps;
	double		distance;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(2) || AnyArgIsNull(fcinfo, 4, 8))
		PG_RETURN_NULL();
	params = ParamsFromArgs(fcinfo, 4);
	ta = TimesArgument(fcinfo, 1, "ta", &ta_timestamps);
	tb = TimesArgument(fcinfo, 3, "tb", &tb_timestamps);
	SeriesInit(&a, CurrentMemoryContext);
	SeriesInit(&b, CurrentMemoryContext);
	SeriesAddArrays(&a, &shape, 0, PG_GETARG_ARRAYTYPE_P(0), ta, ta_timestamps, "a", "ta", "a");
	SeriesAddArrays(&b, &shape, 0, PG_GETARG_ARRAYTYPE_P(2), tb, tb_timestamps, "b", "tb", "b");
	va = SeriesView(&a, &shape);
	vb = SeriesView(&b, &shape);
	TwedBlock("gpu_twed", &va, &vb, &params, &distance);
	PG_RETURN_FLOAT8(distance);
}

/*
 * gpu_twed(a, b, nu, lambda, degree, root, float32, use_z): TWED of two
 * trajectories, geometry or geography
 */
PG_FUNCTION_INFO_V1(gpu_twed_geometry);
Datum
gpu_twed_geometry(PG_FUNCTION_ARGS)
{
	TwedSeries	a,
				b;
	TwedShape	shape = {0};
	GeoaccTwedParams params = ParamsFromArgs(fcinfo, 2);
	GeoaccTwedSet va,
				vb;
	double		distance;

	/* geoacc 0.1.0 declared it without use_z */
	if (PG_NARGS() != 8)
		GeoaccOlderDeclaration("gpu_twed");
	shape.use_z = PG_GETARG_BOOL(7);
	SeriesInit(&a, CurrentMemoryContext);
	SeriesInit(&b, CurrentMemoryContext);
	SeriesAddTrajectory(&a, &shape, 0, PG_DETOAST_DATUM(PG_GETARG_DATUM(0)), "a");
	SeriesAddTrajectory(&b, &shape, 0, PG_DETOAST_DATUM(PG_GETARG_DATUM(1)), "b");
	CheckGeographyDegree(&shape, &params);
	va = SeriesView(&a, &shape);
	vb = SeriesView(&b, &shape);
	TwedBlock("gpu_twed", &va, &vb, &params, &distance);
	PG_RETURN_FLOAT8(distance);
}

/* ---------------------------------------------------------- the matrix */

/* The columns of a series query: (id, traj), or (id, values[, times]). */
#define FORM_TRAJECTORY 0

static bool
IsValuesType(Oid type)
{
	return type == FLOAT8ARRAYOID;
}

static const GeoaccQueryForm SeriesQueryForms[] = {
	{2, {{"id", GeoaccIsIdType}, {"traj", GeoaccIsTrajectoryType}}},
	{3, {{"id", GeoaccIsIdType}, {"values", IsValuesType}, {"times", IsTimesType, true}}}
};

/* Where a query's rows go. */
typedef struct SeriesReading
{
	TwedSeries *series;
	TwedShape  *shape;
	const GeoaccInnerQuery *query;
} SeriesReading;

/* Add a row's series. */
static void
SeriesReceive(const GeoaccQueryRow *row, void *arg)
{
	SeriesReading *r = arg;
	char	   *label = MemoryContextStrdup(r->series->context, GeoaccQueryRowLabel(r->query, row));
	ArrayType  *times = NULL;
	bool		timestamps = false;
	char	   *times_label;

	if (row->nulls[1])
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the %s of %s must not be NULL", row->form == FORM_TRAJECTORY ? "trajectory" : "values",
						label)));
	if (row->form == FORM_TRAJECTORY)
	{
		SeriesAddTrajectory(r->series, r->shape, row->id, PG_DETOAST_DATUM(row->values[1]), label);
		return;
	}
	times_label = psprintf("the times of %s", label);
	if (!row->nulls[2])
		times = TimesAsSeconds(row->values[2], row->types[2], times_label, &timestamps);
	SeriesAddArrays(r->series, r->shape, row->id, DatumGetArrayTypeP(row->values[1]), times, timestamps,
					psprintf("the values of %s", label), times_label, label);
}

/* Run an inner query and add each row's series. */
static void
SeriesFromQuery(TwedSeries *s, TwedShape *shape, const char *sql, const char *argname)
{
	SeriesReading reading = {s, shape, NULL};
	GeoaccInnerQuery query = {argname, SeriesQueryForms, lengthof(SeriesQueryForms),
		"(id, values[, times]) or (id, trajectory)",
		"The id is an integer, values are float8[], times float8[] or timestamptz[], a trajectory (traj) is a "
		"geometry or a geography.",
	false, SeriesReceive, &reading};

	reading.query = &query;
	GeoaccInnerQueryRead(&query, sql);
}

/* Series first .. first + count - 1 of s, as the core reads them (offsets index the whole arrays). */
static GeoaccTwedSet
SeriesSlice(const TwedSeries *s, const TwedShape *shape, uint32 first, uint32 count)
{
	GeoaccTwedSet set = SeriesView(s, shape);

	set.count = count;
	set.offsets = s->offsets + first;
	return set;
}

/* Pairs computed per core call: the distances of one block stay within work_mem (at least 1 MB). */
static uint64
MatrixBlockPairs(void)
{
	return Max((uint64) work_mem * 1024, (uint64) 1024 * 1024) / sizeof(double);
}

static void
PutPair(ReturnSetInfo *rsinfo, int64 a_id, int64 b_id, double distance)
{
	Datum		values[3] = {Int64GetDatum(a_id), Int64GetDatum(b_id), Float8GetDatum(distance)};
	bool		nulls[3] = {false, false, false};

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * The columns of the k smallest of row[0 .. n), column `self` left out,
 * into nearest[] in order of distance, then of column (the first in query
 * order wins a tie); returns how many (k, or fewer columns).  Insertion
 * into a sorted list of k: O(n k), for the small k of nearest neighbours.
 */
static uint32
NearestColumns(const double *row, uint32 n, uint32 self, uint32 k, uint32 *nearest)
{
	uint32		count = 0;

	for (uint32 y = 0; y < n; y++)
	{
		uint32		i;

		if (y == self || (count == k && !(row[y] < row[nearest[count - 1]])))
			continue;
		i = count < k ? count++ : k - 1;
		for (; i > 0 && row[y] < row[nearest[i - 1]]; i--)
			nearest[i] = nearest[i - 1];
		nearest[i] = y;
	}
	return count;
}

/* Argument `argno`, k: 0 (every pair) when NULL, else at least 1. */
static uint32
NearestArg(FunctionCallInfo fcinfo, int argno)
{
	int32		k;

	if (PG_ARGISNULL(argno))
		return 0;
	k = PG_GETARG_INT32(argno);
	if (k < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k must be at least 1"),
				 errdetail("k is %d.", k),
				 errhint("Leave k NULL for every pair.")));
	return (uint32) k;
}

/*
 * The rows (a_id, b_id, distance) of every series of a against every one of
 * cols (symmetric: cols is a, and the pairs y > x), or with k the k nearest
 * of each row of a.  The rows of a are taken in blocks whose distances fit
 * MatrixBlockPairs(), each block one core call, and the rows go into a
 * tuplestore (which spills to disk): memory stays bounded however many
 * pairs there are.  A symmetric block computes rows x0 .. x1 - 1 against
 * columns x0 + 1 .. n - 1.  A distance depends on its pair alone (float32
 * too), not on the blocks.
 */
static void
MatrixRows(ReturnSetInfo *rsinfo, const TwedSeries *a, const TwedSeries *cols, bool symmetric,
		   const TwedShape *shape, const GeoaccTwedParams *params, uint32 k)
{
	uint64		block_pairs = MatrixBlockPairs();
	double	   *distances;
	uint32	   *nearest;

	if (a->count == 0 || cols->count == 0)
		return;
	/* a block holds at least one whole row, however wide */
	distances = MemoryContextAllocHuge(CurrentMemoryContext,
									   Min(Max(block_pairs, (uint64) cols->count), (uint64) a->count * cols->count)
									   * sizeof(double));
	nearest = palloc(Max(Min(k, cols->count), 1) * sizeof(uint32));
	k = Min(k, cols->count);

	for (uint32 x0 = 0; x0 < a->count;)
	{
		uint32		first_col,
					ncols,
					rows;
		GeoaccTwedSet va,
					vb;

		/* the k nearest of a row are among all the other series, on either side of it */
		first_col = symmetric && k == 0 ? x0 + 1 : 0;
		if (first_col >= cols->count)
			break;
		ncols = cols->count - first_col;
		rows = (uint32) Min((uint64) (a->count - x0), Max(block_pairs / ncols, 1));
		va = SeriesSlice(a, shape, x0, rows);
		vb = SeriesSlice(cols, shape, first_col, ncols);
		TwedBlock("gpu_twed_matrix", &va, &vb, params, distances);
		for (uint32 x = x0; x < x0 + rows; x++)
		{
			const double *row = distances + (uint64) (x - x0) * ncols - first_col;

			if (k > 0)
			{
				uint32		n = NearestColumns(row, cols->count, symmetric ? x : PG_UINT32_MAX, k, nearest);

				for (uint32 i = 0; i < n; i++)
					PutPair(rsinfo, a->ids[x], cols->ids[nearest[i]], row[nearest[i]]);
			}
			else
				for (uint32 y = symmetric ? x + 1 : 0; y < cols->count; y++)
					PutPair(rsinfo, a->ids[x], cols->ids[y], row[y]);
		}
		x0 += rows;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * gpu_twed_matrix(a_sql, b_sql, nu, lambda, degree, root, float32, k, use_z):
 * (a_id, b_id, distance) for every series of a_sql against every series of
 * b_sql, or for every pair of series of a_sql when b_sql is NULL.  With k,
 * each row of a keeps only its k nearest (b_sql NULL: the k nearest other
 * series of a_sql, on either side of it), so the 1-NN classification TWED
 * is used for never materializes the matrix.
 */
PG_FUNCTION_INFO_V1(gpu_twed_matrix);
Datum
gpu_twed_matrix(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TwedSeries	a,
				b;
	TwedShape	shape = {0};
	GeoaccTwedParams params;
	bool		symmetric;
	uint32		k;

	/* geoacc 0.1.0 declared it without k and use_z */
	if (PG_NARGS() != 9)
		GeoaccOlderDeclaration("gpu_twed_matrix");
	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0) || AnyArgIsNull(fcinfo, 2, 6) || PG_ARGISNULL(8))
		return (Datum) 0;
	params = ParamsFromArgs(fcinfo, 2);
	shape.use_z = PG_GETARG_BOOL(8);
	k = NearestArg(fcinfo, 7);
	symmetric = PG_ARGISNULL(1);
	SeriesInit(&a, CurrentMemoryContext);
	SeriesInit(&b, CurrentMemoryContext);
	SeriesFromQuery(&a, &shape, text_to_cstring(PG_GETARG_TEXT_PP(0)), "a_sql");
	if (!symmetric)
		SeriesFromQuery(&b, &shape, text_to_cstring(PG_GETARG_TEXT_PP(1)), "b_sql");
	CheckGeographyDegree(&shape, &params);
	MatrixRows(rsinfo, &a, symmetric ? &a : &b, symmetric, &shape, &params, k);
	return (Datum) 0;
}

/*
 * The series of laid-out trajectories (a snapshot's, named `label`), in
 * their order, as SeriesAddTrajectory makes them of geometries: X, Y (and Z
 * with use_z) the values, M the times.
 */
static void
SeriesFromTracks(TwedSeries *s, TwedShape *shape, const JoinTracks *t, int32 srid, bool has_z, const char *label)
{
	int			dims = 2 + shape->use_z;

	GeoaccCheckLaidOutTracks(shape->has_srid, shape->geodetic, shape->srid, shape->srid_first, shape->use_z, label,
							 srid, has_z);
	CheckDims(shape, dims, label);
	for (uint32 r = 0; r < t->count; r++)
	{
		uint32		from = t->offsets[r],
					n = t->offsets[r + 1] - from;

		SeriesReserve(s, n, dims);
		for (uint32 i = 0; i < n; i++)
		{
			double	   *v = s->values + (s->npoints + i) * dims;

			v[0] = t->x[from + i];
			v[1] = t->y[from + i];
			if (shape->use_z)
				v[2] = t->z[from + i];
			s->times[s->npoints + i] = t->m[from + i];
		}
		SeriesClose(s, t->ids[r], n);
	}
}

void
GeoaccTwedMatrixAgainst(FunctionCallInfo fcinfo, const char *label, const JoinTracks *tracks, int32 srid, bool has_z)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TwedSeries	a,
				b;
	TwedShape	shape = {0};
	GeoaccTwedParams params;
	uint32		k;

	params = ParamsFromArgs(fcinfo, 2);
	shape.use_z = PG_GETARG_BOOL(8);
	k = NearestArg(fcinfo, 7);
	SeriesInit(&a, CurrentMemoryContext);
	SeriesInit(&b, CurrentMemoryContext);
	SeriesFromQuery(&a, &shape, text_to_cstring(PG_GETARG_TEXT_PP(0)), "a_sql");
	SeriesFromTracks(&b, &shape, tracks, srid, has_z, label);
	CheckGeographyDegree(&shape, &params);
	MatrixRows(rsinfo, &a, &b, false, &shape, &params, k);
}

/* ------------------------------------------------ pairs in a window */

/* Distinct series read per chunk of a gpu_twed_pairs partition (a larger row makes a chunk of its own). */
#define PAIRS_CHUNK_POINTS ((uint64) 1 << 22)
#define PAIRS_CHUNK_ROWS ((int64) 1 << 20)

/*
 * The distinct series of one side of a chunk, found by content: an
 * open-addressing table of series indexes (+ 1) by the hash of their
 * values and times.
 */
typedef struct DistinctSeries
{
	TwedSeries	series;
	uint32	   *hashes;			/* per series */
	uint32		max_hashes;
	uint32	   *slots;			/* 0: empty */
	uint32		nslots;			/* a power of two, at least twice the series */
} DistinctSeries;

/* The state of one gpu_twed_pairs partition, in its local memory. */
typedef struct PairsPartition
{
	bool		started;
	bool		params_null;	/* a NULL parameter: every distance is NULL */
	GeoaccTwedParams params;
	Datum		param_datums[6];	/* nu, lambda, degree, root, float32, use_z */
	MemoryContext partcxt;
	MemoryContext chunkcxt;		/* reset for each chunk */
	TwedShape	shape;			/* dims and SRID, shared by the whole partition */
	int64		nrows;
	/* the current chunk: rows [chunk_begin, chunk_end) and their distances */
	int64		chunk_begin;
	int64		chunk_end;
	double	   *distances;
	bool	   *nulls;
} PairsPartition;

static void
DistinctInit(DistinctSeries *d, MemoryContext context)
{
	SeriesInit(&d->series, context);
	d->nslots = 64;
	d->max_hashes = 64;
	d->hashes = MemoryContextAlloc(context, d->max_hashes * sizeof(uint32));
	d->slots = MemoryContextAllocZero(context, d->nslots * sizeof(uint32));
}

static uint32
SeriesHash(const TwedSeries *s, uint32 i, int dims)
{
	uint64		first = s->offsets[i],
				n = s->offsets[i + 1] - first;

	return hash_combine(hash_bytes((const unsigned char *) (s->values + first * dims), (int) (n * dims * sizeof(double))),
						hash_bytes((const unsigned char *) (s->times + first), (int) (n * sizeof(double))));
}

static bool
SeriesEqual(const TwedSeries *s, uint32 i, uint32 j, int dims)
{
	uint64		n = s->offsets[i + 1] - s->offsets[i];

	return n == s->offsets[j + 1] - s->offsets[j] &&
		memcmp(s->values + s->offsets[i] * dims, s->values + s->offsets[j] * dims, n * dims * sizeof(double)) == 0 &&
		memcmp(s->times + s->offsets[i], s->times + s->offsets[j], n * sizeof(double)) == 0;
}

/*
 * The index of a trajectory among the distinct series: it is packed at the
 * end, then taken back out when an equal series is there already.
 */
static uint32
DistinctAdd(DistinctSeries *d, TwedShape *shape, const struct varlena *geom, const char *label)
{
	TwedSeries *s = &d->series;
	uint32		last,
				hash,
				mask;

	SeriesAddTrajectory(s, shape, 0, geom, label);
	last = s->count - 1;
	hash = SeriesHash(s, last, shape->dims);
	mask = d->nslots - 1;
	for (uint32 slot = hash & mask;; slot = (slot + 1) & mask)
	{
		uint32		other = d->slots[slot];

		if (other == 0)
		{
			d->slots[slot] = last + 1;
			break;
		}
		if (d->hashes[other - 1] == hash && SeriesEqual(s, other - 1, last, shape->dims))
		{
			s->count--;
			s->npoints = s->offsets[s->count];
			return other - 1;
		}
	}
	if (s->count > d->max_hashes)
	{
		d->max_hashes *= 2;
		d->hashes = repalloc(d->hashes, d->max_hashes * sizeof(uint32));
	}
	d->hashes[last] = hash;
	if (s->count * 2 > d->nslots)
	{
		d->nslots *= 2;
		pfree(d->slots);
		d->slots = MemoryContextAllocZero(s->context, d->nslots * sizeof(uint32));
		for (uint32 i = 0; i < s->count; i++)
			for (uint32 slot = d->hashes[i] & (d->nslots - 1);; slot = (slot + 1) & (d->nslots - 1))
				if (d->slots[slot] == 0)
				{
					d->slots[slot] = i + 1;
					break;
				}
	}
	return last;
}

/* The parameters of partition row `row` (arguments 2 .. 7: nu .. use_z); false when one is NULL. */
static bool
PairsRowParams(WindowObject win, int64 row, Datum *params)
{
	bool		isnull,
				isout;
	bool		any_null = false;

	for (int i = 0; i < 6; i++)
	{
		params[i] = WinGetFuncArgInPartition(win, i + 2, row, WINDOW_SEEK_HEAD, false, &isnull, &isout);
		any_null |= isnull;
	}
	return !any_null;
}

static bool
SameParamDatums(const Datum *x, const Datum *y)
{
	return DatumGetFloat8(x[0]) == DatumGetFloat8(y[0]) && DatumGetFloat8(x[1]) == DatumGetFloat8(y[1]) &&
		DatumGetInt32(x[2]) == DatumGetInt32(y[2]) && DatumGetBool(x[3]) == DatumGetBool(y[3]) &&
		DatumGetBool(x[4]) == DatumGetBool(y[4]) && DatumGetBool(x[5]) == DatumGetBool(y[5]);
}

/*
 * The distances of the pairs of a chunk: rows_a[k], rows_b[k] index the
 * distinct series (-1: a NULL distance).  When the rows are (nearly) every
 * pair of the distinct series, as in a cross join with a reference table,
 * the whole matrix goes to the core in blocks; otherwise each distinct a
 * goes with the b's its rows pair it with.  The core computes each pair on
 * its own (float32 too, in the frame of one of its series), so a distance
 * does not depend on the other rows.
 */
static void
PairsCompute(PairsPartition *part, DistinctSeries *da, DistinctSeries *db, const int32 *rows_a, const int32 *rows_b,
			 int64 nrows)
{
	TwedSeries *a = &da->series,
			   *b = &db->series;
	int64		npairs = 0;

	for (int64 k = 0; k < nrows; k++)
		npairs += rows_a[k] >= 0;
	if (npairs == 0)
		return;
	if ((uint64) a->count * b->count <= (uint64) npairs * 2)
	{
		double	   *matrix = MemoryContextAllocHuge(part->chunkcxt, (Size) a->count * b->count * sizeof(double));
		uint32		block_rows = (uint32) Max(MatrixBlockPairs() / b->count, 1);

		for (uint32 x0 = 0; x0 < a->count; x0 += block_rows)
		{
			uint32		rows = Min(block_rows, a->count - x0);
			GeoaccTwedSet va = SeriesSlice(a, &part->shape, x0, rows);
			GeoaccTwedSet vb = SeriesView(b, &part->shape);

			TwedBlock("gpu_twed_pairs", &va, &vb, &part->params, matrix + (uint64) x0 * b->count);
			CHECK_FOR_INTERRUPTS();
		}
		for (int64 k = 0; k < nrows; k++)
			if (rows_a[k] >= 0)
				part->distances[k] = matrix[(uint64) rows_a[k] * b->count + rows_b[k]];
		return;
	}
	else
	{
		/* the rows of each distinct a, by a counting sort */
		int64	   *first = MemoryContextAllocZero(part->chunkcxt, ((Size) a->count + 1) * sizeof(int64));
		int64	   *order = MemoryContextAllocHuge(part->chunkcxt, (Size) npairs * sizeof(int64));
		TwedSeries	group;
		double	   *distances = MemoryContextAllocHuge(part->chunkcxt, (Size) npairs * sizeof(double));

		int64	   *next = palloc(a->count * sizeof(int64));

		for (int64 k = 0; k < nrows; k++)
			if (rows_a[k] >= 0)
				first[rows_a[k] + 1]++;
		for (uint32 x = 0; x < a->count; x++)
			first[x + 1] += first[x];
		memcpy(next, first, a->count * sizeof(int64));
		for (int64 k = 0; k < nrows; k++)
			if (rows_a[k] >= 0)
				order[next[rows_a[k]]++] = k;
		SeriesInit(&group, part->chunkcxt);
		for (uint32 x = 0; x < a->count; x++)
		{
			GeoaccTwedSet va,
						vb;
			int			dims = part->shape.dims;

			/* the b's of a's rows, packed one after another */
			group.count = 0;
			group.npoints = 0;
			for (int64 i = first[x]; i < first[x + 1]; i++)
			{
				uint32		y = (uint32) rows_b[order[i]];
				uint64		n = b->offsets[y + 1] - b->offsets[y];

				SeriesReserve(&group, n, dims);
				memcpy(group.values + group.npoints * dims, b->values + b->offsets[y] * dims, n * dims * sizeof(double));
				memcpy(group.times + group.npoints, b->times + b->offsets[y], n * sizeof(double));
				SeriesClose(&group, 0, n);
			}
			va = SeriesSlice(a, &part->shape, x, 1);
			vb = SeriesView(&group, &part->shape);
			TwedBlock("gpu_twed_pairs", &va, &vb, &part->params, distances);
			for (int64 i = first[x]; i < first[x + 1]; i++)
				part->distances[order[i]] = distances[i - first[x]];
			CHECK_FOR_INTERRUPTS();
		}
	}
}

/*
 * Read rows from `row` on into a chunk, up to PAIRS_CHUNK_POINTS points of
 * distinct series or PAIRS_CHUNK_ROWS rows, and compute their distances.
 */
static void
PairsReadChunk(WindowObject win, PairsPartition *part, int64 row)
{
	MemoryContext old;
	DistinctSeries da,
				db;
	int32	   *rows_a,
			   *rows_b;
	int64		nrows = Min(PAIRS_CHUNK_ROWS, part->nrows - row);

	/* the labels that name the partition's first series outlive the chunk */
	if (part->shape.first != NULL)
		part->shape.first = MemoryContextStrdup(part->partcxt, part->shape.first);
	if (part->shape.srid_first != NULL)
		part->shape.srid_first = MemoryContextStrdup(part->partcxt, part->shape.srid_first);
	MemoryContextReset(part->chunkcxt);
	old = MemoryContextSwitchTo(part->chunkcxt);
	DistinctInit(&da, part->chunkcxt);
	DistinctInit(&db, part->chunkcxt);
	rows_a = palloc(nrows * sizeof(int32));
	rows_b = palloc(nrows * sizeof(int32));
	part->distances = palloc0(nrows * sizeof(double));
	part->nulls = palloc(nrows * sizeof(bool));
	part->chunk_begin = row;
	for (int64 k = 0; k < nrows; k++)
	{
		bool		a_null,
					b_null,
					isout;
		Datum		a_datum,
					b_datum;
		Datum		params[6];
		bool		has_params = PairsRowParams(win, row + k, params);

		if (has_params != !part->params_null || (has_params && !SameParamDatums(params, part->param_datums)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("gpu_twed_pairs parameters must be the same on every row of the partition"),
					 errdetail("Row " INT64_FORMAT " of the partition has other nu, lambda, degree, root, float32 or "
							   "use_z than its first row.", row + k + 1)));
		rows_a[k] = rows_b[k] = -1;
		part->nulls[k] = true;
		a_datum = WinGetFuncArgInPartition(win, 0, row + k, WINDOW_SEEK_HEAD, false, &a_null, &isout);
		if (!a_null && !part->params_null)
		{
			/* a copy: fetching b may reuse the slot a was read from */
			struct varlena *a = PG_DETOAST_DATUM_COPY(a_datum);

			b_datum = WinGetFuncArgInPartition(win, 1, row + k, WINDOW_SEEK_HEAD, false, &b_null, &isout);
			if (!b_null)
			{
				rows_a[k] = (int32) DistinctAdd(&da, &part->shape, a, psprintf("a of row " INT64_FORMAT, row + k + 1));
				rows_b[k] = (int32) DistinctAdd(&db, &part->shape, PG_DETOAST_DATUM(b_datum),
												psprintf("b of row " INT64_FORMAT, row + k + 1));
				part->nulls[k] = false;
			}
			pfree(a);
		}
		if (da.series.npoints + db.series.npoints >= PAIRS_CHUNK_POINTS)
			nrows = k + 1;
		CHECK_FOR_INTERRUPTS();
	}
	part->chunk_end = row + nrows;
	CheckGeographyDegree(&part->shape, &part->params);
	PairsCompute(part, &da, &db, rows_a, rows_b, nrows);
	MemoryContextSwitchTo(old);
}

/*
 * gpu_twed_pairs(a, b, nu, lambda, degree, root, float32, use_z): a window
 * function giving each row the TWED of its trajectories a and b (geometry
 * or geography, as gpu_twed), computed
 * for the whole partition in batches: equal series among the rows are
 * packed once, and a partition that holds every pair of its a's and b's (a
 * join with a reference table) is one matrix for the core.  Under Citus a
 * window partitioned by the distribution column runs on the workers.
 */
PG_FUNCTION_INFO_V1(gpu_twed_pairs);
Datum
gpu_twed_pairs(PG_FUNCTION_ARGS)
{
	WindowObject win = PG_WINDOW_OBJECT();
	PairsPartition *part = WinGetPartitionLocalMemory(win, sizeof(PairsPartition));
	int64		row = WinGetCurrentPosition(win);

	if (!part->started)
	{
		part->partcxt = GetMemoryChunkContext(part);
		part->chunkcxt = AllocSetContextCreate(part->partcxt, "gpu_twed_pairs chunk", ALLOCSET_DEFAULT_SIZES);
		part->nrows = WinGetPartitionRowCount(win);
		part->params_null = !PairsRowParams(win, 0, part->param_datums);
		if (!part->params_null)
		{
			part->params = ParamsFromDatums(part->param_datums);
			part->shape.use_z = DatumGetBool(part->param_datums[5]);
		}
		part->chunk_begin = part->chunk_end = 0;
		part->started = true;
	}
	if (row < part->chunk_begin || row >= part->chunk_end)
		PairsReadChunk(win, part, row);
	if (part->nulls[row - part->chunk_begin])
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(part->distances[row - part->chunk_begin]);
}
