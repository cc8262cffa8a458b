/*
 * mesh_clip.cu
 *
 * Mesh clipping by boxes on the GPU, after the LOD clipping of
 * oblique-photogrammetry models: the mesh goes to the device once for all
 * boxes; then for each box
 *   1. an outcode per vertex (one thread each);
 *   2. the count pass: a thread per triangle classifies it from its three
 *      outcodes and clips the straddling ones (mesh_clip.h), counting the
 *      triangles and new points it yields;
 *   3. exclusive sums of both counts (CUB) give every face its place;
 *   4. the write pass clips again and writes labelled triangles, new points
 *      (key, position, attributes) and the used flags of input vertices;
 *   5. numbering: used vertices by an exclusive sum of their flags; new
 *      points sorted by key (CUB radix sort of (key, slot)), the cuts of one
 *      edge seen from its two triangles merged, ranks by a sum of the heads;
 *      the triangles' references renumbered and the vertices gathered.
 * Where a box's work does not fit under the device memory cap, its faces
 * go in chunks through steps 2-4 and the labelled pieces are numbered on
 * the host (mesh_assemble, as the CPU twin does); where the vertices alone
 * do not fit, the CPU twin clips.  The interrupt callback is polled between
 * boxes and chunks.
 */
#include "cuda_util.cuh"
#include "mesh_clip.h"
#include "primitives.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
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

/* ------------------------------------------------------------ kernels */

__global__ void
outcode_kernel(const double *positions, uint32_t nvertices, MeshClipBox box, uint8_t *codes)
{
	uint32_t	v = blockIdx.x * blockDim.x + threadIdx.x;

	if (v < nvertices)
		codes[v] = (uint8_t) mesh_outcode(positions + (size_t) v * 3, box);
}

/* Step 2: triangles and new points of each face. */
__global__ void
count_kernel(const double *positions, const uint32_t *triangles, uint32_t nfaces, const uint8_t *codes,
			 MeshClipBox box, uint32_t *triangle_counts, uint32_t *point_counts)
{
	uint32_t	f = blockIdx.x * blockDim.x + threadIdx.x;

	if (f >= nfaces)
		return;

	MeshPolygon poly;
	uint32_t	ntri,
				nnew;

	mesh_clip_face(positions, triangles + (size_t) f * 3, codes, box, poly, &ntri, &nnew);
	triangle_counts[f] = ntri;
	point_counts[f] = nnew;
}

/* Step 4: each face's output at its place. */
__global__ void
write_kernel(const double *positions, const float *attributes, uint32_t k, const uint32_t *triangles,
			 uint32_t nfaces, const uint8_t *codes, MeshClipBox box, const uint32_t *triangle_offsets,
			 const uint32_t *point_offsets, uint32_t slot_base, uint32_t *out_triangles, uint64_t *keys,
			 double *new_positions, float *new_attributes, uint8_t *used)
{
	uint32_t	f = blockIdx.x * blockDim.x + threadIdx.x;

	if (f >= nfaces)
		return;

	const uint32_t *tri = triangles + (size_t) f * 3;
	MeshPolygon poly;
	uint32_t	ntri,
				nnew;
	int			cls = mesh_clip_face(positions, tri, codes, box, poly, &ntri, &nnew);

	if (ntri == 0)
		return;
	mesh_write_face(positions, attributes, k, tri, box, cls, poly, out_triangles + (size_t) triangle_offsets[f] * 3,
					slot_base + point_offsets[f], slot_base, keys, new_positions, new_attributes, used);
}

/* 1 where a sorted key starts a run of equal keys. */
struct HeadFlag
{
	const uint64_t *keys;
	__host__ __device__ uint32_t operator()(uint32_t r) const { return r == 0 || keys[r] != keys[r - 1]; }
};

struct WidenU8
{
	__host__ __device__ uint32_t operator()(uint8_t x) const { return x; }
};

/* Final vertex numbers of the new points: rank[slot] = vertices_before + (run of its key). */
__global__ void
rank_kernel(const uint32_t *sorted_slots, const uint32_t *runs, uint32_t n, uint32_t vertices_before,
			uint32_t *rank)
{
	uint32_t	r = blockIdx.x * blockDim.x + threadIdx.x;

	if (r < n)
		rank[sorted_slots[r]] = vertices_before + runs[r] - 1;
}

