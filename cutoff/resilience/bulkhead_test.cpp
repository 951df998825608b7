#include "cutoff/resilience/bulkhead.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <random>
#include <thread>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/observe/metrics.hpp"
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

// Acquires under `ctx` on the current executor, in the background; records the outcome.
struct Caller {
  std::optional<ErrorCode> error;
  bool admitted = false;
  bool done = false;
  SteadyClock::duration waited{};
  SteadyClock::time_point ended{};
};

asio::awaitable<void> AcquireAndHold(Bulkhead& bh, Context ctx, Caller& out, Duration hold) {
  const auto start = SteadyClock::now();
  try {
    auto permit = co_await bh.acquire(ctx);
    out.admitted = true;
    out.waited = SteadyClock::now() - start;
    co_await Sleep(hold);
  } catch (const Error& e) {
    out.error = e.code();
    out.waited = SteadyClock::now() - start;
  }
  out.ended = SteadyClock::now();
  out.done = true;
}

TEST(Bulkhead, GrantsUpToTheLimitThenQueuesInOrder) {
  Bulkhead bh({.max_concurrent = 2, .max_queue = 8});
  std::vector<int> order;
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    for (int i = 0; i < 6; ++i) {
      asio::co_spawn(ex, [&, i]() -> asio::awaitable<void> {
        auto permit = co_await bh.acquire(Context());
        order.push_back(i);
        co_await Sleep(5ms);
      }, asio::detached);
    }
    co_await Sleep(1ms);
    EXPECT_EQ(bh.stats().in_use, 2u);
    EXPECT_EQ(bh.stats().queued, 4u);
    co_await Sleep(100ms);
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  const BulkheadStats s = bh.stats();
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(s.queued, 0u);
  EXPECT_EQ(s.admitted, 6u);
  EXPECT_EQ(s.max_in_use_seen, 2u);
}

TEST(Bulkhead, AFullQueueRejectsAtOnceWithOverloaded) {
  observe::Registry registry;
  ResilienceMetrics metrics(registry);
  Bulkhead bh({.max_concurrent = 1, .max_queue = 1, .name = "inventory", .metrics = &metrics});
  Caller holder, queued, rejected;
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(ex, AcquireAndHold(bh, Context(), holder, 50ms), asio::detached);
    asio::co_spawn(ex, AcquireAndHold(bh, Context(), queued, 1ms), asio::detached);
    co_await Sleep(5ms);
    asio::co_spawn(ex, AcquireAndHold(bh, Context(), rejected, 1ms), asio::detached);
    co_await Sleep(5ms);
    EXPECT_TRUE(rejected.done) << "rejected without waiting for a slot";
    co_await Sleep(100ms);
  });
  EXPECT_TRUE(holder.admitted);
  EXPECT_TRUE(queued.admitted);
  EXPECT_EQ(rejected.error, ErrorCode::overloaded);
  EXPECT_LT(rejected.waited, 5ms * TimeScale());
  EXPECT_EQ(bh.stats().rejected, 1u);
  EXPECT_EQ(metrics.bulkhead_rejected.with({"inventory", "full"}).value(), 1);
  EXPECT_EQ(metrics.bulkhead_in_use.with({"inventory"}).value(), 0);
}

