/*
 * test_mesh_ply.cpp
 *
 * PLY meshes: the same mesh written as ASCII, binary little-endian and
 * binary big-endian reads to the same bits; attributes under every naming;
 * fan triangulation; skipped elements and properties; the writer read back
 * bit for bit; every malformed file; a real file (CGAL's colored_tetra.ply,
 * with normals, colours, face properties and an edge element).  Welding
 * vertices by position and attributes; attributes of cut points by hand
 * (UVs across a seam), and on the GPU against the CPU twin.  GLB output:
 * chunks, alignment, the origin, float32 positions, unit normals, flipped v.
 */
#include "core_test.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace
{

/*
 * A PLY file described once and written in any format: the header lines
 * after the format line, and the data as typed values, "\n" ending an
 * element instance.
 */
struct PlySpec
{
	std::string header;
	std::vector<std::pair<std::string, double>> values;

	void		add(const char *type, double v) { values.push_back({type, v}); }
	void		end() { values.push_back({"\n", 0}); }

	std::string encode(const char *format) const
	{
		std::string out = std::string("ply\nformat ") + format + " 1.0\n" + header;
		const bool	ascii = strcmp(format, "ascii") == 0;
		const bool	big = strcmp(format, "binary_big_endian") == 0;

		for (const auto &tv : values)
		{
			const std::string &t = tv.first;
			const double v = tv.second;
			char		buf[64];
			unsigned char b[8];
			size_t		n = 0;

			if (t == "\n")
			{
				if (ascii)
					out += "\n";
				continue;
			}
			if (ascii)
			{
				if (t == "float")
					snprintf(buf, sizeof(buf), "%.9g ", (double) (float) v);
				else
					snprintf(buf, sizeof(buf), "%.17g ", v);
				out += buf;
				continue;
			}
			if (t == "char" || t == "uchar")
			{
				b[0] = (unsigned char) (int) v;
				n = 1;
			}
			else if (t == "short" || t == "ushort")
			{
				uint16_t	x = (uint16_t) (int32_t) v;

				memcpy(b, &x, 2);
				n = 2;
			}
			else if (t == "int" || t == "uint")
			{
				uint32_t	x = (uint32_t) (int64_t) v;

				memcpy(b, &x, 4);
				n = 4;
			}
			else if (t == "float")
			{
				float		x = (float) v;

				memcpy(b, &x, 4);
				n = 4;
			}
			else
			{
				memcpy(b, &v, 8);
				n = 8;
			}
			if (big)
				for (size_t i = 0; i < n / 2; i++)
					std::swap(b[i], b[n - 1 - i]);
			out.append((const char *) b, n);
		}
		return out;
	}
};

/* A read mesh that frees itself. */
struct PlyMesh
{
	GeoaccMeshResult m{};
	uint32_t	layout = 0;
	GeoaccStatus status = GEOACC_OK;
	std::string message;

	explicit PlyMesh(const std::string &data)
	{
		status = geoacc_ply_read(data.data(), data.size(), &m, &layout);
		message = geoacc_status_message();
	}
	PlyMesh(const PlyMesh &) = delete;
	~PlyMesh() { geoacc_mesh_result_free(&m); }
	GeoaccMesh	view() const
	{
		return {m.nvertices, m.ntriangles, m.positions, m.triangles, m.nattributes, m.attributes};
	}
};

bool
same_mesh(const GeoaccMeshResult &a, const GeoaccMeshResult &b)
{
	return a.nvertices == b.nvertices && a.ntriangles == b.ntriangles && a.nattributes == b.nattributes
		&& (a.nvertices == 0 || memcmp(a.positions, b.positions, (size_t) a.nvertices * 24) == 0)
		&& (a.ntriangles == 0 || memcmp(a.triangles, b.triangles, (size_t) a.ntriangles * 12) == 0)
		&& (a.nvertices * a.nattributes == 0
			|| memcmp(a.attributes, b.attributes, (size_t) a.nvertices * a.nattributes * 4) == 0);
}

/*
 * Five vertices with every attribute kind, an extra vertex property and
 * list, a quad and a triangle with face properties, and an edge element
 * with a list: the parts a reader must skip.
 */
PlySpec
attributed_spec(const char *u, const char *v)
{
	PlySpec		s;
	const double p[5][3] = {{500000.125, 4000000.25, 12.5}, {500001.5, 4000000.25, 13.0},
							{500001.5, 4000001.75, 11.25}, {500000.125, 4000001.75, 12.0},
							{500000.8, 4000002.9, 10.1}};

	s.header = std::string("comment a test mesh\n")
		+ "element vertex 5\n"
		+ "property float nx\nproperty float ny\nproperty float nz\n"
		+ "property int id\n"
		+ "property double z\nproperty double x\nproperty double y\n"
		+ "property uchar red\nproperty uchar green\nproperty uchar blue\nproperty uchar alpha\n"
		+ "property list uchar int neighbours\n"
		+ "property float " + u + "\nproperty float " + v + "\n"
		+ "element face 2\n"
		+ "property int label\n"
		+ "property list uchar int vertex_indices\n"
		+ "property list uchar float weights\n"
		+ "element edge 1\nproperty list ushort uint ends\nproperty double length\n"
		+ "end_header\n";
	for (int i = 0; i < 5; i++)
	{
		s.add("float", 0.0);
		s.add("float", 0.6);
		s.add("float", 0.8);
		s.add("int", 100 + i);
		s.add("double", p[i][2]);
		s.add("double", p[i][0]);
		s.add("double", p[i][1]);
		s.add("uchar", 255 - i * 50);
		s.add("uchar", i * 30);
		s.add("uchar", 128);
		s.add("uchar", 255);
		s.add("uchar", 2);
		s.add("int", (i + 1) % 5);
		s.add("int", (i + 4) % 5);
		s.add("float", 0.25 * i);
		s.add("float", 1 - 0.125 * i);
		s.end();
	}
	s.add("int", -1);
	s.add("uchar", 4);
	for (int i : {0, 1, 2, 3})
		s.add("int", i);
	s.add("uchar", 1);
	s.add("float", 0.5);
	s.end();
	s.add("int", 7);
	s.add("uchar", 3);
	for (int i : {3, 2, 4})
		s.add("int", i);
	s.add("uchar", 0);
	s.end();
	s.add("ushort", 2);
	s.add("uint", 0);
	s.add("uint", 4);
	s.add("double", 2.5);
	s.end();
	return s;
}

std::string
read_file(const char *path)
{
	std::ifstream f(path, std::ios::binary);
	std::stringstream s;

	if (!f)
		throw core_test::Skip{"data/meshes is not readable from here (run from the repository root)"};
	s << f.rdbuf();
	return s.str();
}

std::string
write_ply(const GeoaccMesh &m, uint32_t layout)
{
	size_t		size = 0;

	CHECK_OK(geoacc_ply_write(&m, layout, nullptr, 0, &size));

	std::string out(size, '\0');
	size_t		written = 0;

	CHECK_OK(geoacc_ply_write(&m, layout, (uint8_t *) &out[0], size, &written));
	CHECK(written == size);
	return out;
}

}								/* namespace */

