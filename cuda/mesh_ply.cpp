/*
 * mesh_ply.cpp
 *
 * PLY meshes in and out (the Stanford polygon format, as real mesh files and
 * photogrammetry tools write it): a header parser, readers for ASCII and
 * binary little- and big-endian data that pick the vertex positions, normals,
 * colours and texture coordinates and the faces out of whatever else a file
 * carries, and a binary little-endian writer.  Every malformed input is an
 * INVALID_ARGUMENT naming what is wrong and where; nothing is read past the
 * end of the data.
 */
#include "mesh_clip.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the PLY reader and writer assume a little-endian host");

namespace geoacc
{

namespace
{

enum PlyType : uint8_t
{
	PLY_CHAR,
	PLY_UCHAR,
	PLY_SHORT,
	PLY_USHORT,
	PLY_INT,
	PLY_UINT,
	PLY_FLOAT,
	PLY_DOUBLE
};

struct PlyTypeName
{
	const char *name;
	PlyType		type;
};

/* The PLY 1.0 names and the sized names later writers use. */
const PlyTypeName ply_type_names[] = {
	{"char", PLY_CHAR}, {"int8", PLY_CHAR}, {"uchar", PLY_UCHAR}, {"uint8", PLY_UCHAR},
	{"short", PLY_SHORT}, {"int16", PLY_SHORT}, {"ushort", PLY_USHORT}, {"uint16", PLY_USHORT},
	{"int", PLY_INT}, {"int32", PLY_INT}, {"uint", PLY_UINT}, {"uint32", PLY_UINT},
	{"float", PLY_FLOAT}, {"float32", PLY_FLOAT}, {"double", PLY_DOUBLE}, {"float64", PLY_DOUBLE},
};

const char *const ply_type_spelling[] = {"char", "uchar", "short", "ushort", "int", "uint", "float", "double"};

const int	ply_type_size[] = {1, 1, 2, 2, 4, 4, 4, 8};

bool
ply_type_is_integer(PlyType t)
{
	return t != PLY_FLOAT && t != PLY_DOUBLE;
}

/* Where a vertex property goes: nowhere, a coordinate, or an attribute slot. */
enum PlyTarget : uint8_t
{
	TARGET_SKIP,
	TARGET_X,
	TARGET_Y,
	TARGET_Z,
	TARGET_NX,
	TARGET_NY,
	TARGET_NZ,
	TARGET_RED,
	TARGET_GREEN,
	TARGET_BLUE,
	TARGET_ALPHA,
	TARGET_U,
	TARGET_V,
	TARGET_INDICES
};

struct PlyProperty
{
	std::string name;
	PlyType		type;
	bool		is_list;
	PlyType		count_type;
	PlyTarget	target;
	int			slot;			/* attribute float, or -1 */
};

struct PlyElement
{
	std::string name;
	uint64_t	count;
	int			line;
	std::vector<PlyProperty> properties;
};

enum PlyFormat
{
	PLY_ASCII,
	PLY_BINARY_LE,
	PLY_BINARY_BE
};

struct PlyHeader
{
	PlyFormat	format;
	std::vector<PlyElement> elements;
	size_t		data_offset;
};

bool
parse_type(const std::string &word, PlyType *type)
{
	for (const PlyTypeName &t : ply_type_names)
		if (word == t.name)
		{
			*type = t.type;
			return true;
		}
	return false;
}

/*
 * A word of the file as a message shows it: at most 40 characters,
 * printable ASCII kept and every other byte written as \xNN, so that a
 * message never cuts a multibyte character or carries bytes that a
 * client's encoding cannot take.
 */
std::string
shown(const std::string &word)
{
	std::string out;

	for (unsigned char c : word)
	{
		char		hex[5];

		if (out.size() >= 40)
			break;
		if (c >= 0x20 && c < 0x7f && c != '\\')
			out += (char) c;
		else
		{
			snprintf(hex, sizeof(hex), "\\x%02x", c);
			out += hex;
		}
	}
	return out;
}

/* The words of a header line (space or tab separated). */
std::vector<std::string>
split_words(const char *p, const char *end)
{
	std::vector<std::string> words;

	while (p < end)
	{
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;

		const char *w = p;

		while (p < end && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
		if (p > w)
			words.emplace_back(w, p - w);
	}
	return words;
}

PlyHeader
parse_header(const char *data, size_t size)
{
	PlyHeader	h{};
	const char *p = data;
	const char *end = data + size;
	int			line = 0;
	bool		have_format = false;

	if (size < 4 || memcmp(data, "ply", 3) != 0 || (data[3] != '\n' && data[3] != '\r'))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "not a PLY file: the data does not start with a \"ply\" line");
	for (;;)
	{
		const char *eol = static_cast<const char *>(memchr(p, '\n', end - p));

		if (p == end)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header has no end_header line");
		if (eol == nullptr)
			eol = end;
		line++;

		std::vector<std::string> w = split_words(p, eol);

		p = eol < end ? eol + 1 : end;
		if (line == 1)
			continue;			/* "ply" */
		if (w.empty() || w[0] == "comment" || w[0] == "obj_info")
			continue;
		if (w[0] == "end_header")
			break;
		if (w[0] == "format")
		{
			if (w.size() != 3)
				fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: a format line needs a format and a version",
					 line);
			if (w[1] == "ascii")
				h.format = PLY_ASCII;
			else if (w[1] == "binary_little_endian")
				h.format = PLY_BINARY_LE;
			else if (w[1] == "binary_big_endian")
				h.format = PLY_BINARY_BE;
			else
				fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: unknown format \"%s\"", line, shown(w[1]).c_str());
			if (w[2] != "1.0")
				fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: unsupported version \"%s\"", line,
					 shown(w[2]).c_str());
			have_format = true;
		}
		else if (w[0] == "element")
		{
			PlyElement	e;
			char	   *stop;

			if (w.size() != 3)
				fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: an element line needs a name and a count",
					 line);
			errno = 0;
			e.count = strtoull(w[2].c_str(), &stop, 10);
			if (*stop != '\0' || errno != 0 || w[2][0] == '-')
				fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: element count \"%s\" is not a number",
					 line, shown(w[2]).c_str());
			for (const PlyElement &o : h.elements)
				if (o.name == w[1])
					fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: a second element \"%s\"", line,
						 shown(w[1]).c_str());
			e.name = w[1];
			e.line = line;
			h.elements.push_back(e);
		}
		else if (w[0] == "property")
		{
			PlyProperty prop{};
			size_t		name_at;

			if (h.elements.empty())
				fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: a property before any element", line);
			if (w.size() >= 2 && w[1] == "list")
			{
				if (w.size() != 5)
					fail(GEOACC_ERR_INVALID_ARGUMENT,
						 "PLY header line %d: a list property needs a count type, an item type and a name", line);
				if (!parse_type(w[2], &prop.count_type))
					fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: unknown property type \"%s\"", line,
						 shown(w[2]).c_str());
				if (!ply_type_is_integer(prop.count_type))
					fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: a list count of type %s; it must be an integer type",
						 line, ply_type_spelling[prop.count_type]);
				if (!parse_type(w[3], &prop.type))
					fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: unknown property type \"%s\"", line,
						 shown(w[3]).c_str());
				prop.is_list = true;
				name_at = 4;
			}
			else
			{
				if (w.size() != 3)
					fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: a property line needs a type and a name",
						 line);
				if (!parse_type(w[1], &prop.type))
					fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: unknown property type \"%s\"", line,
						 shown(w[1]).c_str());
				name_at = 2;
			}
			prop.name = w[name_at];
			prop.slot = -1;
			for (const PlyProperty &o : h.elements.back().properties)
				if (o.name == prop.name)
					fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: a second property \"%s\" in element %s",
						 line, shown(prop.name).c_str(), shown(h.elements.back().name).c_str());
			h.elements.back().properties.push_back(prop);
		}
		else
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header line %d: unknown keyword \"%s\"", line, shown(w[0]).c_str());
	}
	if (!have_format)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header has no format line");
	h.data_offset = (size_t) (p - data);
	return h;
}

