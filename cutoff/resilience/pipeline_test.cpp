#include "cutoff/resilience/pipeline.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>

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

const BackoffOptions kQuick{.initial = 1ms, .max = 1ms, .jitter = Jitter::none};

std::optional<ErrorCode> CodeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return std::nullopt;
}

TEST(Pipeline, NothingConfiguredIsJustTheGate) {
  Pipeline p;
  EXPECT_EQ(RunSync([&]() -> asio::awaitable<int> {
              co_return co_await p.run(Context(), [](const Context&) -> asio::awaitable<int> { co_return 3; });
            }),
            3);
  int calls = 0;
  RunSync([&]() -> asio::awaitable<void> {
    co_await p.run(Context(), [&](const Context&) -> asio::awaitable<void> {
      ++calls;
      co_return;
    });
  });
  EXPECT_EQ(calls, 1);
}

TEST(Pipeline, AStoppedRequestTakesNoSlotNoProbeAndNoBudget) {
  ManualClock clock;
  Bulkhead bh({.max_concurrent = 1});
  CircuitBreaker br({.clock = &clock});
  RetryBudget budget({.clock = &clock});
  Pipeline p({.bulkhead = &bh, .breaker = &br, .retry = RetryOptions{.budget = &budget}});
  auto [ctx, stop] = Context().with_cancel();
  stop.request_stop(StopReason::cancelled);
  int calls = 0;
  EXPECT_EQ(CodeOf([&, ctx = ctx] {
              RunSync([&]() -> asio::awaitable<void> {
                co_await p.run(ctx, [&](const Context&) -> asio::awaitable<void> {
                  ++calls;
                  co_return;
                });
              });
            }),
            ErrorCode::cancelled);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(bh.stats().admitted, 0u);
  EXPECT_EQ(br.stats().successes + br.stats().failures + br.stats().ignored, 0u);
  EXPECT_EQ(budget.stats().deposits, 0u);
}

// Bulkhead outside retry: a caller that times out in the queue never reaches the retry budget.
TEST(Pipeline, AQueuedCallerThatTimesOutSpendsNoRetryBudget) {
  const int s = TimeScale();
  ManualClock clock;
  Bulkhead bh({.max_concurrent = 1, .max_queue = 4});
  RetryBudget budget({.ratio = 0.1, .min_per_second = 0, .clock = &clock});
  Pipeline p({.bulkhead = &bh, .retry = RetryOptions{.max_attempts = 3, .backoff = kQuick, .budget = &budget}});
  int calls = 0;
  std::optional<ErrorCode> queued_error;
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    auto holder = bh.try_acquire();
    asio::co_spawn(ex, [&]() -> asio::awaitable<void> {
      try {
        co_await p.run(Context().with_timeout(40ms * s), [&](const Context&) -> asio::awaitable<void> {
          ++calls;
          co_return;
        });
      } catch (const Error& e) {
        queued_error = e.code();
      }
    }, asio::detached);
    co_await Sleep(100ms * s);
  });
  EXPECT_EQ(queued_error, ErrorCode::deadline_exceeded);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(budget.stats().deposits, 0u);
  EXPECT_EQ(budget.stats().withdrawals, 0u);
  EXPECT_EQ(p.retry()->stats().calls, 0u);
  EXPECT_EQ(bh.stats().stopped_waiting, 1u);
}

// Breaker outside retry: an open breaker answers at once; nothing is retried against it.
TEST(Pipeline, AnOpenBreakerDoesNotRetrySpin) {
  ManualClock clock;
  CircuitBreaker br({.consecutive_failures = 1, .failure_rate = 0, .open_for = 1h, .clock = &clock});
  RetryBudget budget({.clock = &clock});
  Pipeline p({.breaker = &br,
              .retry = RetryOptions{.max_attempts = 5, .backoff = {.initial = 50ms, .max = 50ms}, .budget = &budget}});
  int calls = 0;
  auto failing = [&](const Context&) -> asio::awaitable<void> {
    ++calls;
    throw Error(ErrorCode::unavailable, "down");
    co_return;
  };
  // The first call retries inside (the breaker sees one failed call) and opens the breaker.
  EXPECT_EQ(CodeOf([&] { RunSync([&]() -> asio::awaitable<void> { co_await p.run(Context(), failing); }); }),
            ErrorCode::unavailable);
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(br.state(), BreakerState::open);
  const auto deposits = budget.stats().deposits;
  const auto start = SteadyClock::now();
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(CodeOf([&] { RunSync([&]() -> asio::awaitable<void> { co_await p.run(Context(), failing); }); }),
              ErrorCode::unavailable);
  }
  EXPECT_LT(SteadyClock::now() - start, 50ms * TimeScale()) << "no backoff was slept";
  EXPECT_EQ(calls, 5) << "the dependency was not called while open";
  EXPECT_EQ(budget.stats().deposits, deposits);
  EXPECT_EQ(br.stats().rejected, 10u);
  EXPECT_EQ(p.retry()->stats().retries, 4u);
}

