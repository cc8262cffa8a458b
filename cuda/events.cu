/*
 * events.cu
 *
 * Vessel events on the GPU, with the rules of events.h:
 *
 *   encounters   each batch of the segment join's rows (segment_join.cu,
 *                through its DeviceRowSink) is merged where it is: the
 *                rows become fragments, a stable radix sort orders them by
 *                start then by pair, a scan by pair keeps the latest end so
 *                far, island starts are flagged, numbered by a prefix sum
 *                and reduced by key (CUB); only the islands come back, to
 *                be merged with other batches' on the host;
 *   stops        one thread per trajectory runs stops_of, twice: to count,
 *                then (after an exclusive sum) to write;
 *   zone visits  one thread per segment finds its candidate zones in the
 *                zones' grid and cuts the segment by each (zone_pieces),
 *                twice (count, write); the pieces are merged as the
 *                encounters' fragments are.
 *
 * Not yet run on a GPU: the kernels compile with the rest and share every
 * rule with the CPU twin, and the core tests compare the two wherever a GPU
 * is present.
 */
#include "cuda_util.cuh"
#include "events.h"
#include "primitives.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>

namespace geoacc
{

namespace
{

constexpr unsigned THREADS = 256;

/*
 * Trajectories (stops) and segments (zone visits) per launch: the host polls for a cancel between launches,
 * so that a cancel stops a large call within about a second.
 */
constexpr uint32_t STOP_LAUNCH = 1u << 14;
constexpr uint32_t ZONE_LAUNCH = 1u << 18;

/* A double's bits in an order radix sorts as the doubles compare (-0 just before +0). */
__device__ uint64_t
ordered_bits(double v)
{
	const uint64_t b = (uint64_t) __double_as_longlong(v);

	return (b >> 63) ? ~b : (b | (uint64_t(1) << 63));
}

__global__ void
rows_to_fragments_kernel(const GeoaccJoinRow *rows, uint32_t n, EventFragment *out)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = event_from_row(rows[i]);
}

__global__ void
start_keys_kernel(const EventFragment *f, uint32_t n, uint64_t *keys, uint32_t *index)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
	{
		keys[i] = ordered_bits(f[i].start);
		index[i] = i;
	}
}

__global__ void
pair_keys_kernel(const EventFragment *f, const uint32_t *by_start, uint32_t n, uint64_t *keys)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
	{
		const EventFragment &x = f[by_start[i]];

		keys[i] = ((uint64_t) x.a << 32) | x.b;
	}
}

__global__ void
gather_kernel(const EventFragment *f, const uint32_t *order, uint32_t n, EventFragment *out, double *ends)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
	{
		out[i] = f[order[i]];
		ends[i] = out[i].end;
	}
}

/* 1 where a fragment starts an island (the sweep of event_merge). */
__global__ void
island_flags_kernel(const EventFragment *f, const uint64_t *keys, const double *latest, uint32_t n, double max_gap,
					uint32_t *flags)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		flags[i] = event_starts_island(i > 0 && keys[i] == keys[i - 1], f[i].start, i > 0 ? latest[i - 1] : 0,
									   max_gap) ? 1 : 0;
}

struct MaxDouble
{
	__device__ double operator()(double x, double y) const { return y > x ? y : x; }
};

struct CombineFragments
{
	__device__ EventFragment operator()(const EventFragment &x, const EventFragment &y) const
	{
		return event_combine(x, y);
	}
};

/*
 * Fragments merged into islands on the device: buffers for up to
 * `capacity` fragments, reserved once; merge() takes fragments in `in` and
 * appends the islands to a host vector.
 */
class DeviceMerger
{
public:
	/* in, sorted and islands; two key arrays; six index, flag and id arrays; ends and latest ends */
	static constexpr uint64_t BYTES_PER_FRAGMENT =
		3 * sizeof(EventFragment) + 2 * sizeof(uint64_t) + 6 * sizeof(uint32_t) + 2 * sizeof(double);

