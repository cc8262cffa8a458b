/*
 * device_none.cpp
 *
 * Device management for a build without CUDA: there is never a GPU, and
 * every GPU request fails with GEOACC_ERR_NO_DEVICE.  Compiled only when
 * nvcc is not available.
 */
#include "core.h"

namespace geoacc
{

void
require_gpu()
{
	fail(GEOACC_ERR_NO_DEVICE, "this build of geoacc has no CUDA support");
}

}								/* namespace geoacc */

using namespace geoacc;

extern "C" int geoacc_cuda_built(void) { return 0; }
extern "C" int geoacc_cuda_runtime_version(void) { return 0; }
extern "C" GeoaccStatus geoacc_gpu_init(void) { return guarded([] { require_gpu(); }); }
extern "C" int geoacc_gpu_disabled(void) { return 0; }
extern "C" void geoacc_gpu_choose_device(const int *, int, int) {}
extern "C" void geoacc_gpu_keep_freed_memory(uint64_t) {}
extern "C" int geoacc_gpu_current_device(void) { return -1; }

extern "C" GeoaccStatus
geoacc_gpu_device_count(int *count)
{
	*count = 0;
	return GEOACC_OK;
}

extern "C" GeoaccStatus
geoacc_gpu_device_info(int, GeoaccDeviceInfo *)
{
	return guarded([] { require_gpu(); });
}

extern "C" void geoacc_gpu_set_memory_limit(uint64_t) {}
extern "C" void geoacc_gpu_set_reservation(uint64_t) {}
extern "C" uint64_t geoacc_gpu_device_memory(void) { return 0; }
extern "C" uint64_t geoacc_gpu_memory_limit(void) { return 0; }
extern "C" void geoacc_gpu_fail_allocations(int) {}
extern "C" uint64_t geoacc_gpu_memory_available(void) { return 0; }
extern "C" uint64_t geoacc_gpu_memory_in_use(void) { return 0; }

extern "C" GeoaccStatus
geoacc_gpu_alloc(uint64_t, void **ptr)
{
	*ptr = nullptr;
	return guarded([] { require_gpu(); });
}

extern "C" void geoacc_gpu_free(void *) {}
extern "C" void geoacc_gpu_release_all(void) {}
extern "C" GeoaccStatus geoacc_gpu_busy_wait(double) { return guarded([] { require_gpu(); }); }