/* Property names of each attribute, the first spelling found wins. */
struct TargetName
{
	const char *name;
	PlyTarget	target;
};

const TargetName vertex_names[] = {
	{"x", TARGET_X}, {"y", TARGET_Y}, {"z", TARGET_Z},
	{"nx", TARGET_NX}, {"ny", TARGET_NY}, {"nz", TARGET_NZ},
	{"red", TARGET_RED}, {"green", TARGET_GREEN}, {"blue", TARGET_BLUE}, {"alpha", TARGET_ALPHA},
	{"u", TARGET_U}, {"v", TARGET_V}, {"s", TARGET_U}, {"t", TARGET_V},
	{"texture_u", TARGET_U}, {"texture_v", TARGET_V}, {"texture_s", TARGET_U}, {"texture_t", TARGET_V},
};

const char *const target_group[] = {
	"", "x, y, z", "x, y, z", "x, y, z", "nx, ny, nz", "nx, ny, nz", "nx, ny, nz",
	"red, green, blue", "red, green, blue", "red, green, blue", "alpha", "u, v", "u, v", ""
};

/*
 * Decide where each vertex property goes and what the layout is: x y z
 * required (float or double), the attribute groups taken whole or not at
 * all.
 */
uint32_t
assign_vertex_targets(PlyElement &vertex)
{
	PlyProperty *found[TARGET_INDICES] = {};
	uint32_t	layout = 0;

	for (PlyProperty &p : vertex.properties)
		for (const TargetName &n : vertex_names)
			if (p.name == n.name && found[n.target] == nullptr)
			{
				if (p.is_list)
					fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY vertex property %s is a list", shown(p.name).c_str());
				found[n.target] = &p;
				break;
			}
	for (int t = TARGET_X; t <= TARGET_Z; t++)
	{
		if (found[t] == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY vertex element has no property %c", "xyz"[t - TARGET_X]);
		if (ply_type_is_integer(found[t]->type))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY vertex property %s has type %s; coordinates must be float or double",
				 shown(found[t]->name).c_str(), ply_type_spelling[found[t]->type]);
	}

	/* each group whole or not at all, with the types it can take */
	struct Group
	{
		PlyTarget	first;
		int			n;
		uint32_t	flag;
	};
	const Group groups[] = {{TARGET_NX, 3, GEOACC_MESH_NORMALS}, {TARGET_RED, 3, GEOACC_MESH_COLORS},
							{TARGET_U, 2, GEOACC_MESH_TEXCOORDS}};

	for (const Group &g : groups)
	{
		int			have = 0;

		for (int i = 0; i < g.n; i++)
			have += found[g.first + i] != nullptr;
		if (have == 0)
			continue;
		if (have < g.n)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY vertex element has only some of the properties %s",
				 target_group[g.first]);
		for (int i = 0; i < g.n; i++)
		{
			const PlyProperty *p = found[g.first + i];

			if (g.flag == GEOACC_MESH_COLORS ? p->type != PLY_UCHAR && ply_type_is_integer(p->type)
				: ply_type_is_integer(p->type))
				fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY vertex property %s has type %s; it must be %s",
					 shown(p->name).c_str(), ply_type_spelling[p->type],
					 g.flag == GEOACC_MESH_COLORS ? "uchar, float or double" : "float or double");
		}
		layout |= g.flag;
	}
	if (found[TARGET_ALPHA] != nullptr)
	{
		const PlyProperty *p = found[TARGET_ALPHA];

		if (!(layout & GEOACC_MESH_COLORS))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY vertex element has alpha but no red, green, blue");
		if (p->type != PLY_UCHAR && ply_type_is_integer(p->type))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY vertex property alpha has type %s; it must be uchar, float or double",
				 ply_type_spelling[p->type]);
		layout |= GEOACC_MESH_ALPHA;
	}
	if ((layout & GEOACC_MESH_COLORS) && found[TARGET_RED]->type == PLY_UCHAR)
		layout |= GEOACC_MESH_COLORS_UCHAR;

	/* attribute slots in the layout's order */
	int			slot = 0;

	for (int t = TARGET_NX; t < TARGET_INDICES; t++)
		if (found[t] != nullptr)
		{
			found[t]->target = (PlyTarget) t;
			found[t]->slot = slot++;
		}
	for (int t = TARGET_X; t <= TARGET_Z; t++)
		found[t]->target = (PlyTarget) t;
	return layout;
}

