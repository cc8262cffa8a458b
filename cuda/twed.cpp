/*
 * twed.cpp
 *
 * Time Warp Edit Distance: the C ABI entry point (validation, preparation
 * of the series, choice of device) and the CPU twin, a row-by-row sweep of
 * the dynamic programme in linear memory with the cell arithmetic of
 * twed.h, so that it returns the same bits as the GPU.
 */
#include "twed.h"

#include <algorithm>
#include <limits>

namespace geoacc
{

namespace
{

/* Work between two interrupt polls of the CPU twin (about 20 ms), looked at every CPU_SEGMENT cells. */
constexpr uint64_t CPU_POLL_OPS = uint64_t(1) << 26;
constexpr uint64_t CPU_SEGMENT = 4096;

uint64_t	poll_ops_setting;		/* 0: the defaults */

void
check_params(const GeoaccTwedParams &p)
{
	if (!std::isfinite(p.nu) || p.nu < 0)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "nu must be a finite, non-negative number (it is %g)", p.nu);
	if (!std::isfinite(p.lambda) || p.lambda < 0)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "lambda must be a finite, non-negative number (it is %g)", p.lambda);
	if (p.degree < 1)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "degree must be at least 1 (it is %d)", p.degree);
}

/* Every series non-empty, every value and time finite, times increasing (messages count from 1). */
void
check_set(const GeoaccTwedSet &set, const char *name)
{
	if (set.dims < 1)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the series of %s need at least one value per point", name);
	if (set.count > 0 && (set.offsets == nullptr || set.values == nullptr || set.times == nullptr))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the series of %s are missing", name);
	for (uint32_t s = 0; s < set.count; s++)
	{
		if (set.offsets[s + 1] <= set.offsets[s])
			fail(GEOACC_ERR_INVALID_ARGUMENT, "series %u of %s is empty", s + 1, name);
		for (uint64_t p = set.offsets[s]; p < set.offsets[s + 1]; p++)
		{
			uint64_t	point = p - set.offsets[s] + 1;

			for (uint32_t d = 0; d < set.dims; d++)
				if (!std::isfinite(set.values[p * set.dims + d]))
					fail(GEOACC_ERR_INVALID_ARGUMENT, "series %u of %s: value %u of point %llu is not finite",
						 s + 1, name, d + 1, (unsigned long long) point);
			if (!std::isfinite(set.times[p]))
				fail(GEOACC_ERR_INVALID_ARGUMENT, "series %u of %s: the time of point %llu is not finite",
					 s + 1, name, (unsigned long long) point);
			if (point > 1 && !(set.times[p] > set.times[p - 1]))
				fail(GEOACC_ERR_INVALID_ARGUMENT, "series %u of %s: the time of point %llu does not increase",
					 s + 1, name, (unsigned long long) point);
		}
	}
}

/* A common origin for float32: the first point of a (0 in float64). */
struct Origin
{
	std::vector<double> values;
	double		time = 0;
};

