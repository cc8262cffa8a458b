/*
 * core_test.h
 *
 * A small test harness for the compute core, run without a server.  Each
 * TEST registers itself; CHECK records a failure and carries on; a GPU test
 * calls REQUIRE_GPU() first and is counted as skipped where there is no GPU.
 * The runner ends with "N passed, N failed, N skipped".
 */
#ifndef GEOACC_CORE_TEST_H
#define GEOACC_CORE_TEST_H

#include "geoacc_core.h"

#include <cstdint>
#include <cstdio>
#include <random>

namespace core_test
{

struct Skip
{
	const char *why;
};

using TestFn = void (*)();
void		register_test(const char *name, TestFn fn);
void		record_failure(const char *file, int line, const char *what);
bool		gpu_available();

struct Registrar
{
	Registrar(const char *name, TestFn fn) { register_test(name, fn); }
};

/* A generator seeded per run (printed by the runner) so failures can be replayed. */
std::mt19937_64 &rng();

}								/* namespace core_test */

#define TEST(name) \
	static void name(); \
	static core_test::Registrar name##_registrar(#name, name); \
	static void name()

#define CHECK(cond) \
	do { \
		if (!(cond)) \
			core_test::record_failure(__FILE__, __LINE__, #cond); \
	} while (0)

/* CHECK that a core call returned GEOACC_OK, printing its message if not. */
#define CHECK_OK(call) \
	do { \
		GeoaccStatus check_ok_status_ = (call); \
		if (check_ok_status_ != GEOACC_OK) \
		{ \
			fprintf(stderr, "    status %d: %s\n", (int) check_ok_status_, geoacc_status_message()); \
			core_test::record_failure(__FILE__, __LINE__, #call); \
		} \
	} while (0)

#define REQUIRE_GPU() \
	do { \
		if (!core_test::gpu_available()) \
			throw core_test::Skip{"no GPU"}; \
	} while (0)

#endif							/* GEOACC_CORE_TEST_H */
