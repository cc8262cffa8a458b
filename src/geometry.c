/*
 * geometry.c
 *
 * Reading PostGIS geometries in place (the serialized GSERIALIZED form,
 * versions 1 and 2, without liblwgeom) and writing lines in PostGIS 3's
 * serialized form byte for byte.  Also the trajectory rule every trajectory
 * function applies.
 */
#include "geoacc.h"

#include <float.h>
#include <math.h>

#include "utils/memutils.h"

/* GSERIALIZED flag bits (liblwgeom/gserialized1.h and gserialized2.h) */
#define GS_FLAG_Z 0x01
#define GS_FLAG_M 0x02
#define GS_FLAG_BBOX 0x04
#define GS_FLAG_GEODETIC 0x08
#define GS2_FLAG_EXTENDED 0x10
#define GS2_FLAG_VERSION 0x40

typedef struct GeometryHeader
{
	int32		srid;
	bool		has_z;
	bool		has_m;
	const uint8 *body;			/* at the geometry type word */
	const uint8 *end;
} GeometryHeader;

static void
ReadHeader(const struct varlena *geom, GeometryHeader *h)
{
	const uint8 *p = (const uint8 *) VARDATA(geom);
	uint8		flags = p[3];
	int32		srid = (int32) ((uint32) p[0] << 16 | (uint32) p[1] << 8 | (uint32) p[2]);
	int			ndims;

	/* 21-bit signed SRID */
	h->srid = (srid << 11) >> 11;
	h->has_z = (flags & GS_FLAG_Z) != 0;
	h->has_m = (flags & GS_FLAG_M) != 0;
	ndims = 2 + h->has_z + h->has_m;
	p += 4;
	if ((flags & GS2_FLAG_VERSION) && (flags & GS2_FLAG_EXTENDED))
		p += 8;
	if (flags & GS_FLAG_BBOX)
		p += (flags & GS_FLAG_GEODETIC) ? 6 * sizeof(float) : 2 * ndims * sizeof(float);
	h->body = p;
	h->end = (const uint8 *) geom + VARSIZE(geom);
	if (h->body + 4 > h->end)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("geometry value is truncated")));
}

uint32
GeoaccGeometryType(const struct varlena *geom)
{
	GeometryHeader h;
	uint32		type;

	ReadHeader(geom, &h);
	memcpy(&type, h.body, sizeof(type));
	return type;
}

int32
GeoaccGeometrySrid(const struct varlena *geom)
{
	GeometryHeader h;

	ReadHeader(geom, &h);
	return h.srid;
}

const char *
GeoaccGeometryTypeName(uint32 type)
{
	static const char *const names[] = {
		"Unknown", "Point", "LineString", "Polygon", "MultiPoint", "MultiLineString",
		"MultiPolygon", "GeometryCollection", "CircularString", "CompoundCurve",
		"CurvePolygon", "MultiCurve", "MultiSurface", "PolyhedralSurface", "Triangle", "Tin"
	};

	return type < lengthof(names) ? names[type] : "Unknown";
}

void
GeoaccLineFromGeometry(const struct varlena *geom, GeoaccLine *line, const char *what)
{
	GeometryHeader h;
	uint32		type;
	uint32		npoints;

	ReadHeader(geom, &h);
	memcpy(&type, h.body, sizeof(type));
	if (type != GEOACC_LINETYPE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is a %s, not a LineString", what, GeoaccGeometryTypeName(type)),
				 errhint("Trajectories are LINESTRING M or LINESTRING ZM geometries.")));
	memcpy(&npoints, h.body + 4, sizeof(npoints));
	line->srid = h.srid;
	line->has_z = h.has_z;
	line->has_m = h.has_m;
	line->ndims = 2 + h.has_z + h.has_m;
	line->npoints = npoints;
	line->coords = (const double *) (h.body + 8);
	if ((const uint8 *) (line->coords + (size_t) npoints * line->ndims) > h.end)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s: geometry value is truncated", what)));
}

