/*
 * density_raster.cpp
 *
 * CPU twin of the density raster (projection of trajectory points into
 * integer counts or fixed-point sums, then convolution with a normalized
 * kernel), the kernel tables both devices use, and the C ABI entry points
 * that pick a device.
 */
#include "density_raster.h"
#include "point_grid.h"

#include <algorithm>
#include <vector>

namespace geoacc
{

namespace
{

/* Poll for interrupts after this many points, and between bands of the convolution of about this many terms. */
constexpr uint32_t POINTS_BETWEEN_POLLS = 1u << 16;
constexpr uint64_t TERMS_BETWEEN_POLLS = 1ull << 24;

/* Cells of the grid with its margin, in tiles made on first write. */
template <class T>
struct TiledCells
{
	GeoaccDensityTiles *tiles;

	void operator()(uint32_t row, uint32_t column, T amount) const
	{
		T		   *tile = density_tile<T>(*tiles, (size_t) (row / DENSITY_TILE) * tiles->tile_columns
										   + column / DENSITY_TILE);

		tile[(row % DENSITY_TILE) * DENSITY_TILE + column % DENSITY_TILE] += amount;
	}
};

template <class T>
void
density_project_cpu(const GeoaccDensityGrid &grid, const GeoaccDensityPoints &points, GeoaccDensityTiles &cells)
{
	DensityGeometry g = density_geometry(grid, points.interpolate);
	TiledCells<T> add{&cells};

	for (uint32_t i = 0; i < points.n; i++)
	{
		if (i % POINTS_BETWEEN_POLLS == 0)
			check_interrupt();
		density_point<T>(g, points, i, add);
	}
}

/* Visit each point of the index whose box meets the search's, once (the longs last). */
template <class Visit>
void
for_each_indexed(const GeoaccDensityPoints &p, const GeoaccPointGrid &index, const IndexSearch &s, const Visit &visit)
{
	for (uint32_t cy = s.cells.c0[1]; s.meets && cy <= s.cells.c1[1]; cy++)
	{
		for (uint32_t cx = s.cells.c0[0]; cx <= s.cells.c1[0]; cx++)
		{
			uint64_t	c = (uint64_t) cy * index.gx + cx;

			for (uint64_t e = index.cell_start[c]; e < index.cell_start[c + 1]; e++)
			{
				uint32_t	i = index.entries[e];
				PointBox	b = point_box(p.xy, p.flags, i);

				if (boxes_meet(b, s.box) && point_grid_first_entry(index, b, s.cells, cx, cy))
					visit(i);
			}
		}
		check_interrupt();
	}
	for (uint32_t k = 0; k < index.nlong; k++)
		if (boxes_meet(point_box(p.xy, p.flags, index.longs[k]), s.box))
			visit(index.longs[k]);
}

void
check_value(const GeoaccDensityPoints &p, uint32_t i)
{
	/* below 2^27, so that an amount stays below 2^59 and eight per point per cell cannot overflow */
	if (p.values != nullptr && !(p.values[i] >= 0.0 && p.values[i] < 134217728.0))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "density value %g of point %u is not in [0, 2^27)", p.values[i], i);
}

template <class T>
void
density_project_indexed_cpu(const GeoaccDensityGrid &grid, const GeoaccDensityPoints &points,
							const GeoaccPointGrid &index, GeoaccDensityTiles &cells)
{
	DensityGeometry g = density_geometry(grid, points.interpolate);
	TiledCells<T> add{&cells};

	for_each_indexed(points, index, index_search(grid, index), [&](uint32_t i) {
		check_value(points, i);
		density_point<T>(g, points, i, add);
	});
}

/*
 * On the GPU the points found are gathered on the host, each joining one
 * after a copy of its predecessor that only anchors the segment, and
 * projected as a batch.
 */
template <class T>
void
density_project_indexed_gpu(const GeoaccDensityGrid &grid, const GeoaccDensityPoints &points,
							const GeoaccPointGrid &index, GeoaccDensityTiles &cells)
{
	std::vector<double> xy;
	std::vector<uint8_t> flags;
	std::vector<double> values;
	int64_t		last = -1;

	for_each_indexed(points, index, index_search(grid, index), [&](uint32_t i) {
		check_value(points, i);
		if ((points.flags[i] & GEOACC_DENSITY_JOIN) && last != (int64_t) i - 1)
		{
			xy.insert(xy.end(), {points.xy[2 * (size_t) i - 2], points.xy[2 * (size_t) i - 1]});
			flags.push_back(0);
			if (points.values != nullptr)
				values.push_back(0.0);
		}
		xy.insert(xy.end(), {points.xy[2 * (size_t) i], points.xy[2 * (size_t) i + 1]});
		flags.push_back(points.flags[i]);
		if (points.values != nullptr)
			values.push_back(points.values[i]);
		last = i;
	});
	if (flags.size() > UINT32_MAX)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "density projection of %zu points, more than a batch holds", flags.size());

