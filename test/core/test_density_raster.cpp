/*
 * test_density_raster.cpp
 *
 * Density raster: hand-checked projections (counts, weighted samples, the
 * time mode), the CPU twin against plain references written here (every
 * sample tested one by one, fixed-point amounts, a gather convolution),
 * kernel tables, the margin (tiles of one grid equal the crop of the whole,
 * bit for bit), bad arguments; then the GPU against the CPU twin on fresh
 * random tracks, with memory caps that force bands of rows and batches of
 * points.
 */
#include "core_test.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace
{

const GeoaccDensityKernel all_kernels[] = {
	GEOACC_KERNEL_UNIFORM, GEOACC_KERNEL_TRIANGULAR, GEOACC_KERNEL_EPANECHNIKOV, GEOACC_KERNEL_QUARTIC,
	GEOACC_KERNEL_TRIWEIGHT, GEOACC_KERNEL_TRICUBE, GEOACC_KERNEL_GAUSSIAN, GEOACC_KERNEL_COSINE};

const double fixed_one = 4294967296.0;

/* Points of one or more tracks: xy pairs, flags and per-point values. */
struct Points
{
	std::vector<double> xy;
	std::vector<uint8_t> flags;
	std::vector<double> values;

	void add(double x, double y, uint8_t f, double value = 1.0)
	{
		xy.push_back(x);
		xy.push_back(y);
		flags.push_back(f);
		values.push_back(value);
	}
	/* a track: its first point counts, the others count and join */
	void track(std::initializer_list<std::pair<double, double>> pts, double value = 1.0)
	{
		bool		first = true;

		for (auto p : pts)
		{
			add(p.first, p.second, first ? GEOACC_DENSITY_COUNT : GEOACC_DENSITY_COUNT | GEOACC_DENSITY_JOIN,
				value);
			first = false;
		}
	}
	uint32_t	size() const { return (uint32_t) flags.size(); }
	GeoaccDensityPoints core(GeoaccDensityMode mode, bool interpolate, bool with_values) const
	{
		return GeoaccDensityPoints{xy.data(), flags.data(), with_values ? values.data() : nullptr, size(), mode,
								   interpolate};
	}
};

size_t
grid_cells(const GeoaccDensityGrid &g)
{
	return (size_t) (g.width + 2 * g.margin) * (g.height + 2 * g.margin);
}

/* A grid's cells in tiles (GeoaccDensityTiles), made with calloc; from and to one row-major array. */
template <class T>
struct Tiles
{
	GeoaccDensityGrid grid;
	std::vector<void *> tiles;
	GeoaccDensityTiles core;

	static void *allocate(void *, size_t bytes) { return calloc(1, bytes); }

	explicit Tiles(const GeoaccDensityGrid &g, const std::vector<T> &cells = {}) : grid(g)
	{
		uint32_t	columns = g.width + 2 * g.margin;
		uint32_t	rows = g.height + 2 * g.margin;

		core.tile_columns = (columns + GEOACC_DENSITY_TILE - 1) / GEOACC_DENSITY_TILE;
		core.tile_rows = (rows + GEOACC_DENSITY_TILE - 1) / GEOACC_DENSITY_TILE;
		tiles.assign((size_t) core.tile_columns * core.tile_rows, nullptr);
		core.tiles = tiles.data();
		core.allocate = allocate;
		core.context = nullptr;
		for (size_t i = 0; i < cells.size(); i++)
			if (cells[i] != 0)
				*cell(i / columns, i % columns, true) = cells[i];
	}
	~Tiles()
	{
		for (void *t : tiles)
			free(t);
	}
	Tiles(const Tiles &) = delete;
	Tiles &operator=(const Tiles &) = delete;

	T		   *cell(uint32_t row, uint32_t column, bool make)
	{
		void	  *&t = tiles[(size_t) (row / GEOACC_DENSITY_TILE) * core.tile_columns + column / GEOACC_DENSITY_TILE];

		if (t == nullptr && make)
			t = allocate(nullptr, sizeof(T) * GEOACC_DENSITY_TILE * GEOACC_DENSITY_TILE);
		return t == nullptr ? nullptr : static_cast<T *>(t) + (row % GEOACC_DENSITY_TILE) * GEOACC_DENSITY_TILE
			+ column % GEOACC_DENSITY_TILE;
	}
	std::vector<T> cells()
	{
		uint32_t	columns = grid.width + 2 * grid.margin;
		std::vector<T> out(grid_cells(grid), 0);

		for (size_t i = 0; i < out.size(); i++)
		{
			T		   *c = cell(i / columns, i % columns, false);

			out[i] = c == nullptr ? 0 : *c;
		}
		return out;
	}
	size_t		made() const { return tiles.size() - std::count(tiles.begin(), tiles.end(), nullptr); }
};

/* cells += the projection of pts: counts (uint32_t) or sums (int64_t), through tiles, from and to row-major arrays */
template <class T>
void
project_into(GeoaccDevice device, const GeoaccDensityGrid &grid, const GeoaccDensityPoints &pts, std::vector<T> &cells)
{
	Tiles<T>	t(grid, cells);

	if constexpr (std::is_same_v<T, int64_t>)
		CHECK_OK(geoacc_density_project_values(device, &grid, &pts, &t.core));
	else
		CHECK_OK(geoacc_density_project(device, &grid, &pts, &t.core));
	cells = t.cells();
}

std::vector<uint32_t>
project(GeoaccDevice device, const GeoaccDensityGrid &grid, const Points &p, bool interpolate = true)
{
	std::vector<uint32_t> counts(grid_cells(grid), 0);

	project_into(device, grid, p.core(GEOACC_DENSITY_SAMPLES, interpolate, false), counts);
	return counts;
}

std::vector<int64_t>
project_values(GeoaccDevice device, const GeoaccDensityGrid &grid, const Points &p, GeoaccDensityMode mode,
			   bool interpolate = true)
{
	std::vector<int64_t> sums(grid_cells(grid), 0);

	project_into(device, grid, p.core(mode, interpolate, true), sums);
	return sums;
}

/* The raster's own cells (without the margin) of a grid's cells. */
template <class T>
std::vector<T>
raster_cells(const GeoaccDensityGrid &g, const std::vector<T> &cells)
{
	std::vector<T> out;
	uint32_t	pitch = g.width + 2 * g.margin;

	for (uint32_t r = 0; r < g.height; r++)
		for (uint32_t c = 0; c < g.width; c++)
			out.push_back(cells[(size_t) (r + g.margin) * pitch + c + g.margin]);
	return out;
}

/*
 * The definition, plainly: cell coordinates with the cell's size, every
 * sample k = 1 .. n - 1 of every segment tested on its own (no clipping),
 * its cell floor(u0) + floor(frac(u0) + k / n (u1 - u0)); amounts 1, the
 * point's value in fixed point, or for the time mode the segment's value
 * over 2n half shares.  Works on int64 cells; counts compare after a cast.
 */
std::vector<int64_t>
reference_project(const GeoaccDensityGrid &grid, const Points &p, bool with_values, GeoaccDensityMode mode,
				  bool interpolate)
{
	int64_t		m = grid.margin;
	int64_t		pitch = grid.width + 2 * m;
	std::vector<int64_t> cells(grid_cells(grid), 0);
	double		sx = (grid.xmax - grid.xmin) / grid.width,
				sy = (grid.ymax - grid.ymin) / grid.height;
	auto		u_of = [&](double x) { return (x - grid.xmin) / sx; };
	auto		v_of = [&](double y) { return (grid.ymax - y) / sy; };
	auto		add_cell = [&](double cu, double cv, int64_t amount) {
		if (cu >= -m && cu < (double) grid.width + m && cv >= -m && cv < (double) grid.height + m)
			cells[((int64_t) cv + m) * pitch + (int64_t) cu + m] += amount;
	};

	for (uint32_t i = 0; i < p.size(); i++)
	{
		double		u1 = u_of(p.xy[2 * i]),
					v1 = v_of(p.xy[2 * i + 1]);
		bool		joined = (p.flags[i] & GEOACC_DENSITY_JOIN) != 0;
		double		u0 = joined ? u_of(p.xy[2 * i - 2]) : 0,
					v0 = joined ? v_of(p.xy[2 * i - 1]) : 0;
		double		n = joined ? std::max(std::fabs(std::floor(u1) - std::floor(u0)),
										  std::fabs(std::floor(v1) - std::floor(v0))) : 0;
		bool		spread = interpolate && n >= 2 && n <= 4503599627370496.0;
		int64_t		amount = with_values ? (int64_t) std::floor(p.values[i] * fixed_one + 0.5) : 1;
		int64_t		between = amount;

		if (mode == GEOACC_DENSITY_TIME)
		{
			if (!joined)
				continue;

			int64_t		half = (int64_t) std::floor(p.values[i] * fixed_one / (spread ? 2 * n : 2.0) + 0.5);

			add_cell(std::floor(u0), std::floor(v0), half);
			add_cell(std::floor(u1), std::floor(v1), half);
			between = 2 * half;
		}
		else if (p.flags[i] & GEOACC_DENSITY_COUNT)
			add_cell(std::floor(u1), std::floor(v1), amount);
		if (!spread)
			continue;
		for (double k = 1; k < n; k++)
		{
			double		t = k / n;

			add_cell(std::floor(u0) + std::floor((u0 - std::floor(u0)) + t * (u1 - u0)),
					 std::floor(v0) + std::floor((v0 - std::floor(v0)) + t * (v1 - v0)), between);
		}
	}
	return cells;
}

std::vector<uint32_t>
as_counts(const std::vector<int64_t> &cells)
{
	return std::vector<uint32_t>(cells.begin(), cells.end());
}

/* Gather form of the convolution over a grid with margin size / 2, terms in kernel order. */
template <class T>
std::vector<double>
reference_convolve(uint32_t width, uint32_t height, const std::vector<T> &cells, const std::vector<double> &weights,
				   int size)
{
	std::vector<double> out((size_t) width * height);
	int64_t		pitch = (int64_t) width + size - 1;

	for (int64_t r = 0; r < height; r++)
		for (int64_t c = 0; c < width; c++)
		{
			double		sum = 0.0;

			for (int i = 0; i < size; i++)
				for (int j = 0; j < size; j++)
				{
					T			cell = cells[(r + i) * pitch + c + j];
					double		value = sizeof(T) == 8 ? (double) cell / fixed_one : (double) cell;

					sum = sum + weights[i * size + j] * value;
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

std::vector<double>
convolve(GeoaccDevice device, uint32_t width, uint32_t height, const std::vector<int64_t> &sums,
		 GeoaccDensityKernel kernel, int size)
{
	std::vector<double> out((size_t) width * height, -1.0);

	CHECK_OK(geoacc_density_convolve_sums(device, width, height, sums.data(), kernel, size, out.data()));
	return out;
}

/*
 * Random-walk tracks around and across the extent, some far outside it,
 * with values (weights or hours) from 0 to 100.  With `exact`, coordinates
 * are multiples of 2^-16 below 2^20 in size, so that differences of
 * coordinates are exact.
 */
Points
random_tracks(const GeoaccDensityGrid &grid, uint32_t npoints, bool exact = false)
{
	std::uniform_real_distribution<double> unit(0.0, 1.0);
	auto	   &rng = core_test::rng();
	double		sx = grid.xmax - grid.xmin,
				sy = grid.ymax - grid.ymin;
	auto		snap = [&](double x) { return exact ? std::round(x * 65536.0) / 65536.0 : x; };
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
			p.add(snap(x), snap(y), i == 0 ? GEOACC_DENSITY_COUNT : GEOACC_DENSITY_COUNT | GEOACC_DENSITY_JOIN,
				  rng() % 10 == 0 ? 0.0 : 100.0 * unit(rng));
		}
	}
	return p;
}

template <class T>
std::vector<T>
random_cells(size_t n)
{
	std::vector<T> c(n);

	for (auto &x : c)
		x = core_test::rng()() % 3 == 0 ? (T) (core_test::rng()() % 100000) << (sizeof(T) == 8 ? 20 : 0) : 0;
	return c;
}

template <class T>
int64_t
total(const std::vector<T> &c)
{
	int64_t		t = 0;

	for (T x : c)
		t += x;
	return t;
}

}								/* namespace */

TEST(density_points_and_edges)
{
	/* 4 x 4 cells of 1 x 1 over [0,4] x [0,4]; row 0 is y in (3, 4] */
	GeoaccDensityGrid grid{0, 0, 4, 4, 4, 4, 0};
	Points		p;

	p.add(0.5, 3.5, GEOACC_DENSITY_COUNT);	/* row 0, column 0 */
	p.add(1.0, 2.0, GEOACC_DENSITY_COUNT);	/* on a corner: east and south, row 2 column 1 */
	p.add(4.0, 0.0, GEOACC_DENSITY_COUNT);	/* south-east corner of the extent: outside, as in PostGIS */
	p.add(3.9, 0.1, GEOACC_DENSITY_COUNT);	/* the last cell */
	p.add(0.0, 4.0, GEOACC_DENSITY_COUNT);	/* north-west corner: first cell */
	p.add(4.5, 2.0, GEOACC_DENSITY_COUNT);	/* outside */
	p.add(2.5, 2.5, 0);						/* not counted */

	std::vector<uint32_t> c = project(GEOACC_DEVICE_CPU, grid, p);

	CHECK(c[0 * 4 + 0] == 2);
	CHECK(c[2 * 4 + 1] == 1);
	CHECK(c[3 * 4 + 3] == 1);
	CHECK(total(c) == 4);

	/* with a margin of 1 cell the points just outside count there, around the same raster */
	GeoaccDensityGrid margin1{0, 0, 4, 4, 4, 4, 1};
	std::vector<uint32_t> m = project(GEOACC_DEVICE_CPU, margin1, p);

	CHECK(raster_cells(margin1, m) == c);
	CHECK(m[(4 + 1) * 6 + 4 + 1] == 1);	/* (4, 0): row 4, column 4 */
	CHECK(m[(2 + 1) * 6 + 4 + 1] == 1);	/* (4.5, 2): row 2, column 4 */
	CHECK(total(m) == 6);
}

TEST(density_diagonal_segment)
{
	/* from (0.5, 0.5) to (4.5, 4.5) on a 5 x 5 grid: n = 4, one sample per cell of the diagonal */
	GeoaccDensityGrid grid{0, 0, 5, 5, 5, 5, 0};
	Points		p;

	p.track({{0.5, 0.5}, {4.5, 4.5}});
	std::vector<uint32_t> c = project(GEOACC_DEVICE_CPU, grid, p);

	for (int i = 0; i < 5; i++)
		CHECK(c[(4 - i) * 5 + i] == 1);
	CHECK(total(c) == 5);
	/* without interpolation: the two points */
	CHECK(total(project(GEOACC_DEVICE_CPU, grid, p, false)) == 2);

	/* a shallow line: 6 columns, 2 rows apart; every column once (8-connected) */
	GeoaccDensityGrid wide{0, 0, 8, 8, 8, 8, 0};
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
	GeoaccDensityGrid grid{0, 0, 4, 4, 4, 4, 0};
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
	GeoaccDensityGrid grid{0, 0, 10, 3, 10, 3, 0};
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
	/* with a margin of 3, three more samples on each side */
	GeoaccDensityGrid margin3{0, 0, 10, 3, 10, 3, 3};

	CHECK(total(project(GEOACC_DEVICE_CPU, margin3, q)) == 16);
}

TEST(density_same_cell_twice)
{
	GeoaccDensityGrid grid{0, 0, 4, 4, 4, 4, 0};
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

TEST(density_weighted_samples)
{
	GeoaccDensityGrid grid{0, 0, 5, 5, 5, 5, 0};
	Points		p;

	/* weight 1: the counts, in units of 2^-32 */
	p.track({{0.5, 0.5}, {4.5, 4.5}, {4.6, 4.4}});
	std::vector<uint32_t> counts = project(GEOACC_DEVICE_CPU, grid, p);
	std::vector<int64_t> sums = project_values(GEOACC_DEVICE_CPU, grid, p, GEOACC_DENSITY_SAMPLES);

	for (size_t i = 0; i < counts.size(); i++)
		CHECK(sums[i] == (int64_t) counts[i] << 32);

	/* weight 2.5 on a second track through the same cells */
	Points		q = p;

	q.track({{0.5, 0.5}, {4.5, 4.5}}, 2.5);
	sums = project_values(GEOACC_DEVICE_CPU, grid, q, GEOACC_DENSITY_SAMPLES);
	CHECK(sums[4 * 5 + 0] == (int64_t) (3.5 * fixed_one));
	CHECK(sums[0 * 5 + 4] == (int64_t) (4.5 * fixed_one));	/* two points of weight 1, one of 2.5 */
	CHECK(sums[2 * 5 + 2] == (int64_t) (3.5 * fixed_one));
	CHECK(total(sums) == (int64_t) ((6 + 5 * 2.5) * fixed_one));
}

TEST(density_time_mode)
{
	GeoaccDensityGrid grid{0, 0, 8, 2, 8, 2, 0};
	Points		p;

	/* 8 hours over a segment 4 cells long: 1 h at each end, 2 h at each of the 3 cells between */
	p.track({{0.5, 0.5}, {4.5, 0.5}}, 8.0);
	std::vector<int64_t> s = project_values(GEOACC_DEVICE_CPU, grid, p, GEOACC_DENSITY_TIME);

	CHECK(s[1 * 8 + 0] == (int64_t) fixed_one && s[1 * 8 + 4] == (int64_t) fixed_one);
	for (int c = 1; c <= 3; c++)
		CHECK(s[1 * 8 + c] == 2 * (int64_t) fixed_one);
	CHECK(total(s) == 8 * (int64_t) fixed_one);

	/* without interpolation: half at each end */
	s = project_values(GEOACC_DEVICE_CPU, grid, p, GEOACC_DENSITY_TIME, false);
	CHECK(s[1 * 8 + 0] == 4 * (int64_t) fixed_one && s[1 * 8 + 4] == 4 * (int64_t) fixed_one);
	CHECK(total(s) == 8 * (int64_t) fixed_one);

	/* a vessel lying still: all its time in one cell; the first point (no segment) adds nothing */
	Points		q;

	q.track({{6.5, 1.5}, {6.6, 1.5}, {6.7, 1.6}}, 3.0);
	q.values[0] = 100.0;
	s = project_values(GEOACC_DEVICE_CPU, grid, q, GEOACC_DENSITY_TIME);
	CHECK(s[0 * 8 + 6] == 6 * (int64_t) fixed_one);
	CHECK(total(s) == 6 * (int64_t) fixed_one);

	/* half of the time of a segment leaving the extent stays inside */
	Points		r;

	r.track({{7.5, 0.5}, {11.5, 0.5}}, 8.0);
	s = project_values(GEOACC_DEVICE_CPU, grid, r, GEOACC_DENSITY_TIME);
	CHECK(total(s) == (int64_t) fixed_one);
}

TEST(density_cpu_matches_reference)
{
	GeoaccDensityGrid grids[] = {{0, 0, 1000, 1000, 100, 100, 0}, {-5, 3, 17, 4, 333, 17, 3},
								 {500000, 4000000, 560000, 4050000, 64, 257, 31}};

	for (const auto &grid : grids)
	{
		Points		p = random_tracks(grid, 20000);

		for (bool interpolate : {true, false})
		{
			CHECK(project(GEOACC_DEVICE_CPU, grid, p, interpolate) ==
				  as_counts(reference_project(grid, p, false, GEOACC_DENSITY_SAMPLES, interpolate)));
			for (GeoaccDensityMode mode : {GEOACC_DENSITY_SAMPLES, GEOACC_DENSITY_TIME})
				CHECK(project_values(GEOACC_DEVICE_CPU, grid, p, mode, interpolate) ==
					  reference_project(grid, p, true, mode, interpolate));
		}
	}
}

/*
 * Seamless tiles: the 2 x 2 tiles of a grid, each projected and convolved
 * on its own with its margin, equal the crop of the whole raster, cell for
 * cell and bit for bit.  The cells are powers of two and the coordinates
 * multiples of 2^-16, so that cell coordinates are exact.
 */
void
check_tiles_equal_whole(GeoaccDevice device)
{
	GeoaccDensityGrid whole{-4096, 1024, 4096, 9216, 128, 256, 0};	/* cells of 64 x 32 */
	Points		p = random_tracks(whole, 30000, true);

	for (int size : {1, 7, 31})
	{
		uint32_t	h = size / 2;

		whole.margin = h;

		std::vector<double> counts_whole = convolve(device, whole.width, whole.height,
													project(device, whole, p), GEOACC_KERNEL_GAUSSIAN, size);
		std::vector<double> time_whole = convolve(device, whole.width, whole.height,
												  project_values(device, whole, p, GEOACC_DENSITY_TIME),
												  GEOACC_KERNEL_QUARTIC, size);

		for (uint32_t tr = 0; tr < 2; tr++)
			for (uint32_t tc = 0; tc < 2; tc++)
			{
				double		xmid = 0,
							ymid = 5120;
				GeoaccDensityGrid tile{tc == 0 ? whole.xmin : xmid, tr == 0 ? ymid : whole.ymin,
									   tc == 0 ? xmid : whole.xmax, tr == 0 ? whole.ymax : ymid,
									   whole.width / 2, whole.height / 2, h};
				std::vector<double> counts = convolve(device, tile.width, tile.height, project(device, tile, p),
													  GEOACC_KERNEL_GAUSSIAN, size);
				std::vector<double> time = convolve(device, tile.width, tile.height,
													project_values(device, tile, p, GEOACC_DENSITY_TIME),
													GEOACC_KERNEL_QUARTIC, size);
				bool		same = true;

				for (uint32_t r = 0; r < tile.height; r++)
					for (uint32_t c = 0; c < tile.width; c++)
					{
						size_t		w = (size_t) (tr * tile.height + r) * whole.width + tc * tile.width + c;
						size_t		t = (size_t) r * tile.width + c;

						same = same && counts[t] == counts_whole[w] && time[t] == time_whole[w];
					}
				CHECK(same);
			}
	}
}

TEST(density_tiles_equal_the_whole)
{
	check_tiles_equal_whole(GEOACC_DEVICE_CPU);

	/* without the margin, mass near the tiles' borders is lost: the check above is not trivial */
	GeoaccDensityGrid whole{0, 0, 64, 64, 64, 64, 0};
	GeoaccDensityGrid west{0, 0, 32, 64, 32, 64, 0};
	Points		p;

	p.add(32.5, 32.5, GEOACC_DENSITY_COUNT);	/* row 31, just east of the tiles' shared border */
	std::vector<double> a = convolve(GEOACC_DEVICE_CPU, 64, 64, project(GEOACC_DEVICE_CPU, whole, p),
									 GEOACC_KERNEL_UNIFORM, 1);
	std::vector<double> b = convolve(GEOACC_DEVICE_CPU, 32, 64, project(GEOACC_DEVICE_CPU, west, p),
									 GEOACC_KERNEL_UNIFORM, 1);

	CHECK(a[31 * 64 + 32] == 1.0 && total(project(GEOACC_DEVICE_CPU, west, p)) == 0);
	whole.margin = west.margin = 2;
	a = convolve(GEOACC_DEVICE_CPU, 64, 64, project(GEOACC_DEVICE_CPU, whole, p), GEOACC_KERNEL_UNIFORM, 5);
	b = convolve(GEOACC_DEVICE_CPU, 32, 64, project(GEOACC_DEVICE_CPU, west, p), GEOACC_KERNEL_UNIFORM, 5);
	CHECK(b[31 * 32 + 31] > 0 && b[31 * 32 + 31] == a[31 * 64 + 31]);
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
		for (GeoaccDensityKernel k : all_kernels)
			for (int size : {1, 3, 7, 15})
			{
				size_t		n = (size_t) (d[0] + size - 1) * (d[1] + size - 1);
				std::vector<uint32_t> counts = random_cells<uint32_t>(n);
				std::vector<int64_t> sums = random_cells<int64_t>(n);

				CHECK(convolve(GEOACC_DEVICE_CPU, d[0], d[1], counts, k, size) ==
					  reference_convolve(d[0], d[1], counts, kernel_weights(k, size), size));
				CHECK(convolve(GEOACC_DEVICE_CPU, d[0], d[1], sums, k, size) ==
					  reference_convolve(d[0], d[1], sums, kernel_weights(k, size), size));
			}
}

int			convolve_polls_left;

int
interrupt_convolve_after_polls()
{
	return --convolve_polls_left < 0;
}

/*
 * In bands of rows on 1, 3 and 7 threads (geoacc.cpu_threads) the same bits
 * as the definition, with grids whose bands split (a quarter of the kernel
 * a band at least); a cancel while the threads work is an ERROR.
 */
TEST(density_cpu_convolution_threads_same_bits)
{
	uint32_t	dims[][2] = {{300, 257}, {64, 200}, {1, 90}};

	for (auto d : dims)
		for (int size : {5, 31, 63})
		{
			size_t		n = (size_t) (d[0] + size - 1) * (d[1] + size - 1);
			std::vector<uint32_t> counts = random_cells<uint32_t>(n);
			std::vector<int64_t> sums = random_cells<int64_t>(n);
			const std::vector<double> want =
				reference_convolve(d[0], d[1], counts, kernel_weights(GEOACC_KERNEL_GAUSSIAN, size), size);
			const std::vector<double> want_sums =
				reference_convolve(d[0], d[1], sums, kernel_weights(GEOACC_KERNEL_QUARTIC, size), size);

			for (int threads : {1, 3, 7})
			{
				geoacc_cpu_set_threads(threads);
				CHECK(convolve(GEOACC_DEVICE_CPU, d[0], d[1], counts, GEOACC_KERNEL_GAUSSIAN, size) == want);
				CHECK(convolve(GEOACC_DEVICE_CPU, d[0], d[1], sums, GEOACC_KERNEL_QUARTIC, size) == want_sums);
			}
			geoacc_cpu_set_threads(1);
		}

	/* cancelled at the calling thread's second poll, the other threads at work */
	std::vector<uint32_t> counts = random_cells<uint32_t>((size_t) (400 + 62) * (300 + 62));
	std::vector<double> out((size_t) 400 * 300);

	geoacc_cpu_set_threads(4);
	convolve_polls_left = 1;
	geoacc_set_interrupt_callback(interrupt_convolve_after_polls);
	GeoaccStatus s = geoacc_density_convolve(GEOACC_DEVICE_CPU, 400, 300, counts.data(), GEOACC_KERNEL_GAUSSIAN, 63,
											 out.data());

	geoacc_set_interrupt_callback(nullptr);
	geoacc_cpu_set_threads(1);
	CHECK(s == GEOACC_ERR_CANCELLED);
}

TEST(density_mass_with_margin)
{
	/* one count in the middle: the output sums to it */
	uint32_t	side = 81 + 30;
	std::vector<uint32_t> counts((size_t) side * side, 0);

	counts[(size_t) (40 + 15) * side + 40 + 15] = 1000;
	for (GeoaccDensityKernel k : all_kernels)
	{
		double		sum = 0.0;

		for (double x : convolve(GEOACC_DEVICE_CPU, 81, 81, counts, k, 31))
			sum += x;
		CHECK(std::fabs(sum - 1000.0) < 1e-9);
	}
	/* in the margin's corner cell, beyond the raster: a little of it comes in at the raster's corner */
	std::fill(counts.begin(), counts.end(), 0);
	counts[0] = 1000;

	double		sum = 0.0;
	std::vector<double> out = convolve(GEOACC_DEVICE_CPU, 81, 81, counts, GEOACC_KERNEL_GAUSSIAN, 31);

	for (double x : out)
		sum += x;
	CHECK(out[0] > 0.0 && sum > 0.0 && sum < 1.0);
}

TEST(density_bad_arguments)
{
	GeoaccDensityGrid grid{0, 0, 4, 4, 4, 4, 0};
	GeoaccDensityGrid flat{0, 0, 4, 0, 4, 4, 0};
	GeoaccDensityGrid no_cells{0, 0, 4, 4, 0, 4, 0};
	GeoaccDensityGrid wide_margin{0, 0, 4, 4, 4, 4, 32};
	GeoaccDensityGrid tiny_cells{0, 0, 1e-320, 4, 65535, 4, 0};
	double		xy[] = {1, 1};
	double		bad_values[] = {-1.0};
	double		huge_values[] = {134217728.0};
	uint8_t		join[] = {GEOACC_DENSITY_JOIN};
	uint8_t		count[] = {GEOACC_DENSITY_COUNT};
	uint32_t	counts[16] = {0};
	Tiles<uint32_t> count_tiles(grid);
	Tiles<int64_t> sum_tiles(grid);
	GeoaccDensityTiles *tiles = &count_tiles.core,
			   *sums = &sum_tiles.core;
	GeoaccDensityTiles too_few = count_tiles.core;
	double		w[64 * 64];
	GeoaccDensityPoints joined{xy, join, nullptr, 1, GEOACC_DENSITY_SAMPLES, true};
	GeoaccDensityPoints none{xy, join, nullptr, 0, GEOACC_DENSITY_SAMPLES, true};
	GeoaccDensityPoints time_unweighted{xy, count, nullptr, 1, GEOACC_DENSITY_TIME, true};
	GeoaccDensityPoints negative{xy, count, bad_values, 1, GEOACC_DENSITY_SAMPLES, true};
	GeoaccDensityPoints huge{xy, count, huge_values, 1, GEOACC_DENSITY_TIME, true};

	CHECK(geoacc_density_project(GEOACC_DEVICE_CPU, &grid, &joined, tiles) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_project(GEOACC_DEVICE_CPU, &flat, &none, tiles) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_project(GEOACC_DEVICE_CPU, &no_cells, &none, tiles) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_project(GEOACC_DEVICE_CPU, &wide_margin, &none, tiles) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_project(GEOACC_DEVICE_CPU, &tiny_cells, &none, tiles) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_project(GEOACC_DEVICE_CPU, &grid, &time_unweighted, tiles) == GEOACC_ERR_INVALID_ARGUMENT);
	too_few.tile_rows--;	/* tiles that are not the grid's */
	CHECK(geoacc_density_project(GEOACC_DEVICE_CPU, &grid, &none, &too_few) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(count_tiles.made() == 0);
	CHECK(geoacc_density_project_values(GEOACC_DEVICE_CPU, &grid, &none, sums) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_project_values(GEOACC_DEVICE_CPU, &grid, &negative, sums) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_project_values(GEOACC_DEVICE_CPU, &grid, &huge, sums) == GEOACC_ERR_INVALID_ARGUMENT);
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
	GeoaccDensityGrid grids[] = {{0, 0, 1000, 1000, 1024, 1024, 0}, {-5, 3, 17, 4, 333, 17, 3},
								 {500000, 4000000, 560000, 4050000, 4096, 2048, 31}};
	uint32_t	sizes[] = {1, 2, 1000, 1100000};

	for (const auto &grid : grids)
		for (uint32_t n : sizes)
		{
			Points		p = random_tracks(grid, n);
			std::vector<uint32_t> base = random_cells<uint32_t>(grid_cells(grid));
			std::vector<int64_t> base_sums = random_cells<int64_t>(grid_cells(grid));

			for (bool interpolate : {true, false})
			{
				GeoaccDensityPoints pts = p.core(GEOACC_DENSITY_SAMPLES, interpolate, false);
				std::vector<uint32_t> cpu = base, gpu = base;

				project_into(GEOACC_DEVICE_CPU, grid, pts, cpu);
				project_into(GEOACC_DEVICE_GPU, grid, pts, gpu);
				CHECK(cpu == gpu);
				for (GeoaccDensityMode mode : {GEOACC_DENSITY_SAMPLES, GEOACC_DENSITY_TIME})
				{
					GeoaccDensityPoints vpts = p.core(mode, interpolate, true);
					std::vector<int64_t> cpu_sums = base_sums, gpu_sums = base_sums;

					project_into(GEOACC_DEVICE_CPU, grid, vpts, cpu_sums);
					project_into(GEOACC_DEVICE_GPU, grid, vpts, gpu_sums);
					CHECK(cpu_sums == gpu_sums);
				}
			}
		}
}

/* Only the tiles a sample fell in are made, on either device. */
void
check_tiles_made(GeoaccDevice device)
{
	GeoaccDensityGrid grid{0, 0, 1000, 1000, 1000, 1000, 3};	/* 1006 x 1006 cells: 16 x 16 tiles */
	Points		p;
	Tiles<uint32_t> counts(grid);
	Tiles<int64_t> sums(grid);
	GeoaccDensityPoints pts,
				vpts;

	p.track({{10.5, 990.5}, {20.5, 980.5}});	/* cells (12..22, 12..22): tile (0, 0) */
	p.track({{700.5, 300.5}, {700.5, 300.5}});	/* row 702, column 703: tile (10, 10) */
	pts = p.core(GEOACC_DENSITY_SAMPLES, true, false);
	vpts = p.core(GEOACC_DENSITY_TIME, true, true);
	CHECK_OK(geoacc_density_project(device, &grid, &pts, &counts.core));
	CHECK_OK(geoacc_density_project_values(device, &grid, &vpts, &sums.core));
	CHECK(counts.made() == 2 && sums.made() == 2);
	CHECK(counts.tiles[0] != nullptr && counts.tiles[10 * 16 + 10] != nullptr);
	CHECK(*counts.cell(702, 703, false) == 2 && *counts.cell(12, 13, false) == 1);
	CHECK(counts.cells() == project(GEOACC_DEVICE_CPU, grid, p));
}

TEST(density_projection_makes_only_touched_tiles)
{
	check_tiles_made(GEOACC_DEVICE_CPU);
}

TEST(gpu_density_projection_makes_only_touched_tiles)
{
	REQUIRE_GPU();
	check_tiles_made(GEOACC_DEVICE_GPU);
}

TEST(gpu_density_projection_in_bands_and_batches)
{
	REQUIRE_GPU();
	GeoaccDensityGrid grid{0, 0, 1000, 1000, 1000, 700, 7};
	Points		p = random_tracks(grid, 100000);
	std::vector<uint32_t> cpu = project(GEOACC_DEVICE_CPU, grid, p);
	std::vector<int64_t> cpu_time = project_values(GEOACC_DEVICE_CPU, grid, p, GEOACC_DENSITY_TIME);

	/* caps below the raster (bands) and below the points (batches) */
	for (uint64_t cap : {8000000ull, 1000000ull, 300000ull, 120000ull})
	{
		geoacc_gpu_set_memory_limit(cap);
		CHECK(project(GEOACC_DEVICE_GPU, grid, p) == cpu);
		CHECK(project_values(GEOACC_DEVICE_GPU, grid, p, GEOACC_DENSITY_TIME) == cpu_time);
	}
	geoacc_gpu_set_memory_limit(0);
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

TEST(gpu_density_tiles_equal_the_whole)
{
	REQUIRE_GPU();
	check_tiles_equal_whole(GEOACC_DEVICE_GPU);
}

TEST(gpu_density_convolution_matches_cpu)
{
	REQUIRE_GPU();
	uint32_t	dims[][2] = {{1, 1}, {31, 9}, {333, 257}, {1024, 1024}};

	for (auto d : dims)
		for (GeoaccDensityKernel k : all_kernels)
			for (int size : {1, 3, 7, 31, 63})
			{
				if (d[0] == 1024 && size > 7 && k != GEOACC_KERNEL_GAUSSIAN)
					continue;	/* the CPU twin would take long */

				size_t		n = (size_t) (d[0] + size - 1) * (d[1] + size - 1);
				std::vector<uint32_t> counts = random_cells<uint32_t>(n);
				std::vector<int64_t> sums = random_cells<int64_t>(n);

				CHECK(convolve(GEOACC_DEVICE_GPU, d[0], d[1], counts, k, size) ==
					  convolve(GEOACC_DEVICE_CPU, d[0], d[1], counts, k, size));
				if (size <= 7 || k == GEOACC_KERNEL_GAUSSIAN)
					CHECK(convolve(GEOACC_DEVICE_GPU, d[0], d[1], sums, k, size) ==
						  convolve(GEOACC_DEVICE_CPU, d[0], d[1], sums, k, size));
			}
}

TEST(gpu_density_convolution_in_bands)
{
	REQUIRE_GPU();
	uint32_t	width = 500,
				height = 411;
	size_t		n = (size_t) (width + 30) * (height + 30);
	std::vector<uint32_t> counts = random_cells<uint32_t>(n);
	std::vector<int64_t> sums = random_cells<int64_t>(n);
	std::vector<double> cpu = convolve(GEOACC_DEVICE_CPU, width, height, counts, GEOACC_KERNEL_QUARTIC, 31);
	std::vector<double> cpu_sums = convolve(GEOACC_DEVICE_CPU, width, height, sums, GEOACC_KERNEL_QUARTIC, 31);

	/* down to one output row and its halo of 8-byte sums (131,440 bytes) */
	for (uint64_t cap : {1000000ull, 200000ull, 140000ull})
	{
		geoacc_gpu_set_memory_limit(cap);
		CHECK(convolve(GEOACC_DEVICE_GPU, width, height, counts, GEOACC_KERNEL_QUARTIC, 31) == cpu);
		CHECK(convolve(GEOACC_DEVICE_GPU, width, height, sums, GEOACC_KERNEL_QUARTIC, 31) == cpu_sums);
	}
	/* below that the sums are refused with a memory error (the SQL layer then falls back to the CPU) */
	geoacc_gpu_set_memory_limit(100000);
	CHECK(convolve(GEOACC_DEVICE_GPU, width, height, counts, GEOACC_KERNEL_QUARTIC, 31) == cpu);

	std::vector<double> out((size_t) width * height);

	CHECK(geoacc_density_convolve_sums(GEOACC_DEVICE_GPU, width, height, sums.data(), GEOACC_KERNEL_QUARTIC, 31,
									   out.data()) == GEOACC_ERR_DEVICE_MEMORY);
	geoacc_gpu_set_memory_limit(0);
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

/* The device memory a call asks the budget for: all in one piece, or at least a band and a batch. */
TEST(density_device_need)
{
	GeoaccDensityGrid grid{0, 0, 1000, 1000, 1000, 700, 7};
	GeoaccDeviceNeed counts = geoacc_density_project_need(&grid, 100000, 0);
	GeoaccDeviceNeed sums = geoacc_density_project_need(&grid, 100000, 1);
	GeoaccDeviceNeed few = geoacc_density_project_need(&grid, 10, 0);

	/*
	 * cells of (1000 + 14) x (700 + 14); per point x, y, flags (and a value); a flag for each of the 16 x 12
	 * tiles, and all 192 tiles gathered to be brought back (their indices and cells), or at least one
	 */
	CHECK(counts.bytes == 1014ull * 714 * 4 + 100000ull * 17 + 192 + 192 * (4 + 4096 * 4));
	CHECK(sums.bytes == 1014ull * 714 * 8 + 100000ull * 25 + 192 + 192 * (4 + 4096 * 8));
	CHECK(counts.least == 1014ull * 64 * 4 + 100001ull * 17 + 192 + (4 + 4096 * 4));
	CHECK(few.least < few.bytes && few.bytes < counts.bytes);

	/* a band of 64 raster rows with its 30 halo rows, and its output */
	GeoaccDeviceNeed conv = geoacc_density_convolve_need(500, 411, 31, 0);
	GeoaccDeviceNeed conv_sums = geoacc_density_convolve_need(500, 411, 31, 1);

	CHECK(conv.bytes == 441ull * 530 * 4 + 411ull * 500 * 8);
	CHECK(conv.least == 94ull * 530 * 4 + 64ull * 500 * 8);
	CHECK(conv_sums.bytes == 441ull * 530 * 8 + 411ull * 500 * 8);
	CHECK(geoacc_density_convolve_need(10, 10, 3, 0).least == geoacc_density_convolve_need(10, 10, 3, 0).bytes);
}

/* Capped at its need, or at its least, as a reservation from the budget caps it: the CPU's bits. */
TEST(gpu_density_within_its_device_need)
{
	REQUIRE_GPU();
	GeoaccDensityGrid grid{0, 0, 1000, 1000, 1000, 700, 7};
	Points		p = random_tracks(grid, 300000);
	std::vector<uint32_t> cpu = project(GEOACC_DEVICE_CPU, grid, p);
	std::vector<int64_t> cpu_time = project_values(GEOACC_DEVICE_CPU, grid, p, GEOACC_DENSITY_TIME);
	GeoaccDeviceNeed need = geoacc_density_project_need(&grid, 300000, 0);
	GeoaccDeviceNeed need_values = geoacc_density_project_need(&grid, 300000, 1);

	CHECK_OK(geoacc_gpu_init());
	for (uint64_t bytes : {need.bytes, need.least})
	{
		geoacc_gpu_set_reservation(bytes);
		CHECK(project(GEOACC_DEVICE_GPU, grid, p) == cpu);
	}
	for (uint64_t bytes : {need_values.bytes, need_values.least})
	{
		geoacc_gpu_set_reservation(bytes);
		CHECK(project_values(GEOACC_DEVICE_GPU, grid, p, GEOACC_DENSITY_TIME) == cpu_time);
	}

	uint32_t	width = 500,
				height = 411;
	size_t		n = (size_t) (width + 30) * (height + 30);
	std::vector<uint32_t> counts = random_cells<uint32_t>(n);
	std::vector<int64_t> sums = random_cells<int64_t>(n);
	std::vector<double> cpu_out = convolve(GEOACC_DEVICE_CPU, width, height, counts, GEOACC_KERNEL_QUARTIC, 31);
	std::vector<double> cpu_sums = convolve(GEOACC_DEVICE_CPU, width, height, sums, GEOACC_KERNEL_QUARTIC, 31);
	GeoaccDeviceNeed conv = geoacc_density_convolve_need(width, height, 31, 0);
	GeoaccDeviceNeed conv_sums = geoacc_density_convolve_need(width, height, 31, 1);

	for (uint64_t bytes : {conv.bytes, conv.least})
	{
		geoacc_gpu_set_reservation(bytes);
		CHECK(convolve(GEOACC_DEVICE_GPU, width, height, counts, GEOACC_KERNEL_QUARTIC, 31) == cpu_out);
	}
	for (uint64_t bytes : {conv_sums.bytes, conv_sums.least})
	{
		geoacc_gpu_set_reservation(bytes);
		CHECK(convolve(GEOACC_DEVICE_GPU, width, height, sums, GEOACC_KERNEL_QUARTIC, 31) == cpu_sums);
	}
	geoacc_gpu_set_reservation(0);
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

/* ------------------------------------------------- projection through an index */

/* A grid index of points, its arrays held here. */
struct Index
{
	GeoaccPointGrid grid{};
	std::vector<uint64_t> cell_start;
	std::vector<uint32_t> entries;
	std::vector<uint32_t> longs;

	Index(const Points &p, uint32_t points_per_cell, uint32_t max_side)
	{
		CHECK_OK(geoacc_point_grid_shape(p.xy.data(), p.flags.data(), p.size(), points_per_cell, max_side, &grid));
		cell_start.resize((size_t) grid.gx * grid.gy + 1);
		entries.resize(grid.nentries);
		longs.resize(grid.nlong);
		grid.cell_start = cell_start.data();
		grid.entries = entries.data();
		grid.longs = longs.data();
		CHECK_OK(geoacc_point_grid_fill(p.xy.data(), p.flags.data(), p.size(), &grid));
	}
};

/* Every point is entered, in point order, in each cell its box meets, or is a long one; nothing else is. */
TEST(point_grid_enters_each_box)
{
	GeoaccDensityGrid area = {-3000, 5000, 7000, 9000, 100, 40, 0};
	Points		p = random_tracks(area, 20000);

	for (uint32_t max_side : {1u, 7u, 4096u})
	{
		Index		ix(p, 8, max_side);
		const GeoaccPointGrid &g = ix.grid;
		std::vector<uint32_t> seen(p.size(), 0);
		auto		cell_of = [](double v, double origin, double cell, uint32_t n) {
			double		c = std::floor((v - origin) / cell);

			return c < 0 ? 0u : c >= n ? n - 1 : (uint32_t) c;
		};

		CHECK(g.gx <= max_side && g.gy <= max_side && g.cell_start[0] == 0);
		for (uint64_t c = 0; c < (uint64_t) g.gx * g.gy; c++)
		{
			CHECK(g.cell_start[c] <= g.cell_start[c + 1]);
			for (uint64_t e = g.cell_start[c]; e < g.cell_start[c + 1]; e++)
			{
				uint32_t	i = g.entries[e];
				double		x0 = p.xy[2 * i], y0 = p.xy[2 * i + 1], x1 = x0, y1 = y0;

				if (p.flags[i] & GEOACC_DENSITY_JOIN)
					x1 = p.xy[2 * i - 2], y1 = p.xy[2 * i - 1];
				CHECK(e == g.cell_start[c] || g.entries[e - 1] < i);
				CHECK(c % g.gx >= cell_of(std::min(x0, x1), g.x0, g.cell, g.gx) &&
					  c % g.gx <= cell_of(std::max(x0, x1), g.x0, g.cell, g.gx) &&
					  c / g.gx >= cell_of(std::min(y0, y1), g.y0, g.cell, g.gy) &&
					  c / g.gx <= cell_of(std::max(y0, y1), g.y0, g.cell, g.gy));
				seen[i]++;
			}
		}
		for (uint32_t k = 0; k < g.nlong; k++)
			seen[g.longs[k]] += 1000;
		for (uint32_t i = 0; i < p.size(); i++)
		{
			double		x0 = p.xy[2 * i], y0 = p.xy[2 * i + 1], x1 = x0, y1 = y0;

			if (p.flags[i] & GEOACC_DENSITY_JOIN)
				x1 = p.xy[2 * i - 2], y1 = p.xy[2 * i - 1];

			uint64_t	cells = (uint64_t) (cell_of(std::max(x0, x1), g.x0, g.cell, g.gx) -
											cell_of(std::min(x0, x1), g.x0, g.cell, g.gx) + 1) *
				(cell_of(std::max(y0, y1), g.y0, g.cell, g.gy) - cell_of(std::min(y0, y1), g.y0, g.cell, g.gy) + 1);

			CHECK(seen[i] == (cells <= GEOACC_POINT_GRID_SPREAD ? cells : 1000));
		}
	}
}

/*
 * One grid: the cells (counts or sums) through the index on `device`, and
 * those of the resident copy of the points with values array `slot`, equal
 * the CPU's of every point.
 */
template <class T>
void
check_indexed_equals_whole(GeoaccDevice device, const GeoaccDensityGrid &grid, const GeoaccDensityPoints &pts,
						   const Index &ix, const GeoaccDensityResident *resident, int slot)
{
	std::vector<T> whole(grid_cells(grid), 0);
	Tiles<T>	indexed(grid);
	Tiles<T>	kept(grid);

	project_into(GEOACC_DEVICE_CPU, grid, pts, whole);
	CHECK_OK(geoacc_density_project_indexed(device, &grid, &pts, &ix.grid, &indexed.core));
	CHECK(indexed.cells() == whole);
	CHECK_OK(geoacc_density_project_resident(&grid, resident, slot, pts.mode, pts.interpolate, &kept.core));
	CHECK(kept.cells() == whole);
}

/*
 * The projection through an index, and of the points kept on the device,
 * equals the projection of every point, on random tiles of the points' area.
 */
void
check_indexed_equals_whole(GeoaccDevice device)
{
	std::uniform_real_distribution<double> unit(0.0, 1.0);
	auto	   &rng = core_test::rng();
	GeoaccDensityGrid area = {500000, 4000000, 560000, 4050000, 64, 64, 0};
	Points		p = random_tracks(area, 60000);
	Points		q = p;			/* the same points with other values: the resident copy's second array */

	for (double &v : q.values)
		v = std::floor(v * 7.0) / 3.0;
	for (uint32_t max_side : {2u, 64u, 4096u})
	{
		Index		ix(p, 4, max_side);
		const double *values[] = {p.values.data(), q.values.data()};
		GeoaccDensityResident *resident = nullptr;

		CHECK_OK(geoacc_density_resident_create(device, p.xy.data(), p.flags.data(), p.size(), values, 2, &ix.grid,
												&resident));
		CHECK(geoacc_density_resident_device_bytes(resident) ==
			  (device == GEOACC_DEVICE_GPU ? geoacc_density_resident_bytes(p.size(), 2, &ix.grid) : 0));
		for (int t = 0; t < 12; t++)
		{
			/* a tile from a tenth of a cell of the index to more than the whole area, anywhere near it */
			double		side = 60000 * std::pow(10.0, -3.5 + 4.0 * unit(rng));
			double		x = 490000 + 80000 * unit(rng), y = 3990000 + 70000 * unit(rng);
			GeoaccDensityGrid grid = {x, y, x + side, y + side * 0.75, 1 + (uint32_t) (rng() % 300),
									  1 + (uint32_t) (rng() % 200), (uint32_t) (rng() % 16)};

			for (bool interpolate : {true, false})
			{
				check_indexed_equals_whole<uint32_t>(device, grid, p.core(GEOACC_DENSITY_SAMPLES, interpolate, false),
													 ix, resident, -1);
				check_indexed_equals_whole<int64_t>(device, grid, p.core(GEOACC_DENSITY_SAMPLES, interpolate, true),
													ix, resident, 0);
				check_indexed_equals_whole<int64_t>(device, grid, q.core(GEOACC_DENSITY_TIME, interpolate, true),
													ix, resident, 1);
			}
		}
		geoacc_density_resident_free(resident);
	}
}

TEST(density_indexed_equals_whole)
{
	check_indexed_equals_whole(GEOACC_DEVICE_CPU);
}

TEST(gpu_density_indexed_equals_whole)
{
	REQUIRE_GPU();
	check_indexed_equals_whole(GEOACC_DEVICE_GPU);
}

/* A resident copy on the GPU fits its device need, and is given back when freed. */
TEST(gpu_density_resident_memory)
{
	REQUIRE_GPU();

	GeoaccDensityGrid area = {0, 0, 1000, 1000, 16, 16, 0};
	Points		p = random_tracks(area, 20000);
	Index		ix(p, 8, 4096);
	const double *values[] = {p.values.data()};
	uint64_t	before = geoacc_gpu_memory_in_use();
	uint64_t	bytes = geoacc_density_resident_bytes(p.size(), 1, &ix.grid);
	GeoaccDensityResident *resident = nullptr;

	CHECK_OK(geoacc_density_resident_create(GEOACC_DEVICE_GPU, p.xy.data(), p.flags.data(), p.size(), values, 1,
											&ix.grid, &resident));
	CHECK(geoacc_gpu_memory_in_use() == before + bytes);
	geoacc_density_resident_free(resident);
	CHECK(geoacc_gpu_memory_in_use() == before);
	/* a cap below the copy: refused, nothing kept */
	geoacc_gpu_set_memory_limit(before + bytes / 2);
	CHECK(geoacc_density_resident_create(GEOACC_DEVICE_GPU, p.xy.data(), p.flags.data(), p.size(), values, 1,
										 &ix.grid, &resident) == GEOACC_ERR_DEVICE_MEMORY);
	CHECK(resident == nullptr && geoacc_gpu_memory_in_use() == before);
	geoacc_gpu_set_memory_limit(0);
}

TEST(density_indexed_bad_arguments)
{
	GeoaccDensityGrid grid = {0, 0, 10, 10, 10, 10, 1};
	Points		p;

	p.track({{1, 1}, {2, 2}});

	Index		ix(p, 8, 16);
	GeoaccPointGrid empty{};
	GeoaccDensityPoints time_without_values = p.core(GEOACC_DENSITY_TIME, true, false);
	GeoaccDensityPoints pts = p.core(GEOACC_DENSITY_SAMPLES, true, false);
	Tiles<uint32_t> t(grid);

	CHECK(geoacc_density_project_indexed(GEOACC_DEVICE_CPU, &grid, &pts, &empty, &t.core) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_project_indexed(GEOACC_DEVICE_CPU, &grid, &time_without_values, &ix.grid, &t.core) ==
		  GEOACC_ERR_INVALID_ARGUMENT);
	p.values[1] = -1;
	GeoaccDensityPoints negative = p.core(GEOACC_DENSITY_SAMPLES, true, true);
	Tiles<int64_t> s(grid);

	CHECK(geoacc_density_project_indexed(GEOACC_DEVICE_CPU, &grid, &negative, &ix.grid, &s.core) ==
		  GEOACC_ERR_INVALID_ARGUMENT);

	/* a resident copy: refused with a value out of range, too many arrays, or without an index; a missing array */
	const double *negative_values[] = {p.values.data()};
	GeoaccDensityResident *resident = nullptr;

	CHECK(geoacc_density_resident_create(GEOACC_DEVICE_CPU, p.xy.data(), p.flags.data(), p.size(), negative_values, 1,
										 &ix.grid, &resident) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(resident == nullptr);
	p.values[1] = 1;
	CHECK(geoacc_density_resident_create(GEOACC_DEVICE_CPU, p.xy.data(), p.flags.data(), p.size(), negative_values,
										 GEOACC_DENSITY_RESIDENT_VALUES + 1, &ix.grid, &resident) ==
		  GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_resident_create(GEOACC_DEVICE_CPU, p.xy.data(), p.flags.data(), p.size(), negative_values, 1,
										 &empty, &resident) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK_OK(geoacc_density_resident_create(GEOACC_DEVICE_CPU, p.xy.data(), p.flags.data(), p.size(), negative_values,
											1, &ix.grid, &resident));
	CHECK(geoacc_density_project_resident(&grid, resident, 1, GEOACC_DENSITY_SAMPLES, true, &s.core) ==
		  GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_density_project_resident(&grid, resident, -1, GEOACC_DENSITY_TIME, true, &t.core) ==
		  GEOACC_ERR_INVALID_ARGUMENT);
	geoacc_density_resident_free(resident);

	p.flags[0] |= GEOACC_DENSITY_JOIN;
	CHECK(geoacc_point_grid_shape(p.xy.data(), p.flags.data(), p.size(), 8, 16, &empty) == GEOACC_ERR_INVALID_ARGUMENT);
}
