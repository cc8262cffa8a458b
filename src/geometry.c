/*
 * geometry.c
 *
 * Reading PostGIS geometries and geographies in place (the serialized
 * GSERIALIZED form, versions 1 and 2, without liblwgeom) and writing lines
 * in PostGIS 3's serialized form byte for byte.  Also the trajectory rule
 * every trajectory function applies, how messages name a trajectory (its
 * row, its first vertex's time), and huge pages for large coordinate arrays.
 */
#include "geoacc.h"

#include <sys/mman.h>

#include <float.h>
#include <math.h>

#include "datatype/timestamp.h"
#include "miscadmin.h"
#include "utils/datetime.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

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
	bool		geodetic;		/* a geography */
	const uint8 *body;			/* at the geometry type word */
	const uint8 *end;
} GeometryHeader;

static void
ReadHeader(const struct varlena *geom, GeometryHeader *h)
{
	const uint8 *p = (const uint8 *) VARDATA_ANY(geom);	/* a short header too: table values */
	uint8		flags = p[3];
	int32		srid = (int32) ((uint32) p[0] << 16 | (uint32) p[1] << 8 | (uint32) p[2]);
	int			ndims;

	/* 21-bit signed SRID */
	h->srid = (srid << 11) >> 11;
	h->has_z = (flags & GS_FLAG_Z) != 0;
	h->has_m = (flags & GS_FLAG_M) != 0;
	h->geodetic = (flags & GS_FLAG_GEODETIC) != 0;
	ndims = 2 + h->has_z + h->has_m;
	p += 4;
	if ((flags & GS2_FLAG_VERSION) && (flags & GS2_FLAG_EXTENDED))
		p += 8;
	if (flags & GS_FLAG_BBOX)
		p += (flags & GS_FLAG_GEODETIC) ? 6 * sizeof(float) : 2 * ndims * sizeof(float);
	h->body = p;
	h->end = (const uint8 *) VARDATA_ANY(geom) + VARSIZE_ANY_EXHDR(geom);
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

bool
GeoaccGeometryIsGeodetic(const struct varlena *geom)
{
	GeometryHeader h;

	ReadHeader(geom, &h);
	return h.geodetic;
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

/* The line whose type word is at p (its vertices follow its count), checked to lie within the value. */
static const uint8 *
ReadLineBody(const GeometryHeader *h, const uint8 *p, GeoaccLine *line, const char *what)
{
	uint32		npoints;

	if (p + 8 > h->end)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s: geometry value is truncated", what)));
	memcpy(&npoints, p + 4, sizeof(npoints));
	line->srid = h->srid;
	line->has_z = h->has_z;
	line->has_m = h->has_m;
	line->geodetic = h->geodetic;
	line->ndims = 2 + h->has_z + h->has_m;
	line->npoints = npoints;
	line->coords = (const double *) (p + 8);
	/* in 64 bits: a corrupt count must not wrap around */
	if ((uint64) npoints * line->ndims * sizeof(double) > (uint64) (h->end - (p + 8)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s: geometry value is truncated", what)));
	return p + 8 + (Size) npoints * line->ndims * sizeof(double);
}

void
GeoaccLineFromGeometry(const struct varlena *geom, GeoaccLine *line, const char *what)
{
	GeometryHeader h;
	uint32		type;

	ReadHeader(geom, &h);
	memcpy(&type, h.body, sizeof(type));
	if (type != GEOACC_LINETYPE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is a %s, not a LineString", what, GeoaccGeometryTypeName(type)),
				 errhint("Trajectories are LINESTRING M or LINESTRING ZM geometries.")));
	ReadLineBody(&h, h.body, line, what);
}

void
GeoaccLinesFromGeometry(const struct varlena *geom, GeoaccLines *lines, const char *what)
{
	GeometryHeader h;
	uint32		type;
	const uint8 *p;

	ReadHeader(geom, &h);
	memcpy(&type, h.body, sizeof(type));
	lines->type = type;
	lines->srid = h.srid;
	lines->has_z = h.has_z;
	lines->has_m = h.has_m;
	lines->geodetic = h.geodetic;
	if (type == GEOACC_LINETYPE)
	{
		lines->nlines = 1;
		lines->lines = palloc(sizeof(GeoaccLine));
		ReadLineBody(&h, h.body, &lines->lines[0], what);
		return;
	}
	if (type != GEOACC_MULTILINETYPE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is a %s, not a LineString or a MultiLineString", what, GeoaccGeometryTypeName(type)),
				 errhint("Trajectories are LINESTRING M or LINESTRING ZM geometries, or MULTILINESTRING M or ZM "
						 "ones of several pieces.")));
	if (h.body + 8 > h.end)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s: geometry value is truncated", what)));
	memcpy(&lines->nlines, h.body + 4, sizeof(uint32));
	/* every part takes at least 8 bytes: a count past the end is corruption */
	if ((uint64) lines->nlines * 8 > (uint64) (h.end - h.body))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s: geometry value is truncated", what)));
	lines->lines = palloc(Max(lines->nlines, 1) * sizeof(GeoaccLine));
	p = h.body + 8;
	for (uint32 i = 0; i < lines->nlines; i++)
	{
		uint32		subtype;

		memcpy(&subtype, p, sizeof(subtype));
		if (subtype != GEOACC_LINETYPE)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("%s: part %u of a MultiLineString is a %s", what, i + 1,
							GeoaccGeometryTypeName(subtype))));
		p = ReadLineBody(&h, p, &lines->lines[i], what);
	}
}

