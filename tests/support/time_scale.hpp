// Test support: how much slower than normal this build runs. Timing assertions multiply their
// margins by it. Set CUTOFF_TEST_TIME_SCALE (the Makefile's asan and tsan targets do: process
// start-up and instrumented code are several times slower there); default 1.
//
//   EXPECT_LT(took, 600ms * cutoff::test_support::TimeScale());
//   EXPECT_LT(took, cutoff::test_support::Scaled(600ms));  // the same
#ifndef CUTOFF_TESTS_SUPPORT_TIME_SCALE_HPP_
#define CUTOFF_TESTS_SUPPORT_TIME_SCALE_HPP_

#include <chrono>
#include <cstdlib>

namespace cutoff::test_support {

inline int TimeScale() {
  const char* v = std::getenv("CUTOFF_TEST_TIME_SCALE");
  const int scale = v ? std::atoi(v) : 1;
  return scale > 0 ? scale : 1;
}

// `d` stretched by TimeScale().
template <typename Rep, typename Period>
std::chrono::duration<Rep, Period> Scaled(std::chrono::duration<Rep, Period> d) {
  return d * TimeScale();
}

}  // namespace cutoff::test_support

#endif  // CUTOFF_TESTS_SUPPORT_TIME_SCALE_HPP_
