// Fallback: answer with something else (a cached value, a default) when a call fails, without
// ever hiding a spent budget or an effect that may have happened.
//
//   Price p = co_await cutoff::resilience::with_fallback(ctx,
//       [&](const cutoff::Context& c) { return pricing.get(c, sku); },
//       [&](const cutoff::Context& c, const std::exception_ptr&) { return cached_price(c, sku); });
//
// The fallback is not called, and the error is rethrown as is, when:
//  - it is a stop (deadline_exceeded, cancelled, shutdown) or commit_ambiguous: the first
//    means the caller's budget is gone or the caller is, the second that the effect may exist,
//    and a substitute answer would tell the caller otherwise;
//  - `ctx` itself has stopped by the time the call failed, for the same reason;
//  - `accept` (when given) refuses the error.
// Anything else, including non-cutoff exceptions, goes to the fallback.
#ifndef CUTOFF_RESILIENCE_FALLBACK_HPP_
#define CUTOFF_RESILIENCE_FALLBACK_HPP_

#include <boost/asio/awaitable.hpp>
#include <exception>
#include <functional>
#include <utility>

#include "cutoff/core/context.hpp"
#include "cutoff/resilience/internal/awaitable_value.hpp"

namespace cutoff::resilience {

namespace internal {

// Whether `error` may be replaced by a fallback answer for a call under `ctx`.
bool FallbackAllowed(const Context& ctx, const std::exception_ptr& error,
                     const std::function<bool(const std::exception_ptr&)>& accept);

template <typename F, typename G>
boost::asio::awaitable<CallResult<F>> WithFallback(Context ctx, F f, G fallback,
                                                   std::function<bool(const std::exception_ptr&)> accept) {
  ctx.check();
  std::exception_ptr error;
  try {
    co_return co_await f(ctx);
  } catch (...) {
    error = std::current_exception();
  }
  if (!FallbackAllowed(ctx, error, accept)) std::rethrow_exception(error);
  co_return co_await fallback(ctx, error);
}

}  // namespace internal

// `f(const Context&)` and `fallback(const Context&, const std::exception_ptr&)` both return
// boost::asio::awaitable<T>.
template <typename F, typename G>
boost::asio::awaitable<internal::CallResult<F>> with_fallback(
    const Context& ctx, F f, G fallback, std::function<bool(const std::exception_ptr&)> accept = {}) {
  return internal::WithFallback(ctx, std::move(f), std::move(fallback), std::move(accept));
}

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_FALLBACK_HPP_