void
assign_face_targets(PlyElement &face)
{
	PlyProperty *indices = nullptr;

	for (PlyProperty &p : face.properties)
		if (indices == nullptr && (p.name == "vertex_indices" || p.name == "vertex_index"))
			indices = &p;
	if (indices == nullptr)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY face element has no vertex_indices property");
	if (!indices->is_list)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY face property %s is not a list", indices->name.c_str());
	if (!ply_type_is_integer(indices->type))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY face property %s has items of type %s; indices must be integers",
			 indices->name.c_str(), ply_type_spelling[indices->type]);
	indices->target = TARGET_INDICES;
}

/*
 * Values of the data section, one after the other: binary (either byte
 * order) or ASCII words.  `where` says which element instance is being
 * read, for messages.
 */
class PlyData
{
public:
	PlyData(const char *p, const char *end, PlyFormat format) : p_(p), end_(end), format_(format) {}

	void		at(const PlyElement *element, uint64_t index)
	{
		element_ = element;
		index_ = index;
	}

	/* The next value, as a double (exact for every PLY type but double itself). */
	double		value(PlyType type, const char *property)
	{
		return format_ == PLY_ASCII ? ascii_value(type, property) : binary_value(type);
	}

	/* Pass over a value without looking at it. */
	void		skip(PlyType type, const char *property)
	{
		if (format_ == PLY_ASCII)
			ascii_value(type, property);
		else
		{
			if ((size_t) (end_ - p_) < (size_t) ply_type_size[type])
				truncated();
			p_ += ply_type_size[type];
		}
	}

