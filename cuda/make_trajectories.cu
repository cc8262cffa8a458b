/*
 * make_trajectories.cu
 *
 * Fixes sorted, deduplicated and split into parts on the GPU.  One piece:
 * upload the fixes; radix-sort their indices by time, then, stably, by
 * object (CUB, only over the key bits that differ); pick one fix of each
 * run of equal (object, time) by a reduction by key; gather the kept fixes
 * in order; select the fixes that start a part (a new object, a gap, a jump);
 * download.  Fixes that do not fit the device memory cap as one piece are
 * sorted in runs that fit, the runs merged on the host, and the merged
 * sequence cut into pieces of whole objects; an object that does not fit
 * alone goes to the CPU twin.  The Douglas-Peucker of the parts is
 * simplify.cu's, run by the caller.
 */
#include "cuda_util.cuh"
#include "make_trajectories.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/discard_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <queue>

namespace geoacc
{

namespace
{

constexpr unsigned THREADS = 256;

/* Temporary storage of CUB calls, grown as they ask. */
class Scratch
{
public:
	void	   *get(size_t bytes)
	{
		if (bytes > buffer_.size())
			buffer_.resize(bytes);
		return buffer_.data();
	}

private:
	DeviceBuffer<unsigned char> buffer_;
};

/* ------------------------------------------------------------ kernels */

__global__ void
time_keys_kernel(const double *t, uint32_t n, uint64_t *keys, uint32_t *indices)
{
	uint32_t	i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	keys[i] = double_key(fix_time(t[i]));
	indices[i] = i;
}

__global__ void
object_keys_kernel(const int64_t *ids, const uint32_t *indices, uint32_t n, uint64_t *keys)
{
	uint32_t	i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		keys[i] = object_key(ids[indices[i]]);
}

/* The (object, time) of the fix at each sorted position: the key of the reduction by key. */
struct FixTime
{
	uint64_t	object;
	uint64_t	time;

	__host__ __device__ bool operator==(const FixTime &other) const
	{
		return object == other.object && time == other.time;
	}
};

/*
 * CUB's reduce-by-key also applies these to the padding of its last tile
 * (positions >= n): they must not read there.
 */
struct SortedFixTime
{
	const int64_t *ids;
	const double *t;
	const uint32_t *order;
	uint32_t	n;

	__host__ __device__ FixTime operator()(uint32_t k) const
	{
		if (k >= n)
			return FixTime{UINT64_MAX, UINT64_MAX};

		uint32_t	i = order[k];

		return FixTime{object_key(ids[i]), double_key(fix_time(t[i]))};
	}
};

/* Of two sorted positions of one (object, time), the fix kept: kept_before, then the first position. */
struct KeptFix
{
	const double *x;
	const double *y;
	const uint32_t *order;
	uint32_t	n;

	__host__ __device__ uint32_t operator()(uint32_t a, uint32_t b) const
	{
		if (a >= n || b >= n)
			return a < b ? a : b;

		uint32_t	i = order[a],
					j = order[b];

		if (kept_before(x[j], y[j], x[i], y[i]))
			return b;
		if (kept_before(x[i], y[i], x[j], y[j]))
			return a;
		return a < b ? a : b;
	}
};

__global__ void
gather_kept_kernel(const int64_t *ids, const double *t, const double *x, const double *y, const uint32_t *order,
				   const uint32_t *chosen, uint32_t m, int64_t *kept_ids, double *kept_t, double *kept_x,
				   double *kept_y)
{
	uint32_t	k = blockIdx.x * blockDim.x + threadIdx.x;

	if (k >= m)
		return;

	uint32_t	i = order[chosen[k]];

	kept_ids[k] = ids[i];
	kept_t[k] = fix_time(t[i]);
	kept_x[k] = x[i];
	kept_y[k] = y[i];
}

/* Whether kept fix k starts a part. */
struct StartsPart
{
	const int64_t *ids;
	const double *t;
	const double *x;
	const double *y;
	double		max_gap;
	double		max_speed;
	double		unit;

