// SPDX-License-Identifier: GPL-2.0
/*
 * C++ std::shared_ptr shared by threads: each thread gets its own copy,
 * makes and drops more copies, and reads the object; the main thread
 * drops its copy while they run, so the last owner -- whichever thread
 * it is -- runs the destructor.
 *
 * VALOR-EXPECT: clean
 *
 * Why: the reference counts are only changed with atomic read-modify-
 * write operations (synchronization, never data), and the final
 * decrement acquires every earlier owner's release, so the destructor's
 * writes are ordered after all the reads.  A runtime that treated the
 * counts as plain data, or dropped the atomics' ordering, would report
 * races in libstdc++'s inline code.
 */
#include <memory>
#include <thread>
#include <vector>

struct Settings {
	long limit = 1000;
	long hits = 0;
	~Settings()
	{
		limit = -1;
		hits = -1;
	}
};

static long use(std::shared_ptr<Settings> settings)
{
	long sum = 0;

	for (int i = 0; i < 20; i++) {
		std::shared_ptr<Settings> copy = settings;
		sum += copy->limit;
	}
	return sum;
}

int main()
{
	auto settings = std::make_shared<Settings>();
	std::vector<std::thread> threads;
	long sums[4] = {};

	for (int t = 0; t < 4; t++)
		threads.emplace_back(
			[settings, &sums, t] { sums[t] = use(settings); });
	settings.reset();
	for (auto &thread : threads)
		thread.join();
	for (long sum : sums)
		if (sum != 20 * 1000)
			return 1;
	return 0;
}
