/*
 * test_density_raster.cpp
 *
 * Density raster: hand-checked projections, the CPU twin against plain
 * references written here (every interpolated sample tested one by one, a
 * gather convolution), kernel tables, bad arguments; then the GPU against
 * the CPU twin on fresh random tracks, with memory caps that force bands of
 * rows and batches of points.
 */
#include "core_test.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace
{

const GeoaccDensityKernel all_kernels[] = {
	GEOACC_KERNEL_UNIFORM, GEOACC_KERNEL_TRIANGULAR, GEOACC_KERNEL_EPANECHNIKOV, GEOACC_KERNEL_QUARTIC,
	GEOACC_KERNEL_TRIWEIGHT, GEOACC_KERNEL_TRICUBE, GEOACC_KERNEL_GAUSSIAN, GEOACC_KERNEL_COSINE};

/* Points of one or more tracks: xy pairs and flags. */
struct Points
{
	std::vector<double> xy;
	std::vector<uint8_t> flags;

	void add(double x, double y, uint8_t f)
	{
		xy.push_back(x);
		xy.push_back(y);
		flags.push_back(f);
	}
	/* a track: its first point counts, the others count and join */
	void track(std::initializer_list<std::pair<double, double>> pts)
	{
		bool		first = true;

		for (auto p : pts)
		{
			add(p.first, p.second, first ? GEOACC_DENSITY_COUNT : GEOACC_DENSITY_COUNT | GEOACC_DENSITY_JOIN);
			first = false;
		}
	}
	uint32_t	size() const { return (uint32_t) flags.size(); }
};

std::vector<uint32_t>
project(GeoaccDevice device, const GeoaccDensityGrid &grid, const Points &p)
{
	std::vector<uint32_t> counts((size_t) grid.width * grid.height, 0);

	CHECK_OK(geoacc_density_project(device, &grid, p.xy.data(), p.flags.data(), p.size(), counts.data()));
	return counts;
}

/*
 * The definition, plainly: cell coordinates, every sample k = 1 .. n - 1 of
 * every joined segment tested on its own (no clipping).
 */
std::vector<uint32_t>
reference_project(const GeoaccDensityGrid &grid, const Points &p)
{
	std::vector<uint32_t> counts((size_t) grid.width * grid.height, 0);
	double		w = grid.width,
				h = grid.height;
	auto		u_of = [&](double x) { return (x - grid.xmin) / (grid.xmax - grid.xmin) * w; };
	auto		v_of = [&](double y) { return (grid.ymax - y) / (grid.ymax - grid.ymin) * h; };
	auto		add = [&](double u, double v) {
		if (u >= 0 && u <= w && v >= 0 && v <= h)
		{
			uint32_t	c = std::min<uint32_t>((uint32_t) std::floor(u), grid.width - 1);
			uint32_t	r = std::min<uint32_t>((uint32_t) std::floor(v), grid.height - 1);

			counts[(size_t) r * grid.width + c]++;
		}
	};

	for (uint32_t i = 0; i < p.size(); i++)
	{
		double		u1 = u_of(p.xy[2 * i]),
					v1 = v_of(p.xy[2 * i + 1]);

		if (p.flags[i] & GEOACC_DENSITY_COUNT)
			add(u1, v1);
		if (!(p.flags[i] & GEOACC_DENSITY_JOIN))
			continue;

		double		u0 = u_of(p.xy[2 * i - 2]),
					v0 = v_of(p.xy[2 * i - 1]);
		int64_t		n = std::max(std::llabs((int64_t) std::floor(u1) - (int64_t) std::floor(u0)),
								 std::llabs((int64_t) std::floor(v1) - (int64_t) std::floor(v0)));

		for (int64_t k = 1; k < n; k++)
		{
			double		t = (double) k / (double) n;

			add(u0 + t * (u1 - u0), v0 + t * (v1 - v0));
		}
	}
	return counts;
}

/* Gather form of the convolution, terms in kernel order. */
std::vector<double>
reference_convolve(uint32_t width, uint32_t height, const std::vector<uint32_t> &counts,
				   const std::vector<double> &weights, int size)
{
	std::vector<double> out((size_t) width * height);
	int			h = size / 2;

	for (int64_t r = 0; r < height; r++)
		for (int64_t c = 0; c < width; c++)
		{
			double		sum = 0.0;

			for (int i = 0; i < size; i++)
				for (int j = 0; j < size; j++)
				{
					int64_t		rr = r + i - h,
								cc = c + j - h;

					if (rr >= 0 && rr < height && cc >= 0 && cc < width)
						sum = sum + weights[i * size + j] * (double) counts[rr * width + cc];
				}
			out[r * width + c] = sum;
		}
	return out;
}

std::vector<double>
kernel_weights(GeoaccDensityKernel kernel, int size)
{
	std::vector<double> w((size_t) size * size);

	CHECK_OK(geoacc_density_kernel(kernel, size, w.data()));
	return w;
}

std::vector<double>
convolve(GeoaccDevice device, uint32_t width, uint32_t height, const std::vector<uint32_t> &counts,
		 GeoaccDensityKernel kernel, int size)
{
	std::vector<double> out((size_t) width * height, -1.0);

	CHECK_OK(geoacc_density_convolve(device, width, height, counts.data(), kernel, size, out.data()));
	return out;
}

/* Random-walk tracks around and across the extent, some far outside it. */
Points
random_tracks(const GeoaccDensityGrid &grid, uint32_t npoints)
{
	std::uniform_real_distribution<double> unit(0.0, 1.0);
	auto	   &rng = core_test::rng();
	double		sx = grid.xmax - grid.xmin,
				sy = grid.ymax - grid.ymin;
	Points		p;

	while (p.size() < npoints)
	{
		uint32_t	len = 1 + rng() % 200;
		double		x = grid.xmin - 0.2 * sx + 1.4 * sx * unit(rng);
		double		y = grid.ymin - 0.2 * sy + 1.4 * sy * unit(rng);
		/* step: from a fraction of a cell to a sizeable part of the extent */
		double		step = std::pow(10.0, -3.0 + 3.0 * unit(rng)) * std::max(sx, sy);

		for (uint32_t i = 0; i < len && p.size() < npoints; i++)
		{
			double		angle = 6.283185307179586 * unit(rng);

			if (rng() % 50 == 0)
				x += 3 * sx, y -= 2 * sy;	/* a jump far outside */
			else
				x += step * std::cos(angle), y += step * std::sin(angle);
			p.add(x, y, i == 0 ? GEOACC_DENSITY_COUNT : GEOACC_DENSITY_COUNT | GEOACC_DENSITY_JOIN);
		}
	}
	return p;
}

std::vector<uint32_t>
random_counts(size_t n)
{
	std::vector<uint32_t> c(n);

	for (auto &x : c)
		x = core_test::rng()() % 3 == 0 ? (uint32_t) (core_test::rng()() % 100000) : 0;
	return c;
}

uint64_t
total(const std::vector<uint32_t> &c)
{
	uint64_t	t = 0;

	for (uint32_t x : c)
		t += x;
	return t;
}

}								/* namespace */

