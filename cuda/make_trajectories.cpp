/*
 * make_trajectories.cpp
 *
 * Trajectories from raw fixes: the CPU twin of sorting, deduplicating and
 * splitting, and the C ABI entry point, which checks its arguments, has the
 * fixes prepared on the chosen device, numbers the parts, simplifies them
 * with the Douglas-Peucker of simplify.h and keeps the parts of at least two
 * fixes.
 */
#include "make_trajectories.h"
#include "simplify.h"

#include <algorithm>
#include <array>
#include <memory>
#include <new>

namespace geoacc
{

namespace
{

/* What a GeoaccTrajectoryParts points into. */
struct PartsStorage
{
	OutputVector<int64_t> object_ids;
	OutputVector<uint32_t> part_numbers;
	OutputVector<uint32_t> fixes;
	OutputVector<uint32_t> offsets;
	OutputVector<double> x;
	OutputVector<double> y;
	OutputVector<double> m;
};

/* PartsStorage lives in output_allocate()'s memory, handed to the caller */
struct PartsStorageDelete
{
	void
	operator() (PartsStorage *s) const
	{
		if (s == nullptr)
			return;
		s->~PartsStorage();
		output_free(s);
	}
};

/* A fix in the CPU twin's sort: its keys and its position, moved with it so that it is read in order. */
struct SortItem
{
	uint64_t	object;
	uint64_t	time;
	double		x;
	double		y;
};

void
check_arguments(const GeoaccFixes &fixes, const GeoaccTrajectoryRules &rules)
{
	if (!(rules.max_gap >= 0))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "max_gap must be a non-negative number, not %g", rules.max_gap);
	if (!(rules.max_speed >= 0))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "max_speed must be a non-negative number, not %g", rules.max_speed);
	if (!(rules.time_unit >= 0 && std::isfinite(rules.time_unit)))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "time_unit must be a positive number (0 for seconds), not %g",
			 rules.time_unit);
	if (rules.simplify)
	{
		if (rules.distance != GEOACC_SIMPLIFY_PLANAR && rules.distance != GEOACC_SIMPLIFY_SYNCHRONIZED)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "trajectories from fixes are simplified with the planar or the "
				 "synchronized distance, not distance %d", (int) rules.distance);
		if (!(rules.tolerance >= 0))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "tolerance must be a non-negative number, not %g", rules.tolerance);
	}
	if (fixes.count == UINT32_MAX)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "at most %u fixes can be made into trajectories at once", UINT32_MAX - 1);
	if (fixes.count > 0 && !(fixes.object_ids && fixes.t && fixes.x && fixes.y))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "object_ids, t, x and y are required");
	for (uint32_t i = 0; i < fixes.count; i++)
		if (!std::isfinite(fixes.t[i]) || !std::isfinite(fixes.x[i]) || !std::isfinite(fixes.y[i]))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "fix %u has a non-finite time or coordinate", i);
}

/*
 * Number the parts, simplify them, and keep those of at least two fixes,
 * their kept points moved to the front of the prepared arrays.
 */
