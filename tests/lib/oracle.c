// SPDX-License-Identifier: GPL-2.0
/*
 * The differential oracle (see oracle.h): every definition of
 * Documentation/semantics.md written out literally, with per-byte lists of
 * every access and full vector clocks.  Clarity wins over speed here: there
 * is no shortcut at all, and every earlier access that conflicts can be
 * named (the witnesses the differential test checks reports against).
 */
#include "oracle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One earlier access to one byte. */
struct access_rec {
	uint32_t thread; /* logical thread (index into oracle.threads) */
	uint32_t tid; /* its trace thread id */
	uint64_t region; /* its region when it made the access */
	uint64_t clock; /* its own vector-clock entry then */
	bool is_write;
	/* A read of a cell the region had written whole: Valor logs none. */
	bool of_own_cell;
	size_t event; /* the event that made it */
};

/* Every access to one byte since it was last freed. */
struct byte_hist {
	uint64_t addr;
	bool used;
	struct access_rec *v;
	size_t n;
	size_t cap;
};

/* A logical thread: one lifetime of a trace thread id. */
struct logical_thread {
	uint32_t tid;
	bool exited;
	bool joined;
	uint64_t region;
	uint64_t *vc; /* indexed by logical thread */
};

struct sync_object {
	uint64_t addr;
	uint64_t *vc;
};

struct oracle {
	enum valor_analysis analysis;
	enum valor_region_mode mode;
	const struct valor_event *ev;

	struct logical_thread *threads;
	size_t nthreads;
	size_t max_threads; /* also the length of every vector clock */

	struct sync_object *syncs;
	size_t nsyncs;
	size_t max_syncs;

	struct byte_hist *bytes; /* open addressing, power-of-two size */
	size_t bytes_cap;
	size_t bytes_used;

	uint64_t next_region;
	struct oracle_result *out;
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		abort();
	return p;
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		abort();
	return p;
}

/* ---- keys ---------------------------------------------------------- */

int oracle_key_cmp(const struct oracle_key *a, const struct oracle_key *b)
{
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->who != b->who)
		return a->who < b->who ? -1 : 1;
	if (a->tag != b->tag)
		return a->tag < b->tag ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return 0;
}

static int key_qsort_cmp(const void *a, const void *b)
{
	return oracle_key_cmp(a, b);
}

void oracle_keys_push(struct oracle_key **v, size_t *n, size_t *cap,
		      const struct oracle_key *k)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 32;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = *k;
}

size_t oracle_keys_normalize(struct oracle_key *v, size_t n)
{
	size_t out = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), key_qsort_cmp);
	for (size_t i = 1; i < n; i++) {
		if (oracle_key_cmp(&v[out], &v[i]))
			v[++out] = v[i];
		else
			v[out].optional &= v[i].optional;
	}
	return out + 1;
}

static int witness_cmp(const void *pa, const void *pb)
{
	const struct oracle_witness *a = pa, *b = pb;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->earlier != b->earlier)
		return a->earlier < b->earlier ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return 0;
}

static size_t witnesses_normalize(struct oracle_witness *v, size_t n)
{
	size_t out = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), witness_cmp);
	for (size_t i = 1; i < n; i++)
		if (witness_cmp(&v[out], &v[i]))
			v[++out] = v[i];
	return out + 1;
}

bool oracle_witnessed(const struct oracle_result *r, uint32_t kind,
		      size_t earlier, uint64_t addr)
{
	struct oracle_witness w = {
		.kind = kind,
		.earlier = earlier,
		.addr = addr,
	};

	return r->nwitnesses &&
	       bsearch(&w, r->witnesses, r->nwitnesses, sizeof(w), witness_cmp);
}

bool oracle_witnessed_in_region(const struct oracle_result *r, uint32_t kind,
				uint64_t region, uint64_t addr)
{
	for (size_t i = 0; i < r->nwitnesses; i++) {
		const struct oracle_witness *w = &r->witnesses[i];

		if (w->kind == kind && w->addr == addr &&
		    oracle_region_of(r, w->earlier) == region)
			return true;
	}
	return false;
}

