#include "cutoff/core/semaphore.hpp"

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
#include <random>
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
  bool admitted = false;
  bool aborted = false;
  std::optional<ErrorCode> error;
  bool done = false;
  SteadyClock::time_point ended{};
};

asio::awaitable<void> AcquireAndHold(Semaphore& sem, Context ctx, Outcome& out, Duration hold,
                                     std::vector<int>* order = nullptr, int id = 0) {
  try {
    Semaphore::Permit permit = co_await sem.acquire(ctx);
    out.admitted = true;
    if (order) order->push_back(id);
    co_await Sleep(hold);
  } catch (const Error& e) {
    out.error = e.code();
  } catch (const boost::system::system_error& e) {
    out.aborted = e.code() == asio::error::operation_aborted;
  }
  out.ended = SteadyClock::now();
  out.done = true;
}

TEST(Semaphore, PermitsAreCountedAndGivenBack) {
  Semaphore sem(2);
  EXPECT_EQ(sem.available(), 2u);
  Semaphore::Permit a = sem.try_acquire();
  Semaphore::Permit b = sem.try_acquire();
  EXPECT_TRUE(a);
  EXPECT_TRUE(b);
  EXPECT_FALSE(sem.try_acquire());
  EXPECT_EQ(sem.available(), 0u);
  a = std::move(b);  // a's permit goes back, b's moves into a
  EXPECT_EQ(sem.available(), 1u);
  a.release();
  EXPECT_EQ(sem.available(), 2u);
  sem.release(3);  // a counting semaphore may grow
  EXPECT_EQ(sem.available(), 5u);
  Semaphore::Permit c = sem.try_acquire();
  c.detach();  // consumed: not given back
  c.release();
  EXPECT_EQ(sem.available(), 4u);
}

TEST(Semaphore, GrantsUpToTheCountThenServesWaitersInArrivalOrder) {
  Semaphore sem(2);
  std::vector<int> order;
  std::vector<Outcome> outcomes(6);
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    for (int i = 0; i < 6; ++i) {
      asio::co_spawn(ex, AcquireAndHold(sem, Context(), outcomes[i], 40ms * TimeScale(), &order, i), asio::detached);
      co_await Sleep(1ms);
    }
    EXPECT_EQ(sem.waiting(), 4u);
    EXPECT_EQ(sem.available(), 0u);
    for (int i = 0; i < 500 && order.size() < 6; ++i) co_await Sleep(1ms);
    co_await Sleep(10ms);
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(sem.available(), 2u);
  EXPECT_EQ(sem.waiting(), 0u);
}

TEST(Semaphore, UnderCongestionTheNewestWaiterIsServedFirst) {
  // Served newest first once the longest waiter has waited 20 ms: the holder keeps its permit
  // 60 ms, so by then every waiter is past that.
  Semaphore sem(1, Semaphore::kUnlimited, 20ms * TimeScale());
  std::vector<int> order;
  std::vector<Outcome> outcomes(4);
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(ex, AcquireAndHold(sem, Context(), outcomes[0], 60ms * TimeScale(), &order, 0), asio::detached);
    co_await Sleep(1ms);
    for (int i = 1; i < 4; ++i) {
      asio::co_spawn(ex, AcquireAndHold(sem, Context(), outcomes[i], 5ms, &order, i), asio::detached);
      co_await Sleep(1ms);
    }
    for (int i = 0; i < 1000 && order.size() < 4; ++i) co_await Sleep(1ms);
  });
  EXPECT_EQ(order, (std::vector<int>{0, 3, 2, 1}));
}

