/*
 * test_make_trajectories.cpp
 *
 * Trajectories from fixes: the CPU twin against a plain reference written
 * here from the definition (fixes grouped by object in a map, each object
 * sorted by time, the duplicate with the smallest x, then y, kept, parts cut
 * by the gap and speed rules, then each part simplified by
 * geoacc_dp_simplify), hand-checked cases, edges and argument errors; the
 * same result for shuffled input; then the GPU against the CPU twin on
 * fresh random fixes, in one piece, in sorted runs merged on the host, and
 * with objects too large for the memory cap.
 */
#include "core_test.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

namespace
{

struct Fix
{
	int64_t		id;
	double		t;
	double		x;
	double		y;
};

/* Fixes held in arrays. */
struct FixTable
{
	std::vector<int64_t> ids;
	std::vector<double> t, x, y;

	void		add(int64_t id, double ti, double xi, double yi)
	{
		ids.push_back(id);
		t.push_back(ti);
		x.push_back(xi);
		y.push_back(yi);
	}
	uint32_t	size() const { return (uint32_t) ids.size(); }
	GeoaccFixes view() const { return GeoaccFixes{size(), ids.data(), t.data(), x.data(), y.data()}; }
};

/* A result in plain vectors, to compare. */
struct Part
{
	int64_t		object;
	uint32_t	number;
	uint32_t	fixes;
	std::vector<double> x, y, m;

	bool		operator==(const Part &o) const
	{
		return object == o.object && number == o.number && fixes == o.fixes && bits(x) == bits(o.x) &&
			bits(y) == bits(o.y) && bits(m) == bits(o.m);
	}

	static std::vector<uint64_t> bits(const std::vector<double> &v)
	{
		std::vector<uint64_t> b(v.size());

		if (!v.empty())
			std::memcpy(b.data(), v.data(), v.size() * sizeof(double));
		return b;
	}
};

struct Result
{
	std::vector<Part> parts;
	uint32_t	duplicates = 0;
	uint32_t	single_fix_parts = 0;