uint32_t oracle_key_kind(enum valor_analysis analysis, uint32_t kind)
{
	if (analysis != VALOR_ANALYSIS_FASTTRACK)
		return kind;
	return kind == VALOR_CONFLICT_WR ? ORACLE_KEY_READ_RACES :
					   ORACLE_KEY_WRITE_RACES;
}

const char *oracle_key_kind_name(uint32_t kind)
{
	switch (kind) {
	case ORACLE_KEY_WW:
		return "WW";
	case ORACLE_KEY_WR:
		return "WR";
	case ORACLE_KEY_RW:
		return "RW";
	case ORACLE_KEY_WRITE_RACES:
		return "W-race";
	case ORACLE_KEY_READ_RACES:
		return "R-race";
	}
	return "??";
}

void oracle_keys_print(const struct oracle_key *v, size_t n, const char *title)
{
	printf("# %s: %zu key(s)\n", title, n);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && v[j].kind == v[i].kind &&
		       v[j].who == v[i].who && v[j].tag == v[i].tag &&
		       v[j].optional == v[i].optional &&
		       v[j].addr == v[j - 1].addr + 1)
			j++;
		if (v[i].tag == ORACLE_TAG_EVENT)
			printf("#   %s ev%llu", oracle_key_kind_name(v[i].kind),
			       (unsigned long long)v[i].who);
		else
			printf("#   %s reader T%llu region %lld",
			       oracle_key_kind_name(v[i].kind),
			       (unsigned long long)v[i].who,
			       (long long)v[i].tag);
		printf(" bytes 0x%llx..0x%llx%s\n",
		       (unsigned long long)v[i].addr,
		       (unsigned long long)v[j - 1].addr,
		       v[i].optional ? " (optional)" : "");
		i = j;
	}
}

/* ---- threads and sync objects -------------------------------------- */

static void vc_join(struct oracle *o, uint64_t *into, const uint64_t *from)
{
	for (size_t i = 0; i < o->max_threads; i++)
		if (from[i] > into[i])
			into[i] = from[i];
}

static void new_region(struct oracle *o, struct logical_thread *t)
{
	t->region = o->next_region++;
}

/* The live-or-dead logical thread that last had trace id @tid, or -1. */
static long latest_thread(struct oracle *o, uint32_t tid)
{
	for (size_t i = o->nthreads; i-- > 0;)
		if (o->threads[i].tid == tid)
			return (long)i;
	return -1;
}

static long add_thread(struct oracle *o, uint32_t tid)
{
	struct logical_thread *t;

	if (o->nthreads == o->max_threads)
		abort(); /* the bound computed in oracle_run() is wrong */
	t = &o->threads[o->nthreads];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->vc = xcalloc(o->max_threads, sizeof(*t->vc));
	/* Own entry starts at 1: an access at clock 0 would look ordered. */
	t->vc[o->nthreads] = 1;
	new_region(o, t);
	return (long)o->nthreads++;
}

static int fail(struct oracle *o, size_t i, int err, const char *why)
{
	o->out->err = err;
	o->out->err_event = i;
	o->out->err_reason = why;
	return err;
}

/* The thread making event @i: existing and live, or a new root thread. */
static long acting_thread(struct oracle *o, size_t i)
{
	long t = latest_thread(o, o->ev[i].tid);

	if (t < 0)
		return add_thread(o, o->ev[i].tid);
	if (o->threads[t].exited) {
		fail(o, i, -EINVAL, "event of an exited thread");
		return -1;
	}
	return t;
}

static struct sync_object *sync_object(struct oracle *o, uint64_t addr)
{
	for (size_t i = 0; i < o->nsyncs; i++)
		if (o->syncs[i].addr == addr)
			return &o->syncs[i];
	if (o->nsyncs == o->max_syncs)
		abort();
	o->syncs[o->nsyncs].addr = addr;
	o->syncs[o->nsyncs].vc = xcalloc(o->max_threads, sizeof(uint64_t));
	return &o->syncs[o->nsyncs++];
}

/* ---- per-byte history ---------------------------------------------- */

static size_t hash_addr(uint64_t addr)
{
	addr ^= addr >> 33;
	addr *= 0xff51afd7ed558ccdULL;
	addr ^= addr >> 33;
	return (size_t)addr;
}

