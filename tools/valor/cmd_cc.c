// SPDX-License-Identifier: GPL-2.0
/*
 * valor cc, valor c++: the system compiler, with the instrumentation gcc
 * and clang already emit for ThreadSanitizer (-fsanitize=thread), or
 * with clang 14 Valor's own pass (libvalor/instrument/), linked with
 * Valor's runtime instead of libtsan.
 *
 * A compile step gets -fsanitize=thread, -g, -fno-omit-frame-pointer and
 * no function entry/exit hooks; with the pass, also the plugin and the
 * options that leave clang's own instrumentation nothing to do.  A link step of an executable gets the
 * runtime archive (whole, so every interceptor is in the program), the
 * dynamic list that exports its symbols to shared libraries, and the
 * libraries the runtime needs; it never gets libtsan.  gcc has no option
 * to keep -fsanitize=thread from linking libtsan, so a gcc command that
 * compiles and links at once gets -fsanitize=thread through a specs file
 * that hands it to cc1 only (build/lib/valor-gcc.specs, made by the
 * Makefile).  The compiler is exec'd: its exit status is ours.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "path.h"
#include "valor.h"

/* exec of the compiler failed: as a shell reports a missing command. */
#define EXIT_NO_COMPILER 127

enum cc_family { FAMILY_GCC, FAMILY_CLANG };

/*
 * How compile steps instrument: the ThreadSanitizer ABI both compilers
 * emit, or (clang) Valor's own pass, which inlines the runtime's check
 * (Documentation/instrumentation-pass.md).
 */
enum cc_abi { ABI_DEFAULT, ABI_TSAN, ABI_PASS };

/* The clang whose LLVM the pass plugin is built against (Makefile). */
#define VALOR_PASS_CLANG_MAJOR 14

/* What valor cc itself was asked, and what it found out. */
struct cc_config {
	const char *tool; /* "cc" or "c++", for messages */
	bool cxx;
	const char *compiler; /* --compiler=, else VALOR_CC/VALOR_CXX */
	char *compiler_cmd; /* what is exec'd */
	enum cc_family family;
	int clang_major; /* __clang_major__, 0 until asked */
	enum cc_abi abi; /* --abi=, then what compile steps use */
	bool full_stacks; /* --stacks=full: keep entry/exit hooks */
	bool verbose; /* --valor-verbose */
	char prefix[PATH_MAX]; /* build/ (from /proc/self/exe) */
	char include[PATH_MAX + 16]; /* where <valor/valor.h> is */
};

/* What the compiler's own arguments ask for. */
struct cc_args {
	bool stops_before_link; /* -c, -S, -E, -M, -MM, -fsyntax-only */
	bool shared; /* -shared: a library, not an executable */
	bool relocatable; /* -r: a partial link */
	bool static_exe; /* -static or -static-pie */
	bool has_inputs; /* any file operand (so it may link) */
	bool has_sources; /* a file the compiler compiles */
	bool user_g; /* -g*, but -g0 counts too: it is a choice */
	bool user_frame_pointer; /* -f[no-]omit-frame-pointer */
	bool user_entry_exit; /* the tsan entry/exit parameter itself */
	bool openmp; /* -fopenmp (-fopenmp=LIB): OpenMP, not just its simd */
};

/* ---- the argument vector we build ---- */

struct argv_buf {
	char **v;
	size_t n, cap;
};

static void push(struct argv_buf *a, const char *s)
{
	if (a->n + 2 > a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		a->v = realloc(a->v, a->cap * sizeof(*a->v));
		if (!a->v) {
			perror("valor");
			exit(EXIT_BAD_INPUT);
		}
	}
	a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

static char *concat(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 1);

	if (!s) {
		perror("valor");
		exit(EXIT_BAD_INPUT);
	}
	memcpy(s, a, la);
	memcpy(s + la, b, lb + 1);
	return s;
}

/* ---- where the runtime is ---- */

static bool is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* Remove the last path component in place ("/a/b/c" -> "/a/b"). */
static void strip_component(char *path)
{
	char *slash = strrchr(path, '/');

	if (slash && slash != path)
		*slash = '\0';
	else if (slash)
		slash[1] = '\0';
}