	GeoaccDensityPoints batch{xy.data(), flags.data(), points.values != nullptr ? values.data() : nullptr,
							  (uint32_t) flags.size(), points.mode, points.interpolate};

	density_project_gpu<T>(grid, batch, cells);
}

/*
 * Scatter form of the convolution: every nonzero cell of the grid (margin
 * included), in row-major order, adds its weighted copy of the kernel to
 * the raster cells around it.  Each raster cell thus receives its terms in
 * row-major order of their source cells, which is the order of the
 * kernel's rows and columns in the GPU's gather form; zero cells only add
 * +0.0, so skipping them changes nothing.  Bands of raster rows go to the
 * threads (geoacc.cpu_threads): a band scans the source rows that reach it,
 * in the same order, and adds only to its own rows, so every cell gets the
 * same terms in the same order whatever the bands and threads.
 */
template <class T>
void
density_convolve_cpu(uint32_t width, uint32_t height, const T *cells, const double *weights, int size,
					 double *out)
{
	const int64_t pitch = (int64_t) width + size - 1;
	/*
	 * rows a band: about TERMS_BETWEEN_POLLS terms where every cell is
	 * nonzero, but at least a quarter of the kernel, so that the source rows
	 * a band scans are at most five times its own
	 */
	const uint64_t band = std::max<uint64_t>({1, (uint64_t) size / 4,
											  TERMS_BETWEEN_POLLS / ((uint64_t) width * size * size)});

	parallel_for(height, band, [&](uint64_t first, uint64_t end) {
		const int64_t r0 = (int64_t) first;
		const int64_t r1 = (int64_t) end;

		std::fill(out + r0 * width, out + r1 * width, 0.0);
		/* raster row r takes source rows r .. r + size - 1 */
		for (int64_t sr = r0; sr < r1 + size - 1; sr++)
		{
			/* kernel rows i with sr - i in [r0, r1) */
			const int64_t i_first = std::max<int64_t>(0, sr - (r1 - 1));
			const int64_t i_last = std::min<int64_t>(size - 1, sr - r0);

			for (int64_t sc = 0; sc < pitch; sc++)
			{
				T			cell = cells[sr * pitch + sc];

				if (cell == 0)
					continue;

				double		value = density_cell_value(cell);

				/* source (sr, sc) is kernel entry (i, j) of raster cell (sr - i, sc - j) */
				for (int64_t i = i_first; i <= i_last; i++)
				{
					int64_t		r = sr - i;

					for (int64_t j = 0; j < size; j++)
					{
						int64_t		c = sc - j;

						if (c >= 0 && c < width)
							out[r * width + c] = density_term(out[r * width + c], weights[i * size + j], value);
					}
				}
			}
		}
	});
}