void
GeoaccPartsBegin(GeoaccParts *parts, const struct varlena *geom, const char *what)
{
	GeometryHeader h;

	ReadHeader(geom, &h);
	memcpy(&parts->type, h.body, sizeof(uint32));
	parts->srid = h.srid;
	parts->has_z = h.has_z;
	parts->has_m = h.has_m;
	parts->ndims = 2 + h.has_z + h.has_m;
	parts->what = what;
	parts->next = 0;
	parts->end = h.end;
	switch (parts->type)
	{
		case GEOACC_POINTTYPE:
		case GEOACC_LINETYPE:
			parts->nparts = 1;
			parts->p = h.body;
			break;
		case GEOACC_MULTIPOINTTYPE:
		case GEOACC_MULTILINETYPE:
			if (h.body + 8 > h.end)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("%s: geometry value is truncated", what)));
			memcpy(&parts->nparts, h.body + 4, sizeof(uint32));
			parts->p = h.body + 8;
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s is a %s, not a point or a line", what, GeoaccGeometryTypeName(parts->type)),
					 errhint("Use POINT, MULTIPOINT, LINESTRING or MULTILINESTRING geometries.")));
	}
}

bool
GeoaccPartsNext(GeoaccParts *parts, GeoaccLine *line)
{
	uint32		type;
	uint32		npoints;
	bool		multi = parts->type == GEOACC_MULTIPOINTTYPE || parts->type == GEOACC_MULTILINETYPE;

	if (parts->next == parts->nparts)
		return false;
	if (parts->p + 8 > parts->end)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s: geometry value is truncated", parts->what)));
	memcpy(&type, parts->p, sizeof(type));
	memcpy(&npoints, parts->p + 4, sizeof(npoints));
	if (multi && type != (parts->type == GEOACC_MULTIPOINTTYPE ? GEOACC_POINTTYPE : GEOACC_LINETYPE))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s: a %s holds a %s", parts->what, GeoaccGeometryTypeName(parts->type),
						GeoaccGeometryTypeName(type))));
	line->srid = parts->srid;
	line->has_z = parts->has_z;
	line->has_m = parts->has_m;
	line->ndims = parts->ndims;
	line->npoints = npoints;
	line->coords = (const double *) (parts->p + 8);
	if ((size_t) (parts->end - (parts->p + 8)) / (sizeof(double) * parts->ndims) < npoints)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s: geometry value is truncated", parts->what)));
	parts->p += 8 + (size_t) npoints * parts->ndims * sizeof(double);
	parts->next++;
	return true;
}

void
GeoaccCheckTrajectory(const GeoaccLine *line, const char *what)
{
	int			nd = line->ndims;
	int			mi = nd - 1;

	if (!line->has_m)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s has no M values", what),
				 errhint("Trajectories are LINESTRING M or LINESTRING ZM geometries with time in M.")));
	for (uint32 i = 0; i < line->npoints; i++)
	{
		const double *p = line->coords + (size_t) i * nd;

		for (int d = 0; d < nd; d++)
			if (!isfinite(p[d]))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s has a non-finite coordinate", what),
						 errdetail("Vertex %u has %c = %g.", i + 1, "XYZM"[d == mi ? 3 : d], p[d])));
		if (i > 0 && !(p[mi] > p[mi - nd]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: trajectory M values must increase", what),
					 errdetail("Vertex %u has M = %.17g after M = %.17g.", i + 1, p[mi], p[mi - nd]),
					 errhint("Use ST_IsValidTrajectory() to find such rows.")));
	}
}

/* The float just below (or equal to) d, as PostGIS rounds bounding boxes. */
static float
FloatDown(double d)
{
	float		f;

	if (d > (double) FLT_MAX)
		return FLT_MAX;
	if (d <= (double) -FLT_MAX)
		return -FLT_MAX;
	f = (float) d;
	return (double) f <= d ? f : nextafterf(f, -FLT_MAX);
}

/* The float just above (or equal to) d. */
static float
FloatUp(double d)
{
	float		f;

	if (d >= (double) FLT_MAX)
		return FLT_MAX;
	if (d < (double) -FLT_MAX)
		return -FLT_MAX;
	f = (float) d;
	return (double) f >= d ? f : nextafterf(f, FLT_MAX);
}

/*
 * A LINESTRING written directly in PostGIS 3's serialized form (GSERIALIZED
 * version 2), byte for byte what PostGIS itself stores: the SRID in 21 bits,
 * the flags, a float bounding box over every dimension for lines of more
 * than two points (lwgeom_needs_bbox), rounded outwards, then the type,
 * the point count and the coordinates.
 */
