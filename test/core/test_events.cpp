/*
 * test_events.cpp
 *
 * Vessel events: the CPU twin against references written here, on fresh
 * random trajectories: encounters against the segment join's rows merged
 * pair by pair (sorted by start, a new encounter where a start lies more
 * than max_gap after every end before it), their median speeds against the
 * segments' speeds sorted; stops against the rule run with the box
 * recomputed from scratch; zone visits on hand-checked zones (a hole, a
 * multipolygon, a corner touched, an edge followed) and on random ones
 * against dense sampling with a point-in-polygon test of their own.  Then
 * the GPU against the CPU twin to the bit, with tiny segment-join buffers so
 * that encounters are merged from many batches.  Bad input.
 */
#include "core_test.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace
{

struct Tracks
{
	std::vector<uint32_t> offsets{0};
	std::vector<double> x, y, m;

	void		add(double px, double py, double pm)
	{
		x.push_back(px);
		y.push_back(py);
		m.push_back(pm);
	}
	void		close() { offsets.push_back((uint32_t) x.size()); }
	uint32_t	count() const { return (uint32_t) offsets.size() - 1; }

	GeoaccTrajectories view() const
	{
		return GeoaccTrajectories{count(), offsets.data(), x.data(), y.data(), nullptr, m.data()};
	}
};

double
uniform(double lo, double hi)
{
	return std::uniform_real_distribution<double>(lo, hi)(core_test::rng());
}

int
uniform_int(int lo, int hi)
{
	return std::uniform_int_distribution<int>(lo, hi)(core_test::rng());
}

/*
 * count random tracks around a few harbours: sailing, drifting and lying
 * still (repeated positions), with fixes 1 s to 10 min apart.
 */
Tracks
random_tracks(int count, int max_points, double t0)
{
	Tracks		t;
	const double centers[3][2] = {{0, 0}, {1500, 300}, {700, 1800}};

	for (int s = 0; s < count; s++)
	{
		const int	n = uniform_int(1, max_points);
		const int	c = uniform_int(0, 2);
		double		px = centers[c][0] + uniform(-300, 300);
		double		py = centers[c][1] + uniform(-300, 300);
		double		time = t0 + uniform(0, 3600);
		int			mode = uniform_int(0, 2);

		for (int i = 0; i < n; i++)
		{
			t.add(px, py, time);
			if (uniform_int(0, 9) == 0)
				mode = uniform_int(0, 2);

			const double step = mode == 0 ? uniform(5, 80) : (mode == 1 ? uniform(0, 4) : 0);
			const double angle = uniform(0, 2 * M_PI);

			px += step * std::cos(angle);
			py += step * std::sin(angle);
			time += std::pow(10.0, uniform(0, 2.8));
		}
		t.close();
	}
	return t;
}

/* ----------------------------------------------------------- encounters */

struct Events
{
	std::vector<GeoaccEncounter> items;
	GeoaccStatus status;
};

Events
encounters(GeoaccDevice device, const Tracks &a, const Tracks *b, double d, double gap, bool speeds)
{
	GeoaccEncounters out;
	const GeoaccTrajectories va = a.view();
	GeoaccTrajectories vb;

	if (b)
		vb = b->view();

	Events		e;

	e.status = geoacc_encounters(device, &va, b ? &vb : nullptr, d, gap, GEOACC_JOIN_AUTO, speeds, &out, nullptr);
	if (e.status == GEOACC_OK)
		e.items.assign(out.items, out.items + out.count);
	geoacc_events_free(out.storage);
	return e;
}

/* Every row of a segment join (CPU). */
std::vector<GeoaccJoinRow>
join_rows(const Tracks &a, const Tracks *b, double d)
{
	const GeoaccTrajectories va = a.view();
	GeoaccTrajectories vb;
	GeoaccSegmentJoin *j = nullptr;
	std::vector<GeoaccJoinRow> rows,
				batch(1000);
	uint32_t	n = 0;

	if (b)
		vb = b->view();
	CHECK_OK(geoacc_segment_join_open(GEOACC_DEVICE_CPU, &va, b ? &vb : nullptr, d, GEOACC_JOIN_AUTO, &j));
	while (geoacc_segment_join_next(j, batch.data(), (uint32_t) batch.size(), &n) == GEOACC_OK && n > 0)
		rows.insert(rows.end(), batch.begin(), batch.begin() + n);
	geoacc_segment_join_close(j);
	return rows;
}

/* The reference: each pair's rows by start, swept; the closest approach by (distance, time, segments). */
std::vector<GeoaccEncounter>
encounters_reference(std::vector<GeoaccJoinRow> rows, double gap)
{
	std::vector<GeoaccEncounter> out;

	std::stable_sort(rows.begin(), rows.end(), [](const GeoaccJoinRow &x, const GeoaccJoinRow &y) {
		if (x.a_traj != y.a_traj)
			return x.a_traj < y.a_traj;
		if (x.b_traj != y.b_traj)
			return x.b_traj < y.b_traj;
		return x.t_start < y.t_start;
	});
	for (size_t i = 0; i < rows.size(); i++)
	{
		const GeoaccJoinRow &r = rows[i];
		const bool	same = !out.empty() && out.back().a_traj == r.a_traj && out.back().b_traj == r.b_traj;

		if (!same || r.t_start > out.back().end + gap)
		{
			out.push_back({r.a_traj, r.b_traj, r.a_seg, r.b_seg, r.t_start, r.t_end, r.cpa_time, r.cpa_distance, 0, 0});
			continue;
		}

		GeoaccEncounter &e = out.back();

		e.end = std::max(e.end, r.t_end);
		if (r.cpa_distance < e.cpa_distance
			|| (r.cpa_distance == e.cpa_distance && (r.cpa_time < e.cpa_time
				|| (r.cpa_time == e.cpa_time && (r.a_seg < e.a_seg || (r.a_seg == e.a_seg && r.b_seg < e.b_seg))))))
		{
			e.cpa_distance = r.cpa_distance;
			e.cpa_time = r.cpa_time;
			e.a_seg = r.a_seg;
			e.b_seg = r.b_seg;
		}
	}
	return out;
}

bool
same_encounter(const GeoaccEncounter &x, const GeoaccEncounter &y, bool speeds)
{
	return x.a_traj == y.a_traj && x.b_traj == y.b_traj && x.a_seg == y.a_seg && x.b_seg == y.b_seg
		&& x.start == y.start && x.end == y.end && x.cpa_time == y.cpa_time && x.cpa_distance == y.cpa_distance
		&& (!speeds || (memcmp(&x.a_speed, &y.a_speed, sizeof(double)) == 0
						&& memcmp(&x.b_speed, &y.b_speed, sizeof(double)) == 0));
}

bool
same_encounters(const std::vector<GeoaccEncounter> &x, const std::vector<GeoaccEncounter> &y, bool speeds)
{
	if (x.size() != y.size())
		return false;
	for (size_t i = 0; i < x.size(); i++)
		if (!same_encounter(x[i], y[i], speeds))
			return false;
	return true;
}

/* The median speed by the definition: every segment of the track looked at. */
double
median_speed_reference(const Tracks &t, uint32_t traj, double start, double end)
{
	std::vector<double> v;

	for (uint32_t i = t.offsets[traj]; i + 1 < t.offsets[traj + 1]; i++)
	{
		const bool	takes = end > start ? (t.m[i] < end && t.m[i + 1] > start)
			: (t.m[i] <= start && t.m[i + 1] >= start);

		if (takes)
		{
			const double dx = t.x[i + 1] - t.x[i],
						dy = t.y[i + 1] - t.y[i];

			v.push_back(std::sqrt(dx * dx + dy * dy + 0.0) / (t.m[i + 1] - t.m[i]));
		}
	}
	if (v.empty())
		return NAN;
	std::sort(v.begin(), v.end());
	return v.size() % 2 ? v[v.size() / 2] : v[v.size() / 2 - 1] + (v[v.size() / 2] - v[v.size() / 2 - 1]) * 0.5;
}

/* ---------------------------------------------------------------- stops */

std::vector<GeoaccStop>
stops(GeoaccDevice device, const Tracks &t, double d, double dur, GeoaccStatus *status = nullptr)
{
	GeoaccStops out;
	const GeoaccTrajectories v = t.view();
	std::vector<GeoaccStop> r;
	GeoaccStatus s = geoacc_stops(device, &v, d, dur, &out);

	if (status)
		*status = s;
	else
		CHECK_OK(s);
	if (s == GEOACC_OK)
		r.assign(out.items, out.items + out.count);
	geoacc_events_free(out.storage);
	return r;
}

/* Whether points i .. j of t fit a box of diagonal d: recomputed from scratch. */
bool
fits(const Tracks &t, uint32_t i, uint32_t j, double d)
{
	double		lx = t.x[i],
				hx = t.x[i],
				ly = t.y[i],
				hy = t.y[i];

	for (uint32_t k = i; k <= j; k++)
	{
		lx = std::min(lx, t.x[k]);
		hx = std::max(hx, t.x[k]);
		ly = std::min(ly, t.y[k]);
		hy = std::max(hy, t.y[k]);
	}
	return (hx - lx) * (hx - lx) + (hy - ly) * (hy - ly) + 0.0 <= d * d;
}

std::vector<GeoaccStop>
stops_reference(const Tracks &t, double d, double dur)
{
	std::vector<GeoaccStop> out;

	for (uint32_t s = 0; s < t.count(); s++)
	{
		const uint32_t p0 = t.offsets[s],
					p1 = t.offsets[s + 1];
		uint32_t	i = p0;

		if (p1 < p0 + 2)
			continue;
		for (uint32_t j = p0 + 1; j < p1; j++)
		{
			if (fits(t, i, j, d))
				continue;
			if (j - 1 > i && t.m[j - 1] - t.m[i] >= dur)
			{
				out.push_back({s, i, j - 1});
				i = j;
				continue;
			}
			i++;
			while (!fits(t, i, j, d))
				i++;
		}
		if (p1 - 1 > i && t.m[p1 - 1] - t.m[i] >= dur)
			out.push_back({s, i, p1 - 1});
	}
	return out;
}

bool
same_stops(const std::vector<GeoaccStop> &x, const std::vector<GeoaccStop> &y)
{
	if (x.size() != y.size())
		return false;
	for (size_t i = 0; i < x.size(); i++)
		if (x[i].traj != y[i].traj || x[i].first != y[i].first || x[i].last != y[i].last)
			return false;
	return true;
}

/* ---------------------------------------------------------- zone visits */

struct Zones
{
	std::vector<uint32_t> zone_rings{0};
	std::vector<uint32_t> ring_points{0};
	std::vector<double> x, y;

	void		ring(std::vector<std::pair<double, double>> pts)
	{
		for (auto &p : pts)
		{
			x.push_back(p.first);
			y.push_back(p.second);
		}
		ring_points.push_back((uint32_t) x.size());
	}
	void		box(double x0, double y0, double x1, double y1)
	{
		ring({{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}, {x0, y0}});
	}
	void		close() { zone_rings.push_back((uint32_t) ring_points.size() - 1); }
	GeoaccZones view() const
	{
		return GeoaccZones{(uint32_t) zone_rings.size() - 1, zone_rings.data(), ring_points.data(), x.data(),
			y.data()};
	}
};

std::vector<GeoaccVisit>
visits(GeoaccDevice device, const Tracks &t, const Zones &z, GeoaccStatus *status = nullptr)
{
	GeoaccVisits out;
	const GeoaccTrajectories v = t.view();
	const GeoaccZones zv = z.view();
	std::vector<GeoaccVisit> r;
	GeoaccStatus s = geoacc_zone_visits(device, &v, &zv, &out);

	if (status)
		*status = s;
	else
		CHECK_OK(s);
	if (s == GEOACC_OK)
		r.assign(out.items, out.items + out.count);
	geoacc_events_free(out.storage);
	return r;
}

bool
same_visits(const std::vector<GeoaccVisit> &x, const std::vector<GeoaccVisit> &y)
{
	if (x.size() != y.size())
		return false;
	for (size_t i = 0; i < x.size(); i++)
		if (x[i].traj != y[i].traj || x[i].zone != y[i].zone || x[i].enter != y[i].enter || x[i].exit != y[i].exit)
			return false;
	return true;
}

/* Winding number of the zone's rings around (px, py), its own way: inside where it is odd (even-odd rule). */
bool
inside_reference(const Zones &z, uint32_t zone, double px, double py)
{
	int			crossings = 0;

	for (uint32_t r = z.zone_rings[zone]; r < z.zone_rings[zone + 1]; r++)
		for (uint32_t k = z.ring_points[r]; k + 1 < z.ring_points[r + 1]; k++)
		{
			const long double ax = z.x[k],
						ay = z.y[k],
						bx = z.x[k + 1],
						by = z.y[k + 1];

			if ((ay <= py && by > py) || (by <= py && ay > py))
			{
				const long double xc = ax + (py - ay) * (bx - ax) / (by - ay);

				if (px < xc)
					crossings++;
			}
		}
	return crossings % 2 == 1;
}

/* A random star-shaped zone around (cx, cy), with a hole at times, as one or two polygons. */
void
random_zone(Zones &z, double cx, double cy)
{
	const int	parts = uniform_int(1, 2);

	for (int p = 0; p < parts; p++)
	{
		const double ox = cx + p * 900,
					oy = cy;
		const int	n = uniform_int(3, 24);
		const double r = uniform(100, 400);
		std::vector<std::pair<double, double>> pts;

		for (int i = 0; i < n; i++)
		{
			const double a = 2 * M_PI * i / n;
			const double rr = r * uniform(0.5, 1);

			pts.push_back({ox + rr * std::cos(a), oy + rr * std::sin(a)});
		}
		pts.push_back(pts.front());
		z.ring(pts);
		if (uniform_int(0, 2) == 0)
			z.box(ox - r * 0.2, oy - r * 0.2, ox + r * 0.2, oy + r * 0.2);
	}
	z.close();
}

}								/* namespace */

