#include "cutoff/resilience/hedge.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>
#include <thread>
#include <vector>

#include "cutoff/core/asio.hpp"
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

// One attempt's life, as the callable saw it.
struct AttemptLog {
  int index = 0;
  SteadyClock::time_point started;
  bool finished = false;                 // its coroutine returned or threw
  bool aborted = false;                  // its wait was cancelled through Asio
  StopReason reason = StopReason::none;  // its context's stop reason when it ended
};

// A call whose attempt i sleeps plan[i].first and then returns plan[i].second (or throws
// the error code given instead). Logs every attempt.
struct Plan {
  struct Step {
    Duration work;
    int value = 0;
    std::optional<ErrorCode> error;
  };
  std::vector<Step> steps;
  std::vector<AttemptLog> log;

  auto callable() {
    return [this](const Context& attempt) -> asio::awaitable<int> {
      const std::size_t i = log.size();
      log.push_back({static_cast<int>(i), SteadyClock::now()});
      const Step step = i < steps.size() ? steps[i] : steps.back();
      try {
        co_await Sleep(step.work);
      } catch (const boost::system::system_error&) {
        log[i].aborted = true;
        log[i].reason = attempt.stop_reason();
        log[i].finished = true;
        throw;
      }
      log[i].reason = attempt.stop_reason();
      log[i].finished = true;
      if (step.error) throw Error(*step.error, "attempt " + std::to_string(i));
      co_return step.value;
    };
  }
};

struct Result {
  std::optional<int> value;
  std::optional<ErrorCode> error;
  std::string message;
  Duration took{};
  SteadyClock::time_point started;
  bool all_finished_on_return = false;
};

Result RunHedge(Hedge& hedge, const Context& ctx, Plan& plan) {
  Result r;
  const auto start = r.started = SteadyClock::now();
  try {
    RunSync([&]() -> asio::awaitable<void> {
      try {
        r.value = co_await hedge.run(ctx, plan.callable());
      } catch (...) {
        r.all_finished_on_return = std::all_of(plan.log.begin(), plan.log.end(), [](auto& a) { return a.finished; });
        throw;
      }
      r.all_finished_on_return = std::all_of(plan.log.begin(), plan.log.end(), [](auto& a) { return a.finished; });
    });
  } catch (const Error& e) {
    r.error = e.code();
    r.message = e.message();
  }
  r.took = SteadyClock::now() - start;
  return r;
}

TEST(Hedge, TheFirstSuccessWinsAndTheLoserIsCancelledAndAwaited) {
  const int s = TimeScale();
  observe::Registry registry;
  ResilienceMetrics metrics(registry);
  Hedge hedge({.delay = 30ms * s, .max_attempts = 2, .name = "reads", .metrics = &metrics});
  Plan plan{{{10s, 1}, {10ms * s, 2}}};
  Result r = RunHedge(hedge, Context().with_timeout(5s * s), plan);
  ASSERT_EQ(r.value, 2) << (r.error ? to_string(*r.error) : "");
  ASSERT_EQ(plan.log.size(), 2u);
  EXPECT_GE(plan.log[1].started - r.started, 30ms * s) << "the hedge waited for its delay";
  EXPECT_LT(r.took, 1s * s);
  EXPECT_TRUE(r.all_finished_on_return) << "no attempt outlives the call";
  EXPECT_TRUE(plan.log[0].aborted) << "the loser's wait was cancelled";
  EXPECT_EQ(plan.log[0].reason, StopReason::cancelled) << "and its context says why";
  EXPECT_EQ(hedge.stats().hedges, 1u);
  EXPECT_EQ(hedge.stats().cancelled, 1u);
  EXPECT_EQ(metrics.hedges.with({"reads"}).value(), 1);
}

TEST(Hedge, AFastAnswerStartsNoHedge) {
  const int s = TimeScale();
  Hedge hedge({.delay = 100ms * s, .max_attempts = 3});
  Plan plan{{{1ms, 7}}};
  Result r = RunHedge(hedge, Context(), plan);
  EXPECT_EQ(r.value, 7);
  EXPECT_EQ(plan.log.size(), 1u);
  EXPECT_EQ(hedge.stats().hedges, 0u);
}

TEST(Hedge, UpToMaxAttemptsAreStarted) {
  const int s = TimeScale();
  Hedge hedge({.delay = 20ms * s, .max_attempts = 3});
  Plan plan{{{10s, 1}, {10s, 2}, {30ms * s, 3}}};
  Result r = RunHedge(hedge, Context(), plan);
  EXPECT_EQ(r.value, 3);
  EXPECT_EQ(plan.log.size(), 3u);
  EXPECT_TRUE(plan.log[0].aborted);
  EXPECT_TRUE(plan.log[1].aborted);
  EXPECT_EQ(hedge.stats().cancelled, 2u);
}

