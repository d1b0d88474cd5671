// SPDX-License-Identifier: GPL-2.0
/*
 * valor run: run a program built with `valor cc` under chosen runtime
 * options; valor options: the runtime's option table.
 *
 * The runtime is in the program and reads VALOR_OPTIONS at start-up;
 * `valor run` only turns its own options into VALOR_OPTIONS (after any
 * the environment already has, so the command line wins), checks them
 * and the program, and execs the program: its exit status is ours.
 *
 * The option table is libvalor/runtime/options.def, included here with
 * our own macros: one table drives the runtime's parser, this help and
 * Documentation/runtime-usage.md (`valor options --markdown`).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfcheck.h"
#include "path.h"
#include "valor.h"

/* As env(1) and timeout(1): found but not runnable, or not found. */
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127

enum opt_type { OPT_BOOL, OPT_INT, OPT_STR, OPT_ENUM };

struct runtime_option {
	const char *name;
	enum opt_type type;
	const char *def; /* the default, as VALOR_OPTIONS would spell it */
	const char *values; /* OPT_ENUM: "a|b|c" */
	long min, max; /* OPT_INT */
	const char *help;
};

#define STR_(x) #x
#define STR(x) STR_(x)
static const struct runtime_option options[] = {
#define RT_OPT_BOOL(name, def, help) \
	{ #name, OPT_BOOL, (def) ? "1" : "0", NULL, 0, 1, help },
#define RT_OPT_INT(name, def, min, max, help) \
	{ #name, OPT_INT, STR(def), NULL, min, max, help },
#define RT_OPT_STR(name, def, help) { #name, OPT_STR, def, NULL, 0, 0, help },
#define RT_OPT_ENUM(name, def, values, help) \
	{ #name, OPT_ENUM, def, values, 0, 0, help },
#include "../../libvalor/runtime/options.def"
#undef RT_OPT_BOOL
#undef RT_OPT_INT
#undef RT_OPT_STR
#undef RT_OPT_ENUM
};
#define NR_OPTIONS (sizeof(options) / sizeof(options[0]))

static const struct runtime_option *find_option(const char *name, size_t len)
{
	for (size_t i = 0; i < NR_OPTIONS; i++)
		if (strlen(options[i].name) == len &&
		    !strncmp(options[i].name, name, len))
			return &options[i];
	return NULL;
}

/* "a|b|c" contains exactly @val (@len bytes). */
static bool enum_has(const char *values, const char *val, size_t len)
{
	for (const char *p = values;;) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);

		if (n == len && !strncmp(p, val, len))
			return true;
		if (!bar)
			return false;
		p = bar + 1;
	}
}

/* ---- printing the table ---- */

static void print_type(FILE *out, const struct runtime_option *o)
{
	switch (o->type) {
	case OPT_BOOL:
		fputs("0|1", out);
		break;
	case OPT_INT:
		fprintf(out, "%ld..%ld", o->min, o->max);
		break;
	case OPT_STR:
		fputs("TEXT", out);
		break;
	case OPT_ENUM:
		fputs(o->values, out);
		break;
	}
}

/* @text on lines of at most @width columns, each indented by @indent. */
static void print_wrapped(FILE *out, const char *text, int indent, int width)
{
	int col = 0;

	while (*text) {
		int n = (int)strcspn(text, " ");

		if (col && col + 1 + n > width) {
			fputc('\n', out);
			col = 0;
		}
		if (!col)
			col = fprintf(out, "%*s", indent, "");
		else
			col += fprintf(out, " ");
		col += fprintf(out, "%.*s", n, text);
		text += n;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

static void print_options_text(FILE *out)
{
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		const struct runtime_option *o = &options[i];

		fprintf(out, "  %s=", o->name);
		print_type(out, o);
		fprintf(out, " (default: %s)\n", *o->def ? o->def : "empty");
		print_wrapped(out, o->help, 6, 72);
	}
}

/* Markdown table cells: '|' would end the cell. */
static void print_cell(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", out);
		else
			fputc(*s, out);
	}
}

static void print_options_markdown(FILE *out)
{
	fputs("| option | values | default | meaning |\n"
	      "|---|---|---|---|\n",
	      out);
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		const struct runtime_option *o = &options[i];

		fprintf(out, "| `%s` | ", o->name);
		switch (o->type) {
		case OPT_BOOL:
			fputs("0 or 1 (also false, true)", out);
			break;
		case OPT_INT:
			fprintf(out, "%ld .. %ld", o->min, o->max);
			break;
		case OPT_STR:
			fputs("text", out);
			break;
		case OPT_ENUM:
			for (const char *p = o->values; *p; p++) {
				if (p == o->values)
					fputc('`', out);
				if (*p == '|')
					fputs("`, `", out);
				else
					fputc(*p, out);
			}
			fputc('`', out);
			break;
		}
		fputs(" | ", out);
		if (*o->def) {
			fputc('`', out);
			print_cell(out, o->def);
			fputc('`', out);
		} else {
			fputs("(empty)", out);
		}
		fputs(" | ", out);
		print_cell(out, o->help);
		fputs(" |\n", out);
	}
}

