// Counting heap allocations in tests and benchmarks.
//
// Linking the `cutoff_test_allocation_counter` object library into an executable replaces the
// global operator new with one that counts calls, so allocation promises can be asserted:
//
//   const long before = cutoff::test_support::allocations_on_this_thread();
//   auto child = parent.with_timeout(10ms);
//   EXPECT_LE(cutoff::test_support::allocations_on_this_thread() - before, 1);
//
// It also counts calls to aligned_alloc: Asio takes the memory of coroutine frames and of
// handlers from a small per-thread cache, and calls aligned_alloc (not operator new) when
// the cache has nothing that fits. A promise about Asio code checks both counters.
#ifndef CUTOFF_TESTS_SUPPORT_ALLOCATION_COUNTER_HPP_
#define CUTOFF_TESTS_SUPPORT_ALLOCATION_COUNTER_HPP_

namespace cutoff::test_support {

// operator new calls made by the calling thread so far.
long allocations_on_this_thread() noexcept;
// operator new calls made by all threads so far.
long allocations_total() noexcept;
// aligned_alloc calls (Asio's frame and handler memory on a cache miss) by the calling
// thread, and by all threads.
long aligned_allocations_on_this_thread() noexcept;
long aligned_allocations_total() noexcept;

}  // namespace cutoff::test_support

#endif  // CUTOFF_TESTS_SUPPORT_ALLOCATION_COUNTER_HPP_
