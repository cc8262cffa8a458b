/*
 * segment_join.cu
 *
 * Segment join on the GPU, after Gowanlock and Casanova's GPUSpatial,
 * GPUTemporal and GPUSpatioTemporal: the index is built on the device with
 * CUB (a stable radix sort of the entries by cell or bin key, then the
 * starts of the runs), and a batch of queries runs in five launches:
 *
 *   1. search: one thread per query runs the index search of
 *      segment_join.h and writes its candidates into its own fixed buffer
 *      of `query_slots` slots, counting all of them;
 *   2. test: one thread per slot runs the exact test (queries whose buffer
 *      overflowed are skipped here);
 *   3. compaction of the slots that passed (CUB select);
 *   4. order: a radix sort of their (query, entry) keys;
 *   5. output: the rows, in that order, copied to the host.
 *
 * Queries whose buffer overflowed are redone, as the paper's redo loop,
 * grouped into batches with buffers of their exact size (known from the
 * first count), a query larger than a whole batch in windows of it.  The
 * pieces of a block of queries (its first pass, the redone groups, every
 * chunk of the entries) are each ordered on the device and merged on the
 * host.  Entries beyond what fits under the device-memory cap are indexed
 * chunk by chunk.  Interrupts are polled after every launch's sync.
 */
#include "cuda_util.cuh"
#include "primitives.cuh"
#include "segment_join.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <chrono>

namespace geoacc
{

namespace
{

constexpr unsigned THREADS = 256;
constexpr uint32_t NO_QUERY = UINT32_MAX;

/* Candidate slots per query of the first pass, and of a batch at most. */
constexpr uint32_t DEFAULT_QUERY_SLOTS = 32;
constexpr uint64_t MAX_BATCH_SLOTS = uint64_t(1) << 26;

/* Queries per block at most (bounds the first pass and the host's share of rows). */
constexpr uint64_t MAX_BLOCK_QUERIES = uint64_t(1) << 20;

/*
 * Device bytes per candidate slot: entry, query, flag, selected slot, two
 * keys and a slot for the sort, the row, and the sort's scratch.
 */
constexpr uint64_t SLOT_BYTES = 4 + 4 + 1 + 4 + 2 * 8 + 4 + sizeof(GeoaccJoinRow) + 24;

/* Per query of a block: the segment, its count, its overflow flag. */
constexpr uint64_t QUERY_BYTES = sizeof(JoinSegment) + 4 + 1;

double
now_ms()
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* ------------------------------------------------------------ index build */

__global__ void
spatial_count_kernel(const JoinSegment *e, uint32_t n, IndexPlan plan, uint32_t *cells)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		cells[i] = (uint32_t) spatial_cells(plan, e[i]);
}

__global__ void
spatial_fill_kernel(const JoinSegment *e, uint32_t n, IndexPlan plan, const uint32_t *offsets, uint64_t *keys,
					uint32_t *values)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;

	const int64_t cx0 = join_bin(join_min(e[i].p0[0], e[i].p1[0]), plan.x0, plan.cell, plan.nx);
	const int64_t cx1 = join_bin(join_max(e[i].p0[0], e[i].p1[0]), plan.x0, plan.cell, plan.nx);
	const int64_t cy0 = join_bin(join_min(e[i].p0[1], e[i].p1[1]), plan.y0, plan.cell, plan.ny);
	const int64_t cy1 = join_bin(join_max(e[i].p0[1], e[i].p1[1]), plan.y0, plan.cell, plan.ny);
	uint32_t	k = offsets[i];

	for (int64_t cy = cy0; cy <= cy1; cy++)
		for (int64_t cx = cx0; cx <= cx1; cx++)
		{
			keys[k] = (uint64_t) (cy * plan.nx + cx);
			values[k] = i;
			k++;
		}
}

/* flags[i] = 1 where a run of equal sorted keys starts */
template <class K>
__global__ void
run_starts_kernel(const K *keys, uint32_t n, uint8_t *flags)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		flags[i] = i == 0 || keys[i] != keys[i - 1];
}

