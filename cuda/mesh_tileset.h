/*
 * mesh_tileset.h
 *
 * Level-of-detail tilesets of triangle meshes: the arithmetic shared by the
 * CUDA kernels and the CPU twin of the simplification and of the measured
 * geometric error, so that both give the same bits.
 *
 * Simplification is vertex clustering with a quadric-optimal representative
 * per cell (Lindstrom 2000, "Out-of-core simplification of large polygonal
 * models"): the cells of a level's grid are aligned with its tiles (every
 * tile holds a whole number of cells), every vertex falls in one cell, the
 * plane quadric of every input triangle (weighted by its area) is added to
 * each distinct cell of its corners, with the planes through the mesh's open
 * edges perpendicular to their triangles (Garland and Heckbert's boundary
 * constraints, which keep the border of a reality mesh in place; Lindstrom's
 * clustering alone pulls it into the cells), and each cell's vertices become one
 * vertex at the point that minimises the cell's quadric, regularised towards
 * the mean of the cell's vertices and clamped to the cell.  A triangle whose
 * corners fall in three distinct cells survives with the cells' vertices.
 * The simplified mesh of a level is one mesh for the whole level; its tiles
 * are clips of it by the tile boxes (mesh_clip.h), so neighbouring tiles of a
 * level share their border vertices to the bit.
 *
 * Sums over a cell run in one order on both devices: the cell's vertices in
 * vertex order, its quadric terms in (triangle, corner) order (a stable sort
 * by cell on each device).
 *
 * The geometric error of a level is an upper bound of the one-sided
 * Hausdorff distance from the full mesh to the level's mesh.  Each triangle
 * of the full mesh is sampled (its corners, and a barycentric k-grid when it
 * is longer than the spacing) and each sample's nearest level triangle found;
 * the distance to one triangle is a convex function, so over a sub-triangle
 * of the grid it is largest at a corner: the distance from every point of
 * the sub-triangle to the level is at most the largest distance of its
 * corners to any one triangle, tried for the nearest triangles of its
 * corners and its centroid; a sub-triangle whose bound is loose beside its
 * samples' distances is cut in four, a few times.  The largest such bound
 * is the level's; the largest sampled distance is what was measured.
 */
#ifndef GEOACC_MESH_TILESET_H
#define GEOACC_MESH_TILESET_H

#include "core.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