/* Used input vertices to their final places. */
__global__ void
gather_used_kernel(const double *positions, const float *attributes, uint32_t k, const uint8_t *used,
				   const uint32_t *remap, uint32_t nvertices, double *out_positions, float *out_attributes)
{
	uint32_t	v = blockIdx.x * blockDim.x + threadIdx.x;

	if (v >= nvertices || !used[v])
		return;

	const uint32_t o = remap[v];

	for (int c = 0; c < 3; c++)
		out_positions[(size_t) o * 3 + c] = positions[(size_t) v * 3 + c];
	for (uint32_t c = 0; c < k; c++)
		out_attributes[(size_t) o * k + c] = attributes[(size_t) v * k + c];
}

/* The first of each run of equal keys to its place after the used vertices. */
__global__ void
gather_new_kernel(const uint64_t *sorted_keys, const uint32_t *sorted_slots, const uint32_t *runs, uint32_t n,
				  uint32_t vertices_before, const double *new_positions, const float *new_attributes, uint32_t k,
				  double *out_positions, float *out_attributes)
{
	uint32_t	r = blockIdx.x * blockDim.x + threadIdx.x;

	if (r >= n || !(r == 0 || sorted_keys[r] != sorted_keys[r - 1]))
		return;

	const size_t o = (size_t) vertices_before + runs[r] - 1;
	const size_t s = sorted_slots[r];

	for (int c = 0; c < 3; c++)
		out_positions[o * 3 + c] = new_positions[s * 3 + c];
	for (uint32_t c = 0; c < k; c++)
		out_attributes[o * k + c] = new_attributes[s * k + c];
}

__global__ void
renumber_kernel(uint32_t *refs, size_t n, const uint32_t *remap, const uint32_t *rank)
{
	size_t		i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
	{
		uint32_t	ref = refs[i];

		refs[i] = (ref & MESH_CLIP_NEW) ? rank[ref & ~MESH_CLIP_NEW] : remap[ref];
	}
}

__global__ void
iota_kernel(uint32_t *out, uint32_t n)
{
	uint32_t	i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = i;
}

/* ------------------------------------------------------------ host side */

/* The mesh on the device, for all boxes. */
struct DeviceMesh
{
	uint32_t	nvertices = 0;
	uint32_t	ntriangles = 0;
	uint32_t	k = 0;
	DeviceBuffer<double> positions;
	DeviceBuffer<float> attributes;
	DeviceBuffer<uint32_t> triangles;	/* empty when faces go up chunk by chunk */
	DeviceBuffer<uint8_t> codes;
	DeviceBuffer<uint8_t> used;
};

/* The labelled output of faces [first, first + nfaces) on the device. */
struct DeviceChunk
{
	uint32_t	ntriangles = 0;		/* output triangles */
	uint32_t	npoints = 0;		/* new point slots */
	DeviceBuffer<uint32_t> refs;
	DeviceBuffer<uint64_t> keys;
	DeviceBuffer<double> positions;
	DeviceBuffer<float> attributes;
};

/*
 * Steps 2-4 for faces at d_faces (nfaces of them), new point slots
 * numbered from slot_base; false (nothing written) when the output would
 * not fit under the cap with `reserve` bytes left over.
 */
