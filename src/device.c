/*
 * device.c
 *
 * The device layer on the PostgreSQL side: choosing the CPU or GPU for a
 * call, turning core statuses into ERRORs with errcodes, the interrupt
 * callback the core polls, device memory tied to memory contexts (freed on
 * abort), and geoacc_devices().
 */
#include "geoacc.h"

#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/backendid.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

static bool gpu_disabled_warned = false;

/* The core polls this between launches; it must not longjmp. */
static int
GeoaccInterruptPending(void)
{
	return QueryCancelPending || ProcDiePending;
}

/* Safety net: nothing tracked survives an aborted transaction. */
static void
GeoaccXactCallback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		geoacc_gpu_release_all();
}

void
GeoaccDeviceInit(void)
{
	geoacc_set_interrupt_callback(GeoaccInterruptPending);
	RegisterXactCallback(GeoaccXactCallback, NULL);
}

/*
 * Initialise the GPU on first use, on the device geoacc.gpu_devices gives
 * this backend: its slot (backend id) picks among the listed devices, so
 * that concurrent sessions, parallel workers and Citus shard tasks spread
 * over the GPUs.
 */
static GeoaccStatus
GpuInit(void)
{
	if (geoacc_gpu_current_device() < 0)
	{
		const GeoaccDeviceList *list = geoacc_gpu_device_list;

		geoacc_gpu_choose_device(list ? list->ordinals : NULL, list ? list->count : 0,
								 MyBackendId > 0 ? MyBackendId - 1 : MyProcPid);
	}
	return geoacc_gpu_init();
}

GeoaccDevice
GeoaccChooseDevice(int64 work)
{
	if (!GeoaccServiceActive())
		return GeoaccChooseLocalDevice(work);
	/* the service's GPU: this backend opens no CUDA context */
	switch (geoacc_device_setting)
	{
		case GEOACC_SETTING_CPU:
			return GEOACC_DEVICE_CPU;
		case GEOACC_SETTING_GPU:
			if (!GeoaccServiceGpuUsable())
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("the geoacc service has no usable GPU"),
						 errdetail_internal("%s", GeoaccServiceGpuMessage()),
						 errhint("Set geoacc.device to \"auto\" or \"cpu\" to use the CPU implementation.")));
			return GEOACC_DEVICE_GPU;
		default:
			return work >= geoacc_gpu_threshold && GeoaccServiceGpuUsable() ? GEOACC_DEVICE_GPU : GEOACC_DEVICE_CPU;
	}
}

GeoaccDevice
GeoaccChooseLocalDevice(int64 work)
{
	switch (geoacc_device_setting)
	{
		case GEOACC_SETTING_CPU:
			return GEOACC_DEVICE_CPU;
		case GEOACC_SETTING_GPU:
			GeoaccCheck(GpuInit());
			return GEOACC_DEVICE_GPU;
		default:
			if (work < geoacc_gpu_threshold || geoacc_gpu_disabled())
				return GEOACC_DEVICE_CPU;
			return GpuInit() == GEOACC_OK ? GEOACC_DEVICE_GPU : GEOACC_DEVICE_CPU;
	}
}

void
GeoaccWarnIfDisabled(void)
{
	if (gpu_disabled_warned || !geoacc_gpu_disabled())
		return;
	gpu_disabled_warned = true;
	ereport(WARNING,
			(errmsg("geoacc disabled the GPU for this session after a CUDA error"),
			 errdetail_internal("%s", geoacc_status_message()),
			 errhint("With geoacc.device = \"auto\" later calls run on the CPU; "
					 "a new session tries the GPU again.")));
}

