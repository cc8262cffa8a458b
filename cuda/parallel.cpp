/*
 * parallel.cpp
 *
 * Threads for the CPU paths that split into independent pieces: the calling
 * thread takes pieces too and is the only one that polls the interrupt
 * callback (it calls back into PostgreSQL); the others run the core alone,
 * with every signal blocked, so that PostgreSQL's handlers run in the
 * calling thread only.
 */
#include "core.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <exception>
#include <mutex>
#include <pthread.h>
#include <thread>
#include <vector>

namespace geoacc
{

namespace
{

int			threads_setting = 1;

}								/* namespace */

int
cpu_threads()
{
	return threads_setting;
}

void
parallel_for(uint64_t n, uint64_t piece, const std::function<void(uint64_t, uint64_t)> &body)
{
	const uint64_t pieces = piece == 0 ? 0 : (n + piece - 1) / piece;
	const uint64_t nthreads = std::min<uint64_t>((uint64_t) threads_setting, pieces);

	if (nthreads <= 1)
	{
		for (uint64_t begin = 0; piece > 0 && begin < n; begin += piece)
		{
			check_interrupt();
			body(begin, std::min(n, begin + piece));
		}
		return;
	}

	std::atomic<uint64_t> next{0};
	std::atomic<bool> stop{false};
	std::exception_ptr first_error;
	std::mutex	error_lock;
	auto		take = [&](bool polls) {
		try
		{
			for (uint64_t p; !stop.load() && (p = next.fetch_add(1)) < pieces;)
			{
				if (polls)
					check_interrupt();
				body(p * piece, std::min(n, (p + 1) * piece));
			}
		}
		catch (...)
		{
			std::lock_guard<std::mutex> hold(error_lock);

			if (!first_error)
				first_error = std::current_exception();
			stop.store(true);
		}
	};
	std::vector<std::thread> helpers;
	sigset_t	all,
				old;

	/* the helpers inherit a mask with every signal blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	try
	{
		for (uint64_t t = 1; t < nthreads; t++)
			helpers.emplace_back(take, false);
	}
	catch (...)
	{
		/* no thread to be had: the ones started and this one do the work */
	}
	pthread_sigmask(SIG_SETMASK, &old, nullptr);
	take(true);
	for (std::thread &h : helpers)
		h.join();
	if (first_error)
		std::rethrow_exception(first_error);
}

}								/* namespace geoacc */

extern "C" void
geoacc_cpu_set_threads(int n)
{
	geoacc::threads_setting = n < 1 ? 1 : n > GEOACC_MAX_CPU_THREADS ? GEOACC_MAX_CPU_THREADS : n;
}
