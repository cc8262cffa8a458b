/*
 * geoacc.c
 *
 * Module entry: settings and geoacc_version().  _PG_init defines GUCs and
 * hooks only; CUDA is initialised lazily by the first GPU call of each
 * backend (CUDA does not survive the postmaster's fork).
 */
#include "geoacc.h"

#include <limits.h>

#include "utils/builtins.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

int			geoacc_device_setting = GEOACC_SETTING_AUTO;
int			geoacc_gpu_threshold = 100000;
int			geoacc_gpu_memory_limit_mb = -1;

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

static void
assign_gpu_memory_limit(int newval, void *extra)
{
	/* only records the number: no CUDA call here; the core's 0 is the automatic limit */
	geoacc_gpu_set_memory_limit(newval < 0 ? 0 : (uint64) newval * 1024 * 1024);
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

	DefineCustomIntVariable("geoacc.gpu_memory_limit",
							"Device memory one geoacc call may use; larger inputs are processed in chunks.",
							"-1 means 90% of the device memory free when the backend first uses the GPU.",
							&geoacc_gpu_memory_limit_mb,
							-1, -1, INT_MAX,
							PGC_USERSET, GUC_UNIT_MB,
							check_gpu_memory_limit, assign_gpu_memory_limit, NULL);

	MarkGUCPrefixReserved("geoacc");

	GeoaccDeviceInit();
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
