/*
 * density_raster_png.c
 *
 * geoacc_raster_png(raster, colormap, scale): a heatmap PNG of the first
 * band of a PostGIS raster in WKB form (what gpu_density_raster returns, or
 * ST_AsBinary of any raster).  Pixel values are scaled
 * from the band's minimum to its maximum and coloured with a perceptual
 * colormap; nodata and non-finite pixels are transparent.  The PNG is
 * written here, row by row, through zlib (which PostgreSQL links already):
 * no whole image in memory, and cancellable between rows.
 */
#include "geoacc.h"

#include <math.h>

#include <zlib.h>

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

/* PostGIS raster pixel types (raster/rt_core/librtcore.h) */
enum
{
	PT_1BB = 0, PT_2BUI, PT_4BUI, PT_8BSI, PT_8BUI, PT_16BSI, PT_16BUI, PT_32BSI, PT_32BUI,
	PT_32BF = 10, PT_64BF = 11
};

#define RASTER_WKB_HEADER 61
#define BAND_OFFLINE 0x80
#define BAND_HAS_NODATA 0x40
#define BAND_PIXTYPE 0x0F

/*
 * Colormaps: 17 evenly spaced colours of matplotlib's maps (CC0), joined
 * linearly.
 */
#define COLORMAP_STOPS 17

typedef struct Colormap
{
	const char *name;
	uint8		rgb[COLORMAP_STOPS][3];
} Colormap;

static const Colormap colormaps[] = {
	{"viridis", {{68, 1, 84}, {72, 24, 106}, {71, 45, 123}, {66, 64, 134}, {59, 82, 139}, {51, 99, 141},
				 {44, 114, 142}, {38, 130, 142}, {33, 145, 140}, {31, 160, 136}, {40, 174, 128},
				 {63, 188, 115}, {94, 201, 98}, {132, 212, 75}, {173, 220, 48}, {216, 226, 25},
				 {253, 231, 37}}},
	{"magma", {{0, 0, 4}, {10, 8, 34}, {29, 17, 71}, {54, 16, 107}, {81, 18, 124}, {106, 28, 129},
			   {131, 38, 129}, {156, 46, 127}, {183, 55, 121}, {208, 65, 111}, {231, 82, 99},
			   {245, 107, 92}, {252, 137, 97}, {254, 167, 114}, {254, 196, 136}, {253, 226, 163},
			   {252, 253, 191}}},
	{"inferno", {{0, 0, 4}, {11, 7, 36}, {33, 12, 74}, {61, 9, 101}, {87, 16, 110}, {113, 25, 110},
				 {138, 34, 106}, {163, 44, 97}, {188, 55, 84}, {210, 70, 68}, {228, 90, 49},
				 {241, 115, 29}, {249, 142, 9}, {252, 172, 17}, {249, 203, 53}, {242, 234, 105},
				 {252, 255, 164}}},
	{"plasma", {{13, 8, 135}, {49, 5, 151}, {76, 2, 161}, {102, 0, 167}, {126, 3, 168}, {149, 17, 161},
				{170, 35, 149}, {188, 53, 135}, {204, 71, 120}, {218, 90, 106}, {230, 108, 92},
				{240, 128, 78}, {248, 149, 64}, {253, 172, 51}, {253, 197, 39}, {248, 223, 37},
				{240, 249, 33}}},
	{"cividis", {{0, 34, 78}, {0, 46, 106}, {26, 56, 111}, {50, 67, 109}, {67, 78, 108}, {83, 90, 109},
				 {97, 101, 111}, {111, 112, 115}, {125, 124, 120}, {140, 136, 120}, {155, 148, 118},
				 {171, 160, 114}, {188, 174, 108}, {205, 187, 99}, {222, 201, 88}, {240, 216, 70},
				 {254, 232, 56}}},
	{"gray", {{0, 0, 0}, {16, 16, 16}, {32, 32, 32}, {48, 48, 48}, {64, 64, 64}, {80, 80, 80},
			  {96, 96, 96}, {112, 112, 112}, {128, 128, 128}, {143, 143, 143}, {159, 159, 159},
			  {175, 175, 175}, {191, 191, 191}, {207, 207, 207}, {223, 223, 223}, {239, 239, 239},
			  {255, 255, 255}}},
};

typedef enum ColorScale
{
	SCALE_LINEAR,
	SCALE_SQRT,
	SCALE_LOG
} ColorScale;

