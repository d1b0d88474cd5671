/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hand-written event traces for the engine tests: constructors for
 * struct valor_event, and trace_run() which replays a trace into a fresh
 * context and collects every conflict, translated back into the trace's
 * own terms (trace thread ids, event indexes).
 *
 * Sites: trace_run() gives every event whose ip is 0 the site
 * "index + 1", so a conflict's first/second site minus one is the index
 * of the event that made that access.
 */
#ifndef VALOR_TESTS_TRACE_H
#define VALOR_TESTS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/valor.h>
#include <valor/engine.h>

#define T_EV(k, t, ...) \
	((struct valor_event){ .kind = (k), .tid = (t), __VA_ARGS__ })
#define T_CREATE(t, child) T_EV(VALOR_EV_THREAD_CREATE, t, .arg = (child))
#define T_EXIT(t) T_EV(VALOR_EV_THREAD_EXIT, t, .arg = 0)
#define T_JOIN(t, u) T_EV(VALOR_EV_THREAD_JOIN, t, .arg = (u))
#define T_ACQ(t, l) T_EV(VALOR_EV_ACQUIRE, t, .addr = (l))
#define T_REL(t, l) T_EV(VALOR_EV_RELEASE, t, .addr = (l))
#define T_RD(t, a, n) T_EV(VALOR_EV_ACCESS, t, .addr = (a), .size = (n))
#define T_WR(t, a, n)                                      \
	T_EV(VALOR_EV_ACCESS, t, .addr = (a), .size = (n), \
	     .flags = VALOR_EVF_WRITE)
/* @count elements of @n bytes, @stride apart (valor_access_strided()) */
#define T_RDS(t, a, n, stride, count)                      \
	T_EV(VALOR_EV_ACCESS, t, .addr = (a), .size = (n), \
	     .flags = VALOR_EVF_STRIDED,                   \
	     .arg = VALOR_ACCESS_STRIDED(stride, count))
#define T_WRS(t, a, n, stride, count)                      \
	T_EV(VALOR_EV_ACCESS, t, .addr = (a), .size = (n), \
	     .flags = VALOR_EVF_WRITE | VALOR_EVF_STRIDED, \
	     .arg = VALOR_ACCESS_STRIDED(stride, count))
#define T_FREE(t, a, n) T_EV(VALOR_EV_FREE, t, .addr = (a), .arg = (n))
#define T_END(t) T_EV(VALOR_EV_REGION_END, t, .arg = 0)
#define T_VALIDATE(t) T_EV(VALOR_EV_VALIDATE, t, .arg = 0)

#define TRACE_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Index used for conflicts reported by the final valor_replay_finish(). */
#define TRACE_AT_FINISH ((size_t)-1)
/* Index used for a site that is not a trace event (unknown, 0). */
#define TRACE_NO_EVENT ((size_t)-2)

struct trace_conflict {
	struct valor_conflict c; /* as reported (logical tids) */
	size_t reported_at; /* event index, or TRACE_AT_FINISH */
	uint32_t first_tid; /* trace thread ids of both sides */
	uint32_t second_tid;
	size_t first_event; /* event indexes of both sides (from sites) */
	size_t second_event;
};

struct trace_result {
	struct trace_conflict *v;
	size_t n;
	size_t cap;
	int err; /* first negative replay return, 0 if none */
	size_t err_event; /* its event index */
	struct valor_stats stats; /* the context's counters at the end */
};

/*
 * Replay @ev[0..n) into a new context made from @params (its on_conflict
 * and arg are overridden), then finish.  Returns 0, or -1 if the context
 * could not be created or an event was rejected (see out->err).
 */
int trace_run(const struct valor_params *params, const struct valor_event *ev,
	      size_t n, struct trace_result *out);
void trace_result_free(struct trace_result *r);

/* Number of conflicts of @kind (or any kind when kind < 0). */
size_t trace_count(const struct trace_result *r, int kind);

/*
 * Number of conflicts of @kind whose bytes include @addr and whose
 * threads are {a, b} in either order.
 */
size_t trace_count_at(const struct trace_result *r, int kind, uint64_t addr,
		      uint32_t a, uint32_t b);

/* Print every conflict, one per line, prefixed with "# " (TAP comment). */
void trace_dump(const struct trace_result *r, const char *title);

#endif /* VALOR_TESTS_TRACE_H */
