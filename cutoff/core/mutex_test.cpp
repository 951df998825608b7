#include "cutoff/core/mutex.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>
#include <memory>
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

// How one background lock() ended.
struct Outcome {
  bool locked = false;
  bool aborted = false;  // operation_aborted: cancelled through Asio
  std::optional<ErrorCode> error;
  bool done = false;
  SteadyClock::time_point ended{};
};

asio::awaitable<void> LockAndHold(Mutex& mu, Context ctx, Outcome& out, Duration hold,
                                  std::vector<int>* order = nullptr, int id = 0) {
  try {
    Mutex::Guard guard = co_await mu.lock(ctx);
    out.locked = true;
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

TEST(Mutex, TryLockAndGuards) {
  Mutex mu;
  EXPECT_FALSE(mu.locked());
  Mutex::Guard a = mu.try_lock();
  ASSERT_TRUE(a);
  EXPECT_EQ(a.mutex(), &mu);
  EXPECT_TRUE(mu.locked());
  EXPECT_FALSE(mu.try_lock()) << "not recursive";
  Mutex::Guard b = std::move(a);
  EXPECT_FALSE(a.owns_lock());
  EXPECT_TRUE(b.owns_lock());
  b.unlock();
  EXPECT_FALSE(mu.locked());
  b.unlock();  // a second unlock of an empty guard does nothing
  EXPECT_FALSE(mu.locked());
  {
    Mutex::Guard c = mu.try_lock();
    EXPECT_TRUE(c);
  }
  EXPECT_FALSE(mu.locked());
}

TEST(Mutex, LockTakesAFreeMutexAtOnce) {
  Mutex mu;
  RunSync([&]() -> asio::awaitable<void> {
    Mutex::Guard g = co_await mu.lock(Context());
    EXPECT_TRUE(g);
    EXPECT_TRUE(mu.locked());
  });
  EXPECT_FALSE(mu.locked());
}

TEST(Mutex, WaitersAreServedInArrivalOrder) {
  Mutex mu;
  std::vector<int> order;
  std::vector<Outcome> outcomes(6);
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    Mutex::Guard holder = mu.try_lock();
    for (int i = 0; i < 6; ++i) {
      asio::co_spawn(ex, LockAndHold(mu, Context(), outcomes[i], 1ms, &order, i), asio::detached);
      co_await Sleep(1ms);  // arrival order is spawn order
    }
    EXPECT_EQ(mu.waiting(), 6u);
    holder.unlock();
    EXPECT_FALSE(mu.try_lock()) << "the lock went to the first waiter, not to a newcomer";
    for (int i = 0; i < 200 && order.size() < 6; ++i) co_await Sleep(1ms);
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_FALSE(mu.locked());
  EXPECT_EQ(mu.waiting(), 0u);
}

// A try_lock (or a fresh lock) never barges past queued waiters, not even while the lock is
// on its way to the first of them.
TEST(Mutex, NoBargingPastQueuedWaiters) {
  Mutex mu;
  Outcome waiter;
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    Mutex::Guard holder = mu.try_lock();
    asio::co_spawn(ex, LockAndHold(mu, Context(), waiter, 5ms), asio::detached);
    co_await Sleep(1ms);
    holder.unlock();  // handed to the waiter; its wake is posted
    EXPECT_TRUE(mu.locked());
    EXPECT_FALSE(mu.try_lock());
    co_await Sleep(1ms);
    EXPECT_TRUE(waiter.locked);
    EXPECT_FALSE(mu.try_lock());
    co_await Sleep(20ms);
  });
  EXPECT_TRUE(waiter.done);
  EXPECT_FALSE(mu.locked());
}

TEST(Mutex, AWaiterLeavesAtItsDeadline) {
  const int s = TimeScale();
  Mutex mu;
  Outcome late, next;
  const Context late_ctx = Context().with_timeout(50ms * s);
  const TimePoint deadline = late_ctx.deadline().time_point();
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    Mutex::Guard holder = mu.try_lock();
    asio::co_spawn(ex, LockAndHold(mu, late_ctx, late, 1ms), asio::detached);
    asio::co_spawn(ex, LockAndHold(mu, Context(), next, 1ms), asio::detached);
    co_await Sleep(250ms * s);
    EXPECT_TRUE(late.done) << "left at its deadline, not when the lock came free";
    EXPECT_EQ(mu.waiting(), 1u);
    holder.unlock();
    co_await Sleep(20ms * s);
  });
  EXPECT_EQ(late.error, ErrorCode::deadline_exceeded);
  EXPECT_FALSE(late.locked);
  EXPECT_GE(late.ended, deadline);
  EXPECT_LT(late.ended - deadline, 150ms * s);  // generous: a loaded 2-core machine
  EXPECT_TRUE(next.locked);
  EXPECT_FALSE(mu.locked());
}