/* ---- checking VALOR_OPTIONS before the program runs ---- */

static bool is_separator(char c)
{
	return c == ' ' || c == ':' || c == '\t' || c == '\n';
}

/*
 * The runtime's own rules (rt_core.c): key=value items separated by
 * spaces or colons; booleans 0, 1, true, false; integers in range;
 * enums one of their values.  @from names where the text came from.
 */
static int check_options(const char *s, const char *from)
{
	while (*s) {
		const struct runtime_option *o;
		const char *key, *eq, *val;
		size_t vlen;
		char num[32], *end;
		long v;

		while (is_separator(*s))
			s++;
		if (!*s)
			break;
		key = s;
		while (*s && !is_separator(*s))
			s++;
		eq = memchr(key, '=', (size_t)(s - key));
		if (!eq) {
			fprintf(stderr,
				"valor run: %s: '%.*s' is not key=value; run 'valor run --help' for the options\n",
				from, (int)(s - key), key);
			return -1;
		}
		o = find_option(key, (size_t)(eq - key));
		if (!o) {
			fprintf(stderr,
				"valor run: %s: unknown option '%.*s'; run 'valor run --help' for the options\n",
				from, (int)(eq - key), key);
			return -1;
		}
		val = eq + 1;
		vlen = (size_t)(s - val);
		switch (o->type) {
		case OPT_BOOL:
			if ((vlen == 1 && (*val == '0' || *val == '1')) ||
			    (vlen == 4 && !strncmp(val, "true", 4)) ||
			    (vlen == 5 && !strncmp(val, "false", 5)))
				continue;
			fprintf(stderr,
				"valor run: %s: option '%s' expects 0, 1, true or false, not '%.*s'\n",
				from, o->name, (int)vlen, val);
			return -1;
		case OPT_INT:
			if (vlen && vlen < sizeof(num)) {
				memcpy(num, val, vlen);
				num[vlen] = '\0';
				errno = 0;
				v = strtol(num, &end, 0);
				if (!errno && !*end && v >= o->min &&
				    v <= o->max)
					continue;
			}
			fprintf(stderr,
				"valor run: %s: option '%s' expects a number from %ld to %ld, not '%.*s'\n",
				from, o->name, o->min, o->max, (int)vlen, val);
			return -1;
		case OPT_ENUM:
			if (enum_has(o->values, val, vlen))
				continue;
			fprintf(stderr,
				"valor run: %s: option '%s' expects one of %s, not '%.*s'\n",
				from, o->name, o->values, (int)vlen, val);
			return -1;
		case OPT_STR:
			continue;
		}
	}
	return 0;
}

/* ---- building VALOR_OPTIONS ---- */

struct strbuf {
	char *s;
	size_t len, cap;
};

static int append(struct strbuf *b, const char *s)
{
	size_t n = strlen(s);

	if (b->len + n + 2 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (b->len + n + 2 > cap)
			cap *= 2;
		p = realloc(b->s, cap);
		if (!p)
			return -1;
		b->s = p;
		b->cap = cap;
	}
	if (b->len)
		b->s[b->len++] = ' ';
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
	return 0;
}

/* key=VALUE from a command-line option whose value is free text. */
static int append_value(struct strbuf *b, const char *key, const char *flag,
			const char *value)
{
	char item[PATH_MAX + 64];

	if (!*value || value[strcspn(value, " :\t\n")]) {
		fprintf(stderr,
			"valor run: %s needs a value without spaces or colons "
			"(VALOR_OPTIONS separates items with them), not '%s'\n",
			flag, value);
		return -1;
	}
	if (strlen(value) >= PATH_MAX) {
		fprintf(stderr, "valor run: %s: value too long\n", flag);
		return -1;
	}
	snprintf(item, sizeof(item), "%s=%s", key, value);
	return append(b, item);
}

/* ---- the program ---- */

static void how_to_build(const char *prog)
{
	fprintf(stderr,
		"valor run: build it with the Valor toolchain front end, e.g.\n"
		"    valor cc -o %s SOURCE.c ...      (C)\n"
		"    valor c++ -o %s SOURCE.cc ...    (C++)\n"
		"  or: make CC='valor cc' CXX='valor c++'; see 'valor cc --help'.\n"
		"  (--no-check runs it anyway.)\n",
		prog, prog);
}