/* The non-empty keys and where each one's entries start, from the starts of the runs of sorted keys. */
__global__ void
cells_kernel(const uint64_t *sorted_keys, const uint32_t *run_start, uint32_t ncells, uint32_t total,
			 uint64_t *cell_keys, uint32_t *cell_start)
{
	const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;

	if (c < ncells)
	{
		cell_keys[c] = sorted_keys[run_start[c]];
		cell_start[c] = run_start[c];
	}
	else if (c == ncells)
		cell_start[c] = total;
}

/* flags[i] = 1 where entry i is in layer l of the plan */
__global__ void
layer_flags_kernel(const JoinSegment *e, uint32_t n, IndexPlan plan, int l, uint8_t *flags)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		flags[i] = join_layer(plan, e[i]) == l;
}

/* The key of each entry of a layer (ids: its entries; nullptr: all of them). */
__global__ void
bin_keys_kernel(const JoinSegment *e, const uint32_t *ids, uint32_t n, BinPlan b, bool sub_cells, uint64_t *keys,
				uint32_t *values)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;

	const uint32_t id = ids ? ids[i] : i;

	keys[i] = join_bin_key(b, sub_cells, e[id]);
	values[i] = id;
}

/* CUB's temporary storage, grown as needed and kept between calls. */
struct Scratch
{
	DeviceBuffer<unsigned char> buffer;

	void	   *get(size_t bytes)
	{
		if (buffer.size() < bytes)
			buffer.resize(bytes);
		return buffer.data();
	}
};

/* Stable sort of (keys, values) pairs by key. */
template <class K>
void
sort_pairs(Scratch &scratch, const K *keys_in, K *keys_out, const uint32_t *values_in, uint32_t *values_out,
		   uint32_t n)
{
	size_t		bytes = 0;

	if (n == 0)
		return;
	GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in, values_out,
													(int) n, 0, (int) sizeof(K) * 8, stream()));
	GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch.get(bytes), bytes, keys_in, keys_out, values_in,
													values_out, (int) n, 0, (int) sizeof(K) * 8, stream()));
}

/* One index on the device over a chunk of entries: the arrays of the host's HostIndex, built alike. */
struct DeviceIndex
{
	IndexPlan	plan;
	/* per layer; the spatial grid in [0] */
	uint64_t	nkeys[JOIN_LAYERS] = {};
	DeviceBuffer<uint64_t> keys[JOIN_LAYERS];
	DeviceBuffer<uint32_t> start[JOIN_LAYERS];
	DeviceBuffer<uint32_t> entries[JOIN_LAYERS];

	DeviceIndex(const IndexPlan &p, const JoinSegment *d_entries, uint32_t n, Scratch &scratch) : plan(p)
	{
		if (plan.method == GEOACC_JOIN_SPATIAL)
			build_spatial(d_entries, n, scratch);
		else
			build_layers(d_entries, n, scratch);
	}

	void build_spatial(const JoinSegment *d_entries, uint32_t n, Scratch &scratch)
	{
		const uint32_t total = (uint32_t) plan.insertions;
		DeviceBuffer<uint32_t> cells(n),
					offsets(n);
		size_t		bytes = 0;

		spatial_count_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(d_entries, n, plan, cells.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		GEOACC_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, cells.data(), offsets.data(), (int) n,
													  stream()));
		GEOACC_CUDA_TRY(cub::DeviceScan::ExclusiveSum(scratch.get(bytes), bytes, cells.data(), offsets.data(),
													  (int) n, stream()));

		DeviceBuffer<uint64_t> filed_keys(total);
		DeviceBuffer<uint32_t> values(total);

		spatial_fill_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(d_entries, n, plan, offsets.data(),
																			   filed_keys.data(), values.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		group_by_key(filed_keys, values, total, 0, scratch);
	}

