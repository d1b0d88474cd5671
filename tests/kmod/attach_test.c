// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching: who may attach to what, and what a session refuses.  Also
 * the hostile sequences (bad pointers, bad sizes, repeated attach,
 * closing while a reader waits): each returns a clear errno, loses
 * nothing, and leaves the kernel without a warning.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vtest.h"

/* Every case ends with the kernel as quiet as it began. */
FIXTURE(dev)
{
	int warnings;
};

FIXTURE_SETUP(dev)
{
	self->warnings = vt_kernel_warnings();
	ASSERT_LE(0, self->warnings);
}

FIXTURE_TEARDOWN(dev)
{
	EXPECT_EQ(self->warnings, vt_kernel_warnings());
}

#define NOBODY 65534
#define VALOR_GROUP 4321

/* Run @fn in a child with the given credentials; its exit status. */
static int as_user(uid_t uid, gid_t gid, int (*fn)(void *), void *arg)
{
	int status;
	pid_t c = fork();

	if (c < 0)
		return -1;
	if (!c) {
		if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
			_exit(100);
		/* Changing credentials made us undumpable: undo it, so that
		 * our own children are ours to ptrace as they would be
		 * after a login. */
		prctl(PR_SET_DUMPABLE, 1);
		_exit(fn(arg));
	}
	if (waitpid(c, &status, 0) != c || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

struct attach_try {
	pid_t target;
	int fd; /* opened by root before dropping privileges */
};

/* Exit status: the attach errno, 0 on success. */
static int try_attach(void *arg)
{
	struct attach_try *a = arg;

	return vt_attach(a->fd, a->target) ? errno : 0;
}

TEST_F(dev, attach_and_detach)
{
	struct vt_target t;
	struct valor_kmod_stats st;
	int fd;

	ASSERT_EQ(0, vt_target_start(&t, 1));
	fd = vt_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, VALOR_IOC_DETACH));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, vt_attach(fd, t.pid));
	/* A thread id names its process. */
	EXPECT_EQ(-1, vt_attach(fd, t.tid[0]));
	EXPECT_EQ(EBUSY, errno);
	ASSERT_EQ(0, vt_stats(fd, &st));
	EXPECT_EQ(0, st.armed_pages);
	ASSERT_EQ(0, ioctl(fd, VALOR_IOC_DETACH));
	/* And again, by thread id this time. */
	ASSERT_EQ(0, vt_attach(fd, t.tid[0]));
	ASSERT_EQ(0, ioctl(fd, VALOR_IOC_DETACH));
	close(fd);
	vt_target_stop(&t);
}

TEST_F(dev, refusals)
{
	struct vt_target t;
	int fd, fd2;

	ASSERT_EQ(0, vt_target_start(&t, 1));
	fd = vt_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, vt_attach(fd, 999999));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(-1, vt_attach(fd, 0));
	EXPECT_EQ(ESRCH, errno);
	/* kthreadd has no user address space. */
	EXPECT_EQ(-1, vt_attach(fd, 2));
	EXPECT_EQ(EINVAL, errno);
	/* Range operations need a target. */
	EXPECT_EQ(-1, vt_range(fd, VALOR_IOC_SCAN, 0x10000, VT_PAGE, NULL));
	EXPECT_EQ(ENOTCONN, errno);
	/* One session per target. */
	ASSERT_EQ(0, vt_attach(fd, t.pid));
	fd2 = vt_open();
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-1, vt_attach(fd2, t.pid));
	EXPECT_EQ(EBUSY, errno);
	close(fd);
	/* Free again once the first session is gone. */
	EXPECT_EQ(0, vt_attach(fd2, t.pid));
	close(fd2);
	vt_target_stop(&t);
}

TEST_F(dev, unprivileged_caller_is_refused)
{
	struct attach_try a;
	struct vt_target t;

	ASSERT_EQ(0, vt_set_param("gid", "-1"));
	ASSERT_EQ(0, vt_target_start(&t, 1));
	a.target = t.pid;
	a.fd = vt_open();
	ASSERT_LE(0, a.fd);
	/* Without CAP_SYS_ADMIN and outside the group: EPERM. */
	EXPECT_EQ(EPERM, as_user(NOBODY, NOBODY, try_attach, &a));
	close(a.fd);
	vt_target_stop(&t);
}

struct own_child {
	int fd;
	int result; /* errno of attaching to our own child */
	int result_root; /* errno of attaching to a root process */
	pid_t root_pid;
};

