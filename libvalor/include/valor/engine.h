/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Valor analysis engine: region conflict detection (Valor, FastRCD)
 * and happens-before race detection (FastTrack) driven by program events.
 *
 * The engine does no I/O and keeps no global state: everything lives in a
 * struct valor_ctx.  Drivers (the in-process runtime, the daemon, tests)
 * create one thread handle per program thread and report that thread's
 * events through it.  Calls on one handle must not run concurrently with
 * each other; calls on different handles may run concurrently from any
 * number of threads.
 *
 * Conflicts are delivered synchronously to the on_conflict callback of the
 * context, on the thread whose call detected them, with no engine lock
 * held, so the callback may stop the program (the conflict "exception").
 */
#ifndef VALOR_ENGINE_H
#define VALOR_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** enum valor_analysis - what a context detects */
enum valor_analysis {
	/* Region conflicts: eager write-write/write-read, lazy read-write. */
	VALOR_ANALYSIS_VALOR = 0,
	/* Region conflicts, all eager, with last-reader metadata. */
	VALOR_ANALYSIS_FASTRCD = 1,
	/* Every happens-before data race (vector clocks with epochs). */
	VALOR_ANALYSIS_FASTTRACK = 2,
};

/** enum valor_region_mode - where regions end (Valor and FastRCD) */
enum valor_region_mode {
	VALOR_REGIONS_RFR = 0, /* at releases only (release-free regions) */
	VALOR_REGIONS_SFR = 1, /* at every synchronization operation */
};

/**
 * enum valor_conflict_kind - which accesses conflict, earlier one first
 *
 * For Valor and FastRCD a conflict is an access that conflicts with an
 * access of another thread whose region is still ongoing.  For FastTrack
 * it is a pair of accesses unordered by happens-before.
 */
enum valor_conflict_kind {
	VALOR_CONFLICT_WW = 0, /* earlier write, later write */
	VALOR_CONFLICT_WR = 1, /* earlier write, later read */
	VALOR_CONFLICT_RW = 2, /* earlier read, later write */
};

/**
 * struct valor_access_info - one side of a conflict
 * @tid:      logical thread id (valor_thread_id()); 0 if not known
 * @site:     the site the driver passed with the access; 0 if not known
 * @region:   the region (Valor, FastRCD) or clock (FastTrack) of the
 *            thread when it made the access; 0 if not known
 * @is_write: whether this side is a write (a free counts as a write)
 */
struct valor_access_info {
	uint64_t tid;
	uint64_t site;
	uint64_t region;
	bool is_write;
};

/**
 * struct valor_conflict - one detected conflict
 * @kind:        enum valor_conflict_kind
 * @analysis:    enum valor_analysis that found it
 * @addr:        first conflicting byte
 * @size:        number of consecutive conflicting bytes from @addr
 * @detected_by: logical id of the thread whose call found the conflict
 * @lazy:        found by read validation at a region end (Valor read-write)
 * @first:       the earlier access
 * @second:      the later access
 */
struct valor_conflict {
	uint32_t kind;
	uint32_t analysis;
	uint64_t addr;
	uint32_t size;
	bool lazy;
	uint64_t detected_by;
	struct valor_access_info first;
	struct valor_access_info second;
};

typedef void (*valor_conflict_fn)(void *arg, const struct valor_conflict *c);

/**
 * struct valor_params - how a context is set up; zero means "default"
 * @analysis:          enum valor_analysis
 * @regions:           enum valor_region_mode
 * @read_log_entries:  Valor read-log capacity per thread; when it is full
 *                     the log is validated and reset, which splits the
 *                     region for read-write detection (default 65536)
 * @write_log_entries: Valor write-set capacity per thread; when a region
 *                     writes more distinct cells, cells in runs spill to
 *                     a list and scattered ones split the region
 *                     (default 16384)
 * @max_threads:       live threads at once, at most VALOR_MAX_THREADS
 *                     (default VALOR_MAX_THREADS); slots of exited threads
 *                     are recycled
 * @on_conflict:       called for every conflict found
 * @arg:               passed to @on_conflict
 * @initial_clock:     first clock of every thread slot (tests use it to
 *                     exercise clock values past 2^32)
 * @flags:             VALOR_ONE_ROOT or 0
 */
struct valor_params {
	uint32_t analysis;
	uint32_t regions;
	uint32_t read_log_entries;
	uint32_t write_log_entries;
	uint32_t max_threads;
	valor_conflict_fn on_conflict;
	void *arg;
	uint64_t initial_clock;
	uint32_t flags;
};

