/*
 * events.cpp
 *
 * Vessel events: the C ABI (validation, the device's path, the events
 * handed out), the host's merge of fragments into islands, the median
 * speeds, the zones' index, and the CPU twin, which runs the same rules
 * as the kernels (events.h) and so forms the same events to the bit.
 *
 * Encounters run on the segment join (segment_join.h): the CPU twin merges
 * each block's rows into fragments, the GPU each batch's on the device (its
 * rows never come back); the fragments of all blocks are merged last.
 */
#include "events.h"
#include "segment_join.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

namespace geoacc
{

namespace
{

/* What geoacc_events_free() releases. */
struct EventStorage
{
	virtual ~EventStorage() = default;
};

template <class T>
struct EventItems : EventStorage
{
	OutputVector<T> items;
};

/* The storage is the caller's, in output_allocate()'s memory (shared with the GPU service's callers). */
struct StorageDelete
{
	void
	operator() (EventStorage *s) const
	{
		if (s == nullptr)
			return;
		s->~EventStorage();
		output_free(s);
	}
};

template <class S>
std::unique_ptr<S, StorageDelete>
make_storage()
{
	return std::unique_ptr<S, StorageDelete>(new (output_allocate(sizeof(S))) S);
}

/* Every coordinate finite, M strictly increasing by finite steps (messages count from 1). */
void
check_trajectories(const GeoaccTrajectories *t)
{
	if (t == nullptr)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the trajectories are required");
	if (t->ntrajectories > 0 && (t->offsets == nullptr || t->x == nullptr || t->y == nullptr || t->m == nullptr))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the trajectories' arrays are missing");
	for (uint32_t s = 0; s < t->ntrajectories; s++)
	{
		if (t->offsets[s + 1] < t->offsets[s])
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the offsets decrease at trajectory %u", s + 1);
		for (uint32_t i = t->offsets[s]; i < t->offsets[s + 1]; i++)
		{
			const uint32_t point = i - t->offsets[s] + 1;

			if (!std::isfinite(t->x[i]) || !std::isfinite(t->y[i]) || (t->z && !std::isfinite(t->z[i]))
				|| !std::isfinite(t->m[i]))
				fail(GEOACC_ERR_INVALID_ARGUMENT, "trajectory %u: point %u has a coordinate that is not finite",
					 s + 1, point);
			if (point > 1 && !(t->m[i] > t->m[i - 1]))
				fail(GEOACC_ERR_INVALID_ARGUMENT, "trajectory %u: the m of point %u does not increase", s + 1, point);
			if (point > 1 && !std::isfinite(t->m[i] - t->m[i - 1]))
				fail(GEOACC_ERR_INVALID_ARGUMENT, "trajectory %u: the m of point %u is too far from the one before",
					 s + 1, point);
		}
	}
}

/* Emits a stop into a vector. */
struct StopCollect
{
	OutputVector<GeoaccStop> *out;
	uint32_t	traj;

	void operator()(uint32_t first, uint32_t last) { out->push_back({traj, first, last}); }
};

/* Emits a zone visit's inside piece into a vector of fragments. */
struct PieceCollect
{
	HostVector<EventFragment> *out;
	uint32_t	traj;
	uint32_t	zone;

	void operator()(double start, double end) { out->push_back({traj, zone, 0, 0, start, end, 0, 0}); }
};

/* Runs the pieces of one segment in every candidate zone. */
struct ZoneCollect
{
	const ZoneView *zv;
	const GeoaccTrajectories *t;
	uint32_t	traj;
	uint32_t	point;
	HostVector<EventFragment> *out;

