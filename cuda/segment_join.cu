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
 * chunk by chunk.
 *
 * What a call costs besides the search is kept small.  All its device
 * memory is one allocation, laid out from the plan before anything runs
 * and given back when the join closes; CUB's temporary storage is one part
 * of it, sized for the largest use.  The layers of an index are filed by
 * one sort (a key carries its layer above its bin).  The host waits for the
 * device only for a count it needs: once per index build (its bins), twice
 * per batch (how many rows, then the rows), polling for interrupts each
 * time.  A self-join searches the entries already on the device rather
 * than uploading them again as queries.
 */
#include "cuda_util.cuh"
#include "primitives.cuh"
#include "segment_join.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <chrono>
#include <iterator>

namespace geoacc
{

/* An index of prepared entries kept in device memory, and the join parameters it was built for. */
struct PreparedDeviceIndex
{
	GeoaccJoinMethod method;
	int			dims;
	double		distance;
	double		reach;
	uint64_t	bytes;
	DeviceBuffer<uint64_t> keys;
	DeviceBuffer<uint32_t> start;
	DeviceBuffer<uint32_t> entry_ids;
	IndexArrays index;			/* over the three */

	bool built_for(const JoinJob &job) const
	{
		return method == job.method && dims == job.params.dims && distance == job.params.distance &&
			reach == job.params.reach;
	}
};

namespace
{

constexpr unsigned THREADS = 256;
constexpr uint32_t NO_QUERY = UINT32_MAX;

double
now_ms()
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* Bits needed for the numbers 0 .. max (at least 1: a sort of no bits is not a sort). */
int
bits_for(uint64_t max)
{
	int			bits = 1;

	while (bits < 64 && (max >> bits) != 0)
		bits++;
	return bits;
}

/* What the host reads back of an index build or of a batch, in one copy. */
struct DeviceCounts
{
	uint32_t	nkeys;			/* index: non-empty cells or bins, all layers */
	uint32_t	layer_first_key[JOIN_LAYERS + 1];	/* index: each layer's first bin; nkeys last */
	uint32_t	layer_first_entry[JOIN_LAYERS + 1];	/* index: where each layer's entries start */
	uint32_t	selected;		/* batch: slots that passed the exact test */
	uint32_t	overflowed;		/* batch: first-pass queries with more candidates than slots */
	uint64_t	candidates;		/* batch: candidates of all first-pass queries */
};

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

/*
 * The key of each entry of a layered index: its layer above bit `shift`,
 * its bin (and sub-cell) below, so that one stable sort groups the entries
 * by layer, then by bin, each layer's in the order of its own sort.
 */
__global__ void
layer_keys_kernel(const JoinSegment *e, uint32_t n, IndexPlan plan, bool sub_cells, int shift, uint64_t *keys,
				  uint32_t *values)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;

	const int	l = join_layer(plan, e[i]);

	keys[i] = (uint64_t) l << shift | join_bin_key(plan.layer[l], sub_cells, e[i]);
	values[i] = i;
}

/* flags[i] = 1 where a run of equal sorted keys starts */
__global__ void
run_starts_kernel(const uint64_t *keys, uint32_t n, uint8_t *flags)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		flags[i] = i == 0 || keys[i] != keys[i - 1];
}

/*
 * The non-empty keys (the layer cut off) and where each one's entries
 * start, from the starts of the runs of sorted keys; their number is on
 * the device.
 */
__global__ void
cells_kernel(const uint64_t *sorted_keys, const uint32_t *run_start, const DeviceCounts *counts, uint32_t total,
			 uint64_t key_mask, uint64_t *cell_keys, uint32_t *cell_start)
{
	const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
	const uint32_t ncells = counts->nkeys;

	if (c < ncells)
	{
		cell_keys[c] = sorted_keys[run_start[c]] & key_mask;
		cell_start[c] = run_start[c];
	}
	else if (c == ncells)
		cell_start[c] = total;
}

/* Thread l: the first bin of layer l and where its entries start (a spatial grid is all layer 0). */
__global__ void
layer_bounds_kernel(const uint64_t *sorted_keys, const uint32_t *cell_start, bool layered, int shift,
					DeviceCounts *counts)
{
	const uint32_t l = threadIdx.x;

	if (l > JOIN_LAYERS)
		return;

	uint32_t	lo = 0,
				hi = counts->nkeys;

	while (lo < hi)
	{
		const uint32_t mid = lo + (hi - lo) / 2;
		const uint64_t layer = layered ? sorted_keys[cell_start[mid]] >> shift : 0;

		if (layer < l)
			lo = mid + 1;
		else
			hi = mid;
	}
	counts->layer_first_key[l] = lo;
	counts->layer_first_entry[l] = cell_start[lo];
}

