// SPDX-License-Identifier: GPL-2.0
/*
 * C++ std::thread with a racy data member: two threads update an
 * account's balance without a lock; the second runs while the first's
 * region is still open.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=30,36 analyses=valor,fastrcd,fasttrack memory=stack compilers=gcc
 * VALOR-EXPECT: conflict kind=write-write lines=30,36 analyses=valor,fastrcd,fasttrack memory=stack compilers=clang
 *
 * Why all three: T2's update meets T1's write in T1's ongoing region,
 * and nothing orders the two updates.  With gcc the first conflicting
 * access is the read half of T2's `-=` (write-read); clang instruments
 * only the write half of a read-modify-write (see counter_racy.c), so
 * there it is write-write.  The statements' other halves may be
 * reported too, on these two lines only.
 */
#include <thread>

#include "sched.h"

struct Account {
	long balance = 100;
};

int main()
{
	Account account;

	std::thread t1([&account] {
		account.balance += 10; /* racy: read and write (A) */
		sched_done(1);
		sched_wait(2);
	});
	std::thread t2([&account] {
		sched_wait(1);
		account.balance -= 5; /* racy: read and write (B) */
		sched_done(2);
	});
	t1.join();
	t2.join();
	return account.balance == 105 ? 0 : 1;
}
