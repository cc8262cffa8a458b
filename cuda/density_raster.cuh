/*
 * density_raster.cuh
 *
 * Device-pointer forms of the density raster's GPU steps, as the host code
 * of density_raster.cu chains them; the kernel benchmark times them alone.
 * Each only launches on geoacc's stream (no synchronisation).  T is the
 * kind of cell: uint32_t counts or int64_t fixed-point sums.
 */
#ifndef GEOACC_DENSITY_RASTER_CUH
#define GEOACC_DENSITY_RASTER_CUH

#include "cuda_util.cuh"
#include "density_raster.h"

namespace geoacc
{

/*
 * Add the samples of points [first, end) of d_points (device arrays; point
 * first - 1 must be there when first is flagged JOIN) to d_cells, which
 * holds grid rows [row_first, row_end) (rows with the margin).
 */
template <class T>
void		density_project_device(const DensityGeometry &g, const GeoaccDensityPoints &d_points,
								   uint32_t first, uint32_t end, T *d_cells, uint32_t row_first,
								   uint32_t row_end);

/* Put a size x size weight table in constant memory for density_convolve_device<T>. */
template <class T>
void		density_set_weights_device(const double *weights, int size);

/*
 * Raster rows [out_first, out_first + out_rows) into d_out (row out_first
 * first) from d_cells, which holds grid rows [in_first, in_first + in_rows)
 * of a grid with margin size / 2 (raster row r is grid row r + size / 2):
 * every grid row within size / 2 of the output rows.
 */
template <class T>
void		density_convolve_device(const T *d_cells, uint32_t in_first, uint32_t in_rows, uint32_t width,
									double *d_out, uint32_t out_first, uint32_t out_rows, int size);

}								/* namespace geoacc */

#endif							/* GEOACC_DENSITY_RASTER_CUH */