static struct byte_hist *hist_slot(struct byte_hist *tab, size_t cap,
				   uint64_t addr)
{
	size_t i = hash_addr(addr) & (cap - 1);

	while (tab[i].used && tab[i].addr != addr)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static struct byte_hist *byte_hist(struct oracle *o, uint64_t addr)
{
	struct byte_hist *h;

	if (2 * (o->bytes_used + 1) > o->bytes_cap) {
		size_t cap = o->bytes_cap ? 2 * o->bytes_cap : 256;
		struct byte_hist *tab = xcalloc(cap, sizeof(*tab));

		for (size_t i = 0; i < o->bytes_cap; i++)
			if (o->bytes[i].used)
				*hist_slot(tab, cap, o->bytes[i].addr) =
					o->bytes[i];
		free(o->bytes);
		o->bytes = tab;
		o->bytes_cap = cap;
	}
	h = hist_slot(o->bytes, o->bytes_cap, addr);
	if (!h->used) {
		h->used = true;
		h->addr = addr;
		o->bytes_used++;
	}
	return h;
}

/* ---- the definitions ----------------------------------------------- */

/*
 * Whether the earlier access @r conflicts with the current access of
 * thread @t, apart from "another thread" and "one side writes".
 */
static bool unordered(struct oracle *o, const struct access_rec *r, long t)
{
	const struct logical_thread *u = &o->threads[r->thread];

	if (o->analysis == VALOR_ANALYSIS_FASTTRACK)
		/* Not happens-before: U's clock then exceeds T's view of U. */
		return r->clock > o->threads[t].vc[r->thread];
	/* Region conflict: U's region that made @r is still ongoing. */
	return !u->exited && u->region == r->region;
}

/*
 * Event @i, made by thread @t, reads or writes the byte of @h.  Records the
 * conflicts it has with the byte's history as keys.
 */
static void check_byte(struct oracle *o, size_t i, long t,
		       const struct byte_hist *h, bool is_write)
{
	struct oracle_result *out = o->out;

	for (size_t j = 0; j < h->n; j++) {
		const struct access_rec *r = &h->v[j];
		struct oracle_witness w = { .earlier = r->event,
					    .addr = h->addr };
		struct oracle_key k = { .addr = h->addr };

		if (r->thread == (uint32_t)t)
			continue;
		if (!r->is_write && !is_write)
			continue;
		if (!unordered(o, r, t))
			continue;
		if (r->is_write)
			w.kind = is_write ? VALOR_CONFLICT_WW :
					    VALOR_CONFLICT_WR;
		else
			w.kind = VALOR_CONFLICT_RW;
		k.kind = oracle_key_kind(o->analysis, w.kind);
		if (w.kind == VALOR_CONFLICT_RW &&
		    oracle_rw_by_region(o->analysis)) {
			k.who = r->tid;
			k.tag = r->region;
			k.optional = o->analysis == VALOR_ANALYSIS_VALOR &&
				     r->of_own_cell;
		} else {
			k.who = i;
			k.tag = ORACLE_TAG_EVENT;
		}
		oracle_keys_push(&out->keys, &out->nkeys, &out->cap, &k);
		if (out->nwitnesses == out->wcap) {
			out->wcap = out->wcap ? 2 * out->wcap : 32;
			out->witnesses =
				xrealloc(out->witnesses, out->wcap * sizeof(w));
		}
		out->witnesses[out->nwitnesses++] = w;
	}
}

/*
 * Whether thread @t's current region wrote every byte of the cell (8
 * aligned bytes) that holds @addr, before now.
 */
static bool region_wrote_cell(struct oracle *o, long t, uint64_t addr)
{
	uint64_t region = o->threads[t].region;

	for (uint64_t a = addr & ~7ULL; a < (addr & ~7ULL) + 8; a++) {
		const struct byte_hist *h = byte_hist(o, a);
		bool wrote = false;

		for (size_t j = 0; j < h->n && !wrote; j++)
			wrote = h->v[j].thread == (uint32_t)t &&
				h->v[j].region == region && h->v[j].is_write;
		if (!wrote)
			return false;
	}
	return true;
}

static void record(struct oracle *o, size_t i, long t, struct byte_hist *h,
		   bool is_write, bool of_own_cell)
{
	const struct logical_thread *th = &o->threads[t];

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 4;
		h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
	}
	h->v[h->n++] = (struct access_rec){
		.thread = (uint32_t)t,
		.tid = th->tid,
		.region = th->region,
		.clock = th->vc[t],
		.is_write = is_write,
		.of_own_cell = of_own_cell,
		.event = i,
	};
}