/* The set in T, shifted to the origin, with the deletion cost of every point. */
template <class T>
TwedSeriesSet<T>
prepare(const GeoaccTwedSet &set, const Origin &origin, const char *name, TwedMetric metric, T nu, T lambda)
{
	TwedSeriesSet<T> out;
	const uint32_t k = set.dims;
	const uint64_t base = set.count > 0 ? set.offsets[0] : 0;
	const uint64_t npoints = set.count > 0 ? set.offsets[set.count] - base : 0;

	out.count = set.count;
	out.dims = (int) k;
	out.offsets.resize(set.count + 1);
	for (uint32_t s = 0; s <= set.count; s++)
		out.offsets[s] = set.count > 0 ? set.offsets[s] - base : 0;
	out.values.resize(npoints * k);
	out.times.resize(npoints);
	out.del.resize(npoints);
	for (uint64_t p = 0; p < npoints; p++)
	{
		for (uint32_t d = 0; d < k; d++)
			out.values[p * k + d] = (T) (set.values[(base + p) * k + d] - origin.values[d]);
		out.times[p] = (T) (set.times[base + p] - origin.time);
	}
	for (uint32_t s = 0; s < set.count; s++)
		for (uint64_t p = out.offsets[s]; p < out.offsets[s + 1]; p++)
		{
			for (uint32_t d = 0; d < k; d++)
				if (!std::isfinite(out.values[p * k + d]))
					fail(GEOACC_ERR_INVALID_ARGUMENT,
						 "series %u of %s: value %u of point %llu is out of the float32 range",
						 s + 1, name, d + 1, (unsigned long long) (p - out.offsets[s] + 1));
			if (!std::isfinite(out.times[p]))
				fail(GEOACC_ERR_INVALID_ARGUMENT,
					 "series %u of %s: the time of point %llu is out of the float32 range",
					 s + 1, name, (unsigned long long) (p - out.offsets[s] + 1));
			out.del[p] = p == out.offsets[s] ? T(0)
				: twed_delete_cost(&out.values[(p - 1) * k], out.times[p - 1], &out.values[p * k], out.times[p],
								   (int) k, metric, nu, lambda);
		}
	return out;
}

/*
 * TWED of one pair, rows from series x of a, columns from series y of b:
 * row i-1 of D (and of c) in d[] and c[], overwritten by row i as it goes.
 */
template <class T, int K>
T
pair_cpu(const TwedJob<T> &job, uint32_t x, uint32_t y, std::vector<T> &d, std::vector<T> &c, uint64_t &ops)
{
	const TwedSeriesSet<T> &a = *job.a;
	const TwedSeriesSet<T> &b = *job.b;
	const int	k = a.dims;
	const uint64_t n = a.length(x);
	const uint64_t m = b.length(y);
	const T    *av = &a.values[a.offsets[x] * k];
	const T    *at = &a.times[a.offsets[x]];
	const T    *ad = &a.del[a.offsets[x]];
	const T    *bv = &b.values[b.offsets[y] * k];
	const T    *bt = &b.times[b.offsets[y]];
	const T    *bd = &b.del[b.offsets[y]];
	const T		inf = std::numeric_limits<T>::infinity();
	const uint64_t cell_ops = twed_cell_ops(k, job.metric);

	/* row 0: D(0,0) = 0, D(0,j) = infinity */
	d.assign(m + 1, inf);
	c.assign(m + 1, T(0));
	d[0] = 0;
	for (uint64_t i = 0; i < n; i++)
	{
		T			diag = d[0];
		T			diag_c = c[0];
		T			left = inf;		/* D(i,0) */

		/* the row in segments, polling between them: a row can be long */
		for (uint64_t j0 = 0; j0 < m; j0 += CPU_SEGMENT)
		{
			const uint64_t j1 = std::min(m, j0 + CPU_SEGMENT);

			for (uint64_t j = j0; j < j1; j++)
			{
				T			cost = twed_match_cost<T, K>(&av[i * k], at[i], &bv[j * k], bt[j], k, job.metric,
														 job.nu);
				T			up = d[j + 1];
				T			value = twed_cell(diag, diag_c, up, left, cost, ad[i], bd[j]);

				diag = up;
				diag_c = c[j + 1];
				d[j + 1] = value;
				c[j + 1] = cost;
				left = value;
			}
			ops += (j1 - j0) * cell_ops;
			if (ops >= twed_poll_ops(CPU_POLL_OPS))
			{
				check_interrupt();
				ops = 0;
			}
		}
		d[0] = inf;
		c[0] = 0;
	}
	return d[m];
}

