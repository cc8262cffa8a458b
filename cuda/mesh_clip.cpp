/*
 * mesh_clip.cpp
 *
 * Mesh clipping by boxes: the C ABI entry point (validation, choice of
 * device), the CPU twin (the face loop of mesh_clip.h, one face after the
 * other), the final numbering of the output vertices that the CPU twin and
 * the GPU's chunked path share, tile grids, and welding a triangle soup
 * into an indexed mesh.
 */
#include "mesh_clip.h"
#include "host_memory.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace geoacc
{

namespace
{

/* Faces between two interrupt polls of the CPU twin (a few milliseconds). */
constexpr uint32_t CPU_POLL_FACES = 1u << 16;

double
elapsed_ms(std::chrono::steady_clock::time_point since)
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}


void
check_box(const GeoaccBox &b, uint32_t index)
{
	const double lo[3] = {b.xmin, b.ymin, b.zmin};
	const double hi[3] = {b.xmax, b.ymax, b.zmax};

	for (int c = 0; c < 3; c++)
	{
		if (std::isnan(lo[c]) || std::isnan(hi[c]))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "box %u has a NaN bound", index + 1);
		if (lo[c] > hi[c])
			fail(GEOACC_ERR_INVALID_ARGUMENT, "box %u is inverted: %cmin %.17g is above %cmax %.17g",
				 index + 1, "xyz"[c], lo[c], "xyz"[c], hi[c]);
	}
}

template <class T>
T *
malloc_copy(const std::vector<T> &v)
{
	if (v.empty())
		return nullptr;

	T		   *p = static_cast<T *>(output_allocate(v.size() * sizeof(T)));

	memcpy(p, v.data(), v.size() * sizeof(T));
	return p;
}

}								/* namespace */

void
check_mesh(const GeoaccMesh &mesh, const char *user)
{
	if (mesh.nvertices > MESH_CLIP_MAX_VERTICES)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh has %u vertices, more than the %u %s can take",
			 mesh.nvertices, MESH_CLIP_MAX_VERTICES, user);
	if ((mesh.nvertices > 0 && mesh.positions == nullptr) || (mesh.ntriangles > 0 && mesh.triangles == nullptr))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh's positions or triangles are missing");
	if (mesh.nattributes > GEOACC_MESH_MAX_ATTRIBUTES)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh has %u attributes per vertex, more than %d",
			 mesh.nattributes, GEOACC_MESH_MAX_ATTRIBUTES);
	if (mesh.nattributes > 0 && mesh.nvertices > 0 && mesh.attributes == nullptr)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh's attributes are missing");
	for (uint64_t i = 0; i < (uint64_t) mesh.nvertices * 3; i++)
		if (!std::isfinite(mesh.positions[i]))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "vertex %llu has a non-finite coordinate: %c = %g",
				 (unsigned long long) (i / 3 + 1), "xyz"[i % 3], mesh.positions[i]);
	for (uint64_t i = 0; i < (uint64_t) mesh.ntriangles * 3; i++)
		if (mesh.triangles[i] >= mesh.nvertices)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "triangle %llu refers to vertex %u, but the mesh has %u vertices",
				 (unsigned long long) (i / 3 + 1), mesh.triangles[i], mesh.nvertices);
}

void
mesh_result_set(GeoaccMeshResult &result, const std::vector<double> &positions, const std::vector<uint32_t> &triangles,
				const std::vector<float> &attributes, uint32_t nattributes)
{
	geoacc_mesh_result_free(&result);
	result.nvertices = (uint32_t) (positions.size() / 3);
	result.ntriangles = (uint32_t) (triangles.size() / 3);
	result.nattributes = nattributes;
	try
	{
		result.positions = malloc_copy(positions);
		result.triangles = malloc_copy(triangles);
		result.attributes = malloc_copy(attributes);
	}
	catch (...)
	{
		geoacc_mesh_result_free(&result);
		throw;
	}
}

void
mesh_clip_labelled_cpu(const GeoaccMesh &mesh, const uint8_t *codes, const MeshClipBox &box, uint32_t first,
					   uint32_t last, MeshLabelled &out)
{
	const uint32_t k = mesh.nattributes;
	MeshPolygon poly;

	for (uint32_t f = first; f < last; f++)
	{
		const uint32_t *tri = mesh.triangles + (size_t) f * 3;
		uint32_t	ntri,
					nnew;
		int			cls = mesh_clip_face(mesh.positions, tri, codes, box, poly, &ntri, &nnew);

		if ((f - first) % CPU_POLL_FACES == CPU_POLL_FACES - 1)
			check_interrupt();
		if (ntri == 0)
			continue;

		size_t		t0 = out.triangles.size();
		size_t		slot = out.keys.size();

		if (slot + nnew >= MESH_CLIP_NEW)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the clip makes more than 2^31 new points");
		out.triangles.resize(t0 + (size_t) ntri * 3);
		out.keys.resize(slot + nnew);
		out.positions.resize((slot + nnew) * 3);
		out.attributes.resize((slot + nnew) * k);
		mesh_write_face(mesh.positions, mesh.attributes, k, tri, box, cls, poly, &out.triangles[t0],
						(uint32_t) slot, 0, out.keys.data(), out.positions.data(), out.attributes.data(),
						out.used.data());
	}
}

