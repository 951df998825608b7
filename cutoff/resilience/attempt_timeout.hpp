// Per-attempt timeout: one attempt gets min(time remaining, `timeout`), and the caller can tell
// "this attempt was too slow" from "the whole budget is spent".
//
//   Reply r = co_await cutoff::resilience::with_attempt_timeout(ctx, 200ms,
//       [&](const cutoff::Context& attempt) { return call_backend(attempt); });
//
// The attempt runs under a child context, `ctx.with_timeout(timeout)` (tighten-only: it never
// outlives `ctx`). When that child's own deadline ends the attempt while `ctx` still has
// budget, the attempt is cancelled (through Asio) and fails with `attempt_timeout`: an
// infrastructure error, retryable, so a retry around this may take another shot. When `ctx`'s
// deadline ends it, the error stays `deadline_exceeded`: final for this invocation. A
// commit_ambiguous from the attempt is never rewritten.
//
// A zero or negative `timeout` means no per-attempt bound (the call runs under `ctx`).
#ifndef CUTOFF_RESILIENCE_ATTEMPT_TIMEOUT_HPP_
#define CUTOFF_RESILIENCE_ATTEMPT_TIMEOUT_HPP_

#include <boost/asio/awaitable.hpp>
#include <exception>
#include <utility>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/resilience/internal/awaitable_value.hpp"

namespace cutoff::resilience {

namespace internal {

// What the caller sees when an attempt run under `attempt` (a child of `parent` bounded by
// `timeout`) failed with `error`. Counts attempt timeouts in `timeouts` when not null.
std::exception_ptr AttemptFailure(const Context& parent, const Context& attempt, Duration timeout,
                                  std::exception_ptr error, observe::Counter* timeouts);

template <typename F>
boost::asio::awaitable<CallResult<F>> WithAttemptTimeout(Context ctx, Duration timeout, F f,
                                                         observe::Counter* timeouts, bool honours_context) {
  ctx.check();
  if (timeout <= Duration::zero()) co_return co_await f(ctx);
  const Context attempt = ctx.with_timeout(timeout);
  std::exception_ptr error;
  try {
    if (honours_context) co_return co_await f(attempt);
    co_return co_await with_context(attempt, f(attempt));
  } catch (...) {
    error = std::current_exception();
  }
  std::rethrow_exception(AttemptFailure(ctx, attempt, timeout, std::move(error), timeouts));
}

}  // namespace internal

// Runs `f(attempt)` (returning boost::asio::awaitable<T>) under min(ctx, timeout). Counts
// attempt timeouts in `timeouts` when given.
template <typename F>
boost::asio::awaitable<internal::CallResult<F>> with_attempt_timeout(const Context& ctx, Duration timeout, F f,
                                                                    observe::Counter* timeouts = nullptr) {
  return internal::WithAttemptTimeout(ctx, timeout, std::move(f), timeouts, /*honours_context=*/false);
}

// The same for an `f` whose work ends by itself when its context stops (a client call that
// cancels its request on the stop): it is not raced against the stop, which saves two
// coroutines per attempt. An `f` that ignores its context would run on past the timeout.
template <typename F>
boost::asio::awaitable<internal::CallResult<F>> with_attempt_timeout_honoured(const Context& ctx, Duration timeout,
                                                                             F f, observe::Counter* timeouts = nullptr) {
  return internal::WithAttemptTimeout(ctx, timeout, std::move(f), timeouts, /*honours_context=*/true);
}

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_ATTEMPT_TIMEOUT_HPP_
