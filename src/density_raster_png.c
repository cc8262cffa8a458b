/*
 * density_raster_png.c
 *
 * geoacc_raster_png(raster, colormap, scale, vmin, vmax, transparent_zero):
 * a heatmap PNG of the first band of a raster, given as PostGIS raster WKB
 * (what gpu_density_raster returns, or ST_AsBinary of any raster) or, with
 * the geoacc_raster extension, as a PostGIS raster (both read by
 * raster_wkb.c).  Pixel values are placed on a colour scale from vmin to
 * vmax (by default the band's minimum and maximum) and coloured with one of
 * matplotlib's perceptually uniform colormaps (256 colours: an 8-bit
 * palette PNG) or with a ramp given as text in the style of PostGIS's
 * ST_ColorMap (interpolated: RGB or RGBA); nodata and non-finite pixels are
 * transparent.  The PNG is written here, row by row, through zlib (which
 * PostgreSQL links already): no whole image in memory, and cancellable
 * between rows.
 */
#include "geoacc.h"

#include <math.h>

#include <zlib.h>

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "density_raster_colormaps.h"

/* PNG colour types */
#define PNG_RGB 2
#define PNG_PALETTE 3
#define PNG_RGBA 6

typedef enum ColorScale
{
	SCALE_LINEAR,
	SCALE_SQRT,
	SCALE_LOG
} ColorScale;

/* One stop of a ramp: a position on the colour scale (0..1) and its colour. */
typedef struct RampStop
{
	double		position;
	uint8		rgba[4];
	int			line;			/* order in the text */
} RampStop;

/* How pixels are coloured. */
typedef struct Coloring
{
	const Colormap *map;		/* a named colormap, or NULL for the ramp */
	RampStop   *stops;			/* sorted by position */
	int			nstops;
	bool		has_nodata_colour;	/* an "nv" line */
	uint8		nodata_rgba[4];
	ColorScale	scale;
	double		min;
	double		max;
	bool		transparent_zero;	/* value 0 is transparent too */
} Coloring;

static bool
PixelIsData(const GeoaccRasterBand *band, double v)
{
	return isfinite(v) && !(band->has_nodata && v == band->nodata);
}

/* Pixels read from a band at a time (and between interrupt checks). */
#define PIXELS_AT_ONCE ((size_t) 4096)

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
 * Position on the colour scale, 0..1, of a value in [min, max]: linear, its
 * square root, or log10(1 + 9999 x) / 4, which spreads the four decades
 * below the maximum over the map.  Values beyond take the ends.
 */
static double
ScaleValue(ColorScale scale, double v, double min, double max)
{
	/* halves first: max - min may exceed the float8 range (values near +-1e308) */
	double		x = max > min ? (v * 0.5 - min * 0.5) / (max * 0.5 - min * 0.5) : 0.0;

	/* comparisons, not fmin and fmax (calls, per pixel); NaN takes 0 as fmax gives it */
	if (!(x > 0.0))
		x = 0.0;
	else if (x > 1.0)
		x = 1.0;
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

/* matplotlib's lookup: entry floor(256 x), the last one for x = 1. */
static int
ColormapIndex(double x)
{
	return Min((int) (x * 256.0), 255);
}

static void
BadRamp(const char *line, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid colour ramp line \"%s\"", line),
			 errdetail("%s", detail),
			 errhint("Each line of a ramp is \"value R G B [A]\", the value a number, a percentage of the "
					 "colour scale or \"nv\" for nodata, the components integers from 0 to 255; or use one of "
					 "viridis, magma, inferno, plasma, cividis, gray.")));
}

static int
CompareStops(const void *a, const void *b)
{
	const RampStop *sa = a;
	const RampStop *sb = b;

	/* equal positions (a sharp break) keep the order of their lines */
	if (sa->position != sb->position)
		return sa->position < sb->position ? -1 : 1;
	return sa->line - sb->line;
}

/*
 * A ramp in the style of ST_ColorMap's colormap text: lines of "value R G B
 * [A]" separated by spaces, tabs, commas or colons; the value a number (a
 * pixel value, placed on the colour scale like the pixels), a percentage
 * (a position on the colour scale, 0% at vmin and 100% at vmax) or "nv"
 * (the colour of nodata pixels); blank lines and lines starting with # are
 * skipped.  The stops are sorted by position.  Parsed after the scale's
 * bounds are known.
 */