TEST(Pipeline, AttemptTimeoutsAreRetriedAndTheBreakerJudgesTheWholeCall) {
  const int s = TimeScale();
  ManualClock clock;
  CircuitBreaker br({.consecutive_failures = 2, .failure_rate = 0, .clock = &clock});
  observe::Registry registry;
  ResilienceMetrics metrics(registry);
  Pipeline p({.breaker = &br,
              .retry = RetryOptions{.max_attempts = 3, .backoff = kQuick},
              .attempt_timeout = 30ms * s,
              .name = "stock",
              .metrics = &metrics});
  int calls = 0;
  std::vector<StopReason> reasons;
  const auto start = SteadyClock::now();
  EXPECT_EQ(CodeOf([&] {
              RunSync([&]() -> asio::awaitable<void> {
                co_await p.run(Context().with_timeout(5s * s), [&](const Context& attempt) -> asio::awaitable<void> {
                  ++calls;
                  try {
                    co_await Sleep(10s);
                  } catch (...) {
                    reasons.push_back(attempt.stop_reason());
                    throw;
                  }
                });
              });
            }),
            ErrorCode::attempt_timeout);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(reasons, std::vector<StopReason>(3, StopReason::deadline_exceeded)) << "each attempt was cut";
  EXPECT_LT(SteadyClock::now() - start, 3 * 30ms * s + 500ms * s);
  EXPECT_EQ(br.stats().failures, 1u) << "three timed-out attempts are one failed call";
  EXPECT_EQ(br.state(), BreakerState::closed);
  EXPECT_EQ(metrics.attempt_timeouts.with({"stock"}).value(), 3);
  EXPECT_EQ(metrics.retries.with({"stock"}).value(), 2) << "the retry took the pipeline's name";
}

TEST(Pipeline, TheDeadlineDuringAnAttemptIsFinalAndNotABreakerFailure) {
  const int s = TimeScale();
  ManualClock clock;
  CircuitBreaker br({.consecutive_failures = 1, .failure_rate = 0, .clock = &clock});
  Pipeline p({.breaker = &br, .retry = RetryOptions{.max_attempts = 5, .backoff = kQuick}, .attempt_timeout = 5s});
  int calls = 0;
  EXPECT_EQ(CodeOf([&] {
              RunSync([&]() -> asio::awaitable<void> {
                co_await p.run(Context().with_timeout(50ms * s), [&](const Context&) -> asio::awaitable<void> {
                  ++calls;
                  co_await Sleep(10s);
                });
              });
            }),
            ErrorCode::deadline_exceeded);
  EXPECT_EQ(calls, 1) << "deadline_exceeded is never retried";
  EXPECT_EQ(br.state(), BreakerState::closed);
  EXPECT_EQ(br.stats().failures, 0u);
  EXPECT_EQ(br.stats().ignored, 1u);
}

