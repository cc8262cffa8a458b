/*
 * service.c
 *
 * The GPU service: with geoacc in shared_preload_libraries and
 * geoacc.service = gpu, a few device processes per server hold the only CUDA
 * contexts, and backends, parallel workers and Citus tasks hand them their
 * calls' work instead of opening contexts of their own.
 *
 * Three pieces:
 *
 *  - The service memory: one shared mapping made by the postmaster (so at
 *    the same address in every process of the server), of
 *    geoacc.service_memory bytes, reserved but touched only as used.  A
 *    work's inputs, outputs and arguments live there, so the pointers in
 *    them mean the same in the backend and in the service, and the service
 *    runs the very GeoaccWork the backend would run (the seam of call.c).
 *    Blocks are tagged with their owner: a backend (freed with the memory
 *    context they were taken in, and all that is left at its exit), or the
 *    service on behalf of a request (handed to the caller when the request
 *    is done, freed if the service dies first).
 *
 *  - The supervisor, a background worker (restarted by the postmaster if it
 *    exits), which starts geoacc.service_processes device processes, and
 *    when one dies fails its calls in progress, frees their memory and
 *    starts it again.
 *
 *  - The device processes, forked by the supervisor: each initialises CUDA
 *    and runs the oldest queued work whenever it is free, so that a long
 *    call does not hold up the others.  They are not PostgreSQL server
 *    processes (no elog, no locks, no transactions): so one can be killed,
 *    or die of a CUDA error, without the postmaster restarting the server.
 *    Their messages go to stderr, the server's log.
 *
 * A caller queues its request in its slot (one per backend), wakes the
 * device processes (a futex) and waits on its latch.  On cancel or
 * statement_timeout it sets the slot's cancel flag, which the core polls
 * through the interrupt callback, and keeps waiting until the work has
 * stopped: the work's memory is the caller's and may be freed only then.
 * What a work leaves in its process for the caller's next works (an open
 * segment join) ties those works to that process.
 *
 * geoacc.service = cpu runs the same service with the CPU implementations,
 * so that the hand-off, cancellation and the death and restart of the
 * service are tested on machines without a GPU.
 */
#include "geoacc.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "port/pg_bitutils.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/backendid.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/ps_status.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

int			geoacc_service_mode = GEOACC_SERVICE_OFF;
int			geoacc_service_memory_mb = -1;
int			geoacc_service_processes = 2;

#define ARENA_ALIGN 64
#define BLOCK_MAGIC 0x47454f41u		/* "GEOA" */
#define OWNER_FREE 0
/* a block the device process took for the request of slot s: owner -(s + 1) */
#define OWNER_OF_REQUEST(s) (-(int32) (s) - 1)
/* a snapshot's blocks: kept until it is dropped or replaced, whoever made them */
#define OWNER_SNAPSHOT INT32_MIN
/*
 * Free blocks from this size on give their pages back to the system; smaller
 * ones keep them, so that the next calls of common sizes find them touched
 * (a page fault per 4 kB is a large share of a call where faults are slow).
 */
#define ARENA_RETURN_BYTES ((uint64) 1 << 30)
/* a caller waits this long for a device process that is not running before its call fails */
#define START_WAIT_MS 30000
/* a device process that dies sooner than this after its start is restarted after a pause */
#define CRASH_LOOP_MS 5000
/* geoacc.service_processes at most */
#define MAX_DEVICE_PROCESSES 16

/*
 * Device memory a device process keeps after its calls free it, so that the
 * next calls (a map's tiles: a few buffers each) allocate without going back
 * to the driver.
 */
#define KEPT_FREED_DEVICE_MEMORY ((uint64) 64 << 20)

typedef struct Block
{
	uint64		size;			/* the whole block, this header included; a multiple of ARENA_ALIGN */
	uint64		prev_size;		/* of the block before it; 0 for the first */
	int32		owner;			/* OWNER_FREE, a backend id, or OWNER_OF_REQUEST(slot) */
	uint32		magic;
	uint64		next_free;		/* free blocks: the free list, as offsets from the arena (0: end) */
	uint64		prev_free;
	void	   *holder;			/* a backend's block: its WorkHolder, in that backend's memory */
	char		pad[ARENA_ALIGN - 48];
} Block;

StaticAssertDecl(sizeof(Block) == ARENA_ALIGN, "Block is one alignment unit");

typedef enum SlotState
{
	SLOT_FREE,
	SLOT_QUEUED,
	SLOT_RUNNING,
	SLOT_DONE
} SlotState;

typedef struct ServiceSlot
{
	volatile int state;			/* SlotState */
	volatile int cancel;		/* the caller asks the work to stop */
	int			backend_id;
	Latch	   *latch;			/* the caller's, in the server's shared memory */
	uint64		seq;			/* queue order */
	GeoaccCoreRun run;
	void	   *arg;
	uint64		memory_limit;	/* the caller's geoacc.gpu_memory_limit (0: automatic) */
	uint64		reservation;	/* what the caller reserved of the budget (0: none) */
	GeoaccStatus status;
	char		message[512];
	int			runner;			/* the device process running it (index), -1: none */
	/* what a work left in a device process for later works of the caller (an open join) */
	void	   *held;
	void		(*release) (void *held);
	int			held_by;		/* that process: the caller's later works go to it */
	volatile int abandoned;		/* the caller no longer needs it */
	struct SnapshotEntry *pinned;	/* the snapshot the caller reads now (NULL: none) */
} ServiceSlot;

/*
 * A snapshot's data (snapshot.c) under its key: the database, its catalog
 * table (a new one when the extension is made again), the id of its
 * catalog row and the generation of that row (each refresh makes a new
 * one, so that transactions that still see the old row read the old data).
 * Entries are blocks of the service memory in a list.
 */
typedef struct SnapshotEntry
{
	uint64		next;			/* the next entry, as an offset from the arena (0: end) */
	Oid			database;
	Oid			catalog;
	int64		id;
	int64		generation;
	void	   *data;
	bool		dropped;		/* freed when no caller has it pinned */
	uint64		serial;			/* unique while the service memory lasts: names the device processes' copies */
	uint32		kept_by[GEOACC_KEPT_VARIANTS];	/* the device processes that keep each form (bit per index) */
	uint64		device_bytes[MAX_DEVICE_PROCESSES];	/* the device memory each holds for it */
} SnapshotEntry;

typedef struct DeviceProcess
{
	volatile int pid;			/* 0: not running */
	TimestampTz started_at;
	int			kept;			/* snapshots it keeps prepared */
	volatile uint64 kept_bytes; /* the device memory they hold */
} DeviceProcess;

typedef enum GpuState
{
	GPU_UNKNOWN,				/* the device process has not initialised the GPU yet */
	GPU_READY,
	GPU_FAILED
} GpuState;