	void build_layers(const JoinSegment *d_entries, uint32_t n, Scratch &scratch)
	{
		DeviceBuffer<uint8_t> flags;
		DeviceBuffer<uint32_t> ids;
		int			nonempty = 0;

		for (const BinPlan &b : plan.layer)
			nonempty += b.count > 0;

		const bool	split = nonempty > 1;

		if (split)
		{
			flags.resize(n);
			ids.resize(n);
		}
		for (int l = 0; l < JOIN_LAYERS; l++)
		{
			uint32_t	count = plan.layer[l].count == 0 ? 0 : n;

			if (split && count > 0)
			{
				layer_flags_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(d_entries, n, plan, l,
																					  flags.data());
				GEOACC_CUDA_CHECK_LAUNCH();
				count = select_flagged(flags.data(), n, ids.data());
				if (count != plan.layer[l].count)
					fail(GEOACC_ERR_INTERNAL, "segment join: layer %d holds %u entries on the device, %llu planned",
						 l, count, (unsigned long long) plan.layer[l].count);
			}

			DeviceBuffer<uint64_t> filed_keys(count);
			DeviceBuffer<uint32_t> values(count);

			if (count > 0)
			{
				bin_keys_kernel<<<blocks_for(count, THREADS), THREADS, 0, stream()>>>(
					d_entries, split ? ids.data() : nullptr, count, plan.layer[l],
					plan.method == GEOACC_JOIN_SPATIOTEMPORAL, filed_keys.data(), values.data());
				GEOACC_CUDA_CHECK_LAUNCH();
			}
			group_by_key(filed_keys, values, count, l, scratch);
		}
	}

	/* (key, entry) pairs sorted by key, entries in order within a key: the non-empty keys, their starts, the entries */
	void group_by_key(DeviceBuffer<uint64_t> &filed_keys, DeviceBuffer<uint32_t> &values, uint32_t total, int l,
					  Scratch &scratch)
	{
		DeviceBuffer<uint64_t> sorted_keys(total);

		entries[l].resize(total);
		sort_pairs(scratch, filed_keys.data(), sorted_keys.data(), values.data(), entries[l].data(), total);
		filed_keys.resize(0);
		values.resize(0);

		DeviceBuffer<uint8_t> flags(total);
		DeviceBuffer<uint32_t> run_start(total);

		if (total > 0)
		{
			run_starts_kernel<<<blocks_for(total, THREADS), THREADS, 0, stream()>>>(sorted_keys.data(), total,
																					 flags.data());
			GEOACC_CUDA_CHECK_LAUNCH();
			nkeys[l] = select_flagged(flags.data(), total, run_start.data());
		}
		keys[l].resize(nkeys[l]);
		start[l].resize(nkeys[l] + 1);
		cells_kernel<<<blocks_for(nkeys[l] + 1, THREADS), THREADS, 0, stream()>>>(
			sorted_keys.data(), run_start.data(), (uint32_t) nkeys[l], total, keys[l].data(), start[l].data());
		GEOACC_CUDA_CHECK_LAUNCH();
		sync_and_check_interrupt();
	}

	SpatialIndexView spatial() const
	{
		return {plan.x0, plan.y0, plan.cell, plan.nx, plan.ny, nkeys[0], keys[0].data(), start[0].data(),
			entries[0].data()};
	}
	LayeredIndexView<TemporalIndexView> temporal() const
	{
		LayeredIndexView<TemporalIndexView> view;

		for (int l = 0; l < JOIN_LAYERS; l++)
			view.layer[l] = temporal_layer_view(plan.layer[l], arrays(l));
		return view;
	}
	LayeredIndexView<SpatioTemporalIndexView> spatiotemporal() const
	{
		LayeredIndexView<SpatioTemporalIndexView> view;

		for (int l = 0; l < JOIN_LAYERS; l++)
			view.layer[l] = spatiotemporal_layer_view(plan.layer[l], arrays(l));
		return view;
	}

private:
	BinArrays	arrays(int l) const { return {nkeys[l], keys[l].data(), start[l].data(), entries[l].data()}; }
};

/* ----------------------------------------------------------- the search */

/*
 * Writes the candidates number skip .. skip + limit - 1 of one query to its
 * slots from `base`, and counts all of them.
 */
struct SlotWriter
{
	uint32_t   *candidates;
	uint32_t   *candidate_query;
	uint64_t	base;
	uint32_t	skip;
	uint32_t	limit;
	uint32_t	query;
	uint32_t	count;