static int attach_own_and_foreign(void *arg)
{
	struct own_child *o = arg;
	struct vt_target mine;
	int rc;

	if (vt_target_start(&mine, 1))
		return 101;
	rc = vt_attach(o->fd, mine.pid) ? errno : 0;
	ioctl(o->fd, VALOR_IOC_DETACH);
	if (rc)
		return 102;
	/* A process this user cannot ptrace: refused. */
	rc = vt_attach(o->fd, o->root_pid) ? errno : 0;
	vt_target_stop(&mine);
	return rc == EPERM ? 0 : 103;
}

TEST_F(dev, group_member_may_attach_only_what_it_may_ptrace)
{
	struct vt_target root_target;
	struct own_child o;
	char gid[16];

	snprintf(gid, sizeof(gid), "%d", VALOR_GROUP);
	ASSERT_EQ(0, vt_set_param("gid", gid));
	ASSERT_EQ(0, vt_target_start(&root_target, 1));
	o.root_pid = root_target.pid;
	o.fd = vt_open();
	ASSERT_LE(0, o.fd);
	EXPECT_EQ(0, as_user(NOBODY, VALOR_GROUP, attach_own_and_foreign, &o));
	/* Not in the group: refused even for its own child. */
	EXPECT_EQ(102, as_user(NOBODY, NOBODY, attach_own_and_foreign, &o));
	close(o.fd);
	vt_target_stop(&root_target);
	ASSERT_EQ(0, vt_set_param("gid", "-1"));
}

