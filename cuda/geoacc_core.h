/*
 * geoacc_core.h
 *
 * The C ABI of the geoacc compute core.  The core knows nothing of
 * PostgreSQL: it never raises, prints, exits or allocates with palloc.  Every
 * entry point returns a GeoaccStatus; on failure geoacc_status_message()
 * holds a one-line explanation.  Each operation has a CUDA implementation
 * and a CPU twin that give bit-identical results; the caller picks one with
 * a GeoaccDevice argument.
 */
#ifndef GEOACC_CORE_H
#define GEOACC_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

typedef enum GeoaccStatus
{
	GEOACC_OK = 0,
	GEOACC_ERR_INVALID_ARGUMENT,	/* input the operation cannot accept */
	GEOACC_ERR_HOST_MEMORY,			/* a host allocation failed */
	GEOACC_ERR_DEVICE_MEMORY,		/* device memory cap or device exhausted */
	GEOACC_ERR_NO_DEVICE,			/* no usable CUDA device (or a CPU-only build) */
	GEOACC_ERR_DEVICE_DISABLED,		/* an earlier sticky CUDA error disabled the GPU */
	GEOACC_ERR_CUDA,				/* a CUDA call failed */
	GEOACC_ERR_CANCELLED,			/* the interrupt callback asked to stop */
	GEOACC_ERR_INTERNAL,			/* a bug: anything unexpected */
	GEOACC_ERR_SERVICE				/* the process that ran the call for its caller (the GPU service) died */
} GeoaccStatus;

typedef enum GeoaccDevice
{
	GEOACC_DEVICE_CPU = 0,
	GEOACC_DEVICE_GPU = 1
} GeoaccDevice;

/* Explanation of the last failed call (empty after success). */
const char *geoacc_status_message(void);

/*
 * Interrupts: long operations poll this callback between launches or
 * chunks; a nonzero return makes them stop and return GEOACC_ERR_CANCELLED.
 * The callback must only look at a flag: it must not longjmp.
 */
typedef int (*GeoaccInterruptCallback) (void);
void		geoacc_set_interrupt_callback(GeoaccInterruptCallback callback);

/*
 * Threads the CPU paths that split into independent pieces may use (the
 * error measurement and the sorts of gpu_mesh_tileset's CPU twin), 1 to
 * GEOACC_MAX_CPU_THREADS; 1, the default, runs them in the calling thread.
 * The results are the same bits whatever the number.
 */
#define GEOACC_MAX_CPU_THREADS 64
void		geoacc_cpu_set_threads(int n);

/* Set the message geoacc_status_message() returns (a status that came from another process). */
void		geoacc_set_status_message(const char *message);

/*
 * Host memory shared between processes (the GPU service's memory, mapped at
 * one address in every process of the server).  Memory the core hands to its
 * caller (mesh results, trajectory parts, events) comes from `alloc` when it
 * is given, else from malloc (its working arrays stay the process's own); memory in
 * [base, base + size) is always given back through `release`, in whichever
 * process frees it, and other memory through free.  `alloc` returns NULL
 * when it cannot serve the request (it may also return malloc'd memory).
 */
typedef void *(*GeoaccSharedAlloc) (size_t bytes);
typedef void (*GeoaccSharedRelease) (void *ptr);
void		geoacc_set_shared_memory(GeoaccSharedAlloc alloc, GeoaccSharedRelease release, const void *base,
									 size_t size);

/* ---------------------------------------------------------------- device */

/* 1 when this build contains CUDA code, 0 for a CPU-only build. */
int			geoacc_cuda_built(void);

/* Version of the CUDA runtime this build links (e.g. 13000), 0 if none. */
int			geoacc_cuda_runtime_version(void);

/*
 * Initialise CUDA in this process on first use (never call before fork).
 * GEOACC_OK when a GPU is ready; GEOACC_ERR_NO_DEVICE or
 * GEOACC_ERR_DEVICE_DISABLED otherwise.  Cheap after the first call.
 */
GeoaccStatus geoacc_gpu_init(void);

/* 1 once a sticky CUDA error has disabled the GPU in this process. */
int			geoacc_gpu_disabled(void);

/*
 * Which device geoacc_gpu_init() will take, of those CUDA makes visible:
 * ordinals[slot % count], or with count 0 device slot % (devices visible),
 * so that processes with consecutive slots spread over the devices.  Only
 * recorded (no CUDA call); it has no effect once the GPU is initialised.
 * Before any call: device 0.
 */
void		geoacc_gpu_choose_device(const int *ordinals, int count, int slot);

/*
 * Device memory this process keeps for its next allocations once it is
 * freed, instead of handing it back to the driver when the stream next
 * waits (the release threshold of the pool it allocates from); 0, the
 * default, keeps none.  Allocations that find the device full take it back
 * first.  Recorded before geoacc_gpu_init(), applied at once after it.
 */
void		geoacc_gpu_keep_freed_memory(uint64_t bytes);

/* The ordinal of the device this process uses, -1 before geoacc_gpu_init() succeeded. */
int			geoacc_gpu_current_device(void);

typedef struct GeoaccDeviceInfo
{
	int			ordinal;
	char		name[256];
	int			cc_major;
	int			cc_minor;
	uint64_t	total_memory;
	uint64_t	free_memory;		/* when free_memory_known */
	int			free_memory_known;	/* only for the device this process already uses */
	int			multiprocessors;
	int			driver_version;		/* e.g. 13000 */
	int			runtime_version;
} GeoaccDeviceInfo;

/*
 * Number of CUDA devices visible to this process; 0 (and GEOACC_OK) when
 * there is no driver or no device.  Does not need geoacc_gpu_init().
 */
GeoaccStatus geoacc_gpu_device_count(int *count);
GeoaccStatus geoacc_gpu_device_info(int ordinal, GeoaccDeviceInfo *info);

/*
 * Device-memory cap for geoacc's own allocations, in bytes; 0 means 90% of
 * the memory free when the GPU was initialised.  Operations larger than the
 * cap process their input in chunks.
 */
void		geoacc_gpu_set_memory_limit(uint64_t bytes);

/*
 * The cap of one call that reserved `bytes` from a budget shared with other
 * processes: until geoacc_gpu_set_reservation(0), geoacc's allocations may
 * add up to `bytes` beyond what this process held when it was set, whatever
 * geoacc_gpu_set_memory_limit() says.
 */
void		geoacc_gpu_set_reservation(uint64_t bytes);

/* Total memory of the device this process uses, in bytes (0 before geoacc_gpu_init() succeeded). */
uint64_t	geoacc_gpu_device_memory(void);

/*
 * Device memory an operation's GPU path takes: `bytes` for its input in one
 * piece, `least` the least it still runs with on the GPU, in chunks (equal
 * to `bytes` for an operation that would rather not be cut).  A caller
 * sharing the device with other processes reserves between the two before
 * the operation runs.
 */
typedef struct GeoaccDeviceNeed
{
	uint64_t	bytes;
	uint64_t	least;
} GeoaccDeviceNeed;

/* Tests: make the next `count` device allocations fail as if the device were full. */
void		geoacc_gpu_fail_allocations(int count);

