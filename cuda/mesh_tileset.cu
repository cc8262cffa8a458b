/*
 * mesh_tileset.cu
 *
 * The GPU side of tilesets: vertex clustering and the measured distance,
 * with the arithmetic of mesh_tileset.h.
 *
 * Clustering: a thread per vertex finds its cell key; a stable radix sort
 * (CUB) of (key, vertex) groups the cells, their heads numbered by an
 * exclusive sum; a thread per triangle writes its three quadric terms
 * (cell, or none for a repeated cell), which a stable radix sort groups by
 * cell in (triangle, corner) order; a radix sort of the edges' keys finds
 * the open edges (a key that occurs once); a thread per cell sums its vertices and
 * terms in that order, as the CPU twin does, and solves for its vertex;
 * surviving triangles (three distinct cells) and the cells they use are
 * compacted by exclusive sums.
 *
 * Distance: a thread per level triangle counts the cells of its box, an
 * exclusive sum places its (key, triangle) entries, a radix sort files them;
 * a thread per vertex, then a thread per triangle for its grid samples,
 * searches the cells ring by ring; the largest squared distance and bound
 * are CUB maxima (exact: the same on both devices).
 *
 * The tiles' clips are mesh_clip_gpu's.
 */
#include "cuda_util.cuh"
#include "mesh_clip.h"
#include "mesh_tileset.h"
#include "primitives.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>

#include <chrono>
#include <vector>

namespace geoacc
{

namespace
{

constexpr unsigned THREADS = 256;

double
ms_since(std::chrono::steady_clock::time_point t)
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

/* Bits that hold every key below `limit`. */
int
bits_for(uint64_t limit)
{
	int			b = 1;

	while (b < 64 && (limit >> b) != 0)
		b++;
	return b;
}

/* A stable radix sort of (keys, values) pairs into the _out buffers. */
template <class Key>
void
sort_pairs(const Key *keys_in, Key *keys_out, const uint32_t *values_in, uint32_t *values_out, uint32_t n, int end_bit)
{
	size_t		bytes = 0;

	if (n == 0)
		return;
	GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in, values_out, n, 0,
													end_bit, stream()));

	DeviceBuffer<uint8_t> temp(bytes);

	GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys_in, keys_out, values_in, values_out, n, 0,
													end_bit, stream()));
}

/* The largest of n doubles (0 for none). */
double
max_of(const double *d_values, uint32_t n)
{
	if (n == 0)
		return 0;

	size_t		bytes = 0;
	DeviceBuffer<double> d_max(1);
	double		result;

	GEOACC_CUDA_TRY(cub::DeviceReduce::Max(nullptr, bytes, d_values, d_max.data(), n, stream()));

	DeviceBuffer<uint8_t> temp(bytes);

	GEOACC_CUDA_TRY(cub::DeviceReduce::Max(temp.data(), bytes, d_values, d_max.data(), n, stream()));
	d_max.download(&result, 1);
	return result;
}

/* ---------------------------------------------------------- clustering */

__global__ void
iota_kernel(uint32_t *out, uint32_t n)
{
	uint32_t	i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = i;
}

__global__ void
vertex_key_kernel(const double *positions, uint32_t nv, TilesetGrid grid, uint64_t *keys)
{
	uint32_t	v = blockIdx.x * blockDim.x + threadIdx.x;

	if (v < nv)
		keys[v] = tileset_point_key(grid, positions + (size_t) v * 3);
}

/* 1 where a sorted key starts a cell. */
__global__ void
head_kernel(const uint64_t *sorted, uint32_t n, uint32_t *heads)
{
	uint32_t	r = blockIdx.x * blockDim.x + threadIdx.x;

	if (r < n)
		heads[r] = r == 0 || sorted[r] != sorted[r - 1];
}

