#include "cutoff/resilience/deadline_gate.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>
#include <thread>

#include "cutoff/core/error.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::resilience {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;
using cutoff::test_support::Sleep;
using cutoff::test_support::TimeScale;

asio::awaitable<void> Nothing() { co_return; }

TEST(DeadlineGate, UnboundContextPassesTheValueThrough) {
  int v = RunSync([&]() -> asio::awaitable<int> {
    co_return co_await gate(Context(), [](const Context&) -> asio::awaitable<int> { co_return 7; });
  });
  EXPECT_EQ(v, 7);
}

TEST(DeadlineGate, StoppedContextFailsBeforeTheCallableRunsAndKeepsTheReason) {
  for (StopReason reason : {StopReason::deadline_exceeded, StopReason::cancelled, StopReason::shutdown}) {
    auto [ctx, stop] = Context().with_request_id("req-9").with_cancel();
    stop.request_stop(reason);
    int invoked = 0;
    try {
      RunSync([&]() -> asio::awaitable<void> {
        // Not a coroutine: invoking it is already work, before anything is awaited.
        co_await gate(ctx, [&](const Context&) {
          ++invoked;
          return Nothing();
        });
      });
      ADD_FAILURE() << "no error for " << to_string(reason);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), error_code_for(reason));
      EXPECT_EQ(e.stop_reason(), reason);
      EXPECT_EQ(e.request_id(), "req-9");
    }
    EXPECT_EQ(invoked, 0) << to_string(reason);
  }
}

TEST(DeadlineGate, ExpiredDeadlineFailsFast) {
  auto ctx = Context().with_timeout(-1ms);
  bool invoked = false;
  const auto start = SteadyClock::now();
  try {
    RunSync([&]() -> asio::awaitable<void> {
      co_await gate(ctx, [&](const Context&) -> asio::awaitable<void> {
        invoked = true;
        co_return;
      });
    });
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::deadline_exceeded);
  }
  EXPECT_FALSE(invoked);
  EXPECT_LT(SteadyClock::now() - start, 50ms * TimeScale());
}

TEST(DeadlineGate, DeadlineCancelsTheAwaitedCallThroughAsio) {
  const int s = TimeScale();
  const auto start = SteadyClock::now();
  auto ctx = Context().with_timeout(50ms * s);
  bool call_aborted = false;
  try {
    RunSync([&]() -> asio::awaitable<void> {
      co_await gate(ctx, [&](const Context&) -> asio::awaitable<void> {
        // Does not look at the context: only Asio cancellation can end this sleep early.
        try {
          co_await Sleep(10s);
        } catch (const boost::system::system_error&) {
          call_aborted = true;
          throw;
        }
      });
    });
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::deadline_exceeded);
  }
  EXPECT_TRUE(call_aborted);
  const auto took = SteadyClock::now() - start;
  EXPECT_GE(took, 50ms * s);
  EXPECT_LT(took, 50ms * s + 200ms * s);
}

TEST(DeadlineGate, CancelFromAnotherThreadEndsTheCallWithCancelled) {
  auto [ctx, stop] = Context().with_cancel();
  std::thread canceller([stop = stop] {
    std::this_thread::sleep_for(30ms);
    stop.request_stop(StopReason::cancelled);
  });
  ErrorCode code = ErrorCode::internal;
  try {
    RunSync([&]() -> asio::awaitable<void> {
      co_await gate(ctx, [](const Context&) -> asio::awaitable<void> { co_await Sleep(10s); });
    });
  } catch (const Error& e) {
    code = e.code();
  }
  canceller.join();
  EXPECT_EQ(code, ErrorCode::cancelled);
}

}  // namespace
}  // namespace cutoff::resilience
