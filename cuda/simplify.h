/*
 * simplify.h
 *
 * Douglas-Peucker over many trajectories: the arithmetic the CUDA kernels and
 * the CPU twin share (the key a vertex is compared by, the threshold of a
 * segment, the sequential DP over one range, PostGIS's tolerance-0 rule), and
 * the GPU entry point.  One copy of each formula, so that both paths round
 * alike and return the same vertices.
 */
#ifndef GEOACC_SIMPLIFY_H
#define GEOACC_SIMPLIFY_H

#include "core.h"
#include "primitives.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>

namespace geoacc
{

/* Coordinates of a batch; z and m only where the distance uses them. */
struct PointArrays
{
	const double *x;
	const double *y;
	const double *z;
	const double *m;
};

/*
 * A segment A-B prepared for the keys of its interior vertices.  A vertex
 * splits the segment when its key is strictly greater than `threshold`.
 */
struct SegmentFrame
{
	double		ax, ay, az, am;
	double		bx, by, bz;
	double		dx, dy, dz, dm;	/* B - A */
	double		length_sq;		/* |B - A|^2 over the measured axes */
	bool		degenerate;		/* A and B closer than sqrt(DBL_EPSILON) */
	double		threshold;
};

GEOACC_HD constexpr bool
uses_z(GeoaccSimplifyDistance d)
{
	return d == GEOACC_SIMPLIFY_3D || d == GEOACC_SIMPLIFY_SYNCHRONIZED_3D;
}

GEOACC_HD constexpr bool
uses_m(GeoaccSimplifyDistance d)
{
	return d == GEOACC_SIMPLIFY_SYNCHRONIZED || d == GEOACC_SIMPLIFY_SYNCHRONIZED_3D;
}

/* Segments with at most this many interior vertices are settled by one GPU thread. */
constexpr uint32_t SHORT_SEGMENT = 32;

/*
 * Segments with at most this many interior vertices are settled by one warp
 * (at worst WARP_SEGMENT^2 / 32 keys per warp: a few milliseconds); longer
 * ones go through the data-parallel rounds.
 */
constexpr uint32_t WARP_SEGMENT = 8192;

/* A segment by its end vertices. */
struct Span
{
	uint32_t	a;
	uint32_t	b;
};

/* Device bytes CUB's scans may need for n items: a generous bound. */
inline uint64_t
scan_temp_bound(uint64_t n)
{
	return n + (64u << 10);
}

/* Sizes of the GPU's DP buffers for one piece; its allocation and its memory plan share them. */
struct DpSizes
{
	uint64_t	points;
	uint64_t	segments;		/* segments of the rounds never exceed this: their interiors are disjoint */
	uint64_t	candidates;

	DpSizes(uint64_t npoints, uint64_t ntrajectories)
		: points(npoints),
		  segments(npoints / (WARP_SEGMENT + 1) + 1),
		  candidates(std::max<uint64_t>(ntrajectories, 2 * segments))
	{
	}

