#include "cutoff/http/internal/route_table.hpp"

#include <utility>

#include "cutoff/http/internal/responses.hpp"

namespace cutoff::http::internal {

RouteEntry& RouteTable::Add(std::string method, std::string path, RouteOptions options) {
  RouteEntry& r = routes_.emplace_back();
  r.method = std::move(method);
  r.path = std::move(path);
  r.options = std::move(options);
  r.name = r.options.name.empty() ? r.path : r.options.name;
  return r;
}

RouteMatch RouteTable::Find(std::string_view path, std::string_view method, bool websocket) {
  RouteMatch match;
  RouteEntry* get = nullptr;  // answers HEAD when no route of its own does
  for (auto& r : routes_) {
    if (r.path != path) continue;
    const bool is_ws = static_cast<bool>(r.ws_handler);
    if (is_ws != websocket) continue;
    match.path_known = true;
    if (is_ws || r.method == method) {
      match.route = &r;
      break;
    }
    if (r.method == "GET") get = &r;
    if (!match.allow.empty()) match.allow += ", ";
    match.allow += r.method;
    if (r.method == "GET") match.allow += ", HEAD";
  }
  if (!match.route && method == "HEAD") match.route = get;
  return match;
}

Response UnroutedResponse(const RouteMatch& match, std::string_view path) {
  Response res = match.path_known ? ErrorResponse(ErrorCode::invalid_argument, "method not allowed", {})
                                  : ErrorResponse(ErrorCode::not_found, "no route for " + std::string(path), {});
  res.status = match.path_known ? 405 : 404;
  if (match.path_known) res.headers.set("Allow", match.allow);
  return res;
}

}  // namespace cutoff::http::internal
