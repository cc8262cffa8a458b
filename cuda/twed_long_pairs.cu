/*
 * twed_long_pairs.cu
 *
 * TWED of one long pair on the GPU: the bands of the warp sweep
 * (twed_sweep.cuh) in a pipeline inside persistent blocks.  Each band
 * publishes its progress every 16 columns and the band below waits for it
 * (acquire/release flags, no grid-wide barrier).  A band finishes a tile
 * (band x 16 columns) 47 steps after starting it (16 columns plus the skew
 * of 31 lanes), so in the pipeline each band runs three tiles behind the band
 * above: tile (b, c) is scheduled at step c + 3b.  A launch covers a range of
 * such steps, sized so that it takes a few milliseconds, and the host polls
 * for interrupts between launches; every band can start its launch at once,
 * without refilling the pipeline (with one tile of lag, band i of a launch
 * would wait about 31 * i steps).  The right edge of every band, its corner
 * and the flags carry over to the next launch.  A pair larger than the
 * device-memory cap is cut into super-blocks whose edges go through host
 * memory.  In float32 the caller moved the rows into the frame of the
 * columns already.
 */
#include "twed_sweep.cuh"

#include <cuda/atomic>

#include <algorithm>
#include <vector>

namespace geoacc
{

namespace
{

using namespace twed_cuda;

/*
 * A band finishes a tile (band x CHUNK columns) CHUNK + 31 steps after
 * starting it (its last lane is 31 columns behind its first), so in the
 * pipeline each band runs LAG tiles behind the band above.
 */
constexpr int LAG = (CHUNK + WARP - 1 + CHUNK - 1) / CHUNK;

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

/* ---------------------------------------------------------------- kernel */

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

/* ------------------------------------------------------------- host side */

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
	const uint64_t per_point = twed_long_pair_point_bytes(k, sizeof(T));
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

}								/* namespace */

template <class T>
double
twed_long_pair_gpu(const TwedJob<T> &job, const TwedSeriesSet<T> &rs, uint32_t ri, const TwedSeriesSet<T> &cs,
				   uint32_t ci, uint64_t budget)
{
	return with_kernel_shape(rs.dims, job.metric, [&](auto k, auto d) {
		return long_pair<T, decltype(k)::value, decltype(d)::value>(job, rs, ri, cs, ci, budget);
	});
}

template double twed_long_pair_gpu(const TwedJob<double> &, const TwedSeriesSet<double> &, uint32_t,
								   const TwedSeriesSet<double> &, uint32_t, uint64_t);
template double twed_long_pair_gpu(const TwedJob<float> &, const TwedSeriesSet<float> &, uint32_t,
								   const TwedSeriesSet<float> &, uint32_t, uint64_t);

}								/* namespace geoacc */
