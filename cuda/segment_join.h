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
 *   spatiotemporal  temporal bins, each cut into sub-bins along X and along Y
 *                   no narrower than the largest entry extent; an entry is
 *                   filed in the sub-bin of its lower coordinate in each
 *                   dimension, and a query scans, per temporal bin, the
 *                   sub-bin range of the dimension holding fewer entries.
 *   auto            estimates the entries each of the three visits per query
 *                   from the extents, durations, counts and the distance,
 *                   assuming uniform density, and runs the cheapest.
 */
#ifndef GEOACC_SEGMENT_JOIN_H
#define GEOACC_SEGMENT_JOIN_H

#include "core.h"

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

/* Temporal bins: entries grouped by the bin of their start time. */
struct TemporalIndexView
{
	double		t0;
	double		width;
	int64_t		nbins;
	double		max_duration;
	const uint32_t *start;		/* nbins + 1 */
	const uint32_t *entries;
};

/*
 * Temporal bins with spatial sub-bins: per dimension k (X, Y) the entries
 * grouped by (temporal bin, sub-bin of their lower coordinate).
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
	const uint32_t *start[2];	/* nbins * nsub[k] + 1 */
	const uint32_t *entries[2];
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

	join_time_bins(ix.t0, ix.width, ix.nbins, ix.max_duration, q, &b0, &b1);
	for (uint32_t k = ix.start[b0]; k < ix.start[b1 + 1]; k++)
	{
		const uint32_t e = ix.entries[k];

		if (join_candidate(q, entries[e], p))
			visit(e);
	}
}

/* Call visit(e) for every candidate e of q in the temporal bins with spatial sub-bins. */
template <class Visit>
GEOACC_HD void
join_search(const SpatioTemporalIndexView &ix, const JoinSegment *entries, const JoinQuery &q,
			const JoinParams &p, Visit &visit)
{
	int64_t		b0,
				b1,
				lo[2],
				hi[2];

	join_time_bins(ix.t0, ix.width, ix.nbins, ix.max_duration, q, &b0, &b1);
	for (int k = 0; k < 2; k++)
	{
		/* an entry filed by its lower coordinate reaches at most max_extent above it */
		lo[k] = join_bin(q.lo[k] - ix.max_extent[k], ix.s0[k], ix.swidth[k], ix.nsub[k]) - 1;
		if (lo[k] < 0)
			lo[k] = 0;
		hi[k] = join_bin(q.hi[k], ix.s0[k], ix.swidth[k], ix.nsub[k]);
	}
	for (int64_t b = b0; b <= b1; b++)
	{
		const uint32_t *sx = ix.start[0] + b * ix.nsub[0];
		const uint32_t *sy = ix.start[1] + b * ix.nsub[1];
		/* the dimension whose range holds fewer entries */
		const int	k = sy[hi[1] + 1] - sy[lo[1]] < sx[hi[0] + 1] - sx[lo[0]] ? 1 : 0;
		const uint32_t *s = k == 0 ? sx : sy;

		for (uint32_t i = s[lo[k]]; i < s[hi[k] + 1]; i++)
		{
			const uint32_t e = ix.entries[k][i];

			if (join_candidate(q, entries[e], p))
				visit(e);
		}
	}
}

/* ------------------------------------------------------- planning (host) */

/* The shape of a set of segments, for planning an index. */
struct SegmentShape
{
	uint64_t	n = 0;
	double		lo[3] = {0, 0, 0};
	double		hi[3] = {0, 0, 0};
	double		t_lo = 0;
	double		t_hi = 0;
	double		max_extent[3] = {0, 0, 0};
	double		max_duration = 0;
	double		mean_extent[2] = {0, 0};
	double		mean_duration = 0;
	double		median_extent = 0;	/* of max(X extent, Y extent) */
};

SegmentShape segment_shape(const JoinSegment *s, size_t n);

/* The parameters of one index over one set (or chunk) of entries. */
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
	/* temporal and spatiotemporal */
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

/* Plan the index of `method` (not auto) over entries e[0..n). */
IndexPlan	plan_index(GeoaccJoinMethod method, const JoinSegment *e, size_t n, const JoinParams &p);

/* The method auto runs for these queries against these entries. */
GeoaccJoinMethod choose_method(const SegmentShape &queries, const SegmentShape &entries, const JoinParams &p);

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

/* A prepared join: the segments of both sides, the parameters, the method. */
struct JoinJob
{
	std::vector<JoinSegment> a;
	std::vector<JoinSegment> b;		/* empty for a self-join: the entries are a */
	JoinParams	params;
	GeoaccJoinMethod method;		/* resolved */

	const std::vector<JoinSegment> &entries() const { return params.self ? a : b; }
};

/* Rows of the queries [q0, q1) of a job, ordered, appended by one device. */
class JoinRunner
{
public:
	virtual ~JoinRunner() = default;
	virtual void run(uint64_t q0, uint64_t q1, std::vector<GeoaccJoinRow> &rows, GeoaccJoinStats &stats) = 0;
	/* queries per call to run() that keep the work between interrupt polls short */
	virtual uint64_t block_queries() const = 0;
};

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

/* The GPU runner (segment_join.cu). */
std::unique_ptr<JoinRunner> make_gpu_join_runner(const JoinJob &job);

}								/* namespace geoacc */

#endif							/* GEOACC_SEGMENT_JOIN_H */
