/*
 * stats.c
 *
 * Per-backend statistics of geoacc calls: for each function and device,
 * how many calls, how many items and how much time, how many calls
 * geoacc.device = auto moved from the GPU to the CPU (the GPU failed, or the
 * memory budget was taken) and how many waited for the memory budget.
 * geoacc_stats() shows them; geoacc_stats_reset() clears them.
 *
 * With geoacc in shared_preload_libraries, each backend also publishes its
 * totals, the GPU it uses and what it holds of the memory budget in a slot
 * of shared memory (one per backend id, written only by its backend), so
 * that geoacc_backends() shows every session of the server: which backend
 * used which GPU, and how much.
 */
#include "geoacc.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "storage/backendid.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#define MAX_STATS 64

typedef struct CallStats
{
	const char *function;		/* a string literal */
	GeoaccDevice device;
	int64		calls;
	int64		items;
	double		total_ms;
	double		last_ms;
	int64		fallbacks;		/* calls that came to the CPU from the GPU */
	int64		waits;			/* calls that waited for the memory budget */
	double		wait_ms;
} CallStats;

static CallStats stats[MAX_STATS];
static int	nstats = 0;

/* One backend's totals in shared memory, per device kind (index: GeoaccDevice). */
typedef struct BackendSlot
{
	slock_t		mutex;
	int			pid;			/* 0: free */
	int			gpu_device;		/* CUDA ordinal, -1: none yet */
	int64		calls[2];
	int64		items[2];
	double		ms[2];
	int64		fallbacks;
	int64		waits;
	uint64		reserved;		/* of the memory budget, now */
	TimestampTz last_call;
	char		last_function[NAMEDATALEN];
} BackendSlot;

static BackendSlot *backend_slots = NULL;	/* NULL unless preloaded */
static BackendSlot *my_slot = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static Size
BackendSlotsSize(void)
{
	return mul_size(MaxBackends, sizeof(BackendSlot));
}

static void
StatsShmemRequest(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(BackendSlotsSize());
}

static void
StatsShmemStartup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	backend_slots = ShmemInitStruct("geoacc backends", BackendSlotsSize(), &found);
	if (!found)
	{
		memset(backend_slots, 0, BackendSlotsSize());
		for (int i = 0; i < MaxBackends; i++)
			SpinLockInit(&backend_slots[i].mutex);
	}
	LWLockRelease(AddinShmemInitLock);
}

void
GeoaccStatsInit(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = StatsShmemRequest;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = StatsShmemStartup;
}

static void
ReleaseSlot(int code, Datum arg)
{
	SpinLockAcquire(&my_slot->mutex);
	my_slot->pid = 0;
	SpinLockRelease(&my_slot->mutex);
	my_slot = NULL;
}

/* This backend's slot, taken (and emptied) on first use; NULL without shared memory. */
static BackendSlot *
MySlot(void)
{
	if (my_slot != NULL || backend_slots == NULL || MyBackendId <= 0 || MyBackendId > MaxBackends)
		return my_slot;
	my_slot = &backend_slots[MyBackendId - 1];
	SpinLockAcquire(&my_slot->mutex);
	my_slot->pid = MyProcPid;
	my_slot->gpu_device = -1;
	memset(my_slot->calls, 0, sizeof(my_slot->calls));
	memset(my_slot->items, 0, sizeof(my_slot->items));
	memset(my_slot->ms, 0, sizeof(my_slot->ms));
	my_slot->fallbacks = 0;
	my_slot->waits = 0;
	my_slot->reserved = 0;
	my_slot->last_call = 0;
	my_slot->last_function[0] = '\0';
	SpinLockRelease(&my_slot->mutex);
	before_shmem_exit(ReleaseSlot, (Datum) 0);
	return my_slot;
}

/* Add a finished call to this backend's slot. */
static void
PublishCall(const GeoaccCall *call, double ms)
{
	BackendSlot *slot = MySlot();
	int			d = call->device == GEOACC_DEVICE_GPU ? 1 : 0;
	int			gpu_device = -1;
	uint64		device_memory;
	TimestampTz now;

	if (slot == NULL)
		return;
	if (!GeoaccCallsGpu(&gpu_device, &device_memory))
		gpu_device = -1;
	now = GetCurrentTimestamp();
	SpinLockAcquire(&slot->mutex);
	slot->gpu_device = gpu_device;
	slot->calls[d]++;
	slot->items[d] += call->items;
	slot->ms[d] += ms;
	slot->fallbacks += call->fell_back;
	slot->waits += call->waited;
	slot->last_call = now;
	strlcpy(slot->last_function, call->function, NAMEDATALEN);
	SpinLockRelease(&slot->mutex);
}