/* 0 if @path looks built with valor cc, else prints why and returns 2. */
static int check_program(const char *prog, const char *path)
{
	char why[256];

	switch (elf_runtime_of(path, why, sizeof(why))) {
	case ELF_RUNTIME_VALOR:
		return 0;
	case ELF_RUNTIME_LIBTSAN:
		fprintf(stderr,
			"valor run: %s was not built with 'valor cc': it is "
			"compiled with -fsanitize=thread but linked with "
			"ThreadSanitizer's runtime (libtsan), not Valor's.\n",
			prog);
		break;
	case ELF_RUNTIME_NONE:
		fprintf(stderr,
			"valor run: %s was not built with 'valor cc': it has no "
			"race-detection instrumentation (no __tsan_init), so "
			"Valor would see none of its memory accesses.\n",
			prog);
		break;
	case ELF_NOT_ELF:
		fprintf(stderr,
			"valor run: %s is not an ELF executable (a script or a "
			"wrapper?); run the program itself, built with "
			"'valor cc'.\n",
			prog);
		break;
	case ELF_UNREADABLE:
		fprintf(stderr, "valor run: cannot read %s: %s\n", prog, why);
		return EXIT_CANNOT_EXEC;
	}
	how_to_build(prog);
	return EXIT_USAGE;
}

/* ---- the commands ---- */

static void run_help(FILE *out)
{
	fputs("Usage: valor run [OPTION]... [--] PROG [ARG]...\n"
	      "\n"
	      "Runs PROG, a program built with 'valor cc' or 'valor c++', with\n"
	      "the runtime options below, and exits with PROG's exit status.\n"
	      "PROG's race detector is the Valor runtime linked into it; it\n"
	      "reads VALOR_OPTIONS when the program starts. valor run adds its\n"
	      "options to VALOR_OPTIONS after any the environment already has\n"
	      "(so they win), checks them, checks that PROG was built with\n"
	      "'valor cc', and executes it.\n"
	      "\n"
	      "Options:\n"
	      "  --analysis=NAME       valor (default), fastrcd or fasttrack\n"
	      "  --sfr                 regions end at every synchronization\n"
	      "                        operation (regions=sfr)\n"
	      "  --halt-on-conflict    abort at the first conflict, after its\n"
	      "                        report (halt_on_conflict=1)\n"
	      "  --log=PATH            reports to PATH, stdout or stderr\n"
	      "                        (default); PATH.%p adds the process id\n"
	      "  --json                reports as JSON lines (json=1)\n"
	      "  --exitcode=N          PROG's exit status when it reported\n"
	      "                        conflicts (default 66)\n"
	      "  --suppressions=PATH   suppressions file (TSan's race:PATTERN)\n"
	      "  --options='K=V ...'   any runtime options below; may be repeated\n"
	      "  --no-check            run PROG even if it does not look built\n"
	      "                        with 'valor cc'\n"
	      "  -v, --verbose         print VALOR_OPTIONS and the command first\n"
	      "  -h, --help            this help\n"
	      "The first argument that is not an option (or the one after --)\n"
	      "is PROG; PROG is looked up in PATH if it has no '/'.\n"
	      "\n"
	      "Runtime options (VALOR_OPTIONS='K=V K=V', or K=V:K=V):\n",
	      out);
	print_options_text(out);
	fputs("\n"
	      "Exit status: PROG's; 66 (exitcode=) when PROG reported\n"
	      "conflicts; 2 for a bad option, or a PROG not built with\n"
	      "'valor cc' (also the runtime's status for a bad VALOR_OPTIONS or\n"
	      "log path); 126 if PROG cannot be executed; 127 if not found.\n"
	      "\n"
	      "Examples:\n"
	      "  valor run -- ./racy\n"
	      "  valor run --analysis=fasttrack --json --log=races.json -- ./prog\n"
	      "  valor run --options='print_suppressions=1 stack_depth=64' ./prog\n",
	      out);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("valor run: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("; run 'valor run --help'\n", stderr);
	return EXIT_USAGE;
}

/* The value of "--NAME=VALUE" if @a is that option, else NULL. */
static const char *value_of(const char *a, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(a, name, n) || a[n] != '=')
		return NULL;
	return a + n + 1;
}