/* flags[q] = 1 where query q found more candidates than its slots */
__global__ void
overflow_flags_kernel(const uint32_t *counts, uint32_t nq, uint32_t limit, uint8_t *flags)
{
	const uint32_t q = blockIdx.x * blockDim.x + threadIdx.x;

	if (q < nq)
		flags[q] = counts[q] > limit;
}

/* pairs[i] = (queries[i], its count): one copy brings both to the host */
__global__ void
query_counts_kernel(const uint32_t *queries, uint32_t n, const uint32_t *counts, uint32_t *pairs)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
	{
		pairs[2 * i] = queries[i];
		pairs[2 * i + 1] = counts[queries[i]];
	}
}

/* Candidate counts summed in 64 bits. */
struct WidenU32
{
	__host__ __device__ uint64_t operator()(uint32_t x) const { return x; }
};

using WideCounts = thrust::transform_iterator<WidenU32, const uint32_t *>;

/* ------------------------------------------------------- device memory */

/*
 * Lays buffers out one after another in one block of device memory; with
 * no base it only measures, so the same code sizes the block and then
 * hands out its parts.
 */
class ArenaLayout
{
public:
	explicit ArenaLayout(unsigned char *base) : base_(base) {}

	template <class T>
	T		   *take(uint64_t n)
	{
		used_ = (used_ + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;

		T		   *p = base_ ? reinterpret_cast<T *>(base_ + used_) : nullptr;

		used_ += n * sizeof(T);
		return p;
	}
	uint64_t	used() const { return used_; }
	/* parts used one after the other share memory: lay the next one out from `mark` */
	void		rewind(uint64_t mark) { used_ = mark; }
	void		extend(uint64_t end) { used_ = std::max(used_, end); }

private:
	unsigned char *base_;
	uint64_t	used_ = 0;
};

/*
 * CUB's temporary storage: a part of the arena as large as the largest use
 * asked for up front.  Every use is handed all of it (CUB takes what it
 * needs, and refuses with an error where that is more), so that its size is
 * not asked for again each time.
 */
struct Scratch
{
	void	   *data = nullptr;
	size_t		bytes = 0;
};

size_t
sort_temp_bytes(uint32_t n, int end_bit)
{
	size_t		bytes = 0;

	GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, (const uint64_t *) nullptr, (uint64_t *) nullptr,
													(const uint32_t *) nullptr, (uint32_t *) nullptr, (int) n, 0,
													end_bit, stream()));
	return bytes;
}

size_t
scan_temp_bytes(uint32_t n)
{
	size_t		bytes = 0;

	GEOACC_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, (const uint32_t *) nullptr, (uint32_t *) nullptr,
												  (int) n, stream()));
	return bytes;
}

size_t
sum_temp_bytes(uint32_t n)
{
	size_t		bytes = 0;

	GEOACC_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, bytes, WideCounts(nullptr, WidenU32()), (uint64_t *) nullptr,
										   (int) n, stream()));
	return bytes;
}

/* The same sort between two buffers each for keys and values, CUB's own storage then small. */
size_t
double_buffer_sort_temp_bytes(uint32_t n, int end_bit)
{
	size_t		bytes = 0;
	cub::DoubleBuffer<uint64_t> keys(nullptr, nullptr);
	cub::DoubleBuffer<uint32_t> values(nullptr, nullptr);

	GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, (int) n, 0, end_bit, stream()));
	return bytes;
}

/*
 * Stable sort of n (key, value) pairs by the key's bits [0, end_bit),
 * between keys and other_keys, values and other_values: returns where the
 * sorted values are.
 */
uint32_t *
sort_pairs_between(const Scratch &scratch, uint64_t *keys, uint64_t *other_keys, uint32_t *values,
				   uint32_t *other_values, uint32_t n, int end_bit)
{
	cub::DoubleBuffer<uint64_t> k(keys, other_keys);
	cub::DoubleBuffer<uint32_t> v(values, other_values);

	size_t		bytes = scratch.bytes;

	if (n == 0)
		return values;
	GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch.data, bytes, k, v, (int) n, 0, end_bit, stream()));
	return v.Current();
}

/* Stable sort of n (key, value) pairs by the key's bits [0, end_bit). */
void
sort_pairs(const Scratch &scratch, const uint64_t *keys_in, uint64_t *keys_out, const uint32_t *values_in,
		   uint32_t *values_out, uint32_t n, int end_bit)
{
	size_t		bytes = scratch.bytes;

	if (n == 0)
		return;
	GEOACC_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch.data, bytes, keys_in, keys_out, values_in, values_out,
													(int) n, 0, end_bit, stream()));
}

/* Positions of nonzero flags into indices, their count into *d_count, without waiting. */
void
select_flagged_into(const Scratch &scratch, const uint8_t *flags, uint32_t n, uint32_t *indices, uint32_t *d_count)
{
	select_flagged_async(scratch.data, scratch.bytes, flags, n, indices, d_count);
}

/* Events at points of the stream, to time the device's work between them after a wait. */
class StreamEvents
{
public:
	static constexpr int COUNT = 3;