/* The first band of a raster WKB, read in place. */
typedef struct RasterBand
{
	uint32		width;
	uint32		height;
	int			pixtype;
	int			pixel_bytes;
	bool		swap;			/* WKB byte order differs from the host's */
	bool		has_nodata;
	double		nodata;
	const uint8 *pixels;
} RasterBand;

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
ReadPixel(const RasterBand *band, const uint8 *p)
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

/* Parse the header and the first band's description (rt_wkb.c's layout). */
static void
BandFromWkb(const bytea *wkb, RasterBand *band)
{
	const uint8 *p = (const uint8 *) VARDATA_ANY(wkb);
	size_t		size = VARSIZE_ANY_EXHDR(wkb);
	uint16		version,
				nbands,
				width,
				height;
	uint8		flags;
	size_t		need;

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
	if (nbands == 0)
		BadRaster("The raster has no bands.");
	if (width == 0 || height == 0)
		BadRaster("The raster has no pixels.");
	if (size < RASTER_WKB_HEADER + 1)
		BadRaster("The first band is missing.");
	flags = p[RASTER_WKB_HEADER];
	if (flags & BAND_OFFLINE)
		BadRaster("The first band is an out-db band.");
	band->width = width;
	band->height = height;
	band->pixtype = flags & BAND_PIXTYPE;
	band->pixel_bytes = PixelBytes(band->pixtype);
	if (band->pixel_bytes == 0)
		BadRaster(psprintf("Pixel type %d is not supported.", band->pixtype));
	need = RASTER_WKB_HEADER + 1 + band->pixel_bytes + (size_t) width * height * band->pixel_bytes;
	if (size < need)
		BadRaster("The first band's pixels are truncated.");
	band->has_nodata = (flags & BAND_HAS_NODATA) != 0;
	band->nodata = ReadPixel(band, p + RASTER_WKB_HEADER + 1);
	band->pixels = p + RASTER_WKB_HEADER + 1 + band->pixel_bytes;
}

static bool
PixelIsData(const RasterBand *band, double v)
{
	return isfinite(v) && !(band->has_nodata && v == band->nodata);
}

static const Colormap *
ColormapFromName(const char *name)
{
	for (int i = 0; i < lengthof(colormaps); i++)
		if (pg_strcasecmp(name, colormaps[i].name) == 0)
			return &colormaps[i];
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown colormap \"%s\"", name),
			 errhint("Use one of viridis, magma, inferno, plasma, cividis, gray.")));
	return NULL;
}

static ColorScale
ScaleFromName(const char *name)
{
	if (pg_strcasecmp(name, "linear") == 0)
		return SCALE_LINEAR;
	if (pg_strcasecmp(name, "sqrt") == 0)
		return SCALE_SQRT;
	if (pg_strcasecmp(name, "log") == 0)
		return SCALE_LOG;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown scale \"%s\"", name),
			 errhint("Use one of linear, sqrt, log.")));
	return SCALE_LOG;
}

/*
 * Position in the colormap, 0..1, of a value in [min, max]: linear, its
 * square root, or log10(1 + 9999 x) / 4, which spreads the four decades
 * below the maximum over the map.
 */
static double
ScaleValue(ColorScale scale, double v, double min, double max)
{
	/* halves first: max - min may exceed the float8 range (values near +-1e308) */
	double		x = max > min ? (v * 0.5 - min * 0.5) / (max * 0.5 - min * 0.5) : 0.0;

	/* values beyond vmin and vmax take the end colours */
	x = fmin(fmax(x, 0.0), 1.0);

	switch (scale)
	{
		case SCALE_SQRT:
			return sqrt(x);
		case SCALE_LOG:
			return log10(1.0 + 9999.0 * x) / 4.0;
		default:
			return x;
	}
}

static void
ColorAt(const Colormap *map, double t, uint8 *rgb)
{
	double		pos = fmin(fmax(t, 0.0), 1.0) * (COLORMAP_STOPS - 1);
	int			i = Min((int) pos, COLORMAP_STOPS - 2);
	double		f = pos - i;

	for (int c = 0; c < 3; c++)
		rgb[c] = (uint8) lround(map->rgb[i][c] + f * (map->rgb[i + 1][c] - map->rgb[i][c]));
}

