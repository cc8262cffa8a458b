/*
 * raster_wkb.c
 *
 * PostGIS rasters as bytes, in the two forms geoacc writes and reads:
 * raster WKB (PostGIS's raster/rt_core/rt_wkb.c: what gpu_density_raster
 * returns and ST_AsBinary(raster) makes) and the serialized raster, the
 * value of PostGIS's raster type (rt_serialize.c: what gpu_density_rast
 * returns).  Written: one band of 64-bit floats without a nodata value,
 * north-up, in host byte order.  Read, for geoacc_raster_png: the first
 * band, in place.  The formats' offsets and codes are defined here only.
 */
#include "geoacc.h"

/* PostGIS raster pixel types (raster/rt_core/librtcore.h) */
enum
{
	PT_1BB = 0, PT_2BUI, PT_4BUI, PT_8BSI, PT_8BUI, PT_16BSI, PT_16BUI, PT_32BSI, PT_32BUI,
	PT_32BF = 10, PT_64BF = 11
};

/*
 * Raster WKB: a byte-order flag, then the fields both forms share (version,
 * band count, georeference, SRID, width, height: RASTER_COMMON_HEADER
 * bytes); each band is its flags byte, its nodata value and its pixels.
 */
#define RASTER_COMMON_HEADER 60
#define RASTER_WKB_HEADER (1 + RASTER_COMMON_HEADER)

/*
 * The serialized raster: the varlena size, the shared fields, then each
 * band: its flags byte, padding to its pixel size, its nodata value, its
 * pixels; the whole a multiple of 8 bytes.
 */
#define RASTER_SERIALIZED_HEADER (4 + RASTER_COMMON_HEADER)

/* A band's flags byte */
#define BAND_OFFLINE 0x80
#define BAND_HAS_NODATA 0x40
#define BAND_PIXTYPE 0x0F

/* ------------------------------------------------------------ writing */

static uint8 *
PutBytes(uint8 *p, const void *value, size_t size)
{
	memcpy(p, value, size);
	return p + size;
}

/*
 * The fields both forms share: version 0, one band, the georeference
 * (scale x and y, negative: north-up; upper left x and y; skew x and y, as
 * PostGIS orders them), SRID, width, height.
 */
static uint8 *
PutCommonHeader(uint8 *p, const GeoaccDensityGrid *g, int32 srid)
{
	uint16		version = 0,
				nbands = 1,
				width = (uint16) g->width,
				height = (uint16) g->height;
	double		geo[6];

	geo[0] = (g->xmax - g->xmin) / g->width;
	geo[1] = -((g->ymax - g->ymin) / g->height);
	geo[2] = g->xmin;
	geo[3] = g->ymax;
	geo[4] = 0.0;
	geo[5] = 0.0;
	p = PutBytes(p, &version, 2);
	p = PutBytes(p, &nbands, 2);
	p = PutBytes(p, geo, sizeof(geo));
	p = PutBytes(p, &srid, 4);
	p = PutBytes(p, &width, 2);
	return PutBytes(p, &height, 2);
}

bytea *
GeoaccRasterWkb(const GeoaccDensityGrid *grid, int32 srid, const double *pixels)
{
	size_t		pixel_bytes = sizeof(double) * grid->width * grid->height;
	size_t		size = VARHDRSZ + RASTER_WKB_HEADER + 1 + sizeof(double) + pixel_bytes;
	bytea	   *wkb = palloc(size);
	uint8	   *p = (uint8 *) VARDATA(wkb);
	uint8		band = PT_64BF;
	double		nodata = 0.0;

	SET_VARSIZE(wkb, size);
#ifdef WORDS_BIGENDIAN
	*p++ = 0;
#else
	*p++ = 1;
#endif
	p = PutCommonHeader(p, grid, srid);
	p = PutBytes(p, &band, 1);
	p = PutBytes(p, &nodata, sizeof(nodata));
	memcpy(p, pixels, pixel_bytes);
	return wkb;
}

struct varlena *
GeoaccRasterSerialized(const GeoaccDensityGrid *grid, int32 srid, const double *pixels)
{
	size_t		pixel_bytes = sizeof(double) * grid->width * grid->height;
	size_t		size = RASTER_SERIALIZED_HEADER + 8 + sizeof(double) + pixel_bytes;
	struct varlena *raster = palloc0(size);
	uint8	   *p = (uint8 *) raster + 4;

	SET_VARSIZE(raster, size);
	p = PutCommonHeader(p, grid, srid);
	*p = PT_64BF;
	p += 8 + sizeof(double);	/* type, padding, nodata 0 */
	memcpy(p, pixels, pixel_bytes);
	return raster;
}

/* ------------------------------------------------------------ reading */

void
GeoaccRasterBandOfPixels(const GeoaccDensityGrid *grid, const double *pixels, GeoaccRasterBand *band)
{
	memset(band, 0, sizeof(*band));
	band->width = grid->width;
	band->height = grid->height;
	band->pixtype = PT_64BF;
	band->pixel_bytes = sizeof(double);
	band->pixels = (const uint8 *) pixels;
}

static void
BadRaster(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("invalid raster WKB"),
			 errdetail("%s", detail),
			 errhint("Pass the result of gpu_density_raster() or ST_AsBinary(raster).")));
}

/* Copy `size` bytes, reversed when the WKB's byte order is not the host's. */
static void
ReadValue(const uint8 *p, int size, bool swap, void *out)
{
	uint8	   *o = out;

	for (int i = 0; i < size; i++)
		o[i] = swap ? p[size - 1 - i] : p[i];
}