	__host__ __device__ bool operator()(uint32_t k) const
	{
		return k == 0 || ids[k] != ids[k - 1] ||
			starts_part(t[k - 1], x[k - 1], y[k - 1], t[k], x[k], y[k], max_gap, max_speed, unit);
	}
};

__global__ void
part_objects_kernel(const int64_t *kept_ids, const uint32_t *starts, uint32_t nparts, int64_t *objects)
{
	uint32_t	j = blockIdx.x * blockDim.x + threadIdx.x;

	if (j < nparts)
		objects[j] = kept_ids[starts[j]];
}

/* --------------------------------------------------------------- sort */

/* Bits [0, end) in which the keys differ: those above are the same in all of them. */
uint32_t
key_bits(Scratch &scratch, const uint64_t *d_keys, uint32_t n)
{
	DeviceBuffer<uint64_t> d_range(2);
	uint64_t	range[2];
	size_t		bytes = 0;

	GEOACC_CUDA_TRY(cub::DeviceReduce::Min(nullptr, bytes, d_keys, d_range.data(), n, stream()));
	GEOACC_CUDA_TRY(cub::DeviceReduce::Min(scratch.get(bytes), bytes, d_keys, d_range.data(), n, stream()));
	bytes = 0;
	GEOACC_CUDA_TRY(cub::DeviceReduce::Max(nullptr, bytes, d_keys, d_range.data() + 1, n, stream()));
	GEOACC_CUDA_TRY(cub::DeviceReduce::Max(scratch.get(bytes), bytes, d_keys, d_range.data() + 1, n, stream()));
	d_range.download(range, 2);
	return range[0] == range[1] ? 0 : 64 - (uint32_t) __builtin_clzll(range[0] ^ range[1]);
}

/* Stable radix sort of (keys, indices) on the bits that differ. */
void
sort_pairs(Scratch &scratch, cub::DoubleBuffer<uint64_t> &keys, cub::DoubleBuffer<uint32_t> &indices, uint32_t n)
{
	uint32_t	end_bit = key_bits(scratch, keys.Current(), n);
	size_t		bytes = 0;

	if (end_bit == 0)
		return;
	GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, indices, n, 0, (int) end_bit, stream()));
	GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch.get(bytes), bytes, keys, indices, n, 0, (int) end_bit,
													stream()));
}

/*
 * The order of the fixes already on the device by (object, time): sorted by
 * time, then stably by object.  Returns the buffer holding it.
 */
uint32_t *
sort_by_object_and_time(Scratch &scratch, const int64_t *d_ids, const double *d_t, uint32_t n,
						DeviceBuffer<uint64_t> &d_keys, DeviceBuffer<uint64_t> &d_keys_alt,
						DeviceBuffer<uint32_t> &d_order, DeviceBuffer<uint32_t> &d_order_alt)
{
	cub::DoubleBuffer<uint64_t> keys(d_keys.data(), d_keys_alt.data());
	cub::DoubleBuffer<uint32_t> order(d_order.data(), d_order_alt.data());

	time_keys_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(d_t, n, keys.Current(), order.Current());
	GEOACC_CUDA_CHECK_LAUNCH();
	sort_pairs(scratch, keys, order, n);
	object_keys_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(d_ids, order.Current(), n,
																			 keys.Current());
	GEOACC_CUDA_CHECK_LAUNCH();
	sort_pairs(scratch, keys, order, n);
	return order.Current();
}

/* -------------------------------------------------------------- pieces */