char *
GeoaccTimeText(double seconds)
{
	/* as to_timestamp(float8): microseconds since 2000-01-01, rounded */
	double		usecs = rint((seconds - (double) ((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY))
							 * USECS_PER_SEC);
	struct pg_tm tm;
	fsec_t		fsec;
	char		buf[MAXDATELEN + 1];

	if (!isfinite(usecs) || usecs < (double) MIN_TIMESTAMP || usecs >= (double) END_TIMESTAMP ||
		timestamp2tm((Timestamp) usecs, NULL, &tm, &fsec, NULL, NULL) != 0)
		return NULL;
	tm.tm_isdst = 0;			/* UTC: print the +00 offset */
	EncodeDateTime(&tm, fsec, true, 0, NULL, USE_ISO_DATES, buf);
	return pstrdup(buf);
}

/* "M = 1591272000 (2020-06-04 12:00:00+00)", or without the time when M is beyond the timestamp range. */
static char *
MText(double m)
{
	char	   *time = GeoaccTimeText(m);

	return time ? psprintf("M = %.17g (%s)", m, time) : psprintf("M = %.17g", m);
}

char *
GeoaccRowLabel(int64 row, const struct varlena *geom)
{
	GeometryHeader h;
	uint32		type;
	const uint8 *p;
	uint32		nlines = 1;

	ReadHeader(geom, &h);
	memcpy(&type, h.body, sizeof(type));
	if (!h.has_m || (type != GEOACC_LINETYPE && type != GEOACC_MULTILINETYPE))
		return psprintf("row " INT64_FORMAT, row);
	p = h.body;
	if (type == GEOACC_MULTILINETYPE)
	{
		if (p + 8 > h.end)
			return psprintf("row " INT64_FORMAT, row);
		memcpy(&nlines, p + 4, sizeof(nlines));
		p += 8;
	}
	/* the first vertex of the first line that has one */
	for (uint32 i = 0; i < nlines && p + 8 <= h.end; i++)
	{
		GeoaccLine	line;

		memcpy(&type, p, sizeof(type));
		if (type != GEOACC_LINETYPE)
			break;
		p = ReadLineBody(&h, p, &line, psprintf("row " INT64_FORMAT, row));
		if (line.npoints > 0)
		{
			char	   *time = GeoaccTimeText(line.coords[line.ndims - 1]);

			if (time == NULL)
				break;
			return psprintf("row " INT64_FORMAT " (starting %s)", row, time);
		}
	}
	return psprintf("row " INT64_FORMAT, row);
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
	parts->geodetic = h.geodetic;
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
	line->geodetic = parts->geodetic;
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

bool
GeoaccCheckTrajectory(const GeoaccLine *line, const char *what)
{
	int			nd = line->ndims;
	int			mi = nd - 1;

	if (!line->has_m)
	{
		if (what == NULL)
			return false;
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s has no M values", what),
				 errhint("Trajectories are LINESTRING M or LINESTRING ZM geometries with time in M.")));
	}
	/*
	 * Every batch of a function starts here: one pass without a branch a
	 * point.  A failure is found again below, where the message is made.
	 */
	{
		const bool	geodetic = line->geodetic;
		bool		ok = true;
		double		before = -INFINITY;

		for (uint32 i = 0; i < line->npoints; i++)
		{
			const double *p = line->coords + (size_t) i * nd;

			for (int d = 0; d < nd; d++)
				ok &= fabs(p[d]) <= DBL_MAX;
			ok &= (p[mi] > before) & ((!geodetic) | ((fabs(p[0]) <= 180) & (fabs(p[1]) <= 90)));
			before = p[mi];
		}
		if (ok)
			return true;
	}
	for (uint32 i = 0; i < line->npoints; i++)
	{
		const double *p = line->coords + (size_t) i * nd;

		for (int d = 0; d < nd; d++)
			if (!isfinite(p[d]))
			{
				if (what == NULL)
					return false;
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s has a non-finite coordinate", what),
						 errdetail("Vertex %u has %c = %g.", i + 1, "XYZM"[d == mi ? 3 : d], p[d])));
			}
		if (i > 0 && !(p[mi] > p[mi - nd]))
		{
			if (what == NULL)
				return false;
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: trajectory M values must increase", what),
					 errdetail("Vertex %u has %s after %s.", i + 1, MText(p[mi]), MText(p[mi - nd])),
					 errhint("Use ST_IsValidTrajectory() to find such rows.")));
		}
		if (line->geodetic && (fabs(p[0]) > 180 || fabs(p[1]) > 90))
		{
			if (what == NULL)
				return false;
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s has a coordinate out of the longitude and latitude range", what),
					 errdetail("Vertex %u is at longitude %g, latitude %g.", i + 1, p[0], p[1])));
		}
	}
	return true;
}