	bool		operator==(const Result &o) const
	{
		return parts == o.parts && duplicates == o.duplicates && single_fix_parts == o.single_fix_parts;
	}
};

GeoaccTrajectoryRules
rules(double max_gap, double max_speed = INFINITY, double tolerance = -1,
	  GeoaccSimplifyDistance distance = GEOACC_SIMPLIFY_PLANAR, double time_unit = 1)
{
	return GeoaccTrajectoryRules{max_gap, max_speed, tolerance >= 0, distance, tolerance >= 0 ? tolerance : 0,
								 time_unit};
}

Result
make(GeoaccDevice device, const FixTable &f, const GeoaccTrajectoryRules &r,
	 GeoaccMakeTrajectoriesTiming *timing = nullptr, GeoaccStatus expected = GEOACC_OK)
{
	GeoaccFixes	v = f.view();
	GeoaccTrajectoryParts parts;
	Result		result;
	GeoaccStatus status = geoacc_make_trajectories(device, &v, &r, &parts, timing);

	CHECK(status == expected);
	if (status != GEOACC_OK)
	{
		if (expected == GEOACC_OK)
			fprintf(stderr, "    status %d: %s\n", (int) status, geoacc_status_message());
		CHECK(parts.nparts == 0 && parts.storage == nullptr);
		return result;
	}
	for (uint32_t p = 0; p < parts.nparts; p++)
	{
		uint32_t	a = parts.offsets[p],
					b = parts.offsets[p + 1];

		result.parts.push_back(Part{parts.object_ids[p], parts.part_numbers[p], parts.fixes[p],
									std::vector<double>(parts.x + a, parts.x + b),
									std::vector<double>(parts.y + a, parts.y + b),
									std::vector<double>(parts.m + a, parts.m + b)});
	}
	result.duplicates = parts.duplicates;
	result.single_fix_parts = parts.single_fix_parts;
	geoacc_trajectory_parts_free(&parts);
	CHECK(parts.storage == nullptr && parts.nparts == 0);
	return result;
}

/* x before y, -0 before +0: the definition of the duplicate kept. */
bool
smaller_position(const Fix &a, const Fix &b)
{
	if (a.x != b.x)
		return a.x < b.x;
	if (std::signbit(a.x) != std::signbit(b.x))
		return std::signbit(a.x);
	if (a.y != b.y)
		return a.y < b.y;
	return std::signbit(a.y) && !std::signbit(b.y);
}

/* The definition, written plainly. */
Result
reference(const FixTable &f, const GeoaccTrajectoryRules &r)
{
	std::map<int64_t, std::vector<Fix>> objects;
	Result		result;
	double		unit = r.time_unit == 0 ? 1 : r.time_unit;

	for (uint32_t i = 0; i < f.size(); i++)
		objects[f.ids[i]].push_back(Fix{f.ids[i], f.t[i] == 0 ? 0.0 : f.t[i], f.x[i], f.y[i]});
	for (auto &[id, fixes] : objects)
	{
		std::sort(fixes.begin(), fixes.end(), [](const Fix &a, const Fix &b) {
			return a.t != b.t ? a.t < b.t : smaller_position(a, b);
		});

		std::vector<Fix> kept;

		for (const Fix &fix : fixes)
			if (kept.empty() || kept.back().t != fix.t)
				kept.push_back(fix);
			else
				result.duplicates++;

		uint32_t	number = 0;

		for (size_t k = 0; k < kept.size();)
		{
			size_t		end = k + 1;

			while (end < kept.size())
			{
				double		dt = kept[end].t - kept[end - 1].t;
				double		dx = kept[end].x - kept[end - 1].x;
				double		dy = kept[end].y - kept[end - 1].y;

				if (dt > r.max_gap || std::sqrt(dx * dx + dy * dy) / (dt / unit) > r.max_speed)
					break;
				end++;
			}
			number++;
			if (end - k == 1)
				result.single_fix_parts++;
			else
			{
				Part		part{id, number, (uint32_t) (end - k), {}, {}, {}};

				for (size_t i = k; i < end; i++)
				{
					part.x.push_back(kept[i].x);
					part.y.push_back(kept[i].y);
					part.m.push_back(kept[i].t / unit);
				}
				result.parts.push_back(part);
			}
			k = end;
		}
	}
	if (!r.simplify)
		return result;

	/* each part simplified by geoacc_dp_simplify, on the CPU */
	for (Part &part : result.parts)
	{
		uint32_t	offsets[2] = {0, (uint32_t) part.x.size()};
		GeoaccTrajectories batch{1, offsets, part.x.data(), part.y.data(), nullptr, part.m.data()};
		std::vector<uint8_t> keep(part.x.size());
		Part		simplified{part.object, part.number, part.fixes, {}, {}, {}};

		CHECK_OK(geoacc_dp_simplify(GEOACC_DEVICE_CPU, &batch, r.distance, r.tolerance, keep.data(), nullptr));
		for (size_t i = 0; i < keep.size(); i++)
			if (keep[i])
			{
				simplified.x.push_back(part.x[i]);
				simplified.y.push_back(part.y[i]);
				simplified.m.push_back(part.m[i]);
			}
		part = simplified;
	}
	return result;
}

/*
 * Random fixes of `objects` vessels: bursts at 1 - 60 s with gaps of up to
 * hours, repeated times with the same or other positions (the duplicate
 * rule), stops, jumps, coordinates on a coarse grid now and then (exact
 * ties), shuffled into arrival order.
 */
FixTable
random_fixes(uint32_t objects, uint32_t max_fixes)
{
	auto	   &r = core_test::rng();
	std::uniform_real_distribution<double> unit(0.0, 1.0);
	std::vector<Fix> all;

	for (uint32_t o = 0; o < objects; o++)
	{
		int64_t		id = (int64_t) (r() % 4 == 0 ? r() : r() % 1000000) * (r() % 2 ? 1 : -1);
		uint32_t	n = (uint32_t) (r() % (max_fixes + 1));
		bool		grid = r() % 4 == 0;
		double		t = 1.6e9 + 86400 * unit(r),
					x = 500000 + 20000 * unit(r),
					y = 4000000 + 20000 * unit(r);

		for (uint32_t i = 0; i < n; i++)
		{
			switch (r() % 16)
			{
				case 0:			/* the same time again, elsewhere */
					break;
				case 1:			/* the same time, the same place */
					if (i > 0)
					{
						Fix			again = all.back();

						all.push_back(again);
						continue;
					}
					break;
				case 2:			/* a gap */
					t += 600 + 7200 * unit(r);
					break;
				case 3:			/* a jump */
					x += 5000 * (unit(r) - 0.5);
					t += 1 + r() % 60;
					break;
				default:
					t += grid ? (double) (1 + r() % 60) : 0.5 + 60 * unit(r);
					break;
			}
			if (r() % 8 != 0)	/* else stays put */
			{
				x += 100 * (unit(r) - 0.5);
				y += 100 * (unit(r) - 0.5);
			}
			all.push_back(Fix{id, t, grid ? std::round(x) : x, grid ? std::round(y) : y});
		}
	}
	std::shuffle(all.begin(), all.end(), r);

	FixTable	f;

	for (const Fix &fix : all)
		f.add(fix.id, fix.t, fix.x, fix.y);
	return f;
}

FixTable
shuffled(const FixTable &f)
{
	std::vector<uint32_t> order(f.size());
	FixTable	out;

	for (uint32_t i = 0; i < f.size(); i++)
		order[i] = i;
	std::shuffle(order.begin(), order.end(), core_test::rng());
	for (uint32_t i : order)
		out.add(f.ids[i], f.t[i], f.x[i], f.y[i]);
	return out;
}

const GeoaccTrajectoryRules some_rules[] = {
	rules(INFINITY),
	rules(1800),
	rules(0),
	rules(600, 15),
	rules(1800, 0),
	rules(1800, INFINITY, 0),
	rules(1800, INFINITY, 10),
	rules(900, 20, 50),
	rules(1800, INFINITY, 10, GEOACC_SIMPLIFY_SYNCHRONIZED),
	rules(1800, INFINITY, INFINITY),
};

}								/* namespace */

