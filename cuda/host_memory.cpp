/*
 * host_memory.cpp
 *
 * The huge-page allocator of host_memory.h, and the memory the core shares
 * with other processes (geoacc_set_shared_memory).
 */
#include "host_memory.h"

#include <cstdint>
#include <cstdlib>

#include <sys/mman.h>

namespace geoacc
{

constexpr size_t HUGE_PAGE = 2u << 20;
constexpr size_t PAGE = 4096;

namespace
{
GeoaccSharedAlloc shared_alloc;
GeoaccSharedRelease shared_release;
const char *shared_base;
size_t		shared_size;

bool
is_shared(const void *p)
{
	const char *c = static_cast<const char *>(p);

	return shared_release != nullptr && c >= shared_base && c < shared_base + shared_size;
}
}								/* namespace */

void *
output_allocate(size_t bytes)
{
	void	   *p = shared_alloc ? shared_alloc(bytes) : std::malloc(bytes);

	if (p == nullptr && bytes > 0)
		fail(GEOACC_ERR_HOST_MEMORY, "out of host memory: %zu bytes", bytes);
	return p;
}

void
output_free(void *p)
{
	if (is_shared(p))
		shared_release(p);
	else
		std::free(p);
}

void *
huge_page_allocate(size_t bytes)
{
	void	   *p;

	if (bytes < HUGE_PAGE)
		p = std::malloc(bytes);
	else
	{
		/* mapped at a huge page's boundary, so that huge pages cover all of it: a larger map, its ends unmapped */
		const size_t mapped = (bytes + PAGE - 1) / PAGE * PAGE;
		char	   *raw = static_cast<char *>(mmap(nullptr, mapped + HUGE_PAGE, PROT_READ | PROT_WRITE,
												   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));

		if (raw == MAP_FAILED)
			p = nullptr;
		else
		{
			char	   *start = raw + (HUGE_PAGE - reinterpret_cast<uintptr_t>(raw) % HUGE_PAGE) % HUGE_PAGE;

			if (start > raw)
				munmap(raw, start - raw);
			if (raw + HUGE_PAGE > start)
				munmap(start + mapped, raw + HUGE_PAGE - start);
			madvise(start, mapped, MADV_HUGEPAGE);	/* a hint: refused, it changes nothing */
			p = start;
		}
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

extern "C" void
geoacc_set_shared_memory(GeoaccSharedAlloc alloc, GeoaccSharedRelease release, const void *base, size_t size)
{
	geoacc::shared_alloc = alloc;
	geoacc::shared_release = release;
	geoacc::shared_base = static_cast<const char *>(base);
	geoacc::shared_size = size;
}