void
mesh_assemble(const GeoaccMesh &mesh, const MeshLabelled &labelled, GeoaccMeshResult &result)
{
	const uint32_t k = mesh.nattributes;
	std::vector<uint32_t> remap(mesh.nvertices);
	std::vector<double> positions;
	std::vector<float> attributes;
	std::vector<uint32_t> triangles(labelled.triangles.size());
	uint32_t	nused = 0;

	for (uint32_t v = 0; v < mesh.nvertices; v++)
		if (labelled.used[v])
		{
			remap[v] = nused++;
			positions.insert(positions.end(), mesh.positions + (size_t) v * 3, mesh.positions + (size_t) v * 3 + 3);
			if (k > 0)
				attributes.insert(attributes.end(), mesh.attributes + (size_t) v * k,
								  mesh.attributes + (size_t) v * k + k);
		}

	/* new points by key; equal keys (one edge's cut seen from both of its triangles) have equal bits */
	const size_t nnew = labelled.keys.size();
	std::vector<std::pair<uint64_t, uint32_t>> order(nnew);
	std::vector<uint32_t> rank(nnew);
	uint32_t	nunique = 0;

	for (size_t s = 0; s < nnew; s++)
		order[s] = {labelled.keys[s], (uint32_t) s};
	std::sort(order.begin(), order.end());
	for (size_t r = 0; r < nnew; r++)
	{
		const uint32_t slot = order[r].second;

		if (r == 0 || order[r].first != order[r - 1].first)
		{
			nunique++;
			positions.insert(positions.end(), &labelled.positions[(size_t) slot * 3],
							 &labelled.positions[(size_t) slot * 3] + 3);
			if (k > 0)
				attributes.insert(attributes.end(), &labelled.attributes[(size_t) slot * k],
								  &labelled.attributes[(size_t) slot * k] + k);
		}
		rank[slot] = nused + nunique - 1;
	}
	for (size_t i = 0; i < triangles.size(); i++)
	{
		uint32_t	ref = labelled.triangles[i];

		triangles[i] = (ref & MESH_CLIP_NEW) ? rank[ref & ~MESH_CLIP_NEW] : remap[ref];
	}
	mesh_result_set(result, positions, triangles, attributes, k);
}

/* The CPU twin: each box, face by face. */
void
mesh_clip_cpu(const GeoaccMesh &mesh, const GeoaccBox *boxes, uint32_t nboxes, GeoaccMeshResult *results)
{
	std::vector<uint8_t> codes(mesh.nvertices);

	for (uint32_t b = 0; b < nboxes; b++)
	{
		const MeshClipBox box = mesh_clip_box(boxes[b]);
		MeshLabelled labelled;

		for (uint32_t v = 0; v < mesh.nvertices; v++)
			codes[v] = (uint8_t) mesh_outcode(mesh.positions + (size_t) v * 3, box);
		labelled.used.assign(mesh.nvertices, 0);
		mesh_clip_labelled_cpu(mesh, codes.data(), box, 0, mesh.ntriangles, labelled);
		mesh_assemble(mesh, labelled, results[b]);
		check_interrupt();
	}
}

}								/* namespace geoacc */

using namespace geoacc;

extern "C" void
geoacc_mesh_result_free(GeoaccMeshResult *result)
{
	if (result == nullptr)
		return;
	output_free(result->positions);
	output_free(result->triangles);
	output_free(result->attributes);
	memset(result, 0, sizeof(*result));
}

