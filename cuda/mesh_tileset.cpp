/*
 * mesh_tileset.cpp
 *
 * 3D Tiles tilesets of triangle meshes: the C ABI entry points, the CPU
 * twins of vertex clustering and of the measured distance (mesh_tileset.h
 * holds their arithmetic), and the tileset itself, which both devices
 * share: the quadtree's levels (clustered on the chosen device), each
 * level's triangles filed by tile and clipped by the tile boxes (mesh_clip
 * on the chosen device), the GLB files and tileset.json.
 */
#include "mesh_clip.h"
#include "mesh_tileset.h"
#include "host_memory.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

namespace geoacc
{

namespace
{

double
elapsed_ms(std::chrono::steady_clock::time_point since)
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

/* A mesh of the C ABI, checked as the clipper checks its input, its triangles' indices countable in 32 bits. */
void
check_tileset_mesh(const GeoaccMesh &mesh)
{
	check_mesh(mesh, "a tileset");
	if (mesh.ntriangles > UINT32_MAX / 3)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh has %u triangles, more than the %u a tileset can take",
			 mesh.ntriangles, UINT32_MAX / 3);
}

/* A grid of the C ABI, checked: the extent holds the mesh, the key fits. */
TilesetGrid
checked_grid(const GeoaccBox &extent, uint32_t nx, uint32_t ny, uint32_t nz)
{
	TilesetGrid g{{extent.xmin, extent.ymin, extent.zmin}, {extent.xmax, extent.ymax, extent.zmax}, {nx, ny, nz}};

	for (int c = 0; c < 3; c++)
	{
		if (g.n[c] == 0 || g.n[c] > TILESET_MAX_AXIS_CELLS)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "a grid takes 1 to %u cells along an axis, not %u along %c",
				 TILESET_MAX_AXIS_CELLS, g.n[c], "xyz"[c]);
		if (!std::isfinite(g.lo[c]) || !std::isfinite(g.hi[c]) || !(g.lo[c] <= g.hi[c])
			|| !std::isfinite(g.hi[c] - g.lo[c]))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the extent's %c range [%.17g, %.17g] is not a finite interval",
				 "xyz"[c], g.lo[c], g.hi[c]);
	}
	return g;
}

void
check_inside(const GeoaccMesh &mesh, const TilesetGrid &g, const char *what)
{
	for (uint32_t v = 0; v < mesh.nvertices; v++)
		for (int c = 0; c < 3; c++)
		{
			double		x = mesh.positions[(size_t) v * 3 + c];

			if (x < g.lo[c] || x > g.hi[c])
				fail(GEOACC_ERR_INVALID_ARGUMENT, "vertex %u of %s lies outside the extent: %c = %.17g",
					 v + 1, what, "xyz"[c], x);
		}
}

/*
 * Indices 0 .. n - 1 ordered by key, equal keys in index order (as a stable
 * radix sort orders them): runs sorted on the CPU threads, then merged in
 * pairs.  (key, index) is a total order, so any way of sorting gives these
 * bits.
 */
template <class Key>
std::vector<uint32_t>
stable_order(const std::vector<Key> &keys)
{
	const size_t n = keys.size();
	const auto	before = [&](uint32_t a, uint32_t b) { return keys[a] < keys[b] || (keys[a] == keys[b] && a < b); };
	const size_t runs = std::min<size_t>((size_t) cpu_threads(), std::max<size_t>(1, n / 65536));
	const size_t run = (n + runs - 1) / runs;
	std::vector<uint32_t> order(n);

	std::iota(order.begin(), order.end(), 0u);
	parallel_for(runs, 1, [&](uint64_t r, uint64_t) {
		std::sort(order.begin() + std::min(n, r * run), order.begin() + std::min(n, (r + 1) * run), before);
	});
	if (runs == 1)
		return order;

	std::vector<uint32_t> merged(n);

	for (size_t width = run; width < n; width *= 2)
	{
		parallel_for((n + 2 * width - 1) / (2 * width), 1, [&](uint64_t p, uint64_t) {
			const size_t lo = p * 2 * width,
						mid = std::min(n, lo + width),
						hi = std::min(n, lo + 2 * width);

			std::merge(order.begin() + lo, order.begin() + mid, order.begin() + mid, order.begin() + hi,
					   merged.begin() + lo, before);
		});
		order.swap(merged);
	}
	return order;
}

GeoaccMesh
mesh_view(const std::vector<double> &positions, const std::vector<uint32_t> &triangles,
		  const std::vector<float> &attributes, uint32_t k)
{
	GeoaccMesh	m;

	m.nvertices = (uint32_t) (positions.size() / 3);
	m.ntriangles = (uint32_t) (triangles.size() / 3);
	m.positions = positions.data();
	m.triangles = triangles.data();
	m.nattributes = k;
	m.attributes = k > 0 ? attributes.data() : nullptr;
	return m;
}

}								/* namespace */

/* ----------------------------------------------------- the CPU twins */

void
mesh_open_edges_cpu(const GeoaccMesh &mesh, std::vector<uint8_t> &border)
{
	const uint32_t nt = mesh.ntriangles;
	std::vector<uint64_t> keys((size_t) nt * 3);

	border.assign(nt, 0);
	for (uint32_t t = 0; t < nt; t++)
		for (int j = 0; j < 3; j++)
			keys[(size_t) t * 3 + j] = tileset_edge_key(mesh.triangles[(size_t) t * 3 + j],
														mesh.triangles[(size_t) t * 3 + (j == 2 ? 0 : j + 1)]);

	std::vector<uint32_t> order = stable_order(keys);

	for (size_t r = 0; r < order.size(); r++)
	{
		const uint64_t key = keys[order[r]];
		const bool	alone = (r == 0 || keys[order[r - 1]] != key) && (r + 1 == order.size() || keys[order[r + 1]] != key);

		/* an edge of two equal ends is no border */
		if (alone && (uint32_t) (key >> 32) != (uint32_t) key)
			border[order[r] / 3] |= (uint8_t) (1u << (order[r] % 3));
	}
}