TEST(Semaphore, BeforeTheCongestionThresholdWaitersAreServedInOrder) {
  Semaphore sem(1, Semaphore::kUnlimited, 10s);
  std::vector<int> order;
  std::vector<Outcome> outcomes(4);
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    for (int i = 0; i < 4; ++i) {
      asio::co_spawn(ex, AcquireAndHold(sem, Context(), outcomes[i], 5ms, &order, i), asio::detached);
      co_await Sleep(1ms);
    }
    for (int i = 0; i < 1000 && order.size() < 4; ++i) co_await Sleep(1ms);
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(Semaphore, ReleasingSeveralWakesAsManyWaitersInOrder) {
  Semaphore sem(0);
  std::vector<int> order;
  std::vector<Outcome> outcomes(4);
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    for (int i = 0; i < 4; ++i) {
      asio::co_spawn(ex, AcquireAndHold(sem, Context(), outcomes[i], 100ms * TimeScale(), &order, i), asio::detached);
      co_await Sleep(1ms);
    }
    sem.release(3);
    EXPECT_EQ(sem.waiting(), 1u);
    EXPECT_EQ(sem.available(), 0u) << "all three went to waiters";
    co_await Sleep(10ms);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
    sem.release(2);
    EXPECT_EQ(sem.available(), 1u) << "one to the last waiter, one left over";
    co_await Sleep(250ms * TimeScale());
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(sem.available(), 5u);
}

TEST(Semaphore, TryAcquireDoesNotBargePastWaiters) {
  Semaphore sem(1);
  Outcome waiter;
  RunSync([&]() -> asio::awaitable<void> {
    Semaphore::Permit held = sem.try_acquire();
    asio::co_spawn(co_await asio::this_coro::executor, AcquireAndHold(sem, Context(), waiter, 5ms), asio::detached);
    co_await Sleep(1ms);
    held.release();
    EXPECT_FALSE(sem.try_acquire()) << "the permit is on its way to the waiter";
    co_await Sleep(20ms);
  });
  EXPECT_TRUE(waiter.admitted);
  EXPECT_EQ(sem.available(), 1u);
}

TEST(Semaphore, AFullQueueRejectsWithOverloaded) {
  Semaphore sem(1, /*max_waiters=*/1);
  Outcome queued, rejected;
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    Semaphore::Permit held = sem.try_acquire();
    asio::co_spawn(ex, AcquireAndHold(sem, Context(), queued, 1ms), asio::detached);
    co_await Sleep(1ms);
    asio::co_spawn(ex, AcquireAndHold(sem, Context(), rejected, 1ms), asio::detached);
    co_await Sleep(1ms);
    EXPECT_TRUE(rejected.done) << "rejected without waiting";
    held.release();
    co_await Sleep(10ms);
  });
  EXPECT_EQ(rejected.error, ErrorCode::overloaded);
  EXPECT_TRUE(queued.admitted);
  EXPECT_EQ(sem.available(), 1u);
}

TEST(Semaphore, NoQueueAllowedMeansRejectAtOnce) {
  Semaphore sem(0, 0);
  try {
    RunSync([&]() -> asio::awaitable<void> { co_await sem.acquire(Context()); });
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::overloaded);
  }
  sem.release();
  EXPECT_EQ(sem.available(), 1u);
}

class SemaphoreStop : public testing::TestWithParam<StopReason> {};