	void reserve(uint64_t capacity)
	{
		const uint32_t n = (uint32_t) std::min<uint64_t>(capacity, UINT32_MAX);
		size_t		sort_bytes = 0,
					scan_bytes = 0,
					sum_bytes = 0,
					reduce_bytes = 0;

		capacity_ = n;
		in_.resize(n);
		sorted_.resize(n);
		keys_.resize(n);
		keys_sorted_.resize(n);
		index_.resize(n);
		by_start_.resize(n);
		order_.resize(n);
		ends_.resize(n);
		latest_.resize(n);
		flags_.resize(n);
		ids_.resize(n);
		unique_.resize(n);
		islands_.resize(n);
		count_.resize(1);
		GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys_.data(), keys_sorted_.data(),
														index_.data(), by_start_.data(), (int) n, 0, 64, stream()));
		GEOACC_CUDA_TRY(cub::DeviceScan::InclusiveScanByKey(nullptr, scan_bytes, keys_sorted_.data(), ends_.data(),
															latest_.data(), MaxDouble(), (int) n,
															cuda::std::equal_to<>(), stream()));
		GEOACC_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, sum_bytes, flags_.data(), ids_.data(), (int) n,
													  stream()));
		GEOACC_CUDA_TRY(cub::DeviceReduce::ReduceByKey(nullptr, reduce_bytes, ids_.data(), unique_.data(),
													   sorted_.data(), islands_.data(), count_.data(),
													   CombineFragments(), (int) n, stream()));
		temp_.resize(std::max({sort_bytes, scan_bytes, sum_bytes, reduce_bytes, size_t(1)}));
	}

	EventFragment *input() { return in_.data(); }
	uint32_t	capacity() const { return capacity_; }

	/* The islands of the n fragments in input(), appended to out (the host waits for their count). */
	void merge(uint32_t n, double max_gap, HostVector<EventFragment> &out)
	{
		size_t		bytes = temp_.size();
		uint32_t	count = 0;

		if (n == 0)
			return;
		/* by start, then (stable) by pair: each pair's fragments in start order */
		start_keys_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(in_.data(), n, keys_.data(),
																			 index_.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp_.data(), bytes, keys_.data(), keys_sorted_.data(),
														index_.data(), by_start_.data(), (int) n, 0, 64, stream()));
		pair_keys_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(in_.data(), by_start_.data(), n,
																			keys_.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		bytes = temp_.size();
		GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp_.data(), bytes, keys_.data(), keys_sorted_.data(),
														by_start_.data(), order_.data(), (int) n, 0, 64, stream()));
		gather_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(in_.data(), order_.data(), n, sorted_.data(),
																		 ends_.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		/* the latest end so far of each pair, the island starts, their numbers */
		bytes = temp_.size();
		GEOACC_CUDA_TRY(cub::DeviceScan::InclusiveScanByKey(temp_.data(), bytes, keys_sorted_.data(), ends_.data(),
															latest_.data(), MaxDouble(), (int) n,
															cuda::std::equal_to<>(), stream()));
		island_flags_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(sorted_.data(), keys_sorted_.data(),
																			   latest_.data(), n, max_gap,
																			   flags_.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		bytes = temp_.size();
		GEOACC_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp_.data(), bytes, flags_.data(), ids_.data(), (int) n,
													  stream()));
		bytes = temp_.size();
		GEOACC_CUDA_TRY(cub::DeviceReduce::ReduceByKey(temp_.data(), bytes, ids_.data(), unique_.data(),
													   sorted_.data(), islands_.data(), count_.data(),
													   CombineFragments(), (int) n, stream()));
		GEOACC_CUDA_TRY(cudaMemcpyAsync(&count, count_.data(), sizeof(count), cudaMemcpyDeviceToHost, stream()));
		stream_sync();

		const size_t first = out.size();

		out.resize(first + count);
		GEOACC_CUDA_TRY(cudaMemcpyAsync(out.data() + first, islands_.data(), count * sizeof(EventFragment),
										cudaMemcpyDeviceToHost, stream()));
		stream_sync();
	}