/* The cap in force now, in bytes (0 before the GPU is initialised). */
uint64_t	geoacc_gpu_memory_limit(void);

/* Bytes geoacc may still allocate on the device under the cap. */
uint64_t	geoacc_gpu_memory_available(void);

/* Bytes geoacc holds on the device right now (tracked allocations). */
uint64_t	geoacc_gpu_memory_in_use(void);

/*
 * Tracked device allocations for callers that must hold device memory
 * across their own code; geoacc_gpu_release_all() frees every tracked
 * allocation still held (statement abort).
 */
GeoaccStatus geoacc_gpu_alloc(uint64_t bytes, void **ptr);
void		geoacc_gpu_free(void *ptr);
void		geoacc_gpu_release_all(void);

/*
 * Keep the GPU busy with short kernels for about `seconds`, polling the
 * interrupt callback between them (cancellation tests).
 */
GeoaccStatus geoacc_gpu_busy_wait(double seconds);

/* ------------------------------------------------------------ primitives */

/*
 * out[i] = in[0] + ... + in[i-1]; *total = sum of all (64-bit).  The sum
 * must fit in 32 bits for out[].
 */
GeoaccStatus geoacc_exclusive_scan_u32(GeoaccDevice device, const uint32_t *in,
									   uint32_t *out, uint32_t n, uint64_t *total);

/* indices[0..*count) = the positions i with flags[i] != 0, ascending. */
GeoaccStatus geoacc_select_flagged(GeoaccDevice device, const uint8_t *flags,
								   uint32_t n, uint32_t *indices, uint32_t *count);

/*
 * For each segment s = [offsets[s], offsets[s+1]) of values: its maximum and
 * the first index (absolute) holding it.  Empty segments give -infinity and
 * UINT32_MAX.  Values must not be NaN.
 */
GeoaccStatus geoacc_segmented_argmax(GeoaccDevice device, const double *values,
									 const uint32_t *offsets, uint32_t nsegments,
									 double *max_values, uint32_t *argmax);

/* -------------------------------------------------------- density raster */

/*
 * The raster of gpu_density_raster: the extent (xmin < xmax, ymin < ymax)
 * cut into width x height cells of (xmax - xmin) / width by
 * (ymax - ymin) / height; row 0 is the northern row (y near ymax), column 0
 * the western one, as in a north-up PostGIS raster.  The cells that the
 * projection fills reach `margin` cells beyond the raster on every side
 * (the kernel's reach, so that tiles of one grid join without seams):
 * (width + 2 margin) x (height + 2 margin) cells, the raster's cell
 * (row, column) at (row + margin, column + margin).
 */
typedef struct GeoaccDensityGrid
{
	double		xmin;
	double		ymin;
	double		xmax;
	double		ymax;
	uint32_t	width;
	uint32_t	height;
	uint32_t	margin;
} GeoaccDensityGrid;

/* Point flags of the projection. */
#define GEOACC_DENSITY_COUNT 1	/* the point itself is a sample (samples mode) */
#define GEOACC_DENSITY_JOIN 2	/* a segment from the previous point ends here */

/* What a sample adds. */
typedef enum GeoaccDensityMode
{
	GEOACC_DENSITY_SAMPLES = 0,	/* each sample adds its point's value */
	GEOACC_DENSITY_TIME			/* a segment spreads its value over its ends and samples */
} GeoaccDensityMode;

/* Weighted sums are integers in units of 2^-GEOACC_DENSITY_FIXED_BITS. */
#define GEOACC_DENSITY_FIXED_BITS 32

/*
 * The points to project: n points (x, y pairs in xy) with their flags; the
 * first must not be flagged JOIN.  With interpolate, a JOIN segment whose
 * ends' cells are n > 1 apart (Chebyshev distance) has the n - 1 samples
 * at k / n, k = 1 .. n - 1.  values (weighted projections only): per point,
 * the value of its own sample and of each sample of its incoming segment
 * (SAMPLES), or of its incoming segment as a whole (TIME: half a share to
 * each end, a share to each sample between, n shares in all, or one share
 * at each end without samples between).  cuda/density_raster.h defines the
 * cells and the rounding.
 */
typedef struct GeoaccDensityPoints
{
	const double *xy;
	const uint8_t *flags;
	const double *values;
	uint32_t	n;
	GeoaccDensityMode mode;
	bool		interpolate;
} GeoaccDensityPoints;

/*
 * The cells a projection adds to, in tiles: the grid's (width + 2 margin) x
 * (height + 2 margin) cells cut into GEOACC_DENSITY_TILE x
 * GEOACC_DENSITY_TILE tiles, row-major, each tile's cells row-major (the
 * last row and column of tiles reach past the grid; those cells stay zero).
 * A tile is made, zeroed, by allocate() when a sample first falls in it, so
 * the cells no sample reached cost nothing: a partial state of a few points
 * (a parallel worker's, a Citus shard's) is as small as what it touched.
 */
#define GEOACC_DENSITY_TILE 64

typedef struct GeoaccDensityTiles
{
	void	  **tiles;			/* tile_rows x tile_columns, NULL: every cell zero */
	uint32_t	tile_columns;	/* ceil((width + 2 margin) / GEOACC_DENSITY_TILE) */
	uint32_t	tile_rows;		/* ceil((height + 2 margin) / GEOACC_DENSITY_TILE) */
	/* a zeroed tile of `bytes`, NULL when memory ran out */
	void	   *(*allocate) (void *context, size_t bytes);
	void	   *context;
} GeoaccDensityTiles;

/*
 * Add one to the uint32_t counts of the tiles for every sample that falls
 * in a cell of the grid (mode SAMPLES, values unused).  Integers: the
 * result does not depend on the order of the additions.  On the GPU no
 * tile is made or changed until the device memory is held, so a
 * GEOACC_ERR_DEVICE_MEMORY leaves them as they were.
 */
GeoaccStatus geoacc_density_project(GeoaccDevice device, const GeoaccDensityGrid *grid,
									const GeoaccDensityPoints *points, GeoaccDensityTiles *counts);

/*
 * The same with values: each sample adds its value in fixed point,
 * floor(value * 2^32 / shares + 0.5), to the int64_t sums of the tiles
 * (values finite, >= 0 and below 2^27, so that no amount passes 2^59).
 */
GeoaccStatus geoacc_density_project_values(GeoaccDevice device, const GeoaccDensityGrid *grid,
										   const GeoaccDensityPoints *points, GeoaccDensityTiles *sums);

/*
 * Device memory of a projection of npoints points on the GPU (with_values:
 * geoacc_density_project_values()): the cells and the points in one piece,
 * or at least a band of rows and a batch of points.
 */
GeoaccDeviceNeed geoacc_density_project_need(const GeoaccDensityGrid *grid, uint32_t npoints, int with_values);

typedef enum GeoaccDensityKernel
{
	GEOACC_KERNEL_UNIFORM = 0,
	GEOACC_KERNEL_TRIANGULAR,
	GEOACC_KERNEL_EPANECHNIKOV,
	GEOACC_KERNEL_QUARTIC,
	GEOACC_KERNEL_TRIWEIGHT,
	GEOACC_KERNEL_TRICUBE,
	GEOACC_KERNEL_GAUSSIAN,
	GEOACC_KERNEL_COSINE
} GeoaccDensityKernel;

