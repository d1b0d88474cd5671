// SPDX-License-Identifier: GPL-2.0
/*
 * Message passing through a condition variable: the producer fills each
 * message (a heap block) without a lock, then appends it to a queue
 * under the mutex and signals; the consumer waits on the condition
 * variable, takes the message under the mutex, reads it unlocked and
 * frees it.
 *
 * VALOR-EXPECT: clean
 *
 * Why: each message's contents are written before the producer's
 * unlock and read after the consumer's lock (or its return from
 * pthread_cond_wait, which re-acquires the mutex): ordered, and the
 * producer's region ended at that unlock.
 */
#include <pthread.h>
#include <stdlib.h>

#define MESSAGES 8

struct message {
	struct message *next;
	int seq;
	char text[16];
};

static struct message *head, **tail = &head;
static int finished;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < MESSAGES; i++) {
		struct message *m = malloc(sizeof(*m));

		m->next = NULL;
		m->seq = i;
		for (int j = 0; j < 15; j++)
			m->text[j] = 'a' + (i + j) % 26;
		m->text[15] = 0;
		pthread_mutex_lock(&lock);
		*tail = m;
		tail = &m->next;
		pthread_cond_signal(&nonempty);
		pthread_mutex_unlock(&lock);
	}
	pthread_mutex_lock(&lock);
	finished = 1;
	pthread_cond_broadcast(&nonempty);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *consumer(void *arg)
{
	long checksum = 0;

	(void)arg;
	for (;;) {
		struct message *m;

		pthread_mutex_lock(&lock);
		while (!head && !finished)
			pthread_cond_wait(&nonempty, &lock);
		m = head;
		if (m) {
			head = m->next;
			if (!head)
				tail = &head;
		}
		pthread_mutex_unlock(&lock);
		if (!m)
			break;
		checksum += m->seq + m->text[0];
		free(m);
	}
	return (void *)checksum;
}

int main(void)
{
	pthread_t p, c;
	void *checksum;
	long want = 0;

	for (int i = 0; i < MESSAGES; i++)
		want += i + 'a' + i % 26;
	if (pthread_create(&c, NULL, consumer, NULL) ||
	    pthread_create(&p, NULL, producer, NULL))
		return 1;
	pthread_join(p, NULL);
	pthread_join(c, &checksum);
	return (long)checksum == want ? 0 : 1;
}
