/*
 * segment_join.h
 *
 * Distance-threshold join of trajectory segments (Gowanlock and Casanova,
 * "Distance threshold similarity searches on spatiotemporal trajectory
 * data using GPGPU"): the arithmetic and the index searches shared by the
 * CUDA kernels and the CPU twin, so that both test the same candidates with
 * the same bits and return the same rows.
 *
 * A segment is a point moving linearly from p0 at t0 to p1 at t1.  Two
 * segments q and e are a pair when, at some instant of their common span
 * [lo, hi] = [max(q.t0, e.t0), min(q.t1, e.t1)], they are within distance
 * d.  With s = t - lo, their difference is D(s) = D0 + s V (D0 at lo, V the
 * difference of their velocities), and |D(s)|^2 = A s^2 + 2 B s + C with A =
 * V.V, B = D0.V, C = D0.D0: the pair is decided by the distance at the
 * closest point of approach s* = clamp(-B / A, 0, L), computed from D(s*)
 * directly, and the sub-interval is cut by the roots of A s^2 + 2 B s + C =
 * d^2 around s*.
 *
 * Every method first applies the same candidate rule: time spans that meet
 * (touching counts) and boxes that meet once the query's box is grown by
 * the reach (the distance plus a rounding margin).  An index only has to
 * hand every such candidate to the exact test once; which index ran cannot
 * change the rows.
 *
 * The three indexes:
 *   spatial         a flattened grid over X Y of the non-empty cells only
 *                   (sorted cell keys, a lookup array of where each cell's
 *                   entries start, the entries of all cells); an entry is
 *                   filed in every cell its box covers, and a pair is taken
 *                   only in the cell holding the lower corner of the
 *                   intersection of the two boxes, so no pair is seen twice;
 *   temporal        entries grouped by fixed-width bins of their start
 *                   time: a query scans the bins from its start minus the
 *                   longest entry duration to its end, one index range;
 *   spatiotemporal  temporal bins cut into square sub-cells in X Y no
 *                   smaller than the largest entry extent and the reach;
 *                   an entry is filed once, in the sub-cell of the lower
 *                   corner of its box, and a query scans the sub-cells from
 *                   its box's lower corner minus the largest extent to its
 *                   upper corner, in every temporal bin it reaches.
 *   Bins and sub-cells are kept only where they hold entries (sorted keys),
 *   so they can be narrow.  The temporal and spatiotemporal indexes file the
 *   entries in layers by size (see JOIN_LAYERS), each with bins of its own:
 *   the longest segments no longer set the scan of every query.
 *   auto            runs spatiotemporal: on every data set measured it visited
 *                   the fewest entries, or close to the fewest.
 */
#ifndef GEOACC_SEGMENT_JOIN_H
#define GEOACC_SEGMENT_JOIN_H

#include "core.h"
#include "host_memory.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

