/*
 * test_mesh_clip.cpp
 *
 * Mesh clipping by boxes: the CPU twin against an independent reference
 * (a plain Sutherland-Hodgman in long double, areas inside the box to 1e-9
 * relative) on random meshes and on real ones (CGAL's b9 urban scan at UTM
 * coordinates, the closed elephant); watertightness of clipped closed
 * meshes; tiles of a grid adding up to the whole and meeting without a
 * crack; multi-box against box by box; the three failure modes of VCGLib's
 * clipper; degenerate triangles; every bad input; cancellation; then the
 * GPU against the CPU twin, bit for bit, also in chunks and past the memory
 * cap.
 */
#include "core_test.h"
#include "../mesh_off.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace
{

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
		return {nvertices(), ntriangles(), positions.data(), triangles.data(), k,
				k ? attributes.data() : nullptr};
	}
};

/* A result that frees itself. */
struct Clipped
{
	GeoaccMeshResult r{};

	Clipped() = default;
	Clipped(const Clipped &) = delete;
	Clipped(Clipped &&o) noexcept : r(o.r) { memset(&o.r, 0, sizeof(o.r)); }
	~Clipped() { geoacc_mesh_result_free(&r); }
	const double *p(uint32_t v) const { return r.positions + (size_t) v * 3; }
};

GeoaccBox
box(double x0, double y0, double z0, double x1, double y1, double z1)
{
	return {x0, y0, z0, x1, y1, z1};
}

std::vector<Clipped>
clip(GeoaccDevice device, const Mesh &mesh, const std::vector<GeoaccBox> &boxes, GeoaccStatus *status = nullptr)
{
	std::vector<Clipped> out(boxes.size());
	std::vector<GeoaccMeshResult> raw(boxes.size());
	GeoaccMesh	view = mesh.view();
	GeoaccStatus s = geoacc_mesh_clip(device, &view, boxes.data(), (uint32_t) boxes.size(), raw.data(), nullptr);

	if (status)
		*status = s;
	else
		CHECK_OK(s);
	for (size_t b = 0; b < boxes.size(); b++)
		out[b].r = raw[b];
	return out;
}

Clipped
clip1(GeoaccDevice device, const Mesh &mesh, const GeoaccBox &b)
{
	std::vector<Clipped> out = clip(device, mesh, {b});

	return std::move(out[0]);
}

/* ------------------------------------------------- the independent reference */

typedef long double ld;

struct P3
{
	ld			c[3];
};

ld
triangle_area(const P3 &a, const P3 &b, const P3 &c)
{
	ld			u[3],
				v[3];

	for (int i = 0; i < 3; i++)
	{
		u[i] = b.c[i] - a.c[i];
		v[i] = c.c[i] - a.c[i];
	}
	ld			x = u[1] * v[2] - u[2] * v[1];
	ld			y = u[2] * v[0] - u[0] * v[2];
	ld			z = u[0] * v[1] - u[1] * v[0];

	return sqrtl(x * x + y * y + z * z) / 2;
}

/* Area of a triangle inside a box: textbook Sutherland-Hodgman on long doubles, fan areas. */
ld
reference_area_in_box(const double *a, const double *b, const double *c, const GeoaccBox &bx)
{
	std::vector<P3> poly = {{{a[0], a[1], a[2]}}, {{b[0], b[1], b[2]}}, {{c[0], c[1], c[2]}}};
	const ld	lo[3] = {bx.xmin, bx.ymin, bx.zmin};
	const ld	hi[3] = {bx.xmax, bx.ymax, bx.zmax};

	for (int axis = 0; axis < 3; axis++)
		for (int side = 0; side < 2; side++)
		{
			std::vector<P3> out;
			auto		dist = [&](const P3 &p) { return side == 0 ? p.c[axis] - lo[axis] : hi[axis] - p.c[axis]; };

			for (size_t i = 0; i < poly.size(); i++)
			{
				const P3   &u = poly[i];
				const P3   &w = poly[(i + 1) % poly.size()];
				ld			du = dist(u),
							dw = dist(w);

				if (du >= 0)
					out.push_back(u);
				if ((du > 0 && dw < 0) || (du < 0 && dw > 0))
				{
					ld			t = du / (du - dw);
					P3			x;

					for (int k = 0; k < 3; k++)
						x.c[k] = u.c[k] + t * (w.c[k] - u.c[k]);
					out.push_back(x);
				}
			}
			poly = out;
			if (poly.size() < 3)
				return 0;
		}

	ld			area = 0;

	for (size_t i = 1; i + 1 < poly.size(); i++)
		area += triangle_area(poly[0], poly[i], poly[i + 1]);
	return area;
}

ld
reference_area(const Mesh &m, const GeoaccBox &bx)
{
	ld			area = 0;

	for (uint32_t f = 0; f < m.ntriangles(); f++)
	{
		const uint32_t *t = &m.triangles[(size_t) f * 3];

		area += reference_area_in_box(&m.positions[(size_t) t[0] * 3], &m.positions[(size_t) t[1] * 3],
									  &m.positions[(size_t) t[2] * 3], bx);
	}
	return area;
}

ld
result_area(const GeoaccMeshResult &r)
{
	ld			area = 0;

	for (uint32_t f = 0; f < r.ntriangles; f++)
	{
		P3			q[3];

		for (int i = 0; i < 3; i++)
			for (int c = 0; c < 3; c++)
				q[i].c[c] = r.positions[(size_t) r.triangles[f * 3 + i] * 3 + c];
		area += triangle_area(q[0], q[1], q[2]);
	}
	return area;
}

bool
close_relative(ld x, ld y, ld tolerance)
{
	ld			scale = std::max(fabsl(x), fabsl(y));

	if (!(fabsl(x - y) <= tolerance * scale))
	{
		fprintf(stderr, "    %.17Lg vs %.17Lg (relative %.3Lg)\n", x, y, scale > 0 ? fabsl(x - y) / scale : 0.0L);
		return false;
	}
	return true;
}

ld
result_perimeter(const GeoaccMeshResult &r)
{
	ld			perimeter = 0;

	for (uint32_t f = 0; f < r.ntriangles; f++)
		for (int i = 0; i < 3; i++)
		{
			const double *a = r.positions + (size_t) r.triangles[f * 3 + i] * 3;
			const double *b = r.positions + (size_t) r.triangles[f * 3 + (i + 1) % 3] * 3;
			ld			d = 0;

			for (int c = 0; c < 3; c++)
				d += ((ld) b[c] - a[c]) * ((ld) b[c] - a[c]);
			perimeter += sqrtl(d);
		}
	return perimeter;
}

/*
 * Output area against the reference: to 1e-9 relative, or, for triangles
 * of a few ulps (tiny ones at UTM coordinates), within what rounding the
 * cut points to doubles can change: 8 ulps of the largest coordinate along
 * every edge.
 */
bool
area_matches(const GeoaccMeshResult &r, ld reference, double max_abs)
{
	ld			area = result_area(r);
	ld			slack = 8 * (ld) DBL_EPSILON * max_abs * result_perimeter(r);

	if (fabsl(area - reference) <= slack)
		return true;
	return close_relative(area, reference, 1e-9L);
}

/* Every output index valid, and no two output vertices with the same label (same coordinates suffice here). */
bool
well_formed(const GeoaccMeshResult &r)
{
	for (uint64_t i = 0; i < (uint64_t) r.ntriangles * 3; i++)
		if (r.triangles[i] >= r.nvertices)
			return false;
	for (uint64_t i = 0; i < (uint64_t) r.nvertices * 3; i++)
		if (!std::isfinite(r.positions[i]))
			return false;
	return true;
}

/* ------------------------------------------------------------ meshes */

/*
 * A closed, consistently oriented mesh: an icosahedron subdivided `levels`
 * times, each vertex at a random radius in [0.7, 1.3] * r around the centre
 * (star-shaped, so no face is lost).
 */
