/*
 * core.h
 *
 * Internal helpers shared by every core source file, host and device:
 * errors as exceptions inside the core (turned into a GeoaccStatus at the C
 * ABI edge), interrupt polling, and GEOACC_HD for arithmetic that the CUDA
 * kernels and the CPU twins must share so that both round identically.
 */
#ifndef GEOACC_CORE_INTERNAL_H
#define GEOACC_CORE_INTERNAL_H

#include "geoacc_core.h"

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#if defined(__CUDACC__)
#define GEOACC_HD __host__ __device__ inline
#else
#define GEOACC_HD inline
#endif

namespace geoacc
{

/* A failure with its status; thrown inside the core only. */
struct Error : std::runtime_error
{
	GeoaccStatus status;
	Error(GeoaccStatus s, const std::string &message) : std::runtime_error(message), status(s) {}
};

/* Throw an Error with a printf-style message. */
[[noreturn]] void fail(GeoaccStatus status, const char *format, ...)
	__attribute__((format(printf, 2, 3)));

/* Throw Error(GEOACC_ERR_CANCELLED) if the interrupt callback says so. */
void check_interrupt();

/* Threads a CPU path may use (geoacc_cpu_set_threads(); 1, the default: the calling thread alone). */
int			cpu_threads();

/*
 * body(begin, end) over [0, n) in pieces of `piece` items, on up to
 * cpu_threads() threads: the calling thread takes pieces too and polls the
 * interrupt callback between them; the first exception stops the others
 * and is rethrown here.  A body must not call check_interrupt() or anything
 * outside the core, and must give the same bits whatever thread runs a piece.
 */
void		parallel_for(uint64_t n, uint64_t piece, const std::function<void(uint64_t, uint64_t)> &body);

/* Record the current exception's message; call only inside catch. */
GeoaccStatus status_from_exception();

/* Clear the last message (a call that succeeds leaves it empty). */
void clear_status();

/* Run f at the C ABI edge: no exception escapes. */
template <class F>
GeoaccStatus
guarded(F &&f)
{
	try
	{
		clear_status();
		f();
		return GEOACC_OK;
	}
	catch (...)
	{
		return status_from_exception();
	}
}

/* Initialise the GPU or throw NO_DEVICE / DEVICE_DISABLED. */
void require_gpu();

}								/* namespace geoacc */

/*
 * GEOACC_ON_GPU(call): run a GPU implementation, or in a build without
 * CUDA fail with GEOACC_ERR_NO_DEVICE.
 */
#ifdef GEOACC_WITH_CUDA
#define GEOACC_ON_GPU(call) (::geoacc::require_gpu(), (call))
#else
#define GEOACC_ON_GPU(call) \
	(throw ::geoacc::Error(GEOACC_ERR_NO_DEVICE, "this build of geoacc has no CUDA support"))
#endif

#endif							/* GEOACC_CORE_INTERNAL_H */
