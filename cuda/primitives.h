/*
 * primitives.h
 *
 * Building blocks shared by several operations: exclusive scan, stream
 * compaction and segmented arg-max.  The C ABI versions (geoacc_core.h)
 * take host arrays; the *_gpu functions here are their GPU halves, and
 * primitives.cuh has the device-pointer forms that kernels of other
 * features chain together without copies.
 */
#ifndef GEOACC_PRIMITIVES_H
#define GEOACC_PRIMITIVES_H

#include "core.h"

#include <cmath>
#include <cstdint>

namespace geoacc
{

/* Maximum and first index holding it; the reduction both twins use. */
struct ValueIndex
{
	double		value;
	uint32_t	index;
};

GEOACC_HD ValueIndex
max_first_index(ValueIndex a, ValueIndex b)
{
	if (b.value > a.value || (b.value == a.value && b.index < a.index))
		return b;
	return a;
}

GEOACC_HD ValueIndex
value_index_identity()
{
	return ValueIndex{-INFINITY, UINT32_MAX};
}

/* Host-array GPU implementations behind the C ABI. */
uint64_t	exclusive_scan_u32_host_gpu(const uint32_t *in, uint32_t *out, uint32_t n);
uint32_t	select_flagged_host_gpu(const uint8_t *flags, uint32_t n, uint32_t *indices);
void		segmented_argmax_host_gpu(const double *values, const uint32_t *offsets,
									  uint32_t nsegments, double *max_values, uint32_t *argmax);

}								/* namespace geoacc */

#endif							/* GEOACC_PRIMITIVES_H */
