/*
 * segment_join_bench.cpp
 *
 * Core-level benchmark of the segment join (no server): a self-join of the
 * trajectories in a points file (lines "track <tab> x <tab> y <tab> m",
 * grouped by track in vertex order, as test/data/scale_tracks.sh dumps the
 * real AIS tracks), for each distance, method and device, timing the
 * stages of a call separately (building the segments, planning, the upload,
 * the index build, the candidate search, the exact test and the output:
 * ordering and copying out the rows), with result and candidate pairs per
 * second and, on the GPU, the device allocations and waits of the call.  Runs of one distance must return the same rows on every method
 * and device (a checksum of all rows' bits is compared).
 *
 * Usage: segment_join_bench POINTS_FILE DISTANCES [METHODS] [DEVICES] [CPU_MAX_SEGMENTS]
 *   DISTANCES  comma-separated, e.g. 10,100,1000
 *   METHODS    comma-separated of spatial,temporal,spatiotemporal,auto (default all)
 *   DEVICES    gpu,cpu (default both; the GPU where present)
 *   CPU_MAX_SEGMENTS  larger inputs skip the CPU (default 2000000)
 * SEGMENT_JOIN_RUN_LIMIT_S (default 60) stops a run through the interrupt
 * callback after that many seconds; the row says so.  Prints a markdown table.
 */
