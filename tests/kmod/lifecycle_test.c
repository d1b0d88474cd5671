// SPDX-License-Identifier: GPL-2.0
/*
 * What happens to armed pages when the target changes its memory or
 * ends, when the session goes over its fault budget, and when the module
 * is unloaded: each is reported, and the target's data survives.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vtest.h"

#define MAX_EV 65536

FIXTURE(life)
{
	struct vt_target t;
	int fd;
	int warnings; /* kernel warnings before the case */
	uint64_t region;
	struct valor_event *ev;
};

FIXTURE_SETUP(life)
{
	struct vt_res r;

	self->warnings = vt_kernel_warnings();
	ASSERT_LE(0, self->warnings);
	self->ev = calloc(MAX_EV, sizeof(*self->ev));
	ASSERT_NE(NULL, self->ev);
	ASSERT_EQ(0, vt_target_start(&self->t, 2));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_MMAP, 0, 0, 8 * VT_PAGE, &r));
	self->region = r.val;
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_FILL, self->region, 5, 8 * VT_PAGE,
			   NULL));
	self->fd = vt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, vt_attach(self->fd, self->t.pid));
	ASSERT_EQ(0, vt_read_header(self->fd));
}

FIXTURE_TEARDOWN(life)
{
	EXPECT_EQ(self->warnings, vt_kernel_warnings());
	if (self->fd >= 0)
		close(self->fd);
	vt_target_stop(&self->t);
	free(self->ev);
}

/* The low 32 bits VT_FILL with @seed left at byte offset @off. */
static uint32_t fill_word(unsigned int seed, unsigned int off)
{
	uint32_t w = 0;

	for (unsigned int i = 0; i < 4; i++)
		w |= (uint32_t)(uint8_t)(seed + (off + i) * 7) << (8 * i);
	return w;
}

/* The disarm reasons reported for pages in [lo, hi). */
static int disarms(const struct valor_event *ev, int n, uint64_t lo,
		   uint64_t hi, uint64_t why)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		if (ev[i].kind == VALOR_EV_PAGE_DISARM && ev[i].arg == why &&
		    ev[i].addr >= lo && ev[i].addr < hi)
			c++;
	return c;
}

TEST_F(life, target_exit_ends_the_session)
{
	struct valor_kmod_stats st;
	int n;

	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			      4 * VT_PAGE, NULL));
	ASSERT_EQ(0, vt_send(&self->t, 0, VT_EXIT, 0, 42, 0));
	/* The last record is TARGET_EXIT; then read() says end of file. */
	n = vt_read_events(self->fd, self->ev, MAX_EV, 500);
	ASSERT_LE(1, n);
	EXPECT_EQ(VALOR_EV_TARGET_EXIT, self->ev[n - 1].kind);
	EXPECT_EQ(4, disarms(self->ev, n, self->region,
			     self->region + 4 * VT_PAGE, VALOR_DISARM_EXIT));
	EXPECT_EQ(0, read(self->fd, self->ev, sizeof(*self->ev)));
	ASSERT_EQ(0, vt_stats(self->fd, &st));
	EXPECT_EQ(0, st.armed_pages);
	/* Range operations on a dead target say so. */
	EXPECT_EQ(-1, vt_range(self->fd, VALOR_IOC_SCAN, self->region, VT_PAGE,
			       NULL));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(42 << 8, vt_target_stop(&self->t));
	/* The session can be reused after a detach. */
	ASSERT_EQ(0, ioctl(self->fd, VALOR_IOC_DETACH));
}

TEST_F(life, exec_ends_the_session)
{
	int n;

	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_SCAN, self->region,
			      2 * VT_PAGE, NULL));
	ASSERT_EQ(0, vt_send(&self->t, 1, VT_EXEC, 0, 0, 0));
	n = vt_read_events(self->fd, self->ev, MAX_EV, 1000);
	ASSERT_LE(1, n);
	EXPECT_EQ(VALOR_EV_TARGET_EXIT, self->ev[n - 1].kind);
	EXPECT_EQ(2, disarms(self->ev, n, self->region,
			     self->region + 2 * VT_PAGE, VALOR_DISARM_EXIT));
	EXPECT_EQ(0, read(self->fd, self->ev, sizeof(*self->ev)));
}

