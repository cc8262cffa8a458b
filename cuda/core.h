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