static void
RampFromText(const char *text, Coloring *col)
{
	char	   *copy = pstrdup(text);
	char	   *save = NULL;
	int			capacity = 8;

	col->stops = palloc(sizeof(RampStop) * capacity);
	col->nstops = 0;
	for (char *line = strtok_r(copy, "\n\r", &save); line != NULL; line = strtok_r(NULL, "\n\r", &save))
	{
		char	   *fields[6];
		int			nfields = 0;
		char	   *field_save = NULL;
		char	   *shown = pstrdup(line);
		uint8		rgba[4] = {0, 0, 0, 255};
		char	   *end;
		double		value;
		double		position;

		for (char *f = strtok_r(line, " \t,:", &field_save); f != NULL; f = strtok_r(NULL, " \t,:", &field_save))
		{
			if (nfields == 5)
				BadRamp(shown, "The line has more than five fields.");
			fields[nfields++] = f;
		}
		if (nfields == 0 || fields[0][0] == '#')
			continue;
		if (nfields < 4)
			BadRamp(shown, "The line has fewer than four fields.");
		for (int c = 1; c < nfields; c++)
		{
			long		v = strtol(fields[c], &end, 10);

			if (*end != '\0' || end == fields[c] || v < 0 || v > 255)
				BadRamp(shown, psprintf("\"%s\" is not an integer from 0 to 255.", fields[c]));
			rgba[c - 1] = (uint8) v;
		}
		if (pg_strcasecmp(fields[0], "nv") == 0 || pg_strcasecmp(fields[0], "nodata") == 0)
		{
			col->has_nodata_colour = true;
			memcpy(col->nodata_rgba, rgba, 4);
			continue;
		}
		value = strtod(fields[0], &end);
		if (end == fields[0] || !isfinite(value) || !(*end == '\0' || (end[0] == '%' && end[1] == '\0')))
			BadRamp(shown, psprintf("\"%s\" is not a number, a percentage or \"nv\".", fields[0]));
		if (*end == '%')
			position = fmin(fmax(value / 100.0, 0.0), 1.0);
		else
			position = ScaleValue(col->scale, value, col->min, col->max);
		if (col->nstops == capacity)
		{
			capacity *= 2;
			col->stops = repalloc(col->stops, sizeof(RampStop) * capacity);
		}
		col->stops[col->nstops].position = position;
		col->stops[col->nstops].line = col->nstops;
		memcpy(col->stops[col->nstops].rgba, rgba, 4);
		col->nstops++;
	}
	if (col->nstops == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("colour ramp has no colours"),
				 errhint("Give lines of \"value R G B [A]\", or use one of viridis, magma, inferno, plasma, cividis, gray.")));
	qsort(col->stops, col->nstops, sizeof(RampStop), CompareStops);
}

/* A colormap's name, or else a ramp (anything with a newline or a digit). */
static const Colormap *
ColormapFromName(const char *name)
{
	for (int i = 0; i < lengthof(colormaps); i++)
		if (pg_strcasecmp(name, colormaps[i].name) == 0)
			return &colormaps[i];
	if (strpbrk(name, "\n0123456789") != NULL)
		return NULL;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown colormap \"%s\"", name),
			 errhint("Use one of viridis, magma, inferno, plasma, cividis, gray, or a ramp of lines \"value R G B [A]\".")));
	return NULL;
}

/* The ramp's colour at position x: the end colours beyond the ends, linear between stops. */
static void
RampColor(const Coloring *col, double x, uint8 *rgba)
{
	const RampStop *s = col->stops;
	int			i = 0;
	double		f;

	if (x <= s[0].position)
	{
		memcpy(rgba, s[0].rgba, 4);
		return;
	}
	while (i + 1 < col->nstops && s[i + 1].position < x)
		i++;
	if (i + 1 == col->nstops)
	{
		memcpy(rgba, s[i].rgba, 4);
		return;
	}

	f = (x - s[i].position) / (s[i + 1].position - s[i].position);

	for (int c = 0; c < 4; c++)
		rgba[c] = (uint8) lround(s[i].rgba[c] + f * (s[i + 1].rgba[c] - s[i].rgba[c]));
}