Mesh
closed_blob(int levels, double cx, double cy, double cz, double r)
{
	const double g = (1 + sqrt(5.0)) / 2;
	std::vector<double> v = {-1, g, 0, 1, g, 0, -1, -g, 0, 1, -g, 0, 0, -1, g, 0, 1, g,
							 0, -1, -g, 0, 1, -g, g, 0, -1, g, 0, 1, -g, 0, -1, -g, 0, 1};
	std::vector<uint32_t> t = {0, 11, 5, 0, 5, 1, 0, 1, 7, 0, 7, 10, 0, 10, 11, 1, 5, 9, 5, 11, 4, 11, 10, 2,
							   10, 7, 6, 7, 1, 8, 3, 9, 4, 3, 4, 2, 3, 2, 6, 3, 6, 8, 3, 8, 9, 4, 9, 5,
							   2, 4, 11, 6, 2, 10, 8, 6, 7, 9, 8, 1};

	for (int l = 0; l < levels; l++)
	{
		std::map<std::pair<uint32_t, uint32_t>, uint32_t> mid;
		std::vector<uint32_t> next;
		auto		midpoint = [&](uint32_t a, uint32_t b) {
			auto		key = std::make_pair(std::min(a, b), std::max(a, b));
			auto		it = mid.find(key);

			if (it != mid.end())
				return it->second;

			uint32_t	i = (uint32_t) (v.size() / 3);

			for (int c = 0; c < 3; c++)
				v.push_back((v[a * 3 + c] + v[b * 3 + c]) / 2);
			mid[key] = i;
			return i;
		};

		for (size_t f = 0; f < t.size(); f += 3)
		{
			uint32_t	a = t[f],
						b = t[f + 1],
						c = t[f + 2];
			uint32_t	ab = midpoint(a, b),
						bc = midpoint(b, c),
						ca = midpoint(c, a);

			next.insert(next.end(), {a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca});
		}
		t = next;
	}

	Mesh		m;
	std::uniform_real_distribution<double> radius(0.7, 1.3);

	for (size_t i = 0; i < v.size(); i += 3)
	{
		double		n = sqrt(v[i] * v[i] + v[i + 1] * v[i + 1] + v[i + 2] * v[i + 2]);
		double		s = r * radius(core_test::rng()) / n;

		m.positions.insert(m.positions.end(), {cx + v[i] * s, cy + v[i + 1] * s, cz + v[i + 2] * s});
	}
	m.triangles = t;
	return m;
}

/* n random triangles with shared vertices: a random walk of fans over a point cloud. */
Mesh
random_mesh(uint32_t nvertices, uint32_t ntriangles, double scale, double ox, double oy, double oz, uint32_t k)
{
	Mesh		m;
	std::uniform_real_distribution<double> u(0, scale);
	std::uniform_int_distribution<uint32_t> pick(0, nvertices - 1);
	std::uniform_real_distribution<float> a(-1, 1);

	for (uint32_t i = 0; i < nvertices; i++)
		m.positions.insert(m.positions.end(), {ox + u(core_test::rng()), oy + u(core_test::rng()),
											   oz + u(core_test::rng()) / 4});
	for (uint32_t f = 0; f < ntriangles; f++)
	{
		uint32_t	x = pick(core_test::rng()),
					y = pick(core_test::rng()),
					z = pick(core_test::rng());

		if (x == y || y == z || x == z)
			continue;
		m.triangles.insert(m.triangles.end(), {x, y, z});
	}
	m.k = k;
	for (uint64_t i = 0; i < (uint64_t) nvertices * k; i++)
		m.attributes.push_back(a(core_test::rng()));
	return m;
}

/* A random box inside [lo, hi]^3 (per axis). */
GeoaccBox
random_box(const double *lo, const double *hi)
{
	double		b[6];

	for (int c = 0; c < 3; c++)
	{
		std::uniform_real_distribution<double> u(lo[c], hi[c]);
		double		x = u(core_test::rng()),
					y = u(core_test::rng());

		b[c] = std::min(x, y);
		b[c + 3] = std::max(x, y);
	}
	return box(b[0], b[1], b[2], b[3], b[4], b[5]);
}

void
bounds(const Mesh &m, double *lo, double *hi)
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

/* n random boxes inside the mesh's bounds */
std::vector<GeoaccBox>
random_boxes(const Mesh &m, int n)
{
	double		lo[3],
				hi[3];
	std::vector<GeoaccBox> boxes;

	bounds(m, lo, hi);
	for (int b = 0; b < n; b++)
		boxes.push_back(random_box(lo, hi));
	return boxes;
}

Mesh
real_mesh(const char *name)
{
	Mesh		m;

	if (!read_off_mesh(std::string("data/meshes/") + name + ".off.gz", m.positions, m.triangles))
		throw core_test::Skip{"data/meshes is not readable from here (run from the repository root)"};
	return m;
}

/* --------------------------------------------------------- topology */

typedef std::map<std::pair<uint32_t, uint32_t>, int> EdgeCount;

EdgeCount
directed_edges(const uint32_t *triangles, uint32_t n)
{
	EdgeCount	e;

	for (uint32_t f = 0; f < n; f++)
		for (int i = 0; i < 3; i++)
			e[{triangles[f * 3 + i], triangles[f * 3 + (i + 1) % 3]}]++;
	return e;
}

/* Every directed edge used once and its reverse once. */
bool
closed_and_oriented(const uint32_t *triangles, uint32_t n)
{
	EdgeCount	e = directed_edges(triangles, n);

	for (const auto &x : e)
	{
		auto		back = e.find({x.first.second, x.first.first});

		if (x.second != 1 || back == e.end() || back->second != 1)
			return false;
	}
	return true;
}

bool
on_same_face(const double *a, const double *b, const GeoaccBox &bx)
{
	const double lo[3] = {bx.xmin, bx.ymin, bx.zmin};
	const double hi[3] = {bx.xmax, bx.ymax, bx.zmax};

	for (int c = 0; c < 3; c++)
		if ((a[c] == lo[c] && b[c] == lo[c]) || (a[c] == hi[c] && b[c] == hi[c]))
			return true;
	return false;
}

/*
 * A closed mesh clipped by a box: every edge used once in each direction,
 * except the edges lying in a face of the box, which border the cut.
 * Returns the number of edges breaking that.
 */
size_t
open_edges_off_the_box(const GeoaccMeshResult &r, const GeoaccBox &bx, size_t *border)
{
	EdgeCount	e = directed_edges(r.triangles, r.ntriangles);
	size_t		bad = 0;

	*border = 0;
	for (const auto &x : e)
	{
		auto		back = e.find({x.first.second, x.first.first});

		if (x.second == 1 && back != e.end() && back->second == 1)
			continue;
		if (x.second == 1 && back == e.end()
			&& on_same_face(r.positions + (size_t) x.first.first * 3, r.positions + (size_t) x.first.second * 3, bx))
		{
			(*border)++;
			continue;
		}
		bad++;
	}
	return bad;
}

/* The union of tiles' outputs welded by coordinates. */
Mesh
weld_results(const std::vector<Clipped> &tiles)
{
	std::vector<double> corners;
	uint32_t	n = 0;

	for (const Clipped &c : tiles)
		for (uint32_t f = 0; f < c.r.ntriangles; f++)
		{
			for (int i = 0; i < 3; i++)
				corners.insert(corners.end(), c.p(c.r.triangles[f * 3 + i]), c.p(c.r.triangles[f * 3 + i]) + 3);
			n++;
		}

	GeoaccMeshResult w{};
	Mesh		m;

	CHECK_OK(geoacc_mesh_weld(corners.data(), n, 9, &w));
	m.positions.assign(w.positions, w.positions + (size_t) w.nvertices * 3);
	m.triangles.assign(w.triangles, w.triangles + (size_t) w.ntriangles * 3);
	geoacc_mesh_result_free(&w);
	return m;
}

bool
same_result(const GeoaccMeshResult &a, const GeoaccMeshResult &b)
{
	return a.nvertices == b.nvertices && a.ntriangles == b.ntriangles && a.nattributes == b.nattributes
		&& (a.nvertices == 0 || memcmp(a.positions, b.positions, (size_t) a.nvertices * 24) == 0)
		&& (a.ntriangles == 0 || memcmp(a.triangles, b.triangles, (size_t) a.ntriangles * 12) == 0)
		&& (a.nvertices * a.nattributes == 0
			|| memcmp(a.attributes, b.attributes, (size_t) a.nvertices * a.nattributes * 4) == 0);
}

/* Area against the reference and well-formedness, for each box. */
void
check_against_reference(GeoaccDevice device, const Mesh &m, const std::vector<GeoaccBox> &boxes)
{
	std::vector<Clipped> out = clip(device, m, boxes);
	double		max_abs = 0;

	for (double x : m.positions)
		max_abs = std::max(max_abs, fabs(x));
	for (size_t b = 0; b < boxes.size(); b++)
	{
		CHECK(well_formed(out[b].r));
		CHECK(area_matches(out[b].r, reference_area(m, boxes[b]), max_abs));
	}
}

}								/* namespace */

/* ------------------------------------------------------------ tests */

