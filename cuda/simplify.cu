/*
 * simplify.cu
 *
 * Douglas-Peucker over every trajectory of a batch at once, after the
 * data-parallel scheme of Huang, Li, Zhang and Liu (GPU-accelerated
 * compression of vessel trajectories): one upload of all points with
 * per-trajectory offsets; then rounds in which every undecided vertex gets
 * its segment label (prefix sum), every key against its segment is computed
 * in parallel, each segment's maximum comes from a segmented arg-max (CUB),
 * segments whose maximum exceeds the threshold split, and the surviving
 * segments are renumbered by prefix sums; rounds repeat until no segment
 * is left; one download of the keep flags.
 *
 * A segment with at most SHORT_SEGMENT interior vertices is finished by one
 * thread running the sequential DP (dp_range, the function the CPU twin
 * runs), one with at most WARP_SEGMENT by one warp (the keys of a segment
 * spread over the lanes), so the rounds only see segments longer than that:
 * on trajectories of a few thousand vertices there are none, and every
 * vertex is read by one launch.
 * Tolerance 0 (planar) is PostGIS's forward walk: one thread per
 * trajectory, resumed over launches of at most WALK_STEPS vertices.
 */
#include "cuda_util.cuh"
#include "primitives.h"
#include "simplify.h"

#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace geoacc
{

namespace
{

constexpr uint32_t WALK_STEPS = 8192;	/* tolerance-0 vertices per thread and launch */
constexpr unsigned THREADS = 256;

struct ToValueIndex
{
	const double *values;
	__host__ __device__ ValueIndex operator()(uint32_t i) const { return ValueIndex{values[i], i}; }
};

struct MaxFirstIndex
{
	__host__ __device__ ValueIndex operator()(ValueIndex a, ValueIndex b) const { return max_first_index(a, b); }
};

using KeyItems = thrust::transform_iterator<ToValueIndex, thrust::counting_iterator<uint32_t>>;

/* ------------------------------------------------------------ kernels */

/* Keep each trajectory's end vertices; its whole span is the first candidate. */
__global__ void
endpoints_kernel(const uint32_t *offsets, uint32_t ntrajectories, uint8_t *keep, Span *candidates)
{
	uint32_t	t = blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= ntrajectories)
		return;

	uint32_t	first = offsets[t];
	uint32_t	end = offsets[t + 1];

	if (end > first)
	{
		keep[first] = 1;
		keep[end - 1] = 1;
	}
	if (candidates)
		candidates[t] = Span{first, end > first ? end - 1 : first};
}

/*
 * Settle the short candidates right here with the sequential DP; flag the
 * long ones for the next round.  long_flags[n] = 0 closes the scan.
 */
template <GeoaccSimplifyDistance D>
__global__ void
settle_kernel(PointArrays p, const Span *candidates, uint32_t n, double tolerance_sq, uint8_t *keep,
			  uint32_t *long_flags)
{
	uint32_t	c = blockIdx.x * blockDim.x + threadIdx.x;

	if (c == 0)
		long_flags[n] = 0;
	if (c >= n)
		return;

	Span		s = candidates[c];
	uint32_t	interior = s.b > s.a ? s.b - s.a - 1 : 0;

	long_flags[c] = interior > WARP_SEGMENT;
	if (interior > 0 && interior <= SHORT_SEGMENT)
	{
		uint32_t	stack[SHORT_SEGMENT + 1];
		NoPoll		no_poll;

		dp_range<D>(p, s.a, s.b, tolerance_sq, keep, stack, no_poll);
	}
}

/* The smallest kept vertex in [from, last], last kept: the end of the next pending segment. */
__device__ uint32_t
next_kept_by_warp(const uint8_t *keep, uint32_t from, uint32_t last)
{
	const unsigned lane = threadIdx.x % 32;

	for (uint32_t base = from;; base += 32)
	{
		uint32_t	v = base + lane;
		unsigned	kept = __ballot_sync(0xffffffffu, v <= last && keep[v]);

		if (kept)
			return base + __ffs(kept) - 1;
	}
}

/*
 * Settle the middle-sized candidates, one warp each: dp_range's DP with each
 * split found by all lanes (arg-max, first index on ties) and the pending
 * segments read back from the keep flags instead of a stack (segments are
 * visited left to right; the kept set does not depend on the order).
 */
template <GeoaccSimplifyDistance D>
__global__ void
warp_settle_kernel(PointArrays p, const Span *candidates, uint32_t n, double tolerance_sq, uint8_t *keep)
{
	const uint64_t c = ((uint64_t) blockIdx.x * blockDim.x + threadIdx.x) / 32;
	const unsigned lane = threadIdx.x % 32;

	if (c >= n)
		return;

	const Span	s = candidates[c];
	const uint32_t interior = s.b > s.a ? s.b - s.a - 1 : 0;

	if (interior <= SHORT_SEGMENT || interior > WARP_SEGMENT)
		return;

	uint32_t	first = s.a;
	uint32_t	last = s.b;

	while (first < s.b)
	{
		ValueIndex	best = value_index_identity();
		SegmentFrame f = segment_frame<D>(p, first, last, tolerance_sq);

		for (uint32_t v = first + 1 + lane; v < last; v += 32)
			best = max_first_index(best, ValueIndex{split_key<D>(f, p, v), v});
		for (int offset = 16; offset > 0; offset /= 2)
		{
			ValueIndex	other;

			other.value = __shfl_down_sync(0xffffffffu, best.value, offset);
			other.index = __shfl_down_sync(0xffffffffu, best.index, offset);
			best = max_first_index(best, other);
		}
		best.value = __shfl_sync(0xffffffffu, best.value, 0);
		best.index = __shfl_sync(0xffffffffu, best.index, 0);
		if (last - first >= 2 && best.value > f.threshold)
		{
			if (lane == 0)
				keep[best.index] = 1;
			last = best.index;
		}
		else
		{
			__syncwarp();		/* lane 0's flags, seen by every lane */
			first = last;
			if (first < s.b)
				last = next_kept_by_warp(keep, first + 1, s.b);
		}
	}
}

/* Gather the long candidates into the segment list with their interior sizes. */
__global__ void
compact_kernel(const Span *candidates, const uint32_t *long_flags, const uint32_t *long_positions, uint32_t n,
			   Span *segments, uint32_t *interior)
{
	uint32_t	c = blockIdx.x * blockDim.x + threadIdx.x;

	if (c == 0)
		interior[long_positions[n]] = 0;	/* closes the scan of sizes */
	if (c >= n || !long_flags[c])
		return;

	Span		s = candidates[c];
	uint32_t	k = long_positions[c];

	segments[k] = s;
	interior[k] = s.b - s.a - 1;
}

/* Mark where each segment but the first starts; their prefix sum labels the items. */
__global__ void
segment_starts_kernel(const uint32_t *item_offsets, uint32_t nsegments, uint32_t *starts)
{
	uint32_t	s = blockIdx.x * blockDim.x + threadIdx.x;

	if (s > 0 && s < nsegments)
		starts[item_offsets[s]] = 1;
}

/* The key of every interior vertex of every segment. */
template <GeoaccSimplifyDistance D>
__global__ void
key_kernel(PointArrays p, const Span *segments, const uint32_t *item_offsets, const uint32_t *labels,
		   uint32_t nitems, double tolerance_sq, double *keys)
{
	uint32_t	e = blockIdx.x * blockDim.x + threadIdx.x;

	if (e >= nitems)
		return;

	uint32_t	s = labels[e];
	Span		seg = segments[s];
	SegmentFrame f = segment_frame<D>(p, seg.a, seg.b, tolerance_sq);

	keys[e] = split_key<D>(f, p, seg.a + 1 + (e - item_offsets[s]));
}

/* Split where the maximum beats the threshold: two candidates, else none. */
template <GeoaccSimplifyDistance D>
__global__ void
split_kernel(PointArrays p, const Span *segments, const uint32_t *item_offsets, const ValueIndex *best,
			 uint32_t nsegments, double tolerance_sq, uint8_t *keep, Span *candidates)
{
	uint32_t	s = blockIdx.x * blockDim.x + threadIdx.x;

	if (s >= nsegments)
		return;

	Span		seg = segments[s];
	SegmentFrame f = segment_frame<D>(p, seg.a, seg.b, tolerance_sq);

	if (best[s].value > f.threshold)
	{
		uint32_t	k = seg.a + 1 + (best[s].index - item_offsets[s]);

		keep[k] = 1;
		candidates[2 * s] = Span{seg.a, k};
		candidates[2 * s + 1] = Span{k, seg.b};
	}
	else
	{
		candidates[2 * s] = Span{seg.a, seg.a};
		candidates[2 * s + 1] = Span{seg.a, seg.a};
	}
}

__global__ void
walk_start_kernel(const uint32_t *offsets, uint32_t ntrajectories, uint32_t *next, uint32_t *kept)
{
	uint32_t	t = blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= ntrajectories)
		return;
	next[t] = offsets[t] + 1;
	kept[t] = offsets[t];
}

