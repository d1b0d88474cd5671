/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The valor command-line tool: what every subcommand shares (exit codes,
 * the command table, the version).
 */
#ifndef VALOR_TOOL_VALOR_H
#define VALOR_TOOL_VALOR_H

#include <stdio.h>

#ifndef VALOR_VERSION
#define VALOR_VERSION "0.1.0"
#endif

/* Exit codes every subcommand uses (Documentation/cli.md). */
#define EXIT_OK 0
#define EXIT_BAD_INPUT 1 /* unreadable or malformed input, I/O error */
#define EXIT_USAGE 2 /* unknown command or option, bad option value */
#define EXIT_CONFLICT 66 /* conflicts found (configurable per command) */

/**
 * struct valor_command - one subcommand
 * @name:    what the user types after "valor"
 * @summary: one line for "valor --help"
 * @run:     runs the command; @argv[0] is the command name
 * @help:    prints the command's full help to @out
 */
struct valor_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	void (*help)(FILE *out);
};

extern const struct valor_command valor_cmd_replay;

#endif /* VALOR_TOOL_VALOR_H */
