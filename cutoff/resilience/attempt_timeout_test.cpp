#include "cutoff/resilience/attempt_timeout.hpp"

#include <gtest/gtest.h>

#include <boost/system/system_error.hpp>

#include "cutoff/core/error.hpp"
#include "cutoff/resilience/retry.hpp"
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

// What a hanging call saw when it was ended.
struct Seen {
  bool aborted = false;                      // its Asio wait was cancelled
  StopReason reason = StopReason::none;      // its context's stop reason at that moment
  Deadline deadline;                         // its context's deadline
};

auto Hang(Seen& seen) {
  return [&seen](const Context& attempt) -> asio::awaitable<int> {
    seen.deadline = attempt.deadline();
    try {
      co_await Sleep(10s);
    } catch (const boost::system::system_error&) {
      seen.aborted = true;
      seen.reason = attempt.stop_reason();
      throw;
    }
    co_return 0;
  };
}

ErrorCode CodeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return ErrorCode::internal;
}

TEST(AttemptTimeout, TheAttemptsOwnTimeoutGivesAttemptTimeout) {
  const int s = TimeScale();
  auto ctx = Context().with_timeout(5s * s);
  Seen seen;
  const auto start = SteadyClock::now();
  const ErrorCode code = CodeOf([&] {
    RunSync([&]() -> asio::awaitable<int> { co_return co_await with_attempt_timeout(ctx, 50ms * s, Hang(seen)); });
  });
  const auto took = SteadyClock::now() - start;
  EXPECT_EQ(code, ErrorCode::attempt_timeout);
  EXPECT_TRUE(Error(code, "").retryable());
  EXPECT_TRUE(seen.aborted) << "the call was cancelled, not left running";
  EXPECT_EQ(seen.reason, StopReason::deadline_exceeded);
  EXPECT_FALSE(ctx.stop_requested()) << "the caller's context is untouched";
  EXPECT_GE(took, 50ms * s);
  EXPECT_LT(took, 50ms * s + 300ms * s);
}

TEST(AttemptTimeout, TheCallersDeadlineStaysDeadlineExceeded) {
  const int s = TimeScale();
  auto ctx = Context().with_timeout(50ms * s);
  Seen seen;
  const ErrorCode code = CodeOf([&] {
    RunSync([&]() -> asio::awaitable<int> { co_return co_await with_attempt_timeout(ctx, 5s, Hang(seen)); });
  });
  EXPECT_EQ(code, ErrorCode::deadline_exceeded);
  EXPECT_TRUE(seen.aborted);
  EXPECT_EQ(seen.deadline, ctx.deadline()) << "tighten-only: the attempt never outlives its caller";
}

TEST(AttemptTimeout, TheAttemptGetsTheTighterOfTheTwo) {
  auto ctx = Context().with_timeout(10s);
  Deadline seen;
  RunSync([&]() -> asio::awaitable<void> {
    co_await with_attempt_timeout(ctx, 100ms, [&](const Context& attempt) -> asio::awaitable<void> {
      seen = attempt.deadline();
      co_return;
    });
  });
  EXPECT_LT(seen, ctx.deadline());
  EXPECT_LE(seen.remaining(), 100ms);
}

TEST(AttemptTimeout, ZeroMeansNoPerAttemptBound) {
  auto ctx = Context().with_timeout(10s);
  Deadline seen;
  RunSync([&]() -> asio::awaitable<void> {
    co_await with_attempt_timeout(ctx, Duration::zero(), [&](const Context& attempt) -> asio::awaitable<void> {
      seen = attempt.deadline();
      co_return;
    });
  });
  EXPECT_EQ(seen, ctx.deadline());
}

TEST(AttemptTimeout, OtherErrorsPassThroughUnchanged) {
  for (ErrorCode code : {ErrorCode::unavailable, ErrorCode::commit_ambiguous, ErrorCode::invalid_argument}) {
    EXPECT_EQ(CodeOf([&] {
                RunSync([&]() -> asio::awaitable<void> {
                  co_await with_attempt_timeout(Context(), 1s, [&](const Context&) -> asio::awaitable<void> {
                    throw Error(code, "x");
                    co_return;
                  });
                });
              }),
              code);
  }
}

TEST(AttemptTimeout, ATimedOutAttemptIsRetriedWithinTheDeadline) {
  const int s = TimeScale();
  auto ctx = Context().with_timeout(5s * s);
  Retry retry({.max_attempts = 3, .backoff = {.initial = 1ms, .max = 1ms, .jitter = Jitter::none}});
  int attempts = 0;
  const int v = RunSync([&]() -> asio::awaitable<int> {
    co_return co_await retry.run(ctx, [&](const Context& c) {
      return with_attempt_timeout(c, 40ms * s, [&](const Context&) -> asio::awaitable<int> {
        if (++attempts == 1) co_await Sleep(10s);  // the first attempt hangs
        co_return attempts;
      });
    });
  });
  EXPECT_EQ(v, 2);
  EXPECT_EQ(retry.stats().retries, 1u);
}

}  // namespace
}  // namespace cutoff::resilience
