/*
 * density_raster.cu
 *
 * GPU half of the density raster.  Projection: one thread per point adds
 * the point and the interpolated samples of its incoming segment to the
 * integer counts or fixed-point sums with atomicAdd (the paper's
 * write-after-write hazard; with integers the result does not depend on the
 * order).  Convolution: one thread per output cell gathers its k x k
 * neighbourhood from a tile of cells in shared memory, with the weights in
 * constant memory.  Both work on bands of rows and batches of points sized
 * to the device-memory cap.
 */
#include "density_raster.cuh"

#include <algorithm>
#include <memory>
#include <vector>

namespace geoacc
{

namespace
{

constexpr unsigned int PROJECT_THREADS = 256;
constexpr uint32_t POINTS_PER_LAUNCH = 1u << 20;
constexpr int TILE_WIDTH = 32;
constexpr int TILE_HEIGHT = 8;
/* kernel terms per convolution launch: milliseconds even on a GPU slow at FP64 */
constexpr uint64_t TERMS_PER_LAUNCH = 1ull << 33;

__constant__ double c_weights[GEOACC_DENSITY_MAX_KERNEL_SIZE * GEOACC_DENSITY_MAX_KERNEL_SIZE];

/* Atomic adds of the two kinds of cells (integers: the order does not matter). */
__device__ void
atomic_add_cell(uint32_t *cell, uint32_t amount)
{
	atomicAdd(cell, amount);
}

__device__ void
atomic_add_cell(int64_t *cell, int64_t amount)
{
	/* two's complement: an unsigned add is the signed add */
	atomicAdd(reinterpret_cast<unsigned long long *>(cell), (unsigned long long) amount);
}

/* Cells of the grid rows [row_first, row_end), kept at cells[(row - row_first) * columns]. */
template <class T>
struct BandCells
{
	T		   *cells;
	uint32_t	columns;
	uint32_t	row_first;
	uint32_t	row_end;

	__device__ void operator()(uint32_t row, uint32_t column, T amount) const
	{
		if (row >= row_first && row < row_end)
			atomic_add_cell(cells + (size_t) (row - row_first) * columns + column, amount);
	}
};

/*
 * Tiles of a band of cells, the grid rows [row_first, row_end) kept at
 * cells[(row - row_first) * columns]: the band's tile k is the tile of
 * row tile_row_first + k / tile_columns and column k % tile_columns, of
 * which only the cells inside the band and the grid are read.
 */
template <class T>
struct BandTiles
{
	const T    *cells;
	uint32_t	columns;
	uint32_t	row_first;
	uint32_t	row_end;
	uint32_t	tile_columns;