/*
 * valor is PREFIX/bin/valor (build/bin/valor in the tree); the runtime is
 * in PREFIX/lib.  The public headers are PREFIX/include once installed,
 * else the source tree's libvalor/include next to build/.
 */
static int find_prefix(struct cc_config *cfg)
{
	char exe[PATH_MAX], tree[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		fprintf(stderr,
			"valor %s: cannot find its own binary (/proc/self/exe): %s\n",
			cfg->tool, strerror(errno));
		return -1;
	}
	exe[n] = '\0';
	strip_component(exe); /* PREFIX/bin */
	strip_component(exe); /* PREFIX */
	snprintf(cfg->prefix, sizeof(cfg->prefix), "%s", exe);

	snprintf(cfg->include, sizeof(cfg->include), "%s/include/valor",
		 cfg->prefix);
	if (is_dir(cfg->include)) {
		snprintf(cfg->include, sizeof(cfg->include), "%s/include",
			 cfg->prefix);
		return 0;
	}
	snprintf(tree, sizeof(tree), "%s/../libvalor/include", cfg->prefix);
	if (!realpath(tree, cfg->include))
		cfg->include[0] = '\0'; /* no headers: builds still work */
	return 0;
}

/* PREFIX/lib/NAME, or an error naming what to do if it is missing. */
static char *runtime_file(const struct cc_config *cfg, const char *name)
{
	char *path = malloc(strlen(cfg->prefix) + strlen(name) + 6);

	if (!path) {
		perror("valor");
		exit(EXIT_BAD_INPUT);
	}
	sprintf(path, "%s/lib/%s", cfg->prefix, name);
	if (!is_file(path)) {
		fprintf(stderr,
			"valor %s: the Valor runtime is not built: %s is missing "
			"(run 'make' in the Valor source tree)\n",
			cfg->tool, path);
		exit(EXIT_BAD_INPUT);
	}
	return path;
}

/* ---- which compiler ---- */

/*
 * For valor c++, the C++ driver of the family named: gcc -> g++,
 * clang -> clang++, gcc-12 -> g++-12, clang-14 -> clang++-14, in any
 * directory.  Anything else is taken as the C++ compiler itself.
 */
static char *cxx_driver(const char *name)
{
	const char *base = strrchr(name, '/');
	size_t dir = base ? (size_t)(base + 1 - name) : 0;
	const char *suffix = NULL, *driver = NULL;
	char *out;

	base = name + dir;
	if (!strncmp(base, "gcc", 3) && (!base[3] || base[3] == '-')) {
		driver = "g++";
		suffix = base + 3;
	} else if (!strncmp(base, "clang", 5) && (!base[5] || base[5] == '-')) {
		driver = "clang++";
		suffix = base + 5;
	} else if (!strcmp(base, "cc")) {
		driver = "c++";
		suffix = "";
	}
	if (!driver)
		return strdup(name);
	out = malloc(dir + strlen(driver) + strlen(suffix) + 1);
	if (!out)
		return NULL;
	sprintf(out, "%.*s%s%s", (int)dir, name, driver, suffix);
	return out;
}

/*
 * What @cmd predefines: whether __clang__, and __clang_major__ (0 if
 * not clang or not known).  Asked for unfamiliar names, and of clang
 * when a compile step may load the pass.
 */
