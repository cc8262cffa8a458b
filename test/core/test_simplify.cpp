/*
 * test_simplify.cpp
 *
 * Douglas-Peucker simplification: the CPU twin against plain recursive
 * references written here (PostGIS's arithmetic for the planar distance,
 * the definitions for the 3D and synchronized ones), hand-checked cases,
 * argument errors, then the GPU against the CPU twin on fresh random
 * batches, with memory caps that force pieces and CPU fallbacks.  Also the
 * compression quality measures against a full-matrix DTW.
 */
#include "core_test.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <vector>

namespace
{

const GeoaccSimplifyDistance all_distances[] = {
	GEOACC_SIMPLIFY_PLANAR, GEOACC_SIMPLIFY_3D, GEOACC_SIMPLIFY_SYNCHRONIZED, GEOACC_SIMPLIFY_SYNCHRONIZED_3D
};

/* A batch held in vectors. */
struct Batch
{
	std::vector<uint32_t> offsets{0};
	std::vector<double> x, y, z, m;

	void		add(double px, double py, double pz, double pm)
	{
		x.push_back(px);
		y.push_back(py);
		z.push_back(pz);
		m.push_back(pm);
	}
	void		close() { offsets.push_back((uint32_t) x.size()); }
	uint32_t	ntrajectories() const { return (uint32_t) offsets.size() - 1; }
	uint32_t	npoints() const { return (uint32_t) x.size(); }

