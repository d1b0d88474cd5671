// SPDX-License-Identifier: GPL-2.0
/*
 * valor replay: run recorded traces through the analyses and report the
 * conflicts, in the trace's own terms (thread numbers, lines, names).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valor/engine.h>
#include <valor/replay.h>

#include "diag.h"
#include "footprint.h"
#include "report_print.h"
#include "trace.h"
#include "valor.h"

struct replay_options {
	enum valor_analysis analyses[3];
	size_t nanalyses;
	enum valor_region_mode regions;
	uint32_t read_log; /* 0: engine default */
	uint64_t max_footprint; /* bytes; 0: no limit */
	int conflict_exit;
	bool json;
	const char *convert_to; /* NULL: replay, do not convert */
};

static void replay_help(FILE *out)
{
	fprintf(out,
		"Usage: valor replay [OPTION]... FILE...\n"
		"\n"
		"Replay recorded event traces through the analysis engine and report\n"
		"every conflict found.  A FILE is a text trace or a binary event\n"
		"stream (recognised by its header; see Documentation/trace-format.md);\n"
		"'-' reads standard input.\n"
		"\n"
		"Options:\n"
		"  --analysis=NAME       valor (default), fastrcd, fasttrack, or all\n"
		"                        (the three, one after the other)\n"
		"  --sfr                 end regions at every synchronization\n"
		"                        operation, not only at releases\n"
		"  --json                print one JSON object per line: each\n"
		"                        conflict, then a summary per analysis\n"
		"  --read-log=N          Valor's read log holds N entries per thread;\n"
		"                        a full log is validated and emptied\n"
		"  --exitcode=N          exit with N (0-255) when conflicts are found\n"
		"                        (default %d)\n"
		"  --max-footprint=SIZE  refuse a trace whose accesses touch more\n"
		"                        than SIZE bytes (suffix K, M or G; 0 = no\n"
		"                        limit; default 256M): the analyses keep\n"
		"                        metadata for every byte touched\n"
		"  --convert=OUT         do not replay: write the (one) trace as a\n"
		"                        binary event stream to OUT ('-' = stdout)\n"
		"  -h, --help            show this help\n"
		"\n"
		"Exit status: 0 no conflicts, %d conflicts found (see --exitcode),\n"
		"%d unreadable or malformed input, %d bad usage.\n",
		EXIT_CONFLICT, EXIT_CONFLICT, EXIT_BAD_INPUT, EXIT_USAGE);
}

static int usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("valor replay: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; run 'valor replay --help'\n", stderr);
	return EXIT_USAGE;
}

/* A decimal number in [min, max], nothing else. */
static bool parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* A byte count with an optional binary suffix: 4096, 64K, 256M, 2G. */
static int parse_size(const char *s, uint64_t *out)
{
	char digits[32];
	size_t len = strlen(s);
	unsigned int shift = 0;
	uint64_t v;

	if (len && strchr("kKmMgG", s[len - 1])) {
		char c = s[len - 1];

		shift = (c == 'k' || c == 'K') ? 10 :
			(c == 'm' || c == 'M') ? 20 :
						 30;
		len--;
	}
	if (len == 0 || len >= sizeof(digits))
		return -1;
	memcpy(digits, s, len);
	digits[len] = '\0';
	if (!parse_uint(digits, 0, UINT64_MAX >> shift, &v))
		return -1;
	*out = v << shift;
	return 0;
}

static int set_analysis(struct replay_options *o, const char *name)
{
	static const enum valor_analysis all[] = {
		VALOR_ANALYSIS_VALOR,
		VALOR_ANALYSIS_FASTRCD,
		VALOR_ANALYSIS_FASTTRACK,
	};

	if (!strcmp(name, "all")) {
		memcpy(o->analyses, all, sizeof(all));
		o->nanalyses = 3;
		return 0;
	}
	for (size_t i = 0; i < 3; i++) {
		if (!strcmp(name, valor_analysis_name(all[i]))) {
			o->analyses[0] = all[i];
			o->nanalyses = 1;
			return 0;
		}
	}
	return -1;
}

/*
 * The engine shadows the 48-bit user address space of x86-64 and arm64;
 * only used to explain why it rejected an event.
 */
#define ANALYSED_LIMIT (1ULL << 48)