TEST_F(life, madvise_dontneed_disarms)
{
	struct vt_res r;
	int n;

	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			      2 * VT_PAGE, NULL));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_MADVISE, self->region, MADV_DONTNEED,
			   VT_PAGE, NULL));
	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	EXPECT_EQ(1, disarms(self->ev, n, self->region, self->region + VT_PAGE,
			     VALOR_DISARM_CLEAR));
	/* The page reads as zeros, as the program asked. */
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, self->region + 8, 0, 8, &r));
	EXPECT_EQ(0, r.val);
}

TEST_F(life, page_caps_hold)
{
	struct valor_range rr;
	struct valor_kmod_stats st;

	ASSERT_EQ(0, vt_set_limits(self->fd, 4, 0));
	EXPECT_EQ(-1, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			       8 * VT_PAGE, NULL));
	EXPECT_EQ(E2BIG, errno);
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			      3 * VT_PAGE, &rr));
	EXPECT_EQ(3, rr.armed);
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_SCAN,
			      self->region + 4 * VT_PAGE, 3 * VT_PAGE, &rr));
	EXPECT_EQ(1, rr.armed);
	EXPECT_EQ(2, rr.skipped);
	ASSERT_EQ(0, vt_stats(self->fd, &st));
	EXPECT_EQ(4, st.armed_pages);
	EXPECT_EQ(3, st.watched_pages);
	/* The global cap binds every session. */
	ASSERT_EQ(0, vt_set_limits(self->fd, 100, 0));
	ASSERT_EQ(0, vt_set_param("max_pages_total", "5"));
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_SCAN, 0, 0, &rr));
	ASSERT_EQ(0, vt_set_param("max_pages_total", "1048576"));
	/* The scanned page again, and one more. */
	EXPECT_EQ(2, rr.armed);
	ASSERT_EQ(0, vt_stats(self->fd, &st));
	EXPECT_EQ(5, st.armed_pages);
	/* Limits above the global cap are refused. */
	EXPECT_EQ(-1, vt_set_limits(self->fd, 1ULL << 40, 0));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(life, another_process_reading_is_a_kernel_access)
{
	struct iovec local, remote;
	uint64_t word = 0;
	int n;

	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region, VT_PAGE,
			      NULL));
	local.iov_base = &word;
	local.iov_len = sizeof(word);
	remote.iov_base = (void *)(self->region + 16);
	remote.iov_len = sizeof(word);
	ASSERT_EQ(8, process_vm_readv(self->t.pid, &local, 1, &remote, 1, 0));
	EXPECT_EQ(((uint64_t)fill_word(5, 20) << 32) | fill_word(5, 16), word);
	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	ASSERT_EQ(1, n);
	EXPECT_EQ(VALOR_EVF_KERNEL, self->ev[0].flags & VALOR_EVF_KERNEL);
	/* get_user_pages() faults a page, not a byte. */
	EXPECT_EQ(self->region, self->ev[0].addr);
	/* The tid is the reader's, in our namespace. */
	EXPECT_EQ(getpid(), (pid_t)self->ev[0].tid);
	/* Re-armed a tick later by the session's worker. */
	usleep(50 * 1000);
	ASSERT_EQ(0,
		  vt_do(&self->t, 0, VT_LOAD, self->region + 16, 0, 8, NULL));
	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	EXPECT_EQ(1, n);
}

TEST_F(life, munmap_disarms)
{
	int n;

	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			      4 * VT_PAGE, NULL));
	ASSERT_EQ(0, vt_do(&self->t, 1, VT_MUNMAP, self->region + VT_PAGE, 0,
			   2 * VT_PAGE, NULL));
	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	EXPECT_EQ(2, n);
	EXPECT_EQ(2, disarms(self->ev, n, self->region + VT_PAGE,
			     self->region + 3 * VT_PAGE, VALOR_DISARM_UNMAP));
	/* The pages around the hole are still watched. */
	ASSERT_EQ(0, vt_do(&self->t, 1, VT_LOAD, self->region + 3 * VT_PAGE, 0,
			   8, NULL));
	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	EXPECT_EQ(1, vt_count(self->ev, n, VALOR_EV_ACCESS,
			      self->region + 3 * VT_PAGE,
			      self->region + 4 * VT_PAGE));
}