Datum
GeoaccLineToGeometry(const double *coords, uint32 npoints, bool has_z, bool has_m, int32 srid)
{
	int			nd = 2 + has_z + has_m;
	bool		with_box = npoints > 2;
	size_t		box_bytes = with_box ? 2 * nd * sizeof(float) : 0;
	size_t		coord_bytes = (size_t) npoints * nd * sizeof(double);
	size_t		size = 8 + box_bytes + 8 + coord_bytes;
	uint8	   *g = palloc(size);
	uint8	   *p = g + 4;
	uint32		type = GEOACC_LINETYPE;

	SET_VARSIZE(g, size);
	p[0] = (uint8) ((srid & 0x001F0000) >> 16);
	p[1] = (uint8) ((srid & 0x0000FF00) >> 8);
	p[2] = (uint8) (srid & 0x000000FF);
	p[3] = GS2_FLAG_VERSION | (has_z ? GS_FLAG_Z : 0) | (has_m ? GS_FLAG_M : 0) | (with_box ? GS_FLAG_BBOX : 0);
	p += 4;
	if (with_box)
	{
		float	   *box = (float *) p;

		for (int d = 0; d < nd; d++)
		{
			double		lo = coords[d],
						hi = coords[d];

			for (uint32 i = 1; i < npoints; i++)
			{
				double		v = coords[(size_t) i * nd + d];

				/* PostGIS's FP_MIN / FP_MAX: a tie takes the later value (-0 vs 0) */
				lo = lo < v ? lo : v;
				hi = hi > v ? hi : v;
			}
			box[2 * d] = FloatDown(lo);
			box[2 * d + 1] = FloatUp(hi);
		}
		p += box_bytes;
	}
	memcpy(p, &type, 4);
	memcpy(p + 4, &npoints, 4);
	memcpy(p + 8, coords, coord_bytes);
	return PointerGetDatum(g);
}

/* ------------------------------------------------------------ meshes */

static uint32
ReadU32(const uint8 *p, const uint8 *end, const char *what)
{
	uint32		v;

	if (p + 4 > end)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s: geometry value is truncated", what)));
	memcpy(&v, p, 4);
	return v;
}

void
GeoaccTrianglesFromGeometry(const struct varlena *geom, GeoaccTriangles *out, const char *what)
{
	GeometryHeader h;
	uint32		type;
	uint32		npatches;
	const uint8 *p;

	ReadHeader(geom, &h);
	type = ReadU32(h.body, h.end, what);
	if (type != GEOACC_TINTYPE && type != GEOACC_POLYHEDRALSURFACETYPE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is a %s, not a TIN or a PolyhedralSurface", what, GeoaccGeometryTypeName(type)),
				 errhint("Meshes are TIN Z or POLYHEDRALSURFACE Z geometries of triangles.")));
	if (!h.has_z)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s has no Z coordinates", what),
				 errhint("Use ST_Force3DZ() to add them.")));
	if (h.has_m)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s has M values", what),
				 errhint("Use ST_Force3DZ() to drop them.")));
	npatches = ReadU32(h.body + 4, h.end, what);
	/* every patch takes at least 8 bytes: a count past the end is corruption, not a huge mesh */
	if ((uint64) npatches * 8 > (uint64) (h.end - h.body))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s: geometry value is truncated", what)));
	out->srid = h.srid;
	out->ntriangles = npatches;
	out->corners = palloc_extended((Size) npatches * 9 * sizeof(double) + 1, MCXT_ALLOC_HUGE);
	p = h.body + 8;
	for (uint32 i = 0; i < npatches; i++)
	{
		uint32		subtype = ReadU32(p, h.end, what);
		uint32		nrings = 1;
		uint32		npoints;
		const uint8 *coords;

		if (subtype == GEOACC_TRIANGLETYPE)
		{
			npoints = ReadU32(p + 4, h.end, what);
			coords = p + 8;
		}
		else if (subtype == GEOACC_POLYGONTYPE)
		{
			nrings = ReadU32(p + 4, h.end, what);
			npoints = nrings > 0 ? ReadU32(p + 8, h.end, what) : 0;
			/* ring sizes, padded to a multiple of 8 bytes */
			coords = p + 8 + 4 * (Size) nrings + (nrings % 2 ? 4 : 0);
			for (uint32 r = 1; r < nrings; r++)
				npoints += ReadU32(p + 8 + 4 * r, h.end, what);
		}
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("patch %u of %s is a %s", i + 1, what, GeoaccGeometryTypeName(subtype))));
		if (coords + (Size) npoints * 3 * sizeof(double) > h.end)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("%s: geometry value is truncated", what)));
		if (nrings != 1 || npoints != 4)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("patch %u of %s is not a triangle", i + 1, what),
					 nrings == 1 ? errdetail("Its ring has %u points; a triangle's has 4, the first repeated last.",
											 npoints)
					 : errdetail("It has %u rings.", nrings),
					 errhint("Triangulate the surface first, for example with ST_Tesselate().")));
		for (int k = 0; k < 4; k++)
			for (int d = 0; d < 3; d++)
			{
				double		v;

				memcpy(&v, coords + (k * 3 + d) * sizeof(double), sizeof(double));
				if (!isfinite(v))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("%s has a non-finite coordinate", what),
							 errdetail("Patch %u, point %d has %c = %g.", i + 1, k + 1, "XYZ"[d], v)));
			}
		if (memcmp(coords, coords + 9 * sizeof(double), 3 * sizeof(double)) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("patch %u of %s is not closed", i + 1, what),
					 errdetail("Its last point differs from its first.")));
		memcpy(out->corners + (Size) i * 9, coords, 9 * sizeof(double));
		p = coords + (Size) npoints * 3 * sizeof(double);
	}
}