typedef struct ServiceHeader
{
	uint32		magic;
	pthread_mutex_t mutex;		/* robust and process-shared: the allocator, the slots, these counts */
	/*
	 * Bumped when a request is queued or a held thing abandoned; device
	 * processes sleep on it (a futex: a process killed while it sleeps
	 * leaves nothing behind, unlike a process-shared condition variable).
	 */
	volatile uint32 queue_seq;
	uint64		size;			/* of the arena */
	uint64		first_block;	/* offset of the first block */
	uint64		free_head;		/* offset of the first free block (0: none) */
	uint64		used;			/* bytes in blocks that are not free */
	uint64		peak;
	int			nslots;
	int			supervisor_pid;
	int			nprocs;			/* geoacc.service_processes */
	DeviceProcess procs[MAX_DEVICE_PROCESSES];
	int64		starts;
	TimestampTz started_at;		/* the last start */
	int64		calls;
	int64		failures;
	int64		lost;			/* calls that failed because the device process died */
	uint64		next_seq;
	volatile int gpu_state;		/* GpuState */
	int			gpu_device;
	uint64		gpu_memory;		/* the device's total memory */
	uint64		gpu_available;	/* what geoacc may use of it, as the device process first saw it */
	char		gpu_message[512];
	uint64		snapshots;		/* the first SnapshotEntry, as an offset (0: none) */
	uint64		next_serial;	/* of snapshot entries */
	ServiceSlot slots[FLEXIBLE_ARRAY_MEMBER];
} ServiceHeader;

static ServiceHeader *arena = NULL;	/* NULL unless the service is on */
static size_t arena_size = 0;
static bool am_device_process = false;
static int	my_index = -1;			/* in a device process: its index */
static int	current_slot = -1;		/* in a device process: the request it runs */
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static bool exit_callback_registered = false;

/*
 * In a device process: what it keeps prepared of snapshots for their calls
 * (a copy in device memory), by the entry's serial; released once the
 * entry is gone.
 */
typedef struct Kept
{
	struct Kept *next;
	uint64		serial;
	int			variant;
	void	   *what;
	uint64		bytes;
	void		(*release) (void *what);
} Kept;

static Kept *kept_list = NULL;

static inline char *
Base(void)
{
	return (char *) arena;
}

static inline Block *
BlockAt(uint64 offset)
{
	return (Block *) (Base() + offset);
}

static inline uint64
OffsetOf(const void *p)
{
	return (uint64) ((const char *) p - Base());
}

bool
GeoaccInServiceMemory(const void *p)
{
	return arena != NULL && (const char *) p >= Base() && (const char *) p < Base() + arena_size;
}

/* --------------------------------------------------------------- locking */

static void RepairLocked(void);

static void
Lock(void)
{
	int			rc = pthread_mutex_lock(&arena->mutex);

	/*
	 * A device process killed while it held the lock may have left the free
	 * list or a neighbour's link half made: rebuilt from the blocks, which
	 * stay walkable (each change of a block's size is one store, made after
	 * the header it uncovers is written).
	 */
	if (rc == EOWNERDEAD)
	{
		RepairLocked();
		pthread_mutex_consistent(&arena->mutex);
	}
}

static void
Unlock(void)
{
	pthread_mutex_unlock(&arena->mutex);
}

/* ------------------------------------------------------------ allocator */

static void
FreeListRemove(Block *b)
{
	if (b->prev_free)
		BlockAt(b->prev_free)->next_free = b->next_free;
	else
		arena->free_head = b->next_free;
	if (b->next_free)
		BlockAt(b->next_free)->prev_free = b->prev_free;
	b->next_free = b->prev_free = 0;
}

static void
FreeListPush(Block *b)
{
	b->owner = OWNER_FREE;
	b->holder = NULL;
	b->prev_free = 0;
	b->next_free = arena->free_head;
	if (arena->free_head)
		BlockAt(arena->free_head)->prev_free = OffsetOf(b);
	arena->free_head = OffsetOf(b);
}

static Block *
NextBlock(Block *b)
{
	uint64		next = OffsetOf(b) + b->size;

	return next < arena->size ? BlockAt(next) : NULL;
}

static void
Corrupt(const char *what, const void *p)
{
	fprintf(stderr, "geoacc service memory: %s at %p\n", what, p);
	abort();
}

/*
 * Rebuild what the blocks imply (lock held): each block's link to the one
 * before it, free neighbours merged, the free list and the bytes in use.
 */
static void
RepairLocked(void)
{
	uint64		prev = 0;
	uint64		used = 0;

	arena->free_head = 0;
	for (uint64 o = arena->first_block; o < arena->size;)
	{
		Block	   *b = BlockAt(o);

		if (b->magic != BLOCK_MAGIC || b->size < sizeof(Block) || b->size % ARENA_ALIGN != 0 ||
			b->size > arena->size - o)
			Corrupt("a block that cannot be repaired", b);
		b->prev_size = prev ? o - prev : 0;
		if (b->owner == OWNER_FREE && prev && BlockAt(prev)->owner == OWNER_FREE)
		{
			BlockAt(prev)->size += b->size;
			o = prev + BlockAt(prev)->size;
			continue;
		}
		if (b->owner != OWNER_FREE)
			used += b->size;
		prev = o;
		o += b->size;
	}
	for (uint64 o = arena->first_block; o < arena->size; o += BlockAt(o)->size)
		if (BlockAt(o)->owner == OWNER_FREE)
			FreeListPush(BlockAt(o));
	arena->used = used;
	fprintf(stderr, "geoacc service memory: repaired after a process died holding its lock (%llu bytes in use)\n",
			(unsigned long long) used);
}

/* Take `bytes` for `owner` (lock held); NULL when no free block is large enough. */
static void *
AllocLocked(size_t bytes, int32 owner)
{
	uint64		need = TYPEALIGN(ARENA_ALIGN, (uint64) bytes) + sizeof(Block);
	uint64		offset;

	if (bytes > arena->size)
		return NULL;
	for (offset = arena->free_head; offset != 0; offset = BlockAt(offset)->next_free)
	{
		Block	   *b = BlockAt(offset);

		if (b->size < need)
			continue;
		FreeListRemove(b);
		if (b->size - need >= 2 * sizeof(Block))
		{
			Block	   *rest = (Block *) ((char *) b + need);
			Block	   *after;

			rest->size = b->size - need;
			rest->prev_size = need;
			rest->magic = BLOCK_MAGIC;
			rest->owner = OWNER_FREE;
			rest->holder = NULL;
			rest->next_free = rest->prev_free = 0;
			b->size = need;
			after = NextBlock(rest);
			if (after)
				after->prev_size = rest->size;
			FreeListPush(rest);
		}
		b->owner = owner;
		b->holder = NULL;
		arena->used += b->size;
		arena->peak = Max(arena->peak, arena->used);
		return b + 1;
	}
	return NULL;
}

static Block *
HeaderOf(void *p)
{
	Block	   *b = (Block *) p - 1;

	if (!GeoaccInServiceMemory(p) || b->magic != BLOCK_MAGIC || b->owner == OWNER_FREE)
		Corrupt("not a block in use", p);
	return b;
}