extern "C" GeoaccStatus
geoacc_mesh_clip(GeoaccDevice device, const GeoaccMesh *mesh, const GeoaccBox *boxes, uint32_t nboxes,
				 GeoaccMeshResult *results, GeoaccMeshClipTiming *timing)
{
	GeoaccStatus status = guarded([&] {
		auto		start = std::chrono::steady_clock::now();
		GeoaccMeshClipTiming t{};

		if (mesh == nullptr || (nboxes > 0 && (boxes == nullptr || results == nullptr)))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh, the boxes and the results are required");
		check_mesh(*mesh, "a clip");
		for (uint32_t b = 0; b < nboxes; b++)
			check_box(boxes[b], b);
		if (device == GEOACC_DEVICE_GPU)
			GEOACC_ON_GPU(mesh_clip_gpu(*mesh, boxes, nboxes, results, &t));
		else
			mesh_clip_cpu(*mesh, boxes, nboxes, results);
		t.compute_ms = elapsed_ms(start);
		if (timing)
			*timing = t;
	});

	/* nothing half-made survives a failure */
	if (status != GEOACC_OK && results != nullptr)
		for (uint32_t b = 0; b < nboxes; b++)
			geoacc_mesh_result_free(&results[b]);
	return status;
}

/*
 * The vertices, the faces, every face in one chunk with its worst-case
 * output (half the memory at hand goes to a chunk) and the assembly of the
 * used vertices; at least the vertices and a smallest chunk.
 */
extern "C" GeoaccDeviceNeed
geoacc_mesh_clip_need(const GeoaccMesh *mesh)
{
	const uint32_t k = mesh->nattributes;
	const uint64_t vertices = mesh_vertex_device_bytes(mesh->nvertices, k);
	GeoaccDeviceNeed need;

	need.bytes = vertices + (uint64_t) mesh->ntriangles * 12 + 2 * (uint64_t) mesh->ntriangles * chunk_bytes_per_face(k)
		+ (uint64_t) mesh->nvertices * (28 + 4 * (uint64_t) k) + (UINT64_C(1) << 20);
	need.least = std::min(need.bytes, vertices + 2 * MESH_CLIP_LEAST_CHUNK * chunk_bytes_per_face(k));
	return need;
}

extern "C" double
geoacc_grid_plane(double lo, double hi, uint32_t i, uint32_t n)
{
	if (i >= n)
		return hi;
	return lo + (hi - lo) * (double) i / (double) n;
}

namespace
{

void
check_grid(const GeoaccBox &extent, uint32_t nx, uint32_t ny, uint32_t nz)
{
	const double lo[3] = {extent.xmin, extent.ymin, extent.zmin};
	const double hi[3] = {extent.xmax, extent.ymax, extent.zmax};

	const uint32_t n[3] = {nx, ny, nz};

	if (nx == 0 || ny == 0 || nz == 0)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "a grid needs at least one tile along each axis");
	check_box(extent, 0);
	/* (hi - lo) * i, i < n, must not overflow for the planes to be finite and in order */
	for (int c = 0; c < 3; c++)
		if (!std::isfinite((hi[c] - lo[c]) * (double) n[c]))
			fail(GEOACC_ERR_INVALID_ARGUMENT,
				 "the extent's %c range [%.17g, %.17g] is wider than a double can hold, so it has no tile planes",
				 "xyz"[c], lo[c], hi[c]);
}

GeoaccBox
grid_tile(const GeoaccBox &e, uint32_t nx, uint32_t ny, uint32_t nz, uint32_t ix, uint32_t iy, uint32_t iz)
{
	GeoaccBox	b;

	b.xmin = geoacc_grid_plane(e.xmin, e.xmax, ix, nx);
	b.xmax = geoacc_grid_plane(e.xmin, e.xmax, ix + 1, nx);
	b.ymin = geoacc_grid_plane(e.ymin, e.ymax, iy, ny);
	b.ymax = geoacc_grid_plane(e.ymin, e.ymax, iy + 1, ny);
	b.zmin = geoacc_grid_plane(e.zmin, e.zmax, iz, nz);
	b.zmax = geoacc_grid_plane(e.zmin, e.zmax, iz + 1, nz);
	return b;
}

}								/* namespace */

extern "C" GeoaccStatus
geoacc_grid_tile(const GeoaccBox *extent, uint32_t nx, uint32_t ny, uint32_t nz, uint32_t ix, uint32_t iy,
				 uint32_t iz, GeoaccBox *box)
{
	return guarded([&] {
		if (extent == nullptr || box == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the extent and the box are required");
		check_grid(*extent, nx, ny, nz);
		if (ix >= nx || iy >= ny || iz >= nz)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "tile (%u, %u, %u) is outside a grid of %u x %u x %u", ix, iy, iz,
				 nx, ny, nz);
		*box = grid_tile(*extent, nx, ny, nz, ix, iy, iz);
	});
}