void
GeoaccPublishReserved(uint64 bytes)
{
	BackendSlot *slot;

	/* nothing to show, or a backend exiting that gave its slot back: no slot taken */
	if (my_slot == NULL && (bytes == 0 || proc_exit_inprogress))
		return;
	slot = MySlot();
	if (slot == NULL)
		return;
	SpinLockAcquire(&slot->mutex);
	slot->reserved = bytes;
	SpinLockRelease(&slot->mutex);
}

void
GeoaccStatsRecord(const GeoaccCall *call, double ms)
{
	CallStats  *s = NULL;

	PublishCall(call, ms);
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
	s->waits += call->waited;
	s->wait_ms += call->wait_ms;
	s->items += call->items;
	s->total_ms += ms;
	s->last_ms = ms;
}

/*
 * geoacc_stats(): calls, items, time, fallbacks and waits for the memory
 * budget per function and device
 */
PG_FUNCTION_INFO_V1(geoacc_stats);
Datum
geoacc_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < nstats; i++)
	{
		Datum		values[9];
		bool		nulls[9] = {false};

		values[0] = CStringGetTextDatum(stats[i].function);
		values[1] = CStringGetTextDatum(stats[i].device == GEOACC_DEVICE_GPU ? "gpu" : "cpu");
		values[2] = Int64GetDatum(stats[i].calls);
		values[3] = Int64GetDatum(stats[i].items);
		values[4] = Float8GetDatum(stats[i].total_ms);
		values[5] = Float8GetDatum(stats[i].last_ms);
		values[6] = Int64GetDatum(stats[i].fallbacks);
		values[7] = Int64GetDatum(stats[i].waits);
		values[8] = Float8GetDatum(stats[i].wait_ms);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(geoacc_stats_reset);
Datum
geoacc_stats_reset(PG_FUNCTION_ARGS)
{
	BackendSlot *slot = MySlot();

	nstats = 0;
	if (slot != NULL)
	{
		SpinLockAcquire(&slot->mutex);
		memset(slot->calls, 0, sizeof(slot->calls));
		memset(slot->items, 0, sizeof(slot->items));
		memset(slot->ms, 0, sizeof(slot->ms));
		slot->fallbacks = 0;
		slot->waits = 0;
		SpinLockRelease(&slot->mutex);
	}
	PG_RETURN_VOID();
}

/*
 * geoacc_backends(): every backend of this server that has made a geoacc
 * call or holds some of the memory budget, with the GPU it uses, its
 * calls, items and time per device kind, its fallbacks and waits, and what
 * it holds of the budget
 */
PG_FUNCTION_INFO_V1(geoacc_backends);
Datum
geoacc_backends(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	if (backend_slots == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("geoacc_backends() needs geoacc in shared_preload_libraries"),
				 errhint("Add geoacc to shared_preload_libraries in postgresql.conf and restart the server; "
						 "geoacc_stats() shows this session's calls without it.")));
	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < MaxBackends; i++)
	{
		BackendSlot copy;
		Datum		values[13];
		bool		nulls[13] = {false};

		SpinLockAcquire(&backend_slots[i].mutex);
		copy = backend_slots[i];
		SpinLockRelease(&backend_slots[i].mutex);
		if (copy.pid == 0 || (copy.calls[0] + copy.calls[1] == 0 && copy.reserved == 0))
			continue;
		values[0] = Int32GetDatum(copy.pid);
		values[1] = Int32GetDatum(copy.gpu_device);
		nulls[1] = copy.gpu_device < 0;
		values[2] = Int64GetDatum(copy.calls[1]);
		values[3] = Int64GetDatum(copy.items[1]);
		values[4] = Float8GetDatum(copy.ms[1]);
		values[5] = Int64GetDatum(copy.calls[0]);
		values[6] = Int64GetDatum(copy.items[0]);
		values[7] = Float8GetDatum(copy.ms[0]);
		values[8] = Int64GetDatum(copy.fallbacks);
		values[9] = Int64GetDatum(copy.waits);
		values[10] = Int64GetDatum((int64) copy.reserved);
		values[11] = CStringGetTextDatum(copy.last_function);
		nulls[11] = copy.last_function[0] == '\0';
		values[12] = TimestampTzGetDatum(copy.last_call);
		nulls[12] = copy.last_call == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
