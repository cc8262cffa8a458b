/*
 * test_mesh_tileset.cpp
 *
 * 3D Tiles tilesets of meshes: vertex clustering against an independent
 * reference (cells grouped by a std::map, sums in long double), the
 * quadric's optimum on planes and at corners, the measured distance
 * against brute force (every triangle, long double), the declared
 * geometricError of every level against dense random samples of the full
 * mesh, crack-free levels (the GLB tiles of a level, welded by their
 * float32 bits, open no seam the level's mesh does not have, and a vertex
 * ending an open edge on a tile plane is a vertex of the neighbour, to the
 * bit), the tileset's structure, attributes carried, bad input, a real
 * mesh (CGAL's b9 at UTM coordinates); then the GPU against the CPU twin,
 * bit for bit.
 */
#include "core_test.h"
#include "../mesh_off.h"
#include "mesh_tileset.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace
{

typedef long double ld;

struct Mesh
{
	std::vector<double> positions;
	std::vector<uint32_t> triangles;
	uint32_t	k = 0;
	std::vector<float> attributes;

	uint32_t	nvertices() const { return (uint32_t) (positions.size() / 3); }
	uint32_t	ntriangles() const { return (uint32_t) (triangles.size() / 3); }
	GeoaccMesh	view() const
	{
		return {nvertices(), ntriangles(), positions.data(), triangles.data(), k, k ? attributes.data() : nullptr};
	}
};

struct Result
{
	GeoaccMeshResult r{};

	Result() = default;
	Result(const Result &) = delete;
	~Result() { geoacc_mesh_result_free(&r); }
	Mesh		mesh() const
	{
		Mesh		m;

		m.positions.assign(r.positions, r.positions + (size_t) r.nvertices * 3);
		m.triangles.assign(r.triangles, r.triangles + (size_t) r.ntriangles * 3);
		m.k = r.nattributes;
		if (m.k)
			m.attributes.assign(r.attributes, r.attributes + (size_t) r.nvertices * m.k);
		return m;
	}
};

struct Tileset
{
	GeoaccTileset t{};

	Tileset() = default;
	Tileset(const Tileset &) = delete;
	~Tileset() { geoacc_tileset_free(&t); }
	std::string json() const { return std::string((const char *) t.files[0].data, t.files[0].size); }
	const GeoaccTilesetFile *file(const std::string &path) const
	{
		for (uint32_t i = 0; i < t.nfiles; i++)
			if (path == t.files[i].path)
				return &t.files[i];
		return nullptr;
	}
};

double
uniform(double lo, double hi)
{
	return std::uniform_real_distribution<double>(lo, hi)(core_test::rng());
}

/* A terrain: an n x n grid of jittered points at (x0, y0) with spacing s, hills up to `height`, two triangles a quad. */
Mesh
terrain(uint32_t n, double x0, double y0, double s, double height)
{
	Mesh		m;
	double		fx = uniform(0.5, 3),
				fy = uniform(0.5, 3),
				ph = uniform(0, 6);

	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++)
		{
			double		u = (double) i / (n - 1),
						v = (double) j / (n - 1);
			double		jx = (i > 0 && i + 1 < n) ? uniform(-0.3, 0.3) * s : 0;
			double		jy = (j > 0 && j + 1 < n) ? uniform(-0.3, 0.3) * s : 0;

			m.positions.push_back(x0 + i * s + jx);
			m.positions.push_back(y0 + j * s + jy);
			m.positions.push_back(height * std::sin(fx * 6.28 * u + ph) * std::cos(fy * 6.28 * v) + uniform(0, 0.1 * s));
		}
	for (uint32_t i = 0; i + 1 < n; i++)
		for (uint32_t j = 0; j + 1 < n; j++)
		{
			uint32_t	a = i * n + j,
						b = (i + 1) * n + j,
						c = (i + 1) * n + j + 1,
						d = i * n + j + 1;

			m.triangles.insert(m.triangles.end(), {a, b, c, a, c, d});
		}
	return m;
}

void
bounds(const Mesh &m, double lo[3], double hi[3])
{
	for (int c = 0; c < 3; c++)
	{
		lo[c] = INFINITY;
		hi[c] = -INFINITY;
	}
	for (uint32_t v = 0; v < m.nvertices(); v++)
		for (int c = 0; c < 3; c++)
		{
			lo[c] = std::min(lo[c], m.positions[(size_t) v * 3 + c]);
			hi[c] = std::max(hi[c], m.positions[(size_t) v * 3 + c]);
		}
}

GeoaccBox
extent_of(const Mesh &m)
{
	double		lo[3],
				hi[3];

	bounds(m, lo, hi);
	return {lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]};
}

/* ------------------------------------------------ independent references */

/* Plane i of n of [lo, hi] (geoacc_grid_plane), and the cell of x by the planes themselves. */
ld
plane(double lo, double hi, uint32_t i, uint32_t n)
{
	return geoacc_grid_plane(lo, hi, i, n);
}

uint32_t
reference_cell(double x, double lo, double hi, uint32_t n)
{
	uint32_t	i = 0;

	/* the last plane below or at x */
	while (i + 1 < n && (ld) x >= plane(lo, hi, i + 1, n))
		i++;
	return i;
}

/*
 * Vertex clustering written plainly: cells in a std::map, each cell's
 * vertices and the planes of the triangles touching it summed in long
 * double, the 3 x 3 system solved by Gaussian elimination; the same
 * regularisation (a thousandth of the mean eigenvalue, three rounds from the
 * mean) and clamp.
 */