	GeoaccTrajectories view() const
	{
		return GeoaccTrajectories{ntrajectories(), offsets.data(), x.data(), y.data(), z.data(), m.data()};
	}
};

std::vector<uint8_t>
simplify(GeoaccDevice device, const Batch &b, GeoaccSimplifyDistance d, double tolerance)
{
	std::vector<uint8_t> keep(b.npoints(), 7);
	GeoaccTrajectories v = b.view();

	CHECK_OK(geoacc_dp_simplify(device, &v, d, tolerance, keep.data(), nullptr));
	return keep;
}

/*
 * A random trajectory of n points with what breaks naive code: exact
 * collinear runs, repeated positions, backtracking, mirror-symmetric
 * vertices (equal keys), coordinates on a coarse grid (more exact ties) and
 * large UTM-like offsets.
 */
void
add_random_trajectory(Batch &b, uint32_t n)
{
	auto	   &r = core_test::rng();
	std::uniform_real_distribution<double> unit(0.0, 1.0);
	bool		grid = r() % 3 == 0;
	double		x = 500000 + 1000 * unit(r),
				y = 4000000 + 1000 * unit(r),
				z = 10 * unit(r),
				m = 1.6e9 + 1000 * unit(r);
	double		heading = 6.283 * unit(r);

	for (uint32_t i = 0; i < n; i++)
	{
		double		px = grid ? std::round(x) : x;
		double		py = grid ? std::round(y) : y;

		b.add(px, py, grid ? std::round(z) : z, m);
		m += (r() % 4 == 0) ? 1.0 : 0.25 + 30 * unit(r);
		switch (r() % 8)
		{
			case 0:				/* stay put */
				break;
			case 1:				/* mirror image of the previous step: equal distances */
			case 2:				/* exact collinear step */
				x += 3;
				y += 4;
				break;
			case 3:				/* backtrack along the line */
				x -= 6;
				y -= 8;
				break;
			default:
				heading += unit(r) - 0.5;
				x += 20 * unit(r) * std::cos(heading);
				y += 20 * unit(r) * std::sin(heading);
				z += unit(r) - 0.5;
				break;
		}
	}
	b.close();
}

Batch
random_batch(uint32_t ntrajectories, uint32_t max_points)
{
	Batch		b;
	std::uniform_int_distribution<uint32_t> len(0, max_points);

	for (uint32_t t = 0; t < ntrajectories; t++)
	{
		uint32_t	n = core_test::rng()() % 4 == 0 ? core_test::rng()() % 4 : len(core_test::rng());

		add_random_trajectory(b, n);
	}
	return b;
}

/* ------------------------------------------------------- references */

/* PostGIS 3.3 ptarray_dp_findsplit_in_place, transcribed. */
uint32_t
ref_postgis_split(const Batch &b, uint32_t first, uint32_t last, double tol_sq)
{
	uint32_t	split = first;
	double		max_sq = tol_sq;
	double		ax = b.x[first], ay = b.y[first], bx = b.x[last], by = b.y[last];
	double		hs = bx - ax, vs = by - ay;

	if (hs * hs + vs * vs < DBL_EPSILON)
	{
		for (uint32_t k = first + 1; k < last; k++)
		{
			double		h = ax - b.x[k], v = ay - b.y[k];

			if (h * h + v * v > max_sq)
			{
				split = k;
				max_sq = h * h + v * v;
			}
		}
		return split;
	}

	double		ba_x = bx - ax, ba_y = by - ay;
	double		ab_len_sq = ba_x * ba_x + ba_y * ba_y;

	max_sq *= ab_len_sq;
	for (uint32_t k = first + 1; k < last; k++)
	{
		double		ca_x = b.x[k] - ax, ca_y = b.y[k] - ay;
		double		dot = ca_x * ba_x + ca_y * ba_y;
		double		d;

		if (dot <= 0.0)
		{
			double		h = ax - b.x[k], v = ay - b.y[k];

			d = (h * h + v * v) * ab_len_sq;
		}
		else if (dot >= ab_len_sq)
		{
			double		h = bx - b.x[k], v = by - b.y[k];

			d = (h * h + v * v) * ab_len_sq;
		}
		else
		{
			double		s = ca_x * ba_y - ca_y * ba_x;

			d = s * s;
		}
		if (d > max_sq)
		{
			split = k;
			max_sq = d;
		}
	}
	return split;
}

/* 3D and synchronized distances from their definitions (squared). */
uint32_t
ref_definition_split(const Batch &b, uint32_t first, uint32_t last, double tol_sq, GeoaccSimplifyDistance d)
{
	bool		with_z = d == GEOACC_SIMPLIFY_3D || d == GEOACC_SIMPLIFY_SYNCHRONIZED_3D;
	double		ax = b.x[first], ay = b.y[first], az = with_z ? b.z[first] : 0;
	double		ux = b.x[last] - ax, uy = b.y[last] - ay, uz = with_z ? b.z[last] - az : 0;
	double		len_sq = ux * ux + uy * uy + uz * uz;
	double		best = tol_sq;
	uint32_t	split = first;

	if (d == GEOACC_SIMPLIFY_3D && len_sq >= DBL_EPSILON)
		best = tol_sq * len_sq;
	for (uint32_t k = first + 1; k < last; k++)
	{
		double		px = b.x[k], py = b.y[k], pz = with_z ? b.z[k] : 0;
		double		key;

		if (d == GEOACC_SIMPLIFY_3D)
		{
			double		wx = px - ax, wy = py - ay, wz = pz - az;
			double		dot = wx * ux + wy * uy + wz * uz;

			if (len_sq < DBL_EPSILON)
				key = (ax - px) * (ax - px) + (ay - py) * (ay - py) + (az - pz) * (az - pz);
			else if (dot <= 0)
				key = ((ax - px) * (ax - px) + (ay - py) * (ay - py) + (az - pz) * (az - pz)) * len_sq;
			else if (dot >= len_sq)
			{
				double		bx = b.x[last], by = b.y[last], bz = b.z[last];

				key = ((bx - px) * (bx - px) + (by - py) * (by - py) + (bz - pz) * (bz - pz)) * len_sq;
			}
			else
			{
				double		cx = wy * uz - wz * uy, cy = wz * ux - wx * uz, cz = wx * uy - wy * ux;

				key = cx * cx + cy * cy + cz * cz;
			}
		}
		else
		{
			double		ratio = (b.m[k] - b.m[first]) / (b.m[last] - b.m[first]);
			double		sx = ax + ux * ratio, sy = ay + uy * ratio, sz = az + uz * ratio;

			key = (px - sx) * (px - sx) + (py - sy) * (py - sy);
			if (with_z)
				key += (pz - sz) * (pz - sz);
		}
		if (key > best)
		{
			best = key;
			split = k;
		}
	}
	return split;
}

void
ref_recurse(const Batch &b, uint32_t first, uint32_t last, double tol_sq, GeoaccSimplifyDistance d,
			std::vector<uint8_t> &keep)
{
	if (last - first < 2)
		return;

	uint32_t	split = d == GEOACC_SIMPLIFY_PLANAR ? ref_postgis_split(b, first, last, tol_sq)
		: ref_definition_split(b, first, last, tol_sq, d);

	if (split == first)
		return;
	keep[split] = 1;
	ref_recurse(b, first, split, tol_sq, d, keep);
	ref_recurse(b, split, last, tol_sq, d, keep);
}

/* PostGIS 3.3 ptarray_simplify_in_place_tolerance0, transcribed. */
void
ref_tolerance0(const Batch &b, uint32_t first, uint32_t last, std::vector<uint8_t> &keep)
{
	uint32_t	kept = first;

	for (uint32_t i = first + 1; i < last; i++)
	{
		double		ba_x = b.x[i + 1] - b.x[kept], ba_y = b.y[i + 1] - b.y[kept];
		double		ab_len_sq = ba_x * ba_x + ba_y * ba_y;
		double		ca_x = b.x[i] - b.x[kept], ca_y = b.y[i] - b.y[kept];
		double		dot = ca_x * ba_x + ca_y * ba_y;
		double		s = ca_x * ba_y - ca_y * ba_x;

		if (dot < 0.0 || dot > ab_len_sq || s != 0)
		{
			keep[i] = 1;
			kept = i;
		}
	}
}

std::vector<uint8_t>
reference(const Batch &b, GeoaccSimplifyDistance d, double tolerance)
{
	std::vector<uint8_t> keep(b.npoints(), 0);

	for (uint32_t t = 0; t < b.ntrajectories(); t++)
	{
		uint32_t	first = b.offsets[t], end = b.offsets[t + 1];

		if (end == first)
			continue;
		keep[first] = keep[end - 1] = 1;
		if (d == GEOACC_SIMPLIFY_PLANAR && tolerance == 0)
			ref_tolerance0(b, first, end - 1, keep);
		else
			ref_recurse(b, first, end - 1, tolerance * tolerance, d, keep);
	}
	return keep;
}

/* A trajectory with its vertices given (z = 0). */
Batch
line(std::initializer_list<std::array<double, 3>> xym)
{
	Batch		b;

	for (auto &p : xym)
		b.add(p[0], p[1], 0, p[2]);
	b.close();
	return b;
}

const double day = 86400;

/* One long trajectory whose DP goes deep: a slowly widening spiral. */
Batch
spiral(uint32_t n)
{
	Batch		b;

	for (uint32_t i = 0; i < n; i++)
	{
		double		angle = 0.05 * i;
		double		radius = 10 + 0.5 * i;

		b.add(radius * std::cos(angle), radius * std::sin(angle), 0.01 * i, i);
	}
	b.close();
	return b;
}

}								/* namespace */

