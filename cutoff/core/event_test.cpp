#include "cutoff/core/event.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "cutoff/core/error.hpp"
#include "tests/support/allocation_counter.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using test_support::RunSync;
using test_support::Sleep;
using test_support::TimeScale;

struct Outcome {
  bool released = false;
  std::optional<ErrorCode> error;
  bool done = false;
  SteadyClock::time_point ended{};
};

asio::awaitable<void> WaitFor(Event& event, Context ctx, Outcome& out) {
  try {
    co_await event.wait(ctx);
    out.released = true;
  } catch (const Error& e) {
    out.error = e.code();
  }
  out.ended = SteadyClock::now();
  out.done = true;
}

TEST(Event, SetReleasesEveryWaiterAndLaterWaitsPassAtOnce) {
  Event event;
  std::vector<Outcome> outcomes(5);
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    for (auto& o : outcomes) asio::co_spawn(ex, WaitFor(event, Context(), o), asio::detached);
    co_await Sleep(5ms);
    EXPECT_EQ(event.waiting(), 5u);
    for (auto& o : outcomes) EXPECT_FALSE(o.done);
    event.set();
    EXPECT_TRUE(event.is_set());
    EXPECT_EQ(event.waiting(), 0u);
    co_await Sleep(5ms);
    co_await event.wait(Context());  // already set: returns at once
  });
  for (auto& o : outcomes) EXPECT_TRUE(o.released);
}

TEST(Event, ResetMakesLaterCallersWait) {
  Event event(true);
  Outcome waiter;
  RunSync([&]() -> asio::awaitable<void> {
    co_await event.wait(Context());
    event.reset();
    EXPECT_FALSE(event.is_set());
    asio::co_spawn(co_await asio::this_coro::executor, WaitFor(event, Context(), waiter), asio::detached);
    co_await Sleep(5ms);
    EXPECT_FALSE(waiter.done);
    event.set();
    co_await Sleep(5ms);
  });
  EXPECT_TRUE(waiter.released);
}

class EventStop : public testing::TestWithParam<StopReason> {};

TEST_P(EventStop, AWaiterLeavesWithTheStopsReason) {
  const int s = TimeScale();
  Event event;
  Outcome stopped, other;
  auto [ctx, stop] = Context().with_cancel();
  RunSync([&, ctx = ctx, stop = stop]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(ex, WaitFor(event, ctx, stopped), asio::detached);
    asio::co_spawn(ex, WaitFor(event, Context(), other), asio::detached);
    co_await Sleep(5ms);
    std::thread([stop, reason = GetParam()] { stop.request_stop(reason); }).join();
    EXPECT_EQ(event.waiting(), 1u);
    for (int i = 0; i < 100 * s && !stopped.done; ++i) co_await Sleep(1ms);
    event.set();
    co_await Sleep(5ms);
  });
  EXPECT_EQ(stopped.error, error_code_for(GetParam()));
  EXPECT_FALSE(stopped.released);
  EXPECT_TRUE(other.released);
}

INSTANTIATE_TEST_SUITE_P(Reasons, EventStop,
                         testing::Values(StopReason::deadline_exceeded, StopReason::cancelled, StopReason::shutdown),
                         [](const auto& p) { return std::string(to_string(error_code_for(p.param))); });

TEST(Event, AWaiterLeavesAtItsDeadline) {
  const int s = TimeScale();
  Event event;
  Outcome late;
  const Context ctx = Context().with_timeout(40ms * s);
  const TimePoint deadline = ctx.deadline().time_point();
  RunSync([&]() -> asio::awaitable<void> {
    asio::co_spawn(co_await asio::this_coro::executor, WaitFor(event, ctx, late), asio::detached);
    co_await Sleep(100ms * s);
  });
  EXPECT_EQ(late.error, ErrorCode::deadline_exceeded);
  EXPECT_GE(late.ended, deadline);
  EXPECT_LT(late.ended - deadline, 150ms * s);  // generous: a loaded 2-core machine
  EXPECT_EQ(event.waiting(), 0u);
}

TEST(Event, AStoppedContextFailsEvenWhenTheEventIsSet) {
  Event event(true);
  auto [ctx, stop] = Context().with_cancel();
  stop.request_stop(StopReason::shutdown);
  try {
    RunSync([&, ctx = ctx]() -> asio::awaitable<void> { co_await event.wait(ctx); });
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::shutdown);
  }
}

