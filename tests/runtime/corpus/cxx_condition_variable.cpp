// SPDX-License-Identifier: GPL-2.0
/*
 * C++ std::condition_variable: a producer pushes work items into a
 * std::queue under a std::mutex and notifies; a consumer waits with a
 * predicate, pops them and sums them; a done flag ends the stream.
 *
 * VALOR-EXPECT: clean
 *
 * Why: the queue and the flag are only touched under the mutex, and
 * condition_variable::wait re-acquires it, so every access is ordered;
 * each unlock ends the holder's region.
 */
#include <condition_variable>
#include <mutex>
#include <queue>
#include <thread>

int main()
{
	std::mutex lock;
	std::condition_variable changed;
	std::queue<int> items;
	bool done = false;
	long sum = 0;

	std::thread consumer([&] {
		std::unique_lock<std::mutex> guard(lock);
		for (;;) {
			changed.wait(guard,
				     [&] { return done || !items.empty(); });
			if (items.empty())
				return;
			sum += items.front();
			items.pop();
		}
	});
	std::thread producer([&] {
		for (int i = 1; i <= 32; i++) {
			std::lock_guard<std::mutex> guard(lock);
			items.push(i);
			changed.notify_one();
		}
		std::lock_guard<std::mutex> guard(lock);
		done = true;
		changed.notify_all();
	});
	producer.join();
	consumer.join();
	return sum == 32 * 33 / 2 ? 0 : 1;
}