TEST(mesh_clip_single_triangle_cases)
{
	Mesh		m;

	m.positions = {0, 0, 0, 2, 0, 0, 0, 2, 0};
	m.triangles = {0, 1, 2};

	/* inside: kept as it is, the same vertices and winding */
	Clipped		in = clip1(GEOACC_DEVICE_CPU, m, box(-1, -1, -1, 3, 3, 1));

	CHECK(in.r.ntriangles == 1 && in.r.nvertices == 3);
	CHECK(in.r.ntriangles == 1 && memcmp(in.r.positions, m.positions.data(), 72) == 0);
	CHECK(in.r.ntriangles == 1 && in.r.triangles[0] == 0 && in.r.triangles[1] == 1 && in.r.triangles[2] == 2);

	/* outside */
	Clipped		out = clip1(GEOACC_DEVICE_CPU, m, box(3, 3, -1, 4, 4, 1));

	CHECK(out.r.ntriangles == 0 && out.r.nvertices == 0);

	/* straddling x = 1: a quadrilateral, two triangles, cut points with x exactly 1 */
	Clipped		half = clip1(GEOACC_DEVICE_CPU, m, box(1, -1, -1, 3, 3, 1));

	CHECK(half.r.ntriangles == 1 && half.r.nvertices == 3);	/* the corner (2,0): a triangle */
	CHECK(close_relative(result_area(half.r), 0.5L, 1e-15L));
	for (uint32_t v = 0; v < half.r.nvertices; v++)
		CHECK(half.p(v)[0] >= 1);

	Clipped		left = clip1(GEOACC_DEVICE_CPU, m, box(-1, -1, -1, 1, 3, 1));

	CHECK(left.r.ntriangles == 2 && left.r.nvertices == 4);
	CHECK(close_relative(result_area(left.r), 1.5L, 1e-15L));

	/* the winding is kept: every piece has the input's normal (+z) */
	for (uint32_t f = 0; f < left.r.ntriangles; f++)
	{
		const double *a = left.p(left.r.triangles[f * 3]);
		const double *b = left.p(left.r.triangles[f * 3 + 1]);
		const double *c = left.p(left.r.triangles[f * 3 + 2]);

		CHECK((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]) > 0);
	}

	/*
	 * a triangle in the plane x + y + z = 0 around the cube [-1, 1]^3: the
	 * regular hexagon of six points inside the triangle, where two planes
	 * meet (the corners of the cube's faces), fanned into four triangles
	 */
	Mesh		big;

	big.positions = {20, -10, -10, -10, 20, -10, -10, -10, 20};
	big.triangles = {0, 1, 2};
	Clipped		hex = clip1(GEOACC_DEVICE_CPU, big, box(-1, -1, -1, 1, 1, 1));

	CHECK(well_formed(hex.r));
	CHECK(hex.r.ntriangles == 4 && hex.r.nvertices == 6);
	CHECK(close_relative(result_area(hex.r), reference_area(big, box(-1, -1, -1, 1, 1, 1)), 1e-12L));
	CHECK(close_relative(result_area(hex.r), 3 * sqrtl(3.0L), 1e-12L));	/* side sqrt(2) */
	for (uint32_t v = 0; v < hex.r.nvertices; v++)
	{
		int			on_planes = 0;

		for (int c = 0; c < 3; c++)
			on_planes += fabs(hex.p(v)[c]) == 1;
		CHECK(on_planes == 2);
	}

	/* a triangle poking out through the top face: the part below it, a quadrilateral */
	Mesh		poke;

	poke.positions = {-0.5, -0.5, 0, 0.5, -0.5, 0, 0, 0.8, 3};
	poke.triangles = {0, 1, 2};
	Clipped		pk = clip1(GEOACC_DEVICE_CPU, poke, box(-1, -1, -1, 1, 1, 1));

	CHECK(pk.r.ntriangles == 2 && pk.r.nvertices == 4);
	CHECK(close_relative(result_area(pk.r), reference_area(poke, box(-1, -1, -1, 1, 1, 1)), 1e-12L));
}

/* The box is closed: points on its faces are inside; a triangle touching it from outside gives nothing. */
TEST(mesh_clip_boundary_is_inclusive)
{
	Mesh		m;

	m.positions = {1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 0, 2, 0, 0, 2, 1, 0};
	m.triangles = {0, 1, 2, 3, 4, 5};

	/* triangle 1 lies in the face x = 1 (kept); triangle 2 touches it along an edge (nothing) */
	Clipped		c = clip1(GEOACC_DEVICE_CPU, m, box(0, 0, 0, 1, 1, 1));

	CHECK(c.r.ntriangles == 1);
	CHECK(c.r.ntriangles == 1 && c.r.nvertices == 3 && c.p(c.r.triangles[2])[2] == 1);

	/* the same with the box on the other side: both kept/clipped as they lie in it */
	Clipped		d = clip1(GEOACC_DEVICE_CPU, m, box(1, 0, 0, 2, 1, 1));

	CHECK(d.r.ntriangles == 2);
}

/* VCGLib failure 1: a corner triangle straddles two planes but misses the box; no crash, no output. */
TEST(mesh_clip_corner_triangle_clips_to_nothing)
{
	Mesh		m;

	m.positions = {1.5, 0.8, 0.5, 1.5, 1.5, 0.5, 0.8, 1.5, 0.5};
	m.triangles = {0, 1, 2};

	GeoaccBox	b = box(0, 0, 0, 1, 1, 1);
	Clipped		c = clip1(GEOACC_DEVICE_CPU, m, b);

	CHECK(c.r.ntriangles == 0 && c.r.nvertices == 0);
	CHECK(c.r.positions == nullptr && c.r.triangles == nullptr);

	/* many of them around all eight corners, and one that touches the corner exactly */
	Mesh		many;

	for (int corner = 0; corner < 8; corner++)
	{
		double		s[3] = {corner & 1 ? 1.0 : -1.0, corner & 2 ? 1.0 : -1.0, corner & 4 ? 1.0 : -1.0};
		double		o[3] = {corner & 1 ? 1.0 : 0.0, corner & 2 ? 1.0 : 0.0, corner & 4 ? 1.0 : 0.0};
		uint32_t	base = many.nvertices();

		many.positions.insert(many.positions.end(), {o[0] + 0.5 * s[0], o[1] - 0.2 * s[1], o[2] + 0.3 * s[2],
													 o[0] + 0.5 * s[0], o[1] + 0.5 * s[1], o[2] + 0.5 * s[2],
													 o[0] - 0.2 * s[0], o[1] + 0.5 * s[1], o[2] + 0.3 * s[2]});
		many.triangles.insert(many.triangles.end(), {base, base + 1, base + 2});
	}
	many.positions.insert(many.positions.end(), {1, 1, 1, 2, 1.5, 1, 1.5, 2, 1.2});
	many.triangles.insert(many.triangles.end(), {24, 25, 26});
	Clipped		cm = clip1(GEOACC_DEVICE_CPU, many, b);

	CHECK(cm.r.ntriangles == 0);
}

/*
 * VCGLib failure 2: tiny triangles straddling a plane are not dropped (no
 * area epsilon), also at UTM coordinates, where their sides are 1e-7 of
 * the coordinates.
 */
TEST(mesh_clip_tiny_straddling_triangles_kept)
{
	for (double scale : {1e-3, 1e-6, 1e-9})
		for (double origin : {0.0, 500000.0})
		{
			Mesh		m;
			const double x0 = origin + 0.25;

			/* a strip of triangles across x = origin + 0.25 + scale / 2 */
			for (int i = 0; i < 20; i++)
			{
				uint32_t	base = m.nvertices();
				double		y = 4000000.0 + i * scale;

				m.positions.insert(m.positions.end(), {x0, y, 10, x0 + scale, y, 10, x0, y + scale, 10 + scale});
				m.triangles.insert(m.triangles.end(), {base, base + 1, base + 2});
			}

			GeoaccBox	b = box(x0 + scale / 2, 3999999.0, 0, x0 + 1, 4000001.0, 20);
			Clipped		c = clip1(GEOACC_DEVICE_CPU, m, b);

			CHECK(c.r.ntriangles == 20);
			CHECK(area_matches(c.r, reference_area(m, b), 4000001.0));
			for (uint32_t v = 0; v < c.r.nvertices; v++)
				CHECK(c.p(v)[0] >= b.xmin);
		}
}