/* Advance each trajectory's tolerance-0 walk by up to WALK_STEPS vertices. */
__global__ void
walk_kernel(PointArrays p, const uint32_t *offsets, uint32_t ntrajectories, uint32_t *next, uint32_t *kept,
			uint8_t *keep, uint32_t *unfinished)
{
	uint32_t	t = blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= ntrajectories)
		return;

	uint32_t	first = offsets[t];
	uint32_t	end = offsets[t + 1];
	uint32_t	i = next[t];

	if (end - first < 3 || i >= end - 1)
		return;

	uint32_t	k = kept[t];

	i = tolerance0_walk(p, i, end - 1, k, WALK_STEPS, keep);
	next[t] = i;
	kept[t] = k;
	if (i < end - 1)
		*unfinished = 1;
}

/* ------------------------------------------------------------- pieces */

/* A CUDA event on geoacc's stream, destroyed on any exit. */
class Event
{
public:
	Event() { GEOACC_CUDA_TRY(cudaEventCreate(&event_)); }
	~Event() { cudaEventDestroy(event_); }
	Event(const Event &) = delete;
	Event &operator=(const Event &) = delete;

	void		record() { GEOACC_CUDA_TRY(cudaEventRecord(event_, stream())); }

	/* Milliseconds from `start` to this event (both recorded, this one reached). */
	double		since(const Event &start) const
	{
		float		ms = 0;

		GEOACC_CUDA_TRY(cudaEventElapsedTime(&ms, start.event_, event_));
		return ms;
	}