namespace geoacc
{

/* Most cells along one axis of a level's grid (a cell key packs three such indices in 60 bits). */
constexpr uint32_t TILESET_MAX_AXIS_CELLS = 1u << 20;

/* Most grid steps of a sample triangle's barycentric grid (at most 150 samples inside a triangle). */
constexpr uint32_t TILESET_MAX_SAMPLE_STEPS = 16;

/* Quadric terms of a triangle corner whose cell repeats an earlier corner's (or of a zero-area triangle). */
constexpr uint32_t TILESET_NO_CELL = 0xffffffffu;

/* A grid of n[0] x n[1] x n[2] cells over the box [lo, hi]. */
struct TilesetGrid
{
	double		lo[3];
	double		hi[3];
	uint32_t	n[3];
};

/* Plane i of n along an axis, as geoacc_grid_plane() computes it: the tile planes are cell planes. */
GEOACC_HD double
tileset_plane(double lo, double hi, uint32_t i, uint32_t n)
{
	if (i >= n)
		return hi;
	return lo + (hi - lo) * (double) i / (double) n;
}

/* The cell of coordinate x along an axis: the cell whose planes hold it (the lower one on a plane). */
GEOACC_HD uint32_t
tileset_cell_of(double x, double lo, double hi, uint32_t n)
{
	if (!(hi > lo) || n <= 1)
		return 0;

	double		t = (x - lo) / (hi - lo) * (double) n;
	uint32_t	i = t <= 0 ? 0 : t >= (double) n ? n - 1 : (uint32_t) t;

	/* the quotient may round across a plane: the planes themselves decide */
	if (i > 0 && x < tileset_plane(lo, hi, i, n))
		i--;
	else if (i + 1 < n && x >= tileset_plane(lo, hi, i + 1, n))
		i++;
	return i;
}

GEOACC_HD uint64_t
tileset_cell_key(const TilesetGrid &g, uint32_t ix, uint32_t iy, uint32_t iz)
{
	return ((uint64_t) ix * g.n[1] + iy) * g.n[2] + iz;
}

GEOACC_HD uint64_t
tileset_point_key(const TilesetGrid &g, const double *p)
{
	return tileset_cell_key(g, tileset_cell_of(p[0], g.lo[0], g.hi[0], g.n[0]),
							tileset_cell_of(p[1], g.lo[1], g.hi[1], g.n[1]),
							tileset_cell_of(p[2], g.lo[2], g.hi[2], g.n[2]));
}

/* The cell's box of a key. */
GEOACC_HD void
tileset_cell_box(const TilesetGrid &g, uint64_t key, double *lo, double *hi)
{
	uint32_t	i[3];

	i[2] = (uint32_t) (key % g.n[2]);
	key /= g.n[2];
	i[1] = (uint32_t) (key % g.n[1]);
	i[0] = (uint32_t) (key / g.n[1]);
	for (int c = 0; c < 3; c++)
	{
		lo[c] = tileset_plane(g.lo[c], g.hi[c], i[c], g.n[c]);
		hi[c] = tileset_plane(g.lo[c], g.hi[c], i[c] + 1, g.n[c]);
	}
}

/* A cell's centre: coordinates relative to it keep the quadrics' terms small at UTM or ECEF magnitudes. */
GEOACC_HD void
tileset_cell_centre(const double *lo, const double *hi, double *o)
{
	for (int c = 0; c < 3; c++)
		o[c] = lo[c] + (hi[c] - lo[c]) / 2;
}

/* A plane quadric: A (symmetric: xx xy xz yy yz zz), b, c; Q(x) = x'Ax + 2 b'x + c. */
struct TilesetQuadric
{
	double		a[6];
	double		b[3];
	double		c;
};

GEOACC_HD void
tileset_quadric_zero(TilesetQuadric &q)
{
	for (int i = 0; i < 6; i++)
		q.a[i] = 0;
	for (int i = 0; i < 3; i++)
		q.b[i] = 0;
	q.c = 0;
}

/* Add the plane through p with unit normal u, weighted by w, to q, in coordinates relative to o. */
GEOACC_HD void
tileset_quadric_add_plane(TilesetQuadric &q, const double *u, const double *p, double w, const double *o)
{
	double		d = -(u[0] * (p[0] - o[0]) + u[1] * (p[1] - o[1]) + u[2] * (p[2] - o[2]));

	q.a[0] += w * (u[0] * u[0]);
	q.a[1] += w * (u[0] * u[1]);
	q.a[2] += w * (u[0] * u[2]);
	q.a[3] += w * (u[1] * u[1]);
	q.a[4] += w * (u[1] * u[2]);
	q.a[5] += w * (u[2] * u[2]);
	q.b[0] += w * (d * u[0]);
	q.b[1] += w * (d * u[1]);
	q.b[2] += w * (d * u[2]);
	q.c += w * (d * d);
}

/* The normal of triangle (p0, p1, p2), its length twice the area. */
GEOACC_HD void
tileset_triangle_normal(const double *p0, const double *p1, const double *p2, double *n)
{
	double		e1[3],
				e2[3];

	for (int c = 0; c < 3; c++)
	{
		e1[c] = p1[c] - p0[c];
		e2[c] = p2[c] - p0[c];
	}
	n[0] = e1[1] * e2[2] - e1[2] * e2[1];
	n[1] = e1[2] * e2[0] - e1[0] * e2[2];
	n[2] = e1[0] * e2[1] - e1[1] * e2[0];
}

/*
 * Add the plane of triangle (p0, p1, p2), weighted by its area, to q, in
 * coordinates relative to o.  A zero-area triangle adds nothing.
 */
GEOACC_HD void
tileset_quadric_add_triangle(TilesetQuadric &q, const double *p0, const double *p1, const double *p2, const double *o)
{
	double		n[3];

	tileset_triangle_normal(p0, p1, p2, n);

	double		len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);

	if (!(len > 0) || !(len <= DBL_MAX))
		return;

	double		u[3] = {n[0] / len, n[1] / len, n[2] / len};

	tileset_quadric_add_plane(q, u, p0, len / 2, o);
}

/*
 * Add the constraint plane of an open edge (a, b) of the mesh, an edge of
 * the triangle (p0, p1, p2) and of no other (Garland and Heckbert's
 * boundary planes): the plane through the edge perpendicular to the
 * triangle, weighted by the edge's squared length, so that clustering keeps
 * the mesh's border where it is instead of pulling it into the cells.
 */
GEOACC_HD void
tileset_quadric_add_border(TilesetQuadric &q, const double *p0, const double *p1, const double *p2, const double *a,
						   const double *b, const double *o)
{
	double		n[3],
				e[3],
				m[3];

	tileset_triangle_normal(p0, p1, p2, n);
	for (int c = 0; c < 3; c++)
		e[c] = b[c] - a[c];
	m[0] = e[1] * n[2] - e[2] * n[1];
	m[1] = e[2] * n[0] - e[0] * n[2];
	m[2] = e[0] * n[1] - e[1] * n[0];

	double		len = sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);

	if (!(len > 0) || !(len <= DBL_MAX))
		return;

	double		u[3] = {m[0] / len, m[1] / len, m[2] / len};

	tileset_quadric_add_plane(q, u, a, e[0] * e[0] + e[1] * e[1] + e[2] * e[2], o);
}

/* The key of an edge's two vertex indices, whichever its direction. */
GEOACC_HD uint64_t
tileset_edge_key(uint32_t a, uint32_t b)
{
	return a < b ? (uint64_t) a << 32 | b : (uint64_t) b << 32 | a;
}

/*
 * A quadric term: triangle t's face plane and the constraint planes of its
 * open edges (bit j of border: the edge from corner j to corner j + 1) that
 * touch cell c, added for the cell of one of its corners.
 */
