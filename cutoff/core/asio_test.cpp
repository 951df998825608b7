#include "cutoff/core/asio.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/use_future.hpp>
#include <thread>

#include "tests/support/time_scale.hpp"

namespace cutoff {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

asio::awaitable<int> SleepThenReturn(std::chrono::milliseconds d, int value) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
  co_return value;
}

// Runs `aw` on a fresh io_context and returns its result (rethrowing its exception).
template <typename T>
T RunIo(asio::awaitable<T> aw) {
  asio::io_context io;
  auto fut = asio::co_spawn(io, std::move(aw), asio::use_future);
  io.run();
  return fut.get();
}

struct BranchOutcome {
  int value = -1;
  StopReason stopped = StopReason::none;
  SteadyClock::time_point ended;
};

asio::awaitable<BranchOutcome> Branch(Context ctx, std::chrono::milliseconds work, int value) {
  BranchOutcome out;
  try {
    out.value = co_await with_context(ctx, SleepThenReturn(work, value));
  } catch (const Error& e) {
    out.stopped = e.stop_reason();
  }
  out.ended = SteadyClock::now();
  co_return out;
}

TEST(AsioBridge, ThreeBranchesDeadlineCutsOnlyTheSlowOne) {
  // The fast branches must finish well inside the deadline, also in instrumented builds
  // (CUTOFF_TEST_TIME_SCALE): the deadline and the bounds grow with the scale, the branches'
  // own times do not.
  const int scale = cutoff::test_support::TimeScale();
  const auto start = SteadyClock::now();
  auto ctx = Context::background().with_timeout(50ms * scale);
  const auto deadline = ctx.deadline().time_point();
  auto results = RunIo([&]() -> asio::awaitable<std::vector<BranchOutcome>> {
    auto ex = co_await asio::this_coro::executor;
    std::vector<decltype(asio::co_spawn(ex, Branch(ctx, 1ms, 0), asio::deferred))> ops;
    ops.push_back(asio::co_spawn(ex, Branch(ctx, 5ms, 1), asio::deferred));
    ops.push_back(asio::co_spawn(ex, Branch(ctx, 15ms, 2), asio::deferred));
    ops.push_back(asio::co_spawn(ex, Branch(ctx, 10s, 3), asio::deferred));
    auto [order, excs, outs] =
        co_await asio::experimental::make_parallel_group(std::move(ops)).async_wait(
            asio::experimental::wait_for_all(), asio::use_awaitable);
    for (auto& e : excs) {
      if (e) std::rethrow_exception(e);
    }
    co_return outs;
  }());
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].value, 1);
  EXPECT_EQ(results[1].value, 2);
  EXPECT_EQ(results[0].stopped, StopReason::none);
  EXPECT_EQ(results[2].value, -1);
  EXPECT_EQ(results[2].stopped, StopReason::deadline_exceeded);
  const auto overshoot = results[2].ended - deadline;
  EXPECT_GE(results[2].ended, deadline);
  EXPECT_LT(overshoot, 25ms * scale) << "slow branch stopped "
                             << std::chrono::duration<double, std::milli>(overshoot).count()
                             << "ms after the deadline";
  EXPECT_LT(SteadyClock::now() - start, 2s * scale);
}

TEST(AsioBridge, ExpiredContextNeverStartsTheWork) {
  auto ctx = Context::background().with_timeout(0ms);
  bool started = false;
  auto work = [&]() -> asio::awaitable<int> {
    started = true;
    co_return 1;
  };
  try {
    RunIo(with_context(ctx, work()));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::deadline_exceeded);
  }
  EXPECT_FALSE(started);
}

TEST(AsioBridge, CancelFromAnotherThreadCarriesTheReason) {
  auto [ctx, source] = Context::background().with_request_id("r-1").with_cancel();
  std::thread canceller([src = source] {
    std::this_thread::sleep_for(20ms);
    src.request_stop(StopReason::cancelled);
  });
  const auto start = SteadyClock::now();
  try {
    RunIo(with_context(ctx, SleepThenReturn(10s, 1)));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::cancelled);
    EXPECT_EQ(e.request_id(), "r-1");
  }
  EXPECT_LT(SteadyClock::now() - start, 2s);
  canceller.join();
}

TEST(AsioBridge, UnboundContextJustRunsTheWork) {
  EXPECT_EQ(RunIo(with_context(Context(), SleepThenReturn(1ms, 7))), 7);
}

