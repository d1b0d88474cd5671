// SPDX-License-Identifier: GPL-2.0
/*
 * Watch mode: every access to a watched page is reported with the right
 * tid, address, read/write and instruction, whether valor.ko performs it
 * itself (emulate=1) or single-steps it (emulate=0); the program's
 * results do not change; and under two concurrent threads the capture
 * rate is measured (and is exact for the forms the module performs).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vtest.h"

#define MAX_EV 65536

FIXTURE(watch)
{
	struct vt_target t;
	int fd;
	int warnings; /* kernel warnings before the case */
	uint64_t region;
	struct valor_event *ev;
};

FIXTURE_VARIANT(watch)
{
	const char *emulate;
};

FIXTURE_VARIANT_ADD(watch, emulated){
	.emulate = "1",
};

FIXTURE_VARIANT_ADD(watch, stepped){
	.emulate = "0",
};

FIXTURE_SETUP(watch)
{
	struct vt_res r;

	self->warnings = vt_kernel_warnings();
	ASSERT_LE(0, self->warnings);
	self->ev = calloc(MAX_EV, sizeof(*self->ev));
	ASSERT_NE(NULL, self->ev);
	ASSERT_EQ(0, vt_set_param("emulate", variant->emulate));
	ASSERT_EQ(0, vt_target_start(&self->t, 2));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_MMAP, 0, 0, 4 * VT_PAGE, &r));
	self->region = r.val;
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_FILL, self->region, 9, 4 * VT_PAGE,
			   NULL));
	self->fd = vt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, vt_attach(self->fd, self->t.pid));
	ASSERT_EQ(0, vt_read_header(self->fd));
}

FIXTURE_TEARDOWN(watch)
{
	EXPECT_EQ(self->warnings, vt_kernel_warnings());
	close(self->fd);
	vt_target_stop(&self->t);
	vt_set_param("emulate", "1");
	free(self->ev);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct step {
	int op;
	uint64_t off, val, n;
	bool write;
};

TEST_F(watch, every_access_of_one_thread)
{
	/* Loads and stores of each size, RMW, locked RMW, xchg, SSE. */
	static const struct step steps[] = {
		{ VT_LOAD, 0, 0, 8, false },
		{ VT_LOAD, 13, 0, 1, false },
		{ VT_LOAD, 30, 0, 2, false },
		{ VT_LOAD, 100, 0, 4, false },
		{ VT_STORE, 200, 0x11, 1, true },
		{ VT_STORE, 202, 0x2222, 2, true },
		{ VT_STORE, 204, 0x33333333, 4, true },
		{ VT_STORE, 208, 0x4444444444444444ULL, 8, true },
		{ VT_ADD, 208, 5, 8, true },
		{ VT_LOCK_ADD, 208, 6, 8, true },
		{ VT_XCHG, 216, 77, 8, true },
		{ VT_SSE_LOAD, 256, 0, 16, false },
		{ VT_LOAD, 208, 0, 8, false },
	};
	const int nsteps = sizeof(steps) / sizeof(steps[0]);
	uint64_t ip[32], base;
	struct valor_range rr;
	struct valor_kmod_stats st;
	struct vt_res r;
	int n;

	base = self->region + VT_PAGE;
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, base, VT_PAGE, &rr));
	ASSERT_EQ(1, rr.armed);
	for (int i = 0; i < nsteps; i++) {
		ASSERT_EQ(0,
			  vt_do(&self->t, 0, steps[i].op, base + steps[i].off,
				steps[i].val, steps[i].n, &r));
		ip[i] = r.ip;
	}
	/* The program saw its own values: 0x4444...+5+6. */
	EXPECT_EQ(0x4444444444444444ULL + 11, r.val);
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, base + 216, 0, 8, &r));
	n = vt_read_events(self->fd, self->ev, MAX_EV, 300);
	ASSERT_EQ(nsteps + 1, n);
	EXPECT_EQ(77, r.val);
	for (int i = 0; i < nsteps; i++) {
		const struct valor_event *e = &self->ev[i];

		EXPECT_EQ(VALOR_EV_ACCESS, e->kind);
		EXPECT_EQ(self->t.tid[0], (pid_t)e->tid);
		EXPECT_EQ(base + steps[i].off, e->addr) TH_LOG("step %d", i);
		EXPECT_EQ(steps[i].write ? VALOR_EVF_WRITE : 0,
			  e->flags & VALOR_EVF_WRITE)
		TH_LOG("step %d", i);
		EXPECT_EQ(ip[i], e->ip) TH_LOG("step %d", i);
		EXPECT_TRUE(e->flags &
			    (VALOR_EVF_EMULATED | VALOR_EVF_STEPPED));
		if (variant->emulate[0] == '0')
			EXPECT_TRUE(e->flags & VALOR_EVF_STEPPED);
		if (e->flags & VALOR_EVF_EMULATED)
			EXPECT_EQ(steps[i].n, e->size) TH_LOG("step %d", i);
	}
	/* SSE is not decoded: it is always single-stepped. */
	EXPECT_TRUE(self->ev[nsteps - 2].flags & VALOR_EVF_STEPPED);
	ASSERT_EQ(0, vt_stats(self->fd, &st));
	EXPECT_EQ(nsteps + 1, st.emulated + st.stepped);
	EXPECT_EQ(1, st.watched_pages);
	/* The other pages were never watched. */
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, self->region, 0, 8, NULL));
	EXPECT_EQ(0, vt_read_events(self->fd, self->ev, MAX_EV, 100));
}