extern "C" GeoaccStatus
geoacc_grid_tiles(const GeoaccBox *extent, uint32_t nx, uint32_t ny, uint32_t nz, GeoaccBox *boxes)
{
	return guarded([&] {
		if (extent == nullptr || boxes == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the extent and the boxes are required");
		check_grid(*extent, nx, ny, nz);
		for (uint32_t ix = 0; ix < nx; ix++)
			for (uint32_t iy = 0; iy < ny; iy++)
				for (uint32_t iz = 0; iz < nz; iz++)
					boxes[((size_t) ix * ny + iy) * nz + iz] = grid_tile(*extent, nx, ny, nz, ix, iy, iz);
	});
}

namespace
{

/* A coordinate's bits, -0 made +0: equal bits, equal points. */
uint64_t
coordinate_bits(double x)
{
	double		y = x + 0.0;	/* -0 + 0 = +0 */
	uint64_t	b;

	memcpy(&b, &y, sizeof(b));
	return b;
}

/* The same for an attribute. */
uint32_t
attribute_bits(float x)
{
	float		y = x + 0.0f;
	uint32_t	b;

	memcpy(&b, &y, sizeof(b));
	return b;
}

uint64_t
hash_step(uint64_t h, uint64_t bits)
{
	return (h ^ bits) * 0xff51afd7ed558ccdull;
}

uint64_t
hash_end(uint64_t h)
{
	return h ^ (h >> 33);
}

/*
 * The weld's index of distinct vertices: open addressing with linear
 * probing over a power-of-two table (no allocation per vertex).  A slot
 * holds the vertex's id + 1 (0: empty) and the high bits of its hash, so
 * that most probes that miss never look at the vertex itself.
 */
class VertexIndex
{
public:
	explicit VertexIndex(size_t expected)
	{
		size_t		capacity = 64;

		while (capacity < expected * 2)
			capacity *= 2;
		slots_.assign(capacity, 0);
	}

	/*
	 * The id of the vertex equal to a new one of hash h (equal(id) says
	 * whether vertex id is), or next_id, recorded, when there is none.
	 * hash_of(id) gives a recorded vertex's hash for growing the table
	 * (which happens before the new vertex is recorded).
	 */
	template <class Equal, class HashOf>
	uint32_t	find_or_add(uint64_t h, uint32_t next_id, Equal equal, HashOf hash_of)
	{
		if ((count_ + 1) * 2 > slots_.size())
			grow(hash_of);

		const size_t mask = slots_.size() - 1;
		const uint64_t tag = h & 0xffffffff00000000ull;

		for (size_t i = (size_t) h & mask;; i = (i + 1) & mask)
		{
			const uint64_t slot = slots_[i];

			if (slot == 0)
			{
				slots_[i] = tag | ((uint64_t) next_id + 1);
				count_++;
				return next_id;
			}
			if ((slot & 0xffffffff00000000ull) == tag && equal((uint32_t) slot - 1))
				return (uint32_t) slot - 1;
		}
	}

private:
	template <class HashOf>
	void		grow(HashOf hash_of)
	{
		std::vector<uint64_t> old(slots_.size() * 2, 0);

		old.swap(slots_);

		const size_t mask = slots_.size() - 1;

		for (uint64_t slot : old)
		{
			if (slot == 0)
				continue;

			size_t		i = (size_t) hash_of((uint32_t) slot - 1) & mask;

			while (slots_[i] != 0)
				i = (i + 1) & mask;
			slots_[i] = slot;
		}
	}

	std::vector<uint64_t> slots_;
	size_t		count_ = 0;
};

/* The hash of a point from its three coordinates' bits. */
uint64_t
point_hash(const uint64_t *bits)
{
	return hash_end(hash_step(hash_step(hash_step(0x9e3779b97f4a7c15ull, bits[0]), bits[1]), bits[2]));
}

}								/* namespace */

extern "C" GeoaccStatus
geoacc_mesh_weld(const double *corners, uint32_t ntriangles, size_t stride, GeoaccMeshResult *result)
{
	GeoaccStatus status = guarded([&] {
		if (result == nullptr || (ntriangles > 0 && corners == nullptr))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the corners and the result are required");
		if (stride < 9)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "a triangle takes 9 coordinates, but the stride is %zu", stride);
		geoacc_mesh_result_free(result);

		std::vector<double> positions;
		std::vector<float> none;
		const size_t ncorners = (size_t) ntriangles * 3;
		/* a mesh has about half as many vertices as triangles; the index grows past that */
		VertexIndex index(ntriangles / 2 + 1);
		uint32_t	nvertices = 0;

		positions.reserve((ntriangles / 2 + 1) * 3);
		if (ncorners > 0)
		{
			result->triangles = static_cast<uint32_t *>(output_allocate(ncorners * sizeof(uint32_t)));
		}
		result->ntriangles = ntriangles;
		for (size_t c = 0; c < ncorners; c++)
		{
			const double *p = corners + (c / 3) * stride + (c % 3) * 3;
			uint64_t	key[3];

			for (int d = 0; d < 3; d++)
			{
				if (!std::isfinite(p[d]))
					fail(GEOACC_ERR_INVALID_ARGUMENT, "corner %llu of triangle %llu has a non-finite coordinate: %c = %g",
						 (unsigned long long) (c % 3 + 1), (unsigned long long) (c / 3 + 1), "xyz"[d], p[d]);
				key[d] = coordinate_bits(p[d]);
			}

			const uint32_t id = index.find_or_add(
				point_hash(key), nvertices,
				[&](uint32_t v) {
					const double *q = &positions[(size_t) v * 3];

					return coordinate_bits(q[0]) == key[0] && coordinate_bits(q[1]) == key[1]
						&& coordinate_bits(q[2]) == key[2];
				},
				[&](uint32_t v) {
					const double *q = &positions[(size_t) v * 3];
					const uint64_t bits[3] = {coordinate_bits(q[0]), coordinate_bits(q[1]), coordinate_bits(q[2])};

					return point_hash(bits);
				});

			if (id == nvertices)
			{
				if (nvertices >= MESH_CLIP_MAX_VERTICES)
					fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh has more than %u distinct vertices",
						 MESH_CLIP_MAX_VERTICES);
				positions.insert(positions.end(), p, p + 3);
				nvertices++;
			}
			result->triangles[c] = id;
			if ((c & 0xfffff) == 0xfffff)
				check_interrupt();
		}
		result->nvertices = nvertices;
		result->positions = malloc_copy(positions);
	});

	if (status != GEOACC_OK && result != nullptr)
		geoacc_mesh_result_free(result);
	return status;
}