bool
GeoaccCheckUseZ(const GeoaccLine *line, bool use_z, const char *what)
{
	if (!use_z || line->npoints == 0 || line->has_z)
		return true;
	if (what == NULL)
		return false;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s has no Z values", what),
			 errhint("use_z => true measures Z and needs LINESTRING ZM trajectories; leave it false to measure "
					 "without Z, as if ST_Force3DM() had dropped it.")));
	pg_unreachable();
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
 * A LINESTRING (type GEOACC_LINETYPE, one line) or MULTILINESTRING written
 * directly in PostGIS 3's serialized form (GSERIALIZED version 2), byte for
 * byte what PostGIS itself stores: the SRID in 21 bits, the flags, a float
 * bounding box over every dimension where lwgeom_needs_bbox wants one (a
 * line of more than two points, a multiline unless it is one line of at most
 * two), rounded outwards, then the type, the counts and the coordinates.
 */
Datum
GeoaccLinesToGeometry(uint32 type, const double *const *coords, const uint32 *npoints, uint32 nlines, bool has_z,
					  bool has_m, int32 srid)
{
	int			nd = 2 + has_z + has_m;
	uint64		total = 0;
	bool		with_box;
	Size		box_bytes;
	Size		size;
	uint8	   *g;
	uint8	   *p;

	Assert(type == GEOACC_MULTILINETYPE || nlines == 1);
	for (uint32 i = 0; i < nlines; i++)
		total += npoints[i];
	with_box = type == GEOACC_LINETYPE ? total > 2 : !(nlines == 1 && total <= 2);
	box_bytes = with_box ? 2 * nd * sizeof(float) : 0;
	size = 8 + box_bytes + (type == GEOACC_MULTILINETYPE ? 8 : 0) + (Size) nlines * 8
		+ (Size) total * nd * sizeof(double);
	if (size > MaxAllocHugeSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("geometry of " UINT64_FORMAT " points is too large", total)));
	g = palloc_extended(size, MCXT_ALLOC_HUGE);
	p = g + 4;
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
			bool		first = true;
			double		lo = 0,
						hi = 0;

			for (uint32 l = 0; l < nlines; l++)
			{
				double		line_lo,
							line_hi;

				if (npoints[l] == 0)
					continue;
				line_lo = line_hi = coords[l][d];
				for (uint32 i = 1; i < npoints[l]; i++)
				{
					double		v = coords[l][(size_t) i * nd + d];

					/* ptarray_calculate_gbox_cartesian's FP_MIN / FP_MAX: a tie takes the later value (-0 vs 0) */
					line_lo = line_lo < v ? line_lo : v;
					line_hi = line_hi > v ? line_hi : v;
				}
				/* gbox_merge across lines: a tie keeps the earlier line's value */
				lo = first || line_lo < lo ? line_lo : lo;
				hi = first || line_hi > hi ? line_hi : hi;
				first = false;
			}
			box[2 * d] = FloatDown(lo);
			box[2 * d + 1] = FloatUp(hi);
		}
		p += box_bytes;
	}
	if (type == GEOACC_MULTILINETYPE)
	{
		memcpy(p, &type, 4);
		memcpy(p + 4, &nlines, 4);
		p += 8;
	}
	for (uint32 l = 0; l < nlines; l++)
	{
		uint32		line_type = GEOACC_LINETYPE;

		memcpy(p, &line_type, 4);
		memcpy(p + 4, &npoints[l], 4);
		memcpy(p + 8, coords[l], (Size) npoints[l] * nd * sizeof(double));
		p += 8 + (Size) npoints[l] * nd * sizeof(double);
	}
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

