// SPDX-License-Identifier: GPL-2.0
/*
 * The guest tests' device helpers and their target process.
 *
 * The target is a forked child with worker threads, each reading fixed
 * size commands from its own pipe.  Every access it makes for a test is
 * one instruction whose address it reports (a label next to the
 * instruction), so a test can check the module's ip field exactly.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vtest.h"

int vt_open(void)
{
	return open(VT_DEV, O_RDWR | O_CLOEXEC);
}

int vt_attach(int fd, pid_t pid)
{
	struct valor_attach a = { .pid = (uint32_t)pid };

	return ioctl(fd, VALOR_IOC_ATTACH, &a);
}

int vt_range(int fd, unsigned long cmd, uint64_t start, uint64_t len,
	     struct valor_range *out)
{
	struct valor_range r = { .start = start, .len = len };
	int rc;

	if (!len && !start)
		r.flags = VALOR_RANGE_ALL;
	rc = ioctl(fd, cmd, &r);
	if (out)
		*out = r;
	return rc;
}

int vt_stats(int fd, struct valor_kmod_stats *st)
{
	memset(st, 0, sizeof(*st));
	return ioctl(fd, VALOR_IOC_GET_STATS, st);
}

int vt_set_limits(int fd, uint64_t max_pages, uint64_t max_rate)
{
	struct valor_limits l = { .max_armed_pages = max_pages,
				  .max_faults_per_sec = max_rate };

	return ioctl(fd, VALOR_IOC_SET_LIMITS, &l);
}

int vt_read_header(int fd)
{
	struct valor_event buf;
	struct valor_stream_header h;
	ssize_t n = read(fd, &buf, sizeof(buf));

	if (n != (ssize_t)sizeof(h))
		return -1;
	memcpy(&h, &buf, sizeof(h));
	if (h.magic != VALOR_STREAM_MAGIC || h.version != VALOR_UAPI_VERSION ||
	    h.record_size != sizeof(struct valor_event))
		return -1;
	return 0;
}

int vt_read_events(int fd, struct valor_event *ev, int max, int settle_ms)
{
	int got = 0;

	while (got < max) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int rc = poll(&p, 1, settle_ms);

		if (rc < 0)
			return -1;
		if (!rc || !(p.revents & POLLIN))
			break;
		n = read(fd, ev + got, (size_t)(max - got) * sizeof(*ev));
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -1;
		}
		if (!n)
			break;
		if (n % sizeof(*ev))
			return -1;
		got += (int)(n / sizeof(*ev));
	}
	return got;
}

int vt_count(const struct valor_event *ev, int n, unsigned int kind,
	     uint64_t lo, uint64_t hi)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		if (ev[i].kind == kind && ev[i].addr >= lo && ev[i].addr < hi)
			c++;
	return c;
}

int vt_set_param(const char *name, const char *value)
{
	char path[256];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "/sys/module/valor/parameters/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		rc = -1;
	close(fd);
	return rc;
}

int vt_kernel_warnings(void)
{
	static const char *const bad[] = { "WARNING:", "BUG:", "Oops",
					   "general protection", "Call Trace" };
	char line[1024];
	int count = 0;
	FILE *f = popen("dmesg 2>/dev/null", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			if (strstr(line, bad[i])) {
				count++;
				break;
			}
	pclose(f);
	return count;
}

const char *vt_kind_name(unsigned int kind)
{
	switch (kind) {
	case VALOR_EV_ACCESS:
		return "ACCESS";
	case VALOR_EV_LOST:
		return "LOST";
	case VALOR_EV_PAGE_DISARM:
		return "PAGE_DISARM";
	case VALOR_EV_TARGET_EXIT:
		return "TARGET_EXIT";
	default:
		return "?";
	}
}

/* ---- the target ---- */

static uint64_t load(uint64_t addr, uint64_t n, uint64_t *ip)
{
	uint64_t v = 0, where;

	switch (n) {
	case 1: {
		uint8_t b;

		asm volatile("lea 1f(%%rip), %1\n1: movb (%2), %0"
			     : "=q"(b), "=&r"(where)
			     : "r"(addr)
			     : "memory");
		v = b;
		break;
	}
	case 2: {
		uint16_t w;

		asm volatile("lea 1f(%%rip), %1\n1: movw (%2), %0"
			     : "=r"(w), "=&r"(where)
			     : "r"(addr)
			     : "memory");
		v = w;
		break;
	}
	case 4: {
		uint32_t d;

		asm volatile("lea 1f(%%rip), %1\n1: movl (%2), %0"
			     : "=r"(d), "=&r"(where)
			     : "r"(addr)
			     : "memory");
		v = d;
		break;
	}
	default:
		asm volatile("lea 1f(%%rip), %1\n1: movq (%2), %0"
			     : "=r"(v), "=&r"(where)
			     : "r"(addr)
			     : "memory");
	}
	*ip = where;
	return v;
}