/* Give a block back, merged with free neighbours (lock held). */
static void
FreeLocked(Block *b)
{
	Block	   *next = NextBlock(b);
	char	   *freed = (char *) b;
	uint64		freed_size = b->size;

	arena->used -= b->size;
	b->owner = OWNER_FREE;
	if (next && next->owner == OWNER_FREE)
	{
		Block	   *after;

		FreeListRemove(next);
		b->size += next->size;
		after = NextBlock(b);
		if (after)
			after->prev_size = b->size;
	}
	if (b->prev_size)
	{
		Block	   *prev = (Block *) ((char *) b - b->prev_size);

		if (prev->owner == OWNER_FREE)
		{
			Block	   *after;

			FreeListRemove(prev);
			prev->size += b->size;
			after = NextBlock(prev);
			if (after)
				after->prev_size = prev->size;
			b = prev;
		}
	}
	/*
	 * A large block gives its pages back (they read as zeros when taken
	 * again); a small one keeps them, even where it joins a large free
	 * neighbour, so that the next calls find them touched.
	 */
	if (freed_size >= ARENA_RETURN_BYTES)
	{
		char	   *start = (char *) TYPEALIGN(8192, freed + sizeof(Block));
		char	   *end = (char *) TYPEALIGN_DOWN(8192, freed + freed_size);

		if (end > start)
			madvise(start, end - start, MADV_REMOVE);
	}
	FreeListPush(b);
}

/* Free every block of `owner` (lock held). */
static void
FreeOwnerLocked(int32 owner)
{
	Block	   *b = BlockAt(arena->first_block);

	while (b)
	{
		Block	   *next = NextBlock(b);

		if (b->owner == owner)
		{
			/* b may merge with the free block after it: look at b again */
			FreeLocked(b);
			next = BlockAt(arena->first_block);
		}
		b = next;
	}
}

/* Hand the blocks of `from` to `to` (lock held). */
static void
RetagLocked(int32 from, int32 to)
{
	for (Block *b = BlockAt(arena->first_block); b; b = NextBlock(b))
		if (b->owner == from)
			b->owner = to;
}

/* The core's release of shared memory, in any process. */
static void
ReleaseShared(void *p)
{
	Block	   *b;

	if (p == NULL)
		return;
	b = HeaderOf(p);
	Lock();
	FreeLocked(b);
	Unlock();
}

/* ------------------------------------------------- work memory (backends) */

/* Who frees a backend's block: the memory context it was taken in. */
typedef struct WorkHolder
{
	MemoryContextCallback callback;
	void	   *ptr;
} WorkHolder;

static void
WorkHolderRelease(void *arg)
{
	WorkHolder *holder = arg;

	if (holder->ptr)
		ReleaseShared(holder->ptr);
	holder->ptr = NULL;
}

void *
GeoaccWorkAlloc(Size size)
{
	WorkHolder *holder;
	void	   *p;

	if (!GeoaccServiceActive())
		return MemoryContextAllocHuge(CurrentMemoryContext, Max(size, 1));
	holder = MemoryContextAlloc(CurrentMemoryContext, sizeof(WorkHolder));
	Lock();
	p = AllocLocked(Max(size, 1), MyBackendId);
	if (p)
		((Block *) p - 1)->holder = holder;
	Unlock();
	if (p == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of geoacc service memory"),
				 errdetail("A call needs %zu bytes more of the %zu bytes of geoacc.service_memory.", size, arena_size),
				 errhint("Raise geoacc.service_memory (a restart), or run fewer large calls at once.")));
	holder->callback.func = WorkHolderRelease;
	holder->callback.arg = holder;
	holder->ptr = p;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &holder->callback);
	return p;
}

void *
GeoaccWorkAllocZero(Size size)
{
	void	   *p = GeoaccWorkAlloc(size);

	memset(p, 0, size);
	return p;
}

const void *
GeoaccWorkCopy(const void *array, Size bytes)
{
	void	   *copy;

	if (array == NULL || !GeoaccServiceActive() || GeoaccInServiceMemory(array))
		return array;
	copy = GeoaccWorkAlloc(bytes);
	memcpy(copy, array, bytes);
	return copy;
}

void
GeoaccWorkFree(void *p)
{
	Block	   *b;

	if (p == NULL)
		return;
	if (!GeoaccInServiceMemory(p))
	{
		pfree(p);
		return;
	}
	b = HeaderOf(p);
	if (b->holder)
		((WorkHolder *) b->holder)->ptr = NULL;
	ReleaseShared(p);
}

void *
GeoaccWorkRealloc(void *p, Size size)
{
	void	   *q;
	Block	   *b;

	if (p == NULL)
		return GeoaccWorkAlloc(size);
	if (!GeoaccInServiceMemory(p))
		return repalloc_huge(p, size);
	b = HeaderOf(p);
	/* in the memory context of the old block, which may not be the current one */
	{
		WorkHolder *holder = b->holder;
		MemoryContext context = holder ? GetMemoryChunkContext(holder) : CurrentMemoryContext;
		MemoryContext old = MemoryContextSwitchTo(context);

		q = GeoaccWorkAlloc(size);
		MemoryContextSwitchTo(old);
	}
	memcpy(q, p, Min(size, b->size - sizeof(Block)));
	GeoaccWorkFree(p);
	return q;
}

/*
 * What the core takes in a backend (a mesh read or welded there, and the
 * arrays of CPU runs): in the service memory while it has room, so that a
 * mesh goes to the service without a copy; else malloc.
 */
static void *
BackendAlloc(size_t bytes)
{
	void	   *p;

	Lock();
	p = AllocLocked(Max(bytes, 1), MyBackendId);
	Unlock();
	return p ? p : malloc(bytes);
}

void *
GeoaccSharedAllocZero(size_t bytes)
{
	void	   *p;

	Lock();
	p = AllocLocked(Max(bytes, 1), am_device_process ? OWNER_OF_REQUEST(Max(current_slot, 0)) : MyBackendId);
	Unlock();
	if (p)
		memset(p, 0, bytes);
	return p;
}

void
GeoaccSharedFree(void *p)
{
	ReleaseShared(p);
}

/* What the device process takes for the core: owned by the request it runs. */
static void *
DeviceProcessAlloc(size_t bytes)
{
	void	   *p;

	Lock();
	p = AllocLocked(Max(bytes, 1), OWNER_OF_REQUEST(Max(current_slot, 0)));
	Unlock();
	return p;
}

/* ------------------------------------------------------------- the arena */

static void ServiceBackendExit(int code, Datum arg);

bool
GeoaccServiceActive(void)
{
	if (arena == NULL || am_device_process)
		return false;
	/* a backend that uses the service memory gives back at its exit what its memory contexts did not */
	if (!exit_callback_registered && MyBackendId > 0)
	{
		on_shmem_exit(ServiceBackendExit, (Datum) 0);
		exit_callback_registered = true;
	}
	return true;
}