	void operator()(uint32_t z)
	{
		PieceCollect emit{out, traj, z};

		zone_pieces(*zv, z, *t, point, emit);
	}
};

/* Largest cells-per-zone of the zones' grid on average before it coarsens. */
constexpr uint64_t ZONE_CELLS_PER_ZONE = 16;

/* Cells along an axis at most. */
constexpr int64_t ZONE_GRID_MAX = 4096;

}								/* namespace */

void
event_merge(HostVector<EventFragment> &f, double max_gap)
{
	size_t		out = 0;

	std::sort(f.begin(), f.end(), [](const EventFragment &x, const EventFragment &y) { return event_sweep_less(x, y); });
	for (size_t i = 0; i < f.size(); i++)
	{
		const bool	same = out > 0 && f[out - 1].a == f[i].a && f[out - 1].b == f[i].b;

		if (event_starts_island(same, f[i].start, out > 0 ? f[out - 1].end : 0, max_gap))
			f[out++] = f[i];
		else
			f[out - 1] = event_combine(f[out - 1], f[i]);
	}
	f.resize(out);
}

double
event_median_speed(const GeoaccTrajectories &t, uint32_t traj, double start, double end)
{
	const uint32_t p0 = t.offsets[traj],
				p1 = t.offsets[traj + 1];
	std::vector<double> speeds;

	if (p1 < p0 + 2)
		return NAN;

	/* the first segment that can qualify: the one holding start (its first point at or before start) */
	const double *m = t.m;
	uint32_t	i = (uint32_t) (std::upper_bound(m + p0, m + p1, start) - m);

	i = i > p0 ? i - 1 : p0;
	if (i > p0 && end == start)
		i--;
	for (; i + 1 < p1 && m[i] <= end; i++)
	{
		const bool	takes = end > start ? (m[i] < end && m[i + 1] > start) : (m[i] <= start && m[i + 1] >= start);

		if (takes)
			speeds.push_back(event_segment_speed(t, i));
	}
	if (speeds.empty())
		return NAN;
	std::sort(speeds.begin(), speeds.end());

	const size_t n = speeds.size();

	if (n % 2 == 1)
		return speeds[n / 2];

	const double lo = speeds[n / 2 - 1],
				hi = speeds[n / 2];

	return lo + (hi - lo) * 0.5;
}

void
zone_index_build(const GeoaccZones &z, ZoneIndex &ix)
{
	if (z.nzones > 0 && (z.zone_rings == nullptr || z.ring_points == nullptr || z.x == nullptr || z.y == nullptr))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the zones' arrays are missing");
	ix.box.assign(4 * (size_t) z.nzones, 0);

	double		lo[2] = {0, 0},
				hi[2] = {0, 0};
	std::vector<double> sizes;

	for (uint32_t k = 0; k < z.nzones; k++)
	{
		double	   *b = &ix.box[4 * (size_t) k];
		bool		first = true;

		if (z.zone_rings[k + 1] < z.zone_rings[k])
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the ring offsets of zone %u decrease", k + 1);
		for (uint32_t r = z.zone_rings[k]; r < z.zone_rings[k + 1]; r++)
		{
			const uint32_t q0 = z.ring_points[r],
						q1 = z.ring_points[r + 1];

			if (q1 < q0 + 4)
				fail(GEOACC_ERR_INVALID_ARGUMENT, "zone %u: a ring has %u points, fewer than 4", k + 1,
					 q1 > q0 ? q1 - q0 : 0);
			for (uint32_t i = q0; i < q1; i++)
			{
				if (!std::isfinite(z.x[i]) || !std::isfinite(z.y[i]))
					fail(GEOACC_ERR_INVALID_ARGUMENT, "zone %u: a point has a coordinate that is not finite", k + 1);
				if (first || z.x[i] < b[0])
					b[0] = z.x[i];
				if (first || z.y[i] < b[1])
					b[1] = z.y[i];
				if (first || z.x[i] > b[2])
					b[2] = z.x[i];
				if (first || z.y[i] > b[3])
					b[3] = z.y[i];
				first = false;
			}
			if (z.x[q0] != z.x[q1 - 1] || z.y[q0] != z.y[q1 - 1])
				fail(GEOACC_ERR_INVALID_ARGUMENT, "zone %u: a ring is not closed", k + 1);
		}
		if (first)
			continue;			/* no ring: an empty zone, never entered */
		for (int d = 0; d < 2; d++)
		{
			lo[d] = sizes.empty() ? b[d] : std::min(lo[d], b[d]);
			hi[d] = sizes.empty() ? b[d + 2] : std::max(hi[d], b[d + 2]);
		}
		sizes.push_back(std::max(b[2] - b[0], b[3] - b[1]));
	}

	/* cells about as large as the median zone, coarser until the zones' cells stay few */
	double		cell = 1;

	if (!sizes.empty())
	{
		std::nth_element(sizes.begin(), sizes.begin() + sizes.size() / 2, sizes.end());
		cell = sizes[sizes.size() / 2];
		cell = std::max({cell, (hi[0] - lo[0]) / ZONE_GRID_MAX, (hi[1] - lo[1]) / ZONE_GRID_MAX});
		if (!(cell > 0) || !std::isfinite(cell))
			cell = std::max({1.0, hi[0] - lo[0], hi[1] - lo[1]});
		if (!std::isfinite(cell))
			cell = std::numeric_limits<double>::max();
	}

	ZoneGrid   &g = ix.grid;

	for (;;)
	{
		g.x0 = lo[0];
		g.y0 = lo[1];
		g.cell = cell;
		g.nx = std::min<int64_t>(ZONE_GRID_MAX, (int64_t) std::floor((hi[0] - lo[0]) / cell) + 1);
		g.ny = std::min<int64_t>(ZONE_GRID_MAX, (int64_t) std::floor((hi[1] - lo[1]) / cell) + 1);

		uint64_t	insertions = 0;

		for (uint32_t k = 0; k < z.nzones; k++)
		{
			const double *b = &ix.box[4 * (size_t) k];

			if (z.zone_rings[k + 1] == z.zone_rings[k])
				continue;
			insertions += (uint64_t) (zone_cell(b[2], g.x0, g.cell, g.nx) - zone_cell(b[0], g.x0, g.cell, g.nx) + 1)
				* (uint64_t) (zone_cell(b[3], g.y0, g.cell, g.ny) - zone_cell(b[1], g.y0, g.cell, g.ny) + 1);
		}
		if (insertions <= ZONE_CELLS_PER_ZONE * z.nzones + (uint64_t(1) << 20) || (g.nx == 1 && g.ny == 1))
		{
			if (insertions >= UINT32_MAX)
				fail(GEOACC_ERR_INVALID_ARGUMENT, "the zones cover too many cells of their grid");
			break;
		}
		cell *= 2;
	}

	/* every zone in each cell its box covers, the cells in order (counting, then filling) */
	const uint64_t ncells = (uint64_t) g.nx * (uint64_t) g.ny;

	ix.cell_start.assign(ncells + 1, 0);
	for (int pass = 0; pass < 2; pass++)
	{
		std::vector<uint32_t> fill;

		if (pass == 1)
		{
			for (uint64_t c = 0; c < ncells; c++)
				ix.cell_start[c + 1] += ix.cell_start[c];
			ix.zones.assign(ix.cell_start[ncells], 0);
			fill.assign(ix.cell_start.begin(), ix.cell_start.end() - 1);
		}
		for (uint32_t k = 0; k < z.nzones; k++)
		{
			const double *b = &ix.box[4 * (size_t) k];

			if (z.zone_rings[k + 1] == z.zone_rings[k])
				continue;
			for (int64_t cy = zone_cell(b[1], g.y0, g.cell, g.ny); cy <= zone_cell(b[3], g.y0, g.cell, g.ny); cy++)
				for (int64_t cx = zone_cell(b[0], g.x0, g.cell, g.nx); cx <= zone_cell(b[2], g.x0, g.cell, g.nx); cx++)
				{
					const uint64_t c = (uint64_t) (cy * g.nx + cx);

					if (pass == 0)
						ix.cell_start[c + 1]++;
					else
						ix.zones[fill[c]++] = k;
				}
		}
	}
	g.cell_start = ix.cell_start.data();
	g.zones = ix.zones.data();
}

ZoneView
zone_view(const GeoaccZones &z, const ZoneIndex &ix)
{
	return ZoneView{z.nzones, z.zone_rings, z.ring_points, z.x, z.y, ix.box.data()};
}

}								/* namespace geoacc */

