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
#include <type_traits>

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

/*
 * The set in T with the deletion cost of every point.  float: values and
 * times relative to the first point of their series (float32 frames).
 */
template <class T>
TwedSeriesSet<T>
prepare(const GeoaccTwedSet &set, TwedMetric metric, double nu, double lambda)
{
	const bool	frames = std::is_same<T, float>::value;
	TwedSeriesSet<T> out;
	const uint32_t k = set.dims;
	const uint64_t base = set.count > 0 ? set.offsets[0] : 0;

	out.count = set.count;
	out.dims = (int) k;
	out.offsets.resize(set.count + 1);
	for (uint32_t s = 0; s <= set.count; s++)
		out.offsets[s] = set.count > 0 ? set.offsets[s] - base : 0;

	const uint64_t npoints = out.offsets[set.count];

	out.values.resize(npoints * k);
	out.times.resize(npoints);
	out.del.resize(npoints);
	if (frames)
		out.origins.resize((size_t) set.count * (k + 1));
	for (uint32_t s = 0; s < set.count; s++)
	{
		const double *first = &set.values[(base + out.offsets[s]) * k];
		const double first_time = set.times[base + out.offsets[s]];

		if (frames)
		{
			std::copy(first, first + k, &out.origins[(size_t) s * (k + 1)]);
			out.origins[(size_t) s * (k + 1) + k] = first_time;
		}
		for (uint64_t p = out.offsets[s]; p < out.offsets[s + 1]; p++)
		{
			const double *v = &set.values[(base + p) * k];
			const double t = set.times[base + p];

			for (uint32_t d = 0; d < k; d++)
				out.values[p * k + d] = (T) (frames ? v[d] - first[d] : v[d]);
			out.times[p] = (T) (frames ? t - first_time : t);
			/* in float64 from the inputs: a step keeps its precision however far from the first point */
			out.del[p] = p == out.offsets[s] ? T(0)
				: (T) twed_delete_cost(v - k, set.times[base + p - 1], v, t, (int) k, metric, nu, lambda);
		}
	}
	return out;
}

/* One series of a prepared set, as the CPU sweep reads it. */
template <class T>
struct SeriesView
{
	const T    *values;
	const T    *times;
	const T    *del;
	uint64_t	length;
};

template <class T>
SeriesView<T>
view_of(const TwedSeriesSet<T> &set, uint32_t s)
{
	const uint64_t p = set.offsets[s];

	return {&set.values[p * set.dims], &set.times[p], &set.del[p], set.length(s)};
}

/*
 * TWED of one pair, rows from series a, columns from series b: row i-1 of
 * D (and of c) in d[] and c[], overwritten by row i as it goes.
 */