/* ---------------------------------------------------------- CPU twin */

TEST(simplify_cpu_matches_references)
{
	for (int round = 0; round < 20; round++)
	{
		Batch		b = random_batch(50, 300);

		for (GeoaccSimplifyDistance d : all_distances)
			for (double tol : {0.0, 0.5, 2.0, 5.0, 25.0, 1e9})
				CHECK(simplify(GEOACC_DEVICE_CPU, b, d, tol) == reference(b, d, tol));
	}
}

TEST(simplify_cpu_endpoints_short_and_empty)
{
	Batch		b;

	add_random_trajectory(b, 0);
	add_random_trajectory(b, 1);
	add_random_trajectory(b, 2);
	add_random_trajectory(b, 0);
	add_random_trajectory(b, 40);
	for (GeoaccSimplifyDistance d : all_distances)
	{
		std::vector<uint8_t> keep = simplify(GEOACC_DEVICE_CPU, b, d, INFINITY);

		CHECK(keep.size() == 43);
		CHECK(keep[0] == 1 && keep[1] == 1 && keep[2] == 1);
		CHECK(keep[3] == 1 && keep[42] == 1);
		CHECK(std::count(keep.begin() + 4, keep.begin() + 42, 1) == 0);
	}
}

/* The check: the spatial distance drops (6 1), the synchronized one keeps it. */
TEST(simplify_synchronized_distance_hand_checked)
{
	Batch		b = line({{1, 1, 0}, {6, 1, 5 * day}, {7, 4, 6 * day}});

	/* spatial: |(5,0) x (6,3)| / |(6,3)| = 15 / sqrt(45) = 2.236; synchronized: (6,1) vs (6,3.5) = 2.5 */
	CHECK(simplify(GEOACC_DEVICE_CPU, b, GEOACC_SIMPLIFY_PLANAR, 2.3)[1] == 0);
	CHECK(simplify(GEOACC_DEVICE_CPU, b, GEOACC_SIMPLIFY_SYNCHRONIZED, 2.3)[1] == 1);
	CHECK(simplify(GEOACC_DEVICE_CPU, b, GEOACC_SIMPLIFY_SYNCHRONIZED, 2.5)[1] == 0);	/* strictly greater */
	CHECK(simplify(GEOACC_DEVICE_CPU, b, GEOACC_SIMPLIFY_PLANAR, 2.2)[1] == 1);

	/* a vertex on the path but late: spatial distance 0, synchronized 4 (it should be at x = 9) */
	Batch		late = line({{0, 0, 0}, {5, 0, 9}, {10, 0, 10}});

	CHECK(simplify(GEOACC_DEVICE_CPU, late, GEOACC_SIMPLIFY_PLANAR, 0.1)[1] == 0);
	CHECK(simplify(GEOACC_DEVICE_CPU, late, GEOACC_SIMPLIFY_SYNCHRONIZED, 3.9)[1] == 1);
	CHECK(simplify(GEOACC_DEVICE_CPU, late, GEOACC_SIMPLIFY_SYNCHRONIZED, 4)[1] == 0);

	/* 3D: (1,1,1) synchronized at t=1 of (0,0,0)-(4,0,0) over t 0..4: sync point (1,0,0), distance sqrt(2) */
	Batch		z;

	z.add(0, 0, 0, 0);
	z.add(1, 1, 1, 1);
	z.add(4, 0, 0, 4);
	z.close();
	CHECK(simplify(GEOACC_DEVICE_CPU, z, GEOACC_SIMPLIFY_SYNCHRONIZED_3D, 1.41)[1] == 1);
	CHECK(simplify(GEOACC_DEVICE_CPU, z, GEOACC_SIMPLIFY_SYNCHRONIZED_3D, 1.42)[1] == 0);
	CHECK(simplify(GEOACC_DEVICE_CPU, z, GEOACC_SIMPLIFY_SYNCHRONIZED, 1.0)[1] == 0);
	CHECK(simplify(GEOACC_DEVICE_CPU, z, GEOACC_SIMPLIFY_SYNCHRONIZED, 0.99)[1] == 1);
	/* 3D spatial distance of (1,1,1) to the X axis is sqrt(2); planar is 1 */
	CHECK(simplify(GEOACC_DEVICE_CPU, z, GEOACC_SIMPLIFY_3D, 1.41)[1] == 1);
	CHECK(simplify(GEOACC_DEVICE_CPU, z, GEOACC_SIMPLIFY_3D, 1.42)[1] == 0);
	CHECK(simplify(GEOACC_DEVICE_CPU, z, GEOACC_SIMPLIFY_PLANAR, 0.99)[1] == 1);
	CHECK(simplify(GEOACC_DEVICE_CPU, z, GEOACC_SIMPLIFY_PLANAR, 1.0)[1] == 0);
}

