// Background rounds until a context stops: the effects store's sweeper and the saga journal's
// share this loop.
//
//   co_await cutoff::effects::internal::run_every(ctx, 60s, [&]() -> asio::awaitable<void> {
//     co_await store.sweep(ctx);
//   });
#ifndef CUTOFF_EFFECTS_INTERNAL_PERIODIC_HPP_
#define CUTOFF_EFFECTS_INTERNAL_PERIODIC_HPP_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>

#include "cutoff/core/context.hpp"

namespace cutoff::effects::internal {

// Runs `round` at once and then `interval` after each round ends, until `ctx` stops (the wait
// ends at the stop). A round that throws is tried again at the next one: a database that is
// away for a while does not end the loop. `ctx` must outlive the loop.
boost::asio::awaitable<void> run_every(const Context& ctx, std::chrono::milliseconds interval,
                                       std::function<boost::asio::awaitable<void>()> round);

}  // namespace cutoff::effects::internal

#endif  // CUTOFF_EFFECTS_INTERNAL_PERIODIC_HPP_