class MutexStop : public testing::TestWithParam<StopReason> {};

// A stop requested from another thread (as the deadline timer and servers do) takes the
// waiter off the queue at once, with the stop's reason.
TEST_P(MutexStop, AWaiterLeavesWithTheStopsReason) {
  const int s = TimeScale();
  Mutex mu;
  Outcome stopped;
  auto [ctx, stop] = Context().with_cancel();
  RunSync([&, ctx = ctx, stop = stop]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    Mutex::Guard holder = mu.try_lock();
    asio::co_spawn(ex, LockAndHold(mu, ctx, stopped, 1ms), asio::detached);
    co_await Sleep(5ms);
    EXPECT_EQ(mu.waiting(), 1u);
    std::thread([stop, reason = GetParam()] { stop.request_stop(reason); }).join();
    EXPECT_EQ(mu.waiting(), 0u) << "left the queue on the stopping thread, before resuming";
    for (int i = 0; i < 100 * s && !stopped.done; ++i) co_await Sleep(1ms);
    EXPECT_TRUE(stopped.done);
    EXPECT_TRUE(mu.locked()) << "still the holder's";
  });
  EXPECT_EQ(stopped.error, error_code_for(GetParam()));
  EXPECT_FALSE(stopped.locked);
  EXPECT_FALSE(mu.locked());
}

INSTANTIATE_TEST_SUITE_P(Reasons, MutexStop,
                         testing::Values(StopReason::deadline_exceeded, StopReason::cancelled, StopReason::shutdown),
                         [](const auto& p) { return std::string(to_string(error_code_for(p.param))); });

TEST(Mutex, AStoppedContextFailsBeforeTouchingTheMutex) {
  Mutex mu;
  auto [ctx, stop] = Context().with_cancel();
  stop.request_stop(StopReason::shutdown);
  try {
    RunSync([&, ctx = ctx]() -> asio::awaitable<void> { co_await mu.lock(ctx); });
    FAIL() << "a free mutex is not taken under a stopped context";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::shutdown);
  }
  EXPECT_FALSE(mu.locked());
  EXPECT_EQ(mu.waiting(), 0u);
}

// `lock || timer`: the timer wins, the lock() is cancelled through Asio and leaves the queue.
TEST(Mutex, AnAsioCancellationLeavesTheQueue) {
  Mutex mu;
  RunSync([&]() -> asio::awaitable<void> {
    using namespace asio::experimental::awaitable_operators;
    Mutex::Guard holder = mu.try_lock();
    auto winner = co_await (mu.lock(Context()) || Sleep(10ms));
    EXPECT_EQ(winner.index(), 1u);
    EXPECT_EQ(mu.waiting(), 0u);
    holder.unlock();
    EXPECT_FALSE(mu.locked()) << "the lock did not go to the cancelled waiter";
  });
}

TEST(Mutex, ATerminalCancellationFailsTheWaitWithOperationAborted) {
  Mutex mu;
  asio::io_context io;
  asio::cancellation_signal cancel;
  Mutex::Guard holder = mu.try_lock();
  std::exception_ptr failure;
  bool completed = false;
  asio::co_spawn(io, mu.lock(Context()),
                 asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e, Mutex::Guard g) {
                   completed = true;
                   failure = e;
                   EXPECT_FALSE(g);
                 }));
  io.run_for(10ms);
  EXPECT_EQ(mu.waiting(), 1u);
  cancel.emit(asio::cancellation_type::terminal);
  io.restart();
  io.run_for(100ms);
  ASSERT_TRUE(completed);
  try {
    std::rethrow_exception(failure);
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), asio::error::operation_aborted);
  }
  EXPECT_EQ(mu.waiting(), 0u);
  holder.unlock();
  EXPECT_FALSE(mu.locked());
}