/* Whether a pixel value gets a colour from the scale (else it is nodata: transparent or the "nv" colour). */
static bool
PixelIsColoured(const GeoaccRasterBand *band, const Coloring *col, double v)
{
	return PixelIsData(band, v) && !(col->transparent_zero && v == 0);
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
		uInt		room;

		if (w->capacity - w->used < 4096)
			PngReserve(w, 65536);
		room = (uInt) Min(w->capacity - w->used, (size_t) 1 << 30);
		w->zs.next_out = (Bytef *) VARDATA(w->out) + w->used;
		w->zs.avail_out = room;
		rc = deflate(&w->zs, flush);
		if (rc == Z_STREAM_ERROR)
			elog(ERROR, "zlib deflate failed");
		w->used += room - w->zs.avail_out;
		/* chunks stay well below PNG's 2^31 limit */
		if (w->used - w->idat_start > ((size_t) 1 << 30) && rc != Z_STREAM_END)
		{
			PngEndChunk(w, w->idat_start);
			w->idat_start = PngBeginChunk(w, "IDAT");
		}
	} while (w->zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
}

/*
 * A PNG of width x height pixels of a colour type (RGB, RGBA, or palette
 * with the given PLTE and tRNS entries), each row made by make_row into a
 * buffer: rows are filtered ("up", which suits smooth heatmaps) and
 * deflated one at a time.
 */
typedef void (*PngRowFn) (void *context, uint32 row, uint8 *pixels);

typedef struct PngFormat
{
	int			colour_type;
	int			channels;		/* bytes per pixel */
	const uint8 *palette;		/* palette: npalette RGB triples */
	int			npalette;
	const uint8 *alpha;			/* palette: ntransparency alpha values (tRNS), or none */
	int			nalpha;
} PngFormat;

static bytea *
PngWrite(uint32 width, uint32 height, const PngFormat *format, PngRowFn make_row, void *context)
{
	static const uint8 signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	PngWriter	w = {0};
	size_t		rowbytes = (size_t) width * format->channels;
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
	ihdr[8] = 8;				/* bits per channel, or per palette index */
	ihdr[9] = format->colour_type;
	ihdr[10] = ihdr[11] = ihdr[12] = 0;
	PngPut(&w, ihdr, 13);
	PngEndChunk(&w, chunk);
	if (format->colour_type == PNG_PALETTE)
	{
		chunk = PngBeginChunk(&w, "PLTE");
		PngPut(&w, format->palette, 3 * format->npalette);
		PngEndChunk(&w, chunk);
		if (format->nalpha > 0)
		{
			chunk = PngBeginChunk(&w, "tRNS");
			PngPut(&w, format->alpha, format->nalpha);
			PngEndChunk(&w, chunk);
		}
	}

	/*
	 * Level 1: a map tile is deflated in 40% less time than at zlib's
	 * default level 6, for 5% more bytes (filtered heatmap rows repeat).
	 */
	if (deflateInit(&w.zs, Z_BEST_SPEED) != Z_OK)
		elog(ERROR, "zlib deflateInit failed");
	/* room for the whole image at once where zlib's bound is small (a map tile): no copies as it grows */
	if (deflateBound(&w.zs, (uLong) ((rowbytes + 1) * height)) < 64 * 1024 * 1024)
		PngReserve(&w, deflateBound(&w.zs, (uLong) ((rowbytes + 1) * height)) + 64);
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
	const GeoaccRasterBand *band;
	const Coloring *col;
	int			colour_type;
	int			transparent_index;	/* palette: the index of nodata pixels */
	const int16 *index;			/* named colormaps: each pixel's entry, -1 for nodata */
} HeatmapRows;

static void
HeatmapRow(void *context, uint32 r, uint8 *out)
{
	HeatmapRows *h = context;
	const GeoaccRasterBand *band = h->band;
	const Coloring *col = h->col;

	if (h->index != NULL)
	{
		const int16 *index = h->index + (size_t) r * band->width;

		for (uint32 c = 0; c < band->width; c++)
		{
			if (h->colour_type == PNG_PALETTE)
				out[c] = (uint8) (index[c] < 0 ? h->transparent_index : index[c]);
			else
			{
				/* RGBA: nodata is transparent black */
				static const uint8 none[4] = {0, 0, 0, 0};
				const uint8 *rgb = index[c] < 0 ? none : h->col->map->rgb[index[c]];

				memcpy(out + (size_t) c * 4, rgb, 3);
				out[(size_t) c * 4 + 3] = index[c] < 0 ? 0 : 255;
			}
		}
		return;
	}
	for (uint32 c = 0; c < band->width; c++)
	{
		double		v = GeoaccRasterPixel(band, (size_t) r * band->width + c);
		bool		coloured = PixelIsColoured(band, col, v);
		double		x = coloured ? ScaleValue(col->scale, v, col->min, col->max) : 0.0;
		uint8		rgba[4] = {0, 0, 0, 0};

		if (h->colour_type == PNG_PALETTE)
		{
			out[c] = coloured ? (uint8) ColormapIndex(x) : (uint8) h->transparent_index;
			continue;
		}
		if (coloured && col->map != NULL)
		{
			memcpy(rgba, col->map->rgb[ColormapIndex(x)], 3);
			rgba[3] = 255;
		}
		else if (coloured)
			RampColor(col, x, rgba);
		else if (col->has_nodata_colour)
			memcpy(rgba, col->nodata_rgba, 4);
		memcpy(out + (size_t) c * (h->colour_type == PNG_RGBA ? 4 : 3), rgba, h->colour_type == PNG_RGBA ? 4 : 3);
	}
}

