#include "cutoff/resilience/fallback.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/resilience/retry.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"

namespace cutoff::resilience {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;

struct Result {
  int value = 0;
  std::optional<ErrorCode> error;
  int fallbacks = 0;
};

Result RunFallback(const Context& ctx, std::function<void()> fail,
           std::function<bool(const std::exception_ptr&)> accept = {}) {
  Result r;
  try {
    r.value = RunSync([&]() -> asio::awaitable<int> {
      co_return co_await with_fallback(
          ctx,
          [&](const Context&) -> asio::awaitable<int> {
            fail();
            co_return 1;
          },
          [&](const Context&, const std::exception_ptr&) -> asio::awaitable<int> {
            ++r.fallbacks;
            co_return 2;
          },
          std::move(accept));
    });
  } catch (const Error& e) {
    r.error = e.code();
  }
  return r;
}

TEST(Fallback, ReplacesAFailure) {
  Result r = RunFallback(Context(), [] { throw Error(ErrorCode::unavailable, "down"); });
  EXPECT_EQ(r.value, 2);
  EXPECT_EQ(r.fallbacks, 1);
  Result ok = RunFallback(Context(), [] {});
  EXPECT_EQ(ok.value, 1);
  EXPECT_EQ(ok.fallbacks, 0);
}

TEST(Fallback, ReplacesForeignExceptions) {
  Result r = RunFallback(Context(), [] { throw std::runtime_error("boom"); });
  EXPECT_EQ(r.value, 2);
}

TEST(Fallback, NeverSwallowsAStopOrCommitAmbiguous) {
  for (ErrorCode code : {ErrorCode::deadline_exceeded, ErrorCode::commit_ambiguous, ErrorCode::cancelled,
                         ErrorCode::shutdown}) {
    Result r = RunFallback(Context(), [code] { throw Error(code, "x"); });
    EXPECT_EQ(r.error, code) << to_string(code);
    EXPECT_EQ(r.fallbacks, 0) << to_string(code);
  }
}

TEST(Fallback, NotUsedOnceTheCallersContextStopped) {
  auto [ctx, stop] = Context().with_cancel();
  Result r = RunFallback(ctx, [stop = stop] {
    stop.request_stop(StopReason::cancelled);
    throw Error(ErrorCode::unavailable, "down, and the caller left meanwhile");
  });
  EXPECT_EQ(r.error, ErrorCode::unavailable);
  EXPECT_EQ(r.fallbacks, 0);
}

TEST(Fallback, AcceptChoosesWhichErrorsToReplace) {
  auto only_unavailable = [](const std::exception_ptr& e) {
    try {
      std::rethrow_exception(e);
    } catch (const Error& error) {
      return error.code() == ErrorCode::unavailable;
    } catch (...) {
      return false;
    }
  };
  EXPECT_EQ(RunFallback(Context(), [] { throw Error(ErrorCode::unavailable, ""); }, only_unavailable).value, 2);
  EXPECT_EQ(RunFallback(Context(), [] { throw Error(ErrorCode::not_found, ""); }, only_unavailable).error,
            ErrorCode::not_found);
}

TEST(Fallback, AroundARetryTheDeadlineStillSurfaces) {
  Retry retry({.max_attempts = 5, .backoff = {.initial = 1ms, .max = 1ms, .jitter = Jitter::none}});
  auto ctx = Context().with_timeout(40ms);
  int fallbacks = 0;
  std::optional<ErrorCode> error;
  try {
    RunSync([&]() -> asio::awaitable<int> {
      co_return co_await with_fallback(
          ctx,
          [&](const Context& c) {
            return retry.run(c, [](const Context& attempt) -> asio::awaitable<int> {
              co_await with_context(attempt, cutoff::test_support::Sleep(10s));
              co_return 1;
            });
          },
          [&](const Context&, const std::exception_ptr&) -> asio::awaitable<int> {
            ++fallbacks;
            co_return 2;
          });
    });
  } catch (const Error& e) {
    error = e.code();
  }
  EXPECT_EQ(error, ErrorCode::deadline_exceeded);
  EXPECT_EQ(fallbacks, 0);
}

}  // namespace
}  // namespace cutoff::resilience
