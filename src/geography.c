/*
 * geography.c
 *
 * Metres for PostGIS geography trajectories (longitude, latitude in
 * degrees), by PostGIS's rule: geometry in the units of its SRID, geography
 * in metres.  The trajectories are transformed here, before the compute
 * core, into coordinates in metres in which the core's planar or 3D
 * arithmetic measures what the function needs; the core and its kernels
 * are the same as for geometry, so the GPU and the CPU still agree to the
 * bit, and results that are trajectories keep the original vertices.
 *
 * Two transforms, each chosen for what it measures (docs/internals.md and
 * the README state their errors against PostGIS's geodesic distances):
 *
 *   Simplification measures a vertex against the segment between two other
 *   vertices, and a segment must stay the shortest path between its ends.
 *   Each trajectory is put on its own gnomonic projection, centred on the
 *   mean of its vertices' directions: it maps great circles to straight
 *   lines, so a segment is PostGIS's geography edge (the great-circle arc
 *   through geodetic latitude and longitude on a sphere).  Its east and
 *   north axes are scaled by the WGS 84 ellipsoid's radii of curvature at
 *   the centre (the prime vertical N and the meridian M), so distances near
 *   the centre are the ellipsoid's; away from it the projection stretches
 *   them by at most 1 / cos^2 of the angle from the centre, which is why a
 *   trajectory must lie within GEOACC_GNOMONIC_MAX_DEGREES of its centre.
 *
 *   TWED and the segment join measure the distance between two points (two
 *   vertices, or two vessels at one instant).  Points go to Earth-centred
 *   Earth-fixed coordinates on the WGS 84 ellipsoid (height Z with use_z, 0
 *   otherwise), where that distance is the chord: shorter than the
 *   geodesic by a relative d^2 / (24 R^2), a millimetre at 10 km.  The
 *   segment join turns them into east-north-up axes at the centre of all
 *   its points, so that its spatial index works on a plane near the data
 *   anywhere on Earth.
 */
#include "geoacc.h"

#include <math.h>

/* WGS 84 */
#define WGS84_A 6378137.0
#define WGS84_F (1.0 / 298.257223563)
#define WGS84_E2 (WGS84_F * (2.0 - WGS84_F))

#define DEG_TO_RAD (M_PI / 180.0)

/* The unit vector of a longitude and latitude (degrees) on the sphere. */
static void
UnitVector(double lon, double lat, double u[3])
{
	double		lambda = lon * DEG_TO_RAD;
	double		phi = lat * DEG_TO_RAD;

	u[0] = cos(phi) * cos(lambda);
	u[1] = cos(phi) * sin(lambda);
	u[2] = sin(phi);
}

static double
Dot(const double a[3], const double b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* East and north unit vectors at the direction c (|c| = 1); any pair at a pole. */
static void
EastNorth(const double c[3], double east[3], double north[3])
{
	double		lambda = atan2(c[1], c[0]);
	double		phi = atan2(c[2], hypot(c[0], c[1]));

	east[0] = -sin(lambda);
	east[1] = cos(lambda);
	east[2] = 0;
	north[0] = -sin(phi) * cos(lambda);
	north[1] = -sin(phi) * sin(lambda);
	north[2] = cos(phi);
}

void
GeoaccDirectionAdd(GeoaccDirection *sum, double lon, double lat)
{
	double		u[3];

	UnitVector(lon, lat, u);
	for (int k = 0; k < 3; k++)
		sum->v[k] += u[k];
}

/* The mean direction, normalized; false when the directions cancel out. */
static bool
MeanDirection(const GeoaccDirection *sum, double c[3])
{
	double		norm = sqrt(Dot(sum->v, sum->v));

	if (!(norm > 0))
		return false;
	for (int k = 0; k < 3; k++)
		c[k] = sum->v[k] / norm;
	return true;
}

bool
GeoaccGnomonicInit(GeoaccGnomonic *g, const GeoaccDirection *sum)
{
	double		sin_phi,
				w;

	if (!MeanDirection(sum, g->centre))
		return false;
	EastNorth(g->centre, g->east, g->north);
	/* radii of curvature at the centre's latitude, taken as geodetic (as PostGIS's geography edges) */
	sin_phi = g->centre[2];
	w = 1.0 - WGS84_E2 * sin_phi * sin_phi;
	g->east_scale = WGS84_A / sqrt(w);
	g->north_scale = WGS84_A * (1.0 - WGS84_E2) / (w * sqrt(w));
	g->min_cos = cos(GEOACC_GNOMONIC_MAX_DEGREES * DEG_TO_RAD);
	return true;
}

bool
GeoaccGnomonicProject(const GeoaccGnomonic *g, double lon, double lat, double *x, double *y, double *degrees)
{
	double		u[3];
	double		cos_c;

	UnitVector(lon, lat, u);
	cos_c = Dot(u, g->centre);
	if (!(cos_c >= g->min_cos))
	{
		*degrees = acos(fmax(-1.0, fmin(1.0, cos_c))) / DEG_TO_RAD;
		return false;
	}
	*x = g->east_scale * (Dot(u, g->east) / cos_c);
	*y = g->north_scale * (Dot(u, g->north) / cos_c);
	return true;
}

void
GeoaccEcef(double lon, double lat, double height, double xyz[3])
{
	double		lambda = lon * DEG_TO_RAD;
	double		phi = lat * DEG_TO_RAD;
	double		sin_phi = sin(phi);
	double		n = WGS84_A / sqrt(1.0 - WGS84_E2 * sin_phi * sin_phi);

	xyz[0] = (n + height) * cos(phi) * cos(lambda);
	xyz[1] = (n + height) * cos(phi) * sin(lambda);
	xyz[2] = (n * (1.0 - WGS84_E2) + height) * sin_phi;
}

bool
GeoaccEnuInit(GeoaccEnu *f, const GeoaccDirection *sum)
{
	double		c[3];

	if (!MeanDirection(sum, c))
		return false;
	EastNorth(c, f->east, f->north);
	f->up[0] = c[0];
	f->up[1] = c[1];
	f->up[2] = c[2];
	GeoaccEcef(atan2(c[1], c[0]) / DEG_TO_RAD, atan2(c[2], hypot(c[0], c[1])) / DEG_TO_RAD, 0, f->origin);
	return true;
}

void
GeoaccEnuProject(const GeoaccEnu *f, double lon, double lat, double height, double enu[3])
{
	double		p[3];

	GeoaccEcef(lon, lat, height, p);
	for (int k = 0; k < 3; k++)
		p[k] -= f->origin[k];
	enu[0] = Dot(p, f->east);
	enu[1] = Dot(p, f->north);
	enu[2] = Dot(p, f->up);
}
