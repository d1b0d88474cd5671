/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the report files share: report.c builds a struct rt_report for a
 * conflict (symbolized stacks, what the memory is, the threads involved),
 * suppress.c decides whether to print it, report_format.c prints it as
 * text or as one JSON line.
 *
 * Everything here runs on the report path only, with the thread busy and
 * report.c's lock held; none of it is on the hot path.
 */
#ifndef VALOR_RUNTIME_REPORT_H
#define VALOR_RUNTIME_REPORT_H

#include "rt.h"
#include "symbolize.h"

/* Frames one report may hold, over all its stacks (inline frames count). */
#define RT_REPORT_FRAMES 2048

struct rt_stack_view {
	const struct rt_frame *frame;
	unsigned n;
};

/* One side of a conflict, as printed. */
struct rt_report_access {
	uint64_t tid;
	bool is_write;
	/* "read", "write", or for a write that ends memory's life "free"... */
	const char *op;
	uintptr_t site;
	/* Frame 0 is the site; the rest when they could be recovered. */
	struct rt_stack_view stack;
	/* Only the site is known (the earlier access of another thread). */
	bool site_only;
};

enum rt_mem_type {
	RT_MEM_UNKNOWN,
	RT_MEM_HEAP,
	RT_MEM_GLOBAL,
	RT_MEM_STACK,
	RT_MEM_TLS,
};

struct rt_report_mem {
	enum rt_mem_type type;
	uintptr_t start; /* heap block or global symbol */
	size_t size;
	uint64_t tid; /* heap: allocating thread; stack/tls: owner */
	bool tid_is_main;
	struct rt_stack_view alloc_stack; /* heap */
	const char *name; /* global: symbol name, NULL if none */
	const char *module; /* global: the object that defines it */
	uintptr_t module_base;
};

struct rt_report_thread {
	uint64_t tid;
	bool known; /* creation information was found */
	bool is_main; /* the program's first thread */
	bool finished;
	pid_t os_tid;
	uint64_t parent;
	bool parent_is_main;
	struct rt_stack_view created_at;
};

struct rt_report {
	const struct valor_conflict *c;
	/*
	 * @current is the access of the thread that found the conflict (the
	 * one running now); @earlier is the other thread's access.  For a
	 * lazy read-write conflict @current is the validated read and
	 * @earlier the write that overwrote it while the reading region was
	 * still going; @validated_at is where the validation ran.
	 */
	struct rt_report_access current, earlier;
	struct rt_stack_view validated_at;
	/* NULL, or "thread"/"program" when validation ran at its exit. */
	const char *validated_at_exit;
	struct rt_report_mem mem;
	struct rt_report_thread thread[2];
	unsigned nthreads;
	/* The innermost frame of each site, for SUMMARY: first, second. */
	const struct rt_frame *first_top, *second_top;
};

/* ---- output (report_format.c) ---- */

void rt_format_report(const struct rt_report *r);
/* halted: the summary printed just before abort() (halt_on_conflict). */
void rt_format_summary(uint64_t conflicts, uint64_t suppressed,
		       uint64_t repeated, bool halted);

/* A buffered writer to the report log; format functions share one. */
struct rt_out {
	size_t len;
	char buf[16384];
};
void rt_out_flush(struct rt_out *o);
void rt_out_puts(struct rt_out *o, const char *s);
__attribute__((format(printf, 2, 3))) void rt_out_printf(struct rt_out *o,
							 const char *fmt, ...);
void rt_out_json_string(struct rt_out *o, const char *s);

/* ---- suppressions (suppress.c) ---- */

/* Read the suppressions option's file; exits with a message on errors. */
void rt_suppress_init(void);
/* The matching suppression's pattern ("race:foo"), or NULL; counts it. */
const char *rt_suppress_match(const struct rt_report *r);
/* Call @fn for every suppression that matched at least once. */
void rt_suppress_for_each_matched(void (*fn)(void *arg, const char *type,
					     const char *pattern,
					     uint64_t hits),
				  void *arg);

/* ---- heap blocks (heapmap.c) ---- */

struct rt_heap_block {
	uintptr_t start;
	size_t size;
	uint64_t tid;
	uint32_t stack;
};

/* The live block containing @addr (block start .. start+size-1). */
bool rt_heap_find(uintptr_t addr, struct rt_heap_block *out);

/* ---- threads that are gone (report.c) ---- */

/*
 * rt_thread_free() calls this before freeing @t, so that reports can
 * still say where a joined thread was created.
 */
void rt_report_thread_freed(const struct rt_thread *t);

/*
 * The child of fork() calls this: locks that other threads of the
 * parent held are released, and the child's pid is used from now on.
 */
void rt_report_after_fork_child(void);
void rt_heap_after_fork_child(void);

#endif /* VALOR_RUNTIME_REPORT_H */