/* One mesh in three encodings: the same bits, the attributes where the layout says. */
TEST(mesh_ply_ascii_and_binary_equal)
{
	PlySpec		s = attributed_spec("u", "v");
	PlyMesh		ascii(s.encode("ascii"));
	PlyMesh		le(s.encode("binary_little_endian"));
	PlyMesh		be(s.encode("binary_big_endian"));

	CHECK_OK(ascii.status);
	CHECK_OK(le.status);
	CHECK_OK(be.status);
	CHECK(same_mesh(ascii.m, le.m));
	CHECK(same_mesh(ascii.m, be.m));
	CHECK(ascii.layout == (GEOACC_MESH_NORMALS | GEOACC_MESH_COLORS | GEOACC_MESH_ALPHA | GEOACC_MESH_TEXCOORDS
						   | GEOACC_MESH_COLORS_UCHAR));
	CHECK(le.layout == ascii.layout && be.layout == ascii.layout);
	CHECK(geoacc_mesh_layout_width(ascii.layout) == 9 && ascii.m.nattributes == 9);
	CHECK(ascii.m.nvertices == 5 && ascii.m.ntriangles == 3);

	/* x y z whatever their order in the file */
	CHECK(ascii.m.positions[0] == 500000.125 && ascii.m.positions[1] == 4000000.25 && ascii.m.positions[2] == 12.5);
	CHECK(ascii.m.positions[12] == 500000.8 && ascii.m.positions[14] == 10.1);

	/* the quad as a fan from its first vertex, then the triangle */
	const uint32_t want[] = {0, 1, 2, 0, 2, 3, 3, 2, 4};

	CHECK(memcmp(ascii.m.triangles, want, sizeof(want)) == 0);

	/* normals, colours (uchar / 255), alpha, u v */
	const float *a = ascii.m.attributes + 9;	/* vertex 1 */

	CHECK(a[0] == 0.0f && a[1] == 0.6f && a[2] == 0.8f);
	CHECK(a[3] == (float) (205 / 255.0) && a[4] == (float) (30 / 255.0) && a[5] == (float) (128 / 255.0));
	CHECK(a[6] == 1.0f);
	CHECK(a[7] == 0.25f && a[8] == 0.875f);
}