void
check_grid(const GeoaccDensityGrid *grid)
{
	if (!(grid->xmin < grid->xmax && grid->ymin < grid->ymax) ||
		!std::isfinite(grid->xmax - grid->xmin) || !std::isfinite(grid->ymax - grid->ymin))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "density raster extent must be finite and have an area");
	if (grid->width == 0 || grid->height == 0)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "density raster must have at least one row and one column");
	if (!((grid->xmax - grid->xmin) / grid->width > 0.0 && (grid->ymax - grid->ymin) / grid->height > 0.0))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "density raster cells must have a size above zero");
	if (grid->margin > GEOACC_DENSITY_MAX_KERNEL_SIZE / 2)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "density raster margin must be at most %d cells, not %u",
			 GEOACC_DENSITY_MAX_KERNEL_SIZE / 2, grid->margin);
}

void
check_tiles(const GeoaccDensityGrid *grid, const GeoaccDensityTiles *tiles)
{
	if (tiles->tiles == nullptr || tiles->allocate == nullptr ||
		tiles->tile_columns != density_tiles_across(grid->width + 2 * grid->margin) ||
		tiles->tile_rows != density_tiles_across(grid->height + 2 * grid->margin))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "density tiles do not match the grid");
}

void
check_points(const GeoaccDensityPoints *points, bool with_values)
{
	if (points->n > 0 && (points->flags[0] & GEOACC_DENSITY_JOIN))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the first point of a batch cannot join a previous point");
	if (with_values && points->values == nullptr)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "weighted density projection needs values");
	if (!with_values && points->mode != GEOACC_DENSITY_SAMPLES)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the time mode needs values");
	/* below 2^27, so that an amount stays below 2^59 and eight per point per cell cannot overflow */
	for (uint32_t i = 0; with_values && i < points->n; i++)
		if (!(points->values[i] >= 0.0 && points->values[i] < 134217728.0))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "density value %g of point %u is not in [0, 2^27)",
				 points->values[i], i);
}

void
check_kernel(GeoaccDensityKernel kernel, int size)
{
	if ((int) kernel < 0 || (int) kernel >= GEOACC_DENSITY_KERNEL_COUNT)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "unknown density kernel %d", (int) kernel);
	if (size < 1 || size > GEOACC_DENSITY_MAX_KERNEL_SIZE || size % 2 == 0)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "kernel size must be odd and between 1 and %d, not %d",
			 GEOACC_DENSITY_MAX_KERNEL_SIZE, size);
}

template <class T>
void
convolve(GeoaccDevice device, uint32_t width, uint32_t height, const T *cells, GeoaccDensityKernel kernel,
		 int size, double *out)
{
	check_kernel(kernel, size);
	if (width == 0 || height == 0)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "density raster must have at least one row and one column");

	std::vector<double> weights((size_t) size * size);

	density_kernel_weights(kernel, size, weights.data());
	if (device == GEOACC_DEVICE_GPU)
		GEOACC_ON_GPU(density_convolve_gpu(width, height, cells, weights.data(), size, out));
	else
		density_convolve_cpu(width, height, cells, weights.data(), size, out);
}

}								/* namespace */

/*
 * Kernel weights, with h = (size - 1) / 2 and bandwidth b = h + 1 cells: a
 * cell at offset (i, j) from the centre has q = (i^2 + j^2) / b^2 and
 * u = sqrt(q).  Compact kernels are zero from u = 1 on (a disc of radius b),
 * the uniform one includes u = 1; the Gaussian has sigma = b / 3 and covers
 * the whole square.  The weights are divided by their sum.
 */