// An attempt that ends itself at its context's stop (as cutoff's clients do) is awaited
// directly: the same attempt timeouts, retries and final deadline as when raced against it.
TEST(Pipeline, AttemptsThatHonourTheirContextAreCutAndRetriedTheSameWay) {
  const int s = TimeScale();
  Pipeline p({.retry = RetryOptions{.max_attempts = 3, .backoff = kQuick}, .attempt_timeout = 30ms * s});
  PipelineCall honoured;
  honoured.honours_context = true;
  int calls = 0;
  std::vector<StopReason> reasons;
  const auto honouring = [&](const Context& attempt) -> asio::awaitable<void> {
    ++calls;
    try {
      co_await with_context(attempt, Sleep(10s));
    } catch (...) {
      reasons.push_back(attempt.stop_reason());
      throw;
    }
  };
  const auto start = SteadyClock::now();
  EXPECT_EQ(CodeOf([&] {
              RunSync([&]() -> asio::awaitable<void> {
                const Context ctx = Context().with_timeout(5s * s);
                co_await p.run(ctx, honouring, honoured);
              });
            }),
            ErrorCode::attempt_timeout);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(reasons, std::vector<StopReason>(3, StopReason::deadline_exceeded));
  EXPECT_LT(SteadyClock::now() - start, 3 * 30ms * s + 500ms * s);

  Pipeline whole({.retry = RetryOptions{.max_attempts = 5, .backoff = kQuick}});
  calls = 0;
  EXPECT_EQ(CodeOf([&] {
              RunSync([&]() -> asio::awaitable<void> {
                const Context ctx = Context().with_timeout(50ms * s);
                co_await whole.run(ctx, honouring, honoured);
              });
            }),
            ErrorCode::deadline_exceeded);
  EXPECT_EQ(calls, 1) << "the caller's deadline is final";
}

TEST(Pipeline, OneSlotServesTheWholeRetrySequence) {
  Bulkhead bh({.max_concurrent = 1, .max_queue = 0});
  Pipeline p({.bulkhead = &bh, .retry = RetryOptions{.max_attempts = 3, .backoff = kQuick}});
  int calls = 0;
  const int v = RunSync([&]() -> asio::awaitable<int> {
    co_return co_await p.run(Context(), [&](const Context&) -> asio::awaitable<int> {
      EXPECT_EQ(bh.stats().in_use, 1u);
      if (++calls < 3) throw Error(ErrorCode::overloaded, "busy");
      co_return calls;
    });
  });
  EXPECT_EQ(v, 3);
  EXPECT_EQ(bh.stats().admitted, 1u) << "retries did not queue again";
  EXPECT_EQ(bh.stats().in_use, 0u);
}

TEST(Pipeline, HedgedAttemptsEachGetTheirOwnTimeout) {
  const int s = TimeScale();
  Pipeline p({.retry = RetryOptions{.max_attempts = 2, .backoff = kQuick},
              .hedge = HedgeOptions{.delay = 20ms * s, .max_attempts = 2},
              .attempt_timeout = 60ms * s});
  int calls = 0;
  std::vector<Deadline> deadlines;
  const int v = RunSync([&]() -> asio::awaitable<int> {
    co_return co_await p.run(Context().with_timeout(5s * s), [&](const Context& attempt) -> asio::awaitable<int> {
      const int n = ++calls;
      deadlines.push_back(attempt.deadline());
      if (n < 4) co_await Sleep(10s);  // both hedges of the first try time out
      co_return n;
    });
  });
  EXPECT_EQ(v, 4);
  ASSERT_GE(deadlines.size(), 2u);
  EXPECT_GT(deadlines[1], deadlines[0]) << "the hedge's timeout starts when the hedge does";
  EXPECT_EQ(p.hedge()->stats().hedges, 2u);
  EXPECT_EQ(p.retry()->stats().retries, 1u);
}

TEST(Pipeline, MetricsAreExposed) {
  observe::Registry registry;
  ResilienceMetrics metrics(registry);
  Bulkhead bh({.max_concurrent = 2, .name = "inv", .metrics = &metrics});
  Pipeline p({.bulkhead = &bh, .retry = RetryOptions{.max_attempts = 2, .backoff = kQuick}, .name = "inv",
              .metrics = &metrics});
  int calls = 0;
  RunSync([&]() -> asio::awaitable<void> {
    co_await p.run(Context(), [&](const Context&) -> asio::awaitable<void> {
      if (++calls == 1) throw Error(ErrorCode::unavailable, "");
      co_return;
    });
  });
  const std::string text = registry.expose();
  EXPECT_NE(text.find("cutoff_resilience_retries_total{name=\"inv\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("cutoff_resilience_bulkhead_in_use{name=\"inv\"} 0"), std::string::npos) << text;
}

}  // namespace
}  // namespace cutoff::resilience
