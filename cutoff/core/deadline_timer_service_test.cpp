#include "cutoff/core/deadline_timer_service.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "cutoff/core/cancel.hpp"
#include "cutoff/core/context.hpp"

namespace cutoff {
namespace {

using namespace std::chrono_literals;

TEST(DeadlineTimerService, FiresInDeadlineOrderOnlyWhenDue) {
  ManualClock clock;
  DeadlineTimerService timers(clock, DeadlineTimerService::Mode::kManual);
  auto root = Context::background(timers);
  auto late = root.with_timeout(30ms);
  auto early = root.with_timeout(10ms);
  auto mid = root.with_timeout(20ms);
  EXPECT_EQ(timers.fire_due(), 0u);
  clock.advance(10ms);
  EXPECT_EQ(timers.fire_due(), 1u);
  EXPECT_TRUE(early.stop_requested());
  EXPECT_FALSE(mid.stop_requested());
  clock.advance(100ms);
  EXPECT_EQ(timers.fire_due(), 2u);
  EXPECT_TRUE(mid.stop_requested());
  EXPECT_TRUE(late.stop_requested());
  EXPECT_EQ(timers.armed(), 0u);
}

TEST(DeadlineTimerService, CallbacksMayCreateAndDestroyContextsWhileFiring) {
  ManualClock clock;
  DeadlineTimerService timers(clock, DeadlineTimerService::Mode::kManual);
  auto root = Context::background(timers);
  auto ctx = root.with_timeout(10ms);
  std::optional<Context> other = root.with_timeout(10ms);
  std::vector<Context> made;
  CancelRegistration reg(ctx.token(), [&](StopReason) {
    made.push_back(root.with_timeout(1ms));  // arms during fire_due
    other.reset();                           // disarms (or drops) during fire_due
  });
  clock.advance(10ms);
  timers.fire_due();
  EXPECT_TRUE(ctx.stop_requested());
  ASSERT_EQ(made.size(), 1u);
  clock.advance(1ms);
  timers.fire_due();
  EXPECT_TRUE(made[0].stop_requested());
}

TEST(DeadlineTimerService, ThreadModeFiresWithoutHelp) {
  DeadlineTimerService timers;  // steady clock, own thread
  auto root = Context::background(timers);
  const auto start = SteadyClock::now();
  auto a = root.with_timeout(30ms);
  auto b = root.with_timeout(10ms);  // earlier than what the thread sleeps for: must wake it
  while (!a.stop_requested() && SteadyClock::now() - start < 5s) std::this_thread::sleep_for(200us);
  EXPECT_TRUE(b.stop_requested());
  EXPECT_TRUE(a.stop_requested());
  EXPECT_LT(SteadyClock::now() - start, 1s);
}

TEST(DeadlineTimerService, DestroyingTheServiceWithArmedEntriesIsSafe) {
  std::optional<Context> survivor;
  {
    DeadlineTimerService timers;
    auto root = Context::background(timers);
    auto ctx = root.with_timeout(1h);
    EXPECT_EQ(timers.armed(), 1u);
  }
  SUCCEED();
}

}  // namespace
}  // namespace cutoff
