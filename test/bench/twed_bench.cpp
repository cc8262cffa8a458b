/*
 * twed_bench.cpp
 *
 * Core-level TWED benchmark (no server): times geoacc_twed on the GPU in
 * float64 and float32, its CPU twin, and a plain C implementation of the
 * recurrence (two rows of linear memory, the tool a user would write) on
 * the CPU's share, and
 * prints markdown table rows with cell updates per second.
 *
 *   twed_bench pairs MIN_LOG2 MAX_LOG2 CPU_MAX_LOG2 SECONDS
 *       one pair of random walks of n = m = 2^k points, k = MIN..MAX; the
 *       CPU runs only up to CPU_MAX_LOG2; a GPU size whose predicted time
 *       (4x the previous one) exceeds SECONDS is skipped, not extrapolated
 *   twed_bench uci FILE
 *       all 179,700 pairs of the UCI synthetic control set
 *   twed_bench mnist FILE.u8 N CPU_N
 *       N x N MNIST digits (28 steps in R^28, times 0..27) on the GPU, and
 *       CPU_N x CPU_N of them on the CPU; FILE.u8: records of a label byte
 *       and 784 pixel bytes
 *   twed_bench far N LENGTH CPU_N
 *       all pairs of N random trajectories of 2 to LENGTH points in UTM
 *       coordinates and epoch seconds, up to 2,000 km apart, steps up to
 *       400 km (nu = 0.001, lambda = 1): float32 far from the origin
 *
 * Timings include preparing and copying the series (the whole core call).
 * GPU = CPU compares both precisions on the pairs the CPU computed; float32
 * is compared with float64 as a relative difference and as a fraction of
 * the README's bound 2^-22 (n + m) (d + E).
 */