static double
ReadPixel(const GeoaccRasterBand *band, const uint8 *p)
{
	union
	{
		int8		i8;
		uint8		u8;
		int16		i16;
		uint16		u16;
		int32		i32;
		uint32		u32;
		float		f32;
		double		f64;
	}			v;

	ReadValue(p, band->pixel_bytes, band->swap, &v);
	switch (band->pixtype)
	{
		case PT_8BSI:
			return v.i8;
		case PT_16BSI:
			return v.i16;
		case PT_16BUI:
			return v.u16;
		case PT_32BSI:
			return v.i32;
		case PT_32BUI:
			return v.u32;
		case PT_32BF:
			return v.f32;
		case PT_64BF:
			return v.f64;
		default:				/* 1BB, 2BUI, 4BUI, 8BUI: one byte */
			return v.u8;
	}
}

double
GeoaccRasterPixel(const GeoaccRasterBand *band, size_t i)
{
	return ReadPixel(band, band->pixels + i * band->pixel_bytes);
}

void
GeoaccRasterPixels(const GeoaccRasterBand *band, size_t first, size_t n, double *out)
{
	/* the rasters geoacc writes: doubles in the host's order, copied as they are */
	if (band->pixtype == PT_64BF && !band->swap)
	{
		memcpy(out, band->pixels + first * sizeof(double), n * sizeof(double));
		return;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = ReadPixel(band, band->pixels + (first + i) * band->pixel_bytes);
}

static int
PixelBytes(int pixtype)
{
	switch (pixtype)
	{
		case PT_1BB:
		case PT_2BUI:
		case PT_4BUI:
		case PT_8BSI:
		case PT_8BUI:
			return 1;
		case PT_16BSI:
		case PT_16BUI:
			return 2;
		case PT_32BSI:
		case PT_32BUI:
		case PT_32BF:
			return 4;
		case PT_64BF:
			return 8;
		default:
			return 0;
	}
}

static void
CheckSize(uint16 nbands, uint16 width, uint16 height)
{
	if (nbands == 0)
		BadRaster("The raster has no bands.");
	if (width == 0 || height == 0)
		BadRaster("The raster has no pixels.");
}

/*
 * The first band of a raster of `size` bytes at p, its flags byte at `at`:
 * its nodata value follows that byte (raster WKB) or, `padded`, the padding
 * to its pixel size (the serialized form); its pixels follow that value.
 * band->swap is set.
 */
static void
ReadBand(const uint8 *p, size_t size, size_t at, bool padded, uint16 width, uint16 height,
		 GeoaccRasterBand *band)
{
	uint8		flags = p[at];
	size_t		nodata_at;

	if (flags & BAND_OFFLINE)
		BadRaster("The first band is an out-db band.");
	band->width = width;
	band->height = height;
	band->pixtype = flags & BAND_PIXTYPE;
	band->pixel_bytes = PixelBytes(band->pixtype);
	if (band->pixel_bytes == 0)
		BadRaster(psprintf("Pixel type %d is not supported.", band->pixtype));
	nodata_at = at + (padded ? band->pixel_bytes : 1);
	if (size < nodata_at + band->pixel_bytes + (size_t) width * height * band->pixel_bytes)
		BadRaster("The first band's pixels are truncated.");
	band->has_nodata = (flags & BAND_HAS_NODATA) != 0;
	band->nodata = ReadPixel(band, p + nodata_at);
	band->pixels = p + nodata_at + band->pixel_bytes;
}

void
GeoaccRasterBandFromWkb(const bytea *wkb, GeoaccRasterBand *band)
{
	const uint8 *p = (const uint8 *) VARDATA_ANY(wkb);
	size_t		size = VARSIZE_ANY_EXHDR(wkb);
	uint16		version,
				nbands,
				width,
				height;

	if (size < RASTER_WKB_HEADER)
		BadRaster("The value is shorter than a raster header.");
	if (p[0] > 1)
		BadRaster("The first byte is not a byte-order flag.");
#ifdef WORDS_BIGENDIAN
	band->swap = p[0] == 1;
#else
	band->swap = p[0] == 0;
#endif
	ReadValue(p + 1, 2, band->swap, &version);
	ReadValue(p + 3, 2, band->swap, &nbands);
	ReadValue(p + 57, 2, band->swap, &width);
	ReadValue(p + 59, 2, band->swap, &height);
	if (version != 0)
		BadRaster(psprintf("Raster WKB version %u is not supported.", version));
	CheckSize(nbands, width, height);
	if (size < RASTER_WKB_HEADER + 1)
		BadRaster("The first band is missing.");
	ReadBand(p, size, RASTER_WKB_HEADER, false, width, height, band);
}

void
GeoaccRasterBandFromSerialized(const struct varlena *raster, GeoaccRasterBand *band)
{
	const uint8 *p = (const uint8 *) raster;
	size_t		size = VARSIZE(raster);
	uint16		version,
				nbands,
				width,
				height;

	if (size < RASTER_SERIALIZED_HEADER + 1)
		BadRaster("The raster has no bands.");
	memcpy(&version, p + 4, 2);
	memcpy(&nbands, p + 6, 2);
	memcpy(&width, p + 60, 2);
	memcpy(&height, p + 62, 2);
	if (version != 0)
		BadRaster(psprintf("Raster version %u is not supported.", version));
	CheckSize(nbands, width, height);
	band->swap = false;
	ReadBand(p, size, RASTER_SERIALIZED_HEADER, true, width, height, band);
}