TEST_F(watch, system_call_access_is_a_kernel_access)
{
	uint64_t base = self->region + 2 * VT_PAGE;
	struct vt_res r;
	int n;

	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, base, VT_PAGE, NULL));
	ASSERT_EQ(0, vt_do(&self->t, 1, VT_SYSREAD, base + 64, 0, 32, &r));
	EXPECT_EQ(32, r.val);
	/* Re-armed on the way out of the system call. */
	ASSERT_EQ(0, vt_do(&self->t, 1, VT_LOAD, base + 64, 0, 8, &r));
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aULL, r.val);
	n = vt_read_events(self->fd, self->ev, MAX_EV, 300);
	ASSERT_EQ(2, n);
	EXPECT_EQ(VALOR_EVF_WRITE | VALOR_EVF_KERNEL,
		  self->ev[0].flags & (VALOR_EVF_WRITE | VALOR_EVF_KERNEL));
	EXPECT_EQ(base + 64, self->ev[0].addr);
	EXPECT_EQ(self->t.tid[1], (pid_t)self->ev[0].tid);
	EXPECT_FALSE(self->ev[1].flags & VALOR_EVF_KERNEL);
	EXPECT_EQ(r.ip, self->ev[1].ip);
}

TEST_F(watch, results_unchanged_under_heavy_watching)
{
	const uint64_t len = 4 * VT_PAGE;
	struct vt_res r0, r1;
	uint64_t plain, watched;
	struct valor_kmod_stats st;

	/* Reference: the workload on zeroed memory, nothing armed. */
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_FILL, self->region, 0, len, NULL));
	ASSERT_EQ(0, vt_send(&self->t, 0, VT_WORK, self->region, 1, len / 2));
	ASSERT_EQ(0, vt_send(&self->t, 1, VT_WORK, self->region + len / 4, 2,
			     len / 2));
	ASSERT_EQ(0, vt_wait(&self->t, 0, &r0));
	ASSERT_EQ(0, vt_wait(&self->t, 1, &r1));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_SUM, self->region, 0, len, &r0));
	plain = r0.val;

	ASSERT_EQ(0, vt_do(&self->t, 0, VT_FILL, self->region, 0, len, NULL));
	ASSERT_EQ(0,
		  vt_range(self->fd, VALOR_IOC_WATCH, self->region, len, NULL));
	ASSERT_EQ(0, vt_send(&self->t, 0, VT_WORK, self->region, 1, len / 2));
	ASSERT_EQ(0, vt_send(&self->t, 1, VT_WORK, self->region + len / 4, 2,
			     len / 2));
	ASSERT_EQ(0, vt_wait(&self->t, 0, &r0));
	ASSERT_EQ(0, vt_wait(&self->t, 1, &r1));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_SUM, self->region, 0, len, &r0));
	watched = r0.val;
	EXPECT_EQ(plain, watched);
	ASSERT_EQ(0, vt_stats(self->fd, &st));
	EXPECT_LT(1000, st.faults);
	TH_LOG("checksum %#llx both ways; %llu faults, %llu emulated, %llu stepped, %llu lost",
	       (unsigned long long)plain, (unsigned long long)st.faults,
	       (unsigned long long)st.emulated, (unsigned long long)st.stepped,
	       (unsigned long long)st.lost);
}