/* Ties go to the first vertex, which decides what else stays. */
TEST(simplify_planar_first_of_equal_distances)
{
	/* (2 4) and (6 4) are both 4 from the base; splitting at (2 4) leaves (6 4) 2.22 from (2 4)-(8 0) */
	Batch		b = line({{0, 0, 0}, {2, 4, 1}, {6, 4, 2}, {8, 0, 3}});

	CHECK(simplify(GEOACC_DEVICE_CPU, b, GEOACC_SIMPLIFY_PLANAR, 3) == std::vector<uint8_t>({1, 1, 0, 1}));
	CHECK(simplify(GEOACC_DEVICE_CPU, b, GEOACC_SIMPLIFY_3D, 3) == std::vector<uint8_t>({1, 1, 0, 1}));
	CHECK(simplify(GEOACC_DEVICE_CPU, b, GEOACC_SIMPLIFY_PLANAR, 2) == std::vector<uint8_t>({1, 1, 1, 1}));
	CHECK(simplify(GEOACC_DEVICE_CPU, b, GEOACC_SIMPLIFY_PLANAR, 4) == std::vector<uint8_t>({1, 0, 0, 1}));
}

/* PostGIS's tolerance 0 removes only vertices on the segment to the next one, not DP with tolerance 0. */
TEST(simplify_planar_tolerance0_walk)
{
	/* backtracking along a line: DP(0) would drop both middle vertices, the walk keeps them */
	Batch		back = line({{0, 0, 0}, {2, 0, 1}, {1, 0, 2}, {3, 0, 3}});

	CHECK(simplify(GEOACC_DEVICE_CPU, back, GEOACC_SIMPLIFY_PLANAR, 0) == std::vector<uint8_t>({1, 1, 1, 1}));
	CHECK(simplify(GEOACC_DEVICE_CPU, back, GEOACC_SIMPLIFY_3D, 0) == std::vector<uint8_t>({1, 0, 0, 1}));

	Batch		straight = line({{0, 0, 0}, {1, 1, 1}, {1, 1, 2}, {2, 2, 3}, {2, 3, 4}});

	CHECK(simplify(GEOACC_DEVICE_CPU, straight, GEOACC_SIMPLIFY_PLANAR, 0) ==
		  std::vector<uint8_t>({1, 0, 0, 1, 1}));
}