	/* Pass over n values of one type. */
	void		skip_many(PlyType type, uint64_t n, const char *property)
	{
		if (format_ == PLY_ASCII)
		{
			for (uint64_t i = 0; i < n; i++)
				ascii_value(type, property);
			return;
		}
		if ((uint64_t) (end_ - p_) / ply_type_size[type] < n)
			truncated();
		p_ += n * ply_type_size[type];
	}

	size_t		remaining() const { return (size_t) (end_ - p_); }

	/* Whether the data left can hold n values of a type (an ASCII value takes a character and a space). */
	bool		can_hold(PlyType type, uint64_t n) const
	{
		const uint64_t left = (uint64_t) (end_ - p_);

		return format_ == PLY_ASCII ? n <= (left + 1) / 2 : n <= left / ply_type_size[type];
	}

	/* After the last element: nothing but (in ASCII) white space may follow. */
	void		finish()
	{
		if (format_ == PLY_ASCII)
		{
			while (p_ < end_ && isspace((unsigned char) *p_))
				p_++;
			if (p_ < end_)
			{
				const char *eol = p_;

				while (eol < end_ && eol - p_ < 20 && *eol != '\n' && *eol != '\r')
					eol++;
				fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY data goes on after the last element: \"%s\"",
					 shown(std::string(p_, eol)).c_str());
			}
		}
		else if (p_ < end_)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY data goes on after the last element: %zu byte%s more than the counts say",
				 (size_t) (end_ - p_), end_ - p_ == 1 ? "" : "s");
	}

	[[noreturn]] void truncated() const
	{
		fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY data is truncated: it ends inside %s %llu of %llu",
			 shown(element_->name).c_str(), (unsigned long long) index_ + 1, (unsigned long long) element_->count);
	}

