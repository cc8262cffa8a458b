/*
 * simplify.cpp
 *
 * The CPU twin of batch Douglas-Peucker simplification, the C ABI entry
 * point that checks its arguments and picks the device, and the quality
 * measures of a simplification (compression ratio, rate of length loss,
 * dynamic time warping distance).
 */
#include "simplify.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace geoacc
{

namespace
{

/* Polls the interrupt callback every few million keys. */
struct InterruptPoll
{
	uint64_t	work = 0;

	void operator()(uint32_t keys)
	{
		work += keys;
		if (work >= (1u << 22))
		{
			work = 0;
			check_interrupt();
		}
	}
};

template <GeoaccSimplifyDistance D>
void
dp_simplify_cpu_typed(const GeoaccTrajectories &batch, uint32_t t0, uint32_t t1, double tolerance,
					  uint8_t *keep)
{
	const PointArrays p{batch.x, batch.y, batch.z, batch.m};
	const double tolerance_sq = tolerance * tolerance;
	const bool	tolerance0 = D == GEOACC_SIMPLIFY_PLANAR && tolerance == 0.0;
	std::vector<uint32_t> stack;
	InterruptPoll poll;

	for (uint32_t t = t0; t < t1; t++)
	{
		uint32_t	first = batch.offsets[t];
		uint32_t	end = batch.offsets[t + 1];

		if (end == first)
			continue;

		uint32_t	last = end - 1;

		std::fill(keep + first, keep + end, 0);
		keep[first] = 1;
		keep[last] = 1;
		if (last - first < 2)
			continue;
		if (tolerance0)
		{
			uint32_t	kept = first;

			tolerance0_walk(p, first + 1, last, kept, UINT32_MAX, keep);
			poll(last - first);
		}
		else
		{
			stack.resize(last - first);
			dp_range<D>(p, first, last, tolerance_sq, keep, stack.data(), poll);
		}
	}
}

void
check_batch(const GeoaccTrajectories &batch, GeoaccSimplifyDistance distance, double tolerance)
{
	if (distance < GEOACC_SIMPLIFY_PLANAR || distance > GEOACC_SIMPLIFY_SYNCHRONIZED_3D)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "unknown simplification distance %d", (int) distance);
	if (!(tolerance >= 0.0))
		fail(GEOACC_ERR_INVALID_ARGUMENT, "tolerance must be a non-negative number, not %g", tolerance);
	if (batch.ntrajectories == 0)
		return;
	for (uint32_t t = 0; t < batch.ntrajectories; t++)
		if (batch.offsets[t + 1] < batch.offsets[t])
			fail(GEOACC_ERR_INVALID_ARGUMENT, "trajectory offsets decrease at trajectory %u", t);
	if (batch.offsets[batch.ntrajectories] == batch.offsets[0])
		return;
	if (!batch.x || !batch.y)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "X and Y arrays are required");
	if (uses_z(distance) && !batch.z)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "a 3D distance needs the Z array");
	if (uses_m(distance) && !batch.m)
		fail(GEOACC_ERR_INVALID_ARGUMENT, "a synchronized distance needs the M array");
}

/* Planar length, summed as PostGIS's ptarray_length_2d does. */
double
length_2d(const double *c, uint32_t n, int nd)
{
	double		length = 0.0;

	for (uint32_t i = 1; i < n; i++)
	{
		const double *from = c + (size_t) (i - 1) * nd;
		const double *to = c + (size_t) i * nd;

		length += sqrt(((from[0] - to[0]) * (from[0] - to[0])) + ((from[1] - to[1]) * (from[1] - to[1])));
	}
	return length;
}

/*
 * Dynamic time warping between the vertex sequences, XY Euclidean cost:
 * D(i,j) = d(i,j) + min(D(i-1,j), D(i,j-1), D(i-1,j-1)), two rows of memory.
 */
