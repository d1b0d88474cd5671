// SPDX-License-Identifier: GPL-2.0
/*
 * Code shapes for the pass's tests (tests/runtime/pass_test.c), which
 * compile this file to IR with the pass and count, per function, the
 * checks and calls it left.  Each function is one case; its comment says
 * what the pass must leave.  The accesses are volatile where LLVM itself
 * would otherwise merge or drop the repeated ones: what remains to
 * remove is then the pass's own doing.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void opaque(void);
void keep(int *p);

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* One read check: the second read of the same address is covered. */
int reread(volatile int *p)
{
	int a = *p;

	return a + *p;
}

/* Two: a lock between the reads may synchronize. */
int reread_across_lock(volatile int *p)
{
	int a = *p;

	pthread_mutex_lock(&lock);
	a += *p;
	pthread_mutex_unlock(&lock);
	return a;
}

/* A hash chain under a lock. */
struct chain {
	struct chain *next;
	long key;
};

struct chain **table;

/*
 * The bucket's address is known before the lock (a load of the global
 * table pointer and an index): table and table[h] are fetched before
 * the call, the node that table[h] names is not.
 */
int lookup_under_lock(unsigned long h)
{
	int found = 0;

	pthread_mutex_lock(&lock);
	for (struct chain *c = table[h]; c; c = c->next)
		if (c->key == (long)h) {
			found = 1;
			break;
		}
	pthread_mutex_unlock(&lock);
	return found;
}

/* *pp is fetched; (*pp)->key's address is only known under the lock. */
long deref_under_lock(struct chain **pp)
{
	long k;

	pthread_mutex_lock(&lock);
	k = (*pp)->key;
	pthread_mutex_unlock(&lock);
	return k;
}

/* A write check only: a write covers a later read. */
int read_after_write(volatile int *p)
{
	*p = 1;
	return *p;
}

/* A read check and a write check: a read does not cover a write. */
void write_after_read(volatile int *p)
{
	int a = *p;

	*p = a + 1;
}

/* One write check, before the read: the block writes what it read. */
void increment(int *p)
{
	(*p)++;
}

/* The write may not happen: a read check, and a write check. */
void clamp(int *p)
{
	if (*p > 0)
		*p = 0;
}

/* The call may not return (and may synchronize): both checks stay. */
void increment_around_call(int *p)
{
	int v = *p;

	opaque();
	*p = v + 1;
}

struct pair {
	double re, im;
};

/*
 * A swap of structs is three 16-byte copies through a temporary: one
 * write check for each element, before its copy is read.
 */
void swap_pairs(struct pair *a, long i, long j)
{
	struct pair t = a[i];

	a[i] = a[j];
	a[j] = t;
}

/* The call may not return: the reads keep their checks. */
void swap_pairs_around_call(struct pair *a, long i, long j)
{
	struct pair t = a[i];

	opaque();
	a[i] = a[j];
	a[j] = t;
}

/* One read check: a narrower read at the same address is covered. */
int narrower_reread(volatile long *p)
{
	long a = *p;

	return (int)a + *(volatile int *)p;
}

/* Two: a wider read is not covered by a narrower one. */
long wider_reread(volatile long *p)
{
	int a = *(volatile int *)p;

	return a + *p;
}

/* Two: a call on one path between the reads may synchronize. */
int reread_after_call_on_one_path(volatile int *p, int c)
{
	int a = *p;

	if (c)
		opaque();
	return a + *p;
}

/* One read check of *p: a branch without calls between the reads. */
int reread_after_branch(volatile int *p, volatile int *q, int c)
{
	int a = *p;

	if (c)
		*q = 2;
	return a + *p;
}

/* One read check of *p (and one of q[i]): the loop's reads of *p are covered. */
int reread_in_loop(volatile int *p, volatile int *q, int n)
{
	int s = *p;

	for (int i = 0; i < n; i++)
		s += *p + q[i];
	return s;
}

/* Two: the loop calls something that may synchronize. */
int reread_in_loop_with_call(volatile int *p, int n)
{
	int s = *p;

	for (int i = 0; i < n; i++) {
		s += *p;
		opaque();
	}
	return s;
}

/* None: the array never leaves the function. */
int private_local(int n)
{
	int a[64];

	for (int i = 0; i < n; i++)
		a[i & 63] = i;
	return a[n & 63];
}

/* Checks: the array's address is passed on, so another thread may see it. */
int escaping_local(int n)
{
	int a[64];

	keep(a);
	for (int i = 0; i < n; i++)
		a[i & 63] = i;
	return a[n & 63];
}

/*
 * The counts are not checked: a block fresh from calloc whose address
 * goes nowhere but free, so no other thread can reach it (the input is).
 */