/*
 * Check patch i of a mesh at *p (a TRIANGLE, or a POLYGON of one ring of
 * four points, closed and finite) and return its coordinates; *p moves to
 * the next patch.  box_shaped: the mesh has the six patches of a box3d
 * cast to geometry, which is what a box given where the mesh goes becomes.
 */
static const uint8 *
ReadTrianglePatch(const uint8 **p, const uint8 *end, uint32 i, const char *what, bool box_shaped)
{
	uint32		subtype = ReadU32(*p, end, what);
	uint32		nrings = 1;
	uint32		npoints;
	const uint8 *coords;

	if (subtype == GEOACC_TRIANGLETYPE)
	{
		npoints = ReadU32(*p + 4, end, what);
		coords = *p + 8;
	}
	else if (subtype == GEOACC_POLYGONTYPE)
	{
		nrings = ReadU32(*p + 4, end, what);
		npoints = nrings > 0 ? ReadU32(*p + 8, end, what) : 0;
		/* ring sizes, padded to a multiple of 8 bytes */
		coords = *p + 8 + 4 * (Size) nrings + (nrings % 2 ? 4 : 0);
		for (uint32 r = 1; r < nrings; r++)
			npoints += ReadU32(*p + 8 + 4 * r, end, what);
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("patch %u of %s is a %s", i + 1, what, GeoaccGeometryTypeName(subtype))));
	if (coords + (Size) npoints * 3 * sizeof(double) > end)
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
				 box_shaped && npoints == 5 ?
				 errhint("A box3d given as the mesh becomes the six faces of the box: the mesh comes first, "
						 "then the box.") :
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
	*p = coords + (Size) npoints * 3 * sizeof(double);
	return coords;
}

