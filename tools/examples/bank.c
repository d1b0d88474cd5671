// SPDX-License-Identifier: GPL-2.0
/*
 * The bundled example for `make example`: two tellers move money into
 * two accounts.  Each account has its own lock and every balance update
 * takes it -- but the bank-wide count of transactions is bumped after
 * the unlock, with no lock at all.  Valor reports that counter: a write
 * that conflicts with the other teller's still-ongoing region.
 *
 * Build and run it yourself:
 *   build/bin/valor cc -O1 -o bank tools/examples/bank.c
 *   build/bin/valor run -- ./bank
 */
#include <pthread.h>
#include <stdio.h>

#define TRANSFERS 200000

struct account {
	pthread_mutex_t lock;
	long balance;
};

struct account accounts[2] = {
	{ PTHREAD_MUTEX_INITIALIZER, 0 },
	{ PTHREAD_MUTEX_INITIALIZER, 0 },
};
long transactions; /* shared by both tellers, protected by nothing */

static pthread_barrier_t open_doors;

static void *teller(void *arg)
{
	struct account *acc = &accounts[(long)arg];

	pthread_barrier_wait(&open_doors);
	for (int i = 0; i < TRANSFERS; i++) {
		pthread_mutex_lock(&acc->lock);
		acc->balance += 10;
		pthread_mutex_unlock(&acc->lock);
		transactions++; /* the bug: no lock */
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	pthread_barrier_init(&open_doors, NULL, 2);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, teller, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("balances %ld + %ld, %ld transactions (expected %d)\n",
	       accounts[0].balance, accounts[1].balance, transactions,
	       2 * TRANSFERS);
	return 0;
}
