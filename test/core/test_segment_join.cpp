/*
 * test_segment_join.cpp
 *
 * Segment join: every method of the CPU twin against a brute-force
 * reference written here in long double (every pair of segments, the
 * definition: positions interpolated at the ends of the common span, the
 * quadratic of their difference solved directly) on fresh random
 * trajectories (uniform, clustered, long and short segments, 2D and 3D,
 * epoch times) and on real AIS tracks; the methods against each other to the
 * bit; hand-checked cases; bad input; cancellation.  Then the GPU against
 * the CPU twin to the bit, with tiny buffers (overflow and batches) and tiny
 * memory caps (chunks of the entries), and one device allocation per call.
 */
#include "core_test.h"
#include "segment_join.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

namespace
{

const GeoaccJoinMethod all_methods[] = {
	GEOACC_JOIN_SPATIAL, GEOACC_JOIN_TEMPORAL, GEOACC_JOIN_SPATIOTEMPORAL, GEOACC_JOIN_AUTO
};

/* Trajectories held in vectors. */
struct Tracks
{
	std::vector<uint32_t> offsets{0};
	std::vector<double> x, y, z, m;
	bool		with_z = false;

	void		add(double px, double py, double pz, double pm)
	{
		x.push_back(px);
		y.push_back(py);
		z.push_back(pz);
		m.push_back(pm);
	}
	void		close() { offsets.push_back((uint32_t) x.size()); }
	uint32_t	count() const { return (uint32_t) offsets.size() - 1; }