TEST_F(dev, stream_header_then_records)
{
	struct valor_event ev;
	struct vt_target t;
	char small[16];
	int fd;

	ASSERT_EQ(0, vt_target_start(&t, 1));
	fd = vt_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vt_attach(fd, t.pid));
	/* Smaller than one record: refused, nothing consumed. */
	EXPECT_EQ(-1, read(fd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, vt_read_header(fd));
	fcntl(fd, F_SETFL, O_NONBLOCK);
	EXPECT_EQ(-1, read(fd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	close(fd);
	vt_target_stop(&t);
}

TEST_F(dev, bad_pointers_and_sizes)
{
	struct valor_event ev[8];
	struct valor_range r = { 0 };
	struct vt_target t;
	struct vt_res res;
	uint64_t region;
	int fd;

	ASSERT_EQ(0, vt_target_start(&t, 1));
	ASSERT_EQ(0, vt_do(&t, 0, VT_MMAP, 0, 0, 4 * VT_PAGE, &res));
	region = res.val;
	fd = vt_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, VALOR_IOC_ATTACH, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	{
		struct valor_attach a = { .pid = (uint32_t)t.pid, .flags = 1 };

		EXPECT_EQ(-1, ioctl(fd, VALOR_IOC_ATTACH, &a));
		EXPECT_EQ(EINVAL, errno);
	}
	ASSERT_EQ(0, vt_attach(fd, t.pid));
	ASSERT_EQ(0, vt_read_header(fd));
	EXPECT_EQ(-1, ioctl(fd, VALOR_IOC_SCAN, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(fd, VALOR_IOC_GET_STATS, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(fd, VALOR_IOC_SET_LIMITS, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	/* Empty, wrapping, kernel and oversized ranges. */
	EXPECT_EQ(-1, vt_range(fd, VALOR_IOC_WATCH, region, 0, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, vt_range(fd, VALOR_IOC_WATCH, ~0ULL - 10, 100, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, vt_range(fd, VALOR_IOC_WATCH, 0xffff888000000000ULL,
			       VT_PAGE, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, vt_range(fd, VALOR_IOC_WATCH, VT_PAGE, 1ULL << 46, NULL));
	EXPECT_EQ(E2BIG, errno);
	r.start = region;
	r.len = VT_PAGE;
	r.reserved = 1;
	EXPECT_EQ(-1, ioctl(fd, VALOR_IOC_WATCH, &r));
	EXPECT_EQ(EINVAL, errno);
	/* A range with nothing mapped: nothing armed, all skipped. */
	EXPECT_EQ(0, vt_range(fd, VALOR_IOC_SCAN, 0x10000, 4 * VT_PAGE, &r));
	EXPECT_EQ(0, r.armed);
	EXPECT_EQ(4, r.skipped);

	/* read() into a bad buffer loses nothing. */
	ASSERT_EQ(0, vt_range(fd, VALOR_IOC_SCAN, region, VT_PAGE, NULL));
	ASSERT_EQ(0, vt_do(&t, 0, VT_LOAD, region + 8, 0, 8, NULL));
	usleep(100 * 1000);
	EXPECT_EQ(-1, syscall(SYS_read, fd, 8UL, sizeof(ev)));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(1, vt_read_events(fd, ev, 8, 200));
	EXPECT_EQ(region + 8, ev[0].addr);
	close(fd);
	vt_target_stop(&t);
}

static void *blocked_reader(void *arg)
{
	int fd = *(int *)arg;
	struct valor_event ev[4];

	return (void *)(long)read(fd, ev, sizeof(ev));
}

TEST_F(dev, detach_wakes_a_blocked_reader)
{
	struct vt_target t;
	pthread_t th;
	void *ret;
	int fd;

	ASSERT_EQ(0, vt_target_start(&t, 1));
	fd = vt_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vt_attach(fd, t.pid));
	ASSERT_EQ(0, vt_read_header(fd));
	ASSERT_EQ(0, pthread_create(&th, NULL, blocked_reader, &fd));
	usleep(200 * 1000);
	ASSERT_EQ(0, ioctl(fd, VALOR_IOC_DETACH));
	ASSERT_EQ(0, pthread_join(th, &ret));
	EXPECT_EQ(0, (long)ret);
	close(fd);
	vt_target_stop(&t);
}

TEST_F(dev, close_while_reading_then_target_exits)
{
	struct vt_target t;
	pthread_t th;
	void *ret;
	int fd;

	ASSERT_EQ(0, vt_target_start(&t, 1));
	fd = vt_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vt_attach(fd, t.pid));
	ASSERT_EQ(0, vt_read_header(fd));
	ASSERT_EQ(0, pthread_create(&th, NULL, blocked_reader, &fd));
	usleep(200 * 1000);
	/* The reader holds the file; its end comes with the target's. */
	close(fd);
	ASSERT_EQ(0, vt_send(&t, 0, VT_EXIT, 0, 0, 0));
	ASSERT_EQ(0, pthread_join(th, &ret));
	EXPECT_EQ(sizeof(struct valor_event), (size_t)(long)ret);
	vt_target_stop(&t);
}

struct storm {
	int fd;
	uint64_t region;
	volatile int stop;
};

static void *ioctl_storm(void *arg)
{
	struct storm *s = arg;
	struct valor_kmod_stats st;
	struct valor_event ev[16];

	while (!s->stop) {
		vt_range(s->fd, VALOR_IOC_WATCH, s->region, 8 * VT_PAGE, NULL);
		vt_stats(s->fd, &st);
		vt_range(s->fd, VALOR_IOC_UNWATCH, s->region, 8 * VT_PAGE,
			 NULL);
		vt_range(s->fd, VALOR_IOC_SCAN, s->region, 8 * VT_PAGE, NULL);
		while (read(s->fd, ev, sizeof(ev)) > 0)
			;
	}
	return NULL;
}

TEST_F(dev, concurrent_ioctls_while_the_target_runs_then_close)
{
	struct storm s;
	struct vt_target t;
	struct vt_res r;
	pthread_t th[2];
	uint64_t want;

	ASSERT_EQ(0, vt_target_start(&t, 2));
	ASSERT_EQ(0, vt_do(&t, 0, VT_MMAP, 0, 0, 8 * VT_PAGE, &r));
	s.region = r.val;
	s.stop = 0;
	ASSERT_EQ(0, vt_do(&t, 0, VT_FILL, s.region, 0, 8 * VT_PAGE, NULL));
	s.fd = vt_open();
	ASSERT_LE(0, s.fd);
	ASSERT_EQ(0, vt_attach(s.fd, t.pid));
	fcntl(s.fd, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, ioctl_storm, &s));
	ASSERT_EQ(0, vt_send(&t, 0, VT_LOOP_LOCK_ADD, s.region + 64, 0, 3000));
	ASSERT_EQ(0, vt_send(&t, 1, VT_LOOP_LOCK_ADD, s.region + 64, 0, 3000));
	ASSERT_EQ(0, vt_wait(&t, 0, &r));
	ASSERT_EQ(0, vt_wait(&t, 1, &r));
	s.stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	/* Close with pages armed: everything is given back. */
	ASSERT_EQ(0,
		  vt_range(s.fd, VALOR_IOC_WATCH, s.region, 8 * VT_PAGE, NULL));
	close(s.fd);
	ASSERT_EQ(0, vt_do(&t, 0, VT_LOAD, s.region + 64, 0, 8, &r));
	want = 6000 + ((uint64_t)(uint8_t)(64 * 7) |
		       (uint64_t)(uint8_t)(65 * 7) << 8 |
		       (uint64_t)(uint8_t)(66 * 7) << 16 |
		       (uint64_t)(uint8_t)(67 * 7) << 24 |
		       (uint64_t)(uint8_t)(68 * 7) << 32 |
		       (uint64_t)(uint8_t)(69 * 7) << 40 |
		       (uint64_t)(uint8_t)(70 * 7) << 48 |
		       (uint64_t)(uint8_t)(71 * 7) << 56);
	EXPECT_EQ(want, r.val);
	vt_target_stop(&t);
}

TEST_HARNESS_MAIN