/*
 * VALOR_ONE_ROOT: the context's first thread is its only one created
 * without a parent; every other is created by a live thread (a later
 * valor_thread_create(ctx, NULL) fails with EINVAL).  A program's runtime
 * knows this, a tool attaching to running threads does not.  It lets
 * Valor and FastRCD skip the accesses a thread makes while it runs alone
 * (every other thread has exited): they cannot be in a region conflict
 * (Documentation/semantics.md, "Threads that run alone").
 */
#define VALOR_ONE_ROOT (1U << 0)

#define VALOR_MAX_THREADS 32766

/*
 * Addresses the engine analyses: [0, VALOR_ADDR_LIMIT), every user-space
 * address of x86-64 and arm64 with 4-level page tables.  Accesses and
 * frees reaching beyond it are ignored (the replay refuses them).
 */
#define VALOR_ADDR_LIMIT (1ULL << 48)

/** struct valor_stats - counters of a context (monotonic) */
struct valor_stats {
	uint64_t conflicts;
	uint64_t threads_created;
	uint64_t regions;
	uint64_t version_bumps; /* Valor: region-first writes to a cell */
	uint64_t read_log_overflows;
	uint64_t write_log_overflows; /* Valor: full write sets (spill or split) */
	uint64_t validations;
	uint64_t reads_logged; /* Valor: read-log entries appended */
	/*
	 * Valor: cells split into per-byte metadata; FastRCD, FastTrack:
	 * cells whose access records moved out to a block (more than three)
	 */
	uint64_t cells_refined;
	uint64_t shadow_bytes; /* shadow memory mapped */
	uint64_t accesses_alone; /* made while the thread ran alone: skipped */
	/*
	 * Valor: cells whose word outgrew the shadow's 32 bits (a version
	 * past 2,047, a thread slot past 1,023, bytes further behind, bytes
	 * kept per byte), each given a 64-bit word of its own
	 */
	uint64_t cells_wide;
};

struct valor_ctx;
struct valor_thread;

/**
 * valor_ctx_new() - create an analysis context
 * @params: settings, or NULL for all defaults
 *
 * Return: the context, or NULL with errno set (EINVAL for bad parameters,
 * ENOMEM).
 */
struct valor_ctx *valor_ctx_new(const struct valor_params *params);

/**
 * valor_ctx_free() - destroy a context and every thread handle in it
 */
void valor_ctx_free(struct valor_ctx *ctx);

/** valor_ctx_stats() - copy the counters of @ctx into @out */
void valor_ctx_stats(struct valor_ctx *ctx, struct valor_stats *out);

/** valor_analysis_name() - "valor", "fastrcd" or "fasttrack" */
const char *valor_analysis_name(enum valor_analysis a);

/** valor_conflict_kind_name() - "write-write", "write-read" or "read-write" */
const char *valor_conflict_kind_name(enum valor_conflict_kind k);

/**
 * valor_thread_create() - a new thread begins
 * @ctx:    the context
 * @parent: the creating thread (whose region ends: creation is a release),
 *          or NULL for the first thread of a program
 *
 * Each call yields a fresh logical thread id, whatever OS id the thread
 * has.  Call it on the parent's thread before the child runs.
 *
 * Return: the handle, or NULL with errno set (EAGAIN when no thread slot
 * can be given: max_threads are live or, under FastTrack, the free slots
 * belong to exited threads @parent has not joined; EINVAL for a second
 * thread without a parent under VALOR_ONE_ROOT; ENOMEM).
 */
struct valor_thread *valor_thread_create(struct valor_ctx *ctx,
					 struct valor_thread *parent);

/** valor_thread_id() - the logical id of @th, unique in its context */
uint64_t valor_thread_id(const struct valor_thread *th);

/**
 * valor_thread_exit() - @th finished; its region ends (a release)
 *
 * The handle stays valid for valor_thread_join() or valor_thread_forget().
 * The thread's slot can be reused at once by Valor and FastRCD; FastTrack
 * reuses it only for threads created by one that has joined this thread,
 * directly or transitively (Documentation/engine.md says why).
 */
void valor_thread_exit(struct valor_thread *th);

/**
 * valor_thread_join() - @joiner joined the exited thread @joinee
 *
 * An acquire of everything @joinee did.  @joinee's handle is freed.
 * Return: 0, or -EINVAL if @joinee has not exited.
 */