/* Texture coordinates under each spelling writers use; colours as floats. */
TEST(mesh_ply_texcoord_names_and_float_colours)
{
	const char *names[][2] = {{"u", "v"}, {"s", "t"}, {"texture_u", "texture_v"}, {"texture_s", "texture_t"}};
	PlyMesh		ref(attributed_spec("u", "v").encode("binary_little_endian"));

	for (auto &n : names)
	{
		PlyMesh		m(attributed_spec(n[0], n[1]).encode("binary_little_endian"));

		CHECK_OK(m.status);
		CHECK(m.layout == ref.layout && same_mesh(m.m, ref.m));
	}

	PlySpec		s;

	s.header = "element vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
		"property float red\nproperty float green\nproperty float blue\n"
		"element face 1\nproperty list uchar uint vertex_index\nend_header\n";
	for (int i = 0; i < 3; i++)
	{
		for (double x : {i * 1.0, i * 0.5, 0.0, 0.1 * i, 0.2, 0.3})
			s.add("float", x);
		s.end();
	}
	s.add("uchar", 3);
	for (int i = 0; i < 3; i++)
		s.add("uint", i);
	s.end();

	PlyMesh		f(s.encode("ascii"));

	CHECK_OK(f.status);
	CHECK(f.layout == GEOACC_MESH_COLORS && f.m.nattributes == 3);
	CHECK(f.m.attributes[3] == 0.1f && f.m.attributes[4] == 0.2f);
	CHECK(f.m.positions[3] == 1.0 && f.m.positions[4] == 0.5);
	CHECK(f.m.ntriangles == 1);
}

/* A mesh without faces, and a face element of no faces, are empty meshes. */
TEST(mesh_ply_no_faces)
{
	PlyMesh		a("ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
				  "property float z\nend_header\n1 2 3\n");
	PlyMesh		b("ply\r\nformat binary_little_endian 1.0\r\nelement vertex 0\r\nproperty float x\r\n"
				  "property float y\r\nproperty float z\r\nelement face 0\r\nproperty list uchar int vertex_indices\r\n"
				  "end_header\r\n");

	CHECK_OK(a.status);
	CHECK(a.m.nvertices == 1 && a.m.ntriangles == 0 && a.m.positions[2] == 3.0);
	CHECK_OK(b.status);
	CHECK(b.m.nvertices == 0 && b.m.ntriangles == 0);
}

/* Written and read back: the same bits, uchar and float colours alike. */
TEST(mesh_ply_write_read_back)
{
	PlyMesh		m(attributed_spec("u", "v").encode("ascii"));

	CHECK_OK(m.status);

	std::string bytes = write_ply(m.view(), m.layout);
	PlyMesh		back(bytes);

	CHECK_OK(back.status);
	CHECK(back.layout == m.layout);
	CHECK(same_mesh(back.m, m.m));
	CHECK(bytes.compare(0, 3, "ply") == 0);
	CHECK(bytes.find("format binary_little_endian 1.0\n") != std::string::npos);
	CHECK(bytes.find("property uchar alpha\n") != std::string::npos);
	CHECK(bytes.find("property list uchar uint vertex_indices\nend_header\n") != std::string::npos);

	/* random meshes with random float attributes, each layout */
	std::uniform_real_distribution<double> u(-1e6, 1e6);
	std::uniform_real_distribution<float> c(0, 1);

	for (uint32_t layout : {0u, (uint32_t) GEOACC_MESH_NORMALS, (uint32_t) GEOACC_MESH_COLORS,
							(uint32_t) (GEOACC_MESH_COLORS | GEOACC_MESH_ALPHA),
							(uint32_t) (GEOACC_MESH_NORMALS | GEOACC_MESH_TEXCOORDS)})
	{
		const uint32_t k = geoacc_mesh_layout_width(layout);
		std::vector<double> p(300);
		std::vector<uint32_t> t;
		std::vector<float> a(100 * k);

		for (double &x : p)
			x = u(core_test::rng());
		for (float &x : a)
			x = c(core_test::rng());
		for (uint32_t f = 0; f < 98; f++)
			t.insert(t.end(), {f, f + 1, f + 2});

		GeoaccMesh	mesh = {100, 98, p.data(), t.data(), k, k ? a.data() : nullptr};
		PlyMesh		r(write_ply(mesh, layout));

		CHECK_OK(r.status);
		CHECK(r.layout == layout);
		CHECK(r.m.nvertices == 100 && r.m.ntriangles == 98 && r.m.nattributes == k);
		CHECK(memcmp(r.m.positions, p.data(), p.size() * 8) == 0);
		CHECK(memcmp(r.m.triangles, t.data(), t.size() * 4) == 0);
		CHECK(k == 0 || memcmp(r.m.attributes, a.data(), a.size() * 4) == 0);
	}

	/* the size asked first; a short buffer is refused */
	size_t		size = 0;
	std::vector<uint8_t> small(10);
	GeoaccMesh	v = m.view();

	CHECK(geoacc_ply_write(&v, m.layout, small.data(), small.size(), &size) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_ply_write(&v, GEOACC_MESH_NORMALS, nullptr, 0, &size) == GEOACC_ERR_INVALID_ARGUMENT);
	CHECK(geoacc_ply_write(&v, GEOACC_MESH_ALPHA, nullptr, 0, &size) == GEOACC_ERR_INVALID_ARGUMENT);
}

