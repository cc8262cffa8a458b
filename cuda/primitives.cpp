/*
 * primitives.cpp
 *
 * CPU twins of the shared primitives and the C ABI entry points that pick
 * the GPU or CPU implementation.
 */
#include "primitives.h"

namespace geoacc
{

namespace
{

uint64_t
exclusive_scan_u32_cpu(const uint32_t *in, uint32_t *out, uint32_t n)
{
	uint64_t	total = 0;

	for (uint32_t i = 0; i < n; i++)
	{
		out[i] = (uint32_t) total;
		total += in[i];
	}
	return total;
}

uint32_t
select_flagged_cpu(const uint8_t *flags, uint32_t n, uint32_t *indices)
{
	uint32_t	count = 0;

	for (uint32_t i = 0; i < n; i++)
		if (flags[i])
			indices[count++] = i;
	return count;
}

void
segmented_argmax_cpu(const double *values, const uint32_t *offsets, uint32_t nsegments,
					 double *max_values, uint32_t *argmax)
{
	for (uint32_t s = 0; s < nsegments; s++)
	{
		ValueIndex	best = value_index_identity();

		for (uint32_t i = offsets[s]; i < offsets[s + 1]; i++)
			best = max_first_index(best, ValueIndex{values[i], i});
		max_values[s] = best.value;
		argmax[s] = best.index;
	}
}

void
check_offsets(const uint32_t *offsets, uint32_t nsegments)
{
	for (uint32_t s = 0; s < nsegments; s++)
		if (offsets[s + 1] < offsets[s])
			fail(GEOACC_ERR_INVALID_ARGUMENT, "segment offsets decrease at segment %u", s);
}

}								/* namespace */

}								/* namespace geoacc */

using namespace geoacc;

extern "C" GeoaccStatus
geoacc_exclusive_scan_u32(GeoaccDevice device, const uint32_t *in, uint32_t *out, uint32_t n,
						  uint64_t *total)
{
	return guarded([&] {
		*total = device == GEOACC_DEVICE_GPU
			? GEOACC_ON_GPU(exclusive_scan_u32_host_gpu(in, out, n))
			: exclusive_scan_u32_cpu(in, out, n);
	});
}

extern "C" GeoaccStatus
geoacc_select_flagged(GeoaccDevice device, const uint8_t *flags, uint32_t n, uint32_t *indices,
					  uint32_t *count)
{
	return guarded([&] {
		*count = device == GEOACC_DEVICE_GPU
			? GEOACC_ON_GPU(select_flagged_host_gpu(flags, n, indices))
			: select_flagged_cpu(flags, n, indices);
	});
}

extern "C" GeoaccStatus
geoacc_segmented_argmax(GeoaccDevice device, const double *values, const uint32_t *offsets,
						uint32_t nsegments, double *max_values, uint32_t *argmax)
{
	return guarded([&] {
		check_offsets(offsets, nsegments);
		if (device == GEOACC_DEVICE_GPU)
			GEOACC_ON_GPU(segmented_argmax_host_gpu(values, offsets, nsegments, max_values, argmax));
		else
			segmented_argmax_cpu(values, offsets, nsegments, max_values, argmax);
	});
}
