/*
 * make_trajectories.h
 *
 * Trajectories from raw fixes: the arithmetic the CUDA kernels and the CPU
 * twin share (the sort keys, the choice between fixes of one object at one
 * time, the rule that starts a new part), the fixes sorted and split into
 * parts as both prepare them, and the entry points of the two halves.
 */
#ifndef GEOACC_MAKE_TRAJECTORIES_H
#define GEOACC_MAKE_TRAJECTORIES_H

#include "core.h"
#include "host_memory.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace geoacc
{

GEOACC_HD uint64_t
double_bits(double v)
{
#ifdef __CUDA_ARCH__
	return (uint64_t) __double_as_longlong(v);
#else
	uint64_t	bits;

	std::memcpy(&bits, &v, sizeof(bits));
	return bits;
#endif
}

/* Unsigned keys in the order of the values: doubles (-0 before +0; no NaN) and signed ids. */
GEOACC_HD uint64_t
double_key(double v)
{
	uint64_t	bits = double_bits(v);

	return (bits >> 63) ? ~bits : bits | (UINT64_C(1) << 63);
}

GEOACC_HD uint64_t
object_key(int64_t id)
{
	return (uint64_t) id ^ (UINT64_C(1) << 63);
}

/* The values back from their keys (the CPU twin sorts keys only). */
inline double
key_double(uint64_t key)
{
	uint64_t	bits = (key >> 63) ? key & ~(UINT64_C(1) << 63) : ~key;
	double		v;

	std::memcpy(&v, &bits, sizeof(v));
	return v;
}

inline int64_t
key_object(uint64_t key)
{
	return (int64_t) (key ^ (UINT64_C(1) << 63));
}

/* A fix's time as the trajectories carry it: -0 is +0, so equal times have equal keys. */
GEOACC_HD double
fix_time(double t)
{
	return t + 0.0;
}

/*
 * Of two fixes of one object at one time, whether a is kept before b: the
 * smaller x, then the smaller y.  Fixes equal in both are equal in all that
 * is kept, so the choice never depends on the input order.
 */
GEOACC_HD bool
kept_before(double ax, double ay, double bx, double by)
{
	uint64_t	a = double_key(ax),
				b = double_key(bx);

	return a != b ? a < b : double_key(ay) < double_key(by);
}

/*
 * Whether the fix (t, x, y) of an object starts a new part after its
 * previous fix (pt, px, py), pt < t, times in units of which `unit` make a
 * second: it comes more than max_gap later (in those units: exact for
 * whole microseconds), or reaching it takes a speed above max_speed,
 * measured as PostGIS's ST_Distance(a, b) / dt with dt in seconds (the SQL
 * form of the rule, extract(epoch FROM t - pt)::float8, gives the same
 * bits).
 */
GEOACC_HD bool
starts_part(double pt, double px, double py, double t, double x, double y, double max_gap, double max_speed,
			double unit)
{
	double		dt = t - pt;
	double		dx = x - px;
	double		dy = y - py;

	if (dt > max_gap)
		return true;
	return sqrt(dx * dx + dy * dy) / (dt / unit) > max_speed;
}

/* The rules' time unit: 0 is seconds. */
inline double
time_unit(const GeoaccTrajectoryRules &rules)
{
	return rules.time_unit == 0 ? 1 : rules.time_unit;
}

/*
 * Fixes sorted by (object, time) with duplicates dropped, cut into parts:
 * what the GPU and the CPU twin prepare before the parts are simplified.
 * Pieces are appended in object order.
 */
struct PreparedFixes
{
	/* output memory: they become the parts' M, X and Y (moved, not copied) */
	OutputVector<double> t;
	OutputVector<double> x;
	OutputVector<double> y;
	HostVector<uint32_t> part_starts;	/* first fix of each part */
	HostVector<int64_t> part_objects;
	uint64_t	duplicates = 0;

	/* Room for n more fixes (and at most as many parts). */
	void		reserve(size_t n)
	{
		t.reserve(t.size() + n);
		x.reserve(x.size() + n);
		y.reserve(y.size() + n);
	}
};

/* Milliseconds since `start`. */
inline double
ms_since(std::chrono::steady_clock::time_point start)
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

/* Sort, deduplicate and split fixes on the CPU, appending to `out`. */
void		prepare_fixes_cpu(const GeoaccFixes &fixes, const GeoaccTrajectoryRules &rules, PreparedFixes &out);

/*
 * The same on the GPU: in one piece when the fixes fit the device memory
 * cap; otherwise sorted in runs merged on the host, then in pieces of whole
 * objects, an object too large for the cap alone going to the CPU twin.
 */
void		prepare_fixes_gpu(const GeoaccFixes &fixes, const GeoaccTrajectoryRules &rules, PreparedFixes &out,
							  GeoaccMakeTrajectoriesTiming &timing);

/* Device bytes of one GPU piece of n fixes, and of one sorted run of n fixes. */
uint64_t	piece_device_bytes(uint64_t n);
uint64_t	run_device_bytes(uint64_t n);

}								/* namespace geoacc */

#endif							/* GEOACC_MAKE_TRAJECTORIES_H */
