// The server's WebSocket routes: the opening handshake (with subprotocol negotiation), the
// route's handler on a WebSocket adapter over Beast's stream, and the keep-alive pings that
// close a peer gone quiet.
//
//   if (upgrade && route) {
//     WebSocketEnvironment env{.limits = limits, .background = Background(), .log = log};
//     co_await internal::ServeWebSocket(c, *route, std::move(beast_request), std::move(req), std::move(env));
//     // the connection closes after it
//   }
#ifndef CUTOFF_HTTP_INTERNAL_WEBSOCKET_SESSION_HPP_
#define CUTOFF_HTTP_INTERNAL_WEBSOCKET_SESSION_HPP_

#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/core/context.hpp"
#include "cutoff/http/internal/beast_request.hpp"
#include "cutoff/http/internal/connection.hpp"
#include "cutoff/http/internal/route_table.hpp"
#include "cutoff/http/internal/server_log.hpp"
#include "cutoff/http/server.hpp"

namespace cutoff::http::internal {

struct WebSocketEnvironment {
  const ServerLimits& limits;
  Context background;  // the context the route's own is made from
  const ServerLog& log;
};

// Accepts the upgrade `beast_request` on `c` and runs `route`'s handler until it returns, then
// closes the WebSocket. The handler's context has no deadline; it stops with `cancelled` when
// the peer goes away and with `shutdown` when the server stops.
boost::asio::awaitable<void> ServeWebSocket(Connection& c, const RouteEntry& route, BeastRequest beast_request,
                                            Request req, WebSocketEnvironment env);

// The subprotocol to answer a client offering `offered` ("a, b, c", in its preference) with:
// the first of `accepted` (the server's preference) that it offers; empty: none.
std::string ChooseSubprotocol(std::string_view offered, const std::vector<std::string>& accepted);

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_WEBSOCKET_SESSION_HPP_