Mesh
reference_cluster(const Mesh &m, const GeoaccBox &e, uint32_t nx, uint32_t ny, uint32_t nz)
{
	const double lo[3] = {e.xmin, e.ymin, e.zmin}, hi[3] = {e.xmax, e.ymax, e.zmax};
	const uint32_t n[3] = {nx, ny, nz};
	typedef std::array<uint32_t, 3> Cell;
	std::map<Cell, std::vector<uint32_t>> verts;
	std::vector<Cell> cell_of(m.nvertices());

	for (uint32_t v = 0; v < m.nvertices(); v++)
	{
		Cell		c;

		for (int a = 0; a < 3; a++)
			c[a] = reference_cell(m.positions[(size_t) v * 3 + a], lo[a], hi[a], n[a]);
		cell_of[v] = c;
		verts[c].push_back(v);
	}

	std::map<Cell, uint32_t> number;
	std::map<Cell, std::vector<double>> rep;
	std::map<std::pair<uint32_t, uint32_t>, int> edge_uses;

	for (uint32_t t = 0; t < m.ntriangles(); t++)
		for (int j = 0; j < 3; j++)
		{
			uint32_t	a = m.triangles[(size_t) t * 3 + j],
						b = m.triangles[(size_t) t * 3 + (j + 1) % 3];

			edge_uses[{std::min(a, b), std::max(a, b)}]++;
		}

	for (const auto &cv : verts)
	{
		const Cell &c = cv.first;
		ld			clo[3],
					chi[3],
					o[3],
					mean[3] = {0, 0, 0};
		ld			A[3][3] = {{0}},
					b[3] = {0};

		for (int a = 0; a < 3; a++)
		{
			clo[a] = plane(lo[a], hi[a], c[a], n[a]);
			chi[a] = plane(lo[a], hi[a], c[a] + 1, n[a]);
			o[a] = clo[a] + (chi[a] - clo[a]) / 2;
		}
		for (uint32_t v : cv.second)
			for (int a = 0; a < 3; a++)
				mean[a] += (m.positions[(size_t) v * 3 + a] - o[a]) / cv.second.size();
		for (uint32_t t = 0; t < m.ntriangles(); t++)
		{
			const uint32_t *tri = &m.triangles[(size_t) t * 3];

			if (cell_of[tri[0]] != c && cell_of[tri[1]] != c && cell_of[tri[2]] != c)
				continue;

			ld			p[3][3];

			for (int i = 0; i < 3; i++)
				for (int a = 0; a < 3; a++)
					p[i][a] = m.positions[(size_t) tri[i] * 3 + a] - o[a];

			ld			e1[3],
						e2[3],
						nn[3];

			for (int a = 0; a < 3; a++)
			{
				e1[a] = p[1][a] - p[0][a];
				e2[a] = p[2][a] - p[0][a];
			}
			nn[0] = e1[1] * e2[2] - e1[2] * e2[1];
			nn[1] = e1[2] * e2[0] - e1[0] * e2[2];
			nn[2] = e1[0] * e2[1] - e1[1] * e2[0];

			ld			len = std::sqrt(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);

			if (len == 0)
				continue;

			ld			d = -(nn[0] * p[0][0] + nn[1] * p[0][1] + nn[2] * p[0][2]) / len;

			for (int i = 0; i < 3; i++)
			{
				for (int j = 0; j < 3; j++)
					A[i][j] += len / 2 * (nn[i] / len) * (nn[j] / len);
				b[i] += len / 2 * d * (nn[i] / len);
			}

			/* open edges touching the cell: the plane through the edge perpendicular to the triangle */
			for (int j = 0; j < 3; j++)
			{
				uint32_t	va = tri[j],
							vb = tri[(j + 1) % 3];

				if (va == vb || edge_uses[{std::min(va, vb), std::max(va, vb)}] != 1
					|| (cell_of[va] != c && cell_of[vb] != c))
					continue;

				ld			e[3],
							u[3];

				for (int a = 0; a < 3; a++)
					e[a] = p[(j + 1) % 3][a] - p[j][a];
				u[0] = e[1] * nn[2] - e[2] * nn[1];
				u[1] = e[2] * nn[0] - e[0] * nn[2];
				u[2] = e[0] * nn[1] - e[1] * nn[0];

				ld			ul = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
				ld			w = e[0] * e[0] + e[1] * e[1] + e[2] * e[2];

				for (int a = 0; a < 3; a++)
					u[a] /= ul;

				ld			dd = -(u[0] * p[j][0] + u[1] * p[j][1] + u[2] * p[j][2]);

				for (int i = 0; i < 3; i++)
				{
					for (int k = 0; k < 3; k++)
						A[i][k] += w * u[i] * u[k];
					b[i] += w * dd * u[i];
				}
			}
		}

		ld			x[3] = {mean[0], mean[1], mean[2]};
		ld			trace = A[0][0] + A[1][1] + A[2][2];

		/* three rounds of regularised Newton steps from the mean, as the core iterates */
		for (int round = 0; trace > 0 && round < 3; round++)
		{
			ld			M[3][4];

			for (int i = 0; i < 3; i++)
			{
				for (int j = 0; j < 3; j++)
					M[i][j] = A[i][j] + (i == j ? trace / 3000 : 0);
				M[i][3] = -(A[i][0] * x[0] + A[i][1] * x[1] + A[i][2] * x[2] + b[i]);
			}
			for (int col = 0; col < 3; col++)
			{
				int			piv = col;

				for (int r = col + 1; r < 3; r++)
					if (std::fabs(M[r][col]) > std::fabs(M[piv][col]))
						piv = r;
				for (int j = 0; j < 4; j++)
					std::swap(M[col][j], M[piv][j]);
				for (int r = 0; r < 3; r++)
					if (r != col)
					{
						ld			f = M[r][col] / M[col][col];

						for (int j = col; j < 4; j++)
							M[r][j] -= f * M[col][j];
					}
			}
			for (int i = 0; i < 3; i++)
				x[i] += M[i][3] / M[i][i];
		}

		std::vector<double> r(3);

		for (int a = 0; a < 3; a++)
			r[a] = (double) std::min(std::max(o[a] + x[a], clo[a]), chi[a]);
		rep[c] = r;
	}

	Mesh		out;
	std::set<Cell> used;

	for (uint32_t t = 0; t < m.ntriangles(); t++)
	{
		const uint32_t *tri = &m.triangles[(size_t) t * 3];

		if (cell_of[tri[0]] != cell_of[tri[1]] && cell_of[tri[1]] != cell_of[tri[2]]
			&& cell_of[tri[0]] != cell_of[tri[2]])
			for (int i = 0; i < 3; i++)
				used.insert(cell_of[tri[i]]);
	}
	for (const Cell &c : used)
	{
		number[c] = out.nvertices();
		out.positions.insert(out.positions.end(), rep[c].begin(), rep[c].end());
	}
	for (uint32_t t = 0; t < m.ntriangles(); t++)
	{
		const uint32_t *tri = &m.triangles[(size_t) t * 3];

		if (cell_of[tri[0]] != cell_of[tri[1]] && cell_of[tri[1]] != cell_of[tri[2]]
			&& cell_of[tri[0]] != cell_of[tri[2]])
			for (int i = 0; i < 3; i++)
				out.triangles.push_back(number[cell_of[tri[i]]]);
	}
	return out;
}

/* Distance from p to triangle abc in long double: the plane's foot if inside (barycentric), else the edges. */
ld
seg_dist(const ld *p, const ld *a, const ld *b)
{
	ld			ab[3],
				ap[3],
				l2 = 0,
				t = 0,
				d2 = 0;

	for (int c = 0; c < 3; c++)
	{
		ab[c] = b[c] - a[c];
		ap[c] = p[c] - a[c];
		l2 += ab[c] * ab[c];
		t += ab[c] * ap[c];
	}
	t = l2 > 0 ? std::min(std::max(t / l2, (ld) 0), (ld) 1) : 0;
	for (int c = 0; c < 3; c++)
	{
		ld			d = a[c] + t * ab[c] - p[c];

		d2 += d * d;
	}
	return std::sqrt(d2);
}

ld
reference_point_triangle(const double *pp, const double *aa, const double *bb, const double *cc)
{
	ld			p[3],
				a[3],
				b[3],
				c[3];

	for (int i = 0; i < 3; i++)
	{
		p[i] = pp[i];
		a[i] = aa[i];
		b[i] = bb[i];
		c[i] = cc[i];
	}

	ld			u[3],
				v[3],
				w[3],
				n[3];

	for (int i = 0; i < 3; i++)
	{
		u[i] = b[i] - a[i];
		v[i] = c[i] - a[i];
		w[i] = p[i] - a[i];
	}
	n[0] = u[1] * v[2] - u[2] * v[1];
	n[1] = u[2] * v[0] - u[0] * v[2];
	n[2] = u[0] * v[1] - u[1] * v[0];

	ld			n2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];

	if (n2 > 0)
	{
		/* barycentric coordinates of the foot */
		ld			uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2],
					uv = u[0] * v[0] + u[1] * v[1] + u[2] * v[2],
					vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2],
					wu = w[0] * u[0] + w[1] * u[1] + w[2] * u[2],
					wv = w[0] * v[0] + w[1] * v[1] + w[2] * v[2];
		ld			den = uv * uv - uu * vv;
		ld			s = (uv * wv - vv * wu) / den,
					t = (uv * wu - uu * wv) / den;

		if (s >= 0 && t >= 0 && s + t <= 1)
			return std::fabs(n[0] * w[0] + n[1] * w[1] + n[2] * w[2]) / std::sqrt(n2);
	}
	return std::min(seg_dist(p, a, b), std::min(seg_dist(p, b, c), seg_dist(p, c, a)));
}