/* Every malformed file: INVALID_ARGUMENT and the message that says what is wrong. */
TEST(mesh_ply_malformed)
{
	const std::string xyz = "element vertex 3\nproperty float x\nproperty float y\nproperty float z\n";
	const std::string faces = "element face 1\nproperty list uchar int vertex_indices\n";
	const std::string body = "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
	const std::string ascii = "ply\nformat ascii 1.0\n";
	const std::string le = "ply\nformat binary_little_endian 1.0\n";
	const struct
	{
		std::string data;
		const char *message;
	}			cases[] = {
		{"", "not a PLY file: the data does not start with a \"ply\" line"},
		{"PLY\nformat ascii 1.0\n", "not a PLY file: the data does not start with a \"ply\" line"},
		{"plyx\n", "not a PLY file: the data does not start with a \"ply\" line"},
		{ascii + xyz + faces, "PLY header has no end_header line"},
		{"ply\n" + xyz + faces + "end_header\n" + body, "PLY header has no format line"},
		{"ply\nformat ascii\n", "PLY header line 2: a format line needs a format and a version"},
		{"ply\nformat text 1.0\n", "PLY header line 2: unknown format \"text\""},
		{"ply\nformat ascii 2.0\n", "PLY header line 2: unsupported version \"2.0\""},
		{ascii + "element vertex\n", "PLY header line 3: an element line needs a name and a count"},
		{ascii + "element vertex -3\n", "PLY header line 3: element count \"-3\" is not a number"},
		{ascii + "element vertex 3x\n", "PLY header line 3: element count \"3x\" is not a number"},
		{ascii + xyz + "element vertex 1\n", "PLY header line 7: a second element \"vertex\""},
		{ascii + "property float x\n", "PLY header line 3: a property before any element"},
		{ascii + "element vertex 1\nproperty float128 x\n", "PLY header line 4: unknown property type \"float128\""},
		{ascii + "element vertex 1\nproperty float\n", "PLY header line 4: a property line needs a type and a name"},
		{ascii + "element face 1\nproperty list uchar vertex_indices\n",
		 "PLY header line 4: a list property needs a count type, an item type and a name"},
		{ascii + "element face 1\nproperty list float int vertex_indices\n",
		 "PLY header line 4: a list count of type float; it must be an integer type"},
		{ascii + "element face 1\nproperty list uchar long vertex_indices\n",
		 "PLY header line 4: unknown property type \"long\""},
		{ascii + "element vertex 1\nproperty float x\nproperty double x\n",
		 "PLY header line 5: a second property \"x\" in element vertex"},
		{ascii + "elements vertex 1\n", "PLY header line 3: unknown keyword \"elements\""},
		{ascii + faces + "end_header\n3 0 1 2\n", "PLY header has no vertex element"},
		{ascii + "element vertex 1\nproperty float x\nproperty float y\nend_header\n0 0\n",
		 "PLY vertex element has no property z"},
		{ascii + "element vertex 1\nproperty int x\nproperty float y\nproperty float z\nend_header\n0 0 0\n",
		 "PLY vertex property x has type int; coordinates must be float or double"},
		{ascii + "element vertex 1\nproperty list uchar float x\nproperty float y\nproperty float z\nend_header\n",
		 "PLY vertex property x is a list"},
		{ascii + xyz + "property float nx\nproperty float ny\nend_header\n",
		 "PLY vertex element has only some of the properties nx, ny, nz"},
		{ascii + xyz + "property uchar red\nproperty uchar green\nend_header\n",
		 "PLY vertex element has only some of the properties red, green, blue"},
		{ascii + xyz + "property float u\nend_header\n", "PLY vertex element has only some of the properties u, v"},
		{ascii + xyz + "property ushort red\nproperty ushort green\nproperty ushort blue\nend_header\n",
		 "PLY vertex property red has type ushort; it must be uchar, float or double"},
		{ascii + xyz + "property int nx\nproperty int ny\nproperty int nz\nend_header\n",
		 "PLY vertex property nx has type int; it must be float or double"},
		{ascii + xyz + "property uchar alpha\nend_header\n", "PLY vertex element has alpha but no red, green, blue"},
		{ascii + xyz + "property float red\nproperty float green\nproperty float blue\nproperty int alpha\nend_header\n",
		 "PLY vertex property alpha has type int; it must be uchar, float or double"},
		{ascii + xyz + "element face 1\nproperty list uchar int corners\nend_header\n",
		 "PLY face element has no vertex_indices property"},
		{ascii + xyz + "element face 1\nproperty int vertex_indices\nend_header\n",
		 "PLY face property vertex_indices is not a list"},
		{ascii + xyz + "element face 1\nproperty list uchar float vertex_indices\nend_header\n",
		 "PLY face property vertex_indices has items of type float; indices must be integers"},
		{ascii + "element vertex 600000000\nproperty float x\nproperty float y\nproperty float z\nend_header\n",
		 "PLY file has 600000000 vertices, more than the 536870911 a mesh can take"},
		{ascii + "element vertex 30\nproperty float x\nproperty float y\nproperty float z\nend_header\n" + body,
		 "PLY data is truncated: 30 vertex elements take at least 180 bytes, but 26 follow the header"},
		{ascii + xyz + faces + "end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1\n",
		 "PLY data is truncated: it ends inside face 1 of 1"},
		{ascii + xyz + faces + "end_header\n0.000 0 0\n1.000 0 0\n0 1\n", "PLY data is truncated: it ends inside vertex 3 of 3"},
		{ascii + xyz + faces + "end_header\n" + body + "3 0 1 2\n",
		 "PLY data goes on after the last element: \"3 0 1 2\""},
		{ascii + xyz + faces + "end_header\n0 0 0\n1 0 zero\n0 1 0\n3 0 1 2\n",
		 "PLY data: \"zero\" is not a valid float (vertex 2, property z)"},
		{ascii + xyz + faces + "end_header\n" + "0 0 0\n1 0 0\n0 1 0\n300 0 1 2\n",
		 "PLY data: \"300\" is not a valid uchar (face 1, property vertex_indices)"},
		{ascii + xyz + faces + "end_header\n" + "0 0 0\n1 0 0\n0 1 0\n3 0 1 2.0\n",
		 "PLY data: \"2.0\" is not a valid int (face 1, property vertex_indices)"},
		{ascii + xyz + faces + "end_header\n0 0 0\n1 0 0\n0 1 0\n2 0 1\n",
		 "PLY face 1 has 2 vertices; a face needs at least 3"},
		{ascii + xyz + faces + "end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n",
		 "PLY face 1 refers to vertex 3, but the file has 3 vertices (numbered from 0)"},
		{ascii + xyz + faces + "end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 -1 2\n",
		 "PLY face 1 refers to vertex -1, but the file has 3 vertices (numbered from 0)"},
		{ascii + xyz + faces + "end_header\n0 0 0\n1 nan 0\n0 1 0\n3 0 1 2\n",
		 "PLY vertex 2 has a non-finite y: nan"},
		{ascii + xyz + faces + "end_header\n0 0 0\n1 0 0\n0 1 inf\n3 0 1 2\n", "PLY vertex 3 has a non-finite z: inf"},
		{ascii + xyz + "element face 1\nproperty list char int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n-3 0 1 2\n",
		 "PLY face 1: list vertex_indices has -3 items"},
		{ascii + xyz + "element face 1\nproperty list uchar int vertex_indices\nproperty list char int tags\nend_header\n"
		 + body.substr(0, body.size() - 1) + " -1 5\n", "PLY face 1: list tags has -1 items"},
		{ascii + xyz + faces + "element edge 1\nproperty list char int ends\nend_header\n" + body + "-2\n",
		 "PLY edge 1: list ends has -2 items"},
		{le + xyz + faces + "end_header\n" + std::string(36, '\0') + std::string("\x03\0\0\0\0\x01\0\0\0\x02\0\0", 12),
		 "PLY data is truncated: it ends inside face 1 of 1"},
		{le + xyz + faces + "end_header\n" + std::string(36, '\0') + std::string("\x03\0\0\0\0\x01\0\0\0\x02\0\0\0\0", 15),
		 "PLY data goes on after the last element: 2 bytes more than the counts say"},
		{le + xyz + faces + "end_header\n" + std::string(30, '\0'),
		 "PLY data is truncated: 3 vertex elements take at least 36 bytes, but 30 follow the header"},
	};
	int			n = 0;

	for (const auto &c : cases)
	{
		PlyMesh		m(c.data);

		n++;
		if (m.status != GEOACC_ERR_INVALID_ARGUMENT || m.message != c.message)
		{
			fprintf(stderr, "    case %d: status %d, message \"%s\"\n      expected \"%s\"\n", n, (int) m.status,
					m.message.c_str(), c.message);
			CHECK(m.status == GEOACC_ERR_INVALID_ARGUMENT && m.message == c.message);
		}
		CHECK(m.m.positions == nullptr && m.m.triangles == nullptr && m.m.nvertices == 0);
	}

	/* the well-formed file these cases break reads fine */
	PlyMesh		ok(ascii + xyz + faces + "end_header\n" + body);

	CHECK_OK(ok.status);
	CHECK(ok.m.ntriangles == 1);
}

