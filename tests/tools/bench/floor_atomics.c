// SPDX-License-Identifier: GPL-2.0
/*
 * The floor runtime's atomics do the real operation and return the real
 * value: built by tests/tools/bench_smoke_test.c with `valor cc -c` (so
 * every atomic below is a __tsan_atomic* call) and linked with
 * build/bench/lib/libvalor-floor.a.  Every operation of every size, the
 * __sync builtins, failing and succeeding compare-and-swaps, and two
 * threads contending on counters and on a spin lock.  Prints
 * "floor_atomics: ok" and exits 0, or names each failed check and exits 1.
 */
#include <pthread.h>
#include <stdio.h>

static int failures;

#define CHECK(cond)                                                     \
	do {                                                            \
		if (!(cond)) {                                          \
			fprintf(stderr, "floor_atomics: line %d: %s\n", \
				__LINE__, #cond);                       \
			failures++;                                     \
		}                                                       \
	} while (0)

/* A value of type T; for 128 bits with the upper half in use too. */
#define K(T, v)                       \
	((T)((unsigned __int128)(v) + \
	     (sizeof(T) == 16 ? (unsigned __int128)0x5a5a << 64 : 0)))

#define TEST_TYPE(T, name)                                                     \
	static void test_##name(void)                                          \
	{                                                                      \
		static volatile T x;                                           \
		T e;                                                           \
                                                                               \
		__atomic_store_n(&x, K(T, 5), __ATOMIC_RELAXED);               \
		CHECK(__atomic_load_n(&x, __ATOMIC_ACQUIRE) == K(T, 5));       \
		__atomic_store_n(&x, K(T, 7), __ATOMIC_SEQ_CST);               \
		CHECK(__atomic_load_n(&x, __ATOMIC_SEQ_CST) == K(T, 7));       \
		__atomic_store_n(&x, K(T, 7), __ATOMIC_RELEASE);               \
		CHECK(__atomic_exchange_n(&x, K(T, 9), __ATOMIC_ACQ_REL) ==    \
		      K(T, 7));                                                \
		CHECK(x == K(T, 9));                                           \
		CHECK(__atomic_fetch_add(&x, 3, __ATOMIC_RELAXED) == K(T, 9)); \
		CHECK(x == K(T, 12));                                          \
		CHECK(__atomic_fetch_sub(&x, 2, __ATOMIC_RELEASE) ==           \
		      K(T, 12));                                               \
		CHECK(x == K(T, 10));                                          \
		x = 10;                                                        \
		CHECK(__atomic_fetch_and(&x, 6, __ATOMIC_ACQUIRE) == 10);      \
		CHECK(x == 2);                                                 \
		CHECK(__atomic_fetch_or(&x, 5, __ATOMIC_SEQ_CST) == 2);        \
		CHECK(x == 7);                                                 \
		CHECK(__atomic_fetch_xor(&x, 3, __ATOMIC_SEQ_CST) == 7);       \
		CHECK(x == 4);                                                 \
		CHECK(__atomic_fetch_nand(&x, 6, __ATOMIC_SEQ_CST) == 4);      \
		CHECK(x == (T) ~(T)4);                                         \
		CHECK(__atomic_add_fetch(&x, 5, __ATOMIC_SEQ_CST) ==           \
		      (T)((T) ~(T)4 + 5));                                     \
		x = K(T, 1);                                                   \
		e = K(T, 2); /* wrong: fails, and tells what it found */       \
		CHECK(!__atomic_compare_exchange_n(&x, &e, K(T, 3), 0,         \
						   __ATOMIC_SEQ_CST,           \
						   __ATOMIC_RELAXED));         \
		CHECK(e == K(T, 1) && x == K(T, 1));                           \
		CHECK(__atomic_compare_exchange_n(&x, &e, K(T, 3), 0,          \
						  __ATOMIC_ACQ_REL,            \
						  __ATOMIC_ACQUIRE));          \
		CHECK(x == K(T, 3));                                           \
		e = K(T, 3);                                                   \
		while (!__atomic_compare_exchange_n(&x, &e, K(T, 4), 1,        \
						    __ATOMIC_RELEASE,          \
						    __ATOMIC_RELAXED))         \
			;                                                      \
		CHECK(x == K(T, 4));                                           \
		CHECK(__sync_val_compare_and_swap(&x, K(T, 4), K(T, 6)) ==     \
		      K(T, 4));                                                \
		CHECK(__sync_val_compare_and_swap(&x, K(T, 4), K(T, 8)) ==     \
		      K(T, 6));                                                \
		CHECK(!__sync_bool_compare_and_swap(&x, K(T, 4), K(T, 8)));    \
		CHECK(__sync_bool_compare_and_swap(&x, K(T, 6), K(T, 8)));     \
		CHECK(__sync_fetch_and_add(&x, 1) == K(T, 8));                 \
		CHECK(__sync_lock_test_and_set(&x, K(T, 2)) == K(T, 9));       \
		CHECK(x == K(T, 2));                                           \
	}

TEST_TYPE(char, 8)
TEST_TYPE(short, 16)
TEST_TYPE(int, 32)
TEST_TYPE(long, 64)
__extension__ typedef __int128 i128;
TEST_TYPE(i128, 128)

#define ROUNDS 200000

static long counter64;
static i128 counter128 __attribute__((aligned(16)));
static int spin;
static long guarded; /* only under spin */

static void *contend(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		__atomic_fetch_add(&counter64, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&counter128, K(i128, 1), __ATOMIC_ACQ_REL);
		while (__atomic_exchange_n(&spin, 1, __ATOMIC_ACQUIRE))
			;
		guarded++;
		__atomic_store_n(&spin, 0, __ATOMIC_RELEASE);
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	test_8();
	test_16();
	test_32();
	test_64();
	test_128();
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, contend, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(counter64 == 2 * ROUNDS);
	CHECK(counter128 == (i128)((unsigned __int128)K(i128, 1) * 2 * ROUNDS));
	CHECK(guarded == 2 * ROUNDS);
	if (failures)
		return 1;
	printf("floor_atomics: ok\n");
	return 0;
}