/* A PNG being written into a bytea that grows up to PostgreSQL's 1 GB limit. */
typedef struct PngWriter
{
	bytea	   *out;
	size_t		used;			/* bytes after the varlena header */
	size_t		capacity;
	z_stream	zs;
	size_t		idat_start;		/* where the open IDAT chunk's length field is */
} PngWriter;

static void
PngReserve(PngWriter *w, size_t more)
{
	size_t		need = w->used + more;

	if (need > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the PNG would exceed 1 GB, the largest value PostgreSQL can hold"),
				 errhint("Make the PNG of a smaller raster, or of tiles of this one.")));
	if (need > w->capacity)
	{
		size_t		capacity = Max(need, Min(w->capacity * 2, MaxAllocSize - VARHDRSZ));

		w->out = repalloc(w->out, VARHDRSZ + capacity);
		w->capacity = capacity;
	}
}

static void
PngPutU32(uint8 *p, uint32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void
PngPut(PngWriter *w, const void *data, size_t n)
{
	PngReserve(w, n);
	memcpy(VARDATA(w->out) + w->used, data, n);
	w->used += n;
}

/* Open a chunk: length to be filled by PngEndChunk, then the type. */
static size_t
PngBeginChunk(PngWriter *w, const char *type)
{
	size_t		start = w->used;
	uint8		zero[4] = {0};

	PngPut(w, zero, 4);
	PngPut(w, type, 4);
	return start;
}

static void
PngEndChunk(PngWriter *w, size_t start)
{
	uint8	   *chunk = (uint8 *) VARDATA(w->out) + start;
	size_t		length = w->used - start - 8;
	uint8		crc[4];

	PngPutU32(chunk, (uint32) length);
	PngPutU32(crc, (uint32) crc32(crc32(0L, Z_NULL, 0), chunk + 4, (uInt) (length + 4)));
	PngPut(w, crc, 4);
}

/* Deflate `n` bytes of scanlines (or finish the stream) into the open IDAT chunk. */
static void
PngDeflate(PngWriter *w, const uint8 *data, size_t n, int flush)
{
	int			rc;

	w->zs.next_in = (Bytef *) data;
	w->zs.avail_in = (uInt) n;
	do
	{
		PngReserve(w, 65536);
		w->zs.next_out = (Bytef *) VARDATA(w->out) + w->used;
		w->zs.avail_out = 65536;
		rc = deflate(&w->zs, flush);
		if (rc == Z_STREAM_ERROR)
			elog(ERROR, "zlib deflate failed");
		w->used += 65536 - w->zs.avail_out;
		/* chunks stay well below PNG's 2^31 limit */
		if (w->used - w->idat_start > ((size_t) 1 << 30) && rc != Z_STREAM_END)
		{
			PngEndChunk(w, w->idat_start);
			w->idat_start = PngBeginChunk(w, "IDAT");
		}
	} while (w->zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
}

/*
 * An RGB or RGBA (channels 3 or 4) PNG of width x height pixels, each row
 * made by make_row into a buffer: rows are filtered ("up", which suits
 * smooth heatmaps) and deflated one at a time.
 */
typedef void (*PngRowFn) (void *context, uint32 row, uint8 *rgb);

static bytea *
PngWrite(uint32 width, uint32 height, int channels, PngRowFn make_row, void *context)
{
	static const uint8 signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	PngWriter	w = {0};
	size_t		rowbytes = (size_t) width * channels;
	uint8	   *prev = palloc0(rowbytes);
	uint8	   *cur = palloc(rowbytes);
	uint8	   *line = palloc(rowbytes + 1);
	uint8		ihdr[13];
	size_t		chunk;

	w.capacity = 65536;
	w.out = palloc(VARHDRSZ + w.capacity);
	PngPut(&w, signature, 8);
	chunk = PngBeginChunk(&w, "IHDR");
	PngPutU32(ihdr, width);
	PngPutU32(ihdr + 4, height);
	ihdr[8] = 8;				/* bits per channel */
	ihdr[9] = channels == 4 ? 6 : 2;	/* RGBA or RGB */
	ihdr[10] = ihdr[11] = ihdr[12] = 0;
	PngPut(&w, ihdr, 13);
	PngEndChunk(&w, chunk);

	if (deflateInit(&w.zs, 6) != Z_OK)
		elog(ERROR, "zlib deflateInit failed");
	PG_TRY();
	{
		w.idat_start = PngBeginChunk(&w, "IDAT");
		for (uint32 r = 0; r < height; r++)
		{
			uint8	   *swap;

			CHECK_FOR_INTERRUPTS();
			make_row(context, r, cur);
			line[0] = 2;		/* filter type "up" */
			for (size_t i = 0; i < rowbytes; i++)
				line[i + 1] = (uint8) (cur[i] - prev[i]);
			PngDeflate(&w, line, rowbytes + 1, Z_NO_FLUSH);
			swap = prev;
			prev = cur;
			cur = swap;
		}
		PngDeflate(&w, NULL, 0, Z_FINISH);
		PngEndChunk(&w, w.idat_start);
	}
	PG_FINALLY();
	{
		deflateEnd(&w.zs);
	}
	PG_END_TRY();
	chunk = PngBeginChunk(&w, "IEND");
	PngEndChunk(&w, chunk);
	SET_VARSIZE(w.out, VARHDRSZ + w.used);
	return w.out;
}

/* What the rows of a heatmap are made from. */
typedef struct HeatmapRows
{
	const RasterBand *band;
	const Colormap *map;
	ColorScale	scale;
	double		min;
	double		max;
	bool		transparent_zero;	/* value 0 is transparent too */
	int			channels;
} HeatmapRows;

static void
HeatmapRow(void *context, uint32 r, uint8 *rgb)
{
	HeatmapRows *h = context;
	const RasterBand *band = h->band;

	for (uint32 c = 0; c < band->width; c++)
	{
		size_t		i = (size_t) r * band->width + c;
		double		v = ReadPixel(band, band->pixels + i * band->pixel_bytes);
		uint8	   *px = rgb + (size_t) c * h->channels;

		if (PixelIsData(band, v) && !(h->transparent_zero && v == 0))
		{
			ColorAt(h->map, ScaleValue(h->scale, v, h->min, h->max), px);
			if (h->channels == 4)
				px[3] = 255;
		}
		else
			memset(px, 0, h->channels);
	}
}

/*
 * geoacc_raster_png(raster, colormap, scale, vmin, vmax, transparent_zero):
 * the first band as a heatmap PNG; the colour scale runs from vmin to vmax
 * (NULL: the band's minimum and maximum), so that tiles and frames made
 * with the same bounds share one scale
 */
PG_FUNCTION_INFO_V1(geoacc_raster_png);
Datum
geoacc_raster_png(PG_FUNCTION_ARGS)
{
	bytea	   *wkb;
	const Colormap *map;
	ColorScale	scale;
	RasterBand	band;
	double		min = INFINITY,
				max = -INFINITY;
	bool		transparent = false;
	bool		transparent_zero;
	size_t		npixels;
	HeatmapRows rows;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_NULL();
	wkb = PG_GETARG_BYTEA_PP(0);
	map = ColormapFromName(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	scale = ScaleFromName(text_to_cstring(PG_GETARG_TEXT_PP(2)));
	transparent_zero = !PG_ARGISNULL(5) && PG_GETARG_BOOL(5);
	BandFromWkb(wkb, &band);
	npixels = (size_t) band.width * band.height;
	for (size_t i = 0; i < npixels; i++)
	{
		double		v = ReadPixel(&band, band.pixels + i * band.pixel_bytes);

		if (i % 1048576 == 0)
			CHECK_FOR_INTERRUPTS();
		if (PixelIsData(&band, v) && !(transparent_zero && v == 0))
		{
			min = fmin(min, v);
			max = fmax(max, v);
		}
		else
			transparent = true;
	}
	if (!PG_ARGISNULL(3))
		min = PG_GETARG_FLOAT8(3);
	if (!PG_ARGISNULL(4))
		max = PG_GETARG_FLOAT8(4);
	if ((!PG_ARGISNULL(3) || !PG_ARGISNULL(4)) && !(isfinite(min) && isfinite(max) && min < max))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("vmin and vmax must be finite with vmin below vmax"),
				 errdetail("The colour scale runs from %g to %g.", min, max),
				 errhint("Give both bounds, or leave one NULL to take it from the raster.")));
	rows.band = &band;
	rows.map = map;
	rows.scale = scale;
	rows.min = min;
	rows.max = max;
	rows.transparent_zero = transparent_zero;
	rows.channels = transparent ? 4 : 3;
	PG_RETURN_BYTEA_P(PngWrite(band.width, band.height, rows.channels, HeatmapRow, &rows));
}
