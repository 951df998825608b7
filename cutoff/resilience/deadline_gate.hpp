// Deadline gate: the outermost resilience layer. Nothing runs for a context that is already
// stopped, and whatever runs is bounded by the context.
//
//   Reply r = co_await cutoff::resilience::gate(ctx, [&](const cutoff::Context& c) {
//     return fetch_reply(c);
//   });
//
// - When `ctx` is already stopped, throws `Error::stopped(reason)` (deadline_exceeded,
//   cancelled or shutdown) before the callable is even invoked: no slot is taken, no breaker
//   consulted, no retry budget deposited.
// - When `ctx` stops while the call runs, the awaited operation is cancelled through Asio
//   (`terminal`), the gate waits for it to unwind, and throws the stop's error. This holds even
//   for code inside that does not check the context itself (a backoff sleep, a queue wait).
// An unbound context adds one pointer test.
#ifndef CUTOFF_RESILIENCE_DEADLINE_GATE_HPP_
#define CUTOFF_RESILIENCE_DEADLINE_GATE_HPP_

#include <boost/asio/awaitable.hpp>
#include <utility>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/resilience/internal/awaitable_value.hpp"

namespace cutoff::resilience {

namespace internal {
template <typename F>
boost::asio::awaitable<CallResult<F>> Gate(Context ctx, F f) {
  ctx.check();  // before the callable runs: it may do work before its first suspension
  co_return co_await with_context(ctx, f(ctx));
}
}  // namespace internal

// `f(const Context&)` returns `boost::asio::awaitable<T>`; it is invoked at most once, with `ctx`.
template <typename F>
boost::asio::awaitable<internal::CallResult<F>> gate(const Context& ctx, F f) {
  return internal::Gate(ctx, std::move(f));
}

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_DEADLINE_GATE_HPP_
