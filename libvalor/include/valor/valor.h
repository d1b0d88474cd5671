/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <valor/valor.h> - what a program may ask of the Valor runtime
 *
 * A program built with `valor cc` / `valor c++` (compiled with
 * -fsanitize=thread and linked with Valor's runtime) may include this
 * header to describe synchronization the runtime cannot see, to exclude
 * code from the analysis, and to handle region conflicts itself.  The
 * functions are defined by the runtime only: a program that uses them
 * must be linked by `valor cc` (or with libvalor-rt.a by hand), or it
 * does not link.
 *
 * The header is self-contained and serves C (C99 and later) and C++
 * (C++11 and later) alike.
 * Every function may be called from any thread, at any time after the
 * program's constructors start; before the runtime has started, and on
 * threads the runtime does not analyse, they do nothing (and the queries
 * return 0).
 *
 * Programs written for ThreadSanitizer keep working: the runtime also
 * implements __tsan_acquire(), __tsan_release() and the __tsan_mutex_*
 * annotations of <sanitizer/tsan_interface.h>.
 */
#ifndef VALOR_VALOR_H
#define VALOR_VALOR_H

/*
 * VALOR_API_VERSION - version of this interface
 *
 * Incremented when a function or a field is added; code that uses a
 * later addition can test it with #if VALOR_API_VERSION >= N.
 */
#define VALOR_API_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/**
 * enum valor_conflict_type - the two accesses of a conflict, earlier first
 * @VALOR_WRITE_WRITE: a write, then a write (or a free) by another thread
 * @VALOR_WRITE_READ:  a write, then a read by another thread
 * @VALOR_READ_WRITE:  a read, then a write (or a free) by another thread
 */
enum valor_conflict_type {
	VALOR_WRITE_WRITE = 0,
	VALOR_WRITE_READ = 1,
	VALOR_READ_WRITE = 2
};

/**
 * struct valor_conflict_side - one of the two accesses of a conflict
 * @thread:   the logical id of the thread that made it: ids are given in
 *            creation order, starting at 1 for the main thread, and are
 *            never reused (see valor_current_thread()); 0 if not known
 * @pc:       an address inside the instruction (the call into the
 *            runtime) that made the access, suitable for addr2line or
 *            dladdr(); NULL if not known
 * @is_write: non-zero for a write or a free
 * @region:   the thread's region (analyses valor and fastrcd) or clock
 *            (fasttrack) when it made the access; 0 if not known
 */
struct valor_conflict_side {
	unsigned long long thread;
	const void *pc;
	int is_write;
	unsigned long long region;
};

/**
 * struct valor_conflict_info - a conflict, as valor_set_conflict_handler()
 * hands it to the program
 * @kind:        enum valor_conflict_type
 * @kind_name:   "write-write", "write-read" or "read-write"
 * @analysis:    the analysis that found it: "valor", "fastrcd" or
 *               "fasttrack"
 * @addr:        the first conflicting byte
 * @size:        the number of consecutive conflicting bytes from @addr
 * @lazy:        non-zero when found by read validation at the end of the
 *               reading thread's region (valor's read-write conflicts),
 *               after the write that conflicts, rather than at the access
 * @detected_by: the logical id of the thread whose access or region end
 *               found the conflict: the thread the handler runs on
 * @first:       the earlier access
 * @second:      the later access
 *
 * The strings are static; the structure itself lives only for the
 * duration of the handler call.
 */
struct valor_conflict_info {
	int kind;
	const char *kind_name;
	const char *analysis;
	const void *addr;
	unsigned long size;
	int lazy;
	unsigned long long detected_by;
	struct valor_conflict_side first;
	struct valor_conflict_side second;
};

/**
 * valor_conflict_handler - a program's conflict handler
 * @info: the conflict
 */
typedef void (*valor_conflict_handler)(const struct valor_conflict_info *info);

/**
 * valor_annotate_acquire() - the calling thread acquired @addr
 * @addr: any address naming a synchronization object; it is only a key
 *        and is never dereferenced
 *
 * Declares that everything made visible by earlier
 * valor_annotate_release() calls on the same @addr, in any thread, is
 * visible to this thread from now on: those releases happen before what
 * this thread does next.  Use it with valor_annotate_release() to
 * describe synchronization the runtime does not see, such as a queue
 * built on a system call, a custom futex lock or a lock-free structure
 * built on non-atomic accesses.  The analyses valor and fastrcd need the
 * release more than the acquire: a region ends at a release.  Equivalent
 * to TSan's __tsan_acquire().
 */
void valor_annotate_acquire(const volatile void *addr);

/**
 * valor_annotate_release() - the calling thread released @addr
 * @addr: the key of the synchronization object, as for
 *        valor_annotate_acquire()
 *
 * Everything the thread did before this call happens before what any
 * thread does after a later valor_annotate_acquire() of @addr.  The
 * thread's current region ends here.  Equivalent to TSan's
 * __tsan_release().
 */
void valor_annotate_release(const volatile void *addr);

/**
 * valor_ignore_begin() - stop analysing the calling thread's accesses
 *
 * Until the matching valor_ignore_end(), the thread's memory accesses are
 * not checked and leave no history, and the synchronization operations it
 * makes (locks, atomics, annotations) are not seen either: a lock released
 * inside does not publish what the thread did before, so keep such
 * synchronization outside.  Calls nest.  Use it for code whose races are
 * intended or checked otherwise, such as a statistics counter.  Like
 * TSan's __tsan_ignore_thread_begin(), except that TSan still sees
 * synchronization there.
 */
void valor_ignore_begin(void);

/**
 * valor_ignore_end() - resume the analysis of the calling thread
 *
 * Ends the innermost valor_ignore_begin().  An end without a begin does
 * nothing.
 */
void valor_ignore_end(void);

/**
 * valor_set_conflict_handler() - call @fn for every reported conflict
 * @fn: the handler, or NULL to remove it
 *
 * Turns a conflict into the program's own "conflict exception".  The
 * handler is called once for every conflict the runtime reports (after
 * suppressions, and once per pair of source locations, like the reports),
 * after the report is written, on the thread that found the conflict
 * (@info->detected_by), while the runtime does not analyse that thread.
 *
 * The handler may record the conflict, print, and end the program with
 * exit(), _exit() or abort(); it must return otherwise.  After a
 * conflict, exit() ends with the status of the exitcode option (66 by
 * default), as the program's normal end would; _exit() keeps the status
 * it is given, but skips the final summary.  It must not
 * longjmp() or throw out of the call (the runtime's frames are below it),
 * and should not wait for another thread, which may itself be waiting to
 * report.  With the halt_on_conflict option the program is aborted after
 * the handler returns.
 *
 * Return: the handler installed before, or NULL.
 */
valor_conflict_handler valor_set_conflict_handler(valor_conflict_handler fn);

/**
 * valor_conflict_count() - the number of conflicts reported so far
 *
 * Counts the conflicts reported since the program started, in all
 * threads (suppressed and duplicate conflicts are not counted).  A test
 * can run a phase and check the count afterwards; valor_validate_reads()
 * first makes valor's read-write conflicts of the calling thread visible.
 */
unsigned long long valor_conflict_count(void);

/**
 * valor_validate_reads() - check the calling thread's pending reads now
 *
 * The analysis valor finds read-write conflicts lazily, when the reading
 * thread's region ends.  This validates the reads the calling thread has
 * made in its current region against the writes other threads have made
 * since, reporting any conflict now; the region goes on.  Use it before
 * the effects of a region leave the process by a way the runtime does not
 * watch, or before valor_conflict_count().  The analyses fastrcd and
 * fasttrack report every conflict eagerly, so for them it does nothing.
 *
 * Return: the number of conflicts this call found.
 */
int valor_validate_reads(void);

/**
 * valor_current_thread() - the logical id of the calling thread
 *
 * The id that struct valor_conflict_side and the reports name the thread
 * by: 1 for the main thread, then one per pthread_create() in creation
 * order, never reused.  Return: the id, or 0 if the thread is not
 * analysed.
 */
unsigned long long valor_current_thread(void);

#ifdef __cplusplus
}
#endif

#endif /* VALOR_VALOR_H */
