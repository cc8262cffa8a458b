/*
 * mesh_clip_bench.cpp
 *
 * Core-level benchmark of geoacc_mesh_clip (no server): a real OFF mesh,
 * optionally tiled into copies side by side (each copy shifted by the
 * mesh's extent, so the copies form one larger scene) and placed at UTM
 * coordinates; then one clip by a box over the middle of the scene, and LOD
 * passes of 4 x 4 x 1 and 8 x 8 x 2 tiles, on the GPU (whole call, and its
 * upload, kernel and download times) and on the CPU twin (skipped above a
 * work limit, not extrapolated), and whether both return the same bits.
 *
 *   mesh_clip_bench MESH.off[.gz] COPIES_X COPIES_Y [CPU_MAX_WORK]
 *
 * CPU_MAX_WORK (default 2e8) caps triangles x boxes for the CPU runs.
 * Prints a markdown table.
 */
#include "geoacc_core.h"
#include "../mesh_off.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
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

double
now_ms()
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* One job on both devices: a table row. */
void
run(const char *job, const GeoaccMesh &mesh, const std::vector<GeoaccBox> &boxes, double cpu_max_work)
{
	const uint64_t work = (uint64_t) mesh.ntriangles * boxes.size();
	Results		gpu(boxes.size());
	GeoaccMeshClipTiming t{};
	double		start = now_ms();
	GeoaccStatus s = geoacc_mesh_clip(GEOACC_DEVICE_GPU, &mesh, boxes.data(), (uint32_t) boxes.size(), gpu.r.data(),
									  &t);
	double		gpu_ms = now_ms() - start;
	char		gpu_cell[160] = "-";
	char		kernel_cell[64] = "-";

	if (s == GEOACC_OK)
	{
		snprintf(gpu_cell, sizeof(gpu_cell), "%.1f (%.1f / %.1f / %.1f)", gpu_ms, t.upload_ms, t.kernel_ms,
				 t.download_ms);
		snprintf(kernel_cell, sizeof(kernel_cell), "%.3g", work / (t.kernel_ms / 1000) / 1e9);
	}
	else
		snprintf(gpu_cell, sizeof(gpu_cell), "failed: %s", geoacc_status_message());

	uint64_t	out_triangles = s == GEOACC_OK ? gpu.triangles() : 0;
	char		cpu_cell[64] = "skipped";
	char		ratio_cell[32] = "-";
	const char *same_cell = "-";

	if (work <= cpu_max_work)
	{
		Results		cpu(boxes.size());

		start = now_ms();
		GeoaccStatus c = geoacc_mesh_clip(GEOACC_DEVICE_CPU, &mesh, boxes.data(), (uint32_t) boxes.size(),
										  cpu.r.data(), nullptr);
		double		cpu_ms = now_ms() - start;

		if (c == GEOACC_OK)
		{
			bool		equal = s == GEOACC_OK;

			for (size_t b = 0; equal && b < boxes.size(); b++)
				equal = same(gpu.r[b], cpu.r[b]);
			snprintf(cpu_cell, sizeof(cpu_cell), "%.1f", cpu_ms);
			if (s == GEOACC_OK)
			{
				snprintf(ratio_cell, sizeof(ratio_cell), "%.1fx", cpu_ms / gpu_ms);
				same_cell = equal ? "yes" : "NO";
			}
			else
				out_triangles = cpu.triangles();
		}
		else
			snprintf(cpu_cell, sizeof(cpu_cell), "failed");
	}
	printf("| %s | %u | %zu | %llu | %s | %.3g | %s | %s | %s | %s |\n", job, mesh.ntriangles, boxes.size(),
		   (unsigned long long) out_triangles, gpu_cell, s == GEOACC_OK ? work / (gpu_ms / 1000) / 1e6 : 0.0,
		   kernel_cell, cpu_cell, ratio_cell, same_cell);
}

}								/* namespace */