void
density_kernel_weights(GeoaccDensityKernel kernel, int size, double *weights)
{
	int			h = size / 2;
	double		b2 = (double) (h + 1) * (h + 1);
	double		sum = 0.0;

	for (int i = -h; i <= h; i++)
	{
		for (int j = -h; j <= h; j++)
		{
			double		q = (double) (i * i + j * j) / b2;
			double		u = std::sqrt(q);
			double		w = 0.0;

			switch (kernel)
			{
				case GEOACC_KERNEL_UNIFORM:
					w = q <= 1.0 ? 1.0 : 0.0;
					break;
				case GEOACC_KERNEL_TRIANGULAR:
					w = u < 1.0 ? 1.0 - u : 0.0;
					break;
				case GEOACC_KERNEL_EPANECHNIKOV:
					w = q < 1.0 ? 1.0 - q : 0.0;
					break;
				case GEOACC_KERNEL_QUARTIC:
					w = q < 1.0 ? (1.0 - q) * (1.0 - q) : 0.0;
					break;
				case GEOACC_KERNEL_TRIWEIGHT:
					w = q < 1.0 ? (1.0 - q) * (1.0 - q) * (1.0 - q) : 0.0;
					break;
				case GEOACC_KERNEL_TRICUBE:
					{
						double		c = 1.0 - u * u * u;

						w = u < 1.0 ? c * c * c : 0.0;
					}
					break;
				case GEOACC_KERNEL_GAUSSIAN:
					w = std::exp(-4.5 * q);
					break;
				case GEOACC_KERNEL_COSINE:
					w = u < 1.0 ? std::cos(M_PI / 2.0 * u) : 0.0;
					break;
			}
			weights[(i + h) * size + (j + h)] = w;
			sum += w;
		}
	}
	for (int i = 0; i < size * size; i++)
		weights[i] /= sum;
}

}								/* namespace geoacc */

using namespace geoacc;

extern "C" GeoaccStatus
geoacc_density_project(GeoaccDevice device, const GeoaccDensityGrid *grid, const GeoaccDensityPoints *points,
					   GeoaccDensityTiles *counts)
{
	return guarded([&] {
		check_grid(grid);
		check_tiles(grid, counts);
		check_points(points, false);
		if (device == GEOACC_DEVICE_GPU)
			GEOACC_ON_GPU(density_project_gpu<uint32_t>(*grid, *points, *counts));
		else
			density_project_cpu<uint32_t>(*grid, *points, *counts);
	});
}

extern "C" GeoaccStatus
geoacc_density_project_values(GeoaccDevice device, const GeoaccDensityGrid *grid,
							  const GeoaccDensityPoints *points, GeoaccDensityTiles *sums)
{
	return guarded([&] {
		check_grid(grid);
		check_tiles(grid, sums);
		check_points(points, true);
		if (device == GEOACC_DEVICE_GPU)
			GEOACC_ON_GPU(density_project_gpu<int64_t>(*grid, *points, *sums));
		else
			density_project_cpu<int64_t>(*grid, *points, *sums);
	});
}

static void
check_indexed(const GeoaccDensityPoints *points, const GeoaccPointGrid *index)
{
	if (index == nullptr || index->cell_start == nullptr || index->gx == 0 || index->gy == 0 ||
		(index->nentries > 0 && index->entries == nullptr) || (index->nlong > 0 && index->longs == nullptr))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "density projection: the point index has no arrays");
	if (points->n > 0 && (points->flags[0] & GEOACC_DENSITY_JOIN))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the first point of a batch cannot join a previous point");
	if (points->values == nullptr && points->mode != GEOACC_DENSITY_SAMPLES)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the time mode needs values");
}

extern "C" GeoaccStatus
geoacc_density_project_indexed(GeoaccDevice device, const GeoaccDensityGrid *grid,
							   const GeoaccDensityPoints *points, const GeoaccPointGrid *index,
							   GeoaccDensityTiles *cells)
{
	return guarded([&] {
		check_grid(grid);
		check_tiles(grid, cells);
		check_indexed(points, index);
		if (points->values == nullptr)
		{
			if (device == GEOACC_DEVICE_GPU)
				GEOACC_ON_GPU(density_project_indexed_gpu<uint32_t>(*grid, *points, *index, *cells));
			else
				density_project_indexed_cpu<uint32_t>(*grid, *points, *index, *cells);
		}
		else if (device == GEOACC_DEVICE_GPU)
			GEOACC_ON_GPU(density_project_indexed_gpu<int64_t>(*grid, *points, *index, *cells));
		else
			density_project_indexed_cpu<int64_t>(*grid, *points, *index, *cells);
	});
}