/* Where thread @tid stands just before event @upto of @t. */
enum thread_state {
	THREAD_UNSEEN,
	THREAD_LIVE,
	THREAD_EXITED,
	THREAD_JOINED,
};

static enum thread_state thread_state_before(const struct trace *t, size_t upto,
					     uint32_t tid)
{
	enum thread_state s = THREAD_UNSEEN;

	for (size_t i = 0; i < upto; i++) {
		const struct valor_event *e = &t->ev[i];

		if (e->kind == VALOR_EV_THREAD_CREATE && e->arg == tid)
			s = THREAD_LIVE;
		else if (e->kind == VALOR_EV_THREAD_JOIN && e->arg == tid)
			s = THREAD_JOINED;
		if (e->tid != tid)
			continue;
		if (e->kind == VALOR_EV_THREAD_EXIT)
			s = THREAD_EXITED;
		else if (s == THREAD_UNSEEN)
			s = THREAD_LIVE;
	}
	return s;
}

static void explain_rejection(const struct trace *t, size_t i, int err,
			      char *buf, size_t len)
{
	const struct valor_event *e = &t->ev[i];
	enum thread_state self = thread_state_before(t, i, e->tid);
	uint32_t other = (uint32_t)e->arg;

	if (err == -EAGAIN) {
		snprintf(buf, len, "too many threads live at once (at most %d)",
			 VALOR_MAX_THREADS);
		return;
	}
	if (err == -ENOMEM) {
		snprintf(buf, len, "out of memory");
		return;
	}
	if ((e->kind == VALOR_EV_ACCESS &&
	     e->addr + e->size > ANALYSED_LIMIT) ||
	    ((e->kind == VALOR_EV_FREE || e->kind == VALOR_EV_MUNMAP) &&
	     (e->arg > ANALYSED_LIMIT || e->addr > ANALYSED_LIMIT - e->arg))) {
		snprintf(
			buf, len,
			"the range ends above 0x%llx: the engine analyses the 48-bit user address space",
			ANALYSED_LIMIT);
		return;
	}
	if (self == THREAD_EXITED || self == THREAD_JOINED) {
		snprintf(
			buf, len,
			"T%" PRIu32
			" has exited and makes no more events (a new 'create' of T%" PRIu32
			" would start a new thread)",
			e->tid, e->tid);
		return;
	}
	if (e->kind == VALOR_EV_THREAD_CREATE && err == -EEXIST) {
		snprintf(buf, len, "T%" PRIu32 " is already running", other);
		return;
	}
	if (e->kind == VALOR_EV_THREAD_JOIN && e->arg <= UINT32_MAX) {
		switch (thread_state_before(t, i, other)) {
		case THREAD_UNSEEN:
			snprintf(buf, len, "T%" PRIu32 " never ran", other);
			return;
		case THREAD_LIVE:
			snprintf(
				buf, len,
				"T%" PRIu32
				" has not exited (join only threads after their 'exit')",
				other);
			return;
		case THREAD_JOINED:
			snprintf(buf, len, "T%" PRIu32 " was already joined",
				 other);
			return;
		case THREAD_EXITED:
			break;
		}
	}
	snprintf(buf, len, "the replay rejected this event: %s",
		 strerror(-err));
}

/* @addr as the trace names it, else in hex. */
static void describe_addr(const struct trace *t, uint64_t addr, char *buf,
			  size_t len)
{
	if (!trace_symbolize(t, addr, buf, len))
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
}

