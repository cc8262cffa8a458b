/*
 * density_raster.cu
 *
 * GPU half of the density raster.  Projection: one thread per point adds
 * the point and the interpolated samples of its incoming segment to the
 * integer counts with atomicAdd (the paper's write-after-write hazard; with
 * integers the result does not depend on the order).  Convolution: one
 * thread per output cell gathers its k x k neighbourhood from a tile of
 * counts in shared memory, with the weights in constant memory.  Both work
 * on bands of rows and batches of points sized to the device-memory cap.
 */
#include "density_raster.cuh"

#include <algorithm>

namespace geoacc
{

namespace
{

constexpr unsigned int project_threads = 256;
constexpr uint32_t points_per_launch = 1u << 20;
constexpr int tile_width = 32;
constexpr int tile_height = 8;
/* kernel terms per convolution launch: milliseconds even on a GPU slow at FP64 */
constexpr uint64_t terms_per_launch = 1ull << 33;

__constant__ double c_weights[GEOACC_DENSITY_MAX_KERNEL_SIZE * GEOACC_DENSITY_MAX_KERNEL_SIZE];

/* Counts of the rows [row_first, row_end), kept at counts[(row - row_first) * width]. */
struct BandCounter
{
	uint32_t   *counts;
	uint32_t	width;
	uint32_t	row_first;
	uint32_t	row_end;