/*
 * The heatmap PNG of a band: its colour scale's bounds from vmin and vmax
 * (where not given: the band's minimum and maximum of the coloured
 * pixels); a named colormap as a palette PNG, with nodata pixels at an
 * index no pixel uses (made transparent by tRNS; RGBA in the rare image
 * using all 256 colours and nodata); a ramp as RGB, or RGBA when some pixel
 * is transparent or translucent.
 */
bytea *
GeoaccHeatmapPng(const GeoaccRasterBand *band, const GeoaccHeatmapArgs *args)
{
	Coloring	col = {0};
	const char *colormap = args->colormap;
	size_t		npixels = (size_t) band->width * band->height;
	bool		has_nodata = false;
	bool		used[256] = {false};
	HeatmapRows rows = {band, &col, PNG_RGB, 0, NULL};
	int16	   *index;
	PngFormat	format = {0};
	uint8		palette[3 * 256];
	uint8		alpha[256];
	double	   *values = palloc(sizeof(double) * PIXELS_AT_ONCE);
	bool		band_pass;

	col.map = ColormapFromName(colormap);
	col.scale = ScaleFromName(args->scale);
	col.transparent_zero = args->transparent_zero;
	col.min = INFINITY;
	col.max = -INFINITY;
	/*
	 * The band's own bounds, and whether some pixel is not coloured: not
	 * needed when both bounds are given to a named colormap (a map tile),
	 * whose pass over the pixels below finds the uncoloured ones.
	 */
	band_pass = col.map == NULL || !args->has_vmin || !args->has_vmax;
	for (size_t first = 0; band_pass && first < npixels; first += PIXELS_AT_ONCE)
	{
		size_t		n = Min(PIXELS_AT_ONCE, npixels - first);

		CHECK_FOR_INTERRUPTS();
		GeoaccRasterPixels(band, first, n, values);
		for (size_t i = 0; i < n; i++)
		{
			if (PixelIsColoured(band, &col, values[i]))
			{
				/* finite here: comparisons do what fmin and fmax do */
				if (values[i] < col.min)
					col.min = values[i];
				if (values[i] > col.max)
					col.max = values[i];
			}
			else
				has_nodata = true;
		}
	}
	if (args->has_vmin)
		col.min = args->vmin;
	if (args->has_vmax)
		col.max = args->vmax;
	/* no pixel is coloured (an empty map tile): the bound left to the raster does not matter */
	if (args->has_vmin != args->has_vmax && !isfinite(args->has_vmin ? col.max : col.min))
	{
		if (!args->has_vmin)
			col.min = col.max - 1;
		else
			col.max = col.min + 1;
	}
	if ((args->has_vmin || args->has_vmax) && !(isfinite(col.min) && isfinite(col.max) && col.min < col.max))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("vmin and vmax must be finite with vmin below vmax"),
				 errdetail("The colour scale runs from %g to %g.", col.min, col.max),
				 errhint("Give both bounds, or leave one NULL to take it from the raster.")));

	if (col.map == NULL)
	{
		bool		translucent;

		RampFromText(colormap, &col);
		translucent = has_nodata && !(col.has_nodata_colour && col.nodata_rgba[3] == 255);
		for (int i = 0; i < col.nstops; i++)
			translucent = translucent || col.stops[i].rgba[3] != 255;
		rows.colour_type = translucent ? PNG_RGBA : PNG_RGB;
		format.colour_type = rows.colour_type;
		format.channels = translucent ? 4 : 3;
		return PngWrite(band->width, band->height, &format, HeatmapRow, &rows);
	}

	/* a palette of the map's 256 colours; nodata takes an index no pixel uses */
	rows.colour_type = PNG_PALETTE;
	format.colour_type = PNG_PALETTE;
	format.channels = 1;
	format.palette = palette;
	format.npalette = 256;
	for (int i = 0; i < 256; i++)
		memcpy(palette + 3 * i, col.map->rgb[i], 3);
	/* each pixel's entry, found once for the rows and the entries used */
	index = palloc_extended(sizeof(int16) * npixels, MCXT_ALLOC_HUGE);
	for (size_t first = 0; first < npixels; first += PIXELS_AT_ONCE)
	{
		size_t		n = Min(PIXELS_AT_ONCE, npixels - first);

		CHECK_FOR_INTERRUPTS();
		GeoaccRasterPixels(band, first, n, values);
		for (size_t i = 0; i < n; i++)
		{
			double		v = values[i];
			int16		k = PixelIsColoured(band, &col, v) ? ColormapIndex(ScaleValue(col.scale, v, col.min, col.max)) : -1;

			index[first + i] = k;
			if (k >= 0)
				used[k] = true;
			else
				has_nodata = true;
		}
	}
	rows.index = index;
	if (has_nodata)
	{
		while (rows.transparent_index < 256 && used[rows.transparent_index])
			rows.transparent_index++;
		if (rows.transparent_index == 256)
		{
			rows.colour_type = format.colour_type = PNG_RGBA;
			format.channels = 4;
			return PngWrite(band->width, band->height, &format, HeatmapRow, &rows);
		}
		memset(palette + 3 * rows.transparent_index, 0, 3);
		memset(alpha, 255, sizeof(alpha));
		alpha[rows.transparent_index] = 0;
		format.alpha = alpha;
		format.nalpha = rows.transparent_index + 1;
	}
	return PngWrite(band->width, band->height, &format, HeatmapRow, &rows);
}