/* Each cell's key and first sorted vertex; each vertex's cell. */
__global__ void
cell_kernel(const uint64_t *sorted, const uint32_t *order, const uint32_t *heads, const uint32_t *head_sums,
			uint32_t n, uint64_t *cell_keys, uint32_t *cell_first, uint32_t *vcell)
{
	uint32_t	r = blockIdx.x * blockDim.x + threadIdx.x;

	if (r >= n)
		return;

	uint32_t	c = head_sums[r] + heads[r] - 1;

	if (heads[r])
	{
		cell_keys[c] = sorted[r];
		cell_first[c] = r;
	}
	vcell[order[r]] = c;
}

__global__ void
quadric_cell_kernel(const uint32_t *triangles, uint32_t nt, const uint32_t *vcell, uint32_t *qcell)
{
	uint32_t	t = blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= nt)
		return;

	const uint32_t *tri = triangles + (size_t) t * 3;
	uint32_t	c0 = vcell[tri[0]],
				c1 = vcell[tri[1]],
				c2 = vcell[tri[2]];

	qcell[(size_t) t * 3] = c0;
	qcell[(size_t) t * 3 + 1] = c1 == c0 ? TILESET_NO_CELL : c1;
	qcell[(size_t) t * 3 + 2] = (c2 == c0 || c2 == c1) ? TILESET_NO_CELL : c2;
}

__global__ void
edge_key_kernel(const uint32_t *triangles, uint32_t nt, uint64_t *keys)
{
	uint32_t	t = blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= nt)
		return;
	for (int j = 0; j < 3; j++)
		keys[(size_t) t * 3 + j] = tileset_edge_key(triangles[(size_t) t * 3 + j],
													triangles[(size_t) t * 3 + (j == 2 ? 0 : j + 1)]);
}

/* The open edges: a sorted edge key that occurs once (an edge of two equal ends is none). */
__global__ void
open_edge_kernel(const uint64_t *sorted, const uint32_t *order, uint32_t n, uint8_t *edge_open)
{
	uint32_t	r = blockIdx.x * blockDim.x + threadIdx.x;

	if (r >= n)
		return;

	const uint64_t key = sorted[r];
	const bool	alone = (r == 0 || sorted[r - 1] != key) && (r + 1 == n || sorted[r + 1] != key);

	edge_open[order[r]] = alone && (uint32_t) (key >> 32) != (uint32_t) key;
}

__global__ void
border_kernel(const uint8_t *edge_open, uint32_t nt, uint8_t *border)
{
	uint32_t	t = blockIdx.x * blockDim.x + threadIdx.x;

	if (t < nt)
		border[t] = (uint8_t) (edge_open[(size_t) t * 3] | edge_open[(size_t) t * 3 + 1] << 1
							   | edge_open[(size_t) t * 3 + 2] << 2);
}

/* Where cell c's quadric terms start: the first sorted term whose cell is >= c. */
__global__ void
quadric_first_kernel(const uint32_t *sorted_cells, uint32_t nterms, uint32_t ncells, uint32_t *qfirst)
{
	uint32_t	c = blockIdx.x * blockDim.x + threadIdx.x;

	if (c > ncells)
		return;

	uint32_t	lo = 0,
				hi = nterms;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (sorted_cells[mid] < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	qfirst[c] = lo;
}

/* The vertex of every cell, sums in the CPU twin's order. */
__global__ void
cell_vertex_kernel(const double *positions, const float *attributes, uint32_t k, const uint32_t *triangles,
				   const uint8_t *border, const uint32_t *vcell, TilesetGrid grid, const uint64_t *cell_keys,
				   const uint32_t *cell_first, const uint32_t *vorder, const uint32_t *qfirst, const uint32_t *qorder,
				   uint32_t ncells, double *cell_pos, float *cell_attr)
{
	uint32_t	c = blockIdx.x * blockDim.x + threadIdx.x;

	if (c >= ncells)
		return;

	double		lo[3],
				hi[3],
				o[3],
				sum[3] = {0, 0, 0};
	TilesetQuadric q;

	tileset_cell_box(grid, cell_keys[c], lo, hi);
	tileset_cell_centre(lo, hi, o);
	for (uint32_t r = cell_first[c]; r < cell_first[c + 1]; r++)
		for (int i = 0; i < 3; i++)
			sum[i] += positions[(size_t) vorder[r] * 3 + i] - o[i];
	tileset_quadric_zero(q);
	for (uint32_t r = qfirst[c]; r < qfirst[c + 1]; r++)
	{
		const uint32_t t = qorder[r] / 3;

		tileset_quadric_add_term(q, positions, triangles + (size_t) t * 3, border[t], vcell, c, o);
	}
	tileset_cell_vertex(q, sum, cell_first[c + 1] - cell_first[c], lo, hi, cell_pos + (size_t) c * 3);
	for (uint32_t a = 0; a < k; a++)
	{
		double		s = 0;

		for (uint32_t r = cell_first[c]; r < cell_first[c + 1]; r++)
			s += attributes[(size_t) vorder[r] * k + a];
		cell_attr[(size_t) c * k + a] = (float) (s / (double) (cell_first[c + 1] - cell_first[c]));
	}
}

__global__ void
survive_kernel(const uint32_t *triangles, uint32_t nt, const uint32_t *vcell, uint32_t *keep, uint32_t *used)
{
	uint32_t	t = blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= nt)
		return;

	const uint32_t *tri = triangles + (size_t) t * 3;
	uint32_t	c0 = vcell[tri[0]],
				c1 = vcell[tri[1]],
				c2 = vcell[tri[2]];
	bool		k = c0 != c1 && c1 != c2 && c0 != c2;

	keep[t] = k;
	if (k)
	{
		/* the same value from every writer */
		used[c0] = 1;
		used[c1] = 1;
		used[c2] = 1;
	}
}