ld
reference_point_mesh(const double *p, const Mesh &m)
{
	ld			best = INFINITY;

	for (uint32_t t = 0; t < m.ntriangles(); t++)
	{
		const uint32_t *tri = &m.triangles[(size_t) t * 3];

		best = std::min(best, reference_point_triangle(p, &m.positions[(size_t) tri[0] * 3],
													   &m.positions[(size_t) tri[1] * 3],
													   &m.positions[(size_t) tri[2] * 3]));
	}
	return best;
}

/* A random point on a random triangle of m (uniform on the triangle). */
void
random_surface_point(const Mesh &m, double *p)
{
	uint32_t	t = std::uniform_int_distribution<uint32_t>(0, m.ntriangles() - 1)(core_test::rng());
	double		r1 = uniform(0, 1),
				r2 = uniform(0, 1);

	if (r1 + r2 > 1)
	{
		r1 = 1 - r1;
		r2 = 1 - r2;
	}

	const double *a = &m.positions[(size_t) m.triangles[t * 3] * 3],
			   *b = &m.positions[(size_t) m.triangles[t * 3 + 1] * 3],
			   *c = &m.positions[(size_t) m.triangles[t * 3 + 2] * 3];

	for (int i = 0; i < 3; i++)
		p[i] = a[i] + r1 * (b[i] - a[i]) + r2 * (c[i] - a[i]);
}

/* ------------------------------------------------------- reading tilesets */

/* The number after `"key":` from position `from` of s (NaN when absent). */
double
json_number_after(const std::string &s, const std::string &key, size_t from = 0, size_t *at = nullptr)
{
	size_t		i = s.find("\"" + key + "\":", from);

	if (i == std::string::npos)
		return NAN;
	i += key.size() + 3;
	if (at)
		*at = i;
	return strtod(s.c_str() + i, nullptr);
}

/* A GLB tile as geoacc writes it: float32 positions (y-up), the attributes' names, uint32 indices. */
struct Glb
{
	std::vector<float> positions;
	std::vector<uint32_t> indices;
	std::string json;
	bool		ok = false;
};

Glb
read_glb(const GeoaccTilesetFile &f)
{
	Glb			g;
	uint32_t	head[5];

	if (f.size < 20)
		return g;
	memcpy(head, f.data, 20);
	if (head[0] != 0x46546C67 || head[1] != 2 || head[2] != f.size || head[4] != 0x4E4F534A)
		return g;
	g.json.assign((const char *) f.data + 20, head[3]);

	const uint8_t *bin = f.data + 20 + head[3] + 8;
	std::vector<std::pair<size_t, size_t>> views;
	size_t		at = g.json.find("\"bufferViews\":[");

	while (true)
	{
		size_t		o;
		double		off = json_number_after(g.json, "byteOffset", at, &o);

		if (std::isnan(off) || o > g.json.find("\"accessors\""))
			break;

		double		len = json_number_after(g.json, "byteLength", o, &at);

		views.emplace_back((size_t) off, (size_t) len);
	}
	if (views.size() < 2)
		return g;
	g.positions.resize(views.front().second / 4);
	memcpy(g.positions.data(), bin + views.front().first, views.front().second);
	g.indices.resize(views.back().second / 4);
	memcpy(g.indices.data(), bin + views.back().first, views.back().second);
	g.ok = true;
	return g;
}

/* geometricError of every tile of a level, from tileset.json: the first tile of that level's path. */
double
level_error(const std::string &json, uint32_t level)
{
	/* a tile's geometricError comes right before its content */
	std::string uri = "\"uri\":\"tiles/" + std::to_string(level) + "/";
	size_t		u = json.find(uri);

	if (u == std::string::npos)
		return NAN;

	size_t		g = json.rfind("\"geometricError\":", u);

	return strtod(json.c_str() + g + 17, nullptr);
}

GeoaccTilesetOptions
options(uint32_t levels, uint32_t cells, uint32_t layout = 0)
{
	GeoaccTilesetOptions o;

	memset(&o, 0, sizeof(o));
	o.levels = levels;
	o.cells = cells;
	o.layout = layout;
	for (int i = 0; i < 4; i++)
		o.transform[i * 5] = 1;
	o.generator = "geoacc tests";
	return o;
}

/* The level's own mesh, as the tileset builds it (the leaves: the mesh itself). */
Mesh
level_mesh(const Mesh &m, uint32_t level, uint32_t levels, uint32_t cells)
{
	if (level + 1 == levels)
		return m;

	GeoaccMesh	v = m.view();
	GeoaccBox	e;
	double		origin[3];

	CHECK_OK(geoacc_mesh_tileset_extent(&v, &e, origin));

	uint32_t	n = (1u << level) * cells;
	double		width = (e.xmax - e.xmin) / n;
	double		nz = std::ceil((e.zmax - e.zmin) / width);
	Result		r;

	nz = std::min(std::max(nz, 1.0), (double) (1u << 20));
	CHECK_OK(geoacc_mesh_cluster(GEOACC_DEVICE_CPU, &v, &e, n, n, (uint32_t) nz, &r.r, nullptr));
	return r.mesh();
}

typedef std::array<float, 3> F3;

/* Edge counts (undirected) of a welded set of GLB tiles. */
typedef std::map<std::pair<F3, F3>, int> Edges;

void
add_edges(const Glb &g, Edges &edges)
{
	for (size_t t = 0; t + 2 < g.indices.size(); t += 3)
		for (int i = 0; i < 3; i++)
		{
			uint32_t	a = g.indices[t + i],
						b = g.indices[t + (i + 1) % 3];
			F3			pa = {g.positions[a * 3], g.positions[a * 3 + 1], g.positions[a * 3 + 2]};
			F3			pb = {g.positions[b * 3], g.positions[b * 3 + 1], g.positions[b * 3 + 2]};

			if (pa == pb)
				continue;
			edges[pa < pb ? std::make_pair(pa, pb) : std::make_pair(pb, pa)]++;
		}
}

ld
open_length(const Edges &edges)
{
	ld			sum = 0;

	for (const auto &e : edges)
		if (e.second == 1)
		{
			ld			d2 = 0;

			for (int c = 0; c < 3; c++)
				d2 += ((ld) e.first.second[c] - e.first.first[c]) * ((ld) e.first.second[c] - e.first.first[c]);
			sum += std::sqrt(d2);
		}
	return sum;
}

/*
 * No crack at any level: the tiles of a level, welded by their float32
 * bits, are open exactly where the level's own mesh is (their open length
 * is its open length, to float32 rounding), and every vertex that ends an
 * open edge of a tile on a plane between two tiles is a vertex of the
 * neighbour across it, to the bit (away from the mesh's own border, whose
 * open edges may lie on a plane).
 */