/* The event in text trace syntax, for messages. */
static void describe_event(const struct trace *t, const struct valor_event *e,
			   char *buf, size_t len)
{
	char addr[96];

	static const char *const names[] = {
		[VALOR_EV_THREAD_CREATE] = "create",
		[VALOR_EV_THREAD_EXIT] = "exit",
		[VALOR_EV_THREAD_JOIN] = "join",
		[VALOR_EV_ACQUIRE] = "acquire",
		[VALOR_EV_RELEASE] = "release",
		[VALOR_EV_ACCESS] = "read",
		[VALOR_EV_FREE] = "free",
		[VALOR_EV_MUNMAP] = "munmap",
		[VALOR_EV_REGION_END] = "region-end",
		[VALOR_EV_VALIDATE] = "validate",
		[VALOR_EV_LOST] = "lost",
	};
	const char *name = e->kind < sizeof(names) / sizeof(names[0]) &&
					   names[e->kind] ?
				   names[e->kind] :
				   "?";

	if (e->kind == VALOR_EV_ACCESS && (e->flags & VALOR_EVF_WRITE))
		name = "write";
	describe_addr(t, e->addr, addr, sizeof(addr));
	switch (e->kind) {
	case VALOR_EV_THREAD_CREATE:
	case VALOR_EV_THREAD_JOIN:
		snprintf(buf, len, "T%" PRIu32 " %s T%llu", e->tid, name,
			 (unsigned long long)e->arg);
		break;
	case VALOR_EV_ACQUIRE:
	case VALOR_EV_RELEASE:
		snprintf(buf, len, "T%" PRIu32 " %s %s", e->tid, name, addr);
		break;
	case VALOR_EV_ACCESS:
		if (e->flags & VALOR_EVF_STRIDED)
			snprintf(buf, len,
				 "T%" PRIu32 " %s %s %" PRIu32 " count=%" PRIu32
				 " stride=%" PRIu32,
				 e->tid, name, addr, e->size,
				 (uint32_t)VALOR_ACCESS_COUNT(e->arg),
				 (uint32_t)VALOR_ACCESS_STRIDE(e->arg));
		else
			snprintf(buf, len, "T%" PRIu32 " %s %s %" PRIu32,
				 e->tid, name, addr, e->size);
		break;
	case VALOR_EV_FREE:
	case VALOR_EV_MUNMAP:
		snprintf(buf, len, "T%" PRIu32 " %s %s %llu", e->tid, name,
			 addr, (unsigned long long)e->arg);
		break;
	default:
		snprintf(buf, len, "T%" PRIu32 " %s", e->tid, name);
		break;
	}
}

static void report_rejection(const struct trace *t, size_t i, int err)
{
	char why[256], what[128];

	explain_rejection(t, i, err, why, sizeof(why));
	describe_event(t, &t->ev[i], what, sizeof(what));
	if (t->format == TRACE_TEXT)
		diag_at(t->display, t->line[i], 0, NULL, 0,
			"cannot replay '%s': %s", what, why);
	else
		diag_file(t->display, "event %zu: cannot replay '%s': %s",
			  i + 1, what, why);
}

/* One analysis over one trace. */
struct replay_run {
	const struct report_printer *rp;
	struct valor_replay *replay;
	struct replay_conflict *pending;
	size_t npending;
	size_t cap;
	size_t current; /* index of the event being replayed */
	size_t conflicts;
	bool oom;
};

static bool same_access(const struct valor_access_info *a,
			const struct valor_access_info *b)
{
	return a->tid == b->tid && a->site == b->site &&
	       a->region == b->region && a->is_write == b->is_write;
}

/*
 * The engine may report one access pair byte by byte (where it keeps
 * per-byte metadata); one event's reports that differ only in being the
 * next bytes are shown as one conflict.  Reports of different pairs may
 * interleave (write-write, read-write, write-write, ...), so look back a
 * few.
 */
#define MERGE_LOOKBACK 8

static bool merge_conflict(struct replay_run *run,
			   const struct valor_conflict *c)
{
	size_t stop = run->npending > MERGE_LOOKBACK ?
			      run->npending - MERGE_LOOKBACK :
			      0;

	for (size_t i = run->npending; i-- > stop;) {
		struct valor_conflict *p = &run->pending[i].c;

		if (p->kind == c->kind && p->analysis == c->analysis &&
		    p->lazy == c->lazy && p->detected_by == c->detected_by &&
		    same_access(&p->first, &c->first) &&
		    same_access(&p->second, &c->second) &&
		    p->addr + p->size == c->addr &&
		    (uint64_t)p->size + c->size <= UINT32_MAX) {
			p->size += c->size;
			return true;
		}
	}
	return false;
}

/*
 * The engine calls back in the middle of a replay call: keep the conflict
 * and print it when the call returns, when thread ids can be mapped.
 */
