// SPDX-License-Identifier: GPL-2.0
/*
 * Neighbouring reads and writes that the pass checks as one span, for
 * pass_test.c.
 * Each reader below reads fields of one struct at constant offsets from
 * one pointer; T1 writes some of those fields, its region still open,
 * before T2 reads them.
 *
 *  - length() reads x, y and z, one span: T1's write of z, the span's
 *    last field, is a conflict, reported at the span's line (marked
 *    span).  T2 has read x alone before, so the read filter holds the
 *    span's first cell but not the rest: the span's inline look must
 *    not take that for all of it.
 *  - bent() reads x, then takes a branch or two, then reads y: one span
 *    across the branches, named by x's line.  T1's write of y is a
 *    conflict (marked bent).
 *  - ends() reads a and c but not b, which lies between them: no span
 *    may take in b, and T1's write of b is no conflict.  Its write of a
 *    neighbour's c, past the struct, is none either.
 *  - T1's place() writes x, y and z of pw, one write span; T2's read of
 *    pw.z is a conflict with it, named by the span's line (marked
 *    place).  set_ends() writes a and c of wt but not b: T2's read of
 *    wt.b is no conflict.
 *
 * Exactly three write-read conflicts, at the lines marked.
 */
#include <pthread.h>
#include <stdio.h>

#include "sched.h"

struct point {
	double x, y, z;
};

struct triple {
	long a, b, c;
};

struct point pt, pb, pw;
struct triple tr[2], wt;
double out_first, out_len, out_bent, out_placed;
long out_ends, out_between;

__attribute__((noinline)) static double first_of(const struct point *p)
{
	return p->x;
}

__attribute__((noinline)) static double length(const struct point *p)
{
	return p->x * p->x + p->y * p->y + p->z * p->z; /* span: read */
}

__attribute__((noinline)) static double bent(const struct point *p, double lim)
{
	double d = p->x; /* bent: read */

	if (d > lim)
		d -= 2 * lim;
	else if (d < -lim)
		d += 2 * lim;
	return d * p->y;
}

__attribute__((noinline)) static long ends(const struct triple *t)
{
	return t->a + t->c;
}

__attribute__((noinline)) static void place(struct point *p, double v)
{
	p->x = v; /* place: write */
	p->y = 2 * v;
	p->z = 3 * v;
}

__attribute__((noinline)) static void set_ends(struct triple *t, long v)
{
	t->a = v;
	t->c = v;
}

static void *t1_fn(void *arg)
{
	(void)arg;
	pt.z = 3.0; /* span: write */
	pb.y = 2.0; /* bent: write */
	tr[0].b = 7;
	tr[1].a = 9;
	place(&pw, 1.5);
	set_ends(&wt, 4);
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	out_first = first_of(&pt);
	out_len = length(&pt);
	out_bent = bent(&pb, 0.5);
	out_ends = ends(&tr[0]);
	out_placed = pw.z; /* place: read */
	out_between = wt.b;
	sched_done(2);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;

	pthread_create(&t1, NULL, t1_fn, NULL);
	pthread_create(&t2, NULL, t2_fn, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("%g %g %g %ld %g %ld\n", out_first, out_len, out_bent, out_ends,
	       out_placed, out_between);
	return 0;
}