TEST(simplify_rejects_bad_arguments)
{
	Batch		b = random_batch(3, 10);
	GeoaccTrajectories v = b.view();
	std::vector<uint8_t> keep(b.npoints());

	CHECK(geoacc_dp_simplify(GEOACC_DEVICE_CPU, &v, GEOACC_SIMPLIFY_PLANAR, -1, keep.data(), nullptr) ==
		  GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_dp_simplify(GEOACC_DEVICE_CPU, &v, GEOACC_SIMPLIFY_PLANAR, NAN, keep.data(), nullptr) ==
		  GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_dp_simplify(GEOACC_DEVICE_CPU, &v, (GeoaccSimplifyDistance) 9, 1, keep.data(), nullptr) ==
		  GEOACC_ERR_INVALID_ARGUMENT);

	GeoaccTrajectories no_z = v;

	no_z.z = nullptr;
	CHECK(geoacc_dp_simplify(GEOACC_DEVICE_CPU, &no_z, GEOACC_SIMPLIFY_3D, 1, keep.data(), nullptr) ==
		  GEOACC_ERR_INVALID_ARGUMENT);
	CHECK_OK(geoacc_dp_simplify(GEOACC_DEVICE_CPU, &no_z, GEOACC_SIMPLIFY_SYNCHRONIZED, 1, keep.data(), nullptr));

	GeoaccTrajectories no_m = v;

	no_m.m = nullptr;
	CHECK(geoacc_dp_simplify(GEOACC_DEVICE_CPU, &no_m, GEOACC_SIMPLIFY_SYNCHRONIZED_3D, 1, keep.data(), nullptr) ==
		  GEOACC_ERR_INVALID_ARGUMENT);

	std::vector<uint32_t> bad = {0, 5, 3, 6};
	GeoaccTrajectories decreasing = v;

	decreasing.ntrajectories = 3;
	decreasing.offsets = bad.data();
	CHECK(geoacc_dp_simplify(GEOACC_DEVICE_CPU, &decreasing, GEOACC_SIMPLIFY_PLANAR, 1, keep.data(), nullptr) ==
		  GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_status_message()[0] != '\0');
}

/* A batch may start anywhere in its arrays: only its own range is written. */
TEST(simplify_offsets_need_not_start_at_zero)
{
	Batch		b = random_batch(10, 60);
	std::vector<uint8_t> whole = simplify(GEOACC_DEVICE_CPU, b, GEOACC_SIMPLIFY_PLANAR, 3);
	std::vector<uint8_t> keep(b.npoints(), 7);
	GeoaccTrajectories tail = b.view();

	tail.ntrajectories = 4;
	tail.offsets = b.offsets.data() + 6;
	CHECK_OK(geoacc_dp_simplify(GEOACC_DEVICE_CPU, &tail, GEOACC_SIMPLIFY_PLANAR, 3, keep.data(), nullptr));
	for (uint32_t i = 0; i < b.npoints(); i++)
		CHECK(keep[i] == (i < b.offsets[6] ? 7 : whole[i]));
}

/* ----------------------------------------------- compression measures */

