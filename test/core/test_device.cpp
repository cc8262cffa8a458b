/*
 * test_device.cpp
 *
 * Device layer: a CPU-only view answers without errors; on a GPU the memory
 * cap, tracked allocations and release_all keep the books straight.
 */
#include "core_test.h"

TEST(device_count_never_fails)
{
	int			count = -1;

	CHECK_OK(geoacc_gpu_device_count(&count));
	CHECK(count >= 0);
	if (!geoacc_cuda_built())
		CHECK(count == 0);
}

TEST(gpu_request_without_gpu_names_the_reason)
{
	if (core_test::gpu_available())
		throw core_test::Skip{"a GPU is present"};

	uint32_t	in = 1,
				out = 0;
	uint64_t	total = 0;

	CHECK(geoacc_exclusive_scan_u32(GEOACC_DEVICE_GPU, &in, &out, 1, &total) == GEOACC_ERR_NO_DEVICE);
	CHECK(geoacc_status_message()[0] != '\0');
}

TEST(gpu_device_info)
{
	REQUIRE_GPU();
	GeoaccDeviceInfo info;

	CHECK_OK(geoacc_gpu_device_info(0, &info));
	CHECK(info.name[0] != '\0');
	CHECK(info.cc_major >= 7);
	CHECK(info.total_memory > 0 && info.free_memory <= info.total_memory);
	CHECK(info.runtime_version == geoacc_cuda_runtime_version());
}

TEST(gpu_memory_cap_and_release_all)
{
	REQUIRE_GPU();
	void	   *a = nullptr,
			   *b = nullptr;
	uint64_t	before = geoacc_gpu_memory_in_use();

	geoacc_gpu_set_memory_limit(before + (64u << 20));
	CHECK_OK(geoacc_gpu_alloc(48u << 20, &a));
	CHECK(a != nullptr);
	CHECK(geoacc_gpu_memory_in_use() == before + (48u << 20));
	CHECK(geoacc_gpu_alloc(32u << 20, &b) == GEOACC_ERR_DEVICE_MEMORY);
	CHECK(b == nullptr);
	geoacc_gpu_release_all();
	CHECK(geoacc_gpu_memory_in_use() == 0);
	geoacc_gpu_set_memory_limit(0);
}

namespace
{
int			interrupt_after;
int
count_down_interrupt()
{
	return --interrupt_after <= 0;
}
}

TEST(gpu_busy_wait_stops_on_interrupt)
{
	REQUIRE_GPU();
	interrupt_after = 5;
	geoacc_set_interrupt_callback(count_down_interrupt);
	CHECK(geoacc_gpu_busy_wait(60.0) == GEOACC_ERR_CANCELLED);
	geoacc_set_interrupt_callback(nullptr);
	CHECK(geoacc_gpu_memory_in_use() == 0);
	CHECK_OK(geoacc_gpu_busy_wait(0.05));
}

TEST(current_device_follows_the_choice)
{
	int			count = 0;

	CHECK_OK(geoacc_gpu_device_count(&count));
	if (!core_test::gpu_available())
	{
		/* no GPU: no device is in use, whatever was chosen */
		int			one = 1;

		geoacc_gpu_choose_device(&one, 1, 3);
		CHECK(geoacc_gpu_init() == GEOACC_ERR_NO_DEVICE);
		CHECK(geoacc_gpu_current_device() == -1);
		return;
	}
	/* the process uses a device once initialised; a later choice changes nothing */
	CHECK_OK(geoacc_gpu_init());
	int			current = geoacc_gpu_current_device();
	int			beyond = count;

	CHECK(current >= 0 && current < count);
	geoacc_gpu_choose_device(&beyond, 1, 0);
	CHECK_OK(geoacc_gpu_init());
	CHECK(geoacc_gpu_current_device() == current);
}

/* A reservation caps a call beyond what the process held when it began, whatever the cap setting says. */
TEST(gpu_reservation_caps_a_call)
{
	if (!core_test::gpu_available())
	{
		CHECK(geoacc_gpu_device_memory() == 0);
		return;
	}
	void	   *held = nullptr,
			   *a = nullptr,
			   *b = nullptr;

	CHECK_OK(geoacc_gpu_init());
	CHECK(geoacc_gpu_device_memory() > (uint64_t(1) << 30));
	geoacc_gpu_set_memory_limit(uint64_t(1) << 20);
	CHECK_OK(geoacc_gpu_alloc(512u << 10, &held));
	geoacc_gpu_set_reservation(32u << 20);
	CHECK(geoacc_gpu_memory_limit() == (512u << 10) + (32u << 20));
	CHECK(geoacc_gpu_memory_available() == 32u << 20);
	CHECK_OK(geoacc_gpu_alloc(24u << 20, &a));
	CHECK(geoacc_gpu_alloc(16u << 20, &b) == GEOACC_ERR_DEVICE_MEMORY);
	geoacc_gpu_free(a);
	/* ended: the setting caps again */
	geoacc_gpu_set_reservation(0);
	CHECK(geoacc_gpu_memory_limit() == uint64_t(1) << 20);
	CHECK(geoacc_gpu_alloc(16u << 20, &b) == GEOACC_ERR_DEVICE_MEMORY);
	geoacc_gpu_release_all();
	geoacc_gpu_set_memory_limit(0);
	CHECK(geoacc_gpu_memory_in_use() == 0);
}