#include "geoacc_core.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace
{

std::vector<std::string>
split(const std::string &s)
{
	std::vector<std::string> out;
	size_t		start = 0;

	while (start <= s.size())
	{
		size_t		comma = s.find(',', start);

		if (comma == std::string::npos)
			comma = s.size();
		if (comma > start)
			out.push_back(s.substr(start, comma - start));
		start = comma + 1;
	}
	return out;
}

const char *
method_name(GeoaccJoinMethod m)
{
	switch (m)
	{
		case GEOACC_JOIN_SPATIAL:
			return "spatial";
		case GEOACC_JOIN_TEMPORAL:
			return "temporal";
		case GEOACC_JOIN_SPATIOTEMPORAL:
			return "spatiotemporal";
		default:
			return "auto";
	}
}

/* Runs stop here: the interrupt callback the core polls between batches. */
std::chrono::steady_clock::time_point deadline;

int
past_deadline()
{
	return std::chrono::steady_clock::now() > deadline;
}

/* FNV-1a over the bits of every row, in order. */
uint64_t
checksum(uint64_t h, const GeoaccJoinRow *rows, uint32_t n)
{
	const unsigned char *p = reinterpret_cast<const unsigned char *>(rows);

	for (size_t i = 0; i < (size_t) n * sizeof(GeoaccJoinRow); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

}								/* namespace */

int
main(int argc, char **argv)
{
	if (argc < 3)
	{
		fprintf(stderr, "usage: %s POINTS_FILE DISTANCES [METHODS] [DEVICES] [CPU_MAX_SEGMENTS]\n", argv[0]);
		return 2;
	}

	FILE	   *f = fopen(argv[1], "r");
	std::vector<uint32_t> offsets{0};
	std::vector<double> x, y, m;
	long long	current = -1,
				track;
	double		px,
				py,
				pm;

	if (!f)
	{
		perror(argv[1]);
		return 2;
	}
	while (fscanf(f, "%lld %lf %lf %lf", &track, &px, &py, &pm) == 4)
	{
		if (track != current && current >= 0)
			offsets.push_back((uint32_t) x.size());
		current = track;
		x.push_back(px);
		y.push_back(py);
		m.push_back(pm);
	}
	fclose(f);
	if (current >= 0)
		offsets.push_back((uint32_t) x.size());

	const uint64_t segments = x.size() - (offsets.size() - 1);
	const std::vector<std::string> distances = split(argv[2]);
	const std::vector<std::string> methods = split(argc > 3 ? argv[3] : "spatial,temporal,spatiotemporal,auto");
	const std::vector<std::string> devices = split(argc > 4 ? argv[4] : "gpu,cpu");
	const uint64_t cpu_max = argc > 5 ? strtoull(argv[5], nullptr, 10) : 2000000;
	const bool	gpu = geoacc_gpu_init() == GEOACC_OK;
	const double limit_s = getenv("SEGMENT_JOIN_RUN_LIMIT_S") ? atof(getenv("SEGMENT_JOIN_RUN_LIMIT_S")) : 60;
	GeoaccTrajectories t{(uint32_t) (offsets.size() - 1), offsets.data(), x.data(), y.data(), nullptr, m.data()};
	std::vector<GeoaccJoinRow> rows(1 << 16);
	int			status = 0;

	printf("| segments | distance | device | method (ran) | segments ms | plan ms | device memory ms | upload ms "
		   "| index ms | search ms | refine ms | output ms | total ms | rows | candidates | rows/s | candidates/s "
		   "| chunks, batches, overflowed | allocations, syncs | same rows |\n");
	printf("| ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
		   "| ---: | --- | --- | --- |\n");
	for (const std::string &d : distances)
	{
		uint64_t	reference = 0;
		bool		have_reference = false;

		for (const std::string &device_name : devices)
		{
			const GeoaccDevice device = device_name == "gpu" ? GEOACC_DEVICE_GPU : GEOACC_DEVICE_CPU;

			if (device == GEOACC_DEVICE_GPU && !gpu)
				continue;
			if (device == GEOACC_DEVICE_CPU && segments > cpu_max)
			{
				printf("| %llu | %s | cpu | - | skipped (more than %llu segments) | | | | | | | | | | | | | | | |\n",
					   (unsigned long long) segments, d.c_str(), (unsigned long long) cpu_max);
				continue;
			}
			for (const std::string &method_text : methods)
			{
				GeoaccJoinMethod method = method_text == "spatial" ? GEOACC_JOIN_SPATIAL
					: method_text == "temporal" ? GEOACC_JOIN_TEMPORAL
					: method_text == "spatiotemporal" ? GEOACC_JOIN_SPATIOTEMPORAL : GEOACC_JOIN_AUTO;
				GeoaccSegmentJoin *j = nullptr;
				GeoaccJoinStats s;
				uint64_t	h = 1469598103934665603ULL;
				uint32_t	n = 0;
				auto		start = std::chrono::steady_clock::now();

				deadline = start + std::chrono::milliseconds((long long) (limit_s * 1000));
				geoacc_set_interrupt_callback(past_deadline);

				GeoaccStatus st = geoacc_segment_join_open(device, &t, nullptr, atof(d.c_str()), method, &j);

				while (st == GEOACC_OK)
				{
					st = geoacc_segment_join_next(j, rows.data(), (uint32_t) rows.size(), &n);
					if (st != GEOACC_OK || n == 0)
						break;
					h = checksum(h, rows.data(), n);
				}
				if (st == GEOACC_OK)
					geoacc_segment_join_stats(j, &s);
				/* the call ends when its device memory is given back */
				geoacc_segment_join_close(j);
				j = nullptr;

				const double total = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
					.count();

				geoacc_set_interrupt_callback(nullptr);
				if (st == GEOACC_ERR_CANCELLED)
				{
					printf("| %llu | %s | %s | %s | stopped after %.0f s | | | | | | | | | | | | | | | |\n",
						   (unsigned long long) segments, d.c_str(), device_name.c_str(), method_text.c_str(), limit_s);
					continue;
				}
				if (st != GEOACC_OK)
				{
					printf("| %llu | %s | %s | %s | failed: %s | | | | | | | | | | | | | | | |\n", (unsigned long long) segments,
						   d.c_str(), device_name.c_str(), method_text.c_str(), geoacc_status_message());
					status = 1;
					continue;
				}
				const bool	same = !have_reference || h == reference;

				if (!have_reference)
				{
					reference = h;
					have_reference = true;
				}
				if (!same)
					status = 1;
				printf("| %llu | %s | %s | %s (%s) | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %llu "
					   "| %llu | %.3g | %.3g | %u, %u, %llu | %u, %u | %s |\n", (unsigned long long) segments, d.c_str(),
					   device_name.c_str(), method_text.c_str(), method_name(s.method), s.segments_ms, s.plan_ms,
					   s.memory_ms, s.upload_ms, s.index_ms, s.search_ms, s.refine_ms, s.output_ms, total,
					   (unsigned long long) s.rows, (unsigned long long) s.candidates, s.rows / (total / 1000),
					   s.candidates / ((s.search_ms + s.refine_ms) / 1000 + 1e-9), s.entry_chunks, s.batches,
					   (unsigned long long) s.overflow_queries, s.device_allocations, s.syncs, same ? "yes" : "NO");
				fflush(stdout);
			}
		}
	}
	return status;
}
