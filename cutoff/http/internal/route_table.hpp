// The server's routes: HTTP routes by method and exact path, WebSocket routes by path, and
// what a request that matches none is answered.
//
//   internal::RouteTable routes;
//   internal::RouteEntry& r = routes.Add("GET", "/stock", {.name = "GetStock"});
//   r.handler = ...;
//   internal::RouteMatch m = routes.Find("/stock", "HEAD", /*websocket=*/false);  // the GET route
//   if (!m.route) response = internal::UnroutedResponse(m, "/stock");           // 404 or 405
#ifndef CUTOFF_HTTP_INTERNAL_ROUTE_TABLE_HPP_
#define CUTOFF_HTTP_INTERNAL_ROUTE_TABLE_HPP_

#include <list>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/http/internal/server_metrics.hpp"
#include "cutoff/http/message.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/resilience/service_time_admission.hpp"

namespace cutoff::http::internal {

struct RouteEntry {
  std::string method;  // empty for WebSocket routes
  std::string path;
  std::string name;  // options.name, or the path: the route's name in metrics and logs
  Handler handler;
  WebSocketHandler ws_handler;
  std::vector<std::string> subprotocols;
  RouteOptions options;
  RouteSeries series;
  // The route's key in options.admission; null without one (or when its keys are all taken).
  resilience::ServiceTimeAdmission::Key* admission_key = nullptr;
};

struct RouteMatch {
  RouteEntry* route = nullptr;  // null: no route for the method (or none for the path)
  bool path_known = false;      // some route has the path: answer 405 rather than 404
  std::string allow;            // the path's methods, for a 405's Allow header
};

class RouteTable {
 public:
  // A new route, at a stable address. Register every route before the server runs.
  RouteEntry& Add(std::string method, std::string path, RouteOptions options);

  // The route for `path` and `method`, among the WebSocket routes when `websocket` is set.
  // HEAD is answered by the path's GET route when it has no route of its own (RFC 9110
  // section 9.3.2).
  RouteMatch Find(std::string_view path, std::string_view method, bool websocket);

 private:
  std::list<RouteEntry> routes_;
};

// The answer to a request no route matched: 405 with Allow when the path is known, else 404.
Response UnroutedResponse(const RouteMatch& match, std::string_view path);

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_ROUTE_TABLE_HPP_
