/*
 * density_raster.h
 *
 * Density rasters of trajectories (Huang, Li, Zhang, Liu: GPU-accelerated
 * compression and visualization of vessel trajectories): the arithmetic the
 * CUDA kernels and the CPU twin share, so that both place every sample in
 * the same cell, give it the same amount and sum every convolution in the
 * same order.
 *
 * Positions are taken to cell coordinates u = (x - xmin) / sx (columns,
 * from the west edge) and v = (ymax - y) / sy (rows, from the north edge),
 * sx and sy the cell's width and height; a position falls in the cell
 * (floor(u), floor(v)), counted when that cell is in the raster or in its
 * margin.  Cells are half-open as in PostGIS (ST_WorldToRasterCoord): a
 * point on a border between two cells belongs to the cell east or south of
 * it.  A segment whose ends' cells are n > 1 apart (Chebyshev distance) has
 * the n - 1 samples at t = k / n, k = 1 .. n - 1, whose cell is
 * floor(u0) + floor((u0 - floor(u0)) + t (u1 - u0)) (and the same in v):
 * the same real position as u0 + t (u1 - u0), computed from the fraction of
 * u0 so that grids whose cell coordinates differ by whole cells (the tiles
 * of one grid) place every sample in the same cell.
 */
#ifndef GEOACC_DENSITY_RASTER_H
#define GEOACC_DENSITY_RASTER_H

