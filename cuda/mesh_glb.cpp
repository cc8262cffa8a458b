/*
 * mesh_glb.cpp
 *
 * Meshes as binary glTF 2.0 (GLB), so that a clip can be looked at in any
 * viewer (Cesium, three.js, Blender): one node, one mesh, one triangle
 * primitive.  float32 positions lose centimetres at UTM or ECEF
 * magnitudes, so they are written relative to the centre of the bounding
 * box, which the node's translation carries in float64.
 */
#include "mesh_clip.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the GLB writer assumes a little-endian host");

namespace geoacc
{

namespace
{

constexpr uint32_t GLB_MAGIC = 0x46546C67;		/* "glTF" */
constexpr uint32_t GLB_CHUNK_JSON = 0x4E4F534A; /* "JSON" */
constexpr uint32_t GLB_CHUNK_BIN = 0x004E4942;	/* "BIN\0" */
constexpr int GL_FLOAT = 5126;
constexpr int GL_UNSIGNED_INT = 5125;
constexpr int GL_ARRAY_BUFFER = 34962;
constexpr int GL_ELEMENT_ARRAY_BUFFER = 34963;

/* A double in JSON that reads back as the same double. */
std::string
json_number(double v)
{
	char		buf[32];

	snprintf(buf, sizeof(buf), "%.17g", v);
	return buf;
}

/* One accessor over its own buffer view. */
struct GlbArray
{
	std::vector<float> floats;
	std::vector<uint32_t> uints;
	const char *type;			/* SCALAR, VEC2, VEC3, VEC4 */
	int			width;
	bool		with_bounds;
	bool		indices;

	size_t		bytes() const { return indices ? uints.size() * 4 : floats.size() * 4; }
};

/* The glTF document and its binary chunk, for a mesh that has triangles. */
void
glb_arrays(const GeoaccMesh &mesh, uint32_t layout, const double *given_origin, double origin[3],
		   std::vector<GlbArray> &arrays, std::string &attributes_json)
{
	const uint32_t nv = mesh.nvertices;
	const uint32_t k = mesh.nattributes;
	double		lo[3],
				hi[3];
	uint32_t	slot = 0;
	int			index = 0;

	for (int c = 0; c < 3; c++)
		lo[c] = hi[c] = mesh.positions[c];
	for (uint32_t v = 0; v < nv; v++)
		for (int c = 0; c < 3; c++)
		{
			double		x = mesh.positions[(size_t) v * 3 + c];

			lo[c] = std::fmin(lo[c], x);
			hi[c] = std::fmax(hi[c], x);
		}
	for (int c = 0; c < 3; c++)
	{
		/* positions are float32 offsets from the centre: half the extent must be one */
		if (!(hi[c] / 2 - lo[c] / 2 <= (double) FLT_MAX))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh spans %.17g to %.17g along %c, too wide for glTF's float32 "
				 "positions (at most %g either side of its centre)", lo[c], hi[c], "xyz"[c], (double) FLT_MAX);
		origin[c] = std::isfinite(hi[c] - lo[c]) ? lo[c] + (hi[c] - lo[c]) / 2 : lo[c] / 2 + hi[c] / 2;
		if (given_origin != nullptr)
		{
			/* one origin for many files: equal positions give equal float32 values in all of them */
			origin[c] = given_origin[c];
			if (!(std::fabs(hi[c] - origin[c]) <= (double) FLT_MAX && std::fabs(lo[c] - origin[c]) <= (double) FLT_MAX))
				fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh spans %.17g to %.17g along %c, too far from the origin "
					 "%.17g for glTF's float32 positions", lo[c], hi[c], "xyz"[c], origin[c]);
		}
	}

	/* glTF is y-up: (x, y, z) becomes (x, z, -y), a rotation, so windings stay */
	GlbArray	pos{{}, {}, "VEC3", 3, true, false};

	pos.floats.resize((size_t) nv * 3);
	for (uint32_t v = 0; v < nv; v++)
	{
		const double *p = mesh.positions + (size_t) v * 3;

		pos.floats[(size_t) v * 3] = (float) (p[0] - origin[0]);
		pos.floats[(size_t) v * 3 + 1] = (float) (p[2] - origin[2]);
		pos.floats[(size_t) v * 3 + 2] = (float) -(p[1] - origin[1]);
	}
	arrays.push_back(pos);
	attributes_json = "\"POSITION\":" + std::to_string(index++);