template <class T, int K>
T
pair_cpu(const SeriesView<T> &a, const SeriesView<T> &b, int k, TwedMetric metric, T nu, std::vector<T> &d,
		 std::vector<T> &c, uint64_t &ops)
{
	const uint64_t n = a.length;
	const uint64_t m = b.length;
	const T		inf = std::numeric_limits<T>::infinity();
	const uint64_t cell_ops = twed_cell_ops(k, metric);

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
				T			cost = twed_match_cost<T, K>(&a.values[i * k], a.times[i], &b.values[j * k], b.times[j], k,
														 metric, nu);
				T			up = d[j + 1];
				T			value = twed_cell(diag, diag_c, up, left, cost, a.del[i], b.del[j]);

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

/*
 * Every pair of the job, in the order of geoacc_twed.  In float32 the rows
 * are the moving series, shifted into the frame of the columns, as on the
 * GPU.
 */
template <class T, int K>
void
twed_cpu(const TwedJob<T> &job, double *distances)
{
	const TwedSeriesSet<T> &a = *job.a;
	const TwedSeriesSet<T> &b = *job.b;
	const int	k = a.dims;
	TwedSeriesSet<T> moved;
	std::vector<T> d, c;
	uint64_t	ops = 0;
	uint64_t	q = 0;

	for (uint32_t x = 0; x < a.count; x++)
		for (uint32_t y = job.symmetric ? x + 1 : 0; y < b.count; y++)
		{
			const bool	x_rows = twed_x_is_rows(a.length(x), a.origin(x), b.length(y), b.origin(y), k);
			SeriesView<T> rows = x_rows ? view_of(a, x) : view_of(b, y);
			const SeriesView<T> cols = x_rows ? view_of(b, y) : view_of(a, x);

			if (a.origin(x))
			{
				twed_move_series(x_rows ? a : b, x_rows ? x : y, x_rows ? b.origin(y) : a.origin(x), moved);
				rows = view_of(moved, 0);
			}
			distances[q++] = (double) pair_cpu<T, K>(rows, cols, k, job.metric, job.nu, d, c, ops);
		}
}

/*
 * Every difference the cells take must be finite: of times always (nu *
 * infinity would be NaN for nu = 0, and infinity otherwise), and in float32
 * of values too, between two series after one moved into the frame of the
 * other.  Within half the float32 range none of them can overflow.
 */
void
check_spans(const GeoaccTwedSet &a, const GeoaccTwedSet *b, bool float32)
{
	const uint32_t k = a.dims;
	const double float32_span = (double) std::numeric_limits<float>::max() / 2;
	std::vector<double> lo(k + 1, std::numeric_limits<double>::infinity());
	std::vector<double> hi(k + 1, -std::numeric_limits<double>::infinity());

	for (const GeoaccTwedSet *set : {&a, b})
		if (set && set->count > 0)
			for (uint64_t p = set->offsets[0]; p < set->offsets[set->count]; p++)
			{
				for (uint32_t d = 0; d < k; d++)
				{
					lo[d] = std::min(lo[d], set->values[p * k + d]);
					hi[d] = std::max(hi[d], set->values[p * k + d]);
				}
				lo[k] = std::min(lo[k], set->times[p]);
				hi[k] = std::max(hi[k], set->times[p]);
			}
	if (hi[k] >= lo[k] && !std::isfinite(hi[k] - lo[k]))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the times span %g to %g, a difference beyond the float64 range", lo[k],
			 hi[k]);
	if (!float32)
		return;
	if (hi[k] >= lo[k] && !(hi[k] - lo[k] <= float32_span))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the times span %g to %g, too wide a range for float32", lo[k], hi[k]);
	for (uint32_t d = 0; d < k; d++)
		if (hi[d] >= lo[d] && !(hi[d] - lo[d] <= float32_span))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "value %u of the points spans %g to %g, too wide a range for float32",
				 d + 1, lo[d], hi[d]);
}

/* Prepare both sets in T and compute on the chosen device. */
template <class T>
void
run(GeoaccDevice device, const GeoaccTwedSet &a, const GeoaccTwedSet *b, const GeoaccTwedParams &params,
	double *distances)
{
	const bool	float32 = std::is_same<T, float>::value;
	const TwedMetric metric{params.degree, params.root != 0};
	/* + 0.0 turns -0 into +0: no negative zero enters the sums */
	const double nu = params.nu + 0.0;
	const double lambda = params.lambda + 0.0;

	check_spans(a, b, float32);

	TwedSeriesSet<T> pa = prepare<T>(a, metric, nu, lambda);
	TwedSeriesSet<T> pb;

	if (b)
		pb = prepare<T>(*b, metric, nu, lambda);

	TwedJob<T>	job{&pa, b ? &pb : &pa, b == nullptr, metric, (T) nu};

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

	/* inputs within range give no NaN; infinity is a distance float32 cannot hold (float64 does) */
	if (float32)
		for (uint64_t q = 0; q < job.pairs(); q++)
			if (!std::isfinite(distances[q]))
				fail(GEOACC_ERR_INVALID_ARGUMENT, "a distance is out of range for float32");
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

/*
 * Room for each set as one group and for the longest pair in one block,
 * and for a launch's scratch and distances; at least a few tens of
 * megabytes, within which groups and long pairs are cut smaller.
 */
extern "C" GeoaccDeviceNeed
geoacc_twed_need(const GeoaccTwedSet *a, const GeoaccTwedSet *b, const GeoaccTwedParams *params)
{
	const size_t value_size = params->float32 ? sizeof(float) : sizeof(double);
	const int	k = (int) a->dims;
	const GeoaccTwedSet *sets[2] = {a, b ? b : a};
	uint64_t	set_bytes[2] = {0, 0},
				longest[2] = {0, 0};
	GeoaccDeviceNeed need;

	for (int i = 0; i < 2; i++)
		for (uint32_t s = 0; s < sets[i]->count; s++)
		{
			const uint64_t n = sets[i]->offsets[s + 1] - sets[i]->offsets[s];

			set_bytes[i] += twed_group_series_bytes(n, k, value_size, params->float32);
			longest[i] = std::max(longest[i], n);
		}
	need.bytes = std::max(TWED_GROUP_SHARE * std::max(set_bytes[0], set_bytes[1]),
						  TWED_LONG_PAIR_SHARE * (longest[0] + longest[1]) * twed_long_pair_point_bytes(k, value_size))
		+ TWED_LAUNCH_BYTES;
	need.least = std::min(need.bytes, TWED_LEAST_BYTES);
	return need;
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