	StreamEvents()
	{
		for (int i = 0; i < COUNT; i++)
		{
			const cudaError_t err = cudaEventCreate(&events_[i]);

			if (err != cudaSuccess)
			{
				while (i-- > 0)
					cudaEventDestroy(events_[i]);
				cuda_fail(err, "cudaEventCreate", __FILE__, __LINE__);
			}
		}
	}
	~StreamEvents()
	{
		for (cudaEvent_t e : events_)
			cudaEventDestroy(e);
	}
	StreamEvents(const StreamEvents &) = delete;
	StreamEvents &operator=(const StreamEvents &) = delete;

	void		record(int i) { GEOACC_CUDA_TRY(cudaEventRecord(events_[i], stream())); }
	/* after a wait that followed record(to) */
	double		ms(int from, int to) const
	{
		float		ms = 0;

		GEOACC_CUDA_TRY(cudaEventElapsedTime(&ms, events_[from], events_[to]));
		return ms;
	}

private:
	cudaEvent_t events_[COUNT] = {};
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

/* Keys of the selected slots in (query, entry) order: query * nentries + entry, in as few bits as a batch needs */
__global__ void
row_keys_kernel(const uint32_t *selected, uint32_t n, const uint32_t *candidates, const uint32_t *candidate_query,
				uint64_t nentries, uint64_t *keys)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
	{
		const uint32_t slot = selected[i];

		keys[i] = (uint64_t) candidate_query[slot] * nentries + candidates[slot];
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

/* What the arena holds: the largest chunk and its index, a block's queries, a batch's slots, CUB's storage. */
struct ArenaSizes
{
	uint64_t	entries;		/* of the largest chunk */
	uint64_t	insertions;		/* of its index: cells of entries in the spatial grid, else entries */
	bool		spatial;
	uint64_t	block;			/* queries of a block */
	bool		queries;		/* false: a self-join searches its entries in place */
	uint64_t	slots;			/* candidate slots of a batch */
	size_t		scratch;		/* CUB's largest temporary storage */
	bool		index_kept;		/* the entries and their index are kept on the device: neither in the arena */
};

/* The parts of the arena. */
struct Buffers
{
	/* for the whole call */
	DeviceCounts *counts;
	JoinSegment *entries;		/* a chunk's entries */
	JoinSegment *queries;		/* a block's queries */
	uint64_t   *keys;			/* the index: the non-empty keys of all layers, their starts, the entries */
	uint32_t   *start;
	uint32_t   *entry_ids;
	Scratch		scratch;
	/* an index build (the same memory as a batch's) */
	uint64_t   *filed_keys;
	uint32_t   *filed_entries;
	uint64_t   *sorted_keys;
	uint8_t    *run_flags;
	uint32_t   *run_start;
	uint32_t   *cell_counts;	/* per entry, spatial grid */
	uint32_t   *cell_offsets;
	/* a batch */
	uint32_t   *candidates;
	uint32_t   *candidate_query;
	uint8_t    *passed;
	uint32_t   *selected;
	uint64_t   *row_keys;		/* sorted between these two, the selected slots with them */
	uint64_t   *sorted_row_keys;
	uint32_t   *ordered;
	GeoaccJoinRow *rows;
	uint32_t   *query_counts;	/* per query of the block: candidates in the first pass */
	uint8_t    *query_overflow;
	uint32_t   *overflowed;		/* the queries to redo */
	uint32_t   *overflow_pairs;	/* and their counts, (query, count) */
	uint32_t   *redo_list;		/* a group of them, and where their slots start */
	uint64_t   *redo_bases;
};

Buffers
lay_out(ArenaLayout &a, const ArenaSizes &z)
{
	Buffers		b;

	b.counts = a.take<DeviceCounts>(1);
	b.entries = a.take<JoinSegment>(z.index_kept ? 0 : z.entries);
	b.queries = a.take<JoinSegment>(z.queries ? z.block : 0);
	b.keys = a.take<uint64_t>(z.insertions);
	b.start = a.take<uint32_t>(z.insertions + 1);
	b.entry_ids = a.take<uint32_t>(z.insertions);
	b.scratch.data = a.take<unsigned char>(z.scratch);
	b.scratch.bytes = z.scratch;

	const uint64_t shared = a.used();

	b.filed_keys = a.take<uint64_t>(z.insertions);
	b.filed_entries = a.take<uint32_t>(z.insertions);
	b.sorted_keys = a.take<uint64_t>(z.insertions);
	b.run_flags = a.take<uint8_t>(z.insertions);
	b.run_start = a.take<uint32_t>(z.insertions);
	b.cell_counts = a.take<uint32_t>(z.spatial ? z.entries : 0);
	b.cell_offsets = a.take<uint32_t>(z.spatial ? z.entries : 0);

	const uint64_t build_end = a.used();

	a.rewind(shared);
	b.candidates = a.take<uint32_t>(z.slots);
	b.candidate_query = a.take<uint32_t>(z.slots);
	b.passed = a.take<uint8_t>(z.slots);
	b.selected = a.take<uint32_t>(z.slots);
	b.row_keys = a.take<uint64_t>(z.slots);
	b.sorted_row_keys = a.take<uint64_t>(z.slots);
	b.ordered = a.take<uint32_t>(z.slots);
	b.rows = a.take<GeoaccJoinRow>(z.slots);
	b.query_counts = a.take<uint32_t>(z.block);
	b.query_overflow = a.take<uint8_t>(z.block);
	b.overflowed = a.take<uint32_t>(z.block);
	b.overflow_pairs = a.take<uint32_t>(2 * z.block);
	b.redo_list = a.take<uint32_t>(z.block);
	b.redo_bases = a.take<uint64_t>(z.block);
	a.extend(build_end);
	return b;
}

/* The largest key of a layer's bins (and sub-cells). */
uint64_t
layer_max_key(const BinPlan &b, bool sub_cells)
{
	return sub_cells ? (uint64_t) b.nbins * (uint64_t) b.nsub[1] * (uint64_t) b.nsub[0] - 1 : (uint64_t) b.nbins - 1;
}

/* Copy n values from the device and wait for them. */
template <class T>
void
download_now(T *host, const T *device, size_t n)
{
	GEOACC_CUDA_TRY(cudaMemcpyAsync(host, device, n * sizeof(T), cudaMemcpyDeviceToHost, stream()));
	stream_sync();
}

class GpuJoinRunner : public JoinRunner
{
public:
	GpuJoinRunner(const JoinJob &job, GeoaccJoinStats &stats, DeviceRowSink *sink)
		: job_(job), counters_(device_counters()), sink_(sink)
	{
		const SegmentSpan e = job.entries();
		const uint64_t avail = geoacc_gpu_memory_available();
		double		start = now_ms();

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
				EntryChunk	c{first, count, job.plan(first, count)};

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

		/* prepared entries on the device: their index kept for these parameters, or to be kept */
		if (GeoaccJoinEntries *p = job.device_entries() ? job.prepared : nullptr)
		{
			if (p->device_index && !p->device_index->built_for(job))
				drop_kept_index(*p);
			kept_index_ = chunks_.size() == 1 ? p->device_index : nullptr;
			keep_index_ = chunks_.size() == 1 && kept_index_ == nullptr;
		}

		uint64_t	chunk_bytes = 0;

		for (const EntryChunk &c : chunks_)
			chunk_bytes = std::max(chunk_bytes, c.count * sizeof(JoinSegment) + index_device_bytes(c.plan, c.count));

		/* the rest for a block of queries and the candidate slots of one batch */
		const uint64_t rest = avail - std::min(avail, chunk_bytes);

		query_slots_ = join_query_slots(DEFAULT_QUERY_SLOTS);
		/* a sink's buffers take their share of the batch's half */
		const uint64_t slot_bytes = SLOT_BYTES + (sink_ ? sink_->bytes_per_slot() : 0);

		batch_slots_ = join_batch_slots(std::min<uint64_t>(MAX_BATCH_SLOTS, rest / 2 / slot_bytes));
		if (batch_slots_ == 0)
			fail(GEOACC_ERR_DEVICE_MEMORY, "%llu bytes of device memory are too few for a segment join",
				 (unsigned long long) avail);
		query_slots_ = (uint32_t) std::min<uint64_t>(query_slots_, batch_slots_);
		block_ = std::max<uint64_t>(1, std::min({MAX_BLOCK_QUERIES, batch_slots_ / query_slots_,
												 rest / 4 / QUERY_BYTES}));

		/*
		 * The arena, sized now for the whole call: batches of as many slots as
		 * a block's first pass takes, or as the redo may use where that is more
		 * (up to what a block and a chunk can pair).
		 */
		ArenaSizes	z = {};

		for (const EntryChunk &c : chunks_)
		{
			z.entries = std::max(z.entries, c.count);
			z.insertions = std::max(z.insertions, c.plan.method == GEOACC_JOIN_SPATIAL ? c.plan.insertions : c.count);
		}
		z.index_kept = kept_index_ != nullptr;
		if (z.index_kept)
			z.insertions = 0;
		z.spatial = job.method == GEOACC_JOIN_SPATIAL && !z.index_kept;
		z.block = std::min<uint64_t>(block_, job.a.size());
		in_place_ = job.params.self && chunks_.size() == 1;
		z.queries = !in_place_;
		z.slots = std::max(z.block * query_slots_, std::min({batch_slots_, MIN_REDO_SLOTS, z.block * z.entries}));
		z.scratch = std::max({sort_temp_bytes((uint32_t) z.insertions, 64),
							  select_flagged_temp_bytes((uint32_t) z.insertions),
							  z.spatial ? scan_temp_bytes((uint32_t) z.entries) : 0,
							  select_flagged_temp_bytes((uint32_t) z.slots),
							  double_buffer_sort_temp_bytes((uint32_t) z.slots, 64),
							  select_flagged_temp_bytes((uint32_t) z.block), sum_temp_bytes((uint32_t) z.block)});
		slots_ = z.slots;

		ArenaLayout measure(nullptr);

		lay_out(measure, z);
		if (measure.used() > avail)
			fail(GEOACC_ERR_DEVICE_MEMORY,
				 "a segment join needs %llu bytes of device memory, %llu are left under the cap",
				 (unsigned long long) measure.used(), (unsigned long long) avail);
		stats.plan_ms += now_ms() - start;

		start = now_ms();
		arena_.resize(measure.used());
		stats.memory_ms += now_ms() - start;

		ArenaLayout carve(arena_.data());

		buf_ = lay_out(carve, z);
		if (sink_)
			sink_->reserve(slots_);
		/* each stage writes only its own counts, and the host reads the block whole */
		GEOACC_CUDA_TRY(cudaMemsetAsync(buf_.counts, 0, sizeof(DeviceCounts), stream()));
		if (kept_index_)
		{
			/* searched in place: nothing to copy or build */
			buf_.entries = const_cast<JoinSegment *>(job.device_entries());
			index_ = kept_index_->index;
		}
		else if (chunks_.size() == 1)
		{
			load_chunk(chunks_[0], stats);
			if (keep_index_)
				keep_index(*job.prepared);
		}
		count_device_work(stats);
	}

	uint64_t	block_queries() const override { return block_; }

	void run(uint64_t q0, uint64_t q1, HostVector<GeoaccJoinRow> &rows, GeoaccJoinStats &stats) override
	{
		const uint32_t nq = (uint32_t) (q1 - q0);
		const JoinSegment *queries = buf_.entries + q0;
		std::vector<HostVector<GeoaccJoinRow>> pieces;

		if (!in_place_)
		{
			const double start = now_ms();

			GEOACC_CUDA_TRY(cudaMemcpyAsync(buf_.queries, &job_.a[q0], nq * sizeof(JoinSegment),
											cudaMemcpyHostToDevice, stream()));
			queries = buf_.queries;
			stats.upload_ms += now_ms() - start;
		}
		stats.entry_chunks = (uint32_t) chunks_.size();
		for (const EntryChunk &chunk : chunks_)
		{
			if (chunks_.size() > 1)
				load_chunk(chunk, stats);

			const Batch batch{queries, nq, (uint32_t) chunk.count};

			with_index_view(index_, [&](const auto &view) { run_chunk(view, batch, pieces, stats); });
		}

		/* each piece is ordered: merge them */
		const double start = now_ms();
		const size_t first = rows.size();

		for (HostVector<GeoaccJoinRow> &piece : pieces)
		{
			if (rows.empty())
			{
				rows.swap(piece);
				continue;
			}

			/* into fresh memory of huge pages, rather than inplace_merge's own buffer of small ones */
			HostVector<GeoaccJoinRow> merged;

			merged.reserve(rows.size() + piece.size());
			merged.insert(merged.end(), rows.begin(), rows.begin() + first);
			std::merge(rows.begin() + first, rows.end(), piece.begin(), piece.end(), std::back_inserter(merged),
					   join_row_less);
			rows.swap(merged);
		}
		stats.output_ms += now_ms() - start;
		stats.rows += rows.size() - first;
		count_device_work(stats);
	}

private:
	/* What the launches of one block against one chunk share. */
	struct Batch
	{
		const JoinSegment *queries;
		uint32_t	nq;
		uint32_t	nentries;
	};

	/* Upload a chunk of the entries and build its index. */
	void load_chunk(const EntryChunk &chunk, GeoaccJoinStats &stats)
	{
		double		start = now_ms();

		const JoinSegment *kept = job_.device_entries();

		/* prepared entries are on the device already: a copy there, at its bandwidth */
		GEOACC_CUDA_TRY(cudaMemcpyAsync(buf_.entries, kept ? kept + chunk.first : &job_.entries()[chunk.first],
										chunk.count * sizeof(JoinSegment),
										kept ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice, stream()));
		stats.upload_ms += now_ms() - start;
		start = now_ms();
		build_index(chunk.plan, (uint32_t) chunk.count);
		stats.index_ms += now_ms() - start;
	}

	/*
	 * The index of the entries on the device: (key, entry) pairs sorted by
	 * key, entries in order within a key, as the host's index files them;
	 * the non-empty keys and their starts; for a layered index each layer's
	 * bins, found in the one sort of all of them.  One wait, for the counts.
	 */
	void build_index(const IndexPlan &plan, uint32_t n)
	{
		const bool	spatial = plan.method == GEOACC_JOIN_SPATIAL;
		const bool	sub_cells = plan.method == GEOACC_JOIN_SPATIOTEMPORAL;
		const uint32_t total = spatial ? (uint32_t) plan.insertions : n;
		int			shift = 0,
					end_bit;

		if (spatial)
		{
			size_t		bytes = buf_.scratch.bytes;

			spatial_count_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(buf_.entries, n, plan,
																				   buf_.cell_counts);
			GEOACC_CUDA_CHECK_LAUNCH();
			GEOACC_CUDA_TRY(cub::DeviceScan::ExclusiveSum(buf_.scratch.data, bytes, buf_.cell_counts,
														  buf_.cell_offsets, (int) n, stream()));
			spatial_fill_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
				buf_.entries, n, plan, buf_.cell_offsets, buf_.filed_keys, buf_.filed_entries);
			end_bit = bits_for((uint64_t) plan.nx * (uint64_t) plan.ny - 1);
		}
		else
		{
			uint64_t	max_key = 0;

			for (const BinPlan &b : plan.layer)
				if (b.count > 0)
					max_key = std::max(max_key, layer_max_key(b, sub_cells));
			shift = bits_for(max_key);
			end_bit = shift + bits_for(JOIN_LAYERS - 1);
			if (end_bit > 64)
				fail(GEOACC_ERR_INTERNAL, "segment join: the keys of a layered index need %d bits", end_bit);
			layer_keys_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
				buf_.entries, n, plan, sub_cells, shift, buf_.filed_keys, buf_.filed_entries);
		}
		GEOACC_CUDA_CHECK_LAUNCH();
		sort_pairs(buf_.scratch, buf_.filed_keys, buf_.sorted_keys, buf_.filed_entries, buf_.entry_ids, total,
				   end_bit);
		run_starts_kernel<<<blocks_for(total, THREADS), THREADS, 0, stream()>>>(buf_.sorted_keys, total,
																				 buf_.run_flags);
		GEOACC_CUDA_CHECK_LAUNCH();
		select_flagged_into(buf_.scratch, buf_.run_flags, total, buf_.run_start, &buf_.counts->nkeys);
		cells_kernel<<<blocks_for((size_t) total + 1, THREADS), THREADS, 0, stream()>>>(
			buf_.sorted_keys, buf_.run_start, buf_.counts, total, spatial ? ~uint64_t(0) : (uint64_t(1) << shift) - 1,
			buf_.keys, buf_.start);
		GEOACC_CUDA_CHECK_LAUNCH();
		layer_bounds_kernel<<<1, 32, 0, stream()>>>(buf_.sorted_keys, buf_.start, !spatial, shift, buf_.counts);
		GEOACC_CUDA_CHECK_LAUNCH();

		DeviceCounts c;

		download_now(&c, buf_.counts, 1);
		check_interrupt();
		for (int l = 0; l < JOIN_LAYERS && !spatial; l++)
			if (c.layer_first_entry[l + 1] - c.layer_first_entry[l] != plan.layer[l].count)
				fail(GEOACC_ERR_INTERNAL, "segment join: layer %d holds %u entries on the device, %llu planned", l,
					 c.layer_first_entry[l + 1] - c.layer_first_entry[l], (unsigned long long) plan.layer[l].count);
		index_.plan = plan;
		for (int l = 0; l < JOIN_LAYERS; l++)
			index_.bins[l] = {c.layer_first_key[l + 1] - c.layer_first_key[l], buf_.keys + c.layer_first_key[l],
				buf_.start + c.layer_first_key[l], buf_.entry_ids};
		index_keys_ = c.nkeys;
		index_insertions_ = total;
	}

