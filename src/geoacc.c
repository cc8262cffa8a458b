/*
 * geoacc.c
 *
 * Module entry: settings and geoacc_version().  _PG_init defines GUCs and
 * hooks only; CUDA is initialised lazily by the first GPU call of each
 * backend (CUDA does not survive the postmaster's fork).
 */
#include "geoacc.h"

#include <limits.h>

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

int			geoacc_device_setting = GEOACC_SETTING_AUTO;
int			geoacc_gpu_threshold = 100000;
int			geoacc_cpu_threads = 1;
int			geoacc_gpu_memory_limit_mb = -1;
int			geoacc_gpu_memory_total_mb = -1;
int			geoacc_gpu_memory_wait_ms = 60000;
char	   *geoacc_gpu_devices = NULL;
const GeoaccDeviceList *geoacc_gpu_device_list = NULL;

/* geoacc.gpu_devices: at most this many ordinals */
#define MAX_LISTED_DEVICES 64

static const struct config_enum_entry service_options[] = {
	{"off", GEOACC_SERVICE_OFF, false},
	{"gpu", GEOACC_SERVICE_GPU, false},
	{"cpu", GEOACC_SERVICE_CPU, false},
	{NULL, 0, false}
};

static const struct config_enum_entry device_options[] = {
	{"auto", GEOACC_SETTING_AUTO, false},
	{"gpu", GEOACC_SETTING_GPU, false},
	{"cpu", GEOACC_SETTING_CPU, false},
	{NULL, 0, false}
};

/* 0 is refused: it is what a size below half a megabyte ('1kB') rounds to, not "automatic" */
static bool
check_gpu_memory_limit(int *newval, void **extra, GucSource source)
{
	if (*newval != 0)
		return true;
	GUC_check_errdetail("geoacc.gpu_memory_limit must be at least 1MB, or -1 for the automatic limit.");
	return false;
}

static bool
check_gpu_memory_total(int *newval, void **extra, GucSource source)
{
	if (*newval != 0)
		return true;
	GUC_check_errdetail("geoacc.gpu_memory_total must be at least 1MB, or -1 for 3/4 of each GPU's memory.");
	return false;
}

static void
assign_gpu_memory_limit(int newval, void *extra)
{
	/* only records the number: no CUDA call here; the core's 0 is the automatic limit */
	geoacc_gpu_set_memory_limit(newval < 0 ? 0 : (uint64) newval * 1024 * 1024);
}

static void
assign_cpu_threads(int newval, void *extra)
{
	geoacc_cpu_set_threads(newval);
}

/* geoacc.gpu_devices: empty, or CUDA ordinals separated by commas, parsed into a GeoaccDeviceList */
static bool
check_gpu_devices(char **newval, void **extra, GucSource source)
{
	GeoaccDeviceList *list = malloc(offsetof(GeoaccDeviceList, ordinals) + MAX_LISTED_DEVICES * sizeof(int));
	const char *p = *newval;

	if (list == NULL)
		return false;
	list->count = 0;
	while (*p == ' ')
		p++;
	while (*p != '\0')
	{
		char	   *end;
		long		ordinal = strtol(p, &end, 10);

		if (end == p || !(*p >= '0' && *p <= '9') || ordinal >= GEOACC_MAX_DEVICES)
		{
			GUC_check_errdetail("geoacc.gpu_devices must be empty or a list of CUDA device ordinals "
								"from 0 to %d separated by commas, such as \"0,1\".", GEOACC_MAX_DEVICES - 1);
			free(list);
			return false;
		}
		if (list->count == MAX_LISTED_DEVICES)
		{
			GUC_check_errdetail("geoacc.gpu_devices lists more than %d devices.", MAX_LISTED_DEVICES);
			free(list);
			return false;
		}
		list->ordinals[list->count++] = (int) ordinal;
		p = end;
		while (*p == ' ')
			p++;
		if (*p == ',')
		{
			p++;
			while (*p == ' ')
				p++;
			if (*p == '\0')
			{
				GUC_check_errdetail("geoacc.gpu_devices ends with a comma.");
				free(list);
				return false;
			}
		}
		else if (*p != '\0')
		{
			GUC_check_errdetail("geoacc.gpu_devices must be empty or a list of CUDA device ordinals "
								"from 0 to %d separated by commas, such as \"0,1\".", GEOACC_MAX_DEVICES - 1);
			free(list);
			return false;
		}
	}
	*extra = list;
	return true;
}

static void
assign_gpu_devices(const char *newval, void *extra)
{
	geoacc_gpu_device_list = extra;
}