void
mesh_cluster_cpu(const GeoaccMesh &mesh, const TilesetGrid &grid, TilesetLevelMesh &out)
{
	const uint32_t nv = mesh.nvertices;
	const uint32_t nt = mesh.ntriangles;
	const uint32_t k = mesh.nattributes;

	/* 1. the cell of every vertex; the cells in key order, each vertex's rank */
	std::vector<uint64_t> vkeys(nv);

	for (uint32_t v = 0; v < nv; v++)
		vkeys[v] = tileset_point_key(grid, mesh.positions + (size_t) v * 3);

	std::vector<uint32_t> vorder = stable_order(vkeys);
	std::vector<uint64_t> cell_keys;
	std::vector<uint32_t> cell_first;	/* into vorder */
	std::vector<uint32_t> vcell(nv);

	for (uint32_t r = 0; r < nv; r++)
	{
		if (r == 0 || vkeys[vorder[r]] != vkeys[vorder[r - 1]])
		{
			cell_keys.push_back(vkeys[vorder[r]]);
			cell_first.push_back(r);
		}
		vcell[vorder[r]] = (uint32_t) cell_keys.size() - 1;
	}
	cell_first.push_back(nv);
	check_interrupt();

	const uint32_t ncells = (uint32_t) cell_keys.size();

	/* 2. quadric terms: (cell, triangle * 3 + corner), once per distinct cell of a triangle */
	std::vector<uint32_t> qcell((size_t) nt * 3);

	for (uint32_t t = 0; t < nt; t++)
	{
		const uint32_t *tri = mesh.triangles + (size_t) t * 3;
		uint32_t	c[3] = {vcell[tri[0]], vcell[tri[1]], vcell[tri[2]]};

		qcell[(size_t) t * 3] = c[0];
		qcell[(size_t) t * 3 + 1] = c[1] == c[0] ? TILESET_NO_CELL : c[1];
		qcell[(size_t) t * 3 + 2] = (c[2] == c[0] || c[2] == c[1]) ? TILESET_NO_CELL : c[2];
	}

	std::vector<uint32_t> qorder = stable_order(qcell);
	std::vector<uint8_t> border;

	mesh_open_edges_cpu(mesh, border);
	std::vector<uint32_t> qfirst(ncells + 1, 0);

	/* where each cell's terms start in qorder */
	{
		uint32_t	r = 0;

		for (uint32_t c = 0; c <= ncells; c++)
		{
			while (r < qorder.size() && qcell[qorder[r]] < c)
				r++;
			qfirst[c] = r;
		}
	}
	check_interrupt();

	/* 3. the vertex of every cell */
	std::vector<double> cell_pos((size_t) ncells * 3);
	std::vector<float> cell_attr((size_t) ncells * k);

	for (uint32_t c = 0; c < ncells; c++)
	{
		double		lo[3],
					hi[3],
					o[3],
					sum[3] = {0, 0, 0};
		TilesetQuadric q;

		tileset_cell_box(grid, cell_keys[c], lo, hi);
		tileset_cell_centre(lo, hi, o);
		for (uint32_t r = cell_first[c]; r < cell_first[c + 1]; r++)
			for (int i = 0; i < 3; i++)
				sum[i] += mesh.positions[(size_t) vorder[r] * 3 + i] - o[i];
		tileset_quadric_zero(q);
		for (uint32_t r = qfirst[c]; r < qfirst[c + 1]; r++)
		{
			const uint32_t t = qorder[r] / 3;

			tileset_quadric_add_term(q, mesh.positions, mesh.triangles + (size_t) t * 3, border[t], vcell.data(), c, o);
		}
		tileset_cell_vertex(q, sum, cell_first[c + 1] - cell_first[c], lo, hi, &cell_pos[(size_t) c * 3]);
		for (uint32_t a = 0; a < k; a++)
		{
			double		s = 0;

			for (uint32_t r = cell_first[c]; r < cell_first[c + 1]; r++)
				s += mesh.attributes[(size_t) vorder[r] * k + a];
			cell_attr[(size_t) c * k + a] = (float) (s / (double) (cell_first[c + 1] - cell_first[c]));
		}
	}
	check_interrupt();

	/* 4. the triangles of three distinct cells, the cells they use numbered in key order */
	std::vector<uint32_t> used(ncells, 0);

	out.triangles.clear();
	for (uint32_t t = 0; t < nt; t++)
	{
		const uint32_t *tri = mesh.triangles + (size_t) t * 3;
		uint32_t	c[3] = {vcell[tri[0]], vcell[tri[1]], vcell[tri[2]]};

		if (c[0] == c[1] || c[1] == c[2] || c[0] == c[2])
			continue;
		for (int i = 0; i < 3; i++)
		{
			out.triangles.push_back(c[i]);
			used[c[i]] = 1;
		}
	}

	std::vector<uint32_t> number(ncells);
	uint32_t	n = 0;

	for (uint32_t c = 0; c < ncells; c++)
	{
		number[c] = n;
		n += used[c];
	}
	for (uint32_t &ref : out.triangles)
		ref = number[ref];
	out.positions.resize((size_t) n * 3);
	out.attributes.resize((size_t) n * k);
	for (uint32_t c = 0; c < ncells; c++)
		if (used[c])
		{
			memcpy(&out.positions[(size_t) number[c] * 3], &cell_pos[(size_t) c * 3], 3 * sizeof(double));
			if (k > 0)
				memcpy(&out.attributes[(size_t) number[c] * k], &cell_attr[(size_t) c * k], k * sizeof(float));
		}
}