void
check_no_cracks(const Tileset &ts, const Mesh &m, uint32_t levels, uint32_t cells)
{
	GeoaccMesh	v = m.view();
	GeoaccBox	e;
	double		origin[3];

	CHECK_OK(geoacc_mesh_tileset_extent(&v, &e, origin));
	for (uint32_t l = 0; l < levels; l++)
	{
		const uint32_t n = 1u << l;
		std::map<std::pair<uint32_t, uint32_t>, Glb> tiles;
		Edges		all;

		for (uint32_t ix = 0; ix < n; ix++)
			for (uint32_t iy = 0; iy < n; iy++)
			{
				const GeoaccTilesetFile *f = ts.file("tiles/" + std::to_string(l) + "/" + std::to_string(ix) + "/"
													 + std::to_string(iy) + ".glb");

				if (f == nullptr)
					continue;

				Glb			g = read_glb(*f);

				CHECK(g.ok);
				add_edges(g, all);
				tiles[{ix, iy}] = g;
			}

		/* the level's own mesh, its open length in float32 relative to the origin */
		Mesh		lm = level_mesh(m, l, levels, cells);
		Glb			whole;

		for (uint32_t i = 0; i < lm.nvertices(); i++)
		{
			const double *p = &lm.positions[(size_t) i * 3];

			whole.positions.insert(whole.positions.end(), {(float) (p[0] - origin[0]), (float) (p[2] - origin[2]),
														   (float) -(p[1] - origin[1])});
		}
		whole.indices = lm.triangles;

		Edges		own;

		add_edges(whole, own);

		ld			a = open_length(all),
					b = open_length(own);

		if (!(std::fabs(a - b) <= 1e-5L * (1 + b)))
			fprintf(stderr, "    level %u: open length of the tiles %.9Lg, of the level's mesh %.9Lg\n", l, a, b);
		CHECK(std::fabs(a - b) <= 1e-5L * (1 + b));

		/* border vertices: ends of a tile's open edges on an inner plane are the neighbour's vertices */
		for (const auto &tv : tiles)
		{
			Edges		mine;

			add_edges(tv.second, mine);
			for (int axis = 0; axis < 2; axis++)
			{
				/* glTF: x is x, z is -y */
				const int gl = axis == 0 ? 0 : 2;
				const uint32_t i = axis == 0 ? tv.first.first : tv.first.second;

				for (int side = 0; side < 2; side++)
				{
					uint32_t	j = i + side;

					if (j == 0 || j == n)
						continue;

					double		lo = axis == 0 ? e.xmin : e.ymin,
								hi = axis == 0 ? e.xmax : e.ymax;
					float		at = axis == 0 ? (float) (geoacc_grid_plane(lo, hi, j, n) - origin[0])
						: (float) -(geoacc_grid_plane(lo, hi, j, n) - origin[1]);
					std::pair<uint32_t, uint32_t> other = tv.first;

					(axis == 0 ? other.first : other.second) += side ? 1 : -1;

					auto		o = tiles.find(other);
					std::set<F3> theirs;

					if (o != tiles.end())
						for (size_t q = 0; q + 2 < o->second.positions.size(); q += 3)
							theirs.insert({o->second.positions[q], o->second.positions[q + 1],
										   o->second.positions[q + 2]});
					/* the mesh's own border meets the plane at its ends: open edges there are the mesh's */
					const int	other_gl = gl == 0 ? 2 : 0;
					const double half = (e.xmax - e.xmin) / 2;
					auto		near_border = [&](const F3 &q) {
						return std::fabs(std::fabs((double) q[other_gl]) - half) < 0.02 * half;
					};

					for (const auto &ed : mine)
						if (ed.second == 1 && ed.first.first[gl] == at && ed.first.second[gl] == at
							&& !near_border(ed.first.first) && !near_border(ed.first.second))
						{
							bool		found = theirs.count(ed.first.first) && theirs.count(ed.first.second);

							if (!found)
								fprintf(stderr, "    level %u tile (%u, %u): a border vertex is not in the "
										"neighbour: edge (%.9g %.9g %.9g)-(%.9g %.9g %.9g), plane %.9g on gl %d\n", l,
										tv.first.first, tv.first.second, ed.first.first[0], ed.first.first[1],
										ed.first.first[2], ed.first.second[0], ed.first.second[1], ed.first.second[2],
										at, gl);
							CHECK(found);
						}
				}
			}
		}
	}
}

/* Every level's declared geometricError holds: dense random points of the full mesh lie within it of the level. */
void
check_error_bounds(const Tileset &ts, const Mesh &m, uint32_t levels, uint32_t cells, int samples)
{
	const std::string json = ts.json();

	for (uint32_t l = 0; l + 1 < levels; l++)
	{
		Mesh		lm = level_mesh(m, l, levels, cells);
		double		declared = level_error(json, l);
		ld			worst = 0;

		if (std::isnan(declared))
			continue;			/* the level has no content */
		CHECK(declared >= ts.t.bound[l]);
		CHECK(ts.t.bound[l] >= ts.t.measured[l]);
		for (int s = 0; s < samples; s++)
		{
			double		p[3];

			random_surface_point(m, p);
			worst = std::max(worst, reference_point_mesh(p, lm));
		}
		/* the vertices, which the measure samples too */
		for (uint32_t i = 0; i < m.nvertices(); i += std::max(1u, m.nvertices() / 500))
			worst = std::max(worst, reference_point_mesh(&m.positions[(size_t) i * 3], lm));
		if (!(worst <= declared))
			fprintf(stderr, "    level %u: a point %.9Lg from the level, declared %.9g\n", l, worst, declared);
		CHECK(worst <= declared);
	}
}

}								/* namespace */

/* ----------------------------------------------------------- clustering */

TEST(mesh_cluster_against_reference)
{
	for (int round = 0; round < 8; round++)
	{
		double		x0 = round % 2 ? 583000 : 0,
					y0 = round % 2 ? 4507000 : 0;
		Mesh		m = terrain(12 + round * 3, x0, y0, uniform(0.5, 20), uniform(0, 30));
		GeoaccBox	e = extent_of(m);
		uint32_t	nx = 1 + round * 2,
					ny = 2 + round,
					nz = 1 + round % 3;
		Result		r;
		GeoaccMesh	v = m.view();

		CHECK_OK(geoacc_mesh_cluster(GEOACC_DEVICE_CPU, &v, &e, nx, ny, nz, &r.r, nullptr));

		Mesh		ref = reference_cluster(m, e, nx, ny, nz);
		Mesh		got = r.mesh();

		CHECK(got.triangles == ref.triangles);
		CHECK(got.nvertices() == ref.nvertices());
		if (got.nvertices() != ref.nvertices())
			continue;

		double		cell = std::max((e.xmax - e.xmin) / nx, std::max((e.ymax - e.ymin) / ny, (e.zmax - e.zmin) / nz));
		double		worst = 0;

		for (size_t i = 0; i < got.positions.size(); i++)
			worst = std::max(worst, std::fabs(got.positions[i] - ref.positions[i]));
		if (!(worst <= 1e-7 * cell))
			fprintf(stderr, "    round %d: representatives %.3g from the reference's (cell %.3g)\n", round, worst,
					cell);
		CHECK(worst <= 1e-7 * cell);
	}
}

