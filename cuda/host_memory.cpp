/*
 * host_memory.cpp
 *
 * The huge-page allocator of host_memory.h.
 */
#include "host_memory.h"

#include <cstdlib>

#include <sys/mman.h>

namespace geoacc
{

constexpr size_t HUGE_PAGE = 2u << 20;

void *
huge_page_allocate(size_t bytes)
{
	void	   *p;

	if (bytes < HUGE_PAGE)
		p = std::malloc(bytes);
	else
	{
		p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			p = nullptr;
		else
			madvise(p, bytes, MADV_HUGEPAGE);	/* a hint: refused, it changes nothing */
	}
	if (p == nullptr && bytes > 0)
		fail(GEOACC_ERR_HOST_MEMORY, "out of host memory: %zu bytes", bytes);
	return p;
}

void
huge_page_free(void *p, size_t bytes)
{
	if (p == nullptr)
		return;
	if (bytes < HUGE_PAGE)
		std::free(p);
	else
		munmap(p, bytes);
}

}								/* namespace geoacc */