TEST_P(SemaphoreStop, AWaiterLeavesWithTheStopsReason) {
  const int s = TimeScale();
  Semaphore sem(0);
  Outcome stopped, next;
  auto [ctx, stop] = Context().with_cancel();
  RunSync([&, ctx = ctx, stop = stop]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(ex, AcquireAndHold(sem, ctx, stopped, 1ms), asio::detached);
    asio::co_spawn(ex, AcquireAndHold(sem, Context(), next, 1ms), asio::detached);
    co_await Sleep(5ms);
    std::thread([stop, reason = GetParam()] { stop.request_stop(reason); }).join();
    EXPECT_EQ(sem.waiting(), 1u);
    for (int i = 0; i < 100 * s && !stopped.done; ++i) co_await Sleep(1ms);
    sem.release();
    co_await Sleep(10ms);
  });
  EXPECT_EQ(stopped.error, error_code_for(GetParam()));
  EXPECT_FALSE(stopped.admitted);
  EXPECT_TRUE(next.admitted) << "the permit went to the caller still waiting";
  EXPECT_EQ(sem.available(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Reasons, SemaphoreStop,
                         testing::Values(StopReason::deadline_exceeded, StopReason::cancelled, StopReason::shutdown),
                         [](const auto& p) { return std::string(to_string(error_code_for(p.param))); });

TEST(Semaphore, AWaiterLeavesAtItsDeadline) {
  const int s = TimeScale();
  Semaphore sem(0);
  Outcome late;
  const Context ctx = Context().with_timeout(40ms * s);
  const TimePoint deadline = ctx.deadline().time_point();
  RunSync([&]() -> asio::awaitable<void> {
    asio::co_spawn(co_await asio::this_coro::executor, AcquireAndHold(sem, ctx, late, 1ms), asio::detached);
    co_await Sleep(100ms * s);
  });
  EXPECT_EQ(late.error, ErrorCode::deadline_exceeded);
  EXPECT_GE(late.ended, deadline);
  EXPECT_LT(late.ended - deadline, 150ms * s);  // generous: a loaded 2-core machine
  EXPECT_EQ(sem.waiting(), 0u);
  EXPECT_EQ(sem.available(), 0u);
  EXPECT_FALSE(sem.try_acquire());
  sem.release();
  EXPECT_TRUE(sem.try_acquire()) << "the queue's flag was cleared when the last waiter left";
}

TEST(Semaphore, AStoppedContextFailsBeforeTouchingTheQueue) {
  Semaphore sem(1);
  auto [ctx, stop] = Context().with_cancel();
  stop.request_stop(StopReason::cancelled);
  try {
    RunSync([&, ctx = ctx]() -> asio::awaitable<void> { co_await sem.acquire(ctx); });
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::cancelled);
  }
  EXPECT_EQ(sem.available(), 1u);
}

TEST(Semaphore, AnAsioCancellationLeavesTheQueue) {
  Semaphore sem(0);
  RunSync([&]() -> asio::awaitable<void> {
    using namespace asio::experimental::awaitable_operators;
    auto winner = co_await (sem.acquire(Context().with_timeout(1h)) || Sleep(10ms));
    EXPECT_EQ(winner.index(), 1u);
    EXPECT_EQ(sem.waiting(), 0u);
  });
  sem.release();
  EXPECT_EQ(sem.available(), 1u);
}

// A permit granted to a waiter whose context stops before it resumes is passed on.
TEST(Semaphore, APermitHandedToAWaiterThatStopsGoesToTheNext) {
  Semaphore sem(0);
  Outcome leaving, next;
  auto [ctx, stop] = Context().with_cancel();
  RunSync([&, ctx = ctx, stop = stop]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(ex, AcquireAndHold(sem, ctx, leaving, 1ms), asio::detached);
    asio::co_spawn(ex, AcquireAndHold(sem, Context(), next, 1ms), asio::detached);
    co_await Sleep(5ms);
    sem.release();
    stop.request_stop(StopReason::deadline_exceeded);
    co_await Sleep(20ms);
  });
  EXPECT_EQ(leaving.error, ErrorCode::deadline_exceeded);
  EXPECT_FALSE(leaving.admitted);
  EXPECT_TRUE(next.admitted);
  EXPECT_EQ(sem.available(), 1u);
}

// Grants and stops racing on different threads, many times over: every permit comes back.
TEST(Semaphore, GrantsRacingStopsNeverLoseAPermit) {
  constexpr int kRounds = 300;
  Semaphore sem(0);
  asio::io_context io;
  std::atomic<int> admitted{0}, stopped{0};
  std::atomic<bool> all_queued{false};
  std::vector<CancelSource> stops;
  for (int i = 0; i < kRounds; ++i) {
    auto [ctx, stop] = Context().with_cancel();
    stops.push_back(stop);
    asio::co_spawn(
        asio::make_strand(io),
        [&, ctx = ctx]() -> asio::awaitable<void> {
          try {
            Semaphore::Permit p = co_await sem.acquire(ctx);
            admitted.fetch_add(1);
          } catch (const Error&) {
            stopped.fetch_add(1);
          }
        },
        asio::detached);
  }
  std::thread runner([&] { io.run(); });
  while (sem.waiting() < kRounds) std::this_thread::sleep_for(1ms);
  all_queued = true;
  std::thread stopper([&] {
    for (auto& s : stops) s.request_stop(StopReason::cancelled);
  });
  for (int i = 0; i < kRounds; ++i) sem.release();
  stopper.join();
  runner.join();
  EXPECT_TRUE(all_queued);
  EXPECT_EQ(admitted + stopped, kRounds);
  EXPECT_EQ(sem.waiting(), 0u);
  EXPECT_EQ(sem.available(), static_cast<std::size_t>(kRounds)) << "every permit released came back";
}

