// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * OpenMP tasks as GCC compiles them: GOMP_task, GOMP_taskloop and the
 * waits for them (taskwait, taskgroup, the team's barriers).
 *
 * libgomp queues a task and runs it on whichever thread of the team
 * comes for work, ordering it with futexes of its own.  Without a model
 * a task looked concurrent with the code that created it and with the
 * code that waited for it: a task-parallel program that is free of
 * races had 21 to 25 conflicts a run (tests/runtime/programs/
 * omp_tasks.c).  So each task is run through a trampoline of ours:
 *
 *   - its creator releases the task's start object once the task's
 *     argument block is copied, and the task acquires it when it starts;
 *   - a finished task releases its creator's children object (a
 *     taskwait acquires it), its taskgroup's object (the end of the
 *     group acquires it), and its team's barrier and join objects: a
 *     barrier, and the end of the parallel region, wait for the team's
 *     tasks too, which a thread may run after its own release;
 *   - a task with dependences acquires each dependence's address when it
 *     starts and releases it when it ends, so a task that depends on
 *     another's output runs after it.  That also orders tasks that only
 *     read a variable one after another, which can hide a race between
 *     them, never report a false one.
 *
 * The trampoline needs the compiler's body and a record of the task in
 * the block libgomp copies, so the block grows by a head in front of
 * the compiler's (a taskloop's starts with the two bounds libgomp
 * writes there, so its head comes after them and the trampoline puts
 * the bounds back where the body looks for them).  The copy is always
 * made by our copy function, which then runs the compiler's, if any:
 * that is where the creator's release has to be, after the last write
 * to the block and before libgomp queues the task.  libgomp then takes
 * every task as one with copy constructors, which differs in one thing
 * only: a task not yet started when its region or group is cancelled
 * still runs, as C++ tasks with firstprivate objects always do.
 *
 * A task that finishes through a detach event is taken as finished when
 * its body returns; a task's record that cannot be allocated leaves that
 * task unordered; taskgroups nested deeper than OMP_GROUP_DEPTH on one
 * thread wait through the group around them.
 */
#include "intercept_omp.h"

#define GOMP_TASK_FLAG_DEPEND (1U << 3)
#define GOMP_TASK_FLAG_NOGROUP (1U << 11)

/* The two bounds a taskloop's tasks find at the start of their block. */
#define OMP_LOOP_BOUNDS (2 * sizeof(long long))

#define OMP_GROUP_DEPTH 32

typedef void (*omp_copy)(void *dst, void *src);

/*
 * A task as the runtime sees it.  The creator fills one in on its stack
 * for the copy function (a taskloop's serves all its tasks); each task
 * gets a copy of its own, whose address keys its start and children
 * objects and which the task frees when it ends.
 */
struct omp_task {
	omp_body fn;
	omp_copy cpyfn; /* the compiler's, or NULL */
	void *data; /* the compiler's block, until the copy */
	long arg_size;
	long data_off; /* where the compiler's block starts in ours */
	bool loop; /* a taskloop's: the bounds come first */
	struct omp_team *team;
	uintptr_t parent; /* the creating task's key */
	uintptr_t group; /* the innermost taskgroup's key, or 0 */
	unsigned ndeps;
	uintptr_t deps[];
};

/* What our block holds in front of the compiler's. */
struct omp_task_head {
	struct omp_task *task; /* NULL without memory: run, unordered */
	omp_body fn;
	long data_off;
};

#define OMP_TASK_START(key) (key)
#define OMP_CHILDREN_DONE(key) ((key) + 1)

/* The task the thread runs, NULL in the region's own (implicit) task. */
static __thread struct omp_task *omp_task_cur
	__attribute__((tls_model("initial-exec")));
/* The implicit task's key: the thread's, two bytes for its two objects. */
static __thread char omp_implicit_task[2]
	__attribute__((tls_model("initial-exec")));

/*
 * Taskgroups a thread has open, innermost last: the address of an entry
 * is its group's key.  A task runs in the group its creator was in.
 */
static __thread uintptr_t omp_group_outer[OMP_GROUP_DEPTH]
	__attribute__((tls_model("initial-exec")));
static __thread unsigned omp_group_depth
	__attribute__((tls_model("initial-exec")));
static __thread uintptr_t omp_group_cur
	__attribute__((tls_model("initial-exec")));

static uintptr_t omp_task_key(void)
{
	return omp_task_cur ? (uintptr_t)omp_task_cur :
			      (uintptr_t)omp_implicit_task;
}

static void omp_group_open(void)
{
	unsigned d = omp_group_depth++;

	if (d < OMP_GROUP_DEPTH) {
		omp_group_outer[d] = omp_group_cur;
		omp_group_cur = (uintptr_t)&omp_group_outer[d];
	}
}