TEST_F(life, mprotect_disarms_and_the_new_protection_holds)
{
	struct vt_res r;
	int n;

	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			      2 * VT_PAGE, NULL));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_MPROTECT, self->region, PROT_READ,
			   VT_PAGE, NULL));
	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	EXPECT_EQ(1, disarms(self->ev, n, self->region, self->region + VT_PAGE,
			     VALOR_DISARM_PROTECT));
	/* Readable with the program's data; the other page still watched. */
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, self->region, 0, 1, &r));
	EXPECT_EQ(5, r.val);
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, self->region + VT_PAGE, 0, 1,
			   &r));
	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	EXPECT_EQ(1, n);
	EXPECT_EQ(self->region + VT_PAGE, self->ev[0].addr);
}

TEST_F(life, fork_copy_on_write_disarms_and_both_keep_their_data)
{
	struct vt_res r;
	int n;

	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			      2 * VT_PAGE, NULL));
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_FORK, self->region + 8, 0xc0ffee, 0,
			   &r));
	/* The child wrote its own copy and exited 7; ours is unchanged. */
	EXPECT_EQ(7, r.val >> 32);
	EXPECT_EQ(fill_word(5, 8), r.val & 0xffffffff);
	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	EXPECT_EQ(2, disarms(self->ev, n, self->region,
			     self->region + 2 * VT_PAGE, VALOR_DISARM_PROTECT));
}

TEST_F(life, fault_storm_is_rate_limited)
{
	struct valor_kmod_stats st;
	struct vt_res r0, r1;
	uint64_t budget = 0;
	int n;

	ASSERT_EQ(0, vt_set_limits(self->fd, 0, 200));
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			      8 * VT_PAGE, NULL));
	ASSERT_EQ(0,
		  vt_send(&self->t, 0, VT_WORK, self->region, 3, 4 * VT_PAGE));
	ASSERT_EQ(0, vt_send(&self->t, 1, VT_WORK, self->region + 4 * VT_PAGE,
			     4, 4 * VT_PAGE));
	ASSERT_EQ(0, vt_wait(&self->t, 0, &r0));
	ASSERT_EQ(0, vt_wait(&self->t, 1, &r1));
	n = vt_read_events(self->fd, self->ev, MAX_EV, 200);
	budget = disarms(self->ev, n, self->region, self->region + 8 * VT_PAGE,
			 VALOR_DISARM_BUDGET);
	EXPECT_EQ(8, budget);
	ASSERT_EQ(0, vt_stats(self->fd, &st));
	EXPECT_EQ(8, st.budget_disarms);
	EXPECT_EQ(0, st.armed_pages);
	/* Over budget within the first second: about 200 faults taken. */
	EXPECT_GE(210, st.faults);
}

TEST_F(life, closing_with_pages_armed_gives_them_back)
{
	struct vt_res r;

	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			      8 * VT_PAGE, NULL));
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_SCAN, 0, 0, NULL));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0,
		  vt_do(&self->t, 1, VT_SUM, self->region, 0, 8 * VT_PAGE, &r));
	ASSERT_EQ(0, vt_do(&self->t, 1, VT_LOAD, self->region + 100, 0, 1, &r));
	EXPECT_EQ((uint8_t)(5 + 100 * 7), r.val);
}

TEST_F(life, module_unload_refused_while_armed_then_allowed)
{
	char cmd[256];
	struct vt_res before, after;
	const char *ko = getenv("VALOR_KO");

	if (!ko)
		ko = "/valor.ko";
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_SUM, self->region, 0, 8 * VT_PAGE,
			   &before));
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			      8 * VT_PAGE, NULL));
	/* An open session holds the module. */
	EXPECT_EQ(-1, syscall(SYS_delete_module, "valor", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, syscall(SYS_delete_module, "valor", O_NONBLOCK))
	TH_LOG("rmmod: %s", strerror(errno));
	ASSERT_EQ(0, vt_do(&self->t, 1, VT_SUM, self->region, 0, 8 * VT_PAGE,
			   &after));
	EXPECT_EQ(before.val, after.val);
	snprintf(cmd, sizeof(cmd), "insmod %s", ko);
	ASSERT_EQ(0, system(cmd));
	self->fd = vt_open();
	ASSERT_LE(0, self->fd);
}

/*
 * Signals landing between a fault and its step: the program neither sees
 * a stray SIGTRAP nor loses a store, and each store is reported once.
 * The handler loads the word in its first 8,192 runs only (vtest.c), so
 * that stores and loads fit the session's buffer however slow the guest.
 */
