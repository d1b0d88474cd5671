// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * OpenMP under clang: an OMPT tool for LLVM's libomp.
 *
 * clang's OpenMP code calls libomp (__kmpc_fork_call, __kmpc_barrier,
 * ...), whose pool threads wait with futexes of their own, as libgomp's
 * do (intercept_omp.c).  libomp's entry points pass the region's
 * arguments through varargs, which no wrapper can forward; but libomp
 * implements the OpenMP tools interface, OMPT: at start-up it calls
 * ompt_start_tool() if the program defines it, and the tool registers
 * callbacks for the events it wants.  The runtime is that tool (the
 * executable exports the symbol, as every interceptor):
 *
 *   - parallel_begin: the encountering thread releases the region's
 *     fork object;
 *   - implicit_task begin: each thread of the team acquires it;
 *   - sync_region (every barrier kind) begin and end: a release and an
 *     acquire of the region's barrier object, which the implicit
 *     barrier at a region's end makes its join too; parallel_end: the
 *     encountering thread acquires that object;
 *   - mutex_acquired and mutex_released (critical, locks, ordered,
 *     atomic blocks libomp serializes): the wait identifier is a lock.
 *
 * A region's objects are keyed by the encountering task's ompt_data_t
 * (omp_parallel_begin() says why), which the region's data and each of
 * its implicit tasks carry: the end events of an implicit barrier may
 * not name the region.  Explicit tasks and their dependences are
 * events too (omp_task_create() and below); under libgomp they are not.
 *
 * The types are the OMPT ABI of OpenMP 5.0 (omp-tools.h, which only
 * clang's resource directory has), declared here for gcc.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "intercept.h"

#include <sched.h>

typedef union {
	uint64_t value;
	void *ptr;
} ompt_data_t;

typedef void (*ompt_callback_t)(void);
typedef int (*ompt_set_callback_t)(int event, ompt_callback_t callback);
typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char *name);

typedef struct {
	int (*initialize)(ompt_function_lookup_t lookup, int initial_device,
			  ompt_data_t *tool_data);
	void (*finalize)(ompt_data_t *tool_data);
	ompt_data_t tool_data;
} ompt_start_tool_result_t;

enum {
	OMPT_CALLBACK_PARALLEL_BEGIN = 3,
	OMPT_CALLBACK_PARALLEL_END = 4,
	OMPT_CALLBACK_TASK_CREATE = 5,
	OMPT_CALLBACK_TASK_SCHEDULE = 6,
	OMPT_CALLBACK_IMPLICIT_TASK = 7,
	OMPT_CALLBACK_DEPENDENCES = 18,
	OMPT_CALLBACK_MUTEX_RELEASED = 17,
	OMPT_CALLBACK_SYNC_REGION = 23,
	OMPT_CALLBACK_MUTEX_ACQUIRED = 27,
};

enum { OMPT_SCOPE_BEGIN = 1, OMPT_SCOPE_END = 2 };

/* ompt_sync_region_t: the barriers (1-4 and 8-10; not 5-7). */
static bool omp_is_barrier(int kind)
{
	return (kind >= 1 && kind <= 4) || (kind >= 8 && kind <= 10);
}

#define OMPT_TASK_INITIAL 1 /* implicit_task flags: the thread's own */
#define OMPT_TASK_EXPLICIT 4 /* task_create flags */
#define OMPT_TASK_COMPLETE 1 /* task_schedule's prior status */
#define OMPT_TASK_LATE_FULFILL 6
#define OMPT_SYNC_TASKWAIT 5
#define OMPT_SYNC_TASKGROUP 6
#define OMPT_DEPENDENCE_SOURCE 5 /* doacross loops: not a task's */
#define OMPT_DEPENDENCE_SINK 6
#define OMPT_SET_ALWAYS 5

typedef struct {
	ompt_data_t variable;
	int type;
} ompt_dependence_t;

/*
 * Objects, all within one ompt_data_t (8 bytes) so that two data never
 * share one: a region's fork and barrier (the encountering task's
 * data), a task's start, and the completion of a task's children.
 */
#define FORK(d) ((uintptr_t)(d))
#define BARRIER(d) ((uintptr_t)(d) + 1)
#define TASK_START(d) ((uintptr_t)(d) + 2)
#define CHILDREN_DONE(d) ((uintptr_t)(d) + 3)
#define TASK_MEMORY(d) ((uintptr_t)(d) + 4)

/* The region whose implicit task the thread runs (its barrier's key). */
static __thread void *omp_region __attribute__((tls_model("initial-exec")));

/*
 * libomp hands parallel_begin a region's data on the encountering
 * thread's stack and copies it into the team after: the data's address
 * is not the region's, but what the tool stores in it goes along.  The
 * key stored is the encountering task's data, which lives as long as
 * the task and differs between tasks that start regions at once.
 */