/* --------------------------------------------------------- CPU twin */

TEST(make_trajectories_by_hand)
{
	FixTable	f;

	f.add(7, 30, 3, 0);
	f.add(7, 10, 1, 0);
	f.add(-2, 5, 0, 0);
	f.add(7, 20, 2, 9);			/* a duplicate time: (2, 1) has the smaller y */
	f.add(7, 20, 2, 1);
	f.add(7, 100, 4, 0);		/* after a gap of 70 s: a part of one fix */
	f.add(7, 200, 5, 0);		/* another gap */
	f.add(7, 210, 6, 0);
	f.add(-2, 6, 0, 1);

	Result		r = make(GEOACC_DEVICE_CPU, f, rules(60));

	CHECK(r.parts.size() == 3);
	CHECK(r.duplicates == 1 && r.single_fix_parts == 1);
	if (r.parts.size() == 3)
	{
		CHECK(r.parts[0].object == -2 && r.parts[0].number == 1 && r.parts[0].m == std::vector<double>({5, 6}));
		CHECK(r.parts[1].object == 7 && r.parts[1].number == 1 && r.parts[1].fixes == 3);
		CHECK(r.parts[1].y == std::vector<double>({0, 1, 0}));
		CHECK(r.parts[2].object == 7 && r.parts[2].number == 3 && r.parts[2].x == std::vector<double>({5, 6}));
	}
	CHECK(r == reference(f, rules(60)));

	/* a gap equal to max_gap does not split; a speed equal to max_speed does not either */
	FixTable	g;

	g.add(1, 0, 0, 0);
	g.add(1, 60, 30, 40);		/* 50 units in 60 s */
	g.add(1, 61, 30, 40);
	Result		same = make(GEOACC_DEVICE_CPU, g, rules(60, 50.0 / 60));

	CHECK(same.parts.size() == 1 && same.parts[0].fixes == 3);
	Result		split = make(GEOACC_DEVICE_CPU, g, rules(59.5));

	CHECK(split.parts.size() == 1 && split.parts[0].number == 2 && split.single_fix_parts == 1);
	CHECK(make(GEOACC_DEVICE_CPU, g, rules(60, 0.8)).parts.size() == 1);	/* 0.8 < 50 / 60: a jump */
	CHECK(make(GEOACC_DEVICE_CPU, g, rules(60, 0.8)).single_fix_parts == 1);
}

