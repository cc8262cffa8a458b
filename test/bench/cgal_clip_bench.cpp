/*
 * cgal_clip_bench.cpp
 *
 * The established CPU clipper as a baseline for gpu_mesh_clip: CGAL's
 * Polygon_mesh_processing::clip of a surface mesh by an Iso_cuboid_3
 * (corefinement with the box's triangulated faces; the box is closed, as
 * geoacc's: with the default use_compact_clipper, parts lying on its faces
 * are kept).  A separate program that never links geoacc: it reads the
 * model that `mesh_clip_bench model` wrote and clips it by the boxes of
 * mesh_bench.h, a box at a time, as a CGAL user tiles a mesh:
 *
 *   - "whole mesh": for each box, a copy of the whole mesh clipped in place
 *     (PMP::clip modifies its mesh), the copy timed apart from the clip;
 *   - "faces near the box": for each box, a mesh of the faces whose bounding
 *     boxes meet it (the rest cannot reach it), then clipped.
 *
 * A job stops taking boxes once it has run BUDGET_S seconds (default 60);
 * the whole pass is then extrapolated from the boxes done, and says so.
 *
 *   cgal_clip_bench MODEL.ply [BUDGET_S [BOXES_FILE]]
 *
 * Prints a markdown table; BOXES_FILE gets a line per box (mesh_bench.h).
 * Built statically (Makefile: test/bench/cgal_clip_bench) with Debian 12's
 * libcgal-dev 5.5, GMP and MPFR.
 */
#include "mesh_bench.h"

#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/Polygon_mesh_processing/clip.h>
#include <CGAL/Polygon_mesh_processing/orient_polygon_soup.h>
#include <CGAL/Polygon_mesh_processing/polygon_soup_to_polygon_mesh.h>
#include <CGAL/Surface_mesh.h>
#include <CGAL/version.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace PMP = CGAL::Polygon_mesh_processing;

using Kernel = CGAL::Exact_predicates_inexact_constructions_kernel;
using Point = Kernel::Point_3;
using Mesh = CGAL::Surface_mesh<Point>;
using Face = std::array<std::size_t, 3>;

namespace
{

/*
 * A triangle soup as a surface mesh.  Where the soup is not a manifold
 * mesh as it is (edges of three faces, vertices where fans meet), CGAL's
 * orient_polygon_soup duplicates the vertices there first: the triangles,
 * and so the area, stay the same.
 */
Mesh
soup_to_mesh(std::vector<Point> points, std::vector<Face> faces, bool *repaired)
{
	Mesh		mesh;

	*repaired = !PMP::is_polygon_soup_a_polygon_mesh(faces);
	if (*repaired)
		PMP::orient_polygon_soup(points, faces);
	PMP::polygon_soup_to_polygon_mesh(points, faces, mesh);
	return mesh;
}

/* The triangles of a clipped mesh and their area. */
double
mesh_area(const Mesh &mesh, uint64_t *triangles)
{
	long double sum = 0;

	*triangles = 0;
	for (Mesh::Face_index f : mesh.faces())
	{
		double		p[3][3];
		int			k = 0;

		for (Mesh::Vertex_index v : CGAL::vertices_around_face(mesh.halfedge(f), mesh))
		{
			if (k < 3)
				for (int d = 0; d < 3; d++)
					p[k][d] = mesh.point(v)[d];
			k++;
		}
		if (k == 3)
			sum += mesh_bench::twice_area(p[0], p[1], p[2]);
		(*triangles)++;
	}
	return (double) (sum / 2);
}

/* Clip `mesh` in place by box b; false (and why in *error) when CGAL throws. */
bool
clip(Mesh &mesh, const mesh_bench::Box &b, std::string *error)
{
	try
	{
		PMP::clip(mesh, Kernel::Iso_cuboid_3(Point(b.lo[0], b.lo[1], b.lo[2]), Point(b.hi[0], b.hi[1], b.hi[2])),
				  CGAL::parameters::allow_self_intersections(true));
		return true;
	}
	catch (const std::exception &e)
	{
		*error = e.what();
		return false;
	}
}

struct JobResult
{
	size_t		done = 0;
	size_t		failed = 0;
	uint64_t	triangles = 0;
	double		area = 0;
	double		prepare_ms = 0;		/* copies of the mesh, or meshes of the near faces */
	double		clip_ms = 0;
	std::string error;
};

void
print_row(const char *variant, const mesh_bench::Job &job, const JobResult &r)
{
	const double ms = r.prepare_ms + r.clip_ms;
	const bool	all = r.done == job.boxes.size();
	char		pass[96];

	if (all)
		snprintf(pass, sizeof(pass), "%.1f", ms);
	else if (r.done > 0)
		snprintf(pass, sizeof(pass), "%.0f (extrapolated from %zu box%s)", ms / r.done * job.boxes.size(), r.done,
				 r.done == 1 ? "" : "es");
	else
		snprintf(pass, sizeof(pass), "-");
	printf("| %s | %s | %zu | %zu%s | %llu | %.10g | %.1f | %.1f | %s |\n", job.name.c_str(), variant,
		   job.boxes.size(), r.done, r.failed ? (" (" + std::to_string(r.failed) + " failed)").c_str() : "",
		   (unsigned long long) r.triangles, r.area, r.prepare_ms, r.clip_ms, pass);
	if (!r.error.empty())
		printf("\n(CGAL: %s)\n\n", r.error.c_str());
	fflush(stdout);
}

}								/* namespace */

