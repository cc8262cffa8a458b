/*
 * point_grid.cpp
 *
 * Building a grid index of points (GeoaccPointGrid): the cells sized from
 * the points' extent, every point entered in the cells its box meets.
 */
#include "point_grid.h"

#include <algorithm>

namespace geoacc
{

static void
check_index(const double *xy, const uint8_t *flags, uint32_t n, const GeoaccPointGrid *index)
{
	if (index == nullptr || (n > 0 && (xy == nullptr || flags == nullptr)))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "point grid: no points or no index");
	if (n > 0 && (flags[0] & GEOACC_DENSITY_JOIN))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "point grid: the first point joins no point");
}

static void
shape(const double *xy, const uint8_t *flags, uint32_t n, uint32_t points_per_cell, uint32_t max_side,
	  GeoaccPointGrid &g)
{
	double		lo[2] = {INFINITY, INFINITY};
	double		hi[2] = {-INFINITY, -INFINITY};

	for (uint32_t i = 0; i < n; i++)
		for (int d = 0; d < 2; d++)
		{
			lo[d] = std::min(lo[d], xy[2 * (size_t) i + d]);
			hi[d] = std::max(hi[d], xy[2 * (size_t) i + d]);
		}

	uint32_t	side = (uint32_t) std::min((double) std::max(max_side, 1u),
										   std::max(1.0, ceil(sqrt((double) n / std::max(points_per_cell, 1u)))));

	g.x0 = n ? lo[0] : 0;
	g.y0 = n ? lo[1] : 0;
	g.cell = n ? std::max(hi[0] - lo[0], hi[1] - lo[1]) / side : 1;
	if (!(g.cell > 0) || !std::isfinite(g.cell))
		g.cell = 1;
	g.gx = n ? point_grid_cell(hi[0], g.x0, g.cell, side) + 1 : 1;
	g.gy = n ? point_grid_cell(hi[1], g.y0, g.cell, side) + 1 : 1;
	g.nentries = 0;
	g.nlong = 0;
	for (uint32_t i = 0; i < n; i++)
	{
		CellRange	r = point_grid_cells(g, point_box(xy, flags, i));

		if (point_grid_entered(r))
			g.nentries += (uint64_t) (r.c1[0] - r.c0[0] + 1) * (r.c1[1] - r.c0[1] + 1);
		else
			g.nlong++;
		if ((i & 0xfffff) == 0)
			check_interrupt();
	}
}

/*
 * Each cell's entries counted into cell_start[c + 1] and summed up to the
 * starts; then cell_start[c] serves as cell c's cursor while the entries
 * are placed, which leaves it at cell c + 1's start: shifted back after.
 */
static void
fill(const double *xy, const uint8_t *flags, uint32_t n, GeoaccPointGrid &g)
{
	uint64_t	ncells = (uint64_t) g.gx * g.gy;
	uint32_t	nlong = 0;

	if (g.cell_start == nullptr || (g.nentries > 0 && g.entries == nullptr) || (g.nlong > 0 && g.longs == nullptr))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "point grid: the index has no arrays");
	std::fill(g.cell_start, g.cell_start + ncells + 1, 0);
	for (uint32_t i = 0; i < n; i++)
	{
		CellRange	r = point_grid_cells(g, point_box(xy, flags, i));

		if (!point_grid_entered(r))
			nlong++;
		else
			for (uint32_t cy = r.c0[1]; cy <= r.c1[1]; cy++)
				for (uint32_t cx = r.c0[0]; cx <= r.c1[0]; cx++)
					g.cell_start[(uint64_t) cy * g.gx + cx + 1]++;
	}
	for (uint64_t c = 0; c < ncells; c++)
		g.cell_start[c + 1] += g.cell_start[c];
	if (g.cell_start[ncells] != g.nentries || nlong != g.nlong)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "point grid: the points are not those the grid was shaped for");
	nlong = 0;
	for (uint32_t i = 0; i < n; i++)
	{
		CellRange	r = point_grid_cells(g, point_box(xy, flags, i));

		if (!point_grid_entered(r))
			g.longs[nlong++] = i;
		else
			for (uint32_t cy = r.c0[1]; cy <= r.c1[1]; cy++)
				for (uint32_t cx = r.c0[0]; cx <= r.c1[0]; cx++)
					g.entries[g.cell_start[(uint64_t) cy * g.gx + cx]++] = i;
		if ((i & 0xfffff) == 0)
			check_interrupt();
	}
	for (uint64_t c = ncells; c > 0; c--)
		g.cell_start[c] = g.cell_start[c - 1];
	g.cell_start[0] = 0;
}

}								/* namespace geoacc */

using namespace geoacc;

extern "C" GeoaccStatus
geoacc_point_grid_shape(const double *xy, const uint8_t *flags, uint32_t n, uint32_t points_per_cell,
						uint32_t max_side, GeoaccPointGrid *index)
{
	return guarded([&] {
		check_index(xy, flags, n, index);
		shape(xy, flags, n, points_per_cell, max_side, *index);
	});
}

extern "C" GeoaccStatus
geoacc_point_grid_fill(const double *xy, const uint8_t *flags, uint32_t n, GeoaccPointGrid *index)
{
	return guarded([&] {
		check_index(xy, flags, n, index);
		fill(xy, flags, n, *index);
	});
}