/* --------------------------------------------------------------- the tests */

TEST(events_encounters_match_merged_join_rows)
{
	for (int round = 0; round < 6; round++)
	{
		const double t0 = uniform_int(0, 1) ? 1.6e9 : 0;
		Tracks		a = random_tracks(uniform_int(20, 120), 80, t0);
		Tracks		b = random_tracks(uniform_int(1, 60), 80, t0);

		for (double d : {10.0, 60.0, 300.0})
			for (double gap : {0.0, 30.0, 600.0})
			{
				const Events self = encounters(GEOACC_DEVICE_CPU, a, nullptr, d, gap, false);
				const Events two = encounters(GEOACC_DEVICE_CPU, a, &b, d, gap, false);

				CHECK(self.status == GEOACC_OK && two.status == GEOACC_OK);
				CHECK(same_encounters(self.items, encounters_reference(join_rows(a, nullptr, d), gap), false));
				CHECK(same_encounters(two.items, encounters_reference(join_rows(a, &b, d), gap), false));
			}
	}
}

TEST(events_encounters_hand_checked)
{
	Tracks		t;

	/* 1 sails east 10 m/s; 2 alongside 30 m off, drifts off, comes back 20 m off; 3 lies still 40 m off */
	for (double v : {0.0, 100.0, 200.0, 300.0, 400.0})
		t.add(v * 10, 0, v);
	t.close();
	t.add(0, 30, 0);
	t.add(1000, 30, 100);
	t.add(1500, 200, 150);
	t.add(2000, 20, 200);
	t.add(4000, 20, 400);
	t.close();
	t.add(3500, 40, 0);
	t.add(3500, 40, 1000);
	t.close();

	Events		e = encounters(GEOACC_DEVICE_CPU, t, nullptr, 50, 0, true);

	CHECK(e.status == GEOACC_OK);
	CHECK(e.items.size() == 4);
	if (e.items.size() == 4)
	{
		CHECK(e.items[0].a_traj == 0 && e.items[0].b_traj == 1 && e.items[0].start == 0 && e.items[0].cpa_time == 0
			  && e.items[0].cpa_distance == 30);
		CHECK(e.items[1].a_traj == 0 && e.items[1].b_traj == 1 && e.items[1].end == 400
			  && e.items[1].cpa_distance == 20 && e.items[1].cpa_time == 200 && e.items[1].a_seg == 1);
		/* the closest approach at t = 200 is on segments 1 and 2 of both: the lower ones */
		CHECK(e.items[2].b_traj == 2 && e.items[2].start == 347 && e.items[2].end == 353 && e.items[2].a_speed == 10
			  && e.items[2].b_speed == 0);
	}
	/* a gap of 100 s joins the two meetings of 1 and 2 */
	e = encounters(GEOACC_DEVICE_CPU, t, nullptr, 50, 100, false);
	CHECK(e.items.size() == 3 && e.items[0].start == 0 && e.items[0].end == 400);
}

