/*
 * test_twed.cpp
 *
 * Time Warp Edit Distance: the CPU twin against a plain full-matrix
 * implementation of the definition in long double (random series of many
 * shapes, the UCI synthetic control set, the paper's example), symmetry,
 * float32 frames and the README's float32 error bound on random pairs far
 * from each other, every bad input, cancellation; then the GPU against the
 * CPU twin, bit for bit, on fresh random inputs: batches of short pairs,
 * long pairs over many bands and launches, float32 far from the origin, and
 * tiny memory caps.
 */
#include "core_test.h"
#include "../uci_synthetic_control.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace
{

/* Series packed as GeoaccTwedSet wants them. */
struct Set
{
	uint32_t	dims = 1;
	std::vector<uint64_t> offsets{0};
	std::vector<double> values;
	std::vector<double> times;

	void		add(const std::vector<double> &v, const std::vector<double> &t)
	{
		values.insert(values.end(), v.begin(), v.end());
		times.insert(times.end(), t.begin(), t.end());
		offsets.push_back(times.size());
	}
	uint32_t	count() const { return (uint32_t) offsets.size() - 1; }
	uint64_t	length(uint32_t s) const { return offsets[s + 1] - offsets[s]; }
	const double *series_values(uint32_t s) const { return &values[offsets[s] * dims]; }
	const double *series_times(uint32_t s) const { return &times[offsets[s]]; }
	GeoaccTwedSet view() const { return {count(), dims, offsets.data(), values.data(), times.data()}; }
};

GeoaccTwedParams
params(double nu, double lambda, int degree = 2, bool root = true, bool float32 = false)
{
	return {nu, lambda, degree, root ? 1 : 0, float32 ? 1 : 0};
}

/* The Lp distance of the definition; x or y null stands for the origin. */
long double
reference_lp(const double *x, const double *y, int k, int degree, bool root)
{
	long double s = 0;

	for (int d = 0; d < k; d++)
	{
		long double v = fabsl((long double) (x ? x[d] : 0.0) - (long double) (y ? y[d] : 0.0));

		s += degree == 1 || (root && k == 1) ? v : powl(v, degree);
	}
	if (!root || degree == 1 || k == 1)
		return s;
	return degree == 2 ? sqrtl(s) : powl(s, 1.0L / degree);
}

/*
 * TWED by the definition: the full matrix D in long double, a_0 = b_0 = 0
 * and times 0 before the first points; point distances and deletion costs
 * are tabulated first.
 */
long double
reference_twed(const double *a, const double *ta, int n, const double *b, const double *tb, int m, int k,
			   const GeoaccTwedParams &p)
{
	auto		pa = [&](int i) { return i > 0 ? a + (size_t) (i - 1) * k : nullptr; };
	auto		pb = [&](int j) { return j > 0 ? b + (size_t) (j - 1) * k : nullptr; };
	std::vector<long double> ta_(n + 1, 0.0L), tb_(m + 1, 0.0L);
	std::vector<long double> delete_a(n + 1), delete_b(m + 1);
	std::vector<long double> d_ab((size_t) (n + 1) * (m + 1));
	std::vector<long double> D((size_t) (n + 1) * (m + 1), INFINITY);
	const long double nu = p.nu;
	const long double lambda = p.lambda;

	for (int i = 1; i <= n; i++)
		ta_[i] = ta[i - 1];
	for (int j = 1; j <= m; j++)
		tb_[j] = tb[j - 1];
	for (int i = 1; i <= n; i++)
		delete_a[i] = reference_lp(pa(i - 1), pa(i), k, p.degree, p.root) + nu * (ta_[i] - ta_[i - 1]) + lambda;
	for (int j = 1; j <= m; j++)
		delete_b[j] = reference_lp(pb(j - 1), pb(j), k, p.degree, p.root) + nu * (tb_[j] - tb_[j - 1]) + lambda;
	for (int i = 0; i <= n; i++)
		for (int j = 0; j <= m; j++)
			d_ab[(size_t) i * (m + 1) + j] = reference_lp(pa(i), pb(j), k, p.degree, p.root)
				+ nu * fabsl(ta_[i] - tb_[j]);

	D[0] = 0;
	for (int i = 1; i <= n; i++)
	{
		long double left = INFINITY;	/* D(i, 0) */

		for (int j = 1; j <= m; j++)
		{
			const size_t ij = (size_t) i * (m + 1) + j;
			const size_t up = ij - (m + 1);
			const long double match = D[up - 1] + (d_ab[ij] + d_ab[up - 1]);

			left = std::min(match, std::min(D[up] + delete_a[i], left + delete_b[j]));
			D[ij] = left;
		}
	}
	return D[(size_t) n * (m + 1) + m];
}

long double
reference_pair(const Set &a, uint32_t x, const Set &b, uint32_t y, const GeoaccTwedParams &p)
{
	return reference_twed(a.series_values(x), a.series_times(x), (int) a.length(x),
						  b.series_values(y), b.series_times(y), (int) b.length(y), (int) a.dims, p);
}

bool
close(double got, long double want, double rel)
{
	return fabsl((long double) got - want) <= rel * fabsl(want) + 1e-300L;
}

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

/* A random walk with random, strictly increasing times from t0. */
void
add_random_series(Set &set, int n, double t0 = 0)
{
	std::vector<double> v(n * set.dims), t(n);
	double		time = t0 + uniform(0, 5);

	for (int i = 0; i < n; i++)
	{
		for (uint32_t d = 0; d < set.dims; d++)
			v[i * set.dims + d] = (i > 0 ? v[(i - 1) * set.dims + d] : uniform(-50, 50)) + uniform(-3, 3);
		t[i] = time;
		time += uniform(0.01, 3);
	}
	set.add(v, t);
}

Set
random_set(uint32_t dims, int count, int min_len, int max_len, double t0 = 0)
{
	Set			set;

	set.dims = dims;
	for (int s = 0; s < count; s++)
		add_random_series(set, uniform_int(min_len, max_len), t0);
	return set;
}

/*
 * Random pairs for float32, far from each other and from 0: series of 1 to
 * 4 values per point (UTM-sized coordinates, then heights) with epoch
 * times, each of one of three kinds: random walks whose steps reach 400 km,
 * started anywhere within 2,000 km; the previous series displaced by a
 * little noise and resampled in time (near-duplicates, where float32 has
 * least to spare); or small walks near 0 with times from 0.  `dims` 0: a
 * random number of values; lengths from min_len to max_len.
 */
Set
far_float32_set(uint32_t dims, int count, int min_len, int max_len)
{
	Set			set;

	set.dims = dims > 0 ? dims : (uint32_t) uniform_int(1, 5);
	for (int s = 0; s < count; s++)
	{
		const int	kind = s == 0 ? uniform_int(0, 1) * 2 : uniform_int(0, 2);
		const int	n = uniform_int(min_len, max_len);
		const uint32_t k = set.dims;
		std::vector<double> v(n * k), t(n);

		if (kind == 1)
		{
			/* the previous series, displaced by noise of 1e-6 to 1e-1 of its steps, at other times */
			const uint32_t prev = set.count() - 1;
			const uint64_t len = set.length(prev);
			const double noise = pow(10.0, uniform(-6, -1)) * pow(10.0, uniform(0, 5.6));

			for (int i = 0; i < n; i++)
			{
				const uint64_t j = std::min<uint64_t>(len - 1, (uint64_t) i * len / n);

				for (uint32_t d = 0; d < k; d++)
					v[i * k + d] = set.series_values(prev)[j * k + d] + uniform(-noise, noise);
				t[i] = set.series_times(prev)[j] + uniform(-1, 1) + i * 1e-3;
			}
		}
		else
		{
			const bool	far = kind == 0;
			const double step = far ? pow(10.0, uniform(0, 5.6)) : uniform(0.1, 10);	/* up to 400 km */
			const double dt = far ? pow(10.0, uniform(0, 3.6)) : uniform(0.1, 3);
			double		time = far ? 1.6e9 + uniform(-1e7, 1e7) : uniform(0, 5);

			for (uint32_t d = 0; d < k; d++)
				v[d] = far ? (d == 0 ? 5e5 : d == 1 ? 4.5e6 : 0) + uniform(-2e6, 2e6) : uniform(-50, 50);
			for (int i = 0; i < n; i++)
			{
				if (i > 0)
					for (uint32_t d = 0; d < k; d++)
						v[i * k + d] = v[(i - 1) * k + d] + uniform(-step, step);
				t[i] = time;
				time += uniform(0.01, 1) * dt;
			}
		}
		std::sort(t.begin(), t.end());
		for (int i = 1; i < n; i++)
			t[i] = std::max(t[i], std::nextafter(t[i - 1], INFINITY));
		set.add(v, t);
	}
	return set;
}

/*
 * The extent E of a pair: the distance between the corners of the box
 * around both series, plus nu times their time range.
 */
long double
pair_extent(const Set &a, uint32_t x, const Set &b, uint32_t y, const GeoaccTwedParams &p)
{
	const uint32_t k = a.dims;
	std::vector<double> lo(k + 1, INFINITY), hi(k + 1, -INFINITY);

	for (const auto &[set, s] : {std::make_pair(&a, x), std::make_pair(&b, y)})
		for (uint64_t i = 0; i < set->length(s); i++)
		{
			for (uint32_t d = 0; d < k; d++)
			{
				lo[d] = std::min(lo[d], set->series_values(s)[i * k + d]);
				hi[d] = std::max(hi[d], set->series_values(s)[i * k + d]);
			}
			lo[k] = std::min(lo[k], set->series_times(s)[i]);
			hi[k] = std::max(hi[k], set->series_times(s)[i]);
		}
	return reference_lp(lo.data(), hi.data(), (int) k, p.degree, p.root)
		+ (long double) p.nu * ((long double) hi[k] - lo[k]);
}

/*
 * |float32 - float64| of a pair of n and m points as a fraction of the
 * README's bound: 2^-22 (n + m) (d + q E), q = 1 with the root and p without
 * it (rounding the points costs up to about 4 units of 2^-24 E per match,
 * the sums 2 units of 2^-24 d per step).
 */
long double
float32_error_in_bound(double d32, double d64, uint64_t n, uint64_t m, long double extent,
							 const GeoaccTwedParams &p)
{
	const long double bound = (long double) (n + m) * ldexpl(1.0L, -22)
		* ((long double) d64 + (p.root ? 1 : p.degree) * extent);

	return fabsl((long double) d32 - d64) / bound;
}

std::vector<double>
run(GeoaccDevice device, const Set &a, const Set *b, const GeoaccTwedParams &p)
{
	const uint64_t pairs = b ? (uint64_t) a.count() * b->count() : (uint64_t) a.count() * (a.count() - 1) / 2;
	std::vector<double> out(pairs, -1.0);
	GeoaccTwedSet va = a.view();
	GeoaccTwedSet vb = b ? b->view() : GeoaccTwedSet();

	CHECK_OK(geoacc_twed(device, &va, b ? &vb : nullptr, &p, out.data()));
	return out;
}

bool
same_bits(const std::vector<double> &x, const std::vector<double> &y)
{
	return x.size() == y.size() && memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

/* The UCI synthetic control set: 600 series of 60 values, times 0..59. */
Set
load_uci()
{
	Set			set;
	std::vector<double> times(UCI_SERIES_LENGTH);

	for (int i = 0; i < UCI_SERIES_LENGTH; i++)
		times[i] = i;
	for (const auto &v : read_uci_synthetic_control("data/twed/uci_synthetic_control.data"))
		set.add(v, times);
	return set;
}

/* Interrupt callback that fires on its n-th poll. */
int			polls_left;

int
interrupt_after_polls()
{
	return --polls_left <= 0;
}

/*
 * A series of n points against itself, interrupted at the third poll with
 * poll_ops of work between polls: the call is cancelled, and the next one
 * runs to the end (distance 0).  On the GPU no device memory stays in use.
 */
void
check_stops_on_interrupt(GeoaccDevice device, uint32_t n, uint64_t poll_ops)
{
	Set			a = random_set(1, 1, n, n);
	GeoaccTwedParams p = params(1, 1);
	GeoaccTwedSet va = a.view();
	double		out = 0;

	geoacc_twed_set_poll_ops(poll_ops);
	polls_left = 3;
	geoacc_set_interrupt_callback(interrupt_after_polls);
	CHECK(geoacc_twed(device, &va, &va, &p, &out) == GEOACC_ERR_CANCELLED);
	geoacc_set_interrupt_callback(nullptr);
	geoacc_twed_set_poll_ops(0);
	if (device == GEOACC_DEVICE_GPU)
		CHECK(geoacc_gpu_memory_in_use() == 0);	/* the cancelled call released its buffers */
	CHECK_OK(geoacc_twed(device, &va, &va, &p, &out));
	CHECK(out == 0);
}

}								/* namespace */

TEST(twed_paper_example)
{
	/* 1..10 against 11..20, times 1..10: match the first points, delete the rest */
	Set			a,
				b;
	std::vector<double> v(10), w(10), t(10);

	for (int i = 0; i < 10; i++)
	{
		v[i] = i + 1;
		w[i] = i + 11;
		t[i] = i + 1;
	}
	a.add(v, t);
	b.add(w, t);
	CHECK(fabs(run(GEOACC_DEVICE_CPU, a, &b, params(0.001, 1))[0] - 46.018) < 1e-12);
	CHECK(close(run(GEOACC_DEVICE_CPU, a, &b, params(0.001, 1, 2, true, true))[0], 46.018L, 1e-6));
}

TEST(twed_cpu_matches_reference_on_random_series)
{
	const uint32_t dims[] = {1, 2, 3, 5};
	const int	degrees[] = {1, 2, 3, 4};

	for (uint32_t k : dims)
		for (int degree : degrees)
			for (int root = 0; root <= 1; root++)
			{
				Set			a = random_set(k, 4, 1, 40);
				Set			b = random_set(k, 3, 1, 40);
				GeoaccTwedParams p = params(uniform_int(0, 1) ? uniform(0, 2) : 0, uniform(0, 3), degree, root);
				std::vector<double> d = run(GEOACC_DEVICE_CPU, a, &b, p);
				std::vector<double> f = run(GEOACC_DEVICE_CPU, a, &b,
											params(p.nu, p.lambda, degree, root, true));

				for (uint32_t x = 0; x < a.count(); x++)
					for (uint32_t y = 0; y < b.count(); y++)
					{
						long double want = reference_pair(a, x, b, y, p);

						CHECK(close(d[x * b.count() + y], want, 1e-12));
						CHECK(close(f[x * b.count() + y], want, 1e-4));
					}
			}
}

/* A copy of set with every value scaled by `factor` (times unchanged). */
Set
scaled(const Set &set, double factor)
{
	Set			out = set;

	for (double &v : out.values)
		v *= factor;
	return out;
}

TEST(twed_large_degrees_match_reference)
{
	/* the cases: 2^(1/200); 3-4 km steps at degree 88; 0.5 steps at degree 1100 */
	{
		Set			a,
					b;

		a.dims = b.dims = 2;
		a.add({0, 0}, {0});
		b.add({1, 1}, {0});
		std::vector<double> d = run(GEOACC_DEVICE_CPU, a, &b, params(0, 0, 200));

		CHECK(close(d[0], powl(2.0L, 1.0L / 200), 1e-15));
		d = run(GEOACC_DEVICE_CPU, a, &b, params(0, 0, 1100));
		CHECK(close(d[0], powl(2.0L, 1.0L / 1100), 1e-15));
	}
	for (int round = 0; round < 40; round++)
	{
		const uint32_t k = (uint32_t) uniform_int(1, 6);
		const int	degree = uniform_int(3, 400);
		/* magnitudes where x^degree leaves the float64 range but not long double's */
		const double factor = pow(10.0, uniform(-8, 8));
		Set			a = scaled(random_set(k, 2, 1, 12), factor);
		Set			b = scaled(random_set(k, 2, 1, 12), factor);
		GeoaccTwedParams p = params(uniform(0, 1), uniform(0, 2) * factor, degree, true);
		std::vector<double> d = run(GEOACC_DEVICE_CPU, a, &b, p);

		for (uint32_t x = 0; x < a.count(); x++)
			for (uint32_t y = 0; y < b.count(); y++)
			{
				long double want = reference_pair(a, x, b, y, p);

				if (std::isfinite((double) want))
					CHECK(close(d[x * b.count() + y], want, 1e-12));
			}
	}
}

TEST(twed_extreme_magnitudes)
{
	Set			a,
				b;

	/* differences near 1e200 and 1e-200 neither overflow nor vanish in the Euclidean norm */
	a.dims = b.dims = 2;
	a.add({1e200, -1e200}, {0});
	b.add({-1e200, 1e200}, {0});
	CHECK(close(run(GEOACC_DEVICE_CPU, a, &b, params(0, 0))[0], 2e200L * sqrtl(2.0L), 1e-15));
	a = Set();
	b = Set();
	a.dims = b.dims = 2;
	a.add({3e-200, 0}, {0});
	b.add({0, 4e-200}, {0});
	CHECK(close(run(GEOACC_DEVICE_CPU, a, &b, params(0, 0))[0], 5e-200L, 1e-15));

	/* a difference beyond the float64 range is infinite, never NaN */
	a = Set();
	b = Set();
	a.dims = b.dims = 1;
	a.add({1.5e308}, {0});
	b.add({-1.5e308}, {0});
	CHECK(std::isinf(run(GEOACC_DEVICE_CPU, a, &b, params(0, 0, 2))[0]));
	CHECK(std::isinf(run(GEOACC_DEVICE_CPU, a, &b, params(1, 1, 3))[0]));

	/* times whose difference leaves the range are refused (nu = 0 made NaN of them) */
	a = Set();
	b = Set();
	a.dims = b.dims = 1;
	a.add({1, 2}, {-1e308, 1e308});
	b.add({1}, {0});
	std::vector<double> out(1);
	GeoaccTwedSet va = a.view(),
				vb = b.view();
	GeoaccTwedParams p = params(0, 1);

	CHECK(geoacc_twed(GEOACC_DEVICE_CPU, &va, &vb, &p, out.data()) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(strstr(geoacc_status_message(), "beyond the float64 range") != nullptr);
}

TEST(twed_gpu_matches_cpu_at_large_degrees_and_magnitudes)
{
	REQUIRE_GPU();
	for (int round = 0; round < 24; round++)
	{
		const uint32_t k = (uint32_t) uniform_int(1, 5);
		const double factor = pow(10.0, uniform(-290, 290));
		Set			a = scaled(random_set(k, uniform_int(1, 6), 1, 80), factor);
		Set			b = scaled(random_set(k, uniform_int(1, 6), 1, 80), factor);
		const GeoaccTwedParams p = params(uniform(0, 1), uniform(0, 2), round % 3 == 0 ? 2 : uniform_int(3, 300),
										  round % 4 != 1, round % 5 == 2 && fabs(log10(factor)) < 20);

		CHECK(same_bits(run(GEOACC_DEVICE_GPU, a, &b, p), run(GEOACC_DEVICE_CPU, a, &b, p)));
	}
}

TEST(twed_cpu_single_points_and_epoch_times)
{
	Set			a = random_set(2, 3, 1, 1, 1.6e9);	/* one point each */
	Set			b = random_set(2, 3, 1, 5, 1.6e9);
	GeoaccTwedParams p = params(0.01, 1);
	std::vector<double> d = run(GEOACC_DEVICE_CPU, a, &b, p);
	std::vector<double> single = run(GEOACC_DEVICE_CPU, a, nullptr, p);

	for (uint32_t x = 0; x < 3; x++)
		for (uint32_t y = 0; y < 3; y++)
			CHECK(close(d[x * 3 + y], reference_pair(a, x, b, y, p), 1e-12));
	/* one point against one point: d(a_1, b_1) + nu * |ta_1 - tb_1| */
	CHECK(close(single[0], reference_lp(a.series_values(0), a.series_values(1), 2, 2, true)
				+ 0.01L * fabsl((long double) a.times[0] - a.times[1]), 1e-15));
}

TEST(twed_uci_synthetic_control_matches_reference)
{
	Set			uci = load_uci();

	CHECK(uci.count() == 600);
	if (uci.count() != 600)
		return;

	/* every pair x < y against the reference (two threads: long double is slow) */
	const GeoaccTwedParams p = params(1, 1);
	const std::vector<double> upper = run(GEOACC_DEVICE_CPU, uci, nullptr, p);
	int			far[2] = {0, 0};
	auto		check_rows = [&](int parity) {
		for (uint32_t x = parity; x < 600; x += 2)
			for (uint32_t y = x + 1; y < 600; y++)
				far[parity] += !close(upper[x * 600 - x * (x + 1) / 2 + y - x - 1],
									  reference_pair(uci, x, uci, y, p), 1e-12);
	};
	std::thread other(check_rows, 1);

	check_rows(0);
	other.join();
	CHECK(far[0] == 0 && far[1] == 0);

	/* the rest of the 600 x 600 matrix: zeros on the diagonal, (y, x) = (x, y) to the bit */
	for (uint32_t first = 0; first < 600; first += 150)
	{
		Set			rows;

		rows.offsets.assign(uci.offsets.begin() + first, uci.offsets.begin() + first + 151);
		for (uint64_t &o : rows.offsets)
			o -= uci.offsets[first];
		rows.values.assign(uci.values.begin() + uci.offsets[first] * 1, uci.values.begin() + uci.offsets[first + 150]);
		rows.times.assign(uci.times.begin() + uci.offsets[first], uci.times.begin() + uci.offsets[first + 150]);

		const std::vector<double> block = run(GEOACC_DEVICE_CPU, rows, &uci, p);
		int			wrong = 0;

		for (uint32_t x = first; x < first + 150; x++)
			for (uint32_t y = 0; y < 600; y++)
			{
				const double d = block[(x - first) * 600 + y];

				wrong += x == y ? d != 0
					: d != upper[std::min(x, y) * 600 - std::min(x, y) * (std::min(x, y) + 1) / 2
								 + std::max(x, y) - std::min(x, y) - 1];
			}
		CHECK(wrong == 0);
	}
}

TEST(twed_cpu_symmetric_order_and_transpose)
{
	Set			a = random_set(3, 9, 1, 30);
	const GeoaccTwedParams p = params(0.5, 0.25, 3, true);
	std::vector<double> full = run(GEOACC_DEVICE_CPU, a, &a, p);
	std::vector<double> upper = run(GEOACC_DEVICE_CPU, a, nullptr, p);
	uint64_t	q = 0;

	CHECK(upper.size() == 36);
	for (uint32_t x = 0; x < 9; x++)
		for (uint32_t y = x + 1; y < 9; y++, q++)
		{
			CHECK(upper[q] == full[x * 9 + y]);
			CHECK(upper[q] == full[y * 9 + x]);
		}
}

TEST(twed_float32_rebases_values_and_times)
{
	/* integer values and epoch times: shifting both series by a common offset changes nothing */
	Set			a,
				b,
				a_shifted,
				b_shifted;

	a.dims = b.dims = a_shifted.dims = b_shifted.dims = 2;
	for (Set *s : {&a, &b})
	{
		std::vector<double> v, t;
		int			n = uniform_int(20, 50);

		for (int i = 0; i < n; i++)
		{
			v.push_back(uniform_int(-500, 500));
			v.push_back(uniform_int(-500, 500));
			t.push_back(10.0 * i + uniform_int(0, 9));
		}
		s->add(v, t);
		for (double &x : v)
			x += 4.5e6;			/* UTM northings */
		for (double &x : t)
			x += 1.6e9;			/* epoch seconds */
		(s == &a ? a_shifted : b_shifted).add(v, t);
	}

	const GeoaccTwedParams p32 = params(0.001, 1, 2, true, true);
	const double d64 = run(GEOACC_DEVICE_CPU, a_shifted, &b_shifted, params(0.001, 1))[0];
	const double d32 = run(GEOACC_DEVICE_CPU, a, &b, p32)[0];

	CHECK(run(GEOACC_DEVICE_CPU, a_shifted, &b_shifted, p32)[0] == d32);
	CHECK(close(d32, d64, 1e-5));
	CHECK(close(d64, reference_pair(a, 0, b, 0, params(0.001, 1)), 1e-12));
}

TEST(twed_float32_either_order_to_the_bit)
{
	/*
	 * Each pair in the frame of one of its series, chosen by the pair alone:
	 * (a, b) and (b, a) give the same bits in float32 too, for series of
	 * different lengths, of equal lengths (the frame then follows the first
	 * points) and with equal first points.
	 */
	for (uint32_t k : {1u, 2u, 3u, 5u})
		for (int lengths = 0; lengths < 3; lengths++)
		{
			/* lengths 0: any; else equal, and with lengths == 2 the same first point and time */
			const int	n = uniform_int(1, 300);
			Set			a = far_float32_set(k, 1, lengths ? n : 1, lengths ? n : 300);
			Set			b = far_float32_set(k, 1, lengths ? n : 1, lengths ? n : 300);

			if (lengths == 2)
			{
				const double shift = a.times[0] - b.times[0];

				std::copy(a.values.begin(), a.values.begin() + k, b.values.begin());
				for (double &t : b.times)
					t += shift;
			}

			const GeoaccTwedParams p32 = params(uniform(0, 0.01), uniform(0, 2), uniform_int(1, 4), true, true);
			const double d32 = run(GEOACC_DEVICE_CPU, a, &b, p32)[0];

			CHECK(run(GEOACC_DEVICE_CPU, b, &a, p32)[0] == d32);
		}
}

TEST(twed_float32_pair_far_from_the_first_series)
{
	/*
	 * Issue 11: with one origin for a whole matrix, the first point of its
	 * first series, the pair (2, 3) of series far from series 1 came out 0
	 * in float32 (11.004 in float64).  Each pair now has its own frame: the
	 * matrix gives the bits of the pair alone, close to float64.
	 */
	Set			set,
				two,
				three;

	set.add({0, 1, 2}, {1, 2, 3});
	for (Set *s : {&set, &two})
		s->add({1e9, 1e9, 1e9}, {1, 2, 3});
	for (Set *s : {&set, &three})
		s->add({1e9 + 7, 1e9 + 7, 1e9 + 7}, {1, 2, 3});

	const GeoaccTwedParams p32 = params(0.001, 1, 2, true, true);
	const std::vector<double> d32 = run(GEOACC_DEVICE_CPU, set, nullptr, p32);
	const std::vector<double> d64 = run(GEOACC_DEVICE_CPU, set, nullptr, params(0.001, 1));

	CHECK(fabs(d64[2] - 11.004) < 1e-9);
	CHECK(d32[2] == run(GEOACC_DEVICE_CPU, two, &three, p32)[0]);
	CHECK(close(d32[2], d64[2], 1e-6));
	for (int q = 0; q < 2; q++)
		CHECK(close(d32[q], d64[q], 1e-6));

	/* trajectories: three vessels 1,000 km apart in UTM coordinates and epoch seconds, and in a matrix */
	Set			tracks = far_float32_set(2, 12, 1, 200);
	const std::vector<double> matrix = run(GEOACC_DEVICE_CPU, tracks, nullptr, p32);
	uint64_t	q = 0;

	for (uint32_t x = 0; x < tracks.count(); x++)
		for (uint32_t y = x + 1; y < tracks.count(); y++, q++)
		{
			Set			sx,
						sy;

			sx.dims = sy.dims = 2;
			sx.add(std::vector<double>(tracks.series_values(x), tracks.series_values(x) + 2 * tracks.length(x)),
				   std::vector<double>(tracks.series_times(x), tracks.series_times(x) + tracks.length(x)));
			sy.add(std::vector<double>(tracks.series_values(y), tracks.series_values(y) + 2 * tracks.length(y)),
				   std::vector<double>(tracks.series_times(y), tracks.series_times(y) + tracks.length(y)));
			CHECK(matrix[q] == run(GEOACC_DEVICE_CPU, sx, &sy, p32)[0]);
		}
}

TEST(twed_float32_high_degrees_at_400_km)
{
	/*
	 * Issue 11: degree 7 and a 400 km step overflowed float32 (Infinity
	 * instead of 400001).  The scaled norm holds every degree; a distance
	 * float32 cannot hold (the powered form, root => false) is an error.
	 */
	Set			a,
				b;

	a.dims = b.dims = 2;
	a.add({5e5, 4.5e6, 9e5, 4.5e6}, {1.6e9, 1.6e9 + 60});
	b.add({5e5, 4.5e6}, {1.6e9});
	for (int degree = 1; degree <= 8; degree++)
	{
		CHECK(run(GEOACC_DEVICE_CPU, a, &b, params(0, 1, degree, true, true))[0] == 400001);
		CHECK(run(GEOACC_DEVICE_CPU, a, &b, params(0, 1, degree, true))[0] == 400001);
	}

	/* a diagonal step of (300 km, 400 km) */
	a.values[2] = 8e5;
	a.values[3] = 4.9e6;
	for (int degree = 2; degree <= 8; degree++)
	{
		const GeoaccTwedParams p = params(0.001, 1, degree, true);
		const long double want = reference_pair(a, 0, b, 0, p);

		CHECK(close(run(GEOACC_DEVICE_CPU, a, &b, p)[0], want, 1e-12));
		CHECK(close(run(GEOACC_DEVICE_CPU, a, &b, params(0.001, 1, degree, true, true))[0], want, 1e-6));
	}

	/* 4e5^7 = 1.6e39 is beyond float32 (3.4e38): an error, not Infinity */
	GeoaccTwedSet va = a.view(),
				vb = b.view();
	GeoaccTwedParams p32 = params(0, 1, 7, false, true);
	double		out = 0;

	CHECK(close(run(GEOACC_DEVICE_CPU, a, &b, params(0, 1, 7, false))[0], reference_pair(a, 0, b, 0, p32), 1e-12));
	CHECK(geoacc_twed(GEOACC_DEVICE_CPU, &va, &vb, &p32, &out) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(strstr(geoacc_status_message(), "a distance is out of range for float32") != nullptr);
	p32.degree = 5;
	CHECK_OK(geoacc_twed(GEOACC_DEVICE_CPU, &va, &vb, &p32, &out));
	CHECK(close(out, reference_pair(a, 0, b, 0, p32), 1e-6));
}

TEST(twed_float32_error_bound_on_random_pairs)
{
	/* GEOACC_TWED_FLOAT32_SETS: how many random sets (the README's measurement ran 20,000) */
	const char *sets_env = getenv("GEOACC_TWED_FLOAT32_SETS");
	const int	sets = sets_env ? atoi(sets_env) : 150;
	long double worst = 0,
				worst_relative = 0,
				worst_relative_spread = 0;
	uint64_t	pairs = 0;

	for (int round = 0; round < sets; round++)
	{
		/* without the root, powers of 400 km steps leave the float32 range beyond degree 4 */
		const bool	root = uniform_int(0, 4) > 0;
		const int	degree = root ? uniform_int(1, 8) : uniform_int(1, 4);
		const double nu = uniform_int(0, 3) == 0 ? 0 : pow(10.0, uniform(-4, 1));
		const double lambda = uniform_int(0, 3) == 0 ? 0 : pow(10.0, uniform(-1, 4));
		const GeoaccTwedParams p64 = params(nu, lambda, degree, root);
		const GeoaccTwedParams p32 = params(nu, lambda, degree, root, true);
		const Set	set = far_float32_set(0, uniform_int(2, 8), 1, round % 10 == 0 ? 300 : 40);
		const std::vector<double> d64 = run(GEOACC_DEVICE_CPU, set, nullptr, p64);
		const std::vector<double> d32 = run(GEOACC_DEVICE_CPU, set, nullptr, p32);
		uint64_t	q = 0;

		for (uint32_t x = 0; x < set.count(); x++)
			for (uint32_t y = x + 1; y < set.count(); y++, q++)
			{
				const long double extent = pair_extent(set, x, set, y, p64);
				const long double error = float32_error_in_bound(d32[q], d64[q], set.length(x),
																		set.length(y), extent, p64);
				const long double relative = fabsl((long double) d32[q] - d64[q]) / d64[q];

				if (!(error <= 1))
					fprintf(stderr, "    %u x %u points, degree %d%s, nu %g, lambda %g: float32 %.9g, float64 %.17g, "
							"extent %.6Lg: %.3Lg of the bound\n", (unsigned) set.length(x), (unsigned) set.length(y),
							degree, root ? "" : " without the root", nu, lambda, d32[q], d64[q], extent, error);
				CHECK(error <= 1);
				worst = std::max(worst, error);
				worst_relative = std::max(worst_relative, relative);
				if (d64[q] >= extent)
					worst_relative_spread = std::max(worst_relative_spread, relative
													 / ((long double) (set.length(x) + set.length(y))));
				pairs++;
			}
	}
	printf("    %llu float32 pairs: worst error %.3Lg of the bound; worst relative error %.3Lg, "
		   "%.3Lg x (n + m) where d >= E\n", (unsigned long long) pairs, worst, worst_relative, worst_relative_spread);
}

TEST(twed_bad_inputs)
{
	Set			good = random_set(2, 2, 3, 5);
	GeoaccTwedParams p = params(1, 1);
	double		out[4];

	auto		status_of = [&](const Set &a, const Set *b, const GeoaccTwedParams &q) {
		GeoaccTwedSet va = a.view();
		GeoaccTwedSet vb = b ? b->view() : GeoaccTwedSet();

		return geoacc_twed(GEOACC_DEVICE_CPU, &va, b ? &vb : nullptr, &q, out);
	};
	auto		rejects = [&](const Set &a, const Set *b, const GeoaccTwedParams &q, const char *words) {
		return status_of(a, b, q) == GEOACC_ERR_INVALID_ARGUMENT
			&& strstr(geoacc_status_message(), words) != nullptr;
	};

	CHECK(status_of(good, &good, p) == GEOACC_OK);
	CHECK(rejects(good, &good, params(-1, 1), "nu must be a finite, non-negative number"));
	CHECK(rejects(good, &good, params(NAN, 1), "nu must be"));
	CHECK(rejects(good, &good, params(INFINITY, 1), "nu must be"));
	CHECK(rejects(good, &good, params(1, -0.5), "lambda must be a finite, non-negative number"));
	CHECK(rejects(good, &good, params(1, NAN), "lambda must be"));
	CHECK(rejects(good, &good, params(1, 1, 0), "degree must be at least 1"));

	Set			bad = good;

	bad.values[3] = NAN;
	CHECK(rejects(bad, &good, p, "series 1 of a: value 2 of point 2 is not finite"));
	bad = good;
	bad.values.back() = -INFINITY;
	CHECK(rejects(good, &bad, p, "of b: value 2 of point"));
	bad = good;
	bad.times[1] = INFINITY;
	CHECK(rejects(bad, nullptr, p, "series 1 of a: the time of point 2 is not finite"));
	bad = good;
	bad.times[bad.offsets[1] + 2] = bad.times[bad.offsets[1] + 1];
	CHECK(rejects(bad, nullptr, p, "series 2 of a: the time of point 3 does not increase"));
	bad = good;
	bad.times[1] = bad.times[0] - 1;
	CHECK(rejects(good, &bad, p, "series 1 of b: the time of point 2 does not increase"));
	bad = good;
	bad.offsets[1] = 0;
	CHECK(rejects(bad, &good, p, "series 1 of a is empty"));

	Set			other = random_set(3, 1, 2, 2);

	CHECK(rejects(good, &other, p, "a has 2 values per point and b has 3"));
	bad = good;
	bad.dims = 0;
	CHECK(rejects(bad, nullptr, p, "need at least one value per point"));
	bad = good;
	bad.values[0] = 1e300;
	CHECK(status_of(bad, &good, p) == GEOACC_OK);
	CHECK(rejects(good, &bad, params(1, 1, 2, true, true), "value 1 of the points spans"));
	CHECK(strstr(geoacc_status_message(), "to 1e+300, too wide a range for float32") != nullptr);
	/* one series alone is not enough: a pair moves one series into the frame of the other */
	bad = Set();
	bad.dims = 2;
	bad.add({0, 0}, {0});
	Set			far_away = bad;

	far_away.values = {0, 1.8e38};
	CHECK(rejects(bad, &far_away, params(1, 1, 2, true, true), "value 2 of the points spans 0 to 1.8e+38"));
	far_away.values = {0, 1.6e38};
	CHECK(status_of(bad, &far_away, params(1, 1, 2, true, true)) == GEOACC_OK);
	far_away.values = {0, 0};
	far_away.times = {-1.8e38};
	CHECK(rejects(bad, &far_away, params(1, 1, 2, true, true), "the times span -1.8e+38 to 0, too wide a range"));
	CHECK(geoacc_twed(GEOACC_DEVICE_CPU, nullptr, nullptr, &p, out) == GEOACC_ERR_INVALID_ARGUMENT);
}

TEST(twed_empty_sets_give_no_pairs)
{
	Set			none,
				one = random_set(1, 1, 2, 4);
	GeoaccTwedParams p = params(1, 1);

	CHECK(run(GEOACC_DEVICE_CPU, none, &one, p).empty());
	CHECK(run(GEOACC_DEVICE_CPU, one, nullptr, p).empty());
}

TEST(twed_cpu_stops_on_interrupt)
{
	check_stops_on_interrupt(GEOACC_DEVICE_CPU, 3000, 1 << 16);
}

/* ------------------------------------------------------ GPU against CPU */

TEST(twed_gpu_matches_cpu_on_short_pairs)
{
	REQUIRE_GPU();
	const uint32_t dims[] = {1, 2, 3, 5, 28};

	for (uint32_t k : dims)
		for (int degree = 1; degree <= 3; degree++)
			for (int variant = 0; variant < 4; variant++)
			{
				/* lengths across one and several bands of 32 rows, times near 0 or epoch */
				const double t0 = variant & 1 ? 1.6e9 : 0;
				Set			a = random_set(k, uniform_int(1, 12), 1, variant & 2 ? 120 : 40, t0);
				Set			b = random_set(k, uniform_int(1, 12), 1, 70, t0);
				const GeoaccTwedParams p = params(uniform(0, 1), uniform(0, 2), degree, variant != 3,
												  variant == 2);

				CHECK(same_bits(run(GEOACC_DEVICE_GPU, a, &b, p), run(GEOACC_DEVICE_CPU, a, &b, p)));
				CHECK(same_bits(run(GEOACC_DEVICE_GPU, a, nullptr, p), run(GEOACC_DEVICE_CPU, a, nullptr, p)));
			}
}

TEST(twed_gpu_matches_cpu_on_long_pairs)
{
	REQUIRE_GPU();
	/* sizes off the band (32 * R rows) and chunk (32 columns) grid, both orientations */
	const int	shapes[][2] = {{1, 5000}, {1, 70000}, {257, 33}, {2100, 1501}, {700, 3000}};
	const uint32_t dims[] = {1, 2, 3, 4};

	for (uint32_t k : dims)
		for (const auto &shape : shapes)
			for (int float32 = 0; float32 <= 1; float32++)
			{
				Set			a = random_set(k, 1, shape[0], shape[0], 1.6e9);
				Set			b = random_set(k, 1, shape[1], shape[1], 1.6e9);
				const GeoaccTwedParams p = params(uniform(0, 0.01), uniform(0, 2), k == 4 ? 3 : 2, true, float32);

				CHECK(run(GEOACC_DEVICE_GPU, a, &b, p)[0] == run(GEOACC_DEVICE_CPU, a, &b, p)[0]);
				CHECK(run(GEOACC_DEVICE_GPU, b, &a, p)[0] == run(GEOACC_DEVICE_CPU, b, &a, p)[0]);
			}
}

TEST(twed_gpu_long_pairs_in_either_order)
{
	REQUIRE_GPU();
	/* rows a or rows b, the same bits as the CPU in either order (float32: a frame chosen by the pair alone) */
	const int	shapes[][2] = {{1, 5000}, {257, 33}, {700, 3000}, {2100, 1501}, {1500, 1500}};

	for (uint32_t k : {1u, 2u, 3u, 4u})
		for (const auto &shape : shapes)
			for (int float32 = 0; float32 <= 1; float32++)
			{
				Set			a = random_set(k, 1, shape[0], shape[0], 1.6e9);
				Set			b = random_set(k, 1, shape[1], shape[1], 1.6e9);
				const GeoaccTwedParams p = params(uniform(0, 0.01), uniform(0, 2), k == 4 ? 3 : 2, true, float32);
				const double cpu = run(GEOACC_DEVICE_CPU, a, &b, p)[0];

				CHECK(run(GEOACC_DEVICE_CPU, b, &a, p)[0] == cpu);
				CHECK(run(GEOACC_DEVICE_GPU, a, &b, p)[0] == cpu);
				CHECK(run(GEOACC_DEVICE_GPU, b, &a, p)[0] == cpu);
			}
}

TEST(twed_gpu_matches_cpu_on_far_float32_pairs)
{
	REQUIRE_GPU();
	/*
	 * Series far apart, near-duplicates and equal lengths, 1 to 5 values per
	 * point (beyond 3 the moved rows go through memory): many short pairs
	 * one warp each, a few long pairs (moved on the host), in both orders,
	 * under a tiny memory cap too; and the error bound on the GPU's bits.
	 */
	long double worst = 0;

	for (int round = 0; round < 40; round++)
	{
		const bool	root = round % 5 != 4;
		const int	degree = root ? uniform_int(1, 8) : uniform_int(1, 4);
		const GeoaccTwedParams p = params(pow(10.0, uniform(-4, 0)), pow(10.0, uniform(-1, 3)), degree, root, true);
		const GeoaccTwedParams p64 = params(p.nu, p.lambda, degree, root);
		const Set	a = far_float32_set((uint32_t) (round % 5 + 1), uniform_int(2, 30), 1, round % 4 == 0 ? 400 : 60);
		const Set	b = far_float32_set(a.dims, uniform_int(1, 12), 1, 60);
		const std::vector<double> gpu = run(GEOACC_DEVICE_GPU, a, nullptr, p);
		const std::vector<double> d64 = run(GEOACC_DEVICE_CPU, a, nullptr, p64);
		uint64_t	q = 0;

		CHECK(same_bits(gpu, run(GEOACC_DEVICE_CPU, a, nullptr, p)));
		CHECK(same_bits(run(GEOACC_DEVICE_GPU, a, &b, p), run(GEOACC_DEVICE_CPU, a, &b, p)));
		CHECK(same_bits(run(GEOACC_DEVICE_GPU, b, &a, p), run(GEOACC_DEVICE_CPU, b, &a, p)));
		for (uint32_t x = 0; x < a.count(); x++)
			for (uint32_t y = x + 1; y < a.count(); y++, q++)
				worst = std::max(worst, float32_error_in_bound(gpu[q], d64[q], a.length(x), a.length(y),
																	 pair_extent(a, x, a, y, p64), p64));
		if (round % 8 == 0)
		{
			geoacc_gpu_set_memory_limit(uint64_t(256) << 10);
			CHECK(same_bits(run(GEOACC_DEVICE_GPU, a, &b, p), run(GEOACC_DEVICE_CPU, a, &b, p)));
			geoacc_gpu_set_memory_limit(0);
		}
	}
	CHECK(worst <= 1);

	/* few pairs of 2^16 cells or more run as long pairs, here of equal lengths too, in both orders */
	for (uint32_t k : {1u, 2u, 4u})
		for (int n : {700, 2100})
		{
			const Set	a = far_float32_set(k, 3, n, n);
			const Set	b = far_float32_set(k, 2, n / 2, n);
			const GeoaccTwedParams p = params(0.001, 1, k == 4 ? 5 : 2, true, true);

			CHECK(same_bits(run(GEOACC_DEVICE_GPU, a, nullptr, p), run(GEOACC_DEVICE_CPU, a, nullptr, p)));
			CHECK(same_bits(run(GEOACC_DEVICE_GPU, a, &b, p), run(GEOACC_DEVICE_CPU, a, &b, p)));
			CHECK(same_bits(run(GEOACC_DEVICE_GPU, b, &a, p), run(GEOACC_DEVICE_CPU, b, &a, p)));
		}
}

TEST(twed_gpu_matches_cpu_on_mixed_pairs)
{
	REQUIRE_GPU();
	/* few pairs: the large ones run as long pairs, the others one warp each, in the same call */
	Set			a,
				b;

	for (int n : {10, 400, 3000})
		add_random_series(a, n);
	for (int m : {5, 300, 2500})
		add_random_series(b, m);

	const GeoaccTwedParams p = params(0.3, 0.7);

	CHECK(same_bits(run(GEOACC_DEVICE_GPU, a, &b, p), run(GEOACC_DEVICE_CPU, a, &b, p)));
	CHECK(same_bits(run(GEOACC_DEVICE_GPU, b, nullptr, p), run(GEOACC_DEVICE_CPU, b, nullptr, p)));
}

TEST(twed_gpu_matches_cpu_over_many_launches)
{
	REQUIRE_GPU();
	/* launches of a few tiles each: edges, corners and flags carry over between launches */
	Set			a = random_set(1, 1, 3000, 3000);
	Set			b = random_set(1, 1, 2500, 2500);
	Set			many = random_set(2, 150, 1, 200);
	const GeoaccTwedParams p = params(0.1, 1);
	const double cpu = run(GEOACC_DEVICE_CPU, a, &b, p)[0];
	const std::vector<double> cpu_many = run(GEOACC_DEVICE_CPU, many, nullptr, p);

	for (uint64_t ops : {uint64_t(1) << 20, uint64_t(1) << 24})
	{
		geoacc_twed_set_poll_ops(ops);
		CHECK(run(GEOACC_DEVICE_GPU, a, &b, p)[0] == cpu);
		CHECK(same_bits(run(GEOACC_DEVICE_GPU, many, nullptr, p), cpu_many));
	}
	geoacc_twed_set_poll_ops(0);
}

TEST(twed_gpu_matches_cpu_under_tiny_memory_caps)
{
	REQUIRE_GPU();
	/* groups of series block by block; long pairs in super-blocks through host memory */
	Set			set = random_set(2, 120, 1, 400);
	Set			long_a = random_set(2, 1, 6000, 6000);
	Set			long_b = random_set(2, 1, 5000, 5000);
	const GeoaccTwedParams p = params(0.2, 0.5);
	const std::vector<double> cpu_sym = run(GEOACC_DEVICE_CPU, set, nullptr, p);
	const std::vector<double> cpu_full = run(GEOACC_DEVICE_CPU, set, &long_a, p);
	const double cpu_long = run(GEOACC_DEVICE_CPU, long_a, &long_b, p)[0];

	for (uint64_t cap : {uint64_t(256) << 10, uint64_t(2) << 20})
	{
		geoacc_gpu_set_memory_limit(cap);
		CHECK(same_bits(run(GEOACC_DEVICE_GPU, set, nullptr, p), cpu_sym));
		CHECK(same_bits(run(GEOACC_DEVICE_GPU, set, &long_a, p), cpu_full));
		CHECK(run(GEOACC_DEVICE_GPU, long_a, &long_b, p)[0] == cpu_long);
		CHECK(geoacc_gpu_memory_in_use() == 0);
	}
	geoacc_gpu_set_memory_limit(0);
}

TEST(twed_gpu_matches_cpu_on_uci)
{
	REQUIRE_GPU();
	Set			uci = load_uci();

	CHECK(uci.count() == 600);
	for (int float32 = 0; float32 <= 1; float32++)
	{
		const GeoaccTwedParams p = params(1, 1, 2, true, float32);

		CHECK(same_bits(run(GEOACC_DEVICE_GPU, uci, nullptr, p), run(GEOACC_DEVICE_CPU, uci, nullptr, p)));
	}
}

TEST(twed_gpu_stops_on_interrupt)
{
	REQUIRE_GPU();
	check_stops_on_interrupt(GEOACC_DEVICE_GPU, 20000, 1 << 24);
}

/* The device memory a call asks the budget for: each set as one group, the longest pair in one block. */
TEST(twed_device_need)
{
	Set			set = random_set(2, 120, 1, 400);
	Set			long_a = random_set(2, 1, 6000, 6000);
	GeoaccTwedSet vs = set.view(),
				va = long_a.view();
	const GeoaccTwedParams p64 = params(0.2, 0.5);
	const GeoaccTwedParams p32 = params(0.2, 0.5, 2, true, true);
	GeoaccDeviceNeed sym = geoacc_twed_need(&vs, nullptr, &p64);
	GeoaccDeviceNeed full = geoacc_twed_need(&vs, &va, &p64);
	GeoaccDeviceNeed single = geoacc_twed_need(&vs, nullptr, &p32);

	/* four times the larger set: values, time and deletion cost of every point */
	CHECK(sym.bytes > 4 * 4 * 8 * set.offsets.back() && sym.least == sym.bytes);
	CHECK(full.bytes >= sym.bytes);
	CHECK(single.bytes < sym.bytes);
	/* the long pair: 2 x (6000 + 400 points) x (values, time, deletion cost, edge) */
	CHECK(full.bytes >= 2 * 6400ull * (6 * 8 + 8));

	/* a set too large for the GPU in one group: at least 64 MB, in which it is cut into groups */
	Set			large = random_set(2, 8, 100000, 100000);
	GeoaccTwedSet vl = large.view();
	GeoaccDeviceNeed big = geoacc_twed_need(&vl, nullptr, &p64);

	CHECK(big.bytes > 4 * 4 * 8 * 800000ull && big.least == (uint64_t(64) << 20));
}

/* Capped at its need, or at its least, as a reservation from the budget caps it: the CPU's bits. */
TEST(twed_gpu_within_its_device_need)
{
	REQUIRE_GPU();
	/* a few pairs: long pairs from 2^16 cells on */
	Set			set = random_set(2, 300, 1, 400);
	Set			long_a = random_set(2, 2, 1500, 2500);
	Set			long_b = random_set(2, 1, 2000, 2000);

	CHECK_OK(geoacc_gpu_init());
	for (bool float32 : {false, true})
	{
		const GeoaccTwedParams p = params(0.2, 0.5, 2, true, float32);
		const std::vector<double> cpu_sym = run(GEOACC_DEVICE_CPU, set, nullptr, p);
		const std::vector<double> cpu_full = run(GEOACC_DEVICE_CPU, set, &long_a, p);
		const std::vector<double> cpu_long = run(GEOACC_DEVICE_CPU, long_a, &long_b, p);
		GeoaccTwedSet vs = set.view(),
					va = long_a.view(),
					vb = long_b.view();
		GeoaccDeviceNeed sym = geoacc_twed_need(&vs, nullptr, &p);
		GeoaccDeviceNeed full = geoacc_twed_need(&vs, &va, &p);
		GeoaccDeviceNeed pair = geoacc_twed_need(&va, &vb, &p);

		for (uint64_t bytes : {sym.bytes, sym.least})
		{
			geoacc_gpu_set_reservation(bytes);
			CHECK(same_bits(run(GEOACC_DEVICE_GPU, set, nullptr, p), cpu_sym));
		}
		for (uint64_t bytes : {full.bytes, full.least})
		{
			geoacc_gpu_set_reservation(bytes);
			CHECK(same_bits(run(GEOACC_DEVICE_GPU, set, &long_a, p), cpu_full));
		}
		for (uint64_t bytes : {pair.bytes, pair.least})
		{
			geoacc_gpu_set_reservation(bytes);
			CHECK(same_bits(run(GEOACC_DEVICE_GPU, long_a, &long_b, p), cpu_long));
		}
	}
	geoacc_gpu_set_reservation(0);
	CHECK(geoacc_gpu_memory_in_use() == 0);
}