	__device__ void operator()(uint32_t row, uint32_t column) const
	{
		if (row >= row_first && row < row_end)
			atomicAdd(counts + (size_t) (row - row_first) * width + column, 1u);
	}
};

__global__ void
project_kernel(DensityGeometry g, const double *xy, const uint8_t *flags, uint32_t first, uint32_t end,
			   BandCounter counter)
{
	size_t		i = first + (size_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < end)
		density_point(g, xy, flags, i, counter);
}

/*
 * Output rows [out_first, out_first + out_rows) from the counts of rows
 * [in_first, in_first + in_rows), which hold every row within size / 2 of
 * them that exists.  Cells outside the raster read as zero.
 */
__global__ void
convolve_kernel(const uint32_t *counts, uint32_t in_first, uint32_t in_rows, uint32_t width,
				double *out, uint32_t out_first, uint32_t out_rows, int size)
{
	extern __shared__ double tile[];
	int			h = size / 2;
	int			pitch = tile_width + 2 * h;
	int			tile_rows = tile_height + 2 * h;
	int64_t		row0 = (int64_t) out_first + (int64_t) blockIdx.y * tile_height;
	int64_t		col0 = (int64_t) blockIdx.x * tile_width;

	for (int idx = threadIdx.y * tile_width + threadIdx.x; idx < pitch * tile_rows;
		 idx += tile_width * tile_height)
	{
		int64_t		r = row0 - h + idx / pitch;
		int64_t		c = col0 - h + idx % pitch;
		double		count = 0.0;

		if (r >= in_first && r < (int64_t) in_first + in_rows && c >= 0 && c < width)
			count = counts[(size_t) (r - in_first) * width + c];
		tile[idx] = count;
	}
	__syncthreads();

	int64_t		r = row0 + threadIdx.y;
	int64_t		c = col0 + threadIdx.x;

	if (r >= (int64_t) out_first + out_rows || c >= width)
		return;

	double		sum = 0.0;

	for (int i = 0; i < size; i++)
	{
		const double *counts_row = tile + (threadIdx.y + i) * pitch + threadIdx.x;
		const double *weights_row = c_weights + i * size;

		for (int j = 0; j < size; j++)
			sum = density_term(sum, weights_row[j], counts_row[j]);
	}
	out[(size_t) (r - out_first) * width + c] = sum;
}

size_t
convolve_shared_bytes(int size)
{
	return sizeof(double) * (tile_width + size - 1) * (tile_height + size - 1);
}

}								/* namespace */

void
density_project_device(const DensityGeometry &g, const double *d_xy, const uint8_t *d_flags,
					   uint32_t first, uint32_t end, uint32_t *d_counts, uint32_t row_first, uint32_t row_end)
{
	BandCounter counter{d_counts, g.columns, row_first, row_end};

	if (end > first)
	{
		project_kernel<<<blocks_for(end - first, project_threads), project_threads, 0, stream()>>>(
			g, d_xy, d_flags, first, end, counter);
		GEOACC_CUDA_CHECK_LAUNCH();
	}
}

void
density_set_weights_device(const double *weights, int size)
{
	GEOACC_CUDA_TRY(cudaMemcpyToSymbolAsync(c_weights, weights, sizeof(double) * size * size, 0,
											cudaMemcpyHostToDevice, stream()));
	GEOACC_CUDA_TRY(cudaFuncSetAttribute(convolve_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
										 (int) convolve_shared_bytes(size)));
}

void
density_convolve_device(const uint32_t *d_counts, uint32_t in_first, uint32_t in_rows, uint32_t width,
						double *d_out, uint32_t out_first, uint32_t out_rows, int size)
{
	dim3		threads(tile_width, tile_height);
	dim3		blocks((width + tile_width - 1) / tile_width, (out_rows + tile_height - 1) / tile_height);

	if (out_rows == 0)
		return;
	convolve_kernel<<<blocks, threads, convolve_shared_bytes(size), stream()>>>(
		d_counts, in_first, in_rows, width, d_out, out_first, out_rows, size);
	GEOACC_CUDA_CHECK_LAUNCH();
}

/*
 * Counts live on the host between calls: each band of rows is uploaded,
 * receives the samples of every batch of points, and comes back.  With the
 * whole raster and all points under the cap that is one band and one batch.
 */
void
density_project_gpu(const GeoaccDensityGrid &grid, const double *xy, const uint8_t *flags, uint32_t n,
					uint32_t *counts)
{
	DensityGeometry g = density_geometry(grid);
	uint64_t	row_bytes = (uint64_t) grid.width * sizeof(uint32_t);
	uint64_t	point_bytes = 2 * sizeof(double) + sizeof(uint8_t);
	uint64_t	available = geoacc_gpu_memory_available();
	uint32_t	band_rows = grid.height;
	uint32_t	batch = n;

	if (n == 0)
		return;
	if (row_bytes * grid.height + point_bytes * n > available)
	{
		/* half the cap for counts, the rest for points (one more for the batch's predecessor) */
		band_rows = (uint32_t) std::min<uint64_t>(grid.height, std::max<uint64_t>(1, available / 2 / row_bytes));
		uint64_t	left = available > band_rows * row_bytes ? available - band_rows * row_bytes : 0;

		batch = (uint32_t) std::min<uint64_t>(n, std::max<uint64_t>(1, left / point_bytes - 1));
	}

	uint32_t	stored = std::min<uint64_t>(n, (uint64_t) batch + 1);
	DeviceBuffer<uint32_t> d_counts((size_t) band_rows * grid.width);
	DeviceBuffer<double> d_xy(2 * (size_t) stored);
	DeviceBuffer<uint8_t> d_flags(stored);

	if (batch == n)
	{
		d_xy.upload(xy, 2 * (size_t) n);
		d_flags.upload(flags, n);
	}
	for (uint32_t row_first = 0; row_first < grid.height; row_first += band_rows)
	{
		uint32_t	row_end = std::min(grid.height, row_first + band_rows);
		uint32_t   *band = counts + (size_t) row_first * grid.width;

		d_counts.upload(band, (size_t) (row_end - row_first) * grid.width);
		for (uint32_t first = 0; first < n; first += batch)
		{
			uint32_t	end = std::min<uint64_t>(n, (uint64_t) first + batch);
			/* the batch's points on the device start at `base`: its predecessor, if any */
			uint32_t	base = batch == n || first == 0 ? 0 : first - 1;

			if (batch != n)
			{
				d_xy.upload(xy + 2 * (size_t) base, 2 * (size_t) (end - base));
				d_flags.upload(flags + base, end - base);
			}
			for (uint32_t i = first; i < end; i += points_per_launch)
			{
				density_project_device(g, d_xy.data(), d_flags.data(), i - base,
									   std::min<uint64_t>(end, (uint64_t) i + points_per_launch) - base,
									   d_counts.data(), row_first, row_end);
				sync_and_check_interrupt();
			}
		}
		d_counts.download(band, (size_t) (row_end - row_first) * grid.width);
	}
}

/*
 * Bands of output rows, each with the count rows within size / 2 of it,
 * sized to the cap; launches of a bounded number of terms each.
 */
void
density_convolve_gpu(uint32_t width, uint32_t height, const uint32_t *counts, const double *weights,
					 int size, double *out)
{
	uint32_t	h = size / 2;
	uint64_t	available = geoacc_gpu_memory_available();
	uint64_t	in_row_bytes = (uint64_t) width * sizeof(uint32_t);
	uint64_t	out_row_bytes = (uint64_t) width * sizeof(double);
	uint64_t	halo_bytes = 2 * h * in_row_bytes;
	uint32_t	band_rows = height;

	if ((in_row_bytes + out_row_bytes) * height > available)
		band_rows = (uint32_t) std::min<uint64_t>(
			height, std::max<uint64_t>(1, (available > halo_bytes ? available - halo_bytes : 0) /
									   (in_row_bytes + out_row_bytes)));

	/* at most the raster's height: a small raster's quotient does not fit in 32 bits */
	uint32_t	launch_rows = (uint32_t) std::min<uint64_t>(height, std::max<uint64_t>(
		tile_height, terms_per_launch / ((uint64_t) width * size * size) / tile_height * tile_height));
	DeviceBuffer<uint32_t> d_counts((size_t) std::min<uint64_t>(height, (uint64_t) band_rows + 2 * h) * width);
	DeviceBuffer<double> d_out((size_t) band_rows * width);

	density_set_weights_device(weights, size);
	for (uint32_t out_first = 0; out_first < height; out_first += band_rows)
	{
		uint32_t	out_end = std::min(height, out_first + band_rows);
		uint32_t	in_first = out_first > h ? out_first - h : 0;
		uint32_t	in_end = (uint32_t) std::min<uint64_t>(height, (uint64_t) out_end + h);

		d_counts.upload(counts + (size_t) in_first * width, (size_t) (in_end - in_first) * width);
		for (uint32_t r = out_first; r < out_end; r += launch_rows)
		{
			uint32_t	rows = std::min(out_end - r, launch_rows);

			density_convolve_device(d_counts.data(), in_first, in_end - in_first, width,
									d_out.data() + (size_t) (r - out_first) * width, r, rows, size);
			sync_and_check_interrupt();
		}
		d_out.download(out + (size_t) out_first * width, (size_t) (out_end - out_first) * width);
	}
}

}								/* namespace geoacc */