	__device__ void operator()(uint32_t e)
	{
		if (count >= skip && count - skip < limit)
		{
			candidates[base + count - skip] = e;
			candidate_query[base + count - skip] = query;
		}
		count++;
	}
};

/*
 * One thread per query: query i of the batch is block query list[i] (i
 * without a list), its slots start at bases[i] (i * limit without bases).
 */
template <class View>
__global__ void
search_kernel(View ix, const JoinSegment *entries, const JoinSegment *queries, JoinParams p, const uint32_t *list,
			  uint32_t nq, const uint64_t *bases, uint32_t limit, uint32_t skip, uint32_t *counts,
			  uint32_t *candidates, uint32_t *candidate_query)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= nq)
		return;

	const uint32_t q = list ? list[i] : i;
	SlotWriter	writer{candidates, candidate_query, bases ? bases[i] : (uint64_t) i * limit, skip, limit, q, 0};
	const JoinQuery query = join_query(&queries[q], p);

	join_search(ix, entries, query, p, writer);
	if (counts)
		counts[i] = writer.count;
}

/* The exact test of every filled slot; with counts, queries over `limit` are left for the redo. */
__global__ void
refine_kernel(const JoinSegment *entries, const JoinSegment *queries, JoinParams p, const uint32_t *candidates,
			  const uint32_t *candidate_query, const uint32_t *counts, uint32_t limit, uint64_t nslots,
			  uint8_t *flags)
{
	const uint64_t slot = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (slot >= nslots)
		return;

	const uint32_t q = candidate_query[slot];
	JoinHit		hit;

	flags[slot] = q != NO_QUERY && (counts == nullptr || counts[q] <= limit)
		&& join_refine(queries[q], entries[candidates[slot]], p, &hit);
}

/* (query, entry) keys of the selected slots, in numbers over the whole join */
__global__ void
row_keys_kernel(const uint32_t *selected, uint32_t n, const uint32_t *candidates, const uint32_t *candidate_query,
				uint64_t first_query, uint64_t first_entry, uint64_t *keys)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
	{
		const uint32_t slot = selected[i];

		keys[i] = (first_query + candidate_query[slot]) << 32 | (first_entry + candidates[slot]);
	}
}

__global__ void
row_kernel(const uint32_t *ordered, uint32_t n, const JoinSegment *entries, const JoinSegment *queries,
		   JoinParams p, const uint32_t *candidates, const uint32_t *candidate_query, GeoaccJoinRow *rows)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;

	const uint32_t slot = ordered[i];
	const JoinSegment &q = queries[candidate_query[slot]];
	const JoinSegment &e = entries[candidates[slot]];
	JoinHit		hit = {0, 0, 0, 0};

	join_refine(q, e, p, &hit);
	rows[i] = {q.traj, q.seg, e.traj, e.seg, hit.t_start, hit.t_end, hit.cpa_time, hit.cpa_distance};
}

/* A range of the entries with its plan. */
struct EntryChunk
{
	uint64_t	first;
	uint64_t	count;
	IndexPlan	plan;
};