	__device__ T cell(uint32_t k, uint32_t idx) const
	{
		uint32_t	r = (row_first / DENSITY_TILE + k / tile_columns) * DENSITY_TILE + idx / DENSITY_TILE;
		uint32_t	c = k % tile_columns * DENSITY_TILE + idx % DENSITY_TILE;

		return r >= row_first && r < row_end && c < columns ? cells[(size_t) (r - row_first) * columns + c] : T(0);
	}
};

/* occupied[k]: whether the band's tile k has a nonzero cell (a block per tile). */
template <class T>
__global__ void
tile_occupancy_kernel(BandTiles<T> band, uint8_t *occupied)
{
	int			any = 0;

	for (uint32_t idx = threadIdx.x; idx < DENSITY_TILE_CELLS; idx += blockDim.x)
		if (band.cell(blockIdx.x, idx) != 0)
			any = 1;
	any = __syncthreads_or(any);
	if (threadIdx.x == 0)
		occupied[blockIdx.x] = any;
}

/* The band's tile index[j] into pack[j], row-major, zero outside the band (a block per tile). */
template <class T>
__global__ void
tile_gather_kernel(BandTiles<T> band, const uint32_t *index, T *pack)
{
	T		   *out = pack + (size_t) blockIdx.x * DENSITY_TILE_CELLS;

	for (uint32_t idx = threadIdx.x; idx < DENSITY_TILE_CELLS; idx += blockDim.x)
		out[idx] = band.cell(index[blockIdx.x], idx);
}

template <class T>
__global__ void
project_kernel(DensityGeometry g, GeoaccDensityPoints points, uint32_t first, uint32_t end, BandCells<T> cells)
{
	size_t		i = first + (size_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < end)
		density_point<T>(g, points, i, cells);
}

/*
 * Raster rows [out_first, out_first + out_rows) from the grid rows
 * [in_first, in_first + in_rows) (indices with the margin: raster row r is
 * grid row r + size / 2), which hold every grid row within size / 2 of
 * them.  Raster cell (r, c) gathers grid cells (r + i, c + j).
 */
template <class T>
__global__ void
convolve_kernel(const T *cells, uint32_t in_first, uint32_t in_rows, uint32_t width, double *out,
				uint32_t out_first, uint32_t out_rows, int size)
{
	extern __shared__ double tile[];
	int			h = size / 2;
	int			pitch = TILE_WIDTH + 2 * h;
	int			tile_rows = TILE_HEIGHT + 2 * h;
	int64_t		grid_columns = (int64_t) width + 2 * h;
	int64_t		row0 = (int64_t) out_first + (int64_t) blockIdx.y * TILE_HEIGHT;
	int64_t		col0 = (int64_t) blockIdx.x * TILE_WIDTH;

	for (int idx = threadIdx.y * TILE_WIDTH + threadIdx.x; idx < pitch * tile_rows;
		 idx += TILE_WIDTH * TILE_HEIGHT)
	{
		int64_t		r = row0 + idx / pitch;
		int64_t		c = col0 + idx % pitch;
		double		value = 0.0;

		/* only the rows and columns past the last tile's end are missing */
		if (r >= in_first && r < (int64_t) in_first + in_rows && c < grid_columns)
			value = density_cell_value(cells[(size_t) (r - in_first) * grid_columns + c]);
		tile[idx] = value;
	}
	__syncthreads();

	int64_t		r = row0 + threadIdx.y;
	int64_t		c = col0 + threadIdx.x;

	if (r >= (int64_t) out_first + out_rows || c >= width)
		return;

	double		sum = 0.0;

	for (int i = 0; i < size; i++)
	{
		const double *values_row = tile + (threadIdx.y + i) * pitch + threadIdx.x;
		const double *weights_row = c_weights + i * size;

		for (int j = 0; j < size; j++)
			sum = density_term(sum, weights_row[j], values_row[j]);
	}
	out[(size_t) (r - out_first) * width + c] = sum;
}

size_t
convolve_shared_bytes(int size)
{
	return sizeof(double) * (TILE_WIDTH + size - 1) * (TILE_HEIGHT + size - 1);
}

}								/* namespace */

template <class T>
void
density_project_device(const DensityGeometry &g, const GeoaccDensityPoints &d_points, uint32_t first,
					   uint32_t end, T *d_cells, uint32_t row_first, uint32_t row_end)
{
	BandCells<T> cells{d_cells, g.columns, row_first, row_end};

	if (end > first)
	{
		project_kernel<T><<<blocks_for(end - first, PROJECT_THREADS), PROJECT_THREADS, 0, stream()>>>(
			g, d_points, first, end, cells);
		GEOACC_CUDA_CHECK_LAUNCH();
	}
}

template <class T>
void
density_set_weights_device(const double *weights, int size)
{
	GEOACC_CUDA_TRY(cudaMemcpyToSymbolAsync(c_weights, weights, sizeof(double) * size * size, 0,
											cudaMemcpyHostToDevice, stream()));
	GEOACC_CUDA_TRY(cudaFuncSetAttribute(convolve_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
										 (int) convolve_shared_bytes(size)));
}

template <class T>
void
density_convolve_device(const T *d_cells, uint32_t in_first, uint32_t in_rows, uint32_t width, double *d_out,
						uint32_t out_first, uint32_t out_rows, int size)
{
	dim3		threads(TILE_WIDTH, TILE_HEIGHT);
	dim3		blocks((width + TILE_WIDTH - 1) / TILE_WIDTH, (out_rows + TILE_HEIGHT - 1) / TILE_HEIGHT);

	if (out_rows == 0)
		return;
	convolve_kernel<T><<<blocks, threads, convolve_shared_bytes(size), stream()>>>(
		d_cells, in_first, in_rows, width, d_out, out_first, out_rows, size);
	GEOACC_CUDA_CHECK_LAUNCH();
}

/*
 * Add a band's cells (grid rows [row_first, row_end) on the device) to the
 * host's tiles: the tiles with a nonzero cell found and gathered on the
 * device, brought back d_index.size() at a time, and added (a missing tile
 * is made).  A tile the band shares with the next one gets its other rows
 * from that band.
 */
template <class T>
void
add_band_to_tiles(const DensityGeometry &g, const T *d_band, uint32_t row_first, uint32_t row_end,
				  DeviceBuffer<uint8_t> &d_occupied, DeviceBuffer<uint32_t> &d_index, DeviceBuffer<T> &d_pack,
				  GeoaccDensityTiles &tiles)
{
	BandTiles<T> band{d_band, g.columns, row_first, row_end, tiles.tile_columns};
	uint32_t	tile_row_first = row_first / DENSITY_TILE;
	uint32_t	band_tiles = ((row_end - 1) / DENSITY_TILE - tile_row_first + 1) * tiles.tile_columns;
	std::vector<uint8_t> occupied(band_tiles);
	std::vector<uint32_t> index;
	std::vector<T> pack;

	tile_occupancy_kernel<T><<<band_tiles, 256, 0, stream()>>>(band, d_occupied.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	d_occupied.download(occupied.data(), band_tiles);
	for (uint32_t k = 0; k < band_tiles; k++)
		if (occupied[k])
			index.push_back(k);
	for (size_t first = 0; first < index.size(); first += d_index.size())
	{
		uint32_t	n = (uint32_t) std::min(index.size() - first, d_index.size());

		pack.resize((size_t) n * DENSITY_TILE_CELLS);
		d_index.upload(index.data() + first, n);
		tile_gather_kernel<T><<<n, 256, 0, stream()>>>(band, d_index.data(), d_pack.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		d_pack.download(pack.data(), (size_t) n * DENSITY_TILE_CELLS);
		for (uint32_t j = 0; j < n; j++)
		{
			size_t		k = (size_t) tile_row_first * tiles.tile_columns + index[first + j];
			const T    *from = pack.data() + (size_t) j * DENSITY_TILE_CELLS;
			T		   *to = density_tile<T>(tiles, k);	/* made zeroed when missing */

			for (size_t i = 0; i < DENSITY_TILE_CELLS; i++)
				to[i] += from[i];
		}
		check_interrupt();
	}
}

/*
 * The cells live on the host between calls, in tiles.  Each band of grid
 * rows starts at zero on the device, receives the samples of every batch
 * of points, and its nonzero tiles are added to the host's; with the whole
 * grid and all points under the cap that is one band and one batch, and
 * DENSITY_PACK_TILES tiles come back at a time (under a small cap, fewer,
 * down to one).  Every device allocation is made before a tile is touched.
 */
template <class T>
void
density_project_gpu(const GeoaccDensityGrid &grid, const GeoaccDensityPoints &points, GeoaccDensityTiles &tiles)
{
	DensityGeometry g = density_geometry(grid, points.interpolate);
	uint32_t	n = points.n;
	bool		with_values = points.values != nullptr;
	uint64_t	row_bytes = density_row_bytes(g, sizeof(T));
	uint64_t	point_bytes = density_point_bytes(with_values);
	uint64_t	available = geoacc_gpu_memory_available();
	uint32_t	all_tiles = tiles.tile_columns * tiles.tile_rows;
	uint64_t	pack = std::min(all_tiles, DENSITY_PACK_TILES);
	uint32_t	band_rows = g.rows;
	uint32_t	batch = n;

	if (n == 0)
		return;
	if (row_bytes * g.rows + point_bytes * n + density_pack_bytes(g, sizeof(T), pack) > available)
	{
		/* a quarter of the cap for the tiles brought back, half the rest for cells, the rest for points */
		uint64_t	tile_bytes = sizeof(uint32_t) + DENSITY_TILE_CELLS * sizeof(T);

		pack = std::min<uint64_t>(pack, std::max<uint64_t>(1, available / 4 / tile_bytes));
		uint64_t	pack_bytes = density_pack_bytes(g, sizeof(T), pack);
		uint64_t	rest = available > pack_bytes ? available - pack_bytes : 0;

		band_rows = (uint32_t) std::min<uint64_t>(g.rows, std::max<uint64_t>(1, rest / 2 / row_bytes));
		uint64_t	left = rest > band_rows * row_bytes ? rest - band_rows * row_bytes : 0;

		batch = (uint32_t) std::min<uint64_t>(n, std::max<uint64_t>(1, left / point_bytes - 1));
	}

	uint32_t	stored = std::min<uint64_t>(n, (uint64_t) batch + 1);
	DeviceBuffer<T> d_cells((size_t) band_rows * g.columns);
	DeviceBuffer<double> d_xy(2 * (size_t) stored);
	DeviceBuffer<uint8_t> d_flags(stored);
	DeviceBuffer<double> d_values(with_values ? stored : 0);
	DeviceBuffer<uint8_t> d_occupied(all_tiles);
	DeviceBuffer<uint32_t> d_index(pack);
	DeviceBuffer<T> d_pack(pack * DENSITY_TILE_CELLS);
	GeoaccDensityPoints d_points = points;

	d_points.xy = d_xy.data();
	d_points.flags = d_flags.data();
	d_points.values = with_values ? d_values.data() : nullptr;
	if (batch == n)
	{
		d_xy.upload(points.xy, 2 * (size_t) n);
		d_flags.upload(points.flags, n);
		if (with_values)
			d_values.upload(points.values, n);
	}
	for (uint32_t row_first = 0; row_first < g.rows; row_first += band_rows)
	{
		uint32_t	row_end = std::min(g.rows, row_first + band_rows);

		GEOACC_CUDA_TRY(cudaMemsetAsync(d_cells.data(), 0, sizeof(T) * (row_end - row_first) * g.columns,
										stream()));
		for (uint32_t first = 0; first < n; first += batch)
		{
			uint32_t	end = std::min<uint64_t>(n, (uint64_t) first + batch);
			/* the batch's points on the device start at `base`: its predecessor, if any */
			uint32_t	base = batch == n || first == 0 ? 0 : first - 1;

			if (batch != n)
			{
				d_xy.upload(points.xy + 2 * (size_t) base, 2 * (size_t) (end - base));
				d_flags.upload(points.flags + base, end - base);
				if (with_values)
					d_values.upload(points.values + base, end - base);
			}
			for (uint32_t i = first; i < end; i += POINTS_PER_LAUNCH)
			{
				density_project_device(g, d_points, i - base,
									   std::min<uint64_t>(end, (uint64_t) i + POINTS_PER_LAUNCH) - base,
									   d_cells.data(), row_first, row_end);
				sync_and_check_interrupt();
			}
		}
		add_band_to_tiles(g, d_cells.data(), row_first, row_end, d_occupied, d_index, d_pack, tiles);
	}
}

/*
 * Bands of raster rows, each with the grid rows within size / 2 of it,
 * sized to the cap; launches of a bounded number of terms each.
 */
template <class T>
void
density_convolve_gpu(uint32_t width, uint32_t height, const T *cells, const double *weights, int size,
					 double *out)
{
	uint32_t	h = size / 2;
	uint64_t	grid_columns = (uint64_t) width + 2 * h;
	uint64_t	available = geoacc_gpu_memory_available();
	uint64_t	in_row_bytes = grid_columns * sizeof(T);
	uint64_t	out_row_bytes = (uint64_t) width * sizeof(double);
	uint64_t	halo_bytes = 2 * h * in_row_bytes;
	uint32_t	band_rows = height;

	if (density_convolve_bytes(width, height, size, sizeof(T)) > available)
		band_rows = (uint32_t) std::min<uint64_t>(
			height, std::max<uint64_t>(1, (available > halo_bytes ? available - halo_bytes : 0) /
									   (in_row_bytes + out_row_bytes)));

	/* at most the raster's height: a small raster's quotient does not fit in 32 bits */
	uint32_t	launch_rows = (uint32_t) std::min<uint64_t>(height, std::max<uint64_t>(
		TILE_HEIGHT, TERMS_PER_LAUNCH / ((uint64_t) width * size * size) / TILE_HEIGHT * TILE_HEIGHT));
	DeviceBuffer<T> d_cells((size_t) (band_rows + 2 * h) * grid_columns);
	DeviceBuffer<double> d_out((size_t) band_rows * width);

	density_set_weights_device<T>(weights, size);
	for (uint32_t out_first = 0; out_first < height; out_first += band_rows)
	{
		uint32_t	out_end = std::min(height, out_first + band_rows);
		/* grid rows out_first .. out_end + 2h - 1 hold raster rows out_first - h .. out_end + h - 1 */
		uint32_t	in_rows = out_end - out_first + 2 * h;

		d_cells.upload(cells + (size_t) out_first * grid_columns, (size_t) in_rows * grid_columns);
		for (uint32_t r = out_first; r < out_end; r += launch_rows)
		{
			uint32_t	rows = std::min(out_end - r, launch_rows);

			density_convolve_device(d_cells.data(), out_first, in_rows, width,
									d_out.data() + (size_t) (r - out_first) * width, r, rows, size);
			sync_and_check_interrupt();
		}
		d_out.download(out + (size_t) out_first * width, (size_t) (out_end - out_first) * width);
	}
}

/* ------------------------------------------------------ resident points */

struct ResidentGpu
{
	DeviceBuffer<double> xy;
	DeviceBuffer<uint8_t> flags;
	DeviceBuffer<double> values[GEOACC_DENSITY_RESIDENT_VALUES];
	DeviceBuffer<uint64_t> cell_start;
	DeviceBuffer<uint32_t> entries;
	DeviceBuffer<uint32_t> longs;
};

ResidentGpu *
resident_gpu_create(const GeoaccDensityResident &r)
{
	std::unique_ptr<ResidentGpu> gpu(new ResidentGpu);
	uint64_t	ncells = (uint64_t) r.index.gx * r.index.gy + 1;

	gpu->xy.resize(2 * (size_t) r.n);
	gpu->flags.resize(r.n);
	for (int k = 0; k < r.nvalues; k++)
		gpu->values[k].resize(r.n);
	gpu->cell_start.resize(ncells);
	gpu->entries.resize(r.index.nentries);
	gpu->longs.resize(r.index.nlong);
	gpu->xy.upload(r.xy, 2 * (size_t) r.n);
	gpu->flags.upload(r.flags, r.n);
	for (int k = 0; k < r.nvalues; k++)
		gpu->values[k].upload(r.values[k], r.n);
	gpu->cell_start.upload(r.index.cell_start, ncells);
	gpu->entries.upload(r.index.entries, r.index.nentries);
	gpu->longs.upload(r.index.longs, r.index.nlong);
	stream_sync();
	return gpu.release();
}

void
resident_gpu_free(ResidentGpu *gpu)
{
	delete gpu;
}

namespace
{

/*
 * A search of resident points on the device: the entries of each row of
 * the search's cells (row k's cells c0..c1 hold the entries from
 * row_entry[k], row_before[k] candidates before them), then the longs.
 */
struct ResidentSearch
{
	GeoaccDensityPoints points;
	GeoaccPointGrid index;
	IndexSearch search;
	const uint64_t *row_entry;
	const uint64_t *row_before; /* rows + 1 */
	uint32_t	rows;
	uint64_t	in_rows;		/* candidates in the rows; the longs follow */
};

/*
 * Candidate k: the entry of a cell, taken when its point's box meets the
 * search's and the cell is the first of the point's that the search covers
 * (as the CPU's walk takes it), or a long whose box meets the search's.
 */
template <class T>
__global__ void
project_resident_kernel(DensityGeometry g, ResidentSearch s, uint64_t first, uint64_t end, BandCells<T> cells)
{
	uint64_t	k = first + (uint64_t) blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t	i;

	if (k >= end)
		return;
	if (k < s.in_rows)
	{
		uint32_t	lo = 0;
		uint32_t	hi = s.rows;

		while (hi - lo > 1)		/* the last row starting at or before k */
		{
			uint32_t	mid = (lo + hi) / 2;

			if (s.row_before[mid] <= k)
				lo = mid;
			else
				hi = mid;
		}

		uint64_t	e = s.row_entry[lo] + (k - s.row_before[lo]);

		i = s.index.entries[e];

		PointBox	b = point_box(s.points.xy, s.points.flags, i);

		if (!boxes_meet(b, s.search.box))
			return;

		CellRange	r = point_grid_cells(s.index, b);
		uint32_t	cx = r.c0[0] > s.search.cells.c0[0] ? r.c0[0] : s.search.cells.c0[0];
		uint32_t	cy = r.c0[1] > s.search.cells.c0[1] ? r.c0[1] : s.search.cells.c0[1];
		uint64_t	c = (uint64_t) cy * s.index.gx + cx;

		if (cy != s.search.cells.c0[1] + lo || e < s.index.cell_start[c] || e >= s.index.cell_start[c + 1])
			return;
	}
	else
	{
		i = s.index.longs[k - s.in_rows];
		if (!boxes_meet(point_box(s.points.xy, s.points.flags, i), s.search.box))
			return;
	}
	density_point<T>(g, s.points, i, cells);
}

/* candidates per launch between polls for a cancel */
constexpr uint64_t CANDIDATES_PER_LAUNCH = uint64_t(1) << 22;

}								/* namespace */

/*
 * As density_project_gpu, with the points already on the device: each band
 * of grid rows starts at zero, takes what every candidate of the search
 * adds to it, and its nonzero tiles are added to the host's.  The rows of
 * the search are laid out on the host, from the caller's copy of the
 * index's cell starts.
 */
template <class T>
void
density_project_resident_gpu(const GeoaccDensityGrid &grid, const GeoaccDensityResident &resident,
							 const GeoaccDensityPoints &points, int values, GeoaccDensityTiles &tiles)
{
	const GeoaccPointGrid &ix = resident.index;
	DensityGeometry g = density_geometry(grid, points.interpolate);
	IndexSearch search = index_search(grid, ix);
	uint32_t	rows = search.meets ? search.cells.c1[1] - search.cells.c0[1] + 1 : 0;
	std::vector<uint64_t> layout(2 * (size_t) rows + 1);
	uint64_t   *row_entry = layout.data();
	uint64_t   *row_before = layout.data() + rows;
	uint64_t	in_rows = 0;

	for (uint32_t k = 0; k < rows; k++)
	{
		uint64_t	row = (uint64_t) (search.cells.c0[1] + k) * ix.gx;

		row_entry[k] = ix.cell_start[row + search.cells.c0[0]];
		row_before[k] = in_rows;
		in_rows += ix.cell_start[row + search.cells.c1[0] + 1] - row_entry[k];
	}
	row_before[rows] = in_rows;

	uint64_t	candidates = in_rows + ix.nlong;

	if (candidates == 0)
		return;

	uint64_t	row_bytes = density_row_bytes(g, sizeof(T));
	uint64_t	available = geoacc_gpu_memory_available();
	uint32_t	all_tiles = tiles.tile_columns * tiles.tile_rows;
	uint64_t	pack = std::min(all_tiles, DENSITY_PACK_TILES);
	uint64_t	layout_bytes = layout.size() * sizeof(uint64_t);
	uint32_t	band_rows = g.rows;

	if (row_bytes * g.rows + layout_bytes + density_pack_bytes(g, sizeof(T), pack) > available)
	{
		/* a quarter of the cap for the tiles brought back, the rest for cells */
		uint64_t	tile_bytes = sizeof(uint32_t) + DENSITY_TILE_CELLS * sizeof(T);

		pack = std::min<uint64_t>(pack, std::max<uint64_t>(1, available / 4 / tile_bytes));
		uint64_t	fixed = density_pack_bytes(g, sizeof(T), pack) + layout_bytes;

		band_rows = (uint32_t) std::min<uint64_t>(
			g.rows, std::max<uint64_t>(1, (available > fixed ? available - fixed : 0) / row_bytes));
	}

	DeviceBuffer<uint64_t> d_layout(layout.size());
	DeviceBuffer<T> d_cells((size_t) band_rows * g.columns);
	DeviceBuffer<uint8_t> d_occupied(all_tiles);
	DeviceBuffer<uint32_t> d_index(pack);
	DeviceBuffer<T> d_pack(pack * DENSITY_TILE_CELLS);
	ResidentSearch s{points, ix, search, d_layout.data(), d_layout.data() + rows, rows, in_rows};

	s.points.xy = resident.gpu->xy.data();
	s.points.flags = resident.gpu->flags.data();
	s.points.values = values >= 0 ? resident.gpu->values[values].data() : nullptr;
	s.index.cell_start = resident.gpu->cell_start.data();
	s.index.entries = resident.gpu->entries.data();
	s.index.longs = resident.gpu->longs.data();
	d_layout.upload(layout.data(), layout.size());
	for (uint32_t row_first = 0; row_first < g.rows; row_first += band_rows)
	{
		uint32_t	row_end = std::min(g.rows, row_first + band_rows);
		BandCells<T> cells{d_cells.data(), g.columns, row_first, row_end};

		GEOACC_CUDA_TRY(cudaMemsetAsync(d_cells.data(), 0, sizeof(T) * (row_end - row_first) * g.columns,
										stream()));
		for (uint64_t first = 0; first < candidates; first += CANDIDATES_PER_LAUNCH)
		{
			uint64_t	end = std::min(candidates, first + CANDIDATES_PER_LAUNCH);

			project_resident_kernel<T><<<blocks_for(end - first, PROJECT_THREADS), PROJECT_THREADS, 0, stream()>>>(
				g, s, first, end, cells);
			GEOACC_CUDA_CHECK_LAUNCH();
			if (end < candidates)
				sync_and_check_interrupt();
		}
		add_band_to_tiles(g, d_cells.data(), row_first, row_end, d_occupied, d_index, d_pack, tiles);
	}
}

/* the two kinds of cells: counts and fixed-point sums */
template void density_project_device<uint32_t>(const DensityGeometry &, const GeoaccDensityPoints &, uint32_t,
												uint32_t, uint32_t *, uint32_t, uint32_t);
template void density_project_device<int64_t>(const DensityGeometry &, const GeoaccDensityPoints &, uint32_t,
											   uint32_t, int64_t *, uint32_t, uint32_t);
template void density_set_weights_device<uint32_t>(const double *, int);
template void density_set_weights_device<int64_t>(const double *, int);
template void density_convolve_device<uint32_t>(const uint32_t *, uint32_t, uint32_t, uint32_t, double *,
												 uint32_t, uint32_t, int);
template void density_convolve_device<int64_t>(const int64_t *, uint32_t, uint32_t, uint32_t, double *,
												uint32_t, uint32_t, int);
template void density_project_gpu<uint32_t>(const GeoaccDensityGrid &, const GeoaccDensityPoints &,
											 GeoaccDensityTiles &);
template void density_project_gpu<int64_t>(const GeoaccDensityGrid &, const GeoaccDensityPoints &,
											GeoaccDensityTiles &);
template void density_project_resident_gpu<uint32_t>(const GeoaccDensityGrid &, const GeoaccDensityResident &,
													  const GeoaccDensityPoints &, int, GeoaccDensityTiles &);
template void density_project_resident_gpu<int64_t>(const GeoaccDensityGrid &, const GeoaccDensityResident &,
													 const GeoaccDensityPoints &, int, GeoaccDensityTiles &);
template void density_convolve_gpu<uint32_t>(uint32_t, uint32_t, const uint32_t *, const double *, int, double *);
template void density_convolve_gpu<int64_t>(uint32_t, uint32_t, const int64_t *, const double *, int, double *);

}								/* namespace geoacc */
