/*
 * twed_short_pairs.cu
 *
 * TWED of many short pairs on the GPU: one warp per pair, running the warp
 * sweep (twed_sweep.cuh) over the pair's bands one after another, the edge
 * between them in a per-warp scratch row; pairs handed out to persistent
 * warps by an atomic ticket, series packed with offsets, one group of series
 * against another at a time (twed.cu makes the groups).  In float32 each
 * warp moves the rows of its pair into the frame of the columns as it loads
 * them.
 */
#include "twed_sweep.cuh"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace geoacc
{

namespace
{

using namespace twed_cuda;

/* Cells behind one ticket of the batch kernel (fewer atomics for tiny pairs). */
constexpr uint64_t TICKET_CELLS = uint64_t(1) << 16;

/* ---------------------------------------------------------------- kernel */

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
			else if (lane == 0)
				args.out[q] = NAN;	/* a long pair, computed elsewhere: every value downloaded is written */
			if (++y == row_end)
			{
				x++;
				y = symmetric ? x + 1 : 0;
			}
		}
	}
}

/* ------------------------------------------------------------- host side */

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
batch_block(const TwedJob<T> &job, const TwedPairRouting<T> &routing, const std::vector<uint32_t> &ga,
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

}								/* namespace */

template <class T>
void
twed_short_pairs_gpu(const TwedJob<T> &job, const TwedPairRouting<T> &routing, const std::vector<uint32_t> &ga,
					 const std::vector<uint32_t> &gb, bool diagonal, uint64_t avail, double *distances)
{
	with_kernel_shape(job.a->dims, job.metric, [&](auto k, auto d) {
		batch_block<T, decltype(k)::value, decltype(d)::value>(job, routing, ga, gb, diagonal, avail, distances);
	});
}

template void twed_short_pairs_gpu(const TwedJob<double> &, const TwedPairRouting<double> &,
								   const std::vector<uint32_t> &, const std::vector<uint32_t> &, bool, uint64_t,
								   double *);
template void twed_short_pairs_gpu(const TwedJob<float> &, const TwedPairRouting<float> &,
								   const std::vector<uint32_t> &, const std::vector<uint32_t> &, bool, uint64_t,
								   double *);

}								/* namespace geoacc */