TEST(compression_stats_hand_checked)
{
	double		original[] = {0, 0, 1, 0, 2, 0, 3, 0};	/* X Y */
	double		simplified[] = {0, 0, 10, 3, 0, 20};	/* X Y M */
	GeoaccCompressionMeasures s;

	CHECK_OK(geoacc_compression_measures(original, 4, 2, simplified, 2, 3, &s));
	CHECK(s.compression_ratio == 0.5);
	CHECK(s.length_loss_rate == 0.0);
	CHECK(s.dtw_distance == 2.0);	/* (1 0) and (2 0) each 1 from their nearest end */

	double		zigzag[] = {0, 0, 0, 3, 4, 3, 4, 0};	/* length 3 + 4 + 3 = 10, end to end 4 */
	double		ends[] = {0, 0, 4, 0};

	CHECK_OK(geoacc_compression_measures(zigzag, 4, 2, ends, 2, 2, &s));
	CHECK(s.length_loss_rate == 0.6);
	CHECK(s.dtw_distance == 6.0);	/* (0 3) and (4 3) are 3 from their nearest end */

	double		still[] = {5, 5, 5, 5};

	CHECK_OK(geoacc_compression_measures(still, 2, 2, still, 2, 2, &s));
	CHECK(std::isnan(s.length_loss_rate));
	CHECK(s.compression_ratio == 0.0 && s.dtw_distance == 0.0);
	CHECK(geoacc_compression_measures(still, 0, 2, still, 2, 2, &s) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_compression_measures(still, 2, 5, still, 2, 2, &s) == GEOACC_ERR_INVALID_ARGUMENT);
}

/* DTW against the textbook full matrix with infinite borders. */
TEST(compression_stats_dtw_matches_full_matrix)
{
	for (int round = 0; round < 20; round++)
	{
		Batch		b = random_batch(1, 200);

		if (b.npoints() < 3)
			continue;

		std::vector<uint8_t> keep = simplify(GEOACC_DEVICE_CPU, b, GEOACC_SIMPLIFY_PLANAR, 4);
		std::vector<double> o, s;

		for (uint32_t i = 0; i < b.npoints(); i++)
		{
			o.insert(o.end(), {b.x[i], b.y[i], b.m[i]});
			if (keep[i])
				s.insert(s.end(), {b.x[i], b.y[i], b.m[i]});
		}

		size_t		n = o.size() / 3, m = s.size() / 3;
		std::vector<std::vector<double>> dtw(n + 1, std::vector<double>(m + 1, INFINITY));

		dtw[0][0] = 0;
		for (size_t i = 1; i <= n; i++)
			for (size_t j = 1; j <= m; j++)
				dtw[i][j] = std::hypot(o[3 * (i - 1)] - s[3 * (j - 1)], o[3 * (i - 1) + 1] - s[3 * (j - 1) + 1]) +
					std::min({dtw[i - 1][j], dtw[i][j - 1], dtw[i - 1][j - 1]});

		double		length = 0, simplified_length = 0;

		for (size_t i = 1; i < n; i++)
			length += std::hypot(o[3 * i] - o[3 * i - 3], o[3 * i + 1] - o[3 * i - 2]);
		for (size_t j = 1; j < m; j++)
			simplified_length += std::hypot(s[3 * j] - s[3 * j - 3], s[3 * j + 1] - s[3 * j - 2]);

		GeoaccCompressionMeasures st;

		CHECK_OK(geoacc_compression_measures(o.data(), (uint32_t) n, 3, s.data(), (uint32_t) m, 3, &st));
		CHECK(std::fabs(st.dtw_distance - dtw[n][m]) <= 1e-9 * (1 + dtw[n][m]));
		CHECK(st.compression_ratio == 1.0 - (double) m / (double) n);
		if (length > 0)
			CHECK(std::fabs(st.length_loss_rate - (length - simplified_length) / length) <= 1e-12);
	}
}

/* --------------------------------------------------------- GPU vs CPU */

TEST(gpu_simplify_matches_cpu)
{
	REQUIRE_GPU();
	for (uint32_t max_points : {3u, 40u, 300u, 5000u})
	{
		Batch		b = random_batch(max_points < 1000 ? 2000 : 200, max_points);

		for (GeoaccSimplifyDistance d : all_distances)
			for (double tol : {0.0, 0.5, 5.0, 50.0, (double) INFINITY})
				CHECK(simplify(GEOACC_DEVICE_GPU, b, d, tol) == simplify(GEOACC_DEVICE_CPU, b, d, tol));
	}
}