static void compiler_predefines(const char *cmd, bool *clang, int *major)
{
	int fds[2], status;
	char buf[4096];
	size_t used = 0;
	const char *m;
	ssize_t n;
	pid_t pid;

	*clang = false;
	*major = 0;
	if (pipe(fds))
		return;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp(cmd, cmd, "-dM", "-E", "-x", "c", "/dev/null",
		       (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	/* Scan in overlapping windows so a match across reads is seen. */
	while ((n = read(fds[0], buf + used, sizeof(buf) - 1 - used)) > 0) {
		used += (size_t)n;
		buf[used] = '\0';
		if (strstr(buf, "#define __clang__ "))
			*clang = true;
		m = strstr(buf, "#define __clang_major__ ");
		if (m && strchr(m, '\n'))
			*major = atoi(m + strlen("#define __clang_major__ "));
		if (used > 64) {
			memmove(buf, buf + used - 64, 64);
			used = 64;
		}
	}
	close(fds[0]);
	waitpid(pid, &status, 0);
}

/*
 * The major version of a clang that Debian installed, read off where
 * it lives (/usr/lib/llvm-N/bin/clang, which clang-N and clang link
 * to), or 0 when the path names none: a compile step then need not run
 * the compiler once more to ask it (about 10 ms a step).
 */
static int clang_major_from_path(const char *cmd)
{
	char *found = find_program(cmd), *real;
	const char *dir, *base;
	int major = 0, end = 0;

	if (!found)
		return 0;
	real = realpath(found, NULL);
	free(found);
	if (!real)
		return 0;
	base = strrchr(real, '/') + 1;
	dir = NULL;
	for (const char *p = real; (p = strstr(p, "/llvm-")); p++)
		dir = p;
	if (!dir || (strcmp(base, "clang") && strcmp(base, "clang++")) ||
	    sscanf(dir, "/llvm-%d/bin/%n", &major, &end) != 1 ||
	    dir + end != base)
		major = 0;
	free(real);
	return major;
}

static int choose_compiler(struct cc_config *cfg)
{
	const char *env = getenv(cfg->cxx ? "VALOR_CXX" : "VALOR_CC");
	const char *name = cfg->compiler;
	const char *base;

	if (!name && env && *env)
		name = env;
	if (!name)
		name = "gcc";
	cfg->compiler_cmd = cfg->cxx ? cxx_driver(name) : strdup(name);
	if (!cfg->compiler_cmd) {
		perror("valor");
		return -1;
	}
	base = strrchr(cfg->compiler_cmd, '/');
	base = base ? base + 1 : cfg->compiler_cmd;
	if (strstr(base, "clang"))
		cfg->family = FAMILY_CLANG;
	else if (strstr(base, "gcc") || strstr(base, "g++"))
		cfg->family = FAMILY_GCC;
	else {
		bool clang;

		compiler_predefines(cfg->compiler_cmd, &clang,
				    &cfg->clang_major);
		cfg->family = clang ? FAMILY_CLANG : FAMILY_GCC;
	}
	return 0;
}

/*
 * Whether compile steps use the pass: clang's default, when the clang
 * is the one the plugin was built for.  Another clang falls back to
 * -fsanitize=thread, saying so, unless --abi=pass insisted.
 */
static int choose_abi(struct cc_config *cfg)
{
	bool clang;

	if (cfg->family == FAMILY_GCC) {
		if (cfg->abi == ABI_PASS) {
			fprintf(stderr,
				"valor %s: --abi=pass needs clang %d (the pass is an LLVM plugin); use --compiler=clang, or --abi=tsan with gcc\n",
				cfg->tool, VALOR_PASS_CLANG_MAJOR);
			return EXIT_USAGE;
		}
		cfg->abi = ABI_TSAN;
		return 0;
	}
	if (cfg->abi == ABI_TSAN)
		return 0;
	if (!cfg->clang_major)
		cfg->clang_major = clang_major_from_path(cfg->compiler_cmd);
	if (!cfg->clang_major)
		compiler_predefines(cfg->compiler_cmd, &clang,
				    &cfg->clang_major);
	if (cfg->clang_major == VALOR_PASS_CLANG_MAJOR) {
		cfg->abi = ABI_PASS;
		return 0;
	}
	if (cfg->abi == ABI_PASS) {
		fprintf(stderr,
			"valor %s: '%s' is clang %d; the pass loads only into clang %d: use --compiler=clang-%d, or --abi=tsan\n",
			cfg->tool, cfg->compiler_cmd, cfg->clang_major,
			VALOR_PASS_CLANG_MAJOR, VALOR_PASS_CLANG_MAJOR);
		return EXIT_USAGE;
	}
	fprintf(stderr,
		"valor %s: note: '%s' is clang %d, not %d, which the pass is built for: instrumenting with -fsanitize=thread instead (--abi=tsan)\n",
		cfg->tool, cfg->compiler_cmd, cfg->clang_major,
		VALOR_PASS_CLANG_MAJOR);
	cfg->abi = ABI_TSAN;
	return 0;
}

/* ---- reading the compiler's arguments ---- */

/* Whether @list ("a b c") has the word @w of @len bytes. */
static bool in_list(const char *list, const char *w, size_t len)
{
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, " ");

		if (n == len && !strncmp(p, w, len))
			return true;
		p += n;
		p += strspn(p, " ");
	}
	return false;
}