TEST(density_points_and_edges)
{
	/* 4 x 4 cells of 1 x 1 over [0,4] x [0,4]; row 0 is y in (3, 4] */
	GeoaccDensityGrid grid{0, 0, 4, 4, 4, 4};
	Points		p;

	p.add(0.5, 3.5, GEOACC_DENSITY_COUNT);	/* row 0, column 0 */
	p.add(1.0, 2.0, GEOACC_DENSITY_COUNT);	/* on a corner: east and south, row 2 column 1 */
	p.add(4.0, 0.0, GEOACC_DENSITY_COUNT);	/* south-east corner of the extent: last cell */
	p.add(0.0, 4.0, GEOACC_DENSITY_COUNT);	/* north-west corner: first cell */
	p.add(4.5, 2.0, GEOACC_DENSITY_COUNT);	/* outside */
	p.add(2.5, 2.5, 0);						/* not counted */

	std::vector<uint32_t> c = project(GEOACC_DEVICE_CPU, grid, p);

	CHECK(c[0 * 4 + 0] == 2);
	CHECK(c[2 * 4 + 1] == 1);
	CHECK(c[3 * 4 + 3] == 1);
	CHECK(total(c) == 4);
}

TEST(density_diagonal_segment)
{
	/* from (0.5, 0.5) to (4.5, 4.5) on a 5 x 5 grid: n = 4, one sample per cell of the diagonal */
	GeoaccDensityGrid grid{0, 0, 5, 5, 5, 5};
	Points		p;

	p.track({{0.5, 0.5}, {4.5, 4.5}});
	std::vector<uint32_t> c = project(GEOACC_DEVICE_CPU, grid, p);

	for (int i = 0; i < 5; i++)
		CHECK(c[(4 - i) * 5 + i] == 1);
	CHECK(total(c) == 5);

	/* a shallow line: 6 columns, 2 rows apart; every column once (8-connected) */
	GeoaccDensityGrid wide{0, 0, 8, 8, 8, 8};
	Points		q;

	q.track({{0.5, 7.5}, {6.5, 5.5}});
	c = project(GEOACC_DEVICE_CPU, wide, q);
	for (int col = 0; col <= 6; col++)
	{
		uint32_t	in_column = 0;

		for (int row = 0; row < 8; row++)
			in_column += c[row * 8 + col];
		CHECK(in_column == 1);
	}
	CHECK(c[0 * 8 + 0] == 1 && c[2 * 8 + 6] == 1);
	CHECK(total(c) == 7);
}