static void collect_conflict(void *arg, const struct valor_conflict *c)
{
	struct replay_run *run = arg;

	if (merge_conflict(run, c))
		return;

	if (run->npending == run->cap) {
		size_t cap = run->cap ? 2 * run->cap : 16;
		struct replay_conflict *v;

		v = realloc(run->pending, cap * sizeof(*v));
		if (!v) {
			run->oom = true;
			return;
		}
		run->pending = v;
		run->cap = cap;
	}
	memset(&run->pending[run->npending], 0, sizeof(*run->pending));
	run->pending[run->npending].c = *c;
	run->pending[run->npending].event = run->current;
	run->npending++;
}

static void flush_conflicts(struct replay_run *run)
{
	for (size_t i = 0; i < run->npending; i++) {
		struct replay_conflict *rc = &run->pending[i];

		rc->first_tid =
			valor_replay_source_tid(run->replay, rc->c.first.tid);
		rc->second_tid =
			valor_replay_source_tid(run->replay, rc->c.second.tid);
		rc->detector_tid =
			valor_replay_source_tid(run->replay, rc->c.detected_by);
		report_conflict(run->rp, rc);
	}
	run->conflicts += run->npending;
	run->npending = 0;
}

/* Returns the number of conflicts, or -1 after printing an error. */
static long replay_one(const struct trace *t, const struct replay_options *o,
		       const struct report_printer *rp)
{
	struct replay_run run = { .rp = rp };
	struct valor_params params = {
		.analysis = rp->analysis,
		.regions = o->regions,
		.read_log_entries = o->read_log,
		.on_conflict = collect_conflict,
		.arg = &run,
	};
	struct valor_ctx *ctx;
	long ret = -1;

	ctx = valor_ctx_new(&params);
	if (!ctx) {
		diag_file(t->display, "cannot set up the %s analysis: %s",
			  valor_analysis_name(rp->analysis), strerror(errno));
		return -1;
	}
	run.replay = valor_replay_new(ctx);
	if (!run.replay) {
		diag_file(t->display, "cannot set up the replay: %s",
			  strerror(errno));
		goto out_ctx;
	}
	for (size_t i = 0; i < t->n; i++) {
		int r;

		run.current = i;
		r = valor_replay_event(run.replay, &t->ev[i]);
		flush_conflicts(&run);
		if (r < 0) {
			report_rejection(t, i, r);
			goto out_replay;
		}
	}
	run.current = REPLAY_AT_END;
	valor_replay_finish(run.replay);
	flush_conflicts(&run);
	if (run.oom) {
		diag_file(t->display,
			  "out of memory while collecting conflicts");
		goto out_replay;
	}
	report_summary(rp, run.conflicts);
	ret = (long)run.conflicts;
out_replay:
	valor_replay_free(run.replay);
out_ctx:
	valor_ctx_free(ctx);
	free(run.pending);
	return ret;
}

enum {
	OPT_ANALYSIS = 256,
	OPT_SFR,
	OPT_JSON,
	OPT_READ_LOG,
	OPT_EXITCODE,
	OPT_CONVERT,
	OPT_MAX_FOOTPRINT,
};

