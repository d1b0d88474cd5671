// SPDX-License-Identifier: GPL-2.0
/*
 * valor: the command-line front end.  This file only dispatches to the
 * subcommands and answers the global --help and --version.
 */
#include <stdio.h>
#include <string.h>

#include <linux/valor.h>

#include "valor.h"

/* The toolchain front end and the runtime (cmd_cc.c, cmd_run.c). */
extern const struct valor_command valor_cmd_cc, valor_cmd_cxx, valor_cmd_run,
	valor_cmd_options;

static const struct valor_command *const commands[] = {
	&valor_cmd_cc, &valor_cmd_cxx, &valor_cmd_run, &valor_cmd_options,
	&valor_cmd_replay
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct valor_command *find_command(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

static void print_usage(FILE *out)
{
	fprintf(out,
		"Usage: valor COMMAND [OPTION]... [ARG]...\n"
		"       valor help COMMAND\n"
		"       valor --help | --version\n"
		"\n"
		"Valor for Linux finds data races in C and C++ programs as region\n"
		"conflicts (Valor, FastRCD) or happens-before races (FastTrack).\n"
		"Build a program with 'valor cc' (or 'valor c++'), then run it\n"
		"with 'valor run -- PROG'.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i]->name,
			commands[i]->summary);
	fprintf(out,
		"\n"
		"Run 'valor help COMMAND' or 'valor COMMAND --help' for the\n"
		"options of a command.\n");
}

static int unknown_command(const char *name)
{
	fprintf(stderr,
		"valor: unknown command '%s'; run 'valor --help' for the list of commands\n",
		name);
	return EXIT_USAGE;
}

static int help_command(int argc, char **argv)
{
	const struct valor_command *cmd;

	if (argc < 3) {
		print_usage(stdout);
		return EXIT_OK;
	}
	if (argc > 3) {
		fprintf(stderr,
			"valor help: expected one command name, got %d; run 'valor --help'\n",
			argc - 2);
		return EXIT_USAGE;
	}
	cmd = find_command(argv[2]);
	if (!cmd)
		return unknown_command(argv[2]);
	cmd->help(stdout);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct valor_command *cmd;
	const char *first;
	int ret;

	if (argc < 2) {
		print_usage(stderr);
		return EXIT_USAGE;
	}
	first = argv[1];
	if (!strcmp(first, "--help") || !strcmp(first, "-h")) {
		print_usage(stdout);
		ret = EXIT_OK;
	} else if (!strcmp(first, "--version")) {
		printf("valor %s (event format version %d)\n", VALOR_VERSION,
		       VALOR_UAPI_VERSION);
		ret = EXIT_OK;
	} else if (!strcmp(first, "help")) {
		ret = help_command(argc, argv);
	} else if (first[0] == '-') {
		fprintf(stderr,
			"valor: unknown option '%s'; options go after the command, run 'valor --help'\n",
			first);
		ret = EXIT_USAGE;
	} else {
		cmd = find_command(first);
		if (!cmd)
			return unknown_command(first);
		ret = cmd->run(argc - 1, argv + 1);
	}
	if (fflush(stdout) == EOF || ferror(stdout)) {
		perror("valor: writing standard output");
		return EXIT_BAD_INPUT;
	}
	return ret;
}