/* VCGLib failure 3: the cut of an edge shared by two triangles is one vertex, with the same bits. */
TEST(mesh_clip_shared_cut_points_not_duplicated)
{
	Mesh		m;

	/* the square [0,2] x [0,1] as two triangles sharing the diagonal (0,0)-(2,1) */
	m.positions = {0, 0, 0, 2, 0, 0, 2, 1, 0, 0, 1, 0};
	m.triangles = {0, 1, 2, 0, 2, 3};

	Clipped		c = clip1(GEOACC_DEVICE_CPU, m, box(-1, -1, -1, 1, 2, 1));

	/* (0,0), (0,1) and the cuts of three edges: (1,0), (1,0.5), (1,1) */
	CHECK(c.r.nvertices == 5);
	CHECK(close_relative(result_area(c.r), 1.0L, 1e-15L));

	int			diagonal = 0;

	for (uint32_t v = 0; v < c.r.nvertices; v++)
		diagonal += c.p(v)[0] == 1 && c.p(v)[1] == 0.5;
	CHECK(diagonal == 1);

	/* the same with the triangles listing the diagonal in opposite directions, in either order */
	Mesh		r = m;

	r.triangles = {0, 2, 3, 0, 1, 2};
	Clipped		d = clip1(GEOACC_DEVICE_CPU, r, box(-1, -1, -1, 1, 2, 1));

	CHECK(d.r.nvertices == 5);
}

/* Degenerate triangles: treated like any other, never a crash, never dropped for being small. */
TEST(mesh_clip_degenerate_triangles)
{
	Mesh		m;

	m.positions = {0, 0, 0, 1, 1, 1, 2, 2, 2, 5, 5, 5, 0.5, 0.5, 0.5};
	/* collinear across the box, a repeated vertex across it, collinear inside, a point-triangle inside */
	m.triangles = {0, 1, 3, 0, 3, 3, 0, 4, 1, 4, 4, 4};

	GeoaccBox	b = box(-1, -1, -1, 1.5, 1.5, 1.5);
	Clipped		c = clip1(GEOACC_DEVICE_CPU, m, b);

	CHECK(well_formed(c.r));
	CHECK(result_area(c.r) == 0);
	/* the collinear one inside is kept as it is; the point-triangle (equal corners) is not */
	bool		kept_collinear = false,
				kept_point = false;

	for (uint32_t f = 0; f < c.r.ntriangles; f++)
	{
		const uint32_t *t = c.r.triangles + f * 3;

		kept_point |= t[0] == t[1] && t[1] == t[2];
		kept_collinear |= t[0] != t[1] && t[1] != t[2] && t[0] != t[2] && c.p(t[0])[0] == 0
			&& c.p(t[1])[0] == 0.5 && c.p(t[2])[0] == 1;
	}
	CHECK(kept_collinear);
	CHECK(!kept_point);

	/* a flat box (zmin = zmax) keeps what lies in its plane */
	Mesh		flat;

	flat.positions = {0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 2, 0, 1, 2};
	flat.triangles = {0, 1, 2, 3, 4, 5};
	Clipped		f = clip1(GEOACC_DEVICE_CPU, flat, box(-1, -1, 1, 2, 2, 1));

	CHECK(f.r.ntriangles == 1 && close_relative(result_area(f.r), 0.5L, 1e-15L));
}