/*
 * On a plane every representative lies on the plane (the quadric's
 * optimum), inside its cell; in the cells of the mesh's border the
 * optimum is on the border's line, which a clamp to the cell may move off
 * the tilted plane, so those are only checked to be inside the extent.
 */
TEST(mesh_cluster_plane_is_kept)
{
	Mesh		m = terrain(40, 500000, 4000000, 3, 0);
	double		a = uniform(-0.5, 0.5),
				b = uniform(-0.5, 0.5);

	for (uint32_t v = 0; v < m.nvertices(); v++)
		m.positions[(size_t) v * 3 + 2] = 10 + a * (m.positions[(size_t) v * 3] - 500000)
			+ b * (m.positions[(size_t) v * 3 + 1] - 4000000);

	GeoaccBox	e = extent_of(m);
	GeoaccMesh	v = m.view();
	Result		r;

	CHECK_OK(geoacc_mesh_cluster(GEOACC_DEVICE_CPU, &v, &e, 7, 7, 3, &r.r, nullptr));
	CHECK(r.r.ntriangles > 20);

	const double cell = (e.xmax - e.xmin) / 7;
	int			inner = 0;

	for (uint32_t i = 0; i < r.r.nvertices; i++)
	{
		const double *p = r.r.positions + (size_t) i * 3;
		double		z = 10 + a * (p[0] - 500000) + b * (p[1] - 4000000);

		CHECK(p[0] >= e.xmin && p[0] <= e.xmax && p[1] >= e.ymin && p[1] <= e.ymax);
		if (p[0] < e.xmin + cell || p[0] > e.xmax - cell || p[1] < e.ymin + cell || p[1] > e.ymax - cell)
			continue;
		inner++;
		CHECK(std::fabs(p[2] - z) <= 1e-6);
	}
	CHECK(inner >= 10);
}

/* A box's corners survive clustering where a cell holds one corner (three planes meet there). */
TEST(mesh_cluster_keeps_corners)
{
	/* a 10 m cube of 2 x 6 x 8 x 8 triangles at UTM coordinates */
	Mesh		m;
	const int	n = 8;
	const double s = 10.0 / n;

	for (int f = 0; f < 6; f++)
	{
		int			axis = f / 2,
					u = (axis + 1) % 3,
					w = (axis + 2) % 3;
		uint32_t	base = m.nvertices();

		for (int i = 0; i <= n; i++)
			for (int j = 0; j <= n; j++)
			{
				double		p[3];

				p[axis] = (f % 2) * 10.0;
				p[u] = i * s;
				p[w] = j * s;
				m.positions.insert(m.positions.end(), {p[0] + 500000, p[1] + 4000000, p[2] + 100});
			}
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
			{
				uint32_t	a = base + i * (n + 1) + j,
							b = base + (i + 1) * (n + 1) + j,
							c = b + 1,
							d = a + 1;

				m.triangles.insert(m.triangles.end(), {a, b, c, a, c, d});
			}
	}

	GeoaccBox	e = extent_of(m);
	GeoaccMesh	v = m.view();
	Result		r;

	CHECK_OK(geoacc_mesh_cluster(GEOACC_DEVICE_CPU, &v, &e, 3, 3, 3, &r.r, nullptr));

	int			corners = 0;

	for (uint32_t i = 0; i < r.r.nvertices; i++)
	{
		const double *p = r.r.positions + (size_t) i * 3;
		bool		at_corner = true;
		const double lo[3] = {500000, 4000000, 100};

		for (int c = 0; c < 3; c++)
			at_corner &= std::fabs(p[c] - lo[c]) <= 1e-6 || std::fabs(p[c] - lo[c] - 10) <= 1e-6;
		corners += at_corner;
	}
	if (corners != 8)
		fprintf(stderr, "    %d corners kept of 8, %u vertices\n", corners, r.r.nvertices);
	CHECK(corners == 8);
}

/* ------------------------------------------------------------- distance */

/* The mesh clustered on the CPU in n x n x 1 cells of the extent: a parent level to measure against. */
Mesh
clustered(const Mesh &full, const GeoaccBox &e, uint32_t n)
{
	GeoaccMesh	fv = full.view();
	Result		coarse;

	CHECK_OK(geoacc_mesh_cluster(GEOACC_DEVICE_CPU, &fv, &e, n, n, 1, &coarse.r, nullptr));
	return coarse.mesh();
}

TEST(mesh_distance_against_brute_force)
{
	for (int round = 0; round < 6; round++)
	{
		Mesh		full = terrain(15 + round * 2, round % 2 ? 583000 : 0, round % 2 ? 4507000 : 0, uniform(1, 10),
								   uniform(1, 20));
		GeoaccBox	e = extent_of(full);
		GeoaccMesh	fv = full.view();
		uint32_t	n = 2 + round;
		Mesh		to = clustered(full, e, n);
		GeoaccMesh	tv = to.view();
		double		spacing = (e.xmax - e.xmin) / n / 8;
		double		measured,
					bound;

		CHECK_OK(geoacc_mesh_distance(GEOACC_DEVICE_CPU, &fv, &tv, &e, n, n, 1, spacing, &measured, &bound));

		/* the vertices by brute force: measured is at least their largest distance */
		ld			vmax = 0;

		for (uint32_t v = 0; v < full.nvertices(); v++)
			vmax = std::max(vmax, reference_point_mesh(&full.positions[(size_t) v * 3], to));
		CHECK(measured >= (double) vmax * (1 - 1e-9) - 1e-9);
		/* every point of the surface within the bound */
		ld			dense = 0;

		for (int s = 0; s < 3000; s++)
		{
			double		p[3];

			random_surface_point(full, p);
			dense = std::max(dense, reference_point_mesh(p, to));
		}
		CHECK(dense <= bound);
		CHECK(bound >= measured);
	}

	/* to itself: 0; to nothing: infinity */
	Mesh		m = terrain(10, 0, 0, 1, 1);
	GeoaccBox	e = extent_of(m);
	GeoaccMesh	v = m.view();
	Mesh		none;
	GeoaccMesh	nv = none.view();
	double		measured,
				bound;

	CHECK_OK(geoacc_mesh_distance(GEOACC_DEVICE_CPU, &v, &v, &e, 3, 3, 1, 0.5, &measured, &bound));
	CHECK(measured <= 1e-9);
	CHECK_OK(geoacc_mesh_distance(GEOACC_DEVICE_CPU, &v, &nv, &e, 3, 3, 1, 0.5, &measured, &bound));
	CHECK(std::isinf(measured) && std::isinf(bound));
	CHECK(geoacc_mesh_distance(GEOACC_DEVICE_CPU, &v, &v, &e, 3, 3, 1, 0, &measured, &bound)
		  == GEOACC_ERR_INVALID_ARGUMENT);
}

/*
 * The nearest-triangle search behind the error measurement skips cells and
 * triangles whose boxes are farther than the best found: it must find what
 * measuring every triangle finds, the least distance and, of equal ones,
 * the lowest index.  Points near the level's surface (where most cells are
 * skipped), on it (distance 0), far off it and outside the grid; levels of
 * small, long and degenerate triangles.
 */