static void
DefineServiceSettings(void)
{
	DefineCustomEnumVariable("geoacc.service",
							 "Whether one service process runs the GPU work of all sessions.",
							 "off: each session that uses the GPU opens a CUDA context of its own; gpu: the "
							 "geoacc service holds the only one and runs every session's GPU work; cpu: the "
							 "service runs the CPU implementations instead (tests without a GPU). Needs geoacc "
							 "in shared_preload_libraries.",
							 &geoacc_service_mode,
							 GEOACC_SERVICE_OFF,
							 service_options,
							 PGC_POSTMASTER, 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("geoacc.service_processes",
							"Device processes of the geoacc service: calls that run at once on the GPU.",
							"Each holds a CUDA context of its own; with one, a long call makes the others wait.",
							&geoacc_service_processes,
							2, 1, 16,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("geoacc.service_memory",
							"Host memory shared with the geoacc service, for the inputs and outputs of calls.",
							"-1 means half the machine's memory. It is reserved at server start and used only "
							"as calls need it.",
							&geoacc_service_memory_mb,
							-1, -1, INT_MAX,
							PGC_POSTMASTER, GUC_UNIT_MB,
							NULL, NULL, NULL);
}

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomEnumVariable("geoacc.device",
							 "Where geoacc functions run.",
							 "auto: the GPU when one is usable and the work reaches geoacc.gpu_threshold, "
							 "else the CPU; gpu: the GPU or an error; cpu: always the CPU.",
							 &geoacc_device_setting,
							 GEOACC_SETTING_AUTO,
							 device_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("geoacc.gpu_threshold",
							"Smallest work (points, cells or pairs) that geoacc.device = auto sends to the GPU.",
							NULL,
							&geoacc_gpu_threshold,
							100000, 0, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("geoacc.cpu_threads",
							"Threads a geoacc call may use on the CPU, where its work splits into independent pieces.",
							"So far gpu_mesh_tileset on the CPU (its error measurement and its sorts) and the "
							"convolution of gpu_density_raster and of density tiles on the CPU; the results are the same "
							"whatever the number.",
							&geoacc_cpu_threads,
							1, 1, GEOACC_MAX_CPU_THREADS,
							PGC_USERSET, 0,
							NULL, assign_cpu_threads, NULL);

	DefineCustomIntVariable("geoacc.gpu_memory_limit",
							"Device memory one geoacc call may use; larger inputs are processed in chunks.",
							"-1 means the whole of geoacc.gpu_memory_total when geoacc is preloaded, else 90% of "
							"the device memory free when the backend first uses the GPU.",
							&geoacc_gpu_memory_limit_mb,
							-1, -1, INT_MAX,
							PGC_USERSET, GUC_UNIT_MB,
							check_gpu_memory_limit, assign_gpu_memory_limit, NULL);

	DefineCustomIntVariable("geoacc.gpu_memory_total",
							"Device memory the sessions of the server may use together, per GPU.",
							"-1 means 3/4 of each GPU's memory. Needs geoacc in shared_preload_libraries; "
							"set it in postgresql.conf (a reload changes it).",
							&geoacc_gpu_memory_total_mb,
							-1, -1, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MB,
							check_gpu_memory_total, NULL, NULL);

	DefineCustomIntVariable("geoacc.gpu_memory_wait",
							"How long a call under geoacc.device = gpu waits for its share of geoacc.gpu_memory_total.",
							"0 means not at all: the call fails at once when the budget is taken.",
							&geoacc_gpu_memory_wait_ms,
							60000, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomStringVariable("geoacc.gpu_devices",
							   "GPUs geoacc sessions use, as CUDA device ordinals.",
							   "Empty: every GPU CUDA makes visible; or a list such as \"0,1\", or one ordinal. "
							   "Sessions take the listed GPUs in turn by backend slot; a session keeps the GPU "
							   "it took when it first used one.",
							   &geoacc_gpu_devices,
							   "",
							   PGC_USERSET, GUC_LIST_INPUT,
							   check_gpu_devices, assign_gpu_devices, NULL);

	/* settings of the server's start: defined only where they take effect, with geoacc preloaded */
	if (process_shared_preload_libraries_in_progress)
		DefineServiceSettings();

	MarkGUCPrefixReserved("geoacc");

	GeoaccBudgetInit();
	GeoaccDeviceInit();
	GeoaccStatsInit();
	GeoaccServiceInit();
	GeoaccSnapshotInit();
}

/*
 * geoacc_version(): the extension version and what this build can use
 */
PG_FUNCTION_INFO_V1(geoacc_version);
Datum
geoacc_version(PG_FUNCTION_ARGS)
{
	int			runtime = geoacc_cuda_runtime_version();

	if (!geoacc_cuda_built())
		PG_RETURN_TEXT_P(cstring_to_text("geoacc " GEOACC_VERSION " (CPU only)"));
	PG_RETURN_TEXT_P(cstring_to_text(psprintf("geoacc %s (CUDA %d.%d)", GEOACC_VERSION,
											  runtime / 1000, runtime % 1000 / 10)));
}