void
finish_parts(GeoaccDevice device, const GeoaccTrajectoryRules &rules, PreparedFixes &p, PartsStorage &out,
			 GeoaccTrajectoryParts &parts, GeoaccMakeTrajectoriesTiming &timing)
{
	const uint32_t nfixes = (uint32_t) p.t.size();
	const uint32_t nparts = (uint32_t) p.part_starts.size();
	HostVector<uint32_t> offsets(p.part_starts);
	HostVector<uint8_t> keep;

	offsets.push_back(nfixes);
	/* times in seconds from here on: what m carries and what the synchronized distance interpolates */
	if (time_unit(rules) != 1)
		for (double &t : p.t)
			t /= time_unit(rules);
	if (rules.simplify)
	{
		GeoaccTrajectories batch{nparts, offsets.data(), p.x.data(), p.y.data(), nullptr,
			rules.distance == GEOACC_SIMPLIFY_SYNCHRONIZED ? p.t.data() : nullptr};
		[[maybe_unused]] GeoaccSimplifyTiming spent = {};	/* unused without CUDA; simplify_ms covers it */
		auto		start = std::chrono::steady_clock::now();

		keep.resize(nfixes);
		if (device == GEOACC_DEVICE_GPU)
			GEOACC_ON_GPU(dp_simplify_gpu(batch, rules.distance, rules.tolerance, keep.data(), spent));
		else
			dp_simplify_cpu(batch, 0, nparts, rules.distance, rules.tolerance, keep.data());
		timing.simplify_ms += ms_since(start);
	}

	uint32_t	kept = 0;
	uint32_t	number = 0;

	out.offsets.push_back(0);
	for (uint32_t j = 0; j < nparts; j++)
	{
		uint32_t	first = offsets[j];
		uint32_t	end = offsets[j + 1];

		number = j > 0 && p.part_objects[j] == p.part_objects[j - 1] ? number + 1 : 1;
		if (end - first < 2)
		{
			parts.single_fix_parts++;
			continue;
		}
		for (uint32_t i = first; i < end; i++)
			if (keep.empty() || keep[i])
			{
				p.t[kept] = p.t[i];
				p.x[kept] = p.x[i];
				p.y[kept] = p.y[i];
				kept++;
			}
		out.object_ids.push_back(p.part_objects[j]);
		out.part_numbers.push_back(number);
		out.fixes.push_back(end - first);
		out.offsets.push_back(kept);
	}
	p.t.resize(kept);
	p.x.resize(kept);
	p.y.resize(kept);
	out.m = std::move(p.t);
	out.x = std::move(p.x);
	out.y = std::move(p.y);
	parts.duplicates = (uint32_t) p.duplicates;
}

}								/* namespace */

/*
 * The GPU's device buffers per fix: the fixes (32 bytes), the sort's keys
 * and indices, double-buffered (24), the chosen duplicates (4), the unique
 * fixes (32), part starts and objects (12); CUB's temporary storage is well
 * under 8 bytes per item plus a megabyte.
 */
uint64_t
piece_device_bytes(uint64_t n)
{
	return n * (104 + 8) + (UINT64_C(1) << 20);
}

/* A sorted run: object ids and times (16), keys and indices (24), CUB's storage. */
uint64_t
run_device_bytes(uint64_t n)
{
	return n * (40 + 8) + (UINT64_C(1) << 20);
}

/*
 * Sort the items by (object, time): a stable least-significant-digit radix
 * sort by object over the bytes in which the object keys differ (the others
 * are the same in every item), then each object's fixes by time, which
 * fixes in feed order (time order) already are.
 */
static void
sort_items(HostVector<SortItem> &items)
{
	const size_t n = items.size();
	uint64_t	differ = 0;

	for (size_t k = 1; k < n; k++)
		differ |= items[k].object ^ items[0].object;
	if (differ != 0)
	{
		std::vector<std::array<size_t, 256>> counts(8);
		HostVector<SortItem> other(n);

		for (auto &c : counts)
			c.fill(0);
		for (const SortItem &item : items)
			for (int b = 0; b < 8; b++)
				counts[b][(item.object >> (8 * b)) & 0xFF]++;
		for (int b = 0; b < 8; b++)
		{
			size_t		next = 0;

			if (((differ >> (8 * b)) & 0xFF) == 0)
				continue;
			for (size_t &c : counts[b])
			{
				size_t		count = c;

				c = next;
				next += count;
			}
			for (const SortItem &item : items)
				other[counts[b][(item.object >> (8 * b)) & 0xFF]++] = item;
			items.swap(other);
			check_interrupt();
		}
	}
	for (size_t first = 0; first < n;)
	{
		size_t		end = first + 1;
		bool		sorted = true;

		for (; end < n && items[end].object == items[first].object; end++)
			sorted &= items[end - 1].time <= items[end].time;
		if (!sorted)
			std::sort(items.begin() + first, items.begin() + end,
					  [](const SortItem &a, const SortItem &b) { return a.time < b.time; });
		first = end;
	}
}