#include "core.h"
#include "point_grid.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace geoacc
{

/* Segments longer than this many cells are not interpolated (k / n stays exact). */
constexpr double DENSITY_MAX_STEPS = 4503599627370496.0;	/* 2^52 */

/* One unit of a weighted sum. */
constexpr double DENSITY_FIXED_ONE = 4294967296.0;	/* 2^GEOACC_DENSITY_FIXED_BITS */

/* The extent in the form the projection uses. */
struct DensityGeometry
{
	double		xmin;
	double		ymax;
	double		sx;				/* cell width */
	double		sy;				/* cell height */
	double		margin;
	double		u_end;			/* width + margin: counted cells have -margin <= column < u_end */
	double		v_end;			/* height + margin */
	uint32_t	columns;		/* of the cells filled: width + 2 margin */
	uint32_t	rows;			/* height + 2 margin */
	bool		interpolate;
};

inline DensityGeometry
density_geometry(const GeoaccDensityGrid &grid, bool interpolate)
{
	return DensityGeometry{grid.xmin, grid.ymax, (grid.xmax - grid.xmin) / grid.width,
						   (grid.ymax - grid.ymin) / grid.height, (double) grid.margin,
						   (double) grid.width + grid.margin, (double) grid.height + grid.margin,
						   grid.width + 2 * grid.margin, grid.height + 2 * grid.margin, interpolate};
}

/* The tiles of the cells (GeoaccDensityTiles). */
constexpr uint32_t DENSITY_TILE = GEOACC_DENSITY_TILE;
constexpr size_t DENSITY_TILE_CELLS = (size_t) DENSITY_TILE * DENSITY_TILE;

/* Tiles of the GPU projection gathered and brought back at a time. */
constexpr uint32_t DENSITY_PACK_TILES = 256;

inline uint32_t
density_tiles_across(uint64_t cells)
{
	return (uint32_t) ((cells + DENSITY_TILE - 1) / DENSITY_TILE);
}

/* Tile k of t, made (zeroed) when missing. */
template <class T>
inline T *
density_tile(GeoaccDensityTiles &t, size_t k)
{
	if (t.tiles[k] == nullptr)
	{
		t.tiles[k] = t.allocate(t.context, DENSITY_TILE_CELLS * sizeof(T));
		if (t.tiles[k] == nullptr)
			fail(GEOACC_ERR_HOST_MEMORY, "out of host memory for a tile of density cells");
	}
	return static_cast<T *>(t.tiles[k]);
}

/* Device bytes of the projection per grid row of cells (of cell_size bytes each) and per point. */
inline uint64_t
density_row_bytes(const DensityGeometry &g, size_t cell_size)
{
	return (uint64_t) g.columns * cell_size;
}

inline uint64_t
density_point_bytes(bool with_values)
{
	return 2 * sizeof(double) + sizeof(uint8_t) + (with_values ? sizeof(double) : 0);
}

/*
 * Device bytes of the convolution of a band of `rows` raster rows: the grid
 * rows it reads (the band and size - 1 rows of halo) and its output.
 */
inline uint64_t
density_convolve_bytes(uint32_t width, uint64_t rows, int size, size_t cell_size)
{
	uint64_t	grid_columns = (uint64_t) width + size - 1;

	return (rows + size - 1) * grid_columns * cell_size + rows * width * sizeof(double);
}

/*
 * Device bytes of the projection besides its band of cells and its points:
 * a flag per tile, and `pack` tiles gathered to be brought back at a time.
 */
inline uint64_t
density_pack_bytes(const DensityGeometry &g, size_t cell_size, uint64_t pack)
{
	uint64_t	tiles = (uint64_t) density_tiles_across(g.columns) * density_tiles_across(g.rows);

	return tiles + std::min(tiles, pack) * (sizeof(uint32_t) + DENSITY_TILE_CELLS * cell_size);
}

/* The least a projection or a convolution is given on the GPU: bands of this many rows... */
constexpr uint64_t DENSITY_LEAST_ROWS = 64;

/* ... and batches of this many points. */
constexpr uint64_t DENSITY_LEAST_POINTS = uint64_t(1) << 20;

GEOACC_HD double
density_u(const DensityGeometry &g, double x)
{
	return (x - g.xmin) / g.sx;
}

GEOACC_HD double
density_v(const DensityGeometry &g, double y)
{
	return (g.ymax - y) / g.sy;
}

/* Whether the cell (column cu, row cv), both whole numbers, is counted (NaN is not). */
GEOACC_HD bool
density_cell_counted(const DensityGeometry &g, double cu, double cv)
{
	return cu >= -g.margin && cu < g.u_end && cv >= -g.margin && cv < g.v_end;
}

/* Hand a counted cell to emit(row, column, amount), in the indices of the filled cells. */
template <class T, class Emit>
GEOACC_HD void
density_emit(const DensityGeometry &g, double cu, double cv, T amount, const Emit &emit)
{
	emit((uint32_t) (cv + g.margin), (uint32_t) (cu + g.margin), amount);
}

/* The cell of a position, when counted. */
template <class T, class Emit>
GEOACC_HD void
density_position(const DensityGeometry &g, double u, double v, T amount, const Emit &emit)
{
	double		cu = floor(u);
	double		cv = floor(v);

	if (density_cell_counted(g, cu, cv))
		density_emit(g, cu, cv, amount, emit);
}

/* n: the Chebyshev distance between the cells of two positions. */
GEOACC_HD double
density_steps(double u0, double v0, double u1, double v1)
{
	return fmax(fabs(floor(u1) - floor(u0)), fabs(floor(v1) - floor(v0)));
}

GEOACC_HD bool
density_interpolated(const DensityGeometry &g, double n)
{
	return g.interpolate && n >= 2.0 && n <= DENSITY_MAX_STEPS;
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
 * The paper's linear interpolation between consecutive positions (u0, v0)
 * and (u1, v1) whose cells are n apart (density_interpolated): the samples
 * at t = k / n, k = 1 .. n - 1, which land in consecutive cells (an
 * 8-connected line); those in counted cells are emitted.  Clipping the
 * parameter range first, to the counted cells and one more all round, keeps
 * the work proportional to the cells inside; every candidate k is still
 * tested, and the extra cell and the two extra steps exceed the rounding of
 * the clip, so clipping cannot change which samples count.
 */
template <class T, class Emit>
GEOACC_HD void
density_samples(const DensityGeometry &g, double u0, double v0, double u1, double v1, double n, T amount,
				const Emit &emit)
{
	double		fu0 = floor(u0);
	double		fv0 = floor(v0);
	double		ru0 = u0 - fu0;	/* exact */
	double		rv0 = v0 - fv0;
	double		du = u1 - u0;
	double		dv = v1 - v0;
	double		t0 = 0.0;
	double		t1 = 1.0;

	if (!density_clip_axis(u0 + (g.margin + 1.0), du, g.u_end + g.margin + 2.0, t0, t1) ||
		!density_clip_axis(v0 + (g.margin + 1.0), dv, g.v_end + g.margin + 2.0, t0, t1))
		return;

	double		k_first = fmax(1.0, floor(t0 * n) - 2.0);
	double		k_last = fmin(n - 1.0, ceil(t1 * n) + 2.0);

	for (double k = k_first; k <= k_last; k += 1.0)
	{
		double		t = k / n;
		double		cu = fu0 + floor(ru0 + t * du);
		double		cv = fv0 + floor(rv0 + t * dv);

		if (density_cell_counted(g, cu, cv))
			density_emit(g, cu, cv, amount, emit);
	}
}

/* A fixed-point amount: floor(value * 2^32 / shares + 0.5), value >= 0 and below 2^27. */
GEOACC_HD int64_t
density_fixed(double value, double shares)
{
	return (int64_t) floor(value * DENSITY_FIXED_ONE / shares + 0.5);
}

/* The value of a cell for the convolution. */
GEOACC_HD double
density_cell_value(uint32_t count)
{
	return (double) count;
}

GEOACC_HD double
density_cell_value(int64_t sum)
{
	return (double) sum * (1.0 / DENSITY_FIXED_ONE);
}

/*
 * What point i adds: in SAMPLES mode the point itself when flagged COUNT,
 * and the samples of its incoming segment when flagged JOIN, each with the
 * point's amount (1 for counts, its value in fixed point for sums); in TIME
 * mode its incoming segment's value, half a share at each end and a share
 * at each sample between.
 */
template <class T, class Emit>
GEOACC_HD void
density_point(const DensityGeometry &g, const GeoaccDensityPoints &p, size_t i, const Emit &emit)
{
	double		u = density_u(g, p.xy[2 * i]);
	double		v = density_v(g, p.xy[2 * i + 1]);

	if (p.mode == GEOACC_DENSITY_TIME)
	{
		if (!(p.flags[i] & GEOACC_DENSITY_JOIN))
			return;

		double		u0 = density_u(g, p.xy[2 * i - 2]);
		double		v0 = density_v(g, p.xy[2 * i - 1]);
		double		n = density_steps(u0, v0, u, v);
		bool		spread = density_interpolated(g, n);
		T			half = (T) density_fixed(p.values[i], spread ? 2.0 * n : 2.0);

		density_position(g, u0, v0, half, emit);
		density_position(g, u, v, half, emit);
		if (spread)
			density_samples(g, u0, v0, u, v, n, (T) (2 * half), emit);
		return;
	}

	T			amount = p.values == nullptr ? (T) 1 : (T) density_fixed(p.values[i], 1.0);

	if (p.flags[i] & GEOACC_DENSITY_COUNT)
		density_position(g, u, v, amount, emit);
	if (p.flags[i] & GEOACC_DENSITY_JOIN)
	{
		double		u0 = density_u(g, p.xy[2 * i - 2]);
		double		v0 = density_v(g, p.xy[2 * i - 1]);
		double		n = density_steps(u0, v0, u, v);

		if (density_interpolated(g, n))
			density_samples(g, u0, v0, u, v, n, amount, emit);
	}
}

/*
 * One term of a convolution sum.  Each output cell adds its terms in the
 * order of the kernel's rows and columns on every device.
 */
GEOACC_HD double
density_term(double sum, double weight, double value)
{
	return sum + weight * value;
}

/* Fill weights[size * size] (host only: both devices use this table). */
void		density_kernel_weights(GeoaccDensityKernel kernel, int size, double *weights);

/* A search of an index for what may add to a grid: its extent widened by the margin and a cell more. */
struct IndexSearch
{
	PointBox	box;
	CellRange	cells;
	bool		meets;			/* the box meets the index's grid (cells beyond it are clamped) */
};

inline IndexSearch
index_search(const GeoaccDensityGrid &grid, const GeoaccPointGrid &index)
{
	double		sx = (grid.xmax - grid.xmin) / grid.width;
	double		sy = (grid.ymax - grid.ymin) / grid.height;
	PointBox	b{{grid.xmin - sx * (grid.margin + 1), grid.ymin - sy * (grid.margin + 1)},
				  {grid.xmax + sx * (grid.margin + 1), grid.ymax + sy * (grid.margin + 1)}};

	return IndexSearch{b, point_grid_cells(index, b),
					   b.hi[0] >= index.x0 && b.hi[1] >= index.y0 &&
					   b.lo[0] <= index.x0 + index.cell * index.gx && b.lo[1] <= index.y0 + index.cell * index.gy};
}

/* The device copies of resident points (density_raster.cu). */
struct ResidentGpu;

/* GPU halves of the C ABI entry points (density_raster.cu). */
template <class T>
void		density_project_gpu(const GeoaccDensityGrid &grid, const GeoaccDensityPoints &points,
								GeoaccDensityTiles &cells);
ResidentGpu *resident_gpu_create(const GeoaccDensityResident &resident);
void		resident_gpu_free(ResidentGpu *gpu);
template <class T>
void		density_project_resident_gpu(const GeoaccDensityGrid &grid, const GeoaccDensityResident &resident,
										 const GeoaccDensityPoints &points, int values, GeoaccDensityTiles &cells);
template <class T>
void		density_convolve_gpu(uint32_t width, uint32_t height, const T *cells, const double *weights,
								 int size, double *out);

}								/* namespace geoacc */

/*
 * Resident points (geoacc_density_resident_create): the caller's arrays,
 * and on the GPU their device copies.
 */
struct GeoaccDensityResident
{
	GeoaccDevice device;
	const double *xy;
	const uint8_t *flags;
	uint32_t	n;
	int			nvalues;
	const double *values[GEOACC_DENSITY_RESIDENT_VALUES];
	GeoaccPointGrid index;
	geoacc::ResidentGpu *gpu;	/* NULL on the CPU */
	uint64_t	device_bytes;
};

#endif							/* GEOACC_DENSITY_RASTER_H */
