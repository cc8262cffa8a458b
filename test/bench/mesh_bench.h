/*
 * mesh_bench.h
 *
 * What the mesh clip benchmarks share, so that geoacc (mesh_clip_bench)
 * and CGAL (cgal_clip_bench, a separate program that never links geoacc)
 * clip the same triangles by the same boxes and report comparable numbers:
 * the model file (binary little-endian PLY with double x y z and faces as
 * uchar-counted uint lists, as geoacc_ply_write writes it), the jobs and
 * their boxes, areas, and the lines both write for the comparison.
 */
#ifndef GEOACC_MESH_BENCH_H
#define GEOACC_MESH_BENCH_H

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace mesh_bench
{

struct Box
{
	double		lo[3];
	double		hi[3];
};

/* One job: a name and its boxes, clipped one after the other by CGAL, in one call by geoacc. */
struct Job
{
	std::string name;
	std::vector<Box> boxes;
};

inline double
now_ms()
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/*
 * Read a model written by `mesh_clip_bench model`: false (with a message
 * on stderr) for anything but binary little-endian PLY whose vertices are
 * double x y z and whose faces are triangles as uchar-counted uint lists.
 */
inline bool
read_model(const char *path, std::vector<double> &positions, std::vector<uint32_t> &triangles)
{
	FILE	   *f = fopen(path, "rb");
	std::string header;
	char		line[256];
	unsigned long long nvertices = 0,
				nfaces = 0;

	if (f == nullptr)
	{
		fprintf(stderr, "cannot open %s\n", path);
		return false;
	}
	while (fgets(line, sizeof(line), f) != nullptr)
	{
		header += line;
		sscanf(line, "element vertex %llu", &nvertices);
		sscanf(line, "element face %llu", &nfaces);
		if (strcmp(line, "end_header\n") == 0)
			break;
	}

	const char *expected = "format binary_little_endian 1.0\n";
	const bool	layout = header.find(expected) != std::string::npos
		&& header.find("property double x\nproperty double y\nproperty double z\nelement face") != std::string::npos
		&& header.find("property list uchar uint vertex_indices\nend_header\n") != std::string::npos;

	if (!layout)
	{
		fprintf(stderr, "%s is not a PLY model of double x y z and uint triangles\n", path);
		fclose(f);
		return false;
	}
	positions.resize(nvertices * 3);
	triangles.resize(nfaces * 3);

	bool		ok = fread(positions.data(), sizeof(double), positions.size(), f) == positions.size();

	for (unsigned long long t = 0; ok && t < nfaces; t++)
	{
		unsigned char n;

		ok = fread(&n, 1, 1, f) == 1 && n == 3 && fread(&triangles[t * 3], sizeof(uint32_t), 3, f) == 3;
		for (int k = 0; ok && k < 3; k++)
			ok = triangles[t * 3 + k] < nvertices;
	}
	fclose(f);
	if (!ok)
		fprintf(stderr, "%s: truncated, a face that is not a triangle, or an index out of range\n", path);
	return ok;
}

/* Plane i of n between lo and hi, as geoacc_grid_plane() computes it (the last is hi). */
inline double
grid_plane(double lo, double hi, uint32_t i, uint32_t n)
{
	return i >= n ? hi : lo + (hi - lo) * (double) i / (double) n;
}

/* The extent of the triangles' corners (vertices no triangle uses do not count). */
inline Box
extent(const std::vector<double> &positions, const std::vector<uint32_t> &triangles)
{
	Box			e = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};

	for (uint32_t v : triangles)
		for (int d = 0; d < 3; d++)
		{
			e.lo[d] = std::fmin(e.lo[d], positions[(size_t) v * 3 + d]);
			e.hi[d] = std::fmax(e.hi[d], positions[(size_t) v * 3 + d]);
		}
	return e;
}

/*
 * The jobs: one clip by the middle quarter of the extent in x and y (its
 * whole height), and the LOD passes of 4 x 4 x 1 and 8 x 8 x 2 tiles, tile
 * (ix, iy, iz) at index (ix * ny + iy) * nz + iz as geoacc_tile_grid lists them.
 */
inline std::vector<Job>
jobs(const Box &e)
{
	std::vector<Job> out;
	Box			middle = e;

	for (int d = 0; d < 2; d++)
	{
		middle.lo[d] = grid_plane(e.lo[d], e.hi[d], 1, 4);
		middle.hi[d] = grid_plane(e.lo[d], e.hi[d], 3, 4);
	}
	out.push_back({"one clip (middle quarter)", {middle}});
	for (uint32_t n : {4u, 8u})
	{
		const uint32_t nz = n == 4 ? 1 : 2;
		Job			job{n == 4 ? "LOD pass 4 x 4 x 1" : "LOD pass 8 x 8 x 2", {}};

		for (uint32_t ix = 0; ix < n; ix++)
			for (uint32_t iy = 0; iy < n; iy++)
				for (uint32_t iz = 0; iz < nz; iz++)
				{
					const uint32_t i[3] = {ix, iy, iz};
					const uint32_t count[3] = {n, n, nz};
					Box			b;

					for (int d = 0; d < 3; d++)
					{
						b.lo[d] = grid_plane(e.lo[d], e.hi[d], i[d], count[d]);
						b.hi[d] = grid_plane(e.lo[d], e.hi[d], i[d] + 1, count[d]);
					}
					job.boxes.push_back(b);
				}
		out.push_back(job);
	}
	return out;
}

/* Twice the area of a triangle, in long double (the sums of two programs then differ only by their cuts). */
inline long double
twice_area(const double *a, const double *b, const double *c)
{
	long double u[3],
				v[3];

	for (int d = 0; d < 3; d++)
	{
		u[d] = (long double) b[d] - a[d];
		v[d] = (long double) c[d] - a[d];
	}

	long double x = u[1] * v[2] - u[2] * v[1];
	long double y = u[2] * v[0] - u[0] * v[2];
	long double z = u[0] * v[1] - u[1] * v[0];

	return std::sqrt(x * x + y * y + z * z);
}

/* The area of an indexed mesh's triangles. */
inline double
area(const double *positions, const uint32_t *triangles, size_t ntriangles)
{
	long double sum = 0;

	for (size_t t = 0; t < ntriangles; t++)
		sum += twice_area(positions + (size_t) triangles[t * 3] * 3, positions + (size_t) triangles[t * 3 + 1] * 3,
						  positions + (size_t) triangles[t * 3 + 2] * 3);
	return (double) (sum / 2);
}

/*
 * A line of the per-box file both programs write, which test/device/mesh_clip.sh
 * joins: program, job number, box number, triangles, area.
 */
inline void
write_box_line(FILE *f, const char *program, size_t job, size_t box, uint64_t triangles, double area)
{
	if (f != nullptr)
		fprintf(f, "%s\t%zu\t%zu\t%llu\t%.17g\n", program, job, box, (unsigned long long) triangles, area);
}

}								/* namespace mesh_bench */

#endif							/* GEOACC_MESH_BENCH_H */