TEST(density_adjacent_cells_not_interpolated)
{
	GeoaccDensityGrid grid{0, 0, 4, 4, 4, 4};
	Points		p;

	p.track({{0.1, 0.1}, {1.9, 1.9}, {1.95, 1.95}});
	std::vector<uint32_t> c = project(GEOACC_DEVICE_CPU, grid, p);

	CHECK(c[3 * 4 + 0] == 1);
	CHECK(c[2 * 4 + 1] == 2);
	CHECK(total(c) == 3);

	/* the same track without JOIN flags: the points only */
	Points		q;

	q.add(0.5, 0.5, GEOACC_DENSITY_COUNT);
	q.add(3.5, 3.5, GEOACC_DENSITY_COUNT);
	CHECK(total(project(GEOACC_DEVICE_CPU, grid, q)) == 2);
}

TEST(density_leaving_and_reentering)
{
	/* along row 1 of a 10 x 3 grid, out through the east border and back */
	GeoaccDensityGrid grid{0, 0, 10, 3, 10, 3};
	Points		p;

	p.track({{0.5, 1.5}, {15.5, 1.5}, {15.5, 1.7}, {4.5, 1.7}});
	std::vector<uint32_t> c = project(GEOACC_DEVICE_CPU, grid, p);

	/* outbound: columns 0..9 once each; inbound: columns 4..9 once each */
	for (int col = 0; col < 10; col++)
		CHECK(c[1 * 10 + col] == (col >= 4 ? 2u : 1u));
	CHECK(total(c) == 16);

	/* a segment crossing the extent with both ends outside */
	Points		q;

	q.track({{-100.5, 0.5}, {109.5, 0.5}});
	c = project(GEOACC_DEVICE_CPU, grid, q);
	for (int col = 0; col < 10; col++)
		CHECK(c[2 * 10 + col] == 1);
	CHECK(total(c) == 10);
}

TEST(density_same_cell_twice)
{
	GeoaccDensityGrid grid{0, 0, 4, 4, 4, 4};
	Points		p;

	/* through cell (row 1, column 1) twice, with a detour between */
	p.track({{1.5, 2.5}, {3.5, 2.5}, {3.5, 0.5}, {1.5, 0.5}, {1.5, 2.5}});
	std::vector<uint32_t> c = project(GEOACC_DEVICE_CPU, grid, p);

	CHECK(c[1 * 4 + 1] == 2);
	CHECK(c[1 * 4 + 2] == 1);
	CHECK(c[1 * 4 + 3] == 1);
	CHECK(c[2 * 4 + 3] == 1);
	CHECK(c[3 * 4 + 1] == 1);
	CHECK(total(c) == 5 + 4);	/* 5 points, one interpolated sample on each of the 4 segments */
}

TEST(density_cpu_matches_reference)
{
	GeoaccDensityGrid grids[] = {{0, 0, 1000, 1000, 100, 100}, {-5, 3, 17, 4, 333, 17},
								 {500000, 4000000, 560000, 4050000, 64, 257}};

	for (const auto &grid : grids)
	{
		Points		p = random_tracks(grid, 20000);

		CHECK(project(GEOACC_DEVICE_CPU, grid, p) == reference_project(grid, p));
	}
}