void
GeoaccCheck(GeoaccStatus status)
{
	const char *message = geoacc_status_message();

	switch (status)
	{
		case GEOACC_OK:
			return;
		case GEOACC_ERR_CANCELLED:
			/* the core stopped because of a pending interrupt: serve it */
			CHECK_FOR_INTERRUPTS();
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceling statement due to user request")));
			break;
		case GEOACC_ERR_INVALID_ARGUMENT:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s", message)));
			break;
		case GEOACC_ERR_HOST_MEMORY:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail_internal("%s", message)));
			break;
		case GEOACC_ERR_DEVICE_MEMORY:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of GPU memory"),
					 errdetail_internal("%s", message),
					 errhint("Lower geoacc.gpu_memory_limit so that the input is processed in smaller chunks, "
							 "or set geoacc.device to \"cpu\".")));
			break;
		case GEOACC_ERR_NO_DEVICE:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("no CUDA device is available"),
					 errdetail_internal("%s", message),
					 errhint("Set geoacc.device to \"auto\" or \"cpu\" to use the CPU implementation.")));
			break;
		case GEOACC_ERR_DEVICE_DISABLED:
			GeoaccWarnIfDisabled();
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the GPU is disabled for this session"),
					 errdetail_internal("%s", message),
					 errhint("Set geoacc.device to \"auto\" or \"cpu\" to use the CPU implementation.")));
			break;
		case GEOACC_ERR_CUDA:
			ereport(ERROR,
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
					 errmsg("CUDA call failed"),
					 errdetail_internal("%s", message)));
			break;
		case GEOACC_ERR_SERVICE:
			ereport(ERROR,
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
					 errmsg("the geoacc service failed during the call"),
					 errdetail_internal("%s", message),
					 errhint("Run the statement again, or set geoacc.device to \"auto\" to run such calls on the "
							 "CPU when the GPU fails.")));
			break;
		case GEOACC_ERR_INTERNAL:
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("internal error in the geoacc core"),
					 errdetail_internal("%s", message)));
			break;
	}
}

uint64
GeoaccDeviceMemoryAvailable(void)
{
	int			device;
	uint64		device_memory,
				available;

	if (GeoaccBudgetActive())
		return GeoaccCallMemoryCap();
	if (!GeoaccServiceActive())
		return geoacc_gpu_memory_available();
	/* the service's GPU as it first saw it, capped by this session's geoacc.gpu_memory_limit */
	if (!GeoaccServiceGpu(&device, &device_memory, &available))
		return 0;
	return geoacc_gpu_memory_limit_mb > 0 ? Min(available, (uint64) geoacc_gpu_memory_limit_mb * 1024 * 1024)
		: available;
}

static void
GeoaccDeviceFreeCallback(void *arg)
{
	geoacc_gpu_free(arg);
}

void *
GeoaccDeviceAllocInContext(uint64 bytes)
{
	MemoryContextCallback *cb = MemoryContextAlloc(CurrentMemoryContext, sizeof(MemoryContextCallback));
	void	   *ptr;

	GeoaccCheck(geoacc_gpu_alloc(bytes, &ptr));
	cb->func = GeoaccDeviceFreeCallback;
	cb->arg = ptr;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	return ptr;
}

/*
 * geoacc_devices(): one row per CUDA device this backend can see
 */