void
bucket_triangles_cpu(const GeoaccMesh &to, const TilesetGrid &grid, TilesetHostBuckets &b)
{
	std::vector<std::pair<uint64_t, uint32_t>> entries;

	for (uint32_t t = 0; t < to.ntriangles; t++)
	{
		const uint32_t *tri = to.triangles + (size_t) t * 3;
		uint32_t	lo[3],
					hi[3];

		tileset_triangle_cells(grid, to.positions + (size_t) tri[0] * 3, to.positions + (size_t) tri[1] * 3,
							   to.positions + (size_t) tri[2] * 3, lo, hi);
		for (uint32_t x = lo[0]; x <= hi[0]; x++)
			for (uint32_t y = lo[1]; y <= hi[1]; y++)
				for (uint32_t z = lo[2]; z <= hi[2]; z++)
					entries.emplace_back(tileset_cell_key(grid, x, y, z), t);
	}
	std::sort(entries.begin(), entries.end());
	b.keys.clear();
	b.starts.clear();
	b.tris.resize(entries.size());
	for (size_t e = 0; e < entries.size(); e++)
	{
		if (e == 0 || entries[e].first != entries[e - 1].first)
		{
			b.keys.push_back(entries[e].first);
			b.starts.push_back((uint32_t) e);
		}
		b.tris[e] = entries[e].second;
	}
	b.starts.push_back((uint32_t) entries.size());
}

void
mesh_distance_cpu(const GeoaccMesh &from, const GeoaccMesh &to, const TilesetGrid &grid, double spacing,
				  double *measured, double *bound_out)
{
	if (to.ntriangles == 0)
	{
		*measured = *bound_out = INFINITY;
		return;
	}

	TilesetHostBuckets hb;

	bucket_triangles_cpu(to, grid, hb);

	const TilesetBuckets b = hb.view();
	std::vector<uint8_t> used(from.nvertices, 0);
	std::vector<TilesetNearest> vnear(from.nvertices, TilesetNearest{0, TILESET_NO_CELL});
	constexpr uint64_t PIECE = 1 << 16;
	/* each piece's maxima (a maximum is the same whatever the order, and so whatever the threads) */
	std::vector<double> vertex_worst((from.nvertices + PIECE - 1) / PIECE, 0),
				triangle_worst((from.ntriangles + PIECE - 1) / PIECE, 0),
				triangle_bound(triangle_worst.size(), 0);
	double		worst = 0,
				bound = 0;

	for (uint64_t i = 0; i < (uint64_t) from.ntriangles * 3; i++)
		used[from.triangles[i]] = 1;
	parallel_for(from.nvertices, PIECE, [&](uint64_t begin, uint64_t end) {
		double		w = 0;

		for (uint64_t v = begin; v < end; v++)
		{
			if (used[v])
				vnear[v] = tileset_point_level_nearest(from.positions + (size_t) v * 3, grid, b, to.positions,
													   to.triangles);
			w = vnear[v].d2 > w ? vnear[v].d2 : w;
		}
		vertex_worst[begin / PIECE] = w;
	});
	parallel_for(from.ntriangles, PIECE, [&](uint64_t begin, uint64_t end) {
		double		w = 0,
					bd = 0;

		for (uint64_t t = begin; t < end; t++)
		{
			const uint32_t *tri = from.triangles + (size_t) t * 3;
			TilesetTriangleSample s = tileset_triangle_sample(from.positions + (size_t) tri[0] * 3,
															  from.positions + (size_t) tri[1] * 3,
															  from.positions + (size_t) tri[2] * 3, vnear[tri[0]],
															  vnear[tri[1]], vnear[tri[2]], spacing, grid, b,
															  to.positions, to.triangles);

			w = s.m2 > w ? s.m2 : w;
			bd = s.bound > bd ? s.bound : bd;
		}
		triangle_worst[begin / PIECE] = w;
		triangle_bound[begin / PIECE] = bd;
	});
	for (double w : vertex_worst)
		worst = w > worst ? w : worst;
	for (size_t p = 0; p < triangle_worst.size(); p++)
	{
		worst = triangle_worst[p] > worst ? triangle_worst[p] : worst;
		bound = triangle_bound[p] > bound ? triangle_bound[p] : bound;
	}
	*measured = std::sqrt(worst);
	/* a margin for the rounding of the distances themselves */
	*bound_out = std::nextafter(std::fmax(bound, *measured) * (1 + 1e-12), INFINITY);
}

/* --------------------------------------------------------- the tileset */

namespace
{

/* The extent and origin (geoacc_mesh_tileset_extent). */
void
tileset_extent(const GeoaccMesh &mesh, GeoaccBox &extent, double origin[3])
{
	double		lo[3],
				hi[3];
	bool		any = false;

	for (uint64_t i = 0; i < (uint64_t) mesh.ntriangles * 3; i++)
	{
		const double *p = mesh.positions + (size_t) mesh.triangles[i] * 3;

		for (int c = 0; c < 3; c++)
		{
			lo[c] = any ? std::fmin(lo[c], p[c]) : p[c];
			hi[c] = any ? std::fmax(hi[c], p[c]) : p[c];
		}
		any = true;
	}
	if (!any)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh has no triangles");

	/* square in x and y, so that the cells of every level are square */
	double		side = std::fmax(hi[0] - lo[0], hi[1] - lo[1]);

	if (!(side > 0))
		side = 1;
	for (int c = 0; c < 2; c++)
		hi[c] = std::fmax(hi[c], lo[c] + side);
	for (int c = 0; c < 3; c++)
		if (!std::isfinite(hi[c] - lo[c]))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh's %c range [%.17g, %.17g] is wider than a double can hold",
				 "xyz"[c], lo[c], hi[c]);
	extent = GeoaccBox{lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]};
	for (int c = 0; c < 3; c++)
		origin[c] = lo[c] + (hi[c] - lo[c]) / 2;
}