TEST(Bulkhead, AQueuedCallerLeavesAtItsDeadlineWithoutTakingASlot) {
  const int s = TimeScale();
  Bulkhead bh({.max_concurrent = 1, .max_queue = 4});
  Caller holder, late, next;
  const Context late_ctx = Context().with_timeout(50ms * s);
  const TimePoint deadline = late_ctx.deadline().time_point();
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(ex, AcquireAndHold(bh, Context(), holder, 200ms * s), asio::detached);
    co_await Sleep(1ms);
    asio::co_spawn(ex, AcquireAndHold(bh, late_ctx, late, 1ms), asio::detached);
    co_await Sleep(100ms * s);
    EXPECT_TRUE(late.done) << "left the queue at its deadline, not when the slot came free";
    EXPECT_EQ(bh.stats().queued, 0u);
    EXPECT_EQ(bh.stats().in_use, 1u);
    asio::co_spawn(ex, AcquireAndHold(bh, Context(), next, 1ms), asio::detached);
    co_await Sleep(250ms * s);
  });
  EXPECT_EQ(late.error, ErrorCode::deadline_exceeded);
  EXPECT_FALSE(late.admitted);
  EXPECT_GE(late.ended, deadline);
  EXPECT_LT(late.ended - deadline, 40ms * s);
  EXPECT_TRUE(next.admitted) << "the slot went to the next caller";
  const BulkheadStats st = bh.stats();
  EXPECT_EQ(st.stopped_waiting, 1u);
  EXPECT_EQ(st.admitted, 2u);
  EXPECT_EQ(st.in_use, 0u);
}

TEST(Bulkhead, CancelWhileQueued) {
  const int s = TimeScale();
  Bulkhead bh({.max_concurrent = 1, .max_queue = 4});
  Caller holder, cancelled;
  auto [ctx, stop] = Context().with_cancel();
  RunSync([&, ctx = ctx, stop = stop]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(ex, AcquireAndHold(bh, Context(), holder, 100ms * s), asio::detached);
    co_await Sleep(1ms);
    asio::co_spawn(ex, AcquireAndHold(bh, ctx, cancelled, 1ms), asio::detached);
    co_await Sleep(10ms);
    std::thread([stop] { stop.request_stop(StopReason::cancelled); }).join();  // from another thread
    co_await Sleep(20ms * s);
    EXPECT_TRUE(cancelled.done);
    co_await Sleep(150ms * s);
  });
  EXPECT_EQ(cancelled.error, ErrorCode::cancelled);
  EXPECT_FALSE(cancelled.admitted);
  EXPECT_EQ(bh.stats().in_use, 0u);
  EXPECT_EQ(bh.stats().admitted, 1u);
}

// The race the queue must survive: a caller's stop and a released slot land together. Here
// both happen in one handler, stop first, so the slot reaches a caller that is leaving.
TEST(Bulkhead, ASlotHandedToACallerWhoJustLeftGoesToTheNext) {
  Bulkhead bh({.max_concurrent = 1, .max_queue = 4});
  Caller leaving, next;
  auto [ctx, stop] = Context().with_cancel();
  RunSync([&, ctx = ctx, stop = stop]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    auto holder = bh.try_acquire();
    asio::co_spawn(ex, AcquireAndHold(bh, ctx, leaving, 1ms), asio::detached);
    asio::co_spawn(ex, AcquireAndHold(bh, Context(), next, 1ms), asio::detached);
    co_await Sleep(5ms);
    EXPECT_EQ(bh.stats().queued, 2u);
    stop.request_stop(StopReason::cancelled);  // the first waiter's stop is posted...
    holder.release();                          // ...and the slot is granted to it anyway
    EXPECT_EQ(bh.stats().queued, 1u);
    co_await Sleep(20ms);
  });
  EXPECT_EQ(leaving.error, ErrorCode::cancelled);
  EXPECT_FALSE(leaving.admitted) << "a stopped caller never starts its call";
  EXPECT_TRUE(next.admitted) << "the slot was passed on, not lost";
  const BulkheadStats s = bh.stats();
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(s.queued, 0u);
  EXPECT_EQ(s.admitted, 2u);  // the holder and `next`
}

TEST(Bulkhead, AStoppedCallerDoesNotQueue) {
  Bulkhead bh({.max_concurrent = 1, .max_queue = 4});
  auto permit = bh.try_acquire();
  ASSERT_TRUE(permit);
  EXPECT_FALSE(bh.try_acquire());
  auto [ctx, stop] = Context().with_cancel();
  stop.request_stop(StopReason::shutdown);
  try {
    RunSync([&, ctx = ctx]() -> asio::awaitable<void> { co_await bh.acquire(ctx); });
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::shutdown);
  }
  EXPECT_EQ(bh.stats().queued, 0u);
  permit.release();
  EXPECT_EQ(bh.stats().in_use, 0u);
}