/* A real file: CGAL's colored_tetra.ply (double normals, uchar colours, an int id, face colours, edges). */
TEST(mesh_ply_real_colored_tetra)
{
	PlyMesh		m(read_file("data/meshes/colored_tetra.ply"));

	CHECK_OK(m.status);
	CHECK(m.layout == (GEOACC_MESH_NORMALS | GEOACC_MESH_COLORS | GEOACC_MESH_COLORS_UCHAR));
	CHECK(m.m.nvertices == 4 && m.m.ntriangles == 4 && m.m.nattributes == 6);

	const uint32_t want[] = {0, 1, 2, 0, 3, 1, 1, 3, 2, 0, 2, 3};

	CHECK(memcmp(m.m.triangles, want, sizeof(want)) == 0);
	CHECK(m.m.positions[5] == 1.0 && m.m.positions[7] == 1.0 && m.m.positions[9] == 1.0);
	CHECK(m.m.attributes[6 * 2 + 3] == (float) (128 / 255.0) && m.m.attributes[6 * 2 + 4] == 0.0f);
	CHECK(m.m.attributes[6 * 3 + 0] == 0.0f && m.m.attributes[6 * 3 + 1] == -0.5f);

	/* and written back as binary: the same mesh */
	PlyMesh		back(write_ply(m.view(), m.layout));

	CHECK(same_mesh(back.m, m.m) && back.layout == m.layout);
}