/* Sort, deduplicate and split fixes that fit the device as one piece; append to out. */
void
prepare_piece(const GeoaccFixes &f, const GeoaccTrajectoryRules &rules, PreparedFixes &out,
			  GeoaccMakeTrajectoriesTiming &timing)
{
	const uint32_t n = f.count;
	auto		start = std::chrono::steady_clock::now();
	DeviceBuffer<int64_t> d_ids(n);
	DeviceBuffer<double> d_t(n), d_x(n), d_y(n);

	d_ids.upload(f.object_ids, n);
	d_t.upload(f.t, n);
	d_x.upload(f.x, n);
	d_y.upload(f.y, n);
	GEOACC_CUDA_TRY(cudaStreamSynchronize(stream()));
	timing.transfer_ms += ms_since(start);
	start = std::chrono::steady_clock::now();

	Scratch		scratch;
	DeviceBuffer<uint64_t> d_keys(n), d_keys_alt(n);
	DeviceBuffer<uint32_t> d_order(n), d_order_alt(n);
	uint32_t   *order = sort_by_object_and_time(scratch, d_ids.data(), d_t.data(), n, d_keys, d_keys_alt, d_order,
												d_order_alt);

	sync_and_check_interrupt();
	d_keys.resize(0);
	d_keys_alt.resize(0);

	/* one fix per (object, time): the sorted position of the kept one */
	DeviceBuffer<uint32_t> d_chosen(n), d_count(2);
	auto		fix_times = thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0),
															SortedFixTime{d_ids.data(), d_t.data(), order, n});
	KeptFix		kept_fix{d_x.data(), d_y.data(), order, n};
	size_t		bytes = 0;
	uint32_t	m,
				nparts;

	GEOACC_CUDA_TRY(cub::DeviceReduce::ReduceByKey(nullptr, bytes, fix_times, thrust::make_discard_iterator(),
													thrust::counting_iterator<uint32_t>(0), d_chosen.data(),
													d_count.data(), kept_fix, n, stream()));
	GEOACC_CUDA_TRY(cub::DeviceReduce::ReduceByKey(scratch.get(bytes), bytes, fix_times,
													thrust::make_discard_iterator(),
													thrust::counting_iterator<uint32_t>(0), d_chosen.data(),
													d_count.data(), kept_fix, n, stream()));
	d_count.download(&m, 1);

	DeviceBuffer<int64_t> d_kept_ids(m);
	DeviceBuffer<double> d_kept_t(m), d_kept_x(m), d_kept_y(m);

	gather_kept_kernel<<<blocks_for(m, THREADS), THREADS, 0, stream()>>>(
		d_ids.data(), d_t.data(), d_x.data(), d_y.data(), order, d_chosen.data(), m, d_kept_ids.data(),
		d_kept_t.data(), d_kept_x.data(), d_kept_y.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	d_order.resize(0);
	d_order_alt.resize(0);
	d_chosen.resize(0);

	/* the kept fixes that start a part, and the object of each part */
	DeviceBuffer<uint32_t> d_starts(m);
	StartsPart	starts_part_op{d_kept_ids.data(), d_kept_t.data(), d_kept_x.data(), d_kept_y.data(),
		rules.max_gap, rules.max_speed, time_unit(rules)};

	bytes = 0;
	GEOACC_CUDA_TRY(cub::DeviceSelect::If(nullptr, bytes, thrust::counting_iterator<uint32_t>(0), d_starts.data(),
										  d_count.data(), (int64_t) m, starts_part_op, stream()));
	GEOACC_CUDA_TRY(cub::DeviceSelect::If(scratch.get(bytes), bytes, thrust::counting_iterator<uint32_t>(0),
										  d_starts.data(), d_count.data(), (int64_t) m, starts_part_op, stream()));
	d_count.download(&nparts, 1);

	DeviceBuffer<int64_t> d_part_objects(nparts);

	part_objects_kernel<<<blocks_for(nparts, THREADS), THREADS, 0, stream()>>>(
		d_kept_ids.data(), d_starts.data(), nparts, d_part_objects.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	sync_and_check_interrupt();
	timing.compute_ms += ms_since(start);
	start = std::chrono::steady_clock::now();

	const size_t base = out.t.size();
	const size_t first_part = out.part_starts.size();

	out.t.resize(base + m);
	out.x.resize(base + m);
	out.y.resize(base + m);
	out.part_starts.resize(first_part + nparts);
	out.part_objects.resize(first_part + nparts);
	d_kept_t.download(out.t.data() + base, m);
	d_kept_x.download(out.x.data() + base, m);
	d_kept_y.download(out.y.data() + base, m);
	d_starts.download(out.part_starts.data() + first_part, nparts);
	d_part_objects.download(out.part_objects.data() + first_part, nparts);
	for (size_t j = first_part; j < first_part + nparts; j++)
		out.part_starts[j] += (uint32_t) base;
	out.duplicates += n - m;
	timing.transfer_ms += ms_since(start);
	timing.pieces++;
}

/* The order by (object, time) of fixes [first, first + n), in global indices, from one sorted run. */
void
sort_run(const GeoaccFixes &f, uint32_t first, uint32_t n, uint32_t *order, GeoaccMakeTrajectoriesTiming &timing)
{
	auto		start = std::chrono::steady_clock::now();
	DeviceBuffer<int64_t> d_ids(n);
	DeviceBuffer<double> d_t(n);

	d_ids.upload(f.object_ids + first, n);
	d_t.upload(f.t + first, n);
	GEOACC_CUDA_TRY(cudaStreamSynchronize(stream()));
	timing.transfer_ms += ms_since(start);
	start = std::chrono::steady_clock::now();

	Scratch		scratch;
	DeviceBuffer<uint64_t> d_keys(n), d_keys_alt(n);
	DeviceBuffer<uint32_t> d_order(n), d_order_alt(n);
	uint32_t   *d_sorted = sort_by_object_and_time(scratch, d_ids.data(), d_t.data(), n, d_keys, d_keys_alt,
												   d_order, d_order_alt);

	sync_and_check_interrupt();
	timing.compute_ms += ms_since(start);
	start = std::chrono::steady_clock::now();
	GEOACC_CUDA_TRY(cudaMemcpyAsync(order, d_sorted, (size_t) n * sizeof(uint32_t), cudaMemcpyDeviceToHost,
									stream()));
	GEOACC_CUDA_TRY(cudaStreamSynchronize(stream()));
	for (uint32_t k = 0; k < n; k++)
		order[k] += first;
	timing.transfer_ms += ms_since(start);
	timing.runs++;
}

/* Merge the sorted runs of `run` fixes each (the last may be shorter) into one order. */
HostVector<uint32_t>
merge_runs(const GeoaccFixes &f, const HostVector<uint32_t> &runs, uint32_t run)
{
	struct Head
	{
		uint64_t	object;
		uint64_t	time;
		uint32_t	position;		/* in runs */
		uint32_t	end;
	};
	auto		later = [](const Head &a, const Head &b) {
		if (a.object != b.object)
			return a.object > b.object;
		if (a.time != b.time)
			return a.time > b.time;
		return a.position > b.position;
	};
	auto		head = [&f, &runs](uint32_t position, uint32_t end) {
		uint32_t	i = runs[position];

		return Head{object_key(f.object_ids[i]), double_key(fix_time(f.t[i])), position, end};
	};
	std::priority_queue<Head, std::vector<Head>, decltype(later)> heads(later);
	HostVector<uint32_t> merged;

	merged.reserve(f.count);
	for (uint32_t first = 0; first < f.count; first += run)
		heads.push(head(first, std::min(f.count, first + run)));
	while (!heads.empty())
	{
		Head		h = heads.top();

		heads.pop();
		merged.push_back(runs[h.position]);
		if (h.position + 1 < h.end)
			heads.push(head(h.position + 1, h.end));
		if ((merged.size() & 0xFFFFF) == 0)
			check_interrupt();
	}
	return merged;
}

/* Fixes gathered from the arrays of f in a given order. */
struct GatheredFixes
{
	HostVector<int64_t> ids;
	HostVector<double> t;
	HostVector<double> x;
	HostVector<double> y;

	GeoaccFixes gather(const GeoaccFixes &f, const uint32_t *order, uint32_t n)
	{
		ids.resize(n);
		t.resize(n);
		x.resize(n);
		y.resize(n);
		for (uint32_t k = 0; k < n; k++)
		{
			uint32_t	i = order[k];

			ids[k] = f.object_ids[i];
			t[k] = f.t[i];
			x[k] = f.x[i];
			y[k] = f.y[i];
		}
		return GeoaccFixes{n, ids.data(), t.data(), x.data(), y.data()};
	}
};

}								/* namespace */