static size_t
ArenaBytes(void)
{
	long		pages = sysconf(_SC_PHYS_PAGES);
	long		page = sysconf(_SC_PAGESIZE);

	if (geoacc_service_memory_mb > 0)
		return (size_t) geoacc_service_memory_mb * 1024 * 1024;
	/* half the machine's memory: reserved, not used, until calls use it */
	return pages > 0 && page > 0 ? (size_t) pages * page / 2 : (size_t) 4 << 30;
}

/* Wait (up to 5 s) for the device processes of an earlier life of the server to be gone. */
static void
WaitForOldDeviceProcesses(void)
{
	for (int p = 0; p < MAX_DEVICE_PROCESSES; p++)
	{
		int			pid = arena->procs[p].pid;

		for (int i = 0; pid > 0 && i < 500 && kill(pid, 0) == 0; i++)
			pg_usleep(10000L);
	}
}

/* (Re)initialise the arena: at server start, and after a crash restart. */
static void
ServiceShmemStartup(void)
{
	pthread_mutexattr_t mattr;
	Size		header;
	Block	   *b;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	if (arena->magic == BLOCK_MAGIC)
		WaitForOldDeviceProcesses();
	header = TYPEALIGN(ARENA_ALIGN, offsetof(ServiceHeader, slots) + sizeof(ServiceSlot) * MaxBackends);
	if (header + 16 * sizeof(Block) > arena_size)
		ereport(FATAL,
				(errmsg("geoacc.service_memory is too small for %d backends", MaxBackends),
				 errhint("Raise geoacc.service_memory to at least %zu kB.", (size_t) (header / 1024 + 64))));
	memset(arena, 0, header);
	pthread_mutexattr_init(&mattr);
	pthread_mutexattr_setpshared(&mattr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&mattr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&arena->mutex, &mattr);
	arena->size = arena_size;
	arena->nslots = MaxBackends;
	arena->nprocs = geoacc_service_processes;
	arena->first_block = header;
	arena->gpu_device = -1;
	b = BlockAt(header);
	b->size = arena_size - header;
	b->prev_size = 0;
	b->magic = BLOCK_MAGIC;
	FreeListPush(b);
	/* what earlier lives of the server left in the arena goes back to the system */
	madvise(Base() + TYPEALIGN(8192, header + sizeof(Block)), TYPEALIGN_DOWN(8192, arena_size) -
			TYPEALIGN(8192, header + sizeof(Block)), MADV_REMOVE);
	arena->magic = BLOCK_MAGIC;
}

void
GeoaccServiceInit(void)
{
	BackgroundWorker worker;

	if (!process_shared_preload_libraries_in_progress || geoacc_service_mode == GEOACC_SERVICE_OFF)
		return;
	arena_size = TYPEALIGN_DOWN(8192, ArenaBytes());
	arena = mmap(NULL, arena_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED)
		ereport(FATAL,
				(errmsg("could not map %zu bytes of geoacc service memory: %m", arena_size),
				 errhint("Lower geoacc.service_memory.")));
	arena->magic = 0;
	/* a hint: huge pages where the system gives them to shared memory */
	madvise(arena, arena_size, MADV_HUGEPAGE);
	geoacc_set_shared_memory(BackendAlloc, ReleaseShared, arena, arena_size);
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = ServiceShmemStartup;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "geoacc");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "GeoaccServiceMain");
	snprintf(worker.bgw_name, BGW_MAXLEN, "geoacc service");
	snprintf(worker.bgw_type, BGW_MAXLEN, "geoacc service");
	RegisterBackgroundWorker(&worker);
}

/* --------------------------------------------------------- the GPU seen */

bool
GeoaccServiceGpuUsable(void)
{
	return geoacc_service_mode == GEOACC_SERVICE_CPU || arena->gpu_state != GPU_FAILED;
}

const char *
GeoaccServiceGpuMessage(void)
{
	return arena->gpu_state == GPU_FAILED ? arena->gpu_message : NULL;
}

bool
GeoaccServiceGpu(int *device, uint64 *device_memory, uint64 *available)
{
	if (geoacc_service_mode != GEOACC_SERVICE_GPU || arena->gpu_state != GPU_READY)
		return false;
	*device = arena->gpu_device;
	*device_memory = arena->gpu_memory;
	*available = arena->gpu_available;
	return true;
}

bool
GeoaccCallsGpu(int *device, uint64 *device_memory)
{
	uint64		available;

	if (GeoaccServiceActive())
		return GeoaccServiceGpu(device, device_memory, &available);
	*device = geoacc_gpu_current_device();
	*device_memory = geoacc_gpu_device_memory();
	return *device >= 0;
}