int
main(int argc, char **argv)
{
	if (argc < 2 || argc > 4)
	{
		fprintf(stderr, "usage: %s MODEL.ply [BUDGET_S [BOXES_FILE]]\n", argv[0]);
		return 2;
	}

	const double budget_ms = (argc > 2 ? atof(argv[2]) : 60) * 1000;
	FILE	   *boxes_file = argc > 3 ? fopen(argv[3], "a") : nullptr;
	std::vector<double> positions;
	std::vector<uint32_t> triangles;

	if (argc > 3 && boxes_file == nullptr)
	{
		fprintf(stderr, "cannot open %s\n", argv[3]);
		return 1;
	}
	if (!mesh_bench::read_model(argv[1], positions, triangles))
		return 1;

	const size_t nfaces = triangles.size() / 3;
	std::vector<Point> points;
	std::vector<Face> faces(nfaces);

	points.reserve(positions.size() / 3);
	for (size_t v = 0; v < positions.size() / 3; v++)
		points.emplace_back(positions[v * 3], positions[v * 3 + 1], positions[v * 3 + 2]);
	for (size_t f = 0; f < nfaces; f++)
		faces[f] = {triangles[f * 3], triangles[f * 3 + 1], triangles[f * 3 + 2]};

	double		start = mesh_bench::now_ms();
	bool		repaired;
	const Mesh	whole = soup_to_mesh(points, faces, &repaired);
	const double build_ms = mesh_bench::now_ms() - start;
	const mesh_bench::Box e = mesh_bench::extent(positions, triangles);
	const std::vector<mesh_bench::Job> jobs = mesh_bench::jobs(e);

	/* each face's bounding box, for the near faces */
	std::vector<mesh_bench::Box> face_boxes(nfaces);

	for (size_t f = 0; f < nfaces; f++)
		for (int d = 0; d < 3; d++)
		{
			const double a = positions[(size_t) triangles[f * 3] * 3 + d];
			const double b = positions[(size_t) triangles[f * 3 + 1] * 3 + d];
			const double c = positions[(size_t) triangles[f * 3 + 2] * 3 + d];

			face_boxes[f].lo[d] = std::min(a, std::min(b, c));
			face_boxes[f].hi[d] = std::max(a, std::max(b, c));
		}

	/* the near faces' numbering of the points, reset after each box */
	std::vector<size_t> local_index(points.size(), SIZE_MAX);
	std::vector<size_t> touched;

	printf("model %s: %zu vertices, %zu triangles; CGAL %s, Surface_mesh of %zu vertices (%s) built in %.0f ms; "
		   "a job stops taking boxes after %.0f s\n\n", argv[1], positions.size() / 3, nfaces, CGAL_VERSION_STR,
		   (size_t) whole.number_of_vertices(),
		   repaired ? "vertices duplicated where the soup is not manifold" : "the soup as it is", build_ms,
		   budget_ms / 1000);
	printf("| job | CGAL, a box at a time | boxes | boxes done | output triangles | area | copy / near-face mesh ms "
		   "| clip ms | whole pass ms |\n");
	printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");

	for (size_t j = 0; j < jobs.size(); j++)
	{
		const mesh_bench::Job &job = jobs[j];

		for (int near = 0; near < 2; near++)
		{
			JobResult	r;
			const char *program = near ? "cgal_near" : "cgal";

			for (size_t b = 0; b < job.boxes.size() && r.prepare_ms + r.clip_ms < budget_ms; b++)
			{
				const mesh_bench::Box &box = job.boxes[b];
				Mesh		m;

				start = mesh_bench::now_ms();
				if (!near)
					m = whole;
				else
				{
					/* the faces whose boxes meet the box, over their own points */
					std::vector<Point> close_points;
					std::vector<Face> close;

					for (size_t f = 0; f < nfaces; f++)
					{
						bool		meets = true;

						for (int d = 0; d < 3; d++)
							meets = meets && face_boxes[f].lo[d] <= box.hi[d] && face_boxes[f].hi[d] >= box.lo[d];
						if (!meets)
							continue;

						Face		local;

						for (int k = 0; k < 3; k++)
						{
							size_t		v = faces[f][k];

							if (local_index[v] == SIZE_MAX)
							{
								local_index[v] = close_points.size();
								close_points.push_back(points[v]);
								touched.push_back(v);
							}
							local[k] = local_index[v];
						}
						close.push_back(local);
					}
					for (size_t v : touched)
						local_index[v] = SIZE_MAX;
					touched.clear();

					bool		unused;

					m = soup_to_mesh(std::move(close_points), std::move(close), &unused);
				}
				r.prepare_ms += mesh_bench::now_ms() - start;
				start = mesh_bench::now_ms();

				const bool	ok = clip(m, box, &r.error);

				r.clip_ms += mesh_bench::now_ms() - start;
				r.done++;
				if (!ok)
				{
					r.failed++;
					continue;
				}

				uint64_t	n;
				const double a = mesh_area(m, &n);

				r.triangles += n;
				r.area += a;
				mesh_bench::write_box_line(boxes_file, program, j, b, n, a);
			}
			print_row(near ? "faces near the box" : "whole mesh", job, r);
		}
	}
	if (boxes_file != nullptr)
		fclose(boxes_file);
	return 0;
}