TEST(Hedge, NoHedgeStartsPastTheDeadline) {
  const int s = TimeScale();
  Hedge hedge({.delay = 100ms * s, .max_attempts = 3});
  Plan plan{{{10s, 1}}};
  auto ctx = Context().with_timeout(50ms * s);
  Result r = RunHedge(hedge, ctx, plan);
  EXPECT_EQ(r.error, ErrorCode::deadline_exceeded);
  EXPECT_EQ(plan.log.size(), 1u) << "the hedge was due after the deadline";
  EXPECT_TRUE(plan.log[0].aborted);
  EXPECT_EQ(plan.log[0].reason, StopReason::deadline_exceeded);
  EXPECT_LT(r.took, 50ms * s + 200ms * s);
  EXPECT_TRUE(r.all_finished_on_return);
}

TEST(Hedge, NoHedgeStartsWithLessThanMinAttemptTimeLeft) {
  const int s = TimeScale();
  Hedge hedge({.delay = 50ms * s, .max_attempts = 2, .min_attempt_time = 150ms * s});
  Plan plan{{{120ms * s, 1}}};
  Result r = RunHedge(hedge, Context().with_timeout(180ms * s), plan);
  EXPECT_EQ(r.value, 1);
  EXPECT_EQ(plan.log.size(), 1u) << "at 50ms only 130ms would be left";
}

TEST(Hedge, ARetryableFailureStartsTheNextAttemptAtOnce) {
  const int s = TimeScale();
  Hedge hedge({.delay = 10s, .max_attempts = 2});
  Plan plan{{{1ms, 0, ErrorCode::unavailable}, {1ms, 9}}};
  Result r = RunHedge(hedge, Context(), plan);
  EXPECT_EQ(r.value, 9);
  EXPECT_LT(r.took, 500ms * s);
}

TEST(Hedge, ANonRetryableFailureEndsTheCallAndCancelsTheOthers) {
  const int s = TimeScale();
  Hedge hedge({.delay = 20ms * s, .max_attempts = 2});
  Plan plan{{{10s, 1}, {1ms, 0, ErrorCode::commit_ambiguous}}};
  Result r = RunHedge(hedge, Context(), plan);
  EXPECT_EQ(r.error, ErrorCode::commit_ambiguous);
  EXPECT_TRUE(plan.log[0].aborted);
  EXPECT_TRUE(r.all_finished_on_return);
}

TEST(Hedge, WhenEveryAttemptFailsTheLastErrorSurfaces) {
  Hedge hedge({.delay = 10s, .max_attempts = 3});
  Plan plan{{{1ms, 0, ErrorCode::unavailable}, {1ms, 0, ErrorCode::overloaded}, {1ms, 0, ErrorCode::unavailable}}};
  Result r = RunHedge(hedge, Context(), plan);
  EXPECT_EQ(r.error, ErrorCode::unavailable);
  EXPECT_EQ(r.message, "attempt 2");
  EXPECT_EQ(plan.log.size(), 3u);
}

TEST(Hedge, CancellingTheCallerStillAwaitsEveryAttempt) {
  const int s = TimeScale();
  Hedge hedge({.delay = 10ms * s, .max_attempts = 3});
  Plan plan{{{10s, 1}}};
  auto [ctx, stop] = Context().with_cancel();
  bool all_finished = false;
  std::optional<ErrorCode> error;
  std::thread canceller([stop = stop, s] {
    std::this_thread::sleep_for(60ms * s);
    stop.request_stop(StopReason::cancelled);
  });
  RunSync([&, ctx = ctx]() -> asio::awaitable<void> {
    // The outer with_context cancels hedge.run() through Asio when ctx stops.
    try {
      co_await with_context(ctx, hedge.run(Context(), plan.callable()));
    } catch (const Error& e) {
      error = e.code();
    }
    all_finished = std::all_of(plan.log.begin(), plan.log.end(), [](auto& a) { return a.finished; });
  });
  canceller.join();
  EXPECT_EQ(error, ErrorCode::cancelled);
  EXPECT_EQ(plan.log.size(), 3u);
  EXPECT_TRUE(all_finished) << "the hedged attempts were awaited before the caller resumed";
  for (auto& a : plan.log) EXPECT_TRUE(a.aborted);
}

TEST(Hedge, LeavesTheCallersThrowIfCancelledAsItWas) {
  Hedge hedge({.delay = 1ms, .max_attempts = 2});
  Plan ok{{{5ms, 1}}};
  Plan failing{{{1ms, 0, ErrorCode::invalid_argument}}};
  std::vector<bool> seen;
  RunSync([&]() -> asio::awaitable<void> {
    co_await hedge.run(Context(), ok.callable());
    seen.push_back(co_await asio::this_coro::throw_if_cancelled());
    try {
      co_await hedge.run(Context(), failing.callable());
    } catch (const Error&) {
    }
    seen.push_back(co_await asio::this_coro::throw_if_cancelled());
    co_await asio::this_coro::throw_if_cancelled(false);
    co_await hedge.run(Context(), ok.callable());
    seen.push_back(co_await asio::this_coro::throw_if_cancelled());
  });
  EXPECT_EQ(seen, (std::vector<bool>{true, true, false}));
}

TEST(Hedge, VoidCalls) {
  Hedge hedge({.delay = 10s});
  int calls = 0;
  RunSync([&]() -> asio::awaitable<void> {
    co_await hedge.run(Context(), [&](const Context&) -> asio::awaitable<void> {
      ++calls;
      co_return;
    });
  });
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace cutoff::resilience