/*
 * A TIN Z in PostGIS 3's serialized form: the header and float bounding
 * box as for lines (none when empty), then the TIN's type and patch count
 * and each patch as a TRIANGLE of four points, the first repeated last.
 */
Datum
GeoaccTinToGeometry(const double *positions, const uint32 *triangles, uint32 ntriangles, int32 srid)
{
	bool		with_box = ntriangles > 0;
	Size		box_bytes = with_box ? 6 * sizeof(float) : 0;
	Size		patch_bytes = 8 + 12 * sizeof(double);
	Size		size = 8 + box_bytes + 8 + (Size) ntriangles * patch_bytes;
	uint8	   *g;
	uint8	   *p;
	uint32		type = GEOACC_TINTYPE;
	uint32		subtype = GEOACC_TRIANGLETYPE;
	uint32		four = 4;

	if (size > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the clipped mesh of %u triangles is too large for a geometry value", ntriangles),
				 errhint("Clip by smaller boxes, or use the PLY form of gpu_mesh_clip().")));
	g = palloc(size);
	p = g + 4;
	SET_VARSIZE(g, size);
	p[0] = (uint8) ((srid & 0x001F0000) >> 16);
	p[1] = (uint8) ((srid & 0x0000FF00) >> 8);
	p[2] = (uint8) (srid & 0x000000FF);
	p[3] = GS2_FLAG_VERSION | GS_FLAG_Z | (with_box ? GS_FLAG_BBOX : 0);
	p += 4;
	if (with_box)
	{
		float	   *box = (float *) p;

		for (int d = 0; d < 3; d++)
		{
			double		lo = positions[(Size) triangles[0] * 3 + d],
						hi = lo;

			for (Size i = 1; i < (Size) ntriangles * 3; i++)
			{
				double		v = positions[(Size) triangles[i] * 3 + d];

				lo = lo < v ? lo : v;
				hi = hi > v ? hi : v;
			}
			box[2 * d] = FloatDown(lo);
			box[2 * d + 1] = FloatUp(hi);
		}
		p += box_bytes;
	}
	memcpy(p, &type, 4);
	memcpy(p + 4, &ntriangles, 4);
	p += 8;
	for (uint32 t = 0; t < ntriangles; t++)
	{
		memcpy(p, &subtype, 4);
		memcpy(p + 4, &four, 4);
		for (int k = 0; k < 4; k++)
			memcpy(p + 8 + k * 3 * sizeof(double), positions + (Size) triangles[(Size) t * 3 + k % 3] * 3,
				   3 * sizeof(double));
		p += patch_bytes;
	}
	return PointerGetDatum(g);
}
