// SPDX-License-Identifier: GPL-2.0
/*
 * C++ std::atomic: two threads count hits with relaxed fetch_add, keep a
 * maximum with a compare_exchange_weak loop, and raise a flag with
 * exchange; the main thread reads them all after joining.
 *
 * VALOR-EXPECT: clean
 *
 * Why: the atomics are accessed only atomically, and atomic accesses
 * never race with each other, even relaxed ones (they are
 * synchronization, not data); join orders them before main's loads.
 */
#include <atomic>
#include <thread>

static std::atomic<long> hits{ 0 };
static std::atomic<long> maximum{ 0 };
static std::atomic<bool> seen{ false };

static void work(long base)
{
	for (long i = 0; i < 500; i++) {
		hits.fetch_add(1, std::memory_order_relaxed);
		long value = base + i;
		long old = maximum.load(std::memory_order_relaxed);
		while (old < value &&
		       !maximum.compare_exchange_weak(
			       old, value, std::memory_order_relaxed))
			;
	}
	seen.exchange(true);
}

int main()
{
	std::thread t1(work, 0), t2(work, 1000);

	t1.join();
	t2.join();
	return hits.load() == 1000 && maximum.load() == 1499 && seen.load() ?
		       0 :
		       1;
}