/* Every pair of the job, in the order of geoacc_twed. */
template <class T, int K>
void
twed_cpu(const TwedJob<T> &job, double *distances)
{
	std::vector<T> d, c;
	uint64_t	ops = 0;
	uint64_t	q = 0;

	for (uint32_t x = 0; x < job.a->count; x++)
		for (uint32_t y = job.symmetric ? x + 1 : 0; y < job.b->count; y++)
			distances[q++] = (double) pair_cpu<T, K>(job, x, y, d, c, ops);
}

/*
 * Every time difference the cells take, |ta_i - tb_j| included, must be
 * finite: nu * infinity would be NaN for nu = 0, and infinity otherwise.
 */
template <class T>
void
check_time_span(const TwedSeriesSet<T> &a, const TwedSeriesSet<T> *b)
{
	T			lo = std::numeric_limits<T>::infinity();
	T			hi = -lo;

	for (T t : a.times)
		lo = std::min(lo, t), hi = std::max(hi, t);
	if (b)
		for (T t : b->times)
			lo = std::min(lo, t), hi = std::max(hi, t);
	if (hi >= lo && !std::isfinite(hi - lo))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the times span %g to %g, a difference beyond the %s range",
			 (double) lo, (double) hi, sizeof(T) == sizeof(float) ? "float32" : "float64");
}

/* Prepare both sets in T and compute on the chosen device. */
template <class T>
void
run(GeoaccDevice device, const GeoaccTwedSet &a, const GeoaccTwedSet *b, const GeoaccTwedParams &params,
	double *distances)
{
	const TwedMetric metric{params.degree, params.root != 0};
	/* + 0.0 turns -0 into +0: no negative zero enters the sums */
	const T		nu = (T) (params.nu + 0.0);
	const T		lambda = (T) (params.lambda + 0.0);
	Origin		origin;

	origin.values.assign(a.dims, 0.0);
	if (params.float32 && a.count > 0)
	{
		for (uint32_t d = 0; d < a.dims; d++)
			origin.values[d] = a.values[a.offsets[0] * a.dims + d];
		origin.time = a.times[a.offsets[0]];
	}

	TwedSeriesSet<T> pa = prepare<T>(a, origin, "a", metric, nu, lambda);
	TwedSeriesSet<T> pb;

	if (b)
		pb = prepare<T>(*b, origin, "b", metric, nu, lambda);

	check_time_span(pa, b ? &pb : nullptr);

	TwedJob<T>	job{&pa, b ? &pb : &pa, b == nullptr, metric, nu};

	if (device == GEOACC_DEVICE_GPU)
		GEOACC_ON_GPU(twed_gpu(job, distances));
	else
		switch (a.dims)
		{
			case 1:
				twed_cpu<T, 1>(job, distances);
				break;
			case 2:
				twed_cpu<T, 2>(job, distances);
				break;
			case 3:
				twed_cpu<T, 3>(job, distances);
				break;
			default:
				twed_cpu<T, 0>(job, distances);
				break;
		}
}

}								/* namespace */

uint64_t
twed_poll_ops(uint64_t default_ops)
{
	return poll_ops_setting ? poll_ops_setting : default_ops;
}

}								/* namespace geoacc */

using namespace geoacc;

extern "C" void
geoacc_twed_set_poll_ops(uint64_t ops)
{
	poll_ops_setting = ops;
}

extern "C" GeoaccStatus
geoacc_twed(GeoaccDevice device, const GeoaccTwedSet *a, const GeoaccTwedSet *b,
			const GeoaccTwedParams *params, double *distances)
{
	return guarded([&] {
		if (a == nullptr || params == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the series a and the parameters are required");
		check_params(*params);
		check_set(*a, "a");
		if (b)
		{
			check_set(*b, "b");
			if (b->dims != a->dims)
				fail(GEOACC_ERR_INVALID_ARGUMENT, "a has %u values per point and b has %u", a->dims, b->dims);
		}
		if (params->float32)
			run<float>(device, *a, b, *params, distances);
		else
			run<double>(device, *a, b, *params, distances);
	});
}