TEST(make_trajectories_edges)
{
	FixTable	empty;
	Result		r = make(GEOACC_DEVICE_CPU, empty, rules(60, 1, 5));

	CHECK(r.parts.empty() && r.duplicates == 0 && r.single_fix_parts == 0);

	FixTable	one;

	one.add(1, 0, 0, 0);
	r = make(GEOACC_DEVICE_CPU, one, rules(60));
	CHECK(r.parts.empty() && r.single_fix_parts == 1);

	/* all at one time: one fix, the one with the smallest x then y; -0 and +0 are one time, -0 x first */
	FixTable	same_time;

	same_time.add(1, 0.0, 2, 2);
	same_time.add(1, -0.0, 0.0, 5);
	same_time.add(1, 0.0, -0.0, 7);
	same_time.add(1, 0.0, 0.0, -1);
	same_time.add(1, 1.0, 9, 9);
	r = make(GEOACC_DEVICE_CPU, same_time, rules(INFINITY));
	CHECK(r.duplicates == 3 && r.parts.size() == 1);
	if (r.parts.size() == 1)
	{
		CHECK(std::signbit(r.parts[0].x[0]) && r.parts[0].y[0] == 7);
		CHECK(!std::signbit(r.parts[0].m[0]));	/* M is +0 */
	}
	CHECK(r == reference(same_time, rules(INFINITY)));

	/* extreme ids, and coordinates whose speed overflows to infinity */
	FixTable	extreme;

	extreme.add(INT64_MIN, 1, 0, 0);
	extreme.add(INT64_MAX, 1, 0, 0);
	extreme.add(INT64_MIN, 2, 1, 1);
	extreme.add(INT64_MAX, 2, 1e308, -1e308);
	extreme.add(0, 0, 0, 0);
	extreme.add(0, 1e300, 0, 0);
	for (const GeoaccTrajectoryRules &rr : some_rules)
		CHECK(make(GEOACC_DEVICE_CPU, extreme, rr) == reference(extreme, rr));
	r = make(GEOACC_DEVICE_CPU, extreme, rules(INFINITY, 1e300));
	CHECK(r.parts.size() == 2 && r.parts[0].object == INT64_MIN && r.parts[1].object == 0);

	/* max_gap 0: every fix is a part of its own */
	r = make(GEOACC_DEVICE_CPU, random_fixes(10, 50), rules(0));
	CHECK(r.parts.empty());
}

/* The same fixes with t in whole microseconds, as the SQL layer passes timestamps. */
FixTable
in_microseconds(const FixTable &f)
{
	FixTable	out;

	for (uint32_t i = 0; i < f.size(); i++)
		out.add(f.ids[i], std::round(f.t[i] * 1e6), f.x[i], f.y[i]);
	return out;
}

/*
 * Microsecond times near 2026 (1.8e15 us, exact in a double): a gap of
 * max_gap splits nothing, one microsecond more splits; the speed is per
 * second and M is in seconds.
 */
TEST(make_trajectories_microseconds)
{
	const double t0 = 1798761600e6;	/* 2027-01-01 in us since 1970 */
	FixTable	g;

	g.add(1, t0, 0, 0);
	g.add(1, t0 + 600e6, 600, 0);		/* exactly max_gap later, at 1 unit/s */
	g.add(1, t0 + 1200e6 + 1, 1200, 0);	/* max_gap and a microsecond later */
	g.add(1, t0 + 1200e6 + 2, 1200, 0);

	Result		r = make(GEOACC_DEVICE_CPU, g, rules(600e6, INFINITY, -1, GEOACC_SIMPLIFY_PLANAR, 1e6));

	CHECK(r.parts.size() == 2 && r.single_fix_parts == 0);
	if (r.parts.size() == 2)
	{
		CHECK(r.parts[0].fixes == 2 && r.parts[1].number == 2 && r.parts[1].fixes == 2);
		CHECK(r.parts[0].m == std::vector<double>({t0 / 1e6, t0 / 1e6 + 600}));
	}
	/* 1 unit/s is not above a max_speed of 1; a hair below it is */
	CHECK(make(GEOACC_DEVICE_CPU, g, rules(INFINITY, 1, -1, GEOACC_SIMPLIFY_PLANAR, 1e6)).parts.size() == 1);
	r = make(GEOACC_DEVICE_CPU, g, rules(INFINITY, 0.999999, -1, GEOACC_SIMPLIFY_PLANAR, 1e6));
	CHECK(r.parts.size() == 1 && r.single_fix_parts == 2);

	for (int round = 0; round < 4; round++)
	{
		FixTable	f = in_microseconds(random_fixes(300, 200));

		for (const GeoaccTrajectoryRules &s : some_rules)
		{
			GeoaccTrajectoryRules us = s;

			us.max_gap = s.max_gap * 1e6;
			us.time_unit = 1e6;
			Result		cpu = make(GEOACC_DEVICE_CPU, f, us);

			CHECK(cpu == reference(f, us));
			if (core_test::gpu_available())
				CHECK(make(GEOACC_DEVICE_GPU, f, us) == cpu);
		}
	}
}