extern "C" uint64_t
geoacc_density_indexed_candidates(const GeoaccDensityGrid *grid, const GeoaccPointGrid *index)
{
	IndexSearch s = index_search(*grid, *index);
	uint64_t	found = index->nlong;

	for (uint32_t cy = s.cells.c0[1]; s.meets && cy <= s.cells.c1[1]; cy++)
		found += index->cell_start[(uint64_t) cy * index->gx + s.cells.c1[0] + 1]
			- index->cell_start[(uint64_t) cy * index->gx + s.cells.c0[0]];
	return found;
}

extern "C" GeoaccDeviceNeed
geoacc_density_project_indexed_need(const GeoaccDensityGrid *grid, const GeoaccPointGrid *index, int with_values)
{
	uint64_t	found = geoacc_density_indexed_candidates(grid, index);

	return geoacc_density_project_need(grid, (uint32_t) std::min<uint64_t>(2 * found, UINT32_MAX), with_values);
}

static void
check_resident_values(const double *const *values, int nvalues, uint32_t n)
{
	if (nvalues < 0 || nvalues > GEOACC_DENSITY_RESIDENT_VALUES || (nvalues > 0 && values == nullptr))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "resident points: %d arrays of values, at most %d", nvalues,
			 GEOACC_DENSITY_RESIDENT_VALUES);
	for (int k = 0; k < nvalues; k++)
	{
		GeoaccDensityPoints p{nullptr, nullptr, values[k], n, GEOACC_DENSITY_SAMPLES, false};

		if (values[k] == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "resident points: values array %d is missing", k);
		for (uint32_t i = 0; i < n; i++)
			check_value(p, i);
	}
}

extern "C" GeoaccStatus
geoacc_density_resident_create(GeoaccDevice device, const double *xy, const uint8_t *flags, uint32_t n,
							   const double *const *values, int nvalues, const GeoaccPointGrid *index,
							   GeoaccDensityResident **resident)
{
	return guarded([&] {
		GeoaccDensityPoints points{xy, flags, nullptr, n, GEOACC_DENSITY_SAMPLES, false};

		if (resident == nullptr || (n > 0 && (xy == nullptr || flags == nullptr)))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "resident points: no points or nowhere to put them");
		*resident = nullptr;
		check_indexed(&points, index);
		check_resident_values(values, nvalues, n);

		GeoaccDensityResident *r = new GeoaccDensityResident{device, xy, flags, n, nvalues, {}, *index, nullptr, 0};

		for (int k = 0; k < nvalues; k++)
			r->values[k] = values[k];
		if (device == GEOACC_DEVICE_GPU)
		{
			try
			{
				GEOACC_ON_GPU(r->gpu = resident_gpu_create(*r));
			}
			catch (...)
			{
				delete r;
				throw;
			}
			r->device_bytes = geoacc_density_resident_bytes(n, nvalues, index);
		}
		*resident = r;
	});
}

extern "C" void
geoacc_density_resident_free(GeoaccDensityResident *resident)
{
	if (resident == nullptr)
		return;
#ifdef GEOACC_WITH_CUDA
	resident_gpu_free(resident->gpu);
#endif
	delete resident;
}

extern "C" uint64_t
geoacc_density_resident_bytes(uint32_t n, int nvalues, const GeoaccPointGrid *index)
{
	return (uint64_t) n * (2 * sizeof(double) + sizeof(uint8_t) + nvalues * sizeof(double))
		+ ((uint64_t) index->gx * index->gy + 1) * sizeof(uint64_t)
		+ index->nentries * sizeof(uint32_t) + (uint64_t) index->nlong * sizeof(uint32_t);
}

extern "C" uint64_t
geoacc_density_resident_device_bytes(const GeoaccDensityResident *resident)
{
	return resident->device_bytes;
}

