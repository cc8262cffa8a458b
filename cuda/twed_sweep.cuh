/*
 * twed_sweep.cuh
 *
 * The sweep both TWED kernels run (twed_long_pairs.cu, twed_short_pairs.cu),
 * after the linear-memory anti-diagonal wavefront of Wright's improved TWED
 * (cuTWED), without its kernel launch per diagonal.
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
 * Kernels are compiled once per number of values per point (K, 0 for any
 * beyond 3) and kind of point distance (TwedDistanceKind), so that the cells
 * run without a branch on the metric: with_kernel_shape() picks them.
 *
 * float32: the rows of a pair move into the frame of its columns as the warp
 * loads them (twed.h, "float32 frames"), unless the host moved them already.
 */
#ifndef GEOACC_TWED_SWEEP_CUH
#define GEOACC_TWED_SWEEP_CUH

#include "cuda_util.cuh"
#include "twed.h"

#include <algorithm>
#include <type_traits>

namespace geoacc
{

/* What the TWED CUDA files share, apart from the rest of the core. */
namespace twed_cuda
{

constexpr int WARP = 32;
constexpr int CHUNK = 16;			/* columns per edge load and per progress flag */
constexpr int THREADS = 128;		/* 4 warps per block */
constexpr int WARPS_PER_BLOCK = THREADS / WARP;
constexpr unsigned FULL_MASK = 0xffffffffu;

/* Arithmetic per launch: a few milliseconds of work, at most ~100 ms. */
constexpr uint64_t LAUNCH_OPS = uint64_t(1) << 36;

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

/* ------------------------------------------------------------- host side */

/* Blocks of THREADS threads of `kernel` the device holds at once. */
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

/* The device series over three buffers. */
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
 * f(K, D) with K = std::integral_constant<int, ...> the number of values per
 * point (0: any beyond 3) and D = std::integral_constant<TwedDistanceKind,
 * ...> the kind of point distance of the job: the kernels compiled for them.
 */
template <int K, class F>
auto
with_distance_kind(int dims, TwedMetric metric, F &&f)
{
	using Int = std::integral_constant<int, K>;

	switch (twed_distance_kind(dims, metric))
	{
		case TWED_DISTANCE_ABS:
			return f(Int(), std::integral_constant<TwedDistanceKind, TWED_DISTANCE_ABS>());
		case TWED_DISTANCE_EUCLIDEAN:
			return f(Int(), std::integral_constant<TwedDistanceKind, TWED_DISTANCE_EUCLIDEAN>());
		case TWED_DISTANCE_ANY:
			break;
	}
	return f(Int(), std::integral_constant<TwedDistanceKind, TWED_DISTANCE_ANY>());
}

template <class F>
auto
with_kernel_shape(int dims, TwedMetric metric, F &&f)
{
	switch (dims)
	{
		case 1:
			return with_distance_kind<1>(dims, metric, f);
		case 2:
			return with_distance_kind<2>(dims, metric, f);
		case 3:
			return with_distance_kind<3>(dims, metric, f);
		default:
			return with_distance_kind<0>(dims, metric, f);
	}
}

}								/* namespace twed_cuda */

}								/* namespace geoacc */

#endif							/* GEOACC_TWED_SWEEP_CUH */