	/*
	 * Keep the index just built over prepared entries for their next joins
	 * with the same parameters, in device memory of its own, where the cap
	 * leaves room for it; the entries count its bytes as theirs.
	 */
	void keep_index(GeoaccJoinEntries &p)
	{
		const uint64_t bytes = index_keys_ * sizeof(uint64_t) + (index_keys_ + 1) * sizeof(uint32_t)
			+ index_insertions_ * sizeof(uint32_t);

		if (bytes > geoacc_gpu_memory_available())
			return;

		auto		kept = std::make_unique<PreparedDeviceIndex>();

		kept->method = job_.method;
		kept->dims = job_.params.dims;
		kept->distance = job_.params.distance;
		kept->reach = job_.params.reach;
		kept->bytes = bytes;
		kept->keys.resize(index_keys_);
		kept->start.resize(index_keys_ + 1);
		kept->entry_ids.resize(index_insertions_);
		GEOACC_CUDA_TRY(cudaMemcpyAsync(kept->keys.data(), buf_.keys, index_keys_ * sizeof(uint64_t),
										cudaMemcpyDeviceToDevice, stream()));
		GEOACC_CUDA_TRY(cudaMemcpyAsync(kept->start.data(), buf_.start, (index_keys_ + 1) * sizeof(uint32_t),
										cudaMemcpyDeviceToDevice, stream()));
		GEOACC_CUDA_TRY(cudaMemcpyAsync(kept->entry_ids.data(), buf_.entry_ids, index_insertions_ * sizeof(uint32_t),
										cudaMemcpyDeviceToDevice, stream()));
		kept->index.plan = index_.plan;
		for (int l = 0; l < JOIN_LAYERS; l++)
		{
			const BinArrays &b = index_.bins[l];

			kept->index.bins[l] = {b.nkeys, kept->keys.data() + (b.keys - buf_.keys),
				kept->start.data() + (b.start - buf_.start), kept->entry_ids.data()};
		}
		p.device_index = kept.release();
		p.device_bytes += bytes;
	}