private:
	uint32_t	capacity_ = 0;
	DeviceBuffer<EventFragment> in_;
	DeviceBuffer<EventFragment> sorted_;
	DeviceBuffer<uint64_t> keys_;
	DeviceBuffer<uint64_t> keys_sorted_;
	DeviceBuffer<uint32_t> index_;
	DeviceBuffer<uint32_t> by_start_;
	DeviceBuffer<uint32_t> order_;
	DeviceBuffer<double> ends_;
	DeviceBuffer<double> latest_;
	DeviceBuffer<uint32_t> flags_;
	DeviceBuffer<uint32_t> ids_;
	DeviceBuffer<uint32_t> unique_;
	DeviceBuffer<EventFragment> islands_;
	DeviceBuffer<uint32_t> count_;
	DeviceBuffer<unsigned char> temp_;
};

/* The segment join's sink: each batch's rows merged into encounter fragments on the device. */
class EncounterSink : public DeviceRowSink
{
public:
	EncounterSink(double max_gap, HostVector<EventFragment> &out) : max_gap_(max_gap), out_(out) {}

	/* the merger's buffers, and CUB's temporary storage (about a sort's keys and values again, and some) */
	uint64_t	bytes_per_slot() const override { return DeviceMerger::BYTES_PER_FRAGMENT + 32; }

	void reserve(uint64_t slots) override { merger_.reserve(slots); }

	void take(const GeoaccJoinRow *d_rows, uint32_t n) override
	{
		if (n > merger_.capacity())
			fail(GEOACC_ERR_INTERNAL, "encounters: a batch of %u rows is larger than the %u planned", n,
				 merger_.capacity());
		rows_taken += n;
		rows_to_fragments_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(d_rows, n, merger_.input());
		GEOACC_CUDA_CHECK_LAUNCH();
		merger_.merge(n, max_gap_, out_);
	}

private:
	double		max_gap_;
	HostVector<EventFragment> &out_;
	DeviceMerger merger_;
};

/* Trajectories on the device: the same layout, device pointers. */
struct DeviceTrajectories
{
	DeviceBuffer<uint32_t> offsets;
	DeviceBuffer<double> x;
	DeviceBuffer<double> y;
	DeviceBuffer<double> z;
	DeviceBuffer<double> m;

	GeoaccTrajectories view(uint32_t n)
	{
		return GeoaccTrajectories{n, offsets.data(), x.data(), y.data(), z.size() ? z.data() : nullptr, m.data()};
	}
};

GeoaccTrajectories
upload_trajectories(const GeoaccTrajectories &t, DeviceTrajectories &d)
{
	const size_t points = t.ntrajectories ? t.offsets[t.ntrajectories] : 0;

	d.offsets.resize(t.ntrajectories + 1);
	d.offsets.upload(t.offsets, t.ntrajectories + 1);
	d.x.resize(std::max<size_t>(points, 1));
	d.y.resize(std::max<size_t>(points, 1));
	d.m.resize(std::max<size_t>(points, 1));
	d.x.upload(t.x, points);
	d.y.upload(t.y, points);
	d.m.upload(t.m, points);
	if (t.z)
	{
		d.z.resize(std::max<size_t>(points, 1));
		d.z.upload(t.z, points);
	}
	return d.view(t.ntrajectories);
}

/* Counts, or writes from each trajectory's place, the stops of one trajectory. */
struct StopWriter
{
	GeoaccStop *out;			/* NULL: count only */
	uint32_t	traj;
	uint32_t	next;

	__device__ void operator()(uint32_t first, uint32_t last)
	{
		if (out)
			out[next] = GeoaccStop{traj, first, last};
		next++;
	}
};