GEOACC_HD void
tileset_quadric_add_term(TilesetQuadric &q, const double *positions, const uint32_t *tri, uint8_t border,
						 const uint32_t *vcell, uint32_t c, const double *o)
{
	const double *p[3] = {positions + (size_t) tri[0] * 3, positions + (size_t) tri[1] * 3,
						  positions + (size_t) tri[2] * 3};

	tileset_quadric_add_triangle(q, p[0], p[1], p[2], o);
	for (int j = 0; j < 3; j++)
		if ((border >> j) & 1)
		{
			const int	k = j == 2 ? 0 : j + 1;

			if (vcell[tri[j]] == c || vcell[tri[k]] == c)
				tileset_quadric_add_border(q, p[0], p[1], p[2], p[j], p[k], o);
		}
}

/* Rounds of iterated regularisation (each shrinks the pull towards the mean by eps / eigenvalue). */
constexpr int TILESET_SOLVE_ROUNDS = 3;

/*
 * The representative of a cell, relative to its centre: the minimum of the
 * quadric by iterated Tikhonov regularisation from m, the mean of the
 * cell's vertices: TILESET_SOLVE_ROUNDS times x += (A + eps I)^-1 (-(A x +
 * b)), eps a thousandth of A's mean eigenvalue.  Along a well-determined
 * direction (eigenvalue lambda >> eps) x converges to the quadric's optimum
 * by a factor eps / (lambda + eps) a round, so a corner where three planes
 * meet is found to 1e-9 of its distance from m; along a direction the
 * quadric does not determine (a flat cell: rank 1; a crease: rank 2) x
 * stays at m's coordinate: m projected onto the plane, or the point of the
 * crease nearest m.  That is what Lindstrom's truncated SVD gives, with a
 * fixed handful of operations instead of an iterative eigensolver.
 */
GEOACC_HD void
tileset_quadric_solve(const TilesetQuadric &q, const double *m, double *x)
{
	const double trace = q.a[0] + q.a[3] + q.a[5];

	for (int c = 0; c < 3; c++)
		x[c] = m[c];
	if (!(trace > 0) || !(trace <= DBL_MAX))
		return;

	const double eps = trace / 3000;
	const double a00 = q.a[0] + eps,
				a01 = q.a[1],
				a02 = q.a[2],
				a11 = q.a[3] + eps,
				a12 = q.a[4],
				a22 = q.a[5] + eps;
	/* the adjugate of the symmetric matrix */
	const double c00 = a11 * a22 - a12 * a12,
				c01 = a02 * a12 - a01 * a22,
				c02 = a01 * a12 - a02 * a11,
				c11 = a00 * a22 - a02 * a02,
				c12 = a01 * a02 - a00 * a12,
				c22 = a00 * a11 - a01 * a01;
	const double det = a00 * c00 + a01 * c01 + a02 * c02;

	if (!(det > 0) || !(det <= DBL_MAX))
		return;
	for (int round = 0; round < TILESET_SOLVE_ROUNDS; round++)
	{
		double		r[3],
					y[3];

		r[0] = -(q.a[0] * x[0] + q.a[1] * x[1] + q.a[2] * x[2] + q.b[0]);
		r[1] = -(q.a[1] * x[0] + q.a[3] * x[1] + q.a[4] * x[2] + q.b[1]);
		r[2] = -(q.a[2] * x[0] + q.a[4] * x[1] + q.a[5] * x[2] + q.b[2]);
		y[0] = (c00 * r[0] + c01 * r[1] + c02 * r[2]) / det;
		y[1] = (c01 * r[0] + c11 * r[1] + c12 * r[2]) / det;
		y[2] = (c02 * r[0] + c12 * r[1] + c22 * r[2]) / det;
		for (int c = 0; c < 3; c++)
			if (y[c] == y[c] && fabs(y[c]) <= DBL_MAX)
				x[c] += y[c];
	}
}

/* x clamped to [lo, hi] per coordinate. */
GEOACC_HD void
tileset_clamp(double *x, const double *lo, const double *hi)
{
	for (int c = 0; c < 3; c++)
		x[c] = x[c] < lo[c] ? lo[c] : x[c] > hi[c] ? hi[c] : x[c];
}

/*
 * The vertex of a cell: the mean of its vertices' positions m (summed
 * relative to the centre o, in vertex order, by the caller), the quadric's
 * regularised optimum, clamped to the cell.
 */
GEOACC_HD void
tileset_cell_vertex(const TilesetQuadric &q, const double *sum, uint32_t count, const double *lo, const double *hi,
					double *out)
{
	double		o[3],
				m[3],
				x[3];

	tileset_cell_centre(lo, hi, o);
	for (int c = 0; c < 3; c++)
		m[c] = sum[c] / (double) count;
	tileset_quadric_solve(q, m, x);
	for (int c = 0; c < 3; c++)
		out[c] = o[c] + x[c];
	tileset_clamp(out, lo, hi);
}

/* ------------------------------------------------------- distances */

