/*
 * segment_join.cpp
 *
 * Segment join: the C ABI (validation, the segments of both sides, the
 * choice of method, rows handed out batch by batch), the planning of the
 * three indexes, and the CPU twin, which builds the same index structures
 * on the host and runs the same searches and exact test as the kernels
 * (segment_join.h), so that it returns the same rows to the bit.
 */
#include "segment_join.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

namespace geoacc
{

namespace
{

uint32_t	query_slots_setting;	/* 0: the defaults */
uint64_t	batch_slots_setting;

/* Queries of the CPU twin between interrupt polls. */
constexpr uint64_t CPU_BLOCK_QUERIES = 4096;

/* An index may file at most this many cells per entry on average before the grid coarsens. */
constexpr uint64_t MAX_CELLS_PER_ENTRY = 4;

double
now_ms()
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* Every coordinate finite, M strictly increasing by finite steps (messages count from 1). */
void
check_trajectories(const GeoaccTrajectories &t, const char *name)
{
	if (t.ntrajectories > 0 && (t.offsets == nullptr || t.x == nullptr || t.y == nullptr || t.m == nullptr))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the trajectories of %s are missing", name);
	for (uint32_t s = 0; s < t.ntrajectories; s++)
	{
		if (t.offsets[s + 1] < t.offsets[s])
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the offsets of %s decrease at trajectory %u", name, s + 1);
		for (uint32_t i = t.offsets[s]; i < t.offsets[s + 1]; i++)
		{
			const uint32_t point = i - t.offsets[s] + 1;

			if (!std::isfinite(t.x[i]) || !std::isfinite(t.y[i]) || (t.z && !std::isfinite(t.z[i]))
				|| !std::isfinite(t.m[i]))
				fail(GEOACC_ERR_INVALID_ARGUMENT, "trajectory %u of %s: point %u has a coordinate that is not finite",
					 s + 1, name, point);
			if (point > 1 && !(t.m[i] > t.m[i - 1]))
				fail(GEOACC_ERR_INVALID_ARGUMENT, "trajectory %u of %s: the m of point %u does not increase",
					 s + 1, name, point);
			/* a segment's duration divides its displacement */
			if (point > 1 && !std::isfinite(t.m[i] - t.m[i - 1]))
				fail(GEOACC_ERR_INVALID_ARGUMENT, "trajectory %u of %s: the m of point %u is too far from the one "
					 "before (%g after %g)", s + 1, name, point, t.m[i], t.m[i - 1]);
		}
	}
}

/*
 * The segments of a set of trajectories, in (trajectory, segment) order;
 * *max_abs grows to the largest magnitude of their coordinates.
 */
HostVector<JoinSegment>
segments_of(const GeoaccTrajectories &t, bool with_z, const char *name, double *max_abs)
{
	HostVector<JoinSegment> out;
	uint64_t	count = 0;
	double		m = *max_abs;

	for (uint32_t s = 0; s < t.ntrajectories; s++)
		if (t.offsets[s + 1] - t.offsets[s] >= 2)
			count += t.offsets[s + 1] - t.offsets[s] - 1;
	if (count >= UINT32_MAX)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "%s has %llu segments, more than a join takes (2^32 - 1)", name,
			 (unsigned long long) count);
	out.reserve(count);
	for (uint32_t s = 0; s < t.ntrajectories; s++)
	{
		if (t.offsets[s + 1] - t.offsets[s] < 2)
			continue;
		for (uint32_t i = t.offsets[s]; i < t.offsets[s + 1]; i++)
			m = std::max({m, std::fabs(t.x[i]), std::fabs(t.y[i]), with_z ? std::fabs(t.z[i]) : 0.0});
		for (uint32_t i = t.offsets[s]; i + 1 < t.offsets[s + 1]; i++)
		{
			JoinSegment g;


			g.p0[0] = t.x[i];
			g.p0[1] = t.y[i];
			g.p0[2] = with_z ? t.z[i] : 0;
			g.t0 = t.m[i];
			g.p1[0] = t.x[i + 1];
			g.p1[1] = t.y[i + 1];
			g.p1[2] = with_z ? t.z[i + 1] : 0;
			g.t1 = t.m[i + 1];
			g.traj = s;
			g.seg = i - t.offsets[s];
			out.push_back(g);
		}
	}
	*max_abs = m;
	return out;
}

/* Bins of `width` from lo covering [lo, hi]. */
int64_t
bins_over(double lo, double hi, double width)
{
	const double n = std::floor((hi - lo) / width) + 1;

	return n >= 1 ? (int64_t) n : 1;
}

/* A width no smaller than `width` that cuts [lo, hi] into at most 2^24 bins (and is positive). */
double
sane_width(double width, double lo, double hi)
{
	return std::max({width, (hi - lo) / 16777216.0, 1e-300});
}

/* ------------------------------------------------------- host indexes */

/* (key, entry) pairs sorted by key, entries in order within a key: the non-empty keys, their starts, the entries. */
void
group_by_key(HostVector<std::pair<uint64_t, uint32_t>> &filed, HostVector<uint64_t> &keys,
			 HostVector<uint32_t> &start, HostVector<uint32_t> &entries)
{
	std::stable_sort(filed.begin(), filed.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
	keys.clear();
	start.clear();
	entries.resize(filed.size());
	for (size_t k = 0; k < filed.size(); k++)
	{
		entries[k] = filed[k].second;
		if (k == 0 || filed[k].first != filed[k - 1].first)
		{
			keys.push_back(filed[k].first);
			start.push_back((uint32_t) k);
		}
	}
	start.push_back((uint32_t) filed.size());
}

/* The index of one plan over entries e[0..n), built on the host: the arrays the kernels search. */
struct HostIndex
{
	IndexPlan	plan;
	/* per layer; the spatial grid in [0] */
	HostVector<uint64_t> keys[JOIN_LAYERS];
	HostVector<uint32_t> start[JOIN_LAYERS];
	HostVector<uint32_t> entries[JOIN_LAYERS];

	HostIndex(const IndexPlan &p, const JoinSegment *e, size_t n) : plan(p)
	{
		if (plan.method == GEOACC_JOIN_SPATIAL)
		{
			/* (cell, entry) for every cell of every entry */
			HostVector<std::pair<uint64_t, uint32_t>> filed;

			filed.reserve(plan.insertions);
			for (size_t i = 0; i < n; i++)
			{
				const int64_t cx0 = join_bin(join_min(e[i].p0[0], e[i].p1[0]), plan.x0, plan.cell, plan.nx);
				const int64_t cx1 = join_bin(join_max(e[i].p0[0], e[i].p1[0]), plan.x0, plan.cell, plan.nx);
				const int64_t cy0 = join_bin(join_min(e[i].p0[1], e[i].p1[1]), plan.y0, plan.cell, plan.ny);
				const int64_t cy1 = join_bin(join_max(e[i].p0[1], e[i].p1[1]), plan.y0, plan.cell, plan.ny);

				for (int64_t cy = cy0; cy <= cy1; cy++)
					for (int64_t cx = cx0; cx <= cx1; cx++)
						filed.emplace_back((uint64_t) (cy * plan.nx + cx), (uint32_t) i);
			}
			group_by_key(filed, keys[0], start[0], entries[0]);
			return;
		}

		/* per layer, the bin (and sub-cell) of every entry of the layer */
		HostVector<std::pair<uint64_t, uint32_t>> layer_filed[JOIN_LAYERS];

		for (int l = 0; l < JOIN_LAYERS; l++)
			layer_filed[l].reserve(plan.layer[l].count);
		for (size_t i = 0; i < n; i++)
		{
			const int	l = join_layer(plan, e[i]);

			layer_filed[l].emplace_back(join_bin_key(plan.layer[l], plan.method == GEOACC_JOIN_SPATIOTEMPORAL, e[i]),
										(uint32_t) i);
		}
		for (int l = 0; l < JOIN_LAYERS; l++)
			group_by_key(layer_filed[l], keys[l], start[l], entries[l]);
	}

	IndexArrays arrays() const
	{
		IndexArrays a;

		a.plan = plan;
		for (int l = 0; l < JOIN_LAYERS; l++)
			a.bins[l] = {keys[l].size(), keys[l].data(), start[l].data(), entries[l].data()};
		return a;
	}
};

/* Collects a query's candidates. */
struct CollectVisit
{
	std::vector<uint32_t> *out;

	void operator()(uint32_t e) { out->push_back(e); }
};

/* The CPU twin: one host index over all entries, each query searched, tested and ordered in turn. */
class CpuJoinRunner : public JoinRunner
{
public:
	CpuJoinRunner(const JoinJob &job, GeoaccJoinStats &stats) : job_(job)
	{
		const SegmentSpan e = job.entries();
		double		start = now_ms();

		if (job.prepared)
		{
			index_ = prepared_host_index(job, stats);
			return;
		}

		const IndexPlan plan = plan_index(job.method, e.data(), e.size(), job.params);

		stats.plan_ms += now_ms() - start;
		start = now_ms();
		owned_ = std::make_unique<HostIndex>(plan, e.data(), e.size());
		index_ = owned_.get();
		stats.index_ms += now_ms() - start;
	}

	uint64_t	block_queries() const override { return CPU_BLOCK_QUERIES; }

	void run(uint64_t q0, uint64_t q1, HostVector<GeoaccJoinRow> &rows, GeoaccJoinStats &stats) override
	{
		with_index_view(index_->arrays(), [&](const auto &view) { run_with(view, q0, q1, rows, stats); });
	}

private:
	template <class View>
	void run_with(const View &view, uint64_t q0, uint64_t q1, HostVector<GeoaccJoinRow> &rows,
				  GeoaccJoinStats &stats)
	{
		const SegmentSpan e = job_.entries();
		std::vector<uint32_t> offsets{0};
		std::vector<uint32_t> candidates;
		CollectVisit visit{&candidates};
		double		t = now_ms();

		for (uint64_t q = q0; q < q1; q++)
		{
			const JoinQuery query = join_query(&job_.a[q], job_.params);

			join_search(view, e.data(), query, job_.params, visit);
			/* the kernels order a query's rows by entry after the test; sorting first gives that order */
			std::sort(candidates.begin() + offsets.back(), candidates.end());
			offsets.push_back((uint32_t) candidates.size());
		}
		stats.search_ms += now_ms() - t;
		stats.candidates += candidates.size();
		t = now_ms();

		const size_t first = rows.size();

		for (uint64_t q = q0; q < q1; q++)
		{
			const JoinSegment &s = job_.a[q];

			for (uint32_t k = offsets[q - q0]; k < offsets[q - q0 + 1]; k++)
			{
				const JoinSegment &other = e[candidates[k]];
				JoinHit		hit;

				if (join_refine(s, other, job_.params, &hit))
					rows.push_back({s.traj, s.seg, other.traj, other.seg, hit.t_start, hit.t_end, hit.cpa_time,
									hit.cpa_distance});
			}
		}
		stats.refine_ms += now_ms() - t;
		stats.rows += rows.size() - first;
		check_interrupt();
	}

	static const HostIndex *prepared_host_index(const JoinJob &job, GeoaccJoinStats &stats);

	const JoinJob &job_;
	std::unique_ptr<HostIndex> owned_;
	const HostIndex *index_ = nullptr;
};

}								/* namespace */

/* The CPU's index over prepared entries, and the join parameters it was built for. */
struct PreparedHostIndex
{
	GeoaccJoinMethod method;
	int			dims;
	double		distance;
	double		reach;
	HostIndex	index;
};

/* The index of the prepared entries for the job's parameters: the one kept, or one built now and kept. */
const HostIndex *
CpuJoinRunner::prepared_host_index(const JoinJob &job, GeoaccJoinStats &stats)
{
	GeoaccJoinEntries &p = *job.prepared;
	const PreparedHostIndex *kept = p.host_index.get();

	if (kept && kept->method == job.method && kept->dims == job.params.dims &&
		kept->distance == job.params.distance && kept->reach == job.params.reach)
		return &kept->index;

	double		start = now_ms();
	const IndexPlan plan = job.plan(0, p.segments.size());

	stats.plan_ms += now_ms() - start;
	start = now_ms();
	p.host_index.reset();
	p.host_index.reset(new PreparedHostIndex{job.method, job.params.dims, job.params.distance, job.params.reach,
											 HostIndex(plan, p.segments.data(), p.segments.size())});
	stats.index_ms += now_ms() - start;
	return &p.host_index->index;
}

SegmentSpan
JoinJob::entries() const
{
	if (params.self)
		return SegmentSpan{a.data(), a.size()};
	if (prepared)
		return SegmentSpan{prepared->segments.data(), prepared->segments.size()};
	return SegmentSpan{b.data(), b.size()};
}

/* Plans kept per prepared entries at most (the oldest go first). */
constexpr size_t PREPARED_PLANS = 16;

IndexPlan
JoinJob::plan(uint64_t first, uint64_t count) const
{
	const SegmentSpan e = entries();

	if (prepared == nullptr)
		return plan_index(method, &e[first], count, params);
	for (const PreparedPlan &k : prepared->plans)
		if (k.method == method && k.dims == params.dims && k.distance == params.distance && k.reach == params.reach
			&& k.first == first && k.count == count)
			return k.plan;
	if (prepared->plans.size() >= PREPARED_PLANS)
		prepared->plans.erase(prepared->plans.begin());
	prepared->plans.push_back({method, params.dims, params.distance, params.reach, first, count,
							   plan_index(method, &e[first], count, params)});
	return prepared->plans.back().plan;
}

const JoinSegment *
JoinJob::device_entries() const
{
	return prepared && !params.self ? static_cast<const JoinSegment *>(prepared->d_segments) : nullptr;
}

/* A shape with nothing in it yet. */
static SegmentShape
empty_shape()
{
	SegmentShape shape;

	for (int k = 0; k < 2; k++)
	{
		shape.lo[k] = std::numeric_limits<double>::infinity();
		shape.hi[k] = -std::numeric_limits<double>::infinity();
	}
	shape.t_lo = std::numeric_limits<double>::infinity();
	shape.t_hi = -std::numeric_limits<double>::infinity();
	return shape;
}

/* Grows shape by segment s (all but the median); returns the larger of its X and Y extents. */
static double
shape_add(SegmentShape &shape, const JoinSegment &s)
{
	double		ext[2];

	for (int k = 0; k < 2; k++)
	{
		const double lo = join_min(s.p0[k], s.p1[k]);
		const double hi = join_max(s.p0[k], s.p1[k]);

		shape.lo[k] = std::min(shape.lo[k], lo);
		shape.hi[k] = std::max(shape.hi[k], hi);
		ext[k] = hi - lo;
		shape.max_extent[k] = std::max(shape.max_extent[k], ext[k]);
	}
	shape.t_lo = std::min(shape.t_lo, s.t0);
	shape.t_hi = std::max(shape.t_hi, s.t1);
	shape.max_duration = std::max(shape.max_duration, s.t1 - s.t0);
	shape.n++;
	return std::max(ext[0], ext[1]);
}

/* The layers' caps: these quantiles of the durations and extents, the last layer holding the rest. */
constexpr double LAYER_QUANTILES[JOIN_LAYERS - 1] = {0.9, 0.99, 0.999, 0.9999};

/* The bins of one layer of a temporal or spatiotemporal plan over entries of this shape. */
BinPlan
plan_bins(GeoaccJoinMethod method, const SegmentShape &shape, const JoinParams &p)
{
	BinPlan		b;
	const uint64_t n = shape.n;

	b.count = n;
	if (n == 0)
		return b;

	/*
	 * Bins as wide as the longest duration (a query scans about two more
	 * than its own span), sub-cells as wide as the largest extent and
	 * the reach (a query scans about three more than its box a side): only
	 * non-empty ones are kept, so narrow bins cost nothing where there is no
	 * data.
	 */
	b.t0 = shape.t_lo;
	b.max_duration = shape.max_duration;
	b.width = sane_width(shape.max_duration, shape.t_lo, shape.t_hi);
	b.nbins = bins_over(shape.t_lo, shape.t_hi, b.width);
	if (method == GEOACC_JOIN_TEMPORAL)
		return b;
	for (int k = 0; k < 2; k++)
	{
		/* at most 2^16 sub-cells a side, so that keys fit in 64 bits with 2^24 bins */
		b.s0[k] = shape.lo[k];
		b.max_extent[k] = shape.max_extent[k];
		b.swidth[k] = std::max({shape.max_extent[k], p.reach, (shape.hi[k] - shape.lo[k]) / 65536.0, 1e-300});
		b.nsub[k] = bins_over(shape.lo[k], shape.hi[k], b.swidth[k]);
	}
	return b;
}

SegmentShape
segment_shape(const JoinSegment *s, size_t n)
{
	SegmentShape shape = empty_shape();
	std::vector<double> extents(n);

	if (n == 0)
		return SegmentShape();
	for (size_t i = 0; i < n; i++)
		extents[i] = shape_add(shape, s[i]);
	std::nth_element(extents.begin(), extents.begin() + n / 2, extents.end());
	shape.median_extent = extents[n / 2];
	return shape;
}

/* Entries of the planning sample at most. */
constexpr size_t PLAN_SAMPLE = 16384;

/*
 * The quantiles LAYER_QUANTILES of sample[0..n), which they reorder: each
 * rank's value as a full sort would place it, found above the rank before
 * (the ranks ascend).
 */
static void
quantiles(double *sample, size_t n, double *out)
{
	double	   *from = sample;

	for (int l = 0; l < JOIN_LAYERS - 1; l++)
	{
		if (n == 0)
		{
			out[l] = INFINITY;
			continue;
		}

		double	   *at = sample + (size_t) ((double) (n - 1) * LAYER_QUANTILES[l]);

		std::nth_element(from, at, sample + n);
		out[l] = *at;
		from = at;
	}
}

IndexPlan
plan_index(GeoaccJoinMethod method, const JoinSegment *e, size_t n, const JoinParams &p)
{
	IndexPlan	plan;

	plan.method = method;
	if (n == 0)
		return plan;
	if (method == GEOACC_JOIN_SPATIAL)
	{
		const SegmentShape shape = segment_shape(e, n);

		/* cells no smaller than the reach nor than the median segment, coarser while entries fill too many */
		plan.x0 = shape.lo[0];
		plan.y0 = shape.lo[1];
		plan.cell = sane_width(std::max(p.reach, shape.median_extent), 0,
							   std::max(shape.hi[0] - shape.lo[0], shape.hi[1] - shape.lo[1]));
		for (;;)
		{
			plan.nx = bins_over(shape.lo[0], shape.hi[0], plan.cell);
			plan.ny = bins_over(shape.lo[1], shape.hi[1], plan.cell);
			plan.insertions = 0;
			for (size_t i = 0; i < n; i++)
				plan.insertions += spatial_cells(plan, e[i]);
			if ((plan.insertions <= MAX_CELLS_PER_ENTRY * n + 1024 && plan.insertions < (uint64_t) INT32_MAX)
				|| (plan.nx == 1 && plan.ny == 1))
				break;
			plan.cell *= 2;
		}
		return plan;
	}

	/*
	 * The caps of the layers from quantiles of the durations (and X and Y
	 * extents) of a sample at a fixed stride, read in one pass: the same plan
	 * on every device.  Then each layer's bins over its own entries.
	 */
	const size_t stride = (n + PLAN_SAMPLE - 1) / PLAN_SAMPLE;
	const size_t count = (n + stride - 1) / stride;
	const bool	extents = method == GEOACC_JOIN_SPATIOTEMPORAL;
	std::vector<double> sample(count * (extents ? 3 : 1));
	double		caps[3][JOIN_LAYERS - 1];

	for (size_t i = 0, j = 0; i < n; i += stride, j++)
	{
		sample[j] = e[i].t1 - e[i].t0;
		if (extents)
			for (int k = 0; k < 2; k++)
				sample[(1 + k) * count + j] = join_max(e[i].p0[k], e[i].p1[k]) - join_min(e[i].p0[k], e[i].p1[k]);
	}
	quantiles(sample.data(), count, caps[0]);
	for (int k = 0; k < 2; k++)
		if (extents)
			quantiles(sample.data() + (1 + k) * count, count, caps[1 + k]);
		else
			std::fill(caps[1 + k], caps[1 + k] + JOIN_LAYERS - 1, INFINITY);
	for (int l = 0; l < JOIN_LAYERS - 1; l++)
	{
		plan.cap_duration[l] = caps[0][l];
		plan.cap_extent[l][0] = caps[1][l];
		plan.cap_extent[l][1] = caps[2][l];
	}

	SegmentShape shapes[JOIN_LAYERS];

	std::fill(shapes, shapes + JOIN_LAYERS, empty_shape());
	for (size_t i = 0; i < n; i++)
		shape_add(shapes[join_layer(plan, e[i])], e[i]);
	for (int l = 0; l < JOIN_LAYERS; l++)
		plan.layer[l] = plan_bins(method, shapes[l].n ? shapes[l] : SegmentShape(), p);
	return plan;
}

uint64_t
index_device_bytes(const IndexPlan &plan, uint64_t n)
{
	const bool	spatial = plan.method == GEOACC_JOIN_SPATIAL;
	const uint64_t insertions = spatial ? plan.insertions : n;

	/*
	 * Per insertion: the keys, starts and entries kept (16 bytes), the build's
	 * keys, entries, sorted keys, run flags and run starts (25), the sort's
	 * temporary storage (12); per entry of the spatial grid its count of cells
	 * and their offset (8); a megabyte.
	 */
	return insertions * (16 + 25 + 12) + (spatial ? n * 8 : 0) + (1 << 20);
}

uint32_t
join_query_slots(uint32_t default_slots)
{
	return query_slots_setting ? query_slots_setting : default_slots;
}

uint64_t
join_batch_slots(uint64_t default_slots)
{
	return batch_slots_setting ? batch_slots_setting : default_slots;
}

}								/* namespace geoacc */