/* After libgomp waited for the group's tasks. */
static void omp_group_close(void)
{
	unsigned d;

	if (!omp_group_depth)
		return;
	d = --omp_group_depth;
	if (omp_group_cur)
		rt_acquire(omp_group_cur);
	if (d < OMP_GROUP_DEPTH)
		omp_group_cur = omp_group_outer[d];
}

/* ---- dependences: GOMP_task's depend array, both of libgomp's forms */

static size_t omp_depend_count(void **depend)
{
	size_t n = (uintptr_t)depend[0];

	return n ? n : (uintptr_t)depend[1];
}

/* The address of dependence @i: old form, new form, or a depobj. */
static uintptr_t omp_depend_addr(void **depend, size_t i)
{
	size_t normal;

	if ((uintptr_t)depend[0])
		return (uintptr_t)depend[2 + i];
	normal = (uintptr_t)depend[2] + (uintptr_t)depend[3] +
		 (uintptr_t)depend[4];
	if (i < normal)
		return (uintptr_t)depend[5 + i];
	return depend[5 + i] ? (uintptr_t)((void **)depend[5 + i])[0] : 0;
}

/* ---- running a task */

static void omp_task_body(struct omp_task_head *head, void *data)
{
	struct omp_task *t = head->task;
	struct omp_task *outer_task = omp_task_cur;
	struct omp_team *outer_team = rt_omp_cur;
	uintptr_t outer_group = omp_group_cur;

	if (!t) {
		head->fn(data);
		return;
	}
	rt_acquire(OMP_TASK_START((uintptr_t)t));
	for (unsigned i = 0; i < t->ndeps; i++)
		rt_acquire(t->deps[i]);
	omp_task_cur = t;
	rt_omp_cur = t->team;
	omp_group_cur = t->group;
	head->fn(data);
	omp_task_cur = outer_task;
	rt_omp_cur = outer_team;
	omp_group_cur = outer_group;
	for (unsigned i = 0; i < t->ndeps; i++)
		rt_release(t->deps[i]);
	if (t->group)
		rt_release(t->group);
	rt_release(OMP_CHILDREN_DONE(t->parent));
	rt_release(OMP_BARRIER(t->team));
	rt_release(OMP_JOIN(t->team));
	__libc_free(t);
}

static void omp_task_run(void *arg)
{
	struct omp_task_head *head = arg;

	omp_task_body(head, (char *)arg + head->data_off);
}

static void omp_taskloop_run(void *arg)
{
	struct omp_task_head *head =
		(struct omp_task_head *)((char *)arg + OMP_LOOP_BOUNDS);
	char *data = (char *)arg + head->data_off;

	RT_REAL(memcpy)(data, arg, OMP_LOOP_BOUNDS);
	omp_task_body(head, data);
}

/*
 * libgomp's copy of a task's block, into @dst; @src is the creator's
 * struct omp_task.  Runs on the creator, before the task is queued.
 */
static void omp_task_copy(void *dst, void *src)
{
	const struct omp_task *tpl = src;
	size_t size = sizeof(*tpl) + tpl->ndeps * sizeof(tpl->deps[0]);
	struct omp_task_head *head =
		(struct omp_task_head *)((char *)dst +
					 (tpl->loop ? OMP_LOOP_BOUNDS : 0));
	char *data = (char *)dst + tpl->data_off;
	struct omp_task *t = __libc_malloc(size);

	if (t)
		RT_REAL(memcpy)(t, tpl, size);
	head->task = t;
	head->fn = tpl->fn;
	head->data_off = tpl->data_off;
	if (tpl->cpyfn)
		tpl->cpyfn(data, tpl->data);
	else
		RT_REAL(memcpy)(data, tpl->data, (size_t)tpl->arg_size);
	if (t)
		rt_release(OMP_TASK_START((uintptr_t)t));
}

/*
 * The creator's record of a task whose block the compiler made as
 * @arg_size bytes aligned to @arg_align; *@align and the result are the
 * alignment and size of ours.
 */
static long omp_task_prepare(struct omp_task *t, omp_body fn, void *data,
			     omp_copy cpyfn, long arg_size, long *align,
			     bool loop)
{
	long head_end = (loop ? (long)OMP_LOOP_BOUNDS : 0) +
			(long)sizeof(struct omp_task_head);

	if (*align < (long)_Alignof(struct omp_task_head))
		*align = (long)_Alignof(struct omp_task_head);
	t->fn = fn;
	t->cpyfn = cpyfn;
	t->data = data;
	t->arg_size = arg_size;
	t->data_off = (head_end + *align - 1) & ~(*align - 1);
	t->loop = loop;
	t->team = rt_omp_team_now();
	t->parent = omp_task_key();
	t->group = omp_group_cur;
	t->ndeps = 0;
	return t->data_off + arg_size;
}

