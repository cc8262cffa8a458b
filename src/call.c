/*
 * call.c
 *
 * The life cycle of one SQL-level call, in one place: choose the device for
 * the call's work, reserve device memory from the budget, run the core
 * function, run it again on the CPU when the GPU fails under
 * geoacc.device = auto, turn a failed status into an ERROR, give the
 * reservation back and record the call in the statistics.  A call is
 * described by its work (a core function with its inputs and outputs, and
 * the device memory it needs), not by where it runs, so that the place that
 * runs it can change behind GeoaccCallStep.
 *
 * With the GPU service (service.c), GPU work runs there: the service runs
 * the same work, so the results are the same.
 *
 * Also the stage timer with which calls report at DEBUG1 where their time
 * went.
 */
#include "geoacc.h"

#include "lib/stringinfo.h"

void
GeoaccCallBegin(GeoaccCall *call, const char *function, int64 work)
{
	call->function = function;
	call->items = work;
	call->device = GeoaccChooseDevice(work);
	call->fell_back = false;
	call->waited = false;
	call->wait_ms = 0;
	INSTR_TIME_SET_CURRENT(call->start);
}

/*
 * After the GPU part of a call failed with `status`: under geoacc.device =
 * auto, for a failure of the GPU itself (out of device memory, a CUDA
 * error, the GPU disabled, the GPU service's process died), move the call to the CPU, say so in the server
 * log and return true.  Otherwise false.
 */
static bool
MoveToCpu(GeoaccCall *call, GeoaccStatus status)
{
	if (call->device != GEOACC_DEVICE_GPU || geoacc_device_setting != GEOACC_SETTING_AUTO)
		return false;
	if (status != GEOACC_ERR_DEVICE_MEMORY && status != GEOACC_ERR_CUDA && status != GEOACC_ERR_DEVICE_DISABLED &&
		status != GEOACC_ERR_SERVICE)
		return false;
	GeoaccCallRelease(call);
	GeoaccWarnIfDisabled();
	ereport(LOG,
			(errmsg("geoacc: %s runs on the CPU after the GPU failed", call->function),
			 errdetail_internal("%s", geoacc_status_message()),
			 errhidestmt(true)));
	call->device = GEOACC_DEVICE_CPU;
	call->fell_back = true;
	return true;
}

/* Run the work on the call's device: GPU work on the service when there is one. */
static GeoaccStatus
RunOn(GeoaccCall *call, const GeoaccWork *work)
{
	if (call->device == GEOACC_DEVICE_GPU && GeoaccServiceActive() && work->arg_size > 0)
		return GeoaccServiceRun(work, GeoaccCallReservation());
	return work->run(call->device, work->arg);
}

void
GeoaccCallStep(GeoaccCall *call, const GeoaccWork *work)
{
	GeoaccStatus status;

	/* a work the service cannot run needs a GPU of this backend's own */
	if (call->device == GEOACC_DEVICE_GPU && GeoaccServiceActive() && work->arg_size == 0 && !work->hands_over)
		call->device = GeoaccChooseLocalDevice(call->items);
	GeoaccCallReserve(call, work->need);
	status = RunOn(call, work);
	/*
	 * The CPU twin computes the same bits, so the step runs again there;
	 * work that adds to its output only after a failure to allocate, which
	 * comes before anything is written.
	 */
	if (status != GEOACC_OK && (!work->adds_to_output || status == GEOACC_ERR_DEVICE_MEMORY)
		&& MoveToCpu(call, status))
		status = RunOn(call, work);
	GeoaccCallRelease(call);
	GeoaccCheck(status);
}

void
GeoaccCallEnd(GeoaccCall *call)
{
	GeoaccCallRelease(call);
	GeoaccStatsRecord(call, GeoaccMsSince(call->start));
}

GeoaccDevice
GeoaccCallRun(const char *function, int64 items, const GeoaccWork *work)
{
	GeoaccCall	call;

	GeoaccCallBegin(&call, function, items);
	GeoaccCallStep(&call, work);
	GeoaccCallEnd(&call);
	return call.device;
}

const char *
GeoaccDeviceName(GeoaccDevice device)
{
	if (device != GEOACC_DEVICE_GPU)
		return "CPU";
	/* the service's test mode runs the CPU implementations for the GPU calls handed to it */
	return GeoaccServiceActive() && geoacc_service_mode == GEOACC_SERVICE_CPU ? "service CPU" : "GPU";
}

/* ---------------------------------------------------------------- stages */

void
GeoaccStagesStart(GeoaccStages *stages)
{
	memset(stages, 0, sizeof(*stages));
	INSTR_TIME_SET_CURRENT(stages->start);
	stages->lap = stages->start;
}

void
GeoaccStagesAdd(GeoaccStages *stages, const char *stage, double ms)
{
	int			i = 0;

	while (i < stages->count && strcmp(stages->names[i], stage) != 0)
		i++;
	if (i == stages->count)
	{
		if (i == GEOACC_MAX_STAGES)
			elog(ERROR, "geoacc: more than %d stages", GEOACC_MAX_STAGES);
		stages->names[stages->count++] = stage;
	}
	stages->ms[i] += ms;
}

void
GeoaccStagesLap(GeoaccStages *stages, const char *stage)
{
	instr_time	now,
				elapsed;

	INSTR_TIME_SET_CURRENT(now);
	elapsed = now;
	INSTR_TIME_SUBTRACT(elapsed, stages->lap);
	stages->lap = now;
	GeoaccStagesAdd(stages, stage, INSTR_TIME_GET_MILLISEC(elapsed));
}

void
GeoaccStagesSkip(GeoaccStages *stages)
{
	INSTR_TIME_SET_CURRENT(stages->lap);
}

double
GeoaccStagesMs(const GeoaccStages *stages, const char *stage)
{
	for (int i = 0; i < stages->count; i++)
		if (strcmp(stages->names[i], stage) == 0)
			return stages->ms[i];
	return 0;
}

char *
GeoaccStagesText(const GeoaccStages *stages)
{
	StringInfoData text;

	initStringInfo(&text);
	for (int i = 0; i < stages->count; i++)
		appendStringInfo(&text, "%s %.1f ms, ", stages->names[i], stages->ms[i]);
	appendStringInfo(&text, "total %.1f ms", GeoaccMsSince(stages->start));
	return text.data;
}