static int run_run(int argc, char **argv)
{
	struct strbuf opts = { 0 };
	const char *env = getenv("VALOR_OPTIONS");
	bool check = true, verbose = false;
	struct stat st;
	const char *v;
	char *path;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		char item[64];
		int err = 0;

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			run_help(stdout);
			return EXIT_OK;
		} else if ((v = value_of(a, "--analysis"))) {
			if (!*v || strpbrk(v, " :\t\n")) {
				return usage_error(
					"--analysis= expects valor, fastrcd or fasttrack, not '%s'",
					v);
			}
			snprintf(item, sizeof(item), "analysis=%.40s", v);
			err = append(&opts, item);
		} else if (!strcmp(a, "--sfr")) {
			err = append(&opts, "regions=sfr");
		} else if (!strcmp(a, "--halt-on-conflict")) {
			err = append(&opts, "halt_on_conflict=1");
		} else if (!strcmp(a, "--json")) {
			err = append(&opts, "json=1");
		} else if ((v = value_of(a, "--exitcode"))) {
			if (!*v || strpbrk(v, " :\t\n") || strlen(v) > 20)
				return usage_error(
					"--exitcode= expects a number from 0 to 255, not '%s'",
					v);
			snprintf(item, sizeof(item), "exitcode=%s", v);
			err = append(&opts, item);
		} else if ((v = value_of(a, "--log"))) {
			if (append_value(&opts, "log_path", "--log=", v))
				return EXIT_USAGE;
		} else if ((v = value_of(a, "--suppressions"))) {
			if (append_value(&opts, "suppressions",
					 "--suppressions=", v))
				return EXIT_USAGE;
		} else if ((v = value_of(a, "--options"))) {
			if (check_options(v, "--options"))
				return EXIT_USAGE;
			err = append(&opts, v);
		} else if (!strcmp(a, "--no-check")) {
			check = false;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose = true;
		} else {
			return usage_error("unknown option '%s'", a);
		}
		if (err) {
			perror("valor run");
			return EXIT_BAD_INPUT;
		}
	}
	if (i >= argc) {
		fputs("valor run: no program given; usage: valor run [OPTION]... -- PROG [ARG]...\n",
		      stderr);
		return EXIT_USAGE;
	}
	if (env && check_options(env, "VALOR_OPTIONS in the environment"))
		return EXIT_USAGE;
	if (opts.s && check_options(opts.s, "command line"))
		return EXIT_USAGE;

	path = find_program(argv[i]);
	if (!path) {
		fprintf(stderr, "valor run: %s: %s\n", argv[i],
			strerror(errno));
		return errno == ENOENT ? EXIT_NOT_FOUND : EXIT_BAD_INPUT;
	}
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "valor run: %s: %s\n", argv[i],
			strerror(EISDIR));
		return EXIT_CANNOT_EXEC;
	}
	if (access(path, X_OK)) {
		fprintf(stderr, "valor run: %s: %s\n", argv[i],
			strerror(errno));
		return errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
	}
	if (check) {
		int status = check_program(argv[i], path);

		if (status)
			return status;
	}

	if (opts.s) {
		struct strbuf all = { 0 };

		if ((env && *env && append(&all, env)) ||
		    append(&all, opts.s) || setenv("VALOR_OPTIONS", all.s, 1)) {
			perror("valor run");
			return EXIT_BAD_INPUT;
		}
	}
	if (verbose) {
		const char *o = getenv("VALOR_OPTIONS");

		fprintf(stderr, "valor run: VALOR_OPTIONS='%s'", o ? o : "");
		for (int k = i; k < argc; k++)
			fprintf(stderr, " %s", argv[k]);
		fputc('\n', stderr);
	}
	fflush(stdout);
	execv(path, argv + i);
	fprintf(stderr, "valor run: cannot execute %s: %s\n", argv[i],
		strerror(errno));
	return errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}

static void options_help(FILE *out)
{
	fputs("Usage: valor options [--markdown]\n"
	      "\n"
	      "Prints every runtime option (VALOR_OPTIONS) with its values,\n"
	      "default and meaning, from the runtime's own table\n"
	      "(libvalor/runtime/options.def). --markdown prints the table\n"
	      "of Documentation/runtime-usage.md.\n",
	      out);
}

static int options_run(int argc, char **argv)
{
	bool markdown = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--markdown")) {
			markdown = true;
		} else if (!strcmp(argv[i], "-h") ||
			   !strcmp(argv[i], "--help")) {
			options_help(stdout);
			return EXIT_OK;
		} else {
			fprintf(stderr,
				"valor options: unknown argument '%s'; run 'valor options --help'\n",
				argv[i]);
			return EXIT_USAGE;
		}
	}
	if (markdown)
		print_options_markdown(stdout);
	else
		print_options_text(stdout);
	return EXIT_OK;
}

const struct valor_command valor_cmd_run = {
	.name = "run",
	.summary = "run a program built with valor cc, with runtime options",
	.run = run_run,
	.help = run_help,
};

const struct valor_command valor_cmd_options = {
	.name = "options",
	.summary = "list the runtime options (VALOR_OPTIONS)",
	.run = options_run,
	.help = options_help,
};