TEST_F(watch, covered_fraction_of_a_mixed_workload)
{
	const uint64_t len = 4 * VT_PAGE;
	struct valor_kmod_stats st;
	uint64_t plain;
	struct vt_res r;

	ASSERT_EQ(0, vt_do(&self->t, 0, VT_MIXED, self->region, 7, len, NULL));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_SUM, self->region, 0, len, &r));
	plain = r.val;
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_FILL, self->region, 9, len, NULL));
	ASSERT_EQ(0,
		  vt_range(self->fd, VALOR_IOC_WATCH, self->region, len, NULL));
	ASSERT_EQ(0, vt_do(&self->t, 1, VT_MIXED, self->region, 7, len, NULL));
	ASSERT_EQ(0, ioctl(self->fd, VALOR_IOC_DETACH));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_SUM, self->region, 0, len, &r));
	EXPECT_EQ(plain, r.val);
	ASSERT_EQ(0, vt_stats(self->fd, &st));
	/* Every user fault was either performed or stepped. */
	EXPECT_EQ(st.faults - st.kernel_accesses, st.emulated + st.stepped);
	EXPECT_LT(1000, st.faults);
	TH_LOG("emulate=%s: %llu trapped accesses, %llu performed by valor.ko (%.1f%%), %llu single-stepped",
	       variant->emulate, (unsigned long long)st.faults,
	       (unsigned long long)st.emulated,
	       st.faults ? 100.0 * st.emulated / st.faults : 0.0,
	       (unsigned long long)st.stepped);
}

TEST_F(watch, capture_rate_of_two_concurrent_threads)
{
	const uint64_t iters = 20000;
	uint64_t base = self->region + 3 * VT_PAGE;
	struct vt_res r0, r1, r;
	struct valor_kmod_stats st;
	uint64_t seen = 0;
	int n;

	ASSERT_EQ(0, vt_do(&self->t, 0, VT_STORE, base, 0, 8, NULL));
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, base, VT_PAGE, NULL));
	ASSERT_EQ(0, vt_send(&self->t, 0, VT_LOOP_LOCK_ADD, base, 0, iters));
	ASSERT_EQ(0, vt_send(&self->t, 1, VT_LOOP_LOCK_ADD, base, 0, iters));
	for (;;) {
		n = vt_read_events(self->fd, self->ev, MAX_EV, 300);
		ASSERT_LE(0, n);
		if (!n)
			break;
		seen += vt_count(self->ev, n, VALOR_EV_ACCESS, base, base + 8);
	}
	ASSERT_EQ(0, vt_wait(&self->t, 0, &r0));
	ASSERT_EQ(0, vt_wait(&self->t, 1, &r1));
	seen += vt_count(self->ev,
			 vt_read_events(self->fd, self->ev, MAX_EV, 300),
			 VALOR_EV_ACCESS, base, base + 8);
	/* The lock adds were atomic whoever performed them. */
	ASSERT_EQ(0, ioctl(self->fd, VALOR_IOC_DETACH));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, base, 0, 8, &r));
	EXPECT_EQ(2 * iters, r.val);
	ASSERT_EQ(0, vt_stats(self->fd, &st));
	TH_LOG("emulate=%s: captured %llu of %llu accesses (%.2f%%), %llu emulated, %llu stepped, %llu lost",
	       variant->emulate, (unsigned long long)seen,
	       (unsigned long long)(2 * iters), 100.0 * seen / (2 * iters),
	       (unsigned long long)st.emulated, (unsigned long long)st.stepped,
	       (unsigned long long)st.lost);
	EXPECT_EQ(0, st.lost);
	EXPECT_LE(seen, 2 * iters);
	EXPECT_LT(0, seen);
	if (variant->emulate[0] == '1')
		EXPECT_EQ(2 * iters, seen);
}