private:
	double		binary_value(PlyType type)
	{
		unsigned char b[8];
		const int	n = ply_type_size[type];

		if ((size_t) (end_ - p_) < (size_t) n)
			truncated();
		memcpy(b, p_, n);
		p_ += n;
		if (format_ == PLY_BINARY_BE)
			for (int i = 0; i < n / 2; i++)
				std::swap(b[i], b[n - 1 - i]);
		switch (type)
		{
			case PLY_CHAR:
				return (int8_t) b[0];
			case PLY_UCHAR:
				return b[0];
			case PLY_SHORT:
				{
					int16_t		v;

					memcpy(&v, b, 2);
					return v;
				}
			case PLY_USHORT:
				{
					uint16_t	v;

					memcpy(&v, b, 2);
					return v;
				}
			case PLY_INT:
				{
					int32_t		v;

					memcpy(&v, b, 4);
					return v;
				}
			case PLY_UINT:
				{
					uint32_t	v;

					memcpy(&v, b, 4);
					return v;
				}
			case PLY_FLOAT:
				{
					float		v;

					memcpy(&v, b, 4);
					return v;
				}
			case PLY_DOUBLE:
				break;
		}

		double		v;

		memcpy(&v, b, 8);
		return v;
	}

	/* An ASCII word read as the declared type: integers in range, floats rounded to float. */
	double		ascii_value(PlyType type, const char *property)
	{
		char		word[80];
		char	   *stop;
		size_t		n = 0;

		while (p_ < end_ && isspace((unsigned char) *p_))
			p_++;
		if (p_ == end_)
			truncated();
		while (p_ < end_ && !isspace((unsigned char) *p_))
		{
			if (n + 1 < sizeof(word))
				word[n] = *p_;
			n++;
			p_++;
		}
		if (n + 1 > sizeof(word))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY data: a word of %zu characters in %s %llu", n,
				 shown(element_->name).c_str(), (unsigned long long) index_ + 1);
		word[n] = '\0';
		errno = 0;
		if (ply_type_is_integer(type))
		{
			static const double lo[] = {-128, 0, -32768, 0, -2147483648.0, 0};
			static const double hi[] = {127, 255, 32767, 65535, 2147483647.0, 4294967295.0};
			long long	v = strtoll(word, &stop, 10);

			if (*stop != '\0' || errno != 0 || v < lo[type] || v > hi[type])
				fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY data: \"%s\" is not a valid %s (%s %llu, property %s)",
					 shown(word).c_str(), ply_type_spelling[type], shown(element_->name).c_str(),
					 (unsigned long long) index_ + 1, shown(property).c_str());
			return (double) v;
		}

		double		v = strtod(word, &stop);

		if (*stop != '\0' || stop == word)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY data: \"%s\" is not a valid %s (%s %llu, property %s)",
				 shown(word).c_str(), ply_type_spelling[type], shown(element_->name).c_str(),
				 (unsigned long long) index_ + 1, shown(property).c_str());
		/* what a binary file declaring the same type would hold */
		return type == PLY_FLOAT ? (double) (float) v : v;
	}

	const char *p_;
	const char *end_;
	PlyFormat	format_;
	const PlyElement *element_ = nullptr;
	uint64_t	index_ = 0;
};

/* The least bytes an instance of the element takes (binary), or characters (ASCII). */
uint64_t
min_instance_size(const PlyElement &e, PlyFormat format)
{
	uint64_t	n = 0;

	for (const PlyProperty &p : e.properties)
		n += format == PLY_ASCII ? 2 : ply_type_size[p.is_list ? p.count_type : p.type];
	return n;
}

/* A list's count, refused when negative or when the data left cannot hold that many items. */
uint64_t
list_count(PlyData &in, const PlyProperty &prop, const PlyElement &e, uint64_t i)
{
	double		n = in.value(prop.count_type, prop.name.c_str());

	if (n < 0)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY %s %llu: list %s has %g items", shown(e.name).c_str(),
			 (unsigned long long) i + 1, shown(prop.name).c_str(), n);
	if (!in.can_hold(prop.type, (uint64_t) n))
		in.truncated();
	return (uint64_t) n;
}