bool
clip_chunk(DeviceMesh &m, const MeshClipBox &box, const uint32_t *d_faces, uint32_t nfaces, uint32_t slot_base,
		   uint64_t reserve, DeviceChunk &out)
{
	DeviceBuffer<uint32_t> d_tri_counts(nfaces), d_point_counts(nfaces);
	DeviceBuffer<uint32_t> d_tri_offsets(nfaces), d_point_offsets(nfaces);
	const unsigned blocks = blocks_for(nfaces, THREADS);

	count_kernel<<<blocks, THREADS, 0, stream()>>>(m.positions.data(), d_faces, nfaces, m.codes.data(), box,
													d_tri_counts.data(), d_point_counts.data());
	GEOACC_CUDA_CHECK_LAUNCH();

	uint64_t	ntri = exclusive_scan_u32(d_tri_counts.data(), d_tri_offsets.data(), nfaces);
	uint64_t	npoints = exclusive_scan_u32(d_point_counts.data(), d_point_offsets.data(), nfaces);

	if (ntri * 3 >= (uint64_t) UINT32_MAX || (uint64_t) slot_base + npoints >= MESH_CLIP_NEW)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the clip makes more than 2^31 new points or 2^30 triangles");

	uint64_t	need = ntri * 12 + npoints * (8 + 24 + 4 * (uint64_t) m.k);

	if (need + reserve > geoacc_gpu_memory_available())
		return false;
	out.ntriangles = (uint32_t) ntri;
	out.npoints = (uint32_t) npoints;
	out.refs.resize(ntri * 3);
	out.keys.resize(npoints);
	out.positions.resize(npoints * 3);
	out.attributes.resize(npoints * m.k);
	write_kernel<<<blocks, THREADS, 0, stream()>>>(m.positions.data(), m.attributes.data(), m.k, d_faces, nfaces,
													m.codes.data(), box, d_tri_offsets.data(),
													d_point_offsets.data(), slot_base, out.refs.data(),
													out.keys.data(), out.positions.data(),
													out.attributes.data(), m.used.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	return true;
}

/* Step 5 on the device for a whole box in one chunk; false when it does not fit. */
bool
assemble_on_device(DeviceMesh &m, DeviceChunk &c, GeoaccMeshResult &result, GeoaccMeshClipTiming &t)
{
	const uint32_t nv = m.nvertices;
	const uint32_t n = c.npoints;
	const uint32_t k = m.k;
	/* remap, sort buffers, runs, ranks, then the output vertices (at most nv + n) */
	const uint64_t need = (uint64_t) nv * 4 + (uint64_t) n * (8 * 2 + 4 * 4) + ((uint64_t) nv + n) * (24 + 4 * k)
		+ (1u << 20);

	if (need > geoacc_gpu_memory_available())
		return false;

	auto		start = std::chrono::steady_clock::now();
	DeviceBuffer<uint32_t> d_remap(nv);
	auto		used_wide = thrust::make_transform_iterator(m.used.data(), WidenU8());
	size_t		temp_bytes = 0;

	GEOACC_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, used_wide, d_remap.data(), nv, stream()));
	{
		DeviceBuffer<unsigned char> d_temp(temp_bytes);

		GEOACC_CUDA_TRY(cub::DeviceScan::ExclusiveSum(d_temp.data(), temp_bytes, used_wide, d_remap.data(), nv,
													  stream()));
	}

	uint32_t	last_remap = 0;
	uint8_t		last_used = 0;

	if (nv > 0)
	{
		GEOACC_CUDA_TRY(cudaMemcpyAsync(&last_remap, d_remap.data() + nv - 1, 4, cudaMemcpyDeviceToHost, stream()));
		GEOACC_CUDA_TRY(cudaMemcpyAsync(&last_used, m.used.data() + nv - 1, 1, cudaMemcpyDeviceToHost, stream()));
		GEOACC_CUDA_TRY(cudaStreamSynchronize(stream()));
	}

	const uint32_t nused = last_remap + last_used;
	DeviceBuffer<uint32_t> d_rank(n);
	uint32_t	nunique = 0;
	DeviceBuffer<uint64_t> d_keys_alt(n);
	DeviceBuffer<uint32_t> d_slots(n), d_slots_alt(n), d_runs(n);
	cub::DoubleBuffer<uint64_t> keys(c.keys.data(), d_keys_alt.data());
	cub::DoubleBuffer<uint32_t> slots(d_slots.data(), d_slots_alt.data());

	if (n > 0)
	{
		iota_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(d_slots.data(), n);
		GEOACC_CUDA_CHECK_LAUNCH();
		temp_bytes = 0;
		GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, slots, n, 0, 64, stream()));
		{
			DeviceBuffer<unsigned char> d_temp(temp_bytes);

			GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(d_temp.data(), temp_bytes, keys, slots, n, 0, 64,
															stream()));
		}

		auto		heads = thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0),
														   HeadFlag{keys.Current()});

		temp_bytes = 0;
		GEOACC_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, heads, d_runs.data(), n, stream()));
		{
			DeviceBuffer<unsigned char> d_temp(temp_bytes);

			GEOACC_CUDA_TRY(cub::DeviceScan::InclusiveSum(d_temp.data(), temp_bytes, heads, d_runs.data(), n,
														  stream()));
		}
		GEOACC_CUDA_TRY(cudaMemcpyAsync(&nunique, d_runs.data() + n - 1, 4, cudaMemcpyDeviceToHost, stream()));
		GEOACC_CUDA_TRY(cudaStreamSynchronize(stream()));
		rank_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(slots.Current(), d_runs.data(), n, nused,
																		d_rank.data());
		GEOACC_CUDA_CHECK_LAUNCH();
	}

	const uint32_t nout = nused + nunique;
	DeviceBuffer<double> d_out_positions((size_t) nout * 3);
	DeviceBuffer<float> d_out_attributes((size_t) nout * k);

	gather_used_kernel<<<blocks_for(nv, THREADS), THREADS, 0, stream()>>>(m.positions.data(), m.attributes.data(),
																			k, m.used.data(), d_remap.data(), nv,
																			d_out_positions.data(),
																			d_out_attributes.data());
	GEOACC_CUDA_CHECK_LAUNCH();
	if (n > 0)
	{
		gather_new_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(keys.Current(), slots.Current(),
																			  d_runs.data(), n, nused,
																			  c.positions.data(), c.attributes.data(),
																			  k, d_out_positions.data(),
																			  d_out_attributes.data());
		GEOACC_CUDA_CHECK_LAUNCH();
	}

	const size_t nrefs = (size_t) c.ntriangles * 3;

	if (nrefs > 0)
	{
		renumber_kernel<<<blocks_for(nrefs, THREADS), THREADS, 0, stream()>>>(c.refs.data(), nrefs,
																				d_remap.data(), d_rank.data());
		GEOACC_CUDA_CHECK_LAUNCH();
	}
	GEOACC_CUDA_TRY(cudaStreamSynchronize(stream()));
	t.kernel_ms += ms_since(start);

	/* the result's arrays, then one download each */
	start = std::chrono::steady_clock::now();

	std::vector<double> positions((size_t) nout * 3);
	std::vector<uint32_t> triangles(nrefs);
	std::vector<float> attributes((size_t) nout * k);

	d_out_positions.download(positions.data(), positions.size());
	c.refs.download(triangles.data(), nrefs);
	d_out_attributes.download(attributes.data(), attributes.size());
	t.download_ms += ms_since(start);
	mesh_result_set(result, positions, triangles, attributes, k);
	return true;
}