__global__ void
write_triangles_kernel(const uint32_t *triangles, uint32_t nt, const uint32_t *vcell, const uint32_t *keep,
					   const uint32_t *keep_sums, const uint32_t *number, uint32_t *out)
{
	uint32_t	t = blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= nt || !keep[t])
		return;
	for (int i = 0; i < 3; i++)
		out[(size_t) keep_sums[t] * 3 + i] = number[vcell[triangles[(size_t) t * 3 + i]]];
}

__global__ void
gather_cells_kernel(const double *cell_pos, const float *cell_attr, uint32_t k, const uint32_t *used,
					const uint32_t *number, uint32_t ncells, double *out_pos, float *out_attr)
{
	uint32_t	c = blockIdx.x * blockDim.x + threadIdx.x;

	if (c >= ncells || !used[c])
		return;
	for (int i = 0; i < 3; i++)
		out_pos[(size_t) number[c] * 3 + i] = cell_pos[(size_t) c * 3 + i];
	for (uint32_t a = 0; a < k; a++)
		out_attr[(size_t) number[c] * k + a] = cell_attr[(size_t) c * k + a];
}

/* ------------------------------------------------------------ distance */

__global__ void
bucket_count_kernel(const double *positions, const uint32_t *triangles, uint32_t nt, TilesetGrid grid,
					uint32_t *counts)
{
	uint32_t	t = blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= nt)
		return;

	const uint32_t *tri = triangles + (size_t) t * 3;
	uint32_t	lo[3],
				hi[3];

	tileset_triangle_cells(grid, positions + (size_t) tri[0] * 3, positions + (size_t) tri[1] * 3,
						   positions + (size_t) tri[2] * 3, lo, hi);

	uint64_t	n = (uint64_t) (hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1);

	counts[t] = n > UINT32_MAX ? UINT32_MAX : (uint32_t) n;
}

__global__ void
bucket_write_kernel(const double *positions, const uint32_t *triangles, uint32_t nt, TilesetGrid grid,
					const uint32_t *offsets, uint64_t *keys, uint32_t *tris)
{
	uint32_t	t = blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= nt)
		return;

	const uint32_t *tri = triangles + (size_t) t * 3;
	uint32_t	lo[3],
				hi[3];
	uint32_t	e = offsets[t];

	tileset_triangle_cells(grid, positions + (size_t) tri[0] * 3, positions + (size_t) tri[1] * 3,
						   positions + (size_t) tri[2] * 3, lo, hi);
	for (uint32_t x = lo[0]; x <= hi[0]; x++)
		for (uint32_t y = lo[1]; y <= hi[1]; y++)
			for (uint32_t z = lo[2]; z <= hi[2]; z++)
			{
				keys[e] = tileset_cell_key(grid, x, y, z);
				tris[e] = t;
				e++;
			}
}

