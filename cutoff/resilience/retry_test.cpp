#include "cutoff/resilience/retry.hpp"

#include <gtest/gtest.h>

#include <boost/asio/this_coro.hpp>
#include <stdexcept>
#include <string>
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

// Runs `retry` over a call that fails with `code` ("failure N" for attempt N) until attempt
// `succeed_at` (never when 0), taking `work` per attempt. Returns the error code thrown, or
// nullopt on success; `attempts` and `message` report what happened.
struct Outcome {
  std::optional<ErrorCode> code;
  std::string message;
  int attempts = 0;
  Duration took{};
};

Outcome RunScript(Retry& retry, const Context& ctx, ErrorCode code, int succeed_at = 0, Duration work = {}) {
  Outcome out;
  const auto start = SteadyClock::now();
  try {
    RunSync([&]() -> asio::awaitable<void> {
      int v = co_await retry.run(ctx, [&](const Context&) -> asio::awaitable<int> {
        const int n = ++out.attempts;
        if (work > Duration::zero()) co_await Sleep(work);
        if (n == succeed_at) co_return n;
        throw Error(code, "failure " + std::to_string(n));
      });
      EXPECT_EQ(v, succeed_at);
    });
  } catch (const Error& e) {
    out.code = e.code();
    out.message = e.message();
  }
  out.took = SteadyClock::now() - start;
  return out;
}

RetryOptions Fast(int max_attempts) {
  return {.max_attempts = max_attempts, .backoff = {.initial = 1ms, .max = 2ms, .jitter = Jitter::none}};
}

TEST(Retry, RetriesARetryableErrorUntilItSucceeds) {
  Retry retry(Fast(5));
  Outcome out = RunScript(retry, Context(), ErrorCode::unavailable, 3);
  EXPECT_FALSE(out.code);
  EXPECT_EQ(out.attempts, 3);
  EXPECT_EQ(retry.stats().retries, 2u);
  EXPECT_EQ(retry.stats().calls, 1u);
}

TEST(Retry, MaxAttemptsSurfacesTheLastError) {
  Retry retry(Fast(3));
  Outcome out = RunScript(retry, Context(), ErrorCode::overloaded);
  EXPECT_EQ(out.code, ErrorCode::overloaded);
  EXPECT_EQ(out.message, "failure 3");
  EXPECT_EQ(out.attempts, 3);
  EXPECT_EQ(retry.stats().abandoned_attempts, 1u);
}

TEST(Retry, DefaultPredicateRetriesOnlyTransientErrors) {
  for (ErrorCode code : {ErrorCode::attempt_timeout, ErrorCode::unavailable, ErrorCode::overloaded}) {
    Retry retry(Fast(2));
    EXPECT_EQ(RunScript(retry, Context(), code).attempts, 2) << to_string(code);
  }
  for (ErrorCode code : {ErrorCode::idempotency_conflict, ErrorCode::invalid_argument, ErrorCode::not_found,
                         ErrorCode::internal}) {
    Retry retry(Fast(5));
    Outcome out = RunScript(retry, Context(), code);
    EXPECT_EQ(out.attempts, 1) << to_string(code);
    EXPECT_EQ(out.code, code);
  }
}

TEST(Retry, StopsAndCommitAmbiguousAreNeverRetriedWhateverThePredicate) {
  for (ErrorCode code : {ErrorCode::deadline_exceeded, ErrorCode::commit_ambiguous, ErrorCode::cancelled,
                         ErrorCode::shutdown}) {
    RetryOptions o = Fast(5);
    o.retryable = [](const Error&) { return true; };
    Retry retry(o);
    Outcome out = RunScript(retry, Context(), code);
    EXPECT_EQ(out.attempts, 1) << to_string(code);
    EXPECT_EQ(out.code, code);
    EXPECT_EQ(retry.stats().retries, 0u);
  }
}

TEST(Retry, CustomPredicateDecides) {
  RetryOptions o = Fast(4);
  o.retryable = [](const Error& e) { return e.code() == ErrorCode::not_found; };
  Retry retry(o);
  EXPECT_EQ(RunScript(retry, Context(), ErrorCode::not_found).attempts, 4);
  EXPECT_EQ(RunScript(retry, Context(), ErrorCode::unavailable).attempts, 1);
}

TEST(Retry, ForeignExceptionsAreNotRetried) {
  Retry retry(Fast(5));
  int attempts = 0;
  EXPECT_THROW(RunSync([&]() -> asio::awaitable<void> {
                 co_await retry.run(Context(), [&](const Context&) -> asio::awaitable<void> {
                   ++attempts;
                   throw std::runtime_error("boom");
                   co_return;
                 });
               }),
               std::runtime_error);
  EXPECT_EQ(attempts, 1);
}

