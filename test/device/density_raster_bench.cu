/*
 * density_raster_bench.cu
 *
 * Kernel-only throughput of the density raster on the GPU, against the
 * device's measured copy bandwidth: the projection kernel over random-walk
 * tracks already on the device (spread over the grid, and gathered in a
 * corner of a map tile's grid, many to a cell), and the convolution kernel
 * over counts already on the device, timed with CUDA events (best of
 * three).  Prints markdown tables.  Built and run by test/device/density_raster.sh:
 *
 *   nvcc -std=c++17 -O3 --fmad=false -arch=sm_90 -Icuda \
 *        test/device/density_raster_bench.cu cuda/build-gpu/libgeoacc_core.a -o density_raster_bench
 */
#include "density_raster.cuh"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace geoacc;

namespace
{

struct Timer
{
	cudaEvent_t start, stop;

	Timer()
	{
		GEOACC_CUDA_TRY(cudaEventCreate(&start));
		GEOACC_CUDA_TRY(cudaEventCreate(&stop));
	}
	~Timer()
	{
		cudaEventDestroy(start);
		cudaEventDestroy(stop);
	}
	/* Best of `repeats` runs of f, in milliseconds. */
	template <class F>
	float best(int repeats, F f)
	{
		float		best_ms = 1e30f;

		for (int r = 0; r < repeats; r++)
		{
			GEOACC_CUDA_TRY(cudaEventRecord(start, stream()));
			f();
			GEOACC_CUDA_TRY(cudaEventRecord(stop, stream()));
			GEOACC_CUDA_TRY(cudaEventSynchronize(stop));

			float		ms = 0;

			GEOACC_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
			best_ms = ms < best_ms ? ms : best_ms;
		}
		return best_ms;
	}
};

/* Device-to-device copy bandwidth (bytes read plus written per second). */
double
copy_bandwidth(Timer &timer)
{
	size_t		bytes = (size_t) 2 << 30;
	DeviceBuffer<char> a(bytes), b(bytes);

	GEOACC_CUDA_TRY(cudaMemsetAsync(a.data(), 1, bytes, stream()));
	float		ms = timer.best(3, [&] {
		GEOACC_CUDA_TRY(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, stream()));
	});

	return 2.0 * bytes / (ms * 1e-3);
}

/*
 * Random-walk tracks of 1,000 points over the unit square, steps of about
 * 1/2000 of its side (a few cells of a 4096 raster), turning slowly.
 */
void
random_tracks(size_t n, std::vector<double> &xy, std::vector<uint8_t> &flags)
{
	std::mt19937_64 rng(42);
	std::uniform_real_distribution<double> unit(0.0, 1.0);
	std::normal_distribution<double> turn(0.0, 0.2);
	double		x = 0,
				y = 0,
				heading = 0;

	xy.resize(2 * n);
	flags.resize(n);
	for (size_t i = 0; i < n; i++)
	{
		if (i % 1000 == 0)
		{
			x = unit(rng);
			y = unit(rng);
			heading = 6.283185307179586 * unit(rng);
		}
		else
		{
			double		step = 0.0005 * (0.2 + unit(rng));

			heading += turn(rng);
			x += step * std::cos(heading);
			y += step * std::sin(heading);
		}
		xy[2 * i] = x;
		xy[2 * i + 1] = y;
		flags[i] = i % 1000 == 0 ? GEOACC_DENSITY_COUNT : GEOACC_DENSITY_COUNT | GEOACC_DENSITY_JOIN;
	}
}

}								/* namespace */

