/*
 * scale_fixes.c
 *
 * Scale the real raw AIS fixes to benchmark sizes for gpu_make_trajectories.
 * Reads the base fixes as text lines "object <tab> epoch <tab> x <tab> y" in
 * feed order (by time across vessels, as AIS arrives) and writes a
 * PostgreSQL binary COPY stream of rows (object_id bigint, t timestamptz,
 * geom geometry(Point)) holding exactly TARGET_FIXES fixes: replica 0 is the
 * base feed unchanged; replica r > 0 shifts every object by a random offset
 * of up to +-2 km in X and Y and up to +-6 hours in whole seconds, and moves
 * every fix by Gaussian noise of 5 m in X and Y (so fixes that share a time
 * get different positions: the duplicate rule decides between them).
 * Replicas follow each other, each in feed order: the rows are neither sorted
 * by object nor by time.  object_id = replica * nobjects + object.
 *
 * Usage: scale_fixes TARGET_FIXES SEED SRID [PART NPARTS]
 * With PART/NPARTS only fixes whose number % NPARTS == PART are written, so
 * that several loaders can run in parallel; the fixes do not depend on NPARTS.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PostgreSQL timestamps count microseconds from 2000-01-01 */
#define POSTGRES_EPOCH_SECONDS 946684800LL

typedef struct Fix
{
	long long	object;
	double		epoch;
	double		x;
	double		y;
} Fix;

static Fix *fixes;
static size_t nfixes, capacity;
static long long nobjects;

/* splitmix64: a reproducible stream from any (seed, counter) */
static uint64_t
mix(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double
uniform01(uint64_t *state)
{
	*state = mix(*state);
	return (double) (*state >> 11) / 9007199254740992.0;
}

static double
gaussian(uint64_t *state)
{
	double		u = uniform01(state),
				v = uniform01(state);

	return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(2.0 * M_PI * v);
}

static void
put_be(FILE *out, uint64_t value, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		fputc((int) ((value >> (8 * i)) & 0xff), out);
}

static void
read_fixes(FILE *in)
{
	char		line[512];

	while (fgets(line, sizeof(line), in))
	{
		Fix			f;

		if (sscanf(line, "%lld\t%lf\t%lf\t%lf", &f.object, &f.epoch, &f.x, &f.y) != 4 || f.object < 0)
		{
			fprintf(stderr, "scale_fixes: bad input line: %s", line);
			exit(1);
		}
		if (nfixes == capacity)
		{
			capacity = capacity ? capacity * 2 : 65536;
			fixes = realloc(fixes, capacity * sizeof(Fix));
			if (!fixes)
			{
				fprintf(stderr, "scale_fixes: out of memory\n");
				exit(1);
			}
		}
		fixes[nfixes++] = f;
		if (f.object + 1 > nobjects)
			nobjects = f.object + 1;
	}
}

/* One COPY row: object_id, t, EWKB POINT with SRID. */
static void
write_row(FILE *out, long long object_id, long long micros, double x, double y, int32_t srid)
{
	uint32_t	type = 1 | 0x20000000u;	/* POINT, SRID */
	double		p[2] = {x, y};

	put_be(out, 3, 2);
	put_be(out, 8, 4);
	put_be(out, (uint64_t) object_id, 8);
	put_be(out, 8, 4);
	put_be(out, (uint64_t) micros, 8);
	put_be(out, 1 + 4 + 4 + 16, 4);
	fputc(1, out);				/* NDR; this program runs on little-endian hosts */
	fwrite(&type, 4, 1, out);
	fwrite(&srid, 4, 1, out);
	fwrite(p, sizeof(double), 2, out);
}

int
main(int argc, char **argv)
{
	if (argc != 4 && argc != 6)
	{
		fprintf(stderr, "usage: scale_fixes TARGET_FIXES SEED SRID [PART NPARTS] < fixes > copy.bin\n");
		return 2;
	}
	unsigned long long target = strtoull(argv[1], NULL, 10);
	unsigned long long seed = strtoull(argv[2], NULL, 10);
	int32_t		srid = (int32_t) atoi(argv[3]);
	unsigned long long part = argc == 6 ? strtoull(argv[4], NULL, 10) : 0;
	unsigned long long nparts = argc == 6 ? strtoull(argv[5], NULL, 10) : 1;
	const char	header[] = "PGCOPY\n\377\r\n";
	FILE	   *out = stdout;
	double	   *shift;

	read_fixes(stdin);
	if (nfixes == 0)
	{
		fprintf(stderr, "scale_fixes: no input fixes\n");
		return 1;
	}
	shift = malloc(3 * sizeof(double) * (size_t) nobjects);
	if (!shift)
	{
		fprintf(stderr, "scale_fixes: out of memory\n");
		return 1;
	}
	fwrite(header, 1, 11, out);
	put_be(out, 0, 4);
	put_be(out, 0, 4);
	for (unsigned long long replica = 0, number = 0; number < target; replica++)
	{
		for (long long o = 0; o < nobjects; o++)
		{
			uint64_t	state = mix((seed + 1) * 0xD1B54A32D192ED03ULL ^ (replica * (uint64_t) nobjects + (uint64_t) o));

			shift[3 * o] = replica ? (uniform01(&state) * 2 - 1) * 2000.0 : 0;
			shift[3 * o + 1] = replica ? (uniform01(&state) * 2 - 1) * 2000.0 : 0;
			shift[3 * o + 2] = replica ? round((uniform01(&state) * 2 - 1) * 6 * 3600.0) : 0;
		}
		for (size_t k = 0; k < nfixes && number < target; k++, number++)
		{
			const Fix  *f = &fixes[k];
			const double *s = &shift[3 * f->object];
			double		x = f->x + s[0],
						y = f->y + s[1];

			if (number % nparts != part)
				continue;
			if (replica > 0)
			{
				uint64_t	state = mix(seed ^ (number * 0x9E3779B97F4A7C15ULL));

				x += 5.0 * gaussian(&state);
				y += 5.0 * gaussian(&state);
			}
			write_row(out, (long long) replica * nobjects + f->object,
					  llround((f->epoch + s[2] - POSTGRES_EPOCH_SECONDS) * 1e6), x, y, srid);
		}
	}
	put_be(out, 0xffff, 2);
	return ferror(out) ? 1 : 0;
}