TEST(Bulkhead, RunHoldsASlotForTheCall) {
  Bulkhead bh({.max_concurrent = 1, .max_queue = 0});
  const int v = RunSync([&]() -> asio::awaitable<int> {
    co_return co_await bh.run(Context(), [&](const Context&) -> asio::awaitable<int> {
      EXPECT_EQ(bh.stats().in_use, 1u);
      co_return 5;
    });
  });
  EXPECT_EQ(v, 5);
  EXPECT_EQ(bh.stats().in_use, 0u);
}

// Many callers on two threads, each on its own strand, with deadlines and cancels landing
// while they queue and while slots are handed over. The limit holds and no slot leaks.
TEST(Bulkhead, StressSlotsNeverExceedTheLimitAndNeverLeak) {
  constexpr std::size_t kLimit = 3;
  constexpr int kCallers = 600;
  Bulkhead bh({.max_concurrent = kLimit, .max_queue = 40});
  std::atomic<int> running{0}, max_running{0}, ok{0}, overloaded{0}, stopped{0}, other{0};
  asio::io_context io;
  std::vector<CancelSource> cancels;
  std::mt19937 rng(1234);
  for (int i = 0; i < kCallers; ++i) {
    const int kind = static_cast<int>(rng() % 3);
    const auto timeout = std::chrono::microseconds(500 + rng() % 4000);
    const auto hold = std::chrono::microseconds(rng() % 1500);
    auto [ctx, stop] = Context().with_cancel(kind == 0 ? Deadline::never() : Deadline::after(timeout));
    if (kind == 2) cancels.push_back(stop);
    asio::co_spawn(asio::make_strand(io), [&, ctx = ctx, hold]() -> asio::awaitable<void> {
      try {
        auto permit = co_await bh.acquire(ctx);
        const int now = running.fetch_add(1) + 1;
        int seen = max_running.load();
        while (now > seen && !max_running.compare_exchange_weak(seen, now)) {
        }
        co_await Sleep(hold);
        running.fetch_sub(1);
        ok.fetch_add(1);
      } catch (const Error& e) {
        if (e.code() == ErrorCode::overloaded)
          overloaded.fetch_add(1);
        else if (e.code() == ErrorCode::deadline_exceeded || e.code() == ErrorCode::cancelled)
          stopped.fetch_add(1);
        else
          other.fetch_add(1);
      }
    }, asio::detached);
  }
  std::thread canceller([&] {
    for (auto& c : cancels) {
      c.request_stop(StopReason::cancelled);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  });
  std::thread second([&] { io.run(); });
  io.run();
  second.join();
  canceller.join();

  EXPECT_LE(max_running.load(), static_cast<int>(kLimit));
  EXPECT_EQ(ok + overloaded + stopped, kCallers);
  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(ok.load(), 0);
  EXPECT_GT(stopped.load(), 0);
  EXPECT_GT(overloaded.load(), 0);
  const BulkheadStats s = bh.stats();
  EXPECT_EQ(s.in_use, 0u) << "a slot leaked";
  EXPECT_EQ(s.queued, 0u);
  EXPECT_EQ(s.admitted, static_cast<std::uint64_t>(ok.load()));
  EXPECT_LE(s.max_in_use_seen, kLimit);
  // Every slot is still there.
  std::vector<Bulkhead::Permit> all;
  for (std::size_t i = 0; i < kLimit; ++i) all.push_back(bh.try_acquire());
  for (auto& p : all) EXPECT_TRUE(p);
  EXPECT_FALSE(bh.try_acquire());
}

}  // namespace
}  // namespace cutoff::resilience