double
dtw_2d(const double *a, uint32_t n, int a_ndims, const double *b, uint32_t m, int b_ndims)
{
	std::vector<double> previous(m), current(m);
	InterruptPoll poll;

	for (uint32_t i = 0; i < n; i++)
	{
		const double *p = a + (size_t) i * a_ndims;

		for (uint32_t j = 0; j < m; j++)
		{
			const double *q = b + (size_t) j * b_ndims;
			double		dx = p[0] - q[0];
			double		dy = p[1] - q[1];
			double		cost = sqrt(dx * dx + dy * dy);
			double		best;

			if (i == 0)
				best = j == 0 ? 0.0 : current[j - 1];
			else if (j == 0)
				best = previous[0];
			else
				best = std::min(std::min(previous[j - 1], previous[j]), current[j - 1]);
			current[j] = cost + best;
		}
		std::swap(previous, current);
		poll(m);
	}
	return previous[m - 1];
}

}								/* namespace */

void
dp_simplify_cpu(const GeoaccTrajectories &batch, uint32_t t0, uint32_t t1,
				GeoaccSimplifyDistance distance, double tolerance, uint8_t *keep)
{
	switch (distance)
	{
		case GEOACC_SIMPLIFY_PLANAR:
			dp_simplify_cpu_typed<GEOACC_SIMPLIFY_PLANAR>(batch, t0, t1, tolerance, keep);
			break;
		case GEOACC_SIMPLIFY_3D:
			dp_simplify_cpu_typed<GEOACC_SIMPLIFY_3D>(batch, t0, t1, tolerance, keep);
			break;
		case GEOACC_SIMPLIFY_SYNCHRONIZED:
			dp_simplify_cpu_typed<GEOACC_SIMPLIFY_SYNCHRONIZED>(batch, t0, t1, tolerance, keep);
			break;
		case GEOACC_SIMPLIFY_SYNCHRONIZED_3D:
			dp_simplify_cpu_typed<GEOACC_SIMPLIFY_SYNCHRONIZED_3D>(batch, t0, t1, tolerance, keep);
			break;
	}
}

}								/* namespace geoacc */

using namespace geoacc;

extern "C" GeoaccStatus
geoacc_dp_simplify(GeoaccDevice device, const GeoaccTrajectories *trajectories,
				   GeoaccSimplifyDistance distance, double tolerance, uint8_t *keep,
				   GeoaccSimplifyTiming *timing)
{
	return guarded([&] {
		const GeoaccTrajectories &batch = *trajectories;
		GeoaccSimplifyTiming spent = {};

		check_batch(batch, distance, tolerance);
		if (device == GEOACC_DEVICE_GPU)
			GEOACC_ON_GPU(dp_simplify_gpu(batch, distance, tolerance, keep, spent));
		else
		{
			auto		start = std::chrono::steady_clock::now();

			dp_simplify_cpu(batch, 0, batch.ntrajectories, distance, tolerance, keep);
			spent.compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
		}
		if (timing)
			*timing = spent;
	});
}

extern "C" uint64_t
geoacc_dp_simplify_device_bytes(uint64_t npoints, uint64_t ntrajectories, GeoaccSimplifyDistance distance,
								double tolerance)
{
	return piece_bytes(npoints, ntrajectories, distance, distance == GEOACC_SIMPLIFY_PLANAR && tolerance == 0.0);
}

extern "C" GeoaccStatus
geoacc_compression_measures(const double *original, uint32_t original_points, int original_ndims,
							const double *simplified, uint32_t simplified_points, int simplified_ndims,
							GeoaccCompressionMeasures *measures)
{
	return guarded([&] {
		if (original_points == 0 || simplified_points == 0)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "both lines need at least one point");
		if (original_ndims < 2 || original_ndims > 4 || simplified_ndims < 2 || simplified_ndims > 4)
			fail(GEOACC_ERR_INVALID_ARGUMENT, "points have 2 to 4 coordinates");

		double		original_length = length_2d(original, original_points, original_ndims);
		double		simplified_length = length_2d(simplified, simplified_points, simplified_ndims);

		measures->compression_ratio = 1.0 - (double) simplified_points / (double) original_points;
		measures->length_loss_rate = original_length > 0.0
			? (original_length - simplified_length) / original_length : NAN;
		measures->dtw_distance = dtw_2d(original, original_points, original_ndims,
									 simplified, simplified_points, simplified_ndims);
	});
}
