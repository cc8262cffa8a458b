/*
 * twed.cu
 *
 * Time Warp Edit Distance on the GPU, after the linear-memory anti-diagonal
 * wavefront of Wright's improved TWED (cuTWED), without its kernel launch
 * per diagonal.
 *
 * A warp sweeps a band of 32 * R rows of the matrix from left to right: lane
 * l holds R consecutive rows in registers and works one column behind lane
 * l - 1, so that the cell above its first row arrives from lane l - 1 by a
 * shuffle; the cells to the left and the diagonal stay in registers.  The
 * band's first lane takes the row above the band from a linear edge buffer,
 * 16 columns at a time; its last lane writes the band's bottom row back into
 * the same buffer for the band below.  No cell makes a round trip through
 * global memory.
 *
 * One long pair: bands sweep in a pipeline inside persistent blocks.  Each
 * band publishes its progress every 16 columns and the band below waits for
 * it (acquire/release flags, no grid-wide barrier).  A band finishes a tile
 * (band x 16 columns) 47 steps after starting it (16 columns plus the skew
 * of 31 lanes), so in the pipeline each band runs three tiles behind the band
 * above: tile (b, c) is scheduled at step c + 3b.  A launch covers a range of
 * such steps, sized so that it takes a few milliseconds, and the host polls
 * for interrupts between launches; every band can start its launch at once,
 * without refilling the pipeline (with one tile of lag, band i of a launch
 * would wait about 31 * i steps).  The right edge of every band, its corner
 * and the flags carry over to the next launch.  A pair larger than the
 * device-memory cap is cut into super-blocks whose edges go through host
 * memory.
 *
 * Kernels are compiled once per kind of point distance (TwedDistanceKind),
 * so that the cells run without a branch on the metric.
 *
 * Many short pairs: one warp per pair (bands one after another, the edge in a
 * per-warp scratch row), pairs handed out to persistent warps by an atomic
 * ticket, series packed with offsets.  Sets larger than the cap are cut into
 * groups of series processed block by block.
 *
 * float32: the rows of a short pair move into the frame of its columns as
 * the warp loads them (twed.h, "float32 frames"); the host moves the rows of
 * a long pair before uploading them.
 */
#include "cuda_util.cuh"
#include "twed.h"