/* The clustering grid of level l: cells x cells per tile in x and y, cells about as tall as wide. */
TilesetGrid
level_grid(const GeoaccBox &extent, uint32_t level, uint32_t cells)
{
	const uint32_t n = (1u << level) * cells;
	const double width = (extent.xmax - extent.xmin) / (double) n;
	const double height = extent.zmax - extent.zmin;
	double		nz = width > 0 ? std::ceil(height / width) : 1;

	nz = nz < 1 ? 1 : nz > TILESET_MAX_AXIS_CELLS ? TILESET_MAX_AXIS_CELLS : nz;
	return TilesetGrid{{extent.xmin, extent.ymin, extent.zmin}, {extent.xmax, extent.ymax, extent.zmax},
					   {n, n, (uint32_t) nz}};
}

/* One tile with content: its clipped mesh. */
struct Tile
{
	GeoaccMeshResult mesh{};
	double		lo[3];			/* bounds relative to the origin: content, then with the children's */
	double		hi[3];
	bool		content = false;
	bool		exists = false;	/* content here or below */

	Tile() = default;
	Tile(const Tile &) = delete;
	Tile &operator=(const Tile &) = delete;
	~Tile() { geoacc_mesh_result_free(&mesh); }
};

struct Level
{
	uint32_t	n = 0;			/* tiles along x and y */
	std::vector<Tile> tiles;	/* tiles[ix * n + iy] */

	Level() = default;
	Level(const Level &) = delete;
	Level &operator=(const Level &) = delete;
	Level(Level &&) = default;
};

/*
 * Clip a level's mesh into its n x n tiles: each triangle filed in the
 * tiles its box touches (closed boxes, exact plane comparisons), each tile
 * clipped from the sub-mesh of its triangles, which gives the bits a clip of
 * the whole mesh gives (cuts depend on edges, not on numbering).
 */
void
clip_level(GeoaccDevice device, const GeoaccMesh &mesh, const GeoaccBox &extent, Level &level)
{
	const uint32_t n = level.n;
	const TilesetGrid tiles{{extent.xmin, extent.ymin, extent.zmin}, {extent.xmax, extent.ymax, extent.zmax}, {n, n, 1}};
	std::vector<uint32_t> count((size_t) n * n + 1, 0);
	std::vector<uint32_t> range((size_t) mesh.ntriangles * 4);

	for (uint32_t t = 0; t < mesh.ntriangles; t++)
	{
		const uint32_t *tri = mesh.triangles + (size_t) t * 3;
		uint32_t	lo[3],
					hi[3];

		tileset_triangle_cells(tiles, mesh.positions + (size_t) tri[0] * 3, mesh.positions + (size_t) tri[1] * 3,
							   mesh.positions + (size_t) tri[2] * 3, lo, hi);
		range[(size_t) t * 4] = lo[0];
		range[(size_t) t * 4 + 1] = hi[0];
		range[(size_t) t * 4 + 2] = lo[1];
		range[(size_t) t * 4 + 3] = hi[1];
		for (uint32_t x = lo[0]; x <= hi[0]; x++)
			for (uint32_t y = lo[1]; y <= hi[1]; y++)
				count[(size_t) x * n + y + 1]++;
	}
	for (size_t i = 1; i < count.size(); i++)
		count[i] += count[i - 1];

	std::vector<uint32_t> filed(count.back());
	std::vector<uint32_t> fill(count.begin(), count.end() - 1);

	for (uint32_t t = 0; t < mesh.ntriangles; t++)
		for (uint32_t x = range[(size_t) t * 4]; x <= range[(size_t) t * 4 + 1]; x++)
			for (uint32_t y = range[(size_t) t * 4 + 2]; y <= range[(size_t) t * 4 + 3]; y++)
				filed[fill[(size_t) x * n + y]++] = t;
	range.clear();
	range.shrink_to_fit();

	const uint32_t k = mesh.nattributes;
	std::vector<uint32_t> remap(mesh.nvertices, UINT32_MAX);
	std::vector<uint32_t> seen_in(mesh.nvertices, UINT32_MAX);	/* the last tile that listed the vertex */

	for (uint32_t ix = 0; ix < n; ix++)
		for (uint32_t iy = 0; iy < n; iy++)
		{
			const size_t cell = (size_t) ix * n + iy;
			Tile	   &tile = level.tiles[cell];

			if (count[cell] == count[cell + 1])
				continue;

			/* the sub-mesh: its vertices in input order, each listed once */
			std::vector<uint32_t> verts;

			for (uint32_t e = count[cell]; e < count[cell + 1]; e++)
				for (int c = 0; c < 3; c++)
				{
					const uint32_t v = mesh.triangles[(size_t) filed[e] * 3 + c];

					if (seen_in[v] != (uint32_t) cell)
					{
						seen_in[v] = (uint32_t) cell;
						verts.push_back(v);
					}
				}
			std::sort(verts.begin(), verts.end());

			std::vector<double> pos(verts.size() * 3);
			std::vector<float> attr(verts.size() * k);
			std::vector<uint32_t> tris;

			for (size_t i = 0; i < verts.size(); i++)
			{
				remap[verts[i]] = (uint32_t) i;
				memcpy(&pos[i * 3], mesh.positions + (size_t) verts[i] * 3, 3 * sizeof(double));
				if (k > 0)
					memcpy(&attr[i * k], mesh.attributes + (size_t) verts[i] * k, k * sizeof(float));
			}
			tris.reserve((size_t) (count[cell + 1] - count[cell]) * 3);
			for (uint32_t e = count[cell]; e < count[cell + 1]; e++)
				for (int c = 0; c < 3; c++)
					tris.push_back(remap[mesh.triangles[(size_t) filed[e] * 3 + c]]);

			GeoaccMesh	sub = mesh_view(pos, tris, attr, k);
			GeoaccBox	box;

			box.xmin = tileset_plane(extent.xmin, extent.xmax, ix, n);
			box.xmax = tileset_plane(extent.xmin, extent.xmax, ix + 1, n);
			box.ymin = tileset_plane(extent.ymin, extent.ymax, iy, n);
			box.ymax = tileset_plane(extent.ymin, extent.ymax, iy + 1, n);
			box.zmin = extent.zmin;
			box.zmax = extent.zmax;
			if (device == GEOACC_DEVICE_GPU)
			{
#ifdef GEOACC_WITH_CUDA
				GeoaccMeshClipTiming t{};

				mesh_clip_gpu(sub, &box, 1, &tile.mesh, &t);
#endif
			}
			else
				mesh_clip_cpu(sub, &box, 1, &tile.mesh);
			tile.content = tile.mesh.ntriangles > 0;
			check_interrupt();
		}
}