/* Welding: equal position and attributes merge (-0 = +0); a UV seam stays two vertices. */
TEST(mesh_ply_weld_vertices)
{
	std::vector<double> p = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, -0.0, 0, 0, 1, 0, 0};
	std::vector<float> uv = {0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0.5f, 0};
	std::vector<uint32_t> t = {0, 1, 2, 3, 4, 2, 5, 2, 0};
	GeoaccMesh	m = {6, 3, p.data(), t.data(), 2, uv.data()};
	GeoaccMeshResult r{};

	CHECK_OK(geoacc_mesh_weld_vertices(&m, &r));
	/* 3 equals 1, 4 equals 0 (-0); 5 is at 1's point with another u: a seam */
	CHECK(r.nvertices == 4 && r.ntriangles == 3 && r.nattributes == 2);

	const uint32_t want[] = {0, 1, 2, 1, 0, 2, 3, 2, 0};

	CHECK(memcmp(r.triangles, want, sizeof(want)) == 0);
	CHECK(r.positions[9] == 1 && r.attributes[6] == 0.5f);
	geoacc_mesh_result_free(&r);

	/* without duplicates: unchanged */
	PlyMesh		a(attributed_spec("u", "v").encode("ascii"));
	GeoaccMesh	v = a.view();

	CHECK_OK(geoacc_mesh_weld_vertices(&v, &r));
	CHECK(same_mesh(r, a.m));
	geoacc_mesh_result_free(&r);

	/* without attributes, by position alone */
	m.nattributes = 0;
	m.attributes = nullptr;
	CHECK_OK(geoacc_mesh_weld_vertices(&m, &r));
	CHECK(r.nvertices == 3);
	geoacc_mesh_result_free(&r);

	t[4] = 6;
	CHECK(geoacc_mesh_weld_vertices(&m, &r) == GEOACC_ERR_INVALID_ARGUMENT);
}

/*
 * Attributes of cut points by hand: the triangle (0,0) (2,0) (0,2) with
 * UVs (0,0) (1,0) (0,1) cut at x = 1 gives (1,0) with UV (0.5, 0) and
 * (1,1) with UV (0.5, 0.5).  Its neighbour across the edge (2,0)-(0,2)
 * has its own vertices there with other UVs (a seam): the cut point of the
 * common edge is the same point twice, (0.5, 0.5) on one side and
 * (0.5, 0.75) on the other.
 */