int private_block(const unsigned char *in, int n)
{
	int *count = calloc(256, sizeof(*count));
	int best = 0;

	if (!count)
		return -1;
	for (int i = 0; i < n; i++)
		count[in[i]]++;
	for (int v = 0; v < 256; v++)
		if (count[v] > count[best])
			best = v;
	free(count);
	return best;
}

int *published;

/* Checks: the block's address is stored where another thread may read it. */
int escaping_block(int n)
{
	int *b = malloc(64 * sizeof(*b));

	if (!b)
		return -1;
	published = b;
	for (int i = 0; i < n; i++)
		b[i & 63] = i;
	return b[n & 63];
}

/* Checks: realloc's block may hold what other threads wrote. */
int reallocated_block(int *old, int n)
{
	int *b = realloc(old, 64 * sizeof(*b));
	int v;

	if (!b)
		return -1;
	for (int i = 0; i < n; i++)
		b[i & 63] = i;
	v = b[n & 63];
	free(b);
	return v;
}

/* None: no_sanitize("thread") opts a function out. */
__attribute__((no_sanitize("thread"))) int not_instrumented(volatile int *p)
{
	return *p;
}

/* The runtime's atomic operations, with the orders given. */
int atomics(int *p, long *q)
{
	int v = __atomic_load_n(p, __ATOMIC_ACQUIRE);

	__atomic_store_n(p, v + 1, __ATOMIC_RELEASE);
	v += __atomic_fetch_add(p, 2, __ATOMIC_SEQ_CST);
	__atomic_compare_exchange_n(q, &(long){ 0 }, 7, 0, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return v;
}

/* A compare-and-swap loop of runtime calls: the ABI has no fetch_max. */
int atomic_max(int *p, int v)
{
	return __atomic_fetch_max(p, v, __ATOMIC_RELAXED);
}

/* Calls to the C library's memcpy and memset, which the runtime intercepts. */
void block_copy(char *dst, const char *src, size_t n)
{
	memcpy(dst, src, n);
	memset(dst + n, 0, n);
}

/* A copy of a few bytes stays inline, with checks of 16 and 8 bytes. */
void small_copy(char *dst, const char *src)
{
	memcpy(dst, src, 24);
}

/* A range check: 3 bytes is no size the check has. */
struct three {
	char b[3];
};

void odd_size(volatile struct three *dst, struct three v)
{
	*dst = v;
}

/* Coalesced: one read range before the loop, no check in it. */
long sum_array(const int *a, long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += a[i];
	return s;
}

/* Not coalesced: every other element is no block of memory. */
void strided(int *a, long n)
{
	for (long i = 0; i < n; i++)
		a[2 * i] = 0;
}

/*
 * Coalesced: every other double, read, is a nest of one element every
 * 16 bytes, checked before the loop (the gaps are not checked).
 */
double sum_even(const double *a, long n)
{
	double s = 0;

	for (long i = 0; i < n; i++)
		s += a[2 * i];
	return s;
}

/* Written too: one write nest before the loop, which covers the reads. */
void scale_even(double *a, long n)
{
	for (long i = 0; i < n; i++)
		a[2 * i] *= 2;
}

/* Not coalesced: every other int is half a cell each time. */
long sum_even_ints(const int *a, long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += a[2 * i];
	return s;
}

/* Not coalesced: the loop may leave before it has read them all. */
long sum_until_negative(const int *a, long n)
{
	long s = 0;

	for (long i = 0; i < n; i++) {
		if (a[i] < 0)
			break;
		s += a[i];
	}
	return s;
}

/* Not coalesced: a lock in the loop. */
long sum_locked(const int *a, long n)
{
	long s = 0;

	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		s += a[i];
		pthread_mutex_unlock(&lock);
	}
	return s;
}

/* b[] is read on every iteration (a range); a[i] only sometimes (checks). */
void copy_some(int *a, const int *b, long n)
{
	for (long i = 0; i < n; i++)
		if (b[i])
			a[i] = 1;
}

/*
 * Coalesced: exp() is the C library's, which synchronizes with nothing
 * (it writes only errno), so a loop calling it is still coalesced: a
 * read range and a write range (reads only with -valor-coalesce-writes=0).
 */
void exps(double *out, const double *in, long n)
{
	for (long i = 0; i < n; i++)
		out[i] = exp(in[i]);
}

/*
 * A function of this file that cannot synchronize (the math library's
 * exp() may set errno, so LLVM does not infer nosync for it): a loop
 * calling it is coalesced.  noinline keeps the call in the loop.
 */
static __attribute__((noinline)) double price(double x)
{
	return exp(x) + exp(-x);
}

void prices(double *out, const double *in, long n)
{
	for (long i = 0; i < n; i++)
		out[i] = price(in[i]);
}