TEST(events_encounter_speeds_match_definition)
{
	Tracks		a = random_tracks(80, 60, 1.6e9);
	const Events e = encounters(GEOACC_DEVICE_CPU, a, nullptr, 100, 60, true);
	bool		all = true;

	CHECK(e.items.size() > 10);
	for (const GeoaccEncounter &x : e.items)
	{
		const double sa = median_speed_reference(a, x.a_traj, x.start, x.end);
		const double sb = median_speed_reference(a, x.b_traj, x.start, x.end);

		all = all && memcmp(&sa, &x.a_speed, sizeof(double)) == 0 && memcmp(&sb, &x.b_speed, sizeof(double)) == 0;
	}
	CHECK(all);
}

TEST(events_stops_match_reference)
{
	for (int round = 0; round < 5; round++)
	{
		Tracks		t = random_tracks(uniform_int(20, 200), 300, round % 2 ? 1.6e9 : 0);

		for (double d : {0.0, 5.0, 40.0, 200.0})
			for (double dur : {0.0, 60.0, 900.0})
				CHECK(same_stops(stops(GEOACC_DEVICE_CPU, t, d, dur), stops_reference(t, d, dur)));
	}
}

TEST(events_stops_hand_checked)
{
	Tracks		t;

	t.add(0, 0, 0);
	t.add(1000, 0, 100);
	t.add(1010, 5, 200);
	t.add(1005, -5, 400);
	t.add(1012, 8, 700);
	t.add(2000, 0, 800);
	t.close();
	t.add(5, 5, 0);				/* one fix: no stop */
	t.close();

	std::vector<GeoaccStop> s = stops(GEOACC_DEVICE_CPU, t, 20, 300);

	CHECK(s.size() == 1 && s[0].traj == 0 && s[0].first == 1 && s[0].last == 4);
	/* fixes 1 .. 3 fit a box of 10 by 10 m (diagonal 14.14 m) for 300 s; no run of 300 s fits 14.1 m */
	CHECK(stops(GEOACC_DEVICE_CPU, t, 14.1, 300).empty());
	s = stops(GEOACC_DEVICE_CPU, t, 14.15, 300);
	CHECK(s.size() == 1 && s[0].first == 1 && s[0].last == 3);
	CHECK(stops(GEOACC_DEVICE_CPU, t, 20, 600.5).empty());
}