#include <cuda/atomic>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace geoacc
{

namespace
{

constexpr int WARP = 32;
constexpr int CHUNK = 16;			/* columns per edge load and per progress flag */

/*
 * A band finishes a tile (band x CHUNK columns) CHUNK + 31 steps after
 * starting it (its last lane is 31 columns behind its first), so in the
 * pipeline each band runs LAG tiles behind the band above.
 */
constexpr int LAG = (CHUNK + WARP - 1 + CHUNK - 1) / CHUNK;
constexpr int THREADS = 128;		/* 4 warps per block */
constexpr int WARPS_PER_BLOCK = THREADS / WARP;
constexpr unsigned FULL_MASK = 0xffffffffu;

/* Arithmetic per launch: a few milliseconds of work, at most ~100 ms. */
constexpr uint64_t LAUNCH_OPS = uint64_t(1) << 36;

/* A pair computed by one warp does at most this much arithmetic (~50 ms). */
constexpr uint64_t BATCH_MAX_OPS = uint64_t(1) << 29;

/* With this few pairs the GPU would idle: pairs of 2^16 cells or more run as long pairs. */
constexpr uint64_t FEW_PAIRS = 16;
constexpr uint64_t FEW_PAIRS_LONG_CELLS = uint64_t(1) << 16;

/* Cells behind one ticket of the batch kernel (fewer atomics for tiny pairs). */
constexpr uint64_t TICKET_CELLS = uint64_t(1) << 16;

/*
 * Rows per lane of the long kernel: registers hold R rows of K values.
 * Bands of 32 * R rows trade pipeline length (every band runs LAG tiles
 * behind the one above) against the warps a pair keeps busy; for K = 1,
 * R = 4 beat R = 8 on an H200 at every size from 2^12 to 2^20 (up to 28%
 * at 2^16, equal at 2^20).
 */
template <int K>
constexpr int
long_rows()
{
	return K == 0 ? 1 : 4;
}

/* ------------------------------------------------------------ device side */

template <class T>
struct Series
{
	const T    *values;			/* point by point, k values each */
	const T    *times;
	const T    *del;
};

__device__ inline TwedEdge<double>
load_edge_cg(const TwedEdge<double> *p)
{
	double2		v = __ldcg(reinterpret_cast<const double2 *>(p));

	return {v.x, v.y};
}

__device__ inline TwedEdge<float>
load_edge_cg(const TwedEdge<float> *p)
{
	float2		v = __ldcg(reinterpret_cast<const float2 *>(p));

	return {v.x, v.y};
}

__device__ inline void
store_edge_cg(TwedEdge<double> *p, TwedEdge<double> e)
{
	__stcg(reinterpret_cast<double2 *>(p), make_double2(e.d, e.c));
}

__device__ inline void
store_edge_cg(TwedEdge<float> *p, TwedEdge<float> e)
{
	__stcg(reinterpret_cast<float2 *>(p), make_float2(e.d, e.c));
}

template <class T>
__device__ inline TwedEdge<T>
infinite_edge()
{
	return {(T) INFINITY, T(0)};
}

/*
 * float32: the rows of a pair move into the frame of its columns as they
 * are loaded (twed_moved), from the first point `from` of their series to
 * the first point `to` of the columns' (null: no move); for K == 0 the
 * moved rows go to `buffer`, R * k values of the lane's own.
 */
template <class T>
struct RowMove
{
	const double *from;
	const double *to;
	T		   *buffer;
};

/* The R rows of one lane: values, times, deletion costs, and the column to their left. */
template <class T, int K, int R>
struct LaneRows
{
	T			values[R][K > 0 ? K : 1];	/* K > 0: the values in registers */
	const T    *pointers[R];	/* K == 0: the values in memory */
	T			times[R];
	T			del[R];
	T			left[R];		/* D(i, j-1) */
	T			left_c[R];		/* c(i, j-1) */
	unsigned	valid;			/* bit r: row r lies in the matrix */

	__device__ const T *row(int r) const
	{
		if constexpr (K > 0)
			return values[r];
		else
			return pointers[r];
	}

	/*
	 * Rows first .. first + R - 1 of `rows` rows.  Rows past the end are
	 * padding: they copy the row above (see Sweep::run), so a lane's last
	 * row is always the last real row above it.
	 */
	__device__ void load(const Series<T> &s, long long first, long long rows, int k, const RowMove<T> &move)
	{
		const int	dims = K > 0 ? K : k;

		valid = 0;
#pragma unroll
		for (int r = 0; r < R; r++)
		{
			const long long i = min(first + r, rows - 1);

			if (first + r < rows)
				valid |= 1u << r;
			times[r] = move.from ? twed_moved(s.times[i], move.from[dims], move.to[dims]) : s.times[i];
			del[r] = s.del[i];
			if constexpr (K > 0)
			{
#pragma unroll
				for (int d = 0; d < K; d++)
					values[r][d] = move.from ? twed_moved(s.values[i * K + d], move.from[d], move.to[d])
						: s.values[i * K + d];
			}
			else if (move.from)
			{
				T		   *row = move.buffer + r * k;

				for (int d = 0; d < k; d++)
					row[d] = twed_moved(s.values[i * k + d], move.from[d], move.to[d]);
				pointers[r] = row;
			}
			else
				pointers[r] = s.values + i * k;
		}
	}
};

/*
 * One warp sweeping its band over columns [us, ue): lane l computes column
 * us + s - l at step s.  top.fetch(u0, ue) returns to lane l the edge above
 * the band at column u0 + l (waiting for it where needed); bottom.store(u,
 * e, ue) receives the band's bottom row from the last lane.
 */
template <class T, int K, int R, TwedDistanceKind D>
struct Sweep
{
	LaneRows<T, K, R> rows;
	TwedEdge<T> prev;			/* D, c above this lane's first row, one column back */
	TwedEdge<T> out;			/* this lane's last row at its latest column */

	template <class Top, class Bottom>
	__device__ void run(const Series<T> &cols, int k, TwedMetric metric, T nu, int us, int ue,
						TwedEdge<T> corner, Top &top, Bottom &bottom)
	{
		const int	lane = threadIdx.x % WARP;
		const int	width = ue - us;
		TwedEdge<T> chunk = infinite_edge<T>();

		/* the lane's next column, loaded one step ahead so that the loads overlap the cells */
		T			next_values[K > 0 ? K : 1] = {};
		T			next_time = 0,
					next_del = 0;
		auto		prefetch = [&](int u)
		{
			if (u < us || u >= ue)
				return;
			if constexpr (K > 0)
			{
#pragma unroll
				for (int d = 0; d < K; d++)
					next_values[d] = cols.values[(size_t) u * K + d];
			}
			next_time = cols.times[u];
			next_del = cols.del[u];
		};

		out = {rows.left[R - 1], rows.left_c[R - 1]};
		prev.d = __shfl_up_sync(FULL_MASK, out.d, 1);
		prev.c = __shfl_up_sync(FULL_MASK, out.c, 1);
		if (lane == 0)
			prev = corner;
		prefetch(us - lane);

		for (int s = 0; s < width + WARP - 1; s++)
		{
			if (s % CHUNK == 0 && s < width)
				chunk = top.fetch(us + s, ue);

			/* the cell above: lane l - 1's last row, or the edge for lane 0 */
			TwedEdge<T> up;

			up.d = __shfl_up_sync(FULL_MASK, out.d, 1);
			up.c = __shfl_up_sync(FULL_MASK, out.c, 1);
			const T		edge_d = __shfl_sync(FULL_MASK, chunk.d, s % CHUNK);
			const T		edge_c = __shfl_sync(FULL_MASK, chunk.c, s % CHUNK);

			if (lane == 0)
				up = {edge_d, edge_c};

			const int	u = us + s - lane;
			T			column[K > 0 ? K : 1];

#pragma unroll
			for (int d = 0; d < (K > 0 ? K : 1); d++)
				column[d] = next_values[d];

			const T		col_time = next_time;
			const T		col_del = next_del;

			prefetch(u + 1);
			if (u < us || u >= ue)
				continue;

			const T    *col = K > 0 ? column : cols.values + (size_t) u * k;
			T			diag = prev.d;
			T			diag_c = prev.c;
			T			above = up.d;
			T			above_c = up.c;

#pragma unroll
			for (int r = 0; r < R; r++)
			{
				T			c = twed_match_cost<T, K, D>(rows.row(r), rows.times[r], col, col_time, k, metric, nu);
				T			d = twed_cell(diag, diag_c, above, rows.left[r], c, rows.del[r], col_del);

				if (!(rows.valid >> r & 1u))
				{
					d = above;
					c = above_c;
				}
				diag = rows.left[r];
				diag_c = rows.left_c[r];
				rows.left[r] = d;
				rows.left_c[r] = c;
				above = d;
				above_c = c;
			}
			prev = up;
			out = {rows.left[R - 1], rows.left_c[R - 1]};
			if (lane == WARP - 1)
				bottom.store(u, out, ue);
		}
	}
};

/* ---------------------------------------------------- long pairs: kernel */

/* The edge above a band of a long pair: written by the band above, flagged. */
template <class T>
struct LongTop
{
	const TwedEdge<T> *edge;
	unsigned   *progress_above;	/* null for the first band */
	int			cols;

	__device__ TwedEdge<T> fetch(int u0, int ue)
	{
		const int	lane = threadIdx.x % WARP;

		if (progress_above)
		{
			if (lane == 0)
			{
				cuda::atomic_ref<unsigned, cuda::thread_scope_device> flag(*progress_above);
				const unsigned need = (unsigned) min(u0 + CHUNK, cols);

				while (flag.load(cuda::memory_order_acquire) < need)
					__nanosleep(64);
			}
			__syncwarp();
		}

		const int	u = u0 + lane;

		return lane < CHUNK && u < ue ? load_edge_cg(edge + u) : infinite_edge<T>();
	}
};

/* The bottom row of a band: into the edge, flagged every CHUNK columns. */
template <class T>
struct LongBottom
{
	TwedEdge<T> *edge;
	unsigned   *progress;

	__device__ void store(int u, TwedEdge<T> e, int ue)
	{
		store_edge_cg(edge + u, e);
		if ((u + 1) % CHUNK == 0 || u + 1 == ue)
			cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*progress)
				.store((unsigned) (u + 1), cuda::memory_order_release);
	}
};

template <class T>
struct LongArgs
{
	Series<T>	row_series;
	Series<T>	col_series;
	int			rows;
	int			cols;
	int			k;
	TwedMetric	metric;
	T			nu;
	TwedEdge<T> *top;			/* per column: the edge above, overwritten band by band */
	TwedEdge<T> *left;			/* per row: the column before the band's next part */
	TwedEdge<T> *band_corner;	/* per band: above its first row, one column before its next part */
	unsigned   *progress;		/* per band: columns of its bottom row written */
	unsigned   *ticket;
	int			t0;				/* schedule steps [t0, t1) of this launch: tile (b, c) at c + LAG * b */
	int			t1;
	int			band_lo;		/* bands with tiles in them */
	int			band_hi;
	int			chunks;
};

/*
 * Persistent warps take bands in order; band b sweeps its tiles of the
 * launch's steps, waiting for band b - 1 LAG tiles ahead.  Bands are
 * handed out in order and a warp holding one never waits for a later one,
 * so the pipeline cannot deadlock whatever the number of resident warps.
 */
template <class T, int K, int R, TwedDistanceKind D>
__global__ void __launch_bounds__(THREADS)
twed_long_kernel(LongArgs<T> args)
{
	const int	lane = threadIdx.x % WARP;

	for (;;)
	{
		unsigned	ticket = 0;

		if (lane == 0)
			ticket = atomicAdd(args.ticket, 1u);

		const int	band = args.band_lo + (int) __shfl_sync(FULL_MASK, ticket, 0);

		if (band >= args.band_hi)
			return;

		const int	us = max(0, args.t0 - LAG * band) * CHUNK;
		const int	ue = min(args.cols, min(args.chunks, args.t1 - LAG * band) * CHUNK);
		const long long first = (long long) band * WARP * R + lane * R;
		Sweep<T, K, R, D> sweep;

		/* the host moved the rows of a float32 long pair already */
		sweep.rows.load(args.row_series, first, args.rows, args.k, RowMove<T>{nullptr, nullptr, nullptr});
#pragma unroll
		for (int r = 0; r < R; r++)
		{
			TwedEdge<T> e = sweep.rows.valid >> r & 1u ? args.left[first + r] : infinite_edge<T>();

			sweep.rows.left[r] = e.d;
			sweep.rows.left_c[r] = e.c;
		}

		LongTop<T>	top{args.top, band > 0 ? args.progress + band - 1 : nullptr, args.cols};
		LongBottom<T> bottom{args.top, args.progress + band};

		sweep.run(args.col_series, args.k, args.metric, args.nu, us, ue, args.band_corner[band], top, bottom);

#pragma unroll
		for (int r = 0; r < R; r++)
			if (sweep.rows.valid >> r & 1u)
				args.left[first + r] = {sweep.rows.left[r], sweep.rows.left_c[r]};
		if (lane == 0)
			args.band_corner[band] = sweep.prev;
	}
}

/* ------------------------------------------------- short pairs: kernel */

/* The edge above a band of a short pair: row 0 for the first band, else scratch. */
template <class T>
struct BatchTop
{
	const TwedEdge<T> *edge;	/* null: row 0 of the matrix */

	__device__ TwedEdge<T> fetch(int u0, int ue)
	{
		const int	lane = threadIdx.x % WARP;
		const int	u = u0 + lane;

		return edge && lane < CHUNK && u < ue ? edge[u] : infinite_edge<T>();
	}
};

template <class T>
struct BatchBottom
{
	TwedEdge<T> *edge;			/* null: the last band, nobody reads it */

	__device__ void store(int u, TwedEdge<T> e, int)
	{
		if (edge)
			edge[u] = e;
	}
};

/* TWED of one pair by one warp (valid in the last lane). */
template <class T, int K, TwedDistanceKind D>
__device__ T
pair_by_warp(const Series<T> &row_series, int rows, const Series<T> &col_series, int cols, int k,
			 TwedMetric metric, T nu, const RowMove<T> &move, TwedEdge<T> *scratch)
{
	const int	lane = threadIdx.x % WARP;
	const int	bands = (rows + WARP - 1) / WARP;
	Sweep<T, K, 1, D> sweep;

	for (int band = 0; band < bands; band++)
	{
		sweep.rows.load(row_series, (long long) band * WARP + lane, rows, k, move);
		sweep.rows.left[0] = (T) INFINITY;	/* D(i, 0) */
		sweep.rows.left_c[0] = 0;

		const TwedEdge<T> corner{band == 0 ? T(0) : (T) INFINITY, T(0)};
		BatchTop<T>	top{band == 0 ? nullptr : scratch};
		BatchBottom<T> bottom{band + 1 < bands ? scratch : nullptr};

		sweep.run(col_series, k, metric, nu, 0, cols, corner, top, bottom);
		__syncwarp();
	}
	return sweep.out.d;
}

template <class T>
struct BatchArgs
{
	Series<T>	a;
	Series<T>	b;
	const long long *a_offsets;
	const long long *b_offsets;
	const double *a_origins;	/* float32 frames: k + 1 per series; float64: null */
	const double *b_origins;
	uint32_t	a_count;
	uint32_t	b_count;
	int			symmetric;		/* the pairs x < y of a (then b is a) */
	int			k;
	TwedMetric	metric;
	T			nu;
	uint64_t	q0;				/* pairs q0 .. q0 + count - 1, row by row */
	uint64_t	count;
	uint32_t	group;			/* consecutive pairs per ticket */
	uint64_t	max_cells;		/* larger pairs are left to the long kernel */
	TwedEdge<T> *scratch;
	size_t		scratch_stride;
	T		   *row_buffer;		/* float32 and K == 0: k values per lane for the moved rows; else null */
	unsigned long long *ticket;
	double	   *out;			/* out[q - q0] */
};

/* Row-major position of pair q: (q / nb, q % nb), or the q-th pair x < y of n. */
__device__ void
pair_position(uint64_t q, bool symmetric, uint32_t n, uint32_t nb, uint32_t &x, uint32_t &y)
{
	if (!symmetric)
	{
		x = (uint32_t) (q / nb);
		y = (uint32_t) (q % nb);
		return;
	}

	const double m = 2.0 * n - 1.0;
	double		guess = floor((m - sqrt(fmax(m * m - 8.0 * (double) q, 0.0))) / 2.0);
	uint64_t	r = (uint64_t) fmin(fmax(guess, 0.0), (double) (n - 2));

	while (r > 0 && twed_triangle_index(r, r + 1, n) > q)
		r--;
	while (r + 2 < n && twed_triangle_index(r + 1, r + 2, n) <= q)
		r++;
	x = (uint32_t) r;
	y = (uint32_t) (q - twed_triangle_index(r, r + 1, n) + r + 1);
}

template <class T, int K, TwedDistanceKind D>
__global__ void __launch_bounds__(THREADS)
twed_batch_kernel(BatchArgs<T> args)
{
	const int	lane = threadIdx.x % WARP;
	const size_t warp = (size_t) blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / WARP;
	TwedEdge<T> *scratch = args.scratch + warp * args.scratch_stride;
	T		   *row_buffer = args.row_buffer ? args.row_buffer + (warp * WARP + lane) * args.k : nullptr;
	const bool	symmetric = args.symmetric != 0;
	const uint32_t row_end = symmetric ? args.a_count : args.b_count;

	for (;;)
	{
		unsigned long long ticket = 0;

		if (lane == 0)
			ticket = atomicAdd(args.ticket, 1ull);
		ticket = __shfl_sync(FULL_MASK, ticket, 0);

		const uint64_t first = ticket * args.group;

		if (first >= args.count)
			return;

		const uint64_t last = min(first + args.group, args.count);
		uint32_t	x,
					y;

		pair_position(args.q0 + first, symmetric, args.a_count, args.b_count, x, y);
		for (uint64_t q = first; q < last; q++)
		{
			const long long ax = args.a_offsets[x];
			const long long by = args.b_offsets[y];
			const int	n = (int) (args.a_offsets[x + 1] - ax);
			const int	m = (int) (args.b_offsets[y + 1] - by);

			if ((uint64_t) n * (uint64_t) m <= args.max_cells)
			{
				const Series<T> sa{args.a.values + ax * args.k, args.a.times + ax, args.a.del + ax};
				const Series<T> sb{args.b.values + by * args.k, args.b.times + by, args.b.del + by};
				const double *ox = args.a_origins ? args.a_origins + (size_t) x * (args.k + 1) : nullptr;
				const double *oy = args.b_origins ? args.b_origins + (size_t) y * (args.k + 1) : nullptr;
				/* the longer series as rows keeps the scratch row short */
				const bool	swap = !twed_x_is_rows(n, ox, m, oy, args.k);
				const RowMove<T> move{swap ? oy : ox, swap ? ox : oy, row_buffer};
				const T		d = pair_by_warp<T, K, D>(swap ? sb : sa, swap ? m : n, swap ? sa : sb, swap ? n : m,
												   args.k, args.metric, args.nu, move, scratch);

				if (lane == WARP - 1)
					args.out[q] = (double) d;
			}
			if (++y == row_end)
			{
				x++;
				y = symmetric ? x + 1 : 0;
			}
		}
	}
}

/* ------------------------------------------------------------- host side */

template <class Kernel>
int
resident_blocks(Kernel kernel)
{
	int			device = 0,
				sms = 0,
				per_sm = 0;

	GEOACC_CUDA_TRY(cudaGetDevice(&device));
	GEOACC_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
	GEOACC_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, 0));
	return std::max(1, per_sm) * sms;
}