#include "geoacc_core.h"
#include "../uci_synthetic_control.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace
{

struct Set
{
	uint32_t	dims = 1;
	std::vector<uint64_t> offsets{0};
	std::vector<double> values;
	std::vector<double> times;
	std::vector<int> labels;

	uint32_t	count() const { return (uint32_t) offsets.size() - 1; }
	GeoaccTwedSet view() const { return {count(), dims, offsets.data(), values.data(), times.data()}; }
	void		add(const double *v, const double *t, uint64_t n)
	{
		values.insert(values.end(), v, v + n * dims);
		times.insert(times.end(), t, t + n);
		offsets.push_back(times.size());
	}
	Set			first(uint32_t n) const
	{
		Set			s;

		s.dims = dims;
		for (uint32_t i = 0; i < n; i++)
		{
			s.add(&values[offsets[i] * dims], &times[offsets[i]], offsets[i + 1] - offsets[i]);
			s.labels.push_back(labels.empty() ? 0 : labels[i]);
		}
		return s;
	}
};

double
now()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* Run geoacc_twed; the wall time in seconds, or a negative number on failure. */
double
timed(GeoaccDevice device, const Set &a, const Set *b, const GeoaccTwedParams &p, std::vector<double> &out)
{
	GeoaccTwedSet va = a.view();
	GeoaccTwedSet vb = b ? b->view() : GeoaccTwedSet();

	out.assign(b ? (uint64_t) a.count() * b->count() : (uint64_t) a.count() * (a.count() - 1) / 2, 0.0);

	double		start = now();
	GeoaccStatus status = geoacc_twed(device, &va, b ? &vb : nullptr, &p, out.data());
	double		seconds = now() - start;

	if (status != GEOACC_OK)
	{
		fprintf(stderr, "geoacc_twed failed: %s\n", geoacc_status_message());
		return -1;
	}
	return seconds;
}

/* The recurrence as a user would write it in C: two rows, the definition's terms. */
double
plain_twed(const double *a, const double *ta, int n, const double *b, const double *tb, int m, int k,
		   double nu, double lambda)
{
	std::vector<double> prev(m + 1), cur(m + 1);
	auto		dist = [k](const double *x, const double *y) {
		double		s = 0;

		for (int d = 0; d < k; d++)
			s += (x[d] - y[d]) * (x[d] - y[d]);
		return std::sqrt(s);
	};
	std::vector<double> zero(k, 0.0);

	prev[0] = 0;
	for (int j = 1; j <= m; j++)
		prev[j] = INFINITY;
	for (int i = 1; i <= n; i++)
	{
		const double *ai = a + (size_t) (i - 1) * k;
		const double *ap = i > 1 ? ai - k : zero.data();
		const double ti = ta[i - 1];
		const double tp = i > 1 ? ta[i - 2] : 0;

		cur[0] = INFINITY;
		for (int j = 1; j <= m; j++)
		{
			const double *bj = b + (size_t) (j - 1) * k;
			const double *bp = j > 1 ? bj - k : zero.data();
			const double tj = tb[j - 1];
			const double tq = j > 1 ? tb[j - 2] : 0;
			double		match = prev[j - 1] + dist(ai, bj) + dist(ap, bp) + nu * (fabs(ti - tj) + fabs(tp - tq));
			double		delete_a = prev[j] + dist(ap, ai) + nu * (ti - tp) + lambda;
			double		delete_b = cur[j - 1] + dist(bp, bj) + nu * (tj - tq) + lambda;

			cur[j] = std::min(match, std::min(delete_a, delete_b));
		}
		std::swap(prev, cur);
	}
	return prev[m];
}

std::string
rate(double cells, double seconds)
{
	char		buf[64];

	if (seconds < 0)
		return "failed";
	snprintf(buf, sizeof(buf), "%.3f s, %.3g/s", seconds, cells / seconds);
	return buf;
}

void
usage()
{
	fprintf(stderr, "usage: twed_bench pairs MIN_LOG2 MAX_LOG2 CPU_MAX_LOG2 SECONDS\n"
			"       twed_bench uci FILE\n"
			"       twed_bench mnist FILE.u8 N CPU_N\n"
			"       twed_bench far N LENGTH CPU_N\n");
	exit(2);
}

/* Random walk of n points in one dimension, times 1..n. */
Set
random_walk(uint64_t n, std::mt19937_64 &rng)
{
	Set			s;
	std::normal_distribution<double> step(0.0, 1.0);
	std::vector<double> v(n), t(n);
	double		x = 0;

	for (uint64_t i = 0; i < n; i++)
	{
		x += step(rng);
		v[i] = x;
		t[i] = (double) (i + 1);
	}
	s.add(v.data(), t.data(), n);
	return s;
}

int
bench_pairs(int min_log2, int max_log2, int cpu_max_log2, double budget)
{
	const GeoaccTwedParams p64{0.001, 1, 2, 1, 0};
	const GeoaccTwedParams p32{0.001, 1, 2, 1, 1};
	std::mt19937_64 rng(42);
	std::vector<double> out;
	double		last64 = 0,
				last32 = 0;

	/* initialise the GPU outside the timings */
	{
		Set			w = random_walk(1024, rng);

		timed(GEOACC_DEVICE_GPU, w, &w, p64, out);
	}
	printf("| n | cells | GPU float64 | GPU float32 | CPU twin float64 | plain C float64 | GPU = CPU (float64, float32) "
		   "| float32 rel. diff |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	for (int k = min_log2; k <= max_log2; k++)
	{
		const uint64_t n = uint64_t(1) << k;
		const double cells = (double) n * n;
		Set			a = random_walk(n, rng);
		Set			b = random_walk(n, rng);
		double		d64 = NAN,
					d32 = NAN,
					dcpu = NAN,
					dcpu32 = NAN;
		std::string g64 = "skipped (time)",
					g32 = "skipped (time)",
					cpu = "skipped (CPU too slow)",
					plain = "skipped (CPU too slow)";

		if (last64 * 4.2 <= budget)
		{
			last64 = timed(GEOACC_DEVICE_GPU, a, &b, p64, out);
			g64 = rate(cells, last64);
			d64 = out[0];
		}
		if (last32 * 4.2 <= budget)
		{
			last32 = timed(GEOACC_DEVICE_GPU, a, &b, p32, out);
			g32 = rate(cells, last32);
			d32 = out[0];
		}
		if (k <= cpu_max_log2)
		{
			double		t = timed(GEOACC_DEVICE_CPU, a, &b, p64, out);

			cpu = rate(cells, t);
			dcpu = out[0];

			double		start = now();
			double		d = plain_twed(a.values.data(), a.times.data(), (int) n, b.values.data(),
									   b.times.data(), (int) n, 1, p64.nu, p64.lambda);

			plain = rate(cells, now() - start);
			if (std::fabs(d - dcpu) > 1e-9 * dcpu)
				plain += " (differs)";
			if (timed(GEOACC_DEVICE_CPU, a, &b, p32, out) >= 0)
				dcpu32 = out[0];
		}
		printf("| 2^%d | %.3g | %s | %s | %s | %s | %s, %s | %s |\n", k, cells, g64.c_str(), g32.c_str(), cpu.c_str(),
			   plain.c_str(), std::isnan(d64) || std::isnan(dcpu) ? "-" : d64 == dcpu ? "yes" : "NO",
			   std::isnan(d32) || std::isnan(dcpu32) ? "-" : d32 == dcpu32 ? "yes" : "NO",
			   std::isnan(d64) || std::isnan(d32) ? "-" : std::to_string(std::fabs(d32 - d64) / d64).c_str());
		fflush(stdout);
	}
	return 0;
}

/* Leave-one-out nearest-neighbour accuracy from a full matrix. */
double
nn_accuracy(const Set &s, const std::vector<double> &full)
{
	const uint32_t n = s.count();
	uint32_t	right = 0;

	for (uint32_t x = 0; x < n; x++)
	{
		uint32_t	best = x == 0 ? 1 : 0;

		for (uint32_t y = 0; y < n; y++)
			if (y != x && full[(uint64_t) x * n + y] < full[(uint64_t) x * n + best])
				best = y;
		right += s.labels[x] == s.labels[best];
	}
	return (double) right / n;
}

double
cells_of(const Set &a, const Set *b)
{
	double		sa = (double) a.times.size();

	if (b)
		return sa * (double) b->times.size();

	double		squares = 0;

	for (uint32_t s = 0; s < a.count(); s++)
		squares += std::pow((double) (a.offsets[s + 1] - a.offsets[s]), 2);
	return (sa * sa - squares) / 2;
}

/* Per series: the lowest and highest of each value and of the time (dims + 1 each). */
struct Boxes
{
	uint32_t	width;
	std::vector<double> lo,
				hi;

	explicit	Boxes(const Set &s) : width(s.dims + 1), lo((size_t) s.count() * width, INFINITY),
		hi((size_t) s.count() * width, -INFINITY)
	{
		for (uint32_t z = 0; z < s.count(); z++)
			for (uint64_t p = s.offsets[z]; p < s.offsets[z + 1]; p++)
				for (uint32_t d = 0; d < width; d++)
				{
					const double v = d < s.dims ? s.values[p * s.dims + d] : s.times[p];

					lo[(size_t) z * width + d] = std::min(lo[(size_t) z * width + d], v);
					hi[(size_t) z * width + d] = std::max(hi[(size_t) z * width + d], v);
				}
	}
};

/*
 * |float32 - float64| of pair (x, y) as a fraction of the README's bound
 * 2^-22 (n + m) (d + E), E the diagonal of the box around both series plus
 * nu times their time range (degree 2 with the root).
 */
double
float32_error_in_bound(const Set &s, const Boxes &boxes, uint32_t x, uint32_t y, double d32, double d64, double nu)
{
	const uint32_t k = s.dims;
	const double *lx = &boxes.lo[(size_t) x * (k + 1)], *hx = &boxes.hi[(size_t) x * (k + 1)];
	const double *ly = &boxes.lo[(size_t) y * (k + 1)], *hy = &boxes.hi[(size_t) y * (k + 1)];
	double		squares = 0;

	for (uint32_t d = 0; d < k; d++)
	{
		const double side = std::max(hx[d], hy[d]) - std::min(lx[d], ly[d]);

		squares += side * side;
	}

	const double extent = std::sqrt(squares) + nu * (std::max(hx[k], hy[k]) - std::min(lx[k], ly[k]));
	const uint64_t points = s.offsets[x + 1] - s.offsets[x] + s.offsets[y + 1] - s.offsets[y];

	return std::fabs(d32 - d64) / (std::ldexp(1.0, -22) * (double) points * (d64 + extent));
}

int
bench_set(const char *name, const Set &gpu_set, const Set &cpu_set, bool symmetric, double nu, double lambda)
{
	const GeoaccTwedParams p64{nu, lambda, 2, 1, 0};
	const GeoaccTwedParams p32{nu, lambda, 2, 1, 1};
	std::vector<double> out64, out32, cpu, cpu32, warm;
	const Set  *gb = symmetric ? nullptr : &gpu_set;
	const Set  *cb = symmetric ? nullptr : &cpu_set;
	const double gcells = cells_of(gpu_set, gb);
	const double ccells = cells_of(cpu_set, cb);

	timed(GEOACC_DEVICE_GPU, cpu_set.first(2), nullptr, p64, warm);

	const double t64 = timed(GEOACC_DEVICE_GPU, gpu_set, gb, p64, out64);
	const double t32 = timed(GEOACC_DEVICE_GPU, gpu_set, gb, p32, out32);
	const double tcpu = timed(GEOACC_DEVICE_CPU, cpu_set, cb, p64, cpu);
	const double tcpu32 = timed(GEOACC_DEVICE_CPU, cpu_set, cb, p32, cpu32);
	const double plain_start = now();
	double		plain_sum = 0,
				cpu_sum = 0;

	for (uint32_t x = 0; x < cpu_set.count(); x++)
		for (uint32_t y = symmetric ? x + 1 : 0; y < cpu_set.count(); y++)
		{
			const uint64_t px = cpu_set.offsets[x], py = cpu_set.offsets[y];

			plain_sum += plain_twed(&cpu_set.values[px * cpu_set.dims], &cpu_set.times[px],
									(int) (cpu_set.offsets[x + 1] - px), &cpu_set.values[py * cpu_set.dims],
									&cpu_set.times[py], (int) (cpu_set.offsets[y + 1] - py), (int) cpu_set.dims,
									nu, lambda);
		}

	const double tplain = now() - plain_start;
	double		max_rel = 0,
				max_bound = 0;
	bool		same = tcpu >= 0 && tcpu32 >= 0 && t64 >= 0 && t32 >= 0,
				same32 = same;

	for (double d : cpu)
		cpu_sum += d;
	for (size_t i = 0; i < out64.size(); i++)
		max_rel = std::max(max_rel, std::fabs(out32[i] - out64[i]) / std::max(out64[i], 1e-300));
	const Boxes boxes(gpu_set);
	uint64_t	q = 0;

	for (uint32_t x = 0; x < gpu_set.count() && out64.size() == out32.size(); x++)
		for (uint32_t y = symmetric ? x + 1 : 0; y < gpu_set.count(); y++, q++)
			max_bound = std::max(max_bound, float32_error_in_bound(gpu_set, boxes, x, y, out32[q], out64[q], nu));
	/* the CPU set is a prefix of the GPU set: compare the pairs both computed */
	for (uint32_t x = 0; x < cpu_set.count(); x++)
		for (uint32_t y = symmetric ? x + 1 : 0; y < cpu_set.count(); y++)
		{
			const uint64_t n = gpu_set.count(), m = cpu_set.count();
			const uint64_t gi = symmetric ? x * n - (uint64_t) x * (x + 1) / 2 + y - x - 1 : x * n + y;
			const uint64_t ci = symmetric ? x * m - (uint64_t) x * (x + 1) / 2 + y - x - 1 : x * m + y;

			same = same && out64[gi] == cpu[ci];
			same32 = same32 && out32[gi] == cpu32[ci];
		}

	printf("| %s | %u series, %.3g cells | %s | %s | %u series: %s, float32 %s | %s%s | %s, %s | %.2g | %.3g |", name,
		   gpu_set.count(), gcells, rate(gcells, t64).c_str(), rate(gcells, t32).c_str(), cpu_set.count(),
		   rate(ccells, tcpu).c_str(), rate(ccells, tcpu32).c_str(), rate(ccells, tplain).c_str(),
		   std::fabs(plain_sum - cpu_sum) <= 1e-9 * cpu_sum ? "" : " (differs)", same ? "yes" : "NO",
		   same32 ? "yes" : "NO", max_rel, max_bound);
	if (!symmetric)
		printf(" 1-NN accuracy %.4f |", nn_accuracy(gpu_set, out64));
	printf("\n");
	return same && same32 ? 0 : 1;
}

Set
load_uci(const char *path)
{
	Set			s;
	std::vector<double> t(UCI_SERIES_LENGTH);

	for (int i = 0; i < UCI_SERIES_LENGTH; i++)
		t[i] = i;
	for (const auto &v : read_uci_synthetic_control(path))
	{
		s.labels.push_back((int) s.count() / 100);
		s.add(v.data(), t.data(), UCI_SERIES_LENGTH);
	}
	return s;
}

Set
load_mnist(const char *path, uint32_t n)
{
	Set			s;
	std::ifstream in(path, std::ios::binary);
	unsigned char record[785];
	std::vector<double> v(784), t(28);

	s.dims = 28;
	for (int i = 0; i < 28; i++)
		t[i] = i;
	while (s.count() < n && in.read((char *) record, sizeof(record)))
	{
		for (int i = 0; i < 784; i++)
			v[i] = record[1 + i] / 255.0;
		s.labels.push_back(record[0]);
		s.add(v.data(), t.data(), 28);
	}
	return s;
}

void
print_set_header(bool accuracy)
{
	printf("| set | size | GPU float64 | GPU float32 | CPU twin float64, float32 | plain C float64 "
		   "| GPU = CPU (float64, float32) | float32 max rel. diff | float32 worst / bound |%s\n", accuracy ? " |" : "");
	printf("|---|---|---|---|---|---|---|---|---|%s\n", accuracy ? "---|" : "");
}

/*
 * n random walks in the plane of 2 to `length` points in UTM coordinates
 * (starts up to 2,000 km apart, steps up to 400 km) with epoch times.
 */
Set
far_tracks(uint32_t n, int length)
{
	Set			s;
	std::mt19937_64 rng(11);
	auto		uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };

	s.dims = 2;
	for (uint32_t i = 0; i < n; i++)
	{
		const int	points = 2 + (int) (rng() % (uint64_t) (length - 1));
		const double step = std::pow(10.0, uniform(0, 5.6));
		std::vector<double> v(2 * points), t(points);
		double		x = 5e5 + uniform(-2e6, 2e6),
					y = 4.5e6 + uniform(-2e6, 2e6),
					time = 1.6e9 + uniform(-1e7, 1e7);

		for (int p = 0; p < points; p++)
		{
			v[2 * p] = x;
			v[2 * p + 1] = y;
			t[p] = time;
			x += uniform(-step, step);
			y += uniform(-step, step);
			time += uniform(1, 600);
		}
		s.labels.push_back(0);
		s.add(v.data(), t.data(), points);
	}
	return s;
}

}								/* namespace */