#define GEOACC_DENSITY_KERNEL_COUNT 8
#define GEOACC_DENSITY_MAX_KERNEL_SIZE 63

/*
 * The normalized size x size weights of a kernel (size odd, 1..63), row by
 * row; they sum to 1 up to rounding.
 */
GeoaccStatus geoacc_density_kernel(GeoaccDensityKernel kernel, int size, double *weights);

/*
 * out[height * width] = the cells of a grid with margin size / 2 (counts or
 * sums, (width + size - 1) x (height + size - 1) of them) convolved with the
 * kernel: every raster cell gathers the cells within size / 2 of it, the
 * margin's included, so mass from just outside the raster comes in and
 * mass spread past its edge is what the neighbouring tile receives.  Sums
 * count as sum * 2^-32.  Every device adds each cell's terms in the same
 * order: the results are bit-identical.
 */
GeoaccStatus geoacc_density_convolve(GeoaccDevice device, uint32_t width, uint32_t height,
									 const uint32_t *counts, GeoaccDensityKernel kernel, int size,
									 double *out);
GeoaccStatus geoacc_density_convolve_sums(GeoaccDevice device, uint32_t width, uint32_t height,
										  const int64_t *sums, GeoaccDensityKernel kernel, int size,
										  double *out);

/* Device memory of a convolution on the GPU: the whole grid, or at least a band of rows. */
GeoaccDeviceNeed geoacc_density_convolve_need(uint32_t width, uint32_t height, int size, int sums);

/*
 * A grid index of projection points (a snapshot's): square cells of side
 * `cell`, gx x gy of them from the south-west corner (x0, y0), coordinates
 * beyond the grid clamped to its border cells.  A point's box is its
 * position and, when flagged GEOACC_DENSITY_JOIN, its predecessor's; the
 * point is entered, in point order, in every cell its box meets
 * (cell_start[c] .. cell_start[c + 1] of entries, cells row by row from the
 * south), or listed among the longs when that is more than
 * GEOACC_POINT_GRID_SPREAD cells.
 */
#define GEOACC_POINT_GRID_SPREAD 16

typedef struct GeoaccPointGrid
{
	double		x0;
	double		y0;
	double		cell;
	uint32_t	gx;
	uint32_t	gy;
	uint64_t	nentries;
	uint32_t	nlong;
	uint64_t   *cell_start;		/* gx * gy + 1 */
	uint32_t   *entries;		/* nentries */
	uint32_t   *longs;			/* nlong */
} GeoaccPointGrid;

/*
 * The grid of n points (n > 0 or an empty grid of one cell), about
 * points_per_cell points a cell, at most max_side cells a side: sets the
 * shape, nentries and nlong, for the caller to provide the arrays.
 */
GeoaccStatus geoacc_point_grid_shape(const double *xy, const uint8_t *flags, uint32_t n, uint32_t points_per_cell,
									 uint32_t max_side, GeoaccPointGrid *index);

/* Fill the arrays of a grid that geoacc_point_grid_shape shaped for the same points. */
GeoaccStatus geoacc_point_grid_fill(const double *xy, const uint8_t *flags, uint32_t n, GeoaccPointGrid *index);

/*
 * Project the points of an index (points->n of them, the arrays the index
 * was made of) that can add to the grid's cells: those whose box meets the
 * extent widened by the margin and a cell more.  Each is projected once,
 * after its predecessor as geoacc_density_project() projects a point that
 * joins the one before, so the cells are those of the projection of the
 * whole: counts (uint32_t) without values, sums (int64_t) with them.
 */
GeoaccStatus geoacc_density_project_indexed(GeoaccDevice device, const GeoaccDensityGrid *grid,
											const GeoaccDensityPoints *points, const GeoaccPointGrid *index,
											GeoaccDensityTiles *cells);

/* The entries of the index that projection looks at (an upper bound of the points it projects). */
uint64_t	geoacc_density_indexed_candidates(const GeoaccDensityGrid *grid, const GeoaccPointGrid *index);

/* Device memory of that on the GPU (at most every entry of the extent's cells, each with its predecessor). */
GeoaccDeviceNeed geoacc_density_project_indexed_need(const GeoaccDensityGrid *grid, const GeoaccPointGrid *index,
													 int with_values);

/*
 * Points and their index kept ready on a device for many projections (a
 * snapshot's, in the process that serves its calls): on the GPU a copy of
 * the arrays in device memory, made once; on the CPU the caller's arrays
 * themselves, which must then outlive it.  The points are xy and flags, n
 * of them, with up to GEOACC_DENSITY_RESIDENT_VALUES arrays of values (each
 * finite, >= 0 and below 2^27, or the copy is refused), any of which a
 * projection may take as the points' values.
 */
#define GEOACC_DENSITY_RESIDENT_VALUES 2

typedef struct GeoaccDensityResident GeoaccDensityResident;

GeoaccStatus geoacc_density_resident_create(GeoaccDevice device, const double *xy, const uint8_t *flags, uint32_t n,
											const double *const *values, int nvalues, const GeoaccPointGrid *index,
											GeoaccDensityResident **resident);
void		geoacc_density_resident_free(GeoaccDensityResident *resident);

/* Device memory of a GPU copy of n points with nvalues arrays of values and their index. */
uint64_t	geoacc_density_resident_bytes(uint32_t n, int nvalues, const GeoaccPointGrid *index);

/* Device memory a resident copy holds (0 on the CPU). */
uint64_t	geoacc_density_resident_device_bytes(const GeoaccDensityResident *resident);

/*
 * geoacc_density_project_indexed() of the resident points on the device
 * they are kept on, with the values of array `values` (-1: none, counts),
 * the mode and interpolation given: the same cells, to the bit.
 */
GeoaccStatus geoacc_density_project_resident(const GeoaccDensityGrid *grid, const GeoaccDensityResident *resident,
											 int values, GeoaccDensityMode mode, bool interpolate,
											 GeoaccDensityTiles *cells);

/* Device memory of that on the GPU besides the copy (the cells, or at least a band of them). */
GeoaccDeviceNeed geoacc_density_project_resident_need(const GeoaccDensityGrid *grid, const GeoaccPointGrid *index,
													  int with_values);

/* -------------------------------------------------------------- simplify */

/* The distance Douglas-Peucker measures from a vertex to a segment. */
typedef enum GeoaccSimplifyDistance
{
	GEOACC_SIMPLIFY_PLANAR = 0,		/* XY distance to the segment, as PostGIS ST_Simplify */
	GEOACC_SIMPLIFY_3D,				/* XYZ distance to the segment */
	GEOACC_SIMPLIFY_SYNCHRONIZED,	/* XY distance to the position interpolated in time (SED) */
	GEOACC_SIMPLIFY_SYNCHRONIZED_3D /* XYZ distance to the position interpolated in time */
} GeoaccSimplifyDistance;