TEST(events_zone_visits_hand_checked)
{
	Zones		z;
	Tracks		t;

	z.box(0, 0, 100, 100);
	z.close();
	z.box(0, 0, 100, 100);
	z.box(40, 40, 60, 60);
	z.close();
	z.box(200, 0, 300, 100);
	z.box(400, 0, 500, 100);
	z.close();
	t.add(50, 50, 0);
	t.add(600, 50, 550);
	t.close();
	/* touches zone 0's corner at t = 10, then follows its top edge from t = 20 to 70 */
	t.add(110, 110, 0);
	t.add(100, 100, 10);
	t.add(110, 110, 15);
	t.add(100, 100, 20);
	t.add(50, 100, 70);
	t.add(50, 150, 120);
	t.close();

	const std::vector<GeoaccVisit> v = visits(GEOACC_DEVICE_CPU, t, z);
	const GeoaccVisit expected[] = {
		{0, 0, 0, 50}, {0, 1, 10, 50}, {0, 2, 150, 250}, {0, 2, 350, 450}, {1, 0, 20, 70}, {1, 1, 20, 70}
	};

	CHECK(v.size() == 6);
	for (size_t i = 0; i < v.size() && i < 6; i++)
		CHECK(v[i].traj == expected[i].traj && v[i].zone == expected[i].zone && v[i].enter == expected[i].enter
			  && v[i].exit == expected[i].exit);
}

