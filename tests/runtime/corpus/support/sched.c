// SPDX-License-Identifier: GPL-2.0
/*
 * The corpus's invisible scheduler (sched.h).  Built with plain
 * `cc -O2 -c`, never with -fsanitize, and it calls no function the
 * runtime intercepts (no pthread, no malloc, no stdio): only atomics and
 * raw system calls, so none of its ordering reaches the analyses.
 */
#include "sched.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

static int steps[SCHED_STEPS];
static int noted[SCHED_STEPS];
static uintptr_t slots[SCHED_STEPS];

static int checked(int i)
{
	if (i < 0 || i >= SCHED_STEPS) {
		static const char msg[] = "sched: step or slot out of range\n";

		syscall(SYS_write, 2, msg, sizeof(msg) - 1);
		syscall(SYS_exit_group, 70);
	}
	return i;
}

static void futex_wait(int *word, int val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
}

/* Wait for *word to become non-zero: spin briefly, then sleep on it. */
static void wait_nonzero(int *word)
{
	for (int spin = 0; spin < 200; spin++)
		if (__atomic_load_n(word, __ATOMIC_ACQUIRE))
			return;
	while (!__atomic_load_n(word, __ATOMIC_ACQUIRE))
		futex_wait(word, 0);
}

static void set_and_wake(int *word)
{
	__atomic_store_n(word, 1, __ATOMIC_RELEASE);
	futex_wake_all(word);
}

void sched_done(int step)
{
	set_and_wake(&steps[checked(step)]);
}

void sched_wait(int step)
{
	wait_nonzero(&steps[checked(step)]);
}

void sched_note(int slot, uintptr_t value)
{
	slots[checked(slot)] = value;
	set_and_wake(&noted[slot]);
}

uintptr_t sched_noted(int slot)
{
	wait_nonzero(&noted[checked(slot)]);
	return slots[slot];
}

void sched_note_thread(int slot)
{
	sched_note(slot, (uintptr_t)syscall(SYS_gettid));
}

/*
 * A thread's id stops naming a task only once the kernel has released
 * it, which is after it cleared the thread's tid word in its pthread
 * descriptor (CLONE_CHILD_CLEARTID): from then on glibc may reuse the
 * thread's stack.  No event tells us, so yield until tgkill says so.
 */
void sched_wait_thread_gone(int slot)
{
	pid_t tid = (pid_t)sched_noted(slot);
	pid_t pid = (pid_t)syscall(SYS_getpid);

	while (syscall(SYS_tgkill, pid, tid, 0) == 0 || errno != ESRCH)
		syscall(SYS_sched_yield);
}