	if (layout & GEOACC_MESH_NORMALS)
	{
		GlbArray	nor{{}, {}, "VEC3", 3, false, false};
		bool		all_unit = true;

		/* glTF wants unit normals: interpolated ones are shorter, zero ones cannot be written */
		nor.floats.resize((size_t) nv * 3);
		for (uint32_t v = 0; v < nv && all_unit; v++)
		{
			const float *a = mesh.attributes + (size_t) v * k + slot;
			double		n[3] = {a[0], a[2], -(double) a[1]};
			double		len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);

			if (!(len > 1e-12) || !std::isfinite(len))
				all_unit = false;
			for (int c = 0; c < 3; c++)
				nor.floats[(size_t) v * 3 + c] = (float) (n[c] / len);
		}
		if (all_unit)
		{
			arrays.push_back(nor);
			attributes_json += ",\"NORMAL\":" + std::to_string(index++);
		}
		slot += 3;
	}
	if (layout & GEOACC_MESH_COLORS)
	{
		const int	n = (layout & GEOACC_MESH_ALPHA) ? 4 : 3;
		GlbArray	col{{}, {}, n == 4 ? "VEC4" : "VEC3", n, false, false};

		col.floats.resize((size_t) nv * n);
		for (uint32_t v = 0; v < nv; v++)
			for (int c = 0; c < n; c++)
			{
				float		x = mesh.attributes[(size_t) v * k + slot + c];

				col.floats[(size_t) v * n + c] = x < 0 ? 0 : x > 1 ? 1 : x;
			}
		arrays.push_back(col);
		attributes_json += ",\"COLOR_0\":" + std::to_string(index++);
		slot += n;
	}
	if (layout & GEOACC_MESH_TEXCOORDS)
	{
		GlbArray	uv{{}, {}, "VEC2", 2, false, false};

		/* PLY's v runs up from the bottom of the image, glTF's down from the top */
		uv.floats.resize((size_t) nv * 2);
		for (uint32_t v = 0; v < nv; v++)
		{
			uv.floats[(size_t) v * 2] = mesh.attributes[(size_t) v * k + slot];
			uv.floats[(size_t) v * 2 + 1] = 1.0f - mesh.attributes[(size_t) v * k + slot + 1];
		}
		arrays.push_back(uv);
		attributes_json += ",\"TEXCOORD_0\":" + std::to_string(index++);
		slot += 2;
	}

	GlbArray	idx{{}, {}, "SCALAR", 1, false, true};

	idx.uints.assign(mesh.triangles, mesh.triangles + (size_t) mesh.ntriangles * 3);
	arrays.push_back(idx);
}

std::string
glb_json(const GeoaccMesh &mesh, uint32_t layout, const double *given_origin, std::vector<GlbArray> &arrays)
{
	std::string j = "{\"asset\":{\"version\":\"2.0\",\"generator\":\"geoacc\"},\"scene\":0,";

	if (mesh.ntriangles == 0)
		return j + "\"scenes\":[{}]}";

	double		origin[3];
	std::string attributes;

	glb_arrays(mesh, layout, given_origin, origin, arrays, attributes);
	j += "\"scenes\":[{\"nodes\":[0]}],";
	if (given_origin != nullptr)
		j += "\"nodes\":[{\"mesh\":0}],";
	else
		j += "\"nodes\":[{\"mesh\":0,\"translation\":[" + json_number(origin[0]) + "," + json_number(origin[2]) + ","
			+ json_number(-origin[1]) + "]}],";
	j += "\"meshes\":[{\"primitives\":[{\"attributes\":{" + attributes + "},\"indices\":"
		+ std::to_string(arrays.size() - 1) + ",\"mode\":4}]}],";

	std::string views = "\"bufferViews\":[";
	std::string accessors = "\"accessors\":[";
	size_t		offset = 0;

	for (size_t a = 0; a < arrays.size(); a++)
	{
		const GlbArray &g = arrays[a];
		const size_t count = g.indices ? g.uints.size() : g.floats.size() / g.width;
		const char *sep = a ? "," : "";

		views += std::string(sep) + "{\"buffer\":0,\"byteOffset\":" + std::to_string(offset) + ",\"byteLength\":"
			+ std::to_string(g.bytes()) + ",\"target\":"
			+ std::to_string(g.indices ? GL_ELEMENT_ARRAY_BUFFER : GL_ARRAY_BUFFER) + "}";
		accessors += std::string(sep) + "{\"bufferView\":" + std::to_string(a) + ",\"componentType\":"
			+ std::to_string(g.indices ? GL_UNSIGNED_INT : GL_FLOAT) + ",\"count\":" + std::to_string(count)
			+ ",\"type\":\"" + g.type + "\"";
		if (g.with_bounds)
		{
			/* the bounds of the float32 values as stored, which is what validators check */
			std::string mins,
						maxs;

			for (int c = 0; c < g.width; c++)
			{
				float		lo = g.floats[c],
							hi = g.floats[c];

				for (size_t i = c; i < g.floats.size(); i += g.width)
				{
					lo = std::fmin(lo, g.floats[i]);
					hi = std::fmax(hi, g.floats[i]);
				}
				mins += (c ? "," : "") + json_number(lo);
				maxs += (c ? "," : "") + json_number(hi);
			}
			accessors += ",\"min\":[" + mins + "],\"max\":[" + maxs + "]";
		}
		accessors += "}";
		offset += g.bytes();
	}
	j += views + "]," + accessors + "],";
	j += "\"buffers\":[{\"byteLength\":" + std::to_string(offset) + "}]}";
	return j;
}