/* Squared distance from the origin to segment [a, b]. */
GEOACC_HD double
tileset_segment_d2(const double *a, const double *b)
{
	double		ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
	double		len2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
	double		t = len2 > 0 ? -(a[0] * ab[0] + a[1] * ab[1] + a[2] * ab[2]) / len2 : 0;
	double		p[3];

	t = t < 0 ? 0 : t > 1 ? 1 : t;
	for (int c = 0; c < 3; c++)
		p[c] = a[c] + t * ab[c];
	return p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
}

/*
 * Squared distance from point p to triangle (t0, t1, t2), by the regions of
 * the closest point (Ericson, Real-Time Collision Detection 5.1.5), in
 * coordinates relative to p; a triangle without area by its edges.
 */
GEOACC_HD double
tileset_point_triangle_d2(const double *p, const double *t0, const double *t1, const double *t2)
{
	double		a[3],
				b[3],
				c[3];

	for (int i = 0; i < 3; i++)
	{
		a[i] = t0[i] - p[i];
		b[i] = t1[i] - p[i];
		c[i] = t2[i] - p[i];
	}

	double		ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
	double		ac[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
	double		n[3] = {ab[1] * ac[2] - ab[2] * ac[1], ab[2] * ac[0] - ab[0] * ac[2], ab[0] * ac[1] - ab[1] * ac[0]};
	double		n2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];

	if (!(n2 > 0))
	{
		double		d0 = tileset_segment_d2(a, b),
					d1 = tileset_segment_d2(b, c),
					d2 = tileset_segment_d2(c, a);

		return d0 < d1 ? (d0 < d2 ? d0 : d2) : (d1 < d2 ? d1 : d2);
	}

	/* the origin is the query point: ap = -a */
	double		ap[3] = {-a[0], -a[1], -a[2]};
	double		d1 = ab[0] * ap[0] + ab[1] * ap[1] + ab[2] * ap[2];
	double		d2 = ac[0] * ap[0] + ac[1] * ap[1] + ac[2] * ap[2];

	if (d1 <= 0 && d2 <= 0)
		return a[0] * a[0] + a[1] * a[1] + a[2] * a[2];

	double		bp[3] = {-b[0], -b[1], -b[2]};
	double		d3 = ab[0] * bp[0] + ab[1] * bp[1] + ab[2] * bp[2];
	double		d4 = ac[0] * bp[0] + ac[1] * bp[1] + ac[2] * bp[2];

	if (d3 >= 0 && d4 <= d3)
		return b[0] * b[0] + b[1] * b[1] + b[2] * b[2];

	double		vc = d1 * d4 - d3 * d2;

	if (vc <= 0 && d1 >= 0 && d3 <= 0)
		return tileset_segment_d2(a, b);

	double		cp[3] = {-c[0], -c[1], -c[2]};
	double		d5 = ab[0] * cp[0] + ab[1] * cp[1] + ab[2] * cp[2];
	double		d6 = ac[0] * cp[0] + ac[1] * cp[1] + ac[2] * cp[2];

	if (d6 >= 0 && d5 <= d6)
		return c[0] * c[0] + c[1] * c[1] + c[2] * c[2];

	double		vb = d5 * d2 - d1 * d6;

	if (vb <= 0 && d2 >= 0 && d6 <= 0)
		return tileset_segment_d2(a, c);

	double		va = d3 * d6 - d5 * d4;

	if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0)
		return tileset_segment_d2(b, c);

	/* inside the face: the distance to its plane */
	double		s = n[0] * a[0] + n[1] * a[1] + n[2] * a[2];

	return s / n2 * s;
}

/* Longest edge of a triangle. */
GEOACC_HD double
tileset_longest_edge(const double *a, const double *b, const double *c)
{
	double		l2 = 0;
	const double *e[3][2] = {{a, b}, {b, c}, {c, a}};

	for (int i = 0; i < 3; i++)
	{
		double		s = 0;

		for (int k = 0; k < 3; k++)
		{
			double		d = e[i][1][k] - e[i][0][k];

			s += d * d;
		}
		l2 = s > l2 ? s : l2;
	}
	return sqrt(l2);
}

/* Grid steps of a triangle's samples: edges no longer than `spacing` between samples, at most 16. */
GEOACC_HD uint32_t
tileset_sample_steps(double longest, double spacing)
{
	if (!(longest > spacing) || !(spacing > 0))
		return 1;

	double		k = ceil(longest / spacing);

	return k >= (double) TILESET_MAX_SAMPLE_STEPS ? TILESET_MAX_SAMPLE_STEPS : (uint32_t) k;
}

/* Covering radius of a triangle's k-grid (with its corners): L / (k sqrt 3). */
GEOACC_HD double
tileset_sample_cover(double longest, uint32_t k)
{
	return longest / ((double) k * 1.7320508075688772);
}

/* Sample (i, j) of a triangle's k-grid, i + j <= k: p0 + e1 i / k + e2 j / k. */
GEOACC_HD void
tileset_sample_point(const double *p0, const double *p1, const double *p2, uint32_t k, uint32_t i, uint32_t j,
					 double *out)
{
	double		s = (double) i / (double) k,
				t = (double) j / (double) k;

	for (int c = 0; c < 3; c++)
		out[c] = p0[c] + s * (p1[c] - p0[c]) + t * (p2[c] - p0[c]);
}