void
GeoaccHeatmapArgsFromCall(FunctionCallInfo fcinfo, int first, GeoaccHeatmapArgs *args)
{
	args->colormap = text_to_cstring(PG_GETARG_TEXT_PP(first));
	args->scale = text_to_cstring(PG_GETARG_TEXT_PP(first + 1));
	args->has_vmin = !PG_ARGISNULL(first + 2);
	args->vmin = args->has_vmin ? PG_GETARG_FLOAT8(first + 2) : 0.0;
	args->has_vmax = !PG_ARGISNULL(first + 3);
	args->vmax = args->has_vmax ? PG_GETARG_FLOAT8(first + 3) : 0.0;
	args->transparent_zero = !PG_ARGISNULL(first + 4) && PG_GETARG_BOOL(first + 4);
}

/*
 * geoacc_raster_png(raster bytea, colormap, scale, vmin, vmax,
 * transparent_zero): the first band of a raster WKB as a heatmap PNG; the
 * colour scale runs from vmin to vmax (NULL: the band's minimum and
 * maximum), so that tiles and frames made with the same bounds share one
 * scale
 */
PG_FUNCTION_INFO_V1(geoacc_raster_png);
Datum
geoacc_raster_png(PG_FUNCTION_ARGS)
{
	GeoaccRasterBand band;
	GeoaccHeatmapArgs args;

	/* geoacc 0.1.0 declared (raster, colormap, scale) */
	if (PG_NARGS() != 6)
		GeoaccOlderDeclaration("geoacc_raster_png");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_NULL();
	GeoaccHeatmapArgsFromCall(fcinfo, 1, &args);
	GeoaccRasterBandFromWkb(PG_GETARG_BYTEA_PP(0), &band);
	PG_RETURN_BYTEA_P(GeoaccHeatmapPng(&band, &args));
}

/*
 * geoacc_raster_png(raster raster, ...) of the geoacc_raster extension: the
 * same for a PostGIS raster
 */
PG_FUNCTION_INFO_V1(geoacc_raster_png_raster);
Datum
geoacc_raster_png_raster(PG_FUNCTION_ARGS)
{
	GeoaccRasterBand band;
	GeoaccHeatmapArgs args;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_NULL();
	GeoaccHeatmapArgsFromCall(fcinfo, 1, &args);
	GeoaccRasterBandFromSerialized(PG_DETOAST_DATUM(PG_GETARG_DATUM(0)), &band);
	PG_RETURN_BYTEA_P(GeoaccHeatmapPng(&band, &args));
}