// The race no permit may be lost to: the lock is handed to a waiter, and in the same instant
// (before the waiter runs) its context stops. The waiter fails with the stop and never runs
// its critical section; the lock goes on to the next waiter.
TEST(Mutex, ALockHandedToAWaiterThatStopsGoesToTheNext) {
  Mutex mu;
  Outcome leaving, next;
  auto [ctx, stop] = Context().with_cancel();
  RunSync([&, ctx = ctx, stop = stop]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    Mutex::Guard holder = mu.try_lock();
    asio::co_spawn(ex, LockAndHold(mu, ctx, leaving, 1ms), asio::detached);
    asio::co_spawn(ex, LockAndHold(mu, Context(), next, 1ms), asio::detached);
    co_await Sleep(5ms);
    holder.unlock();  // granted to the first waiter...
    EXPECT_EQ(mu.waiting(), 1u);
    stop.request_stop(StopReason::cancelled);  // ...which stops before it resumes
    co_await Sleep(20ms);
  });
  EXPECT_EQ(leaving.error, ErrorCode::cancelled);
  EXPECT_FALSE(leaving.locked) << "a stopped caller never enters its critical section";
  EXPECT_TRUE(next.locked) << "the lock was passed on, not lost";
  EXPECT_FALSE(mu.locked());
  EXPECT_EQ(mu.waiting(), 0u);
}

// The same race with an Asio cancellation instead of a stop.
TEST(Mutex, ALockHandedToAWaiterCancelledThroughAsioGoesToTheNext) {
  Mutex mu;
  Outcome leaving, next;
  asio::io_context io;
  asio::cancellation_signal cancel;
  Mutex::Guard holder = mu.try_lock();
  asio::co_spawn(io, LockAndHold(mu, Context(), leaving, 1ms),
                 asio::bind_cancellation_slot(cancel.slot(), asio::detached));
  asio::co_spawn(io, LockAndHold(mu, Context(), next, 1ms), asio::detached);
  io.run_for(5ms);
  asio::post(io, [&] {
    holder.unlock();
    cancel.emit(asio::cancellation_type::terminal);
  });
  io.restart();
  io.run_for(100ms);
  EXPECT_TRUE(leaving.aborted);
  EXPECT_FALSE(leaving.locked);
  EXPECT_TRUE(next.locked);
  EXPECT_FALSE(mu.locked());
}

// A waiter's frame destroyed while it waits (its io_context goes away) leaves the queue.
TEST(Mutex, AWaiterWhoseFrameIsDestroyedLeavesTheQueue) {
  Mutex mu;
  Mutex::Guard holder = mu.try_lock();
  Outcome gone, next;
  {
    asio::io_context doomed;
    asio::co_spawn(doomed, LockAndHold(mu, Context().with_timeout(1h), gone, 1ms), asio::detached);
    doomed.run_for(10ms);
    EXPECT_EQ(mu.waiting(), 1u);
  }
  EXPECT_FALSE(gone.done);
  EXPECT_EQ(mu.waiting(), 0u);
  holder.unlock();
  EXPECT_FALSE(mu.locked());
}

// An unlock on one thread wakes the waiter on its own executor's thread.
TEST(Mutex, AnUnlockWakesTheWaiterOnItsOwnExecutor) {
  Mutex mu;
  Mutex::Guard holder = mu.try_lock();
  asio::io_context io;
  std::thread::id resumed_on;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        Mutex::Guard g = co_await mu.lock(Context());
        resumed_on = std::this_thread::get_id();
      },
      asio::detached);
  std::thread runner([&] { io.run(); });
  const std::thread::id runner_id = runner.get_id();
  while (mu.waiting() == 0) std::this_thread::sleep_for(1ms);
  holder.unlock();  // on this thread
  runner.join();
  EXPECT_EQ(resumed_on, runner_id);
  EXPECT_NE(resumed_on, std::this_thread::get_id());
  EXPECT_FALSE(mu.locked());
}