/*
 * Options whose value is the next argument when not attached; the
 * short ones also take it attached (-Idir, -I dir).
 */
static bool takes_separate_value(const char *a)
{
	static const char list[] =
		"-o -x -include -imacros -iquote -isystem -idirafter -iprefix "
		"-iwithprefix -iwithprefixbefore -isysroot -imultilib -MF -MT "
		"-MQ -Xlinker -Xassembler -Xpreprocessor -Xclang -mllvm --param "
		"-u -T -e -z -aux-info -dumpbase -dumpdir -dumpbase-ext -target "
		"-arch -Xarch_host -Xarch_device -gcc-toolchain --sysroot "
		"-specs -Xopenmp-target -ivfsoverlay -resource-dir "
		"-install_name --output --include --language "
		"-I -L -D -U -A -B -l";

	return in_list(list, a, strlen(a));
}

/* A file gcc and clang compile (by its name, when no -x says otherwise). */
static bool is_source_name(const char *file)
{
	static const char exts[] = "c i ii cc cp cxx cpp CPP c++ C m mi mm M "
				   "mii s S sx h hh H hp hxx hpp HPP h++ tcc";
	const char *slash = strrchr(file, '/');
	const char *dot = strrchr(slash ? slash : file, '.');

	return dot && in_list(exts, dot + 1, strlen(dot + 1));
}

/* Whether a -fsanitize= list names thread. */
static bool sanitize_list_has_thread(const char *list)
{
	size_t n = strlen("thread");

	for (const char *p = list; *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == n && !strncmp(p, "thread", n))
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

/*
 * The user chose the debug information: -g, -g0..-g3, -ggdb, -gdwarf-4,
 * ...  Not the -g options that only tune it (-gz, -gsplit-dwarf,
 * -gcolumn-info, -gno-*, -grecord-gcc-switches).
 */
static bool asks_debug_info(const char *a)
{
	static const char kinds[] =
		"gdb dwarf stabs btf ctf vms xcoff line-tables-only "
		"line-directives-only codeview full used";

	if (strncmp(a, "-g", 2))
		return false;
	a += 2;
	if (!*a || (*a >= '0' && *a <= '9'))
		return true;
	/* -ggdb3, -gdwarf-4: the kind is the leading letters and dashes. */
	for (size_t n = strlen(a); n; n--)
		if (in_list(kinds, a, n))
			return true;
	return false;
}

static void scan_args(int argc, char **argv, struct cc_args *ca)
{
	bool language = false; /* a -x other than none is in effect */

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-' || !strcmp(a, "-")) {
			ca->has_inputs = true;
			if (language || is_source_name(a))
				ca->has_sources = true;
			continue;
		}
		if (!strcmp(a, "-x") && i + 1 < argc) {
			language = strcmp(argv[i + 1], "none") != 0;
			i++;
			continue;
		}
		if (!strncmp(a, "-x", 2)) {
			language = strcmp(a + 2, "none") != 0;
			continue;
		}
		if ((!strcmp(a, "--param") || !strcmp(a, "-mllvm")) &&
		    i + 1 < argc) {
			if (strstr(argv[i + 1],
				   "tsan-instrument-func-entry-exit"))
				ca->user_entry_exit = true;
			i++;
			continue;
		}
		if (takes_separate_value(a)) {
			i++;
			continue;
		}
		if (!strcmp(a, "-c") || !strcmp(a, "-S") || !strcmp(a, "-E") ||
		    !strcmp(a, "-M") || !strcmp(a, "-MM") ||
		    !strcmp(a, "-fsyntax-only"))
			ca->stops_before_link = true;
		else if (!strcmp(a, "-shared"))
			ca->shared = true;
		else if (!strcmp(a, "-r"))
			ca->relocatable = true;
		else if (!strcmp(a, "-static") || !strcmp(a, "-static-pie"))
			ca->static_exe = true;
		else if (asks_debug_info(a))
			ca->user_g = true;
		else if (!strcmp(a, "-fomit-frame-pointer") ||
			 !strcmp(a, "-fno-omit-frame-pointer"))
			ca->user_frame_pointer = true;
		else if (strstr(a, "tsan-instrument-func-entry-exit"))
			ca->user_entry_exit = true;
		else if (!strcmp(a, "-fopenmp") || !strncmp(a, "-fopenmp=", 9))
			ca->openmp = true;
		else if (!strcmp(a, "-fno-openmp"))
			ca->openmp = false;
	}
}