// The rule that motivates the module: a backoff that would end after the deadline is not
// slept; the caller gets the real error at once instead of deadline_exceeded later.
TEST(Retry, ABackoffThatWouldOutliveTheDeadlineIsNotTaken) {
  const int s = TimeScale();
  Retry retry({.max_attempts = 10, .backoff = {.initial = 40ms * s, .max = 10s, .multiplier = 4, .jitter = Jitter::none}});
  auto ctx = Context().with_timeout(150ms * s);
  // Attempt 1 fails at ~0, sleeps 40ms; attempt 2 fails at ~40ms; the next backoff (160ms)
  // would end past the deadline (150ms).
  Outcome out = RunScript(retry, ctx, ErrorCode::unavailable);
  EXPECT_EQ(out.code, ErrorCode::unavailable) << "the last real error, not deadline_exceeded";
  EXPECT_EQ(out.message, "failure 2");
  EXPECT_EQ(out.attempts, 2);
  EXPECT_LT(out.took, 150ms * s) << "returned before the deadline instead of sleeping into it";
  EXPECT_GE(out.took, 40ms * s);
  EXPECT_FALSE(ctx.stop_requested());
  EXPECT_EQ(retry.stats().abandoned_deadline, 1u);
}

TEST(Retry, NeverSleepsPastTheDeadlineWithJitter) {
  const int s = TimeScale();
  // Many seeds, randomised delays: no run may end after the deadline, and none may report
  // deadline_exceeded (every attempt fails on its own, quickly).
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    Retry retry({.max_attempts = 100,
                 .backoff = {.initial = 5ms * s, .max = 60ms * s, .jitter = Jitter::decorrelated},
                 .seed = seed});
    auto ctx = Context().with_timeout(100ms * s);
    const auto deadline = ctx.deadline().time_point();
    Outcome out = RunScript(retry, ctx, ErrorCode::attempt_timeout);
    EXPECT_EQ(out.code, ErrorCode::attempt_timeout) << "seed " << seed;
    EXPECT_LE(SteadyClock::now(), deadline + 20ms * s) << "seed " << seed;
  }
}

TEST(Retry, AnAttemptThatCannotFitIsSkipped) {
  const int s = TimeScale();
  Retry retry({.max_attempts = 10,
               .backoff = {.initial = 1ms, .max = 1ms, .jitter = Jitter::none},
               .min_attempt_time = 100ms * s});
  auto ctx = Context().with_timeout(200ms * s);
  // Each attempt works 60ms then fails: after attempt 2 (~120ms) less than 100ms is left.
  Outcome out = RunScript(retry, ctx, ErrorCode::unavailable, 0, 60ms * s);
  EXPECT_EQ(out.code, ErrorCode::unavailable);
  EXPECT_EQ(out.attempts, 2);
  EXPECT_EQ(out.message, "failure 2");
  EXPECT_LT(out.took, 200ms * s);
}

// Attempts that fail `overloaded` with the server's pushback `wait` until attempt `succeed_at`.
Outcome RunPushback(Retry& retry, const Context& ctx, Duration wait, int succeed_at = 0) {
  Outcome out;
  const auto start = SteadyClock::now();
  try {
    RunSync([&]() -> asio::awaitable<void> {
      co_await retry.run(ctx, [&](const Context&) -> asio::awaitable<int> {
        const int n = ++out.attempts;
        if (n == succeed_at) co_return n;
        Error e(ErrorCode::overloaded, "failure " + std::to_string(n));
        e.set_retry_after(wait);
        throw e;
      });
    });
  } catch (const Error& e) {
    out.code = e.code();
    out.message = e.message();
  }
  out.took = SteadyClock::now() - start;
  return out;
}

TEST(Retry, TheServersPushbackLengthensTheBackoff) {
  const int s = TimeScale();
  Retry retry(Fast(3));
  Outcome out = RunPushback(retry, Context(), 80ms * s, 2);
  EXPECT_FALSE(out.code);
  EXPECT_EQ(out.attempts, 2);
  EXPECT_GE(out.took, 80ms * s) << "the retry went before the server's Retry-After";
}

TEST(Retry, APushbackThatOutlivesTheBudgetEndsTheCallNow) {
  const int s = TimeScale();
  Retry retry(Fast(3));
  Outcome out = RunPushback(retry, Context().with_timeout(200ms * s), 500ms * s, 2);
  EXPECT_EQ(out.code, ErrorCode::overloaded) << "the server's answer, not deadline_exceeded";
  EXPECT_EQ(out.attempts, 1);
  EXPECT_LT(out.took, 100ms * s);
  EXPECT_EQ(retry.stats().abandoned_deadline, 1u);
}

