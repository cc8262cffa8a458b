/*
 * context_cost.cpp
 *
 * What a CUDA context costs a process that uses geoacc without the GPU
 * service (one context per backend): the time to initialise it through
 * geoacc_gpu_init(), optionally one small GPU call (which loads its kernels
 * under lazy module loading), then "ready" on stdout and a pause, during
 * which test/device/context_cost.sh reads the process's device memory from
 * nvidia-smi.  Limits of the context can be set before geoacc starts it:
 *
 *   context_cost [--stack BYTES] [--heap BYTES] [--fifo BYTES] [--call] [--pause SECONDS]
 *
 * --stack: cudaLimitStackSize (each thread's stack, reserved for every
 * thread the device can hold), set after geoacc has started the context
 * with its own (256 B; CUDA's default is 1 KiB), --heap:
 * cudaLimitMallocHeapSize (device-side malloc, which geoacc does not use),
 * --fifo: cudaLimitPrintfFifoSize.
 */
#include "geoacc_core.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace
{

double
now_ms()
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool
set_limit(cudaLimit limit, const char *name, size_t value)
{
	cudaError_t err = cudaSetDevice(0);

	if (err == cudaSuccess)
		err = cudaDeviceSetLimit(limit, value);
	if (err != cudaSuccess)
		fprintf(stderr, "context_cost: %s %zu: %s\n", name, value, cudaGetErrorString(err));
	return err == cudaSuccess;
}

}								/* namespace */

int
main(int argc, char **argv)
{
	bool		call = false;
	double		pause = 5;
	long long	stack_setting = -1;	/* -1: geoacc's */
	const double start = now_ms();

	for (int i = 1; i < argc; i++)
	{
		bool		ok = true;

		if (strcmp(argv[i], "--call") == 0)
			call = true;
		else if (i + 1 < argc && strcmp(argv[i], "--pause") == 0)
			pause = atof(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--stack") == 0)
			stack_setting = strtoll(argv[++i], nullptr, 10);
		else if (i + 1 < argc && strcmp(argv[i], "--heap") == 0)
			ok = set_limit(cudaLimitMallocHeapSize, "heap", strtoull(argv[++i], nullptr, 10));
		else if (i + 1 < argc && strcmp(argv[i], "--fifo") == 0)
			ok = set_limit(cudaLimitPrintfFifoSize, "fifo", strtoull(argv[++i], nullptr, 10));
		else
		{
			fprintf(stderr, "usage: context_cost [--stack B] [--heap B] [--fifo B] [--call] [--pause S]\n");
			return 2;
		}
		if (!ok)
			return 1;
	}
	if (geoacc_gpu_init() != GEOACC_OK)
	{
		fprintf(stderr, "context_cost: %s\n", geoacc_status_message());
		return 1;
	}
	if (stack_setting >= 0 && !set_limit(cudaLimitStackSize, "stack", (size_t) stack_setting))
		return 1;

	const double init_ms = now_ms() - start;
	double		call_ms = 0;

	if (call)
	{
		/* a small TWED: one kernel family loaded, a little device memory taken and given back */
		const uint64_t offsets[] = {0, 3, 6};
		const double values[] = {1, 2, 3, 1, 3, 2};
		const double times[] = {0, 1, 2, 0, 1, 2};
		const GeoaccTwedSet set = {2, 1, offsets, values, times};
		const GeoaccTwedParams params = {1, 1, 1, 1, 0};
		double		distance;
		const double t = now_ms();

		if (geoacc_twed(GEOACC_DEVICE_GPU, &set, nullptr, &params, &distance) != GEOACC_OK)
		{
			fprintf(stderr, "context_cost: %s\n", geoacc_status_message());
			return 1;
		}
		call_ms = now_ms() - t;
	}

	size_t		stack = 0,
				heap = 0,
				fifo = 0;

	cudaDeviceGetLimit(&stack, cudaLimitStackSize);
	cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize);
	cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize);
	printf("init_ms=%.1f call_ms=%.1f stack=%zu heap=%zu fifo=%zu\nready\n", init_ms, call_ms, stack, heap, fifo);
	fflush(stdout);
	std::this_thread::sleep_for(std::chrono::duration<double>(pause));
	return 0;
}