namespace geoacc
{

/* One segment: p0 at t0 to p1 at t1 (z = 0 in 2D), of trajectory traj, segment seg. */
struct JoinSegment
{
	double		p0[3];
	double		t0;
	double		p1[3];
	double		t1;
	uint32_t	traj;
	uint32_t	seg;
};

/* What every pair test of one join needs. */
struct JoinParams
{
	int			dims;			/* 2 or 3 */
	int			self;			/* self-join: only pairs with q.traj < e.traj */
	double		distance;
	double		reach;			/* distance plus a rounding margin: boxes are grown by it */
};

/* The exact result of a pair. */
struct JoinHit
{
	double		t_start;
	double		t_end;
	double		cpa_time;
	double		cpa_distance;
};

GEOACC_HD double
join_min(double x, double y)
{
	return y < x ? y : x;
}

GEOACC_HD double
join_max(double x, double y)
{
	return y > x ? y : x;
}

GEOACC_HD double
join_clamp(double v, double lo, double hi)
{
	return v < lo ? lo : (v > hi ? hi : v);
}

/* A query segment with its box grown by the reach, computed once. */
struct JoinQuery
{
	const JoinSegment *s;
	double		lo[3];
	double		hi[3];
};

GEOACC_HD JoinQuery
join_query(const JoinSegment *s, const JoinParams &p)
{
	JoinQuery	q;

	q.s = s;
	for (int k = 0; k < 3; k++)
	{
		q.lo[k] = join_min(s->p0[k], s->p1[k]) - p.reach;
		q.hi[k] = join_max(s->p0[k], s->p1[k]) + p.reach;
	}
	return q;
}

/*
 * The candidate rule every index serves: spans that meet, grown boxes that
 * meet, and for a self-join only pairs of different trajectories, once.
 */
GEOACC_HD bool
join_candidate(const JoinQuery &q, const JoinSegment &e, const JoinParams &p)
{
	if (!(q.s->t0 <= e.t1 && e.t0 <= q.s->t1))
		return false;
	if (p.self && !(q.s->traj < e.traj))
		return false;
	for (int k = 0; k < p.dims; k++)
		if (!(q.lo[k] <= join_max(e.p0[k], e.p1[k]) && join_min(e.p0[k], e.p1[k]) <= q.hi[k]))
			return false;
	return true;
}

/* Squared length of D0 + s V. */
GEOACC_HD double
join_distance_sq(const double *d0, const double *v, double s, int dims)
{
	double		sum = 0;

	for (int k = 0; k < dims; k++)
	{
		double		c = d0[k] + s * v[k];

		sum += c * c;
	}
	return sum;
}

/* Largest |value| of the plain test's differences and speeds: their products of four never overflow. */
constexpr double JOIN_PLAIN_LIMIT = 0x1p250;

/* The exponent e of 2^e just above |v| (0 for 0), as frexp gives it. */
GEOACC_HD int
join_exponent(double v)
{
	int			e = 0;

	frexp(v, &e);
	return e;
}

/*
 * The exact test where the plain one would overflow (coordinates, speeds
 * or the distance beyond 2^250: the quadratic's b^2 takes fourth powers):
 * the same quadratic in the fraction u of the common span, on the
 * positions scaled by a power of two so that the separation at lo, the
 * relative displacement over the span and the distance are at most 1.  A
 * power of two scales without rounding, so only the variable (u instead of
 * seconds) changes the bits, and no value overflows.
 */
GEOACC_HD bool
join_refine_scaled(const JoinSegment &q, const JoinSegment &e, const JoinParams &p, double lo, double hi,
				   JoinHit *hit)
{
	const double len = hi - lo;
	const double fq = (lo - q.t0) / (q.t1 - q.t0);
	const double fe = (lo - e.t0) / (e.t1 - e.t0);
	const double gq = len / (q.t1 - q.t0);
	const double ge = len / (e.t1 - e.t0);
	double		most = p.distance;
	double		d0[3] = {0, 0, 0};
	double		w[3] = {0, 0, 0};

	/* positions below 1 in magnitude: their differences cannot overflow */
	for (int k = 0; k < p.dims; k++)
		most = join_max(most, join_max(join_max(fabs(q.p0[k]), fabs(q.p1[k])), join_max(fabs(e.p0[k]), fabs(e.p1[k]))));

	const int	ep = join_exponent(most);

	for (int k = 0; k < p.dims; k++)
	{
		const double qp0 = ldexp(q.p0[k], -ep);
		const double ep0 = ldexp(e.p0[k], -ep);
		const double sq = ldexp(q.p1[k], -ep) - qp0;
		const double se = ldexp(e.p1[k], -ep) - ep0;

		d0[k] = (qp0 + sq * fq) - (ep0 + se * fe);
		w[k] = sq * gq - se * ge;
	}

	/* then the separation, the displacement and the distance at most 1: no square underflows that matters */
	double		dist = ldexp(p.distance, -ep);
	double		top = dist;

	for (int k = 0; k < p.dims; k++)
		top = join_max(top, join_max(fabs(d0[k]), fabs(w[k])));

	const int	et = join_exponent(top);
	double		a = 0,
				b = 0,
				c = 0;

	dist = ldexp(dist, -et);
	for (int k = 0; k < p.dims; k++)
	{
		d0[k] = ldexp(d0[k], -et);
		w[k] = ldexp(w[k], -et);
		a += w[k] * w[k];
		b += d0[k] * w[k];
		c += d0[k] * d0[k];
	}

	const double u_cpa = a > 0 ? join_clamp(-b / a, 0, 1) : 0;
	const double d2 = dist * dist;
	const double m2 = u_cpa == 0 ? c : join_distance_sq(d0, w, u_cpa, p.dims);

	if (!(m2 <= d2))
		return false;

	double		u_start = 0,
				u_end = 1;

	if (a > 0)
	{
		const double disc = join_max(b * b - a * (c - d2), 0.0);
		const double r = sqrt(disc);
		const double k = b >= 0 ? -(b + r) : -(b - r);
		double		r1 = 0,
					r2 = 0;

		if (k != 0)
		{
			r1 = k / a;
			r2 = (c - d2) / k;
		}
		if (!(c <= d2))
			u_start = join_clamp(join_min(r1, r2), 0, u_cpa);
		if (!(join_distance_sq(d0, w, 1, p.dims) <= d2))
			u_end = join_clamp(join_max(r1, r2), u_cpa, 1);
	}
	hit->t_start = u_start == 0 ? lo : (u_start == 1 ? hi : lo + u_start * len);
	hit->t_end = u_end == 1 ? hi : (u_end == 0 ? lo : lo + u_end * len);
	hit->cpa_time = u_cpa == 0 ? lo : (u_cpa == 1 ? hi : lo + u_cpa * len);
	hit->cpa_distance = ldexp(sqrt(m2), ep + et);
	return true;
}

/*
 * The exact test: true when q and e are within p.distance at some instant
 * of their common span, with the sub-interval and the closest approach in
 * *hit.  Spans that only touch give a zero-length interval.  The interval
 * ends equal the span's ends exactly where the pair is within distance
 * there.
 */
GEOACC_HD bool
join_refine(const JoinSegment &q, const JoinSegment &e, const JoinParams &p, JoinHit *hit)
{
	const double lo = join_max(q.t0, e.t0);
	const double hi = join_min(q.t1, e.t1);

	if (!(lo <= hi))
		return false;

	const double len = hi - lo;
	const double fq = (lo - q.t0) / (q.t1 - q.t0);
	const double fe = (lo - e.t0) / (e.t1 - e.t0);
	const double dq = q.t1 - q.t0;
	const double de = e.t1 - e.t0;
	double		d0[3] = {0, 0, 0};
	double		v[3] = {0, 0, 0};
	double		a = 0,
				b = 0,
				c = 0;

	for (int k = 0; k < p.dims; k++)
	{
		const double sq = q.p1[k] - q.p0[k];
		const double se = e.p1[k] - e.p0[k];

		d0[k] = (q.p0[k] + sq * fq) - (e.p0[k] + se * fe);
		v[k] = sq / dq - se / de;
		a += v[k] * v[k];
		b += d0[k] * v[k];
		c += d0[k] * d0[k];
	}
	/* beyond the limit (or not finite) the squares below could overflow: the scaled test instead */
	bool		plain = p.distance <= JOIN_PLAIN_LIMIT;

	for (int k = 0; k < p.dims; k++)
		plain = plain && fabs(d0[k]) <= JOIN_PLAIN_LIMIT && fabs(v[k]) <= JOIN_PLAIN_LIMIT;
	if (!plain)
		return join_refine_scaled(q, e, p, lo, hi, hit);

	/* the closest approach in [0, len]: the earliest instant when the distance is constant */
	const double s_cpa = a > 0 ? join_clamp(-b / a, 0, len) : 0;
	const double d2 = p.distance * p.distance;
	const double m2 = s_cpa == 0 ? c : join_distance_sq(d0, v, s_cpa, p.dims);

	if (!(m2 <= d2))
		return false;

	double		s_start = 0,
				s_end = len;

	if (a > 0)
	{
		/* roots of a s^2 + 2 b s + (c - d^2), in the form without cancellation */
		const double disc = join_max(b * b - a * (c - d2), 0.0);
		const double r = sqrt(disc);
		const double k = b >= 0 ? -(b + r) : -(b - r);
		double		r1 = 0,
					r2 = 0;

		if (k != 0)
		{
			r1 = k / a;
			r2 = (c - d2) / k;
		}
		if (!(c <= d2))
			s_start = join_clamp(join_min(r1, r2), 0, s_cpa);
		if (!(join_distance_sq(d0, v, len, p.dims) <= d2))
			s_end = join_clamp(join_max(r1, r2), s_cpa, len);
	}
	hit->t_start = s_start == 0 ? lo : (s_start == len ? hi : lo + s_start);
	hit->t_end = s_end == len ? hi : (s_end == 0 ? lo : lo + s_end);
	hit->cpa_time = s_cpa == 0 ? lo : (s_cpa == len ? hi : lo + s_cpa);
	hit->cpa_distance = sqrt(m2);
	return true;
}

/*
 * The bin of v in a row of n bins of `width` from `origin`, clamped to [0,
 * n - 1]: the one function every index files and looks up with, so the two
 * always agree.
 */
GEOACC_HD int64_t
join_bin(double v, double origin, double width, int64_t n)
{
	const double c = floor((v - origin) / width);

	if (!(c > 0))
		return 0;
	if (c >= (double) (n - 1))
		return n - 1;
	return (int64_t) c;
}

/* Smallest i in [0, n) with keys[i] >= key, or n. */
template <class K>
GEOACC_HD uint64_t
join_lower_bound(const K *keys, uint64_t n, K key)
{
	uint64_t	lo = 0,
				hi = n;

	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Smallest i in [from, n) with keys[i] >= key, or n, when every key below
 * from is smaller: steps doubling from `from`, then a binary search, so a
 * key near the last one found costs a few reads.
 */
template <class K>
GEOACC_HD uint64_t
join_gallop(const K *keys, uint64_t from, uint64_t n, K key)
{
	uint64_t	lo = from,
				step = 1;

	while (lo + step <= n && keys[lo + step - 1] < key)
	{
		lo += step;
		step *= 2;
	}

	uint64_t	hi = lo + step < n ? lo + step : n;

	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ------------------------------------------------------------ the indexes */

/* The flattened spatial grid: only non-empty cells, keyed cy * nx + cx. */
struct SpatialIndexView
{
	double		x0;
	double		y0;
	double		cell;
	int64_t		nx;
	int64_t		ny;
	uint64_t	ncells;
	const uint64_t *keys;		/* ncells, ascending */
	const uint32_t *start;		/* ncells + 1: where each cell's entries start */
	const uint32_t *entries;
};

/*
 * Temporal bins: entries grouped by the bin of their start time, only the
 * non-empty bins kept (sorted keys and where each one's entries start), so
 * that narrow bins cost nothing where there is no data.
 */
struct TemporalIndexView
{
	double		t0;
	double		width;
	int64_t		nbins;
	double		max_duration;
	uint64_t	nkeys;
	const uint64_t *keys;		/* nkeys, ascending */
	const uint32_t *start;		/* nkeys + 1 */
	const uint32_t *entries;
};

/*
 * Temporal bins with spatial sub-cells: the entries grouped by (temporal
 * bin, sub-cell of the lower corner of their box), keyed (bin * nsub[1] +
 * cy) * nsub[0] + cx, only the non-empty ones kept.
 */
struct SpatioTemporalIndexView
{
	double		t0;
	double		width;
	int64_t		nbins;
	double		max_duration;
	double		s0[2];
	double		swidth[2];
	int64_t		nsub[2];
	double		max_extent[2];
	uint64_t	nkeys;
	const uint64_t *keys;		/* nkeys, ascending */
	const uint32_t *start;		/* nkeys + 1 */
	const uint32_t *entries;
};

/* Call visit(e) for every candidate e of q in the spatial grid, once each. */
template <class Visit>
GEOACC_HD void
join_search(const SpatialIndexView &ix, const JoinSegment *entries, const JoinQuery &q, const JoinParams &p,
			Visit &visit)
{
	const int64_t cx0 = join_bin(q.lo[0], ix.x0, ix.cell, ix.nx);
	const int64_t cx1 = join_bin(q.hi[0], ix.x0, ix.cell, ix.nx);
	const int64_t cy0 = join_bin(q.lo[1], ix.y0, ix.cell, ix.ny);
	const int64_t cy1 = join_bin(q.hi[1], ix.y0, ix.cell, ix.ny);

	for (int64_t cy = cy0; cy <= cy1; cy++)
	{
		/* the row's cells are consecutive keys: one search finds the first */
		uint64_t	i = join_lower_bound(ix.keys, ix.ncells, (uint64_t) (cy * ix.nx + cx0));

		for (; i < ix.ncells && ix.keys[i] <= (uint64_t) (cy * ix.nx + cx1); i++)
		{
			const int64_t cx = (int64_t) (ix.keys[i] - (uint64_t) (cy * ix.nx));

			for (uint32_t k = ix.start[i]; k < ix.start[i + 1]; k++)
			{
				const uint32_t e = ix.entries[k];
				const JoinSegment &s = entries[e];

				if (!join_candidate(q, s, p))
					continue;
				/* only in the cell of the lower corner of the boxes' intersection */
				const double corner_x = join_max(q.lo[0], join_min(s.p0[0], s.p1[0]));
				const double corner_y = join_max(q.lo[1], join_min(s.p0[1], s.p1[1]));

				if (join_bin(corner_x, ix.x0, ix.cell, ix.nx) != cx
					|| join_bin(corner_y, ix.y0, ix.cell, ix.ny) != cy)
					continue;
				visit(e);
			}
		}
	}
}

/* The temporal bins a query must scan: entries starting from its start minus the longest duration. */
GEOACC_HD void
join_time_bins(double t0, double width, int64_t nbins, double max_duration, const JoinQuery &q, int64_t *b0,
			   int64_t *b1)
{
	/* one bin more below: the subtraction rounds */
	*b0 = join_bin(q.s->t0 - max_duration, t0, width, nbins) - 1;
	if (*b0 < 0)
		*b0 = 0;
	*b1 = join_bin(q.s->t1, t0, width, nbins);
}

/* Call visit(e) for every candidate e of q in the temporal bins. */
template <class Visit>
GEOACC_HD void
join_search(const TemporalIndexView &ix, const JoinSegment *entries, const JoinQuery &q, const JoinParams &p,
			Visit &visit)
{
	int64_t		b0,
				b1;

	if (ix.nkeys == 0)
		return;
	join_time_bins(ix.t0, ix.width, ix.nbins, ix.max_duration, q, &b0, &b1);

	const uint64_t i0 = join_lower_bound(ix.keys, ix.nkeys, (uint64_t) b0);
	const uint64_t i1 = join_lower_bound(ix.keys, ix.nkeys, (uint64_t) b1 + 1);

	for (uint32_t k = ix.start[i0]; k < ix.start[i1]; k++)
	{
		const uint32_t e = ix.entries[k];

		if (join_candidate(q, entries[e], p))
			visit(e);
	}
}

/* Call visit(e) for every candidate e of q in the temporal bins with spatial sub-cells. */
template <class Visit>
GEOACC_HD void
join_search(const SpatioTemporalIndexView &ix, const JoinSegment *entries, const JoinQuery &q,
			const JoinParams &p, Visit &visit)
{
	int64_t		b0,
				b1,
				lo[2],
				hi[2];

	if (ix.nkeys == 0)
		return;
	join_time_bins(ix.t0, ix.width, ix.nbins, ix.max_duration, q, &b0, &b1);
	for (int k = 0; k < 2; k++)
	{
		/* an entry filed by its lower corner reaches at most max_extent above it */
		lo[k] = join_bin(q.lo[k] - ix.max_extent[k], ix.s0[k], ix.swidth[k], ix.nsub[k]) - 1;
		if (lo[k] < 0)
			lo[k] = 0;
		hi[k] = join_bin(q.hi[k], ix.s0[k], ix.swidth[k], ix.nsub[k]);
	}
	/* rows of sub-cells in ascending key order: each found from the end of the one before */
	uint64_t	to = 0;

	for (int64_t b = b0; b <= b1; b++)
		for (int64_t cy = lo[1]; cy <= hi[1]; cy++)
		{
			const uint64_t row = (uint64_t) ((b * ix.nsub[1] + cy) * ix.nsub[0]);
			const uint64_t from = join_gallop(ix.keys, to, ix.nkeys, row + (uint64_t) lo[0]);

			to = from;

			while (to < ix.nkeys && ix.keys[to] <= row + (uint64_t) hi[0])
				to++;
			for (uint32_t i = ix.start[from]; i < ix.start[to]; i++)
			{
				const uint32_t e = ix.entries[i];

				if (join_candidate(q, entries[e], p))
					visit(e);
			}
		}
}

/*
 * The layers of a temporal or spatiotemporal index, by size: each entry is
 * in the first layer whose caps (duration, and X and Y extents with
 * sub-cells) it fits, and a query scans each layer back only by that
 * layer's longest duration and extent.  The few long segments of real
 * tracks (a gap between fixes, a fast crossing) then no longer widen the
 * scan of every query.
 */
constexpr int JOIN_LAYERS = 5;

template <class Layer>
struct LayeredIndexView
{
	Layer		layer[JOIN_LAYERS];
};

template <class Layer, class Visit>
GEOACC_HD void
join_search(const LayeredIndexView<Layer> &ix, const JoinSegment *entries, const JoinQuery &q, const JoinParams &p,
			Visit &visit)
{
	for (int l = 0; l < JOIN_LAYERS; l++)
		join_search(ix.layer[l], entries, q, p, visit);
}

/* ------------------------------------------------------- planning (host) */

/* The shape of a set of segments, for planning an index. */
struct SegmentShape
{
	uint64_t	n = 0;
	double		lo[2] = {0, 0};	/* in X Y: the indexes cut X and Y only */
	double		hi[2] = {0, 0};
	double		t_lo = 0;
	double		t_hi = 0;
	double		max_extent[2] = {0, 0};
	double		max_duration = 0;
	double		median_extent = 0;	/* of max(X extent, Y extent) */
};

/* The shape of s[0..n). */
SegmentShape segment_shape(const JoinSegment *s, size_t n);

/* The parameters of one index over one set (or chunk) of entries. */
/*
 * One layer of temporal bins (with spatial sub-bins for spatiotemporal)
 * over the entries of that layer.
 */
struct BinPlan
{
	uint64_t	count = 0;		/* entries in the layer */
	double		t0 = 0,
				width = 1;
	int64_t		nbins = 1;
	double		max_duration = 0;
	/* spatiotemporal */
	double		s0[2] = {0, 0};
	double		swidth[2] = {1, 1};
	int64_t		nsub[2] = {1, 1};
	double		max_extent[2] = {0, 0};
};

struct IndexPlan
{
	GeoaccJoinMethod method = GEOACC_JOIN_SPATIAL;
	/* spatial */
	double		x0 = 0,
				y0 = 0,
				cell = 1;
	int64_t		nx = 1,
				ny = 1;
	uint64_t	insertions = 0;

	/* temporal and spatiotemporal: the caps of each layer but the last, the bins of each */
	double		cap_duration[JOIN_LAYERS - 1] = {};
	double		cap_extent[JOIN_LAYERS - 1][2] = {};
	BinPlan		layer[JOIN_LAYERS];
};

/* The layer of a temporal or spatiotemporal plan that holds entry e. */
GEOACC_HD int
join_layer(const IndexPlan &plan, const JoinSegment &e)
{
	const double duration = e.t1 - e.t0;
	const double extent_x = join_max(e.p0[0], e.p1[0]) - join_min(e.p0[0], e.p1[0]);
	const double extent_y = join_max(e.p0[1], e.p1[1]) - join_min(e.p0[1], e.p1[1]);

	for (int l = 0; l < JOIN_LAYERS - 1; l++)
		if (duration <= plan.cap_duration[l] && extent_x <= plan.cap_extent[l][0]
			&& extent_y <= plan.cap_extent[l][1])
			return l;
	return JOIN_LAYERS - 1;
}

/* The key of entry e in a layer: its temporal bin, or with sub-cells its (bin, cy, cx) key. */
GEOACC_HD uint64_t
join_bin_key(const BinPlan &b, bool sub_cells, const JoinSegment &e)
{
	const int64_t bin = join_bin(e.t0, b.t0, b.width, b.nbins);

	if (!sub_cells)
		return (uint64_t) bin;

	const int64_t cx = join_bin(join_min(e.p0[0], e.p1[0]), b.s0[0], b.swidth[0], b.nsub[0]);
	const int64_t cy = join_bin(join_min(e.p0[1], e.p1[1]), b.s0[1], b.swidth[1], b.nsub[1]);

	return (uint64_t) ((bin * b.nsub[1] + cy) * b.nsub[0] + cx);
}

/* The arrays of one layer's non-empty bins (of the spatial grid's non-empty cells). */
struct BinArrays
{
	uint64_t	nkeys;
	const uint64_t *keys;		/* nkeys, ascending */
	const uint32_t *start;		/* nkeys + 1: where each bin's entries start in `entries` */
	const uint32_t *entries;
};

/*
 * An index as the searches see it, wherever its arrays live (the CPU
 * twin's host index, the GPU's device index): its plan and the arrays of
 * each layer, the spatial grid's in bins[0].
 */
struct IndexArrays
{
	IndexPlan	plan;
	BinArrays	bins[JOIN_LAYERS];
};

/* Call visit(view) with the view of the plan's method over the arrays. */
template <class Visit>
void
with_index_view(const IndexArrays &ix, Visit &&visit)
{
	const IndexPlan &p = ix.plan;

	switch (p.method)
	{
		case GEOACC_JOIN_SPATIAL:
			{
				const BinArrays &a = ix.bins[0];

				visit(SpatialIndexView{p.x0, p.y0, p.cell, p.nx, p.ny, a.nkeys, a.keys, a.start, a.entries});
				return;
			}
		case GEOACC_JOIN_TEMPORAL:
			{
				LayeredIndexView<TemporalIndexView> view;

				for (int l = 0; l < JOIN_LAYERS; l++)
				{
					const BinPlan &b = p.layer[l];
					const BinArrays &a = ix.bins[l];

					view.layer[l] = {b.t0, b.width, b.nbins, b.max_duration, a.nkeys, a.keys, a.start, a.entries};
				}
				visit(view);
				return;
			}
		default:
			{
				LayeredIndexView<SpatioTemporalIndexView> view;

				for (int l = 0; l < JOIN_LAYERS; l++)
				{
					const BinPlan &b = p.layer[l];
					const BinArrays &a = ix.bins[l];

					view.layer[l] = {b.t0, b.width, b.nbins, b.max_duration, {b.s0[0], b.s0[1]},
						{b.swidth[0], b.swidth[1]}, {b.nsub[0], b.nsub[1]}, {b.max_extent[0], b.max_extent[1]},
						a.nkeys, a.keys, a.start, a.entries};
				}
				visit(view);
				return;
			}
	}
}

/* Plan the index of `method` (not auto) over entries e[0..n). */
IndexPlan	plan_index(GeoaccJoinMethod method, const JoinSegment *e, size_t n, const JoinParams &p);

/* Grid cells entry e covers in a spatial plan. */
GEOACC_HD uint64_t
spatial_cells(const IndexPlan &plan, const JoinSegment &e)
{
	const int64_t cx0 = join_bin(join_min(e.p0[0], e.p1[0]), plan.x0, plan.cell, plan.nx);
	const int64_t cx1 = join_bin(join_max(e.p0[0], e.p1[0]), plan.x0, plan.cell, plan.nx);
	const int64_t cy0 = join_bin(join_min(e.p0[1], e.p1[1]), plan.y0, plan.cell, plan.ny);
	const int64_t cy1 = join_bin(join_max(e.p0[1], e.p1[1]), plan.y0, plan.cell, plan.ny);

	return (uint64_t) (cx1 - cx0 + 1) * (uint64_t) (cy1 - cy0 + 1);
}

/* Bytes of device memory the index of n entries takes under a plan (with sort buffers). */
uint64_t	index_device_bytes(const IndexPlan &plan, uint64_t n);

/* ------------------------------------------------------------- the job */

/* Segments read in place. */
struct SegmentSpan
{
	const JoinSegment *p = nullptr;
	size_t		n = 0;

	const JoinSegment *data() const { return p; }
	size_t		size() const { return n; }
	bool		empty() const { return n == 0; }
	const JoinSegment &operator[](size_t i) const { return p[i]; }
};

/* A prepared join: the segments of both sides, the parameters, the method. */
struct JoinJob
{
	HostVector<JoinSegment> a;
	HostVector<JoinSegment> b;		/* empty for a self-join (the entries are a) or prepared entries */
	GeoaccJoinEntries *prepared = nullptr;	/* b's segments made beforehand, in place of b */
	JoinParams	params;
	GeoaccJoinMethod method;		/* resolved */

	SegmentSpan entries() const;
	/* The plan of the entries [first, first + count): the prepared entries' where they have it. */
	IndexPlan	plan(uint64_t first, uint64_t count) const;
	/* The prepared entries' copy in device memory, or NULL. */
	const JoinSegment *device_entries() const;
};

/*
 * What a join planned over prepared entries, for the next with the same
 * method and parameters (a map's joins repeat one distance).
 */
struct PreparedPlan
{
	GeoaccJoinMethod method;
	int			dims;
	double		distance;
	double		reach;
	uint64_t	first;
	uint64_t	count;
	IndexPlan	plan;
};

/* The CPU's index over prepared entries, kept for the next join with the same parameters (segment_join.cpp). */
struct PreparedHostIndex;

/* The GPU's index over prepared entries in device memory, kept likewise (segment_join.cu). */
struct PreparedDeviceIndex;

/*
 * GPU halves of prepared entries (segment_join.cu): a copy in device memory,
 * and its release; the release of a kept device index.
 */
void	   *join_entries_to_device(const JoinSegment *segments, size_t n);
void		join_entries_free_device(void *d_segments);
void		prepared_device_index_free(PreparedDeviceIndex *index);

/* Rows of the queries [q0, q1) of a job, ordered, appended by one device. */
class JoinRunner
{
public:
	virtual ~JoinRunner() = default;
	virtual void run(uint64_t q0, uint64_t q1, HostVector<GeoaccJoinRow> &rows, GeoaccJoinStats &stats) = 0;
	/* queries per call to run() that keep the work between interrupt polls short */
	virtual uint64_t block_queries() const = 0;
};

/*
 * The GPU runner's device memory.  Half of the memory at hand holds the
 * entries with their index, in as few chunks as fit; the rest a block of
 * queries (a quarter of it at most) and the candidate slots of a batch
 * (half of it at most).
 */

/* Candidate slots per query of the first pass, and of a batch at most. */
constexpr uint32_t DEFAULT_QUERY_SLOTS = 32;
constexpr uint64_t MAX_BATCH_SLOTS = uint64_t(1) << 26;

/* Queries per block at most (bounds the first pass and the host's share of rows). */
constexpr uint64_t MAX_BLOCK_QUERIES = uint64_t(1) << 20;

/* Slots for the redo at least, where the first pass needs fewer and the pairs are that many. */
constexpr uint64_t MIN_REDO_SLOTS = uint64_t(1) << 20;

/*
 * Device bytes per candidate slot: entry, query, flag, selected slot, two
 * keys and a slot for the sort, the row, and the selection's scratch.
 */
constexpr uint64_t SLOT_BYTES = 4 + 4 + 1 + 4 + 2 * 8 + 4 + sizeof(GeoaccJoinRow) + 8;

/*
 * Per query of a block: the segment, its count, its overflow flag, and for
 * the redo its place in the list, its (query, count) pair, its group's
 * list and base of slots.
 */
constexpr uint64_t QUERY_BYTES = sizeof(JoinSegment) + 4 + 1 + 4 + 8 + 4 + 8;

/* Device buffers start at multiples of this (CUB's and every type's alignment). */
constexpr uint64_t ARENA_ALIGN = 256;

/* The least the GPU runner is given: chunks of a few million entries, blocks of thousands of queries. */
constexpr uint64_t JOIN_LEAST_BYTES = uint64_t(256) << 20;

/* Candidate slots per query and per batch: geoacc_segment_join_set_buffers() (0: default). */
uint32_t	join_query_slots(uint32_t default_slots);
uint64_t	join_batch_slots(uint64_t default_slots);

/* Row order: (a_traj, a_seg, b_traj, b_seg). */
inline bool
join_row_less(const GeoaccJoinRow &x, const GeoaccJoinRow &y)
{
	if (x.a_traj != y.a_traj)
		return x.a_traj < y.a_traj;
	if (x.a_seg != y.a_seg)
		return x.a_seg < y.a_seg;
	if (x.b_traj != y.b_traj)
		return x.b_traj < y.b_traj;
	return x.b_seg < y.b_seg;
}

/*
 * What a GPU runner does with each batch's rows where they are, on the
 * device, instead of copying them out (the encounters of events.cu): it
 * tells the runner how many device bytes it takes per candidate slot, so
 * that the runner plans its batches with room for it, gets the batch size
 * once, then each batch's ordered rows.  The runner then hands out no rows.
 */
class DeviceRowSink
{
public:
	virtual ~DeviceRowSink() = default;
	virtual uint64_t bytes_per_slot() const = 0;
	virtual void reserve(uint64_t slots) = 0;
	virtual void take(const GeoaccJoinRow *d_rows, uint32_t n) = 0;

	uint64_t	rows_taken = 0;	/* rows the sink took, for the join's statistics */
};

/* The GPU runner (segment_join.cu); what its set-up costs goes into stats; with a sink, rows stay on the device. */
std::unique_ptr<JoinRunner> make_gpu_join_runner(const JoinJob &job, GeoaccJoinStats &stats,
												 DeviceRowSink *sink = nullptr);

/*
 * geoacc_segment_join_open() with a sink for the GPU runner's rows (NULL:
 * the rows come out as usual); the CPU twin ignores the sink.
 */
void		segment_join_open(GeoaccDevice device, const GeoaccTrajectories *a, const GeoaccTrajectories *b,
							  double distance, GeoaccJoinMethod method, DeviceRowSink *sink,
							  GeoaccSegmentJoin **join, GeoaccJoinEntries *prepared = nullptr);

}								/* namespace geoacc */

/*
 * Segments of trajectories b made once as the entries of many joins
 * (geoacc_join_entries_create), with what those joins planned and built.
 */
struct GeoaccJoinEntries
{
	GeoaccDevice device;
	GeoaccTrajectories b;		/* the caller's arrays, which outlive it */
	bool		with_z;
	geoacc::HostVector<geoacc::JoinSegment> segments;
	double		max_abs = 0;	/* the largest magnitude of their coordinates */
	void	   *d_segments = nullptr;	/* on the GPU: their copy */
	uint64_t	device_bytes = 0;	/* the copy and the kept device index */
	std::vector<geoacc::PreparedPlan> plans;
	std::unique_ptr<geoacc::PreparedHostIndex> host_index;
	geoacc::PreparedDeviceIndex *device_index = nullptr;	/* of the last join on the GPU in one chunk */

	~GeoaccJoinEntries();
};

/* A join in progress: the job, the device's runner, the rows of the last block not yet handed out. */
struct GeoaccSegmentJoin
{
	geoacc::JoinJob job;
	std::unique_ptr<geoacc::JoinRunner> runner;
	geoacc::HostVector<GeoaccJoinRow> pending;
	size_t		pending_next = 0;
	uint64_t	next_query = 0;
	GeoaccJoinStats stats;
};

#endif							/* GEOACC_SEGMENT_JOIN_H */