/*
 * A link step of gcc must not see -fsanitize=thread (the driver would
 * link libtsan): drop "thread" from the user's -fsanitize= lists, and
 * -static-libtsan.  Returns the argument to pass, or NULL to drop it.
 */
static const char *gcc_link_filter(const char *a)
{
	const char *list;
	char *out, *o;

	if (!strcmp(a, "-static-libtsan"))
		return NULL;
	if (strncmp(a, "-fsanitize=", 11) || !sanitize_list_has_thread(a + 11))
		return a;
	out = malloc(strlen(a) + 1);
	if (!out) {
		perror("valor");
		exit(EXIT_BAD_INPUT);
	}
	o = out + sprintf(out, "-fsanitize=");
	list = a + 11;
	for (const char *p = list; *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (!(len == 6 && !strncmp(p, "thread", 6)) && len) {
			if (o[-1] != '=')
				*o++ = ',';
			memcpy(o, p, len);
			o += len;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	*o = '\0';
	if (o[-1] == '=') {
		free(out);
		return NULL;
	}
	return out;
}

/* ---- printing ---- */

static void print_quoted(FILE *out, const char *s)
{
	if (*s && !s[strcspn(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!")]) {
		fputs(s, out);
		return;
	}
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	}
	fputc('\'', out);
}

static void print_command(const struct cc_config *cfg, char **argv)
{
	fprintf(stderr, "valor %s:", cfg->tool);
	for (; *argv; argv++) {
		fputc(' ', stderr);
		print_quoted(stderr, *argv);
	}
	fputc('\n', stderr);
}

/* ---- the command ---- */

static void push_mllvm(struct argv_buf *out, const char *opt)
{
	push(out, "-mllvm");
	push(out, opt);
}

/*
 * The pass instead of clang's own instrumentation.  -fsanitize=thread
 * stays: it marks the functions to instrument (not those with
 * no_sanitize("thread")), keeps optimizations that would add races
 * away from them, and keeps __has_feature(thread_sanitizer) true.
 * ThreadSanitizer's pass then only registers the module with the
 * runtime (__tsan_init), and with --stacks=full adds its entry and exit
 * hooks.  The plugin is also loaded with -load, so that -mllvm
 * -valor-* options parse.
 */
static void add_pass_flags(const struct cc_config *cfg,
			   const struct cc_args *ca, struct argv_buf *out)
{
	char *plugin = runtime_file(cfg, "valor-pass.so");

	push_mllvm(out, "-tsan-instrument-memory-accesses=0");
	push_mllvm(out, "-tsan-instrument-atomics=0");
	push_mllvm(out, "-tsan-instrument-memintrinsics=0");
	if (!cfg->full_stacks && !ca->user_entry_exit)
		push_mllvm(out, "-tsan-instrument-func-entry-exit=0");
	push(out, "-Xclang");
	push(out, "-load");
	push(out, "-Xclang");
	push(out, plugin);
	push(out, concat("-fpass-plugin=", plugin));
}

/*
 * gcc expands a memset or memcpy of a few bytes, a memcmp compared with
 * zero, a strcpy or strcmp of a literal into moves and compares of its
 * own, after ThreadSanitizer's pass and so never checked: a race on
 * those bytes would go unseen.  As calls, the runtime's interceptors
 * check them.  (clang's ThreadSanitizer and the pass check the
 * intrinsics they become.)
 */
static const char *const gcc_checked_builtins[] = {
	"memset",  "memcpy", "memmove", "mempcpy", "memcmp",
	"bcmp",	   "strcpy", "stpcpy",	"strncpy", "strcat",
	"strncat", "strcmp", "strncmp", "strlen",  "strchr",
};

static void add_gcc_no_builtins(struct argv_buf *out)
{
	for (size_t i = 0;
	     i < sizeof(gcc_checked_builtins) / sizeof(gcc_checked_builtins[0]);
	     i++)
		push(out, concat("-fno-builtin-", gcc_checked_builtins[i]));
}

static void add_compile_flags(const struct cc_config *cfg,
			      const struct cc_args *ca, bool linking,
			      struct argv_buf *out)
{
	if (cfg->family == FAMILY_GCC && linking)
		push(out,
		     concat("-specs=", runtime_file(cfg, "valor-gcc.specs")));
	else
		push(out, "-fsanitize=thread");
	if (!ca->user_g)
		push(out, "-g");
	if (!ca->user_frame_pointer)
		push(out, "-fno-omit-frame-pointer");
	/*
	 * gcc 12 warns that it does not instrument atomic_thread_fence;
	 * the runtime models fences itself (Documentation/runtime-abi.md).
	 */
	if (cfg->family == FAMILY_GCC) {
		push(out, "-Wno-tsan");
		add_gcc_no_builtins(out);
	}
	if (cfg->abi == ABI_PASS) {
		add_pass_flags(cfg, ca, out);
		return;
	}
	if (!cfg->full_stacks && !ca->user_entry_exit) {
		if (cfg->family == FAMILY_GCC) {
			push(out, "--param=tsan-instrument-func-entry-exit=0");
		} else {
			push(out, "-mllvm");
			push(out, "-tsan-instrument-func-entry-exit=0");
		}
	}
}

static void add_runtime(const struct cc_config *cfg, const struct cc_args *ca,
			struct argv_buf *out)
{
	/*
	 * The runtime defines libgomp's entry points (intercept_omp.c), so
	 * a program whose only OpenMP calls are GOMP_* would lose libgomp
	 * to --as-needed, and with it the functions behind them.
	 */
	if (ca->openmp && cfg->family == FAMILY_GCC) {
		push(out, "-Wl,--push-state,--no-as-needed");
		push(out, "-lgomp");
		push(out, "-Wl,--pop-state");
	}
	push(out, "-Wl,--whole-archive");
	push(out, runtime_file(cfg, "libvalor-rt.a"));
	push(out, "-Wl,--no-whole-archive");
	push(out, concat("-Wl,--dynamic-list=",
			 runtime_file(cfg, "libvalor-rt.dynlist")));
	push(out, "-ldl");
	push(out, "-lpthread");
}

static int build_and_exec(struct cc_config *cfg, int argc, char **argv)
{
	struct cc_args ca = { 0 };
	struct argv_buf out = { 0 };
	bool linking, executable;

	scan_args(argc, argv, &ca);
	/* `cc --version`, `cc -v`: no input, nothing compiled or linked. */
	linking = ca.has_inputs && !ca.stops_before_link;
	executable = linking && !ca.shared && !ca.relocatable;
	if (executable && ca.static_exe) {
		fprintf(stderr,
			"valor %s: -static is not supported: the runtime reaches "
			"libc's own functions with dlsym, which needs the dynamic "
			"linker (the runtime itself is always linked statically)\n",
			cfg->tool);
		return EXIT_USAGE;
	}

	push(&out, cfg->compiler_cmd);
	/* A pure link step compiles nothing: compile flags would be noise. */
	if (ca.has_inputs && (!linking || ca.has_sources)) {
		int rc = choose_abi(cfg);

		if (rc)
			return rc;
		add_compile_flags(cfg, &ca, linking, &out);
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (linking && cfg->family == FAMILY_GCC) {
			/* Keep option values (-o x) as they are. */
			if (takes_separate_value(a) && i + 1 < argc) {
				push(&out, a);
				push(&out, argv[++i]);
				continue;
			}
			a = gcc_link_filter(a);
			if (!a)
				continue;
		}
		push(&out, a);
	}
	if (ca.has_inputs && (!linking || ca.has_sources) && cfg->include[0])
		push(&out, concat("-I", cfg->include));
	if (linking && cfg->family == FAMILY_CLANG)
		push(&out, "-fno-sanitize-link-runtime");
	if (executable)
		add_runtime(cfg, &ca, &out);

	if (cfg->verbose)
		print_command(cfg, out.v);
	fflush(stdout);
	execvp(out.v[0], out.v);
	fprintf(stderr, "valor %s: cannot run the compiler '%s': %s%s\n",
		cfg->tool, out.v[0], strerror(errno),
		errno == ENOENT ? " (install it, or choose another with "
				  "--compiler=, VALOR_CC or VALOR_CXX)" :
				  "");
	return EXIT_NO_COMPILER;
}

static void cc_help_for(FILE *out, const char *tool)
{
	bool cxx = !strcmp(tool, "c++");
	const char *lang = cxx ? "C++" : "C";
	const char *gcc = cxx ? "g++" : "gcc";
	const char *clang = cxx ? "clang++" : "clang";
	const char *env = cxx ? "VALOR_CXX" : "VALOR_CC";
	const char *src = cxx ? "racy.cc" : "racy.c";

	fprintf(out,
		"Usage: valor %s [VALOR-OPTION]... [COMPILER-ARGUMENT]...\n"
		"\n"
		"Runs the %s compiler (%s, or %s) with the instrumentation Valor\n"
		"needs and links programs with the Valor runtime instead of\n"
		"ThreadSanitizer's. Use it wherever you would run %s. Run the\n"
		"program with 'valor run -- PROG', or directly (the runtime in\n"
		"it reads VALOR_OPTIONS; see 'valor run --help').\n"
		"\n"
		"Valor options, anywhere on the command line (everything else\n"
		"goes to the compiler unchanged):\n"
		"  --compiler=NAME     gcc or clang, or any compiler command or path;\n"
		"                      default: $%s, else gcc.%s\n"
		"                      A name containing 'clang' gets clang's flags,\n"
		"                      one containing 'gcc' or 'g++' gcc's; another\n"
		"                      is asked whether it predefines __clang__.\n"
		"  --abi=pass|tsan     how accesses are instrumented. pass (the\n"
		"                      default with clang %d): Valor's LLVM pass,\n"
		"                      which inlines the runtime's check, drops\n"
		"                      redundant ones and checks loops and loop\n"
		"                      nests over arrays once, as ranges (in make\n"
		"                      bench 2.8x native, where the same runtime\n"
		"                      behind gcc's tsan calls is 6.2x). tsan (the\n"
		"                      default with gcc and other clangs): the calls\n"
		"                      -fsanitize=thread emits.\n"
		"  --stacks=fast|full  fast (default): no function entry/exit hooks\n"
		"                      (they alone cost up to 1.4x); a report has\n"
		"                      the stack where the conflict was found and\n"
		"                      the site (function, file:line) of each access.\n"
		"                      full: keep the hooks and a shadow call stack,\n"
		"                      for full stacks of both accesses; slower.\n"
		"  --valor-verbose     print the compiler command before running it\n"
		"                      (-v and --verbose are the compiler's own)\n"
		"  --help              this help\n"
		"\n"
		"A command that compiles (-c, -S, -E, or source files) gets:\n"
		"  -fsanitize=thread\n"
		"  -g, unless you give a -g option (-g0 included)\n"
		"  -fno-omit-frame-pointer, unless you give -f[no-]omit-frame-pointer\n"
		"  gcc: -fno-builtin-F for memset, memcpy, memmove, mempcpy, memcmp,\n"
		"    bcmp, strcpy, stpcpy, strncpy, strcat, strncat, strcmp, strncmp,\n"
		"    strlen, strchr (gcc expands them unchecked; as calls, the\n"
		"    runtime checks them)\n"
		"  no entry/exit hooks, unless --stacks=full or you set the parameter:\n"
		"    gcc: --param=tsan-instrument-func-entry-exit=0\n"
		"    clang: -mllvm -tsan-instrument-func-entry-exit=0\n"
		"  with --abi=pass, also -fpass-plugin=PREFIX/lib/valor-pass.so (and\n"
		"    -Xclang -load for its -mllvm -valor-* options) and -mllvm\n"
		"    -tsan-instrument-{memory-accesses,atomics,memintrinsics}=0\n"
		"  -I for <valor/valor.h> (after your own -I directories)\n"
		"\n"
		"A command that links an executable gets, after your arguments:\n"
		"  -Wl,--whole-archive PREFIX/lib/libvalor-rt.a -Wl,--no-whole-archive\n"
		"  -Wl,--dynamic-list=PREFIX/lib/libvalor-rt.dynlist\n"
		"  -ldl -lpthread\n"
		"and never links libtsan: clang gets -fno-sanitize-link-runtime;\n"
		"gcc gets no -fsanitize=thread at link (your -fsanitize=thread and\n"
		"-static-libtsan are dropped there; a command that compiles and\n"
		"links at once passes it to the compiler proper through\n"
		"-specs=PREFIX/lib/valor-gcc.specs). PREFIX is the directory above\n"
		"valor's bin/ (build/ in the source tree). The runtime is linked\n"
		"statically: calls through the PLT double the instrumentation's cost.\n"
		"\n"
		"Linking a shared library (-shared) or a partial link (-r) adds no\n"
		"runtime: the executable that loads the library provides it.\n"
		"Compile and link steps may be separate; static archives of\n"
		"instrumented objects, and objects built without valor, may be\n"
		"linked in (the accesses of the latter are not seen).\n"
		"-static is refused: the runtime needs the dynamic linker.\n"
		"\n"
		"Exit status: the compiler's; 2 for a bad valor option or -static;\n"
		"1 if the runtime is not built; 127 if the compiler cannot be run.\n"
		"\n"
		"Examples:\n"
		"  valor %s -O2 -pthread -o racy %s\n"
		"  valor %s --compiler=clang -c %s && valor %s -o racy racy.o\n"
		"  %s=%s make CC='valor cc' CXX='valor c++'\n",
		tool, lang, gcc, clang, cxx ? "g++ or clang++" : "gcc or clang",
		env,
		cxx ? "\n                      gcc, clang, gcc-N and clang-N mean their\n"
		      "                      C++ drivers (g++, clang++, g++-N, clang++-N)." :
		      "",
		VALOR_PASS_CLANG_MAJOR, tool, src, tool, src, tool, env, clang);
}

static int cc_main(const char *tool, int argc, char **argv)
{
	struct cc_config cfg = { .tool = tool, .cxx = !strcmp(tool, "c++") };
	char **rest = calloc((size_t)argc + 1, sizeof(*rest));
	int nrest = 0;

	if (!rest) {
		perror("valor");
		return EXIT_BAD_INPUT;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help")) {
			cc_help_for(stdout, tool);
			return EXIT_OK;
		} else if (!strncmp(a, "--compiler=", 11)) {
			if (!a[11]) {
				fprintf(stderr,
					"valor %s: --compiler= needs a compiler name or path; run 'valor %s --help'\n",
					tool, tool);
				return EXIT_USAGE;
			}
			cfg.compiler = a + 11;
		} else if (!strcmp(a, "--compiler")) {
			fprintf(stderr,
				"valor %s: write --compiler=NAME (gcc, clang or a path); run 'valor %s --help'\n",
				tool, tool);
			return EXIT_USAGE;
		} else if (!strncmp(a, "--stacks=", 9)) {
			if (!strcmp(a + 9, "full")) {
				cfg.full_stacks = true;
			} else if (!strcmp(a + 9, "fast")) {
				cfg.full_stacks = false;
			} else {
				fprintf(stderr,
					"valor %s: --stacks= expects fast or full, not '%s'\n",
					tool, a + 9);
				return EXIT_USAGE;
			}
		} else if (!strncmp(a, "--abi=", 6)) {
			if (!strcmp(a + 6, "tsan")) {
				cfg.abi = ABI_TSAN;
			} else if (!strcmp(a + 6, "pass")) {
				cfg.abi = ABI_PASS;
			} else {
				fprintf(stderr,
					"valor %s: --abi= expects tsan or pass, not '%s'\n",
					tool, a + 6);
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--valor-verbose")) {
			cfg.verbose = true;
		} else {
			rest[nrest++] = argv[i];
		}
	}
	if (find_prefix(&cfg) || choose_compiler(&cfg))
		return EXIT_BAD_INPUT;
	return build_and_exec(&cfg, nrest, rest);
}

static int cc_run(int argc, char **argv)
{
	return cc_main("cc", argc, argv);
}

static int cxx_run(int argc, char **argv)
{
	return cc_main("c++", argc, argv);
}

static void cc_help(FILE *out)
{
	cc_help_for(out, "cc");
}

static void cxx_help(FILE *out)
{
	cc_help_for(out, "c++");
}

const struct valor_command valor_cmd_cc = {
	.name = "cc",
	.summary = "compile and link C programs for Valor (gcc or clang)",
	.run = cc_run,
	.help = cc_help,
};

const struct valor_command valor_cmd_cxx = {
	.name = "c++",
	.summary = "compile and link C++ programs for Valor (g++ or clang++)",
	.run = cxx_run,
	.help = cxx_help,
};
