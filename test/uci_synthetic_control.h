/*
 * uci_synthetic_control.h
 *
 * Reads the UCI synthetic control set (data/twed/uci_synthetic_control.data):
 * 600 series of 60 values, one series per line, 100 per class in order.
 * Shared by the core tests and the TWED benchmark; their times are 0..59.
 */
#ifndef GEOACC_UCI_SYNTHETIC_CONTROL_H
#define GEOACC_UCI_SYNTHETIC_CONTROL_H

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

constexpr int UCI_SERIES_LENGTH = 60;

/* The series of the file in order; lines without 60 values are skipped. */
inline std::vector<std::vector<double>>
read_uci_synthetic_control(const char *path)
{
	std::vector<std::vector<double>> series;
	std::ifstream in(path);
	std::string line;

	while (std::getline(in, line))
	{
		std::istringstream fields(line);
		std::vector<double> v;
		double		x;

		while (fields >> x)
			v.push_back(x);
		if (v.size() == UCI_SERIES_LENGTH)
			series.push_back(v);
	}
	return series;
}

#endif							/* GEOACC_UCI_SYNTHETIC_CONTROL_H */
