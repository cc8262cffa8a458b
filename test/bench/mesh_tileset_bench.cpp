/*
 * mesh_tileset_bench.cpp
 *
 * The tileset benchmark at the core level, on a model written by
 * `mesh_clip_bench model` (binary PLY, double x y z):
 *
 *   mesh_tileset_bench MODEL.ply LEVELS CELLS
 *
 * prints, for every parent level, the clustering on the GPU (kernels only,
 * and with its transfers) and on the CPU twin, the same bits, triangles per
 * second; then the whole tileset (simplification, errors, clips, files) on
 * both devices, the same files, with the core's stages; then, when built
 * with meshoptimizer (-DGEOACC_WITH_MESHOPT, Debian's libmeshoptimizer-dev),
 * meshopt_simplify over the same tiles: each parent tile's full-resolution
 * clip simplified to the level's ratio of triangles with its border locked
 * (meshopt_SimplifyLockBorder, which is how a tile-by-tile simplifier stays
 * crack-free), one tile after the other on one CPU core, with its own error
 * measure next to geoacc's measured level error.  Without a GPU the GPU
 * lines say so.
 */
#include "geoacc_core.h"
#include "mesh_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifdef GEOACC_WITH_MESHOPT
#include <meshoptimizer.h>
#endif

namespace
{

bool
same_mesh(const GeoaccMeshResult &a, const GeoaccMeshResult &b)
{
	return a.nvertices == b.nvertices && a.ntriangles == b.ntriangles
		&& (a.nvertices == 0 || memcmp(a.positions, b.positions, (size_t) a.nvertices * 24) == 0)
		&& (a.ntriangles == 0 || memcmp(a.triangles, b.triangles, (size_t) a.ntriangles * 12) == 0);
}

bool
same_tileset(const GeoaccTileset &a, const GeoaccTileset &b)
{
	if (a.nfiles != b.nfiles)
		return false;
	for (uint32_t i = 0; i < a.nfiles; i++)
		if (strcmp(a.files[i].path, b.files[i].path) != 0 || a.files[i].size != b.files[i].size
			|| memcmp(a.files[i].data, b.files[i].data, a.files[i].size) != 0)
			return false;
	return true;
}

/* The clustering grid of a level, as the tileset makes it. */
void
level_grid(const GeoaccBox &e, uint32_t level, uint32_t cells, uint32_t n[3])
{
	n[0] = n[1] = (1u << level) * cells;

	double		width = (e.xmax - e.xmin) / n[0];
	double		nz = width > 0 ? std::ceil((e.zmax - e.zmin) / width) : 1;

	n[2] = (uint32_t) std::min(std::max(nz, 1.0), (double) (1u << 20));
}

}								/* namespace */

