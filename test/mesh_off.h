/*
 * mesh_off.h
 *
 * Reads an OFF triangle mesh (gzipped or not, through gzip -dcf): vertex
 * positions and faces, faces of more than three vertices fan-triangulated.
 * Shared by the core tests and the mesh clip benchmark.
 */
#ifndef GEOACC_MESH_OFF_H
#define GEOACC_MESH_OFF_H

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

/* false when the file cannot be read or is not OFF */
inline bool
read_off_mesh(const std::string &path, std::vector<double> &positions, std::vector<uint32_t> &triangles)
{
	std::string command = "gzip -dcf '" + path + "' 2>/dev/null";
	FILE	   *f = popen(command.c_str(), "r");
	std::string text;
	char		buffer[65536];
	size_t		n;

	if (f == nullptr)
		return false;
	while ((n = fread(buffer, 1, sizeof(buffer), f)) > 0)
		text.append(buffer, n);
	pclose(f);

	/* tokens without comments */
	std::vector<std::string> tokens;
	size_t		i = 0;

	while (i < text.size())
	{
		if (text[i] == '#')
			while (i < text.size() && text[i] != '\n')
				i++;
		else if (isspace((unsigned char) text[i]))
			i++;
		else
		{
			size_t		j = i;

			while (j < text.size() && !isspace((unsigned char) text[j]) && text[j] != '#')
				j++;
			tokens.push_back(text.substr(i, j - i));
			i = j;
		}
	}
	if (tokens.size() < 4 || tokens[0] != "OFF")
		return false;
	try
	{
		size_t		t = 1;
		uint32_t	nv = (uint32_t) std::stoul(tokens.at(t++));
		uint32_t	nf = (uint32_t) std::stoul(tokens.at(t++));

		t++;					/* edges */
		for (uint64_t v = 0; v < (uint64_t) nv * 3; v++)
			positions.push_back(std::stod(tokens.at(t++)));
		for (uint32_t face = 0; face < nf; face++)
		{
			uint32_t	k = (uint32_t) std::stoul(tokens.at(t++));
			std::vector<uint32_t> idx(k);

			for (uint32_t j = 0; j < k; j++)
				idx[j] = (uint32_t) std::stoul(tokens.at(t++));
			for (uint32_t j = 1; j + 1 < k; j++)
				triangles.insert(triangles.end(), {idx[0], idx[j], idx[j + 1]});
		}
	}
	catch (const std::exception &)
	{
		return false;
	}
	return true;
}

#endif							/* GEOACC_MESH_OFF_H */