static void store(uint64_t addr, uint64_t n, uint64_t v, uint64_t *ip)
{
	uint64_t where;

	switch (n) {
	case 1:
		asm volatile("lea 1f(%%rip), %0\n1: movb %b2, (%1)"
			     : "=&r"(where)
			     : "r"(addr), "q"(v)
			     : "memory");
		break;
	case 2:
		asm volatile("lea 1f(%%rip), %0\n1: movw %w2, (%1)"
			     : "=&r"(where)
			     : "r"(addr), "r"(v)
			     : "memory");
		break;
	case 4:
		asm volatile("lea 1f(%%rip), %0\n1: movl %k2, (%1)"
			     : "=&r"(where)
			     : "r"(addr), "r"(v)
			     : "memory");
		break;
	default:
		asm volatile("lea 1f(%%rip), %0\n1: movq %2, (%1)"
			     : "=&r"(where)
			     : "r"(addr), "r"(v)
			     : "memory");
	}
	*ip = where;
}

static uint64_t fnv(const uint8_t *p, uint64_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (uint64_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* Deterministic whatever the interleaving: per-thread slices + atomics. */
static void work(uint64_t addr, uint64_t n, uint64_t seed)
{
	uint64_t *w = (uint64_t *)addr, words = n / 8, x = seed | 1;

	for (int round = 0; round < 8; round++) {
		for (uint64_t i = 0; i < words; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			__atomic_fetch_add(&w[i], x & 0xffff, __ATOMIC_RELAXED);
		}
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

struct account {
	uint64_t id;
	int32_t balance;
	uint16_t flags;
	uint8_t tag[6];
};

/*
 * What C programs do to their heap, compiled the way they are: libc's
 * vectorised string functions, a sort through a callback, field updates
 * of structures of mixed sizes.  Deterministic given @seed.
 */
static void mixed(uint64_t addr, uint64_t n, uint64_t seed)
{
	uint8_t *p = (uint8_t *)addr;
	uint32_t *ints = (uint32_t *)(p + n / 2);
	struct account *acc = (struct account *)p;
	size_t nints = n / 2 / sizeof(*ints) / 2, nacc = n / 4 / sizeof(*acc);
	uint64_t x = seed | 1;

	memset(p, 0, n / 2);
	for (size_t i = 0; i < nints; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		ints[i] = (uint32_t)(x >> 33);
	}
	qsort(ints, nints, sizeof(*ints), cmp_u32);
	memcpy(ints + nints, ints, nints * sizeof(*ints));
	for (size_t i = 0; i < nacc; i++) {
		acc[i].id = i;
		acc[i].balance += (int32_t)(ints[i] & 0xffff) - 0x8000;
		acc[i].flags |= (uint16_t)(ints[i] >> 20);
		acc[i].tag[i % 6] = (uint8_t)i;
	}
	for (size_t i = 0; i + 1 < nacc; i++)
		if (acc[i].balance > acc[i + 1].balance)
			acc[i].flags ^= 1;
	snprintf((char *)(p + n / 4), 64, "%zu accounts, seed %llu", nacc,
		 (unsigned long long)seed);
	acc[0].balance += (int32_t)strlen((char *)(p + n / 4));
}

static volatile uint64_t *signal_word;
static volatile uint64_t signal_runs, signal_sum;

/*
 * Handler runs that load the watched word: each load is a record in the
 * session's buffer (ring_records, 16,384 by default), as is each store.
 * The timer fires every 100 us however slow the guest is, so a loaded
 * host ran the handler 25,000 times during 3,000 stepped stores and the
 * buffer dropped stores.  Later runs still interrupt steps; they only do
 * not load.
 */
#define SIGNAL_LOADS_MAX 8192

static void on_alarm(int sig)
{
	(void)sig;
	if (signal_runs++ < SIGNAL_LOADS_MAX)
		signal_sum += *signal_word;
}

static int64_t signaled_stores(uint64_t addr, uint64_t n, uint64_t *ip,
			       uint64_t *runs)
{
	struct itimerval on = { { 0, 100 }, { 0, 100 } }, off = { 0 };
	struct sigaction sa = { .sa_handler = on_alarm,
				.sa_flags = SA_RESTART };
	sigset_t alrm;

	signal_word = (volatile uint64_t *)addr;
	signal_runs = 0;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	/* Only this thread takes the signal (the others block it). */
	if (sigaction(SIGALRM, &sa, NULL) ||
	    pthread_sigmask(SIG_UNBLOCK, &alrm, NULL) ||
	    setitimer(ITIMER_REAL, &on, NULL))
		return -errno;
	for (uint64_t i = 0; i < n; i++)
		asm volatile("lea 1f(%%rip), %0\n1: movq %2, (%1)"
			     : "=&r"(*ip)
			     : "r"(addr), "r"(i)
			     : "memory");
	setitimer(ITIMER_REAL, &off, NULL);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	/* The handler stays: a last SIGALRM may still be pending. */
	*runs = signal_runs;
	return 0;
}

static int64_t do_fork(uint64_t addr, uint64_t val, uint64_t *out)
{
	pid_t c = fork();
	int status;

	if (c < 0)
		return -errno;
	if (!c) {
		*(volatile uint64_t *)addr = val;
		_exit(*(volatile uint64_t *)addr == val ? 7 : 1);
	}
	if (waitpid(c, &status, 0) != c)
		return -errno;
	*out = ((uint64_t)(WIFEXITED(status) ? WEXITSTATUS(status) : 255)
		<< 32) |
	       (uint32_t) * (volatile uint64_t *)addr;
	return 0;
}

static int64_t run(const struct vt_cmd *c, struct vt_res *r)
{
	uint64_t ip = 0;
	void *p;

	switch (c->op) {
	case VT_TID:
		r->val = (uint64_t)syscall(SYS_gettid);
		return 0;
	case VT_MMAP:
		p = mmap(NULL, c->n, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		/*
		 * Small pages only: valor.ko leaves huge pages alone, and
		 * khugepaged may collapse a large mapping at any moment,
		 * which made page counts flaky (VT_MMAP_HUGE asks for one).
		 */
		madvise(p, c->n, MADV_NOHUGEPAGE);
		r->val = (uint64_t)p;
		return 0;
	case VT_MMAP_HUGE: {
		const uint64_t huge = 2UL << 20;
		uint8_t *raw = mmap(NULL, c->n + huge, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t a;

		if (raw == MAP_FAILED)
			return -errno;
		a = ((uint64_t)raw + huge - 1) & ~(huge - 1);
		madvise((void *)a, c->n, MADV_HUGEPAGE);
		r->val = a;
		return 0;
	}
	case VT_LOAD:
		r->val = load(c->addr, c->n, &ip);
		break;
	case VT_STORE:
		store(c->addr, c->n, c->val, &ip);
		break;
	case VT_ADD:
		asm volatile("lea 1f(%%rip), %0\n1: addq %2, (%1)"
			     : "=&r"(ip)
			     : "r"(c->addr), "r"(c->val)
			     : "memory", "cc");
		break;
	case VT_LOCK_ADD:
		asm volatile("lea 1f(%%rip), %0\n1: lock addq %2, (%1)"
			     : "=&r"(ip)
			     : "r"(c->addr), "r"(c->val)
			     : "memory", "cc");
		break;
	case VT_XCHG: {
		uint64_t v = c->val;

		asm volatile("lea 1f(%%rip), %0\n1: xchgq %1, (%2)"
			     : "=&r"(ip), "+r"(v)
			     : "r"(c->addr)
			     : "memory");
		r->val = v;
		break;
	}
	case VT_SSE_LOAD: {
		uint64_t lo;

		asm volatile("lea 1f(%%rip), %0\n1: movdqu (%2), %%xmm0\n"
			     "movq %%xmm0, %1"
			     : "=&r"(ip), "=r"(lo)
			     : "r"(c->addr)
			     : "memory", "xmm0");
		r->val = lo;
		break;
	}
	case VT_LOOP_LOCK_ADD:
		for (uint64_t i = 0; i < c->n; i++)
			asm volatile("lea 1f(%%rip), %0\n1: lock addq $1, (%1)"
				     : "=&r"(ip)
				     : "r"(c->addr)
				     : "memory", "cc");
		break;
	case VT_LOOP_STORE:
		for (uint64_t i = 0; i < c->n; i++)
			asm volatile("lea 1f(%%rip), %0\n1: movq %2, (%1)"
				     : "=&r"(ip)
				     : "r"(c->addr), "r"(i)
				     : "memory");
		break;
	case VT_SYSREAD: {
		int fds[2];
		uint8_t buf[VT_PAGE];
		int64_t got;

		if (c->n > sizeof(buf) || pipe(fds))
			return -EINVAL;
		memset(buf, 0x5a, c->n);
		if (write(fds[1], buf, c->n) != (ssize_t)c->n)
			return -EIO;
		got = read(fds[0], (void *)c->addr, c->n);
		close(fds[0]);
		close(fds[1]);
		if (got < 0)
			return -errno;
		r->val = (uint64_t)got;
		return 0;
	}
	case VT_FILL:
		for (uint64_t i = 0; i < c->n; i++)
			((volatile uint8_t *)c->addr)[i] =
				(uint8_t)(c->val + i * 7);
		return 0;
	case VT_SUM:
		r->val = fnv((const uint8_t *)c->addr, c->n);
		return 0;
	case VT_WORK:
		work(c->addr, c->n, c->val);
		return 0;
	case VT_MIXED:
		mixed(c->addr, c->n, c->val);
		return 0;
	case VT_SIGNALED_STORES:
		return signaled_stores(c->addr, c->n, &r->ip, &r->val);
	case VT_MADVISE:
		return madvise((void *)c->addr, c->n, (int)c->val) ? -errno : 0;
	case VT_EXEC: {
		char *const argv[] = { "sleep", "1000", NULL };

		execv("/bin/sleep", argv);
		return -errno;
	}
	case VT_MUNMAP:
		return munmap((void *)c->addr, c->n) ? -errno : 0;
	case VT_MPROTECT:
		return mprotect((void *)c->addr, c->n, (int)c->val) ? -errno :
								      0;
	case VT_FORK:
		return do_fork(c->addr, c->val, &r->val);
	case VT_EXIT:
		_exit((int)c->val);
	default:
		return -EINVAL;
	}
	r->ip = ip;
	return 0;
}

struct worker {
	int cmd, res;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct vt_cmd c;
	struct vt_res r;

	while (read(w->cmd, &c, sizeof(c)) == sizeof(c)) {
		memset(&r, 0, sizeof(r));
		r.ret = run(&c, &r);
		if (write(w->res, &r, sizeof(r)) != sizeof(r))
			break;
	}
	_exit(0);
	return NULL;
}

static void target_main(int nthreads, int cmd[][2], int res[][2])
{
	static struct worker workers[VT_MAX_THREADS];
	pthread_t th;
	sigset_t alrm;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* SIGALRM goes to the thread doing VT_SIGNALED_STORES only. */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	for (int i = 0; i < nthreads; i++) {
		workers[i].cmd = cmd[i][0];
		workers[i].res = res[i][1];
		if (pthread_create(&th, NULL, worker_main, &workers[i]))
			_exit(3);
	}
	for (;;)
		pause();
}

int vt_target_start(struct vt_target *t, int nthreads)
{
	int cmd[VT_MAX_THREADS][2], res[VT_MAX_THREADS][2];
	struct vt_res r;

	if (nthreads < 1 || nthreads > VT_MAX_THREADS)
		return -1;
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < nthreads; i++)
		if (pipe2(cmd[i], O_CLOEXEC) || pipe2(res[i], O_CLOEXEC))
			return -1;
	t->pid = fork();
	if (t->pid < 0)
		return -1;
	if (!t->pid)
		target_main(nthreads, cmd, res);
	t->nthreads = nthreads;
	for (int i = 0; i < nthreads; i++) {
		close(cmd[i][0]);
		close(res[i][1]);
		t->cmd[i] = cmd[i][1];
		t->res[i] = res[i][0];
	}
	for (int i = 0; i < nthreads; i++) {
		if (vt_do(t, i, VT_TID, 0, 0, 0, &r))
			return -1;
		t->tid[i] = (pid_t)r.val;
	}
	return 0;
}

int vt_send(struct vt_target *t, int thread, int op, uint64_t addr,
	    uint64_t val, uint64_t n)
{
	struct vt_cmd c = { .op = op, .addr = addr, .val = val, .n = n };

	return write(t->cmd[thread], &c, sizeof(c)) == sizeof(c) ? 0 : -1;
}

int vt_wait(struct vt_target *t, int thread, struct vt_res *res)
{
	return read(t->res[thread], res, sizeof(*res)) == sizeof(*res) ? 0 : -1;
}

int64_t vt_do(struct vt_target *t, int thread, int op, uint64_t addr,
	      uint64_t val, uint64_t n, struct vt_res *res)
{
	struct vt_res local;

	if (!res)
		res = &local;
	if (vt_send(t, thread, op, addr, val, n) || vt_wait(t, thread, res))
		return -EPIPE;
	return res->ret;
}

int vt_target_stop(struct vt_target *t)
{
	int status;

	if (t->pid <= 0)
		return -1;
	for (int i = 0; i < t->nthreads; i++) {
		close(t->cmd[i]);
		close(t->res[i]);
	}
	kill(t->pid, SIGKILL);
	if (waitpid(t->pid, &status, 0) != t->pid)
		return -1;
	t->pid = 0;
	return status;
}