/* Long trajectories: many rounds, segments far above one block, the tolerance-0 walk over many launches. */
TEST(gpu_simplify_long_trajectories)
{
	REQUIRE_GPU();

	Batch		b;

	add_random_trajectory(b, 100000);
	add_random_trajectory(b, 20000);
	add_random_trajectory(b, 5);
	for (GeoaccSimplifyDistance d : all_distances)
		for (double tol : {0.0, 1.0, 30.0})
			CHECK(simplify(GEOACC_DEVICE_GPU, b, d, tol) == simplify(GEOACC_DEVICE_CPU, b, d, tol));

	Batch		deep = spiral(20000);
	std::vector<uint8_t> keep(deep.npoints());
	GeoaccTrajectories v = deep.view();
	GeoaccSimplifyTiming timing;

	CHECK_OK(geoacc_dp_simplify(GEOACC_DEVICE_GPU, &v, GEOACC_SIMPLIFY_PLANAR, 0.01, keep.data(), &timing));
	CHECK(keep == simplify(GEOACC_DEVICE_CPU, deep, GEOACC_SIMPLIFY_PLANAR, 0.01));
	CHECK(timing.rounds > 5);
	CHECK(timing.pieces == 1 && timing.cpu_points == 0);
	CHECK(timing.compute_ms > 0 && timing.transfer_ms > 0);
}

/*
 * Deep DP inside one warp: spirals whose interiors lie on either side of the
 * largest segment a warp settles (WARP_SEGMENT = 8192 interior vertices).
 */
TEST(gpu_simplify_warp_segments)
{
	REQUIRE_GPU();
	for (uint32_t n : {8193u, 8194u, 8195u, 5000u})
		for (double tol : {0.01, 3.0})
		{
			Batch		deep = spiral(n);
			std::vector<uint8_t> keep(deep.npoints());
			GeoaccTrajectories v = deep.view();
			GeoaccSimplifyTiming timing;

			CHECK_OK(geoacc_dp_simplify(GEOACC_DEVICE_GPU, &v, GEOACC_SIMPLIFY_PLANAR, tol, keep.data(), &timing));
			CHECK(keep == simplify(GEOACC_DEVICE_CPU, deep, GEOACC_SIMPLIFY_PLANAR, tol));
			CHECK((timing.rounds > 0) == (n - 2 > 8192));
		}
}

/* A small memory cap cuts the batch into pieces; what does not fit alone runs on the CPU. */
TEST(gpu_simplify_pieces_under_a_memory_cap)
{
	REQUIRE_GPU();

	Batch		b = random_batch(400, 800);

	add_random_trajectory(b, 30000);	/* larger than the cap allows */
	add_random_trajectory(b, 100);

	for (GeoaccSimplifyDistance d : all_distances)
		for (double tol : {0.0, 2.0})
		{
			std::vector<uint8_t> keep(b.npoints(), 7);
			GeoaccTrajectories v = b.view();
			GeoaccSimplifyTiming timing;

			geoacc_gpu_set_memory_limit(256 << 10);
			GeoaccStatus status = geoacc_dp_simplify(GEOACC_DEVICE_GPU, &v, d, tol, keep.data(), &timing);

			geoacc_gpu_set_memory_limit(0);
			CHECK_OK(status);
			CHECK(keep == simplify(GEOACC_DEVICE_CPU, b, d, tol));
			CHECK(timing.pieces > 5);
			CHECK(timing.cpu_points == 30000);
			CHECK(geoacc_gpu_memory_in_use() == 0);
		}
}

/* Capped at its device bytes, as a reservation from the budget caps it: one piece on the GPU, the CPU's flags. */
TEST(gpu_simplify_within_its_device_bytes)
{
	REQUIRE_GPU();

	Batch		b = random_batch(400, 800);

	add_random_trajectory(b, 30000);
	CHECK_OK(geoacc_gpu_init());
	for (GeoaccSimplifyDistance d : all_distances)
		for (double tol : {0.0, 2.0})
		{
			std::vector<uint8_t> keep(b.npoints(), 7);
			GeoaccTrajectories v = b.view();
			GeoaccSimplifyTiming timing;

			geoacc_gpu_set_reservation(geoacc_dp_simplify_device_bytes(b.npoints(), v.ntrajectories, d, tol));
			GeoaccStatus status = geoacc_dp_simplify(GEOACC_DEVICE_GPU, &v, d, tol, keep.data(), &timing);

			geoacc_gpu_set_reservation(0);
			CHECK_OK(status);
			CHECK(keep == simplify(GEOACC_DEVICE_CPU, b, d, tol));
			CHECK(timing.pieces == 1 && timing.cpu_points == 0);
			CHECK(geoacc_gpu_memory_in_use() == 0);
		}
}
