// SPDX-License-Identifier: GPL-2.0
/*
 * OpenMP without a race (GCC's libgomp): every construct whose ordering
 * the runtime takes from libgomp's entry points, each used so that an
 * analysis that missed it would report a conflict.
 *
 *   - a `parallel for` writes an array and the next one (a combined
 *     `parallel for` with a dynamic schedule) reads it shifted: the
 *     join of one region and the fork of the next order them;
 *   - in one region, a `for` writes, its barrier waits, a `for` with a
 *     dynamic schedule reads what the other thread wrote; `single`,
 *     `single copyprivate`, `sections` and an explicit barrier order
 *     the rest;
 *   - counters under `critical`, a named `critical`, an omp_lock_t, a
 *     nestable lock and a long double `atomic` (which libgomp
 *     serializes with a lock of its own), and an `ordered` sequence.
 *
 * Each phase repeats, so that libgomp's pool threads serve several
 * regions.  Exits 0 when every result is what the serial code gives.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4096
#define ROUNDS 20
#define ITERS 200

static long a[N], b[N];
static long crit, named, locked, nested, ordered_next, copied[2];
static long double total;
static omp_lock_t lock;
static omp_nest_lock_t nest_lock;

static void counters(void)
{
	for (int i = 0; i < ITERS; i++) {
#pragma omp critical
		crit++;
#pragma omp critical(valor_named)
		named++;
		omp_set_lock(&lock);
		locked++;
		omp_unset_lock(&lock);
		omp_set_nest_lock(&nest_lock);
		omp_set_nest_lock(&nest_lock);
		nested++;
		omp_unset_nest_lock(&nest_lock);
		omp_unset_nest_lock(&nest_lock);
#pragma omp atomic
		total += 1.0L;
	}
}

int main(void)
{
	long sum = 0, want = 0, sections = 0;
	int bad = 0;

	omp_init_lock(&lock);
	omp_init_nest_lock(&nest_lock);
	for (int r = 0; r < ROUNDS; r++) {
#pragma omp parallel for num_threads(2)
		for (int i = 0; i < N; i++)
			a[i] = i + r;
#pragma omp parallel for num_threads(2) schedule(dynamic, 64) reduction(+ : sum)
		for (int i = 0; i < N; i++)
			sum += a[(i + N / 2) % N];
#pragma omp parallel num_threads(2)
		{
#pragma omp for
			for (int i = 0; i < N; i++)
				b[i] = a[i] * 2;
#pragma omp for schedule(dynamic, 32)
			for (int i = 0; i < N; i++)
				a[i] = b[N - 1 - i];
#pragma omp single
			sections++;
			{
				long token;

#pragma omp single copyprivate(token)
				token = sections * 3 + r;
				copied[omp_get_thread_num() & 1] = token;
			}
#pragma omp sections
			{
#pragma omp section
				b[0] = a[0];
#pragma omp section
				b[1] = a[1];
			}
			counters();
#pragma omp barrier
#pragma omp for ordered schedule(static, 1)
			for (int i = 0; i < 64; i++) {
#pragma omp ordered
				bad |= ordered_next++ != r * 64 + i;
			}
		}
		for (int i = 0; i < N; i++)
			want += i + r;
		bad |= a[0] != 2 * (N - 1 + r) || b[1] != a[1];
		bad |= copied[0] != (r + 1) * 3 + r || copied[1] != copied[0];
	}
	bad |= sum != want || sections != ROUNDS;
	bad |= crit != 2L * ROUNDS * ITERS || named != crit || locked != crit ||
	       nested != crit || total != (long double)crit;
	printf("%s\n", bad ? "wrong results" : "ok");
	return bad;
}