TEST(make_trajectories_arguments)
{
	FixTable	f;

	f.add(1, 0, 0, 0);
	f.add(1, 1, 1, 1);
	make(GEOACC_DEVICE_CPU, f, rules(NAN), nullptr, GEOACC_ERR_INVALID_ARGUMENT);
	make(GEOACC_DEVICE_CPU, f, rules(-1), nullptr, GEOACC_ERR_INVALID_ARGUMENT);
	make(GEOACC_DEVICE_CPU, f, rules(1, -1), nullptr, GEOACC_ERR_INVALID_ARGUMENT);
	make(GEOACC_DEVICE_CPU, f, rules(1, NAN), nullptr, GEOACC_ERR_INVALID_ARGUMENT);
	make(GEOACC_DEVICE_CPU, f, GeoaccTrajectoryRules{1, 1, 1, GEOACC_SIMPLIFY_PLANAR, NAN, 1}, nullptr,
		 GEOACC_ERR_INVALID_ARGUMENT);
	make(GEOACC_DEVICE_CPU, f, GeoaccTrajectoryRules{1, 1, 1, GEOACC_SIMPLIFY_PLANAR, -2, 1}, nullptr,
		 GEOACC_ERR_INVALID_ARGUMENT);
	make(GEOACC_DEVICE_CPU, f, rules(1, 1, 1, GEOACC_SIMPLIFY_3D), nullptr, GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(strstr(geoacc_status_message(), "planar or the synchronized") != nullptr);
	f.add(1, NAN, 0, 0);
	make(GEOACC_DEVICE_CPU, f, rules(1), nullptr, GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(strstr(geoacc_status_message(), "fix 2 has a non-finite") != nullptr);
	f.t[2] = 2;
	f.y[2] = INFINITY;
	make(GEOACC_DEVICE_CPU, f, rules(1), nullptr, GEOACC_ERR_INVALID_ARGUMENT);
	f.y[2] = 0;
	make(GEOACC_DEVICE_CPU, f, rules(1));
}

TEST(make_trajectories_cpu_matches_reference)
{
	for (int round = 0; round < 4; round++)
	{
		FixTable	f = random_fixes(200, round < 2 ? 30 : 600);

		for (const GeoaccTrajectoryRules &r : some_rules)
			CHECK(make(GEOACC_DEVICE_CPU, f, r) == reference(f, r));
	}
}

TEST(make_trajectories_input_order)
{
	FixTable	f = random_fixes(300, 200);

	for (const GeoaccTrajectoryRules &r : some_rules)
	{
		Result		first = make(GEOACC_DEVICE_CPU, f, r);

		CHECK(first == make(GEOACC_DEVICE_CPU, shuffled(f), r));
		if (core_test::gpu_available())
			CHECK(first == make(GEOACC_DEVICE_GPU, shuffled(f), r));
	}
}

/* --------------------------------------------------------- GPU vs CPU */

TEST(gpu_make_trajectories_matches_cpu)
{
	REQUIRE_GPU();
	for (uint32_t max_fixes : {1u, 20u, 400u, 5000u})
	{
		FixTable	f = random_fixes(max_fixes < 1000 ? 3000 : 100, max_fixes);

		for (const GeoaccTrajectoryRules &r : some_rules)
		{
			GeoaccMakeTrajectoriesTiming timing;
			Result		gpu = make(GEOACC_DEVICE_GPU, f, r, &timing);

			CHECK(gpu == make(GEOACC_DEVICE_CPU, f, r));
			CHECK(timing.pieces == (f.size() > 0) && timing.runs == 0 && timing.cpu_fixes == 0);
		}
	}

	FixTable	none;

	CHECK(make(GEOACC_DEVICE_GPU, none, rules(1, 1, 1)).parts.empty());
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

/* One object: keys equal in every object bit (the sort skips that pass), and all at one time. */
TEST(gpu_make_trajectories_one_object)
{
	REQUIRE_GPU();

	FixTable	f = random_fixes(1, 100000);
	FixTable	same_time;

	for (uint32_t i = 0; i < f.size(); i++)
		f.ids[i] = 42;
	for (uint32_t i = 0; i < 50000; i++)
		same_time.add(3, 1.5e9, (double) (core_test::rng()() % 100), (double) (core_test::rng()() % 100));
	for (const GeoaccTrajectoryRules &r : some_rules)
	{
		CHECK(make(GEOACC_DEVICE_GPU, f, r) == make(GEOACC_DEVICE_CPU, f, r));
		CHECK(make(GEOACC_DEVICE_GPU, same_time, r) == make(GEOACC_DEVICE_CPU, same_time, r));
	}
}

/*
 * Memory caps: the fixes sorted in runs merged on the host, then pieces of
 * whole objects; an object too large for the cap alone on the CPU twin.
 */
TEST(gpu_make_trajectories_under_a_memory_cap)
{
	REQUIRE_GPU();

	const uint32_t large = 60000;	/* fits a 16 MB cap as one piece, not a 4 MB one */
	FixTable	f = random_fixes(2000, 300);
	double		t = 1.6e9;

	for (uint32_t i = 0; i < large; i++)
	{
		t += i % 500 == 0 ? 4000 : 1 + core_test::rng()() % 30;
		f.add(77, t, 500000 + 0.5 * i, 4000000 + (double) (core_test::rng()() % 1000));
	}
	f = shuffled(f);
	for (uint64_t cap : {geoacc_make_trajectories_device_bytes(f.size()), (uint64_t) 16 << 20, (uint64_t) 4 << 20})
		for (const GeoaccTrajectoryRules &r : {some_rules[1], some_rules[7], some_rules[8]})
		{
			GeoaccMakeTrajectoriesTiming timing;

			geoacc_gpu_set_memory_limit(cap);
			Result		gpu = make(GEOACC_DEVICE_GPU, f, r, &timing);

			geoacc_gpu_set_memory_limit(0);
			CHECK(gpu == make(GEOACC_DEVICE_CPU, f, r));
			if (cap == geoacc_make_trajectories_device_bytes(f.size()))
				CHECK(timing.pieces == 1 && timing.runs == 0);	/* the estimate holds: one piece fits */
			else
			{
				CHECK(timing.runs > 1 && timing.pieces > 1);
				CHECK(timing.cpu_fixes == (cap == ((uint64_t) 4 << 20) ? large : 0));
				CHECK(timing.host_ms > 0);
			}
			CHECK(geoacc_gpu_memory_in_use() == 0);
		}

	/* a cap below one run's fixed needs: all on the CPU twin */
	GeoaccMakeTrajectoriesTiming timing;

	geoacc_gpu_set_memory_limit(1 << 20);
	Result		gpu = make(GEOACC_DEVICE_GPU, f, some_rules[1], &timing);

	geoacc_gpu_set_memory_limit(0);
	CHECK(gpu == make(GEOACC_DEVICE_CPU, f, some_rules[1]));
	CHECK(timing.cpu_fixes == f.size() && timing.pieces == 0);
}

/* A device allocation that fails is reported, and nothing stays allocated. */
TEST(gpu_make_trajectories_allocation_failure)
{
	REQUIRE_GPU();

	FixTable	f = random_fixes(100, 100);

	geoacc_gpu_fail_allocations(1);
	make(GEOACC_DEVICE_GPU, f, some_rules[6], nullptr, GEOACC_ERR_DEVICE_MEMORY);
	geoacc_gpu_fail_allocations(0);
	CHECK(geoacc_gpu_memory_in_use() == 0);
	CHECK(make(GEOACC_DEVICE_GPU, f, some_rules[6]) == make(GEOACC_DEVICE_CPU, f, some_rules[6]));
}
