/*
 * twed.cu
 *
 * Time Warp Edit Distance on the GPU: which pairs of a job run how.  Pairs
 * small enough for one warp go to twed_short_pairs.cu, many at a time, in
 * groups of series that fit the device-memory cap, block by block of groups;
 * the others, and every pair large enough to need the whole GPU when there
 * are few pairs, go one at a time to twed_long_pairs.cu, the longer series
 * as rows.  In float32 the host moves the rows of a long pair into the frame
 * of its columns here.  Both run the warp sweep of twed_sweep.cuh.
 */
#include "core.h"
#include "twed.h"

#include <algorithm>
#include <vector>

namespace geoacc
{

namespace
{

/* A pair computed by one warp does at most this much arithmetic (~50 ms). */
constexpr uint64_t BATCH_MAX_OPS = uint64_t(1) << 29;

/* With this few pairs the GPU would idle: pairs of 2^16 cells or more run as long pairs. */
constexpr uint64_t FEW_PAIRS = 16;
constexpr uint64_t FEW_PAIRS_LONG_CELLS = uint64_t(1) << 16;

/* Bytes of series s in a group on the device. */
template <class T>
uint64_t
series_bytes(const TwedSeriesSet<T> &set, uint32_t s)
{
	return twed_group_series_bytes(set.length(s), set.dims, sizeof(T), set.origin(s) != nullptr);
}

/* Consecutive runs of the fitting series of a set, each within `budget` bytes. */
template <class T>
std::vector<std::vector<uint32_t>>
make_groups(const TwedSeriesSet<T> &set, const std::vector<bool> &fits, uint64_t budget)
{
	std::vector<std::vector<uint32_t>> groups;
	uint64_t	bytes = 0;

	for (uint32_t s = 0; s < set.count; s++)
	{
		if (!fits[s])
			continue;
		if (groups.empty() || bytes + series_bytes(set, s) > budget)
		{
			groups.emplace_back();
			bytes = 0;
		}
		groups.back().push_back(s);
		bytes += series_bytes(set, s);
	}
	return groups;
}

/* Every pair of the job, short pairs first, then long pairs one by one. */
template <class T>
void
twed_gpu_t(const TwedJob<T> &job, double *distances)
{
	const uint64_t avail = geoacc_gpu_memory_available();
	const uint64_t group_budget = avail / TWED_GROUP_SHARE;
	TwedPairRouting<T> routing;

	if (job.pairs() == 0)
		return;
	if (avail == 0)
		fail(GEOACC_ERR_DEVICE_MEMORY, "no device memory is left under the cap");

	routing.max_cells = BATCH_MAX_OPS / twed_cell_ops(job.a->dims, job.metric);
	if (job.pairs() <= FEW_PAIRS)
		routing.max_cells = std::min(routing.max_cells, FEW_PAIRS_LONG_CELLS - 1);
	routing.a_fits.resize(job.a->count);
	routing.b_fits.resize(job.b->count);
	for (uint32_t s = 0; s < job.a->count; s++)
		routing.a_fits[s] = series_bytes(*job.a, s) <= group_budget;
	for (uint32_t s = 0; s < job.b->count; s++)
		routing.b_fits[s] = series_bytes(*job.b, s) <= group_budget;

	/* short pairs, block by block of groups */
	const auto	a_groups = make_groups(*job.a, routing.a_fits, group_budget);

	if (job.symmetric)
	{
		for (size_t g = 0; g < a_groups.size(); g++)
			for (size_t h = g; h < a_groups.size(); h++)
				twed_short_pairs_gpu(job, routing, a_groups[g], a_groups[h], g == h, avail, distances);
	}
	else
	{
		const auto	b_groups = make_groups(*job.b, routing.b_fits, group_budget);

		for (const auto &ga : a_groups)
			for (const auto &gb : b_groups)
				twed_short_pairs_gpu(job, routing, ga, gb, false, avail, distances);
	}

	/* long pairs, one after another, the longer series as rows */
	uint64_t	max_a = 0,
				max_b = 0;
	bool		all_fit = true;

	for (uint32_t s = 0; s < job.a->count; s++)
	{
		max_a = std::max(max_a, job.a->length(s));
		all_fit = all_fit && routing.a_fits[s];
	}
	for (uint32_t s = 0; s < job.b->count; s++)
	{
		max_b = std::max(max_b, job.b->length(s));
		all_fit = all_fit && routing.b_fits[s];
	}
	if (all_fit && max_a * max_b <= routing.max_cells)
		return;

	const TwedSeriesSet<T> &a = *job.a;
	const TwedSeriesSet<T> &b = *job.b;
	TwedSeriesSet<T> moved;
	uint64_t	q = 0;

	for (uint32_t x = 0; x < a.count; x++)
		for (uint32_t y = job.symmetric ? x + 1 : 0; y < b.count; y++, q++)
		{
			if (routing.batch(job, x, y))
				continue;

			const bool	x_rows = twed_x_is_rows(a.length(x), a.origin(x), b.length(y), b.origin(y), a.dims);
			const TwedSeriesSet<T> &rs = x_rows ? a : b;
			const TwedSeriesSet<T> &cs = x_rows ? b : a;
			const uint32_t ri = x_rows ? x : y;
			const uint32_t ci = x_rows ? y : x;

			if (rs.origin(ri))
			{
				/* float32: the rows moved into the frame of the columns here, not in the kernel */
				twed_move_series(rs, ri, cs.origin(ci), moved);
				distances[q] = twed_long_pair_gpu(job, moved, 0, cs, ci, avail / TWED_LONG_PAIR_SHARE);
			}
			else
				distances[q] = twed_long_pair_gpu(job, rs, ri, cs, ci, avail / TWED_LONG_PAIR_SHARE);
		}
}

}								/* namespace */

void
twed_gpu(const TwedJob<double> &job, double *distances)
{
	twed_gpu_t(job, distances);
}

void
twed_gpu(const TwedJob<float> &job, double *distances)
{
	twed_gpu_t(job, distances);
}

}								/* namespace geoacc */