int
main(int argc, char **argv)
{
	if (argc != 4)
	{
		fprintf(stderr, "usage: %s MODEL.ply LEVELS CELLS\n", argv[0]);
		return 2;
	}

	std::vector<double> positions;
	std::vector<uint32_t> triangles;

	if (!mesh_bench::read_model(argv[1], positions, triangles))
		return 1;

	const uint32_t levels = (uint32_t) atoi(argv[2]);
	const uint32_t cells = (uint32_t) atoi(argv[3]);
	GeoaccMesh	mesh = {(uint32_t) (positions.size() / 3), (uint32_t) (triangles.size() / 3), positions.data(),
						triangles.data(), 0, nullptr};
	GeoaccBox	extent;
	double		origin[3];
	const bool	gpu = geoacc_gpu_init() == GEOACC_OK;
	int			status = 0;

	if (geoacc_mesh_tileset_extent(&mesh, &extent, origin) != GEOACC_OK)
	{
		fprintf(stderr, "%s\n", geoacc_status_message());
		return 1;
	}
	printf("model %s: %u vertices, %u triangles; %u levels, %u cells a tile; GPU: %s\n\n", argv[1], mesh.nvertices,
		   mesh.ntriangles, levels, cells, gpu ? "yes" : "none");

	/* clustering, level by level */
	printf("| level | grid | triangles out | GPU kernels ms | GPU with transfers ms | CPU ms | kernel Gtri/s | same bits |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");

	std::vector<uint64_t> level_triangles(levels, mesh.ntriangles);

	for (uint32_t l = 0; l + 1 < levels; l++)
	{
		uint32_t	n[3];
		GeoaccMeshResult cpu{},
					gpu_out{};
		double		kernel_ms = 0,
					t0,
					cpu_ms,
					gpu_ms = NAN;

		level_grid(extent, l, cells, n);
		t0 = mesh_bench::now_ms();
		if (geoacc_mesh_cluster(GEOACC_DEVICE_CPU, &mesh, &extent, n[0], n[1], n[2], &cpu, nullptr) != GEOACC_OK)
		{
			fprintf(stderr, "%s\n", geoacc_status_message());
			return 1;
		}
		cpu_ms = mesh_bench::now_ms() - t0;
		level_triangles[l] = cpu.ntriangles;

		bool		same = true;

		if (gpu)
		{
			t0 = mesh_bench::now_ms();
			if (geoacc_mesh_cluster(GEOACC_DEVICE_GPU, &mesh, &extent, n[0], n[1], n[2], &gpu_out, &kernel_ms)
				!= GEOACC_OK)
			{
				fprintf(stderr, "%s\n", geoacc_status_message());
				return 1;
			}
			gpu_ms = mesh_bench::now_ms() - t0;
			same = same_mesh(cpu, gpu_out);
			status |= !same;
		}
		printf("| %u | %u x %u x %u | %u | %.1f | %.1f | %.1f | %.2f | %s |\n", l, n[0], n[1], n[2], cpu.ntriangles,
			   gpu ? kernel_ms : NAN, gpu_ms, cpu_ms, gpu ? mesh.ntriangles / kernel_ms / 1e6 : NAN,
			   gpu ? (same ? "yes" : "NO") : "-");
		geoacc_mesh_result_free(&cpu);
		geoacc_mesh_result_free(&gpu_out);
	}

	/* the whole tileset */
	GeoaccTilesetOptions o;

	memset(&o, 0, sizeof(o));
	o.levels = levels;
	o.cells = cells;
	for (int i = 0; i < 4; i++)
		o.transform[i * 5] = 1;
	o.generator = "mesh_tileset_bench";

	GeoaccTileset cpu_ts{},
				gpu_ts{};
	GeoaccTilesetTiming ct{},
				gt{};

	/* the CPU twin on every core: its error measurement splits over threads (geoacc.cpu_threads) */
	const int	cpu_threads = (int) std::max(1u, std::thread::hardware_concurrency());

	geoacc_cpu_set_threads(cpu_threads);
	if (geoacc_mesh_tileset(GEOACC_DEVICE_CPU, &mesh, &o, &cpu_ts, &ct) != GEOACC_OK)
	{
		fprintf(stderr, "%s\n", geoacc_status_message());
		return 1;
	}
	geoacc_cpu_set_threads(1);
	if (gpu && geoacc_mesh_tileset(GEOACC_DEVICE_GPU, &mesh, &o, &gpu_ts, &gt) != GEOACC_OK)
	{
		fprintf(stderr, "%s\n", geoacc_status_message());
		return 1;
	}

	size_t		bytes = 0;

	for (uint32_t i = 0; i < cpu_ts.nfiles; i++)
		bytes += cpu_ts.files[i].size;
	printf("\n| tileset | total ms | simplify ms | error ms | clip ms | write ms | kernels ms |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- |\n");
	printf("| CPU twin, %d threads | %.1f | %.1f | %.1f | %.1f | %.1f | - |\n", cpu_threads, ct.compute_ms,
		   ct.simplify_ms, ct.error_ms, ct.clip_ms, ct.write_ms);
	if (gpu)
		printf("| GPU | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", gt.compute_ms, gt.simplify_ms, gt.error_ms,
			   gt.clip_ms, gt.write_ms, gt.kernel_ms);
	printf("\n%u files, %zu bytes; GPU and CPU files the same: %s; CPU/GPU %.1fx\n", cpu_ts.nfiles, bytes,
		   gpu ? (same_tileset(cpu_ts, gpu_ts) ? "yes" : "NO") : "-", gpu ? ct.compute_ms / gt.compute_ms : NAN);
	if (gpu)
		status |= !same_tileset(cpu_ts, gpu_ts);
	printf("\n| level | triangles | tiles | measured m | geometricError m |\n| --- | --- | --- | --- | --- |\n");
	for (uint32_t l = 0; l < levels; l++)
		printf("| %u | %llu | %u | %.4g | %.4g |\n", l, (unsigned long long) cpu_ts.triangles[l], cpu_ts.tiles[l],
			   cpu_ts.measured[l], cpu_ts.geometric_error[l]);

#ifdef GEOACC_WITH_MESHOPT
	/* meshopt_simplify over the same tiles: each parent tile's full-resolution clip */
	printf("\n| level | meshopt tiles | triangles in | triangles out | meshopt ms (1 core) | meshopt error m | "
		   "geoacc error m |\n| --- | --- | --- | --- | --- | --- | --- |\n");
	for (uint32_t l = 0; l + 1 < levels; l++)
	{
		const uint32_t n = 1u << l;
		const double ratio = (double) level_triangles[l] / mesh.ntriangles;
		std::vector<GeoaccBox> boxes((size_t) n * n);
		double		ms = 0,
					worst = 0;
		uint64_t	in = 0,
					out = 0;

		geoacc_grid_tiles(&extent, n, n, 1, boxes.data());
		for (const GeoaccBox &b : boxes)
		{
			GeoaccMeshResult tile{};

			if (geoacc_mesh_clip(GEOACC_DEVICE_CPU, &mesh, &b, 1, &tile, nullptr) != GEOACC_OK || tile.ntriangles == 0)
			{
				geoacc_mesh_result_free(&tile);
				continue;
			}

			/* float positions relative to the tile, as a renderer's simplifier takes them */
			std::vector<float> fp((size_t) tile.nvertices * 3);
			std::vector<unsigned int> dst((size_t) tile.ntriangles * 3);

			for (uint32_t v = 0; v < tile.nvertices; v++)
				for (int c = 0; c < 3; c++)
					fp[(size_t) v * 3 + c] = (float) (tile.positions[(size_t) v * 3 + c] - origin[c]);

			float		error = 0;
			size_t		target = std::max<size_t>(3, (size_t) (tile.ntriangles * ratio) * 3);
			double		t0 = mesh_bench::now_ms();
			size_t		k = meshopt_simplify(dst.data(), tile.triangles, (size_t) tile.ntriangles * 3, fp.data(),
											 tile.nvertices, 12, target, 1.0f, meshopt_SimplifyLockBorder, &error);

			ms += mesh_bench::now_ms() - t0;
			worst = std::max(worst, (double) error * meshopt_simplifyScale(fp.data(), tile.nvertices, 12));
			in += tile.ntriangles;
			out += k / 3;
			geoacc_mesh_result_free(&tile);
		}
		printf("| %u | %u | %llu | %llu | %.1f | %.4g | %.4g |\n", l, n * n, (unsigned long long) in,
			   (unsigned long long) out, ms, worst, cpu_ts.geometric_error[l]);
	}
#else
	printf("\nmeshoptimizer: not built in (make MESHOPT_DIR=... test/bench/mesh_tileset_bench)\n");
#endif
	geoacc_tileset_free(&cpu_ts);
	geoacc_tileset_free(&gpu_ts);
	return status;
}