/* Wake the device processes: a request was queued, or a held thing abandoned. */
static void
WakeDeviceProcesses(void)
{
	__atomic_fetch_add(&arena->queue_seq, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &arena->queue_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* ------------------------------------------------------- calls (backends) */

/*
 * At the backend's exit: what it still holds of the service memory.  An
 * on_shmem_exit callback, so after the transaction's cleanup at exit, which
 * frees what memory contexts hold.
 */
static void
ServiceBackendExit(int code, Datum arg)
{
	if (arena == NULL || MyBackendId <= 0)
		return;
	GeoaccSnapshotUnpin();
	Lock();
	FreeOwnerLocked(MyBackendId);
	Unlock();
}

/* Whether any device process runs. */
static bool
DeviceProcessRunning(void)
{
	for (int p = 0; p < arena->nprocs; p++)
	{
		int			pid = arena->procs[p].pid;

		if (pid > 0 && kill(pid, 0) == 0)
			return true;
	}
	return false;
}

GeoaccStatus
GeoaccServiceRun(const GeoaccWork *work, uint64 reservation)
{
	ServiceSlot *slot;
	void	   *arg;
	instr_time	start;
	GeoaccStatus status;

	if (MyBackendId <= 0 || MyBackendId > arena->nslots)
		elog(ERROR, "geoacc: this process cannot call the geoacc service");
	slot = &arena->slots[MyBackendId - 1];
	arg = GeoaccWorkAlloc(work->arg_size);
	memcpy(arg, work->arg, work->arg_size);

	Lock();
	slot->state = SLOT_QUEUED;
	slot->cancel = 0;
	slot->backend_id = MyBackendId;
	slot->latch = MyLatch;
	slot->seq = arena->next_seq++;
	slot->run = work->run;
	slot->arg = arg;
	slot->memory_limit = geoacc_gpu_memory_limit_mb > 0 ? (uint64) geoacc_gpu_memory_limit_mb * 1024 * 1024 : 0;
	slot->reservation = reservation;
	slot->status = GEOACC_OK;
	slot->message[0] = '\0';
	slot->runner = -1;
	Unlock();
	/* every device process looks: the request may be for the one that holds the caller's join */
	WakeDeviceProcesses();

	/*
	 * Wait for the work to be done.  Interrupts are not served here: a
	 * cancel asks the work to stop, and the ERROR comes once it has (the
	 * inputs are this backend's memory and stay until then).
	 */
	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		int			rc;

		pg_read_barrier();
		if (slot->state == SLOT_DONE)
			break;
		if ((QueryCancelPending || ProcDiePending) && !slot->cancel)
			slot->cancel = 1;
		if (slot->state == SLOT_QUEUED && !DeviceProcessRunning() && GeoaccMsSince(start) > START_WAIT_MS)
		{
			bool		withdrawn = false;

			Lock();
			if (slot->state == SLOT_QUEUED)
			{
				slot->state = SLOT_DONE;
				slot->status = GEOACC_ERR_SERVICE;
				snprintf(slot->message, sizeof(slot->message),
						 "The geoacc service has not been running for %d s.", START_WAIT_MS / 1000);
				withdrawn = true;
			}
			Unlock();
			if (withdrawn)
				break;
		}
		rc = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_POSTMASTER_DEATH, 100, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		if (rc & WL_POSTMASTER_DEATH)
		{
			/* the device process goes with its supervisor: nothing touches the inputs after that */
			for (int i = 0; i < 500 && DeviceProcessRunning(); i++)
				pg_usleep(10000L);
			proc_exit(1);
		}
	}
	pg_read_barrier();
	status = slot->status;
	geoacc_set_status_message(slot->message);
	memcpy(work->arg, arg, work->arg_size);
	slot->state = SLOT_FREE;
	GeoaccWorkFree(arg);
	return status;
}

/* ------------------------------------------------------------- snapshots */

/* Pinned by some caller (lock held). */
static bool
SnapshotPinned(const SnapshotEntry *e)
{
	for (int s = 0; s < arena->nslots; s++)
		if (arena->slots[s].pinned == e)
			return true;
	return false;
}

/* Free the dropped entries no caller reads (lock held). */
static void
SnapshotsCollect(void)
{
	uint64	   *link = &arena->snapshots;

	while (*link)
	{
		SnapshotEntry *e = (SnapshotEntry *) (Base() + *link);

		if (e->dropped && !SnapshotPinned(e))
		{
			*link = e->next;
			FreeLocked(HeaderOf(e->data));
			FreeLocked(HeaderOf(e));
		}
		else
			link = &e->next;
	}
}

static SnapshotEntry *
SnapshotFind(Oid database, Oid catalog, int64 id, int64 generation)
{
	for (uint64 o = arena->snapshots; o; o = ((SnapshotEntry *) (Base() + o))->next)
	{
		SnapshotEntry *e = (SnapshotEntry *) (Base() + o);

		if (!e->dropped && e->database == database && e->catalog == catalog && e->id == id &&
			e->generation == generation)
			return e;
	}
	return NULL;
}

static ServiceSlot *
MySlot(void)
{
	if (!GeoaccServiceActive() || MyBackendId <= 0 || MyBackendId > arena->nslots)
		elog(ERROR, "geoacc: this process cannot use geoacc snapshots");
	return &arena->slots[MyBackendId - 1];
}

/* Pin e for this backend, in place of what it pinned before (lock held). */
static void
PinLocked(SnapshotEntry *e)
{
	arena->slots[MyBackendId - 1].pinned = e;
	SnapshotsCollect();
}

void *
GeoaccSnapshotPin(Oid database, Oid catalog, int64 id, int64 generation)
{
	SnapshotEntry *e;

	(void) MySlot();
	Lock();
	e = SnapshotFind(database, catalog, id, generation);
	PinLocked(e);
	Unlock();
	return e ? e->data : NULL;
}

void *
GeoaccSnapshotPublish(Oid database, Oid catalog, int64 id, int64 generation, void *data)
{
	SnapshotEntry *e;
	Block	   *b = HeaderOf(data);

	(void) MySlot();

	Lock();
	e = SnapshotFind(database, catalog, id, generation);
	if (e == NULL && (e = AllocLocked(sizeof(SnapshotEntry), OWNER_SNAPSHOT)) != NULL)
	{
		/* the data block is no longer its memory context's to free */
		if (b->holder)
			((WorkHolder *) b->holder)->ptr = NULL;
		b->holder = NULL;
		b->owner = OWNER_SNAPSHOT;
		*e = (SnapshotEntry) {arena->snapshots, database, catalog, id, generation, data, false, ++arena->next_serial};
		arena->snapshots = OffsetOf(e);
	}
	if (e)
		PinLocked(e);
	Unlock();
	if (e == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of geoacc service memory")));
	/* another backend published the same generation first: its data serves, ours goes with its context */
	return e->data;
}

void
GeoaccSnapshotUnpin(void)
{
	if (arena == NULL || am_device_process || MyBackendId <= 0 || MyBackendId > arena->nslots)
		return;
	Lock();
	arena->slots[MyBackendId - 1].pinned = NULL;
	SnapshotsCollect();
	Unlock();
}

void
GeoaccSnapshotForget(Oid database, Oid catalog, int64 id, int64 from_generation, int64 to_generation)
{
	if (arena == NULL)
		return;
	Lock();
	for (uint64 o = arena->snapshots; o; o = ((SnapshotEntry *) (Base() + o))->next)
	{
		SnapshotEntry *e = (SnapshotEntry *) (Base() + o);

		if (e->database == database && e->catalog == catalog && e->id == id && e->generation >= from_generation &&
			e->generation <= to_generation)
			e->dropped = true;
	}
	SnapshotsCollect();
	Unlock();
}

void
GeoaccSnapshotForgetAll(Oid database, Oid catalog)
{
	if (arena == NULL)
		return;
	Lock();
	for (uint64 o = arena->snapshots; o; o = ((SnapshotEntry *) (Base() + o))->next)
	{
		SnapshotEntry *e = (SnapshotEntry *) (Base() + o);

		if (e->database == database && (!OidIsValid(catalog) || e->catalog == catalog))
			e->dropped = true;
	}
	SnapshotsCollect();
	Unlock();
}

void
GeoaccSnapshotPinnedResidence(uint64 *serial, int *copies, uint64 *device_bytes)
{
	const SnapshotEntry *e;

	*serial = 0;
	*copies = 0;
	*device_bytes = 0;
	if (arena == NULL || am_device_process || MyBackendId <= 0 || MyBackendId > arena->nslots)
		return;
	Lock();
	e = arena->slots[MyBackendId - 1].pinned;
	if (e)
	{
		uint32		by = 0;

		*serial = e->serial;
		for (int v = 0; v < GEOACC_KEPT_VARIANTS; v++)
			by |= e->kept_by[v];
		*copies = pg_popcount32(by);
		for (int p = 0; p < MAX_DEVICE_PROCESSES; p++)
			*device_bytes += e->device_bytes[p];
	}
	Unlock();
}

bool
GeoaccSnapshotKeptEverywhere(uint64 serial, int variant)
{
	bool		everywhere = false;

	if (arena == NULL || serial == 0)
		return false;
	Lock();
	for (uint64 o = arena->snapshots; o; o = ((SnapshotEntry *) (Base() + o))->next)
	{
		const SnapshotEntry *e = (SnapshotEntry *) (Base() + o);

		if (e->serial == serial)
		{
			everywhere = true;
			for (int p = 0; p < arena->nprocs; p++)
				if (arena->procs[p].pid > 0 && !(e->kept_by[variant] & (1u << p)))
					everywhere = false;
		}
	}
	Unlock();
	return everywhere;
}

uint64
GeoaccServiceKeptBytes(void)
{
	uint64		bytes = 0;

	if (arena == NULL)
		return 0;
	for (int p = 0; p < arena->nprocs; p++)
		bytes += arena->procs[p].kept_bytes;
	return bytes;
}

void *
GeoaccServiceKept(uint64 serial, int variant)
{
	for (Kept *k = kept_list; k; k = k->next)
		if (k->serial == serial && k->variant == variant)
			return k->what;
	return NULL;
}

bool
GeoaccServiceMayKeep(void)
{
	return am_device_process;
}

void
GeoaccServiceKeep(uint64 serial, int variant, void *what, uint64 bytes, void (*release) (void *what))
{
	Kept	   *k = malloc(sizeof(Kept));

	if (k == NULL)
	{
		release(what);
		return;
	}
	*k = (Kept) {kept_list, serial, variant, what, bytes, release};
	kept_list = k;
	Lock();
	for (uint64 o = arena->snapshots; o; o = ((SnapshotEntry *) (Base() + o))->next)
	{
		SnapshotEntry *e = (SnapshotEntry *) (Base() + o);

		if (e->serial == serial)
		{
			e->kept_by[variant] |= 1u << my_index;
			e->device_bytes[my_index] += bytes;
		}
	}
	arena->procs[my_index].kept++;
	arena->procs[my_index].kept_bytes += bytes;
	Unlock();
}

void
GeoaccServiceKeptResize(uint64 serial, int variant, uint64 bytes)
{
	for (Kept *k = kept_list; k; k = k->next)
	{
		if (k->serial != serial || k->variant != variant || k->bytes == bytes)
			continue;
		Lock();
		for (uint64 o = arena->snapshots; o; o = ((SnapshotEntry *) (Base() + o))->next)
		{
			SnapshotEntry *e = (SnapshotEntry *) (Base() + o);

			if (e->serial == serial)
				e->device_bytes[my_index] = e->device_bytes[my_index] - k->bytes + bytes;
		}
		arena->procs[my_index].kept_bytes = arena->procs[my_index].kept_bytes - k->bytes + bytes;
		k->bytes = bytes;
		Unlock();
	}
}

/*
 * Release what this process keeps of snapshots whose entries are gone
 * (lock held: released around the releases).  An entry dropped but still
 * pinned keeps its copies: its readers' next calls use them.
 */
static void
ReleaseGoneSnapshots(void)
{
	Kept	  **link = &kept_list;
	Kept	   *gone = NULL;

	while (*link)
	{
		Kept	   *k = *link;
		bool		found = false;

		for (uint64 o = arena->snapshots; o && !found; o = ((SnapshotEntry *) (Base() + o))->next)
			found = ((SnapshotEntry *) (Base() + o))->serial == k->serial;
		if (found)
		{
			link = &k->next;
			continue;
		}
		*link = k->next;
		k->next = gone;
		gone = k;
		arena->procs[my_index].kept--;
		arena->procs[my_index].kept_bytes -= k->bytes;
	}
	if (gone == NULL)
		return;
	Unlock();
	while (gone)
	{
		Kept	   *k = gone;

		gone = k->next;
		k->release(k->what);
		free(k);
	}
	Lock();
}

/* ------------------------------------------------------ the device process */

static int
DeviceProcessInterrupt(void)
{
	return current_slot >= 0 && arena->slots[current_slot].cancel;
}

void
GeoaccServiceHold(void *held, void (*release) (void *held))
{
	ServiceSlot *slot;

	if (!am_device_process || current_slot < 0)
		return;
	slot = &arena->slots[current_slot];
	/* one thing held per caller: an earlier one it did not abandon goes now */
	if (slot->held && slot->held != held)
		slot->release(slot->held);
	slot->held = held;
	slot->release = release;
	slot->held_by = my_index;
}

bool
GeoaccServiceHolds(const void *held)
{
	const ServiceSlot *slot;

	if (!am_device_process || current_slot < 0 || held == NULL)
		return false;
	slot = &arena->slots[current_slot];
	return slot->held == held && slot->held_by == my_index;
}

/* Release what callers have abandoned of what this process holds (lock held: released around each release). */
static void
ReleaseAbandoned(void)
{
	for (int s = 0; s < arena->nslots; s++)
	{
		ServiceSlot *slot = &arena->slots[s];

		if (slot->held && slot->held_by != my_index)
			continue;
		if (slot->abandoned && slot->held)
		{
			void	   *held = slot->held;

			slot->held = NULL;
			slot->abandoned = 0;
			Unlock();
			slot->release(held);
			Lock();
		}
		else
			slot->abandoned = 0;
	}
}

void
GeoaccServiceAbandon(void)
{
	ServiceSlot *slot;

	if (!GeoaccServiceActive() || MyBackendId <= 0 || MyBackendId > arena->nslots)
		return;
	slot = &arena->slots[MyBackendId - 1];
	Lock();
	slot->abandoned = 1;
	Unlock();
	WakeDeviceProcesses();
}

/*
 * The oldest queued request this process may run (lock held): one of a
 * caller for which another process holds something (its open join) is that
 * process's; -1: none.
 */
static int
NextQueued(void)
{
	int			best = -1;

	for (int s = 0; s < arena->nslots; s++)
	{
		const ServiceSlot *slot = &arena->slots[s];

		if (slot->state == SLOT_QUEUED && (slot->held == NULL || slot->held_by == my_index) &&
			(best < 0 || slot->seq < arena->slots[best].seq))
			best = s;
	}
	return best;
}

static void
InitGpu(void)
{
	const GeoaccDeviceList *list = geoacc_gpu_device_list;
	GeoaccStatus status;

	if (geoacc_service_mode != GEOACC_SERVICE_GPU)
		return;
	geoacc_gpu_choose_device(list ? list->ordinals : NULL, list ? list->count : 0, 0);
	geoacc_gpu_keep_freed_memory(KEPT_FREED_DEVICE_MEMORY);
	status = geoacc_gpu_init();
	Lock();
	if (status == GEOACC_OK)
	{
		arena->gpu_device = geoacc_gpu_current_device();
		arena->gpu_memory = geoacc_gpu_device_memory();
		arena->gpu_available = geoacc_gpu_memory_available();
		arena->gpu_state = GPU_READY;
	}
	else
	{
		strlcpy(arena->gpu_message, geoacc_status_message(), sizeof(arena->gpu_message));
		arena->gpu_state = GPU_FAILED;
	}
	Unlock();
	if (status != GEOACC_OK)
		fprintf(stderr, "geoacc service: no usable GPU: %s\n", geoacc_status_message());
}

static void
RunRequest(int s)
{
	ServiceSlot *slot = &arena->slots[s];
	GeoaccDevice device = geoacc_service_mode == GEOACC_SERVICE_GPU ? GEOACC_DEVICE_GPU : GEOACC_DEVICE_CPU;
	GeoaccStatus status;

	if (device == GEOACC_DEVICE_GPU && arena->gpu_state != GPU_READY)
	{
		status = GEOACC_ERR_NO_DEVICE;
		geoacc_set_status_message(arena->gpu_message);
	}
	else
	{
		geoacc_gpu_set_memory_limit(slot->memory_limit);
		geoacc_gpu_set_reservation(slot->reservation);
		status = slot->run(device, slot->arg);
		geoacc_gpu_set_reservation(0);
	}

	Lock();
	strlcpy(slot->message, geoacc_status_message(), sizeof(slot->message));
	slot->status = status;
	RetagLocked(OWNER_OF_REQUEST(s), slot->backend_id);
	arena->calls++;
	arena->failures += status != GEOACC_OK;
	current_slot = -1;
	pg_write_barrier();
	slot->state = SLOT_DONE;
	Unlock();
	SetLatch(slot->latch);
	/* a CUDA error that leaves the context unusable: a fresh process gets a fresh context */
	if (status == GEOACC_ERR_CUDA && geoacc_gpu_disabled())
	{
		fprintf(stderr, "geoacc service: the CUDA context is unusable after an error (%s); restarting\n",
				slot->message);
		_exit(2);
	}
}

static void
DeviceProcessMain(int index, int supervisor)
{
	sigset_t	all;

	am_device_process = true;
	my_index = index;
	MyProcPid = getpid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != supervisor)
		_exit(1);
	/* none of the server's signal handlers: a plain process, stopped by SIGTERM or SIGKILL */
	signal(SIGTERM, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	set_ps_display(geoacc_service_mode == GEOACC_SERVICE_GPU ? "device process (GPU)" : "device process (CPU)");

	geoacc_set_shared_memory(DeviceProcessAlloc, ReleaseShared, arena, arena_size);
	geoacc_set_interrupt_callback(DeviceProcessInterrupt);
	InitGpu();

	for (;;)
	{
		int			s;

		Lock();
		ReleaseAbandoned();
		ReleaseGoneSnapshots();
		while ((s = NextQueued()) < 0)
		{
			/* read under the lock: a request queued after it changes it, and the wait returns at once */
			uint32		seen = arena->queue_seq;
			struct timespec second = {1, 0};

			Unlock();
			syscall(SYS_futex, &arena->queue_seq, FUTEX_WAIT, seen, &second, NULL, 0);
			if (getppid() != supervisor)
				_exit(1);
			Lock();
			ReleaseAbandoned();
			ReleaseGoneSnapshots();
		}
		arena->slots[s].state = SLOT_RUNNING;
		arena->slots[s].runner = my_index;
		current_slot = s;
		Unlock();
		RunRequest(s);
	}
}

/* ---------------------------------------------------------- the supervisor */

static void
ServiceChildExited(SIGNAL_ARGS)
{
	int			save_errno = errno;

	SetLatch(MyLatch);
	errno = save_errno;
}

static int
StartDeviceProcess(int index)
{
	int			supervisor = MyProcPid;
	pid_t		pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		DeviceProcessMain(index, supervisor);
	if (pid < 0)
	{
		ereport(LOG, (errmsg("geoacc service: could not start a device process: %m")));
		return 0;
	}
	Lock();
	arena->procs[index].pid = pid;
	arena->procs[index].started_at = GetCurrentTimestamp();
	arena->starts++;
	arena->started_at = arena->procs[index].started_at;
	Unlock();
	return pid;
}

/*
 * The device process is gone: the calls it was running fail (their callers
 * see a failed GPU: an ERROR, or under auto the CPU), and what it took for
 * them is freed.  Queued calls wait for the next device process.
 */
static void
DeviceProcessGone(int index, int pid, int wstatus)
{
	int			lost = 0;

	Lock();
	for (int s = 0; s < arena->nslots; s++)
	{
		ServiceSlot *slot = &arena->slots[s];

		if (slot->held && slot->held_by == index)
			slot->held = NULL;
		if (slot->state != SLOT_RUNNING || slot->runner != index)
			continue;
		FreeOwnerLocked(OWNER_OF_REQUEST(s));
		slot->status = GEOACC_ERR_SERVICE;
		snprintf(slot->message, sizeof(slot->message),
				 "Its device process (pid %d) stopped during the call; it is started again.", pid);
		pg_write_barrier();
		slot->state = SLOT_DONE;
		SetLatch(slot->latch);
		lost++;
	}
	arena->lost += lost;
	arena->procs[index].pid = 0;
	arena->procs[index].kept = 0;
	arena->procs[index].kept_bytes = 0;
	for (uint64 o = arena->snapshots; o; o = ((SnapshotEntry *) (Base() + o))->next)
	{
		SnapshotEntry *e = (SnapshotEntry *) (Base() + o);

		for (int v = 0; v < GEOACC_KEPT_VARIANTS; v++)
			e->kept_by[v] &= ~(1u << index);
		e->device_bytes[index] = 0;
	}
	Unlock();
	if (WIFSIGNALED(wstatus))
		ereport(LOG,
				(errmsg("geoacc service: the device process (pid %d) was terminated by signal %d; %d call%s in "
						"progress failed; starting it again", pid, WTERMSIG(wstatus), lost, lost == 1 ? "" : "s")));
	else
		ereport(LOG,
				(errmsg("geoacc service: the device process (pid %d) exited with code %d; %d call%s in progress "
						"failed; starting it again", pid, WEXITSTATUS(wstatus), lost, lost == 1 ? "" : "s")));
}

void		GeoaccServiceMain(Datum arg);

void
GeoaccServiceMain(Datum arg)
{
	TimestampTz next_start[MAX_DEVICE_PROCESSES] = {0};

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGCHLD, ServiceChildExited);
	BackgroundWorkerUnblockSignals();

	Lock();
	arena->supervisor_pid = MyProcPid;
	Unlock();
	/* the device processes of an earlier supervisor (killed with it) are gone before new ones start */
	WaitForOldDeviceProcesses();
	for (int p = 0; p < MAX_DEVICE_PROCESSES; p++)
		arena->procs[p].pid = 0;

	while (!ShutdownRequestPending)
	{
		int			wstatus;
		pid_t		pid;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		for (int p = 0; p < arena->nprocs; p++)
			if (arena->procs[p].pid == 0 && GetCurrentTimestamp() >= next_start[p])
				StartDeviceProcess(p);
		while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0)
			for (int p = 0; p < arena->nprocs; p++)
				if (arena->procs[p].pid == pid)
				{
					bool		lived = TimestampDifferenceExceeds(arena->procs[p].started_at, GetCurrentTimestamp(),
																   CRASH_LOOP_MS);

					DeviceProcessGone(p, pid, wstatus);
					/* a process that cannot live (a broken driver) is not started over and over */
					next_start[p] = lived ? 0 : TimestampTzPlusMilliseconds(GetCurrentTimestamp(), 1000);
				}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	for (int p = 0; p < arena->nprocs; p++)
	{
		int			pid = arena->procs[p].pid;
		int			wstatus;

		if (pid <= 0)
			continue;
		kill(pid, SIGKILL);
		if (waitpid(pid, &wstatus, 0) == pid)
			DeviceProcessGone(p, pid, wstatus);
	}
	/* not 0: the postmaster starts the supervisor again unless the server is stopping */
	proc_exit(1);
}

/* ------------------------------------------------------------ visibility */

/*
 * Test support, declared only by the service's TAP test: leave the service
 * memory as a device process killed in the middle of a change may leave it
 * (the free list lost, the links to previous blocks stale, a free block
 * split without its rest listed, the bytes in use wrong), repair it as the
 * next Lock() after such a death does, and check the result: every block
 * linked to the one before it, no two free blocks side by side, exactly the
 * free blocks listed, the bytes in use as before.
 */
PG_FUNCTION_INFO_V1(geoacc_test_service_repair);
Datum
geoacc_test_service_repair(PG_FUNCTION_ARGS)
{
	uint64		used;
	uint64		listed = 0;
	uint64		free_blocks = 0;
	uint64		prev = 0;
	bool		ok = true;

	void	   *blocks[6];

	if (arena == NULL)
		elog(ERROR, "geoacc: the service is off");
	/* blocks in use with free ones between them */
	for (int i = 0; i < 6; i++)
		blocks[i] = GeoaccWorkAlloc(1000 * (i + 1));
	GeoaccWorkFree(blocks[1]);
	GeoaccWorkFree(blocks[3]);
	Lock();
	used = arena->used;
	for (uint64 o = arena->first_block; o < arena->size; o += BlockAt(o)->size)
	{
		Block	   *b = BlockAt(o);

		b->prev_size = 0;
		if (b->owner == OWNER_FREE && b->size >= 4 * sizeof(Block))
		{
			/* split as AllocLocked does, up to the store that shrinks the block */
			Block	   *rest = (Block *) ((char *) b + 2 * sizeof(Block));

			rest->size = b->size - 2 * sizeof(Block);
			rest->magic = BLOCK_MAGIC;
			rest->owner = OWNER_FREE;
			rest->holder = NULL;
			b->size = 2 * sizeof(Block);
		}
	}
	arena->free_head = 0;
	arena->used = 0;
	RepairLocked();
	for (uint64 o = arena->first_block; o < arena->size; o += BlockAt(o)->size)
	{
		Block	   *b = BlockAt(o);

		ok &= b->prev_size == (prev ? o - prev : 0);
		ok &= !(b->owner == OWNER_FREE && prev && BlockAt(prev)->owner == OWNER_FREE);
		free_blocks += b->owner == OWNER_FREE;
		prev = o;
	}
	for (uint64 o = arena->free_head; o; o = BlockAt(o)->next_free)
	{
		ok &= BlockAt(o)->owner == OWNER_FREE;
		listed++;
	}
	ok &= listed == free_blocks && free_blocks >= 3 && arena->used == used;
	Unlock();
	for (int i = 0; i < 6; i++)
		if (i != 1 && i != 3)
			GeoaccWorkFree(blocks[i]);
	PG_RETURN_BOOL(ok);
}

/*
 * geoacc_service(): the service's mode, processes, GPU, memory and calls;
 * one row, all NULL but the mode when the service is off
 */
PG_FUNCTION_INFO_V1(geoacc_service);
Datum
geoacc_service(PG_FUNCTION_ARGS)
{
	static const char *const modes[] = {"off", "gpu", "cpu"};
	TupleDesc	desc;
	Datum		values[18];
	bool		nulls[18];
	int			queued = 0,
				running = 0;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	memset(nulls, true, sizeof(nulls));
	values[0] = CStringGetTextDatum(modes[geoacc_service_mode]);
	nulls[0] = false;
	if (arena != NULL)
	{
		const char *gpu;

		Lock();
		for (int s = 0; s < arena->nslots; s++)
		{
			queued += arena->slots[s].state == SLOT_QUEUED;
			running += arena->slots[s].state == SLOT_RUNNING;
		}
		gpu = geoacc_service_mode == GEOACC_SERVICE_CPU ? "none (cpu mode)" :
			arena->gpu_state == GPU_READY ? "ready" : arena->gpu_state == GPU_FAILED ? "failed" : "starting";
		memset(nulls, false, sizeof(nulls));
		values[1] = Int32GetDatum(arena->supervisor_pid);
		nulls[1] = arena->supervisor_pid == 0;
		{
			Datum		pids[MAX_DEVICE_PROCESSES];
			int			n = 0;

			for (int p = 0; p < arena->nprocs; p++)
				if (arena->procs[p].pid > 0)
					pids[n++] = Int32GetDatum(arena->procs[p].pid);
			values[2] = PointerGetDatum(construct_array(pids, n, INT4OID, sizeof(int32), true, TYPALIGN_INT));
		}
		values[3] = Int64GetDatum(arena->starts);
		values[4] = TimestampTzGetDatum(arena->started_at);
		nulls[4] = arena->starts == 0;
		values[5] = CStringGetTextDatum(gpu);
		values[6] = Int32GetDatum(arena->gpu_device);
		nulls[6] = arena->gpu_state != GPU_READY;
		values[7] = CStringGetTextDatum(arena->gpu_message);
		nulls[7] = arena->gpu_state != GPU_FAILED;
		values[8] = Int32GetDatum(queued);
		values[9] = Int32GetDatum(running);
		values[10] = Int64GetDatum(arena->calls);
		values[11] = Int64GetDatum(arena->failures);
		values[12] = Int64GetDatum(arena->lost);
		values[13] = Int64GetDatum((int64) arena->size);
		values[14] = Int64GetDatum((int64) arena->used);
		values[15] = Int64GetDatum((int64) arena->peak);
		{
			int			kept = 0;
			uint64		kept_bytes = 0;

			for (int p = 0; p < arena->nprocs; p++)
			{
				kept += arena->procs[p].kept;
				kept_bytes += arena->procs[p].kept_bytes;
			}
			values[16] = Int32GetDatum(kept);
			values[17] = Int64GetDatum((int64) kept_bytes);
		}
		Unlock();
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
