/*
 * device.cu
 *
 * Device management for one process (one PostgreSQL backend): lazy CUDA
 * initialisation, device queries, the stream, tracked allocations under the
 * memory cap (stream-ordered, from the device's memory pool), and the switch
 * that disables the GPU after a sticky error.
 */
#include "cuda_util.cuh"

#include <cstdio>
#include <unordered_map>

namespace
{

enum class GpuState
{
	UNTRIED, READY, ABSENT, DISABLED
};

GpuState	gpu_state = GpuState::UNTRIED;
char		absent_reason[512];
cudaStream_t geoacc_stream;
uint64_t	memory_limit_setting;	/* 0: automatic */
uint64_t	memory_limit_auto;		/* 90% of free memory at init */
uint64_t	memory_in_use;
uint64_t	device_memory;			/* the device's total memory */
uint64_t	reservation;			/* geoacc_gpu_set_reservation(): 0, none */
uint64_t	reservation_base;		/* memory in use when it began */
uint64_t	kept_freed_memory;		/* geoacc_gpu_keep_freed_memory() */
cudaMemPool_t memory_pool;			/* the device's default pool, which the stream allocates from */
bool		has_memory_pool;		/* else (a device without memory pools) cudaMalloc and cudaFree */
std::unordered_map<void *, size_t> *live_allocations;
geoacc::DeviceCounters counters;

/* Errors after which the CUDA context is unusable for this process. */
bool
is_sticky(cudaError_t err)
{
	switch (err)
	{
		case cudaErrorIllegalAddress:
		case cudaErrorLaunchFailure:
		case cudaErrorHardwareStackError:
		case cudaErrorIllegalInstruction:
		case cudaErrorMisalignedAddress:
		case cudaErrorInvalidAddressSpace:
		case cudaErrorInvalidPc:
		case cudaErrorAssert:
		case cudaErrorECCUncorrectable:
		case cudaErrorLaunchTimeout:
		case cudaErrorContextIsDestroyed:
			return true;
		default:
			return false;
	}
}

/* geoacc_gpu_fail_allocations(): allocations still to fail */
int			failing_allocations = 0;

/* geoacc_gpu_choose_device(): the devices to pick from (none: all) and this process's slot */
constexpr int MAX_CHOICES = 64;
int			device_choices[MAX_CHOICES];
int			device_choice_count = 0;
int			device_slot = 0;
int			current_device = -1;

/*
 * Each thread's stack, which CUDA reserves for every thread the device can
 * hold (1 KiB by default; 256 B leaves about 200 MiB less in a context on an
 * H100).  No kernel recurses, so each one's need is known when it is
 * built, and the driver grows the limit for a kernel launched with a larger
 * one (the tileset's error sampling: about 3 KiB) and keeps it.
 */
constexpr size_t THREAD_STACK_BYTES = 256;

/* A reservation from the server's budget caps the call; else the setting or the automatic cap. */
uint64_t
memory_limit()
{
	if (reservation > 0)
		return reservation_base + reservation;
	return memory_limit_setting ? memory_limit_setting : memory_limit_auto;
}

}								/* namespace */