TEST(mesh_nearest_search_equals_every_triangle)
{
	using namespace geoacc;

	for (int round = 0; round < 8; round++)
	{
		Mesh		full = terrain(12 + round * 3, round % 2 ? 583000 : 0, round % 2 ? 4507000 : 0, uniform(1, 10),
								   uniform(0.5, 20));
		GeoaccBox	e = extent_of(full);
		const uint32_t n = 2 + round * 3;
		Mesh		to = clustered(full, e, n);
		const double span = e.xmax - e.xmin;

		/*
		 * long triangles across many cells, one without area, some reaching
		 * out of the grid (its edge cells hold them), one repeated (equal
		 * distances)
		 */
		for (int extra = 0; extra < 6; extra++)
		{
			const uint32_t base = to.nvertices();
			const double out = extra >= 2 ? 0.5 : 0;

			for (int c = 0; c < 3; c++)
			{
				to.positions.push_back(e.xmin + uniform(-out, 1 + out) * span);
				to.positions.push_back(e.ymin + uniform(-out, 1 + out) * (e.ymax - e.ymin));
				to.positions.push_back(e.zmin + uniform(-out, 1 + out) * (e.zmax - e.zmin));
			}
			if (extra == 1)
				for (int c = 0; c < 3; c++)
					to.positions[(size_t) (base + 2) * 3 + c] = to.positions[(size_t) base * 3 + c];
			to.triangles.insert(to.triangles.end(), {base, base + 1, base + 2});
		}
		to.triangles.insert(to.triangles.end(), to.triangles.begin(), to.triangles.begin() + 3);

		const TilesetGrid g{{e.xmin, e.ymin, e.zmin}, {e.xmax, e.ymax, e.zmax}, {n * 2, n * 2, 1 + (uint32_t) round % 3}};
		TilesetHostBuckets hb;

		bucket_triangles_cpu(to.view(), g, hb);

		int			mismatches = 0;

		for (int q = 0; q < 2000; q++)
		{
			double		p[3];
			const int	kind = q % 4;

			if (kind == 0)		/* a vertex of the level: on its surface */
				memcpy(p, &to.positions[(size_t) to.triangles[(size_t) (q / 4 % to.ntriangles()) * 3] * 3], sizeof(p));
			else
			{
				random_surface_point(full, p);
				if (kind == 2)	/* off the surface */
					p[2] += uniform(-1, 1) * span * 0.1;
				else if (kind == 3)	/* outside the grid too */
					for (int c = 0; c < 3; c++)
						p[c] += uniform(-1, 1) * span * 0.6;
			}

			TilesetNearest found = tileset_point_level_nearest(p, g, hb.view(), to.positions.data(), to.triangles.data());
			double		best = DBL_MAX;
			uint32_t	best_tri = TILESET_NO_CELL;

			for (uint32_t t = 0; t < to.ntriangles(); t++)
			{
				double		d2 = tileset_point_mesh_triangle_d2(p, t, to.positions.data(), to.triangles.data());

				if (d2 < best)
				{
					best = d2;
					best_tri = t;
				}
			}
			if (found.d2 != best || found.tri != best_tri)
			{
				if (mismatches++ < 3)
					fprintf(stderr, "    round %d point %d: found %.17g (triangle %u), every triangle %.17g (%u)\n", round,
							q, found.d2, found.tri, best, best_tri);
			}
		}
		CHECK(mismatches == 0);
	}
}

/* The error measurement on several threads: the same bits as on one, and an interrupt stops them all. */
int			distance_polls_left;

int
interrupt_distance_after_polls()
{
	return --distance_polls_left < 0;
}

TEST(mesh_distance_threads_same_bits)
{
	for (int round = 0; round < 3; round++)
	{
		/* more vertices and triangles than one piece (65,536) holds */
		Mesh		full = terrain(300 + round * 60, round % 2 ? 583000 : 0, round % 2 ? 4507000 : 0,
								   uniform(0.5, 5), uniform(1, 30));
		GeoaccBox	e = extent_of(full);
		GeoaccMesh	fv = full.view();
		uint32_t	n = 3 + round;
		Mesh		to = clustered(full, e, n);
		GeoaccMesh	tv = to.view();
		double		spacing = (e.xmax - e.xmin) / n / 8;
		double		measured[3],
					bound[3];
		const int	threads[3] = {1, 4, 7};

		for (int t = 0; t < 3; t++)
		{
			geoacc_cpu_set_threads(threads[t]);
			CHECK_OK(geoacc_mesh_distance(GEOACC_DEVICE_CPU, &fv, &tv, &e, n, n, 1, spacing, &measured[t],
										  &bound[t]));
		}
		geoacc_cpu_set_threads(1);
		for (int t = 1; t < 3; t++)
			CHECK(memcmp(&measured[t], &measured[0], sizeof(double)) == 0
				  && memcmp(&bound[t], &bound[0], sizeof(double)) == 0);

		/* cancelled at the calling thread's first poll, the other threads at work: an ERROR once they stop */
		geoacc_cpu_set_threads(4);
		distance_polls_left = 0;
		geoacc_set_interrupt_callback(interrupt_distance_after_polls);
		GeoaccStatus s = geoacc_mesh_distance(GEOACC_DEVICE_CPU, &fv, &tv, &e, n, n, 1, spacing, &measured[1],
											  &bound[1]);

		geoacc_set_interrupt_callback(nullptr);
		geoacc_cpu_set_threads(1);
		CHECK(s == GEOACC_ERR_CANCELLED);
	}
}

/* ------------------------------------------------------------- tilesets */

TEST(mesh_tileset_structure)
{
	Mesh		m = terrain(60, 583000, 4507000, 5, 15);
	GeoaccMesh	v = m.view();
	GeoaccTilesetOptions o = options(4, 8);
	Tileset		ts;

	CHECK_OK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &ts.t, nullptr));
	CHECK(ts.t.nfiles == 1 + 1 + 4 + 16 + 64);
	CHECK(std::string(ts.t.files[0].path) == "tileset.json");

	std::string json = ts.json();

	CHECK(json.find("\"asset\":{\"version\":\"1.1\",\"generator\":\"geoacc tests\"}") == 1);
	CHECK(json.find("\"refine\":\"REPLACE\"") != std::string::npos);
	/* every GLB is named once in tileset.json, and named files exist */
	for (uint32_t i = 1; i < ts.t.nfiles; i++)
	{
		std::string uri = std::string("\"uri\":\"") + ts.t.files[i].path + "\"";

		CHECK(json.find(uri) != std::string::npos);
		CHECK(json.find(uri, json.find(uri) + 1) == std::string::npos);
		CHECK(read_glb(ts.t.files[i]).ok);
	}
	/* errors fall with the levels, the leaves' are 0, the tileset's above the root's */
	CHECK(level_error(json, 3) == 0);
	CHECK(level_error(json, 2) > 0);
	CHECK(level_error(json, 1) >= level_error(json, 2));
	CHECK(level_error(json, 0) >= level_error(json, 1));
	CHECK(json_number_after(json, "geometricError") >= level_error(json, 0));
	/* the leaves together are the mesh: their triangles cover its area, nothing simplified */
	CHECK(ts.t.triangles[3] == m.ntriangles());
	CHECK(ts.t.triangles[0] < ts.t.triangles[1] && ts.t.triangles[1] < ts.t.triangles[2]);
	CHECK(ts.t.tiles[3] == 64 && ts.t.tiles[0] == 1);
	/* the root transform as given: the identity */
	CHECK(json.find("\"transform\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]") != std::string::npos);

	/* one level: the root is the whole mesh */
	Tileset		one;
	GeoaccTilesetOptions o1 = options(1, 8);

	CHECK_OK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o1, &one.t, nullptr));
	CHECK(one.t.nfiles == 2);
	CHECK(read_glb(one.t.files[1]).indices.size() == m.triangles.size());
}

