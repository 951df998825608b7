#include "cutoff/resilience/backoff.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace cutoff::resilience {
namespace {

using namespace std::chrono_literals;

std::vector<Duration> Take(Backoff& b, int n) {
  std::vector<Duration> out;
  for (int i = 0; i < n; ++i) out.push_back(b.next());
  return out;
}

TEST(Backoff, WithoutJitterGrowsExponentiallyUpToTheCap) {
  Backoff b({.initial = 10ms, .max = 50ms, .multiplier = 2, .jitter = Jitter::none}, 1);
  EXPECT_EQ(Take(b, 5), (std::vector<Duration>{10ms, 20ms, 40ms, 50ms, 50ms}));
  EXPECT_EQ(b.retries(), 5);
}

TEST(Backoff, FullJitterStaysUnderTheExponentialCeiling) {
  Backoff b({.initial = 10ms, .max = 80ms, .multiplier = 2, .jitter = Jitter::full}, 7);
  Duration ceiling = 10ms;
  bool below_ceiling_seen = false;
  for (int i = 0; i < 200; ++i) {
    const Duration d = b.next();
    EXPECT_GE(d, Duration::zero());
    EXPECT_LE(d, ceiling);
    if (d < ceiling / 2) below_ceiling_seen = true;
    ceiling = std::min<Duration>(ceiling * 2, 80ms);
  }
  EXPECT_TRUE(below_ceiling_seen) << "full jitter should spread delays over [0, ceiling]";
}

TEST(Backoff, DecorrelatedJitterStaysBetweenInitialAndThreeTimesThePrevious) {
  Backoff b({.initial = 10ms, .max = 1s, .jitter = Jitter::decorrelated}, 11);
  Duration previous = 10ms;
  for (int i = 0; i < 500; ++i) {
    const Duration d = b.next();
    EXPECT_GE(d, 10ms);
    EXPECT_LE(d, std::min<Duration>(previous * 3, 1s));
    previous = d;
  }
}

TEST(Backoff, SameSeedSameSequenceOtherSeedAnother) {
  const BackoffOptions o{.initial = 5ms, .max = 2s, .jitter = Jitter::full};
  Backoff a(o, 42), b(o, 42), c(o, 43);
  const auto sa = Take(a, 20), sb = Take(b, 20), sc = Take(c, 20);
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
}

TEST(Backoff, HugeSettingsSaturateInsteadOfOverflowing) {
  Backoff none({.initial = 1h, .max = Duration::max(), .multiplier = 1e6, .jitter = Jitter::none}, 1);
  Backoff decorrelated({.initial = 1h, .max = Duration::max(), .jitter = Jitter::decorrelated}, 1);
  for (int i = 0; i < 100; ++i) {
    EXPECT_GE(none.next(), Duration::zero());
    EXPECT_GE(decorrelated.next(), Duration::zero());
  }
}

TEST(Backoff, NonsenseOptionsAreRepaired) {
  Backoff b({.initial = -5ms, .max = -1ms, .multiplier = -3, .jitter = Jitter::none}, 1);
  EXPECT_EQ(b.next(), Duration::zero());
  EXPECT_EQ(b.next(), Duration::zero());
}

}  // namespace
}  // namespace cutoff::resilience