__global__ void
bucket_starts_kernel(const uint64_t *sorted, const uint32_t *heads, const uint32_t *head_sums, uint32_t n,
					 uint64_t *keys, uint32_t *starts)
{
	uint32_t	r = blockIdx.x * blockDim.x + threadIdx.x;

	if (r < n && heads[r])
	{
		keys[head_sums[r]] = sorted[r];
		starts[head_sums[r]] = r;
	}
}

__global__ void
used_kernel(const uint32_t *triangles, uint64_t n, uint8_t *used)
{
	uint64_t	i = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		used[triangles[i]] = 1;
}

__global__ void
vertex_distance_kernel(const double *from_positions, const uint8_t *used, uint32_t nv, TilesetGrid grid,
					   TilesetBuckets b, const double *to_positions, const uint32_t *to_triangles,
					   TilesetNearest *nearest, double *d2)
{
	uint32_t	v = blockIdx.x * blockDim.x + threadIdx.x;

	if (v >= nv)
		return;

	TilesetNearest n = {0.0, TILESET_NO_CELL};

	if (used[v])
		n = tileset_point_level_nearest(from_positions + (size_t) v * 3, grid, b, to_positions, to_triangles);
	nearest[v] = n;
	d2[v] = n.d2;
}

__global__ void
sample_distance_kernel(const double *from_positions, const uint32_t *from_triangles, uint32_t nt,
					   const TilesetNearest *vnear,
					   double spacing, TilesetGrid grid, TilesetBuckets b, const double *to_positions,
					   const uint32_t *to_triangles, double *td2, double *tbound)
{
	uint32_t	t = blockIdx.x * blockDim.x + threadIdx.x;

	if (t >= nt)
		return;

	const uint32_t *tri = from_triangles + (size_t) t * 3;
	TilesetTriangleSample s = tileset_triangle_sample(from_positions + (size_t) tri[0] * 3,
													  from_positions + (size_t) tri[1] * 3,
													  from_positions + (size_t) tri[2] * 3, vnear[tri[0]], vnear[tri[1]],
													  vnear[tri[2]], spacing, grid, b, to_positions, to_triangles);

	td2[t] = s.m2;
	tbound[t] = s.bound;
}

/* The end bit of a grid's keys. */
int
grid_key_bits(const TilesetGrid &g)
{
	return bits_for((uint64_t) g.n[0] * g.n[1] * g.n[2]);
}

}								/* namespace */