extern "C" GeoaccStatus
geoacc_density_project_resident(const GeoaccDensityGrid *grid, const GeoaccDensityResident *resident, int values,
								GeoaccDensityMode mode, bool interpolate, GeoaccDensityTiles *cells)
{
	return guarded([&] {
		if (resident == nullptr || values < -1 || values >= resident->nvalues)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "resident projection: no points, or no values array %d", values);

		GeoaccDensityPoints points{resident->xy, resident->flags, values >= 0 ? resident->values[values] : nullptr,
								   resident->n, mode, interpolate};

		check_grid(grid);
		check_tiles(grid, cells);
		check_indexed(&points, &resident->index);
		if (resident->device == GEOACC_DEVICE_GPU)
		{
			if (points.values == nullptr)
				GEOACC_ON_GPU(density_project_resident_gpu<uint32_t>(*grid, *resident, points, values, *cells));
			else
				GEOACC_ON_GPU(density_project_resident_gpu<int64_t>(*grid, *resident, points, values, *cells));
		}
		else if (points.values == nullptr)
			density_project_indexed_cpu<uint32_t>(*grid, points, resident->index, *cells);
		else
			density_project_indexed_cpu<int64_t>(*grid, points, resident->index, *cells);
	});
}

extern "C" GeoaccDeviceNeed
geoacc_density_project_resident_need(const GeoaccDensityGrid *grid, const GeoaccPointGrid *index, int with_values)
{
	IndexSearch s = index_search(*grid, *index);
	GeoaccDeviceNeed need = geoacc_density_project_need(grid, 0, with_values);
	/* where each row of the search's cells starts among the entries, and the candidates before it */
	uint64_t	search = (2 * (uint64_t) (s.cells.c1[1] - s.cells.c0[1] + 1) + 1) * sizeof(uint64_t);

	need.bytes += search;
	need.least += search;
	return need;
}

extern "C" GeoaccDeviceNeed
geoacc_density_project_need(const GeoaccDensityGrid *grid, uint32_t npoints, int with_values)
{
	DensityGeometry g = density_geometry(*grid, false);
	uint64_t	row = density_row_bytes(g, with_values ? sizeof(int64_t) : sizeof(uint32_t));
	uint64_t	point = density_point_bytes(with_values);
	size_t		cell_size = with_values ? sizeof(int64_t) : sizeof(uint32_t);
	GeoaccDeviceNeed need;

	need.bytes = row * g.rows + point * npoints + density_pack_bytes(g, cell_size, DENSITY_PACK_TILES);
	/* a band and a batch, the batch with its predecessor, and one tile brought back at a time */
	need.least = std::min(need.bytes, row * std::min<uint64_t>(g.rows, DENSITY_LEAST_ROWS)
						  + point * (std::min<uint64_t>(npoints, DENSITY_LEAST_POINTS) + 1)
						  + density_pack_bytes(g, cell_size, 1));
	return need;
}

extern "C" GeoaccDeviceNeed
geoacc_density_convolve_need(uint32_t width, uint32_t height, int size, int sums)
{
	size_t		cell_size = sums ? sizeof(int64_t) : sizeof(uint32_t);
	GeoaccDeviceNeed need;

	need.bytes = density_convolve_bytes(width, height, size, cell_size);
	need.least = density_convolve_bytes(width, std::min<uint64_t>(height, DENSITY_LEAST_ROWS), size, cell_size);
	return need;
}

extern "C" GeoaccStatus
geoacc_density_kernel(GeoaccDensityKernel kernel, int size, double *weights)
{
	return guarded([&] {
		check_kernel(kernel, size);
		density_kernel_weights(kernel, size, weights);
	});
}

extern "C" GeoaccStatus
geoacc_density_convolve(GeoaccDevice device, uint32_t width, uint32_t height, const uint32_t *counts,
						GeoaccDensityKernel kernel, int size, double *out)
{
	return guarded([&] { convolve(device, width, height, counts, kernel, size, out); });
}

extern "C" GeoaccStatus
geoacc_density_convolve_sums(GeoaccDevice device, uint32_t width, uint32_t height, const int64_t *sums,
							 GeoaccDensityKernel kernel, int size, double *out)
{
	return guarded([&] { convolve(device, width, height, sums, kernel, size, out); });
}
