// SPDX-License-Identifier: GPL-2.0
/*
 * A counter in a separate translation unit, for the toolchain tests:
 * compiled on its own (`valor cc -c`), put in a static archive, or
 * built as a shared library, and linked with counter_main.c.  Its
 * unprotected update is the earlier access of the race.
 */
#include <string.h>

#include "counter_lib.h"

long shared_counter;

/*
 * The store is a call the runtime intercepts (gcc's under valor cc's
 * -fno-builtin-memcpy): it is checked only if the runtime knows this
 * module for an instrumented one, however it was linked.
 */
void counter_add(long n)
{
	long v = shared_counter + n;

	memcpy(&shared_counter, &v, sizeof(v)); /* racy: write */
}