/* One thread per trajectory of [first, last): count its stops, or write them from its place. */
__global__ void
stops_kernel(GeoaccTrajectories t, uint32_t first, uint32_t last, double max_diameter, double min_duration,
			 const uint32_t *places, uint32_t *counts, GeoaccStop *out)
{
	const uint32_t s = first + blockIdx.x * blockDim.x + threadIdx.x;

	if (s >= last)
		return;

	StopWriter	w{out, s, places ? places[s] : 0};
	const uint32_t n = stops_of(t, t.offsets[s], t.offsets[s + 1], max_diameter, min_duration, w);

	if (counts)
		counts[s] = n;
}

/* Counts, or writes from a segment's place, the inside pieces of one segment in one zone. */
struct PieceWriter
{
	EventFragment *out;			/* NULL: count only */
	uint32_t	traj;
	uint32_t	zone;
	uint32_t   *next;

	__device__ void operator()(double start, double end)
	{
		if (out)
			out[*next] = EventFragment{traj, zone, 0, 0, start, end, 0, 0};
		(*next)++;
	}
};

struct ZoneWriter
{
	const ZoneView *zv;
	const GeoaccTrajectories *t;
	uint32_t	traj;
	uint32_t	point;
	EventFragment *out;
	uint32_t	next;

	__device__ void operator()(uint32_t z)
	{
		PieceWriter w{out, traj, z, &next};

		zone_pieces(*zv, z, *t, point, w);
	}
};

/* One thread per segment of [first, last) (segment_traj, segment_point): count its pieces, or write them. */
__global__ void
zone_pieces_kernel(GeoaccTrajectories t, ZoneView zv, ZoneGrid grid, const uint32_t *segment_traj,
				   const uint32_t *segment_point, uint32_t first, uint32_t last, const uint32_t *places,
				   uint32_t *counts, EventFragment *out)
{
	const uint32_t i = first + blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= last)
		return;

	ZoneWriter	w{&zv, &t, segment_traj[i], segment_point[i], out, places ? places[i] : 0};

	zone_candidates(grid, zv, t, segment_point[i], w);
	if (counts)
		counts[i] = w.next;
}

}								/* namespace */

std::unique_ptr<DeviceRowSink>
make_encounter_sink(double max_gap, HostVector<EventFragment> &out)
{
	return std::make_unique<EncounterSink>(max_gap, out);
}