TEST(events_zone_visits_match_sampling)
{
	Zones		z;

	for (int k = 0; k < 12; k++)
		random_zone(z, uniform(-200, 1800), uniform(-200, 2000));

	Tracks		t = random_tracks(150, 120, 0);
	const std::vector<GeoaccVisit> v = visits(GEOACC_DEVICE_CPU, t, z);
	uint64_t	samples = 0,
				wrong = 0;

	CHECK(v.size() > 20);
	/* every sample of every segment inside a zone (by the reference's test) lies in one of its visits, and
	 * every sample outside in none (samples within 1e-6 s of a visit's ends are left out) */
	for (uint32_t s = 0; s < t.count(); s++)
		for (uint32_t i = t.offsets[s]; i + 1 < t.offsets[s + 1]; i++)
			for (int q = 1; q < 16; q++)
			{
				const double u = q / 16.0;
				const double px = t.x[i] + (t.x[i + 1] - t.x[i]) * u,
							py = t.y[i] + (t.y[i + 1] - t.y[i]) * u,
							tm = t.m[i] + (t.m[i + 1] - t.m[i]) * u;

				for (uint32_t zone = 0; zone + 1 < z.zone_rings.size(); zone++)
				{
					bool		in_visit = false,
								near_end = false;

					for (const GeoaccVisit &x : v)
						if (x.traj == s && x.zone == zone)
						{
							in_visit = in_visit || (tm >= x.enter && tm <= x.exit);
							near_end = near_end || std::fabs(tm - x.enter) < 1e-6 || std::fabs(tm - x.exit) < 1e-6;
						}
					if (near_end)
						continue;
					samples++;
					wrong += in_visit != inside_reference(z, zone, px, py);
				}
			}
	CHECK(samples > 10000);
	CHECK(wrong == 0);
	if (wrong)
		fprintf(stderr, "    %llu of %llu samples disagree\n", (unsigned long long) wrong,
				(unsigned long long) samples);
}