class GpuJoinRunner : public JoinRunner
{
public:
	GpuJoinRunner(const JoinJob &job, GeoaccJoinStats &stats) : job_(job), counters_(device_counters())
	{
		const std::vector<JoinSegment> &e = job.entries();
		const uint64_t avail = geoacc_gpu_memory_available();
		const double start = now_ms();

		if (avail == 0)
			fail(GEOACC_ERR_DEVICE_MEMORY, "no device memory is left under the cap");

		/* the entries in as few chunks as fit in half the memory, the index with them */
		const uint64_t chunk_budget = avail / 2;
		uint64_t	nchunks = 1;

		for (;;)
		{
			const uint64_t size = (e.size() + nchunks - 1) / nchunks;
			bool		fits = true;

			chunks_.clear();
			for (uint64_t first = 0; first < e.size() && fits; first += size)
			{
				const uint64_t count = std::min<uint64_t>(size, e.size() - first);
				EntryChunk	c{first, count, plan_index(job.method, &e[first], count, job.params)};

				fits = count * sizeof(JoinSegment) + index_device_bytes(c.plan, count) <= chunk_budget
					&& (c.plan.method != GEOACC_JOIN_SPATIAL || c.plan.insertions < (uint64_t) INT32_MAX);
				chunks_.push_back(c);
			}
			if (fits)
				break;
			if (size == 1)
				fail(GEOACC_ERR_DEVICE_MEMORY, "%llu bytes of device memory are too few for a segment join",
					 (unsigned long long) avail);
			nchunks *= 2;
		}

		uint64_t	chunk_bytes = 0;

		for (const EntryChunk &c : chunks_)
			chunk_bytes = std::max(chunk_bytes, c.count * sizeof(JoinSegment) + index_device_bytes(c.plan, c.count));

		/* the rest for a block of queries and the candidate slots of one batch */
		const uint64_t rest = avail - std::min(avail, chunk_bytes);

		query_slots_ = join_query_slots(DEFAULT_QUERY_SLOTS);
		batch_slots_ = join_batch_slots(std::min<uint64_t>(MAX_BATCH_SLOTS, rest / 2 / SLOT_BYTES));
		if (batch_slots_ == 0)
			fail(GEOACC_ERR_DEVICE_MEMORY, "%llu bytes of device memory are too few for a segment join",
				 (unsigned long long) avail);
		query_slots_ = (uint32_t) std::min<uint64_t>(query_slots_, batch_slots_);
		block_ = std::max<uint64_t>(1, std::min({MAX_BLOCK_QUERIES, batch_slots_ / query_slots_,
												 rest / 4 / QUERY_BYTES}));

		stats.plan_ms += now_ms() - start;
		if (chunks_.size() == 1)
			index_ = load_chunk(chunks_[0], d_entries_, stats);
		count_device_work(stats);
	}

	uint64_t	block_queries() const override { return block_; }

	void run(uint64_t q0, uint64_t q1, std::vector<GeoaccJoinRow> &rows, GeoaccJoinStats &stats) override
	{
		const uint32_t nq = (uint32_t) (q1 - q0);
		const double upload_start = now_ms();
		DeviceBuffer<JoinSegment> d_queries(nq);
		std::vector<std::vector<GeoaccJoinRow>> pieces;

		d_queries.upload(&job_.a[q0], nq);
		stats.upload_ms += now_ms() - upload_start;
		stats.entry_chunks = (uint32_t) chunks_.size();
		for (const EntryChunk &chunk : chunks_)
		{
			DeviceBuffer<JoinSegment> chunk_entries;
			std::unique_ptr<DeviceIndex> chunk_index;
			const DeviceIndex *ix = index_.get();
			const JoinSegment *entries = d_entries_.data();

			if (!ix)
			{
				chunk_index = load_chunk(chunk, chunk_entries, stats);
				ix = chunk_index.get();
				entries = chunk_entries.data();
			}

			Batch		batch{entries, d_queries.data(), q0, chunk.first, nq};

			switch (job_.method)
			{
				case GEOACC_JOIN_SPATIAL:
					run_chunk(ix->spatial(), batch, pieces, stats);
					break;
				case GEOACC_JOIN_TEMPORAL:
					run_chunk(ix->temporal(), batch, pieces, stats);
					break;
				default:
					run_chunk(ix->spatiotemporal(), batch, pieces, stats);
					break;
			}
		}

		/* each piece is ordered: merge them */
		const double start = now_ms();
		const size_t first = rows.size();

		for (const auto &piece : pieces)
		{
			const size_t middle = rows.size();

			rows.insert(rows.end(), piece.begin(), piece.end());
			if (middle > first)
				std::inplace_merge(rows.begin() + first, rows.begin() + middle, rows.end(), join_row_less);
		}
		stats.output_ms += now_ms() - start;
		stats.rows += rows.size() - first;
		count_device_work(stats);
	}

private:
	/* What the launches of one block against one chunk share. */
	struct Batch
	{
		const JoinSegment *entries;
		const JoinSegment *queries;
		uint64_t	first_query;
		uint64_t	first_entry;
		uint32_t	nq;
	};