	uint64_t	bytes() const
	{
		return candidates * sizeof(Span) + 2 * (candidates + 1) * sizeof(uint32_t)
			+ segments * (sizeof(Span) + sizeof(ValueIndex)) + 2 * (segments + 1) * sizeof(uint32_t)
			+ points * (2 * sizeof(uint32_t) + sizeof(double))
			+ scan_temp_bound(std::max(points, candidates + 1));
	}
};

/*
 * Device bytes for one GPU piece of n vertices in t trajectories: the
 * coordinates the distance reads, keep flags, offsets, and either the
 * tolerance-0 walk's state or the DP buffers.
 */
inline uint64_t
piece_bytes(uint64_t n, uint64_t t, GeoaccSimplifyDistance distance, bool walk)
{
	uint64_t	coordinates = 2 + uses_z(distance) + uses_m(distance);
	uint64_t	bytes = n * (coordinates * sizeof(double) + 1) + (t + 1) * sizeof(uint32_t);

	if (walk)
		return bytes + 2 * t * sizeof(uint32_t) + sizeof(uint32_t);
	return bytes + DpSizes(n, t).bytes();
}

/*
 * Spatial distances follow PostGIS 3.3's ptarray_dp_findsplit_in_place
 * (liblwgeom/ptarray.c) operation for operation: keys are squared distances
 * multiplied by |AB|^2 so that no division is needed (the threshold is
 * tolerance^2 * |AB|^2), and a segment shorter than sqrt(DBL_EPSILON) is
 * measured from A without scaling.  The 3D distance is the same with Z
 * added.  Synchronized distances compare the squared distance to the
 * position interpolated at the vertex's time with tolerance^2.
 */
template <GeoaccSimplifyDistance D>
GEOACC_HD SegmentFrame
segment_frame(const PointArrays &p, uint32_t a, uint32_t b, double tolerance_sq)
{
	SegmentFrame f;

	f.ax = p.x[a];
	f.ay = p.y[a];
	f.bx = p.x[b];
	f.by = p.y[b];
	f.dx = f.bx - f.ax;
	f.dy = f.by - f.ay;
	f.az = f.bz = f.dz = 0.0;
	f.am = f.dm = 0.0;
	if constexpr (uses_z(D))
	{
		f.az = p.z[a];
		f.bz = p.z[b];
		f.dz = f.bz - f.az;
	}
	if constexpr (uses_m(D))
	{
		f.am = p.m[a];
		f.dm = p.m[b] - f.am;
	}
	if constexpr (uses_z(D))
		f.length_sq = f.dx * f.dx + f.dy * f.dy + f.dz * f.dz;
	else
		f.length_sq = f.dx * f.dx + f.dy * f.dy;
	f.degenerate = f.length_sq < DBL_EPSILON;
	if constexpr (uses_m(D))
		f.threshold = tolerance_sq;
	else
		f.threshold = f.degenerate ? tolerance_sq : tolerance_sq * f.length_sq;
	return f;
}

/* Squared distance from (x, y, z) to (px, py, pz), in PostGIS's order. */
template <GeoaccSimplifyDistance D>
GEOACC_HD double
squared_distance(double px, double py, double pz, double x, double y, double z)
{
	double		hx = px - x;
	double		hy = py - y;

	if constexpr (uses_z(D))
	{
		double		hz = pz - z;

		return hx * hx + hy * hy + hz * hz;
	}
	return hx * hx + hy * hy;
}

/*
 * The key of vertex c against segment f.  NaN (only from overflowing
 * coordinates) becomes -infinity: it can never split, exactly as a NaN
 * never wins PostGIS's "key > best" comparison, and the arg-max stays a
 * proper reduction.
 */
template <GeoaccSimplifyDistance D>
GEOACC_HD double
split_key(const SegmentFrame &f, const PointArrays &p, uint32_t c)
{
	double		cx = p.x[c];
	double		cy = p.y[c];
	double		cz = uses_z(D) ? p.z[c] : 0.0;
	double		key;

	if constexpr (uses_m(D))
	{
		double		ratio = (p.m[c] - f.am) / f.dm;

		key = squared_distance<D>(cx, cy, cz, f.ax + f.dx * ratio, f.ay + f.dy * ratio, f.az + f.dz * ratio);
	}
	else if (f.degenerate)
		key = squared_distance<D>(f.ax, f.ay, f.az, cx, cy, cz);
	else
	{
		double		cax = cx - f.ax;
		double		cay = cy - f.ay;
		double		caz = cz - f.az;
		double		dot = uses_z(D) ? cax * f.dx + cay * f.dy + caz * f.dz : cax * f.dx + cay * f.dy;

		if (dot <= 0.0)
			key = squared_distance<D>(f.ax, f.ay, f.az, cx, cy, cz) * f.length_sq;
		else if (dot >= f.length_sq)
			key = squared_distance<D>(f.bx, f.by, f.bz, cx, cy, cz) * f.length_sq;
		else if constexpr (uses_z(D))
		{
			/* |CA x BA|^2 = distance^2 * |BA|^2 */
			double		ux = cay * f.dz - caz * f.dy;
			double		uy = caz * f.dx - cax * f.dz;
			double		uz = cax * f.dy - cay * f.dx;

			key = ux * ux + uy * uy + uz * uz;
		}
		else
		{
			double		s = cax * f.dy - cay * f.dx;

			key = s * s;
		}
	}
	return key != key ? -INFINITY : key;
}

/*
 * The split of segment a-b: the first vertex with the largest key, if that
 * key exceeds the threshold; a when none does.
 */
template <GeoaccSimplifyDistance D>
GEOACC_HD uint32_t
find_split(const PointArrays &p, uint32_t a, uint32_t b, double tolerance_sq)
{
	if (b - a < 2)
		return a;

	SegmentFrame f = segment_frame<D>(p, a, b, tolerance_sq);
	double		best = f.threshold;
	uint32_t	split = a;

	for (uint32_t c = a + 1; c < b; c++)
	{
		double		key = split_key<D>(f, p, c);

		if (key > best)
		{
			best = key;
			split = c;
		}
	}
	return split;
}

/* For dp_range on the GPU: nothing to poll inside a kernel. */
struct NoPoll
{
	GEOACC_HD void operator()(uint32_t) const {}
};

/*
 * Douglas-Peucker over vertices a..b (both kept already): sets keep[] for
 * the interior vertices that stay.  `stack` holds b - a entries; poll(n) is
 * told after each segment how many keys it took.  The kept set does not
 * depend on the order segments are visited in, which is why this sequential
 * form and the data-parallel rounds on the GPU agree.
 */
template <GeoaccSimplifyDistance D, class Poll>
GEOACC_HD void
dp_range(const PointArrays &p, uint32_t a, uint32_t b, double tolerance_sq, uint8_t *keep, uint32_t *stack,
		 Poll &poll)
{
	uint32_t	depth = 0;
	uint32_t	first = a;

	stack[depth++] = b;
	while (depth > 0)
	{
		uint32_t	last = stack[depth - 1];
		uint32_t	split = find_split<D>(p, first, last, tolerance_sq);

		poll(last - first);
		if (split == first)
		{
			first = last;
			depth--;
		}
		else
		{
			keep[split] = 1;
			stack[depth++] = split;
		}
	}
}

/*
 * PostGIS's rule for tolerance 0 (ptarray_simplify_in_place_tolerance0):
 * walking forward, vertex c is dropped when it lies on the segment from the
 * last kept vertex k to the next vertex n.
 */
GEOACC_HD bool
lies_on_segment(double kx, double ky, double cx, double cy, double nx, double ny)
{
	double		bax = nx - kx;
	double		bay = ny - ky;
	double		length_sq = bax * bax + bay * bay;
	double		cax = cx - kx;
	double		cay = cy - ky;
	double		dot = cax * bax + cay * bay;
	double		s = cax * bay - cay * bax;

	return !(dot < 0.0 || dot > length_sq || s != 0);
}

/*
 * The tolerance-0 walk over one trajectory ending at vertex `last`, from
 * vertex i with `kept` the last kept vertex, for at most `steps` vertices
 * (so that a GPU launch stays short); returns where to continue.
 */
GEOACC_HD uint32_t
tolerance0_walk(const PointArrays &p, uint32_t i, uint32_t last, uint32_t &kept, uint32_t steps,
				uint8_t *keep)
{
	uint32_t	end = last - i > steps ? i + steps : last;

	for (; i < end; i++)
		if (!lies_on_segment(p.x[kept], p.y[kept], p.x[i], p.y[i], p.x[i + 1], p.y[i + 1]))
		{
			keep[i] = 1;
			kept = i;
		}
	return i;
}

/*
 * GPU simplification of the whole batch, adding to `timing`.  The caller has
 * checked the arguments.  The batch is cut into pieces that fit the device
 * memory cap; a trajectory too large for the cap on its own goes to the CPU
 * twin.
 */
void		dp_simplify_gpu(const GeoaccTrajectories &batch, GeoaccSimplifyDistance distance,
							double tolerance, uint8_t *keep, GeoaccSimplifyTiming &timing);

/* CPU twin over trajectories [t0, t1) (used by the GPU path for oversize ones). */
void		dp_simplify_cpu(const GeoaccTrajectories &batch, uint32_t t0, uint32_t t1,
							GeoaccSimplifyDistance distance, double tolerance, uint8_t *keep);

}								/* namespace geoacc */

#endif							/* GEOACC_SIMPLIFY_H */