using namespace geoacc;

extern "C" GeoaccStatus
geoacc_encounters(GeoaccDevice device, const GeoaccTrajectories *a, const GeoaccTrajectories *b, double distance,
				  double max_gap, GeoaccJoinMethod method, int speeds, GeoaccEncounters *out,
				  GeoaccJoinStats *stats)
{
	if (out)
		memset(out, 0, sizeof(*out));
	if (stats)
		memset(stats, 0, sizeof(*stats));
	return guarded([&] {
		if (out == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "an output is required");
		if (!std::isfinite(max_gap) || !(max_gap >= 0))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "max_gap must be a finite number of seconds, at least 0 (it is %g)",
				 max_gap);

		HostVector<EventFragment> fragments;
		std::unique_ptr<DeviceRowSink> sink;

		if (device == GEOACC_DEVICE_GPU)
			GEOACC_ON_GPU(sink = make_encounter_sink(max_gap, fragments));

		GeoaccSegmentJoin *opened = nullptr;

		segment_join_open(device, a, b, distance, method, sink.get(), &opened);

		std::unique_ptr<GeoaccSegmentJoin> join(opened);

		if (join->runner)
		{
			const uint64_t nq = join->job.a.size();
			HostVector<GeoaccJoinRow> rows;
			HostVector<EventFragment> block;
			size_t		merged = 0;	/* fragments after the last merge */

			for (uint64_t q0 = 0; q0 < nq;)
			{
				const uint64_t q1 = std::min(nq, q0 + join->runner->block_queries());

				rows.clear();
				join->runner->run(q0, q1, rows, join->stats);
				/* the CPU twin's rows (the GPU keeps its own on the device): merged block by block */
				if (!rows.empty())
				{
					block.clear();
					for (const GeoaccJoinRow &r : rows)
						block.push_back(event_from_row(r));
					event_merge(block, max_gap);
					fragments.insert(fragments.end(), block.begin(), block.end());
				}
				/* the pieces of one encounter from many blocks join up: merged as they double, memory stays small */
				if (fragments.size() >= 2 * merged + (size_t(1) << 20))
				{
					event_merge(fragments, max_gap);
					merged = fragments.size();
				}
				q0 = q1;
			}
		}
		event_merge(fragments, max_gap);
		if (sink)
			join->stats.rows = sink->rows_taken;

		auto		store = make_storage<EventItems<GeoaccEncounter>>();
		const GeoaccTrajectories &bt = b ? *b : *a;

		store->items.reserve(fragments.size());
		for (const EventFragment &f : fragments)
		{
			GeoaccEncounter e = {f.a, f.b, f.a_seg, f.b_seg, f.start, f.end, f.cpa_time, f.cpa_distance, NAN, NAN};

			if (speeds)
			{
				e.a_speed = event_median_speed(*a, f.a, f.start, f.end);
				e.b_speed = event_median_speed(bt, f.b, f.start, f.end);
			}
			store->items.push_back(e);
		}
		if (stats)
			*stats = join->stats;
		out->count = store->items.size();
		out->items = store->items.data();
		out->storage = store.release();
	});
}