/*
 * Trajectories stored one after another: trajectory t is the points
 * offsets[t] .. offsets[t+1] - 1 of x[] and y[], of z[] for the 3D
 * distances and of m[] (time, strictly increasing) for the synchronized
 * ones; arrays a distance does not use may be NULL.  offsets[0] need not be
 * 0: the arrays are indexed as they are.
 */
typedef struct GeoaccTrajectories
{
	uint32_t	ntrajectories;
	const uint32_t *offsets;	/* ntrajectories + 1, non-decreasing */
	const double *x;
	const double *y;
	const double *z;
	const double *m;
} GeoaccTrajectories;

/* Where the time of one geoacc_dp_simplify() call went. */
typedef struct GeoaccSimplifyTiming
{
	double		transfer_ms;	/* GPU: uploads and downloads */
	double		compute_ms;		/* GPU: the kernels between them; CPU: everything */
	uint32_t	pieces;			/* GPU: device-sized pieces the batch was cut into */
	uint32_t	rounds;			/* GPU: data-parallel rounds over all pieces */
	uint64_t	cpu_points;		/* GPU: points of trajectories too large for the device
								 * memory cap, simplified by the CPU twin instead */
} GeoaccSimplifyTiming;

/*
 * Douglas-Peucker simplification of every trajectory of the batch with
 * tolerance >= 0: keep[i] = 1 for the vertices kept, 0 for the others, for
 * offsets[0] <= i < offsets[ntrajectories].  First and last vertices are
 * always kept; an interior vertex is kept when its distance is strictly
 * greater than the tolerance.  GEOACC_SIMPLIFY_PLANAR keeps exactly the
 * vertices PostGIS ST_Simplify keeps (its arithmetic, its tie rule and its
 * separate rule for tolerance 0).  The GPU cuts the batch into pieces that
 * fit the device memory cap.  timing may be NULL.
 */
GeoaccStatus geoacc_dp_simplify(GeoaccDevice device, const GeoaccTrajectories *trajectories,
								GeoaccSimplifyDistance distance, double tolerance,
								uint8_t *keep, GeoaccSimplifyTiming *timing);

/*
 * Device memory geoacc_dp_simplify() takes to simplify npoints vertices in
 * ntrajectories trajectories as one piece on the GPU (to size batches).
 */
uint64_t	geoacc_dp_simplify_device_bytes(uint64_t npoints, uint64_t ntrajectories,
											GeoaccSimplifyDistance distance, double tolerance);

/* The quality measures of a simplification (Huang et al., Table IV). */
typedef struct GeoaccCompressionMeasures
{
	double		compression_ratio;	/* 1 - simplified points / original points */
	double		length_loss_rate;	/* (original length - simplified length) / original length */
	double		dtw_distance;		/* dynamic time warping distance, XY, sum of matched distances */
} GeoaccCompressionMeasures;

/*
 * Compare an original line with its simplification, each given as npoints
 * * ndims doubles (X Y first, ndims 2 to 4).  Both need at least one point;
 * length_loss_rate is NaN when the original has length 0.  CPU only.
 */
GeoaccStatus geoacc_compression_measures(const double *original, uint32_t original_points, int original_ndims,
										 const double *simplified, uint32_t simplified_points,
										 int simplified_ndims, GeoaccCompressionMeasures *measures);

/* ------------------------------------------------------------------ twed */

/* Parameters of the Time Warp Edit Distance (Marteau 2009). */
typedef struct GeoaccTwedParams
{
	double		nu;				/* stiffness: weight of time differences, >= 0 */
	double		lambda;			/* penalty of each deletion, >= 0 */
	int			degree;			/* p of the Lp distance between points, >= 1 */
	int			root;			/* 1: (sum |x_d - y_d|^p)^(1/p); 0: the powered sum, as in Marteau's C code */
	int			float32;		/* 1: single precision, each pair in the frame of one of its series */
} GeoaccTwedParams;

/*
 * Series packed end to end: series s has the points offsets[s] ..
 * offsets[s+1] - 1 (at least one), each with `dims` values and a time;
 * times increase strictly within a series.
 */
typedef struct GeoaccTwedSet
{
	uint32_t	count;
	uint32_t	dims;
	const uint64_t *offsets;	/* count + 1 */
	const double *values;		/* offsets[count] * dims, point by point */
	const double *times;		/* offsets[count] */
} GeoaccTwedSet;

/*
 * TWED of every series of a against every series of b, row-major into
 * distances[a->count * b->count].  With b NULL: every pair i < j of a, in
 * the order (0,1), (0,2), ..., (1,2), ..., into
 * distances[a->count * (a->count - 1) / 2].
 */
GeoaccStatus geoacc_twed(GeoaccDevice device, const GeoaccTwedSet *a, const GeoaccTwedSet *b,
						 const GeoaccTwedParams *params, double *distances);

/* Device memory of geoacc_twed() on the GPU (b NULL: the pairs of a). */
GeoaccDeviceNeed geoacc_twed_need(const GeoaccTwedSet *a, const GeoaccTwedSet *b, const GeoaccTwedParams *params);

/*
 * Work (rough arithmetic operations) between two interrupt polls of
 * geoacc_twed: per kernel launch on the GPU, per poll on the CPU.  0 (the
 * default) means a few milliseconds of work; tests set it low to split the
 * work into many launches.
 */
void		geoacc_twed_set_poll_ops(uint64_t ops);

/* ---------------------------------------------------------- segment join */

/*
 * The index a segment join searches (Gowanlock and Casanova): a flattened
 * grid of the non-empty spatial cells, entries in fixed-width temporal
 * bins, or temporal bins with spatial sub-bins; auto picks one from the
 * data's shape (see segment_join.h).  Every method returns the same rows.
 */
typedef enum GeoaccJoinMethod
{
	GEOACC_JOIN_AUTO = 0,
	GEOACC_JOIN_SPATIAL,
	GEOACC_JOIN_TEMPORAL,
	GEOACC_JOIN_SPATIOTEMPORAL
} GeoaccJoinMethod;

/*
 * One pair of segments within the distance: trajectory indices in their
 * sets, segment k of a trajectory joining its vertices k and k + 1 (from
 * 0), the sub-interval [t_start, t_end] of their common time span during
 * which they are within the distance, and the closest point of approach in
 * it (the earliest, when the distance is constant).
 */
typedef struct GeoaccJoinRow
{
	uint32_t	a_traj;
	uint32_t	a_seg;
	uint32_t	b_traj;
	uint32_t	b_seg;
	double		t_start;
	double		t_end;
	double		cpa_time;
	double		cpa_distance;
} GeoaccJoinRow;