/* Bounds of a tile's content relative to the origin, as the GLB's float32 positions are made. */
void
content_bounds(Tile &tile, const double origin[3])
{
	for (uint32_t v = 0; v < tile.mesh.nvertices; v++)
		for (int c = 0; c < 3; c++)
		{
			double		x = tile.mesh.positions[(size_t) v * 3 + c] - origin[c];

			tile.lo[c] = v == 0 ? x : std::fmin(tile.lo[c], x);
			tile.hi[c] = v == 0 ? x : std::fmax(tile.hi[c], x);
		}
}

std::string
json_number(double v)
{
	char		buf[32];

	snprintf(buf, sizeof(buf), "%.17g", v);
	return buf;
}

/* A box bounding volume: centre and half axes, widened past float32 rounding of the content. */
std::string
json_box(const double lo[3], const double hi[3])
{
	std::string s = "{\"box\":[";
	double		centre[3],
				half[3];

	for (int c = 0; c < 3; c++)
	{
		centre[c] = lo[c] + (hi[c] - lo[c]) / 2;

		double		reach = std::fmax(std::fabs(lo[c]), std::fabs(hi[c]));

		half[c] = (hi[c] - lo[c]) / 2 + 1e-3 + reach * 1e-6;
	}
	for (int c = 0; c < 3; c++)
		s += json_number(centre[c]) + ",";
	s += json_number(half[0]) + ",0,0,0," + json_number(half[1]) + ",0,0,0," + json_number(half[2]) + "]}";
	return s;
}

std::string
tile_path(uint32_t level, uint32_t ix, uint32_t iy)
{
	return "tiles/" + std::to_string(level) + "/" + std::to_string(ix) + "/" + std::to_string(iy) + ".glb";
}

/* The JSON of tile (l, ix, iy) and its subtree. */
std::string
tile_json(const std::vector<Level> &levels, const double *errors, uint32_t l, uint32_t ix, uint32_t iy,
		  const std::string &root_extra)
{
	const Level &level = levels[l];
	const Tile &tile = level.tiles[(size_t) ix * level.n + iy];
	std::string s = "{" + root_extra + "\"boundingVolume\":" + json_box(tile.lo, tile.hi) + ",\"geometricError\":"
		+ json_number(errors[l]);

	if (tile.content)
		s += ",\"content\":{\"uri\":\"" + tile_path(l, ix, iy) + "\"}";
	if (l + 1 < levels.size())
	{
		std::string children;

		for (uint32_t cx = ix * 2; cx < ix * 2 + 2; cx++)
			for (uint32_t cy = iy * 2; cy < iy * 2 + 2; cy++)
				if (levels[l + 1].tiles[(size_t) cx * levels[l + 1].n + cy].exists)
					children += (children.empty() ? "" : ",") + tile_json(levels, errors, l + 1, cx, cy, "");
		if (!children.empty())
			s += ",\"children\":[" + children + "]";
	}
	return s + "}";
}

void
add_file(std::vector<GeoaccTilesetFile> &files, const std::string &path, const uint8_t *data, size_t size)
{
	GeoaccTilesetFile f{};

	snprintf(f.path, sizeof(f.path), "%s", path.c_str());
	/* the caller's: output memory */
	f.data = static_cast<uint8_t *>(output_allocate(size > 0 ? size : 1));
	memcpy(f.data, data, size);
	f.size = size;
	files.push_back(f);
}

void
check_options(const GeoaccTilesetOptions &o, const GeoaccMesh &mesh)
{
	if (o.levels < 1 || o.levels > GEOACC_TILESET_MAX_LEVELS)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "a tileset has 1 to %d levels, not %u", GEOACC_TILESET_MAX_LEVELS, o.levels);
	if (o.cells < 1 || o.cells > GEOACC_TILESET_MAX_CELLS)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "a tile takes 1 to %d cells along its edge, not %u",
			 GEOACC_TILESET_MAX_CELLS, o.cells);
	if (geoacc_mesh_layout_width(o.layout) != mesh.nattributes)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh has %u attributes per vertex, its layout %u", mesh.nattributes,
			 geoacc_mesh_layout_width(o.layout));
	for (int i = 0; i < 16; i++)
		if (!std::isfinite(o.transform[i]))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the transform's element %d is not finite", i + 1);
}