template <class T>
void
put(uint8_t *&p, T v)
{
	memcpy(p, &v, sizeof(T));
	p += sizeof(T);
}

void
check_glb_mesh(const GeoaccMesh &mesh, uint32_t layout)
{
	if (geoacc_mesh_layout_width(layout) != mesh.nattributes)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh has %u attributes per vertex, its layout %u", mesh.nattributes,
			 geoacc_mesh_layout_width(layout));
	if ((mesh.nvertices > 0 && mesh.positions == nullptr) || (mesh.ntriangles > 0 && mesh.triangles == nullptr)
		|| (mesh.nattributes > 0 && mesh.nvertices > 0 && mesh.attributes == nullptr))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh's positions, triangles or attributes are missing");
	for (uint64_t i = 0; i < (uint64_t) mesh.ntriangles * 3; i++)
		if (mesh.triangles[i] >= mesh.nvertices)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "triangle %llu refers to vertex %u, but the mesh has %u vertices",
				 (unsigned long long) (i / 3 + 1), mesh.triangles[i], mesh.nvertices);
	for (uint64_t i = 0; i < (uint64_t) mesh.nvertices * 3; i++)
		if (!std::isfinite(mesh.positions[i]))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "vertex %llu has a non-finite coordinate: %c = %g",
				 (unsigned long long) (i / 3 + 1), "xyz"[i % 3], mesh.positions[i]);
}

}								/* namespace */

/*
 * Write the GLB of a mesh into out (with out NULL only *size), positions
 * relative to `origin` with no node translation when origin is given,
 * else relative to the centre of the mesh's box, which the node's
 * translation holds.
 */
void
glb_write(const GeoaccMesh &mesh, uint32_t layout, const double *origin, uint8_t *out, size_t capacity, size_t *size)
{
	std::vector<GlbArray> arrays;

	check_glb_mesh(mesh, layout);

	std::string json = glb_json(mesh, layout, origin, arrays);
	size_t		bin = 0;

	for (const GlbArray &g : arrays)
		bin += g.bytes();
	/* chunks are 4-byte aligned: JSON padded with spaces, the binary chunk with zeros */
	json.append((4 - json.size() % 4) % 4, ' ');

	const size_t bin_padded = bin + (4 - bin % 4) % 4;
	const size_t total = 12 + 8 + json.size() + (bin > 0 ? 8 + bin_padded : 0);

	if (total > UINT32_MAX)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh takes %zu bytes as GLB, more than 4 GB", total);
	*size = total;
	if (out == nullptr)
		return;
	if (capacity < total)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "the GLB output needs %zu bytes, the buffer has %zu", total, capacity);

	uint8_t    *p = out;

	put(p, GLB_MAGIC);
	put(p, (uint32_t) 2);
	put(p, (uint32_t) total);
	put(p, (uint32_t) json.size());
	put(p, GLB_CHUNK_JSON);
	memcpy(p, json.data(), json.size());
	p += json.size();
	if (bin == 0)
		return;
	put(p, (uint32_t) bin_padded);
	put(p, GLB_CHUNK_BIN);
	for (const GlbArray &g : arrays)
	{
		if (g.indices)
			memcpy(p, g.uints.data(), g.bytes());
		else
			memcpy(p, g.floats.data(), g.bytes());
		p += g.bytes();
	}
	memset(p, 0, bin_padded - bin);
}

}								/* namespace geoacc */

using namespace geoacc;

extern "C" GeoaccStatus
geoacc_glb_write(const GeoaccMesh *mesh, uint32_t layout, uint8_t *out, size_t capacity, size_t *size)
{
	return guarded([&] {
		if (mesh == nullptr || size == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh and the size are required");
		glb_write(*mesh, layout, nullptr, out, capacity, size);
	});
}
