/*
 * stats.c
 *
 * Per-backend statistics of geoacc calls: for each function and device,
 * how many calls, how many items and how much time.  geoacc_stats() shows
 * them; geoacc_stats_reset() clears them.
 */
#include "geoacc.h"

#include "funcapi.h"
#include "utils/builtins.h"

#define MAX_STATS 64

typedef struct CallStats
{
	const char *function;		/* a string literal */
	GeoaccDevice device;
	int64		calls;
	int64		items;
	double		total_ms;
	double		last_ms;
} CallStats;

static CallStats stats[MAX_STATS];
static int	nstats = 0;

void
GeoaccCallBegin(GeoaccCall *call, const char *function, int64 work)
{
	call->function = function;
	call->items = work;
	call->device = GeoaccChooseDevice(work);
	INSTR_TIME_SET_CURRENT(call->start);
}

void
GeoaccCallEnd(GeoaccCall *call)
{
	instr_time	elapsed;
	double		ms;
	CallStats  *s = NULL;

	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, call->start);
	ms = INSTR_TIME_GET_MILLISEC(elapsed);

	for (int i = 0; i < nstats; i++)
		if (strcmp(stats[i].function, call->function) == 0 && stats[i].device == call->device)
			s = &stats[i];
	if (s == NULL)
	{
		if (nstats == MAX_STATS)
			return;
		s = &stats[nstats++];
		memset(s, 0, sizeof(*s));
		s->function = call->function;
		s->device = call->device;
	}
	s->calls++;
	s->items += call->items;
	s->total_ms += ms;
	s->last_ms = ms;
}

/*
 * geoacc_stats(): calls, items and time per function and device
 */
PG_FUNCTION_INFO_V1(geoacc_stats);
Datum
geoacc_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < nstats; i++)
	{
		Datum		values[6];
		bool		nulls[6] = {false};

		values[0] = CStringGetTextDatum(stats[i].function);
		values[1] = CStringGetTextDatum(stats[i].device == GEOACC_DEVICE_GPU ? "gpu" : "cpu");
		values[2] = Int64GetDatum(stats[i].calls);
		values[3] = Int64GetDatum(stats[i].items);
		values[4] = Float8GetDatum(stats[i].total_ms);
		values[5] = Float8GetDatum(stats[i].last_ms);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(geoacc_stats_reset);
Datum
geoacc_stats_reset(PG_FUNCTION_ARGS)
{
	nstats = 0;
	PG_RETURN_VOID();
}
