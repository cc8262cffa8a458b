/*
 * density_raster.cuh
 *
 * Device-pointer forms of the density raster's GPU steps, as the host code
 * of density_raster.cu chains them; the kernel benchmark times them alone.
 * Each only launches on geoacc's stream (no synchronisation).
 */
#ifndef GEOACC_DENSITY_RASTER_CUH
#define GEOACC_DENSITY_RASTER_CUH

#include "cuda_util.cuh"
#include "density_raster.h"

namespace geoacc
{

/*
 * Add the samples of points [first, end) of d_xy / d_flags (point first - 1
 * must be there when first is flagged JOIN) to d_counts, which holds rows
 * [row_first, row_end) of the raster.
 */
void		density_project_device(const DensityGeometry &g, const double *d_xy, const uint8_t *d_flags,
								   uint32_t first, uint32_t end, uint32_t *d_counts,
								   uint32_t row_first, uint32_t row_end);

/* Put a size x size weight table in constant memory for density_convolve_device. */
void		density_set_weights_device(const double *weights, int size);

/*
 * Output rows [out_first, out_first + out_rows) into d_out (row out_first
 * first) from d_counts, which holds rows [in_first, in_first + in_rows):
 * every existing row within size / 2 of the output rows.
 */
void		density_convolve_device(const uint32_t *d_counts, uint32_t in_first, uint32_t in_rows,
									uint32_t width, double *d_out, uint32_t out_first, uint32_t out_rows,
									int size);

}								/* namespace geoacc */

#endif							/* GEOACC_DENSITY_RASTER_CUH */
