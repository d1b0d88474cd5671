/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deterministic interleavings for the runtime corpus, invisible to the
 * detector.
 *
 * sched.c is compiled WITHOUT -fsanitize and linked into each corpus
 * program, so nothing it does is an access or a synchronization event
 * for the analyses: its C11 atomics and futex calls are real ordering
 * for the CPU, none for Valor, FastRCD or FastTrack.  A program uses it
 * to force "T1 writes, then T2 reads while T1's region is still open"
 * without sleeps and without adding a happens-before edge that would
 * hide the race it demonstrates.
 *
 * Steps are small integers (0 .. SCHED_STEPS - 1), each done at most once
 * per process; slots hold one value each.
 */
#ifndef VALOR_CORPUS_SCHED_H
#define VALOR_CORPUS_SCHED_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SCHED_STEPS 64

/* Mark @step as happened and wake every thread waiting for it. */
void sched_done(int step);

/* Block until @step has happened. */
void sched_wait(int step);

/* Keep @value in @slot, for another thread to read invisibly. */
void sched_note(int slot, uintptr_t value);

/* The value noted in @slot, waiting until one is noted. */
uintptr_t sched_noted(int slot);

/* Note the calling thread's kernel thread id in @slot. */
void sched_note_thread(int slot);

/*
 * Block until the thread noted in @slot has exited completely, so glibc
 * can hand its stack, TLS and pthread_t to the next thread created.
 */
void sched_wait_thread_gone(int slot);

#ifdef __cplusplus
}
#endif

#endif /* VALOR_CORPUS_SCHED_H */