int valor_thread_join(struct valor_thread *joiner, struct valor_thread *joinee);

/** valor_thread_forget() - free the handle of an exited, detached thread */
void valor_thread_forget(struct valor_thread *th);

/** valor_acquire() - @th acquired the synchronization object @sync */
void valor_acquire(struct valor_thread *th, uintptr_t sync);

/** valor_release() - @th released @sync; a region boundary */
void valor_release(struct valor_thread *th, uintptr_t sync);

/**
 * valor_access() - @th read or wrote @size bytes at @addr
 * @site: an id of the access's program location, reported back as is
 *
 * Any size is accepted; accesses may be misaligned and span cells.
 * Return: the number of conflicts reported by this call.
 */
int valor_access(struct valor_thread *th, uintptr_t addr, size_t size,
		 bool is_write, uint64_t site);

/**
 * valor_access_strided() - @th read or wrote @count times @size bytes,
 * from @addr on, @stride bytes apart
 * @site: as for valor_access(), the same for every element
 *
 * The same as @count calls of valor_access() in order (a loop's
 * accesses checked at once, a column or every other element of an
 * array), with less work per element where the analysis has a way.
 * Return: the number of conflicts reported by this call.
 */
int valor_access_strided(struct valor_thread *th, uintptr_t addr, size_t size,
			 size_t stride, size_t count, bool is_write,
			 uint64_t site);

/**
 * valor_free() - @th freed or unmapped the @size bytes at @addr
 *
 * The free is checked as a write of the range, then the range's history
 * is cleared so that a later allocation at the same address starts fresh
 * (also the freeing thread's own pending reads of it are dropped).
 * Return: the number of conflicts reported by this call.
 */
int valor_free(struct valor_thread *th, uintptr_t addr, size_t size,
	       uint64_t site);

/**
 * valor_forget() - the @size bytes at @addr are reused without a free
 *
 * For memory the runtime knows is recycled behind the program's back (a
 * finished thread's stack and TLS, which glibc hands to the next thread):
 * its history ends without a check, so the next user starts fresh.  @th's
 * own pending reads of the range are checked and dropped and its
 * ownership of the range ends; FastRCD and FastTrack forget every access
 * to it.  Valor keeps versions growing instead of resetting them, so that
 * another thread's pending read stays exact.  Memory with no history is
 * not touched, so forgetting a mostly unused 8 MiB stack costs little.
 */
void valor_forget(struct valor_thread *th, uintptr_t addr, size_t size);

/**
 * valor_hint_dense() - the @size bytes at @addr are a new block that the
 * program will most likely use whole
 *
 * A hint for the shadow's layout, with no effect on any verdict: the
 * records of a block of 4 MiB or more go on huge pages where the kernel
 * has them.  For what the program allocated itself (malloc), not for
 * mappings, which are often reserved large and used sparsely.
 */
void valor_hint_dense(struct valor_thread *th, uintptr_t addr, size_t size);

/**
 * valor_move() - @th moved @size bytes of memory from @from to @to
 *
 * For mremap(): the data keeps its history at its new address (LARD's
 * R4), so an access after the move still conflicts with one before it.
 * What was at @to is forgotten.  @from, @to and @size must be multiples
 * of 8 and the ranges must not overlap.  Pending reads logged at the old
 * addresses stay there; ownership held by @th moves with the data, that
 * of other threads' regions ends.
 * Return: 0, or -EINVAL.
 */
int valor_move(struct valor_thread *th, uintptr_t from, uintptr_t to,
	       size_t size);

/**
 * valor_region_end() - an explicit region boundary for @th
 *
 * Validates the region's reads and starts a new region; no
 * synchronization object and no happens-before edge is involved.
 * Return: the number of conflicts reported by this call.
 */
int valor_region_end(struct valor_thread *th);

/**
 * valor_validate() - validate @th's pending reads now, region continues
 *
 * For drivers that must not let a conflicting region's effects escape
 * (before write(2), send(2), ...).  A no-op for FastRCD and FastTrack,
 * which detect eagerly.  Return: the number of conflicts reported.
 */
int valor_validate(struct valor_thread *th);

/**
 * valor_shadow_version() - the Valor version of the byte at @addr
 *
 * An inspection hook for tests and debuggers; 0 for other analyses.
 */
uint64_t valor_shadow_version(struct valor_ctx *ctx, uintptr_t addr);

#ifdef __cplusplus
}
#endif

#endif /* VALOR_ENGINE_H */
