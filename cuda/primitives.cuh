/*
 * primitives.cuh
 *
 * Device-pointer forms of the shared primitives, over CUB.  Each asks CUB
 * for its temporary storage size, allocates it as a DeviceBuffer and runs
 * on geoacc's stream (the idiom of cub/examples/device).
 */
#ifndef GEOACC_PRIMITIVES_CUH
#define GEOACC_PRIMITIVES_CUH

#include "cuda_util.cuh"
#include "primitives.h"

namespace geoacc
{

/* d_out[i] = sum of d_in[0..i); returns the total (synchronises). */
uint64_t	exclusive_scan_u32(const uint32_t *d_in, uint32_t *d_out, uint32_t n);

/* Positions of nonzero flags into d_indices; returns their count (synchronises). */
uint32_t	select_flagged(const uint8_t *d_flags, uint32_t n, uint32_t *d_indices);

/*
 * The same without waiting: the count is left on the device in *d_count,
 * CUB's temporary storage is the caller's (select_flagged_temp_bytes(n)).
 */
size_t		select_flagged_temp_bytes(uint32_t n);
void		select_flagged_async(void *d_temp, size_t temp_bytes, const uint8_t *d_flags, uint32_t n,
								 uint32_t *d_indices, uint32_t *d_count);

/* Per segment [d_offsets[s], d_offsets[s+1]): max value and first index. */
void		segmented_argmax(const double *d_values, const uint32_t *d_offsets,
							 uint32_t nsegments, ValueIndex *d_result);

}								/* namespace geoacc */

#endif							/* GEOACC_PRIMITIVES_CUH */
