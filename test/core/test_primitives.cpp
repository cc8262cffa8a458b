/*
 * test_primitives.cpp
 *
 * Shared primitives: CPU twins against plain loops written here, then the
 * GPU against the CPU twin on fresh random inputs of many sizes.
 */
#include "core_test.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace
{

const uint32_t sizes[] = {1, 2, 31, 32, 33, 1000, 65537, 1000003};

std::vector<uint32_t>
random_u32(uint32_t n, uint32_t max)
{
	std::uniform_int_distribution<uint32_t> dist(0, max);
	std::vector<uint32_t> v(n);

	for (auto &x : v)
		x = dist(core_test::rng());
	return v;
}

/* Random segment boundaries over n items, empty segments included. */
std::vector<uint32_t>
random_offsets(uint32_t n, uint32_t nsegments)
{
	std::vector<uint32_t> cuts = random_u32(nsegments - 1, n);

	cuts.push_back(0);
	cuts.push_back(n);
	std::sort(cuts.begin(), cuts.end());
	return cuts;
}

/* Distances-like values with many exact ties. */
std::vector<double>
random_values(uint32_t n)
{
	std::uniform_int_distribution<int> coarse(0, 50);
	std::uniform_real_distribution<double> fine(0.0, 1e6);
	std::vector<double> v(n);

	for (auto &x : v)
		x = (core_test::rng()() & 1) ? coarse(core_test::rng()) : fine(core_test::rng());
	return v;
}

}								/* namespace */

TEST(scan_cpu_matches_definition)
{
	std::vector<uint32_t> in = random_u32(1000, 1000), out(1000);
	uint64_t	total = 0,
				running = 0;

	CHECK_OK(geoacc_exclusive_scan_u32(GEOACC_DEVICE_CPU, in.data(), out.data(), 1000, &total));
	for (uint32_t i = 0; i < 1000; i++)
	{
		CHECK(out[i] == running);
		running += in[i];
	}
	CHECK(total == running);
	CHECK_OK(geoacc_exclusive_scan_u32(GEOACC_DEVICE_CPU, nullptr, nullptr, 0, &total));
	CHECK(total == 0);
}

TEST(select_cpu_matches_definition)
{
	uint8_t		flags[] = {0, 1, 1, 0, 0, 1, 0};
	uint32_t	idx[7],
				count = 99;

	CHECK_OK(geoacc_select_flagged(GEOACC_DEVICE_CPU, flags, 7, idx, &count));
	CHECK(count == 3);
	CHECK(idx[0] == 1 && idx[1] == 2 && idx[2] == 5);
}

TEST(argmax_cpu_first_of_ties_and_empty_segments)
{
	double		values[] = {3, 7, 7, 1, 5, 5};
	uint32_t	offsets[] = {0, 3, 3, 6};
	double		maxv[3];
	uint32_t	arg[3];

	CHECK_OK(geoacc_segmented_argmax(GEOACC_DEVICE_CPU, values, offsets, 3, maxv, arg));
	CHECK(maxv[0] == 7 && arg[0] == 1);
	CHECK(std::isinf(maxv[1]) && maxv[1] < 0 && arg[1] == UINT32_MAX);
	CHECK(maxv[2] == 5 && arg[2] == 4);
}

TEST(argmax_rejects_decreasing_offsets)
{
	double		values[] = {1, 2};
	uint32_t	offsets[] = {0, 2, 1};
	double		maxv[2];
	uint32_t	arg[2];

	CHECK(geoacc_segmented_argmax(GEOACC_DEVICE_CPU, values, offsets, 2, maxv, arg) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_status_message()[0] != '\0');
}

TEST(gpu_scan_matches_cpu)
{
	REQUIRE_GPU();
	for (uint32_t n : sizes)
	{
		std::vector<uint32_t> in = random_u32(n, 4000), cpu(n), gpu(n, 0xdeadbeef);
		uint64_t	total_cpu = 0,
					total_gpu = 1;

		CHECK_OK(geoacc_exclusive_scan_u32(GEOACC_DEVICE_CPU, in.data(), cpu.data(), n, &total_cpu));
		CHECK_OK(geoacc_exclusive_scan_u32(GEOACC_DEVICE_GPU, in.data(), gpu.data(), n, &total_gpu));
		CHECK(cpu == gpu);
		CHECK(total_cpu == total_gpu);
	}
}

TEST(gpu_scan_total_beyond_32_bits)
{
	REQUIRE_GPU();
	std::vector<uint32_t> in(4, 0xF0000000u), out(4);
	uint64_t	total = 0;

	CHECK_OK(geoacc_exclusive_scan_u32(GEOACC_DEVICE_GPU, in.data(), out.data(), 4, &total));
	CHECK(total == 4ull * 0xF0000000u);
}

TEST(gpu_select_matches_cpu)
{
	REQUIRE_GPU();
	for (uint32_t n : sizes)
	{
		std::vector<uint8_t> flags(n);

		for (auto &f : flags)
			f = (core_test::rng()() % 3 == 0) ? (uint8_t) (1 + core_test::rng()() % 255) : 0;
		std::vector<uint32_t> cpu(n), gpu(n, 0xdeadbeef);
		uint32_t	count_cpu = 0,
					count_gpu = 0;

		CHECK_OK(geoacc_select_flagged(GEOACC_DEVICE_CPU, flags.data(), n, cpu.data(), &count_cpu));
		CHECK_OK(geoacc_select_flagged(GEOACC_DEVICE_GPU, flags.data(), n, gpu.data(), &count_gpu));
		CHECK(count_cpu == count_gpu);
		cpu.resize(count_cpu);
		gpu.resize(count_gpu);
		CHECK(cpu == gpu);
	}
}

TEST(gpu_argmax_matches_cpu)
{
	REQUIRE_GPU();
	for (uint32_t n : sizes)
		for (uint32_t nseg : {1u, 7u, n / 3 + 1, n + 5})
		{
			std::vector<double> values = random_values(n);
			std::vector<uint32_t> offsets = random_offsets(n, nseg);
			std::vector<double> max_cpu(nseg), max_gpu(nseg, NAN);
			std::vector<uint32_t> arg_cpu(nseg), arg_gpu(nseg, 0xdeadbeef);

			CHECK_OK(geoacc_segmented_argmax(GEOACC_DEVICE_CPU, values.data(), offsets.data(), nseg,
											 max_cpu.data(), arg_cpu.data()));
			CHECK_OK(geoacc_segmented_argmax(GEOACC_DEVICE_GPU, values.data(), offsets.data(), nseg,
											 max_gpu.data(), arg_gpu.data()));
			CHECK(arg_cpu == arg_gpu);
			for (uint32_t s = 0; s < nseg; s++)
				CHECK(max_cpu[s] == max_gpu[s]);
		}
}
