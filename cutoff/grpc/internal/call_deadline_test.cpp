// The call's remaining time from gRPC's raw deadline: exact for near deadlines, saturated for
// the far ones grpc-timeout allows (which ServerContext::deadline() overflows).
#include "cutoff/grpc/internal/call_deadline.hpp"

#include <gtest/gtest.h>

namespace cutoff::grpc::internal {
namespace {

using namespace std::chrono_literals;

gpr_timespec FromNow(std::int64_t seconds, gpr_clock_type clock) {
  return gpr_time_add(gpr_now(clock), gpr_time_from_seconds(seconds, GPR_TIMESPAN));
}

TEST(RemainingUntil, ANearDeadlineIsExact) {
  for (const gpr_clock_type clock : {GPR_CLOCK_MONOTONIC, GPR_CLOCK_REALTIME}) {
    const Duration left = RemainingUntil(FromNow(2, clock));
    EXPECT_LE(left, 2s);
    EXPECT_GT(left, 1900ms);
    EXPECT_LT(RemainingUntil(FromNow(-1, clock)), Duration::zero()) << "a passed deadline";
  }
}

TEST(RemainingUntil, AFarDeadlineSaturatesInsteadOfOverflowing) {
  // grpc-timeout: 99999999H, about 11,400 years.
  const Duration left = RemainingUntil(FromNow(std::int64_t{99999999} * 3600, GPR_CLOCK_MONOTONIC));
  EXPECT_GT(left, 24h * 365 * 99);
  const Duration three_centuries = RemainingUntil(FromNow(std::int64_t{300} * 365 * 24 * 3600, GPR_CLOCK_REALTIME));
  EXPECT_GT(three_centuries, 24h * 365 * 99);
}

TEST(RemainingUntil, NoDeadlineIsUnbounded) {
  EXPECT_EQ(RemainingUntil(gpr_inf_future(GPR_CLOCK_MONOTONIC)), Duration::max());
  EXPECT_EQ(RemainingUntil(gpr_inf_future(GPR_CLOCK_REALTIME)), Duration::max());
}

}  // namespace
}  // namespace cutoff::grpc::internal
