// SPDX-License-Identifier: GPL-2.0
/*
 * Scan mode: each armed page reports its first touch, once, with the
 * toucher's tid, the exact address, read or write, and the instruction;
 * repeated scans find the pages more than one thread uses (Aikido).
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vtest.h"

#define PAGES 8
#define MAX_EV 1024

FIXTURE(scan)
{
	struct vt_target t;
	int fd;
	int warnings; /* kernel warnings before the case */
	uint64_t region;
	struct valor_event ev[MAX_EV];
};

FIXTURE_SETUP(scan)
{
	struct vt_res r;

	self->warnings = vt_kernel_warnings();
	ASSERT_LE(0, self->warnings);
	ASSERT_EQ(0, vt_target_start(&self->t, 2));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_MMAP, 0, 0, PAGES * VT_PAGE, &r));
	self->region = r.val;
	/* Populated: every page has a real PTE to arm. */
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_FILL, self->region, 1,
			   PAGES * VT_PAGE, NULL));
	self->fd = vt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, vt_attach(self->fd, self->t.pid));
	ASSERT_EQ(0, vt_read_header(self->fd));
}

FIXTURE_TEARDOWN(scan)
{
	EXPECT_EQ(self->warnings, vt_kernel_warnings());
	close(self->fd);
	vt_target_stop(&self->t);
}

static const struct valor_event *find_access(const struct valor_event *ev,
					     int n, uint64_t addr)
{
	for (int i = 0; i < n; i++)
		if (ev[i].kind == VALOR_EV_ACCESS && ev[i].addr == addr)
			return &ev[i];
	return NULL;
}

TEST_F(scan, first_toucher_of_each_page)
{
	struct valor_range rr;
	struct vt_res r[PAGES];
	uint64_t ip[PAGES];
	int n;

	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_SCAN, self->region,
			      PAGES * VT_PAGE, &rr));
	EXPECT_EQ(PAGES, rr.armed);
	EXPECT_EQ(0, rr.skipped);

	/* Thread 0 reads the even pages, thread 1 writes the odd ones, at
	 * an offset that differs per page; then both touch everything. */
	for (int p = 0; p < PAGES; p++) {
		uint64_t a = self->region + p * VT_PAGE + 8 * (p + 1);

		if (p % 2 == 0) {
			ASSERT_EQ(0,
				  vt_do(&self->t, 0, VT_LOAD, a, 0, 8, &r[p]));
		} else {
			ASSERT_EQ(0,
				  vt_do(&self->t, 1, VT_STORE, a, p, 8, &r[p]));
		}
		ip[p] = r[p].ip;
	}
	for (int p = 0; p < PAGES; p++) {
		ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD,
				   self->region + p * VT_PAGE, 0, 8, NULL));
		ASSERT_EQ(0,
			  vt_do(&self->t, 1, VT_STORE,
				self->region + p * VT_PAGE + 16, 1, 8, NULL));
	}

	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	ASSERT_EQ(PAGES, n);
	for (int p = 0; p < PAGES; p++) {
		uint64_t a = self->region + p * VT_PAGE + 8 * (p + 1);
		const struct valor_event *e = find_access(self->ev, n, a);

		ASSERT_NE(NULL, e) TH_LOG("no event for page %d", p);
		EXPECT_EQ(self->t.tid[p % 2], (pid_t)e->tid);
		EXPECT_TRUE(e->flags & VALOR_EVF_FIRST_TOUCH);
		EXPECT_EQ(p % 2 ? VALOR_EVF_WRITE : 0,
			  e->flags & VALOR_EVF_WRITE);
		EXPECT_FALSE(e->flags & VALOR_EVF_KERNEL);
		EXPECT_EQ(ip[p], e->ip);
		EXPECT_NE(0, e->ts_ns);
	}
	/* The values are the program's own: nothing was lost. */
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, self->region + VT_PAGE + 16, 0,
			   8, &r[0]));
	EXPECT_EQ(1, r[0].val);
}

