/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Printing what a replay found, for people (one paragraph per conflict)
 * or for programs (one JSON object per line).  Field names and formats
 * are documented in Documentation/cli.md and are stable.
 */
#ifndef VALOR_TOOL_REPORT_PRINT_H
#define VALOR_TOOL_REPORT_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <valor/engine.h>

#include "trace.h"

/**
 * struct replay_conflict - a conflict in the trace's own terms
 * @c:           as the engine reported it (logical thread ids)
 * @event:       0-based index of the event whose replay reported it, or
 *               REPLAY_AT_END when the end of the trace did
 * @first_tid:   trace thread id of the earlier access
 * @second_tid:  trace thread id of the later access
 * @detector_tid: trace thread id of the thread that found it
 */
struct replay_conflict {
	struct valor_conflict c;
	size_t event;
	uint32_t first_tid;
	uint32_t second_tid;
	uint32_t detector_tid;
};

#define REPLAY_AT_END ((size_t)-1)

struct report_printer {
	FILE *out;
	bool json;
	bool name_files; /* prefix summaries with the file (several files) */
	const struct trace *trace;
	enum valor_analysis analysis;
	enum valor_region_mode regions;
};

void report_conflict(const struct report_printer *rp,
		     const struct replay_conflict *rc);

/* "valor: 2 conflicts in 14 events", or the JSON summary object. */
void report_summary(const struct report_printer *rp, size_t conflicts);

#endif /* VALOR_TOOL_REPORT_PRINT_H */