void
GeoaccTrianglesFromGeometry(const struct varlena *geom, GeoaccTriangles *out, const char *what)
{
	GeometryHeader h;
	uint32		type;
	uint32		npatches;
	const uint8 *p;
	const uint8 *first = NULL;
	Size		step = 0;
	bool		in_place = true;
	bool		box_shaped;

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
	box_shaped = type == GEOACC_POLYHEDRALSURFACETYPE && npatches == 6;
	out->srid = h.srid;
	out->ntriangles = npatches;
	out->corners = NULL;
	out->stride = 9;
	out->copy = NULL;

	/*
	 * Check every patch.  Patches of one kind lie at equal steps, so the
	 * corners are read in place where the coordinates are aligned (a value
	 * detoasted or in a table is); otherwise they are copied.
	 */
	p = h.body + 8;
	for (uint32 i = 0; i < npatches; i++)
	{
		const uint8 *coords = ReadTrianglePatch(&p, h.end, i, what, box_shaped);

		if (i == 0)
			first = coords;
		else if (i == 1)
			step = coords - first;
		else if ((Size) (coords - first) != (Size) i * step)
			in_place = false;
	}
	if (npatches == 0)
		return;
	if (in_place && (uintptr_t) first % sizeof(double) == 0 && step % sizeof(double) == 0)
	{
		out->corners = (const double *) first;
		out->stride = npatches > 1 ? step / sizeof(double) : 9;
		return;
	}
	out->copy = palloc_extended((Size) npatches * 9 * sizeof(double), MCXT_ALLOC_HUGE);
	p = h.body + 8;
	for (uint32 i = 0; i < npatches; i++)
		memcpy(out->copy + (Size) i * 9, ReadTrianglePatch(&p, h.end, i, what, box_shaped), 9 * sizeof(double));
	out->corners = out->copy;
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
		double		lo[3],
					hi[3];

		/* over the corners, not the positions: a PLY file may hold vertices no face uses */
		for (int d = 0; d < 3; d++)
			lo[d] = hi[d] = positions[(Size) triangles[0] * 3 + d];
		for (Size i = 1; i < (Size) ntriangles * 3; i++)
		{
			const double *v = positions + (Size) triangles[i] * 3;

			for (int d = 0; d < 3; d++)
			{
				lo[d] = lo[d] < v[d] ? lo[d] : v[d];
				hi[d] = hi[d] > v[d] ? hi[d] : v[d];
			}
		}
		for (int d = 0; d < 3; d++)
		{
			box[2 * d] = FloatDown(lo[d]);
			box[2 * d + 1] = FloatUp(hi[d]);
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

/*
 * A POINT (X Y, or X Y Z with has_z) in PostGIS 3's serialized form: no
 * bounding box (PostGIS stores none for a point).
 */
Datum
GeoaccPointToGeometry(const double *coords, bool has_z, int32 srid)
{
	const int	nd = has_z ? 3 : 2;
	const Size	size = 8 + 8 + nd * sizeof(double);
	uint8	   *g = palloc0(size);
	uint8	   *p = g + 4;
	uint32		type = GEOACC_POINTTYPE;
	uint32		one = 1;

	SET_VARSIZE(g, size);
	p[0] = (uint8) ((srid & 0x001F0000) >> 16);
	p[1] = (uint8) ((srid & 0x0000FF00) >> 8);
	p[2] = (uint8) (srid & 0x000000FF);
	p[3] = GS2_FLAG_VERSION | (has_z ? GS_FLAG_Z : 0);
	p += 4;
	memcpy(p, &type, 4);
	memcpy(p + 4, &one, 4);
	memcpy(p + 8, coords, nd * sizeof(double));
	return PointerGetDatum(g);
}

/* The rings of the POLYGON whose type word is at p, appended to *rings; returns the end of the polygon. */
static const uint8 *
ReadPolygonBody(const GeometryHeader *h, const uint8 *p, GeoaccRings *rings, const char *what)
{
	const int	nd = 2 + h->has_z + h->has_m;
	const uint32 nrings = ReadU32(p + 4, h->end, what);
	const uint8 *counts = p + 8;
	const uint8 *coords = counts + (Size) nrings * 4 + ((nrings % 2) ? 4 : 0);

	/* every ring takes at least its count: a count past the end is corruption */
	if ((uint64) nrings * 4 > (uint64) (h->end - counts))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s: geometry value is truncated", what)));
	for (uint32 r = 0; r < nrings; r++)
	{
		const uint32 npoints = ReadU32(counts + (Size) r * 4, h->end, what);

		if ((uint64) npoints * nd * sizeof(double) > (uint64) (h->end - coords))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("%s: geometry value is truncated", what)));
		if (rings->count == rings->max_count)
		{
			rings->max_count = Max(16, rings->max_count * 2);
			rings->rings = rings->rings ? repalloc_huge(rings->rings, (Size) rings->max_count * sizeof(GeoaccRing))
				: palloc_extended((Size) rings->max_count * sizeof(GeoaccRing), MCXT_ALLOC_HUGE);
		}
		rings->rings[rings->count].npoints = npoints;
		rings->rings[rings->count].ndims = nd;
		rings->rings[rings->count].coords = coords;
		rings->count++;
		coords += (Size) npoints * nd * sizeof(double);
	}
	return coords;
}