	static void drop_kept_index(GeoaccJoinEntries &p)
	{
		p.device_bytes -= p.device_index->bytes;
		prepared_device_index_free(p.device_index);
		p.device_index = nullptr;
	}

	template <class View>
	void run_chunk(const View &view, const Batch &b, std::vector<HostVector<GeoaccJoinRow>> &pieces,
				   GeoaccJoinStats &stats)
	{
		const uint64_t nslots = (uint64_t) b.nq * query_slots_;
		DeviceCounts c;
		size_t		sum_bytes = buf_.scratch.bytes;

		/* first pass: a fixed buffer per query; the test, the queries that overflowed, the count of candidates */
		events_.record(0);
		GEOACC_CUDA_TRY(cudaMemsetAsync(buf_.candidate_query, 0xff, nslots * sizeof(uint32_t), stream()));
		search_kernel<<<blocks_for(b.nq, THREADS), THREADS, 0, stream()>>>(
			view, buf_.entries, b.queries, job_.params, nullptr, b.nq, nullptr, query_slots_, 0, buf_.query_counts,
			buf_.candidates, buf_.candidate_query);
		GEOACC_CUDA_CHECK_LAUNCH();
		events_.record(1);
		test(b, nslots, buf_.query_counts, query_slots_);
		overflow_flags_kernel<<<blocks_for(b.nq, THREADS), THREADS, 0, stream()>>>(buf_.query_counts, b.nq,
																					query_slots_, buf_.query_overflow);
		GEOACC_CUDA_CHECK_LAUNCH();
		select_flagged_into(buf_.scratch, buf_.query_overflow, b.nq, buf_.overflowed, &buf_.counts->overflowed);
		GEOACC_CUDA_TRY(cub::DeviceReduce::Sum(buf_.scratch.data, sum_bytes,
											   WideCounts(buf_.query_counts, WidenU32()), &buf_.counts->candidates,
											   (int) b.nq, stream()));
		events_.record(2);
		download_now(&c, buf_.counts, 1);
		check_interrupt();
		stats.search_ms += events_.ms(0, 1);
		stats.refine_ms += events_.ms(1, 2);
		stats.candidates += c.candidates;

		/* the rows, then which queries to redo with how many candidates */
		const uint32_t noverflow = c.overflowed;
		std::vector<uint32_t> redo(2 * (size_t) noverflow);
		double		t = now_ms();

		output_rows(b, c.selected, pieces);
		stats.output_ms += now_ms() - t;
		stats.batches++;
		if (noverflow == 0)
			return;
		stats.overflow_queries += noverflow;
		query_counts_kernel<<<blocks_for(noverflow, THREADS), THREADS, 0, stream()>>>(
			buf_.overflowed, noverflow, buf_.query_counts, buf_.overflow_pairs);
		GEOACC_CUDA_CHECK_LAUNCH();
		download_now(redo.data(), buf_.overflow_pairs, redo.size());
		check_interrupt();

		/* the redo loop: overflowed queries with buffers of their exact size */
		for (uint32_t i = 0; i < noverflow;)
		{
			/* a group of whole queries that fits a batch, or one query in windows of a batch */
			std::vector<uint32_t> list;
			std::vector<uint64_t> bases;
			uint64_t	slots = 0;

			while (i < noverflow && (list.empty() || slots + redo[2 * i + 1] <= slots_))
			{
				list.push_back(redo[2 * i]);
				bases.push_back(slots);
				slots += redo[2 * i + 1];
				i++;
			}
			GEOACC_CUDA_TRY(cudaMemcpyAsync(buf_.redo_list, list.data(), list.size() * sizeof(uint32_t),
											cudaMemcpyHostToDevice, stream()));
			GEOACC_CUDA_TRY(cudaMemcpyAsync(buf_.redo_bases, bases.data(), bases.size() * sizeof(uint64_t),
											cudaMemcpyHostToDevice, stream()));
			for (uint64_t skip = 0; skip < slots; skip += slots_)
			{
				const uint64_t window = std::min(slots - skip, slots_);

				events_.record(0);
				GEOACC_CUDA_TRY(cudaMemsetAsync(buf_.candidate_query, 0xff, window * sizeof(uint32_t), stream()));
				search_kernel<<<blocks_for(list.size(), THREADS), THREADS, 0, stream()>>>(
					view, buf_.entries, b.queries, job_.params, buf_.redo_list, (uint32_t) list.size(),
					buf_.redo_bases, list.size() == 1 ? (uint32_t) window : UINT32_MAX, (uint32_t) skip, nullptr,
					buf_.candidates, buf_.candidate_query);
				GEOACC_CUDA_CHECK_LAUNCH();
				events_.record(1);
				test(b, window, nullptr, 0);
				events_.record(2);
				download_now(&c, buf_.counts, 1);
				check_interrupt();
				stats.search_ms += events_.ms(0, 1);
				stats.refine_ms += events_.ms(1, 2);
				t = now_ms();
				output_rows(b, c.selected, pieces);
				stats.output_ms += now_ms() - t;
				stats.batches++;
			}
		}
	}