int
main(int argc, char **argv)
{
	size_t		max_points = argc > 1 ? strtoull(argv[1], nullptr, 10) : 100000000;

	if (max_points < 10000000 || max_points > 1000000000)
	{
		fprintf(stderr, "usage: density_raster_bench [MAX_POINTS from 10000000 to 1000000000]\n");
		return 2;
	}
	if (geoacc_gpu_init() != GEOACC_OK)
	{
		fprintf(stderr, "no GPU: %s\n", geoacc_status_message());
		return 1;
	}
	try
	{
		Timer		timer;
		double		bandwidth = copy_bandwidth(timer);
		std::vector<double> xy;
		std::vector<uint8_t> flags;

		random_tracks(max_points, xy, flags);

		DeviceBuffer<double> d_xy(xy.size());
		DeviceBuffer<uint8_t> d_flags(flags.size());

		d_xy.upload(xy.data(), xy.size());
		d_flags.upload(flags.data(), flags.size());
		printf("copy bandwidth (device to device, read + write): %.0f GB/s\n\n", bandwidth / 1e9);

		printf("| projection | points | samples | kernel ms | points/s | point bytes/s | of copy bandwidth |\n");
		printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
		std::vector<uint32_t> counts_4096;

		for (uint32_t side : {1024u, 4096u})
			for (size_t n = 10000000; n <= max_points; n *= 10)
			{
				GeoaccDensityGrid grid{0.0, 0.0, 1.0, 1.0, side, side, 0};
				DensityGeometry g = density_geometry(grid, true);
				GeoaccDensityPoints d_points{d_xy.data(), d_flags.data(), nullptr, (uint32_t) n,
											 GEOACC_DENSITY_SAMPLES, true};
				DeviceBuffer<uint32_t> d_counts((size_t) side * side);
				float		ms = timer.best(3, [&] {
					GEOACC_CUDA_TRY(cudaMemsetAsync(d_counts.data(), 0, d_counts.size() * 4, stream()));
					density_project_device(g, d_points, 0, (uint32_t) n, d_counts.data(), 0, side);
				});
				std::vector<uint32_t> counts(d_counts.size());
				uint64_t	samples = 0;

				d_counts.download(counts.data(), counts.size());
				for (uint32_t c : counts)
					samples += c;
				printf("| %u^2 | %zu | %llu | %.2f | %.2e | %.0f GB/s | %.0f%% |\n", side, n,
					   (unsigned long long) samples, ms, n / (ms * 1e-3), 17.0 * n / (ms * 1e-3) / 1e9,
					   100.0 * 17.0 * n / (ms * 1e-3) / bandwidth);
				if (side == 4096)
					counts_4096 = counts;
			}
		/* a map tile at a low zoom: a 256^2 grid whose 64^2 corner holds every point, many to a cell */
		for (size_t n = 10000000; n <= max_points; n *= 10)
		{
			GeoaccDensityGrid grid{0.0, 0.0, 4.0, 4.0, 256, 256, 0};
			DensityGeometry g = density_geometry(grid, true);
			GeoaccDensityPoints d_points{d_xy.data(), d_flags.data(), nullptr, (uint32_t) n, GEOACC_DENSITY_SAMPLES,
										 true};
			DeviceBuffer<uint32_t> d_counts(256 * 256);
			float		ms = timer.best(3, [&] {
				GEOACC_CUDA_TRY(cudaMemsetAsync(d_counts.data(), 0, d_counts.size() * 4, stream()));
				density_project_device(g, d_points, 0, (uint32_t) n, d_counts.data(), 0, 256);
			});

			printf("| 256^2, points in a 64^2 corner | %zu | - | %.2f | %.2e | %.0f GB/s | %.0f%% |\n", n, ms,
				   n / (ms * 1e-3), 17.0 * n / (ms * 1e-3) / 1e9, 100.0 * 17.0 * n / (ms * 1e-3) / bandwidth);
		}

		printf("\n| convolution | k | kernel ms | cells/s | terms/s | FP64 GFLOP/s | cell bytes/s | of copy bandwidth |\n");
		printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
		for (uint32_t side : {1024u, 4096u})
		{
			for (int size : {7, 31, 63})
			{
				/* the 4096 counts of the largest projection, or its top-left corner, with a margin of size / 2 */
				uint32_t	h = size / 2,
							grid_side = side + 2 * h;
				std::vector<uint32_t> counts((size_t) grid_side * grid_side);

				for (uint32_t r = 0; r < grid_side; r++)
					for (uint32_t c = 0; c < grid_side; c++)
						counts[(size_t) r * grid_side + c] = counts_4096[(size_t) (r % 4096) * 4096 + c % 4096];

				DeviceBuffer<uint32_t> d_counts(counts.size());
				DeviceBuffer<double> d_out((size_t) side * side);
				std::vector<double> weights((size_t) size * size);

				d_counts.upload(counts.data(), counts.size());
				geoacc_density_kernel(GEOACC_KERNEL_GAUSSIAN, size, weights.data());
				density_set_weights_device<uint32_t>(weights.data(), size);

				float		ms = timer.best(3, [&] {
					density_convolve_device(d_counts.data(), 0, grid_side, side, d_out.data(), 0, side, size);
				});
				double		cells = (double) side * side;
				double		terms = cells * size * size;

				printf("| %u^2 | %d | %.2f | %.2e | %.2e | %.0f | %.0f GB/s | %.1f%% |\n", side, size, ms,
					   cells / (ms * 1e-3), terms / (ms * 1e-3), 2.0 * terms / (ms * 1e-3) / 1e9,
					   12.0 * cells / (ms * 1e-3) / 1e9, 100.0 * 12.0 * cells / (ms * 1e-3) / bandwidth);
			}
		}
	}
	catch (const std::exception &e)
	{
		fprintf(stderr, "failed: %s\n", e.what());
		return 1;
	}
	return 0;
}