void
prepare_fixes_gpu(const GeoaccFixes &f, const GeoaccTrajectoryRules &rules, PreparedFixes &out,
				  GeoaccMakeTrajectoriesTiming &timing)
{
	const uint64_t budget = geoacc_gpu_memory_available();

	if (f.count == 0)
		return;
	if (piece_device_bytes(f.count) <= budget)
	{
		out.reserve(f.count);
		prepare_piece(f, rules, out, timing);
		return;
	}

	/* too large for one piece: sorted runs, merged on the host */
	const uint64_t run_fixed = run_device_bytes(0);
	const uint64_t run_per_fix = run_device_bytes(1) - run_fixed;
	const uint32_t run = budget > run_fixed ? (uint32_t) std::min<uint64_t>(f.count, (budget - run_fixed) / run_per_fix)
		: 0;

	if (run == 0)
	{
		prepare_fixes_cpu(f, rules, out);
		timing.cpu_fixes += f.count;
		return;
	}

	HostVector<uint32_t> runs(f.count);

	for (uint32_t first = 0; first < f.count; first += run)
	{
		sort_run(f, first, std::min(run, f.count - first), runs.data() + first, timing);
		check_interrupt();
	}

	auto		start = std::chrono::steady_clock::now();
	HostVector<uint32_t> order = merge_runs(f, runs, run);

	runs = HostVector<uint32_t>();
	timing.host_ms += ms_since(start);

	/* pieces of whole objects in merged order */
	GatheredFixes piece;

	out.reserve(f.count);
	for (uint32_t first = 0; first < f.count;)
	{
		uint32_t	end = first;
		bool		alone_too_large = false;

		while (end < f.count)
		{
			uint32_t	next = end + 1;

			while (next < f.count && f.object_ids[order[next]] == f.object_ids[order[end]])
				next++;
			if (piece_device_bytes(next - first) > budget)
			{
				if (end == first)
				{
					end = next;
					alone_too_large = true;
				}
				break;
			}
			end = next;
		}
		start = std::chrono::steady_clock::now();

		GeoaccFixes fixes = piece.gather(f, order.data() + first, end - first);

		timing.host_ms += ms_since(start);
		if (alone_too_large)
		{
			prepare_fixes_cpu(fixes, rules, out);
			timing.cpu_fixes += fixes.count;
		}
		else
			prepare_piece(fixes, rules, out, timing);
		check_interrupt();
		first = end;
	}
}

}								/* namespace geoacc */