int
main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "pairs") == 0 && argc == 6)
		return bench_pairs(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atof(argv[5]));
	if (strcmp(argv[1], "uci") == 0 && argc == 3)
	{
		Set			uci = load_uci(argv[2]);

		if (uci.count() != 600)
		{
			fprintf(stderr, "%s: expected 600 series\n", argv[2]);
			return 1;
		}
		print_set_header(false);
		return bench_set("UCI synthetic control, all pairs", uci, uci, true, 1, 1);
	}
	if (strcmp(argv[1], "mnist") == 0 && argc == 5)
	{
		const uint32_t n = (uint32_t) atoi(argv[3]);
		Set			digits = load_mnist(argv[2], n);

		if (digits.count() != n)
		{
			fprintf(stderr, "%s: only %u digits\n", argv[2], digits.count());
			return 1;
		}
		/* a spread of classes for the CPU subset: the file is sorted by digit */
		Set			shuffled;
		std::vector<uint32_t> order(n);
		std::mt19937_64 rng(7);

		for (uint32_t i = 0; i < n; i++)
			order[i] = i;
		std::shuffle(order.begin(), order.end(), rng);
		shuffled.dims = 28;
		for (uint32_t i : order)
		{
			shuffled.add(&digits.values[digits.offsets[i] * 28], &digits.times[digits.offsets[i]], 28);
			shuffled.labels.push_back(digits.labels[i]);
		}
		print_set_header(true);
		return bench_set("MNIST, N x N", shuffled, shuffled.first((uint32_t) atoi(argv[4])), false, 1, 1);
	}
	if (strcmp(argv[1], "far") == 0 && argc == 5)
	{
		Set			tracks = far_tracks((uint32_t) atoi(argv[2]), atoi(argv[3]));

		print_set_header(false);
		return bench_set("far trajectories, all pairs", tracks, tracks.first((uint32_t) atoi(argv[4])), true, 0.001, 1);
	}
	usage();
}