TEST(density_kernels_sum_to_one)
{
	for (GeoaccDensityKernel k : all_kernels)
		for (int size = 1; size <= GEOACC_DENSITY_MAX_KERNEL_SIZE; size += 2)
		{
			std::vector<double> w = kernel_weights(k, size);
			double		sum = 0.0;
			int			h = size / 2;

			for (double x : w)
			{
				sum += x;
				CHECK(x >= 0.0);
			}
			CHECK(std::fabs(sum - 1.0) < 1e-12);
			/* symmetric under reflections and the swap of axes; the centre is the largest */
			for (int i = 0; i < size; i++)
				for (int j = 0; j < size; j++)
				{
					CHECK(w[i * size + j] == w[(size - 1 - i) * size + j]);
					CHECK(w[i * size + j] == w[j * size + i]);
					CHECK(w[i * size + j] <= w[h * size + h]);
				}
		}
}

TEST(density_kernel_values)
{
	CHECK(kernel_weights(GEOACC_KERNEL_GAUSSIAN, 1)[0] == 1.0);

	/* size 3: bandwidth 2, q = 0 at the centre, 1/4 at the sides, 1/2 at the corners */
	std::vector<double> e = kernel_weights(GEOACC_KERNEL_EPANECHNIKOV, 3);

	CHECK(std::fabs(e[4] - 1.0 / 6) < 1e-15 && std::fabs(e[1] - 0.75 / 6) < 1e-15 && std::fabs(e[0] - 0.5 / 6) < 1e-15);
	for (double x : kernel_weights(GEOACC_KERNEL_UNIFORM, 3))
		CHECK(std::fabs(x - 1.0 / 9) < 1e-15);

	/* size 9: bandwidth 5; (3, 4) is at u = 1, inside the uniform disc only */
	std::vector<double> u = kernel_weights(GEOACC_KERNEL_UNIFORM, 9);
	std::vector<double> t = kernel_weights(GEOACC_KERNEL_TRIANGULAR, 9);

	CHECK(u[(4 + 3) * 9 + (4 + 4)] > 0 && u[8 * 9 + 8] == 0.0);
	CHECK(t[(4 + 3) * 9 + (4 + 4)] == 0.0 && t[4 * 9 + 8] > 0);

	/* gaussian: sigma = b / 3, so the side cell of size 3 weighs exp(-4.5 / 4) of the centre */
	std::vector<double> g = kernel_weights(GEOACC_KERNEL_GAUSSIAN, 3);

	CHECK(std::fabs(g[1] / g[4] - std::exp(-1.125)) < 1e-14);
	CHECK(std::fabs(g[0] / g[4] - std::exp(-2.25)) < 1e-14);
}

TEST(density_cpu_convolution_matches_gather)
{
	uint32_t	dims[][2] = {{1, 1}, {7, 5}, {40, 33}, {100, 3}};

	for (auto d : dims)
	{
		std::vector<uint32_t> counts = random_counts((size_t) d[0] * d[1]);

		for (GeoaccDensityKernel k : all_kernels)
			for (int size : {1, 3, 7, 15})
				CHECK(convolve(GEOACC_DEVICE_CPU, d[0], d[1], counts, k, size) ==
					  reference_convolve(d[0], d[1], counts, kernel_weights(k, size), size));
	}
}

TEST(density_mass_kept_away_from_edges)
{
	/* one count in the middle: the output sums to 1; at a corner, about a quarter is lost */
	std::vector<uint32_t> counts(81 * 81, 0);

	counts[40 * 81 + 40] = 1000;
	for (GeoaccDensityKernel k : all_kernels)
	{
		std::vector<double> out = convolve(GEOACC_DEVICE_CPU, 81, 81, counts, k, 31);
		double		sum = 0.0;

		for (double x : out)
			sum += x;
		CHECK(std::fabs(sum - 1000.0) < 1e-9);
	}
	std::fill(counts.begin(), counts.end(), 0);
	counts[0] = 1000;

	std::vector<double> out = convolve(GEOACC_DEVICE_CPU, 81, 81, counts, GEOACC_KERNEL_UNIFORM, 31);
	double		sum = 0.0;

	for (double x : out)
		sum += x;
	CHECK(sum > 250.0 && sum < 300.0);
}