TEST(Semaphore, AnUncontendedAcquireAllocatesNothing) {
  Semaphore sem(4);
  const Context bound = Context().with_timeout(1h);
  long news = -1, aligned = -1;
  asio::io_context io;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 100; ++i) {  // warms Asio's cache
          Semaphore::Permit p = co_await sem.acquire(bound);
        }
        const long news_before = test_support::allocations_on_this_thread();
        const long aligned_before = test_support::aligned_allocations_on_this_thread();
        for (int i = 0; i < 10000; ++i) {
          Semaphore::Permit a = co_await sem.acquire(bound);
          Semaphore::Permit b = co_await sem.acquire(Context());
          Semaphore::Permit c = sem.try_acquire();
          EXPECT_TRUE(c);
        }
        news = test_support::allocations_on_this_thread() - news_before;
        aligned = test_support::aligned_allocations_on_this_thread() - aligned_before;
      },
      asio::detached);
  io.run();
  EXPECT_EQ(news, 0);
  EXPECT_EQ(aligned, 0);
}

// Callers on several threads, each on its own strand, with deadlines and cancellations
// landing while they queue and while permits are handed over: the count holds, no permit
// leaks, and every caller ends one way or the other.
TEST(Semaphore, StressTheCountHoldsAndNothingLeaks) {
  constexpr std::size_t kPermits = 3;
  constexpr int kCallers = 600;
  Semaphore sem(kPermits, 64);
  std::atomic<int> running{0}, max_running{0}, ok{0}, overloaded{0}, stopped{0}, other{0};
  asio::io_context io;
  std::vector<CancelSource> cancels;
  std::mt19937 rng(4321);
  for (int i = 0; i < kCallers; ++i) {
    const int kind = static_cast<int>(rng() % 3);
    const auto timeout = std::chrono::microseconds(300 + rng() % 3000);
    const auto hold = std::chrono::microseconds(rng() % 1000);
    auto [ctx, stop] = Context().with_cancel(kind == 0 ? Deadline::never() : Deadline::after(timeout));
    if (kind == 2) cancels.push_back(stop);
    asio::co_spawn(
        asio::make_strand(io),
        [&, ctx = ctx, hold]() -> asio::awaitable<void> {
          try {
            Semaphore::Permit permit = co_await sem.acquire(ctx);
            const int now = running.fetch_add(1) + 1;
            int seen = max_running.load();
            while (now > seen && !max_running.compare_exchange_weak(seen, now)) {
            }
            co_await Sleep(hold);
            running.fetch_sub(1);
            ok.fetch_add(1);
          } catch (const Error& e) {
            if (e.code() == ErrorCode::overloaded) overloaded.fetch_add(1);
            else if (is_stop(e.code())) stopped.fetch_add(1);
            else other.fetch_add(1);
          }
        },
        asio::detached);
  }
  std::thread canceller([&] {
    for (auto& c : cancels) {
      c.request_stop(StopReason::cancelled);
      std::this_thread::sleep_for(std::chrono::microseconds(40));
    }
  });
  std::thread second([&] { io.run(); });
  io.run();
  second.join();
  canceller.join();

  EXPECT_LE(max_running.load(), static_cast<int>(kPermits));
  EXPECT_EQ(ok + overloaded + stopped, kCallers);
  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(ok.load(), 0);
  EXPECT_GT(stopped.load(), 0);
  EXPECT_EQ(sem.waiting(), 0u);
  EXPECT_EQ(sem.available(), kPermits) << "a permit leaked";
}

}  // namespace
}  // namespace cutoff