/* Bounding volumes hold their content and their children. */
TEST(mesh_tileset_bounding_volumes)
{
	Mesh		m = terrain(40, 583000, 4507000, 5, 40);
	GeoaccMesh	v = m.view();
	GeoaccTilesetOptions o = options(3, 4);
	Tileset		ts;

	CHECK_OK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &ts.t, nullptr));

	std::string json = ts.json();

	for (uint32_t i = 1; i < ts.t.nfiles; i++)
	{
		std::string uri = std::string("\"uri\":\"") + ts.t.files[i].path + "\"";
		size_t		u = json.find(uri);
		size_t		b = json.rfind("\"box\":[", u);
		double		box[12];
		const char *p = json.c_str() + b + 7;

		for (int k = 0; k < 12; k++)
		{
			char	   *end;

			box[k] = strtod(p, &end);
			p = end + 1;
		}

		Glb			g = read_glb(ts.t.files[i]);

		/* glTF (x, z, -y) is the tile's (x, y, z) */
		for (size_t q = 0; q + 2 < g.positions.size(); q += 3)
		{
			double		x = g.positions[q],
						y = -(double) g.positions[q + 2],
						z = g.positions[q + 1];

			CHECK(std::fabs(x - box[0]) <= box[3] && std::fabs(y - box[1]) <= box[7]
				  && std::fabs(z - box[2]) <= box[11]);
		}
	}
}

TEST(mesh_tileset_no_cracks)
{
	for (int round = 0; round < 3; round++)
	{
		Mesh		m = terrain(50 + round * 10, round ? 583000.25 : 0, round ? 4507000.5 : 0, uniform(1, 6),
								uniform(5, 30));
		GeoaccMesh	v = m.view();
		uint32_t	levels = 3 + round % 2,
					cells = 4 + 4 * round;
		GeoaccTilesetOptions o = options(levels, cells);
		Tileset		ts;

		CHECK_OK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &ts.t, nullptr));
		check_no_cracks(ts, m, levels, cells);
	}
}

TEST(mesh_tileset_error_bounds_hold)
{
	for (int round = 0; round < 3; round++)
	{
		Mesh		m = terrain(30 + round * 8, 583000, 4507000, uniform(2, 8), uniform(5, 40));
		GeoaccMesh	v = m.view();
		uint32_t	cells = 2 + 3 * round;
		GeoaccTilesetOptions o = options(3, cells);
		Tileset		ts;

		CHECK_OK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &ts.t, nullptr));
		check_error_bounds(ts, m, 3, cells, 1500);
	}
}

/* Normals and colours go into every tile, simplified ones too. */
TEST(mesh_tileset_attributes_carried)
{
	Mesh		m = terrain(30, 500000, 4000000, 2, 5);

	m.k = 7;
	for (uint32_t i = 0; i < m.nvertices(); i++)
	{
		float		a[7] = {0, 0, 1, (float) uniform(0, 1), (float) uniform(0, 1), (float) uniform(0, 1), 1};

		m.attributes.insert(m.attributes.end(), a, a + 7);
	}

	GeoaccMesh	v = m.view();
	GeoaccTilesetOptions o = options(3, 4, GEOACC_MESH_NORMALS | GEOACC_MESH_COLORS | GEOACC_MESH_ALPHA);
	Tileset		ts;

	CHECK_OK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &ts.t, nullptr));
	CHECK(ts.t.nfiles > 2);
	for (uint32_t i = 1; i < ts.t.nfiles; i++)
	{
		Glb			g = read_glb(ts.t.files[i]);

		CHECK(g.json.find("\"NORMAL\"") != std::string::npos);
		CHECK(g.json.find("\"COLOR_0\"") != std::string::npos);
		/* one origin for all tiles: no node translation */
		CHECK(g.json.find("translation") == std::string::npos);
	}

	/* the layout must match the attributes */
	GeoaccTilesetOptions bad = options(3, 4, GEOACC_MESH_NORMALS);
	Tileset		none;

	CHECK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &bad, &none.t, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(none.t.nfiles == 0);
}

TEST(mesh_tileset_bad_input)
{
	Mesh		m = terrain(10, 0, 0, 1, 1);
	GeoaccMesh	v = m.view();
	Tileset		ts;
	GeoaccTilesetOptions o;

	o = options(0, 8);
	CHECK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &ts.t, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(strstr(geoacc_status_message(), "1 to 10 levels") != nullptr);
	o = options(11, 8);
	CHECK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &ts.t, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	o = options(2, 0);
	CHECK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &ts.t, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	o = options(2, 1025);
	CHECK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &ts.t, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	o = options(2, 8);
	o.transform[3] = NAN;
	CHECK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &ts.t, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	o = options(2, 8);
	CHECK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, nullptr, &o, &ts.t, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);

	Mesh		bad = m;

	bad.positions[4] = INFINITY;
	GeoaccMesh	bv = bad.view();

	CHECK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &bv, &o, &ts.t, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	bad = m;
	bad.triangles[5] = 1000;
	bv = bad.view();
	CHECK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &bv, &o, &ts.t, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);

	/* no triangles: no extent, no tileset */
	Mesh		empty;
	GeoaccMesh	ev = empty.view();
	GeoaccBox	e;
	double		origin[3];

	CHECK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &ev, &o, &ts.t, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_mesh_tileset_extent(&ev, &e, origin) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(ts.t.nfiles == 0 && ts.t.files == nullptr);

	/* a grid the mesh is not inside */
	GeoaccBox	small = {0, 0, 0, 1, 1, 1};
	Result		r;

	CHECK(geoacc_mesh_cluster(GEOACC_DEVICE_CPU, &v, &small, 2, 2, 2, &r.r, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	e = extent_of(m);
	CHECK(geoacc_mesh_cluster(GEOACC_DEVICE_CPU, &v, &e, 0, 2, 2, &r.r, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_mesh_cluster(GEOACC_DEVICE_CPU, &v, &e, 2, 2, (1u << 20) + 1, &r.r, nullptr)
		  == GEOACC_ERR_INVALID_ARGUMENT);
}

/* A flat mesh, a one-triangle mesh, a vertical wall: tilesets without NaN or infinity. */
TEST(mesh_tileset_degenerate_meshes)
{
	std::vector<Mesh> meshes;
	Mesh		flat = terrain(10, 0, 0, 1, 0);

	for (uint32_t v = 0; v < flat.nvertices(); v++)
		flat.positions[(size_t) v * 3 + 2] = 5;
	meshes.push_back(flat);

	Mesh		one;

	one.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
	one.triangles = {0, 1, 2};
	meshes.push_back(one);

	Mesh		wall;

	wall.positions = {0, 0, 0, 10, 0, 0, 10, 0, 10, 0, 0, 10};
	wall.triangles = {0, 1, 2, 0, 2, 3};
	meshes.push_back(wall);
	/* triangles that all have two equal corners: the clips drop them, no tile, no files */
	Mesh		repeated;

	repeated.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
	repeated.triangles = {0, 0, 1, 2, 2, 1};

	GeoaccMesh	rv = repeated.view();
	GeoaccTilesetOptions ro = options(3, 4);
	Tileset		none;

	CHECK_OK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &rv, &ro, &none.t, nullptr));
	CHECK(none.t.nfiles == 0);

	for (const Mesh &m : meshes)
	{
		GeoaccMesh	v = m.view();
		GeoaccTilesetOptions o = options(3, 4);
		Tileset		ts;

		CHECK_OK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &ts.t, nullptr));

		std::string json = ts.json();

		CHECK(json.find("nan") == std::string::npos && json.find("inf") == std::string::npos);
		CHECK(ts.t.nfiles >= 2);
	}
}

