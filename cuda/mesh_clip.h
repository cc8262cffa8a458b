/*
 * mesh_clip.h
 *
 * Clipping an indexed triangle mesh by an axis-aligned box: the arithmetic
 * shared by the CUDA kernels and the CPU twin (outcodes, classification,
 * Sutherland-Hodgman against the six planes, the canonical cut points, fan
 * triangulation), so that both produce the same bits.
 *
 * The box is closed: a point on one of its faces is inside.  Plane k (0..5)
 * is axis k / 2 at the box's minimum (k even: inside when the coordinate is
 * >= the plane) or maximum (k odd: inside when <=).
 *
 * Crack-free cuts.  Every vertex of a clipped triangle is one of
 *   - an input vertex,
 *   - the cut of an input edge by a plane (EDGE): computed from the edge
 *     in its canonical direction (mesh_vertex_before: by coordinates, then
 *     by index), the cut coordinate set to the plane's value, so the two
 *     triangles sharing the edge, and the two tiles sharing the plane, get
 *     the same bits;
 *   - a point inside the triangle on the line where two planes of different
 *     axes meet (FACE): the chord of the triangle on the plane of the lower
 *     axis (its ends found from the canonical edges), cut by the other plane.
 * The polygon keeps, for each of its edges, the line it lies on (an input
 * edge or the triangle's chord on a plane), so each cut is computed from
 * that line's canonical ends, never from the previous clip's rounded points.
 * A triangle is clipped only against the planes at least one of its
 * vertices lies strictly outside of.
 */
#ifndef GEOACC_MESH_CLIP_H
#define GEOACC_MESH_CLIP_H

#include "core.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