namespace geoacc
{

void
cuda_fail(cudaError_t err, const char *what, const char *file, int line)
{
	if (is_sticky(err))
	{
		gpu_state = GpuState::DISABLED;
		fail(GEOACC_ERR_DEVICE_DISABLED, "CUDA error %s (%s) in %s at %s:%d; the GPU is disabled for this process",
			 cudaGetErrorName(err), cudaGetErrorString(err), what, file, line);
	}
	cudaGetLastError();			/* clear a non-sticky error */
	if (err == cudaErrorMemoryAllocation)
		fail(GEOACC_ERR_DEVICE_MEMORY, "CUDA out of device memory in %s at %s:%d", what, file, line);
	fail(GEOACC_ERR_CUDA, "CUDA error %s (%s) in %s at %s:%d",
		 cudaGetErrorName(err), cudaGetErrorString(err), what, file, line);
}

void
require_gpu()
{
	switch (gpu_state)
	{
		case GpuState::READY:
			return;
		case GpuState::DISABLED:
			fail(GEOACC_ERR_DEVICE_DISABLED, "the GPU was disabled in this process by an earlier CUDA error");
		case GpuState::ABSENT:
			fail(GEOACC_ERR_NO_DEVICE, "%s", absent_reason);
		case GpuState::UNTRIED:
			break;
	}

	int			count = 0;
	cudaError_t err = cudaGetDeviceCount(&count);

	if (err != cudaSuccess || count == 0)
	{
		int			driver = 0;

		/* no driver at all is "insufficient" too; the driver version (0: none) tells the two apart */
		if (err == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0)
			snprintf(absent_reason, sizeof(absent_reason),
					 "no NVIDIA driver was found (the CUDA driver library libcuda.so.1 could not be loaded)");
		else if (err != cudaSuccess)
			snprintf(absent_reason, sizeof(absent_reason), "CUDA reports %s: %s",
					 cudaGetErrorName(err), cudaGetErrorString(err));
		else
			snprintf(absent_reason, sizeof(absent_reason), "CUDA reports no devices");
		cudaGetLastError();
		gpu_state = GpuState::ABSENT;
		fail(GEOACC_ERR_NO_DEVICE, "%s", absent_reason);
	}

	size_t		free_bytes = 0,
				total_bytes = 0;
	int			pools = 0;		/* whether the device has memory pools (cudaMallocAsync) */
	int			ordinal = device_choice_count > 0 ? device_choices[device_slot % device_choice_count]
		: device_slot % count;

	if (ordinal >= count)
	{
		snprintf(absent_reason, sizeof(absent_reason),
				 "device %d was asked for, but CUDA sees only %d device%s (ordinals 0 to %d)",
				 ordinal, count, count == 1 ? "" : "s", count - 1);
		gpu_state = GpuState::ABSENT;
		fail(GEOACC_ERR_NO_DEVICE, "%s", absent_reason);
	}
	err = cudaSetDevice(ordinal);
	if (err == cudaSuccess)
		err = cudaDeviceSetLimit(cudaLimitStackSize, THREAD_STACK_BYTES);
	if (err == cudaSuccess)
		err = cudaStreamCreateWithFlags(&geoacc_stream, cudaStreamNonBlocking);
	if (err == cudaSuccess)
		err = cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, ordinal);
	has_memory_pool = pools != 0;
	if (err == cudaSuccess && has_memory_pool)
		err = cudaDeviceGetDefaultMemPool(&memory_pool, ordinal);
	if (err == cudaSuccess && has_memory_pool)
		err = cudaMemPoolSetAttribute(memory_pool, cudaMemPoolAttrReleaseThreshold, &kept_freed_memory);
	if (err == cudaSuccess)
		err = cudaMemGetInfo(&free_bytes, &total_bytes);
	if (err != cudaSuccess)
	{
		snprintf(absent_reason, sizeof(absent_reason), "CUDA initialisation failed with %s: %s",
				 cudaGetErrorName(err), cudaGetErrorString(err));
		cudaGetLastError();
		gpu_state = GpuState::ABSENT;
		fail(GEOACC_ERR_NO_DEVICE, "%s", absent_reason);
	}
	memory_limit_auto = free_bytes / 10 * 9;
	device_memory = total_bytes;
	live_allocations = new std::unordered_map<void *, size_t>();
	current_device = ordinal;
	gpu_state = GpuState::READY;
}

cudaStream_t
stream()
{
	return geoacc_stream;
}

void
stream_sync()
{
	GEOACC_CUDA_TRY(cudaStreamSynchronize(geoacc_stream));
	counters.syncs++;
}

void
sync_and_check_interrupt()
{
	stream_sync();
	check_interrupt();
}

DeviceCounters
device_counters()
{
	return counters;
}