/*
 * The mesh without the vertices no triangle uses (a PLY file may have
 * some): they are not on the surface, and must not pull a cell's mean.
 * False when every vertex is used (the mesh serves as it is).
 */
bool
drop_unused_vertices(const GeoaccMesh &mesh, std::vector<double> &positions, std::vector<uint32_t> &triangles,
					 std::vector<float> &attributes)
{
	const uint32_t k = mesh.nattributes;
	std::vector<uint32_t> number(mesh.nvertices, 0);
	uint32_t	n = 0;

	for (uint64_t i = 0; i < (uint64_t) mesh.ntriangles * 3; i++)
		number[mesh.triangles[i]] = 1;
	for (uint32_t v = 0; v < mesh.nvertices; v++)
		n += number[v];
	if (n == mesh.nvertices)
		return false;
	positions.resize((size_t) n * 3);
	attributes.resize((size_t) n * k);
	n = 0;
	for (uint32_t v = 0; v < mesh.nvertices; v++)
		if (number[v])
		{
			memcpy(&positions[(size_t) n * 3], mesh.positions + (size_t) v * 3, 3 * sizeof(double));
			if (k > 0)
				memcpy(&attributes[(size_t) n * k], mesh.attributes + (size_t) v * k, k * sizeof(float));
			number[v] = n++;
		}
	triangles.resize((size_t) mesh.ntriangles * 3);
	for (size_t i = 0; i < triangles.size(); i++)
		triangles[i] = number[mesh.triangles[i]];
	return true;
}