// set() and a stop in the same instant: the stop wins, and nothing is lost (the event stays
// set for everyone else).
TEST(Event, ASetLandingWithAStopReportsTheStop) {
  Event event;
  Outcome stopped, other;
  auto [ctx, stop] = Context().with_cancel();
  RunSync([&, ctx = ctx, stop = stop]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(ex, WaitFor(event, ctx, stopped), asio::detached);
    asio::co_spawn(ex, WaitFor(event, Context(), other), asio::detached);
    co_await Sleep(5ms);
    event.set();
    stop.request_stop(StopReason::cancelled);
    co_await Sleep(5ms);
  });
  EXPECT_EQ(stopped.error, ErrorCode::cancelled);
  EXPECT_TRUE(other.released);
  EXPECT_TRUE(event.is_set());
}

TEST(Event, AnAsioCancellationLeavesTheWaiters) {
  Event event;
  RunSync([&]() -> asio::awaitable<void> {
    using namespace asio::experimental::awaitable_operators;
    auto winner = co_await (event.wait(Context()) || Sleep(10ms));
    EXPECT_EQ(winner.index(), 1u);
    EXPECT_EQ(event.waiting(), 0u);
  });
}

// Waiters on two threads' io_contexts, set from a third: each resumes on its own thread.
TEST(Event, SetFromAnotherThreadResumesEachWaiterOnItsOwnExecutor) {
  Event event;
  asio::io_context a, b;
  std::thread::id resumed_a, resumed_b;
  asio::co_spawn(
      a,
      [&]() -> asio::awaitable<void> {
        co_await event.wait(Context());
        resumed_a = std::this_thread::get_id();
      },
      asio::detached);
  asio::co_spawn(
      b,
      [&]() -> asio::awaitable<void> {
        co_await event.wait(Context());
        resumed_b = std::this_thread::get_id();
      },
      asio::detached);
  std::thread ta([&] { a.run(); });
  std::thread tb([&] { b.run(); });
  const std::thread::id id_a = ta.get_id(), id_b = tb.get_id();
  while (event.waiting() < 2) std::this_thread::sleep_for(1ms);
  event.set();
  ta.join();
  tb.join();
  EXPECT_EQ(resumed_a, id_a);
  EXPECT_EQ(resumed_b, id_b);
}

TEST(Event, WaitingOnASetEventAllocatesNothing) {
  Event event(true);
  long news = -1, aligned = -1;
  asio::io_context io;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 100; ++i) co_await event.wait(Context());
        const long news_before = test_support::allocations_on_this_thread();
        const long aligned_before = test_support::aligned_allocations_on_this_thread();
        for (int i = 0; i < 10000; ++i) co_await event.wait(Context());
        news = test_support::allocations_on_this_thread() - news_before;
        aligned = test_support::aligned_allocations_on_this_thread() - aligned_before;
      },
      asio::detached);
  io.run();
  EXPECT_EQ(news, 0);
  EXPECT_EQ(aligned, 0);
}

// Many waiters on strands over two threads, sets and resets from another thread, stops
// landing: every waiter ends, and none is left queued.
TEST(Event, StressEveryWaiterEnds) {
  constexpr int kWaiters = 400;
  Event event;
  asio::io_context io;
  std::atomic<int> released{0}, stopped{0};
  std::vector<CancelSource> stops;
  for (int i = 0; i < kWaiters; ++i) {
    auto [ctx, stop] = Context().with_cancel();
    if (i % 2 == 0) stops.push_back(stop);
    asio::co_spawn(
        asio::make_strand(io),
        [&, ctx = ctx]() -> asio::awaitable<void> {
          try {
            co_await event.wait(ctx);
            released.fetch_add(1);
          } catch (const Error&) {
            stopped.fetch_add(1);
          }
        },
        asio::detached);
  }
  std::thread t1([&] { io.run(); });
  std::thread t2([&] { io.run(); });
  std::thread stopper([&] {
    for (auto& s : stops) s.request_stop(StopReason::cancelled);
  });
  for (int i = 0; i < 50; ++i) {
    event.set();
    event.reset();
  }
  stopper.join();
  event.set();
  t1.join();
  t2.join();
  EXPECT_EQ(released + stopped, kWaiters);
  EXPECT_EQ(event.waiting(), 0u);
}

}  // namespace
}  // namespace cutoff