TEST(density_bad_arguments)
{
	GeoaccDensityGrid grid{0, 0, 4, 4, 4, 4};
	GeoaccDensityGrid flat{0, 0, 4, 0, 4, 4};
	GeoaccDensityGrid no_cells{0, 0, 4, 4, 0, 4};
	double		xy[] = {1, 1};
	uint8_t		join[] = {GEOACC_DENSITY_JOIN};
	uint32_t	counts[16] = {0};
	double		w[64 * 64];

	CHECK(geoacc_density_project(GEOACC_DEVICE_CPU, &grid, xy, join, 1, counts) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_project(GEOACC_DEVICE_CPU, &flat, xy, join, 0, counts) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_project(GEOACC_DEVICE_CPU, &no_cells, xy, join, 0, counts) == GEOACC_ERR_INVALID_ARGUMENT);
	for (int size : {0, 2, 65, -1})
		CHECK(geoacc_density_kernel(GEOACC_KERNEL_GAUSSIAN, size, w) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_kernel((GeoaccDensityKernel) 8, 3, w) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_convolve(GEOACC_DEVICE_CPU, 0, 4, counts, GEOACC_KERNEL_GAUSSIAN, 3, w) ==
		  GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_status_message()[0] != '\0');
}

TEST(gpu_density_projection_matches_cpu)
{
	REQUIRE_GPU();
	GeoaccDensityGrid grids[] = {{0, 0, 1000, 1000, 1024, 1024}, {-5, 3, 17, 4, 333, 17},
								 {500000, 4000000, 560000, 4050000, 4096, 2048}};
	uint32_t	sizes[] = {1, 2, 1000, 1100000};

	for (const auto &grid : grids)
		for (uint32_t n : sizes)
		{
			Points		p = random_tracks(grid, n);
			std::vector<uint32_t> base = random_counts((size_t) grid.width * grid.height);
			std::vector<uint32_t> cpu = base, gpu = base;

			CHECK_OK(geoacc_density_project(GEOACC_DEVICE_CPU, &grid, p.xy.data(), p.flags.data(), n, cpu.data()));
			CHECK_OK(geoacc_density_project(GEOACC_DEVICE_GPU, &grid, p.xy.data(), p.flags.data(), n, gpu.data()));
			CHECK(cpu == gpu);
		}
}

TEST(gpu_density_projection_in_bands_and_batches)
{
	REQUIRE_GPU();
	GeoaccDensityGrid grid{0, 0, 1000, 1000, 1000, 700};
	Points		p = random_tracks(grid, 100000);
	std::vector<uint32_t> cpu = project(GEOACC_DEVICE_CPU, grid, p);

	/* caps below the raster (bands) and below the points (batches) */
	for (uint64_t cap : {4000000ull, 1000000ull, 200000ull, 60000ull})
	{
		geoacc_gpu_set_memory_limit(cap);
		CHECK(project(GEOACC_DEVICE_GPU, grid, p) == cpu);
	}
	geoacc_gpu_set_memory_limit(0);
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

TEST(gpu_density_convolution_matches_cpu)
{
	REQUIRE_GPU();
	uint32_t	dims[][2] = {{1, 1}, {31, 9}, {333, 257}, {1024, 1024}};

	for (auto d : dims)
	{
		std::vector<uint32_t> counts = random_counts((size_t) d[0] * d[1]);

		for (GeoaccDensityKernel k : all_kernels)
			for (int size : {1, 3, 7, 31, 63})
			{
				if (d[0] == 1024 && size > 7 && k != GEOACC_KERNEL_GAUSSIAN)
					continue;	/* the CPU twin would take long */
				CHECK(convolve(GEOACC_DEVICE_GPU, d[0], d[1], counts, k, size) ==
					  convolve(GEOACC_DEVICE_CPU, d[0], d[1], counts, k, size));
			}
	}
}

TEST(gpu_density_convolution_in_bands)
{
	REQUIRE_GPU();
	uint32_t	width = 500,
				height = 411;
	std::vector<uint32_t> counts = random_counts((size_t) width * height);
	std::vector<double> cpu = convolve(GEOACC_DEVICE_CPU, width, height, counts, GEOACC_KERNEL_QUARTIC, 31);

	for (uint64_t cap : {1000000ull, 200000ull, 100000ull})
	{
		geoacc_gpu_set_memory_limit(cap);
		CHECK(convolve(GEOACC_DEVICE_GPU, width, height, counts, GEOACC_KERNEL_QUARTIC, 31) == cpu);
	}
	geoacc_gpu_set_memory_limit(0);
	CHECK(geoacc_gpu_memory_in_use() == 0);
}
