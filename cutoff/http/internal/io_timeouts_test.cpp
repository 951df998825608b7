#include "cutoff/http/internal/io_timeouts.hpp"

#include <gtest/gtest.h>

namespace cutoff::http::internal {
namespace {

using namespace std::chrono_literals;

std::int64_t Nanos(std::chrono::steady_clock::time_point t) { return t.time_since_epoch().count(); }

TEST(SweptDeadline, IsDueOnlyOnceItHasPassed) {
  SweptDeadline d;
  const auto now = std::chrono::steady_clock::now();
  EXPECT_EQ(d.DueBy(Nanos(now)), 0);  // none pending
  d.SetAt(now + 1s);
  EXPECT_EQ(d.DueBy(Nanos(now)), 0);
  EXPECT_EQ(d.DueBy(Nanos(now + 1s)), Nanos(now + 1s));
  EXPECT_EQ(d.DueBy(Nanos(now + 2s)), Nanos(now + 1s));
  d.Clear();
  EXPECT_EQ(d.DueBy(Nanos(now + 2s)), 0);
}

TEST(SweptDeadline, ExpiresOnceAndOnlyTheDeadlineThatWasDue) {
  SweptDeadline d;
  const auto now = std::chrono::steady_clock::now();
  d.SetAt(now);
  const std::int64_t due = d.DueBy(Nanos(now));
  ASSERT_NE(due, 0);
  // The operation ended and the next one armed a later deadline before the expiry ran.
  d.SetAt(now + 1s);
  EXPECT_FALSE(d.Expire(due));
  EXPECT_EQ(d.DueBy(Nanos(now + 1s)), Nanos(now + 1s));  // still pending
  const std::int64_t later = d.DueBy(Nanos(now + 1s));
  EXPECT_TRUE(d.Expire(later));
  EXPECT_FALSE(d.Expire(later));  // cleared by the first
  EXPECT_FALSE(d.Expire(0));
}

TEST(SweptDeadline, SetAfterIsFromNow) {
  SweptDeadline d;
  const auto before = std::chrono::steady_clock::now();
  d.SetAfter(10s);
  EXPECT_EQ(d.DueBy(Nanos(before + 9s)), 0);
  EXPECT_NE(d.DueBy(Nanos(std::chrono::steady_clock::now() + 10s)), 0);
}

TEST(SweepInterval, IsAnEighthOfTheShortestTimeoutWithinBounds) {
  EXPECT_EQ(SweepInterval({.header_timeout = 800ms, .body_timeout = 30s, .idle_timeout = 60s, .write_timeout = 30s}),
            100ms);
  EXPECT_EQ(SweepInterval({.header_timeout = 10s, .body_timeout = 30s, .idle_timeout = 60s, .write_timeout = 400ms}),
            50ms);
  EXPECT_EQ(SweepInterval({}), 250ms);  // defaults: 10 s / 8, capped
  EXPECT_EQ(SweepInterval({.header_timeout = 1ms}), 5ms);
}

}  // namespace
}  // namespace cutoff::http::internal
