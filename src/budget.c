/*
 * budget.c
 *
 * The GPU memory budget the backends of one server share.  Each backend has
 * a CUDA context of its own and sees only its own allocations, so with
 * geoacc in shared_preload_libraries each GPU gets a budget in shared
 * memory, geoacc.gpu_memory_total: before the GPU part of a call allocates
 * anything, the call reserves there what it will use (its need, up to
 * geoacc.gpu_memory_limit), and the core is capped at that reservation; it
 * gives it back when the call ends, fails or is cancelled, or its backend
 * exits.  When the budget cannot serve a call, geoacc.device = auto runs it
 * on the CPU and gpu waits, interruptibly, up to geoacc.gpu_memory_wait.
 * Without preloading there is no budget: each call is capped by
 * geoacc.gpu_memory_limit alone.
 *
 * A backend holds at most one reservation, and only around core calls, in
 * which no other geoacc call can start.
 */
#include "geoacc.h"

#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/wait_event.h"

/* The automatic budget: this share of the device's memory (the rest for the backends' CUDA contexts). */
#define AUTO_BUDGET_NUMERATOR 3
#define AUTO_BUDGET_DENOMINATOR 4

/* A waiting call looks again at least this often (ms), woken or not. */
#define WAIT_POLL_MS 1000

typedef struct GpuBudget
{
	uint64		device_memory;	/* the device's total memory; 0: no backend has used it yet */
	uint64		reserved;		/* held by calls now */
	int64		calls;			/* reservations made */
	int64		waits;			/* of them, after waiting */
	int64		fallbacks;		/* calls that geoacc.device = auto sent to the CPU instead */
	int64		timeouts;		/* calls under geoacc.device = gpu that gave up waiting */
} GpuBudget;

typedef struct BudgetShared
{
	slock_t		mutex;
	ConditionVariable returned; /* memory was given back */
	GpuBudget	gpus[GEOACC_MAX_DEVICES];
} BudgetShared;

static BudgetShared *budget = NULL; /* NULL unless preloaded */
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* What this backend holds: a call's reservation, and the test helper's. */
typedef struct Holding
{
	int			device;
	uint64		bytes;
} Holding;

static Holding held_by_call = {-1, 0};
static Holding held_by_test = {-1, 0};
static bool exit_callback_registered = false;

static void
BudgetShmemRequest(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(sizeof(BudgetShared));
}

static void
BudgetShmemStartup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	budget = ShmemInitStruct("geoacc GPU memory budget", sizeof(BudgetShared), &found);
	if (!found)
	{
		memset(budget, 0, sizeof(BudgetShared));
		SpinLockInit(&budget->mutex);
		ConditionVariableInit(&budget->returned);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* Give back what `h` holds and wake the calls waiting for memory. */
static void
Give(Holding *h)
{
	GpuBudget  *gb;

	if (h->bytes == 0)
		return;
	gb = &budget->gpus[h->device];
	SpinLockAcquire(&budget->mutex);
	gb->reserved -= Min(gb->reserved, h->bytes);
	SpinLockRelease(&budget->mutex);
	h->bytes = 0;
	h->device = -1;
	ConditionVariableBroadcast(&budget->returned);
	GeoaccPublishReserved(held_by_call.bytes + held_by_test.bytes);
}

static void
ReleaseCallReservation(void)
{
	if (held_by_call.bytes == 0)
		return;
	Give(&held_by_call);
	geoacc_gpu_set_reservation(0);
}

/* A reservation lives inside one call: a failed (sub)transaction's call gave up. */
static void
BudgetXactCallback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		ReleaseCallReservation();
}

static void
BudgetSubXactCallback(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		ReleaseCallReservation();
}

/* The backend exits (also on FATAL): nothing it holds may stay reserved. */
static void
BudgetExit(int code, Datum arg)
{
	ReleaseCallReservation();
	Give(&held_by_test);
}

