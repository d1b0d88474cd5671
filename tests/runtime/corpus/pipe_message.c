// SPDX-License-Identifier: GPL-2.0
/*
 * Message passing through file descriptors, as event loops do (libuv's
 * wake-ups, the self-pipe trick): the producer fills each message (a
 * heap block) and writes its address into a pipe; the consumer reads
 * the address and reads the message, then answers through an eventfd
 * that the producer reads before it reuses its counter.  At the end the
 * consumer stores its checksum and says so with sendmsg(2) on a socket
 * pair; main reads the checksum once recvmsg(2) has the message.
 *
 * VALOR-EXPECT: clean
 *
 * Why: what passes through a descriptor orders its writer before its
 * reader (a write releases, a read acquires, as ThreadSanitizer has it):
 * each message is written before the write(2) of its address and read
 * after the read(2); `sent` is written before the producer reads the
 * eventfd the consumer wrote after reading it; `checksum` before the
 * sendmsg(2) that main's recvmsg(2) receives.  The producer's region
 * ends at each write(2).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define MESSAGES 8

struct message {
	int seq;
	char text[16];
};

static int pipe_fds[2], answer_fd, done_fds[2];
static long sent, checksum;

static void *producer(void *arg)
{
	uint64_t one;

	(void)arg;
	for (int i = 0; i < MESSAGES; i++) {
		struct message *m = malloc(sizeof(*m));

		m->seq = i;
		for (int j = 0; j < 15; j++)
			m->text[j] = 'a' + (i + j) % 26;
		m->text[15] = 0;
		sent++;
		if (write(pipe_fds[1], &m, sizeof(m)) != sizeof(m))
			abort();
		/* The consumer read `sent` before it answered. */
		if (read(answer_fd, &one, sizeof(one)) != sizeof(one))
			abort();
	}
	return NULL;
}

/* A one-byte message on @fd, by sendmsg(2). */
static void say_done(int fd)
{
	char byte = 1;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (sendmsg(fd, &msg, 0) != 1)
		abort();
}

/* The byte on @fd, by recvmsg(2). */
static char await_done(int fd)
{
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (recvmsg(fd, &msg, 0) != 1)
		abort();
	return byte;
}

static void *consumer(void *arg)
{
	const uint64_t one = 1;

	(void)arg;
	for (int i = 0; i < MESSAGES; i++) {
		struct message *m;

		if (read(pipe_fds[0], &m, sizeof(m)) != sizeof(m))
			abort();
		checksum += m->seq + m->text[0] + sent;
		free(m);
		if (write(answer_fd, &one, sizeof(one)) != sizeof(one))
			abort();
	}
	say_done(done_fds[0]);
	return NULL;
}

int main(void)
{
	pthread_t p, c;

	if (pipe(pipe_fds))
		return 1;
	answer_fd = eventfd(0, 0);
	if (answer_fd < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, done_fds))
		return 1;
	pthread_create(&p, NULL, producer, NULL);
	pthread_create(&c, NULL, consumer, NULL);
	if (await_done(done_fds[1]) != 1 || checksum <= 0)
		return 1;
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	return 0;
}