static const struct option long_options[] = {
	{ "analysis", required_argument, NULL, OPT_ANALYSIS },
	{ "sfr", no_argument, NULL, OPT_SFR },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "read-log", required_argument, NULL, OPT_READ_LOG },
	{ "exitcode", required_argument, NULL, OPT_EXITCODE },
	{ "convert", required_argument, NULL, OPT_CONVERT },
	{ "max-footprint", required_argument, NULL, OPT_MAX_FOOTPRINT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_options(int argc, char **argv, struct replay_options *o)
{
	uint64_t v;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_ANALYSIS:
			if (set_analysis(o, optarg) < 0)
				return usage_error(
					"unknown analysis '%s' (valor, fastrcd, fasttrack or all)",
					optarg);
			break;
		case OPT_SFR:
			o->regions = VALOR_REGIONS_SFR;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_READ_LOG:
			if (!parse_uint(optarg, 1, UINT32_MAX, &v))
				return usage_error(
					"--read-log needs a number of entries from 1 to %u, not '%s'",
					UINT32_MAX, optarg);
			o->read_log = (uint32_t)v;
			break;
		case OPT_EXITCODE:
			if (!parse_uint(optarg, 0, 255, &v))
				return usage_error(
					"--exitcode needs a number from 0 to 255, not '%s'",
					optarg);
			o->conflict_exit = (int)v;
			break;
		case OPT_MAX_FOOTPRINT:
			if (parse_size(optarg, &o->max_footprint) < 0)
				return usage_error(
					"--max-footprint needs a size like 512M or 4G, not '%s'",
					optarg);
			break;
		case OPT_CONVERT:
			if (!*optarg)
				return usage_error(
					"--convert needs an output file name");
			o->convert_to = optarg;
			break;
		case 'h':
			replay_help(stdout);
			return -1;
		case ':':
			return usage_error(
				"option '%s' needs a value, e.g. %s=VALUE",
				argv[optind - 1], argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	return 0;
}

/*
 * Refuse a trace that would make the analyses allocate more than the user
 * allowed (see footprint.h); prints where the limit was crossed.
 */
static int check_footprint(const struct trace *t, uint64_t limit)
{
	struct footprint fp;
	int ret = 0;

	if (!limit)
		return 0;
	footprint_init(&fp, limit);
	for (size_t i = 0; i < t->n && !ret; i++) {
		const struct valor_event *e = &t->ev[i];
		char what[160];
		int r;

		if (e->kind != VALOR_EV_ACCESS)
			continue;
		if (e->flags & VALOR_EVF_STRIDED)
			r = footprint_add_strided(&fp, e->addr, e->size,
						  VALOR_ACCESS_STRIDE(e->arg),
						  VALOR_ACCESS_COUNT(e->arg));
		else
			r = footprint_add(&fp, e->addr, e->size);
		if (r == 0)
			continue;
		ret = -1;
		if (r < 0) {
			diag_file(t->display, "out of memory");
			break;
		}
		describe_event(t, e, what, sizeof(what));
		if (t->format == TRACE_TEXT)
			diag_at(t->display, t->line[i], 0, NULL, 0,
				"'%s': the trace's accesses touch more than %llu bytes; the analyses keep metadata per byte (raise the limit with --max-footprint)",
				what, (unsigned long long)limit);
		else
			diag_file(
				t->display,
				"event %zu: '%s': the trace's accesses touch more than %llu bytes; the analyses keep metadata per byte (raise the limit with --max-footprint)",
				i + 1, what, (unsigned long long)limit);
	}
	footprint_destroy(&fp);
	return ret;
}

static int run_replay(int argc, char **argv)
{
	struct replay_options o = {
		.analyses = { VALOR_ANALYSIS_VALOR },
		.nanalyses = 1,
		.conflict_exit = EXIT_CONFLICT,
		.max_footprint = 256ULL << 20,
	};
	bool failed = false, found = false;
	int nfiles, r;

	r = parse_options(argc, argv, &o);
	if (r > 0)
		return r;
	if (r < 0)
		return EXIT_OK; /* --help */
	nfiles = argc - optind;
	if (nfiles == 0)
		return usage_error(
			"no trace file given (use '-' for standard input)");
	if (o.convert_to && nfiles != 1)
		return usage_error(
			"--convert takes exactly one trace file, got %d",
			nfiles);

	for (int i = optind; i < argc; i++) {
		struct trace t;

		if (trace_load(&t, argv[i]) < 0) {
			failed = true;
			continue;
		}
		if (o.convert_to) {
			if (trace_write_binary(&t, o.convert_to) < 0)
				failed = true;
			trace_free(&t);
			continue;
		}
		if (check_footprint(&t, o.max_footprint) < 0) {
			failed = true;
			trace_free(&t);
			continue;
		}
		for (size_t a = 0; a < o.nanalyses; a++) {
			struct report_printer rp = {
				.out = stdout,
				.json = o.json,
				.name_files = nfiles > 1,
				.trace = &t,
				.analysis = o.analyses[a],
				.regions = o.regions,
			};
			long n = replay_one(&t, &o, &rp);

			if (n < 0) {
				failed = true;
				break;
			}
			if (n > 0)
				found = true;
		}
		trace_free(&t);
		fflush(stdout);
	}
	if (failed)
		return EXIT_BAD_INPUT;
	return found ? o.conflict_exit : EXIT_OK;
}

const struct valor_command valor_cmd_replay = {
	.name = "replay",
	.summary = "replay recorded event traces through the analyses",
	.run = run_replay,
	.help = replay_help,
};