	GeoaccTrajectories view() const
	{
		return GeoaccTrajectories{count(), offsets.data(), x.data(), y.data(), with_z ? z.data() : nullptr,
			m.data()};
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

/* The shapes of random sets. */
enum Shape
{
	UNIFORM,					/* random walks over a 2 km square */
	CLUSTERED,					/* tracks around three harbours, 200 m wide */
	LONG_AND_SHORT				/* steps of 1 m to 2 km, a few stationary stretches */
};

/* count random trajectories of 1 to max_points points, times from t0. */
Tracks
random_tracks(Shape shape, int count, int max_points, bool with_z, double t0)
{
	Tracks		t;
	const double centers[3][2] = {{0, 0}, {1500, 300}, {700, 1800}};

	t.with_z = with_z;
	for (int s = 0; s < count; s++)
	{
		const int	n = uniform_int(1, max_points);
		const int	c = uniform_int(0, 2);
		double		px = shape == CLUSTERED ? centers[c][0] + uniform(-100, 100) : uniform(0, 2000);
		double		py = shape == CLUSTERED ? centers[c][1] + uniform(-100, 100) : uniform(0, 2000);
		double		pz = uniform(0, 30);
		double		time = t0 + uniform(0, 600);

		for (int i = 0; i < n; i++)
		{
			t.add(px, py, pz, time);

			double		step = shape == LONG_AND_SHORT ? (uniform_int(0, 5) == 0 ? 0 : std::pow(10.0, uniform(0, 3.3)))
				: shape == CLUSTERED ? uniform(0, 20) : uniform(0, 60);
			double		angle = uniform(0, 2 * M_PI);

			px += step * std::cos(angle);
			py += step * std::sin(angle);
			pz += uniform(-2, 2);
			time += shape == LONG_AND_SHORT ? std::pow(10.0, uniform(-1, 2.5)) : uniform(1, 60);
		}
		t.close();
	}
	return t;
}

struct Result
{
	std::vector<GeoaccJoinRow> rows;
	GeoaccJoinStats stats;
	GeoaccStatus status;
};

/* Every row of an open join into r, `capacity` at a time, then its statistics; the join is closed. */
void
fetch_rows(GeoaccSegmentJoin *j, uint32_t capacity, Result &r)
{
	std::vector<GeoaccJoinRow> buffer(capacity);
	uint32_t	n = 0;

	do
	{
		r.status = geoacc_segment_join_next(j, buffer.data(), capacity, &n);
		r.rows.insert(r.rows.end(), buffer.begin(), buffer.begin() + n);
	} while (r.status == GEOACC_OK && n > 0);
	geoacc_segment_join_stats(j, &r.stats);
	geoacc_segment_join_close(j);
}

/* All rows of a join, fetched `capacity` at a time. */
Result
join(GeoaccDevice device, const Tracks &a, const Tracks *b, double d, GeoaccJoinMethod method,
	 uint32_t capacity = 1000)
{
	Result		r;
	GeoaccTrajectories va = a.view();
	GeoaccTrajectories vb = b ? b->view() : GeoaccTrajectories();
	GeoaccSegmentJoin *j = nullptr;

	memset(&r.stats, 0, sizeof(r.stats));
	r.status = geoacc_segment_join_open(device, &va, b ? &vb : nullptr, d, method, &j);
	if (r.status == GEOACC_OK)
		fetch_rows(j, capacity, r);
	return r;
}

/* All rows of a join of a against prepared entries. */
Result
join_prepared(GeoaccJoinEntries *entries, const Tracks &a, double d, GeoaccJoinMethod method,
			  uint32_t capacity = 1000)
{
	Result		r;
	GeoaccTrajectories va = a.view();
	GeoaccSegmentJoin *j = nullptr;

	memset(&r.stats, 0, sizeof(r.stats));
	r.status = geoacc_segment_join_open_entries(&va, entries, d, method, &j);
	if (r.status == GEOACC_OK)
		fetch_rows(j, capacity, r);
	return r;
}

bool
same_rows(const std::vector<GeoaccJoinRow> &x, const std::vector<GeoaccJoinRow> &y)
{
	return x.size() == y.size() && memcmp(x.data(), y.data(), x.size() * sizeof(GeoaccJoinRow)) == 0;
}

/* ---------------------------------------------------- the brute force */

typedef long double ld;

struct RefRow
{
	ld			t_start,
				t_end,
				cpa_time,
				cpa_distance;
	bool		borderline;		/* the closest approach is within rounding of the distance */
};

typedef std::map<std::array<uint32_t, 4>, RefRow> RefRows;

/* Position of segment k of trajectory s at time t, by the definition. */
void
position(const Tracks &tr, uint32_t s, uint32_t k, ld t, ld *p)
{
	const uint32_t i = tr.offsets[s] + k;
	const ld	f = (t - tr.m[i]) / ((ld) tr.m[i + 1] - tr.m[i]);

	p[0] = tr.x[i] + ((ld) tr.x[i + 1] - tr.x[i]) * f;
	p[1] = tr.y[i] + ((ld) tr.y[i + 1] - tr.y[i]) * f;
	p[2] = tr.z[i] + ((ld) tr.z[i + 1] - tr.z[i]) * f;
}

/* Every pair of segments of a and b (b null: of a, different trajectories, a first). */
RefRows
reference(const Tracks &a, const Tracks *b_or_null, double d)
{
	const Tracks &b = b_or_null ? *b_or_null : a;
	const int	dims = a.with_z && b.with_z ? 3 : 2;
	RefRows		out;

	for (uint32_t sa = 0; sa < a.count(); sa++)
		for (uint32_t ka = 0; ka + 1 < a.offsets[sa + 1] - a.offsets[sa]; ka++)
			for (uint32_t sb = b_or_null ? 0 : sa + 1; sb < b.count(); sb++)
				for (uint32_t kb = 0; kb + 1 < b.offsets[sb + 1] - b.offsets[sb]; kb++)
				{
					const uint32_t ia = a.offsets[sa] + ka,
								ib = b.offsets[sb] + kb;
					const ld	lo = std::max<ld>(a.m[ia], b.m[ib]);
					const ld	hi = std::min<ld>(a.m[ia + 1], b.m[ib + 1]);

					if (lo > hi)
						continue;

					ld			pa[3], pb[3], qa[3], qb[3], d0[3], d1[3];
					ld			aa = 0, bb = 0, cc = 0;

					position(a, sa, ka, lo, pa);
					position(b, sb, kb, lo, pb);
					position(a, sa, ka, hi, qa);
					position(b, sb, kb, hi, qb);
					for (int k = 0; k < dims; k++)
					{
						d0[k] = pa[k] - pb[k];
						d1[k] = qa[k] - qb[k];
						/* over s in [0, 1] of the span: D(s) = d0 + s (d1 - d0) */
						aa += (d1[k] - d0[k]) * (d1[k] - d0[k]);
						bb += d0[k] * (d1[k] - d0[k]);
						cc += d0[k] * d0[k];
					}

					ld			s = aa > 0 ? std::min<ld>(1, std::max<ld>(0, -bb / aa)) : 0;
					ld			m2 = aa * s * s + 2 * bb * s + cc;
					const ld	dmin = std::sqrt(std::max<ld>(m2, 0));
					const ld	scale = std::fabs(pa[0]) + std::fabs(pa[1]) + std::fabs(pa[2]) + 1;
					const bool	borderline = std::fabs(dmin - d) <= 1e-9L * (d + scale);

					if (dmin > d && !borderline)
						continue;

					ld			s0 = 0,
								s1 = 1;

					if (aa > 0)
					{
						const ld	disc = std::max<ld>(0, bb * bb - aa * (cc - (ld) d * d));

						if (cc > (ld) d * d)
							s0 = std::min(s, std::max<ld>(0, (-bb - std::sqrt(disc)) / aa));
						if (aa + 2 * bb + cc > (ld) d * d)
							s1 = std::max(s, std::min<ld>(1, (-bb + std::sqrt(disc)) / aa));
					}
					out[{sa, ka, sb, kb}] = {lo + s0 * (hi - lo), lo + s1 * (hi - lo), lo + s * (hi - lo), dmin,
						borderline || dmin > d};
				}
	return out;
}

/*
 * The rows against the reference: the same pairs (but borderline ones), in
 * order, without duplicates; distances to rounding, times to rounding of
 * the span (loosely where the pair barely touches the distance, where the
 * roots are ill-conditioned, or where the distance hardly changes).
 */
bool
matches_reference(const std::vector<GeoaccJoinRow> &rows, const RefRows &ref, double d)
{
	int			wrong = 0;
	size_t		matched = 0;

	for (size_t i = 0; i < rows.size(); i++)
	{
		const GeoaccJoinRow &r = rows[i];
		auto		it = ref.find({r.a_traj, r.a_seg, r.b_traj, r.b_seg});

		if (i > 0 && !(rows[i - 1].a_traj < r.a_traj || (rows[i - 1].a_traj == r.a_traj
			&& (rows[i - 1].a_seg < r.a_seg || (rows[i - 1].a_seg == r.a_seg
			&& (rows[i - 1].b_traj < r.b_traj || (rows[i - 1].b_traj == r.b_traj && rows[i - 1].b_seg < r.b_seg)))))))
		{
			if (wrong++ < 5)
				fprintf(stderr, "    row %zu out of order\n", i);
			continue;
		}
		if (it == ref.end())
		{
			if (wrong++ < 5)
				fprintf(stderr, "    extra row (%u %u %u %u) cpa %.17g\n", r.a_traj, r.a_seg, r.b_traj, r.b_seg,
						r.cpa_distance);
			continue;
		}
		matched++;

		const RefRow &x = it->second;
		/* the span's length to 1e-6, and the rounding of epoch times (an ulp of 1.6e9 is 2.4e-7) */
		const ld	span = x.t_end - x.t_start + std::fabs(x.t_start) * 4e-9L + 1e-9L;
		const ld	loose = x.borderline || d - x.cpa_distance < 1e-4L * d ? 1e30L : 0;
		const bool	ok = r.t_start <= r.cpa_time && r.cpa_time <= r.t_end
			&& std::fabs(r.cpa_distance - x.cpa_distance) <= 1e-9L * (d + 1e4L)
			&& std::fabs(r.t_start - x.t_start) <= 1e-6L * span + loose
			&& std::fabs(r.t_end - x.t_end) <= 1e-6L * span + loose;

		if (!ok && wrong++ < 5)
			fprintf(stderr, "    row (%u %u %u %u): [%.17g, %.17g] cpa %.17g at %.17g; reference [%.17Lg, %.17Lg] "
					"cpa %.17Lg at %.17Lg\n", r.a_traj, r.a_seg, r.b_traj, r.b_seg, r.t_start, r.t_end,
					r.cpa_distance, r.cpa_time, x.t_start, x.t_end, x.cpa_distance, x.cpa_time);
	}
	for (const auto &kv : ref)
		if (!kv.second.borderline)
		{
			bool		found = false;

			for (const GeoaccJoinRow &r : rows)
				if (r.a_traj == kv.first[0] && r.a_seg == kv.first[1] && r.b_traj == kv.first[2]
					&& r.b_seg == kv.first[3])
				{
					found = true;
					break;
				}
			if (!found && wrong++ < 5)
				fprintf(stderr, "    missing row (%u %u %u %u) cpa %.17Lg\n", kv.first[0], kv.first[1],
						kv.first[2], kv.first[3], kv.second.cpa_distance);
		}
	return wrong == 0 && matched == rows.size();
}

/* Every method on the CPU: the reference's rows, and the same bits from each; returns the rows. */
size_t
check_cpu_methods(const Tracks &a, const Tracks *b, double d)
{
	const RefRows ref = reference(a, b, d);
	Result		first = join(GEOACC_DEVICE_CPU, a, b, d, GEOACC_JOIN_SPATIAL, (uint32_t) uniform_int(1, 500));

	CHECK(first.status == GEOACC_OK);
	CHECK(matches_reference(first.rows, ref, d));
	for (GeoaccJoinMethod method : all_methods)
	{
		Result		r = join(GEOACC_DEVICE_CPU, a, b, d, method, (uint32_t) uniform_int(1, 500));

		CHECK(r.status == GEOACC_OK);
		CHECK(same_rows(r.rows, first.rows));
		CHECK(r.stats.rows == r.rows.size());
		CHECK(r.stats.candidates >= r.rows.size());
	}
	return first.rows.size();
}

/* ----------------------------------------------------------- real AIS */

/*
 * The New York harbour day of data/traj (one row per fix: traj_id, mmsi,
 * time, lon, lat), one trajectory per traj_id, positions projected to
 * metres around the mean latitude, repeated times dropped.
 */
Tracks
load_ny_harbor()
{
	Tracks		t;
	FILE	   *f = popen("gzip -dc data/traj/marinecadastre_ais_ny_harbor_2020-12-08.csv.gz", "r");
	char		line[256];
	long		current = -1;
	const double lat0 = 40.6 * M_PI / 180;

	if (!f)
		return t;
	if (!fgets(line, sizeof(line), f))
	{
		pclose(f);
		return t;
	}
	while (fgets(line, sizeof(line), f))
	{
		long		id;
		long long	mmsi;
		struct tm	tm = {};
		double		lon,
					lat;

		if (sscanf(line, "%ld,%lld,%d-%d-%d %d:%d:%d,%lf,%lf", &id, &mmsi, &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
				   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &lon, &lat) != 10)
			continue;
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;

		const double time = (double) timegm(&tm);

		if (id != current)
		{
			if (current >= 0)
				t.close();
			current = id;
		}
		else if (!(time > t.m.back()))
			continue;
		t.add(lon * M_PI / 180 * 6371000 * std::cos(lat0), lat * M_PI / 180 * 6371000, 0, time);
	}
	if (current >= 0)
		t.close();
	pclose(f);
	return t;
}

/* ------------------------------------------------------------ hand cases */

Tracks
one_segment(double x0, double y0, double t0, double x1, double y1, double t1)
{
	Tracks		t;

	t.add(x0, y0, 0, t0);
	t.add(x1, y1, 0, t1);
	t.close();
	return t;
}

/* The rows of two single segments at distance d on the CPU (and with every method: the same). */
std::vector<GeoaccJoinRow>
pair_rows(const Tracks &a, const Tracks &b, double d)
{
	Result		r = join(GEOACC_DEVICE_CPU, a, &b, d, GEOACC_JOIN_SPATIAL);

	for (GeoaccJoinMethod method : all_methods)
		CHECK(same_rows(join(GEOACC_DEVICE_CPU, a, &b, d, method).rows, r.rows));
	return r.rows;
}

int			polls_left;

int
interrupt_after_polls()
{
	return --polls_left <= 0;
}

}								/* namespace */

TEST(segment_join_cpu_matches_reference_on_random_tracks)
{
	const double distances[] = {5, 40, 250};
	size_t		rows = 0;

	for (Shape shape : {UNIFORM, CLUSTERED, LONG_AND_SHORT})
		for (bool with_z : {false, true})
			for (double d : distances)
			{
				const double t0 = uniform_int(0, 1) ? 1.6e9 : 0;
				Tracks		a = random_tracks(shape, uniform_int(2, 25), 30, with_z, t0);
				Tracks		b = random_tracks(shape, uniform_int(1, 20), 30, with_z && uniform_int(0, 3) > 0, t0);

				rows += check_cpu_methods(a, &b, d);
				rows += check_cpu_methods(a, nullptr, d);
			}
	CHECK(rows > 200);
}

/*
 * Heavy-tailed durations and lengths spread the entries of the temporal and
 * spatiotemporal indexes over several layers, each within its caps; the
 * rows still equal the brute force's.
 */
TEST(segment_join_layers_hold_long_segments_apart)
{
	Tracks		t;

	/* steps of up to 10 m in up to 10 s, and now and then a gap: 1 to 2 km in 1,000 to 2,000 s */
	for (int s = 0; s < 200; s++)
	{
		double		px = uniform(0, 2000),
					py = uniform(0, 2000),
					time = 1.6e9 + uniform(0, 3600);

		for (int i = 0; i < 20; i++)
		{
			const bool	gap = uniform_int(0, 30) == 0;
			const double step = gap ? uniform(1000, 2000) : uniform(0, 10);
			const double angle = uniform(0, 2 * M_PI);

			t.add(px, py, 0, time);
			px += step * std::cos(angle);
			py += step * std::sin(angle);
			time += gap ? uniform(1000, 2000) : uniform(1, 10);
		}
		t.close();
	}
	std::vector<geoacc::JoinSegment> segments;

	for (uint32_t s = 0; s < t.count(); s++)
		for (uint32_t i = t.offsets[s]; i + 1 < t.offsets[s + 1]; i++)
		{
			geoacc::JoinSegment g = {{t.x[i], t.y[i], 0}, t.m[i], {t.x[i + 1], t.y[i + 1], 0}, t.m[i + 1], s, i};

			segments.push_back(g);
		}

	const geoacc::JoinParams params = {2, 1, 40, 40};
	double		longest = 0;

	for (const geoacc::JoinSegment &g : segments)
		longest = std::max(longest, g.t1 - g.t0);

	for (GeoaccJoinMethod method : {GEOACC_JOIN_TEMPORAL, GEOACC_JOIN_SPATIOTEMPORAL})
	{
		const geoacc::IndexPlan plan = geoacc::plan_index(method, segments.data(), segments.size(), params);
		uint64_t	counts[geoacc::JOIN_LAYERS] = {};
		int			nonempty = 0;

		for (const geoacc::JoinSegment &g : segments)
		{
			const int	l = geoacc::join_layer(plan, g);

			counts[l]++;
			CHECK(g.t1 - g.t0 <= plan.layer[l].max_duration);
			if (method == GEOACC_JOIN_SPATIOTEMPORAL)
				for (int k = 0; k < 2; k++)
					CHECK(std::fabs(g.p1[k] - g.p0[k]) <= plan.layer[l].max_extent[k]);
		}
		for (int l = 0; l < geoacc::JOIN_LAYERS; l++)
		{
			CHECK(counts[l] == plan.layer[l].count);
			nonempty += counts[l] > 0;
		}
		CHECK(nonempty >= 3);
		/* the first layer holds most entries, with a scan far shorter than the longest segment's */
		CHECK(counts[0] >= segments.size() * 6 / 10);
		CHECK(plan.layer[0].max_duration * 50 < longest);
	}
	CHECK(check_cpu_methods(t, nullptr, 40) > 0);
}

TEST(segment_join_cpu_matches_reference_on_ais)
{
	Tracks		ny = load_ny_harbor();

	CHECK(ny.count() == 38);
	CHECK(ny.x.size() > 9000);
	if (ny.count() == 0)
		return;

	/* a few hours of the day against all of it: the brute force is quadratic */
	Tracks		part;

	for (uint32_t s = 0; s < ny.count(); s += 3)
	{
		for (uint32_t i = ny.offsets[s]; i < ny.offsets[s + 1]; i++)
			part.add(ny.x[i], ny.y[i], 0, ny.m[i]);
		part.close();
	}
	for (double d : {10.0, 100.0, 1000.0})
	{
		CHECK(check_cpu_methods(part, nullptr, d) > 0 || d < 100);

		/* the whole day, self-join: every method the same rows */
		Result		spatial = join(GEOACC_DEVICE_CPU, ny, nullptr, d, GEOACC_JOIN_SPATIAL, 4096);

		CHECK(spatial.rows.size() > 0);
		for (GeoaccJoinMethod method : all_methods)
			CHECK(same_rows(join(GEOACC_DEVICE_CPU, ny, nullptr, d, method, 4096).rows, spatial.rows));
	}
}

TEST(segment_join_hand_checked)
{
	/* parallel tracks 30 m apart over [0, 100]: within 30 the whole span, not within 29.9 */
	{
		auto		rows = pair_rows(one_segment(0, 0, 0, 1000, 0, 100), one_segment(0, 30, 0, 1000, 30, 100), 30);

		CHECK(rows.size() == 1);
		if (rows.size() == 1)
			CHECK(rows[0].t_start == 0 && rows[0].t_end == 100 && rows[0].cpa_time == 0
				  && rows[0].cpa_distance == 30);
		CHECK(pair_rows(one_segment(0, 0, 0, 1000, 0, 100), one_segment(0, 30, 0, 1000, 30, 100), 29.9).empty());
	}
	/* crossing at right angles, both at (500, 0) at t = 50, 10 m/s each: within 10 m for |t - 50| <= 1/sqrt(2) */
	{
		auto		rows = pair_rows(one_segment(0, 0, 0, 1000, 0, 100), one_segment(500, -500, 0, 500, 500, 100), 10);

		CHECK(rows.size() == 1);
		if (rows.size() == 1)
		{
			CHECK(rows[0].cpa_time == 50 && rows[0].cpa_distance == 0);
			CHECK(std::fabs(rows[0].t_start - (50 - std::sqrt(0.5))) < 1e-12);
			CHECK(std::fabs(rows[0].t_end - (50 + std::sqrt(0.5))) < 1e-12);
		}
	}
	/* head-on along one line, closing at 20 m/s, meeting at t = 50: within 100 m for |t - 50| <= 5 */
	{
		auto		rows = pair_rows(one_segment(0, 0, 0, 1000, 0, 100), one_segment(1000, 0, 0, 0, 0, 100), 100);

		CHECK(rows.size() == 1);
		if (rows.size() == 1)
			CHECK(rows[0].t_start == 45 && rows[0].t_end == 55 && rows[0].cpa_time == 50
				  && rows[0].cpa_distance == 0);
	}
	/* spans touching at t = 100 only: a zero-length interval where the points are within distance then */
	{
		auto		rows = pair_rows(one_segment(0, 0, 0, 100, 0, 100), one_segment(100, 3, 100, 200, 3, 200), 5);

		CHECK(rows.size() == 1);
		if (rows.size() == 1)
			CHECK(rows[0].t_start == 100 && rows[0].t_end == 100 && rows[0].cpa_time == 100
				  && rows[0].cpa_distance == 3);
		CHECK(pair_rows(one_segment(0, 0, 0, 100, 0, 100), one_segment(100, 3, 100, 200, 3, 200), 2.5).empty());
		/* spans that do not meet: no pair however close the tracks */
		CHECK(pair_rows(one_segment(0, 0, 0, 100, 0, 100), one_segment(100, 0, 100.5, 200, 0, 200), 5).empty());
	}
	/* a stationary vessel at (500, 40) passed at 10 m/s along y = 0: within 50 m for |t - 50| <= 3 */
	{
		auto		rows = pair_rows(one_segment(500, 40, 0, 500, 40, 200), one_segment(0, 0, 0, 1000, 0, 100), 50);

		CHECK(rows.size() == 1);
		if (rows.size() == 1)
			CHECK(rows[0].t_start == 47 && rows[0].t_end == 53 && rows[0].cpa_time == 50
				  && rows[0].cpa_distance == 40);
	}
	/* interval ends exact: within distance at both ends of the common span [20, 60] */
	{
		auto		rows = pair_rows(one_segment(0, 0, 10.1, 100, 0, 60), one_segment(0, 1, 20, 100, 1, 70.3), 200);

		CHECK(rows.size() == 1);
		if (rows.size() == 1)
			CHECK(rows[0].t_start == 20 && rows[0].t_end == 60);
	}
	/* Z: 3D when both have it, 2D otherwise */
	{
		Tracks		a = one_segment(0, 0, 0, 100, 0, 100),
					b = one_segment(0, 0, 0, 100, 0, 100);

		a.with_z = b.with_z = true;
		a.z = {0, 0};
		b.z = {40, 40};
		CHECK(pair_rows(a, b, 30).empty());
		CHECK(pair_rows(a, b, 40).size() == 1);
		b.with_z = false;
		CHECK(pair_rows(a, b, 30).size() == 1);
	}
}

/* The tracks with every coordinate times 2^k (exact while the result stays normal). */
Tracks
scaled(const Tracks &t, int k)
{
	Tracks		out = t;

	for (std::vector<double> *v : {&out.x, &out.y, &out.z})
		for (double &c : *v)
			c = ldexp(c, k);
	return out;
}

/* Rows of a join at 2^k times the size: the same times, the distances times 2^k. */
std::vector<GeoaccJoinRow>
unscaled(std::vector<GeoaccJoinRow> rows, int k)
{
	for (GeoaccJoinRow &r : rows)
		r.cpa_distance = ldexp(r.cpa_distance, -k);
	return rows;
}

/*
 * Coordinates and distances past 2^250, where the plain test's fourth
 * powers would overflow: the scaled test answers, and it answers the same
 * bits at any power of two (it works on the mantissas).
 */
TEST(segment_join_huge_coordinates)
{
	/* the right-angle crossing of the hand cases at 2^500 times the size */
	{
		const int	k = 500;
		Tracks		a = scaled(one_segment(0, 0, 0, 1000, 0, 100), k),
					b = scaled(one_segment(500, -500, 0, 500, 500, 100), k);
		auto		rows = pair_rows(a, b, ldexp(10, k));

		CHECK(rows.size() == 1);
		if (rows.size() == 1)
		{
			CHECK(rows[0].cpa_time == 50 && rows[0].cpa_distance == 0);
			CHECK(std::fabs(rows[0].t_start - (50 - std::sqrt(0.5))) < 1e-12);
			CHECK(std::fabs(rows[0].t_end - (50 + std::sqrt(0.5))) < 1e-12);
		}
		/* parallel tracks 30 * 2^k apart: the whole span at exactly that distance */
		rows = pair_rows(scaled(one_segment(0, 0, 0, 1000, 0, 100), k), scaled(one_segment(0, 30, 0, 1000, 30, 100), k),
						 ldexp(30, k));
		CHECK(rows.size() == 1);
		if (rows.size() == 1)
			CHECK(rows[0].t_start == 0 && rows[0].t_end == 100 && rows[0].cpa_distance == ldexp(30, k));
		/* at the top of the range: 1e308 apart, within 1.5e308, differences that overflow a double */
		rows = pair_rows(one_segment(-1e308, 0, 0, 1e308, 0, 100), one_segment(1e308, 0, 0, -1e308, 0, 100), 1.5e308);
		CHECK(rows.size() == 1);
		if (rows.size() == 1)
			CHECK(rows[0].cpa_time == 50 && rows[0].cpa_distance == 0 && std::isfinite(rows[0].t_start));
	}
	/* random tracks at two large scales: the same rows to the bit, and the reference's at scale 1 */
	for (int round = 0; round < 6; round++)
	{
		const bool	with_z = round % 2 == 1;
		const double d = uniform(5, 250);
		Tracks		a = random_tracks(round < 2 ? UNIFORM : round < 4 ? CLUSTERED : LONG_AND_SHORT, 60, 40, with_z, 0);
		Tracks		b = random_tracks(UNIFORM, 40, 40, with_z, 0);
		const int	k1 = uniform_int(260, 600),
					k2 = uniform_int(601, 1000);
		Tracks		a1 = scaled(a, k1),
					b1 = scaled(b, k1),
					a2 = scaled(a, k2),
					b2 = scaled(b, k2);
		Result		r1 = join(GEOACC_DEVICE_CPU, a1, &b1, ldexp(d, k1), GEOACC_JOIN_AUTO);
		Result		r2 = join(GEOACC_DEVICE_CPU, a2, &b2, ldexp(d, k2), GEOACC_JOIN_AUTO);

		CHECK(r1.status == GEOACC_OK && r2.status == GEOACC_OK);
		CHECK(same_rows(unscaled(r1.rows, k1), unscaled(r2.rows, k2)));
		CHECK(matches_reference(unscaled(r1.rows, k1), reference(a, &b, d), d));
		if (core_test::gpu_available())
		{
			Result		gpu = join(GEOACC_DEVICE_GPU, a2, &b2, ldexp(d, k2), GEOACC_JOIN_AUTO);
			Result		gpu_self = join(GEOACC_DEVICE_GPU, a2, nullptr, ldexp(d, k2), GEOACC_JOIN_AUTO);

			CHECK(gpu.status == GEOACC_OK && same_rows(gpu.rows, r2.rows));
			CHECK(same_rows(gpu_self.rows, join(GEOACC_DEVICE_CPU, a2, nullptr, ldexp(d, k2), GEOACC_JOIN_AUTO).rows));
		}
	}
}

TEST(segment_join_skips_short_trajectories_and_empty_sets)
{
	Tracks		a,
				empty;

	a.add(0, 0, 0, 0);			/* one point: no segment */
	a.close();
	a.close();					/* no point */
	a.add(0, 0, 0, 0);
	a.add(10, 0, 0, 10);
	a.close();
	a.add(0, 1, 0, 0);
	a.add(10, 1, 0, 10);
	a.close();

	Result		r = join(GEOACC_DEVICE_CPU, a, nullptr, 2, GEOACC_JOIN_AUTO);

	CHECK(r.status == GEOACC_OK && r.rows.size() == 1);
	if (r.rows.size() == 1)
		CHECK(r.rows[0].a_traj == 2 && r.rows[0].a_seg == 0 && r.rows[0].b_traj == 3 && r.rows[0].b_seg == 0);
	CHECK(join(GEOACC_DEVICE_CPU, empty, &a, 2, GEOACC_JOIN_AUTO).rows.empty());
	CHECK(join(GEOACC_DEVICE_CPU, a, &empty, 2, GEOACC_JOIN_SPATIAL).rows.empty());
	CHECK(join(GEOACC_DEVICE_CPU, empty, nullptr, 2, GEOACC_JOIN_TEMPORAL).status == GEOACC_OK);
}

TEST(segment_join_rejects_bad_input)
{
	Tracks		good = random_tracks(UNIFORM, 3, 5, false, 0);

	auto		rejects = [&](const Tracks &a, const Tracks *b, double d, int method, const char *words) {
		GeoaccTrajectories va = a.view();
		GeoaccTrajectories vb = b ? b->view() : GeoaccTrajectories();
		GeoaccSegmentJoin *j = nullptr;
		GeoaccStatus s = geoacc_segment_join_open(GEOACC_DEVICE_CPU, &va, b ? &vb : nullptr, d,
												   (GeoaccJoinMethod) method, &j);

		geoacc_segment_join_close(j);
		return s == GEOACC_ERR_INVALID_ARGUMENT && j == nullptr && strstr(geoacc_status_message(), words);
	};

	CHECK(join(GEOACC_DEVICE_CPU, good, nullptr, 10, GEOACC_JOIN_AUTO).status == GEOACC_OK);
	CHECK(rejects(good, nullptr, 0, 0, "the distance must be a positive, finite number (it is 0)"));
	CHECK(rejects(good, nullptr, -1, 0, "(it is -1)"));
	CHECK(rejects(good, nullptr, NAN, 0, "the distance must be"));
	CHECK(rejects(good, nullptr, INFINITY, 0, "the distance must be"));
	CHECK(rejects(good, nullptr, 10, 7, "unknown join method 7"));

	Tracks		bad;

	bad.add(0, 0, 0, 0);
	bad.add(1, NAN, 0, 1);
	bad.close();
	CHECK(rejects(good, &bad, 10, 0, "trajectory 1 of b: point 2 has a coordinate that is not finite"));
	bad = Tracks();
	bad.add(0, 0, 0, 0);
	bad.add(1, 1, 0, 1);
	bad.add(2, 2, 0, 1);
	bad.close();
	CHECK(rejects(bad, nullptr, 10, 0, "trajectory 1 of a: the m of point 3 does not increase"));
	bad.m[2] = INFINITY;
	CHECK(rejects(bad, &good, 10, 0, "trajectory 1 of a: point 3 has a coordinate that is not finite"));

	uint32_t	n = 0;
	GeoaccJoinRow row;

	CHECK(geoacc_segment_join_next(nullptr, &row, 1, &n) == GEOACC_ERR_INVALID_ARGUMENT);
}

TEST(segment_join_cpu_stops_on_interrupt)
{
	Tracks		a = random_tracks(CLUSTERED, 400, 60, false, 0);
	GeoaccTrajectories va = a.view();
	GeoaccSegmentJoin *j = nullptr;
	std::vector<GeoaccJoinRow> rows(10);
	uint32_t	n = 0;
	GeoaccStatus status = GEOACC_OK;

	CHECK_OK(geoacc_segment_join_open(GEOACC_DEVICE_CPU, &va, nullptr, 50, GEOACC_JOIN_TEMPORAL, &j));
	polls_left = 2;
	geoacc_set_interrupt_callback(interrupt_after_polls);
	do
		status = geoacc_segment_join_next(j, rows.data(), 10, &n);
	while (status == GEOACC_OK && n > 0);
	geoacc_set_interrupt_callback(nullptr);
	geoacc_segment_join_close(j);
	CHECK(status == GEOACC_ERR_CANCELLED);
}

/* ------------------------------------------------------ GPU against CPU */

/*
 * Joins against entries prepared on `device` give the rows of joins against
 * the trajectories, call after call: with the distances and methods in turn
 * and again (an index kept for the same parameters, built anew for others),
 * with a in other dimensions than b (b's segments made again), and with a
 * reaching farther from the origin than b (another rounding margin).
 */
void
check_prepared_entries(GeoaccDevice device)
{
	for (Shape shape : {UNIFORM, CLUSTERED, LONG_AND_SHORT})
		for (bool b_with_z : {false, true})
		{
			const double t0 = uniform_int(0, 1) ? 1.6e9 : 0;
			Tracks		b = random_tracks(shape, uniform_int(1, 200), 60, b_with_z, t0);
			GeoaccTrajectories vb = b.view();
			GeoaccJoinEntries *entries = nullptr;

			CHECK_OK(geoacc_join_entries_create(device, &vb, &entries));
			CHECK(geoacc_join_entries_device_bytes(entries) ==
				  (device == GEOACC_DEVICE_GPU ? geoacc_join_entries_bytes(&vb) : 0));
			for (int round = 0; round < 2; round++)
				for (double d : {5.0, 40.0, 250.0})
					for (GeoaccJoinMethod method : all_methods)
						for (bool a_with_z : {false, true})
						{
							Tracks		a = random_tracks(shape, uniform_int(20, 150), 60, a_with_z, t0);

							if (uniform_int(0, 3) == 0)
								for (double &x : a.x)
									x += 1e7;	/* a far from b: a larger margin, and no pairs */

							Result		expected = join(GEOACC_DEVICE_CPU, a, &b, d, method);
							Result		got = join_prepared(entries, a, d, method, (uint32_t) uniform_int(1, 3000));

							CHECK(got.status == GEOACC_OK);
							CHECK(same_rows(got.rows, expected.rows));
							CHECK(got.stats.candidates == expected.stats.candidates);
							CHECK(got.stats.entries == expected.stats.entries);
						}
			geoacc_join_entries_free(entries);
		}
}

TEST(segment_join_prepared_entries_match)
{
	check_prepared_entries(GEOACC_DEVICE_CPU);
}

/* A second join with the same parameters uses the kept plan and index: nothing planned or built. */
TEST(segment_join_prepared_entries_keep_the_index)
{
	Tracks		b = random_tracks(CLUSTERED, 150, 60, false, 0);
	Tracks		a = random_tracks(CLUSTERED, 100, 60, false, 0);
	GeoaccTrajectories vb = b.view();
	GeoaccJoinEntries *entries = nullptr;

	CHECK_OK(geoacc_join_entries_create(GEOACC_DEVICE_CPU, &vb, &entries));

	Result		first = join_prepared(entries, a, 40, GEOACC_JOIN_SPATIOTEMPORAL);
	Result		second = join_prepared(entries, a, 40, GEOACC_JOIN_SPATIOTEMPORAL);
	Result		other = join_prepared(entries, a, 41, GEOACC_JOIN_SPATIOTEMPORAL);

	CHECK(first.stats.index_ms > 0 && second.stats.index_ms == 0 && second.stats.plan_ms == 0);
	CHECK(other.stats.index_ms > 0);
	CHECK(same_rows(first.rows, second.rows) && !first.rows.empty());
	CHECK(same_rows(other.rows, join(GEOACC_DEVICE_CPU, a, &b, 41, GEOACC_JOIN_SPATIOTEMPORAL).rows));
	/* bad arguments */
	GeoaccSegmentJoin *j = nullptr;
	GeoaccTrajectories va = a.view();

	CHECK(geoacc_segment_join_open_entries(&va, nullptr, 40, GEOACC_JOIN_AUTO, &j) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_segment_join_open_entries(&va, entries, -1, GEOACC_JOIN_AUTO, &j) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(j == nullptr);
	geoacc_join_entries_free(entries);
	/* a time that does not increase, inside the first track of two points or more */
	uint32_t	s = 0;

	while (b.offsets[s + 1] - b.offsets[s] < 2)
		s++;
	b.m[b.offsets[s] + 1] = b.m[b.offsets[s]];
	vb = b.view();
	CHECK(geoacc_join_entries_create(GEOACC_DEVICE_CPU, &vb, &entries) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(entries == nullptr);
}

TEST(segment_join_gpu_prepared_entries_match)
{
	REQUIRE_GPU();
	check_prepared_entries(GEOACC_DEVICE_GPU);
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

/*
 * On the GPU a second join with the same parameters searches the index the
 * first kept in device memory (nothing of b copied or built); other parameters
 * replace it.  The entries count its bytes, and freeing them frees all.
 */
TEST(segment_join_gpu_prepared_entries_keep_the_index)
{
	REQUIRE_GPU();
	Tracks		b = random_tracks(CLUSTERED, 150, 60, false, 0);
	Tracks		a = random_tracks(CLUSTERED, 100, 60, false, 0);
	GeoaccTrajectories vb = b.view();
	GeoaccJoinEntries *entries = nullptr;

	CHECK_OK(geoacc_join_entries_create(GEOACC_DEVICE_GPU, &vb, &entries));

	const uint64_t segments = geoacc_join_entries_device_bytes(entries);
	Result		first = join_prepared(entries, a, 40, GEOACC_JOIN_SPATIOTEMPORAL);
	const uint64_t with_index = geoacc_join_entries_device_bytes(entries);
	Result		second = join_prepared(entries, a, 40, GEOACC_JOIN_SPATIOTEMPORAL);

	CHECK(with_index > segments && geoacc_gpu_memory_in_use() == with_index);
	CHECK(first.stats.index_ms > 0);
	CHECK(second.stats.index_ms == 0);	/* (a's segments are uploaded each time) */
	CHECK(!first.rows.empty() && same_rows(first.rows, join(GEOACC_DEVICE_CPU, a, &b, 40,
															   GEOACC_JOIN_SPATIOTEMPORAL).rows));
	CHECK(same_rows(second.rows, first.rows) && second.stats.candidates == first.stats.candidates);
	for (GeoaccJoinMethod method : all_methods)
	{
		Result		other = join_prepared(entries, a, 41, method);

		CHECK(method == GEOACC_JOIN_AUTO || other.stats.index_ms > 0);	/* auto may pick the last one's */
		CHECK(same_rows(other.rows, join(GEOACC_DEVICE_CPU, a, &b, 41, method).rows));
		CHECK(geoacc_gpu_memory_in_use() == geoacc_join_entries_device_bytes(entries));
	}
	geoacc_join_entries_free(entries);
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

/* Prepared entries on the GPU under a small cap: chunks (planned once, then the kept plans), and the same rows. */
TEST(segment_join_gpu_prepared_entries_in_chunks)
{
	REQUIRE_GPU();
	Tracks		a = random_tracks(UNIFORM, 300, 60, true, 1.6e9);
	Tracks		b = random_tracks(UNIFORM, 600, 60, true, 1.6e9);
	GeoaccTrajectories vb = b.view();
	GeoaccJoinEntries *entries = nullptr;

	CHECK_OK(geoacc_join_entries_create(GEOACC_DEVICE_GPU, &vb, &entries));
	CHECK(geoacc_gpu_memory_in_use() == geoacc_join_entries_bytes(&vb));
	for (GeoaccJoinMethod method : all_methods)
	{
		Result		cpu = join(GEOACC_DEVICE_CPU, a, &b, 60, method);

		geoacc_gpu_set_memory_limit(geoacc_gpu_memory_in_use() + (4 << 20));
		Result		gpu = join_prepared(entries, a, 60, method);
		Result		again = join_prepared(entries, a, 60, method);

		geoacc_gpu_set_memory_limit(0);
		CHECK(gpu.status == GEOACC_OK && again.status == GEOACC_OK);
		CHECK(gpu.stats.entry_chunks > 1);
		CHECK(same_rows(gpu.rows, cpu.rows) && same_rows(again.rows, cpu.rows));
	}
	geoacc_join_entries_free(entries);
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

TEST(segment_join_gpu_matches_cpu)
{
	REQUIRE_GPU();
	for (Shape shape : {UNIFORM, CLUSTERED, LONG_AND_SHORT})
		for (bool with_z : {false, true})
			for (double d : {5.0, 40.0, 250.0})
			{
				const double t0 = uniform_int(0, 1) ? 1.6e9 : 0;
				Tracks		a = random_tracks(shape, uniform_int(50, 300), 60, with_z, t0);
				Tracks		b = random_tracks(shape, uniform_int(1, 200), 60, with_z, t0);

				for (GeoaccJoinMethod method : all_methods)
				{
					Result		cpu = join(GEOACC_DEVICE_CPU, a, &b, d, method);
					Result		gpu = join(GEOACC_DEVICE_GPU, a, &b, d, method, (uint32_t) uniform_int(1, 5000));
					Result		cpu_self = join(GEOACC_DEVICE_CPU, a, nullptr, d, method);
					Result		gpu_self = join(GEOACC_DEVICE_GPU, a, nullptr, d, method);

					CHECK(gpu.status == GEOACC_OK && gpu_self.status == GEOACC_OK);
					CHECK(same_rows(gpu.rows, cpu.rows));
					CHECK(same_rows(gpu_self.rows, cpu_self.rows));
					CHECK(gpu.stats.candidates == cpu.stats.candidates);
					CHECK(gpu.stats.method == cpu.stats.method);
				}
			}
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

TEST(segment_join_gpu_matches_reference_on_ais)
{
	REQUIRE_GPU();
	Tracks		ny = load_ny_harbor();

	CHECK(ny.count() == 38);
	for (double d : {10.0, 100.0, 1000.0})
		for (GeoaccJoinMethod method : all_methods)
		{
			Result		cpu = join(GEOACC_DEVICE_CPU, ny, nullptr, d, method, 4096);
			Result		gpu = join(GEOACC_DEVICE_GPU, ny, nullptr, d, method, 4096);

			CHECK(!cpu.rows.empty());
			CHECK(same_rows(gpu.rows, cpu.rows));
		}
}

TEST(segment_join_gpu_tiny_buffers_lose_nothing)
{
	REQUIRE_GPU();
	/* clustered tracks at 250 m: most queries overflow 2 slots, and batches of 64 slots cut heavy ones */
	Tracks		a = random_tracks(CLUSTERED, 120, 40, false, 0);
	Tracks		b = random_tracks(CLUSTERED, 80, 40, false, 0);

	for (GeoaccJoinMethod method : all_methods)
	{
		Result		cpu = join(GEOACC_DEVICE_CPU, a, &b, 250, method);

		geoacc_segment_join_set_buffers(2, 64);
		Result		gpu = join(GEOACC_DEVICE_GPU, a, &b, 250, method, 777);
		Result		gpu_self = join(GEOACC_DEVICE_GPU, a, nullptr, 250, method);

		geoacc_segment_join_set_buffers(0, 0);
		CHECK(gpu.stats.overflow_queries > 0);
		CHECK(gpu.stats.batches > 10);
		CHECK(gpu.stats.device_allocations == 1);
		CHECK(same_rows(gpu.rows, cpu.rows));
		CHECK(same_rows(gpu_self.rows, join(GEOACC_DEVICE_CPU, a, nullptr, 250, method).rows));
	}
}

TEST(segment_join_gpu_small_memory_cap_chunks_entries)
{
	REQUIRE_GPU();
	Tracks		a = random_tracks(UNIFORM, 300, 60, true, 1.6e9);
	Tracks		b = random_tracks(UNIFORM, 600, 60, true, 1.6e9);

	for (GeoaccJoinMethod method : all_methods)
	{
		Result		cpu = join(GEOACC_DEVICE_CPU, a, &b, 60, method);

		geoacc_gpu_set_memory_limit(4 << 20);
		Result		gpu = join(GEOACC_DEVICE_GPU, a, &b, 60, method);

		geoacc_gpu_set_memory_limit(0);
		CHECK(gpu.status == GEOACC_OK);
		CHECK(gpu.stats.entry_chunks > 1);
		CHECK(gpu.stats.device_allocations == 1);
		CHECK(same_rows(gpu.rows, cpu.rows));
	}
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

TEST(segment_join_gpu_one_device_allocation_per_call)
{
	REQUIRE_GPU();
	/* the real tracks at 10 m (no query overflows) and at 1 km (some do, and are redone) */
	Tracks		ny = load_ny_harbor();

	for (double d : {10.0, 1000.0})
		for (GeoaccJoinMethod method : all_methods)
		{
			Result		gpu = join(GEOACC_DEVICE_GPU, ny, nullptr, d, method, 4096);
			Result		cpu = join(GEOACC_DEVICE_CPU, ny, nullptr, d, method, 4096);

			CHECK(gpu.status == GEOACC_OK);
			CHECK(same_rows(gpu.rows, cpu.rows));
			CHECK(gpu.stats.device_allocations == 1);
			/* one wait for the index; per batch one for the counts and one for the rows, one more for the redo list */
			CHECK(gpu.stats.syncs <= 1 + 2 * gpu.stats.batches + (gpu.stats.overflow_queries > 0));
			CHECK(cpu.stats.device_allocations == 0 && cpu.stats.syncs == 0);
		}
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

TEST(segment_join_gpu_stops_on_interrupt)
{
	REQUIRE_GPU();
	Tracks		a = random_tracks(CLUSTERED, 400, 60, false, 0);
	GeoaccTrajectories va = a.view();
	GeoaccSegmentJoin *j = nullptr;
	std::vector<GeoaccJoinRow> rows(10);
	uint32_t	n = 0;
	GeoaccStatus status = GEOACC_OK;

	geoacc_segment_join_set_buffers(4, 4096);
	CHECK_OK(geoacc_segment_join_open(GEOACC_DEVICE_GPU, &va, nullptr, 50, GEOACC_JOIN_SPATIAL, &j));
	polls_left = 3;
	geoacc_set_interrupt_callback(interrupt_after_polls);
	do
		status = geoacc_segment_join_next(j, rows.data(), 10, &n);
	while (status == GEOACC_OK && n > 0);
	geoacc_set_interrupt_callback(nullptr);
	geoacc_segment_join_set_buffers(0, 0);
	CHECK(status == GEOACC_ERR_CANCELLED);
	geoacc_segment_join_close(j);
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

/* The device memory a join asks the budget for: every entry in one chunk, every query in one block. */
TEST(segment_join_device_need)
{
	Tracks		a = random_tracks(UNIFORM, 300, 60, true, 1.6e9);
	Tracks		b = random_tracks(UNIFORM, 600, 60, true, 1.6e9);
	GeoaccTrajectories va = a.view(),
				vb = b.view();
	GeoaccDeviceNeed self = geoacc_segment_join_need(&va, nullptr);
	GeoaccDeviceNeed both = geoacc_segment_join_need(&va, &vb);
	Tracks		none;
	GeoaccTrajectories vnone = none.view();

	CHECK(self.bytes > 0 && self.least == self.bytes);
	CHECK(both.bytes > self.bytes);
	/* a query's 32 candidate slots, twice: more than 6 kB a query */
	CHECK(both.bytes > (a.x.size() - 300) * 6000);
	CHECK(geoacc_segment_join_need(&vnone, nullptr).bytes < (uint64_t(4) << 20));
}

/* Capped at its need, as a reservation from the budget caps it: the CPU's rows. */
TEST(segment_join_gpu_within_its_device_need)
{
	REQUIRE_GPU();
	Tracks		a = random_tracks(UNIFORM, 300, 60, true, 1.6e9);
	Tracks		b = random_tracks(CLUSTERED, 600, 60, true, 1.6e9);
	GeoaccTrajectories va = a.view(),
				vb = b.view();

	CHECK_OK(geoacc_gpu_init());
	for (GeoaccJoinMethod method : all_methods)
	{
		Result		cpu = join(GEOACC_DEVICE_CPU, a, &b, 60, method);
		Result		cpu_self = join(GEOACC_DEVICE_CPU, b, nullptr, 60, method);

		geoacc_gpu_set_reservation(geoacc_segment_join_need(&va, &vb).bytes);
		Result		gpu = join(GEOACC_DEVICE_GPU, a, &b, 60, method);

		geoacc_gpu_set_reservation(geoacc_segment_join_need(&vb, nullptr).bytes);
		Result		gpu_self = join(GEOACC_DEVICE_GPU, b, nullptr, 60, method);

		geoacc_gpu_set_reservation(0);
		CHECK(gpu.status == GEOACC_OK && gpu_self.status == GEOACC_OK);
		CHECK(same_rows(gpu.rows, cpu.rows));
		CHECK(same_rows(gpu_self.rows, cpu_self.rows));
	}
	CHECK(geoacc_gpu_memory_in_use() == 0);
}
