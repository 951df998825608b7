// Retry: try a failed call again, within the caller's deadline and a shared retry budget.
//
//   cutoff::resilience::RetryBudget budget({.ratio = 0.1});
//   cutoff::resilience::Retry retry({.max_attempts = 3,
//                                    .backoff = {.initial = 20ms, .max = 500ms},
//                                    .min_attempt_time = 30ms,
//                                    .budget = &budget});
//   Quote q = co_await retry.run(ctx, [&](const cutoff::Context& c) { return get_quote(c, sku); });
//
// After a failed attempt the next one is taken only when all of these hold; otherwise the
// attempt's own error (the last real error) surfaces:
//  - the error is a cutoff::Error, is not a stop or commit_ambiguous (never retried, whatever
//    the predicate says), and `retryable` accepts it (default: attempt_timeout, unavailable,
//    overloaded);
//  - fewer than `max_attempts` attempts were made;
//  - the failing server did not ask not to be retried (Error::retry_after() is kDoNotRetry, or
//    longer than `max_pushback`);
//  - the backoff ends before the deadline, and what is left after it is at least
//    `min_attempt_time` (an attempt that cannot fit is not started). When the server said how
//    long to wait (Error::retry_after(): Retry-After, grpc-retry-pushback-ms), the backoff is
//    at least that long, so a pushback longer than the budget ends the call now. A sleep that would
//    outlive the deadline is pointless: the caller would get deadline_exceeded after waiting,
//    instead of the real error now, and a slot upstream would be held for nothing;
//  - the retry budget, if any, has a token.
// The first attempt always runs when the context is not stopped. A cancel or shutdown
// during the backoff sleep ends the call at once with the stop's error. The deadline passing
// during a sleep that was planned to end before it (a late timer) ends the call at once too,
// with the last real error, as if the sleep had not been taken.
//
// Thread-safe: one Retry may serve many concurrent calls. Each call draws its own jitter
// sequence from a generator seeded once (`seed`, or std::random_device when 0).
#ifndef CUTOFF_RESILIENCE_RETRY_HPP_
#define CUTOFF_RESILIENCE_RETRY_HPP_

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <type_traits>
#include <utility>

#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/resilience/backoff.hpp"
#include "cutoff/resilience/internal/awaitable_value.hpp"
#include "cutoff/resilience/metrics.hpp"
#include "cutoff/resilience/retry_budget.hpp"

namespace cutoff::resilience {

struct RetryOptions {
  int max_attempts = 3;  // including the first; 1 turns retrying off
  BackoffOptions backoff{};
  // The least time an attempt needs to have a chance; a retry is not started with less left.
  Duration min_attempt_time = Duration::zero();
  // A server's pushback (Error::retry_after()) longer than this ends the call with its error
  // rather than waiting: a caller with no deadline would otherwise sleep as long as it asks.
  Duration max_pushback = std::chrono::seconds(30);
  std::function<bool(const Error&)> retryable;  // empty: retry_may_help (core/error.hpp)
  RetryBudget* budget = nullptr;                // shared across calls; null: no budget
  std::uint64_t seed = 0;
  std::string name = "default";  // metric label
  ResilienceMetrics* metrics = nullptr;
};

// What one call may set for itself. The pieces of a Retry (budget, backoff, metrics) are shared
// by every call; whether a failure may be tried again can depend on the call: a request that may
// write and carries no idempotency key is safe to repeat only if none of it left the client.
struct RetryCall {
  // Replaces RetryOptions::retryable for this call. Stops and commit_ambiguous are still never
  // retried, whatever it says.
  std::function<bool(const Error&)> retryable;
};

struct RetryStats {
  std::uint64_t calls = 0;
  std::uint64_t retries = 0;             // attempts after the first
  std::uint64_t abandoned_budget = 0;    // retryable, but the budget was spent
  std::uint64_t abandoned_deadline = 0;  // retryable, but the backoff or the attempt would not fit
  std::uint64_t abandoned_attempts = 0;  // retryable, but max_attempts was reached
  std::uint64_t abandoned_pushback = 0;  // retryable, but the server asked not to be retried
};

class Retry {
 public:
  explicit Retry(RetryOptions options = {});
  Retry(const Retry&) = delete;
  Retry& operator=(const Retry&) = delete;

  // Runs `f(ctx)` (returning boost::asio::awaitable<T>) until it succeeds or the rules above
  // end it. Every attempt gets `ctx` itself: wrap `f` in with_attempt_timeout() for a
  // per-attempt bound.
  template <typename F>
  boost::asio::awaitable<internal::CallResult<F>> run(const Context& ctx, F f, RetryCall call = {}) {
    return Run(this, ctx, std::move(f), std::move(call));
  }

  RetryStats stats() const noexcept;
  const RetryOptions& options() const noexcept { return options_; }

 private:
  template <typename F>
  static boost::asio::awaitable<internal::CallResult<F>> Run(Retry* self, Context ctx, F f, RetryCall call) {
    ctx.check();
    Backoff backoff = self->Start();
    for (int attempt = 1;; ++attempt) {
      std::exception_ptr error;
      try {
        if constexpr (std::is_void_v<internal::CallResult<F>>) {
          co_await f(ctx);
          co_return;
        } else {
          co_return co_await f(ctx);
        }
      } catch (...) {
        error = std::current_exception();
      }
      // Rethrows `error` (or throws a stop) when this was the last attempt.
      const Duration delay = self->AfterFailure(ctx, error, attempt, backoff, call);
      if (delay > Duration::zero()) {
        std::exception_ptr interrupted;
        try {
          co_await Sleep(ctx, delay);
        } catch (...) {
          interrupted = std::current_exception();
        }
        if (interrupted) self->Interrupted(ctx, interrupted, error);
      }
      self->BeforeRetry(ctx, error);
    }
  }

  Backoff Start();
  Duration AfterFailure(const Context& ctx, const std::exception_ptr& error, int attempt, Backoff& backoff,
                        const RetryCall& call);
  [[noreturn]] void Interrupted(const Context& ctx, const std::exception_ptr& interruption,
                                const std::exception_ptr& error);
  [[noreturn]] void Stopped(const Context& ctx, const std::exception_ptr& error);
  void BeforeRetry(const Context& ctx, const std::exception_ptr& error);
  [[noreturn]] void Abandon(std::atomic<std::uint64_t>& count, observe::Counter* metric,
                            const std::exception_ptr& error);
  static boost::asio::awaitable<void> Sleep(Context ctx, Duration delay);

  RetryOptions options_;
  std::mutex seed_mu_;
  std::mt19937_64 seeds_;
  std::atomic<std::uint64_t> calls_{0}, retries_{0}, abandoned_budget_{0}, abandoned_deadline_{0},
      abandoned_attempts_{0}, abandoned_pushback_{0};
  observe::Counter* retries_metric_ = nullptr;
  observe::Counter* budget_metric_ = nullptr;
  observe::Counter* deadline_metric_ = nullptr;
  observe::Counter* attempts_metric_ = nullptr;
  observe::Counter* pushback_metric_ = nullptr;
};

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_RETRY_HPP_