	void		synchronize() { GEOACC_CUDA_TRY(cudaEventSynchronize(event_)); }

private:
	cudaEvent_t event_;
};

/* Exclusive sum of n + 1 items whose last is 0; returns the total (synchronises). */
uint32_t
exclusive_sum_total(DeviceBuffer<unsigned char> &temp, const uint32_t *d_in, uint32_t *d_out, uint32_t n)
{
	size_t		bytes = temp.size();
	uint32_t	total = 0;

	GEOACC_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, d_in, d_out, n + 1, stream()));
	GEOACC_CUDA_TRY(cudaMemcpyAsync(&total, d_out + n, sizeof(total), cudaMemcpyDeviceToHost, stream()));
	sync_and_check_interrupt();
	return total;
}

/* The buffers of the DP rounds of one piece. */
struct DpWorkspace
{
	DeviceBuffer<Span> candidates;
	DeviceBuffer<uint32_t> long_flags;
	DeviceBuffer<uint32_t> long_positions;
	DeviceBuffer<Span> segments;
	DeviceBuffer<uint32_t> interior;
	DeviceBuffer<uint32_t> item_offsets;
	DeviceBuffer<ValueIndex> best;
	DeviceBuffer<uint32_t> starts;
	DeviceBuffer<uint32_t> labels;
	DeviceBuffer<double> keys;
	DeviceBuffer<unsigned char> temp;

	explicit DpWorkspace(const DpSizes &z)
		: candidates(z.candidates), long_flags(z.candidates + 1), long_positions(z.candidates + 1),
		  segments(z.segments), interior(z.segments + 1), item_offsets(z.segments + 1), best(z.segments),
		  starts(z.points), labels(z.points), keys(z.points)
	{
		/* one temporary buffer for every CUB call of the rounds, sized for the largest */
		size_t		scan_bytes = 0,
					label_bytes = 0,
					reduce_bytes = 0;
		uint32_t   *u32 = nullptr;
		KeyItems	items(thrust::counting_iterator<uint32_t>(0), ToValueIndex{nullptr});

		GEOACC_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, u32, u32,
													  (uint32_t) std::max(z.candidates, z.segments) + 1, stream()));
		GEOACC_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, label_bytes, u32, u32, (uint32_t) z.points,
													  stream()));
		GEOACC_CUDA_TRY(cub::DeviceSegmentedReduce::Reduce(nullptr, reduce_bytes, items, best.data(),
														   (uint32_t) z.segments, u32, u32, MaxFirstIndex(),
														   value_index_identity(), stream()));
		temp.resize(std::max({scan_bytes, label_bytes, reduce_bytes, (size_t) 1}));
	}
};

