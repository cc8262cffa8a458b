/*
 * test_main.cpp
 *
 * Runner for the core tests: runs every registered test (or those whose
 * name contains one of the comma-separated words of argv[1]) and prints
 * "N passed, N failed, N skipped".
 * GEOACC_TEST_SEED fixes the random seed; GEOACC_TEST_NO_GPU=1 skips GPU
 * cases even where a GPU is present.
 */
#include "core_test.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace core_test
{

namespace
{

struct Entry
{
	const char *name;
	TestFn		fn;
};

std::vector<Entry> &
registry()
{
	static std::vector<Entry> tests;

	return tests;
}

int			failures_in_test;
std::mt19937_64 generator;

}								/* namespace */

void
register_test(const char *name, TestFn fn)
{
	registry().push_back({name, fn});
}

void
record_failure(const char *file, int line, const char *what)
{
	if (failures_in_test < 10)
		fprintf(stderr, "    %s:%d: CHECK(%s) failed\n", file, line, what);
	failures_in_test++;
}

bool
gpu_available()
{
	static int	available = -1;

	if (available < 0)
	{
		const char *off = getenv("GEOACC_TEST_NO_GPU");

		available = !(off && strcmp(off, "1") == 0) && geoacc_gpu_init() == GEOACC_OK;
	}
	return available;
}

std::mt19937_64 &
rng()
{
	return generator;
}

}								/* namespace core_test */

/* Whether name contains one of the comma-separated words of filter. */
static bool
matches(const char *name, const char *filter)
{
	std::string words(filter);
	size_t		start = 0;

	for (;;)
	{
		const size_t comma = words.find(',', start);
		const std::string word = words.substr(start, comma == std::string::npos ? std::string::npos : comma - start);

		if (!word.empty() && strstr(name, word.c_str()))
			return true;
		if (comma == std::string::npos)
			return false;
		start = comma + 1;
	}
}

int
main(int argc, char **argv)
{
	using namespace core_test;

	const char *filter = argc > 1 ? argv[1] : nullptr;
	const char *seed_env = getenv("GEOACC_TEST_SEED");
	uint64_t	seed = seed_env ? strtoull(seed_env, nullptr, 10)
		: (uint64_t) std::chrono::steady_clock::now().time_since_epoch().count();
	int			passed = 0,
				failed = 0,
				skipped = 0;

	setvbuf(stdout, nullptr, _IOLBF, 0);	/* a killed run still shows how far it got */
	printf("geoacc core tests: CUDA %s, GPU %s, seed %llu\n",
		   geoacc_cuda_built() ? "built" : "not built",
		   gpu_available() ? "present" : "absent", (unsigned long long) seed);
	for (const Entry &t : registry())
	{
		if (filter && !matches(t.name, filter))
			continue;
		generator.seed(seed ^ std::hash<std::string>()(t.name));
		failures_in_test = 0;
		auto		start = std::chrono::steady_clock::now();

		try
		{
			t.fn();
		}
		catch (const Skip &s)
		{
			printf("skip %s (%s)\n", t.name, s.why);
			skipped++;
			continue;
		}
		catch (const std::exception &e)
		{
			fprintf(stderr, "    exception: %s\n", e.what());
			failures_in_test++;
		}
		double		ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

		if (failures_in_test)
		{
			printf("FAIL %s (%d checks failed)\n", t.name, failures_in_test);
			failed++;
		}
		else
		{
			printf("ok   %s (%.0f ms)\n", t.name, ms);
			passed++;
		}
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
