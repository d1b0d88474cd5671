/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding a program the way execvp() would, for the commands that must
 * know which file they are about to run.
 */
#ifndef VALOR_TOOL_PATH_H
#define VALOR_TOOL_PATH_H

/* PROG as execvp would find it (malloc'd); NULL, errno set, if nowhere. */
char *find_program(const char *prog);

#endif /* VALOR_TOOL_PATH_H */