/* One vertex: its position and the attributes of the layout, other properties passed over. */
void
read_vertex(PlyData &in, const PlyElement &e, uint64_t i, uint32_t k, std::vector<double> &positions,
			std::vector<float> &attributes)
{
	double		p[3] = {0, 0, 0};
	float		a[GEOACC_MESH_MAX_ATTRIBUTES];

	for (const PlyProperty &prop : e.properties)
	{
		if (prop.is_list)
		{
			in.skip_many(prop.type, list_count(in, prop, e, i), prop.name.c_str());
			continue;
		}
		if (prop.target == TARGET_SKIP)
		{
			in.skip(prop.type, prop.name.c_str());
			continue;
		}

		double		v = in.value(prop.type, prop.name.c_str());

		if (!std::isfinite(v))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY vertex %llu has a non-finite %s: %g", (unsigned long long) i + 1,
				 shown(prop.name).c_str(), v);
		if (prop.target <= TARGET_Z)
			p[prop.target - TARGET_X] = v;
		else if (prop.target >= TARGET_RED && prop.target <= TARGET_ALPHA && prop.type == PLY_UCHAR)
			a[prop.slot] = (float) (v / 255.0);
		else
			a[prop.slot] = (float) v;
	}
	positions.insert(positions.end(), p, p + 3);
	attributes.insert(attributes.end(), a, a + k);
}

/*
 * One face, as a fan of triangles from its first vertex.  The corners are
 * read one at a time, so a face costs memory for the triangles its data
 * holds, whatever its count says.
 */
void
read_face(PlyData &in, const PlyElement &e, uint64_t i, uint32_t nvertices, std::vector<uint32_t> &triangles)
{
	for (const PlyProperty &prop : e.properties)
	{
		if (!prop.is_list)
		{
			in.skip(prop.type, prop.name.c_str());
			continue;
		}

		const uint64_t n = list_count(in, prop, e, i);

		if (prop.target != TARGET_INDICES)
		{
			in.skip_many(prop.type, n, prop.name.c_str());
			continue;
		}
		if (n < 3)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY face %llu has %llu vertices; a face needs at least 3",
				 (unsigned long long) i + 1, (unsigned long long) n);
		if (triangles.size() / 3 + n - 2 > UINT32_MAX)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY file has more than %u triangles", UINT32_MAX);

		uint32_t	corner[2] = {0, 0};

		for (uint64_t j = 0; j < n; j++)
		{
			double		v = in.value(prop.type, prop.name.c_str());

			if (v < 0 || v >= nvertices)
				fail(GEOACC_ERR_INVALID_ARGUMENT,
					 "PLY face %llu refers to vertex %.0f, but the file has %u vertices (numbered from 0)",
					 (unsigned long long) i + 1, v, nvertices);
			if (j >= 2)
				triangles.insert(triangles.end(), {corner[0], corner[1], (uint32_t) v});
			corner[j == 0 ? 0 : 1] = (uint32_t) v;
		}
	}
}

/* An instance of an element geoacc does not use: every property passed over. */
void
skip_instance(PlyData &in, const PlyElement &e, uint64_t i)
{
	for (const PlyProperty &prop : e.properties)
	{
		if (prop.is_list)
			in.skip_many(prop.type, list_count(in, prop, e, i), prop.name.c_str());
		else
			in.skip(prop.type, prop.name.c_str());
	}
}

