/*
 * twed.h
 *
 * Time Warp Edit Distance (Marteau 2009): the arithmetic of one cell of the
 * dynamic programme, shared by the CUDA kernels and the CPU twin so that both
 * round identically, and the prepared form of a set of series both run on.
 *
 * For series a_1..a_n, b_1..b_m with times ta, tb (a_0 = b_0 = 0, ta_0 = tb_0
 * = 0) and d the Lp distance between points:
 *
 *   D(0,0) = 0,  D(i,0) = D(0,j) = infinity
 *   D(i,j) = min( D(i-1,j-1) + c(i,j) + c(i-1,j-1),
 *                 D(i-1,j)   + d(a_{i-1},a_i) + nu*(ta_i - ta_{i-1}) + lambda,
 *                 D(i,j-1)   + d(b_{j-1},b_j) + nu*(tb_j - tb_{j-1}) + lambda )
 *   c(i,j) = d(a_i,b_j) + nu*|ta_i - tb_j|
 *
 * The match cost is the paper's d(a_i,b_j) + d(a_{i-1},b_{j-1}) +
 * nu*(|ta_i - tb_j| + |ta_{i-1} - tb_{j-1}|) regrouped so that each cell
 * computes c(i,j) once and hands it to its diagonal neighbour.  a_0, b_0 and
 * the times at 0 only ever meet an infinite D (but at (1,1), where c(0,0) =
 * 0), so the distance does not change when values or times of both series
 * are shifted by a common origin: float32 mode uses that to keep precision
 * (see "float32 frames" below).
 */
#ifndef GEOACC_TWED_H
#define GEOACC_TWED_H