TEST(Retry, AServerThatAsksNotToBeRetriedIsNot) {
  observe::Registry registry;
  ResilienceMetrics metrics(registry);
  RetryOptions options = Fast(3);
  options.max_pushback = 1s;
  options.metrics = &metrics;
  Retry retry(options);
  EXPECT_EQ(RunPushback(retry, Context(), Error::kDoNotRetry, 2).attempts, 1);
  EXPECT_EQ(RunPushback(retry, Context(), 2s, 2).attempts, 1) << "longer than max_pushback";
  EXPECT_EQ(RunPushback(retry, Context(), 1ms, 2).attempts, 2);
  EXPECT_EQ(retry.stats().abandoned_pushback, 2u);
  EXPECT_NE(registry.expose().find("cutoff_resilience_retries_abandoned_total{name=\"default\",reason=\"pushback\"} 2"),
            std::string::npos)
      << registry.expose();
}

TEST(Retry, AStopDuringTheBackoffEndsTheCallAtOnce) {
  const int s = TimeScale();
  Retry retry({.max_attempts = 3, .backoff = {.initial = 10s, .max = 10s, .jitter = Jitter::none}});
  auto [ctx, stop] = Context().with_cancel();
  std::thread canceller([stop = stop, s] {
    std::this_thread::sleep_for(50ms * s);
    stop.request_stop(StopReason::cancelled);
  });
  Outcome out = RunScript(retry, ctx, ErrorCode::unavailable);
  canceller.join();
  EXPECT_EQ(out.code, ErrorCode::cancelled);
  EXPECT_EQ(out.attempts, 1);
  EXPECT_LT(out.took, 50ms * s + 500ms * s);
}

TEST(Retry, AlreadyStoppedContextMakesNoAttempt) {
  RetryBudget budget({.ratio = 0.1});
  RetryOptions o = Fast(3);
  o.budget = &budget;
  Retry retry(o);
  Outcome out = RunScript(retry, Context().with_timeout(-1ms), ErrorCode::unavailable);
  EXPECT_EQ(out.code, ErrorCode::deadline_exceeded);
  EXPECT_EQ(out.attempts, 0);
  EXPECT_EQ(budget.stats().deposits, 0u);
}

// Under sustained failure the budget, not max_attempts, bounds the extra load.
TEST(Retry, TheBudgetBoundsRetriesUnderSustainedFailure) {
  ManualClock clock;  // the budget's window never moves: nothing expires during the test
  RetryBudget budget({.ratio = 0.1, .min_per_second = 1, .window = 10s, .clock = &clock});
  observe::Registry registry;
  ResilienceMetrics metrics(registry);
  Retry retry({.max_attempts = 3,
               .backoff = {.initial = Duration::zero(), .max = Duration::zero(), .jitter = Jitter::none},
               .budget = &budget,
               .name = "flaky",
               .metrics = &metrics});
  int attempts = 0;
  int errors = 0;
  RunSync([&]() -> asio::awaitable<void> {
    for (int call = 0; call < 1000; ++call) {
      try {
        co_await retry.run(Context(), [&](const Context&) -> asio::awaitable<void> {
          ++attempts;
          throw Error(ErrorCode::unavailable, "down");
          co_return;
        });
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::unavailable);  // exhaustion surfaces the real error
        ++errors;
      }
    }
  });
  const int retries = attempts - 1000;
  EXPECT_EQ(errors, 1000);
  // 1000 calls * 0.1 + a reserve of 1/s * 10s; without a budget it would be 2000.
  EXPECT_LE(retries, 110);
  EXPECT_GE(retries, 100);
  EXPECT_EQ(retry.stats().retries, static_cast<std::uint64_t>(retries));
  EXPECT_GT(retry.stats().abandoned_budget, 800u);
  EXPECT_EQ(metrics.retries.with({"flaky"}).value(), retries);
  EXPECT_EQ(metrics.retries_abandoned.with({"flaky", "budget"}).value(),
            static_cast<double>(retry.stats().abandoned_budget));
}

TEST(Retry, ARetryTheDeadlineRefusesSpendsNoBudget) {
  ManualClock clock;
  RetryBudget budget({.ratio = 0, .min_per_second = 1, .window = 10s, .clock = &clock});
  Retry retry({.max_attempts = 5, .backoff = {.initial = 1s, .max = 1s, .jitter = Jitter::none}, .budget = &budget});
  Outcome out = RunScript(retry, Context().with_timeout(200ms), ErrorCode::unavailable);
  EXPECT_EQ(out.code, ErrorCode::unavailable);
  EXPECT_EQ(out.attempts, 1);
  EXPECT_EQ(budget.stats().withdrawals, 0u);
  EXPECT_EQ(budget.stats().refused, 0u);
}

TEST(Retry, ConcurrentCallsShareOneRetry) {
  Retry retry(Fast(3));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (!RunScript(retry, Context(), ErrorCode::unavailable, 2).code) ok.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 100);
  EXPECT_EQ(retry.stats().retries, 100u);
}

}  // namespace
}  // namespace cutoff::resilience