using namespace geoacc;

extern "C" void
geoacc_segment_join_set_buffers(uint32_t query_slots, uint64_t batch_slots)
{
	query_slots_setting = query_slots;
	batch_slots_setting = batch_slots;
}

void
geoacc::segment_join_open(GeoaccDevice device, const GeoaccTrajectories *a, const GeoaccTrajectories *b,
						  double distance, GeoaccJoinMethod method, DeviceRowSink *sink, GeoaccSegmentJoin **join,
						  GeoaccJoinEntries *prepared)
{
	(void) sink;				/* used by the GPU runner only */
	if (a == nullptr || join == nullptr)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the trajectories a and the join handle are required");
	if (!std::isfinite(distance) || !(distance > 0))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the distance must be a positive, finite number (it is %g)", distance);
	if (method < GEOACC_JOIN_AUTO || method > GEOACC_JOIN_SPATIOTEMPORAL)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "unknown join method %d", (int) method);

	const double start = now_ms();

	check_trajectories(*a, "a");

	const bool	with_z = a->z != nullptr && (b == nullptr || b->z != nullptr);

	/* entries made in other dimensions than the join's: b's segments are made again */
	if (prepared && prepared->with_z != with_z)
		prepared = nullptr;
	if (b && !prepared)
		check_trajectories(*b, "b");

	auto		h = std::make_unique<GeoaccSegmentJoin>();
	JoinJob    &job = h->job;

	double		max_abs = 0;

	memset(&h->stats, 0, sizeof(h->stats));
	job.a = segments_of(*a, with_z, "a", &max_abs);
	if (prepared)
	{
		job.prepared = prepared;
		max_abs = std::max(max_abs, prepared->max_abs);
	}
	else if (b)
		job.b = segments_of(*b, with_z, "b", &max_abs);
	job.params.dims = with_z ? 3 : 2;
	job.params.self = b == nullptr;
	job.params.distance = distance;
	/* a margin for the rounding of positions: the boxes must not drop a pair the exact test keeps */
	job.params.reach = distance + (distance + max_abs) * 1e-12;
	h->stats.segments_ms = now_ms() - start;

	const SegmentSpan entries = job.entries();

	/* the layered spatiotemporal index visits the fewest entries on every data set measured */
	job.method = method != GEOACC_JOIN_AUTO ? method : GEOACC_JOIN_SPATIOTEMPORAL;
	h->stats.method = job.method;
	h->stats.queries = job.a.size();
	h->stats.entries = entries.size();
	if (job.a.empty() || entries.empty())
		;					/* no pairs: no index */
	else if (device == GEOACC_DEVICE_GPU)
		GEOACC_ON_GPU(h->runner = make_gpu_join_runner(job, h->stats, sink));
	else
		h->runner = std::make_unique<CpuJoinRunner>(job, h->stats);
	*join = h.release();
}