#include "core.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace geoacc
{

/* The math functions, picked explicitly per type (host and device alike). */
GEOACC_HD double twed_abs(double x) { return fabs(x); }
GEOACC_HD float twed_abs(float x) { return fabsf(x); }
GEOACC_HD double twed_sqrt(double x) { return sqrt(x); }
GEOACC_HD float twed_sqrt(float x) { return sqrtf(x); }
GEOACC_HD double twed_frexp(double x, int *e) { return frexp(x, e); }
GEOACC_HD float twed_frexp(float x, int *e) { return frexpf(x, e); }
GEOACC_HD double twed_ldexp(double x, int e) { return ldexp(x, e); }
GEOACC_HD float twed_ldexp(float x, int e) { return ldexpf(x, e); }

/* The smaller value; a comparison, which compilers inline everywhere (fmin is a call on x86). */
template <class T>
GEOACC_HD T
twed_min(T x, T y)
{
	return y < x ? y : x;
}

template <class T>
GEOACC_HD T
twed_max(T x, T y)
{
	return y > x ? y : x;
}

/* The distance between points: Lp of degree p, with or without the root. */
struct TwedMetric
{
	int			degree;
	int			root;
};

/* x^p for p >= 1 by repeated squaring. */
template <class T>
GEOACC_HD T
twed_ipow(T x, int p)
{
	T			result = x;
	T			base = x;

	for (p -= 1; p > 0; p >>= 1)
	{
		if (p & 1)
			result *= base;
		if (p > 1)
			base *= base;
	}
	return result;
}

/*
 * s^(1/p) for 1 <= s and p >= 2 by Newton's method from above: from the
 * smaller of two upper bounds of the root, 1 + (s - 1) / p (Bernoulli) and a
 * power of two, the iterates decrease until rounding stops them.  Only +, *,
 * / and exact frexp/ldexp, so host and device agree to the bit, unlike
 * pow().  The callers scale s into [1, k] first, so y^(p-1) cannot
 * overflow, and the two bounds keep the steps below about min(k, p) + 6.
 */
template <class T>
GEOACC_HD T
twed_root(T s, int p)
{
	if (!(s > 1) || s - s != 0)	/* 1, or infinity */
		return s;

	int			e;

	twed_frexp(s, &e);			/* s < 2^e, e >= 1 */

	T			y = twed_min(T(1) + (s - T(1)) / T(p), twed_ldexp(T(1), (e + p - 1) / p));

	/* the loop ends by itself (the iterates decrease); the bound only guards against a bug */
	for (int i = 0; i < 1000000; i++)
	{
		T			next = (T(p - 1) * y + s / twed_ipow(y, p - 1)) / T(p);

		if (!(next < y))
			break;
		y = next;
	}
	return y;
}

/*
 * The kinds of point distance, so that a kernel can be compiled for one kind
 * without a branch per cell: the sum of |x - y| (degree 1, or one dimension
 * with the root: |x - y| for every degree), the root of the sum of squares
 * (degree 2 with the root, the default), or any degree decided at run time.
 */
enum TwedDistanceKind
{
	TWED_DISTANCE_ABS,
	TWED_DISTANCE_EUCLIDEAN,
	TWED_DISTANCE_ANY
};

GEOACC_HD TwedDistanceKind
twed_distance_kind(int dims, TwedMetric metric)
{
	if (metric.degree == 1 || (dims == 1 && metric.root))
		return TWED_DISTANCE_ABS;
	if (metric.degree == 2 && metric.root)
		return TWED_DISTANCE_EUCLIDEAN;
	return TWED_DISTANCE_ANY;
}

/*
 * Sums over the k >= 1 values of points x and y (K > 0: k known at compile
 * time).  They start from the first term, not from 0: 0 + t = t for every
 * term t >= +0 (or infinite), so this is the same sum without an addition.
 */
template <class T, int K>
GEOACC_HD T
twed_sum_abs(const T *x, const T *y, int k)
{
	T			s = twed_abs(x[0] - y[0]);

	for (int d = 1; d < (K > 0 ? K : k); d++)
		s += twed_abs(x[d] - y[d]);
	return s;
}

template <class T, int K>
GEOACC_HD T
twed_sum_squares(const T *x, const T *y, int k)
{
	T			v = x[0] - y[0];
	T			s = v * v;

	for (int d = 1; d < (K > 0 ? K : k); d++)
	{
		v = x[d] - y[d];
		s += v * v;
	}
	return s;
}

/*
 * (sum |x_d - y_d|^p)^(1/p) computed as m * (sum (|x_d - y_d| / m)^p)^(1/p)
 * with m the largest |x_d - y_d|: no term overflows or vanishes for lack of
 * range, whatever p and the magnitudes (the Lp norm of the LAPACK habit).
 */
template <class T, int K>
GEOACC_HD T
twed_scaled_norm(const T *x, const T *y, int k, int p)
{
	T			m = twed_abs(x[0] - y[0]);

	for (int d = 1; d < (K > 0 ? K : k); d++)
		m = twed_max(m, twed_abs(x[d] - y[d]));
	if (!(m > 0) || m - m != 0)	/* 0, or a difference beyond the range: infinity */
		return m;

	T			s = twed_ipow(twed_abs(x[0] - y[0]) / m, p);

	for (int d = 1; d < (K > 0 ? K : k); d++)
		s += twed_ipow(twed_abs(x[d] - y[d]) / m, p);
	return m * (p == 2 ? twed_sqrt(s) : twed_root(s, p));
}

/* Squares below this lose bits to subnormals: the sum is then scaled. */
template <class T>
GEOACC_HD T
twed_tiny_square()
{
	return sizeof(T) == sizeof(float) ? T(0x1p-100) : T(0x1p-960);
}

/*
 * The Euclidean distance: the root of the plain sum of squares, unless that
 * sum overflowed or fell near the subnormals (differences beyond about
 * 1e154 or below 1e-289 in float64), when the scaled form is used.
 */
template <class T, int K>
GEOACC_HD T
twed_euclidean(const T *x, const T *y, int k)
{
	T			s = twed_sum_squares<T, K>(x, y, k);

	if (!(s >= twed_tiny_square<T>()) || s - s != 0)	/* 0 too: the squares may all have vanished */
		return twed_scaled_norm<T, K>(x, y, k, 2);
	return twed_sqrt(s);
}

/*
 * Distance between points x and y of k values.  D, when known, selects the
 * formula at compile time; each formula exists once, so every kind gives
 * the bits of TWED_DISTANCE_ANY.
 */
template <class T, int K, TwedDistanceKind D = TWED_DISTANCE_ANY>
GEOACC_HD T
twed_point_distance(const T *x, const T *y, int k, TwedMetric metric)
{
	if constexpr (D == TWED_DISTANCE_ABS)
		return twed_sum_abs<T, K>(x, y, k);
	else if constexpr (D == TWED_DISTANCE_EUCLIDEAN)
		return twed_euclidean<T, K>(x, y, k);
	else
	{
		const int	dims = K > 0 ? K : k;

		switch (twed_distance_kind(dims, metric))
		{
			case TWED_DISTANCE_ABS:
				return twed_sum_abs<T, K>(x, y, k);
			case TWED_DISTANCE_EUCLIDEAN:
				return twed_euclidean<T, K>(x, y, k);
			case TWED_DISTANCE_ANY:
				break;
		}
		if (metric.root)
			return twed_scaled_norm<T, K>(x, y, k, metric.degree);
		if (metric.degree == 2)
			return twed_sum_squares<T, K>(x, y, k);		/* the powered form */

		/* the powered form is a sum of powers: beyond the range it is infinity */
		T			s = twed_ipow(twed_abs(x[0] - y[0]), metric.degree);

		for (int d = 1; d < dims; d++)
			s += twed_ipow(twed_abs(x[d] - y[d]), metric.degree);
		return s;
	}
}

/* c(i,j) = d(a_i, b_j) + nu * |ta_i - tb_j| */
template <class T, int K, TwedDistanceKind D = TWED_DISTANCE_ANY>
GEOACC_HD T
twed_match_cost(const T *x, T tx, const T *y, T ty, int k, TwedMetric metric, T nu)
{
	return twed_point_distance<T, K, D>(x, y, k, metric) + nu * twed_abs(tx - ty);
}

/* Cost of deleting point `cur` after `prev`: d(prev, cur) + nu * dt + lambda. */
template <class T>
GEOACC_HD T
twed_delete_cost(const T *prev, T tprev, const T *cur, T tcur, int k, TwedMetric metric, T nu, T lambda)
{
	return (twed_point_distance<T, 0>(prev, cur, k, metric) + nu * (tcur - tprev)) + lambda;
}

/*
 * D(i,j) from its three neighbours: diag = D(i-1,j-1) with c(i-1,j-1), up =
 * D(i-1,j), left = D(i,j-1).  Swapping up/left with del_a/del_b gives the
 * same bits (the minimum commutes on these non-negative values, never NaN): on the same
 * prepared values the distance of (b, a) equals that of (a, b) to the bit, so either series
 * may be the rows.
 */
template <class T>
GEOACC_HD T
twed_cell(T diag, T diag_c, T up, T left, T c, T del_a, T del_b)
{
	T			match = diag + (c + diag_c);
	T			delete_a = up + del_a;
	T			delete_b = left + del_b;

	return twed_min(match, twed_min(delete_a, delete_b));
}

/* One element of an edge of the matrix: D and c of a cell. */
template <class T>
struct alignas(2 * sizeof(T)) TwedEdge
{
	T			d;
	T			c;
};

/*
 * float32 frames.  Each series is stored relative to its own first point
 * (values and time), so that its precision does not depend on where it
 * lies, and each pair is computed in the frame of one of its two series:
 * the other one, the moving series, is shifted by the difference of the two
 * first points, added in float64 to each of its values and times and
 * rounded once.  Shifting both series of a pair alike changes no distance
 * (see above), so a pair's float32 distance depends on that pair alone: not
 * on where it lies, not on the other series of a matrix, not on the order of
 * the pair.  float64 has no frames: the series stay where they are.
 */

/* A value or time v of the moving series, whose first point is `from`, in the frame of `to`. */
template <class T>
GEOACC_HD T
twed_moved(T v, double from, double to)
{
	return (T) ((double) v + (from - to));
}

/*
 * Whether series x (n points, first point ox: k values, then the time) is
 * the rows of a pair with series y (m points, oy), which the sweeps take as
 * the longer one; in float32 the rows are the moving series (the GPU shifts
 * them as it loads them), so a tie goes to the greater first point, which
 * does not depend on the order of the pair (equal first points: no shift).
 * ox and oy null (float64): the longer, x on a tie.
 */
GEOACC_HD bool
twed_x_is_rows(uint64_t n, const double *ox, uint64_t m, const double *oy, int k)
{
	if (n != m || ox == nullptr)
		return n >= m;
	for (int d = 0; d <= k; d++)
		if (ox[d] != oy[d])
			return ox[d] > oy[d];
	return true;
}

/* Rough arithmetic per cell: sizes kernel launches and interrupt polling. */
inline uint64_t
twed_cell_ops(int k, TwedMetric metric)
{
	uint64_t	ops = 12 + 3 * (uint64_t) k;

	if (metric.degree > 2)
		ops += 2 * (uint64_t) k * 32;
	if (metric.root && k > 1 && metric.degree >= 2)
		ops += metric.degree == 2 ? 20 : 400;
	return ops;
}

/*
 * Device memory on the GPU.  Short pairs run block by block of two groups of
 * series, each group within 1 / TWED_GROUP_SHARE of the memory at hand; a
 * long pair runs within 1 / TWED_LONG_PAIR_SHARE of it.
 */
constexpr uint64_t TWED_GROUP_SHARE = 4;
constexpr uint64_t TWED_LONG_PAIR_SHARE = 2;

/* Room asked for a launch's scratch and distances beyond the groups, and the least a call is given. */
constexpr uint64_t TWED_LAUNCH_BYTES = uint64_t(16) << 20;
constexpr uint64_t TWED_LEAST_BYTES = uint64_t(64) << 20;

/* Bytes of a series of n points of k values in a group: values, time, deletion cost, its offset and frame. */
inline uint64_t
twed_group_series_bytes(uint64_t n, int k, size_t value_size, bool framed)
{
	return n * ((uint64_t) k + 2) * value_size + sizeof(long long) + (framed ? ((uint64_t) k + 1) * sizeof(double) : 0);
}

/* Bytes per row or column of a long pair: values, time, deletion cost, edge; bands add a corner and a flag. */
inline uint64_t
twed_long_pair_point_bytes(int k, size_t value_size)
{
	return (uint64_t) (k + 4) * value_size + 8;
}

/*
 * A set of series prepared for the kernels: values and times in T (float:
 * relative to the first point of their series, whose float64 values and
 * time are in `origins`), and del[p] = the cost of deleting point p after
 * its predecessor, computed in float64 and rounded to T (0 for a first
 * point: it is never used).
 */
template <class T>
struct TwedSeriesSet
{
	uint32_t	count = 0;
	int			dims = 0;
	std::vector<uint64_t> offsets;
	std::vector<T> values;
	std::vector<T> times;
	std::vector<T> del;
	std::vector<double> origins;	/* float: dims + 1 per series; float64: empty */

	uint64_t	length(uint32_t s) const { return offsets[s + 1] - offsets[s]; }
	const double *origin(uint32_t s) const
	{
		return origins.empty() ? nullptr : &origins[(size_t) s * (dims + 1)];
	}
};

/*
 * Series s of `set` moved into the frame whose first point is `to`, as a
 * set of one series in `out` (its buffers reused from call to call).
 */
template <class T>
void
twed_move_series(const TwedSeriesSet<T> &set, uint32_t s, const double *to, TwedSeriesSet<T> &out)
{
	const int	k = set.dims;
	const uint64_t first = set.offsets[s];
	const uint64_t n = set.length(s);
	const double *from = set.origin(s);

	out.count = 1;
	out.dims = k;
	out.offsets.assign({0, n});
	out.values.resize(n * k);
	out.times.resize(n);
	out.del.assign(set.del.begin() + first, set.del.begin() + first + n);
	out.origins.assign(to, to + k + 1);
	for (uint64_t p = 0; p < n; p++)
	{
		for (int d = 0; d < k; d++)
			out.values[p * k + d] = twed_moved(set.values[(first + p) * k + d], from[d], to[d]);
		out.times[p] = twed_moved(set.times[first + p], from[k], to[k]);
	}
}

/* All pairs of a x b, or the pairs i < j of a when symmetric (b == a). */
template <class T>
struct TwedJob
{
	const TwedSeriesSet<T> *a;
	const TwedSeriesSet<T> *b;
	bool		symmetric;
	TwedMetric	metric;
	T			nu;

	uint64_t	pairs() const
	{
		return symmetric ? (uint64_t) a->count * (a->count - (a->count > 0)) / 2
			: (uint64_t) a->count * b->count;
	}
};

/* Index of pair (x, y), x < y, among the pairs of n series in row order. */
GEOACC_HD uint64_t
twed_triangle_index(uint64_t x, uint64_t y, uint64_t n)
{
	return x * n - x * (x + 1) / 2 + (y - x - 1);
}

/* Work between interrupt polls: geoacc_twed_set_poll_ops(), else `default_ops`. */
uint64_t	twed_poll_ops(uint64_t default_ops);

/* GPU implementation (twed.cu): distances in the order of geoacc_twed. */
void		twed_gpu(const TwedJob<double> &job, double *distances);
void		twed_gpu(const TwedJob<float> &job, double *distances);

/* Which pairs the GPU computes one warp each (short pairs) rather than as long pairs. */
template <class T>
struct TwedPairRouting
{
	std::vector<bool> a_fits;	/* the series fits in a group of the batch */
	std::vector<bool> b_fits;
	uint64_t	max_cells;		/* of a pair computed by one warp */

	bool		batch(const TwedJob<T> &job, uint32_t x, uint32_t y) const
	{
		return a_fits[x] && b_fits[y] && job.a->length(x) * job.b->length(y) <= max_cells;
	}
};

/*
 * twed_short_pairs.cu: the short pairs between group ga of a (indices into
 * job.a) and group gb: the pairs x < y within ga when `diagonal` (a symmetric
 * job's own group), else every (x, y); distances to their places in the
 * job's order, within `avail` bytes of device memory.
 */
template <class T>
void		twed_short_pairs_gpu(const TwedJob<T> &job, const TwedPairRouting<T> &routing,
								 const std::vector<uint32_t> &ga, const std::vector<uint32_t> &gb, bool diagonal,
								 uint64_t avail, double *distances);

/*
 * twed_long_pairs.cu: TWED of one long pair, rows series ri of rs (the
 * longer; in float32 already in the frame of the columns), columns series ci
 * of cs, within `budget` bytes of device memory.
 */
template <class T>
double		twed_long_pair_gpu(const TwedJob<T> &job, const TwedSeriesSet<T> &rs, uint32_t ri,
							   const TwedSeriesSet<T> &cs, uint32_t ci, uint64_t budget);

}								/* namespace geoacc */

#endif							/* GEOACC_TWED_H */