TEST(AsioBridge, FinishedWorkIsNotAffectedByALaterStop) {
  auto [ctx, source] = Context::background().with_cancel();
  EXPECT_EQ(RunIo(with_context(ctx, SleepThenReturn(1ms, 3))), 3);
  source.request_stop();
}

TEST(AsioBridge, WorksOnSingleOperationsAndVoid) {
  auto ctx = Context::background().with_timeout(20ms);
  auto outcome = RunIo([&]() -> asio::awaitable<StopReason> {
    asio::steady_timer t(co_await asio::this_coro::executor, 10s);
    try {
      co_await with_context(ctx, t.async_wait(asio::use_awaitable));
    } catch (const Error& e) {
      co_return e.stop_reason();
    }
    co_return StopReason::none;
  }());
  EXPECT_EQ(outcome, StopReason::deadline_exceeded);
}

asio::awaitable<int> FailAfter(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
  throw std::runtime_error("the work failed");
}

TEST(AsioBridge, FailingWorkThrowsAtOnceWithoutWaitingForTheStop) {
  auto [ctx, source] = Context::background().with_cancel();  // never stopped
  for (auto d : {0ms, 5ms}) {
    const auto start = SteadyClock::now();
    EXPECT_THROW(
        {
          try {
            RunIo(with_context(ctx, FailAfter(d)));
          } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "the work failed");
            throw;
          }
        },
        std::runtime_error);
    EXPECT_LT(SteadyClock::now() - start, 2s);
  }
  // Void work too.
  EXPECT_THROW(RunIo(with_context(ctx, [&]() -> asio::awaitable<void> {
                 co_await FailAfter(1ms);
               }())),
               std::runtime_error);
}

TEST(AsioBridge, OuterCancellationStillReachesInnerWork) {
  using namespace asio::experimental::awaitable_operators;
  auto ctx = Context::background().with_timeout(10s);
  const auto start = SteadyClock::now();
  auto r = RunIo([&]() -> asio::awaitable<int> {
    auto v = co_await (with_context(ctx, SleepThenReturn(10s, 1)) || SleepThenReturn(10ms, 2));
    co_return v.index() == 1 ? std::get<1>(v) : std::get<0>(v);
  }());
  EXPECT_EQ(r, 2);
  EXPECT_LT(SteadyClock::now() - start, 2s);
}

TEST(AsioBridge, AsyncWaitStopReportsTheReason) {
  auto [ctx, source] = Context::background().with_cancel();
  asio::io_context io;
  StopReason seen = StopReason::none;
  async_wait_stop(ctx, asio::bind_executor(io, [&](boost::system::error_code ec, StopReason r) {
    EXPECT_FALSE(ec);
    seen = r;
  }));
  std::thread stopper([src = source] {
    std::this_thread::sleep_for(5ms);
    src.request_stop(StopReason::shutdown);
  });
  io.run_for(5s);  // returns once the wait completed: it holds the io_context's work until then
  stopper.join();
  EXPECT_EQ(seen, StopReason::shutdown);
}

TEST(AsioBridge, AsyncWaitStopIsCancellable) {
  auto ctx = Context::background().with_timeout(10s);
  asio::io_context io;
  asio::cancellation_signal signal;
  boost::system::error_code seen;
  async_wait_stop(ctx, asio::bind_cancellation_slot(signal.slot(), asio::bind_executor(io, [&](boost::system::error_code ec, StopReason) {
    seen = ec;
  })));
  asio::post(io, [&] { signal.emit(asio::cancellation_type::terminal); });
  io.run_for(5s);
  EXPECT_EQ(seen, asio::error::operation_aborted);
}

TEST(AsioBridge, StopSignalAbortsABoundOperation) {
  asio::io_context io;
  auto ctx = Context::background().with_timeout(20ms);
  boost::system::error_code result;
  bool done = false;
  auto timer = std::make_unique<asio::steady_timer>(io, 10s);
  auto stop = std::make_unique<StopSignal<asio::io_context::executor_type>>(ctx, io.get_executor());
  timer->async_wait(stop->bind([&](boost::system::error_code ec) {
    result = ec;
    done = true;
  }));
  const auto start = SteadyClock::now();
  io.run_for(5s);
  EXPECT_TRUE(done);
  EXPECT_EQ(result, asio::error::operation_aborted);
  EXPECT_LT(SteadyClock::now() - start, 2s);
  EXPECT_EQ(ctx.stop_reason(), StopReason::deadline_exceeded);
}

}  // namespace
}  // namespace cutoff