/* Copy a device chunk's labelled output to the end of the host's. */
void
append_chunk(const DeviceChunk &c, uint32_t k, MeshLabelled &out)
{
	size_t		t0 = out.triangles.size();
	size_t		p0 = out.keys.size();

	out.triangles.resize(t0 + (size_t) c.ntriangles * 3);
	out.keys.resize(p0 + c.npoints);
	out.positions.resize((p0 + c.npoints) * 3);
	out.attributes.resize((p0 + c.npoints) * k);
	c.refs.download(out.triangles.data() + t0, (size_t) c.ntriangles * 3);
	c.keys.download(out.keys.data() + p0, c.npoints);
	c.positions.download(out.positions.data() + p0 * 3, (size_t) c.npoints * 3);
	c.attributes.download(out.attributes.data() + p0 * k, (size_t) c.npoints * k);
}

/* One box: whole on the device where it fits, else in chunks numbered on the host. */
void
clip_box(const GeoaccMesh &mesh, DeviceMesh &m, const MeshClipBox &box, GeoaccMeshResult &result,
		 GeoaccMeshClipTiming &t)
{
	auto		start = std::chrono::steady_clock::now();

	if (m.nvertices > 0)
	{
		outcode_kernel<<<blocks_for(m.nvertices, THREADS), THREADS, 0, stream()>>>(m.positions.data(), m.nvertices,
																					 box, m.codes.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		GEOACC_CUDA_TRY(cudaMemsetAsync(m.used.data(), 0, m.nvertices, stream()));
	}

	/* the common case: all faces at once, numbered on the device */
	if (m.triangles.size() > 0 || m.ntriangles == 0)
	{
		DeviceChunk c;

		if (clip_chunk(m, box, m.triangles.data(), m.ntriangles, 0, 0, c))
		{
			sync_and_check_interrupt();
			t.kernel_ms += ms_since(start);
			t.chunks++;
			if (assemble_on_device(m, c, result, t))
				return;
		}
		GEOACC_CUDA_TRY(cudaMemsetAsync(m.used.data(), 0, m.nvertices, stream()));
	}

	/* chunks of faces, as many as fit with their worst-case output */
	const uint64_t avail = geoacc_gpu_memory_available();
	const uint64_t per_face = chunk_bytes_per_face(m.k);
	uint64_t	chunk = std::max<uint64_t>(1, avail / 2 / per_face);
	MeshLabelled labelled;
	DeviceBuffer<uint32_t> d_faces;

	chunk = std::min<uint64_t>(chunk, std::max<uint32_t>(m.ntriangles, 1));
	if (m.triangles.size() == 0)
		d_faces.resize(chunk * 3);
	for (uint32_t first = 0; first < m.ntriangles;)
	{
		const uint32_t nf = (uint32_t) std::min<uint64_t>(chunk, m.ntriangles - first);
		const uint32_t *faces = m.triangles.data() ? m.triangles.data() + (size_t) first * 3 : d_faces.data();
		DeviceChunk c;

		if (m.triangles.size() == 0)
		{
			auto		up = std::chrono::steady_clock::now();

			d_faces.upload(mesh.triangles + (size_t) first * 3, (size_t) nf * 3);
			GEOACC_CUDA_TRY(cudaStreamSynchronize(stream()));
			t.upload_ms += ms_since(up);
		}
		auto		run = std::chrono::steady_clock::now();

		if (!clip_chunk(m, box, faces, nf, (uint32_t) labelled.keys.size(), 0, c))
			fail(GEOACC_ERR_DEVICE_MEMORY, "the device memory cap leaves no room for a chunk of %u faces", nf);
		sync_and_check_interrupt();
		t.kernel_ms += ms_since(run);

		auto		down = std::chrono::steady_clock::now();

		append_chunk(c, m.k, labelled);
		t.download_ms += ms_since(down);
		t.chunks++;
		first += nf;
	}
	labelled.used.resize(m.nvertices);
	m.used.download(labelled.used.data(), m.nvertices);
	mesh_assemble(mesh, labelled, result);
}

}								/* namespace */