void
GeoaccBudgetInit(void)
{
	RegisterXactCallback(BudgetXactCallback, NULL);
	RegisterSubXactCallback(BudgetSubXactCallback, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = BudgetShmemRequest;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = BudgetShmemStartup;
}

/* The budget of a GPU whose total memory is known (call with the mutex held). */
static uint64
BudgetTotal(const GpuBudget *gb)
{
	if (geoacc_gpu_memory_total_mb > 0)
		return (uint64) geoacc_gpu_memory_total_mb * 1024 * 1024;
	return gb->device_memory / AUTO_BUDGET_DENOMINATOR * AUTO_BUDGET_NUMERATOR;
}

bool
GeoaccBudgetActive(void)
{
	return budget != NULL;
}

uint64
GeoaccCallReservation(void)
{
	return held_by_call.bytes;
}

/* Record a GPU's total memory, the first time a backend uses it; its budget, now. */
static uint64
BudgetOf(int device, uint64 device_memory)
{
	GpuBudget  *gb = &budget->gpus[device];
	uint64		total;

	SpinLockAcquire(&budget->mutex);
	if (gb->device_memory == 0)
		gb->device_memory = device_memory;
	total = BudgetTotal(gb);
	SpinLockRelease(&budget->mutex);
	return total;
}

uint64
GeoaccCallMemoryCap(void)
{
	int			device;
	uint64		device_memory;
	uint64		total;

	if (!GeoaccCallsGpu(&device, &device_memory))
		return 0;
	if (budget == NULL)
		return GeoaccServiceActive() ? 0 : geoacc_gpu_memory_limit();
	total = BudgetOf(device, device_memory);
	if (geoacc_gpu_memory_limit_mb > 0)
		return Min(total, (uint64) geoacc_gpu_memory_limit_mb * 1024 * 1024);
	return total;
}

/* What the GPU service keeps of snapshots on GPU `device` (its GPU, if any). */
static uint64
KeptBytes(int device)
{
	int			service_device;
	uint64		device_memory;
	uint64		available;

	if (!GeoaccServiceActive() || !GeoaccServiceGpu(&service_device, &device_memory, &available) ||
		service_device != device)
		return 0;
	return GeoaccServiceKeptBytes();
}

static char *
SizeText(uint64 bytes)
{
	return text_to_cstring(DatumGetTextPP(DirectFunctionCall1(pg_size_pretty, Int64GetDatum((int64) bytes))));
}

static void
EnsureExitCallback(void)
{
	if (exit_callback_registered)
		return;
	before_shmem_exit(BudgetExit, (Datum) 0);
	exit_callback_registered = true;
}

/*
 * Reserve between need.least and need.bytes (each at most `cap`) of GPU
 * `device`'s budget into *h; false when geoacc.device = auto should run the
 * call on the CPU instead.  Under gpu: waits, then an ERROR.
 */
static bool
Reserve(GeoaccCall *call, Holding *h, int device, uint64 device_memory, uint64 cap, GeoaccDeviceNeed need)
{
	GpuBudget  *gb = &budget->gpus[device];
	uint64		total = BudgetOf(device, device_memory);
	uint64		want = 0;
	uint64		least = 0;
	uint64		free = 0;
	uint64		taken = 0;
	instr_time	start,
				now;
	double		waited_ms = 0;
	bool		prepared = false;

	EnsureExitCallback();
	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		/* what the service's device processes keep of snapshots is not the calls' */
		uint64		kept = KeptBytes(device);

		SpinLockAcquire(&budget->mutex);
		total = BudgetTotal(gb);	/* a reload may have changed it */
		want = Min(Min(need.bytes, cap), total);
		least = Min(Max(need.least, 1), want);
		free = total > gb->reserved + kept ? total - gb->reserved - kept : 0;
		if (free >= least && want > 0)
		{
			taken = Min(free, want);
			gb->reserved += taken;
			gb->calls++;
			gb->waits += waited_ms > 0;
		}
		else if (geoacc_device_setting == GEOACC_SETTING_AUTO)
			gb->fallbacks++;
		else if (waited_ms >= geoacc_gpu_memory_wait_ms)
			gb->timeouts++;
		SpinLockRelease(&budget->mutex);

		if (taken > 0)
			break;
		if (geoacc_device_setting == GEOACC_SETTING_AUTO)
		{
			ereport(LOG,
					(errmsg("geoacc: %s runs on the CPU: the GPU memory budget cannot serve it now", call->function),
					 errdetail_internal("It needs %s (at least %s) of GPU %d; %s of the budget of %s are free.",
										SizeText(want), SizeText(least), device, SizeText(free),
										SizeText(total)),
					 errhidestmt(true)));
			return false;
		}
		if (waited_ms >= geoacc_gpu_memory_wait_ms)
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
					 errmsg("could not reserve GPU memory for %s", call->function),
					 errdetail("The call needs %s (at least %s) of GPU %d; %s of its budget of %s were free "
							   "after geoacc.gpu_memory_wait (%d ms).",
							   SizeText(want), SizeText(least), device, SizeText(free), SizeText(total),
							   geoacc_gpu_memory_wait_ms),
					 errhint("Raise geoacc.gpu_memory_wait or geoacc.gpu_memory_total, lower "
							 "geoacc.gpu_memory_limit, or set geoacc.device to \"auto\" to run such calls on "
							 "the CPU.")));
		}
		if (!prepared)
		{
			/* on the wait list before looking again: memory given back from now on wakes this call */
			ConditionVariablePrepareToSleep(&budget->returned);
			prepared = true;
			continue;
		}
		/* until memory comes back or the time is up; serves interrupts (cancel, statement_timeout) */
		ConditionVariableTimedSleep(&budget->returned,
									(long) Min(WAIT_POLL_MS, Max(1, geoacc_gpu_memory_wait_ms - waited_ms)),
									PG_WAIT_EXTENSION);
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		waited_ms = Max(INSTR_TIME_GET_MILLISEC(now), 1e-3);
	}
	ConditionVariableCancelSleep();
	h->device = device;
	h->bytes = taken;
	GeoaccPublishReserved(held_by_call.bytes + held_by_test.bytes);
	if (waited_ms > 0)
	{
		call->waited = true;
		call->wait_ms += waited_ms;
		elog(DEBUG1, "geoacc: %s waited %.0f ms for %s of GPU %d's memory budget",
			 call->function, waited_ms, SizeText(taken), device);
	}
	return true;
}