static void omp_parallel_begin(ompt_data_t *task, const void *frame,
			       ompt_data_t *parallel, unsigned requested,
			       int flags, const void *ra)
{
	(void)frame, (void)requested, (void)flags, (void)ra;
	parallel->ptr = task;
	rt_release(FORK(task));
}

static void omp_parallel_end(ompt_data_t *parallel, ompt_data_t *task,
			     int flags, const void *ra)
{
	(void)task, (void)flags, (void)ra;
	if (parallel->ptr)
		rt_acquire(BARRIER(parallel->ptr));
}

static void omp_implicit_task(int endpoint, ompt_data_t *parallel,
			      ompt_data_t *task, unsigned actual,
			      unsigned index, int flags)
{
	(void)actual, (void)index;
	if (flags & OMPT_TASK_INITIAL)
		return;
	if (endpoint == OMPT_SCOPE_BEGIN && parallel->ptr) {
		task->ptr = parallel->ptr;
		omp_region = task->ptr;
		rt_acquire(FORK(task->ptr));
	} else if (endpoint == OMPT_SCOPE_END && task->ptr) {
		rt_release(BARRIER(task->ptr));
		task->ptr = NULL;
		omp_region = NULL;
	}
}

/*
 * Explicit tasks.  The creator releases the task's start object, which
 * the task acquires when it first runs; a completed task releases its
 * parent's children object, which the parent's taskwait (or taskgroup)
 * acquires, and its team's barrier object, since the barrier that ends
 * a region waits for its tasks too (a thread may run them inside the
 * barrier, after its own release).  A task with dependences acquires
 * each dependence's variable when it starts and releases it when it
 * completes: a task depending on another's output runs after it.  That
 * orders tasks that only read a variable after one another as well,
 * which can hide a race between them, never report a false one.
 * Taskgroups wait for every descendant; only children are ordered here.
 * libomp keeps finished tasks' memory for new ones, through lists of
 * its own: a completed task releases its memory's object (its data's
 * address) and a task created at the same address acquires it before
 * its creator writes its firstprivate copies there.
 *
 * An explicit task's data points at a struct omp_task with its lowest
 * bit set; an implicit task's holds its region's key, an aligned
 * pointer.
 */
struct omp_task {
	ompt_data_t *parent;
	int ndeps;
	uintptr_t deps[];
};

static struct omp_task *omp_task_of(const ompt_data_t *d)
{
	return d && (d->value & 1) ? (struct omp_task *)(d->value - 1) : NULL;
}

static void omp_task_create(ompt_data_t *parent, const void *frame,
			    ompt_data_t *task, int flags, int has_deps,
			    const void *ra)
{
	struct omp_task *t;

	(void)frame, (void)has_deps, (void)ra;
	if (!(flags & OMPT_TASK_EXPLICIT))
		return;
	t = __libc_malloc(sizeof(*t));
	if (!t)
		return;
	t->parent = parent;
	t->ndeps = 0;
	task->value = (uint64_t)(uintptr_t)t | 1;
	rt_acquire(TASK_MEMORY(task));
	rt_release(TASK_START(task));
}

static void omp_dependences(ompt_data_t *task, const ompt_dependence_t *deps,
			    int ndeps)
{
	struct omp_task *t = omp_task_of(task), *grown;
	int n = 0;

	if (!t || ndeps <= 0)
		return;
	grown = __libc_realloc(t,
			       sizeof(*t) + (size_t)ndeps * sizeof(uintptr_t));
	if (!grown)
		return;
	for (int i = 0; i < ndeps; i++)
		if (deps[i].type != OMPT_DEPENDENCE_SOURCE &&
		    deps[i].type != OMPT_DEPENDENCE_SINK)
			grown->deps[n++] = (uintptr_t)deps[i].variable.ptr;
	grown->ndeps = n;
	task->value = (uint64_t)(uintptr_t)grown | 1;
}

static void omp_task_schedule(ompt_data_t *prior, int status, ompt_data_t *next)
{
	struct omp_task *t = omp_task_of(prior);

	if (t && (status == OMPT_TASK_COMPLETE ||
		  status == OMPT_TASK_LATE_FULFILL)) {
		for (int i = 0; i < t->ndeps; i++)
			rt_release(t->deps[i]);
		rt_release(CHILDREN_DONE(t->parent));
		if (omp_region)
			rt_release(BARRIER(omp_region));
		rt_release(TASK_MEMORY(prior));
		prior->value = 0;
		__libc_free(t);
	}
	t = omp_task_of(next);
	if (t) {
		/* Again when it resumes after a yield: no harm. */
		rt_acquire(TASK_START(next));
		for (int i = 0; i < t->ndeps; i++)
			rt_acquire(t->deps[i]);
	}
}