extern "C" GeoaccStatus
geoacc_segment_join_open(GeoaccDevice device, const GeoaccTrajectories *a, const GeoaccTrajectories *b,
						 double distance, GeoaccJoinMethod method, GeoaccSegmentJoin **join)
{
	if (join)
		*join = nullptr;
	return guarded([&] { segment_join_open(device, a, b, distance, method, nullptr, join); });
}

GeoaccJoinEntries::~GeoaccJoinEntries()
{
#ifdef GEOACC_WITH_CUDA
	prepared_device_index_free(device_index);
	join_entries_free_device(d_segments);
#endif
}

extern "C" GeoaccStatus
geoacc_join_entries_create(GeoaccDevice device, const GeoaccTrajectories *b, GeoaccJoinEntries **entries)
{
	if (entries)
		*entries = nullptr;
	return guarded([&] {
		if (b == nullptr || entries == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the trajectories b and the entries' handle are required");
		check_trajectories(*b, "b");

		auto		e = std::make_unique<GeoaccJoinEntries>();

		e->device = device;
		e->b = *b;
		e->with_z = b->z != nullptr;
		e->segments = segments_of(*b, e->with_z, "b", &e->max_abs);
		if (device == GEOACC_DEVICE_GPU)
		{
			GEOACC_ON_GPU(e->d_segments = join_entries_to_device(e->segments.data(), e->segments.size()));
			e->device_bytes = e->segments.size() * sizeof(JoinSegment);
		}
		*entries = e.release();
	});
}

extern "C" void
geoacc_join_entries_free(GeoaccJoinEntries *entries)
{
	delete entries;
}

extern "C" uint64_t
geoacc_join_entries_device_bytes(const GeoaccJoinEntries *entries)
{
	return entries->device_bytes;
}

extern "C" GeoaccStatus
geoacc_segment_join_open_entries(const GeoaccTrajectories *a, GeoaccJoinEntries *b, double distance,
								 GeoaccJoinMethod method, GeoaccSegmentJoin **join)
{
	if (join)
		*join = nullptr;
	return guarded([&] {
		if (b == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the entries b are required");
		segment_join_open(b->device, a, &b->b, distance, method, nullptr, join, b);
	});
}

/* Segments of a set of trajectories: one fewer than the points of each. */
static uint64_t
segment_count(const GeoaccTrajectories &t)
{
	uint64_t	n = 0;

	for (uint32_t i = 0; i < t.ntrajectories; i++)
		n += t.offsets[i + 1] > t.offsets[i] ? t.offsets[i + 1] - t.offsets[i] - 1 : 0;
	return n;
}

/*
 * One chunk for all entries, their index taken at one insertion each (a
 * spatial grid that inserts long segments in several cells cuts them into
 * more chunks), and one block for all queries.
 */
extern "C" uint64_t
geoacc_join_entries_bytes(const GeoaccTrajectories *b)
{
	return segment_count(*b) * sizeof(JoinSegment);
}

extern "C" GeoaccDeviceNeed
geoacc_segment_join_need(const GeoaccTrajectories *a, const GeoaccTrajectories *b)
{
	const uint64_t queries = segment_count(*a);
	const uint64_t entries = b ? segment_count(*b) : queries;
	IndexPlan	plan;
	const uint64_t block = std::min(queries, MAX_BLOCK_QUERIES);
	const uint64_t slots = std::min(MAX_BATCH_SLOTS, block * join_query_slots(DEFAULT_QUERY_SLOTS));
	GeoaccDeviceNeed need;

	plan.method = GEOACC_JOIN_TEMPORAL;
	need.bytes = 2 * (entries * sizeof(JoinSegment) + index_device_bytes(plan, entries))
		+ std::max(2 * slots * SLOT_BYTES, 4 * block * QUERY_BYTES);
	need.least = std::min(need.bytes, JOIN_LEAST_BYTES);
	return need;
}

extern "C" GeoaccStatus
geoacc_segment_join_next(GeoaccSegmentJoin *join, GeoaccJoinRow *rows, uint32_t capacity, uint32_t *count)
{
	if (count)
		*count = 0;
	return guarded([&] {
		if (join == nullptr || rows == nullptr || count == nullptr || capacity == 0)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "a join, a row buffer and a count are required");

		const uint64_t nq = join->runner ? join->job.a.size() : 0;

		while (join->pending_next == join->pending.size() && join->next_query < nq)
		{
			const uint64_t q1 = std::min(nq, join->next_query + join->runner->block_queries());

			join->pending.clear();
			join->pending_next = 0;
			join->runner->run(join->next_query, q1, join->pending, join->stats);
			join->next_query = q1;
		}

		const size_t n = std::min<size_t>(capacity, join->pending.size() - join->pending_next);

		memcpy(rows, join->pending.data() + join->pending_next, n * sizeof(GeoaccJoinRow));
		join->pending_next += n;
		*count = (uint32_t) n;
	});
}

extern "C" void
geoacc_segment_join_stats(const GeoaccSegmentJoin *join, GeoaccJoinStats *stats)
{
	if (join)
		*stats = join->stats;
	else
		memset(stats, 0, sizeof(*stats));
}

extern "C" void
geoacc_segment_join_close(GeoaccSegmentJoin *join)
{
	delete join;
}