extern "C" GeoaccDeviceNeed
geoacc_encounters_need(const GeoaccTrajectories *a, const GeoaccTrajectories *b)
{
	return geoacc_segment_join_need(a, b);
}

extern "C" GeoaccStatus
geoacc_stops(GeoaccDevice device, const GeoaccTrajectories *t, double max_diameter, double min_duration,
			 GeoaccStops *out)
{
	if (out)
		memset(out, 0, sizeof(*out));
	return guarded([&] {
		if (out == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "an output is required");
		if (!std::isfinite(max_diameter) || !(max_diameter >= 0))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "max_diameter must be a finite number, at least 0 (it is %g)",
				 max_diameter);
		if (!std::isfinite(min_duration) || !(min_duration >= 0))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "min_duration must be a finite number of seconds, at least 0 (it is %g)",
				 min_duration);
		check_trajectories(t);

		auto		store = make_storage<EventItems<GeoaccStop>>();

		if (device == GEOACC_DEVICE_GPU)
			GEOACC_ON_GPU(stops_gpu(*t, max_diameter, min_duration, store->items));
		else
			for (uint32_t s = 0; s < t->ntrajectories; s++)
			{
				StopCollect emit{&store->items, s};

				stops_of(*t, t->offsets[s], t->offsets[s + 1], max_diameter, min_duration, emit);
				if (s % 1024 == 1023)
					check_interrupt();
			}
		out->count = store->items.size();
		out->items = store->items.data();
		out->storage = store.release();
	});
}