TEST_F(watch, two_threads_on_their_own_pages_are_exact)
{
	const uint64_t iters = 3000;
	uint64_t a = self->region, b = self->region + 2 * VT_PAGE + 512;
	struct vt_res r0, r1;
	uint64_t seen_a = 0, seen_b = 0, plain_ns, watched_ns;
	int n;

	/* The same loops unwatched first, for the cost of a trap. */
	plain_ns = now_ns();
	ASSERT_EQ(0, vt_send(&self->t, 0, VT_LOOP_STORE, a, 0, iters));
	ASSERT_EQ(0, vt_send(&self->t, 1, VT_LOOP_STORE, b, 0, iters));
	ASSERT_EQ(0, vt_wait(&self->t, 0, &r0));
	ASSERT_EQ(0, vt_wait(&self->t, 1, &r1));
	plain_ns = now_ns() - plain_ns;

	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			      4 * VT_PAGE, NULL));
	watched_ns = now_ns();
	ASSERT_EQ(0, vt_send(&self->t, 0, VT_LOOP_STORE, a, 0, iters));
	ASSERT_EQ(0, vt_send(&self->t, 1, VT_LOOP_STORE, b, 0, iters));
	ASSERT_EQ(0, vt_wait(&self->t, 0, &r0));
	ASSERT_EQ(0, vt_wait(&self->t, 1, &r1));
	watched_ns = now_ns() - watched_ns;
	TH_LOG("emulate=%s: %llu watched stores on 2 threads in %.1f ms (%.1f us each; %.2f ms unwatched)",
	       variant->emulate, (unsigned long long)(2 * iters),
	       watched_ns / 1e6, watched_ns / 1e3 / iters, plain_ns / 1e6);
	while ((n = vt_read_events(self->fd, self->ev, MAX_EV, 300)) > 0) {
		for (int i = 0; i < n; i++) {
			const struct valor_event *e = &self->ev[i];

			if (e->kind != VALOR_EV_ACCESS)
				continue;
			if (e->addr == a &&
			    e->tid == (uint32_t)self->t.tid[0] &&
			    e->ip == r0.ip)
				seen_a++;
			else if (e->addr == b &&
				 e->tid == (uint32_t)self->t.tid[1] &&
				 e->ip == r1.ip)
				seen_b++;
		}
	}
	/* Nobody else used those pages: no window to slip through. */
	EXPECT_EQ(iters, seen_a);
	EXPECT_EQ(iters, seen_b);
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, b, 0, 8, &r0));
	EXPECT_EQ(iters - 1, r0.val);
}

TEST_F(watch, unwatch_stops_reporting)
{
	struct valor_range rr;
	struct valor_kmod_stats st;
	int n;

	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			      2 * VT_PAGE, &rr));
	ASSERT_EQ(2, rr.armed);
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_UNWATCH, self->region,
			      VT_PAGE, &rr));
	EXPECT_EQ(1, rr.armed);
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, self->region, 0, 8, NULL));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, self->region + VT_PAGE, 0, 8,
			   NULL));
	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	ASSERT_EQ(2, n);
	EXPECT_EQ(VALOR_EV_PAGE_DISARM, self->ev[0].kind);
	EXPECT_EQ(VALOR_DISARM_UNWATCH, self->ev[0].arg);
	EXPECT_EQ(self->region, self->ev[0].addr);
	EXPECT_EQ(VALOR_EV_ACCESS, self->ev[1].kind);
	EXPECT_EQ(self->region + VT_PAGE, self->ev[1].addr);
	ASSERT_EQ(0, vt_stats(self->fd, &st));
	EXPECT_EQ(1, st.armed_pages);
}

TEST_HARNESS_MAIN