	/* The exact test of a batch's slots, the slots that passed selected (their count left on the device). */
	void test(const Batch &b, uint64_t nslots, const uint32_t *counts, uint32_t limit)
	{
		refine_kernel<<<blocks_for(nslots, THREADS), THREADS, 0, stream()>>>(
			buf_.entries, b.queries, job_.params, buf_.candidates, buf_.candidate_query, counts, limit, nslots,
			buf_.passed);
		GEOACC_CUDA_CHECK_LAUNCH();
		select_flagged_into(buf_.scratch, buf_.passed, (uint32_t) nslots, buf_.selected, &buf_.counts->selected);
	}

	/* Order the n rows that passed and copy them out as a new piece. */
	void output_rows(const Batch &b, uint32_t n, std::vector<HostVector<GeoaccJoinRow>> &pieces)
	{
		if (n == 0)
			return;
		row_keys_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
			buf_.selected, n, buf_.candidates, buf_.candidate_query, b.nentries, buf_.row_keys);
		GEOACC_CUDA_CHECK_LAUNCH();
		const uint32_t *ordered = sort_pairs_between(buf_.scratch, buf_.row_keys, buf_.sorted_row_keys, buf_.selected,
													 buf_.ordered, n, bits_for((uint64_t) b.nq * b.nentries - 1));