template <class T>
Series<T>
series_of(const DeviceBuffer<T> &values, const DeviceBuffer<T> &times, const DeviceBuffer<T> &del)
{
	return {values.data(), times.data(), del.data()};
}

/* Device copies of consecutive points of a prepared set. */
template <class T>
struct DeviceSeries
{
	DeviceBuffer<T> values;
	DeviceBuffer<T> times;
	DeviceBuffer<T> del;

	DeviceSeries(size_t points, int k) : values(points * k), times(points), del(points) {}

	void upload(const TwedSeriesSet<T> &set, uint64_t first, uint64_t points)
	{
		const int	k = set.dims;

		values.upload(&set.values[first * k], points * k);
		times.upload(&set.times[first], points);
		del.upload(&set.del[first], points);
	}

	Series<T>	view() const { return series_of(values, times, del); }
};

/*
 * TWED of one long pair (rows: series ri of rs, the longer one; columns:
 * series ci of cs), within `budget` bytes of device memory.
 */
template <class T, int K, TwedDistanceKind D>
double
long_pair(const TwedJob<T> &job, const TwedSeriesSet<T> &rs, uint32_t ri, const TwedSeriesSet<T> &cs,
		  uint32_t ci, uint64_t budget)
{
	constexpr int R = long_rows<K>();
	constexpr int BAND = WARP * R;
	const int	k = rs.dims;
	const long long n = (long long) rs.length(ri);
	const long long m = (long long) cs.length(ci);
	const uint64_t cell_ops = twed_cell_ops(k, job.metric);
	const uint64_t launch_ops = twed_poll_ops(LAUNCH_OPS);
	/* per row or column: values, time, deletion cost, edge; bands add a corner and a flag */
	const uint64_t per_point = (uint64_t) (k + 4) * sizeof(T) + 8;
	long long	block_rows = n,
				block_cols = m;

	if ((uint64_t) (n + m) * per_point > budget)
	{
		const long long fit = (long long) (budget / per_point);

		block_cols = std::min(m, fit / 2);
		block_rows = std::min(n, fit - block_cols);
		if (block_rows < n && block_rows >= BAND)
			block_rows -= block_rows % BAND;
		if (block_cols < m && block_cols >= CHUNK)
			block_cols -= block_cols % CHUNK;
		if (block_rows < 1 || block_cols < 1)
			fail(GEOACC_ERR_DEVICE_MEMORY, "%llu bytes of device memory are too few for a TWED pair",
				 (unsigned long long) budget);
	}

	const int	max_bands = (int) ((block_rows + BAND - 1) / BAND);
	DeviceSeries<T> d_rows(block_rows, k),
				d_cols(block_cols, k);
	DeviceBuffer<TwedEdge<T>> d_top(block_cols),
				d_left(block_rows),
				d_band_corner(max_bands);
	DeviceBuffer<unsigned> d_progress(max_bands),
				d_ticket(1);
	auto		kernel = twed_long_kernel<T, K, R, D>;
	const int	max_blocks = resident_blocks(kernel);

	/* edges of the current super-block: D, c of the row above and the column to the left */
	std::vector<TwedEdge<T>> top(m, TwedEdge<T>{(T) INFINITY, T(0)});
	std::vector<TwedEdge<T>> left(n, TwedEdge<T>{(T) INFINITY, T(0)});
	std::vector<TwedEdge<T>> band_corner(max_bands);

	for (long long r0 = 0; r0 < n; r0 += block_rows)
	{
		const int	rows = (int) std::min(block_rows, n - r0);
		const int	bands = (rows + BAND - 1) / BAND;
		/* D(r0, c0) with c0 = 0: D(0, 0) = 0 for the first rows, else D(i, 0) = infinity */
		TwedEdge<T> corner{r0 == 0 ? T(0) : (T) INFINITY, T(0)};

		d_rows.upload(rs, rs.offsets[ri] + r0, rows);
		for (long long c0 = 0; c0 < m; c0 += block_cols)
		{
			const int	cols = (int) std::min(block_cols, m - c0);
			const int	chunks = (cols + CHUNK - 1) / CHUNK;
			const int	steps = LAG * (bands - 1) + chunks;
			/* the bands with a tile at step t: first_band(t) <= b <= t / LAG */
			auto		first_band = [&](int t) { return (std::max(0, t - chunks + 1) + LAG - 1) / LAG; };

			d_cols.upload(cs, cs.offsets[ci] + c0, cols);
			d_top.upload(&top[c0], cols);
			d_left.upload(&left[r0], rows);
			band_corner[0] = corner;
			for (int b = 1; b < bands; b++)
				band_corner[b] = left[r0 + (long long) b * BAND - 1];
			d_band_corner.upload(band_corner.data(), bands);
			GEOACC_CUDA_TRY(cudaMemsetAsync(d_progress.data(), 0, bands * sizeof(unsigned), stream()));

			for (int t0 = 0; t0 < steps;)
			{
				uint64_t	ops = 0;
				int			t1 = t0;

				/* whole steps up to the launch budget, at least one */
				do
				{
					const int	tiles = std::min(t1 / LAG, bands - 1) - first_band(t1) + 1;

					ops += (uint64_t) std::max(tiles, 0) * BAND * CHUNK * cell_ops;
					t1++;
				} while (t1 < steps && ops < launch_ops);

				LongArgs<T> args;

				args.row_series = d_rows.view();
				args.col_series = d_cols.view();
				args.rows = rows;
				args.cols = cols;
				args.k = k;
				args.metric = job.metric;
				args.nu = job.nu;
				args.top = d_top.data();
				args.left = d_left.data();
				args.band_corner = d_band_corner.data();
				args.progress = d_progress.data();
				args.ticket = d_ticket.data();
				args.t0 = t0;
				args.t1 = t1;
				args.band_lo = first_band(t0);
				args.band_hi = std::min(bands, (t1 - 1) / LAG + 1);
				args.chunks = chunks;

				const int	warps = args.band_hi - args.band_lo;
				const int	blocks = std::min(max_blocks, (warps + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK);

				GEOACC_CUDA_TRY(cudaMemsetAsync(d_ticket.data(), 0, sizeof(unsigned), stream()));
				kernel<<<blocks, THREADS, 0, stream()>>>(args);
				GEOACC_CUDA_CHECK_LAUNCH();
				sync_and_check_interrupt();
				t0 = t1;
			}

			const TwedEdge<T> next_corner = top[c0 + cols - 1];	/* D(r0, c0 + cols) */

			d_top.download(&top[c0], cols);
			d_left.download(&left[r0], rows);
			corner = next_corner;
		}
	}
	return (double) left[n - 1].d;
}

/* Which pairs run as long pairs rather than one warp each. */
template <class T>
struct PairRouting
{
	std::vector<bool> a_fits;	/* the series fits in a group of the batch */
	std::vector<bool> b_fits;
	uint64_t	max_cells;		/* of a pair computed by one warp */

	bool		batch(const TwedJob<T> &job, uint32_t x, uint32_t y) const
	{
		return a_fits[x] && b_fits[y] && job.a->length(x) * job.b->length(y) <= max_cells;
	}
};

template <class T>
uint64_t
series_bytes(const TwedSeriesSet<T> &set, uint32_t s)
{
	return set.length(s) * ((uint64_t) set.dims + 2) * sizeof(T) + sizeof(long long)
		+ (set.origin(s) ? ((uint64_t) set.dims + 1) * sizeof(double) : 0);
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

/* A group of series packed on the device, with offsets from 0. */
template <class T>
struct DeviceGroup
{
	std::vector<long long> offsets;
	DeviceBuffer<long long> d_offsets;
	DeviceBuffer<double> d_origins;	/* float32 frames; float64: empty */
	std::unique_ptr<DeviceSeries<T>> series;
	uint64_t	max_length = 0;

	DeviceGroup(const TwedSeriesSet<T> &set, const std::vector<uint32_t> &members)
	{
		const int	k = set.dims;
		std::vector<T> values,
					times,
					del;
		std::vector<double> origins;

		offsets.push_back(0);
		for (uint32_t s : members)
		{
			const uint64_t p0 = set.offsets[s];
			const uint64_t p1 = set.offsets[s + 1];

			values.insert(values.end(), set.values.begin() + p0 * k, set.values.begin() + p1 * k);
			times.insert(times.end(), set.times.begin() + p0, set.times.begin() + p1);
			del.insert(del.end(), set.del.begin() + p0, set.del.begin() + p1);
			if (set.origin(s))
				origins.insert(origins.end(), set.origin(s), set.origin(s) + k + 1);
			offsets.push_back(offsets.back() + (long long) (p1 - p0));
			max_length = std::max(max_length, p1 - p0);
		}
		d_offsets.resize(offsets.size());
		d_offsets.upload(offsets.data(), offsets.size());
		d_origins.resize(origins.size());
		d_origins.upload(origins.data(), origins.size());
		series = std::make_unique<DeviceSeries<T>>(times.size(), k);
		series->values.upload(values.data(), values.size());
		series->times.upload(times.data(), times.size());
		series->del.upload(del.data(), del.size());
	}

	uint64_t	length(uint32_t x) const { return (uint64_t) (offsets[x + 1] - offsets[x]); }
};

/*
 * All batch pairs between group ga (global indices) and group gb: the pairs
 * x < y within ga when `diagonal` (a symmetric job's own group), else every
 * (x, y).  Distances go to their places in the job's order.
 */
template <class T, int K, TwedDistanceKind D>
void
batch_block(const TwedJob<T> &job, const PairRouting<T> &routing, const std::vector<uint32_t> &ga,
			const std::vector<uint32_t> &gb, bool diagonal, uint64_t avail, double *distances)
{
	if (diagonal && ga.size() < 2)
		return;

	const int	k = job.a->dims;
	const uint64_t cell_ops = twed_cell_ops(k, job.metric);
	const uint64_t launch_ops = twed_poll_ops(LAUNCH_OPS);
	DeviceGroup<T> da(*job.a, ga);
	std::unique_ptr<DeviceGroup<T>> db_owned;

	if (!diagonal)
		db_owned = std::make_unique<DeviceGroup<T>>(*job.b, gb);

	const DeviceGroup<T> &db = diagonal ? da : *db_owned;
	const uint32_t na = (uint32_t) ga.size();
	const uint32_t nb = (uint32_t) (diagonal ? ga.size() : gb.size());
	const uint32_t row_end = diagonal ? na : nb;

	/* scratch: the shorter series of a pair, at most sqrt(max_cells) points */
	uint64_t	stride = std::min(da.max_length, db.max_length);

	stride = std::min(stride, (uint64_t) std::sqrt((double) routing.max_cells) + 1);

	auto		kernel = twed_batch_kernel<T, K, D>;
	/* moved rows without registers for them: k values per lane */
	const uint64_t lane_row = K == 0 && da.d_origins.size() > 0 ? (uint64_t) k : 0;
	const uint64_t block_scratch = (uint64_t) WARPS_PER_BLOCK * (stride * sizeof(TwedEdge<T>)
																 + WARP * lane_row * sizeof(T));
	const int	max_blocks = (int) std::max<uint64_t>(1, std::min<uint64_t>(resident_blocks(kernel),
																			 avail / 4 / block_scratch));
	const uint64_t max_launch_pairs = std::max<uint64_t>(1, avail / 16 / sizeof(double));
	DeviceBuffer<TwedEdge<T>> d_scratch((size_t) max_blocks * WARPS_PER_BLOCK * stride);
	DeviceBuffer<T> d_row_buffer((size_t) max_blocks * WARPS_PER_BLOCK * WARP * lane_row);
	DeviceBuffer<unsigned long long> d_ticket(1);
	DeviceBuffer<double> d_out;
	std::vector<double> out;

	/* no long pair in this block: no need to look at each pair */
	const bool	all_batch = da.max_length * db.max_length <= routing.max_cells;

	/* prefix sums of the column series' lengths, to size launches row by row */
	std::vector<uint64_t> prefix(nb + 1, 0);

	for (uint32_t y = 0; y < nb; y++)
		prefix[y + 1] = prefix[y] + db.length(y);

	auto		index = [&](uint32_t x, uint32_t y) {
		return diagonal ? twed_triangle_index(x, y, na) : (uint64_t) x * nb + y;
	};
	auto		row_begin = [&](uint32_t x) { return diagonal ? x + 1 : 0u; };
	uint32_t	x = 0,
				y = row_begin(0);

	while (x < na && y < row_end)
	{
		/* pairs from (x, y) on: whole rows within the budget, else part of one row */
		const uint64_t q0 = index(x, y);
		uint64_t	ops = 0,
					pairs = 0;
		uint32_t	ex = x,
					ey = y;

		while (ex < na && ey < row_end)
		{
			const uint64_t row_ops = da.length(ex) * (prefix[row_end] - prefix[ey]) * cell_ops;

			if (ops + row_ops <= launch_ops && pairs + (row_end - ey) <= max_launch_pairs)
			{
				ops += row_ops;
				pairs += row_end - ey;
				ex++;
				ey = row_begin(ex);
				continue;
			}
			if (pairs == 0)
			{
				uint32_t	y1 = ey + 1;

				while (y1 < row_end && y1 - ey < max_launch_pairs
					   && da.length(ex) * (prefix[y1 + 1] - prefix[ey]) * cell_ops <= launch_ops)
					y1++;
				pairs = y1 - ey;
				ey = y1;
			}
			break;
		}

		const uint64_t group = std::max<uint64_t>(1, std::min<uint64_t>(
			1024, TICKET_CELLS * pairs * cell_ops / std::max<uint64_t>(1, ops)));
		const uint64_t tickets = (pairs + group - 1) / group;
		BatchArgs<T> args;

		if (d_out.size() < pairs)
			d_out.resize(pairs);
		args.a = da.series->view();
		args.b = db.series->view();
		args.a_offsets = da.d_offsets.data();
		args.b_offsets = db.d_offsets.data();
		args.a_origins = da.d_origins.size() > 0 ? da.d_origins.data() : nullptr;
		args.b_origins = db.d_origins.size() > 0 ? db.d_origins.data() : nullptr;
		args.a_count = na;
		args.b_count = nb;
		args.symmetric = diagonal;
		args.k = k;
		args.metric = job.metric;
		args.nu = job.nu;
		args.q0 = q0;
		args.count = pairs;
		args.group = (uint32_t) group;
		args.max_cells = routing.max_cells;
		args.scratch = d_scratch.data();
		args.scratch_stride = stride;
		args.row_buffer = lane_row > 0 ? d_row_buffer.data() : nullptr;
		args.ticket = d_ticket.data();
		args.out = d_out.data();

		const int	blocks = (int) std::min<uint64_t>(max_blocks, (tickets + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK);

		GEOACC_CUDA_TRY(cudaMemsetAsync(d_ticket.data(), 0, sizeof(unsigned long long), stream()));
		kernel<<<blocks, THREADS, 0, stream()>>>(args);
		GEOACC_CUDA_CHECK_LAUNCH();
		out.resize(pairs);
		d_out.download(out.data(), pairs);
		check_interrupt();

		/* scatter to the job's order, skipping the long pairs */
		for (uint64_t i = 0; i < pairs; i++)
		{
			const uint32_t gx = ga[x];
			const uint32_t gy = diagonal ? ga[y] : gb[y];

			if (all_batch || routing.batch(job, gx, gy))
				distances[job.symmetric ? twed_triangle_index(gx, gy, job.a->count)
						  : (uint64_t) gx * job.b->count + gy] = out[i];
			if (++y == row_end)
			{
				x++;
				y = row_begin(x);
			}
		}
	}
}

template <class T, int K, TwedDistanceKind D>
void
twed_gpu_k(const TwedJob<T> &job, double *distances)
{
	const uint64_t avail = geoacc_gpu_memory_available();
	const uint64_t group_budget = avail / 4;
	PairRouting<T> routing;

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
				batch_block<T, K, D>(job, routing, a_groups[g], a_groups[h], g == h, avail, distances);
	}
	else
	{
		const auto	b_groups = make_groups(*job.b, routing.b_fits, group_budget);

		for (const auto &ga : a_groups)
			for (const auto &gb : b_groups)
				batch_block<T, K, D>(job, routing, ga, gb, false, avail, distances);
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
				distances[q] = long_pair<T, K, D>(job, moved, 0, cs, ci, avail / 2);
			}
			else
				distances[q] = long_pair<T, K, D>(job, rs, ri, cs, ci, avail / 2);
		}
}

/* One kind of point distance for the whole job: kernels without a branch per cell. */
template <class T, int K>
void
twed_gpu_kind(const TwedJob<T> &job, double *distances)
{
	switch (twed_distance_kind(job.a->dims, job.metric))
	{
		case TWED_DISTANCE_ABS:
			twed_gpu_k<T, K, TWED_DISTANCE_ABS>(job, distances);
			break;
		case TWED_DISTANCE_EUCLIDEAN:
			twed_gpu_k<T, K, TWED_DISTANCE_EUCLIDEAN>(job, distances);
			break;
		case TWED_DISTANCE_ANY:
			twed_gpu_k<T, K, TWED_DISTANCE_ANY>(job, distances);
			break;
	}
}

template <class T>
void
twed_gpu_t(const TwedJob<T> &job, double *distances)
{
	switch (job.a->dims)
	{
		case 1:
			twed_gpu_kind<T, 1>(job, distances);
			break;
		case 2:
			twed_gpu_kind<T, 2>(job, distances);
			break;
		case 3:
			twed_gpu_kind<T, 3>(job, distances);
			break;
		default:
			twed_gpu_kind<T, 0>(job, distances);
			break;
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