void
build_tileset(GeoaccDevice device, const GeoaccMesh &input, const GeoaccTilesetOptions &opt, GeoaccTileset &out,
			  GeoaccTilesetTiming &timing)
{
	std::vector<double> used_positions;
	std::vector<uint32_t> used_triangles;
	std::vector<float> used_attributes;
	const GeoaccMesh mesh = drop_unused_vertices(input, used_positions, used_triangles, used_attributes)
		? mesh_view(used_positions, used_triangles, used_attributes, input.nattributes)
		: input;
	GeoaccBox	extent;
	double		origin[3];
	const uint32_t L = opt.levels;
	std::vector<Level> levels(L);
	auto		now = std::chrono::steady_clock::now();

	tileset_extent(mesh, extent, origin);
	out.levels = L;

	/* the leaves first: a coarser tile shows content only where the full mesh has some under it */
	levels[L - 1].n = 1u << (L - 1);
	levels[L - 1].tiles = std::vector<Tile>((size_t) levels[L - 1].n * levels[L - 1].n);
	out.triangles[L - 1] = mesh.ntriangles;
	now = std::chrono::steady_clock::now();
	clip_level(device, mesh, extent, levels[L - 1]);
	timing.clip_ms += elapsed_ms(now);

	std::vector<std::vector<uint8_t>> covered(L);

	covered[L - 1].resize(levels[L - 1].tiles.size());
	for (size_t i = 0; i < covered[L - 1].size(); i++)
		covered[L - 1][i] = levels[L - 1].tiles[i].content;
	for (uint32_t l = L - 1; l-- > 0;)
	{
		const uint32_t n = 1u << l;

		covered[l].assign((size_t) n * n, 0);
		for (uint32_t ix = 0; ix < n * 2; ix++)
			for (uint32_t iy = 0; iy < n * 2; iy++)
				covered[l][(size_t) (ix / 2) * n + iy / 2] |= covered[l + 1][(size_t) ix * n * 2 + iy];
	}

	for (uint32_t l = 0; l + 1 < L; l++)
	{
		Level	   &level = levels[l];
		TilesetLevelMesh lm;
		const TilesetGrid grid = level_grid(extent, l, opt.cells);
		double		kernel_ms = 0;

		level.n = 1u << l;
		level.tiles = std::vector<Tile>((size_t) level.n * level.n);
		now = std::chrono::steady_clock::now();
		if (device == GEOACC_DEVICE_GPU)
		{
#ifdef GEOACC_WITH_CUDA
			mesh_cluster_gpu(mesh, grid, lm, &kernel_ms);
#endif
		}
		else
			mesh_cluster_cpu(mesh, grid, lm);
		timing.simplify_ms += elapsed_ms(now);

		const GeoaccMesh level_mesh = mesh_view(lm.positions, lm.triangles, lm.attributes, mesh.nattributes);

		out.triangles[l] = level_mesh.ntriangles;
		now = std::chrono::steady_clock::now();
		clip_level(device, level_mesh, extent, level);
		timing.clip_ms += elapsed_ms(now);

		/*
		 * A cluster's triangle can reach a tile where the full mesh has
		 * nothing: that piece is left out (no leaf would ever replace it),
		 * and the error is measured to what the level then shows.
		 */
		std::vector<double> shown_positions;
		std::vector<uint32_t> shown_triangles;
		std::vector<float> no_attributes;
		bool		dropped = false;

		for (size_t i = 0; i < level.tiles.size(); i++)
			if (level.tiles[i].content && !covered[l][i])
			{
				geoacc_mesh_result_free(&level.tiles[i].mesh);
				level.tiles[i].content = false;
				dropped = true;
			}
		if (dropped)
			for (const Tile &tile : level.tiles)
				if (tile.content)
				{
					const uint32_t first = (uint32_t) (shown_positions.size() / 3);

					shown_positions.insert(shown_positions.end(), tile.mesh.positions,
										   tile.mesh.positions + (size_t) tile.mesh.nvertices * 3);
					for (size_t i = 0; i < (size_t) tile.mesh.ntriangles * 3; i++)
						shown_triangles.push_back(first + tile.mesh.triangles[i]);
				}

		const GeoaccMesh shown = dropped ? mesh_view(shown_positions, shown_triangles, no_attributes, 0) : level_mesh;

		/* samples at most half a cell apart: sub-triangles small beside the level's triangles */
		const double spacing = (grid.hi[0] - grid.lo[0]) / (double) grid.n[0] / 2;

		now = std::chrono::steady_clock::now();
		if (device == GEOACC_DEVICE_GPU)
		{
#ifdef GEOACC_WITH_CUDA
			mesh_distance_gpu(mesh, shown, grid, spacing, &out.measured[l], &out.bound[l], &kernel_ms);
#endif
		}
		else
			mesh_distance_cpu(mesh, shown, grid, spacing, &out.measured[l], &out.bound[l]);
		timing.error_ms += elapsed_ms(now);
		timing.kernel_ms += kernel_ms;
	}

	/*
	 * the errors: 0 at the leaves, each level's bound, never below the level under it; a level that clusters
	 * to no triangle (its bound infinite) shows nothing, so its error is the extent's diagonal at least
	 */
	const double diagonal = std::sqrt((extent.xmax - extent.xmin) * (extent.xmax - extent.xmin)
									  + (extent.ymax - extent.ymin) * (extent.ymax - extent.ymin)
									  + (extent.zmax - extent.zmin) * (extent.zmax - extent.zmin));

	out.geometric_error[L - 1] = 0;
	for (uint32_t l = L - 1; l-- > 0;)
	{
		double		e = std::isfinite(out.bound[l]) ? out.bound[l] : diagonal;

		out.geometric_error[l] = std::fmax(e, out.geometric_error[l + 1]);
	}

	/* which tiles exist, their bounds with their children's */
	now = std::chrono::steady_clock::now();
	for (uint32_t l = L; l-- > 0;)
	{
		Level	   &level = levels[l];

		for (uint32_t ix = 0; ix < level.n; ix++)
			for (uint32_t iy = 0; iy < level.n; iy++)
			{
				Tile	   &tile = level.tiles[(size_t) ix * level.n + iy];
				bool		have = tile.content;

				if (tile.content)
				{
					content_bounds(tile, origin);
					out.tiles[l]++;
				}
				if (l + 1 < L)
					for (uint32_t cx = ix * 2; cx < ix * 2 + 2; cx++)
						for (uint32_t cy = iy * 2; cy < iy * 2 + 2; cy++)
						{
							const Tile &child = levels[l + 1].tiles[(size_t) cx * levels[l + 1].n + cy];

							if (!child.exists)
								continue;
							for (int c = 0; c < 3; c++)
							{
								tile.lo[c] = have ? std::fmin(tile.lo[c], child.lo[c]) : child.lo[c];
								tile.hi[c] = have ? std::fmax(tile.hi[c], child.hi[c]) : child.hi[c];
							}
							have = true;
						}
				tile.exists = have;
			}
	}

	/* no tile has a triangle (every one had two equal corners, which clips drop): no tileset */
	if (!levels[0].tiles[0].exists)
	{
		timing.write_ms += elapsed_ms(now);
		return;
	}

	/* tileset.json */
	std::vector<GeoaccTilesetFile> files;

	try
	{
		std::string root_extra = "\"transform\":[";

		for (int i = 0; i < 16; i++)
			root_extra += (i ? "," : "") + json_number(opt.transform[i]);
		root_extra += "],\"refine\":\"REPLACE\",";

		std::string json = "{\"asset\":{\"version\":\"1.1\"";

		if (opt.generator != nullptr)
		{
			json += ",\"generator\":\"";
			for (const char *c = opt.generator; *c; c++)
				if (*c != '"' && *c != '\\' && (unsigned char) *c >= 0x20)
					json += *c;
			json += "\"";
		}
		json += "},\"geometricError\":" + json_number(std::fmax(diagonal, out.geometric_error[0]));
		json += ",\"root\":" + tile_json(levels, out.geometric_error, 0, 0, 0, root_extra) + "}\n";
		add_file(files, "tileset.json", reinterpret_cast<const uint8_t *>(json.data()), json.size());

		std::vector<uint8_t> glb;

		for (uint32_t l = 0; l < L; l++)
			for (uint32_t ix = 0; ix < levels[l].n; ix++)
				for (uint32_t iy = 0; iy < levels[l].n; iy++)
				{
					const Tile &tile = levels[l].tiles[(size_t) ix * levels[l].n + iy];
					GeoaccMesh	m;
					size_t		size;

					if (!tile.content)
						continue;
					m.nvertices = tile.mesh.nvertices;
					m.ntriangles = tile.mesh.ntriangles;
					m.positions = tile.mesh.positions;
					m.triangles = tile.mesh.triangles;
					m.nattributes = tile.mesh.nattributes;
					m.attributes = tile.mesh.attributes;
					glb_write(m, opt.layout, origin, nullptr, 0, &size);
					glb.resize(size);
					glb_write(m, opt.layout, origin, glb.data(), size, &size);
					add_file(files, tile_path(l, ix, iy), glb.data(), size);
				}
	}
	catch (...)
	{
		for (GeoaccTilesetFile &f : files)
			output_free(f.data);
		throw;
	}
	timing.write_ms += elapsed_ms(now);
	try
	{
		out.files = static_cast<GeoaccTilesetFile *>(output_allocate(files.size() * sizeof(GeoaccTilesetFile)));
	}
	catch (...)
	{
		for (GeoaccTilesetFile &f : files)
			output_free(f.data);
		throw;
	}
	memcpy(out.files, files.data(), files.size() * sizeof(GeoaccTilesetFile));
	out.nfiles = (uint32_t) files.size();
}