TEST(mesh_ply_clip_interpolates_uv_across_a_seam)
{
	std::vector<double> p = {0, 0, 0, 2, 0, 0, 0, 2, 0, 2, 0, 0, 0, 2, 0, 2, 2, 0};
	std::vector<float> uv = {0, 0, 1, 0, 0, 1, 0.25f, 0.75f, 0.75f, 0.75f, 1, 1};
	std::vector<uint32_t> t = {0, 1, 2, 3, 5, 4};
	GeoaccMesh	m = {6, 2, p.data(), t.data(), 2, uv.data()};
	GeoaccBox	b = {-1, -1, -1, 1, 3, 1};
	GeoaccMeshResult r{};

	CHECK_OK(geoacc_mesh_clip(GEOACC_DEVICE_CPU, &m, &b, 1, &r, nullptr));

	/* kept: 0, 2 and 4 (the seam copy of 2); new: (1,0), (1,1) once per side, (1,2) */
	int			found_10 = 0,
				found_11a = 0,
				found_11b = 0;

	for (uint32_t v = 0; v < r.nvertices; v++)
	{
		const double *q = r.positions + (size_t) v * 3;
		const float *a = r.attributes + (size_t) v * 2;

		if (q[0] == 1 && q[1] == 0)
			found_10 += a[0] == 0.5f && a[1] == 0.0f;
		if (q[0] == 1 && q[1] == 1)
		{
			found_11a += a[0] == 0.5f && a[1] == 0.5f;
			found_11b += a[0] == 0.5f && a[1] == 0.75f;
		}
	}
	CHECK(found_10 == 1);
	CHECK(found_11a == 1);
	CHECK(found_11b == 1);
	CHECK(r.nvertices == 7 && r.ntriangles == 3);
	geoacc_mesh_result_free(&r);
}

/* A PLY mesh with every attribute, clipped on the GPU and the CPU: the same bits. */
TEST(mesh_ply_gpu_equals_cpu_with_attributes)
{
	REQUIRE_GPU();

	PlySpec		s;
	std::uniform_real_distribution<double> u(0, 100);
	std::uniform_int_distribution<int> pick(0, 1999);
	std::uniform_int_distribution<int> byte(0, 255);

	s.header = "element vertex 2000\nproperty double x\nproperty double y\nproperty double z\n"
		"property float nx\nproperty float ny\nproperty float nz\n"
		"property uchar red\nproperty uchar green\nproperty uchar blue\n"
		"property float u\nproperty float v\n"
		"element face 3000\nproperty list uchar int vertex_indices\nend_header\n";
	for (int i = 0; i < 2000; i++)
	{
		s.add("double", 500000 + u(core_test::rng()));
		s.add("double", 4000000 + u(core_test::rng()));
		s.add("double", u(core_test::rng()) / 10);
		for (int c = 0; c < 3; c++)
			s.add("float", u(core_test::rng()) / 100);
		for (int c = 0; c < 3; c++)
			s.add("uchar", byte(core_test::rng()));
		s.add("float", u(core_test::rng()) / 100);
		s.add("float", u(core_test::rng()) / 100);
		s.end();
	}
	for (int f = 0; f < 3000; f++)
	{
		s.add("uchar", 3);
		for (int c = 0; c < 3; c++)
			s.add("int", pick(core_test::rng()));
		s.end();
	}

	PlyMesh		m(s.encode("binary_little_endian"));
	GeoaccMesh	v = m.view();
	std::vector<GeoaccBox> boxes;

	CHECK_OK(m.status);
	for (int b = 0; b < 6; b++)
	{
		double		x = 500000 + u(core_test::rng()),
					y = 4000000 + u(core_test::rng());

		boxes.push_back({x, y, 1, x + 30, y + 40, 8});
	}

	std::vector<GeoaccMeshResult> cpu(boxes.size()),
				gpu(boxes.size());

	CHECK_OK(geoacc_mesh_clip(GEOACC_DEVICE_CPU, &v, boxes.data(), (uint32_t) boxes.size(), cpu.data(), nullptr));
	CHECK_OK(geoacc_mesh_clip(GEOACC_DEVICE_GPU, &v, boxes.data(), (uint32_t) boxes.size(), gpu.data(), nullptr));
	uint64_t	clipped = 0;

	for (size_t b = 0; b < boxes.size(); b++)
	{
		/* normals, colours and texture coordinates: 3 + 3 + 2 */
		CHECK(cpu[b].nattributes == 8);
		CHECK(same_mesh(cpu[b], gpu[b]));
		CHECK(write_ply({cpu[b].nvertices, cpu[b].ntriangles, cpu[b].positions, cpu[b].triangles, 8,
						 cpu[b].attributes}, m.layout)
			  == write_ply({gpu[b].nvertices, gpu[b].ntriangles, gpu[b].positions, gpu[b].triangles, 8,
							gpu[b].attributes}, m.layout));
		clipped += cpu[b].ntriangles;
		geoacc_mesh_result_free(&cpu[b]);
		geoacc_mesh_result_free(&gpu[b]);
	}
	CHECK(clipped > 0);
}