/*
 * The per-triangle sample: m2 the largest squared distance of its corners
 * (d2 of its vertices, given) and of its k-grid's other points to the
 * level, bound = sqrt(m2) + the grid's covering radius.
 */
struct TilesetTriangleSample
{
	double		m2;
	double		bound;
};

/* First index of sorted keys[0, n) that is >= key. */
GEOACC_HD uint32_t
tileset_lower_bound(const uint64_t *keys, uint32_t n, uint64_t key)
{
	uint32_t	lo = 0,
				hi = n;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The triangles of a level filed by the cells their boxes overlap: the
 * distinct cell keys in order, and for key r the triangles
 * tris[starts[r] .. starts[r + 1]).
 */
struct TilesetBuckets
{
	const uint64_t *keys;
	const uint32_t *starts;
	uint32_t	nkeys;
	const uint32_t *tris;
};

/* The cells of a triangle's box: [lo[c], hi[c]] along each axis. */
GEOACC_HD void
tileset_triangle_cells(const TilesetGrid &g, const double *p0, const double *p1, const double *p2, uint32_t *lo,
					   uint32_t *hi)
{
	for (int c = 0; c < 3; c++)
	{
		double		mn = fmin(p0[c], fmin(p1[c], p2[c]));
		double		mx = fmax(p0[c], fmax(p1[c], p2[c]));

		lo[c] = tileset_cell_of(mn, g.lo[c], g.hi[c], g.n[c]);
		hi[c] = tileset_cell_of(mx, g.lo[c], g.hi[c], g.n[c]);
		/* a box on a plane also touches the cell below it */
		if (lo[c] > 0 && mn <= tileset_plane(g.lo[c], g.hi[c], lo[c], g.n[c]))
			lo[c]--;
	}
}

/* The smallest width of a grid's cells, a lower bound of the distance past r rings of cells. */
GEOACC_HD double
tileset_min_cell_width(const TilesetGrid &g)
{
	double		w = DBL_MAX;

	for (int c = 0; c < 3; c++)
		if (g.n[c] > 1)
		{
			double		cw = (g.hi[c] - g.lo[c]) / (double) g.n[c];

			/* planes round: a cell may be an ulp narrower than the quotient */
			cw *= 1 - 1e-12;
			w = cw < w ? cw : w;
		}
	return w;
}

/* The nearest triangle of the level to a point: its squared distance and its index (TILESET_NO_CELL: none). */
struct TilesetNearest
{
	double		d2;
	uint32_t	tri;
};

/* Squared distance from p to triangle t of a mesh. */
GEOACC_HD double
tileset_point_mesh_triangle_d2(const double *p, uint32_t t, const double *positions, const uint32_t *triangles)
{
	const uint32_t *v = triangles + (size_t) t * 3;

	return tileset_point_triangle_d2(p, positions + (size_t) v[0] * 3, positions + (size_t) v[1] * 3,
									 positions + (size_t) v[2] * 3);
}

/*
 * Whether triangle t is surely farther from p than the squared distance
 * best: its bounding box is, by more than the rounding of either distance
 * (a few ulps of the coordinates' squared spread around p) can make up, so
 * a search that skips it finds what one that measures it finds.
 */
GEOACC_HD bool
tileset_triangle_beyond(const double *p, uint32_t t, const double *positions, const uint32_t *triangles, double best)
{
	const uint32_t *v = triangles + (size_t) t * 3;
	double		box2 = 0,
				spread2 = 0;

	for (int c = 0; c < 3; c++)
	{
		double		a = positions[(size_t) v[0] * 3 + c] - p[c],
					b = positions[(size_t) v[1] * 3 + c] - p[c],
					d = positions[(size_t) v[2] * 3 + c] - p[c];
		double		lo = a < b ? (a < d ? a : d) : (b < d ? b : d);
		double		hi = a > b ? (a > d ? a : d) : (b > d ? b : d);
		double		gap = lo > 0 ? lo : hi < 0 ? -hi : 0;
		double		far = -lo > hi ? -lo : hi;

		box2 += gap * gap;
		spread2 += far * far;
	}
	return box2 > best + 1e-10 * spread2;
}

/*
 * Whether every triangle filed in cell (x, y, z) is surely farther from p
 * than the squared distance best: a triangle is filed in the cells its box
 * touches, so it is at least as far as the cell, whose faces are taken a
 * slack (far more than the filing's rounding) nearer, and a cell at the
 * grid's edge reaches beyond it.  Of the same kind as
 * tileset_triangle_beyond, for a whole cell before its bucket is looked up.
 */
GEOACC_HD bool
tileset_cell_beyond(const double *p, const TilesetGrid &g, int64_t x, int64_t y, int64_t z, double best, double width)
{
	const int64_t cell[3] = {x, y, z};
	const double slack = 1e-6 * width;
	double		gap2 = 0;

	for (int c = 0; c < 3; c++)
	{
		double		gap = 0;

		if (cell[c] > 0)
		{
			double		lo = tileset_plane(g.lo[c], g.hi[c], (uint32_t) cell[c], g.n[c]);

			gap = p[c] < lo ? lo - p[c] : gap;
		}
		if (cell[c] + 1 < (int64_t) g.n[c])
		{
			double		hi = tileset_plane(g.lo[c], g.hi[c], (uint32_t) cell[c] + 1, g.n[c]);

			gap = p[c] > hi ? p[c] - hi : gap;
		}
		gap = gap > slack ? gap - slack : 0;
		gap2 += gap * gap;
	}
	return gap2 > best * (1 + 1e-6) + slack * slack;
}

/*
 * The nearest triangle of the level to p: the cells around p's cell ring by
 * ring, until no triangle of a cell outside the rings searched can be
 * nearer than the best found; of equally near ones the lowest index.
 * Triangles filed in several cells are measured several times (the minimum
 * does not care), so both devices find the same one.  d2 DBL_MAX when there
 * are no triangles.
 */
GEOACC_HD TilesetNearest
tileset_point_level_nearest(const double *p, const TilesetGrid &g, const TilesetBuckets &b, const double *positions,
							const uint32_t *triangles)
{
	uint32_t	ci[3];
	double		best = DBL_MAX;
	uint32_t	best_tri = TILESET_NO_CELL;
	const double width = tileset_min_cell_width(g);
	uint32_t	rmax = 0;

	/* how far p is from the faces of its cell towards neighbours: nothing outside it is nearer */
	double		inside = DBL_MAX;

	for (int c = 0; c < 3; c++)
	{
		ci[c] = tileset_cell_of(p[c], g.lo[c], g.hi[c], g.n[c]);
		rmax = g.n[c] > rmax ? g.n[c] : rmax;
		if (g.n[c] > 1)
		{
			double		below = p[c] - tileset_plane(g.lo[c], g.hi[c], ci[c], g.n[c]);
			double		above = tileset_plane(g.lo[c], g.hi[c], ci[c] + 1, g.n[c]) - p[c];
			double		m = below < above ? below : above;

			inside = m < inside ? m : inside;
		}
	}
	inside = inside < 0 ? 0 : inside == DBL_MAX ? 0 : inside * (1 - 1e-12);
	for (uint32_t r = 0; r <= rmax; r++)
	{
		int64_t		lo[3],
					hi[3];

		for (int c = 0; c < 3; c++)
		{
			lo[c] = (int64_t) ci[c] - r;
			hi[c] = (int64_t) ci[c] + r;
		}
		for (int64_t x = lo[0] < 0 ? 0 : lo[0]; x <= hi[0] && x < (int64_t) g.n[0]; x++)
			for (int64_t y = lo[1] < 0 ? 0 : lo[1]; y <= hi[1] && y < (int64_t) g.n[1]; y++)
				for (int64_t z = lo[2] < 0 ? 0 : lo[2]; z <= hi[2] && z < (int64_t) g.n[2]; z++)
				{
					/* only the ring's shell: the inside was searched before */
					if (x != lo[0] && x != hi[0] && y != lo[1] && y != hi[1] && z != lo[2] && z != hi[2])
						continue;
					if (r > 0 && tileset_cell_beyond(p, g, x, y, z, best, width))
						continue;

					uint64_t	key = tileset_cell_key(g, (uint32_t) x, (uint32_t) y, (uint32_t) z);
					uint32_t	k = tileset_lower_bound(b.keys, b.nkeys, key);

					if (k == b.nkeys || b.keys[k] != key)
						continue;
					for (uint32_t e = b.starts[k]; e < b.starts[k + 1]; e++)
					{
						const uint32_t t = b.tris[e];

						if (tileset_triangle_beyond(p, t, positions, triangles, best))
							continue;

						double		d2 = tileset_point_mesh_triangle_d2(p, t, positions, triangles);

						if (d2 < best || (d2 == best && t < best_tri))
						{
							best = d2;
							best_tri = t;
						}
					}
				}
		/* everything not searched lies at least r cell widths (and p's own margin) away */
		if (best < DBL_MAX)
		{
			double		reach = (double) r * width + inside;

			if (best <= reach * reach)
				break;
		}
	}

	TilesetNearest n;

	n.d2 = best;
	n.tri = best_tri;
	return n;
}

/* Squared distance from p to the nearest triangle of the level (DBL_MAX when there is none). */
GEOACC_HD double
tileset_point_level_d2(const double *p, const TilesetGrid &g, const TilesetBuckets &b, const double *positions,
					   const uint32_t *triangles)
{
	return tileset_point_level_nearest(p, g, b, positions, triangles).d2;
}

/*
 * A bound of the squared distance from every point of the sub-triangle
 * (q0, q1, q2) to the level: the distance to one triangle T is convex, so
 * over the sub-triangle it is largest at a corner; the bound is the least,
 * over candidate triangles T (the nearest of its corners, n[0..2], and of
 * its centroid, n[3]), of the largest corner distance to T.  The centroid's
 * nearest is the candidate that fits a sub-triangle lying on one level
 * triangle, whose corners on the level's edges may each be nearest to a
 * neighbour.
 */
GEOACC_HD double
tileset_subtriangle_bound2(const double *q0, const double *q1, const double *q2, const TilesetNearest *n,
						   const double *positions, const uint32_t *triangles)
{
	const double *q[3] = {q0, q1, q2};
	double		best = DBL_MAX;

	for (int c = 0; c < 4; c++)
	{
		const uint32_t t = n[c].tri;
		bool		seen = t == TILESET_NO_CELL;

		for (int e = 0; e < c; e++)
			seen |= n[e].tri == t;
		if (seen)
			continue;

		double		e = 0;

		for (int j = 0; j < 3; j++)
		{
			double		d = n[j].tri == t ? n[j].d2 : tileset_point_mesh_triangle_d2(q[j], t, positions, triangles);

			e = d > e ? d : e;
		}
		best = e < best ? e : best;
	}
	return best;
}

/* Halvings of a sub-triangle whose bound is loose beside its samples (4^3 = 64 pieces at most). */
constexpr int TILESET_REFINE_DEPTH = 3;

/* A sub-triangle being bounded: its corners, their nearest triangles, its depth. */
struct TilesetPiece
{
	double		q[3][3];
	TilesetNearest n[3];
	int			depth;
};

/*
 * The bound of a sub-triangle (squared), its sampled distances (corners,
 * centroids, midpoints) into *worst.  A piece whose bound exceeds twice its
 * largest sampled distance plus slack is cut into four at its edges'
 * midpoints, down to TILESET_REFINE_DEPTH halvings, so that where the
 * level's triangles are smaller than the piece a single one still fits each
 * part; the largest bound of the parts is the piece's.
 */
GEOACC_HD double
tileset_subtriangle(const double *q0, const double *q1, const double *q2, TilesetNearest n0, TilesetNearest n1,
					TilesetNearest n2, double slack, const TilesetGrid &g, const TilesetBuckets &b,
					const double *positions, const uint32_t *triangles, double *worst)
{
	TilesetPiece stack[3 * TILESET_REFINE_DEPTH + 1];
	int			top = 0;
	double		bound2 = 0;

	for (int c = 0; c < 3; c++)
	{
		stack[0].q[0][c] = q0[c];
		stack[0].q[1][c] = q1[c];
		stack[0].q[2][c] = q2[c];
	}
	stack[0].n[0] = n0;
	stack[0].n[1] = n1;
	stack[0].n[2] = n2;
	stack[0].depth = 0;
	top = 1;
	while (top > 0)
	{
		TilesetPiece piece = stack[--top];
		double		centroid[3];

		for (int c = 0; c < 3; c++)
			centroid[c] = (piece.q[0][c] + piece.q[1][c] + piece.q[2][c]) / 3;

		TilesetNearest n[4] = {piece.n[0], piece.n[1], piece.n[2],
							   tileset_point_level_nearest(centroid, g, b, positions, triangles)};
		double		local = 0;

		for (int c = 0; c < 4; c++)
			local = n[c].d2 > local ? n[c].d2 : local;
		*worst = local > *worst ? local : *worst;

		double		e = tileset_subtriangle_bound2(piece.q[0], piece.q[1], piece.q[2], n, positions, triangles);
		double		enough = 2 * sqrt(local) + slack;

		if (e <= enough * enough || piece.depth == TILESET_REFINE_DEPTH)
		{
			bound2 = e > bound2 ? e : bound2;
			continue;
		}

		/* four parts: the corners' and the midpoints' */
		double		m[3][3];
		TilesetNearest mn[3];

		for (int i = 0; i < 3; i++)
		{
			const int	j = i == 2 ? 0 : i + 1;

			for (int c = 0; c < 3; c++)
				m[i][c] = (piece.q[i][c] + piece.q[j][c]) / 2;
			mn[i] = tileset_point_level_nearest(m[i], g, b, positions, triangles);
			*worst = mn[i].d2 > *worst ? mn[i].d2 : *worst;
		}

		/* m[0] between corners 0 and 1, m[1] between 1 and 2, m[2] between 2 and 0 */
		const double *pq[4][3] = {{piece.q[0], m[0], m[2]}, {m[0], piece.q[1], m[1]}, {m[2], m[1], piece.q[2]},
								  {m[0], m[1], m[2]}};
		const TilesetNearest pn[4][3] = {{piece.n[0], mn[0], mn[2]}, {mn[0], piece.n[1], mn[1]},
										 {mn[2], mn[1], piece.n[2]}, {mn[0], mn[1], mn[2]}};

		for (int part = 3; part >= 0; part--)
		{
			TilesetPiece *next = &stack[top++];

			for (int i = 0; i < 3; i++)
			{
				for (int c = 0; c < 3; c++)
					next->q[i][c] = pq[part][i][c];
				next->n[i] = pn[part][i];
			}
			next->depth = piece.depth + 1;
		}
	}
	return bound2;
}

/*
 * The sample of one triangle (p0, p1, p2) of the full mesh, its corners'
 * nearest level triangles given: its k-grid's points (k from the spacing)
 * measured, m2 the largest squared distance of its points; bound the
 * largest of its k^2 sub-triangles' bounds (tileset_subtriangle_bound2),
 * which holds for every point of the triangle.  The grid goes row by row,
 * two rows kept.
 */
GEOACC_HD TilesetTriangleSample
tileset_triangle_sample(const double *p0, const double *p1, const double *p2, TilesetNearest c0, TilesetNearest c1,
						TilesetNearest c2, double spacing, const TilesetGrid &g, const TilesetBuckets &b,
						const double *to_positions, const uint32_t *to_triangles)
{
	const uint32_t k = tileset_sample_steps(tileset_longest_edge(p0, p1, p2), spacing);
	/* a bound within twice the local distance plus a sixteenth of the spacing is not refined further */
	const double slack = spacing / 16;
	TilesetNearest rows[2][TILESET_MAX_SAMPLE_STEPS + 1];
	double		pts[2][TILESET_MAX_SAMPLE_STEPS + 1][3];
	double		worst = 0,
				bound2 = 0;

	/* row i holds the points (i, j), j = 0 .. k - i: (0, 0) is p0, (k, 0) p1, (0, k) p2 */
	for (uint32_t i = 0; i <= k; i++)
	{
		TilesetNearest *row = rows[i & 1];

		for (uint32_t j = 0; i + j <= k; j++)
		{
			double	   *q = pts[i & 1][j];
			const double *corner = (i == 0 && j == 0) ? p0 : (i == k) ? p1 : (j == k) ? p2 : nullptr;

			if (corner != nullptr)
			{
				for (int c = 0; c < 3; c++)
					q[c] = corner[c];
				row[j] = (i == 0 && j == 0) ? c0 : (i == k) ? c1 : c2;
			}
			else
			{
				tileset_sample_point(p0, p1, p2, k, i, j, q);
				row[j] = tileset_point_level_nearest(q, g, b, to_positions, to_triangles);
			}
			worst = row[j].d2 > worst ? row[j].d2 : worst;
		}
		if (i == 0)
			continue;

		/* the sub-triangles between rows i - 1 and i */
		const TilesetNearest *up = rows[(i - 1) & 1];
		double		(*qu)[3] = pts[(i - 1) & 1];
		double		(*qd)[3] = pts[i & 1];

		for (uint32_t j = 0; i + j <= k; j++)
		{
			double		e = tileset_subtriangle(qu[j], qd[j], qu[j + 1], up[j], row[j], up[j + 1], slack, g, b,
												to_positions, to_triangles, &worst);

			bound2 = e > bound2 ? e : bound2;
			if (i + j + 1 <= k)
			{
				e = tileset_subtriangle(qd[j], qd[j + 1], qu[j + 1], row[j], row[j + 1], up[j + 1], slack, g, b,
										to_positions, to_triangles, &worst);
				bound2 = e > bound2 ? e : bound2;
			}
		}
	}

	TilesetTriangleSample s;

	s.m2 = worst;
	s.bound = sqrt(bound2 > worst ? bound2 : worst);
	return s;
}

/* ------------------------------------------------------- the host side */

/* The simplified mesh of a level, before clipping. */
struct TilesetLevelMesh
{
	std::vector<double> positions;
	std::vector<uint32_t> triangles;
	std::vector<float> attributes;
};

/* The triangles of a level filed by cells, on the host. */
struct TilesetHostBuckets
{
	std::vector<uint64_t> keys;
	std::vector<uint32_t> starts;
	std::vector<uint32_t> tris;

	TilesetBuckets view() const
	{
		return TilesetBuckets{keys.data(), starts.data(), (uint32_t) keys.size(), tris.data()};
	}
};

/* The triangles of `to` filed by the cells of their boxes, (key, triangle) in order. */
void		bucket_triangles_cpu(const GeoaccMesh &to, const TilesetGrid &grid, TilesetHostBuckets &b);

/* The open edges of a triangle mesh: border[t] bit j for the edge from corner j to j + 1 used by no other triangle. */
void		mesh_open_edges_cpu(const GeoaccMesh &mesh, std::vector<uint8_t> &border);

/* The CPU twin (mesh_tileset.cpp): the clustered mesh of a grid. */
void		mesh_cluster_cpu(const GeoaccMesh &mesh, const TilesetGrid &grid, TilesetLevelMesh &out);

/* The CPU twin: the measured distance and the bound (measured + covering radius) from `from` to `to`. */
void		mesh_distance_cpu(const GeoaccMesh &from, const GeoaccMesh &to, const TilesetGrid &grid, double spacing,
							  double *measured, double *bound);

#ifdef GEOACC_WITH_CUDA
/* GPU implementations (mesh_tileset.cu), the same bits; kernel_ms gets the time of the kernels and sorts. */
void		mesh_cluster_gpu(const GeoaccMesh &mesh, const TilesetGrid &grid, TilesetLevelMesh &out,
							 double *kernel_ms);
void		mesh_distance_gpu(const GeoaccMesh &from, const GeoaccMesh &to, const TilesetGrid &grid, double spacing,
							  double *measured, double *bound, double *kernel_ms);
#endif

}								/* namespace geoacc */

#endif							/* GEOACC_MESH_TILESET_H */
