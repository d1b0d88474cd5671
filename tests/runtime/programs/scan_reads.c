// SPDX-License-Identifier: GPL-2.0
/*
 * Loops that leave early (scans), whose reads the pass checks once,
 * where the loop leaves, as the bytes it read, for pass_test.c.  T1
 * writes bytes of two texts, its region still open; T2 then scans them.
 *
 *  - to_dot() reads up to and including the first '.', at byte 10 of
 *    dotted: it leaves after the read that found it.  T1's write of
 *    byte 3 is a conflict (marked dot); its write of byte 11, just past
 *    the '.', is not.
 *  - letters() reads while the bytes are letters, up to its bound of 16
 *    bytes, all letters: it leaves by the bound, tested before the read.
 *    T1's write of byte 15, the last one read, is a conflict (marked
 *    bound); its write of byte 16, just past the bound, is not.
 *  - guarded() reads g[i], then s[i], while g[i] is not 0 and s[i] is
 *    a letter.  The optimizer rotates it so that the loop reads s[i],
 *    leaves if it is no letter, then reads g[i + 1]: s[8] is a '.', so
 *    it leaves at the first of those exits, before reading g[9].  T1's
 *    writes of s[7] and of g[8], the last bytes read, are conflicts
 *    (marked guard and go); its writes of s[9] and g[9] are not.
 *
 * A range one byte too long at any exit would report one of the writes
 * that are not conflicts; one byte too short would miss the last byte
 * read.  Exactly four write-read conflicts, at the lines marked.
 */
#include <pthread.h>
#include <stdio.h>

#include "sched.h"

char dotted[32] = "abcdefghij.klmnopqrstuvwxyz";
char word[32] = "abcdefghijklmnopqrstuvwxyz";
char go[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
char guarded_word[32] = "abcdefgh.jklmnopqrstuvwxyz";
long out_dot, out_letters, out_guarded;
/* Not constants the compiler could unroll the scans for. */
char *volatile dotted_at = dotted, *volatile word_at = word;
char *volatile go_at = go, *volatile guarded_at = guarded_word;
volatile long dotted_len = 32, word_len = 16;

__attribute__((noinline)) static long to_dot(const char *s, long n)
{
	long i = 0;

	while (i < n && s[i] != '.') /* dot: read */
		i++;
	return i;
}

__attribute__((noinline)) static long letters(const char *s, long n)
{
	long i = 0;

	while (i < n && s[i] >= 'a') /* bound: read */
		i++;
	return i;
}

__attribute__((noinline)) static long guarded(const char *g, const char *s)
{
	long i = 0;

	while (g[i] && s[i] >= 'a') /* guard: read */
		i++;
	return i;
}

static void *t1_fn(void *arg)
{
	(void)arg;
	dotted[3] = 'D'; /* dot: write */
	dotted[11] = 'K';
	word[15] = 'q'; /* bound: write */
	word[16] = 'r';
	guarded_word[7] = 'h'; /* guard: write */
	guarded_word[9] = 'j';
	go[8] = 2; /* go: write */
	go[9] = 2;
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	out_dot = to_dot(dotted_at, dotted_len);
	out_letters = letters(word_at, word_len);
	out_guarded = guarded(go_at, guarded_at);
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
	printf("%ld %ld %ld\n", out_dot, out_letters, out_guarded);
	return 0;
}
