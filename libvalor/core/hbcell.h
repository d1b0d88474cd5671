/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-cell metadata of FastRCD and FastTrack: last writer epoch, last
 * reader epoch or a read set, with the sites and logical thread ids the
 * reports need.  The shadow word of a cell points to a struct hb_cell,
 * created on first access.  A cell is "whole" while all its bytes share
 * one history and split into eight per-byte records the first time an
 * access of part of the cell would change it; splitting copies the whole
 * record into every byte, so it loses nothing.
 *
 * A cell's lock guards everything in it; these analyses need several
 * words updated together (the Valor paper, section 3.1).  The lock is a
 * sequence lock: odd while held.  That lets the same-epoch check, which
 * only reads, run without taking it -- a read-shared cell is then read by
 * every thread without its cache line bouncing between them.
 */
#ifndef VALOR_CORE_HBCELL_H
#define VALOR_CORE_HBCELL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hb_access {
	uint64_t epoch; /* slot << 48 | clock; 0 = none */
	uint64_t site;
	uint64_t tid;
};

struct hb_readset {
	uint32_t n, cap;
	struct hb_access v[];
};

struct hb_byte {
	struct hb_access w;
	struct hb_access r; /* the read epoch, unless @rs is set */
	struct hb_readset *rs; /* concurrent reads (read map / read VC) */
};

struct hb_cell {
	_Atomic uint32_t seq; /* odd: locked */
	bool split;
	struct hb_byte whole;
	struct hb_byte *bytes; /* [8] once split */
};

struct valor_thread;

/* What a byte operation needs to know about the access. */
struct hb_op {
	struct valor_thread *th;
	uint64_t cell;
	uint64_t epoch; /* the accessing thread's current epoch */
	uint64_t site;
	bool is_write;
	uint8_t width; /* bytes a report covers: 1, or 8 for a whole cell */
};

void hb_apply(struct valor_thread *th, uintptr_t addr, size_t size,
	      bool is_write, bool is_free, uint64_t site);

/* hbcell.c helpers for the analyses */
bool hb_readset_has(const struct hb_byte *b, uint64_t epoch);
struct arena;
int hb_readset_put(struct arena *ar, struct hb_byte *b,
		   const struct hb_access *a);
void hb_byte_clear_reads(struct arena *ar, struct hb_byte *b);
void hb_byte_keep_own_read(struct arena *ar, struct hb_byte *b, uint32_t slot);
void hb_report(const struct hb_op *op, uint32_t kind, unsigned byte,
	       const struct hb_access *earlier, bool earlier_is_write);

/* fastrcd.c and fasttrack.c: one byte's check and update, lock held */
void fastrcd_byte(const struct hb_op *op, struct hb_byte *b, unsigned byte);
void fasttrack_byte(const struct hb_op *op, struct hb_byte *b, unsigned byte);

#endif /* VALOR_CORE_HBCELL_H */
