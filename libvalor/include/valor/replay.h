/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Replay: drive an engine context from a stream of struct valor_event
 * records (uapi/linux/valor.h), as recorded traces, the daemon and tests
 * produce them.  It maps the producer's thread ids to engine threads:
 * a thread id seen for the first time without a THREAD_CREATE becomes a
 * root thread, and a THREAD_CREATE of an id whose previous owner exited
 * starts a fresh logical thread (OS thread ids are reused; LARD's R5).
 *
 * Like the engine it does no I/O; one replay is used by one caller at a
 * time.
 */
#ifndef VALOR_REPLAY_H
#define VALOR_REPLAY_H

#include <stdint.h>

#include <linux/valor.h>
#include <valor/engine.h>

#ifdef __cplusplus
extern "C" {
#endif

struct valor_replay;

/** valor_replay_new() - a replay feeding @ctx; NULL with errno on error */
struct valor_replay *valor_replay_new(struct valor_ctx *ctx);

/** valor_replay_free() - free the replay (not the context) */
void valor_replay_free(struct valor_replay *r);

/**
 * valor_replay_event() - apply one event
 *
 * Return: the number of conflicts the event produced (>= 0), or a negative
 * errno: -EINVAL for a malformed event (unknown kind, zero-sized access,
 * join of a thread that has not exited, event of an exited thread),
 * -EEXIST for a create of a live thread id, -EAGAIN/-ENOMEM when the
 * engine cannot take another thread.  A rejected event changes nothing.
 */
int valor_replay_event(struct valor_replay *r, const struct valor_event *ev);

/**
 * valor_replay_finish() - end the stream
 *
 * Ends the region of every thread still live, so that Valor validates
 * their pending reads.  Return: the number of conflicts this produced.
 */
int valor_replay_finish(struct valor_replay *r);

/**
 * valor_replay_source_tid() - the producer's thread id of a logical id
 *
 * Return: the id, or UINT32_MAX if @logical_tid is unknown.
 */
uint32_t valor_replay_source_tid(const struct valor_replay *r,
				 uint64_t logical_tid);

#ifdef __cplusplus
}
#endif

#endif /* VALOR_REPLAY_H */
