#include "cutoff/core/cancel.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace cutoff {
namespace {

using namespace std::chrono_literals;

TEST(CancelToken, DefaultTokenNeverStops) {
  CancelToken t;
  EXPECT_FALSE(t.stop_possible());
  EXPECT_FALSE(t.stop_requested());
  EXPECT_EQ(t.reason(), StopReason::none);
  int calls = 0;
  CancelCallback cb(t, [&](StopReason) noexcept { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(CancelSource, FirstReasonWins) {
  CancelSource s;
  auto t = s.token();
  EXPECT_TRUE(t.stop_possible());
  EXPECT_FALSE(t.stop_requested());
  EXPECT_FALSE(s.request_stop(StopReason::none));
  EXPECT_FALSE(t.stop_requested());
  EXPECT_TRUE(s.request_stop(StopReason::deadline_exceeded));
  EXPECT_FALSE(s.request_stop(StopReason::cancelled));
  EXPECT_TRUE(t.stop_requested());
  EXPECT_EQ(t.reason(), StopReason::deadline_exceeded);
  EXPECT_EQ(s.reason(), StopReason::deadline_exceeded);
}

TEST(CancelCallback, RunsOnceWithTheReason) {
  CancelSource s;
  int calls = 0;
  StopReason seen = StopReason::none;
  CancelCallback cb(s.token(), [&](StopReason r) noexcept {
    ++calls;
    seen = r;
  });
  EXPECT_EQ(calls, 0);
  s.request_stop(StopReason::cancelled);
  s.request_stop(StopReason::shutdown);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, StopReason::cancelled);
}

TEST(CancelCallback, RegisteredAfterTheStopRunsImmediatelyOnThisThread) {
  CancelSource s;
  s.request_stop(StopReason::shutdown);
  std::thread::id ran_on;
  int calls = 0;
  CancelCallback cb(s.token(), [&](StopReason r) noexcept {
    ++calls;
    ran_on = std::this_thread::get_id();
    EXPECT_EQ(r, StopReason::shutdown);
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(CancelCallback, NeverRunsAfterItsHandleIsDestroyed) {
  CancelSource s;
  int calls = 0;
  {
    CancelCallback cb(s.token(), [&](StopReason) noexcept { ++calls; });
  }
  CancelRegistration reg(s.token(), [&](StopReason) { ++calls; });
  reg.reset();
  s.request_stop(StopReason::cancelled);
  EXPECT_EQ(calls, 0);
}

TEST(CancelCallback, AllCallbacksRunInAnyOrder) {
  CancelSource s;
  std::vector<int> order;
  CancelCallback a(s.token(), [&](StopReason) noexcept { order.push_back(1); });
  CancelCallback b(s.token(), [&](StopReason) noexcept { order.push_back(2); });
  CancelCallback c(s.token(), [&](StopReason) noexcept { order.push_back(3); });
  s.request_stop();
  ASSERT_EQ(order.size(), 3u);
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(CancelCallback, DestroyingWhileRunningOnAnotherThreadWaitsForIt) {
  CancelSource s;
  std::atomic<bool> started{false};
  std::atomic<bool> finished{false};
  auto cb = std::make_unique<CancelRegistration>(s.token(), [&](StopReason) {
    started = true;
    std::this_thread::sleep_for(50ms);
    finished = true;
  });
  std::thread stopper([&] { s.request_stop(StopReason::cancelled); });
  while (!started) std::this_thread::yield();
  cb.reset();  // must block until the callback returned
  EXPECT_TRUE(finished.load());
  stopper.join();
}

TEST(CancelCallback, CallbackMayDeregisterItself) {
  CancelSource s;
  int calls = 0;
  std::optional<CancelRegistration> reg;
  reg.emplace(s.token(), [&](StopReason) {
    ++calls;
    reg.reset();  // destroys the registration from inside its own callback
  });
  s.request_stop();
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(reg.has_value());
}

TEST(CancelCallback, CallbackMayDeregisterAnotherPendingCallback) {
  CancelSource s;
  int second_calls = 0;
  std::optional<CancelRegistration> second;
  // Registered last, runs first (LIFO list); removes the other before it runs.
  second.emplace(s.token(), [&](StopReason) { ++second_calls; });
  CancelRegistration first(s.token(), [&](StopReason) { second.reset(); });
  s.request_stop();
  EXPECT_EQ(second_calls, 0);
}

TEST(CancelCallback, CallbackMayRegisterMoreCallbacks) {
  CancelSource s;
  int inner_calls = 0;
  std::optional<CancelRegistration> inner;
  CancelRegistration outer(s.token(), [&](StopReason) {
    inner.emplace(s.token(), [&](StopReason) { ++inner_calls; });  // runs at once: already stopped
  });
  s.request_stop();
  EXPECT_EQ(inner_calls, 1);
}

TEST(CancelRegistration, IsMovable) {
  CancelSource s;
  int calls = 0;
  CancelRegistration a(s.token(), [&](StopReason) { ++calls; });
  CancelRegistration b = std::move(a);
  EXPECT_FALSE(a);
  EXPECT_TRUE(b);
  s.request_stop();
  EXPECT_EQ(calls, 1);
}

// Many threads register and deregister while another requests the stop. Every callback that
// was still registered at the stop runs exactly once; none runs after its handle is gone.
TEST(CancelConcurrency, RegisterDeregisterRacingWithStop) {
  for (int round = 0; round < 50; ++round) {
    CancelSource s;
    constexpr int kThreads = 4;
    constexpr int kPerThread = 200;
    std::atomic<int> runs_after_destroy{0};
    std::atomic<int> total_runs{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        while (!go) std::this_thread::yield();
        for (int i = 0; i < kPerThread; ++i) {
          auto alive = std::make_shared<std::atomic<bool>>(true);
          std::atomic<int> runs{0};
          {
            CancelCallback cb(s.token(), [&, alive](StopReason r) noexcept {
              if (!alive->load()) runs_after_destroy++;
              if (r != StopReason::cancelled) runs_after_destroy++;
              runs++;
            });
          }
          alive->store(false);
          EXPECT_LE(runs.load(), 1);
          total_runs += runs.load();
        }
      });
    }
    go = true;
    std::this_thread::sleep_for(std::chrono::microseconds(50 * (round % 5)));
    s.request_stop(StopReason::cancelled);
    for (auto& th : threads) th.join();
    EXPECT_EQ(runs_after_destroy.load(), 0);
    EXPECT_TRUE(s.stop_requested());
  }
}

TEST(CancelConcurrency, ConcurrentStopsPickOneReason) {
  for (int round = 0; round < 100; ++round) {
    CancelSource s;
    std::atomic<int> calls{0};
    CancelCallback cb(s.token(), [&](StopReason) noexcept { calls++; });
    std::atomic<int> winners{0};
    std::thread a([&] { winners += s.request_stop(StopReason::deadline_exceeded); });
    std::thread b([&] { winners += s.request_stop(StopReason::cancelled); });
    a.join();
    b.join();
    EXPECT_EQ(winners.load(), 1);
    EXPECT_EQ(calls.load(), 1);
  }
}

}  // namespace
}  // namespace cutoff