TEST(events_reject_bad_input)
{
	Tracks		t;
	GeoaccStatus status;
	GeoaccEncounters e;

	t.add(0, 0, 0);
	t.add(1, 0, 0);				/* M does not increase */
	t.close();

	const GeoaccTrajectories v = t.view();

	CHECK(geoacc_encounters(GEOACC_DEVICE_CPU, &v, nullptr, 10, -1, GEOACC_JOIN_AUTO, 0, &e, nullptr)
		  == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_encounters(GEOACC_DEVICE_CPU, &v, nullptr, 10, 0, GEOACC_JOIN_AUTO, 0, &e, nullptr)
		  == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(e.storage == nullptr && e.count == 0);
	stops(GEOACC_DEVICE_CPU, t, 10, 0, &status);
	CHECK(status == GEOACC_ERR_INVALID_ARGUMENT);
	t.m[1] = 1;
	stops(GEOACC_DEVICE_CPU, t, NAN, 0, &status);
	CHECK(status == GEOACC_ERR_INVALID_ARGUMENT);
	stops(GEOACC_DEVICE_CPU, t, 10, -1, &status);
	CHECK(status == GEOACC_ERR_INVALID_ARGUMENT);

	Zones		open;

	open.ring({{0, 0}, {1, 0}, {1, 1}, {0, 1}});	/* not closed */
	open.close();
	visits(GEOACC_DEVICE_CPU, t, open, &status);
	CHECK(status == GEOACC_ERR_INVALID_ARGUMENT);

	Zones		small;

	small.ring({{0, 0}, {1, 0}, {0, 0}});
	small.close();
	visits(GEOACC_DEVICE_CPU, t, small, &status);
	CHECK(status == GEOACC_ERR_INVALID_ARGUMENT);

	Zones		none;			/* no zones, no trajectories: nothing, no error */

	CHECK(visits(GEOACC_DEVICE_CPU, t, none).empty());
	CHECK(visits(GEOACC_DEVICE_CPU, Tracks(), open, &status).empty() && status == GEOACC_ERR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------ GPU against CPU */

TEST(events_gpu_encounters_match_cpu)
{
	REQUIRE_GPU();
	for (int round = 0; round < 4; round++)
	{
		Tracks		a = random_tracks(uniform_int(50, 200), 80, 1.6e9);
		Tracks		b = random_tracks(uniform_int(1, 100), 80, 1.6e9);

		for (double d : {10.0, 100.0, 400.0})
			for (double gap : {0.0, 120.0})
			{
				const Events cpu = encounters(GEOACC_DEVICE_CPU, a, &b, d, gap, true);
				const Events gpu = encounters(GEOACC_DEVICE_GPU, a, &b, d, gap, true);
				const Events cpu_self = encounters(GEOACC_DEVICE_CPU, a, nullptr, d, gap, true);
				const Events gpu_self = encounters(GEOACC_DEVICE_GPU, a, nullptr, d, gap, true);

				CHECK(gpu.status == GEOACC_OK && gpu_self.status == GEOACC_OK);
				CHECK(same_encounters(gpu.items, cpu.items, true));
				CHECK(same_encounters(gpu_self.items, cpu_self.items, true));
			}
	}
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

TEST(events_gpu_encounters_from_many_batches)
{
	REQUIRE_GPU();
	/* 2 slots a query, 64 a batch: every pair's segment pairs come in many batches, merged on the host */
	Tracks		a = random_tracks(120, 60, 0);
	const Events cpu = encounters(GEOACC_DEVICE_CPU, a, nullptr, 250, 60, false);

	geoacc_segment_join_set_buffers(2, 64);
	const Events gpu = encounters(GEOACC_DEVICE_GPU, a, nullptr, 250, 60, false);

	geoacc_segment_join_set_buffers(0, 0);
	CHECK(!cpu.items.empty());
	CHECK(same_encounters(gpu.items, cpu.items, false));
}

TEST(events_gpu_stops_and_visits_match_cpu)
{
	REQUIRE_GPU();
	Tracks		t = random_tracks(300, 300, 1.6e9);
	Zones		z;

	for (int k = 0; k < 40; k++)
		random_zone(z, uniform(-300, 1800), uniform(-300, 2000));
	for (double d : {0.0, 20.0, 150.0})
		for (double dur : {0.0, 300.0})
			CHECK(same_stops(stops(GEOACC_DEVICE_GPU, t, d, dur), stops(GEOACC_DEVICE_CPU, t, d, dur)));
	CHECK(same_visits(visits(GEOACC_DEVICE_GPU, t, z), visits(GEOACC_DEVICE_CPU, t, z)));
	CHECK(geoacc_gpu_memory_in_use() == 0);
}