// The uncontended path allocates nothing: neither operator new nor Asio's memory (its
// per-thread cache serves lock()'s coroutine frame after the first few calls).
TEST(Mutex, AnUncontendedLockAllocatesNothing) {
  Mutex mu;
  const Context bound = Context().with_timeout(1h);
  long news = -1, aligned = -1;
  asio::io_context io;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 100; ++i) {  // warms Asio's cache
          Mutex::Guard g = co_await mu.lock(bound);
        }
        const long news_before = test_support::allocations_on_this_thread();
        const long aligned_before = test_support::aligned_allocations_on_this_thread();
        for (int i = 0; i < 10000; ++i) {
          Mutex::Guard g = co_await mu.lock(bound);
          Mutex::Guard none = mu.try_lock();
          EXPECT_FALSE(none);
        }
        for (int i = 0; i < 10000; ++i) {
          Mutex::Guard g = co_await mu.lock(Context());
        }
        news = test_support::allocations_on_this_thread() - news_before;
        aligned = test_support::aligned_allocations_on_this_thread() - aligned_before;
      },
      asio::detached);
  io.run();
  EXPECT_EQ(news, 0);
  EXPECT_EQ(aligned, 0);
}

// A waiting caller costs its queue node: one operator new (plus Asio's own memory for the
// wait, from its cache or aligned_alloc). Counted here, after a first wait has warmed the
// io_context (its timer queue), so that the test above is known to see allocations when
// there are some.
TEST(Mutex, AWaitingCallerCostsOneAllocation) {
  Mutex mu;
  std::vector<long> news;
  asio::io_context io;
  Mutex::Guard holder = mu.try_lock();
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 3; ++i) {
          const long before = test_support::allocations_on_this_thread();
          Mutex::Guard g = co_await mu.lock(Context());
          news.push_back(test_support::allocations_on_this_thread() - before);
          holder = std::move(g);  // the next round waits again
          asio::post(co_await asio::this_coro::executor, [&] { holder.unlock(); });
        }
      },
      asio::detached);
  io.run_for(5ms);
  asio::post(io, [&] { holder.unlock(); });
  io.restart();
  io.run();
  ASSERT_EQ(news.size(), 3u);
  EXPECT_EQ(news[1], 1);
  EXPECT_EQ(news[2], 1);
}

// Coroutines on several threads, each on its own strand, lock and unlock while deadlines and
// cancellations land. The lock is exclusive (the counter below is not atomic: under TSan any
// overlap is reported), nothing leaks, and every caller ends one way or the other.
TEST(Mutex, StressManyThreadsNeverOverlapAndNeverLeak) {
  constexpr int kCallers = 400;
  constexpr int kRounds = 20;
  Mutex mu;
  long counter = 0;  // guarded by mu
  std::atomic<int> inside{0}, overlaps{0}, locks{0}, stopped{0}, other{0};
  asio::io_context io;
  std::vector<CancelSource> cancels;
  std::mt19937 rng(99);
  for (int i = 0; i < kCallers; ++i) {
    const int kind = static_cast<int>(rng() % 3);
    auto [ctx, stop] = Context().with_cancel(kind == 1 ? Deadline::after(std::chrono::microseconds(200 + rng() % 3000))
                                                       : Deadline::never());
    if (kind == 2) cancels.push_back(stop);
    asio::co_spawn(
        asio::make_strand(io),
        [&, ctx = ctx]() -> asio::awaitable<void> {
          for (int r = 0; r < kRounds; ++r) {
            try {
              Mutex::Guard g = co_await mu.lock(ctx);
              if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
              ++counter;
              if (r % 4 == 0) co_await Sleep(std::chrono::microseconds(20));  // hold across an await
              inside.fetch_sub(1);
              locks.fetch_add(1);
            } catch (const Error& e) {
              if (is_stop(e.code())) stopped.fetch_add(1);
              else other.fetch_add(1);
              co_return;
            }
          }
        },
        asio::detached);
  }
  std::thread canceller([&] {
    for (auto& c : cancels) {
      c.request_stop(StopReason::cancelled);
      std::this_thread::sleep_for(std::chrono::microseconds(30));
    }
  });
  std::thread second([&] { io.run(); });
  std::thread third([&] { io.run(); });
  io.run();
  second.join();
  third.join();
  canceller.join();

  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(stopped.load(), 0);
  EXPECT_EQ(counter, locks.load());
  EXPECT_FALSE(mu.locked()) << "the lock leaked";
  EXPECT_EQ(mu.waiting(), 0u);
}

}  // namespace
}  // namespace cutoff
