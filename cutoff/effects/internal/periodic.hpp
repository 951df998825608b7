// Background rounds until a context stops: the effects store's sweeper and the saga journal's
// share this loop.
//
//   co_await cutoff::effects::internal::run_every(ctx, 60s, [&](const Context& round) -> asio::awaitable<void> {
//     co_await store.sweep(round);
//   });
#ifndef CUTOFF_EFFECTS_INTERNAL_PERIODIC_HPP_
#define CUTOFF_EFFECTS_INTERNAL_PERIODIC_HPP_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>

#include "cutoff/core/context.hpp"

namespace cutoff::effects::internal {

// Runs `round` at once and then `interval` after each round ends, until `ctx` stops (the wait
// ends at the stop). Each round runs under a child of `ctx` with a budget of `interval`, kept
// between 1 s and 30 s: a round stuck on a busy database is cut rather than left running. A round that
// throws is tried again at the next one, so a database away for a while does not end the
// loop. `ctx` must outlive the loop. An interval that is not positive is invalid_argument.
boost::asio::awaitable<void> run_every(const Context& ctx, std::chrono::milliseconds interval,
                                       std::function<boost::asio::awaitable<void>(const Context&)> round);

}  // namespace cutoff::effects::internal

#endif  // CUTOFF_EFFECTS_INTERNAL_PERIODIC_HPP_