static void omp_sync_region(int kind, int endpoint, ompt_data_t *parallel,
			    ompt_data_t *task, const void *ra)
{
	void *region = NULL;

	(void)ra;
	if ((kind == OMPT_SYNC_TASKWAIT || kind == OMPT_SYNC_TASKGROUP) &&
	    endpoint == OMPT_SCOPE_END && task) {
		rt_acquire(CHILDREN_DONE(task));
		return;
	}
	if (task && task->ptr && !omp_task_of(task))
		region = task->ptr;
	else if (parallel)
		region = parallel->ptr;
	if (!omp_is_barrier(kind) || !region)
		return;
	if (endpoint == OMPT_SCOPE_BEGIN)
		rt_release(BARRIER(region));
	else if (endpoint == OMPT_SCOPE_END)
		rt_acquire(BARRIER(region));
}

/*
 * libomp gives up a lock before it reports the release: the next owner's
 * acquired event can come first, and FastTrack then sees the two
 * critical sections unordered.  So each lock has a shadow lock of ours,
 * taken after the acquired event and given up after the released one
 * (what LLVM's Archer does): it orders the events as the lock ordered
 * the sections.  Keyed exactly by wait identifier, never by a hash of
 * it: two locks sharing one shadow would deadlock a thread that nests
 * them.  A full table leaves a lock without one: FastRCD and Valor need
 * only the region boundaries, and FastTrack may report a race there.
 */
#define OMP_SHADOW_LOCKS 4096U

static struct {
	_Atomic uint64_t id;
	atomic_int held;
} omp_shadow[OMP_SHADOW_LOCKS];

static atomic_int *omp_shadow_of(uint64_t id)
{
	uint64_t h = (id * 0x9e3779b97f4a7c15ULL) >> 52;

	if (!id)
		return NULL;
	for (unsigned i = 0; i < OMP_SHADOW_LOCKS; i++) {
		unsigned k = (unsigned)(h + i) % OMP_SHADOW_LOCKS;
		uint64_t cur = atomic_load_explicit(&omp_shadow[k].id,
						    memory_order_acquire);

		if (!cur &&
		    atomic_compare_exchange_strong(&omp_shadow[k].id, &cur, id))
			return &omp_shadow[k].held;
		if (cur == id)
			return &omp_shadow[k].held;
	}
	return NULL;
}

static void omp_mutex_acquired(int kind, uint64_t wait_id, const void *ra)
{
	atomic_int *shadow = omp_shadow_of(wait_id);

	(void)kind, (void)ra;
	while (shadow &&
	       atomic_exchange_explicit(shadow, 1, memory_order_acquire))
		sched_yield();
	rt_acquire((uintptr_t)wait_id);
}

static void omp_mutex_released(int kind, uint64_t wait_id, const void *ra)
{
	atomic_int *shadow = omp_shadow_of(wait_id);

	(void)kind, (void)ra;
	rt_release((uintptr_t)wait_id);
	if (shadow)
		atomic_store_explicit(shadow, 0, memory_order_release);
}

static int omp_tool_init(ompt_function_lookup_t lookup, int device,
			 ompt_data_t *data)
{
	ompt_set_callback_t set =
		(ompt_set_callback_t)lookup("ompt_set_callback");
	static const struct {
		int event;
		ompt_callback_t fn;
	} cbs[] = {
		{ OMPT_CALLBACK_PARALLEL_BEGIN,
		  (ompt_callback_t)omp_parallel_begin },
		{ OMPT_CALLBACK_PARALLEL_END,
		  (ompt_callback_t)omp_parallel_end },
		{ OMPT_CALLBACK_IMPLICIT_TASK,
		  (ompt_callback_t)omp_implicit_task },
		{ OMPT_CALLBACK_TASK_CREATE, (ompt_callback_t)omp_task_create },
		{ OMPT_CALLBACK_TASK_SCHEDULE,
		  (ompt_callback_t)omp_task_schedule },
		{ OMPT_CALLBACK_DEPENDENCES, (ompt_callback_t)omp_dependences },
		{ OMPT_CALLBACK_SYNC_REGION, (ompt_callback_t)omp_sync_region },
		{ OMPT_CALLBACK_MUTEX_ACQUIRED,
		  (ompt_callback_t)omp_mutex_acquired },
		{ OMPT_CALLBACK_MUTEX_RELEASED,
		  (ompt_callback_t)omp_mutex_released },
	};
	bool all = true;

	(void)device, (void)data;
	if (!set)
		return 0;
	for (size_t i = 0; i < sizeof(cbs) / sizeof(cbs[0]); i++)
		all &= set(cbs[i].event, cbs[i].fn) == OMPT_SET_ALWAYS;
	if (!all)
		rt_log_printf("valor: this libomp does not report every "
			      "OpenMP event the runtime needs: expect "
			      "conflicts its synchronization hides\n");
	return 1; /* keep the tool */
}

static void omp_tool_fini(ompt_data_t *data)
{
	(void)data;
}

RT_INTERCEPTOR ompt_start_tool_result_t *
ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
	static ompt_start_tool_result_t tool = {
		.initialize = omp_tool_init,
		.finalize = omp_tool_fini,
	};

	(void)omp_version, (void)runtime_version;
	return &tool;
}