	std::unique_ptr<DeviceIndex> load_chunk(const EntryChunk &chunk, DeviceBuffer<JoinSegment> &d_entries,
											GeoaccJoinStats &stats)
	{
		double		start = now_ms();

		d_entries.resize(chunk.count);
		d_entries.upload(&job_.entries()[chunk.first], chunk.count);
		stats.upload_ms += now_ms() - start;
		start = now_ms();

		auto		ix = std::make_unique<DeviceIndex>(chunk.plan, d_entries.data(), (uint32_t) chunk.count, scratch_);

		/* the index's sorts needed more scratch than a batch does: give it back to the cap */
		scratch_.buffer.resize(0);
		stats.index_ms += now_ms() - start;
		return ix;
	}

	/* The device allocations and waits since the runner began. */
	void count_device_work(GeoaccJoinStats &stats) const
	{
		const DeviceCounters now = device_counters();

		stats.device_allocations = (uint32_t) (now.allocations - counters_.allocations);
		stats.syncs = (uint32_t) (now.syncs - counters_.syncs);
	}

	template <class View>
	void run_chunk(const View &view, const Batch &b, std::vector<std::vector<GeoaccJoinRow>> &pieces,
				   GeoaccJoinStats &stats)
	{
		ensure_slots(std::max<uint64_t>((uint64_t) b.nq * query_slots_, 1));

		DeviceBuffer<uint32_t> d_counts(b.nq);
		const uint64_t nslots = (uint64_t) b.nq * query_slots_;

		/* first pass: a fixed buffer per query */
		double		t = now_ms();

		GEOACC_CUDA_TRY(cudaMemsetAsync(d_candidate_query_.data(), 0xff, nslots * sizeof(uint32_t), stream()));
		search_kernel<<<blocks_for(b.nq, THREADS), THREADS, 0, stream()>>>(
			view, b.entries, b.queries, job_.params, nullptr, b.nq, nullptr, query_slots_, 0, d_counts.data(),
			d_candidates_.data(), d_candidate_query_.data());
		GEOACC_CUDA_CHECK_LAUNCH();
		sync_and_check_interrupt();
		stats.search_ms += now_ms() - t;
		finish_batch(b, nslots, d_counts.data(), query_slots_, pieces, stats);

		/* the redo loop: overflowed queries with buffers of their exact size */
		std::vector<uint32_t> counts(b.nq),
					overflowed;

		d_counts.download(counts.data(), b.nq);
		for (uint32_t i = 0; i < b.nq; i++)
		{
			stats.candidates += counts[i];
			if (counts[i] > query_slots_)
				overflowed.push_back(i);
		}

		const uint32_t noverflow = (uint32_t) overflowed.size();

		if (noverflow == 0)
			return;
		stats.overflow_queries += noverflow;

		DeviceBuffer<uint32_t> d_list(noverflow);
		DeviceBuffer<uint64_t> d_bases(noverflow);

		for (uint32_t i = 0; i < noverflow;)
		{
			/* a group of whole queries that fits a batch, or one query in windows of a batch */
			std::vector<uint32_t> list;
			std::vector<uint64_t> bases;
			uint64_t	slots = 0;

			while (i < noverflow && (list.empty() || slots + counts[overflowed[i]] <= batch_slots_))
			{
				list.push_back(overflowed[i]);
				bases.push_back(slots);
				slots += counts[overflowed[i]];
				i++;
			}
			d_list.upload(list.data(), list.size());
			d_bases.upload(bases.data(), bases.size());
			for (uint64_t skip = 0; skip < slots; skip += batch_slots_)
			{
				const uint64_t window = std::min(slots - skip, batch_slots_);

				ensure_slots(window);
				t = now_ms();
				GEOACC_CUDA_TRY(cudaMemsetAsync(d_candidate_query_.data(), 0xff, window * sizeof(uint32_t),
												stream()));
				search_kernel<<<blocks_for(list.size(), THREADS), THREADS, 0, stream()>>>(
					view, b.entries, b.queries, job_.params, d_list.data(), (uint32_t) list.size(), d_bases.data(),
					list.size() == 1 ? (uint32_t) window : UINT32_MAX, (uint32_t) skip, nullptr,
					d_candidates_.data(), d_candidate_query_.data());
				GEOACC_CUDA_CHECK_LAUNCH();
				sync_and_check_interrupt();
				stats.search_ms += now_ms() - t;
				finish_batch(b, window, nullptr, 0, pieces, stats);
			}
		}
	}

