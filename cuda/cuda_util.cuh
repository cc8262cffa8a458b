/*
 * cuda_util.cuh
 *
 * CUDA-side helpers: one macro to check CUDA calls (with file:line), the
 * tracked device allocator behind the memory cap, and DeviceBuffer, the RAII
 * owner every kernel's memory lives in, so that no exit path leaks.
 */
#ifndef GEOACC_CUDA_UTIL_CUH
#define GEOACC_CUDA_UTIL_CUH

#include "core.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace geoacc
{

/* Throw for a failed CUDA call; sticky errors also disable the GPU. */
[[noreturn]] void cuda_fail(cudaError_t err, const char *what, const char *file, int line);

#define GEOACC_CUDA_TRY(call) \
	do { \
		cudaError_t geoacc_err_ = (call); \
		if (geoacc_err_ != cudaSuccess) \
			::geoacc::cuda_fail(geoacc_err_, #call, __FILE__, __LINE__); \
	} while (0)

/* Check the launch just made (configuration errors, sticky faults). */
#define GEOACC_CUDA_CHECK_LAUNCH() GEOACC_CUDA_TRY(cudaPeekAtLastError())

/* The stream all geoacc work runs on (created by require_gpu). */
cudaStream_t stream();

/* Wait for the stream. */
void		stream_sync();

/* Wait for the stream, then poll the interrupt callback. */
void sync_and_check_interrupt();

/* Tracked allocation under the memory cap; throws GEOACC_ERR_DEVICE_MEMORY. */
void	   *device_malloc(size_t bytes);
void		device_free(void *ptr);

/* Device allocations and stream waits (stream_sync) so far in this process, for a call's statistics. */
struct DeviceCounters
{
	uint64_t	allocations;
	uint64_t	syncs;
};
DeviceCounters device_counters();

/* Owner of n elements of device memory. */
template <class T>
class DeviceBuffer
{
public:
	DeviceBuffer() = default;
	explicit DeviceBuffer(size_t n) { resize(n); }
	~DeviceBuffer() { device_free(ptr_); }
	DeviceBuffer(const DeviceBuffer &) = delete;
	DeviceBuffer &operator=(const DeviceBuffer &) = delete;
	DeviceBuffer(DeviceBuffer &&other) noexcept
		: ptr_(std::exchange(other.ptr_, nullptr)), size_(std::exchange(other.size_, 0)) {}

	/* Drop the contents and hold n elements. */
	void resize(size_t n)
	{
		device_free(ptr_);
		ptr_ = nullptr;
		size_ = 0;
		if (n > 0)
			ptr_ = static_cast<T *>(device_malloc(n * sizeof(T)));
		size_ = n;
	}

	T		   *data() { return ptr_; }
	const T    *data() const { return ptr_; }
	size_t		size() const { return size_; }

	void upload(const T *host, size_t n)
	{
		if (n)
			GEOACC_CUDA_TRY(cudaMemcpyAsync(ptr_, host, n * sizeof(T), cudaMemcpyHostToDevice, stream()));
	}
	void download(T *host, size_t n) const
	{
		if (n)
		{
			GEOACC_CUDA_TRY(cudaMemcpyAsync(host, ptr_, n * sizeof(T), cudaMemcpyDeviceToHost, stream()));
			stream_sync();
		}
	}

private:
	T		   *ptr_ = nullptr;
	size_t		size_ = 0;
};

/* Blocks needed to cover n items with `threads` per block (at least 1). */
inline unsigned int
blocks_for(size_t n, unsigned int threads)
{
	size_t		b = (n + threads - 1) / threads;

	return b == 0 ? 1u : (unsigned int) b;
}

}								/* namespace geoacc */

#endif							/* GEOACC_CUDA_UTIL_CUH */
