#include "cutoff/core/stop_token.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "cutoff/core/deadline_timer_service.hpp"

namespace cutoff {
namespace {

using namespace std::chrono_literals;

TEST(StdStopBridge, ContextStopReachesStdStopToken) {
  ManualClock clock;
  DeadlineTimerService timers(clock, DeadlineTimerService::Mode::kManual);
  auto ctx = Context::background(timers).with_timeout(10ms);
  StdStopBridge bridge(ctx);
  auto st = bridge.get_token();
  EXPECT_FALSE(st.stop_requested());
  clock.advance(10ms);
  timers.fire_due();
  EXPECT_TRUE(st.stop_requested());
  EXPECT_EQ(ctx.stop_reason(), StopReason::deadline_exceeded);
}

TEST(StdStopBridge, AlreadyStoppedContext) {
  auto [ctx, source] = Context::background().with_cancel();
  source.request_stop(StopReason::cancelled);
  StdStopBridge bridge(ctx);
  EXPECT_TRUE(bridge.get_token().stop_requested());
}

TEST(StopTokenLink, JthreadStopStopsTheContext) {
  auto [ctx, source] = Context::background().with_cancel();
  {
    std::jthread worker([&, src = source](std::stop_token st) {
      StopTokenLink link(st, src, StopReason::shutdown);
      while (!ctx.stop_requested()) std::this_thread::sleep_for(1ms);
    });
  }  // ~jthread requests stop and joins
  EXPECT_EQ(ctx.stop_reason(), StopReason::shutdown);
}

}  // namespace
}  // namespace cutoff
