/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the libgomp interceptors share: the parallel region a thread is
 * in (intercept_omp.c) and the lookup of libgomp's own functions.
 */
#ifndef VALOR_RUNTIME_INTERCEPT_OMP_H
#define VALOR_RUNTIME_INTERCEPT_OMP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "intercept.h"

typedef void (*omp_body)(void *);

/* libgomp's function @name, or a fatal error naming it. */
void *rt_omp_real(void *_Atomic *slot, const char *name);

#define OMP_REAL(name)                                               \
	({                                                           \
		static void *_Atomic real_##name;                    \
		(__typeof__(&name))rt_omp_real(&real_##name, #name); \
	})

/*
 * One parallel region as its threads see it: the body and its argument
 * the compiler gave, and the team of the region around it on the
 * thread that runs this one.  Its address keys the region's objects:
 * fork, join, and the team's barrier.
 */
struct omp_team {
	omp_body body;
	void *data;
	struct omp_team *outer;
};

#define OMP_FORK(t) ((uintptr_t)(t))
#define OMP_JOIN(t) ((uintptr_t)(t) + 1)
#define OMP_BARRIER(t) ((uintptr_t)(t) + 2)
#define OMP_ORDERED(t) ((uintptr_t)(t) + 3)
#define OMP_COPYPRIVATE(t) ((uintptr_t)(t) + 4)

/* The region the thread runs the body of, NULL outside any. */
extern __thread struct omp_team *rt_omp_cur
	__attribute__((tls_model("initial-exec")));

/* rt_omp_cur, or the one team of all code outside a region we saw start. */
struct omp_team *rt_omp_team_now(void);

#endif /* VALOR_RUNTIME_INTERCEPT_OMP_H */
