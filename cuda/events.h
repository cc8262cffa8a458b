/*
 * events.h
 *
 * Vessel events: encounters, stops and zone visits.  The arithmetic and
 * the rules shared by the CUDA kernels (events.cu) and the CPU twin
 * (events.cpp), so that both form the same events to the bit.
 *
 * Encounters and zone visits are both unions of time intervals of one key
 * (a pair of trajectories; a trajectory and a zone): fragments, merged
 * into islands where they overlap, touch or lie at most max_gap apart.
 * Every value of an island is chosen among its fragments' (the earliest
 * start, the latest end, the closest approach by a total order), never
 * computed, and the sweep's test start > (latest end so far) + max_gap
 * rounds alike whatever the grouping (rounding is monotone), so fragments
 * merged in any grouping, batch by batch on the GPU or all at once on the
 * CPU, give the same islands to the bit.
 *
 * A stop (MovingPandas' TrajectoryStopDetector, with the box of the fixes
 * for its rotated rectangle) is found by one sequential scan of a
 * trajectory's fixes, the same function on both devices (one GPU thread per
 * trajectory).
 *
 * A zone visit: each segment is cut where it meets a ring of the zone, and
 * each piece is inside (or on the boundary) when its midpoint is; the inside
 * pieces are the fragments.
 */
#ifndef GEOACC_EVENTS_H
#define GEOACC_EVENTS_H

#include "core.h"
#include "host_memory.h"
#include "segment_join.h"

#include <cmath>
#include <cstdint>
#include <memory>

