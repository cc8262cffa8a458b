/*
 * stats.c
 *
 * Per-backend statistics of geoacc calls: for each function and device,
 * how many calls, how many items and how much time, and how many calls
 * geoacc.device = auto moved from a failing GPU to the CPU.  geoacc_stats()
 * shows them; geoacc_stats_reset() clears them.
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
	int64		fallbacks;		/* calls that came to the CPU after the GPU failed */
} CallStats;

static CallStats stats[MAX_STATS];
static int	nstats = 0;

void
GeoaccCallBegin(GeoaccCall *call, const char *function, int64 work)
{
	call->function = function;
	call->items = work;
	call->device = GeoaccChooseDevice(work);
	call->fell_back = false;
	INSTR_TIME_SET_CURRENT(call->start);
}

bool
GeoaccRetryOnCpu(GeoaccCall *call, GeoaccStatus status)
{
	if (call->device != GEOACC_DEVICE_GPU || geoacc_device_setting != GEOACC_SETTING_AUTO)
		return false;
	if (status != GEOACC_ERR_DEVICE_MEMORY && status != GEOACC_ERR_CUDA && status != GEOACC_ERR_DEVICE_DISABLED)
		return false;
	GeoaccWarnIfDisabled();
	ereport(LOG,
			(errmsg("geoacc: %s runs on the CPU after the GPU failed", call->function),
			 errdetail_internal("%s", geoacc_status_message()),
			 errhidestmt(true)));
	call->device = GEOACC_DEVICE_CPU;
	call->fell_back = true;
	return true;
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
	s->fallbacks += call->fell_back;
	s->items += call->items;
	s->total_ms += ms;
	s->last_ms = ms;
}

/*
 * geoacc_stats(): calls, items, time and fallbacks per function and device
 */
PG_FUNCTION_INFO_V1(geoacc_stats);
Datum
geoacc_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < nstats; i++)
	{
		Datum		values[7];
		bool		nulls[7] = {false};

		values[0] = CStringGetTextDatum(stats[i].function);
		values[1] = CStringGetTextDatum(stats[i].device == GEOACC_DEVICE_GPU ? "gpu" : "cpu");
		values[2] = Int64GetDatum(stats[i].calls);
		values[3] = Int64GetDatum(stats[i].items);
		values[4] = Float8GetDatum(stats[i].total_ms);
		values[5] = Float8GetDatum(stats[i].last_ms);
		values[6] = Int64GetDatum(stats[i].fallbacks);
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