PG_FUNCTION_INFO_V1(geoacc_devices);
Datum
geoacc_devices(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			count = 0;

	InitMaterializedSRF(fcinfo, 0);
	GeoaccCheck(geoacc_gpu_device_count(&count));
	for (int i = 0; i < count; i++)
	{
		GeoaccDeviceInfo info;
		Datum		values[9];
		bool		nulls[9] = {false};

		GeoaccCheck(geoacc_gpu_device_info(i, &info));
		values[0] = Int32GetDatum(info.ordinal);
		values[1] = CStringGetTextDatum(info.name);
		values[2] = CStringGetTextDatum(psprintf("%d.%d", info.cc_major, info.cc_minor));
		values[3] = Int32GetDatum(info.multiprocessors);
		values[4] = Int64GetDatum((int64) info.total_memory);
		values[5] = Int64GetDatum((int64) info.free_memory);
		nulls[5] = !info.free_memory_known;
		values[6] = CStringGetTextDatum(psprintf("%d.%d", info.driver_version / 1000,
												 info.driver_version % 1000 / 10));
		values[7] = CStringGetTextDatum(psprintf("%d.%d", info.runtime_version / 1000,
												 info.runtime_version % 1000 / 10));
		values[8] = BoolGetDatum(info.ordinal == geoacc_gpu_current_device());
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * geoacc_status(): what this build is and whether this session can use a
 * GPU, with the reason when it cannot, which GPU it uses, the memory one
 * call may use and the server's memory budget of that GPU (initialises
 * CUDA in this backend)
 */
PG_FUNCTION_INFO_V1(geoacc_status);
Datum
geoacc_status(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[10];
	bool		nulls[10] = {false};
	int			runtime = geoacc_cuda_runtime_version();
	bool		service = GeoaccServiceActive();
	/* with the service, its GPU: this backend opens no CUDA context */
	GeoaccStatus status = service ? GEOACC_OK : GpuInit();
	bool		usable = service ? GeoaccServiceGpuUsable() : status == GEOACC_OK;
	const char *reason = service ? GeoaccServiceGpuMessage() : geoacc_status_message();
	int			device = -1;
	uint64		device_memory = 0;
	bool		has_device = usable && GeoaccCallsGpu(&device, &device_memory);
	uint64		budget = 0,
				reserved = 0;
	bool		has_budget = usable && GeoaccBudgetOfMyGpu(&budget, &reserved);

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = CStringGetTextDatum(GEOACC_VERSION);
	values[1] = CStringGetTextDatum(geoacc_cuda_built() ? psprintf("CUDA %d.%d", runtime / 1000, runtime % 1000 / 10)
									: "CPU only");
	values[2] = CStringGetTextDatum(GetConfigOption("geoacc.device", false, false));
	values[3] = BoolGetDatum(usable);
	values[4] = CStringGetTextDatum(reason ? reason : "");
	nulls[4] = usable;
	values[5] = Int64GetDatum((int64) GeoaccCallMemoryCap());
	nulls[5] = !has_device;
	values[6] = Int32GetDatum(device);
	nulls[6] = !has_device;
	values[7] = Int32GetDatum(MyProcPid);
	values[8] = Int64GetDatum((int64) budget);
	nulls[8] = !has_budget;
	values[9] = Int64GetDatum((int64) reserved);
	nulls[9] = !has_budget;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/*
 * Test support, declared only by the test suites: hold device memory in the
 * current memory context and raise an ERROR; keep the GPU busy.
 */
PG_FUNCTION_INFO_V1(geoacc_test_device_alloc_then_error);
Datum
geoacc_test_device_alloc_then_error(PG_FUNCTION_ARGS)
{
	int64		bytes = PG_GETARG_INT64(0);

	GeoaccChooseDevice(INT64_MAX);
	GeoaccDeviceAllocInContext((uint64) bytes);
	ereport(ERROR,
			(errcode(ERRCODE_RAISE_EXCEPTION),
			 errmsg("raised after allocating %lld bytes of device memory", (long long) bytes)));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(geoacc_test_gpu_busy);
Datum
geoacc_test_gpu_busy(PG_FUNCTION_ARGS)
{
	float8		seconds = PG_GETARG_FLOAT8(0);

	GeoaccCheck(geoacc_gpu_busy_wait(seconds));
	PG_RETURN_VOID();
}

/* Hold device memory until the session ends (concurrency tests: a GPU mostly taken). */
PG_FUNCTION_INFO_V1(geoacc_test_hold_device_memory);
Datum
geoacc_test_hold_device_memory(PG_FUNCTION_ARGS)
{
	void	   *ptr;

	GeoaccChooseDevice(INT64_MAX);
	GeoaccCheck(geoacc_gpu_alloc((uint64) PG_GETARG_INT64(0), &ptr));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(geoacc_test_fail_device_allocations);
Datum
geoacc_test_fail_device_allocations(PG_FUNCTION_ARGS)
{
	geoacc_gpu_fail_allocations(PG_GETARG_INT32(0));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(geoacc_test_memory_in_use);
Datum
geoacc_test_memory_in_use(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) geoacc_gpu_memory_in_use());
}