void
prepare_fixes_cpu(const GeoaccFixes &f, const GeoaccTrajectoryRules &rules, PreparedFixes &out)
{
	HostVector<SortItem> items(f.count);

	for (uint32_t i = 0; i < f.count; i++)
		items[i] = SortItem{object_key(f.object_ids[i]), double_key(fix_time(f.t[i])), f.x[i], f.y[i]};
	sort_items(items);
	out.reserve(f.count);

	const uint32_t base = (uint32_t) out.t.size();

	for (uint32_t k = 0; k < f.count;)
	{
		/* of a run of equal (object, time), the fix kept_before the others */
		const SortItem *kept = &items[k];
		uint32_t	end = k + 1;

		for (; end < f.count && items[end].object == kept->object && items[end].time == kept->time; end++)
			if (kept_before(items[end].x, items[end].y, kept->x, kept->y))
				kept = &items[end];
		out.duplicates += end - k - 1;
		k = end;

		const uint32_t u = (uint32_t) out.t.size();
		const double t = key_double(kept->time);

		if (u == base || kept->object != object_key(out.part_objects.back()) ||
			starts_part(out.t[u - 1], out.x[u - 1], out.y[u - 1], t, kept->x, kept->y, rules.max_gap,
						rules.max_speed, time_unit(rules)))
		{
			out.part_starts.push_back(u);
			out.part_objects.push_back(key_object(kept->object));
		}
		out.t.push_back(t);
		out.x.push_back(kept->x);
		out.y.push_back(kept->y);
	}
}

}								/* namespace geoacc */

using namespace geoacc;

extern "C" GeoaccStatus
geoacc_make_trajectories(GeoaccDevice device, const GeoaccFixes *fixes, const GeoaccTrajectoryRules *rules,
						 GeoaccTrajectoryParts *parts, GeoaccMakeTrajectoriesTiming *timing)
{
	memset(parts, 0, sizeof(*parts));
	return guarded([&] {
		GeoaccMakeTrajectoriesTiming spent = {};
		/* the storage too is the caller's: in its memory, as the arrays */
		std::unique_ptr<PartsStorage, PartsStorageDelete> storage(new (output_allocate(sizeof(PartsStorage)))
																  PartsStorage);
		PreparedFixes prepared;
		GeoaccTrajectoryParts result = {};

		check_arguments(*fixes, *rules);
		if (device == GEOACC_DEVICE_GPU)
			GEOACC_ON_GPU(prepare_fixes_gpu(*fixes, *rules, prepared, spent));
		else
		{
			auto		start = std::chrono::steady_clock::now();

			prepare_fixes_cpu(*fixes, *rules, prepared);
			spent.compute_ms = ms_since(start);
		}
		check_interrupt();
		finish_parts(device, *rules, prepared, *storage, result, spent);

		PartsStorage &s = *storage;

		result.nparts = (uint32_t) s.object_ids.size();
		result.object_ids = s.object_ids.data();
		result.part_numbers = s.part_numbers.data();
		result.fixes = s.fixes.data();
		result.offsets = s.offsets.data();
		result.x = s.x.data();
		result.y = s.y.data();
		result.m = s.m.data();
		result.storage = storage.release();
		*parts = result;
		if (timing)
			*timing = spent;
	});
}

extern "C" void
geoacc_trajectory_parts_free(GeoaccTrajectoryParts *parts)
{
	if (parts == nullptr)
		return;
	PartsStorageDelete()(static_cast<PartsStorage *>(parts->storage));
	memset(parts, 0, sizeof(*parts));
}

extern "C" uint64_t
geoacc_make_trajectories_device_bytes(uint32_t nfixes)
{
	return piece_device_bytes(nfixes);
}
