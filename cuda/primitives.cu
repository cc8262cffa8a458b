/*
 * primitives.cu
 *
 * GPU halves of the shared primitives (see primitives.h).
 */
#include "primitives.cuh"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <vector>

namespace geoacc
{

namespace
{

/* Widen to 64 bits so the total of a 32-bit scan cannot wrap. */
struct WidenU32
{
	__host__ __device__ uint64_t operator()(uint32_t x) const { return x; }
};

struct ToValueIndex
{
	const double *values;
	__host__ __device__ ValueIndex operator()(uint32_t i) const { return ValueIndex{values[i], i}; }
};

struct MaxFirstIndex
{
	__host__ __device__ ValueIndex operator()(ValueIndex a, ValueIndex b) const { return max_first_index(a, b); }
};

}								/* namespace */

uint64_t
exclusive_scan_u32(const uint32_t *d_in, uint32_t *d_out, uint32_t n)
{
	if (n == 0)
		return 0;

	DeviceBuffer<uint64_t> d_last(1);
	size_t		temp_bytes = 0;

	GEOACC_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, d_in, d_out, n, stream()));
	DeviceBuffer<unsigned char> d_temp(temp_bytes);
	GEOACC_CUDA_TRY(cub::DeviceScan::ExclusiveSum(d_temp.data(), temp_bytes, d_in, d_out, n, stream()));

	/* the total in 64 bits, so that callers can detect a wrapped prefix */
	size_t		sum_bytes = 0;
	auto		wide = thrust::make_transform_iterator(d_in, WidenU32());

	GEOACC_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, sum_bytes, wide, d_last.data(), n, stream()));
	DeviceBuffer<unsigned char> d_sum_temp(sum_bytes);
	GEOACC_CUDA_TRY(cub::DeviceReduce::Sum(d_sum_temp.data(), sum_bytes, wide, d_last.data(), n, stream()));

	uint64_t	total = 0;

	d_last.download(&total, 1);
	return total;
}

uint32_t
select_flagged(const uint8_t *d_flags, uint32_t n, uint32_t *d_indices)
{
	if (n == 0)
		return 0;

	DeviceBuffer<uint32_t> d_count(1);
	const size_t temp_bytes = select_flagged_temp_bytes(n);
	DeviceBuffer<unsigned char> d_temp(temp_bytes);

	select_flagged_async(d_temp.data(), temp_bytes, d_flags, n, d_indices, d_count.data());

	uint32_t	count = 0;

	d_count.download(&count, 1);
	return count;
}

size_t
select_flagged_temp_bytes(uint32_t n)
{
	size_t		temp_bytes = 0;

	GEOACC_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, temp_bytes, thrust::counting_iterator<uint32_t>(0),
											   (const uint8_t *) nullptr, (uint32_t *) nullptr,
											   (uint32_t *) nullptr, n, stream()));
	return temp_bytes;
}

void
select_flagged_async(void *d_temp, size_t temp_bytes, const uint8_t *d_flags, uint32_t n, uint32_t *d_indices,
					 uint32_t *d_count)
{
	if (n == 0)
	{
		GEOACC_CUDA_TRY(cudaMemsetAsync(d_count, 0, sizeof(uint32_t), stream()));
		return;
	}
	GEOACC_CUDA_TRY(cub::DeviceSelect::Flagged(d_temp, temp_bytes, thrust::counting_iterator<uint32_t>(0), d_flags,
											   d_indices, d_count, n, stream()));
}

void
segmented_argmax(const double *d_values, const uint32_t *d_offsets, uint32_t nsegments,
				 ValueIndex *d_result)
{
	if (nsegments == 0)
		return;

	auto		items = thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0),
													   ToValueIndex{d_values});
	size_t		temp_bytes = 0;

	GEOACC_CUDA_TRY(cub::DeviceSegmentedReduce::Reduce(nullptr, temp_bytes, items, d_result, nsegments,
													   d_offsets, d_offsets + 1, MaxFirstIndex(),
													   value_index_identity(), stream()));
	DeviceBuffer<unsigned char> d_temp(temp_bytes);
	GEOACC_CUDA_TRY(cub::DeviceSegmentedReduce::Reduce(d_temp.data(), temp_bytes, items, d_result, nsegments,
													   d_offsets, d_offsets + 1, MaxFirstIndex(),
													   value_index_identity(), stream()));
}

/* ---------------------------------------------- host-array entry points */

uint64_t
exclusive_scan_u32_host_gpu(const uint32_t *in, uint32_t *out, uint32_t n)
{
	DeviceBuffer<uint32_t> d_in(n), d_out(n);

	d_in.upload(in, n);
	uint64_t	total = exclusive_scan_u32(d_in.data(), d_out.data(), n);

	d_out.download(out, n);
	return total;
}

uint32_t
select_flagged_host_gpu(const uint8_t *flags, uint32_t n, uint32_t *indices)
{
	DeviceBuffer<uint8_t> d_flags(n);
	DeviceBuffer<uint32_t> d_indices(n);

	d_flags.upload(flags, n);
	uint32_t	count = select_flagged(d_flags.data(), n, d_indices.data());

	d_indices.download(indices, count);
	return count;
}

void
segmented_argmax_host_gpu(const double *values, const uint32_t *offsets, uint32_t nsegments,
						  double *max_values, uint32_t *argmax)
{
	if (nsegments == 0)
		return;

	uint32_t	n = offsets[nsegments];
	DeviceBuffer<double> d_values(n);
	DeviceBuffer<uint32_t> d_offsets(nsegments + 1);
	DeviceBuffer<ValueIndex> d_result(nsegments);
	std::vector<ValueIndex> result(nsegments);

	d_values.upload(values, n);
	d_offsets.upload(offsets, nsegments + 1);
	segmented_argmax(d_values.data(), d_offsets.data(), nsegments, d_result.data());
	d_result.download(result.data(), nsegments);
	for (uint32_t s = 0; s < nsegments; s++)
	{
		max_values[s] = result[s].value;
		argmax[s] = result[s].index;
	}
}

}								/* namespace geoacc */
