/*
 * mesh_clip_bench.cpp
 *
 * Core-level benchmark of geoacc_mesh_clip (no server), in two steps:
 *
 *   mesh_clip_bench model IN COPIES_X COPIES_Y OUT.ply [X0 Y0]
 *       a real mesh (OFF or PLY; gzip or xz compressed, or not) in
 *       COPIES_X x COPIES_Y copies side by side, each shifted by the mesh's
 *       extent so that the copies form one larger scene, with the scene's
 *       lower x y corner moved to (X0, Y0) when given (UTM coordinates);
 *       written as binary PLY with double coordinates (geoacc_ply_write),
 *       the model every benchmark program and the SQL benchmark read.
 *
 *   mesh_clip_bench run MODEL.ply [CPU_MAX_WORK [BOXES_FILE]]
 *       the jobs of mesh_bench.h (one clip by the middle quarter, LOD passes
 *       of 4 x 4 x 1 and 8 x 8 x 2 tiles), each in one core call on the GPU
 *       (upload, kernels and download timed) and on the CPU twin (skipped
 *       above CPU_MAX_WORK triangles x boxes, default 2e9, not
 *       extrapolated), whether both return the same bits, and the
 *       triangles and area inside the boxes; a markdown table on stdout, a
 *       line per box in BOXES_FILE for the comparison with CGAL.
 */