/* Refuse element counts that the data after the header cannot hold, before anything is allocated. */
void
check_element_counts(const PlyHeader &h, size_t size)
{
	const uint64_t room = size - h.data_offset + (h.format == PLY_ASCII ? 1 : 0);

	for (const PlyElement &e : h.elements)
	{
		const uint64_t each = min_instance_size(e, h.format);

		if (each > 0 && e.count > room / each)
			fail(GEOACC_ERR_INVALID_ARGUMENT,
				 "PLY data is truncated: %llu %s elements take at least %llu bytes, but %zu follow the header",
				 (unsigned long long) e.count, shown(e.name).c_str(), (unsigned long long) (e.count * each),
				 size - h.data_offset);
	}
}

/*
 * Read a PLY file's vertices and faces.  Memory is bounded by the data's
 * size: counts are checked against the bytes that remain before anything
 * is reserved for them.
 */
void
read_ply(const char *data, size_t size, std::vector<double> &positions, std::vector<uint32_t> &triangles,
		 std::vector<float> &attributes, uint32_t *layout_out)
{
	PlyHeader	h = parse_header(data, size);
	PlyElement *vertex = nullptr;
	PlyElement *face = nullptr;

	for (PlyElement &e : h.elements)
	{
		if (e.name == "vertex")
			vertex = &e;
		else if (e.name == "face")
			face = &e;
	}
	if (vertex == nullptr)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY header has no vertex element");

	const uint32_t layout = assign_vertex_targets(*vertex);
	const uint32_t k = geoacc_mesh_layout_width(layout);

	if (face != nullptr)
		assign_face_targets(*face);
	if (vertex->count > MESH_CLIP_MAX_VERTICES)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "PLY file has %llu vertices, more than the %u a mesh can take",
			 (unsigned long long) vertex->count, MESH_CLIP_MAX_VERTICES);
	check_element_counts(h, size);

	const uint32_t nvertices = (uint32_t) vertex->count;
	PlyData		in(data + h.data_offset, data + size, h.format);

	positions.reserve((size_t) nvertices * 3);
	attributes.reserve((size_t) nvertices * k);
	if (face != nullptr)
		triangles.reserve((size_t) std::min<uint64_t>(face->count, in.remaining()) * 3);
	for (const PlyElement &e : h.elements)
	{
		if (e.properties.empty())
			continue;
		for (uint64_t i = 0; i < e.count; i++)
		{
			in.at(&e, i);
			if ((i & 0xffff) == 0xffff)
				check_interrupt();
			if (&e == vertex)
				read_vertex(in, e, i, k, positions, attributes);
			else if (&e == face)
				read_face(in, e, i, nvertices, triangles);
			else
				skip_instance(in, e, i);
		}
	}
	in.finish();
	*layout_out = layout;
}

/* Little-endian stores into the output (the host is little-endian). */
template <class T>
void
put(uint8_t *&p, T v)
{
	memcpy(p, &v, sizeof(T));
	p += sizeof(T);
}

void
check_layout(const GeoaccMesh &mesh, uint32_t layout)
{
	if (layout & ~(uint32_t) (GEOACC_MESH_NORMALS | GEOACC_MESH_COLORS | GEOACC_MESH_ALPHA | GEOACC_MESH_TEXCOORDS
							   | GEOACC_MESH_COLORS_UCHAR))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "unknown attribute layout bits 0x%x", layout);
	if ((layout & (GEOACC_MESH_ALPHA | GEOACC_MESH_COLORS_UCHAR)) && !(layout & GEOACC_MESH_COLORS))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "an attribute layout with alpha or uchar colours but no colours");
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
}

std::string
ply_header_text(const GeoaccMesh &mesh, uint32_t layout)
{
	const char *colour = (layout & GEOACC_MESH_COLORS_UCHAR) ? "uchar" : "float";
	std::string h = "ply\nformat binary_little_endian 1.0\ncomment written by geoacc\n";

	h += "element vertex " + std::to_string(mesh.nvertices) + "\n";
	h += "property double x\nproperty double y\nproperty double z\n";
	if (layout & GEOACC_MESH_NORMALS)
		h += "property float nx\nproperty float ny\nproperty float nz\n";
	if (layout & GEOACC_MESH_COLORS)
	{
		h += std::string("property ") + colour + " red\nproperty " + colour + " green\nproperty " + colour + " blue\n";
		if (layout & GEOACC_MESH_ALPHA)
			h += std::string("property ") + colour + " alpha\n";
	}
	if (layout & GEOACC_MESH_TEXCOORDS)
		h += "property float s\nproperty float t\n";
	h += "element face " + std::to_string(mesh.ntriangles) + "\n";
	h += "property list uchar uint vertex_indices\nend_header\n";
	return h;
}

}								/* namespace */

}								/* namespace geoacc */