/* ---- the entry points */

void GOMP_task(omp_body fn, void *data, omp_copy cpyfn, long arg_size,
	       long arg_align, bool if_clause, unsigned flags, void **depend,
	       int priority, void *detach);
void GOMP_taskwait(void);
void GOMP_taskwait_depend(void **depend);
void GOMP_taskgroup_start(void);
void GOMP_taskgroup_end(void);
void GOMP_taskloop(omp_body fn, void *data, omp_copy cpyfn, long arg_size,
		   long arg_align, unsigned flags, unsigned long num_tasks,
		   int priority, long start, long end, long step);
void GOMP_taskloop_ull(omp_body fn, void *data, omp_copy cpyfn, long arg_size,
		       long arg_align, unsigned flags, unsigned long num_tasks,
		       int priority, unsigned long long start,
		       unsigned long long end, unsigned long long step);

RT_INTERCEPTOR void GOMP_task(omp_body fn, void *data, omp_copy cpyfn,
			      long arg_size, long arg_align, bool if_clause,
			      unsigned flags, void **depend, int priority,
			      void *detach)
{
	size_t ndeps = (flags & GOMP_TASK_FLAG_DEPEND) && depend ?
			       omp_depend_count(depend) :
			       0;
	union {
		struct omp_task t;
		char bytes[sizeof(struct omp_task) + 64 * sizeof(uintptr_t)];
	} small;
	struct omp_task *t = &small.t;
	long size;

	if (ndeps > 64) {
		t = __libc_malloc(sizeof(*t) + ndeps * sizeof(uintptr_t));
		if (!t) {
			t = &small.t;
			ndeps = 0;
		}
	}
	size = omp_task_prepare(t, fn, data, cpyfn, arg_size, &arg_align,
				false);
	for (size_t i = 0; i < ndeps; i++) {
		uintptr_t a = omp_depend_addr(depend, i);

		if (a)
			t->deps[t->ndeps++] = a;
	}
	OMP_REAL(GOMP_task)
	(omp_task_run, t, omp_task_copy, size, arg_align, if_clause, flags,
	 depend, priority, detach);
	if (t != &small.t)
		__libc_free(t);
}

RT_INTERCEPTOR void GOMP_taskwait(void)
{
	OMP_REAL(GOMP_taskwait)();
	rt_acquire(OMP_CHILDREN_DONE(omp_task_key()));
}

RT_INTERCEPTOR void GOMP_taskwait_depend(void **depend)
{
	size_t n = omp_depend_count(depend);

	OMP_REAL(GOMP_taskwait_depend)(depend);
	for (size_t i = 0; i < n; i++) {
		uintptr_t a = omp_depend_addr(depend, i);

		if (a)
			rt_acquire(a);
	}
}

RT_INTERCEPTOR void GOMP_taskgroup_start(void)
{
	OMP_REAL(GOMP_taskgroup_start)();
	omp_group_open();
}

RT_INTERCEPTOR void GOMP_taskgroup_end(void)
{
	OMP_REAL(GOMP_taskgroup_end)();
	omp_group_close();
}

/*
 * A taskloop without nogroup is a taskgroup of its own in libgomp, which
 * waits for its tasks before it returns: a group of ours stands for it.
 */
#define OMP_TASKLOOP(real, ...)                                            \
	do {                                                               \
		struct omp_task t;                                         \
		bool group = !(flags & GOMP_TASK_FLAG_NOGROUP);            \
		long size;                                                 \
                                                                           \
		if (group)                                                 \
			omp_group_open();                                  \
		size = omp_task_prepare(&t, fn, data, cpyfn, arg_size,     \
					&arg_align, true);                 \
		real(omp_taskloop_run, &t, omp_task_copy, size, arg_align, \
		     flags, num_tasks, priority, __VA_ARGS__);             \
		if (group)                                                 \
			omp_group_close();                                 \
	} while (0)

RT_INTERCEPTOR void GOMP_taskloop(omp_body fn, void *data, omp_copy cpyfn,
				  long arg_size, long arg_align, unsigned flags,
				  unsigned long num_tasks, int priority,
				  long start, long end, long step)
{
	OMP_TASKLOOP(OMP_REAL(GOMP_taskloop), start, end, step);
}

RT_INTERCEPTOR void GOMP_taskloop_ull(omp_body fn, void *data, omp_copy cpyfn,
				      long arg_size, long arg_align,
				      unsigned flags, unsigned long num_tasks,
				      int priority, unsigned long long start,
				      unsigned long long end,
				      unsigned long long step)
{
	OMP_TASKLOOP(OMP_REAL(GOMP_taskloop_ull), start, end, step);
}