/* What one segment join did and where its time went. */
typedef struct GeoaccJoinStats
{
	GeoaccJoinMethod method;	/* the method that ran (auto resolved) */
	uint64_t	queries;		/* segments of a */
	uint64_t	entries;		/* segments indexed (of b, or of a for a self-join) */
	uint64_t	candidates;		/* pairs the index search handed to the exact test */
	uint64_t	rows;
	uint32_t	entry_chunks;	/* GPU: pieces of the index under the memory cap */
	uint32_t	batches;		/* GPU: candidate buffers filled and refined */
	uint64_t	overflow_queries;	/* GPU: queries redone with larger buffers */
	uint32_t	device_allocations;	/* GPU: device memory allocations made */
	uint32_t	syncs;			/* GPU: waits of the host for the device */
	double		segments_ms;	/* checking the trajectories and building the segments */
	double		plan_ms;		/* planning the index (on the GPU also the device memory) */
	double		memory_ms;		/* GPU: allocating the call's device memory */
	double		upload_ms;		/* GPU: copying the segments to the device */
	double		index_ms;		/* building the index */
	double		search_ms;		/* the index search (candidates) */
	double		refine_ms;		/* the exact test */
	double		output_ms;		/* ordering and copying out the rows */
} GeoaccJoinStats;

typedef struct GeoaccSegmentJoin GeoaccSegmentJoin;

/*
 * Start the join of the segments of a against those of b within
 * `distance` (> 0, finite) in X Y, or X Y Z when both sets have z.  With b
 * NULL, a self-join: each pair of segments of different trajectories once,
 * a_traj < b_traj.  Trajectories need strictly increasing m (time) and
 * finite coordinates; those of fewer than 2 points have no segments.  The
 * inputs are copied: the caller may free them after this call.
 */
GeoaccStatus geoacc_segment_join_open(GeoaccDevice device, const GeoaccTrajectories *a,
									  const GeoaccTrajectories *b, double distance,
									  GeoaccJoinMethod method, GeoaccSegmentJoin **join);

/* Device memory of a join of a with b (NULL: a self-join) on the GPU. */
GeoaccDeviceNeed geoacc_segment_join_need(const GeoaccTrajectories *a, const GeoaccTrajectories *b);

/*
 * The segments of trajectories b made once, as the entries of many joins
 * of other trajectories against b (a snapshot's, in the process that serves
 * its calls): on the GPU with a copy in device memory.  In X Y Z when b
 * has z, for joins of a with z; in X Y otherwise.  The joins reuse the
 * index plans, and on the CPU the index, of earlier joins with the same
 * method and distance.  b's arrays must outlive the entries.
 */
typedef struct GeoaccJoinEntries GeoaccJoinEntries;

GeoaccStatus geoacc_join_entries_create(GeoaccDevice device, const GeoaccTrajectories *b,
										GeoaccJoinEntries **entries);
void		geoacc_join_entries_free(GeoaccJoinEntries *entries);

/* Device memory of a GPU copy of the segments of b; and what a copy holds (0 on the CPU). */
uint64_t	geoacc_join_entries_bytes(const GeoaccTrajectories *b);
uint64_t	geoacc_join_entries_device_bytes(const GeoaccJoinEntries *entries);

/*
 * geoacc_segment_join_open(device, a, b, ...) with b's prepared entries, on
 * the device they were made for: the same rows (a whose z differs from the
 * entries' has b's segments made again).  The entries must outlive the
 * join, and serve one join at a time.
 */
GeoaccStatus geoacc_segment_join_open_entries(const GeoaccTrajectories *a, GeoaccJoinEntries *b, double distance,
											  GeoaccJoinMethod method, GeoaccSegmentJoin **join);

/*
 * Up to `capacity` (> 0) next rows into rows[], ordered by (a_traj, a_seg,
 * b_traj, b_seg); *count = 0 once all are out.  The work is done batch by
 * batch as rows are asked for, polling for interrupts in between.
 */
GeoaccStatus geoacc_segment_join_next(GeoaccSegmentJoin *join, GeoaccJoinRow *rows, uint32_t capacity,
									  uint32_t *count);

void		geoacc_segment_join_stats(const GeoaccSegmentJoin *join, GeoaccJoinStats *stats);

/* Free the join and its device memory; NULL is allowed. */
void		geoacc_segment_join_close(GeoaccSegmentJoin *join);

/*
 * Tests and benchmarks: candidate slots of each query's fixed buffer and
 * slots of one device batch (0: the defaults), so that overflow and
 * batching can be forced small.
 */
void		geoacc_segment_join_set_buffers(uint32_t query_slots, uint64_t batch_slots);


/* ------------------------------------------------------------- mesh clip */

/*
 * An indexed triangle mesh: positions (x, y, z per vertex), triangles
 * (three vertex indices each, counter-clockwise or not: the winding is
 * kept) and optional per-vertex attributes, nattributes floats per vertex
 * (normals, colours, texture coordinates, ... side by side), which cut
 * points interpolate with the parameter of their position.
 */
typedef struct GeoaccMesh
{
	uint32_t	nvertices;
	uint32_t	ntriangles;
	const double *positions;	/* nvertices * 3 */
	const uint32_t *triangles;	/* ntriangles * 3 */
	uint32_t	nattributes;	/* 0 .. GEOACC_MESH_MAX_ATTRIBUTES */
	const float *attributes;	/* nvertices * nattributes, or NULL */
} GeoaccMesh;

#define GEOACC_MESH_MAX_ATTRIBUTES 16

/* A clipped mesh, allocated by the core; release with geoacc_mesh_result_free(). */
typedef struct GeoaccMeshResult
{
	uint32_t	nvertices;
	uint32_t	ntriangles;
	uint32_t	nattributes;
	double	   *positions;
	uint32_t   *triangles;
	float	   *attributes;
} GeoaccMeshResult;

/* An axis-aligned box, the layout of PostGIS's BOX3D without its SRID. */
typedef struct GeoaccBox
{
	double		xmin;
	double		ymin;
	double		zmin;
	double		xmax;
	double		ymax;
	double		zmax;
} GeoaccBox;

/* Where the time of one geoacc_mesh_clip() call went. */
typedef struct GeoaccMeshClipTiming
{
	double		upload_ms;		/* GPU: the mesh to the device (once for all boxes) */
	double		kernel_ms;		/* GPU: outcodes, classification, clipping, scans, numbering */
	double		download_ms;	/* GPU: the results back */
	double		compute_ms;		/* everything (CPU: the whole clip) */
	uint32_t	chunks;			/* GPU: face chunks under the device memory cap, over all boxes */
	uint64_t	cpu_triangles;	/* GPU: triangles clipped by the CPU twin because the
								 * vertices alone exceed the device memory cap */
} GeoaccMeshClipTiming;

/*
 * Clip the mesh by each of nboxes boxes into results[b] (the caller passes
 * zeroed structs).  A box is closed: points on its faces are inside.  A
 * triangle inside is kept as it is, one outside dropped, one straddling
 * clipped against the box's planes (Sutherland-Hodgman) and
 * fan-triangulated; nothing is dropped for being small.  Cut points are
 * computed from the canonical edge (ends ordered by their coordinates, then
 * by index) with the cut coordinate set to the plane, so the triangles
 * sharing an edge, boxes sharing a plane, and meshes sharing an edge under
 * other vertex numbers, get the same bits.  Output vertices: the input vertices
 * used, in input order, then the distinct cut points (cuts of input edges
 * by (lower index, higher index, plane), then points inside triangles in
 * face order); triangles in input face order, a clipped face's fan in
 * order.  Positions must be finite and indices below nvertices (at most
 * 2^29 - 1 vertices).  CPU and GPU return the same bits.  timing may be
 * NULL.
 */
