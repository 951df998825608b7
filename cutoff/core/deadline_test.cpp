#include "cutoff/core/deadline.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace cutoff {
namespace {

using namespace std::chrono_literals;

TEST(Deadline, DefaultNeverExpires) {
  ManualClock clock;
  Deadline d;
  EXPECT_TRUE(d.is_never());
  EXPECT_EQ(d, Deadline::never());
  EXPECT_FALSE(d.expired(clock));
  EXPECT_EQ(d.remaining(clock), Duration::max());
  clock.advance(std::chrono::hours(24 * 365 * 100));
  EXPECT_FALSE(d.expired(clock));
  EXPECT_EQ(d.to_string(clock), "never");
}

TEST(Deadline, AfterCountsDownOnTheClock) {
  ManualClock clock;
  auto d = Deadline::after(100ms, clock);
  EXPECT_FALSE(d.is_never());
  EXPECT_EQ(d.remaining(clock), 100ms);
  clock.advance(40ms);
  EXPECT_EQ(d.remaining(clock), 60ms);
  EXPECT_FALSE(d.expired(clock));
  clock.advance(60ms);
  EXPECT_TRUE(d.expired(clock));
}

TEST(Deadline, RemainingClampsAtZero) {
  ManualClock clock;
  auto d = Deadline::after(10ms, clock);
  clock.advance(1h);
  EXPECT_EQ(d.remaining(clock), Duration::zero());
  EXPECT_TRUE(d.expired(clock));
  EXPECT_EQ(d.remaining_ms_ceil(clock), 0);
}

TEST(Deadline, ZeroAndNegativeDurationsAreAlreadyExpired) {
  ManualClock clock;
  EXPECT_TRUE(Deadline::after(0ms, clock).expired(clock));
  EXPECT_TRUE(Deadline::after(-5s, clock).expired(clock));
  EXPECT_TRUE(Deadline::after(std::chrono::duration<double>(std::numeric_limits<double>::quiet_NaN()), clock)
                  .expired(clock));
}

TEST(Deadline, HugeDurationsSaturateToNever) {
  ManualClock clock;
  EXPECT_TRUE(Deadline::after(Duration::max(), clock).is_never());
  EXPECT_TRUE(Deadline::after(std::chrono::hours::max(), clock).is_never());
  EXPECT_TRUE(Deadline::after(std::chrono::duration<double>(1e300), clock).is_never());
  EXPECT_TRUE(Deadline::after(std::chrono::hours::min(), clock).expired(clock));
}

TEST(Deadline, MinIsTheTighter) {
  ManualClock clock;
  auto a = Deadline::after(100ms, clock);
  auto b = Deadline::after(50ms, clock);
  EXPECT_EQ(min(a, b), b);
  EXPECT_EQ(min(b, a), b);
  EXPECT_EQ(min(a, Deadline::never()), a);
  EXPECT_EQ(min(Deadline::never(), Deadline::never()), Deadline::never());
  EXPECT_LT(b, a);
  EXPECT_LT(a, Deadline::never());
}

TEST(Deadline, AtUsesTheGivenTimePoint) {
  ManualClock clock;
  auto t = clock.now() + 5s;
  EXPECT_EQ(Deadline::at(t).time_point(), t);
  EXPECT_EQ(Deadline::at(t).remaining(clock), 5s);
}

TEST(Deadline, RemainingMillisecondsRoundUpSoALiveBudgetIsNeverZero) {
  ManualClock clock;
  auto d = Deadline::after(1ns, clock);
  EXPECT_EQ(d.remaining_ms_ceil(clock), 1);
  auto e = Deadline::after(1500us, clock);
  EXPECT_EQ(e.remaining_ms_ceil(clock), 2);
  EXPECT_EQ(Deadline::after(2ms, clock).remaining_ms_ceil(clock), 2);
  EXPECT_EQ(Deadline::never().remaining_ms_ceil(clock), std::numeric_limits<std::int64_t>::max());
}

TEST(Deadline, ToStringIsReadable) {
  ManualClock clock;
  EXPECT_EQ(Deadline::after(1500us, clock).to_string(clock), "in 1.5ms");
  auto d = Deadline::after(1ms, clock);
  clock.advance(3ms);
  EXPECT_EQ(d.to_string(clock), "2.0ms ago");
}

TEST(Deadline, SteadyClockByDefault) {
  auto d = Deadline::after(1h);
  EXPECT_FALSE(d.expired());
  EXPECT_GT(d.remaining(), 59min);
}

}  // namespace
}  // namespace cutoff
