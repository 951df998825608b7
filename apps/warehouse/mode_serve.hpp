// How a reference service runs one request's work in each mode (mode.hpp): the one place the
// `timeouts` and `none` baselines are made, shared by the inventory and the shipping service.
//
//   const ModeWork work = [](const Context& ctx) -> asio::awaitable<std::string> { ... };
//   const ModeBounds bounds{Mode::timeouts, 500ms, "inventory"};
//   std::string answer = co_await serve_in_mode(bounds, base, request, work);
//
// Under `cutoff` the work runs under the request's own context. Under `timeouts` and `none` it
// runs detached from it, on `base` (no deadline, out of reach of the caller's cancellation,
// stopped only by the service's shutdown), and the caller waits for it at most `own_timeout`
// (`timeouts`) or as long as it takes (`none`). When the own timeout fires first the caller is
// answered deadline_exceeded and the work goes on without it, as behind a request-timeout
// middleware: the honest answer would have been "unknown", which is what the lab shows.
#ifndef CUTOFF_APPS_WAREHOUSE_MODE_SERVE_HPP_
#define CUTOFF_APPS_WAREHOUSE_MODE_SERVE_HPP_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "cutoff/core/context.hpp"
#include "warehouse/mode.hpp"

namespace cutoff::warehouse {

struct ModeBounds {
  Mode mode = Mode::cutoff;
  std::chrono::milliseconds own_timeout{0};  // `timeouts` only
  std::string_view service;                  // named in the own timeout's message
};

using ModeWork = std::function<boost::asio::awaitable<std::string>(const Context&)>;

// Runs `work` for `request` as `bounds.mode` says (see the top of this file). `base` carries
// the service's shutdown; the detached work gets `request`'s values (request id, trace) on it.
// `work` is copied into the detached coroutine, so it may go out of scope when this returns.
boost::asio::awaitable<std::string> serve_in_mode(const ModeBounds& bounds, const Context& base, const Context& request,
                                                  const ModeWork& work);

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_MODE_SERVE_HPP_