/* A level mesh as a result of the C ABI. */
void
result_from_level(const TilesetLevelMesh &lm, uint32_t k, GeoaccMeshResult &result)
{
	mesh_result_set(result, lm.positions, lm.triangles, lm.attributes, k);
}

}								/* namespace */

}								/* namespace geoacc */

using namespace geoacc;

extern "C" GeoaccStatus
geoacc_mesh_tileset_extent(const GeoaccMesh *mesh, GeoaccBox *extent, double origin[3])
{
	return guarded([&] {
		if (mesh == nullptr || extent == nullptr || origin == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh, the extent and the origin are required");
		check_tileset_mesh(*mesh);
		tileset_extent(*mesh, *extent, origin);
	});
}

extern "C" void
geoacc_tileset_free(GeoaccTileset *tileset)
{
	if (tileset == nullptr)
		return;
	for (uint32_t i = 0; i < tileset->nfiles; i++)
		output_free(tileset->files[i].data);
	output_free(tileset->files);
	memset(tileset, 0, sizeof(*tileset));
}

extern "C" GeoaccStatus
geoacc_mesh_tileset(GeoaccDevice device, const GeoaccMesh *mesh, const GeoaccTilesetOptions *options,
					GeoaccTileset *tileset, GeoaccTilesetTiming *timing)
{
	GeoaccStatus status = guarded([&] {
		auto		start = std::chrono::steady_clock::now();
		GeoaccTilesetTiming t{};

		if (mesh == nullptr || options == nullptr || tileset == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh, the options and the tileset are required");
		memset(tileset, 0, sizeof(*tileset));
		check_tileset_mesh(*mesh);
		check_options(*options, *mesh);
		if (device == GEOACC_DEVICE_GPU)
			GEOACC_ON_GPU(build_tileset(device, *mesh, *options, *tileset, t));
		else
			build_tileset(device, *mesh, *options, *tileset, t);
		t.compute_ms = elapsed_ms(start);
		if (timing)
			*timing = t;
	});

	if (status != GEOACC_OK && tileset != nullptr)
		geoacc_tileset_free(tileset);
	return status;
}

extern "C" GeoaccDeviceNeed
geoacc_mesh_tileset_need(const GeoaccMesh *mesh, const GeoaccTilesetOptions *options)
{
	const uint64_t k = mesh->nattributes;
	const uint64_t nv = mesh->nvertices,
				nt = mesh->ntriangles;
	GeoaccDeviceNeed need;

	(void) options;
	/*
	 * Clustering: the mesh, vertex keys and order (sorted twice), the cells,
	 * three quadric terms a triangle (sorted twice); the error: the level's
	 * triangles filed by cell (a few cells each, sorted twice).  The clips
	 * of the tiles need less than the whole mesh's.
	 */
	need.bytes = nv * (24 + 4 * k) + nt * 12 + nv * (8 * 2 + 4 * 3 + 24 + 4 * k) + nt * 3 * (4 * 4) + nt * 8 * (8 + 4) * 2
		+ (UINT64_C(1) << 24);
	need.least = need.bytes;
	return need;
}

extern "C" GeoaccStatus
geoacc_mesh_cluster(GeoaccDevice device, const GeoaccMesh *mesh, const GeoaccBox *extent, uint32_t nx, uint32_t ny,
					uint32_t nz, GeoaccMeshResult *result, double *kernel_ms)
{
	GeoaccStatus status = guarded([&] {
		if (mesh == nullptr || extent == nullptr || result == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh, the extent and the result are required");
		check_tileset_mesh(*mesh);

		const TilesetGrid grid = checked_grid(*extent, nx, ny, nz);
		TilesetLevelMesh lm;
		double		ms = 0;

		check_inside(*mesh, grid, "the mesh");
		if (device == GEOACC_DEVICE_GPU)
		{
#ifdef GEOACC_WITH_CUDA
			require_gpu();
			mesh_cluster_gpu(*mesh, grid, lm, &ms);
#else
			GEOACC_ON_GPU(0);
#endif
		}
		else
			mesh_cluster_cpu(*mesh, grid, lm);
		result_from_level(lm, mesh->nattributes, *result);
		if (kernel_ms)
			*kernel_ms = ms;
	});

	if (status != GEOACC_OK && result != nullptr)
		geoacc_mesh_result_free(result);
	return status;
}

extern "C" GeoaccStatus
geoacc_mesh_distance(GeoaccDevice device, const GeoaccMesh *from, const GeoaccMesh *to, const GeoaccBox *extent,
					 uint32_t nx, uint32_t ny, uint32_t nz, double spacing, double *measured, double *bound)
{
	return guarded([&] {
		if (from == nullptr || to == nullptr || extent == nullptr || measured == nullptr || bound == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the meshes, the extent and the outputs are required");
		check_tileset_mesh(*from);
		check_tileset_mesh(*to);
		if (!(spacing > 0) || !std::isfinite(spacing))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the sample spacing must be positive and finite, not %g", spacing);

		const TilesetGrid grid = checked_grid(*extent, nx, ny, nz);

		check_inside(*from, grid, "the first mesh");
		check_inside(*to, grid, "the second mesh");
		if (device == GEOACC_DEVICE_GPU)
		{
#ifdef GEOACC_WITH_CUDA
			double		ms;

			require_gpu();
			mesh_distance_gpu(*from, *to, grid, spacing, measured, bound, &ms);
#else
			GEOACC_ON_GPU(0);
#endif
		}
		else
			mesh_distance_cpu(*from, *to, grid, spacing, measured, bound);
	});
}
