/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stacks (stackdepot.c): frame-pointer unwinding of the calling thread
 * and a depot that stores each distinct stack once under a 32-bit id
 * (rt_stack_capture() in rt.h returns one).  Stored pcs point into the
 * call instruction (return address - 1), ready to symbolize.
 */
#ifndef VALOR_RUNTIME_STACKDEPOT_H
#define VALOR_RUNTIME_STACKDEPOT_H

#include <stdint.h>

/* Frames at most in one stack (the stack_depth option's maximum). */
#define RT_STACK_MAX 256

/*
 * The pcs of stack @id and their number in *@n; NULL with *@n = 0 for id
 * 0 (no stack) or an id the depot never gave.
 */
const uintptr_t *rt_stack_get(uint32_t id, unsigned *n);

/*
 * Unwind the calling thread now: up to @max return addresses minus one,
 * the first in rt_stack_walk's caller.  Returns how many.  Stops at the
 * thread's stack bounds, at a frame pointer that does not grow, or at a
 * return address that cannot be one.
 */
unsigned rt_stack_walk(uintptr_t *out, unsigned max);

#endif /* VALOR_RUNTIME_STACKDEPOT_H */