extern "C" GeoaccStatus
geoacc_mesh_weld_vertices(const GeoaccMesh *mesh, GeoaccMeshResult *result)
{
	GeoaccStatus status = guarded([&] {
		if (mesh == nullptr || result == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh and the result are required");
		check_mesh(*mesh, "a clip");

		const uint32_t k = mesh->nattributes;
		/* a vertex's hash from its position's and attributes' bits (-0 made +0) */
		auto		vertex_hash = [&](uint32_t v) {
			uint64_t	h = 0x9e3779b97f4a7c15ull;

			for (int c = 0; c < 3; c++)
				h = hash_step(h, coordinate_bits(mesh->positions[(size_t) v * 3 + c]));
			for (uint32_t c = 0; c < k; c++)
				h = hash_step(h, attribute_bits(mesh->attributes[(size_t) v * k + c]));
			return hash_end(h);
		};
		auto		vertex_equal = [&](uint32_t a, uint32_t b) {
			for (int c = 0; c < 3; c++)
				if (coordinate_bits(mesh->positions[(size_t) a * 3 + c])
					!= coordinate_bits(mesh->positions[(size_t) b * 3 + c]))
					return false;
			for (uint32_t c = 0; c < k; c++)
				if (attribute_bits(mesh->attributes[(size_t) a * k + c])
					!= attribute_bits(mesh->attributes[(size_t) b * k + c]))
					return false;
			return true;
		};
		VertexIndex index(mesh->nvertices);
		std::vector<uint32_t> first;	/* the input vertex each output vertex stands for */
		std::vector<uint32_t> remap(mesh->nvertices);
		std::vector<double> positions;
		std::vector<float> attributes;
		std::vector<uint32_t> triangles((size_t) mesh->ntriangles * 3);

		for (uint32_t v = 0; v < mesh->nvertices; v++)
		{
			const uint32_t id = index.find_or_add(
				vertex_hash(v), (uint32_t) first.size(),
				[&](uint32_t w) { return vertex_equal(v, first[w]); },
				[&](uint32_t w) { return vertex_hash(first[w]); });

			if (id == first.size())
			{
				first.push_back(v);
				positions.insert(positions.end(), mesh->positions + (size_t) v * 3,
								 mesh->positions + (size_t) v * 3 + 3);
				if (k > 0)
					attributes.insert(attributes.end(), mesh->attributes + (size_t) v * k,
									  mesh->attributes + (size_t) v * k + k);
			}
			remap[v] = id;
			if ((v & 0xfffff) == 0xfffff)
				check_interrupt();
		}
		for (size_t i = 0; i < triangles.size(); i++)
			triangles[i] = remap[mesh->triangles[i]];
		mesh_result_set(*result, positions, triangles, attributes, k);
	});

	if (status != GEOACC_OK && result != nullptr)
		geoacc_mesh_result_free(result);
	return status;
}