TEST_F(scan, repeated_scans_find_the_shared_pages)
{
	int touched_by[PAGES] = { 0 };
	/* Thread 0 uses pages 0-5, thread 1 uses pages 4-7: 4, 5 shared. */
	const int lo[2] = { 0, 4 }, hi[2] = { 6, 8 };

	for (int round = 0; round < 4; round++) {
		int n;

		ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_SCAN, self->region,
				      PAGES * VT_PAGE, NULL));
		/* Alternate which thread goes first. */
		for (int k = 0; k < 2; k++) {
			int th = (round + k) % 2;

			for (int p = lo[th]; p < hi[th]; p++)
				ASSERT_EQ(0, vt_do(&self->t, th, VT_LOAD,
						   self->region + p * VT_PAGE,
						   0, 8, NULL));
		}
		n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
		ASSERT_EQ(PAGES, n);
		for (int i = 0; i < n; i++) {
			int p = (int)((self->ev[i].addr - self->region) /
				      VT_PAGE);

			ASSERT_EQ(VALOR_EV_ACCESS, self->ev[i].kind);
			ASSERT_TRUE(p >= 0 && p < PAGES);
			touched_by[p] |=
				self->ev[i].tid == (uint32_t)self->t.tid[0] ?
					1 :
					2;
		}
	}
	for (int p = 0; p < PAGES; p++) {
		int want = p == 4 || p == 5 ? 3 : p < 4 ? 1 : 2;

		EXPECT_EQ(want, touched_by[p]) TH_LOG("page %d", p);
	}
}

TEST_F(scan, unpopulated_pages_report_their_populating_touch)
{
	struct valor_range rr;
	struct vt_res r;
	uint64_t fresh;
	const struct valor_event *e;
	int n;

	ASSERT_EQ(0, vt_do(&self->t, 0, VT_MMAP, 0, 0, 4 * VT_PAGE, &r));
	fresh = r.val;
	ASSERT_EQ(0,
		  vt_range(self->fd, VALOR_IOC_SCAN, fresh, 4 * VT_PAGE, &rr));
	EXPECT_EQ(4, rr.armed);
	ASSERT_EQ(0, vt_do(&self->t, 1, VT_STORE, fresh + 2 * VT_PAGE + 40,
			   0x77, 8, &r));
	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	ASSERT_EQ(1, n);
	e = &self->ev[0];
	EXPECT_EQ(fresh + 2 * VT_PAGE + 40, e->addr);
	EXPECT_EQ(self->t.tid[1], (pid_t)e->tid);
	EXPECT_TRUE(e->flags & VALOR_EVF_WRITE);
	EXPECT_EQ(r.ip, e->ip);
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, fresh + 2 * VT_PAGE + 40, 0, 8,
			   &r));
	EXPECT_EQ(0x77, r.val);
}

TEST_F(scan, whole_address_space)
{
	struct valor_range rr;
	struct valor_kmod_stats st;
	struct timespec t0, t1;
	struct vt_res r;
	int n;

	/* Some more memory, so the cost per page means something. */
	ASSERT_EQ(0, vt_do(&self->t, 1, VT_MMAP, 0, 0, 4096 * VT_PAGE, &r));
	ASSERT_EQ(0,
		  vt_do(&self->t, 1, VT_FILL, r.val, 0, 4096 * VT_PAGE, NULL));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_SCAN, 0, 0, &rr));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_LE(PAGES + 4096, rr.armed);
	TH_LOG("armed %llu pages in %.2f ms", (unsigned long long)rr.armed,
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	ASSERT_EQ(0, vt_stats(self->fd, &st));
	EXPECT_EQ(rr.armed, st.armed_pages);
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, self->region + 3 * VT_PAGE, 0,
			   8, NULL));
	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	ASSERT_LE(1, n);
	EXPECT_EQ(1, vt_count(self->ev, n, VALOR_EV_ACCESS,
			      self->region + 3 * VT_PAGE,
			      self->region + 4 * VT_PAGE));
	/* Detach gives every page back; the target keeps running. */
	ASSERT_EQ(0, ioctl(self->fd, VALOR_IOC_DETACH));
	ASSERT_EQ(0, vt_do(&self->t, 1, VT_LOAD, self->region, 0, 1, NULL));
}

TEST_F(scan, transparent_huge_pages_are_refused)
{
	const uint64_t len = 2UL << 20;
	struct valor_range rr;
	struct vt_res r;

	ASSERT_EQ(0, vt_do(&self->t, 0, VT_MMAP_HUGE, 0, 0, len, &r));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_FILL, r.val, 3, len, NULL));
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_SCAN, r.val, len, &rr));
	if (rr.huge == 0) {
		/* The guest gave us small pages after all: say so. */
		SKIP(return,
			   "no transparent huge page in this guest (armed %llu)",
			   (unsigned long long)rr.armed);
	}
	EXPECT_EQ(512, rr.huge);
	EXPECT_EQ(0, rr.armed);
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_SUM, r.val, 0, len, NULL));
}

TEST_HARNESS_MAIN
