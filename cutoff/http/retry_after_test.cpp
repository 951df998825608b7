#include "cutoff/http/retry_after.hpp"

#include <gtest/gtest.h>

namespace cutoff::http {
namespace {

using namespace std::chrono_literals;
using SystemClock = std::chrono::system_clock;

// 1994-11-06 08:49:37 UTC, the RFC's own example date.
const SystemClock::time_point kRfcExample = SystemClock::time_point(784111777s);

TEST(RetryAfter, ReadsDelaySeconds) {
  EXPECT_EQ(parse_retry_after("120", kRfcExample), Duration(120s));
  EXPECT_EQ(parse_retry_after("0", kRfcExample), Duration::zero());
  EXPECT_EQ(parse_retry_after(" 5\t", kRfcExample), Duration(5s));
}

TEST(RetryAfter, ReadsAnImfFixdateRelativeToNow) {
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", kRfcExample), Duration(30s));
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", kRfcExample), Duration::zero());
  EXPECT_EQ(parse_retry_after("Sat, 05 Nov 1994 08:49:37 GMT", kRfcExample), Duration::zero()) << "already past";
  EXPECT_EQ(parse_retry_after("Thu, 29 Feb 1996 00:00:00 GMT", kRfcExample), Duration(kMaxRetryAfter));
}

TEST(RetryAfter, CapsWhatNoPolicyWouldWaitFor) {
  EXPECT_EQ(parse_retry_after("86401", kRfcExample), Duration(kMaxRetryAfter));
  EXPECT_EQ(parse_retry_after(std::string(5000, '9'), kRfcExample), Duration(kMaxRetryAfter));
}

TEST(RetryAfter, RefusesEverythingElse) {
  for (const char* bad :
       {"", " ", "-1", "+5", "1.5", "5s", "0x10", "soon", "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 31 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT x"}) {
    EXPECT_FALSE(parse_retry_after(bad, kRfcExample)) << bad;
  }
}

TEST(RetryAfter, FormatsWholeSecondsRoundedUp) {
  EXPECT_EQ(format_retry_after(1500ms), "2");
  EXPECT_EQ(format_retry_after(2s), "2");
  EXPECT_EQ(format_retry_after(Duration::zero()), "1");
  EXPECT_EQ(format_retry_after(Duration::max()), "86400");
}

}  // namespace
}  // namespace cutoff::http