/*
 * GLB: header and chunk lengths, 4-byte alignment, the origin in the
 * node's translation, positions float32 around it (y-up), normals made
 * unit, v flipped, indices as given.
 */
TEST(mesh_glb_structure)
{
	PlyMesh		m(attributed_spec("u", "v").encode("ascii"));
	GeoaccMesh	v = m.view();
	size_t		size = 0;

	CHECK_OK(m.status);
	CHECK_OK(geoacc_glb_write(&v, m.layout, nullptr, 0, &size));

	std::vector<uint8_t> g(size);
	uint32_t	h[5];

	CHECK_OK(geoacc_glb_write(&v, m.layout, g.data(), g.size(), &size));
	memcpy(h, g.data(), 20);
	CHECK(h[0] == 0x46546C67 && h[1] == 2 && h[2] == size && h[3] % 4 == 0 && h[4] == 0x4E4F534A);

	const std::string json((const char *) g.data() + 20, h[3]);
	uint32_t	bin[2];

	memcpy(bin, g.data() + 20 + h[3], 8);
	CHECK(bin[1] == 0x004E4942 && bin[0] % 4 == 0 && 20 + h[3] + 8 + bin[0] == size);

	/* the centre of the bounding box, y-up */
	const double origin[3] = {500000.125 + (500001.5 - 500000.125) / 2, 4000000.25 + (4000002.9 - 4000000.25) / 2,
							  10.1 + (13.0 - 10.1) / 2};
	char		translation[200];

	snprintf(translation, sizeof(translation), "\"translation\":[%.17g,%.17g,%.17g]", origin[0], origin[2], -origin[1]);
	CHECK(json.find(translation) != std::string::npos);
	CHECK(json.find("\"NORMAL\":1,\"COLOR_0\":2,\"TEXCOORD_0\":3},\"indices\":4") != std::string::npos);
	CHECK(json.find("\"type\":\"VEC4\"") != std::string::npos);

	/* the arrays one after the other: positions, normals, colours, UVs, indices */
	const float *f = (const float *) (g.data() + 20 + h[3] + 8);
	const float *nor = f + 15;
	const float *uv = f + 15 + 15 + 20;
	const uint32_t *idx = (const uint32_t *) (uv + 10);

	for (uint32_t i = 0; i < 5; i++)
	{
		const double *p = m.m.positions + i * 3;

		CHECK(f[i * 3] == (float) (p[0] - origin[0]));
		CHECK(f[i * 3 + 1] == (float) (p[2] - origin[2]));
		CHECK(f[i * 3 + 2] == (float) -(p[1] - origin[1]));
		CHECK(fabs(nor[i * 3] * nor[i * 3] + nor[i * 3 + 1] * nor[i * 3 + 1] + nor[i * 3 + 2] * nor[i * 3 + 2] - 1) < 1e-6);
		CHECK(uv[i * 2] == m.m.attributes[i * 9 + 7] && uv[i * 2 + 1] == 1.0f - m.m.attributes[i * 9 + 8]);
	}
	CHECK(memcmp(idx, m.m.triangles, 9 * 4) == 0);

	/* positions at UTM magnitudes: the float32 offsets plus the origin are within a millimetre */
	CHECK(fabs(f[12] + origin[0] - 500000.8) < 1e-3 && fabs(-f[14] + origin[1] - 4000002.9) < 1e-3);

	/* zero normals cannot be made unit: left out; no triangles: no mesh, no binary chunk */
	std::vector<float> a(m.m.attributes, m.m.attributes + 45);

	a[0] = a[1] = a[2] = 0;
	v.attributes = a.data();
	CHECK_OK(geoacc_glb_write(&v, m.layout, nullptr, 0, &size));
	g.assign(size, 0);
	CHECK_OK(geoacc_glb_write(&v, m.layout, g.data(), g.size(), &size));
	memcpy(h, g.data(), 20);
	CHECK(std::string((const char *) g.data() + 20, h[3]).find("NORMAL") == std::string::npos);

	GeoaccMesh	empty = {0, 0, nullptr, nullptr, 0, nullptr};

	CHECK_OK(geoacc_glb_write(&empty, 0, nullptr, 0, &size));
	CHECK(size == 12 + 8 + 72);	/* the JSON of an asset and an empty scene, padded */
	CHECK(geoacc_glb_write(&v, 0, nullptr, 0, &size) == GEOACC_ERR_INVALID_ARGUMENT);
}
