/*
 * geoacc.h
 *
 * Declarations shared by the PostgreSQL glue in src/: settings, the device
 * layer (choosing a device, turning core statuses into ERRORs), the life
 * of a call (device, memory budget, retry on the CPU, statistics), inner
 * queries, the decoding of PostGIS geometries, and PostGIS rasters as bytes.
 */
#ifndef GEOACC_H
#define GEOACC_H

#include "postgres.h"

#include "fmgr.h"
#include "access/tupdesc.h"
#include "portability/instr_time.h"

#include "geoacc_core.h"

/* GEOACC_VERSION comes from the control file's default_version (Makefile) */

/* ------------------------------------------------------------ settings */

typedef enum GeoaccDeviceSetting
{
	GEOACC_SETTING_AUTO,
	GEOACC_SETTING_GPU,
	GEOACC_SETTING_CPU
} GeoaccDeviceSetting;

extern int	geoacc_device_setting;
extern int	geoacc_gpu_threshold;
extern int	geoacc_cpu_threads;
extern int	geoacc_gpu_memory_limit_mb;	/* -1: automatic */
extern int	geoacc_gpu_memory_total_mb;	/* -1: automatic */
extern int	geoacc_gpu_memory_wait_ms;

/* CUDA ordinals geoacc.gpu_devices may list, and GPUs the memory budget counts: 0 .. this - 1 */
#define GEOACC_MAX_DEVICES 1024

/* geoacc.gpu_devices, parsed: the CUDA ordinals a session picks from (count 0: every visible device) */
typedef struct GeoaccDeviceList
{
	int			count;
	int			ordinals[FLEXIBLE_ARRAY_MEMBER];
} GeoaccDeviceList;

extern const GeoaccDeviceList *geoacc_gpu_device_list;

/* ------------------------------------------------------ device (device.c) */

void		GeoaccDeviceInit(void);

/*
 * The device for a call doing `work` units (points, cells, pairs): the CPU
 * when geoacc.device = cpu, or for auto when the work is below
 * geoacc.gpu_threshold or no GPU is usable; the GPU otherwise.  With
 * geoacc.device = gpu and no usable GPU this raises an ERROR.
 */
GeoaccDevice GeoaccChooseDevice(int64 work);

/* The same for this backend's own GPU, whether or not there is a service (work it cannot hand over). */
GeoaccDevice GeoaccChooseLocalDevice(int64 work);

/* Raise the ERROR a failed core status stands for; return on GEOACC_OK. */
void		GeoaccCheck(GeoaccStatus status);

/* The WARNING, once per session, that a CUDA error disabled the GPU. */
void		GeoaccWarnIfDisabled(void);

/*
 * Device memory one operation may use: with the server's memory budget the
 * most a call may reserve, else what the cap leaves now (0 without a GPU).
 */
uint64		GeoaccDeviceMemoryAvailable(void);

/*
 * Device memory owned by CurrentMemoryContext: freed when the context is
 * reset or deleted, which includes statement abort.
 */
void	   *GeoaccDeviceAllocInContext(uint64 bytes);