int
main(int argc, char **argv)
{
	if (argc < 4)
	{
		fprintf(stderr, "usage: %s MESH.off[.gz] COPIES_X COPIES_Y [CPU_MAX_WORK]\n", argv[0]);
		return 2;
	}

	std::vector<double> p0;
	std::vector<uint32_t> t0;
	const int	cx = atoi(argv[2]);
	const int	cy = atoi(argv[3]);
	const double cpu_max_work = argc > 4 ? atof(argv[4]) : 2e8;

	if (!read_off_mesh(argv[1], p0, t0) || cx < 1 || cy < 1)
	{
		fprintf(stderr, "cannot read %s as OFF\n", argv[1]);
		return 1;
	}

	double		lo[3] = {INFINITY, INFINITY, INFINITY},
				hi[3] = {-INFINITY, -INFINITY, -INFINITY};

	for (size_t i = 0; i < p0.size(); i++)
	{
		lo[i % 3] = std::min(lo[i % 3], p0[i]);
		hi[i % 3] = std::max(hi[i % 3], p0[i]);
	}

	/* the copies side by side, at UTM coordinates */
	const uint32_t nv0 = (uint32_t) (p0.size() / 3);
	std::vector<double> positions;
	std::vector<uint32_t> triangles;

	positions.reserve(p0.size() * cx * cy);
	triangles.reserve(t0.size() * cx * cy);
	for (int i = 0; i < cx; i++)
		for (int j = 0; j < cy; j++)
		{
			uint32_t	base = (uint32_t) (positions.size() / 3);

			for (uint32_t v = 0; v < nv0; v++)
			{
				positions.push_back(500000 + (p0[v * 3] - lo[0]) + i * (hi[0] - lo[0]));
				positions.push_back(4000000 + (p0[v * 3 + 1] - lo[1]) + j * (hi[1] - lo[1]));
				positions.push_back(p0[v * 3 + 2]);
			}
			for (uint32_t x : t0)
				triangles.push_back(base + x);
		}

	GeoaccMesh	mesh = {(uint32_t) (positions.size() / 3), (uint32_t) (triangles.size() / 3), positions.data(),
						triangles.data(), 0, nullptr};
	GeoaccBox	extent = {500000, 4000000, lo[2], 500000 + cx * (hi[0] - lo[0]), 4000000 + cy * (hi[1] - lo[1]), hi[2]};
	GeoaccStatus init = geoacc_gpu_init();
	GeoaccDeviceInfo info{};

	if (init == GEOACC_OK)
		geoacc_gpu_device_info(0, &info);
	printf("mesh %s x %d x %d: %u vertices, %u triangles, extent %.1f x %.1f x %.1f m; GPU: %s\n\n", argv[1], cx, cy,
		   mesh.nvertices, mesh.ntriangles, extent.xmax - extent.xmin, extent.ymax - extent.ymin,
		   extent.zmax - extent.zmin, init == GEOACC_OK ? info.name : geoacc_status_message());
	printf("| job | triangles | boxes | output triangles | GPU ms (upload / kernel / download) | GPU Mtri/s "
		   "| kernel Gtri/s | CPU twin ms | GPU speed-up | same bits |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");

	/* a warm-up call, so that CUDA's start is not timed */
	{
		GeoaccMeshResult r{};
		GeoaccBox	small = {extent.xmin, extent.ymin, extent.zmin, extent.xmin + 1, extent.ymin + 1, extent.zmax};

		geoacc_mesh_clip(GEOACC_DEVICE_GPU, &mesh, &small, 1, &r, nullptr);
		geoacc_mesh_result_free(&r);
	}

	GeoaccBox	middle = {geoacc_grid_plane(extent.xmin, extent.xmax, 1, 4), geoacc_grid_plane(extent.ymin, extent.ymax, 1, 4),
						  extent.zmin, geoacc_grid_plane(extent.xmin, extent.xmax, 3, 4),
						  geoacc_grid_plane(extent.ymin, extent.ymax, 3, 4), extent.zmax};

	run("one clip (middle quarter)", mesh, {middle}, cpu_max_work);

	std::vector<GeoaccBox> tiles(16);

	geoacc_grid_tiles(&extent, 4, 4, 1, tiles.data());
	run("LOD pass 4 x 4 x 1", mesh, tiles, cpu_max_work);
	tiles.resize(128);
	geoacc_grid_tiles(&extent, 8, 8, 2, tiles.data());
	run("LOD pass 8 x 8 x 2", mesh, tiles, cpu_max_work);
	return 0;
}