#include "geoacc_core.h"
#include "mesh_bench.h"
#include "../mesh_off.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace
{

struct Results
{
	std::vector<GeoaccMeshResult> r;

	explicit Results(size_t n) : r(n) {}
	~Results()
	{
		for (GeoaccMeshResult &x : r)
			geoacc_mesh_result_free(&x);
	}
	uint64_t	triangles() const
	{
		uint64_t	n = 0;

		for (const GeoaccMeshResult &x : r)
			n += x.ntriangles;
		return n;
	}
};

bool
same(const GeoaccMeshResult &a, const GeoaccMeshResult &b)
{
	return a.nvertices == b.nvertices && a.ntriangles == b.ntriangles
		&& (a.nvertices == 0 || memcmp(a.positions, b.positions, (size_t) a.nvertices * 24) == 0)
		&& (a.ntriangles == 0 || memcmp(a.triangles, b.triangles, (size_t) a.ntriangles * 12) == 0);
}

/* The whole file, through a decompressor chosen by its name (plain files pass through gzip -dcf). */
bool
read_file(const std::string &path, std::string &data)
{
	const bool	xz = path.size() > 3 && path.compare(path.size() - 3, 3, ".xz") == 0;
	std::string command = std::string(xz ? "xz -dc '" : "gzip -dcf '") + path + "' 2>/dev/null";
	FILE	   *f = popen(command.c_str(), "r");
	char		buffer[1 << 16];
	size_t		n;

	if (f == nullptr)
		return false;
	while ((n = fread(buffer, 1, sizeof(buffer), f)) > 0)
		data.append(buffer, n);
	return pclose(f) == 0 && !data.empty();
}

/* mesh_clip_bench model ... */
int
make_model(int argc, char **argv)
{
	if (argc != 6 && argc != 8)
	{
		fprintf(stderr, "usage: %s model IN COPIES_X COPIES_Y OUT.ply [X0 Y0]\n", argv[0]);
		return 2;
	}

	const std::string in = argv[2];
	const int	cx = atoi(argv[3]);
	const int	cy = atoi(argv[4]);
	const bool	move = argc == 8;
	const double origin[2] = {move ? atof(argv[6]) : 0, move ? atof(argv[7]) : 0};
	std::vector<double> p0;
	std::vector<uint32_t> t0;

	if (cx < 1 || cy < 1)
	{
		fprintf(stderr, "the copies must be at least 1 x 1\n");
		return 2;
	}
	if (in.find(".off") != std::string::npos)
	{
		if (!read_off_mesh(in, p0, t0))
		{
			fprintf(stderr, "cannot read %s as OFF\n", in.c_str());
			return 1;
		}
	}
	else
	{
		std::string data;
		GeoaccMeshResult r{};
		uint32_t	layout;

		if (!read_file(in, data) || geoacc_ply_read(data.data(), data.size(), &r, &layout) != GEOACC_OK)
		{
			fprintf(stderr, "cannot read %s as PLY: %s\n", in.c_str(), geoacc_status_message());
			return 1;
		}
		p0.assign(r.positions, r.positions + (size_t) r.nvertices * 3);
		t0.assign(r.triangles, r.triangles + (size_t) r.ntriangles * 3);
		geoacc_mesh_result_free(&r);
	}

	double		lo[3] = {INFINITY, INFINITY, INFINITY},
				hi[3] = {-INFINITY, -INFINITY, -INFINITY};

	for (size_t i = 0; i < p0.size(); i++)
	{
		lo[i % 3] = std::min(lo[i % 3], p0[i]);
		hi[i % 3] = std::max(hi[i % 3], p0[i]);
	}

	const uint32_t nv0 = (uint32_t) (p0.size() / 3);
	std::vector<double> positions;
	std::vector<uint32_t> triangles;

	positions.reserve(p0.size() * cx * cy);
	triangles.reserve(t0.size() * cx * cy);
	for (int i = 0; i < cx; i++)
		for (int j = 0; j < cy; j++)
		{
			const uint32_t base = (uint32_t) (positions.size() / 3);

			for (uint32_t v = 0; v < nv0; v++)
			{
				for (int d = 0; d < 2; d++)
				{
					const double x = p0[v * 3 + d];
					const double shift = (d == 0 ? i : j) * (hi[d] - lo[d]);

					positions.push_back(move ? origin[d] + (x - lo[d]) + shift : x + shift);
				}
				positions.push_back(p0[v * 3 + 2]);
			}
			for (uint32_t x : t0)
				triangles.push_back(base + x);
		}

	GeoaccMesh	mesh = {(uint32_t) (positions.size() / 3), (uint32_t) (triangles.size() / 3), positions.data(),
						triangles.data(), 0, nullptr};
	size_t		size = 0;

	if (geoacc_ply_write(&mesh, 0, nullptr, 0, &size) != GEOACC_OK)
	{
		fprintf(stderr, "cannot write the model: %s\n", geoacc_status_message());
		return 1;
	}

	std::vector<uint8_t> out(size);
	FILE	   *f = fopen(argv[5], "wb");

	if (geoacc_ply_write(&mesh, 0, out.data(), size, &size) != GEOACC_OK || f == nullptr
		|| fwrite(out.data(), 1, size, f) != size || fclose(f) != 0)
	{
		fprintf(stderr, "cannot write %s\n", argv[5]);
		return 1;
	}
	printf("%s: %u vertices, %u triangles, %zu bytes\n", argv[5], mesh.nvertices, mesh.ntriangles, size);
	return 0;
}

/* One job on both devices: a table row, and a line per box in `boxes_file`. */
void
run_job(size_t index, const mesh_bench::Job &job, const GeoaccMesh &mesh, double cpu_max_work, FILE *boxes_file)
{
	std::vector<GeoaccBox> boxes;

	for (const mesh_bench::Box &b : job.boxes)
		boxes.push_back({b.lo[0], b.lo[1], b.lo[2], b.hi[0], b.hi[1], b.hi[2]});

	const uint64_t work = (uint64_t) mesh.ntriangles * boxes.size();
	Results		gpu(boxes.size());
	GeoaccMeshClipTiming t{};
	double		start = mesh_bench::now_ms();
	GeoaccStatus s = geoacc_mesh_clip(GEOACC_DEVICE_GPU, &mesh, boxes.data(), (uint32_t) boxes.size(), gpu.r.data(),
									  &t);
	double		gpu_ms = mesh_bench::now_ms() - start;
	char		gpu_cell[160] = "-";
	char		kernel_cell[64] = "-";
	char		rate_cell[64] = "-";

	if (s == GEOACC_OK)
	{
		snprintf(gpu_cell, sizeof(gpu_cell), "%.1f (%.1f / %.1f / %.1f)", gpu_ms, t.upload_ms, t.kernel_ms,
				 t.download_ms);
		snprintf(kernel_cell, sizeof(kernel_cell), "%.3g", work / (t.kernel_ms / 1000) / 1e9);
		snprintf(rate_cell, sizeof(rate_cell), "%.3g", work / (gpu_ms / 1000) / 1e9);
	}
	else
		snprintf(gpu_cell, sizeof(gpu_cell), "failed: %s", geoacc_status_message());

	const Results *counted = s == GEOACC_OK ? &gpu : nullptr;
	Results		cpu(boxes.size());
	char		cpu_cell[64] = "skipped";
	char		ratio_cell[32] = "-";
	const char *same_cell = "-";

	if (work <= cpu_max_work)
	{
		start = mesh_bench::now_ms();
		GeoaccStatus c = geoacc_mesh_clip(GEOACC_DEVICE_CPU, &mesh, boxes.data(), (uint32_t) boxes.size(),
										  cpu.r.data(), nullptr);
		double		cpu_ms = mesh_bench::now_ms() - start;

		if (c == GEOACC_OK)
		{
			snprintf(cpu_cell, sizeof(cpu_cell), "%.1f", cpu_ms);
			if (s == GEOACC_OK)
			{
				bool		equal = true;

				for (size_t b = 0; equal && b < boxes.size(); b++)
					equal = same(gpu.r[b], cpu.r[b]);
				snprintf(ratio_cell, sizeof(ratio_cell), "%.1fx", cpu_ms / gpu_ms);
				same_cell = equal ? "yes" : "NO";
			}
			else
				counted = &cpu;
		}
		else
			snprintf(cpu_cell, sizeof(cpu_cell), "failed: %s", geoacc_status_message());
	}

	double		total_area = 0;

	if (counted != nullptr)
		for (size_t b = 0; b < boxes.size(); b++)
		{
			const GeoaccMeshResult &r = counted->r[b];
			double		a = mesh_bench::area(r.positions, r.triangles, r.ntriangles);

			total_area += a;
			mesh_bench::write_box_line(boxes_file, "geoacc", index, b, r.ntriangles, a);
		}
	printf("| %s | %u | %zu | %llu | %.10g | %s | %s | %s | %s | %s | %s |\n", job.name.c_str(), mesh.ntriangles,
		   boxes.size(), (unsigned long long) (counted ? counted->triangles() : 0), total_area, gpu_cell, rate_cell,
		   kernel_cell, cpu_cell, ratio_cell, same_cell);
	fflush(stdout);
}

/* mesh_clip_bench run ... */
int
run(int argc, char **argv)
{
	if (argc < 3 || argc > 5)
	{
		fprintf(stderr, "usage: %s run MODEL.ply [CPU_MAX_WORK [BOXES_FILE]]\n", argv[0]);
		return 2;
	}

	const double cpu_max_work = argc > 3 ? atof(argv[3]) : 2e9;
	std::vector<double> positions;
	std::vector<uint32_t> triangles;

	if (!mesh_bench::read_model(argv[2], positions, triangles))
		return 1;

	FILE	   *boxes_file = argc > 4 ? fopen(argv[4], "a") : nullptr;
	GeoaccMesh	mesh = {(uint32_t) (positions.size() / 3), (uint32_t) (triangles.size() / 3), positions.data(),
						triangles.data(), 0, nullptr};
	const mesh_bench::Box e = mesh_bench::extent(positions, triangles);
	const std::vector<mesh_bench::Job> jobs = mesh_bench::jobs(e);
	GeoaccStatus init = geoacc_gpu_init();
	GeoaccDeviceInfo info{};

	if (argc > 4 && boxes_file == nullptr)
	{
		fprintf(stderr, "cannot open %s\n", argv[4]);
		return 1;
	}
	if (init == GEOACC_OK)
		geoacc_gpu_device_info(0, &info);
	printf("model %s: %u vertices, %u triangles, extent %.6g x %.6g x %.6g; GPU: %s\n\n", argv[2], mesh.nvertices,
		   mesh.ntriangles, e.hi[0] - e.lo[0], e.hi[1] - e.lo[1], e.hi[2] - e.lo[2],
		   init == GEOACC_OK ? info.name : geoacc_status_message());
	printf("| job | triangles | boxes | output triangles | area | GPU ms (upload / kernels / download) "
		   "| GPU 1e9 tri x box/s | kernels 1e9 tri x box/s | CPU twin ms | GPU speed-up | same bits |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");

	/* a warm-up call, so that CUDA's start is not timed */
	{
		GeoaccMeshResult r{};
		GeoaccBox	small = {e.lo[0], e.lo[1], e.lo[2], e.lo[0], e.lo[1], e.hi[2]};

		geoacc_mesh_clip(GEOACC_DEVICE_GPU, &mesh, &small, 1, &r, nullptr);
		geoacc_mesh_result_free(&r);
	}
	for (size_t j = 0; j < jobs.size(); j++)
		run_job(j, jobs[j], mesh, cpu_max_work, boxes_file);
	if (boxes_file != nullptr)
		fclose(boxes_file);
	return 0;
}

}								/* namespace */

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "model") == 0)
		return make_model(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return run(argc, argv);
	fprintf(stderr, "usage: %s model IN COPIES_X COPIES_Y OUT.ply [X0 Y0]\n"
			"       %s run MODEL.ply [CPU_MAX_WORK [BOXES_FILE]]\n", argv[0], argv[0]);
	return 2;
}