/* Milliseconds since `start` (for the stages that calls report at DEBUG1). */
static inline double
GeoaccMsSince(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/* ------------------------------------------ the life of a call (call.c) */

/* One SQL-level call: which function, on which device, how long. */
typedef struct GeoaccCall
{
	const char *function;
	GeoaccDevice device;
	int64		items;
	instr_time	start;
	bool		fell_back;		/* moved to the CPU: the GPU failed, or the memory budget was taken */
	bool		waited;			/* waited for the memory budget */
	double		wait_ms;
} GeoaccCall;

/*
 * A step of a call's work: a core function run on one device, with its
 * inputs and outputs in arg.  It must write its whole output each time it
 * runs (the CPU may run it again after the GPU failed), unless
 * adds_to_output: then it adds to its output, and only a failure to
 * allocate, which the core reports before writing anything, runs it again.
 */
typedef GeoaccStatus (*GeoaccCoreRun) (GeoaccDevice device, void *arg);

typedef struct GeoaccWork
{
	GeoaccCoreRun run;
	void	   *arg;
	GeoaccDeviceNeed need;		/* the device memory it asks the budget for */
	bool		adds_to_output;
	/*
	 * The size of *arg, for a work the GPU service may run: run() calls the
	 * core only, and *arg holds its small inputs and outputs by value and
	 * points only into work memory (GeoaccWorkAlloc).  0: the work runs in
	 * the backend (its run() calls back into PostgreSQL).
	 */
	Size		arg_size;
	/*
	 * A run() in the backend that hands its GPU parts to the service itself
	 * when there is one (the segment join, which streams its rows).
	 */
	bool		hands_over;
} GeoaccWork;

/*
 * A call of `function` doing `items` units of work (points, cells, pairs):
 * choose the device for that much work and start the clock.
 */
void		GeoaccCallBegin(GeoaccCall *call, const char *function, int64 items);

/*
 * Run one step: reserve its device memory, run it on the call's device;
 * when the GPU fails under geoacc.device = auto (out of device memory, a
 * CUDA error, the GPU disabled), move the call to the CPU, with a LOG line,
 * and run it again there, which gives the same bits; give the reservation
 * back; raise the ERROR of a failed status.
 */
void		GeoaccCallStep(GeoaccCall *call, const GeoaccWork *work);

/* Stop the clock, give back any reservation and record the call in the statistics. */
void		GeoaccCallEnd(GeoaccCall *call);

/* A call of one step: begin, step, end.  Returns the device it ran on. */
GeoaccDevice GeoaccCallRun(const char *function, int64 items, const GeoaccWork *work);

/*
 * The device a call ran on, as its DEBUG1 line names it: "GPU", "CPU", or,
 * for GPU work handed to a service in geoacc.service = cpu, "service CPU".
 */
const char *GeoaccDeviceName(GeoaccDevice device);

/*
 * Where a call's time went, for its DEBUG1 line: named stages (string
 * literals), each the sum of the laps or times added to it, in the order
 * first seen.
 */
#define GEOACC_MAX_STAGES 12

typedef struct GeoaccStages
{
	instr_time	start;
	instr_time	lap;
	int			count;
	const char *names[GEOACC_MAX_STAGES];
	double		ms[GEOACC_MAX_STAGES];
} GeoaccStages;

/* Start the clock of the whole and of the first lap. */
void		GeoaccStagesStart(GeoaccStages *stages);

/* Add the time since the last lap (or the start) to `stage`, and start the next lap. */
void		GeoaccStagesLap(GeoaccStages *stages, const char *stage);

/* Start the next lap here: the time since the last one counts in no stage. */
void		GeoaccStagesSkip(GeoaccStages *stages);

/* Add `ms` to `stage`. */
void		GeoaccStagesAdd(GeoaccStages *stages, const char *stage, double ms);

/* The milliseconds of `stage` so far (0 for none). */
double		GeoaccStagesMs(const GeoaccStages *stages, const char *stage);

/* "read 1.2 ms, prepare 0.4 ms, ..., total 2.0 ms", palloc'd. */
char	   *GeoaccStagesText(const GeoaccStages *stages);

/* ------------------------------------------------- statistics (stats.c) */

/* Add a finished call, which took `ms`, to this backend's statistics. */
void		GeoaccStatsRecord(const GeoaccCall *call, double ms);

/* From _PG_init: shared memory for geoacc_backends() when geoacc is preloaded. */
void		GeoaccStatsInit(void);

/* What this backend holds of the memory budget now, for geoacc_backends(). */
void		GeoaccPublishReserved(uint64 bytes);

/* ---------------------------------------------- the GPU service (service.c) */

typedef enum GeoaccServiceMode
{
	GEOACC_SERVICE_OFF,
	GEOACC_SERVICE_GPU,
	GEOACC_SERVICE_CPU			/* the service runs the CPU implementations: tests without a GPU */
} GeoaccServiceMode;

extern int	geoacc_service_mode;
extern int	geoacc_service_memory_mb;	/* -1: half the machine's memory */
extern int	geoacc_service_processes;

/* From _PG_init in the postmaster: the service memory and the supervisor, when geoacc.service is on. */
void		GeoaccServiceInit(void);

/* Whether this process hands GPU work to the service (preloaded, geoacc.service on). */
bool		GeoaccServiceActive(void);

/* With the service: whether it can run GPU work (its GPU is not known to be unusable). */
bool		GeoaccServiceGpuUsable(void);

/* Why the service's GPU is unusable; NULL when it is not known to be. */
const char *GeoaccServiceGpuMessage(void);

/* The service's GPU (ordinal, total memory, what geoacc may use of it); false while unknown. */
bool		GeoaccServiceGpu(int *device, uint64 *device_memory, uint64 *available);

/*
 * The GPU this session's calls use: the service's with the service, else
 * this backend's; false before it is known.
 */
bool		GeoaccCallsGpu(int *device, uint64 *device_memory);

/*
 * Run a work on the service and wait for it: its status, with the core's
 * message set.  `reservation` is what the call holds of the memory budget.
 */
GeoaccStatus GeoaccServiceRun(const GeoaccWork *work, uint64 reservation);

/*
 * In a work's run() in the service: keep `held` for later works of the same
 * caller (an open segment join), released by `release` once the caller
 * abandons it (GeoaccServiceAbandon), or when a work of the caller holds
 * something else (NULL: nothing); gone if the service restarts.  Outside
 * the service nothing happens.
 */
void		GeoaccServiceHold(void *held, void (*release) (void *held));

/*
 * In a work's run() in the service: whether this process holds `held` for
 * the caller (false when the process that held it died: another one runs
 * the work).
 */
bool		GeoaccServiceHolds(const void *held);

/*
 * The caller no longer needs what its works hold in the service: released
 * soon, without waiting (safe in abort callbacks).
 */
void		GeoaccServiceAbandon(void);

/*
 * Snapshots' data (snapshot.c) in the service memory, under (database,
 * catalog table, id of the catalog row, generation of the row).  A backend pins one at a
 * time: what it pins stays until it unpins (or pins another, or exits),
 * even when forgotten meanwhile.
 *
 * Pin: the data under the key, pinned, or NULL (nothing pinned).
 * Publish: `data` (work memory, one block) kept under the key and pinned;
 * if another backend published the key first, its data is returned and
 * `data` stays the caller's memory context's.
 * Forget: the generations from..to of a snapshot go once unpinned.
 * ForgetAll: so do all of a database's, or of one catalog table of it.
 */
void	   *GeoaccSnapshotPin(Oid database, Oid catalog, int64 id, int64 generation);
void	   *GeoaccSnapshotPublish(Oid database, Oid catalog, int64 id, int64 generation, void *data);
void		GeoaccSnapshotUnpin(void);
void		GeoaccSnapshotForget(Oid database, Oid catalog, int64 id, int64 from_generation, int64 to_generation);
void		GeoaccSnapshotForgetAll(Oid database, Oid catalog);

/* Install the hook that forgets the data of dropped databases and catalogs (snapshot.c). */
void		GeoaccSnapshotInit(void);

/*
 * What device processes keep prepared of snapshots for their calls (the
 * points and index of a snapshot of points, copied to the GPU), under the
 * entry's serial, which no other entry has while the service memory lasts.
 * A device process makes such a copy in a call over the snapshot and keeps
 * it (GeoaccServiceKeep) until the entry is gone; its device memory counts
 * against the GPU memory budget (GeoaccServiceKeptBytes).
 *
 * A snapshot may be kept in GEOACC_KEPT_VARIANTS forms (variant): the
 * points of a density raster (0), the segments of a join in X Y (0) or in
 * X Y Z (1).
 *
 * PinnedResidence: of the entry this backend has pinned, its serial (0:
 * none), the device processes that keep it and their device memory.
 * KeptEverywhere: whether every running device process keeps that form.
 * Kept (in a device process): what it keeps of the entry in that form, or
 * NULL.  MayKeep: whether this process is a device process, which may keep
 * things.  KeptResize: what it keeps grew or shrank (a join's index kept
 * with the segments) to `bytes` of device memory.
 */
#define GEOACC_KEPT_VARIANTS 2

void		GeoaccSnapshotPinnedResidence(uint64 *serial, int *copies, uint64 *device_bytes);
bool		GeoaccSnapshotKeptEverywhere(uint64 serial, int variant);
uint64		GeoaccServiceKeptBytes(void);
void	   *GeoaccServiceKept(uint64 serial, int variant);
bool		GeoaccServiceMayKeep(void);
void		GeoaccServiceKeep(uint64 serial, int variant, void *what, uint64 bytes, void (*release) (void *what));
void		GeoaccServiceKeptResize(uint64 serial, int variant, uint64 bytes);

/* A row of a snapshot of meshes (snapshot.c): its id, SRID and welded mesh. */
typedef struct GeoaccSnapshotMesh
{
	int64		id;
	int32		srid;
	GeoaccMesh	mesh;
} GeoaccSnapshotMesh;

/*
 * Work memory: the inputs and outputs of a work, owned by
 * CurrentMemoryContext as palloc'd memory is.  With the service they are in
 * the service memory, which the service reads; else ordinary (huge)
 * allocations.  Free with GeoaccWorkFree, resize with GeoaccWorkRealloc.
 */
void	   *GeoaccWorkAlloc(Size size);
void	   *GeoaccWorkAllocZero(Size size);
void	   *GeoaccWorkRealloc(void *p, Size size);
void		GeoaccWorkFree(void *p);
bool		GeoaccInServiceMemory(const void *p);

/*
 * An array the core reads, in work memory: as it is when it is there
 * already (without the service, or made there, such as a mesh the core
 * read in this backend), else a copy owned by CurrentMemoryContext.
 */
const void *GeoaccWorkCopy(const void *array, Size bytes);

/*
 * Zeroed service memory owned by no memory context, for what the core
 * allocates through a callback during a work, in the service or in the
 * backend (density tiles); NULL when full.  The caller frees it with
 * GeoaccSharedFree (or it goes at the backend's exit).
 */
void	   *GeoaccSharedAllocZero(size_t bytes);
void		GeoaccSharedFree(void *p);

/* ------------------------------------------- the memory budget (budget.c) */

/* From _PG_init: geoacc.gpu_memory_total and geoacc.gpu_memory_wait, shared memory when preloaded. */
void		GeoaccBudgetInit(void);

/* Whether the server's backends share a memory budget (geoacc preloaded). */
bool		GeoaccBudgetActive(void);

/*
 * Before the GPU part of a call allocates anything (call->device GPU; else
 * nothing happens): with the server's memory budget, reserve from its GPU's
 * budget between need.least and need.bytes, each at most the cap of one
 * call (geoacc.gpu_memory_limit), and cap the core at the reservation.
 * When the budget cannot serve that: under geoacc.device = auto the call
 * moves to the CPU (counted as a fallback, with a LOG line); under gpu it
 * waits up to geoacc.gpu_memory_wait, then raises an ERROR.  Without the
 * budget the cap of one call alone holds.  At most one reservation at a
 * time: release it (or end the call) before the next.
 */
void		GeoaccCallReserve(GeoaccCall *call, GeoaccDeviceNeed need);

/* Give the call's reservation back (ERROR, cancel and backend exit do so too). */
void		GeoaccCallRelease(GeoaccCall *call);

/* The device memory one call may use on this session's GPU (0 before it has one). */
uint64		GeoaccCallMemoryCap(void);


/* What the call in progress holds of the budget (0: nothing). */
uint64		GeoaccCallReservation(void);

/* The budget of this session's GPU and what all backends hold of it; false without a budget or a GPU. */
bool		GeoaccBudgetOfMyGpu(uint64 *total, uint64 *reserved);

/* ------------------------------------------ older declarations (upgrade.c) */

/*
 * Raise the ERROR, asking for ALTER EXTENSION geoacc UPDATE, for a call of
 * `function` through the declaration of an older extension script, whose
 * arguments this library does not read as that script passes them.
 */
void		GeoaccOlderDeclaration(const char *function) pg_attribute_noreturn();

/* ------------------------------------------------ geometries (geometry.c) */

/* A LINESTRING read in place from a detoasted PostGIS geometry or geography. */
typedef struct GeoaccLine
{
	int32		srid;
	bool		has_z;
	bool		has_m;
	bool		geodetic;		/* a geography: X, Y are longitude, latitude in degrees */
	int			ndims;			/* 2, 3 or 4: X Y [Z] [M] */
	uint32		npoints;
	const double *coords;		/* npoints * ndims doubles, inside the geometry */
} GeoaccLine;

/* A LINESTRING or a MULTILINESTRING: its lines (one for a LINESTRING). */
typedef struct GeoaccLines
{
	uint32		type;			/* GEOACC_LINETYPE or GEOACC_MULTILINETYPE */
	int32		srid;
	bool		has_z;
	bool		has_m;
	bool		geodetic;
	uint32		nlines;
	GeoaccLine *lines;			/* palloc'd; coordinates inside the geometry */
} GeoaccLines;

/* PostGIS geometry type numbers (liblwgeom.h) */
#define GEOACC_POINTTYPE 1
#define GEOACC_LINETYPE 2
#define GEOACC_POLYGONTYPE 3
#define GEOACC_MULTIPOINTTYPE 4
#define GEOACC_MULTILINETYPE 5
#define GEOACC_MULTIPOLYGONTYPE 6
#define GEOACC_POLYHEDRALSURFACETYPE 13
#define GEOACC_TRIANGLETYPE 14
#define GEOACC_TINTYPE 15

/* SRID of a detoasted geometry (0: none). */
int32		GeoaccGeometrySrid(const struct varlena *geom);

/* Whether a detoasted value is a geography (its geodetic flag). */
bool		GeoaccGeometryIsGeodetic(const struct varlena *geom);

/* Geometry type number of a detoasted geometry, and a name for messages. */
uint32		GeoaccGeometryType(const struct varlena *geom);
const char *GeoaccGeometryTypeName(uint32 type);

/*
 * Read a LINESTRING; anything else raises an ERROR naming `what` (for
 * example "row 12").
 */
void		GeoaccLineFromGeometry(const struct varlena *geom, GeoaccLine *line, const char *what);

/* Read a LINESTRING or a MULTILINESTRING; anything else raises an ERROR naming `what`. */
void		GeoaccLinesFromGeometry(const struct varlena *geom, GeoaccLines *lines, const char *what);

/*
 * The parts of a POINT, LINESTRING, MULTIPOINT or MULTILINESTRING, read in
 * place one at a time as lines (a point is a line of one point, or of none
 * when empty); any other type raises an ERROR naming `what`.
 */
typedef struct GeoaccParts
{
	int32		srid;
	bool		has_z;
	bool		has_m;
	bool		geodetic;
	int			ndims;
	uint32		type;			/* of the whole geometry */
	uint32		nparts;
	uint32		next;			/* parts read so far */
	const uint8 *p;				/* the next part */
	const uint8 *end;
	const char *what;
} GeoaccParts;

void		GeoaccPartsBegin(GeoaccParts *parts, const struct varlena *geom, const char *what);
bool		GeoaccPartsNext(GeoaccParts *parts, GeoaccLine *line);

/*
 * ERROR unless trajectories read from a query (`set` when it had any: of
 * SRID srid, geographies when geodetic, the first named `first`) can be
 * measured with trajectories laid out already (a snapshot's, named `label`:
 * geometries of SRID tracks_srid, with Z where has_z), as reading them
 * after the query would have checked.
 */
void		GeoaccCheckLaidOutTracks(bool set, bool geodetic, int32 srid, const char *first, bool use_z,
									 const char *label, int32 tracks_srid, bool has_z);

/*
 * ERROR unless the line is a trajectory: has M, finite coordinates, M
 * strictly increasing (and for a geography, longitudes and latitudes in
 * range).  `what` names the row in messages; M values are shown with their
 * time.  With `what` NULL, false instead of the ERROR (callers that build
 * the row's name only when they need it check first, then again with it).
 */
bool		GeoaccCheckTrajectory(const GeoaccLine *line, const char *what);

/* A geometry's type and SRID, and for a POINT its coordinates. */
typedef struct GeoaccPoint
{
	uint32		type;			/* GEOACC_POINTTYPE or any other */
	int32		srid;
	bool		has_z;
	bool		has_m;
	bool		empty;			/* always for other types */
	double		coords[4];		/* X Y [Z] [M] of a non-empty point */
} GeoaccPoint;

/*
 * Read a geometry datum that may have a short varlena header (a value read
 * from a table row, PG_DETOAST_DATUM_PACKED) for a point.
 */
void		GeoaccPointFromGeometry(const struct varlena *geom, GeoaccPoint *point);

/* A POINT geometry datum (X Y, or X Y Z) in PostGIS 3's serialized form. */
Datum		GeoaccPointToGeometry(const double *coords, bool has_z, int32 srid);

/* One ring of a polygon, read in place: npoints points of ndims doubles (unaligned: read with memcpy). */
typedef struct GeoaccRing
{
	uint32		npoints;
	int			ndims;
	const uint8 *coords;
} GeoaccRing;

/* Rings of polygons, gathered. */
typedef struct GeoaccRings
{
	int32		srid;			/* of the last geometry read */
	bool		geodetic;
	uint32		count;
	uint32		max_count;
	GeoaccRing *rings;			/* palloc'd */
} GeoaccRings;

/*
 * Append the rings of a POLYGON or MULTIPOLYGON (shells and holes alike) to
 * rings; any other type raises an ERROR naming `what`.
 */
void		GeoaccRingsFromGeometry(const struct varlena *geom, GeoaccRings *rings, const char *what);

/*
 * ST_Simplify's collapsed line: more than two vertices simplified to two
 * with the same XY (within PostGIS's 1e-12), which it returns as NULL.
 */
bool		GeoaccLineCollapsed(uint32 npoints, uint32 kept, double x0, double y0, double x1, double y1);

/*
 * The Z rule of every trajectory function: Z is carried, not measured,
 * unless use_z; then every trajectory must have it (ERROR naming `what`;
 * with `what` NULL, false instead).
 */
bool		GeoaccCheckUseZ(const GeoaccLine *line, bool use_z, const char *what);

/*
 * Ask for transparent huge pages for a large array, as the core does for its
 * own (host_memory.h): first touches of fresh memory then fault once per
 * 2 MB, not once per 4 kB, where the array spans whole huge pages.
 */
#define GEOACC_HUGE_PAGE ((Size) 2 << 20)
void		GeoaccAdviseHugePages(void *p, Size bytes);

/*
 * How messages name a row of a window partition or an aggregate: "row 12",
 * and for a line with M its first vertex's time, "row 12 (starting
 * 2020-06-04 12:00:00+00)".  palloc'd.
 */
char	   *GeoaccRowLabel(int64 row, const struct varlena *geom);

/* Epoch seconds as a UTC timestamp, "2020-06-04 12:00:00+00" (palloc'd); NULL beyond the timestamp range. */
char	   *GeoaccTimeText(double seconds);

/*
 * A new LINESTRING (type GEOACC_LINETYPE, nlines 1) or MULTILINESTRING
 * geometry datum with the given lines, dimensions and SRID, serialized
 * exactly as PostGIS 3 serializes it.
 */
Datum		GeoaccLinesToGeometry(uint32 type, const double *const *coords, const uint32 *npoints, uint32 nlines,
								  bool has_z, bool has_m, int32 srid);

/* -------------------------------------------- geography (geography.c) */

/* A sum of unit vectors of longitudes and latitudes, for the mean direction of a set of points. */
typedef struct GeoaccDirection
{
	double		v[3];
} GeoaccDirection;

void		GeoaccDirectionAdd(GeoaccDirection *sum, double lon, double lat);

/* Vertices of a geography trajectory that simplification projects must lie this close to its centre. */
#define GEOACC_GNOMONIC_MAX_DEGREES 5.0

/*
 * A gnomonic projection centred on a trajectory, scaled to metres by the
 * WGS 84 radii of curvature at the centre (geography.c says why).
 */
typedef struct GeoaccGnomonic
{
	double		centre[3];
	double		east[3];
	double		north[3];
	double		east_scale;
	double		north_scale;
	double		min_cos;
} GeoaccGnomonic;

/* The projection centred on the mean of the directions; false when they cancel out. */
bool		GeoaccGnomonicInit(GeoaccGnomonic *g, const GeoaccDirection *sum);

/*
 * Project a longitude and latitude; false, with the angle from the centre
 * in *degrees, beyond GEOACC_GNOMONIC_MAX_DEGREES.
 */
bool		GeoaccGnomonicProject(const GeoaccGnomonic *g, double lon, double lat, double *x, double *y,
								  double *degrees);

/* Earth-centred Earth-fixed coordinates (metres) on the WGS 84 ellipsoid. */
void		GeoaccEcef(double lon, double lat, double height, double xyz[3]);

/* East-north-up axes at the mean direction of a set of points, over ECEF. */
typedef struct GeoaccEnu
{
	double		origin[3];
	double		east[3];
	double		north[3];
	double		up[3];
} GeoaccEnu;

bool		GeoaccEnuInit(GeoaccEnu *f, const GeoaccDirection *sum);
void		GeoaccEnuProject(const GeoaccEnu *f, double lon, double lat, double height, double enu[3]);


/* ------------------------ trajectory sets of the joins (segment_join.c) */

/*
 * The trajectories of the functions built on the segment join
 * (gpu_segment_join, and the vessel events of events.c): read from an
 * inner query, checked (one SRID, all geometry or all geography, a
 * LINESTRING M or ZM with M increasing), then laid out as the core takes
 * them, in id order.
 */
/* One row's trajectory as read and checked; its points stay in the geometry until laid out. */
typedef struct JoinRow
{
	int64		id;
	uint32		order;			/* among the rows kept, for a stable sort by id */
	GeoaccLine	line;
} JoinRow;

/*
 * The trajectories of one inner query (or array) as read: the rows of at
 * least two points, their geometries (detoasted) in `geometries`, one
 * context for both sides of a call.
 */
typedef struct JoinRows
{
	uint32		count;
	uint32		max_count;
	uint64		npoints;
	JoinRow    *rows;
	MemoryContext geometries;
	char	   *store_next;		/* free room in the current block of geometries read by a query */
	Size		store_left;
	Size		store_block;	/* bytes of the last block */
} JoinRows;

/* The trajectories in the core's layout, in id order, with their ids. */
typedef struct JoinTracks
{
	uint32		count;
	uint64		npoints;
	int64	   *ids;
	uint32	   *offsets;		/* count + 1 */
	double	   *x;
	double	   *y;
	double	   *z;				/* NULL: measured in X Y */
	double	   *m;
} JoinTracks;

/* What every trajectory of a call must share (the SRID, geometry or geography), and the row that set it. */
typedef struct JoinSrid
{
	bool		set;
	int32		srid;
	bool		geodetic;
	char	   *first;
	bool		use_z;			/* measure Z (every trajectory must have it) */
	GeoaccDirection direction;	/* geography: the sum of the points' directions */
} JoinSrid;

/* Start reading trajectories; their geometries are kept in `geometries` until laid out. */
void		GeoaccJoinRowsInit(JoinRows *t, MemoryContext geometries);

/*
 * Keep one row's trajectory (a copy of its geometry): a LINESTRING M or ZM
 * with M increasing, in the SRID of the rows before it; false for one
 * without a segment (not kept).  `label` names it in errors.
 */
bool		GeoaccJoinRowsAdd(JoinRows *t, JoinSrid *srid, int64 id, const struct varlena *geom, const char *label);

/* Run an inner query of (id, traj) rows, argument `argname`, and keep each row's trajectory. */
void		GeoaccJoinRowsFromQuery(JoinRows *t, JoinSrid *srid, const char *sql, const char *argname);

/*
 * The rows' trajectories in the core's layout and in id order (rows->rows
 * sorted so too): Z kept where with_z, the height where use_z, a geography
 * projected to the east-north-up frame.
 */
JoinTracks	GeoaccJoinTracksFromRows(JoinRows *rows, bool with_z, bool use_z, const GeoaccEnu *frame);
GeoaccTrajectories GeoaccJoinTracksView(const JoinTracks *t);

/* ERROR where two trajectories of a self-join share an id. */
void		GeoaccJoinCheckSelfIds(const JoinTracks *t);

/* ERROR for geometry in longitude and latitude: `function` measures in the SRID's units or, for geography, metres. */
void		GeoaccJoinCheckProjected(const JoinSrid *srid, const char *function);

/* A geography's east-north-up frame at the centre of the call's points; false for geometry. */
bool		GeoaccJoinFrame(JoinSrid *srid, GeoaccEnu *frame);

/* A join method by its name (any case); ERROR for an unknown one. */
GeoaccJoinMethod GeoaccJoinMethodFromText(const char *name);

/*
 * The segment join of a_rows' trajectories with b_rows' or, given instead,
 * b_tracks' (a snapshot's, laid out already, b_serial its entry's serial),
 * or with themselves when both are NULL (a_id < b_id), its rows put into
 * the tuplestore.
 */
/*
 * gpu_segment_join_snapshot's join, its arguments those of gpu_segment_join
 * but b_sql: a_sql's trajectories against `tracks` (a snapshot's, `label`
 * in errors, of SRID tracks_srid, with Z where has_z, the serial of its
 * entry in the service memory).
 */
void		GeoaccJoinAgainst(FunctionCallInfo fcinfo, const char *label, const JoinTracks *tracks, uint64 serial,
							  int32 tracks_srid, bool has_z);

struct ReturnSetInfo;
void		GeoaccJoinTrajectories(struct ReturnSetInfo *rsinfo, JoinRows *a_rows, JoinRows *b_rows,
								   const JoinTracks *b_tracks, uint64 b_serial, JoinSrid *srid, double distance,
								   GeoaccJoinMethod method, GeoaccStages *stages);

/* ------------------------------------------ PostGIS rasters (raster_wkb.c) */

/* PostGIS rasters have 16-bit dimensions. */
#define GEOACC_RASTER_MAX_SIDE 65535

/*
 * A raster of grid's width x height pixels (64-bit floats, north row first)
 * over grid's extent, with no nodata value, palloc'd: as raster WKB, and as
 * a PostGIS raster value (the serialized form).
 */
bytea	   *GeoaccRasterWkb(const GeoaccDensityGrid *grid, int32 srid, const double *pixels);
struct varlena *GeoaccRasterSerialized(const GeoaccDensityGrid *grid, int32 srid, const double *pixels);

/* The first band of a raster, read in place. */
typedef struct GeoaccRasterBand
{
	uint32		width;
	uint32		height;
	int			pixtype;
	int			pixel_bytes;
	bool		swap;			/* WKB byte order differs from the host's */
	bool		has_nodata;
	double		nodata;
	const uint8 *pixels;
} GeoaccRasterBand;

/*
 * Read the first band of raster WKB, or of a detoasted PostGIS raster
 * value; what cannot be read raises the ERROR "invalid raster WKB".
 */
void		GeoaccRasterBandFromWkb(const bytea *wkb, GeoaccRasterBand *band);
void		GeoaccRasterBandFromSerialized(const struct varlena *raster, GeoaccRasterBand *band);

/* The band of pixels as GeoaccRasterWkb would write them (doubles, no nodata), read in place. */
void		GeoaccRasterBandOfPixels(const GeoaccDensityGrid *grid, const double *pixels, GeoaccRasterBand *band);

/* Pixel i (row-major, north row first) of a band, as a double; n of them from pixel `first` into out[]. */
double		GeoaccRasterPixel(const GeoaccRasterBand *band, size_t i);
void		GeoaccRasterPixels(const GeoaccRasterBand *band, size_t first, size_t n, double *out);

/*
 * geoacc_raster_png's arguments after the raster (density_raster_png.c):
 * a colormap's name or a ramp, a scale's name, the colour scale's bounds
 * where given (else the band's own), whether zero is transparent.
 */
typedef struct GeoaccHeatmapArgs
{
	const char *colormap;
	const char *scale;
	bool		has_vmin;
	double		vmin;
	bool		has_vmax;
	double		vmax;
	bool		transparent_zero;
} GeoaccHeatmapArgs;

/* The heatmap PNG of a band, palloc'd; the arguments from a call's, from argument `first` on (none NULL but vmin, vmax). */
bytea	   *GeoaccHeatmapPng(const GeoaccRasterBand *band, const GeoaccHeatmapArgs *args);
void		GeoaccHeatmapArgsFromCall(FunctionCallInfo fcinfo, int first, GeoaccHeatmapArgs *args);

/* -------------------------------------- inner SQL queries (inner_query.c) */

/* PostGIS's geometry and geography types (ERROR when PostGIS is not installed). */
Oid			GeoaccGeometryOid(void);
Oid			GeoaccGeographyOid(void);

/*
 * PostGIS's geography(geometry) of a geometry datum: the geography with the
 * same coordinates and its geodetic bounding box, as PostGIS stores it.
 */
Datum		GeoaccGeographyFromGeometry(Datum geometry);

/* The schema of an extension (commands/extension.c keeps its own copy static). */
Oid			GeoaccExtensionSchema(Oid extension);

/* Type of column attnum (1-based) of desc, a domain replaced by its base type. */
Oid			GeoaccColumnType(TupleDesc desc, int attnum);

/* int2, int4 or int8: the types an id column may have; the id as int64. */
bool		GeoaccIsIdType(Oid type);
int64		GeoaccIdFromDatum(Datum datum, Oid type);

/*
 * The one reader of the functions that run a user's inner SQL (pgRouting's
 * pattern): the query must be one SELECT that neither changes data nor
 * locks rows; it runs with the caller's rights, as in a read-only
 * transaction (the functions it calls cannot write either), to completion,
 * its rows handed over as the executor makes them (it may use parallel
 * workers).  Its columns are found by name (case-insensitive; other
 * columns ignored), else by position when it returns just the form's
 * columns, in order; a form's optional columns may be missing.  The first
 * column of every form is an integer id: a NULL id is an ERROR unless
 * null_ids_skipped.
 */
#define GEOACC_QUERY_MAX_COLUMNS 4

typedef struct GeoaccQueryColumn
{
	const char *name;
	bool		(*accepts) (Oid type);	/* the types it may have (domains resolved to their base type) */
	bool		optional;
} GeoaccQueryColumn;

/* One set of columns a query may return (TWED takes values or trajectories). */
typedef struct GeoaccQueryForm
{
	int			ncolumns;
	GeoaccQueryColumn columns[GEOACC_QUERY_MAX_COLUMNS];
} GeoaccQueryForm;

/* A row as the reader hands it over: the matched form's columns, in its order. */
typedef struct GeoaccQueryRow
{
	uint64		number;			/* 1, 2, ... in the order the query returns rows */
	int			form;			/* the index of the form the query's columns matched */
	int64		id;				/* the first column (0 when NULL) */
	Datum		values[GEOACC_QUERY_MAX_COLUMNS];
	bool		nulls[GEOACC_QUERY_MAX_COLUMNS];	/* true for a missing optional column too */
	Oid			types[GEOACC_QUERY_MAX_COLUMNS];	/* InvalidOid for a missing optional column */
} GeoaccQueryRow;

typedef struct GeoaccInnerQuery
{
	const char *argname;		/* the argument that holds the query, naming it in errors: "a_sql" */
	const GeoaccQueryForm *forms;
	int			nforms;
	const char *shape;			/* what the error says it must return: "(id, trajectory)" */
	const char *hint;			/* the column types, for that error */
	bool		null_ids_skipped;	/* hand rows with a NULL id over instead of the ERROR */
	/* called for each row in a memory context reset after it: keep what it needs elsewhere */
	void		(*receive) (const GeoaccQueryRow *row, void *arg);
	void	   *arg;
} GeoaccInnerQuery;

/*
 * Run `sql` (the text of q->argname) and hand each of its rows to
 * q->receive; returns the index of the form its columns matched.
 */
int			GeoaccInnerQueryRead(const GeoaccInnerQuery *q, const char *sql);

/* How errors name a row: "a_sql row 3 (id 7)", palloc'd. */
char	   *GeoaccQueryRowLabel(const GeoaccInnerQuery *q, const GeoaccQueryRow *row);

/* Column types for the forms: PostGIS's geometry or geography; geometry alone. */
bool		GeoaccIsTrajectoryType(Oid type);
bool		GeoaccIsGeometryType(Oid type);

/*
 * PostGIS's box2d(geometry) of a geometry datum, prepared in *fn on first
 * use (fn->fn_oid InvalidOid); NULL for an empty geometry.
 */
void	   *GeoaccGeometryBox2d(FmgrInfo *fn, Datum geometry);

/* true when spatial_ref_sys says the SRID's coordinates are longitude/latitude. */
bool		GeoaccSridIsGeographic(int32 srid);

/*
 * A NOTICE, once per statement, that `function` measures in degrees when
 * the SRID is geographic (PostGIS's rule: geometry in SRID units).
 */
void		GeoaccNoticeIfGeographic(int32 srid, const char *function);

/*
 * The triangles of a mesh geometry: triangle t's three corners are the 9
 * doubles at corners + t * stride, in the geometry value itself (its
 * patches, read in place) or in `copy` (palloc'd, stride 9) when they
 * could not be read in place.
 */
typedef struct GeoaccTriangles
{
	int32		srid;
	uint32		ntriangles;
	const double *corners;
	Size		stride;
	double	   *copy;
} GeoaccTriangles;

/*
 * Read a TIN Z, or a POLYHEDRALSURFACE Z whose patches are triangles (rings
 * of four points, the first repeated last); anything else, M values and
 * non-finite coordinates raise an ERROR naming `what`.  The corners stay
 * valid as long as the geometry value.
 */
void		GeoaccTrianglesFromGeometry(const struct varlena *geom, GeoaccTriangles *out, const char *what);

/*
 * A new TIN Z geometry datum of an indexed mesh's triangles, serialized as
 * PostGIS 3 serializes it (an empty TIN when ntriangles is 0).
 */
Datum		GeoaccTinToGeometry(const double *positions, const uint32 *triangles, uint32 ntriangles, int32 srid);

/* ------------------------------------------------- meshes (mesh_clip.c) */

/*
 * The mesh of a geometry argument (TIN Z or POLYHEDRALSURFACE Z of
 * triangles) welded into an indexed mesh, its SRID in *srid; the mesh lives
 * (and is freed) with CurrentMemoryContext.
 */
GeoaccMesh	GeoaccMeshFromGeometry(const struct varlena *geom, int32 *srid);

/*
 * The mesh of a PLY argument with its attributes (what they are in
 * *layout), vertices equal in position and attributes welded; it lives
 * with CurrentMemoryContext.
 */
GeoaccMesh	GeoaccMeshFromPlyWelded(const bytea *ply, uint32 *layout);

/*
 * gpu_mesh_clip_snapshot's rows: (id, box_index, mesh) of each of `rows`
 * clipped by the boxes of `boxes` (a box3d[]), into the tuplestore.
 */
struct ArrayType;
void		GeoaccMeshClipRows(struct ReturnSetInfo *rsinfo, struct ArrayType *boxes, const GeoaccSnapshotMesh *rows,
							   uint32 count);

/* ----------------------------------------------------- TWED (twed.c) */

/*
 * gpu_twed_matrix_snapshot's matrix, its arguments those of gpu_twed_matrix
 * but b_sql: a_sql's series against the trajectories `tracks` (a
 * snapshot's, `label` in errors, of SRID srid, with Z where has_z).
 */
void		GeoaccTwedMatrixAgainst(FunctionCallInfo fcinfo, const char *label, const JoinTracks *tracks, int32 srid,
									bool has_z);

/* PostGIS's schema, quoted for SQL text. */
const char *GeoaccPostgisSchemaName(void);

#endif							/* GEOACC_H */