TEST_F(life, signals_during_single_steps)
{
	const uint64_t iters = 3000;
	uint64_t a = self->region + 64, stores = 0, loads = 0;
	struct vt_res r;
	int n;

	ASSERT_EQ(0, vt_set_param("emulate", "0"));
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region, VT_PAGE,
			      NULL));
	if (vt_do(&self->t, 0, VT_SIGNALED_STORES, a, 0, iters, &r)) {
		int status = vt_target_stop(&self->t);

		vt_set_param("emulate", "1");
		ASSERT_TRUE(0)
		TH_LOG("the target died: wait status %#x", status);
	}
	ASSERT_EQ(0, vt_set_param("emulate", "1"));
	while ((n = vt_read_events(self->fd, self->ev, MAX_EV, 300)) > 0)
		for (int i = 0; i < n; i++) {
			if (self->ev[i].kind != VALOR_EV_ACCESS ||
			    self->ev[i].addr != a)
				continue;
			if (self->ev[i].ip == r.ip)
				stores++;
			else
				loads++;
		}
	{
		struct valor_kmod_stats st;

		vt_stats(self->fd, &st);
		TH_LOG("%llu handler runs during %llu stepped stores: %llu faults, %llu stepped, %llu rearms, %llu loads seen",
		       (unsigned long long)r.val, (unsigned long long)iters,
		       (unsigned long long)st.faults,
		       (unsigned long long)st.stepped,
		       (unsigned long long)st.rearms,
		       (unsigned long long)loads);
	}
	EXPECT_LT(0, r.val);
	EXPECT_EQ(iters, stores);
	/* A handler's load is reported unless it ran over a pending step,
	 * whose page is open; and only a handler loads. */
	EXPECT_GE(r.val, loads);
	EXPECT_LT(0, loads);
	ASSERT_EQ(0, vt_do(&self->t, 0, VT_LOAD, a, 0, 8, &r));
	EXPECT_EQ(iters - 1, r.val);
}

static int reload_module(const char *args)
{
	char cmd[512];
	const char *ko = getenv("VALOR_KO");

	if (syscall(SYS_delete_module, "valor", O_NONBLOCK))
		return -1;
	snprintf(cmd, sizeof(cmd), "insmod %s %s", ko ? ko : "/valor.ko", args);
	return system(cmd);
}

/* Both TLB shootdowns: by range (the default) and of every CPU. */
TEST_F(life, all_cpu_tlb_flush_is_exact_too)
{
	const uint64_t iters = 2000;
	uint64_t a = self->region, b = self->region + 4 * VT_PAGE;
	struct valor_kmod_stats st;
	struct vt_res r0, r1;
	uint64_t seen = 0;
	int n;

	ASSERT_EQ(0, vt_stats(self->fd, &st));
	EXPECT_EQ(1, st.tlb_flush_range);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, reload_module("tlb_flush_all=1 emulate=0"));
	self->fd = vt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, vt_attach(self->fd, self->t.pid));
	ASSERT_EQ(0, vt_read_header(self->fd));
	ASSERT_EQ(0, vt_stats(self->fd, &st));
	EXPECT_EQ(0, st.tlb_flush_range);
	ASSERT_EQ(0, vt_range(self->fd, VALOR_IOC_WATCH, self->region,
			      8 * VT_PAGE, NULL));
	ASSERT_EQ(0, vt_send(&self->t, 0, VT_LOOP_STORE, a, 0, iters));
	ASSERT_EQ(0, vt_send(&self->t, 1, VT_LOOP_STORE, b, 0, iters));
	ASSERT_EQ(0, vt_wait(&self->t, 0, &r0));
	ASSERT_EQ(0, vt_wait(&self->t, 1, &r1));
	while ((n = vt_read_events(self->fd, self->ev, MAX_EV, 300)) > 0)
		seen += vt_count(self->ev, n, VALOR_EV_ACCESS, a, a + 8) +
			vt_count(self->ev, n, VALOR_EV_ACCESS, b, b + 8);
	EXPECT_EQ(2 * iters, seen);
	ASSERT_EQ(0, vt_stats(self->fd, &st));
	EXPECT_EQ(2 * iters, st.stepped);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, reload_module(""));
	self->fd = vt_open();
	ASSERT_LE(0, self->fd);
}

TEST_HARNESS_MAIN