void
mesh_clip_gpu(const GeoaccMesh &mesh, const GeoaccBox *boxes, uint32_t nboxes, GeoaccMeshResult *results,
			  GeoaccMeshClipTiming *timing)
{
	GeoaccMeshClipTiming &t = *timing;
	const uint32_t k = mesh.nattributes;
	const uint64_t vertex_bytes = mesh_vertex_device_bytes(mesh.nvertices, k);
	const uint64_t face_bytes = (uint64_t) mesh.ntriangles * 12;
	const uint64_t avail = geoacc_gpu_memory_available();

	/* the vertices must stay on the device with room for a useful chunk; else the CPU twin clips */
	if (vertex_bytes + MESH_CLIP_LEAST_CHUNK * chunk_bytes_per_face(k) > avail)
	{
		mesh_clip_cpu(mesh, boxes, nboxes, results);
		t.cpu_triangles += (uint64_t) mesh.ntriangles * nboxes;
		return;
	}

	auto		start = std::chrono::steady_clock::now();
	DeviceMesh	m;

	m.nvertices = mesh.nvertices;
	m.ntriangles = mesh.ntriangles;
	m.k = k;
	m.positions.resize((size_t) mesh.nvertices * 3);
	m.attributes.resize((size_t) mesh.nvertices * k);
	m.codes.resize(mesh.nvertices);
	m.used.resize(mesh.nvertices);
	m.positions.upload(mesh.positions, (size_t) mesh.nvertices * 3);
	m.attributes.upload(mesh.attributes, (size_t) mesh.nvertices * k);
	/* faces resident when they leave half the memory for the work of a box */
	if (face_bytes * 3 < geoacc_gpu_memory_available() / 2)
	{
		m.triangles.resize((size_t) mesh.ntriangles * 3);
		m.triangles.upload(mesh.triangles, (size_t) mesh.ntriangles * 3);
	}
	GEOACC_CUDA_TRY(cudaStreamSynchronize(stream()));
	t.upload_ms += ms_since(start);

	for (uint32_t b = 0; b < nboxes; b++)
	{
		clip_box(mesh, m, mesh_clip_box(boxes[b]), results[b], t);
		check_interrupt();
	}
}

}								/* namespace geoacc */