void
mesh_cluster_gpu(const GeoaccMesh &mesh, const TilesetGrid &grid, TilesetLevelMesh &out, double *kernel_ms)
{
	const uint32_t nv = mesh.nvertices;
	const uint32_t nt = mesh.ntriangles;
	const uint32_t k = mesh.nattributes;

	out.positions.clear();
	out.triangles.clear();
	out.attributes.clear();
	if (nv == 0)
		return;

	DeviceBuffer<double> d_pos((size_t) nv * 3);
	DeviceBuffer<float> d_attr((size_t) nv * k);
	DeviceBuffer<uint32_t> d_tri((size_t) nt * 3);

	d_pos.upload(mesh.positions, (size_t) nv * 3);
	d_attr.upload(mesh.attributes, (size_t) nv * k);
	d_tri.upload(mesh.triangles, (size_t) nt * 3);
	stream_sync();

	auto		start = std::chrono::steady_clock::now();

	/* 1. cells of the vertices */
	DeviceBuffer<uint64_t> d_vkeys(nv), d_sorted(nv);
	DeviceBuffer<uint32_t> d_iota(std::max<size_t>(nv, (size_t) nt * 3)), d_vorder(nv);

	iota_kernel<<<blocks_for(d_iota.size(), THREADS), THREADS, 0, stream()>>>(d_iota.data(), (uint32_t) d_iota.size());
	GEOACC_CUDA_CHECK_LAUNCH();
	vertex_key_kernel<<<blocks_for(nv, THREADS), THREADS, 0, stream()>>>(d_pos.data(), nv, grid, d_vkeys.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	sort_pairs(d_vkeys.data(), d_sorted.data(), d_iota.data(), d_vorder.data(), nv, grid_key_bits(grid));

	DeviceBuffer<uint32_t> d_heads(nv), d_head_sums(nv);

	head_kernel<<<blocks_for(nv, THREADS), THREADS, 0, stream()>>>(d_sorted.data(), nv, d_heads.data());
	GEOACC_CUDA_CHECK_LAUNCH();

	const uint32_t ncells = (uint32_t) exclusive_scan_u32(d_heads.data(), d_head_sums.data(), nv);
	DeviceBuffer<uint64_t> d_cell_keys(ncells);
	DeviceBuffer<uint32_t> d_cell_first(ncells + 1), d_vcell(nv);

	cell_kernel<<<blocks_for(nv, THREADS), THREADS, 0, stream()>>>(d_sorted.data(), d_vorder.data(), d_heads.data(),
																	d_head_sums.data(), nv, d_cell_keys.data(),
																	d_cell_first.data(), d_vcell.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	GEOACC_CUDA_TRY(cudaMemcpyAsync(d_cell_first.data() + ncells, &nv, sizeof(uint32_t), cudaMemcpyHostToDevice,
									stream()));
	d_vkeys.resize(0);
	d_sorted.resize(0);
	d_heads.resize(0);
	d_head_sums.resize(0);
	sync_and_check_interrupt();

	/* 2. quadric terms grouped by cell in (triangle, corner) order */
	const uint32_t nterms = nt * 3;
	DeviceBuffer<uint32_t> d_qcell(nterms), d_qsorted(nterms), d_qorder(nterms), d_qfirst(ncells + 1);

	if (nt > 0)
	{
		quadric_cell_kernel<<<blocks_for(nt, THREADS), THREADS, 0, stream()>>>(d_tri.data(), nt, d_vcell.data(),
																				d_qcell.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		sort_pairs(d_qcell.data(), d_qsorted.data(), d_iota.data(), d_qorder.data(), nterms, 32);
	}
	quadric_first_kernel<<<blocks_for((size_t) ncells + 1, THREADS), THREADS, 0, stream()>>>(
		d_qsorted.data(), nterms, ncells, d_qfirst.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	d_qcell.resize(0);
	d_qsorted.resize(0);

	/* the open edges of the mesh, for their constraint planes */
	DeviceBuffer<uint8_t> d_border(std::max<uint32_t>(nt, 1));

	if (nt > 0)
	{
		DeviceBuffer<uint64_t> d_ekeys(nterms), d_esorted(nterms);
		DeviceBuffer<uint32_t> d_eorder(nterms);
		DeviceBuffer<uint8_t> d_eopen(nterms);

		edge_key_kernel<<<blocks_for(nt, THREADS), THREADS, 0, stream()>>>(d_tri.data(), nt, d_ekeys.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		sort_pairs(d_ekeys.data(), d_esorted.data(), d_iota.data(), d_eorder.data(), nterms, 64);
		open_edge_kernel<<<blocks_for(nterms, THREADS), THREADS, 0, stream()>>>(d_esorted.data(), d_eorder.data(),
																				 nterms, d_eopen.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		border_kernel<<<blocks_for(nt, THREADS), THREADS, 0, stream()>>>(d_eopen.data(), nt, d_border.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		stream_sync();
	}

	/* 3. the vertex of every cell */
	DeviceBuffer<double> d_cell_pos((size_t) ncells * 3);
	DeviceBuffer<float> d_cell_attr((size_t) ncells * k);

	cell_vertex_kernel<<<blocks_for(ncells, THREADS), THREADS, 0, stream()>>>(
		d_pos.data(), d_attr.data(), k, d_tri.data(), d_border.data(), d_vcell.data(), grid, d_cell_keys.data(),
		d_cell_first.data(), d_vorder.data(), d_qfirst.data(), d_qorder.data(), ncells, d_cell_pos.data(),
		d_cell_attr.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	sync_and_check_interrupt();

	/* 4. surviving triangles, the cells they use */
	DeviceBuffer<uint32_t> d_keep(std::max<uint32_t>(nt, 1)), d_keep_sums(std::max<uint32_t>(nt, 1));
	DeviceBuffer<uint32_t> d_used(ncells), d_number(ncells);

	GEOACC_CUDA_TRY(cudaMemsetAsync(d_used.data(), 0, (size_t) ncells * sizeof(uint32_t), stream()));
	uint32_t	nkept = 0;

	if (nt > 0)
	{
		survive_kernel<<<blocks_for(nt, THREADS), THREADS, 0, stream()>>>(d_tri.data(), nt, d_vcell.data(),
																		   d_keep.data(), d_used.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		nkept = (uint32_t) exclusive_scan_u32(d_keep.data(), d_keep_sums.data(), nt);
	}

	const uint32_t nused = (uint32_t) exclusive_scan_u32(d_used.data(), d_number.data(), ncells);
	DeviceBuffer<uint32_t> d_out_tri((size_t) nkept * 3);
	DeviceBuffer<double> d_out_pos((size_t) nused * 3);
	DeviceBuffer<float> d_out_attr((size_t) nused * k);

	if (nkept > 0)
	{
		write_triangles_kernel<<<blocks_for(nt, THREADS), THREADS, 0, stream()>>>(
			d_tri.data(), nt, d_vcell.data(), d_keep.data(), d_keep_sums.data(), d_number.data(), d_out_tri.data());
		GEOACC_CUDA_CHECK_LAUNCH();
	}
	gather_cells_kernel<<<blocks_for(ncells, THREADS), THREADS, 0, stream()>>>(
		d_cell_pos.data(), d_cell_attr.data(), k, d_used.data(), d_number.data(), ncells, d_out_pos.data(),
		d_out_attr.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	stream_sync();
	if (kernel_ms)
		*kernel_ms += ms_since(start);

	out.triangles.resize((size_t) nkept * 3);
	out.positions.resize((size_t) nused * 3);
	out.attributes.resize((size_t) nused * k);
	d_out_tri.download(out.triangles.data(), out.triangles.size());
	d_out_pos.download(out.positions.data(), out.positions.size());
	d_out_attr.download(out.attributes.data(), out.attributes.size());
}

void
mesh_distance_gpu(const GeoaccMesh &from, const GeoaccMesh &to, const TilesetGrid &grid, double spacing,
				  double *measured, double *bound, double *kernel_ms)
{
	if (to.ntriangles == 0)
	{
		*measured = *bound = INFINITY;
		return;
	}

	const uint32_t nt = to.ntriangles;
	DeviceBuffer<double> d_to_pos((size_t) to.nvertices * 3);
	DeviceBuffer<uint32_t> d_to_tri((size_t) nt * 3);
	DeviceBuffer<double> d_from_pos((size_t) from.nvertices * 3);
	DeviceBuffer<uint32_t> d_from_tri((size_t) from.ntriangles * 3);

	d_to_pos.upload(to.positions, d_to_pos.size());
	d_to_tri.upload(to.triangles, d_to_tri.size());
	d_from_pos.upload(from.positions, d_from_pos.size());
	d_from_tri.upload(from.triangles, d_from_tri.size());
	stream_sync();

	auto		start = std::chrono::steady_clock::now();

	/* the level's triangles filed by cell */
	DeviceBuffer<uint32_t> d_counts(nt), d_offsets(nt);

	bucket_count_kernel<<<blocks_for(nt, THREADS), THREADS, 0, stream()>>>(d_to_pos.data(), d_to_tri.data(), nt, grid,
																			d_counts.data());
	GEOACC_CUDA_CHECK_LAUNCH();

	const uint64_t nentries = exclusive_scan_u32(d_counts.data(), d_offsets.data(), nt);

	if (nentries >= UINT32_MAX)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the level's triangles touch more than 2^32 cells");

	const uint32_t ne = (uint32_t) nentries;
	DeviceBuffer<uint64_t> d_keys(ne), d_sorted(ne);
	DeviceBuffer<uint32_t> d_tris(ne), d_sorted_tris(ne);

	bucket_write_kernel<<<blocks_for(nt, THREADS), THREADS, 0, stream()>>>(d_to_pos.data(), d_to_tri.data(), nt, grid,
																			d_offsets.data(), d_keys.data(),
																			d_tris.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	sort_pairs(d_keys.data(), d_sorted.data(), d_tris.data(), d_sorted_tris.data(), ne, grid_key_bits(grid));

	DeviceBuffer<uint32_t> d_heads(ne), d_head_sums(ne);

	head_kernel<<<blocks_for(ne, THREADS), THREADS, 0, stream()>>>(d_sorted.data(), ne, d_heads.data());
	GEOACC_CUDA_CHECK_LAUNCH();

	const uint32_t nkeys = (uint32_t) exclusive_scan_u32(d_heads.data(), d_head_sums.data(), ne);
	DeviceBuffer<uint64_t> d_bkeys(nkeys);
	DeviceBuffer<uint32_t> d_starts((size_t) nkeys + 1);

	bucket_starts_kernel<<<blocks_for(ne, THREADS), THREADS, 0, stream()>>>(d_sorted.data(), d_heads.data(),
																			 d_head_sums.data(), ne, d_bkeys.data(),
																			 d_starts.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	GEOACC_CUDA_TRY(cudaMemcpyAsync(d_starts.data() + nkeys, &ne, sizeof(uint32_t), cudaMemcpyHostToDevice, stream()));
	d_keys.resize(0);
	d_tris.resize(0);
	d_heads.resize(0);
	d_head_sums.resize(0);

	const TilesetBuckets b{d_bkeys.data(), d_starts.data(), nkeys, d_sorted_tris.data()};

	/* the samples: vertices, then the grids of longer triangles */
	const uint32_t nv = from.nvertices;
	const uint32_t nft = from.ntriangles;
	DeviceBuffer<uint8_t> d_used(nv);
	DeviceBuffer<double> d_vd2(nv), d_td2(nft), d_tbound(nft);
	DeviceBuffer<TilesetNearest> d_vnear(nv);

	GEOACC_CUDA_TRY(cudaMemsetAsync(d_used.data(), 0, nv, stream()));
	if (nft > 0)
	{
		used_kernel<<<blocks_for((size_t) nft * 3, THREADS), THREADS, 0, stream()>>>(d_from_tri.data(),
																					  (uint64_t) nft * 3, d_used.data());
		GEOACC_CUDA_CHECK_LAUNCH();
	}
	if (nv > 0)
	{
		vertex_distance_kernel<<<blocks_for(nv, THREADS), THREADS, 0, stream()>>>(
			d_from_pos.data(), d_used.data(), nv, grid, b, d_to_pos.data(), d_to_tri.data(), d_vnear.data(),
			d_vd2.data());
		GEOACC_CUDA_CHECK_LAUNCH();
	}
	sync_and_check_interrupt();
	if (nft > 0)
	{
		sample_distance_kernel<<<blocks_for(nft, THREADS), THREADS, 0, stream()>>>(
			d_from_pos.data(), d_from_tri.data(), nft, d_vnear.data(), spacing, grid, b, d_to_pos.data(),
			d_to_tri.data(), d_td2.data(), d_tbound.data());
		GEOACC_CUDA_CHECK_LAUNCH();
	}
	sync_and_check_interrupt();

	double		worst = std::max(max_of(d_vd2.data(), nv), max_of(d_td2.data(), nft));
	double		largest = max_of(d_tbound.data(), nft);

	if (kernel_ms)
		*kernel_ms += ms_since(start);
	*measured = std::sqrt(worst);
	/* a margin for the rounding of the distances themselves, as the CPU twin */
	*bound = std::nextafter(std::fmax(largest, *measured) * (1 + 1e-12), INFINITY);
}

}								/* namespace geoacc */