void *
device_malloc(size_t bytes)
{
	require_gpu();
	if (failing_allocations > 0)
	{
		failing_allocations--;
		fail(GEOACC_ERR_DEVICE_MEMORY, "allocating %zu bytes of device memory failed on purpose (a test)", bytes);
	}
	if (bytes > memory_limit() || memory_in_use > memory_limit() - bytes)
		fail(GEOACC_ERR_DEVICE_MEMORY,
			 "allocating %zu bytes of device memory would exceed the cap of %llu bytes (%llu in use)",
			 bytes, (unsigned long long) memory_limit(), (unsigned long long) memory_in_use);

	void	   *ptr = nullptr;

	/*
	 * Stream-ordered: unlike cudaMalloc and cudaFree, neither waits for the
	 * whole device, and memory freed by an earlier call is reused from the pool.
	 * Out of memory, the pool's unused memory goes back to the driver first.
	 */
	cudaError_t err = has_memory_pool ? cudaMallocAsync(&ptr, bytes, geoacc_stream) : cudaMalloc(&ptr, bytes);

	if (err == cudaErrorMemoryAllocation && has_memory_pool)
	{
		cudaGetLastError();
		stream_sync();
		GEOACC_CUDA_TRY(cudaMemPoolTrimTo(memory_pool, 0));
		err = cudaMallocAsync(&ptr, bytes, geoacc_stream);
	}
	GEOACC_CUDA_TRY(err);
	counters.allocations++;
	live_allocations->emplace(ptr, bytes);
	memory_in_use += bytes;
	return ptr;
}

void
device_free(void *ptr)
{
	if (ptr == nullptr || live_allocations == nullptr)
		return;

	auto		it = live_allocations->find(ptr);

	if (it == live_allocations->end())
		return;
	memory_in_use -= it->second;
	live_allocations->erase(it);
	if (gpu_state != GpuState::READY)
		return;
	if (!has_memory_pool)
	{
		cudaFree(ptr);			/* errors here are reported by the next call */
		return;
	}
	cudaFreeAsync(ptr, geoacc_stream);
	if (memory_in_use == 0)
	{
		/*
		 * Nothing of geoacc's is left on the device (a call's last buffer):
		 * the pool hands back now what it does not keep, rather than at a
		 * later wait that may not come before the process idles.
		 */
		if (cudaStreamSynchronize(geoacc_stream) == cudaSuccess)
			cudaMemPoolTrimTo(memory_pool, kept_freed_memory);
	}
}

}								/* namespace geoacc */

using namespace geoacc;

extern "C" int
geoacc_cuda_built(void)
{
	return 1;
}

extern "C" int
geoacc_cuda_runtime_version(void)
{
	return CUDART_VERSION;
}

extern "C" GeoaccStatus
geoacc_gpu_init(void)
{
	return guarded([] { require_gpu(); });
}

extern "C" int
geoacc_gpu_disabled(void)
{
	return gpu_state == GpuState::DISABLED;
}

extern "C" void
geoacc_gpu_keep_freed_memory(uint64_t bytes)
{
	kept_freed_memory = bytes;
	if (gpu_state == GpuState::READY && has_memory_pool)
		cudaMemPoolSetAttribute(memory_pool, cudaMemPoolAttrReleaseThreshold, &kept_freed_memory);
}

extern "C" void
geoacc_gpu_choose_device(const int *ordinals, int count, int slot)
{
	device_choice_count = count < MAX_CHOICES ? count : MAX_CHOICES;
	for (int i = 0; i < device_choice_count; i++)
		device_choices[i] = ordinals[i];
	device_slot = slot < 0 ? 0 : slot;
}

extern "C" int
geoacc_gpu_current_device(void)
{
	return gpu_state == GpuState::READY ? current_device : -1;
}

extern "C" GeoaccStatus
geoacc_gpu_device_count(int *count)
{
	*count = 0;
	if (gpu_state == GpuState::DISABLED)
		return GEOACC_OK;
	if (cudaGetDeviceCount(count) != cudaSuccess)
	{
		cudaGetLastError();
		*count = 0;
	}
	return GEOACC_OK;
}