void
GeoaccCallReserve(GeoaccCall *call, GeoaccDeviceNeed need)
{
	int			device;
	uint64		device_memory;

	/* no budget for a GPU not known yet (the service's, while it starts; none in its cpu mode) */
	if (call->device != GEOACC_DEVICE_GPU || budget == NULL || need.bytes == 0 ||
		!GeoaccCallsGpu(&device, &device_memory))
		return;
	if (held_by_call.bytes > 0)
		elog(ERROR, "geoacc: %s reserves GPU memory while a reservation is held", call->function);
	if (Reserve(call, &held_by_call, device, device_memory, GeoaccCallMemoryCap(), need))
		geoacc_gpu_set_reservation(held_by_call.bytes);
	else
	{
		call->device = GEOACC_DEVICE_CPU;
		call->fell_back = true;
	}
}

void
GeoaccCallRelease(GeoaccCall *call)
{
	ReleaseCallReservation();
}

/* The budget of the GPU this session uses, and what all backends hold of it; false without one. */
bool
GeoaccBudgetOfMyGpu(uint64 *total, uint64 *reserved)
{
	int			device;
	uint64		device_memory;

	if (budget == NULL || !GeoaccCallsGpu(&device, &device_memory))
		return false;
	*total = BudgetOf(device, device_memory);
	SpinLockAcquire(&budget->mutex);
	*reserved = budget->gpus[device].reserved;
	SpinLockRelease(&budget->mutex);
	return true;
}

static void
RequireBudget(const char *function)
{
	if (budget == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s needs geoacc in shared_preload_libraries", function),
				 errhint("Add geoacc to shared_preload_libraries in postgresql.conf and restart the server: "
						 "without it each call is capped by geoacc.gpu_memory_limit alone.")));
}

/*
 * geoacc_gpu_budget(): each GPU the server's backends have used, its memory,
 * budget and what is reserved of it now, and how the calls fared
 */
