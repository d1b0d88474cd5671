// SPDX-License-Identifier: GPL-2.0
/*
 * C++ std::thread and std::mutex: four threads append to a shared
 * std::vector under a std::lock_guard.
 *
 * VALOR-EXPECT: clean
 *
 * Why: every access to the vector (and to the heap blocks it
 * reallocates) happens under the mutex, so the threads' critical
 * sections are ordered, and each unlock ends the holder's region.
 * std::thread's start and join order the rest.
 */
#include <mutex>
#include <thread>
#include <vector>

int main()
{
	std::vector<int> values;
	std::mutex lock;
	std::vector<std::thread> threads;

	for (int t = 0; t < 4; t++)
		threads.emplace_back([&values, &lock, t] {
			for (int i = 0; i < 50; i++) {
				std::lock_guard<std::mutex> guard(lock);
				values.push_back(t * 100 + i);
			}
		});
	for (auto &thread : threads)
		thread.join();
	long sum = 0;
	for (int v : values)
		sum += v;
	return values.size() == 200 && sum == 4 * 1225 + 50 * 600 ? 0 : 1;
}