TEST(mesh_clip_bad_input)
{
	Mesh		m;
	GeoaccMeshResult r{};
	GeoaccBox	b = box(0, 0, 0, 1, 1, 1);

	m.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
	m.triangles = {0, 1, 2};

	GeoaccMesh	v = m.view();

	/* index out of range */
	uint32_t	bad_tri[3] = {0, 1, 3};

	v.triangles = bad_tri;
	CHECK(geoacc_mesh_clip(GEOACC_DEVICE_CPU, &v, &b, 1, &r, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(strstr(geoacc_status_message(), "triangle 1 refers to vertex 3") != nullptr);
	CHECK(r.positions == nullptr && r.triangles == nullptr);

	/* NaN and infinite coordinates */
	for (double x : {NAN, INFINITY, -INFINITY})
	{
		Mesh		n = m;

		n.positions[4] = x;
		GeoaccMesh	nv = n.view();

		CHECK(geoacc_mesh_clip(GEOACC_DEVICE_CPU, &nv, &b, 1, &r, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
		CHECK(strstr(geoacc_status_message(), "vertex 2 has a non-finite coordinate: y") != nullptr);
	}

	/* inverted and NaN boxes */
	v = m.view();
	GeoaccBox	inverted = box(0, 2, 0, 1, 1, 1);

	CHECK(geoacc_mesh_clip(GEOACC_DEVICE_CPU, &v, &inverted, 1, &r, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(strstr(geoacc_status_message(), "box 1 is inverted: ymin 2 is above ymax 1") != nullptr);

	GeoaccBox	two[2] = {b, box(0, 0, NAN, 1, 1, 1)};
	GeoaccMeshResult r2[2] = {};

	CHECK(geoacc_mesh_clip(GEOACC_DEVICE_CPU, &v, two, 2, r2, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(strstr(geoacc_status_message(), "box 2 has a NaN bound") != nullptr);

	/* attributes: too many, or missing */
	v.nattributes = 17;
	CHECK(geoacc_mesh_clip(GEOACC_DEVICE_CPU, &v, &b, 1, &r, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);
	v.nattributes = 2;
	v.attributes = nullptr;
	CHECK(geoacc_mesh_clip(GEOACC_DEVICE_CPU, &v, &b, 1, &r, nullptr) == GEOACC_ERR_INVALID_ARGUMENT);

	/* no boxes: fine, nothing written */
	v = m.view();
	CHECK_OK(geoacc_mesh_clip(GEOACC_DEVICE_CPU, &v, nullptr, 0, nullptr, nullptr));

	/* grids */
	GeoaccBox	tiles[4];

	CHECK(geoacc_grid_tiles(&b, 0, 1, 1, tiles) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_grid_tiles(&inverted, 1, 1, 1, tiles) == GEOACC_ERR_INVALID_ARGUMENT);

	/* welding */
	double		corners[9] = {0, 0, 0, 1, 0, 0, 0, NAN, 0};

	CHECK(geoacc_mesh_weld(corners, 1, 9, &r) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(strstr(geoacc_status_message(), "corner 3 of triangle 1 has a non-finite coordinate: y") != nullptr);
}

/* Planes of a grid: the ends exact, neighbours share planes, the same numbers in every tile. */
TEST(mesh_clip_tile_grid_planes)
{
	GeoaccBox	e = box(500000.1, 4000000.3, -7.25, 500123.7, 4000099.9, 31.5);
	std::vector<GeoaccBox> t(7 * 5 * 3);

	CHECK_OK(geoacc_grid_tiles(&e, 7, 5, 3, t.data()));
	for (uint32_t ix = 0; ix < 7; ix++)
		for (uint32_t iy = 0; iy < 5; iy++)
			for (uint32_t iz = 0; iz < 3; iz++)
			{
				const GeoaccBox &b = t[(ix * 5 + iy) * 3 + iz];

				CHECK(b.xmin == geoacc_grid_plane(e.xmin, e.xmax, ix, 7));
				CHECK(b.xmax == geoacc_grid_plane(e.xmin, e.xmax, ix + 1, 7));
				CHECK(b.zmax == geoacc_grid_plane(e.zmin, e.zmax, iz + 1, 3));
				CHECK(b.xmin < b.xmax && b.ymin < b.ymax && b.zmin < b.zmax);
				if (ix > 0)
					CHECK(b.xmin == t[((ix - 1) * 5 + iy) * 3 + iz].xmax);
				if (iy > 0)
					CHECK(b.ymin == t[(ix * 5 + iy - 1) * 3 + iz].ymax);
				if (iz > 0)
					CHECK(b.zmin == t[(ix * 5 + iy) * 3 + iz - 1].zmax);
			}
	CHECK(t[0].xmin == e.xmin && t[0].ymin == e.ymin && t[0].zmin == e.zmin);
	CHECK(t.back().xmax == e.xmax && t.back().ymax == e.ymax && t.back().zmax == e.zmax);
}

/* Extents whose planes would overflow have none; one tile equals the same tile of the whole grid. */
TEST(mesh_clip_tile_grid_limits)
{
	GeoaccBox	t;
	GeoaccBox	wide = box(0, 0, 0, 1e308, 1, 1);
	GeoaccBox	across = box(-1e308, 0, 0, 1e308, 1, 1);
	GeoaccBox	infinite = box(0, 0, 0, INFINITY, 1, 1);
	GeoaccBox	e = box(-1e307, 2, 3, 1e307, 5, 7);
	std::vector<GeoaccBox> all(8 * 3 * 2);

	CHECK(geoacc_grid_tile(&wide, 3, 1, 1, 0, 0, 0, &t) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK_OK(geoacc_grid_tile(&wide, 1, 1, 1, 0, 0, 0, &t));
	CHECK(geoacc_grid_tile(&across, 1, 1, 1, 0, 0, 0, &t) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_grid_tile(&infinite, 1, 1, 1, 0, 0, 0, &t) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_grid_tile(&e, 8, 3, 2, 8, 0, 0, &t) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK_OK(geoacc_grid_tiles(&e, 8, 3, 2, all.data()));
	for (uint32_t ix = 0; ix < 8; ix++)
		for (uint32_t iy = 0; iy < 3; iy++)
			for (uint32_t iz = 0; iz < 2; iz++)
			{
				CHECK_OK(geoacc_grid_tile(&e, 8, 3, 2, ix, iy, iz, &t));
				CHECK(memcmp(&t, &all[(ix * 3 + iy) * 2 + iz], sizeof(t)) == 0);
				CHECK(std::isfinite(t.xmin) && std::isfinite(t.xmax) && t.xmin < t.xmax);
			}
}

namespace
{
void		check_gpu_equals_cpu(const Mesh &m, const std::vector<GeoaccBox> &boxes);

int
uniform_int(int lo, int hi)
{
	return std::uniform_int_distribution<int>(lo, hi)(core_test::rng());
}

double
uniform(double lo, double hi)
{
	return std::uniform_real_distribution<double>(lo, hi)(core_test::rng());
}

/* Two corners of an output triangle at one position: none, wherever mesh edges and vertices lie on box faces. */
bool
has_degenerate_triangle(const GeoaccMeshResult &r)
{
	for (uint32_t f = 0; f < r.ntriangles; f++)
		for (int k = 0; k < 3; k++)
		{
			const double *a = r.positions + (size_t) r.triangles[f * 3 + k] * 3;
			const double *b = r.positions + (size_t) r.triangles[f * 3 + (k + 1) % 3] * 3;

			if (a[0] == b[0] && a[1] == b[1] && a[2] == b[2])
				return true;
		}
	return false;
}

/* A terrain of n x n cells on the integer grid, each cell two triangles along a diagonal chosen at random. */
Mesh
grid_terrain(int n)
{
	Mesh		m;

	for (int y = 0; y <= n; y++)
		for (int x = 0; x <= n; x++)
			m.positions.insert(m.positions.end(), {(double) x, (double) y, (double) ((x * y) % 3)});
	for (int y = 0; y < n; y++)
		for (int x = 0; x < n; x++)
		{
			const uint32_t a = y * (n + 1) + x,
						b = a + 1,
						c = a + n + 1,
						d = c + 1;

			if (uniform_int(0, 1))
				m.triangles.insert(m.triangles.end(), {a, b, d, a, d, c});
			else
				m.triangles.insert(m.triangles.end(), {a, b, c, b, d, c});
		}
	return m;
}

}								/* namespace */

TEST(mesh_clip_edges_on_box_faces)
{
	/* an edge along a face of the box: nothing, not a triangle with a repeated corner */
	Mesh		t;

	t.positions = {0, 0, 0, 2, 0, 0, 0, 2, 0};
	t.triangles = {0, 1, 2};
	CHECK(clip1(GEOACC_DEVICE_CPU, t, box(-1, 0, -1, 0, 1, 1)).r.ntriangles == 0);
	CHECK(clip1(GEOACC_DEVICE_CPU, t, box(0, -1, -1, 1, 0, 1)).r.ntriangles == 0);

	/* tiles whose planes run along the terrain's edges and through its vertices */
	for (int round = 0; round < 20; round++)
	{
		const int	n = uniform_int(2, 12);
		Mesh		m = grid_terrain(n);
		const uint32_t nx = (uint32_t) uniform_int(1, n),
					ny = (uint32_t) uniform_int(1, n);
		GeoaccBox	e = box(0, 0, -1, n, n, 3);
		std::vector<GeoaccBox> tiles(nx * ny * 3);

		CHECK_OK(geoacc_grid_tiles(&e, nx, ny, 3, tiles.data()));
		std::vector<Clipped> out = clip(GEOACC_DEVICE_CPU, m, tiles);
		long double	area = 0;

		for (const Clipped &c : out)
		{
			CHECK(well_formed(c.r));
			CHECK(!has_degenerate_triangle(c.r));
			area += result_area(c.r);
		}
		CHECK(close_relative(area, reference_area(m, e), 1e-12L));
		if (core_test::gpu_available())
			check_gpu_equals_cpu(m, tiles);
	}
}

/* Coordinates near the ends of the double range: cut points are finite, and scaling by 2^k changes nothing else. */
TEST(mesh_clip_huge_coordinates)
{
	Mesh		t;

	t.positions = {-1e308, -1e308, -1e308, 1e308, -1e308, 1e308, 0, 1e308, 0};
	t.triangles = {0, 1, 2};
	Clipped		c = clip1(GEOACC_DEVICE_CPU, t, box(-1, -1, -1, 1, 1, 1));

	/* cut points of edges 2e308 long are only known to about 1e292: no area to compare, but inside the box */
	CHECK(well_formed(c.r));
	for (uint32_t v = 0; v < c.r.nvertices * 3; v++)
		CHECK(std::isfinite(c.r.positions[v]) && fabs(c.r.positions[v]) <= 1);
	for (int round = 0; round < 30; round++)
	{
		Mesh		m = random_mesh(60, 80, 10, 0, 0, 0, 0);
		const int	k = uniform_int(900, 1019);
		GeoaccBox	b = box(uniform(0, 5), uniform(0, 5), uniform(0, 5), uniform(5, 10), uniform(5, 10), uniform(5, 10));
		Mesh		big = m;
		GeoaccBox	big_b = box(ldexp(b.xmin, k), ldexp(b.ymin, k), ldexp(b.zmin, k), ldexp(b.xmax, k),
								ldexp(b.ymax, k), ldexp(b.zmax, k));

		for (double &x : big.positions)
			x = ldexp(x, k);
		Clipped		small_clip = clip1(GEOACC_DEVICE_CPU, m, b);
		Clipped		big_clip = clip1(GEOACC_DEVICE_CPU, big, big_b);
		bool		scaled = small_clip.r.nvertices == big_clip.r.nvertices
			&& small_clip.r.ntriangles == big_clip.r.ntriangles
			&& (small_clip.r.ntriangles == 0
				|| memcmp(small_clip.r.triangles, big_clip.r.triangles, small_clip.r.ntriangles * 12) == 0);

		for (uint32_t v = 0; scaled && v < small_clip.r.nvertices * 3; v++)
			scaled = ldexp(small_clip.r.positions[v], k) == big_clip.r.positions[v];
		CHECK(scaled);
		if (core_test::gpu_available())
			check_gpu_equals_cpu(big, {big_b});
	}
}

/* Random meshes and boxes: area inside each box against the reference. */
TEST(mesh_clip_random_against_reference)
{
	for (int round = 0; round < 20; round++)
	{
		std::uniform_int_distribution<uint32_t> nv(3, 400);
		uint32_t	n = nv(core_test::rng());
		double		origin = round % 2 ? 500000.0 : 0.0;
		Mesh		m = random_mesh(n, 2 * n, round % 3 == 0 ? 1e-3 : 100.0, origin, origin * 8, 0, round % 4);
		double		lo[3],
					hi[3];
		std::vector<GeoaccBox> boxes;

		bounds(m, lo, hi);
		for (int c = 0; c < 3; c++)
		{
			double		pad = (hi[c] - lo[c]) * 0.1;

			lo[c] -= pad;
			hi[c] += pad;
		}
		for (int b = 0; b < 6; b++)
			boxes.push_back(random_box(lo, hi));
		check_against_reference(GEOACC_DEVICE_CPU, m, boxes);
	}
}

/* Closed meshes cut by a box are watertight but for the cut along the box's faces. */
TEST(mesh_clip_closed_mesh_watertight)
{
	for (int round = 0; round < 12; round++)
	{
		double		origin = round % 2 ? 500000.0 : 0.0;
		Mesh		m = closed_blob(3, origin, origin * 8, 100, 50);
		double		lo[3] = {origin - 60, origin * 8 - 60, 40};
		double		hi[3] = {origin + 60, origin * 8 + 60, 160};

		CHECK(closed_and_oriented(m.triangles.data(), m.ntriangles()));

		GeoaccBox	b = random_box(lo, hi);
		Clipped		c = clip1(GEOACC_DEVICE_CPU, m, b);
		size_t		border = 0;

		CHECK(open_edges_off_the_box(c.r, b, &border) == 0);
		/* a sliver of the box at UTM coordinates: within what rounding the cut points can change */
		CHECK(area_matches(c.r, reference_area(m, b), origin * 8 + 160));
	}
}

/*
 * The tiles of a grid over a closed mesh add up to its area, and their
 * union, welded by coordinates, is closed again: neighbouring tiles meet
 * bit for bit, without cracks or T-junctions.
 */
TEST(mesh_clip_grid_tiles_add_up_and_meet)
{
	for (int round = 0; round < 4; round++)
	{
		double		origin = round % 2 ? 500000.0 : 0.0;
		Mesh		m = closed_blob(4, origin, origin * 8, 30, 10);
		double		lo[3],
					hi[3];

		bounds(m, lo, hi);

		GeoaccBox	extent = box(lo[0] - 0.5, lo[1] - 0.25, lo[2] - 0.125, hi[0] + 0.5, hi[1] + 0.25, hi[2] + 0.125);
		uint32_t	nx = 3 + round,
					ny = 4,
					nz = round % 2 ? 2 : 1;
		std::vector<GeoaccBox> tiles(nx * ny * nz);

		CHECK_OK(geoacc_grid_tiles(&extent, nx, ny, nz, tiles.data()));

		std::vector<Clipped> out = clip(GEOACC_DEVICE_CPU, m, tiles);
		ld			sum = 0;

		for (size_t t = 0; t < tiles.size(); t++)
		{
			size_t		border;

			sum += result_area(out[t].r);
			CHECK(open_edges_off_the_box(out[t].r, tiles[t], &border) == 0);
		}
		CHECK(close_relative(sum, reference_area(m, extent), 1e-9L));

		Mesh		welded = weld_results(out);

		CHECK(closed_and_oriented(welded.triangles.data(), welded.ntriangles()));
	}
}

/* Many boxes in one call, overlapping or not, equal box-by-box calls. */
TEST(mesh_clip_multi_box_equals_single)
{
	Mesh		m = random_mesh(300, 700, 10, 0, 0, 0, 3);
	double		lo[3] = {-1, -1, -1},
				hi[3] = {11, 11, 4};
	std::vector<GeoaccBox> boxes;

	for (int b = 0; b < 9; b++)
		boxes.push_back(random_box(lo, hi));
	boxes.push_back(boxes[2]);	/* the same box twice */

	std::vector<Clipped> all = clip(GEOACC_DEVICE_CPU, m, boxes);

	for (size_t b = 0; b < boxes.size(); b++)
	{
		Clipped		one = clip1(GEOACC_DEVICE_CPU, m, boxes[b]);

		CHECK(same_result(all[b].r, one.r));
	}
}

/* Attributes of cut points: interpolated like the position (a linear field stays linear). */
TEST(mesh_clip_attributes_interpolated)
{
	Mesh		m = closed_blob(2, 0, 0, 0, 10);

	m.k = 3;
	for (uint32_t v = 0; v < m.nvertices(); v++)
	{
		const double *p = &m.positions[(size_t) v * 3];

		/* attributes that are linear functions of the position */
		m.attributes.insert(m.attributes.end(), {(float) (p[0] / 8), (float) (p[1] / 16), 0.5f});
	}

	GeoaccBox	b = box(-3, -4, -5, 6, 7, 8);
	Clipped		c = clip1(GEOACC_DEVICE_CPU, m, b);

	CHECK(c.r.nattributes == 3 && c.r.attributes != nullptr);
	for (uint32_t v = 0; v < c.r.nvertices; v++)
	{
		CHECK(fabs(c.r.attributes[v * 3] - c.p(v)[0] / 8) < 1e-5);
		CHECK(fabs(c.r.attributes[v * 3 + 1] - c.p(v)[1] / 16) < 1e-5);
		CHECK(c.r.attributes[v * 3 + 2] == 0.5f);
	}
}

/* Output order: used input vertices in input order, first; triangles in face order. */
TEST(mesh_clip_output_order)
{
	Mesh		m = random_mesh(200, 400, 10, 0, 0, 0, 0);
	GeoaccBox	b = box(2, 2, -1, 8, 8, 4);
	Clipped		c = clip1(GEOACC_DEVICE_CPU, m, b);
	uint32_t	next = 0;

	/* the kept input vertices come first, in input order, with their bits */
	for (uint32_t v = 0; v < m.nvertices(); v++)
	{
		const double *p = &m.positions[(size_t) v * 3];

		if (p[0] >= 2 && p[0] <= 8 && p[1] >= 2 && p[1] <= 8 && p[2] >= -1 && p[2] <= 4)
		{
			bool		referenced = false;

			for (uint32_t f = 0; f < m.ntriangles(); f++)
				for (int i = 0; i < 3; i++)
					referenced |= m.triangles[f * 3 + i] == v;
			if (referenced)
			{
				CHECK(next < c.r.nvertices && memcmp(c.p(next), p, 24) == 0);
				next++;
			}
		}
	}

	/* the whole-inside faces appear in face order, as they are */
	uint32_t	out = 0;

	for (uint32_t f = 0; f < m.ntriangles() && out < c.r.ntriangles; f++)
	{
		const uint32_t *t = &m.triangles[(size_t) f * 3];
		bool		inside = true;

		for (int i = 0; i < 3; i++)
		{
			const double *p = &m.positions[(size_t) t[i] * 3];

			inside &= p[0] >= 2 && p[0] <= 8 && p[1] >= 2 && p[1] <= 8 && p[2] >= -1 && p[2] <= 4;
		}
		if (!inside)
			continue;
		while (out < c.r.ntriangles && memcmp(c.p(c.r.triangles[out * 3]), &m.positions[(size_t) t[0] * 3], 24) != 0)
			out++;
		CHECK(out < c.r.ntriangles);
		out++;
	}
}

namespace
{

/* The output's points as a sorted list of coordinate triples. */
std::vector<std::vector<double>>
point_set(const std::vector<const GeoaccMeshResult *> &results)
{
	std::vector<std::vector<double>> points;

	for (const GeoaccMeshResult *r : results)
		for (uint32_t v = 0; v < r->nvertices; v++)
			points.push_back({r->positions[v * 3], r->positions[v * 3 + 1], r->positions[v * 3 + 2]});
	std::sort(points.begin(), points.end());
	points.erase(std::unique(points.begin(), points.end()), points.end());
	return points;
}

/* Faces [first, last) of a mesh as a mesh of its own, numbered anew by geoacc_mesh_weld. */
Mesh
piece(const Mesh &m, uint32_t first, uint32_t last)
{
	std::vector<double> corners;
	GeoaccMeshResult w{};
	Mesh		p;

	for (uint32_t f = first; f < last; f++)
		for (int i = 0; i < 3; i++)
			corners.insert(corners.end(), &m.positions[(size_t) m.triangles[f * 3 + i] * 3],
						   &m.positions[(size_t) m.triangles[f * 3 + i] * 3] + 3);
	CHECK_OK(geoacc_mesh_weld(corners.data(), last - first, 9, &w));
	p.positions.assign(w.positions, w.positions + (size_t) w.nvertices * 3);
	p.triangles.assign(w.triangles, w.triangles + (size_t) w.ntriangles * 3);
	geoacc_mesh_result_free(&w);
	return p;
}

}								/* namespace */

/*
 * Cut points do not depend on how vertices are numbered: the same mesh
 * renumbered gives the same points, and a model stored in pieces (rows),
 * each numbered on its own, gives the points of the whole.
 */
TEST(mesh_clip_cuts_do_not_depend_on_numbering)
{
	Mesh		m = closed_blob(3, 500000, 4000000, 50, 20);
	std::vector<uint32_t> perm(m.nvertices());
	Mesh		r = m;
	double		lo[3] = {499980, 3999980, 30},
				hi[3] = {500020, 4000020, 70};

	for (uint32_t v = 0; v < perm.size(); v++)
		perm[v] = v;
	std::shuffle(perm.begin(), perm.end(), core_test::rng());
	for (uint32_t v = 0; v < perm.size(); v++)
		for (int c = 0; c < 3; c++)
			r.positions[(size_t) perm[v] * 3 + c] = m.positions[(size_t) v * 3 + c];
	for (uint32_t &x : r.triangles)
		x = perm[x];

	for (int round = 0; round < 6; round++)
	{
		GeoaccBox	b = random_box(lo, hi);
		Clipped		a = clip1(GEOACC_DEVICE_CPU, m, b);
		Clipped		c = clip1(GEOACC_DEVICE_CPU, r, b);

		CHECK(a.r.nvertices == c.r.nvertices && a.r.ntriangles == c.r.ntriangles);
		CHECK(point_set({&a.r}) == point_set({&c.r}));

		/* two pieces: the first and second half of the faces */
		Mesh		p1 = piece(m, 0, m.ntriangles() / 2);
		Mesh		p2 = piece(m, m.ntriangles() / 2, m.ntriangles());
		Clipped		c1 = clip1(GEOACC_DEVICE_CPU, p1, b);
		Clipped		c2 = clip1(GEOACC_DEVICE_CPU, p2, b);

		CHECK(point_set({&c1.r, &c2.r}) == point_set({&a.r}));
	}
}

/* b9, a real urban scan with holes, moved to UTM coordinates: areas, tiles, watertight interior. */
TEST(mesh_clip_real_b9_at_utm)
{
	Mesh		m = real_mesh("b9_mesh");

	CHECK(m.ntriangles() == 10174);
	for (uint32_t v = 0; v < m.nvertices(); v++)
	{
		m.positions[(size_t) v * 3] += 500000;
		m.positions[(size_t) v * 3 + 1] += 4000000;
	}

	double		lo[3],
				hi[3];

	bounds(m, lo, hi);

	GeoaccBox	extent = box(lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
	std::vector<GeoaccBox> tiles(4 * 4 * 2);

	CHECK_OK(geoacc_grid_tiles(&extent, 4, 4, 2, tiles.data()));

	std::vector<Clipped> out = clip(GEOACC_DEVICE_CPU, m, tiles);
	ld			sum = 0;
	ld			whole = reference_area(m, extent);

	for (size_t t = 0; t < tiles.size(); t++)
	{
		ld			a = result_area(out[t].r);

		CHECK(well_formed(out[t].r));
		CHECK(close_relative(a, reference_area(m, tiles[t]), 1e-9L));
		sum += a;
	}
	CHECK(close_relative(sum, whole, 1e-9L));

	/* the cut points on the planes between tiles have those planes' exact values */
	for (size_t t = 0; t < tiles.size(); t++)
		for (uint32_t v = 0; v < out[t].r.nvertices; v++)
		{
			const double *p = out[t].p(v);

			CHECK(p[0] >= tiles[t].xmin && p[0] <= tiles[t].xmax && p[1] >= tiles[t].ymin
				  && p[1] <= tiles[t].ymax);
		}

	/* the tiles' union has the same open edges as the scan itself (its holes), no new ones */
	Mesh		welded = weld_results(out);
	EdgeCount	in = directed_edges(m.triangles.data(), m.ntriangles());
	EdgeCount	un = directed_edges(welded.triangles.data(), welded.ntriangles());
	size_t		open_in = 0,
				open_union = 0;

	for (const auto &x : in)
		open_in += in.find({x.first.second, x.first.first}) == in.end();
	for (const auto &x : un)
		open_union += un.find({x.first.second, x.first.first}) == un.end();
	/* a hole's edge crossed by a plane becomes two edges: at least as many, and no cut opens */
	CHECK(open_union >= open_in);

	size_t		cut_open = 0;

	for (const auto &x : un)
		if (un.find({x.first.second, x.first.first}) == un.end())
		{
			const double *a = &welded.positions[(size_t) x.first.first * 3];
			const double *b = &welded.positions[(size_t) x.first.second * 3];
			bool		on_inner_plane = false;

			for (const GeoaccBox &t : tiles)
				on_inner_plane |= (a[0] == t.xmin && b[0] == t.xmin && t.xmin != extent.xmin)
					|| (a[1] == t.ymin && b[1] == t.ymin && t.ymin != extent.ymin)
					|| (a[2] == t.zmin && b[2] == t.zmin && t.zmin != extent.zmin);
			cut_open += on_inner_plane;
		}
	CHECK(cut_open == 0);
}

/* The elephant, a real closed mesh: watertight after clipping by random boxes. */
TEST(mesh_clip_real_elephant_watertight)
{
	Mesh		m = real_mesh("elephant");
	double		lo[3],
				hi[3];
	bool		closed = closed_and_oriented(m.triangles.data(), m.ntriangles());

	bounds(m, lo, hi);
	for (int round = 0; round < 8; round++)
	{
		GeoaccBox	b = random_box(lo, hi);
		Clipped		c = clip1(GEOACC_DEVICE_CPU, m, b);
		size_t		border = 0;

		if (closed)
			CHECK(open_edges_off_the_box(c.r, b, &border) == 0);
		CHECK(close_relative(result_area(c.r), reference_area(m, b), 1e-9L));
	}
	CHECK(closed);
}

namespace
{

int			polls_left;

int
interrupt_after_polls()
{
	return --polls_left < 0;
}

}								/* namespace */

/*
 * Welding against a plain reference (an ordered map from the coordinates'
 * bits, -0 made +0, to the first corner's vertex): the real b9 scan as a
 * triangle soup, and seeded soups drawn from few points (many corners
 * meet, -0 and +0 among them) and from distinct points (the index grows
 * past its first size); packed, and in place from records of 13 doubles
 * whose other 4 are NaN.
 */
TEST(mesh_clip_weld_against_reference)
{
	Mesh		b9 = real_mesh("b9_mesh");
	std::vector<std::vector<double>> soups;

	soups.emplace_back();
	for (uint32_t c : b9.triangles)
		soups.back().insert(soups.back().end(), &b9.positions[(size_t) c * 3], &b9.positions[(size_t) c * 3] + 3);
	for (int round = 0; round < 3; round++)
	{
		std::uniform_int_distribution<int> pick(-3, 3);
		const size_t ntriangles = round == 0 ? 1 : round == 1 ? 1000 : 200000;

		soups.emplace_back();
		for (size_t i = 0; i < ntriangles * 9; i++)
		{
			int			v = pick(core_test::rng());

			soups.back().push_back(v == 0 && i % 2 ? -0.0 : v * 0.25 + (i % 3) * 1e-3 * (i % 7));
		}
	}
	soups.emplace_back();
	for (size_t i = 0; i < 30000 * 9; i++)
		soups.back().push_back(std::uniform_real_distribution<double>(-1e6, 1e6)(core_test::rng()));
	for (const std::vector<double> &soup : soups)
	{
		const uint32_t n = (uint32_t) (soup.size() / 9);
		std::map<std::vector<uint64_t>, uint32_t> seen;
		std::vector<double> want_positions;
		std::vector<uint32_t> want_triangles;

		for (size_t c = 0; c < (size_t) n * 3; c++)
		{
			std::vector<uint64_t> key(3);

			for (int d = 0; d < 3; d++)
			{
				double		x = soup[c * 3 + d] + 0.0;

				memcpy(&key[d], &x, sizeof(x));
			}
			auto		found = seen.emplace(key, (uint32_t) seen.size());

			if (found.second)
				want_positions.insert(want_positions.end(), &soup[c * 3], &soup[c * 3] + 3);
			want_triangles.push_back(found.first->second);
		}

		std::vector<double> records((size_t) n * 13, NAN);

		for (uint32_t t = 0; t < n; t++)
			memcpy(&records[(size_t) t * 13], &soup[(size_t) t * 9], 9 * sizeof(double));
		for (size_t stride : {(size_t) 9, (size_t) 13})
		{
			GeoaccMeshResult w{};

			CHECK_OK(geoacc_mesh_weld(stride == 9 ? soup.data() : records.data(), n, stride, &w));
			CHECK(w.ntriangles == n && w.nvertices == want_positions.size() / 3);
			CHECK(w.nvertices > 0
				  && memcmp(w.positions, want_positions.data(), want_positions.size() * sizeof(double)) == 0);
			CHECK(memcmp(w.triangles, want_triangles.data(), want_triangles.size() * sizeof(uint32_t)) == 0);
			geoacc_mesh_result_free(&w);
		}
	}

	GeoaccMeshResult w{};
	double		one[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};

	CHECK(geoacc_mesh_weld(one, 1, 8, &w) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK_OK(geoacc_mesh_weld(nullptr, 0, 9, &w));
	CHECK(w.nvertices == 0 && w.ntriangles == 0 && w.triangles == nullptr);
}

TEST(mesh_clip_cpu_stops_on_interrupt)
{
	Mesh		m = random_mesh(20000, 300000, 10, 0, 0, 0, 0);
	GeoaccBox	b = box(2, 2, -1, 8, 8, 4);
	GeoaccMesh	v = m.view();
	GeoaccMeshResult r{};

	polls_left = 2;
	geoacc_set_interrupt_callback(interrupt_after_polls);
	GeoaccStatus s = geoacc_mesh_clip(GEOACC_DEVICE_CPU, &v, &b, 1, &r, nullptr);

	geoacc_set_interrupt_callback(nullptr);
	CHECK(s == GEOACC_ERR_CANCELLED);
	CHECK(r.positions == nullptr && r.triangles == nullptr);
}

TEST(mesh_clip_gpu_without_device)
{
	if (core_test::gpu_available())
		throw core_test::Skip{"a GPU is present"};

	Mesh		m = random_mesh(10, 10, 1, 0, 0, 0, 0);
	GeoaccBox	b = box(0, 0, 0, 1, 1, 1);
	GeoaccMesh	v = m.view();
	GeoaccMeshResult r{};
	GeoaccStatus s = geoacc_mesh_clip(GEOACC_DEVICE_GPU, &v, &b, 1, &r, nullptr);

	CHECK(s == GEOACC_ERR_NO_DEVICE || s == GEOACC_ERR_DEVICE_DISABLED);
}

/* ------------------------------------------------------------- GPU */

namespace
{

void
check_gpu_equals_cpu(const Mesh &m, const std::vector<GeoaccBox> &boxes)
{
	std::vector<Clipped> cpu = clip(GEOACC_DEVICE_CPU, m, boxes);
	std::vector<Clipped> gpu = clip(GEOACC_DEVICE_GPU, m, boxes);

	for (size_t b = 0; b < boxes.size(); b++)
		CHECK(same_result(cpu[b].r, gpu[b].r));
}

}								/* namespace */

TEST(mesh_clip_gpu_equals_cpu_random)
{
	REQUIRE_GPU();
	for (int round = 0; round < 12; round++)
	{
		std::uniform_int_distribution<uint32_t> nv(3, 20000);
		uint32_t	n = nv(core_test::rng());
		double		origin = round % 2 ? 500000.0 : 0.0;
		Mesh		m = random_mesh(n, 2 * n, round % 3 == 0 ? 1e-3 : 100.0, origin, origin * 8, 0, round % 5);
		check_gpu_equals_cpu(m, random_boxes(m, 8));
	}

	/* closed meshes and a grid, the real ones too */
	Mesh		blob = closed_blob(5, 500000, 4000000, 50, 20);
	double		lo[3],
				hi[3];

	bounds(blob, lo, hi);

	GeoaccBox	extent = box(lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
	std::vector<GeoaccBox> tiles(8 * 8 * 2);

	CHECK_OK(geoacc_grid_tiles(&extent, 8, 8, 2, tiles.data()));
	check_gpu_equals_cpu(blob, tiles);

	Mesh		b9 = real_mesh("b9_mesh");

	bounds(b9, lo, hi);
	extent = box(lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
	CHECK_OK(geoacc_grid_tiles(&extent, 4, 4, 1, tiles.data()));
	tiles.resize(16);
	check_gpu_equals_cpu(b9, tiles);
}

/* Edge cases on the GPU: empty mesh, nothing inside, everything inside, degenerate and corner triangles. */
TEST(mesh_clip_gpu_edge_cases)
{
	REQUIRE_GPU();

	Mesh		empty;

	check_gpu_equals_cpu(empty, {box(0, 0, 0, 1, 1, 1)});

	Mesh		m = random_mesh(100, 150, 10, 0, 0, 0, 2);

	check_gpu_equals_cpu(m, {box(20, 20, 20, 30, 30, 30), box(-1, -1, -1, 11, 11, 11), box(5, 5, 1, 5, 5, 1)});

	Mesh		d;

	d.positions = {0, 0, 0, 1, 1, 1, 2, 2, 2, 5, 5, 5, 0.5, 0.5, 0.5, 1.5, 0.8, 0.5, 1.5, 1.5, 0.5, 0.8, 1.5, 0.5};
	d.triangles = {0, 1, 3, 0, 3, 3, 0, 4, 1, 4, 4, 4, 5, 6, 7};
	check_gpu_equals_cpu(d, {box(-1, -1, -1, 1.5, 1.5, 1.5), box(0, 0, 0, 1, 1, 1)});
}

/* Under small memory caps the GPU works in chunks (or leaves the clip to the CPU): the same bits. */
TEST(mesh_clip_gpu_chunks_under_memory_cap)
{
	REQUIRE_GPU();

	Mesh		m = random_mesh(30000, 90000, 100, 500000, 4000000, 0, 4);
	std::vector<GeoaccBox> boxes = random_boxes(m, 4);

	std::vector<Clipped> cpu = clip(GEOACC_DEVICE_CPU, m, boxes);

	for (uint64_t cap : {uint64_t(64) << 20, uint64_t(4) << 20, uint64_t(1200) << 10, uint64_t(64) << 10})
	{
		GeoaccMeshResult raw[4] = {};
		GeoaccMeshClipTiming t{};
		GeoaccMesh	v = m.view();

		geoacc_gpu_set_memory_limit(cap);
		GeoaccStatus s = geoacc_mesh_clip(GEOACC_DEVICE_GPU, &v, boxes.data(), 4, raw, &t);

		geoacc_gpu_set_memory_limit(0);
		CHECK_OK(s);
		printf("    cap %llu KB: %u chunks, %llu triangles on the CPU\n", (unsigned long long) (cap >> 10),
			   t.chunks, (unsigned long long) t.cpu_triangles);
		for (int b = 0; b < 4; b++)
		{
			CHECK(same_result(cpu[b].r, raw[b]));
			geoacc_mesh_result_free(&raw[b]);
		}
		CHECK(geoacc_gpu_memory_in_use() == 0);
	}
}

TEST(mesh_clip_gpu_stops_on_interrupt)
{
	REQUIRE_GPU();

	Mesh		m = random_mesh(20000, 100000, 10, 0, 0, 0, 0);
	std::vector<GeoaccBox> boxes(64, box(2, 2, -1, 8, 8, 4));
	std::vector<GeoaccMeshResult> r(64);
	GeoaccMesh	v = m.view();

	polls_left = 3;
	geoacc_set_interrupt_callback(interrupt_after_polls);
	GeoaccStatus s = geoacc_mesh_clip(GEOACC_DEVICE_GPU, &v, boxes.data(), 64, r.data(), nullptr);

	geoacc_set_interrupt_callback(nullptr);
	CHECK(s == GEOACC_ERR_CANCELLED);
	for (const GeoaccMeshResult &x : r)
		CHECK(x.positions == nullptr && x.triangles == nullptr);
	CHECK(geoacc_gpu_memory_in_use() == 0);
}

/* The device memory a clip asks the budget for: the mesh and every face in one chunk, or a smallest chunk. */
TEST(mesh_clip_device_need)
{
	Mesh		m = random_mesh(30000, 90000, 100, 500000, 4000000, 0, 4);
	Mesh		plain = random_mesh(30000, 90000, 100, 500000, 4000000, 0, 0);
	GeoaccMesh	v = m.view(),
				vp = plain.view();
	GeoaccDeviceNeed need = geoacc_mesh_clip_need(&v);
	GeoaccDeviceNeed need_plain = geoacc_mesh_clip_need(&vp);

	CHECK(need.least < need.bytes && need.least > 30000ull * (24 + 16 + 2));
	CHECK(need_plain.bytes < need.bytes);
	/* each face's worst case, twice: the chunk takes half the memory */
	CHECK(need.bytes > 2 * 90000ull * (12 + 16 + 7 * 12 + 9 * (8 + 24 + 16)));
}

/* Capped at its need, or at its least, as a reservation from the budget caps it: on the GPU, the CPU's bits. */
TEST(mesh_clip_gpu_within_its_device_need)
{
	REQUIRE_GPU();

	Mesh		m = random_mesh(30000, 90000, 100, 500000, 4000000, 0, 4);
	std::vector<GeoaccBox> boxes = random_boxes(m, 4);

	std::vector<Clipped> cpu = clip(GEOACC_DEVICE_CPU, m, boxes);
	GeoaccMesh	v = m.view();
	GeoaccDeviceNeed need = geoacc_mesh_clip_need(&v);

	CHECK_OK(geoacc_gpu_init());
	for (uint64_t bytes : {need.bytes, need.least})
	{
		GeoaccMeshResult raw[4] = {};
		GeoaccMeshClipTiming t{};

		geoacc_gpu_set_reservation(bytes);
		GeoaccStatus s = geoacc_mesh_clip(GEOACC_DEVICE_GPU, &v, boxes.data(), 4, raw, &t);

		geoacc_gpu_set_reservation(0);
		CHECK_OK(s);
		CHECK(t.cpu_triangles == 0);
		printf("    %s, %llu KB: %u chunks\n", bytes == need.bytes ? "need" : "least",
			   (unsigned long long) (bytes >> 10), t.chunks);
		for (int b = 0; b < 4; b++)
		{
			CHECK(same_result(cpu[b].r, raw[b]));
			geoacc_mesh_result_free(&raw[b]);
		}
		CHECK(geoacc_gpu_memory_in_use() == 0);
	}
}
