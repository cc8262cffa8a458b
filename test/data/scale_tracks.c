/*
 * scale_tracks.c
 *
 * Scale the real AIS tracks to benchmark sizes.  Reads the points of the
 * base tracks as text lines "track_id <tab> x <tab> y <tab> m" (grouped by
 * track, in vertex order) and writes a PostgreSQL binary COPY stream of rows
 * (id bigint, source_id int, traj geometry) holding about TARGET_POINTS
 * points: replica 0 is the base tracks unchanged; replica r > 0 shifts every
 * track by a random offset of up to +-2 km in X and Y and up to +-6 hours in
 * time, and moves every vertex by Gaussian noise of 5 m in X and Y (M keeps
 * its spacing, so it still increases strictly).  Rows are (replica, track)
 * pairs in order until the target is reached; id = replica * ntracks + track.
 *
 * Usage: scale_tracks TARGET_POINTS SEED SRID [PART NPARTS]
 * With PART/NPARTS, only rows whose id % NPARTS == PART are written, so that
 * several loaders can run in parallel; the rows do not depend on NPARTS.
 *
 * With REGION_COPIES=K in the environment (K > 0), the replicas are spread
 * over regions instead of piling up in one harbour: replicas 0 to K - 1 stay
 * where they are, each next K go to the next region, 1,000 km further east
 * (REGION_COLUMNS, default 16, to a row, then 1,000 km north), farther apart
 * than the tracks' extent, so that traffic grows in area, as a day of global
 * AIS, rather than in density.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Track
{
	long long	source_id;
	size_t		start;			/* first point */
	size_t		npoints;
} Track;

static double *xs, *ys, *ms;
static long long region_copies;	/* REGION_COPIES: 0, one region */
static long long region_columns = 16;
#define REGION_SPACING 1000000.0
static size_t npoints_all, capacity;
static Track *tracks;
static size_t ntracks, track_capacity;

/* xorshift64*: small, fast, reproducible */
static uint64_t rng_state;

static double
uniform01(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double) ((rng_state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static double
gaussian(void)
{
	double		u = uniform01(),
				v = uniform01();

	return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(2.0 * M_PI * v);
}

static void
put_be(FILE *out, uint64_t value, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		fputc((int) ((value >> (8 * i)) & 0xff), out);
}

static void
read_points(FILE *in)
{
	char		line[512];
	long long	last_id = 0;

	while (fgets(line, sizeof(line), in))
	{
		long long	id;
		double		x, y, m;

		if (sscanf(line, "%lld\t%lf\t%lf\t%lf", &id, &x, &y, &m) != 4)
		{
			fprintf(stderr, "scale_tracks: bad input line: %s", line);
			exit(1);
		}
		if (npoints_all == capacity)
		{
			capacity = capacity ? capacity * 2 : 65536;
			xs = realloc(xs, capacity * sizeof(double));
			ys = realloc(ys, capacity * sizeof(double));
			ms = realloc(ms, capacity * sizeof(double));
			if (!xs || !ys || !ms)
			{
				fprintf(stderr, "scale_tracks: out of memory\n");
				exit(1);
			}
		}
		if (ntracks == 0 || id != last_id)
		{
			if (ntracks == track_capacity)
			{
				track_capacity = track_capacity ? track_capacity * 2 : 1024;
				tracks = realloc(tracks, track_capacity * sizeof(Track));
				if (!tracks)
				{
					fprintf(stderr, "scale_tracks: out of memory\n");
					exit(1);
				}
			}
			tracks[ntracks].source_id = id;
			tracks[ntracks].start = npoints_all;
			tracks[ntracks].npoints = 0;
			ntracks++;
			last_id = id;
		}
		xs[npoints_all] = x;
		ys[npoints_all] = y;
		ms[npoints_all] = m;
		npoints_all++;
		tracks[ntracks - 1].npoints++;
	}
}

/* One COPY row: id, source_id, EWKB LINESTRING M with SRID. */
static void
write_row(FILE *out, long long id, const Track *t, long long replica, int32_t srid)
{
	double		dx = 0,
				dy = 0,
				dt = 0;
	uint32_t	ewkb_len = 1 + 4 + 4 + 4 + (uint32_t) (t->npoints * 3 * sizeof(double));
	uint32_t	type = 2 | 0x40000000u | 0x20000000u;	/* LINESTRING, M, SRID */
	uint32_t	n = (uint32_t) t->npoints;

	if (replica > 0)
	{
		dx = (uniform01() * 2 - 1) * 2000.0;
		dy = (uniform01() * 2 - 1) * 2000.0;
		dt = round((uniform01() * 2 - 1) * 6 * 3600.0);
	}
	if (region_copies > 0)
	{
		long long	region = replica / region_copies;

		dx += (double) (region % region_columns) * REGION_SPACING;
		dy += (double) (region / region_columns) * REGION_SPACING;
	}
	put_be(out, 3, 2);
	put_be(out, 8, 4);
	put_be(out, (uint64_t) id, 8);
	put_be(out, 4, 4);
	put_be(out, (uint64_t) (uint32_t) t->source_id, 4);
	put_be(out, ewkb_len, 4);
	fputc(1, out);				/* NDR; this program runs on little-endian hosts */
	fwrite(&type, 4, 1, out);
	fwrite(&srid, 4, 1, out);
	fwrite(&n, 4, 1, out);
	for (size_t i = t->start; i < t->start + t->npoints; i++)
	{
		double		p[3] = {xs[i] + dx, ys[i] + dy, ms[i] + dt};

		if (replica > 0)
		{
			p[0] += 5.0 * gaussian();
			p[1] += 5.0 * gaussian();
		}
		fwrite(p, sizeof(double), 3, out);
	}
}

int
main(int argc, char **argv)
{
	if (argc != 4 && argc != 6)
	{
		fprintf(stderr, "usage: scale_tracks TARGET_POINTS SEED SRID [PART NPARTS] < points > copy.bin\n");
		return 2;
	}
	unsigned long long target = strtoull(argv[1], NULL, 10);
	unsigned long long seed = strtoull(argv[2], NULL, 10);
	int32_t		srid = (int32_t) atoi(argv[3]);
	long long	part = argc == 6 ? atoll(argv[4]) : 0;
	long long	nparts = argc == 6 ? atoll(argv[5]) : 1;
	unsigned long long written = 0;
	const char	header[] = "PGCOPY\n\377\r\n";
	FILE	   *out = stdout;

	if (getenv("REGION_COPIES"))
		region_copies = atoll(getenv("REGION_COPIES"));
	if (getenv("REGION_COLUMNS") && atoll(getenv("REGION_COLUMNS")) > 0)
		region_columns = atoll(getenv("REGION_COLUMNS"));
	read_points(stdin);
	if (ntracks == 0)
	{
		fprintf(stderr, "scale_tracks: no input points\n");
		return 1;
	}
	fwrite(header, 1, 11, out);
	put_be(out, 0, 4);
	put_be(out, 0, 4);
	for (long long replica = 0; written < target; replica++)
		for (size_t t = 0; t < ntracks && written < target; t++)
		{
			long long	id = replica * (long long) ntracks + (long long) t;

			/* every part draws the same random numbers; each writes its own rows */
			rng_state = (seed + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t) id * 0xD1B54A32D192ED03ULL;
			if (rng_state == 0)
				rng_state = 1;
			if (id % nparts == part)
				write_row(out, id, &tracks[t], replica, srid);
			written += tracks[t].npoints;
		}
	put_be(out, 0xffff, 2);
	return ferror(out) ? 1 : 0;
}
