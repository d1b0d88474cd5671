/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VALOR_TESTS_COUNTER_LIB_H
#define VALOR_TESTS_COUNTER_LIB_H

extern long shared_counter;

void counter_add(long n);

#endif /* VALOR_TESTS_COUNTER_LIB_H */