namespace geoacc
{

/*
 * A piece of an event: key (a, b) (trajectories a and b; trajectory a and
 * zone b), the interval [start, end], and for encounters the closest
 * approach in it (the segments a_seg and b_seg at cpa_time).
 */
struct EventFragment
{
	uint32_t	a;
	uint32_t	b;
	uint32_t	a_seg;
	uint32_t	b_seg;
	double		start;
	double		end;
	double		cpa_time;
	double		cpa_distance;
};

/* The closer approach of two: the smaller distance, then the earlier time, then the lower segments. */
GEOACC_HD bool
event_cpa_before(const EventFragment &x, const EventFragment &y)
{
	if (x.cpa_distance != y.cpa_distance)
		return x.cpa_distance < y.cpa_distance;
	if (x.cpa_time != y.cpa_time)
		return x.cpa_time < y.cpa_time;
	if (x.a_seg != y.a_seg)
		return x.a_seg < y.a_seg;
	return x.b_seg < y.b_seg;
}

/* Two fragments of one island as one: every value chosen, none computed (associative and commutative). */
GEOACC_HD EventFragment
event_combine(const EventFragment &x, const EventFragment &y)
{
	EventFragment r = event_cpa_before(y, x) ? y : x;

	r.start = y.start < x.start ? y.start : x.start;
	r.end = y.end > x.end ? y.end : x.end;
	return r;
}

/* Order of the sweep: key, then start, then end. */
GEOACC_HD bool
event_sweep_less(const EventFragment &x, const EventFragment &y)
{
	if (x.a != y.a)
		return x.a < y.a;
	if (x.b != y.b)
		return x.b < y.b;
	if (x.start != y.start)
		return x.start < y.start;
	return x.end < y.end;
}

/*
 * Whether a fragment starts a new island in the sweep: another key than
 * the one before, or a start beyond the latest end so far of its key plus
 * max_gap (a fragment that touches, start == end, joins).
 */
GEOACC_HD bool
event_starts_island(bool same_key, double start, double latest_end, double max_gap)
{
	return !same_key || start > latest_end + max_gap;
}

/* The fragment of one segment-join row. */
GEOACC_HD EventFragment
event_from_row(const GeoaccJoinRow &r)
{
	return EventFragment{r.a_traj, r.b_traj, r.a_seg, r.b_seg, r.t_start, r.t_end, r.cpa_time, r.cpa_distance};
}

/*
 * Merge fragments into islands on the host: sorted by the sweep's order,
 * swept, combined; in place (the islands in sweep order).
 */
void		event_merge(HostVector<EventFragment> &f, double max_gap);

/* ---------------------------------------------------------------- speeds */

/* Speed of one segment of a trajectory (points i and i + 1): its length over its duration. */
GEOACC_HD double
event_segment_speed(const GeoaccTrajectories &t, uint32_t i)
{
	const double dx = t.x[i + 1] - t.x[i];
	const double dy = t.y[i + 1] - t.y[i];
	const double dz = t.z ? t.z[i + 1] - t.z[i] : 0.0;

	return sqrt(dx * dx + dy * dy + dz * dz) / (t.m[i + 1] - t.m[i]);
}

/*
 * Median speed of trajectory `traj` over [start, end]: of the speeds of its
 * segments whose span overlaps it by more than an instant (for an interval
 * of no length, of those whose span holds it), the middle one, or for an
 * even count lo + (hi - lo) * 0.5 of the middle two, as PostgreSQL's
 * percentile_cont(0.5) computes it.  NAN when no segment qualifies.
 */
double		event_median_speed(const GeoaccTrajectories &t, uint32_t traj, double start, double end);

/* ----------------------------------------------------------------- stops */

/* The box of a run of fixes. */
struct StopBox
{
	double		lo[3];
	double		hi[3];
};

GEOACC_HD void
stop_box_point(StopBox &b, const GeoaccTrajectories &t, uint32_t i, bool first)
{
	const double p[3] = {t.x[i], t.y[i], t.z ? t.z[i] : 0.0};

	for (int k = 0; k < 3; k++)
	{
		if (first || p[k] < b.lo[k])
			b.lo[k] = p[k];
		if (first || p[k] > b.hi[k])
			b.hi[k] = p[k];
	}
}

/* Whether a box's diagonal is at most the diameter: dx^2 + dy^2 (+ dz^2) <= d^2. */
GEOACC_HD bool
stop_box_fits(const StopBox &b, double diameter)
{
	const double dx = b.hi[0] - b.lo[0];
	const double dy = b.hi[1] - b.lo[1];
	const double dz = b.hi[2] - b.lo[2];

	return dx * dx + dy * dy + dz * dz <= diameter * diameter;
}

/*
 * The stops of trajectory points [p0, p1) of t, in time order, each handed
 * to emit(first, last) as point indices of t.  The rule: a run of
 * consecutive fixes i .. j is a candidate while the diagonal of their box is
 * at most max_diameter; the scan takes each fix in turn; where fix j does
 * not fit the run i .. j - 1, that run is a stop when it lasts at least
 * min_duration (m[j - 1] - m[i] >= min_duration), and the next run starts
 * at j; else the run is cut from the front to the longest one ending at j
 * that fits.  The run left at the end is a stop when it lasts long enough.
 * Positions between fixes lie on the segment between them, inside the
 * box: they never break a stop.  Returns the number of stops.
 */
template <class Emit>
GEOACC_HD uint32_t
stops_of(const GeoaccTrajectories &t, uint32_t p0, uint32_t p1, double max_diameter, double min_duration,
		 Emit &emit)
{
	uint32_t	count = 0;
	uint32_t	i = p0;
	StopBox		box;

	if (p1 <= p0 + 1)
		return 0;
	stop_box_point(box, t, p0, true);
	for (uint32_t j = p0 + 1; j < p1; j++)
	{
		StopBox		grown = box;

		stop_box_point(grown, t, j, false);
		if (stop_box_fits(grown, max_diameter))
		{
			box = grown;
			continue;
		}
		if (j - 1 > i && t.m[j - 1] - t.m[i] >= min_duration)
		{
			emit(i, j - 1);
			count++;
			i = j;
			stop_box_point(box, t, j, true);
			continue;
		}
		/* the longest run ending at j that fits: back from j, the box growing */
		stop_box_point(box, t, j, true);
		i = j;
		while (i > p0)
		{
			StopBox		back = box;

			stop_box_point(back, t, i - 1, false);
			if (!stop_box_fits(back, max_diameter))
				break;
			box = back;
			i--;
		}
	}
	if (p1 - 1 > i && t.m[p1 - 1] - t.m[i] >= min_duration)
	{
		emit(i, p1 - 1);
		count++;
	}
	return count;
}

/* ----------------------------------------------------------- zone visits */

/* Zones as the core takes them (geoacc_core.h's GeoaccZones), with each zone's box. */
struct ZoneView
{
	uint32_t	nzones;
	const uint32_t *zone_rings;	/* nzones + 1: zone z is rings zone_rings[z] .. zone_rings[z + 1] - 1 */
	const uint32_t *ring_points;	/* nrings + 1: ring r is points ring_points[r] .. ring_points[r + 1] - 1 */
	const double *x;
	const double *y;
	const double *box;			/* 4 per zone: xmin, ymin, xmax, ymax */
};

/*
 * Whether (px, py) is inside zone z or on its boundary: on an edge (exactly
 * collinear and within its box), else by the parity of the edges a ray to
 * +X crosses (holes and the parts of a MULTIPOLYGON count alike).
 */
GEOACC_HD bool
zone_contains(const ZoneView &zv, uint32_t z, double px, double py)
{
	bool		inside = false;

	for (uint32_t r = zv.zone_rings[z]; r < zv.zone_rings[z + 1]; r++)
		for (uint32_t k = zv.ring_points[r]; k + 1 < zv.ring_points[r + 1]; k++)
		{
			const double ax = zv.x[k],
						ay = zv.y[k],
						bx = zv.x[k + 1],
						by = zv.y[k + 1];
			const double cross = (bx - ax) * (py - ay) - (by - ay) * (px - ax);

			if (cross == 0 && px >= (ax < bx ? ax : bx) && px <= (ax < bx ? bx : ax)
				&& py >= (ay < by ? ay : by) && py <= (ay < by ? by : ay))
				return true;
			if ((ay > py) != (by > py))
			{
				const double xc = ax + (py - ay) / (by - ay) * (bx - ax);

				if (px < xc)
					inside = !inside;
			}
		}
	return inside;
}

/*
 * The smallest parameter u in (after, 1) at which the segment from (x0, y0)
 * to (x1, y1) meets an edge of zone z (a crossing, or where a collinear
 * edge's end lies on it), or 1.
 */
GEOACC_HD double
zone_next_cut(const ZoneView &zv, uint32_t z, double x0, double y0, double x1, double y1, double after)
{
	const double rx = x1 - x0,
				ry = y1 - y0;
	double		next = 1;

	for (uint32_t r = zv.zone_rings[z]; r < zv.zone_rings[z + 1]; r++)
		for (uint32_t k = zv.ring_points[r]; k + 1 < zv.ring_points[r + 1]; k++)
		{
			const double ax = zv.x[k],
						ay = zv.y[k];
			const double sx = zv.x[k + 1] - ax,
						sy = zv.y[k + 1] - ay;
			const double qx = ax - x0,
						qy = ay - y0;
			const double den = rx * sy - ry * sx;
			double		u[2];
			int			nu = 0;

			if (den != 0)
			{
				const double v = (qx * ry - qy * rx) / den;

				if (v >= 0 && v <= 1)
					u[nu++] = (qx * sy - qy * sx) / den;
			}
			else if (qx * ry - qy * rx == 0)
			{
				/* collinear: where the edge's ends lie along the segment */
				const double rr = rx * rx + ry * ry;

				if (rr > 0)
				{
					u[nu++] = (qx * rx + qy * ry) / rr;
					u[nu++] = ((qx + sx) * rx + (qy + sy) * ry) / rr;
				}
			}
			for (int i = 0; i < nu; i++)
				if (u[i] > after && u[i] < next)
					next = u[i];
		}
	return next;
}

/* The time at parameter u of a segment from t0 to t1 (its ends exactly at 0 and 1). */
GEOACC_HD double
zone_time(double t0, double t1, double u)
{
	return u <= 0 ? t0 : (u >= 1 ? t1 : t0 + (t1 - t0) * u);
}

/*
 * The inside pieces of segment i (points i and i + 1) of trajectory traj
 * in zone z, consecutive ones joined, each handed to emit(start, end) in
 * time order; returns their number.
 */
template <class Emit>
GEOACC_HD uint32_t
zone_pieces(const ZoneView &zv, uint32_t z, const GeoaccTrajectories &t, uint32_t i, Emit &emit)
{
	const double x0 = t.x[i],
				y0 = t.y[i],
				x1 = t.x[i + 1],
				y1 = t.y[i + 1];
	const double t0 = t.m[i],
				t1 = t.m[i + 1];
	uint32_t	count = 0;
	double		u = 0,
				open = -1;		/* the start of the inside piece being joined, or -1 */

	while (u < 1)
	{
		const double next = zone_next_cut(zv, z, x0, y0, x1, y1, u);
		const double mid = u + (next - u) * 0.5;
		const bool	inside = zone_contains(zv, z, x0 + (x1 - x0) * mid, y0 + (y1 - y0) * mid);

		if (inside && open < 0)
			open = u;
		else if (!inside && open >= 0)
		{
			emit(zone_time(t0, t1, open), zone_time(t0, t1, u));
			count++;
			open = -1;
		}
		u = next;
	}
	if (open >= 0)
	{
		emit(zone_time(t0, t1, open), t1);
		count++;
	}
	return count;
}

/* Whether a segment's box meets zone z's box. */
GEOACC_HD bool
zone_box_meets(const ZoneView &zv, uint32_t z, double x0, double y0, double x1, double y1)
{
	const double *b = zv.box + 4 * (size_t) z;

	return (x0 < x1 ? x0 : x1) <= b[2] && (x0 < x1 ? x1 : x0) >= b[0] && (y0 < y1 ? y0 : y1) <= b[3]
		&& (y0 < y1 ? y1 : y0) >= b[1];
}

/*
 * A uniform grid over the zones' boxes: each zone filed in every cell its
 * box covers (cells cy * nx + cx, entries of cell c at cell_start[c] ..
 * cell_start[c + 1] - 1).  A segment visits the cells its box covers and
 * takes a zone only in the cell of the lower corner of the two boxes'
 * intersection, so each (segment, zone) pair once.
 */
struct ZoneGrid
{
	double		x0;
	double		y0;
	double		cell;
	int64_t		nx;
	int64_t		ny;
	const uint32_t *cell_start;
	const uint32_t *zones;
};

GEOACC_HD int64_t
zone_cell(double v, double origin, double cell, int64_t n)
{
	const double c = floor((v - origin) / cell);

	if (!(c > 0))
		return 0;
	if (c >= (double) (n - 1))
		return n - 1;
	return (int64_t) c;
}

/* Call visit(z) for every zone whose box meets segment i's, once each. */
template <class Visit>
GEOACC_HD void
zone_candidates(const ZoneGrid &g, const ZoneView &zv, const GeoaccTrajectories &t, uint32_t i, Visit &visit)
{
	const double x0 = t.x[i],
				y0 = t.y[i],
				x1 = t.x[i + 1],
				y1 = t.y[i + 1];
	const double lo_x = x0 < x1 ? x0 : x1,
				lo_y = y0 < y1 ? y0 : y1,
				hi_x = x0 < x1 ? x1 : x0,
				hi_y = y0 < y1 ? y1 : y0;
	const int64_t cx0 = zone_cell(lo_x, g.x0, g.cell, g.nx),
				cx1 = zone_cell(hi_x, g.x0, g.cell, g.nx);
	const int64_t cy0 = zone_cell(lo_y, g.y0, g.cell, g.ny),
				cy1 = zone_cell(hi_y, g.y0, g.cell, g.ny);

	for (int64_t cy = cy0; cy <= cy1; cy++)
		for (int64_t cx = cx0; cx <= cx1; cx++)
		{
			const uint64_t c = (uint64_t) (cy * g.nx + cx);

			for (uint32_t k = g.cell_start[c]; k < g.cell_start[c + 1]; k++)
			{
				const uint32_t z = g.zones[k];
				const double *b = zv.box + 4 * (size_t) z;

				if (!zone_box_meets(zv, z, x0, y0, x1, y1))
					continue;

				const double corner_x = lo_x > b[0] ? lo_x : b[0];
				const double corner_y = lo_y > b[1] ? lo_y : b[1];

				if (zone_cell(corner_x, g.x0, g.cell, g.nx) != cx || zone_cell(corner_y, g.y0, g.cell, g.ny) != cy)
					continue;
				visit(z);
			}
		}
}

/* The zones' grid on the host (the same arrays go to the device). */
struct ZoneIndex
{
	ZoneGrid	grid;
	HostVector<double> box;
	HostVector<uint32_t> cell_start;
	HostVector<uint32_t> zones;
};

/* The boxes and the grid of the zones, checked (finite coordinates, closed rings of at least 4 points). */
void		zone_index_build(const GeoaccZones &z, ZoneIndex &ix);

/* The view of the zones with their boxes. */
ZoneView	zone_view(const GeoaccZones &z, const ZoneIndex &ix);

/* ---------------------------------------------------------------- the GPU */

/* Encounter fragments of each batch of segment-join rows, formed on the device (events.cu). */
std::unique_ptr<DeviceRowSink> make_encounter_sink(double max_gap, HostVector<EventFragment> &out);

/* Stops on the GPU: per trajectory, (traj, first, last) triples in trajectory order (events.cu). */
void		stops_gpu(const GeoaccTrajectories &t, double max_diameter, double min_duration,
					  OutputVector<GeoaccStop> &out);

/* Zone-visit islands on the GPU (events.cu). */
void		zone_visits_gpu(const GeoaccTrajectories &t, const GeoaccZones &z, const ZoneIndex &ix,
							HostVector<EventFragment> &out);

}								/* namespace geoacc */

#endif							/* GEOACC_EVENTS_H */