GeoaccStatus geoacc_mesh_clip(GeoaccDevice device, const GeoaccMesh *mesh, const GeoaccBox *boxes,
							  uint32_t nboxes, GeoaccMeshResult *results, GeoaccMeshClipTiming *timing);

/* Device memory of clipping a mesh on the GPU (the boxes are clipped one after another). */
GeoaccDeviceNeed geoacc_mesh_clip_need(const GeoaccMesh *mesh);

/* Free what a result holds and zero it (NULL and zeroed results are fine). */
void		geoacc_mesh_result_free(GeoaccMeshResult *result);

/*
 * Plane i of n cutting [lo, hi] into n equal parts: lo + (hi - lo) * i / n,
 * with plane n exactly hi.  Neighbouring tiles computed with it share their
 * planes to the bit.
 */
double		geoacc_grid_plane(double lo, double hi, uint32_t i, uint32_t n);

/*
 * Tile (ix, iy, iz) of the nx * ny * nz tiles of an extent, with the planes
 * of geoacc_grid_plane().  An extent whose width along an axis times the
 * tiles along it is not a finite double (an infinite bound, or a product
 * that overflows) has no such planes and is refused.
 */
GeoaccStatus geoacc_grid_tile(const GeoaccBox *extent, uint32_t nx, uint32_t ny, uint32_t nz, uint32_t ix,
							  uint32_t iy, uint32_t iz, GeoaccBox *box);

/* All nx * ny * nz tiles of an extent, boxes[(ix * ny + iy) * nz + iz]. */
GeoaccStatus geoacc_grid_tiles(const GeoaccBox *extent, uint32_t nx, uint32_t ny, uint32_t nz, GeoaccBox *boxes);

/*
 * Weld a triangle soup into an indexed mesh: corners with equal
 * coordinates (-0 = +0) become one vertex, numbered in order of first
 * appearance.  Triangle t's three corners (x y z each) are the 9 doubles
 * at corners + t * stride (stride 9: packed; more: read in place from a
 * larger record, such as a serialized TIN's patches).  Coordinates must be
 * finite.  The result's triangles index its positions.
 */
GeoaccStatus geoacc_mesh_weld(const double *corners, uint32_t ntriangles, size_t stride, GeoaccMeshResult *result);

/*
 * Weld an indexed mesh's duplicate vertices: vertices whose positions and
 * attributes have equal bits (-0 = +0) become one, numbered in order of
 * first appearance in vertex order; the triangles are renumbered.  Two
 * vertices at one point with different attributes (the two sides of a UV
 * seam) stay apart.  A mesh without duplicates comes back unchanged.
 */
GeoaccStatus geoacc_mesh_weld_vertices(const GeoaccMesh *mesh, GeoaccMeshResult *result);

/* -------------------------------------------------- PLY and glTF meshes */

/*
 * The per-vertex attributes of a mesh read from PLY, in this order in its
 * attribute floats: normals (nx ny nz), a colour (red green blue, then
 * alpha with GEOACC_MESH_ALPHA; 0..1), texture coordinates (u v).
 * GEOACC_MESH_COLORS_UCHAR says the colour came as uchar (0..255) and is
 * written back so.
 */
#define GEOACC_MESH_NORMALS 0x01
#define GEOACC_MESH_COLORS 0x02
#define GEOACC_MESH_ALPHA 0x04
#define GEOACC_MESH_TEXCOORDS 0x08
#define GEOACC_MESH_COLORS_UCHAR 0x10

/* Attribute floats per vertex of a layout (0 .. 9). */
uint32_t	geoacc_mesh_layout_width(uint32_t layout);

/*
 * Read a PLY file (ASCII, binary little- or big-endian) into an indexed
 * mesh: the vertex element's x y z (float or double, in any order) and the
 * attributes of *layout it has; the face element's vertex_indices (or
 * vertex_index) lists, faces of more than three vertices fan-triangulated
 * (0, i, i + 1).  Other elements and properties are skipped.  Malformed
 * files (bad header, truncated or surplus data, counts, indices out of
 * range, unsupported types, faces of fewer than 3 vertices, non-finite
 * coordinates) give GEOACC_ERR_INVALID_ARGUMENT naming what and where.
 */
GeoaccStatus geoacc_ply_read(const void *data, size_t size, GeoaccMeshResult *mesh, uint32_t *layout);

/*
 * Write a mesh as binary little-endian PLY: double x y z, then the
 * attributes of layout (float nx ny nz; uchar or float red green blue
 * [alpha]; float s t), faces as list uchar uint vertex_indices.  With out
 * NULL only *size is set; else out must hold capacity >= *size bytes.
 */
GeoaccStatus geoacc_ply_write(const GeoaccMesh *mesh, uint32_t layout, uint8_t *out, size_t capacity,
							  size_t *size);

/*
 * Write a mesh as binary glTF 2.0 (GLB): one node whose translation is the
 * centre of the mesh's bounding box in float64, positions float32 relative
 * to it, indices uint32, NORMAL (normalised), COLOR_0 and TEXCOORD_0 (v
 * flipped: glTF's origin is the top left) when the layout has them.  glTF
 * is y-up: (x, y, z) is written as (x, z, -y), as 3D Tiles and viewers
 * expect.  With out NULL only *size is set.
 */
GeoaccStatus geoacc_glb_write(const GeoaccMesh *mesh, uint32_t layout, uint8_t *out, size_t capacity,
							  size_t *size);

/* -------------------------------------------------- 3D Tiles tilesets */

/* Most levels of a tileset (4^9 leaves). */
#define GEOACC_TILESET_MAX_LEVELS 10
/* Most clustering cells along a tile's edge. */
#define GEOACC_TILESET_MAX_CELLS 1024

/*
 * The root extent of a mesh's tileset and the origin of its tiles'
 * coordinates: the mesh's box made square in x and y (its lower corner
 * kept), z as the mesh's; the origin is the extent's centre.  A mesh
 * without triangles has none (GEOACC_ERR_INVALID_ARGUMENT).
 */
GeoaccStatus geoacc_mesh_tileset_extent(const GeoaccMesh *mesh, GeoaccBox *extent, double origin[3]);

typedef struct GeoaccTilesetOptions
{
	uint32_t	levels;			/* 1 .. GEOACC_TILESET_MAX_LEVELS: a quadtree of levels levels */
	uint32_t	cells;			/* 1 .. GEOACC_TILESET_MAX_CELLS clustering cells along a tile's edge */
	uint32_t	layout;			/* the mesh's attributes (GEOACC_MESH_NORMALS ...), 0 for none */
	/*
	 * The root tile's transform, column-major as 3D Tiles writes it: from
	 * the tiles' coordinates (the mesh's minus the origin) to the tileset's
	 * (ECEF for one placed on the Earth).
	 */
	double		transform[16];
	const char *generator;		/* asset.generator, or NULL */
} GeoaccTilesetOptions;

