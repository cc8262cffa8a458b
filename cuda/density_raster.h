/*
 * density_raster.h
 *
 * Density rasters of trajectories (Huang, Li, Zhang, Liu: GPU-accelerated
 * compression and visualization of vessel trajectories): the arithmetic the
 * CUDA kernels and the CPU twin share, so that both place every sample in
 * the same cell and sum every convolution in the same order.
 *
 * Positions are taken to cell coordinates u (columns, from the west edge)
 * and v (rows, from the north edge); a point lies in the extent when
 * 0 <= u <= width and 0 <= v <= height, and falls in the cell
 * (floor(u), floor(v)), the last column and row taking the east and south
 * borders.  A segment between two points whose cells are n > 1 cells apart
 * (Chebyshev distance) gets the n - 1 samples at t = k / n, k = 1 .. n - 1,
 * of which those in the extent count.
 */
#ifndef GEOACC_DENSITY_RASTER_H
#define GEOACC_DENSITY_RASTER_H

#include "core.h"

#include <cmath>
#include <cstdint>

namespace geoacc
{

/* Segments longer than this many cells are not interpolated (k / n stays exact). */
constexpr double density_max_steps = 4503599627370496.0;	/* 2^52 */

/* The extent in the form the projection uses. */
struct DensityGeometry
{
	double		xmin;
	double		ymax;
	double		xspan;
	double		yspan;
	double		width;
	double		height;
	uint32_t	columns;
	uint32_t	rows;
};

inline DensityGeometry
density_geometry(const GeoaccDensityGrid &grid)
{
	return DensityGeometry{grid.xmin, grid.ymax, grid.xmax - grid.xmin, grid.ymax - grid.ymin,
						   (double) grid.width, (double) grid.height, grid.width, grid.height};
}

GEOACC_HD double
density_u(const DensityGeometry &g, double x)
{
	return (x - g.xmin) / g.xspan * g.width;
}

GEOACC_HD double
density_v(const DensityGeometry &g, double y)
{
	return (g.ymax - y) / g.yspan * g.height;
}

GEOACC_HD bool
density_inside(const DensityGeometry &g, double u, double v)
{
	return u >= 0.0 && u <= g.width && v >= 0.0 && v <= g.height;
}

/* Hand the cell of an inside position to emit(row, column). */
template <class Emit>
GEOACC_HD void
density_emit(const DensityGeometry &g, double u, double v, const Emit &emit)
{
	uint32_t	column = (uint32_t) floor(u);
	uint32_t	row = (uint32_t) floor(v);

	emit(row < g.rows ? row : g.rows - 1, column < g.columns ? column : g.columns - 1);
}

/*
 * Narrow [t0, t1] to the parameters where p + t * d lies in [0, limit]
 * (one axis of Liang-Barsky clipping); false when nothing is left.
 */
GEOACC_HD bool
density_clip_axis(double p, double d, double limit, double &t0, double &t1)
{
	if (d == 0.0)
		return p >= 0.0 && p <= limit;

	double		ta = (0.0 - p) / d;
	double		tb = (limit - p) / d;

	t0 = fmax(t0, fmin(ta, tb));
	t1 = fmin(t1, fmax(ta, tb));
	return t0 <= t1;
}

/*
 * The paper's linear interpolation between consecutive points (u0, v0) and
 * (u1, v1): n = the Chebyshev distance of their cells; when n > 1 the
 * samples at t = k / n, k = 1 .. n - 1, which land in consecutive cells (an
 * 8-connected line).  Only samples in the extent are emitted; clipping the
 * parameter range first keeps the work proportional to the cells inside,
 * and every candidate k is still tested, so clipping cannot change which
 * samples count.
 */
template <class Emit>
GEOACC_HD void
density_segment(const DensityGeometry &g, double u0, double v0, double u1, double v1, const Emit &emit)
{
	double		du = u1 - u0;
	double		dv = v1 - v0;
	double		n = fmax(fabs(floor(u1) - floor(u0)), fabs(floor(v1) - floor(v0)));
	double		t0 = 0.0;
	double		t1 = 1.0;

	if (!(n >= 2.0 && n <= density_max_steps))
		return;
	if (!density_clip_axis(u0, du, g.width, t0, t1) || !density_clip_axis(v0, dv, g.height, t0, t1))
		return;

	/* a margin of two steps covers the rounding of t0 and t1 */
	double		k_first = fmax(1.0, floor(t0 * n) - 2.0);
	double		k_last = fmin(n - 1.0, ceil(t1 * n) + 2.0);

	for (double k = k_first; k <= k_last; k += 1.0)
	{
		double		t = k / n;
		double		u = u0 + t * du;
		double		v = v0 + t * dv;

		if (density_inside(g, u, v))
			density_emit(g, u, v, emit);
	}
}

/*
 * The samples point i adds: itself when flagged COUNT and inside, and the
 * segment from point i - 1 when flagged JOIN.
 */
template <class Emit>
GEOACC_HD void
density_point(const DensityGeometry &g, const double *xy, const uint8_t *flags, size_t i, const Emit &emit)
{
	double		u = density_u(g, xy[2 * i]);
	double		v = density_v(g, xy[2 * i + 1]);

	if ((flags[i] & GEOACC_DENSITY_COUNT) && density_inside(g, u, v))
		density_emit(g, u, v, emit);
	if (flags[i] & GEOACC_DENSITY_JOIN)
		density_segment(g, density_u(g, xy[2 * i - 2]), density_v(g, xy[2 * i - 1]), u, v, emit);
}

/*
 * One term of a convolution sum.  Each output cell adds its terms in the
 * order of the kernel's rows and columns on every device.
 */
GEOACC_HD double
density_term(double sum, double weight, double count)
{
	return sum + weight * count;
}

/* Fill weights[size * size] (host only: both devices use this table). */
void		density_kernel_weights(GeoaccDensityKernel kernel, int size, double *weights);

/* GPU halves of the C ABI entry points (density_raster.cu). */
void		density_project_gpu(const GeoaccDensityGrid &grid, const double *xy, const uint8_t *flags,
								uint32_t n, uint32_t *counts);
void		density_convolve_gpu(uint32_t width, uint32_t height, const uint32_t *counts,
								 const double *weights, int size, double *out);

}								/* namespace geoacc */

#endif							/* GEOACC_DENSITY_RASTER_H */
