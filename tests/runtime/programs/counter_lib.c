// SPDX-License-Identifier: GPL-2.0
/*
 * A counter in a separate translation unit, for the toolchain tests:
 * compiled on its own (`valor cc -c`), put in a static archive, or
 * built as a shared library, and linked with counter_main.c.  Its
 * unprotected update is the earlier access of the race.
 */
#include "counter_lib.h"

long shared_counter;

void counter_add(long n)
{
	shared_counter += n; /* racy: write */
}