using namespace geoacc;

extern "C" uint32_t
geoacc_mesh_layout_width(uint32_t layout)
{
	return ((layout & GEOACC_MESH_NORMALS) ? 3 : 0) + ((layout & GEOACC_MESH_COLORS) ? 3 : 0)
		+ ((layout & GEOACC_MESH_ALPHA) ? 1 : 0) + ((layout & GEOACC_MESH_TEXCOORDS) ? 2 : 0);
}

extern "C" GeoaccStatus
geoacc_ply_read(const void *data, size_t size, GeoaccMeshResult *mesh, uint32_t *layout)
{
	GeoaccStatus status = guarded([&] {
		std::vector<double> positions;
		std::vector<uint32_t> triangles;
		std::vector<float> attributes;
		uint32_t	l = 0;

		if (mesh == nullptr || layout == nullptr || (size > 0 && data == nullptr))
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the data, the mesh and the layout are required");
		read_ply(static_cast<const char *>(data), size, positions, triangles, attributes, &l);
		mesh_result_set(*mesh, positions, triangles, attributes, geoacc_mesh_layout_width(l));
		*layout = l;
	});

	if (status != GEOACC_OK && mesh != nullptr)
		geoacc_mesh_result_free(mesh);
	return status;
}

extern "C" GeoaccStatus
geoacc_ply_write(const GeoaccMesh *mesh, uint32_t layout, uint8_t *out, size_t capacity, size_t *size)
{
	return guarded([&] {
		if (mesh == nullptr || size == nullptr)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the mesh and the size are required");
		check_layout(*mesh, layout);

		const std::string header = ply_header_text(*mesh, layout);
		const uint32_t k = mesh->nattributes;
		const uint32_t first_colour = (layout & GEOACC_MESH_NORMALS) ? 3 : 0;
		const uint32_t ncolour = ((layout & GEOACC_MESH_COLORS) ? 3 : 0) + ((layout & GEOACC_MESH_ALPHA) ? 1 : 0);
		const bool	uchar_colours = (layout & GEOACC_MESH_COLORS_UCHAR) != 0;
		const size_t vertex_bytes = 24 + 4 * (size_t) k - (uchar_colours ? 3 * (size_t) ncolour : 0);
		const size_t total = header.size() + (size_t) mesh->nvertices * vertex_bytes + (size_t) mesh->ntriangles * 13;

		*size = total;
		if (out == nullptr)
			return;
		if (capacity < total)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "the PLY output needs %zu bytes, the buffer has %zu", total, capacity);

		uint8_t    *p = out;

		memcpy(p, header.data(), header.size());
		p += header.size();
		for (uint32_t v = 0; v < mesh->nvertices; v++)
		{
			const float *a = mesh->attributes + (size_t) v * k;

			for (int c = 0; c < 3; c++)
				put(p, mesh->positions[(size_t) v * 3 + c]);
			for (uint32_t j = 0; j < k; j++)
			{
				if (uchar_colours && j >= first_colour && j < first_colour + ncolour)
				{
					float		c = a[j] < 0 ? 0 : a[j] > 1 ? 1 : a[j];

					put(p, (uint8_t) lrintf(c * 255.0f));
				}
				else
					put(p, a[j]);
			}
		}
		for (uint32_t t = 0; t < mesh->ntriangles; t++)
		{
			put(p, (uint8_t) 3);
			for (int c = 0; c < 3; c++)
				put(p, mesh->triangles[(size_t) t * 3 + c]);
		}
	});
}