/* One file of a tileset: tileset.json, or a tile's GLB, tiles/LEVEL/X/Y.glb. */
typedef struct GeoaccTilesetFile
{
	char		path[48];
	uint8_t    *data;
	size_t		size;
} GeoaccTilesetFile;

/* A tileset, allocated by the core; release with geoacc_tileset_free(). */
typedef struct GeoaccTileset
{
	uint32_t	nfiles;
	GeoaccTilesetFile *files;	/* tileset.json first, then the tiles by level, x, y */
	uint32_t	levels;
	/* per level, 0 the root: */
	double		measured[GEOACC_TILESET_MAX_LEVELS];	/* largest sampled distance from the full mesh */
	double		bound[GEOACC_TILESET_MAX_LEVELS];	/* measured + the sample's covering radius */
	double		geometric_error[GEOACC_TILESET_MAX_LEVELS]; /* written: the bound, at least the level below's */
	uint64_t	triangles[GEOACC_TILESET_MAX_LEVELS];	/* the level's mesh, before the tiles' clips */
	uint32_t	tiles[GEOACC_TILESET_MAX_LEVELS];	/* tiles with content */
} GeoaccTileset;

/* Where the time of one geoacc_mesh_tileset() call went. */
typedef struct GeoaccTilesetTiming
{
	double		simplify_ms;	/* clustering of the parent levels */
	double		error_ms;		/* their measured errors */
	double		clip_ms;		/* the tiles' clips */
	double		write_ms;		/* GLB files and tileset.json */
	double		kernel_ms;		/* GPU: kernels and sorts of simplification and error */
	double		compute_ms;		/* everything */
} GeoaccTilesetTiming;

/*
 * A 3D Tiles 1.1 tileset of a mesh (GEOACC_MESH_MAX_ATTRIBUTES and the
 * clip's limits apply): a quadtree over geoacc_mesh_tileset_extent(), level
 * l in 2^l x 2^l tiles; the leaves (level levels - 1) are the mesh's clips
 * by their tiles, each parent level is the mesh clustered on a grid of
 * cells x cells per tile (mesh_tileset.h) and clipped by its tiles, so
 * neighbouring tiles of a level share their border vertices to the bit.
 * Each level's geometricError is a bound of the one-sided Hausdorff
 * distance from the full mesh to what the level shows, measured on a
 * sample.  Tiles without triangles are left out (a parent of tiles with
 * some stays, without content), and so is a coarser tile's content where no
 * leaf under it has any (clustering can stretch a triangle there), so that
 * every leaf is at the last level; a mesh whose triangles all have two
 * equal corners has no tile, and no files.  The GLB files are y-up,
 * float32 positions relative to the origin.  CPU and GPU give the same
 * bits.  timing may be NULL.
 */
GeoaccStatus geoacc_mesh_tileset(GeoaccDevice device, const GeoaccMesh *mesh, const GeoaccTilesetOptions *options,
								 GeoaccTileset *tileset, GeoaccTilesetTiming *timing);

/* Device memory of a tileset on the GPU. */
GeoaccDeviceNeed geoacc_mesh_tileset_need(const GeoaccMesh *mesh, const GeoaccTilesetOptions *options);

/* Free what a tileset holds and zero it (NULL and zeroed tilesets are fine). */
void		geoacc_tileset_free(GeoaccTileset *tileset);

/*
 * Vertex clustering alone (the tileset's parent levels, for tests and
 * benchmarks): the mesh clustered on nx x ny x nz cells over extent (which
 * must hold the mesh).  kernel_ms (may be NULL) gets the GPU's kernel time.
 */
GeoaccStatus geoacc_mesh_cluster(GeoaccDevice device, const GeoaccMesh *mesh, const GeoaccBox *extent, uint32_t nx,
								 uint32_t ny, uint32_t nz, GeoaccMeshResult *result, double *kernel_ms);

/*
 * The one-sided distance from mesh `from` to mesh `to` as the tileset
 * measures it: *measured the largest distance from a sample of `from` (its
 * vertices, and a grid of steps at most `spacing` on its longer triangles)
 * to `to`'s triangles, found through nx x ny x nz cells over extent (which
 * must hold both); *bound = measured + the sample's covering radius.
 * INFINITY when `to` has no triangles.
 */
GeoaccStatus geoacc_mesh_distance(GeoaccDevice device, const GeoaccMesh *from, const GeoaccMesh *to,
								  const GeoaccBox *extent, uint32_t nx, uint32_t ny, uint32_t nz, double spacing,
								  double *measured, double *bound);

/* ---------------------------------------------------- make trajectories */

/*
 * Position reports (fixes) of moving objects, in any order: fix i puts
 * object object_ids[i] at (x[i], y[i]) at time t[i] (in the rules'
 * time_unit).  Times and coordinates must be finite.
 */
typedef struct GeoaccFixes
{
	uint32_t	count;
	const int64_t *object_ids;
	const double *t;
	const double *x;
	const double *y;
} GeoaccFixes;

/*
 * How fixes become trajectories.  Within an object, in time order, a new
 * part starts at a fix that comes more than max_gap after the one before
 * (both in time_unit), or that the object could only have reached from the
 * one before faster than max_speed (SRID units per second): sqrt(dx^2 +
 * dy^2) / (dt / time_unit) > max_speed.  INFINITY turns either rule off.
 * time_unit is how many units of t make a second: 1 (or 0) for seconds;
 * 1e6 for timestamps' microseconds, whole numbers, so that gaps compare to
 * the microsecond as PostgreSQL compares intervals.  The parts' m is in
 * seconds, t / time_unit.
 */
typedef struct GeoaccTrajectoryRules
{
	double		max_gap;		/* >= 0 */
	double		max_speed;		/* >= 0 */
	int			simplify;		/* 1: Douglas-Peucker of each part with distance and tolerance */
	GeoaccSimplifyDistance distance;	/* GEOACC_SIMPLIFY_PLANAR or GEOACC_SIMPLIFY_SYNCHRONIZED */
	double		tolerance;		/* >= 0 */
	double		time_unit;		/* units of t per second: 0 or 1 (seconds), or 1e6 (microseconds) */
} GeoaccTrajectoryRules;

/*
 * The trajectories, allocated by the core; release them with
 * geoacc_trajectory_parts_free().  Parts are ordered by object id, then
 * time; part p has the points offsets[p] .. offsets[p + 1] - 1 of x, y and
 * m (the time, strictly increasing).
 */
typedef struct GeoaccTrajectoryParts
{
	uint32_t	nparts;			/* parts of at least two fixes */
	const int64_t *object_ids;	/* per part */
	const uint32_t *part_numbers;	/* per part: 1 + the splits before it in its object */
	const uint32_t *fixes;		/* per part: its fixes before simplification */
	const uint32_t *offsets;	/* nparts + 1 */
	const double *x;
	const double *y;
	const double *m;
	uint32_t	duplicates;		/* fixes dropped for sharing their object and time with another */
	uint32_t	single_fix_parts;	/* parts of one fix, dropped (they keep their part number) */
	void	   *storage;		/* the core's */
} GeoaccTrajectoryParts;