/* The DP rounds over a piece whose keep flags hold the end vertices already. */
template <GeoaccSimplifyDistance D>
void
dp_rounds(DpWorkspace &w, const PointArrays &p, uint32_t ncandidates, double tolerance_sq, uint8_t *d_keep,
		  GeoaccSimplifyTiming &timing)
{
	while (ncandidates > 0)
	{
		settle_kernel<D><<<blocks_for(ncandidates, THREADS), THREADS, 0, stream()>>>(
			p, w.candidates.data(), ncandidates, tolerance_sq, d_keep, w.long_flags.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		warp_settle_kernel<D><<<blocks_for((uint64_t) ncandidates * 32, THREADS), THREADS, 0, stream()>>>(
			p, w.candidates.data(), ncandidates, tolerance_sq, d_keep);
		GEOACC_CUDA_CHECK_LAUNCH();

		uint32_t	nsegments = exclusive_sum_total(w.temp, w.long_flags.data(), w.long_positions.data(), ncandidates);

		if (nsegments == 0)
			break;
		timing.rounds++;
		compact_kernel<<<blocks_for(ncandidates, THREADS), THREADS, 0, stream()>>>(
			w.candidates.data(), w.long_flags.data(), w.long_positions.data(), ncandidates,
			w.segments.data(), w.interior.data());
		GEOACC_CUDA_CHECK_LAUNCH();

		uint32_t	nitems = exclusive_sum_total(w.temp, w.interior.data(), w.item_offsets.data(), nsegments);

		/* labels: item e belongs to segment (number of segment starts at or before e) */
		GEOACC_CUDA_TRY(cudaMemsetAsync(w.starts.data(), 0, (size_t) nitems * sizeof(uint32_t), stream()));
		segment_starts_kernel<<<blocks_for(nsegments, THREADS), THREADS, 0, stream()>>>(
			w.item_offsets.data(), nsegments, w.starts.data());
		GEOACC_CUDA_CHECK_LAUNCH();

		size_t		temp_bytes = w.temp.size();

		GEOACC_CUDA_TRY(cub::DeviceScan::InclusiveSum(w.temp.data(), temp_bytes, w.starts.data(), w.labels.data(),
													  nitems, stream()));
		key_kernel<D><<<blocks_for(nitems, THREADS), THREADS, 0, stream()>>>(
			p, w.segments.data(), w.item_offsets.data(), w.labels.data(), nitems, tolerance_sq, w.keys.data());
		GEOACC_CUDA_CHECK_LAUNCH();

		KeyItems	items(thrust::counting_iterator<uint32_t>(0), ToValueIndex{w.keys.data()});

		temp_bytes = w.temp.size();
		GEOACC_CUDA_TRY(cub::DeviceSegmentedReduce::Reduce(w.temp.data(), temp_bytes, items, w.best.data(),
														   nsegments, w.item_offsets.data(),
														   w.item_offsets.data() + 1, MaxFirstIndex(),
														   value_index_identity(), stream()));
		split_kernel<D><<<blocks_for(nsegments, THREADS), THREADS, 0, stream()>>>(
			p, w.segments.data(), w.item_offsets.data(), w.best.data(), nsegments, tolerance_sq, d_keep,
			w.candidates.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		ncandidates = 2 * nsegments;
	}
}

/* PostGIS's tolerance-0 walk over every trajectory of a piece. */
void
walk(const PointArrays &p, const DeviceBuffer<uint32_t> &d_offsets, uint32_t ntrajectories, uint8_t *d_keep,
	 GeoaccSimplifyTiming &timing)
{
	DeviceBuffer<uint32_t> d_next(ntrajectories), d_kept(ntrajectories), d_unfinished(1);
	unsigned int blocks = blocks_for(ntrajectories, THREADS);
	uint32_t	unfinished = 1;

	walk_start_kernel<<<blocks, THREADS, 0, stream()>>>(d_offsets.data(), ntrajectories, d_next.data(),
														 d_kept.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	while (unfinished)
	{
		GEOACC_CUDA_TRY(cudaMemsetAsync(d_unfinished.data(), 0, sizeof(uint32_t), stream()));
		walk_kernel<<<blocks, THREADS, 0, stream()>>>(p, d_offsets.data(), ntrajectories, d_next.data(),
													   d_kept.data(), d_keep, d_unfinished.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		GEOACC_CUDA_TRY(cudaMemcpyAsync(&unfinished, d_unfinished.data(), sizeof(unfinished),
										cudaMemcpyDeviceToHost, stream()));
		sync_and_check_interrupt();
		timing.rounds++;
	}
}

/* Simplify trajectories [t0, t1) of the batch in one device piece. */
template <GeoaccSimplifyDistance D>
void
simplify_piece(const GeoaccTrajectories &batch, uint32_t t0, uint32_t t1, double tolerance, uint8_t *keep,
			   GeoaccSimplifyTiming &timing)
{
	const uint32_t base = batch.offsets[t0];
	const uint32_t n = batch.offsets[t1] - base;
	const uint32_t ntrajectories = t1 - t0;
	const bool	tolerance0 = D == GEOACC_SIMPLIFY_PLANAR && tolerance == 0.0;
	std::vector<uint32_t> offsets(ntrajectories + 1);

	for (uint32_t t = 0; t <= ntrajectories; t++)
		offsets[t] = batch.offsets[t0 + t] - base;

	DeviceBuffer<double> d_x(n), d_y(n), d_z(uses_z(D) ? n : 0), d_m(uses_m(D) ? n : 0);
	DeviceBuffer<uint32_t> d_offsets(ntrajectories + 1);
	DeviceBuffer<uint8_t> d_keep(n);
	std::unique_ptr<DpWorkspace> workspace;

	if (!tolerance0)
		workspace.reset(new DpWorkspace(DpSizes(n, ntrajectories)));

	Event		start, uploaded, computed, downloaded;

	start.record();
	d_x.upload(batch.x + base, n);
	d_y.upload(batch.y + base, n);
	if (uses_z(D))
		d_z.upload(batch.z + base, n);
	if (uses_m(D))
		d_m.upload(batch.m + base, n);
	d_offsets.upload(offsets.data(), ntrajectories + 1);
	uploaded.record();

	const PointArrays p{d_x.data(), d_y.data(), d_z.data(), d_m.data()};

	GEOACC_CUDA_TRY(cudaMemsetAsync(d_keep.data(), 0, n, stream()));
	endpoints_kernel<<<blocks_for(ntrajectories, THREADS), THREADS, 0, stream()>>>(
		d_offsets.data(), ntrajectories, d_keep.data(), tolerance0 ? nullptr : workspace->candidates.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	if (tolerance0)
		walk(p, d_offsets, ntrajectories, d_keep.data(), timing);
	else
		dp_rounds<D>(*workspace, p, ntrajectories, tolerance * tolerance, d_keep.data(), timing);
	computed.record();
	d_keep.download(keep + base, n);
	downloaded.record();
	downloaded.synchronize();
	timing.transfer_ms += uploaded.since(start) + downloaded.since(computed);
	timing.compute_ms += computed.since(uploaded);
	timing.pieces++;
}

/*
 * Cut the batch into pieces that fit the device memory free under the cap;
 * a trajectory that does not fit alone goes to the CPU twin.
 */
template <GeoaccSimplifyDistance D>
void
simplify_gpu_typed(const GeoaccTrajectories &batch, double tolerance, uint8_t *keep, GeoaccSimplifyTiming &timing)
{
	const bool	tolerance0 = D == GEOACC_SIMPLIFY_PLANAR && tolerance == 0.0;
	const uint64_t budget = geoacc_gpu_memory_available();
	uint32_t	t0 = 0;

	while (t0 < batch.ntrajectories)
	{
		uint32_t	t1 = t0;

		while (t1 < batch.ntrajectories &&
			   piece_bytes(batch.offsets[t1 + 1] - batch.offsets[t0], t1 + 1 - t0, D, tolerance0) <= budget)
			t1++;
		if (t1 == t0)
		{
			dp_simplify_cpu(batch, t0, t0 + 1, D, tolerance, keep);
			timing.cpu_points += batch.offsets[t0 + 1] - batch.offsets[t0];
			t1 = t0 + 1;
		}
		else
			simplify_piece<D>(batch, t0, t1, tolerance, keep, timing);
		check_interrupt();
		t0 = t1;
	}
}

}								/* namespace */

void
dp_simplify_gpu(const GeoaccTrajectories &batch, GeoaccSimplifyDistance distance, double tolerance,
				uint8_t *keep, GeoaccSimplifyTiming &timing)
{
	switch (distance)
	{
		case GEOACC_SIMPLIFY_PLANAR:
			simplify_gpu_typed<GEOACC_SIMPLIFY_PLANAR>(batch, tolerance, keep, timing);
			break;
		case GEOACC_SIMPLIFY_3D:
			simplify_gpu_typed<GEOACC_SIMPLIFY_3D>(batch, tolerance, keep, timing);
			break;
		case GEOACC_SIMPLIFY_SYNCHRONIZED:
			simplify_gpu_typed<GEOACC_SIMPLIFY_SYNCHRONIZED>(batch, tolerance, keep, timing);
			break;
		case GEOACC_SIMPLIFY_SYNCHRONIZED_3D:
			simplify_gpu_typed<GEOACC_SIMPLIFY_SYNCHRONIZED_3D>(batch, tolerance, keep, timing);
			break;
	}
}

}								/* namespace geoacc */