/* One that takes a lock, even through another: the loop is not. */
static __attribute__((noinline)) double logged(double x)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	return x;
}

static __attribute__((noinline)) double price_logged(double x)
{
	return exp(logged(x));
}

void prices_logged(double *out, const double *in, long n)
{
	for (long i = 0; i < n; i++)
		out[i] = price_logged(in[i]);
}

/*
 * Coalesced as a nest: the inner loop walks a column of b (a step of a
 * row, no block), but the columns of all the middle loop's iterations
 * are all of b: one __valor_pass_read_nest before the middle loop.
 */
void matrix_product(double *c, const double *a, const double *b, long n)
{
	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++) {
			double s = 0;

			for (long k = 0; k < n; k++)
				s += a[i * n + k] * b[k * n + j];
			c[i * n + j] = s;
		}
}

/*
 * A nest with gaps: the first half of each row, a block each, walked
 * for every column; the other halves are never checked.
 */
void half_column_sums(double *out, const double *b, long n)
{
	for (long j = 0; j < n / 2; j++) {
		double s = 0;

		for (long k = 0; k < n; k++)
			s += b[k * n + j];
		out[j] = s;
	}
}

/*
 * Two nests: a tile's column walks read a stretch of each of the tile's
 * rows (struct copies: small memcpys, in pieces), and write a stretch
 * of each row of its transpose, however far apart the rows are.
 */
void transpose_tile(struct pair *dst, const struct pair *src, long n, long r0,
		    long r1, long c0, long c1)
{
	for (long r = r0; r < r1; r++)
		for (long c = c0; c < c1; c++)
			dst[r * n + c] = src[c * n + r];
}

/*
 * Two nests of each kind, before the loop over i: an FFT stage's
 * butterflies, out of place.  The loop over i steps by a value, so its
 * count divides by it; a and b are each the half of every len elements,
 * a block each.  Checked in the inner loop instead, they would be ranges
 * made once per i.
 */
void butterfly_stage(struct pair *out, const struct pair *in, long n, long len)
{
	long half = len / 2;

	for (long i = 0; i < n; i += len)
		for (long j = 0; j < half; j++) {
			struct pair a = in[i + j], b = in[i + j + half];

			out[i + j].re = a.re + b.re;
			out[i + j].im = a.im + b.im;
			out[i + j + half].re = a.re - b.re;
			out[i + j + half].im = a.im - b.im;
		}
}

/* No nest: the middle loop may synchronize between the columns. */
void column_sums_locked(double *out, const double *b, long n)
{
	for (long j = 0; j < n; j++) {
		double s = 0;

		for (long k = 0; k < n; k++)
			s += b[k * n + j];
		pthread_mutex_lock(&lock);
		out[j] = s;
		pthread_mutex_unlock(&lock);
	}
}

/*
 * Coalesced: *total does not move with the loop, and it may alias u, so
 * the loop stores it on every iteration (LLVM loads it once, before the
 * loop): a write range of its 8 bytes before the loop, and a read range
 * of u.
 */
void accumulate(double *total, const double *u, long n)
{
	for (long k = 0; k < n; k++)
		*total += u[k];
}

struct point3 {
	double x, y, z;
};

struct gapped {
	long a, b, c;
};

double branch_sink;

/* One span of 24 bytes: three fields read together, as one check. */
double point_length(const struct point3 *p)
{
	return p->x * p->x + p->y * p->y + p->z * p->z;
}

/* One span across the branches between x and y, which both paths pass. */
double point_bent(const struct point3 *p, double lim)
{
	double d = p->x;

	if (d > lim)
		branch_sink = d;
	return d * p->y;
}

/* Two checks: b, between the two fields read, is not, so no span. */
long gapped_ends(const struct gapped *g)
{
	return g->a + g->c;
}

/* Two checks: the call between the reads may synchronize. */
double fields_around_call(const struct point3 *p)
{
	double x = p->x;

	opaque();
	return x + p->y;
}

/* Two checks: y is read on one path only. */
double field_on_one_path(const struct point3 *p, int c)
{
	double s = p->x;

	if (c)
		s += p->y;
	return s;
}

/* One write span of 24 bytes: three fields written together. */
void point_set(struct point3 *p, double v)
{
	p->x = v;
	p->y = v + 1;
	p->z = v + 2;
}

/* One of each: the reads of d, and f's fields, read then written. */
void point_add(struct point3 *f, const struct point3 *d)
{
	f->x += d->x;
	f->y += d->y;
	f->z += d->z;
}

/* Two write checks: b, between them, is not written. */
void gapped_set_ends(struct gapped *g, long v)
{
	g->a = v;
	g->c = v;
}

/* Two: a write span takes whole 8-byte cells only. */
void ints_set(int *p, int v)
{
	p[0] = v;
	p[1] = v + 1;
}