extern "C" GeoaccDeviceNeed
geoacc_stops_need(const GeoaccTrajectories *t)
{
	const uint64_t points = t->ntrajectories ? t->offsets[t->ntrajectories] : 0;
	/* the points (x, y, z, m), the offsets, per trajectory a count and its sum, the stops (12 bytes) */
	const uint64_t bytes = points * 32 + (uint64_t) t->ntrajectories * (4 + 4 + 4) + points / 2 * 12 + (1 << 20);

	return GeoaccDeviceNeed{bytes, bytes};
}

extern "C" GeoaccStatus
geoacc_zone_visits(GeoaccDevice device, const GeoaccTrajectories *t, const GeoaccZones *zones, GeoaccVisits *out)
{
	if (out)
		memset(out, 0, sizeof(*out));
	return guarded([&] {
		if (out == nullptr || zones == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the zones and an output are required");
		check_trajectories(t);

		ZoneIndex	ix;

		zone_index_build(*zones, ix);

		const ZoneView zv = zone_view(*zones, ix);
		HostVector<EventFragment> fragments;

		if (zones->nzones == 0 || t->ntrajectories == 0)
			;
		else if (device == GEOACC_DEVICE_GPU)
			GEOACC_ON_GPU(zone_visits_gpu(*t, *zones, ix, fragments));
		else
		{
			for (uint32_t s = 0; s < t->ntrajectories; s++)
			{
				for (uint32_t i = t->offsets[s]; i + 1 < t->offsets[s + 1]; i++)
				{
					ZoneCollect visit{&zv, t, s, i, &fragments};

					zone_candidates(ix.grid, zv, *t, i, visit);
				}
				if (s % 256 == 255)
					check_interrupt();
			}
		}
		/* the GPU's are islands already; the sweep leaves them as they are */
		event_merge(fragments, 0);

		auto		store = make_storage<EventItems<GeoaccVisit>>();

		store->items.reserve(fragments.size());
		for (const EventFragment &f : fragments)
			store->items.push_back({f.a, f.b, f.start, f.end});
		out->count = store->items.size();
		out->items = store->items.data();
		out->storage = store.release();
	});
}

extern "C" GeoaccDeviceNeed
geoacc_zone_visits_need(const GeoaccTrajectories *t, const GeoaccZones *zones)
{
	const uint64_t points = t->ntrajectories ? t->offsets[t->ntrajectories] : 0;
	const uint64_t rings = zones->nzones ? zones->zone_rings[zones->nzones] : 0;
	const uint64_t zone_points = rings ? zones->ring_points[rings] : 0;
	/* the points and their segments' trajectories, the zones, and pieces at one per segment, merged */
	const uint64_t bytes = points * (32 + 8 + 4) + zone_points * 16 + (uint64_t) zones->nzones * 64
		+ points * 2 * sizeof(EventFragment) + points * 64 + (16 << 20);

	return GeoaccDeviceNeed{bytes, bytes};
}

extern "C" void
geoacc_events_free(void *storage)
{
	StorageDelete()(static_cast<EventStorage *>(storage));
}
