// SPDX-License-Identifier: GPL-2.0
/*
 * The smallest program: says that main ran.  errors_test.c builds it
 * with and without instrumentation and checks that option and log
 * errors stop it before main, and that `valor run` refuses the
 * uninstrumented build.
 */
#include <stdio.h>

int main(void)
{
	puts("main ran");
	return 0;
}
