/*
 * point_grid.h
 *
 * The arithmetic of a grid index of points (GeoaccPointGrid), shared by the
 * code that builds it and the searches on either device, so that a point
 * is looked for in the cells it was entered in.
 */
#ifndef GEOACC_POINT_GRID_H
#define GEOACC_POINT_GRID_H

#include "core.h"

#include <cmath>
#include <cstdint>

namespace geoacc
{

/* The cell of a coordinate along one axis, clamped to the grid. */
GEOACC_HD uint32_t
point_grid_cell(double v, double origin, double cell, uint32_t cells)
{
	double		c = floor((v - origin) / cell);

	return c < 0 ? 0 : c >= cells ? cells - 1 : (uint32_t) c;
}

/* An axis-aligned box, and the cells it meets. */
struct PointBox
{
	double		lo[2];
	double		hi[2];
};

struct CellRange
{
	uint32_t	c0[2];
	uint32_t	c1[2];
};

/* Point i's box: its position, and point i - 1's when it joins that one. */
GEOACC_HD PointBox
point_box(const double *xy, const uint8_t *flags, size_t i)
{
	PointBox	b{{xy[2 * i], xy[2 * i + 1]}, {xy[2 * i], xy[2 * i + 1]}};

	if (flags[i] & GEOACC_DENSITY_JOIN)
		for (int d = 0; d < 2; d++)
		{
			b.lo[d] = fmin(b.lo[d], xy[2 * i - 2 + d]);
			b.hi[d] = fmax(b.hi[d], xy[2 * i - 2 + d]);
		}
	return b;
}

GEOACC_HD CellRange
point_grid_cells(const GeoaccPointGrid &g, const PointBox &b)
{
	return CellRange{{point_grid_cell(b.lo[0], g.x0, g.cell, g.gx), point_grid_cell(b.lo[1], g.y0, g.cell, g.gy)},
					 {point_grid_cell(b.hi[0], g.x0, g.cell, g.gx), point_grid_cell(b.hi[1], g.y0, g.cell, g.gy)}};
}

/* Whether a point's cells are few enough for it to be entered in each. */
GEOACC_HD bool
point_grid_entered(const CellRange &r)
{
	return (uint64_t) (r.c1[0] - r.c0[0] + 1) * (r.c1[1] - r.c0[1] + 1) <= GEOACC_POINT_GRID_SPREAD;
}

GEOACC_HD bool
boxes_meet(const PointBox &a, const PointBox &b)
{
	return !(a.hi[0] < b.lo[0] || a.lo[0] > b.hi[0] || a.hi[1] < b.lo[1] || a.lo[1] > b.hi[1]);
}

/*
 * Whether the entry of a point in cell (cx, cy), met by a search of the
 * cells `search`, is the one to take: the first cell of the point's that
 * the search covers, so that a point entered in several is taken once.
 */
GEOACC_HD bool
point_grid_first_entry(const GeoaccPointGrid &g, const PointBox &b, const CellRange &search, uint32_t cx, uint32_t cy)
{
	CellRange	r = point_grid_cells(g, b);

	return cx == (r.c0[0] > search.c0[0] ? r.c0[0] : search.c0[0])
		&& cy == (r.c0[1] > search.c0[1] ? r.c0[1] : search.c0[1]);
}

}								/* namespace geoacc */

#endif							/* GEOACC_POINT_GRID_H */