/* A strided access is its elements, one after the other, in order. */
static void access_bytes(struct oracle *o, size_t i, long t)
{
	const struct valor_event *e = &o->ev[i];
	bool is_write = e->flags & VALOR_EVF_WRITE;
	bool strided = e->flags & VALOR_EVF_STRIDED;
	uint64_t count = strided ? VALOR_ACCESS_COUNT(e->arg) : 1;
	uint64_t stride = strided ? VALOR_ACCESS_STRIDE(e->arg) : 0;

	for (uint64_t k = 0; k < count; k++) {
		uint64_t first = e->addr + k * stride;

		uint64_t cell = UINT64_MAX;
		bool own = false;

		for (uint64_t a = first; a < first + e->size; a++) {
			struct byte_hist *h;

			if (!is_write && a >> 3 != cell) {
				cell = a >> 3;
				own = region_wrote_cell(o, t, a);
			}
			h = byte_hist(o, a);

			check_byte(o, i, t, h, is_write);
			record(o, i, t, h, is_write, own);
		}
	}
}

/*
 * A free is a write of the range, then the range's history (the free's
 * own write included) is forgotten.  Bytes without history cannot
 * conflict, so walking the table covers the range however large it is.
 */
static void free_bytes(struct oracle *o, size_t i, long t)
{
	const struct valor_event *e = &o->ev[i];

	for (size_t j = 0; j < o->bytes_cap; j++) {
		struct byte_hist *h = &o->bytes[j];

		if (!h->used || h->addr < e->addr ||
		    h->addr - e->addr >= e->arg)
			continue;
		check_byte(o, i, t, h, true);
		h->n = 0;
	}
}

/* Apply event @i; returns 0 or a negative errno for an invalid trace. */
static int apply(struct oracle *o, size_t i)
{
	const struct valor_event *e = &o->ev[i];
	bool sfr = o->mode == VALOR_REGIONS_SFR;
	struct logical_thread *th;
	long t, u;

	switch (e->kind) {
	case VALOR_EV_THREAD_CREATE:
	case VALOR_EV_THREAD_EXIT:
	case VALOR_EV_THREAD_JOIN:
	case VALOR_EV_ACQUIRE:
	case VALOR_EV_RELEASE:
	case VALOR_EV_ACCESS:
	case VALOR_EV_FREE:
	case VALOR_EV_MUNMAP:
	case VALOR_EV_REGION_END:
	case VALOR_EV_VALIDATE:
		break;
	default:
		return fail(o, i, -EINVAL, "event kind not modelled");
	}
	if (e->kind == VALOR_EV_ACCESS && e->size == 0)
		return fail(o, i, -EINVAL, "zero-sized access");
	if (e->kind == VALOR_EV_ACCESS && (e->flags & VALOR_EVF_STRIDED) &&
	    !VALOR_ACCESS_COUNT(e->arg))
		return fail(o, i, -EINVAL, "strided access of no elements");
	if ((e->kind == VALOR_EV_THREAD_CREATE ||
	     e->kind == VALOR_EV_THREAD_JOIN) &&
	    e->arg > UINT32_MAX)
		return fail(o, i, -EINVAL, "thread id out of range");

	t = acting_thread(o, i);
	if (t < 0)
		return o->out->err;
	o->out->region[i] = o->threads[t].region;
	o->out->nregion = i + 1;

	switch (e->kind) {
	case VALOR_EV_THREAD_CREATE:
		u = latest_thread(o, (uint32_t)e->arg);
		if (u >= 0 && !o->threads[u].exited)
			return fail(o, i, -EEXIST, "create of a live thread");
		u = add_thread(o, (uint32_t)e->arg);
		th = &o->threads[t];
		memcpy(o->threads[u].vc, th->vc,
		       o->max_threads * sizeof(uint64_t));
		o->threads[u].vc[u] = 1;
		th->vc[t]++;
		new_region(o, th);
		break;
	case VALOR_EV_THREAD_EXIT:
		o->threads[t].exited = true;
		break;
	case VALOR_EV_THREAD_JOIN:
		u = latest_thread(o, (uint32_t)e->arg);
		if (u < 0 || !o->threads[u].exited || o->threads[u].joined)
			return fail(o, i, -EINVAL,
				    "join of a thread that "
				    "has not exited (or was joined)");
		o->threads[u].joined = true;
		vc_join(o, o->threads[t].vc, o->threads[u].vc);
		if (sfr)
			new_region(o, &o->threads[t]);
		break;
	case VALOR_EV_ACQUIRE:
		vc_join(o, o->threads[t].vc, sync_object(o, e->addr)->vc);
		if (sfr)
			new_region(o, &o->threads[t]);
		break;
	case VALOR_EV_RELEASE:
		th = &o->threads[t];
		vc_join(o, sync_object(o, e->addr)->vc, th->vc);
		th->vc[t]++;
		new_region(o, th);
		break;
	case VALOR_EV_REGION_END:
		new_region(o, &o->threads[t]);
		break;
	case VALOR_EV_VALIDATE:
		break;
	case VALOR_EV_ACCESS:
		access_bytes(o, i, t);
		break;
	case VALOR_EV_FREE:
	case VALOR_EV_MUNMAP:
		free_bytes(o, i, t);
		break;
	}
	return 0;
}