/* Where the time of one geoacc_make_trajectories() call went. */
typedef struct GeoaccMakeTrajectoriesTiming
{
	double		transfer_ms;	/* GPU: uploads and downloads of the sorting and splitting */
	double		compute_ms;		/* GPU: its sorts and kernels; CPU: sorting and splitting */
	double		simplify_ms;	/* the Douglas-Peucker of the parts, transfers included */
	double		host_ms;		/* GPU: merging sorted runs and gathering pieces on the host */
	uint32_t	pieces;			/* GPU: device-sized pieces of whole objects */
	uint32_t	runs;			/* GPU: sorted runs merged on the host (0: the fixes fit in one piece) */
	uint64_t	cpu_fixes;		/* GPU: fixes of objects too large for the device memory cap, done
								 * by the CPU twin instead */
} GeoaccMakeTrajectoriesTiming;

/*
 * Trajectories from fixes: sort them by (object, time); of fixes of one
 * object at one time keep the one with the smallest x, then the smallest y
 * (-0 before +0), a choice that does not depend on the input order; split
 * each object's fixes into parts by the rules; drop parts of one fix;
 * simplify each part when rules->simplify, with geoacc_dp_simplify()'s
 * rules.  M is the time with -0 made +0.  The GPU works in pieces that fit
 * the device memory cap; when all fixes do not fit one piece it sorts them
 * in runs that it merges on the host.  CPU and GPU give the same bits.
 * timing may be NULL.
 */
GeoaccStatus geoacc_make_trajectories(GeoaccDevice device, const GeoaccFixes *fixes,
									  const GeoaccTrajectoryRules *rules, GeoaccTrajectoryParts *parts,
									  GeoaccMakeTrajectoriesTiming *timing);

/* Free what parts holds and zero it (NULL and zeroed parts are fine). */
void		geoacc_trajectory_parts_free(GeoaccTrajectoryParts *parts);

/*
 * Device memory geoacc_make_trajectories() takes to sort and split n fixes
 * as one piece on the GPU (tests use it to choose memory caps).
 */
uint64_t	geoacc_make_trajectories_device_bytes(uint32_t nfixes);

/* --------------------------------------------------------- vessel events */

/*
 * An encounter of trajectory a_traj (of a) with b_traj (of b, or of a for
 * a self-join): a maximal union of the intervals of their segment pairs
 * within the distance (geoacc_segment_join's [t_start, t_end]) that
 * overlap, touch or lie at most max_gap apart.  The closest approach in it
 * is at cpa_time, cpa_distance apart, on segment a_seg of a_traj and b_seg
 * of b_traj (the smallest distance, then the earliest time, then the lowest
 * segments).  a_speed and b_speed: each trajectory's median speed over
 * [start, end] (see events.h), NAN unless asked for.
 */
typedef struct GeoaccEncounter
{
	uint32_t	a_traj;
	uint32_t	b_traj;
	uint32_t	a_seg;
	uint32_t	b_seg;
	double		start;
	double		end;
	double		cpa_time;
	double		cpa_distance;
	double		a_speed;
	double		b_speed;
} GeoaccEncounter;

/* Events allocated by the core, ordered by (a_traj, b_traj, start); free them with geoacc_events_free(). */
typedef struct GeoaccEncounters
{
	uint64_t	count;
	const GeoaccEncounter *items;
	void	   *storage;		/* the core's */
} GeoaccEncounters;

/*
 * The encounters of the trajectories of a with those of b (NULL: of a with
 * each other, a_traj < b_traj) within `distance`, as geoacc_segment_join
 * finds the segment pairs (the same rules for z and the method).  On the GPU
 * the segment pairs never leave the device: each batch of them is merged
 * into pieces of encounters there, and only the pieces come back.  With
 * speeds, the median speeds are computed.  stats may be NULL.
 */
GeoaccStatus geoacc_encounters(GeoaccDevice device, const GeoaccTrajectories *a, const GeoaccTrajectories *b,
							   double distance, double max_gap, GeoaccJoinMethod method, int speeds,
							   GeoaccEncounters *out, GeoaccJoinStats *stats);

/* Device memory of geoacc_encounters() on the GPU. */
GeoaccDeviceNeed geoacc_encounters_need(const GeoaccTrajectories *a, const GeoaccTrajectories *b);

/* A stop of trajectory traj: its points first .. last (indices of the trajectories' arrays). */
typedef struct GeoaccStop
{
	uint32_t	traj;
	uint32_t	first;
	uint32_t	last;
} GeoaccStop;

typedef struct GeoaccStops
{
	uint64_t	count;
	const GeoaccStop *items;
	void	   *storage;
} GeoaccStops;

/*
 * The stops of each trajectory (events.h, stops_of): runs of fixes whose
 * box has a diagonal of at most max_diameter (X Y, and Z when t has z),
 * lasting at least min_duration (>= 0) seconds of m.  Ordered by
 * trajectory, then time.
 */
GeoaccStatus geoacc_stops(GeoaccDevice device, const GeoaccTrajectories *t, double max_diameter,
						  double min_duration, GeoaccStops *out);

/* Device memory of geoacc_stops() on the GPU. */
GeoaccDeviceNeed geoacc_stops_need(const GeoaccTrajectories *t);

/*
 * Polygons: zone z is the rings zone_rings[z] .. zone_rings[z + 1] - 1,
 * ring r the points ring_points[r] .. ring_points[r + 1] - 1 of x and y,
 * closed (its last point its first), at least 4 points.  The rings of a
 * zone are its polygons' shells and holes, in any order.
 */
typedef struct GeoaccZones
{
	uint32_t	nzones;
	const uint32_t *zone_rings;	/* nzones + 1 */
	const uint32_t *ring_points;	/* rings + 1 */
	const double *x;
	const double *y;
} GeoaccZones;

/* A visit of trajectory traj to zone zone, from enter to exit (times in m). */
typedef struct GeoaccVisit
{
	uint32_t	traj;
	uint32_t	zone;
	double		enter;
	double		exit;
} GeoaccVisit;

typedef struct GeoaccVisits
{
	uint64_t	count;
	const GeoaccVisit *items;
	void	   *storage;
} GeoaccVisits;

/*
 * The visits of each trajectory to each zone, in X Y: the maximal times
 * during which the linearly moving point is inside the zone or on its
 * boundary (instants alone, such as touching a corner, are no visit); a
 * trajectory inside at its first point enters then, and one inside at its
 * last leaves then.  Ordered by (traj, zone, enter).
 */
GeoaccStatus geoacc_zone_visits(GeoaccDevice device, const GeoaccTrajectories *t, const GeoaccZones *zones,
								GeoaccVisits *out);

/* Device memory of geoacc_zone_visits() on the GPU. */
GeoaccDeviceNeed geoacc_zone_visits_need(const GeoaccTrajectories *t, const GeoaccZones *zones);

/* Free events returned by geoacc_encounters, geoacc_stops or geoacc_zone_visits (storage NULL is fine). */
void		geoacc_events_free(void *storage);

#ifdef __cplusplus
}
#endif

#endif							/* GEOACC_CORE_H */