	/* Test, compact, order and copy out the rows of the slots of one batch. */
	void finish_batch(const Batch &b, uint64_t nslots, const uint32_t *d_counts, uint32_t limit,
					  std::vector<std::vector<GeoaccJoinRow>> &pieces, GeoaccJoinStats &stats)
	{
		double		t = now_ms();

		stats.batches++;
		refine_kernel<<<blocks_for(nslots, THREADS), THREADS, 0, stream()>>>(
			b.entries, b.queries, job_.params, d_candidates_.data(), d_candidate_query_.data(), d_counts, limit,
			nslots, d_flags_.data());
		GEOACC_CUDA_CHECK_LAUNCH();

		const uint32_t n = select_flagged(d_flags_.data(), (uint32_t) nslots, d_selected_.data());

		check_interrupt();
		stats.refine_ms += now_ms() - t;
		t = now_ms();
		if (n > 0)
		{
			row_keys_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
				d_selected_.data(), n, d_candidates_.data(), d_candidate_query_.data(), b.first_query,
				b.first_entry, d_keys_.data());
			GEOACC_CUDA_CHECK_LAUNCH();
			sort_pairs(scratch_, d_keys_.data(), d_sorted_keys_.data(), d_selected_.data(), d_ordered_.data(), n);
			row_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
				d_ordered_.data(), n, b.entries, b.queries, job_.params, d_candidates_.data(),
				d_candidate_query_.data(), d_rows_.data());
			GEOACC_CUDA_CHECK_LAUNCH();
			pieces.emplace_back(n);
			d_rows_.download(pieces.back().data(), n);
		}
		check_interrupt();
		stats.output_ms += now_ms() - t;
	}

	/* Buffers for a batch of `slots` candidate slots. */
	void ensure_slots(uint64_t slots)
	{
		if (d_candidates_.size() >= slots)
			return;
		d_candidates_.resize(0);
		d_candidate_query_.resize(0);
		d_flags_.resize(0);
		d_selected_.resize(0);
		d_keys_.resize(0);
		d_sorted_keys_.resize(0);
		d_ordered_.resize(0);
		d_rows_.resize(0);
		d_candidates_.resize(slots);
		d_candidate_query_.resize(slots);
		d_flags_.resize(slots);
		d_selected_.resize(slots);
		d_keys_.resize(slots);
		d_sorted_keys_.resize(slots);
		d_ordered_.resize(slots);
		d_rows_.resize(slots);
	}

	const JoinJob &job_;
	std::vector<EntryChunk> chunks_;
	uint32_t	query_slots_ = DEFAULT_QUERY_SLOTS;
	uint64_t	batch_slots_ = 0;
	uint64_t	block_ = 1;
	const DeviceCounters counters_;	/* at the start */
	Scratch		scratch_;
	/* the entries and index when they fit as one chunk, kept for every block */
	DeviceBuffer<JoinSegment> d_entries_;
	std::unique_ptr<DeviceIndex> index_;
	/* the slots of one batch */
	DeviceBuffer<uint32_t> d_candidates_;
	DeviceBuffer<uint32_t> d_candidate_query_;
	DeviceBuffer<uint8_t> d_flags_;
	DeviceBuffer<uint32_t> d_selected_;
	DeviceBuffer<uint64_t> d_keys_;
	DeviceBuffer<uint64_t> d_sorted_keys_;
	DeviceBuffer<uint32_t> d_ordered_;
	DeviceBuffer<GeoaccJoinRow> d_rows_;
};

}								/* namespace */

std::unique_ptr<JoinRunner>
make_gpu_join_runner(const JoinJob &job, GeoaccJoinStats &stats)
{
	return std::make_unique<GpuJoinRunner>(job, stats);
}

}								/* namespace geoacc */