		row_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
			ordered, n, buf_.entries, b.queries, job_.params, buf_.candidates, buf_.candidate_query, buf_.rows);
		GEOACC_CUDA_CHECK_LAUNCH();
		/* with a sink, the rows stay on the device */
		if (sink_)
		{
			sink_->take(buf_.rows, n);
			check_interrupt();
			return;
		}
		pieces.emplace_back(n);
		download_now(pieces.back().data(), buf_.rows, n);
		check_interrupt();
	}

	/* The device allocations and waits since the runner began. */
	void count_device_work(GeoaccJoinStats &stats) const
	{
		const DeviceCounters now = device_counters();

		stats.device_allocations = (uint32_t) (now.allocations - counters_.allocations);
		stats.syncs = (uint32_t) (now.syncs - counters_.syncs);
	}

	const JoinJob &job_;
	const DeviceCounters counters_;	/* at the start */
	DeviceRowSink *sink_;		/* NULL: rows are copied out */
	std::vector<EntryChunk> chunks_;
	uint32_t	query_slots_ = DEFAULT_QUERY_SLOTS;
	uint64_t	batch_slots_ = 0;
	uint64_t	block_ = 1;
	uint64_t	slots_ = 0;		/* of a batch in the arena */
	bool		in_place_ = false;	/* the queries are the entries on the device */
	const PreparedDeviceIndex *kept_index_ = nullptr;	/* the prepared entries' kept index, used in place */
	bool		keep_index_ = false;	/* keep the index this runner builds */
	uint64_t	index_keys_ = 0;	/* of the index last built: its non-empty keys and insertions */
	uint64_t	index_insertions_ = 0;
	StreamEvents events_;		/* start, searched, tested */
	DeviceBuffer<unsigned char> arena_;
	Buffers		buf_ = {};
	IndexArrays index_ = {};	/* of the chunk on the device */
};

}								/* namespace */

void
prepared_device_index_free(PreparedDeviceIndex *index)
{
	delete index;
}

void *
join_entries_to_device(const JoinSegment *segments, size_t n)
{
	void	   *d = n ? device_malloc(n * sizeof(JoinSegment)) : nullptr;

	try
	{
		if (n)
		{
			GEOACC_CUDA_TRY(cudaMemcpyAsync(d, segments, n * sizeof(JoinSegment), cudaMemcpyHostToDevice, stream()));
			stream_sync();
		}
	}
	catch (...)
	{
		device_free(d);
		throw;
	}
	return d;
}

void
join_entries_free_device(void *d_segments)
{
	device_free(d_segments);
}

std::unique_ptr<JoinRunner>
make_gpu_join_runner(const JoinJob &job, GeoaccJoinStats &stats, DeviceRowSink *sink)
{
	return std::make_unique<GpuJoinRunner>(job, stats, sink);
}

}								/* namespace geoacc */