bool oracle_rw_by_region(enum valor_analysis analysis)
{
	return analysis != VALOR_ANALYSIS_FASTTRACK;
}

size_t oracle_run(const struct valor_event *ev, size_t n,
		  enum valor_analysis analysis, enum valor_region_mode mode,
		  struct oracle_result *out)
{
	struct oracle o = {
		.analysis = analysis,
		.mode = mode,
		.ev = ev,
		.next_region = 1,
		.out = out,
	};
	size_t ntids = 0, ncreates = 0;
	uint32_t *tids = xcalloc(n, sizeof(*tids));

	memset(out, 0, sizeof(*out));
	out->first = n;
	out->region = xcalloc(n, sizeof(*out->region));

	/*
	 * Every logical thread is a root (a distinct trace id) or a create;
	 * every sync object is named by an acquire or a release.
	 */
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < ntids && tids[j] != ev[i].tid)
			j++;
		if (j == ntids)
			tids[ntids++] = ev[i].tid;
		if (ev[i].kind == VALOR_EV_THREAD_CREATE)
			ncreates++;
		if (ev[i].kind == VALOR_EV_ACQUIRE ||
		    ev[i].kind == VALOR_EV_RELEASE)
			o.max_syncs++;
	}
	free(tids);
	o.max_threads = ntids + ncreates;
	o.threads = xcalloc(o.max_threads, sizeof(*o.threads));
	o.syncs = xcalloc(o.max_syncs, sizeof(*o.syncs));

	for (size_t i = 0; i < n; i++) {
		if (apply(&o, i) < 0)
			break;
		if (out->nkeys) {
			out->first = i;
			out->nkeys =
				oracle_keys_normalize(out->keys, out->nkeys);
			out->nwitnesses = witnesses_normalize(out->witnesses,
							      out->nwitnesses);
			break;
		}
	}

	for (size_t i = 0; i < o.nthreads; i++)
		free(o.threads[i].vc);
	free(o.threads);
	for (size_t i = 0; i < o.nsyncs; i++)
		free(o.syncs[i].vc);
	free(o.syncs);
	for (size_t i = 0; i < o.bytes_cap; i++)
		free(o.bytes[i].v);
	free(o.bytes);
	return out->first;
}

void oracle_result_free(struct oracle_result *r)
{
	free(r->keys);
	free(r->witnesses);
	free(r->region);
	memset(r, 0, sizeof(*r));
}

uint64_t oracle_region_of(const struct oracle_result *r, size_t event)
{
	if (event >= r->nregion)
		return UINT64_MAX;
	return r->region[event];
}