/* CGAL's b9, a real urban scan, at UTM coordinates. */
TEST(mesh_tileset_real_b9)
{
	Mesh		m;

	if (!read_off_mesh("data/meshes/b9_mesh.off.gz", m.positions, m.triangles))
		throw core_test::Skip{"data/meshes is not readable from here (run from the repository root)"};
	for (uint32_t v = 0; v < m.nvertices(); v++)
	{
		m.positions[(size_t) v * 3] = m.positions[(size_t) v * 3] * 100 + 583000;
		m.positions[(size_t) v * 3 + 1] = m.positions[(size_t) v * 3 + 1] * 100 + 4507000;
		m.positions[(size_t) v * 3 + 2] *= 100;
	}

	GeoaccMesh	v = m.view();
	GeoaccTilesetOptions o = options(4, 16);
	Tileset		ts;

	CHECK_OK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &ts.t, nullptr));
	CHECK(ts.t.triangles[3] == m.ntriangles());
	for (uint32_t l = 0; l < 3; l++)
		CHECK(ts.t.triangles[l] < ts.t.triangles[l + 1]);
	check_no_cracks(ts, m, 4, 16);
	check_error_bounds(ts, m, 4, 16, 400);
}

/* ---------------------------------------------------------------- GPU */

TEST(mesh_tileset_threads_same_files)
{
	Mesh		m = terrain(260, 583000, 4507000, 2, 25);
	GeoaccMesh	v = m.view();
	GeoaccTilesetOptions o = options(4, 16);
	Tileset		one,
				several;

	CHECK_OK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &one.t, nullptr));
	geoacc_cpu_set_threads(5);
	GeoaccStatus s = geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &several.t, nullptr);

	geoacc_cpu_set_threads(1);
	CHECK_OK(s);
	CHECK(one.t.nfiles == several.t.nfiles);
	for (uint32_t i = 0; i < std::min(one.t.nfiles, several.t.nfiles); i++)
		CHECK(strcmp(one.t.files[i].path, several.t.files[i].path) == 0
			  && one.t.files[i].size == several.t.files[i].size
			  && memcmp(one.t.files[i].data, several.t.files[i].data, one.t.files[i].size) == 0);
}

TEST(mesh_tileset_gpu_without_device)
{
	if (core_test::gpu_available())
		throw core_test::Skip{"a GPU is present"};

	Mesh		m = terrain(10, 0, 0, 1, 1);
	GeoaccMesh	v = m.view();
	GeoaccTilesetOptions o = options(2, 4);
	Tileset		ts;
	GeoaccStatus s = geoacc_mesh_tileset(GEOACC_DEVICE_GPU, &v, &o, &ts.t, nullptr);

	CHECK(s == GEOACC_ERR_NO_DEVICE || s == GEOACC_ERR_DEVICE_DISABLED);

	GeoaccBox	e = extent_of(m);
	Result		r;

	s = geoacc_mesh_cluster(GEOACC_DEVICE_GPU, &v, &e, 2, 2, 1, &r.r, nullptr);
	CHECK(s == GEOACC_ERR_NO_DEVICE || s == GEOACC_ERR_DEVICE_DISABLED);
}

TEST(mesh_cluster_gpu_equals_cpu)
{
	REQUIRE_GPU();
	for (int round = 0; round < 10; round++)
	{
		Mesh		m = terrain(20 + round * 17, round % 2 ? 583000 : 0, round % 2 ? 4507000 : 0, uniform(0.1, 10),
								uniform(0, 50));

		if (round % 3 == 0)
		{
			m.k = 3;
			for (uint32_t i = 0; i < m.nvertices() * 3; i++)
				m.attributes.push_back((float) uniform(0, 1));
		}

		GeoaccBox	e = extent_of(m);
		GeoaccMesh	v = m.view();
		uint32_t	n = 1 + round * 5;
		Result		cpu,
					gpu;

		CHECK_OK(geoacc_mesh_cluster(GEOACC_DEVICE_CPU, &v, &e, n, n + 1, 1 + round % 4, &cpu.r, nullptr));
		CHECK_OK(geoacc_mesh_cluster(GEOACC_DEVICE_GPU, &v, &e, n, n + 1, 1 + round % 4, &gpu.r, nullptr));

		Mesh		a = cpu.mesh(),
					b = gpu.mesh();

		CHECK(a.triangles == b.triangles);
		CHECK(a.positions.size() == b.positions.size()
			  && memcmp(a.positions.data(), b.positions.data(), a.positions.size() * sizeof(double)) == 0);
		CHECK(a.attributes.size() == b.attributes.size()
			  && memcmp(a.attributes.data(), b.attributes.data(), a.attributes.size() * sizeof(float)) == 0);

		double		mc,
					bc,
					mg,
					bg;
		GeoaccMesh	to = cpu.mesh().view();
		Mesh		keep = cpu.mesh();

		to = keep.view();
		CHECK_OK(geoacc_mesh_distance(GEOACC_DEVICE_CPU, &v, &to, &e, n, n + 1, 1 + round % 4, 0.3, &mc, &bc));
		CHECK_OK(geoacc_mesh_distance(GEOACC_DEVICE_GPU, &v, &to, &e, n, n + 1, 1 + round % 4, 0.3, &mg, &bg));
		CHECK(memcmp(&mc, &mg, sizeof(double)) == 0 && memcmp(&bc, &bg, sizeof(double)) == 0);
	}
}

TEST(mesh_tileset_gpu_equals_cpu)
{
	REQUIRE_GPU();

	std::vector<Mesh> meshes = {terrain(80, 583000, 4507000, 3, 20), terrain(33, 0, 0, 0.01, 0.5)};
	Mesh		b9;

	if (read_off_mesh("data/meshes/b9_mesh.off.gz", b9.positions, b9.triangles))
		meshes.push_back(b9);
	for (const Mesh &m : meshes)
	{
		GeoaccMesh	v = m.view();
		GeoaccTilesetOptions o = options(4, 16);
		Tileset		cpu,
					gpu;

		CHECK_OK(geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &v, &o, &cpu.t, nullptr));
		CHECK_OK(geoacc_mesh_tileset(GEOACC_DEVICE_GPU, &v, &o, &gpu.t, nullptr));
		CHECK(cpu.t.nfiles == gpu.t.nfiles);
		for (uint32_t i = 0; i < std::min(cpu.t.nfiles, gpu.t.nfiles); i++)
		{
			CHECK(strcmp(cpu.t.files[i].path, gpu.t.files[i].path) == 0);
			CHECK(cpu.t.files[i].size == gpu.t.files[i].size
				  && memcmp(cpu.t.files[i].data, gpu.t.files[i].data, cpu.t.files[i].size) == 0);
		}
	}
}