extern "C" GeoaccStatus
geoacc_gpu_device_info(int ordinal, GeoaccDeviceInfo *info)
{
	return guarded([&] {
		cudaDeviceProp prop;
		int			current = -1;
		size_t		free_bytes = 0,
					total_bytes = 0;

		*info = GeoaccDeviceInfo();
		GEOACC_CUDA_TRY(cudaGetDeviceProperties(&prop, ordinal));
		info->ordinal = ordinal;
		snprintf(info->name, sizeof(info->name), "%s", prop.name);
		info->cc_major = prop.major;
		info->cc_minor = prop.minor;
		info->multiprocessors = prop.multiProcessorCount;
		info->total_memory = prop.totalGlobalMem;
		GEOACC_CUDA_TRY(cudaDriverGetVersion(&info->driver_version));
		GEOACC_CUDA_TRY(cudaRuntimeGetVersion(&info->runtime_version));
		/*
		 * Free memory needs a context on the device: known only for the one this
		 * process already uses, so that listing devices opens no context on the others.
		 */
		if (gpu_state == GpuState::READY && cudaGetDevice(&current) == cudaSuccess && current == ordinal
			&& cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
		{
			info->free_memory = free_bytes;
			info->free_memory_known = 1;
		}
		cudaGetLastError();
	});
}

extern "C" void
geoacc_gpu_set_memory_limit(uint64_t bytes)
{
	memory_limit_setting = bytes;
}

extern "C" void
geoacc_gpu_set_reservation(uint64_t bytes)
{
	reservation = bytes;
	reservation_base = memory_in_use;
}

extern "C" uint64_t
geoacc_gpu_device_memory(void)
{
	return gpu_state == GpuState::READY ? device_memory : 0;
}

extern "C" void
geoacc_gpu_fail_allocations(int count)
{
	failing_allocations = count;
}

extern "C" uint64_t
geoacc_gpu_memory_limit(void)
{
	return gpu_state == GpuState::READY ? memory_limit() : 0;
}

extern "C" uint64_t
geoacc_gpu_memory_available(void)
{
	if (gpu_state != GpuState::READY || memory_in_use >= memory_limit())
		return 0;
	return memory_limit() - memory_in_use;
}

extern "C" uint64_t
geoacc_gpu_memory_in_use(void)
{
	return memory_in_use;
}

extern "C" GeoaccStatus
geoacc_gpu_alloc(uint64_t bytes, void **ptr)
{
	*ptr = nullptr;
	return guarded([&] { *ptr = device_malloc(bytes); });
}

extern "C" void
geoacc_gpu_free(void *ptr)
{
	device_free(ptr);
}

extern "C" void
geoacc_gpu_release_all(void)
{
	if (live_allocations == nullptr)
		return;
	while (!live_allocations->empty())
		device_free(live_allocations->begin()->first);
}

/* Spin for about `cycles` clock ticks: a short, predictable kernel. */
__global__ void
busy_wait_kernel(long long cycles, int *sink)
{
	long long	start = clock64();

	while (clock64() - start < cycles)
		;
	if (threadIdx.x == 0 && blockIdx.x == 0)
		atomicAdd(sink, 1);
}

extern "C" GeoaccStatus
geoacc_gpu_busy_wait(double seconds)
{
	return guarded([&] {
		require_gpu();
		DeviceBuffer<int> sink(1);
		int			clock_khz = 0;
		int			ordinal = 0;
		cudaEvent_t start, stop;

		GEOACC_CUDA_TRY(cudaGetDevice(&ordinal));
		GEOACC_CUDA_TRY(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal));
		GEOACC_CUDA_TRY(cudaEventCreate(&start));
		GEOACC_CUDA_TRY(cudaEventCreate(&stop));
		GEOACC_CUDA_TRY(cudaEventRecord(start, stream()));

		/* kernels of about 10 ms, with an interrupt check after each */
		long long	cycles = (long long) clock_khz * 10;
		float		elapsed_ms = 0;

		try
		{
			while (elapsed_ms < seconds * 1000.0)
			{
				busy_wait_kernel<<<1, 32, 0, stream()>>>(cycles, sink.data());
				GEOACC_CUDA_CHECK_LAUNCH();
				GEOACC_CUDA_TRY(cudaEventRecord(stop, stream()));
				sync_and_check_interrupt();
				GEOACC_CUDA_TRY(cudaEventElapsedTime(&elapsed_ms, start, stop));
			}
		}
		catch (...)
		{
			cudaEventDestroy(start);
			cudaEventDestroy(stop);
			throw;
		}
		cudaEventDestroy(start);
		cudaEventDestroy(stop);
	});
}
