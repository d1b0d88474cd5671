// SPDX-License-Identifier: GPL-2.0
/*
 * Work handed over through epoll's user data, as event-loop servers do:
 * the producer fills a message (a heap block) and arms an always-ready
 * eventfd in an epoll instance with the message's address as the
 * event's data (EPOLL_CTL_ADD the first time, EPOLL_CTL_MOD after, one
 * shot each); the consumer's epoll_wait(2) returns the address and it
 * reads and frees the message, then answers through a pipe that the
 * producer reads before the next message.
 *
 * VALOR-EXPECT: clean
 *
 * Why: an epoll_ctl(2) that adds or changes an event releases what
 * passes through the epoll instance and an epoll_wait(2) that returns
 * events acquires it, as ThreadSanitizer has it.  Each message is
 * written before the epoll_ctl(2) that carries its address and read
 * after the epoll_wait(2) that returned it; nothing else orders them,
 * since the producer stays in its region (blocked in read(2) on the
 * answer pipe) while the consumer reads.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define MESSAGES 8

struct message {
	int seq;
	char text[16];
};

static int epfd, ready_fd, answer_fds[2];
static long checksum;

static void *producer(void *arg)
{
	char byte;

	(void)arg;
	for (int i = 0; i < MESSAGES; i++) {
		struct message *m = malloc(sizeof(*m));
		struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };

		m->seq = i;
		for (int j = 0; j < 15; j++)
			m->text[j] = 'a' + (i + j) % 26;
		m->text[15] = 0;
		ev.data.ptr = m;
		if (epoll_ctl(epfd, i ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, ready_fd,
			      &ev))
			abort();
		if (read(answer_fds[0], &byte, 1) != 1)
			abort();
	}
	return NULL;
}

static void *consumer(void *arg)
{
	const char byte = 1;

	(void)arg;
	for (int i = 0; i < MESSAGES; i++) {
		struct epoll_event ev;
		struct message *m;
		int n;

		do
			n = epoll_wait(epfd, &ev, 1, -1);
		while (n == 0);
		if (n != 1)
			abort();
		m = ev.data.ptr;
		checksum += m->seq + m->text[0];
		free(m);
		if (write(answer_fds[1], &byte, 1) != 1)
			abort();
	}
	return NULL;
}

int main(void)
{
	pthread_t p, c;

	epfd = epoll_create1(0);
	ready_fd = eventfd(1, 0); /* readable from the start, never read */
	if (epfd < 0 || ready_fd < 0 || pipe(answer_fds)) {
		fprintf(stderr, "not set up: epoll, eventfd or pipe failed\n");
		return 77;
	}
	pthread_create(&p, NULL, producer, NULL);
	pthread_create(&c, NULL, consumer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	return checksum > 0 ? 0 : 1;
}