void
GeoaccRingsFromGeometry(const struct varlena *geom, GeoaccRings *rings, const char *what)
{
	GeometryHeader h;
	uint32		type;

	ReadHeader(geom, &h);
	memcpy(&type, h.body, sizeof(type));
	rings->srid = h.srid;
	rings->geodetic = h.geodetic;
	if (type == GEOACC_POLYGONTYPE)
		ReadPolygonBody(&h, h.body, rings, what);
	else if (type == GEOACC_MULTIPOLYGONTYPE)
	{
		const uint32 n = ReadU32(h.body + 4, h.end, what);
		const uint8 *p = h.body + 8;

		for (uint32 i = 0; i < n; i++)
		{
			if (ReadU32(p, h.end, what) != GEOACC_POLYGONTYPE)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("%s: part %u of a MultiPolygon is not a Polygon", what, i + 1)));
			p = ReadPolygonBody(&h, p, rings, what);
		}
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is a %s, not a Polygon or a MultiPolygon", what, GeoaccGeometryTypeName(type)),
				 errhint("Zones are POLYGON or MULTIPOLYGON geometries in the trajectories' SRID.")));
}

void
GeoaccPointFromGeometry(const struct varlena *geom, GeoaccPoint *point)
{
	GeometryHeader h;
	uint32		npoints;
	int			ndims;

	ReadHeader(geom, &h);
	memcpy(&point->type, h.body, sizeof(point->type));
	point->srid = h.srid;
	point->has_z = h.has_z;
	point->has_m = h.has_m;
	point->empty = true;
	if (point->type != GEOACC_POINTTYPE)
		return;
	ndims = 2 + h.has_z + h.has_m;
	if (h.body + 8 > h.end)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("geometry value is truncated")));
	memcpy(&npoints, h.body + 4, sizeof(npoints));
	point->empty = npoints == 0;
	if (point->empty)
		return;
	if (h.body + 8 + ndims * sizeof(double) > h.end)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("geometry value is truncated")));
	/* copied: a value with a short header is not aligned */
	memcpy(point->coords, h.body + 8, ndims * sizeof(double));
}

/*
 * ST_Simplify's rule for lines (liblwgeom's lwgeom_simplify_in_place): a
 * line of more than two vertices that keeps only its ends, and those ends
 * the same XY within FP_TOLERANCE (1e-12, absolute, as its p2d_same), has
 * collapsed.
 */
bool
GeoaccLineCollapsed(uint32 npoints, uint32 kept, double x0, double y0, double x1, double y1)
{
	return npoints > 2 && kept == 2 && fabs(x0 - x1) <= 1e-12 && fabs(y0 - y1) <= 1e-12;
}

void
GeoaccAdviseHugePages(void *p, Size bytes)
{
	uintptr_t	start = TYPEALIGN(4096, (uintptr_t) p);
	uintptr_t	end = TYPEALIGN_DOWN(4096, (uintptr_t) p + bytes);

	if (end > start)
		(void) madvise((void *) start, end - start, MADV_HUGEPAGE);	/* only a hint */
}

void
GeoaccCheckLaidOutTracks(bool set, bool geodetic, int32 srid, const char *first, bool use_z, const char *label,
						 int32 tracks_srid, bool has_z)
{
	if (set && geodetic)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("trajectories must all be geometries or all geographies"),
				 errdetail("%s is a geography, %s holds geometries.", first, label),
				 errhint("Cast a_sql's trajectories to a geometry in SRID %d.", tracks_srid)));
	if (set && srid != tracks_srid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("trajectories must all have the same SRID"),
				 errdetail("%s has SRID %d, %s has SRID %d.", first, srid, label, tracks_srid),
				 errhint("Use ST_Transform() to bring them to one projected SRID.")));
	if (use_z && !has_z)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s has trajectories without Z values", label),
				 errhint("use_z => true measures Z and needs LINESTRING ZM trajectories; leave it false to measure "
						 "without Z, as if ST_Force3DM() had dropped it.")));
}