PG_FUNCTION_INFO_V1(geoacc_gpu_budget);
Datum
geoacc_gpu_budget(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	RequireBudget("geoacc_gpu_budget()");
	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < GEOACC_MAX_DEVICES; i++)
	{
		GpuBudget	copy;
		uint64		total;
		Datum		values[9];
		bool		nulls[9] = {false};

		SpinLockAcquire(&budget->mutex);
		copy = budget->gpus[i];
		total = BudgetTotal(&copy);
		SpinLockRelease(&budget->mutex);
		if (copy.device_memory == 0)
			continue;
		values[0] = Int32GetDatum(i);
		values[1] = Int64GetDatum((int64) copy.device_memory);
		values[2] = Int64GetDatum((int64) total);
		values[3] = Int64GetDatum((int64) copy.reserved);
		values[4] = Int64GetDatum(copy.calls);
		values[5] = Int64GetDatum(copy.waits);
		values[6] = Int64GetDatum(copy.fallbacks);
		values[7] = Int64GetDatum(copy.timeouts);
		values[8] = Int64GetDatum((int64) KeptBytes(i));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * Test support, declared only by the test suites: the budget path of a
 * call on GPU `device` of `device_memory` bytes without a GPU (a CPU
 * machine tests the accounting): reserve `bytes` (at least `least`) as a
 * call would, hold it `hold_seconds`, then give it back, or raise an ERROR
 * holding it; returns what was reserved (0: geoacc.device = auto would run
 * the call on the CPU).  geoacc_test_budget_hold() keeps `bytes` of the
 * budget until the session ends or it is called again.
 */
PG_FUNCTION_INFO_V1(geoacc_test_budget_call);
Datum
geoacc_test_budget_call(PG_FUNCTION_ARGS)
{
	int32		device = PG_GETARG_INT32(0);
	GeoaccDeviceNeed need = {(uint64) PG_GETARG_INT64(2), (uint64) PG_GETARG_INT64(3)};
	float8		hold_seconds = PG_GETARG_FLOAT8(4);
	bool		raise = PG_GETARG_BOOL(5);
	GeoaccCall	call = {.function = "geoacc_test_budget_call", .device = GEOACC_DEVICE_GPU};
	uint64		cap;
	int64		reserved;

	RequireBudget("geoacc_test_budget_call()");
	if (device < 0 || device >= GEOACC_MAX_DEVICES)
		elog(ERROR, "device %d is out of range", device);
	if (held_by_call.bytes > 0)
		elog(ERROR, "a reservation is held");
	cap = geoacc_gpu_memory_limit_mb > 0 ? (uint64) geoacc_gpu_memory_limit_mb * 1024 * 1024 : UINT64_MAX;
	if (!Reserve(&call, &held_by_call, device, (uint64) PG_GETARG_INT64(1), cap, need))
		PG_RETURN_INT64(0);
	reserved = (int64) held_by_call.bytes;
	for (float8 slept = 0; slept < hold_seconds; slept += 0.01)
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000);
	}
	if (raise)
		ereport(ERROR,
				(errcode(ERRCODE_RAISE_EXCEPTION),
				 errmsg("raised holding " INT64_FORMAT " bytes of the GPU memory budget", reserved)));
	ReleaseCallReservation();
	PG_RETURN_INT64(reserved);
}

PG_FUNCTION_INFO_V1(geoacc_test_budget_hold);
Datum
geoacc_test_budget_hold(PG_FUNCTION_ARGS)
{
	int32		device = PG_GETARG_INT32(0);
	GeoaccDeviceNeed need = {(uint64) PG_GETARG_INT64(2), (uint64) PG_GETARG_INT64(2)};
	GeoaccCall	call = {.function = "geoacc_test_budget_hold", .device = GEOACC_DEVICE_GPU};

	RequireBudget("geoacc_test_budget_hold()");
	if (device < 0 || device >= GEOACC_MAX_DEVICES)
		elog(ERROR, "device %d is out of range", device);
	Give(&held_by_test);
	if (need.bytes > 0 && !Reserve(&call, &held_by_test, device, (uint64) PG_GETARG_INT64(1), UINT64_MAX, need))
		elog(ERROR, "the budget has not " INT64_FORMAT " bytes free", (int64) need.bytes);
	PG_RETURN_INT64((int64) held_by_test.bytes);
}