void
stops_gpu(const GeoaccTrajectories &t, double max_diameter, double min_duration, OutputVector<GeoaccStop> &out)
{
	DeviceTrajectories d;
	const uint32_t n = t.ntrajectories;

	if (n == 0)
		return;

	const GeoaccTrajectories dt = upload_trajectories(t, d);
	DeviceBuffer<uint32_t> counts(n);
	DeviceBuffer<uint32_t> places(n);

	for (uint32_t first = 0; first < n; first += std::min(STOP_LAUNCH, n - first))
	{
		const uint32_t last = first + std::min(STOP_LAUNCH, n - first);

		stops_kernel<<<blocks_for(last - first, THREADS), THREADS, 0, stream()>>>(
			dt, first, last, max_diameter, min_duration, nullptr, counts.data(), nullptr);
		GEOACC_CUDA_CHECK_LAUNCH();
		sync_and_check_interrupt();
	}

	const uint64_t total = exclusive_scan_u32(counts.data(), places.data(), n);

	check_interrupt();
	if (total == 0)
		return;

	DeviceBuffer<GeoaccStop> stops(total);

	for (uint32_t first = 0; first < n; first += std::min(STOP_LAUNCH, n - first))
	{
		const uint32_t last = first + std::min(STOP_LAUNCH, n - first);

		stops_kernel<<<blocks_for(last - first, THREADS), THREADS, 0, stream()>>>(
			dt, first, last, max_diameter, min_duration, places.data(), nullptr, stops.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		sync_and_check_interrupt();
	}
	out.resize(total);
	stops.download(out.data(), total);
}

void
zone_visits_gpu(const GeoaccTrajectories &t, const GeoaccZones &z, const ZoneIndex &ix,
				HostVector<EventFragment> &out)
{
	/* which trajectory and point each segment is */
	HostVector<uint32_t> segment_traj,
				segment_point;

	for (uint32_t s = 0; s < t.ntrajectories; s++)
		for (uint32_t i = t.offsets[s]; i + 1 < t.offsets[s + 1]; i++)
		{
			segment_traj.push_back(s);
			segment_point.push_back(i);
		}

	const uint32_t nseg = (uint32_t) segment_traj.size();

	if (nseg == 0)
		return;

	DeviceTrajectories d;
	const GeoaccTrajectories dt = upload_trajectories(t, d);
	const uint32_t nrings = z.zone_rings[z.nzones];
	const uint32_t zpoints = z.ring_points[nrings];
	DeviceBuffer<uint32_t> zone_rings(z.nzones + 1),
				ring_points(nrings + 1),
				cell_start(ix.cell_start.size()),
				zones(std::max<size_t>(ix.zones.size(), 1));
	DeviceBuffer<double> zx(std::max<uint32_t>(zpoints, 1)),
				zy(std::max<uint32_t>(zpoints, 1)),
				box(std::max<size_t>(ix.box.size(), 1));
	DeviceBuffer<uint32_t> d_traj(nseg),
				d_point(nseg),
				counts(nseg),
				places(nseg);

	zone_rings.upload(z.zone_rings, z.nzones + 1);
	ring_points.upload(z.ring_points, nrings + 1);
	zx.upload(z.x, zpoints);
	zy.upload(z.y, zpoints);
	box.upload(ix.box.data(), ix.box.size());
	cell_start.upload(ix.cell_start.data(), ix.cell_start.size());
	zones.upload(ix.zones.data(), ix.zones.size());
	d_traj.upload(segment_traj.data(), nseg);
	d_point.upload(segment_point.data(), nseg);

	const ZoneView zv{z.nzones, zone_rings.data(), ring_points.data(), zx.data(), zy.data(), box.data()};
	ZoneGrid	grid = ix.grid;

	grid.cell_start = cell_start.data();
	grid.zones = zones.data();

	for (uint32_t first = 0; first < nseg; first += std::min(ZONE_LAUNCH, nseg - first))
	{
		const uint32_t last = first + std::min(ZONE_LAUNCH, nseg - first);

		zone_pieces_kernel<<<blocks_for(last - first, THREADS), THREADS, 0, stream()>>>(
			dt, zv, grid, d_traj.data(), d_point.data(), first, last, nullptr, counts.data(), nullptr);
		GEOACC_CUDA_CHECK_LAUNCH();
		sync_and_check_interrupt();
	}

	const uint64_t total = exclusive_scan_u32(counts.data(), places.data(), nseg);

	check_interrupt();
	if (total == 0)
		return;
	if (total >= UINT32_MAX)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "zone visits: %llu pieces, more than a call takes (2^32 - 1)",
			 (unsigned long long) total);

	DeviceMerger merger;

	merger.reserve(total);
	for (uint32_t first = 0; first < nseg; first += std::min(ZONE_LAUNCH, nseg - first))
	{
		const uint32_t last = first + std::min(ZONE_LAUNCH, nseg - first);

		zone_pieces_kernel<<<blocks_for(last - first, THREADS), THREADS, 0, stream()>>>(
			dt, zv, grid, d_traj.data(), d_point.data(), first, last, places.data(), nullptr, merger.input());
		GEOACC_CUDA_CHECK_LAUNCH();
		sync_and_check_interrupt();
	}
	merger.merge((uint32_t) total, 0, out);
}

}								/* namespace geoacc */
