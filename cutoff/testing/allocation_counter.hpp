// Counting heap allocations in tests and benchmarks.
//
// Linking the `cutoff_testing_alloc` object library into an executable replaces the global
// operator new with one that counts calls, so allocation promises can be asserted:
//
//   const long before = cutoff::testing::allocations_on_this_thread();
//   auto child = parent.with_timeout(10ms);
//   EXPECT_LE(cutoff::testing::allocations_on_this_thread() - before, 1);
#ifndef CUTOFF_TESTING_ALLOCATION_COUNTER_HPP_
#define CUTOFF_TESTING_ALLOCATION_COUNTER_HPP_

namespace cutoff::testing {

// operator new calls made by the calling thread so far.
long allocations_on_this_thread() noexcept;
// operator new calls made by all threads so far.
long allocations_total() noexcept;

}  // namespace cutoff::testing

#endif  // CUTOFF_TESTING_ALLOCATION_COUNTER_HPP_
