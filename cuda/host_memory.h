/*
 * host_memory.h
 *
 * Host memory for the core's large arrays: fresh pages are a large share of
 * what a call costs where page faults are slow (virtual machines), so large
 * arrays ask for transparent huge pages.
 */
#ifndef GEOACC_HOST_MEMORY_H
#define GEOACC_HOST_MEMORY_H

#include "core.h"

#include <cstddef>
#include <vector>

namespace geoacc
{

/*
 * An allocator for the large host arrays: above 2 MB they are mapped with
 * transparent huge pages asked for, so that first touches fault once per
 * 2 MB rather than once per 4 kB.
 */
/*
 * Memory the core hands to its caller, who frees it with the core's free
 * functions: from the shared memory of geoacc_set_shared_memory() when an
 * allocator is set, else malloc.  Throws HOST_MEMORY when exhausted.
 */
void	   *output_allocate(size_t bytes);
void		output_free(void *p);

template <class T>
struct HugePageAllocator
{
	using value_type = T;

	HugePageAllocator() = default;
	template <class U>
	HugePageAllocator(const HugePageAllocator<U> &) {}

	T		   *allocate(size_t n);
	void		deallocate(T *p, size_t n);

	template <class U>
	bool		operator==(const HugePageAllocator<U> &) const { return true; }
	template <class U>
	bool		operator!=(const HugePageAllocator<U> &) const { return false; }
};

void	   *huge_page_allocate(size_t bytes);
void		huge_page_free(void *p, size_t bytes);

template <class T>
T *
HugePageAllocator<T>::allocate(size_t n)
{
	return static_cast<T *>(huge_page_allocate(n * sizeof(T)));
}

template <class T>
void
HugePageAllocator<T>::deallocate(T *p, size_t n)
{
	huge_page_free(p, n * sizeof(T));
}

template <class T>
using HostVector = std::vector<T, HugePageAllocator<T>>;

/*
 * An allocator for arrays the core hands to its caller inside a storage
 * object (trajectory parts, events): output_allocate()'s memory, which a
 * process running calls for others shares with them.
 */
template <class T>
struct OutputAllocator
{
	using value_type = T;

	OutputAllocator() = default;
	template <class U>
	OutputAllocator(const OutputAllocator<U> &) {}

	T		   *allocate(size_t n) { return static_cast<T *>(output_allocate(n * sizeof(T))); }
	void		deallocate(T *p, size_t) { output_free(p); }

	template <class U>
	bool		operator==(const OutputAllocator<U> &) const { return true; }
	template <class U>
	bool		operator!=(const OutputAllocator<U> &) const { return false; }
};

template <class T>
using OutputVector = std::vector<T, OutputAllocator<T>>;

}								/* namespace geoacc */

#endif							/* GEOACC_HOST_MEMORY_H */