namespace geoacc
{

/* Vertices of a clipped triangle: 3 plus one per plane, with room for rounding's odd cases. */
constexpr int MESH_CLIP_MAX_POLYGON = 16;

/* Largest vertex count: an EDGE key holds two vertex indices of 29 bits. */
constexpr uint32_t MESH_CLIP_MAX_VERTICES = (1u << 29) - 1;

/* A reference to a new point in the labelled triangles (else an input vertex index). */
constexpr uint32_t MESH_CLIP_NEW = 1u << 31;

/* Keys of new points: EDGE (a << 34 | b << 5 | plane), FACE (this bit | slot). */
constexpr uint64_t MESH_CLIP_FACE_KEY = uint64_t(1) << 63;

/* Device bytes of the vertices kept on the device: positions, attributes (k floats), outcode and used flag. */
inline uint64_t
mesh_vertex_device_bytes(uint32_t nvertices, uint32_t k)
{
	return (uint64_t) nvertices * (24 + 4 * (uint64_t) k + 2);
}

/* Device bytes per face of a chunk, at worst: indices, counts, offsets, 7 triangles and 9 new points. */
inline uint64_t
chunk_bytes_per_face(uint32_t k)
{
	return 12 + 16 + 7 * 12 + 9 * (8 + 24 + 4 * (uint64_t) k);
}

/* Faces of the smallest chunk worth the GPU: with less room the CPU twin clips the mesh. */
constexpr uint64_t MESH_CLIP_LEAST_CHUNK = 1024;

enum MeshPointKind : uint8_t
{
	MESH_POINT_VERTEX,
	MESH_POINT_EDGE,
	MESH_POINT_FACE
};

struct MeshClipBox
{
	double		lo[3];
	double		hi[3];
};

/* What a polygon vertex is: VERTEX a; EDGE a < b cut by plane; FACE planes plane < plane2 (axes). */
struct MeshPointLabel
{
	uint32_t	a;
	uint32_t	b;
	uint8_t		kind;
	uint8_t		plane;
	uint8_t		plane2;
};

/* A vertex of the polygon: its label, its coordinates, the line of the polygon edge leaving it. */
struct MeshPolygonVertex
{
	MeshPointLabel label;
	double		p[3];
	uint8_t		support_is_edge;	/* 1: input edge (support_a < support_b); 0: chord on support_plane */
	uint8_t		support_plane;
	uint32_t	support_a;
	uint32_t	support_b;
};

struct MeshPolygon
{
	int			n;
	MeshPolygonVertex v[MESH_CLIP_MAX_POLYGON];
};

GEOACC_HD double
mesh_plane_value(const MeshClipBox &box, int plane)
{
	return (plane & 1) ? box.hi[plane >> 1] : box.lo[plane >> 1];
}

/* Bit k set: the point is strictly outside plane k. */
GEOACC_HD uint32_t
mesh_outcode(const double *p, const MeshClipBox &box)
{
	return (uint32_t) (p[0] < box.lo[0]) | (uint32_t) (p[0] > box.hi[0]) << 1
		| (uint32_t) (p[1] < box.lo[1]) << 2 | (uint32_t) (p[1] > box.hi[1]) << 3
		| (uint32_t) (p[2] < box.lo[2]) << 4 | (uint32_t) (p[2] > box.hi[2]) << 5;
}

/* The triangle's class from its outcodes (the paper's test): 0 inside, 1 outside, 2 straddling. */
GEOACC_HD int
mesh_classify(uint32_t c0, uint32_t c1, uint32_t c2)
{
	if ((c0 | c1 | c2) == 0)
		return 0;
	if ((c0 & c1 & c2) != 0)
		return 1;
	return 2;
}

/* +1 inside plane k, 0 on it, -1 outside; exact (a comparison). */
GEOACC_HD int
mesh_side(double coordinate, int plane, double value)
{
	if (coordinate == value)
		return 0;
	return ((plane & 1) ? coordinate < value : coordinate > value) ? 1 : -1;
}

/*
 * Differences of coordinates near the ends of the double range overflow
 * (1e308 - -1e308); halved they do not, and halving is exact (coordinates
 * that large are far from the subnormals), so such edges are cut in halves.
 */
GEOACC_HD double
mesh_edge_scale(const double *a, const double *b)
{
	for (int c = 0; c < 3; c++)
		if (!(fabs(b[c] - a[c]) <= DBL_MAX))
			return 0.5;
	return 1.0;
}

/* The parameter where the segment a -> b meets coordinate `value` on `axis`. */
GEOACC_HD double
mesh_cut_param(const double *a, const double *b, int axis, double value)
{
	const double s = mesh_edge_scale(a, b);
	double		d = b[axis] * s - a[axis] * s;

	return d != 0 ? (value * s - a[axis] * s) / d : 0.0;
}

/* out = a + t (b - a), with out[axis] = value exactly. */
GEOACC_HD void
mesh_lerp_point(const double *a, const double *b, double t, int axis, double value, double *out)
{
	const double s = mesh_edge_scale(a, b);

	for (int c = 0; c < 3; c++)
		out[c] = (a[c] * s + t * (b[c] * s - a[c] * s)) / s;
	out[axis] = value;
}

/*
 * The canonical direction of an edge: from the end whose coordinates come
 * first (x, then y, then z; the lower index for equal points).  It does not
 * depend on how the vertices are numbered, so the rows of a model stored in
 * pieces, and the two sides of a UV seam (equal points, distinct vertices),
 * cut their common edges alike.
 */
GEOACC_HD bool
mesh_vertex_before(const double *positions, uint32_t a, uint32_t b)
{
	for (int c = 0; c < 3; c++)
	{
		double		x = positions[(size_t) a * 3 + c];
		double		y = positions[(size_t) b * 3 + c];

		if (x != y)
			return x < y;
	}
	return a < b;
}

/* One end of a triangle's chord on a plane: input vertex i, or edge i -> j (canonical) at parameter t. */
struct MeshChordEnd
{
	uint32_t	i;
	uint32_t	j;
	double		t;
	double		p[3];
};

/*
 * The ends of the chord of triangle `tri` on `plane`, found in a fixed
 * order from the vertices in canonical order (mesh_vertex_before): vertices
 * on the plane, then the edges (i0,i1), (i0,i2), (i1,i2) that cross it
 * strictly.  Returns how
 * many were found (2 whenever the triangle has vertices strictly on both
 * sides or one on the plane and one strictly outside).
 */
GEOACC_HD int
mesh_chord(const double *positions, const uint32_t *tri, const MeshClipBox &box, int plane, MeshChordEnd *ends)
{
	uint32_t	s[3] = {tri[0], tri[1], tri[2]};
	const int	axis = plane >> 1;
	const double value = mesh_plane_value(box, plane);
	int			side[3];
	int			n = 0;

	/* the three vertices in canonical order */
	if (mesh_vertex_before(positions, s[1], s[0]))
	{
		uint32_t	x = s[0];

		s[0] = s[1];
		s[1] = x;
	}
	if (mesh_vertex_before(positions, s[2], s[1]))
	{
		uint32_t	x = s[1];

		s[1] = s[2];
		s[2] = x;
	}
	if (mesh_vertex_before(positions, s[1], s[0]))
	{
		uint32_t	x = s[0];

		s[0] = s[1];
		s[1] = x;
	}
	for (int k = 0; k < 3; k++)
	{
		side[k] = mesh_side(positions[(size_t) s[k] * 3 + axis], plane, value);
		if (side[k] == 0 && n < 2)
		{
			ends[n].i = ends[n].j = s[k];
			ends[n].t = 0;
			for (int c = 0; c < 3; c++)
				ends[n].p[c] = positions[(size_t) s[k] * 3 + c];
			n++;
		}
	}
	for (int e = 0; e < 3 && n < 2; e++)
	{
		const int	x = e == 2 ? 1 : 0;
		const int	y = e == 0 ? 1 : 2;

		if (side[x] * side[y] < 0)
		{
			const uint32_t from = s[x];	/* x < y: already canonical */
			const uint32_t to = s[y];
			const double *a = positions + (size_t) from * 3;
			const double *b = positions + (size_t) to * 3;

			ends[n].i = from;
			ends[n].j = to;
			ends[n].t = mesh_cut_param(a, b, axis, value);
			mesh_lerp_point(a, b, ends[n].t, axis, value, ends[n].p);
			n++;
		}
	}
	return n;
}

/*
 * Coordinates of a new point from its label alone (the canonical
 * computation), and what its attributes are interpolated from: for EDGE
 * the edge in its canonical direction (ends[0]) and the parameter along
 * it, for FACE the chord's ends and the parameter along the chord.
 */
GEOACC_HD void
mesh_point_position(const double *positions, const uint32_t *tri, const MeshClipBox &box,
					const MeshPointLabel &label, double *out, MeshChordEnd *ends, double *t)
{
	if (label.kind == MESH_POINT_VERTEX)
	{
		for (int c = 0; c < 3; c++)
			out[c] = positions[(size_t) label.a * 3 + c];
		*t = 0;
	}
	else if (label.kind == MESH_POINT_EDGE)
	{
		const bool	forward = mesh_vertex_before(positions, label.a, label.b);
		const uint32_t from = forward ? label.a : label.b;
		const uint32_t to = forward ? label.b : label.a;
		const double *a = positions + (size_t) from * 3;
		const double *b = positions + (size_t) to * 3;
		const int	axis = label.plane >> 1;
		const double value = mesh_plane_value(box, label.plane);

		*t = mesh_cut_param(a, b, axis, value);
		mesh_lerp_point(a, b, *t, axis, value, out);
		ends[0].i = from;
		ends[0].j = to;
		ends[0].t = *t;
	}
	else
	{
		const int	axis2 = label.plane2 >> 1;
		const double value2 = mesh_plane_value(box, label.plane2);

		if (mesh_chord(positions, tri, box, label.plane, ends) < 2)
			ends[1] = ends[0];	/* cannot happen for a chord that was cut; stays defined */
		*t = mesh_cut_param(ends[0].p, ends[1].p, axis2, value2);
		mesh_lerp_point(ends[0].p, ends[1].p, *t, axis2, value2, out);
		out[label.plane >> 1] = mesh_plane_value(box, label.plane);
	}
}

/*
 * Attributes (k floats per vertex) of a new point, interpolated in float64
 * with the parameters of its position and rounded once to float.
 */
GEOACC_HD void
mesh_point_attributes(const float *attributes, uint32_t k, const MeshPointLabel &label,
					  const MeshChordEnd *ends, double t, float *out)
{
	for (uint32_t c = 0; c < k; c++)
	{
		if (label.kind == MESH_POINT_VERTEX)
			out[c] = attributes[(size_t) label.a * k + c];
		else if (label.kind == MESH_POINT_EDGE)
		{
			double		a = attributes[(size_t) ends[0].i * k + c];
			double		b = attributes[(size_t) ends[0].j * k + c];

			out[c] = (float) (a + t * (b - a));
		}
		else
		{
			double		e[2];

			for (int s = 0; s < 2; s++)
			{
				double		a = attributes[(size_t) ends[s].i * k + c];
				double		b = attributes[(size_t) ends[s].j * k + c];

				e[s] = ends[s].i == ends[s].j ? a : a + ends[s].t * (b - a);
			}
			out[c] = (float) (e[0] + t * (e[1] - e[0]));
		}
	}
}

/* The key that merges equal new points: EDGE by (a, b, plane); FACE points are unique. */
GEOACC_HD uint64_t
mesh_point_key(const MeshPointLabel &label, uint32_t slot)
{
	if (label.kind == MESH_POINT_EDGE)
		return (uint64_t) label.a << 34 | (uint64_t) label.b << 5 | label.plane;
	return MESH_CLIP_FACE_KEY | slot;
}

/* The point where the polygon edge leaving u (on its support) crosses `plane`. */
GEOACC_HD MeshPointLabel
mesh_cut_label(const MeshPolygonVertex &u, int plane)
{
	MeshPointLabel l;

	if (u.support_is_edge)
	{
		l.kind = MESH_POINT_EDGE;
		l.a = u.support_a;
		l.b = u.support_b;
		l.plane = (uint8_t) plane;
		l.plane2 = 0;
	}
	else
	{
		/* the chord of the lower axis first: the same point whichever plane was clipped first */
		int			p1 = u.support_plane;
		int			p2 = plane;

		if ((p2 >> 1) < (p1 >> 1))
		{
			p1 = plane;
			p2 = u.support_plane;
		}
		l.kind = MESH_POINT_FACE;
		l.a = l.b = 0;
		l.plane = (uint8_t) p1;
		l.plane2 = (uint8_t) p2;
	}
	return l;
}

/*
 * The side of a polygon vertex: exact, except that a cut point of an input
 * edge whose ends are both inside the plane is inside too (rounding may put
 * it a hair outside): the two triangles sharing the edge then cut it alike
 * even when only one of them is clipped against that plane.
 */
GEOACC_HD int
mesh_vertex_side(const MeshPolygonVertex &u, int plane, double value, const uint8_t *codes)
{
	int			s = mesh_side(u.p[plane >> 1], plane, value);

	if (s < 0 && u.label.kind == MESH_POINT_EDGE && !((codes[u.label.a] | codes[u.label.b]) >> plane & 1))
		s = 0;
	return s;
}

/* Which of two polygon vertices at one position stays: an input vertex, else an edge's cut, else a face point. */
GEOACC_HD bool
mesh_label_preferred(const MeshPointLabel &a, const MeshPointLabel &b)
{
	const int	rank_a = a.kind == MESH_POINT_VERTEX ? 0 : a.kind == MESH_POINT_EDGE ? 1 : 2;
	const int	rank_b = b.kind == MESH_POINT_VERTEX ? 0 : b.kind == MESH_POINT_EDGE ? 1 : 2;

	return rank_a < rank_b;
}

GEOACC_HD bool
mesh_same_position(const MeshPolygonVertex &a, const MeshPolygonVertex &b)
{
	return a.p[0] == b.p[0] && a.p[1] == b.p[1] && a.p[2] == b.p[2];
}

/*
 * One vertex for each run of polygon vertices at the same position (a cut
 * point that falls on an input vertex, or an edge's cut and a face point on
 * a box edge that passes through it), keeping the preferred label and the
 * support of the run's last vertex (the line that leaves the position).
 * With fewer than 3 left the polygon has no area and nothing is left: no
 * output triangle has two equal corners.
 */
GEOACC_HD void
mesh_polygon_drop_repeats(MeshPolygon &poly)
{
	int			n = 0;

	for (int k = 0; k < poly.n; k++)
	{
		const MeshPolygonVertex &v = poly.v[k];

		if (n > 0 && mesh_same_position(poly.v[n - 1], v))
		{
			MeshPolygonVertex &kept = poly.v[n - 1];

			if (mesh_label_preferred(v.label, kept.label))
				kept.label = v.label;
			kept.support_is_edge = v.support_is_edge;
			kept.support_plane = v.support_plane;
			kept.support_a = v.support_a;
			kept.support_b = v.support_b;
			continue;
		}
		poly.v[n++] = v;
	}
	/* the run that wraps from the last vertex to the first */
	while (n > 1 && mesh_same_position(poly.v[n - 1], poly.v[0]))
	{
		if (mesh_label_preferred(poly.v[n - 1].label, poly.v[0].label))
			poly.v[0].label = poly.v[n - 1].label;
		n--;
	}
	poly.n = n < 3 ? 0 : n;
}

/* Whether p lies in the box spanned by a and b, but for a few ulps of rounding. */
GEOACC_HD bool
mesh_between(const double *p, const double *a, const double *b)
{
	for (int d = 0; d < 3; d++)
	{
		const double lo = a[d] < b[d] ? a[d] : b[d];
		const double hi = a[d] < b[d] ? b[d] : a[d];
		const double slack = 16 * DBL_EPSILON * (fabs(a[d]) + fabs(b[d]));

		if (p[d] < lo - slack || p[d] > hi + slack)
			return false;
	}
	return true;
}

/*
 * Sutherland-Hodgman: the triangle `tri` clipped against the planes whose
 * bits are set in `planes`, in the order 0..5, into `poly` (winding kept;
 * fewer than 3 vertices: nothing left).  A vertex on a plane is inside; an
 * edge is cut only where its ends lie strictly on both sides.  codes[] are
 * the outcodes of the input vertices.
 */
GEOACC_HD void
mesh_clip_triangle(const double *positions, const uint32_t *tri, const uint8_t *codes, const MeshClipBox &box,
				   uint32_t planes, MeshPolygon &poly)
{
	MeshPolygon other;
	MeshPolygon *in = &poly;
	MeshPolygon *out = &other;

	in->n = 3;
	for (int k = 0; k < 3; k++)
	{
		MeshPolygonVertex &v = in->v[k];
		uint32_t	a = tri[k];
		uint32_t	b = tri[k == 2 ? 0 : k + 1];

		v.label.kind = MESH_POINT_VERTEX;
		v.label.a = v.label.b = a;
		v.label.plane = v.label.plane2 = 0;
		for (int c = 0; c < 3; c++)
			v.p[c] = positions[(size_t) a * 3 + c];
		v.support_is_edge = 1;
		v.support_plane = 0;
		v.support_a = a < b ? a : b;
		v.support_b = a < b ? b : a;
	}
	for (int plane = 0; plane < 6; plane++)
	{
		if (!(planes >> plane & 1))
			continue;

		const double value = mesh_plane_value(box, plane);
		const int	n = in->n;

		out->n = 0;
		for (int k = 0; k < n; k++)
		{
			const MeshPolygonVertex &u = in->v[k];
			const MeshPolygonVertex &w = in->v[k + 1 == n ? 0 : k + 1];
			const int	su = mesh_vertex_side(u, plane, value, codes);
			const int	sw = mesh_vertex_side(w, plane, value, codes);

			if (su >= 0 && out->n < MESH_CLIP_MAX_POLYGON)
			{
				out->v[out->n] = u;
				if (su == 0 && sw < 0)
				{
					/* leaving the box at u itself: the next edge runs along the plane */
					out->v[out->n].support_is_edge = 0;
					out->v[out->n].support_plane = (uint8_t) plane;
				}
				out->n++;
			}
			if (su * sw < 0 && out->n < MESH_CLIP_MAX_POLYGON)
			{
				MeshPolygonVertex &c = out->v[out->n++];
				MeshChordEnd ends[2];
				double		t;

				c.label = mesh_cut_label(u, plane);
				mesh_point_position(positions, tri, box, c.label, c.p, ends, &t);
				/*
				 * A face point on a chord that runs along the plane (the triangle
				 * parallel to the box edge): u and w are both on the plane but for
				 * rounding, and the cut can land anywhere on the chord, far past
				 * u and w.  Then the crossing is w (leaving) or u (entering).
				 */
				if (c.label.kind == MESH_POINT_FACE && !mesh_between(c.p, u.p, w.p))
				{
					const MeshPolygonVertex &end = su > 0 ? w : u;

					c.label = end.label;
					for (int d = 0; d < 3; d++)
						c.p[d] = end.p[d];
				}
				if (su > 0)
				{
					/* leaving: the edge from the cut runs along the plane */
					c.support_is_edge = 0;
					c.support_plane = (uint8_t) plane;
					c.support_a = c.support_b = 0;
				}
				else
				{
					/* entering: the rest of u's edge */
					c.support_is_edge = u.support_is_edge;
					c.support_plane = u.support_plane;
					c.support_a = u.support_a;
					c.support_b = u.support_b;
				}
			}
		}
		MeshPolygon *x = in;

		in = out;
		out = x;
		/* fewer than 3 vertices is a segment or a point, and stays one: nothing is left */
		if (in->n < 3)
		{
			in->n = 0;
			break;
		}
	}
	if (in != &poly)
		poly = *in;
	mesh_polygon_drop_repeats(poly);
}

/* Triangles and new points a polygon yields: a fan of n - 2 triangles, or none. */
GEOACC_HD void
mesh_polygon_counts(const MeshPolygon &poly, uint32_t *triangles, uint32_t *new_points)
{
	uint32_t	fresh = 0;

	if (poly.n < 3)
	{
		*triangles = 0;
		*new_points = 0;
		return;
	}
	for (int k = 0; k < poly.n; k++)
		fresh += poly.v[k].label.kind != MESH_POINT_VERTEX;
	*triangles = (uint32_t) poly.n - 2;
	*new_points = fresh;
}

/* Whether two corners of an input triangle are at one position (no output triangle is). */
GEOACC_HD bool
mesh_triangle_degenerate(const double *positions, const uint32_t *tri)
{
	for (int k = 0; k < 3; k++)
	{
		const double *a = positions + (size_t) tri[k] * 3;
		const double *b = positions + (size_t) tri[k == 2 ? 0 : k + 1] * 3;

		if (a[0] == b[0] && a[1] == b[1] && a[2] == b[2])
			return true;
	}
	return false;
}

/*
 * What one face contributes: its class, the triangles and new points it
 * yields, and (straddling) its clipped polygon.  A face with two corners at
 * one position yields nothing: it is classed outside.
 */
GEOACC_HD int
mesh_clip_face(const double *positions, const uint32_t *tri, const uint8_t *codes, const MeshClipBox &box,
			   MeshPolygon &poly, uint32_t *triangles, uint32_t *new_points)
{
	uint32_t	c0 = codes[tri[0]];
	uint32_t	c1 = codes[tri[1]];
	uint32_t	c2 = codes[tri[2]];
	int			cls = mesh_triangle_degenerate(positions, tri) ? 1 : mesh_classify(c0, c1, c2);

	*triangles = cls == 0 ? 1 : 0;
	*new_points = 0;
	if (cls == 2)
	{
		mesh_clip_triangle(positions, tri, codes, box, c0 | c1 | c2, poly);
		mesh_polygon_counts(poly, triangles, new_points);
	}
	return cls;
}

/*
 * Write one face's output: labelled triangles (input vertex index, or
 * MESH_CLIP_NEW | slot) at triangles_out, its new points at slots
 * first_slot.. (key, position, attributes; slot s at index s - slot_base of
 * the arrays), and a 1 in used[] for every input vertex referenced.
 */
GEOACC_HD void
mesh_write_face(const double *positions, const float *attributes, uint32_t k, const uint32_t *tri,
				const MeshClipBox &box, int cls, const MeshPolygon &poly, uint32_t *triangles_out,
				uint32_t first_slot, uint32_t slot_base, uint64_t *keys, double *new_positions,
				float *new_attributes, uint8_t *used)
{
	uint32_t	refs[MESH_CLIP_MAX_POLYGON];
	uint32_t	slot = first_slot;

	if (cls == 0)
	{
		for (int c = 0; c < 3; c++)
		{
			triangles_out[c] = tri[c];
			used[tri[c]] = 1;
		}
		return;
	}
	if (cls != 2 || poly.n < 3)
		return;
	for (int v = 0; v < poly.n; v++)
	{
		const MeshPointLabel &l = poly.v[v].label;

		if (l.kind == MESH_POINT_VERTEX)
		{
			refs[v] = l.a;
			used[l.a] = 1;
		}
		else
		{
			MeshChordEnd ends[2];
			double		t;
			double		p[3];

			const size_t i = slot - slot_base;

			mesh_point_position(positions, tri, box, l, p, ends, &t);
			keys[i] = mesh_point_key(l, slot);
			for (int c = 0; c < 3; c++)
				new_positions[i * 3 + c] = p[c];
			if (k > 0)
				mesh_point_attributes(attributes, k, l, ends, t, new_attributes + i * k);
			refs[v] = MESH_CLIP_NEW | slot;
			slot++;
		}
	}
	for (int f = 0; f + 2 < poly.n; f++)
	{
		triangles_out[f * 3] = refs[0];
		triangles_out[f * 3 + 1] = refs[f + 1];
		triangles_out[f * 3 + 2] = refs[f + 2];
	}
}

/* A box of the C ABI as the clipper's box. */
inline MeshClipBox
mesh_clip_box(const GeoaccBox &b)
{
	return MeshClipBox{{b.xmin, b.ymin, b.zmin}, {b.xmax, b.ymax, b.zmax}};
}

/*
 * One box's output before the final numbering: triangles in face order with
 * labelled references, new points per slot (in face order), used input
 * vertices.
 */
struct MeshLabelled
{
	std::vector<uint32_t> triangles;
	std::vector<uint64_t> keys;
	std::vector<double> positions;
	std::vector<float> attributes;
	std::vector<uint8_t> used;
};

/*
 * The final numbering, shared by the CPU twin and the GPU's chunked path:
 * used input vertices in index order, then the distinct new points in key
 * order (EDGE points by (a, b, plane), then FACE points in slot order).
 */
void		mesh_assemble(const GeoaccMesh &mesh, const MeshLabelled &labelled, GeoaccMeshResult &result);

/*
 * A mesh of the C ABI, checked: at most MESH_CLIP_MAX_VERTICES vertices,
 * its arrays present, finite coordinates, indices in range (messages name
 * `user`, "a clip", as what cannot take a larger mesh).
 */
void		check_mesh(const GeoaccMesh &mesh, const char *user);

/* Set a result from vectors (malloc'd copies the caller frees with geoacc_mesh_result_free). */
void		mesh_result_set(GeoaccMeshResult &result, const std::vector<double> &positions,
							const std::vector<uint32_t> &triangles, const std::vector<float> &attributes,
							uint32_t nattributes);

/*
 * The CPU twin for one box: faces [first, last) appended to `out` (whose
 * used[] has one byte per input vertex); codes[] are the vertices' outcodes.
 */
void		mesh_clip_labelled_cpu(const GeoaccMesh &mesh, const uint8_t *codes, const MeshClipBox &box,
								   uint32_t first, uint32_t last, MeshLabelled &out);

/* The CPU twin (mesh_clip.cpp): every box into results[], each box in one pass over the faces. */
void		mesh_clip_cpu(const GeoaccMesh &mesh, const GeoaccBox *boxes, uint32_t nboxes, GeoaccMeshResult *results);

/*
 * The GLB writer (mesh_glb.cpp): with origin, float32 positions relative to
 * it and no node translation (the tiles of a tileset share one origin);
 * with origin NULL, as geoacc_glb_write().  With out NULL only *size.
 */
void		glb_write(const GeoaccMesh &mesh, uint32_t layout, const double *origin, uint8_t *out, size_t capacity,
					  size_t *size);

/* GPU implementation (mesh_clip.cu): every box into results[]. */
void		mesh_clip_gpu(const GeoaccMesh &mesh, const GeoaccBox *boxes, uint32_t nboxes,
						  GeoaccMeshResult *results, GeoaccMeshClipTiming *timing);

}								/* namespace geoacc */

#endif							/* GEOACC_MESH_CLIP_H */
