// An HTTP/1.1 server that binds each request's deadline at entry and stops its handler when
// the budget runs out, the client goes away or the process shuts down.
//
//   boost::asio::io_context io;
//   cutoff::observe::Registry metrics;
//   cutoff::http::Server server(io.get_executor(), {.budget = {.max_budget = 10s}, .metrics = &metrics});
//   server.route("GET", "/stock", [&](const Request& req, const Context& ctx) -> asio::awaitable<Response> {
//     int n = co_await stock.count(ctx, req.query_param("sku").value_or(""));   // honours ctx
//     co_return Response::json(200, "{\"count\":" + std::to_string(n) + "}");
//   }, {.name = "GetStock", .budget = 2s});
//   server.listen("127.0.0.1", 8080);
//   server.stop_on_signals(5s);  // SIGINT/SIGTERM: drain for 5 s, then stop with `shutdown`
//   io.run();
//
// What happens to a request:
// - With `ServerOptions::tls`, each connection first completes a TLS handshake within the
//   header timeout; everything below then holds over TLS just the same.
// - Limits first: header and body size, a read timeout against slow clients, an idle timeout
//   between keep-alive requests, caps on open connections in all and per peer. Violations get
//   a clear 4xx (or 503 at a connection cap) and the connection is closed; the server never
//   dies on a request. Framing a proxy could read differently (RFC 9112: Transfer-Encoding
//   other than chunked, with Content-Length, obs-fold, missing or repeated Host) is a 400 and
//   a closed connection, so nothing smuggled behind it runs.
// - The deadline is bound once: min(route budget, service maximum, every accepted inbound
//   budget header) (see budget_headers.hpp). Rejected header values are counted and logged,
//   never used. A budget that is already spent is answered 504 with `Deadline-Expired: 1`
//   before any handler runs; so is one below the route's recent service time, when the
//   route has `RouteOptions::admission`.
// - While the handler runs the server watches the socket: a client that disconnects stops the
//   handler's context with `cancelled` within milliseconds. The handler coroutine is cancelled
//   (Asio terminal) when its context stops, so everything it awaits is aborted.
// - A handler that throws cutoff::Error is answered with the taxonomy's status and a JSON body
//   {"error":{"code":..,"message":..,"request_id":..}}; internal details are not sent.
// - `X-Request-Id` is accepted (or generated) and echoed; `traceparent` is accepted and a
//   child span is put on the context for outbound calls.
// - One JSON log line per request (observe::RequestLog) goes to `options.log`.
// - `/metrics` (Prometheus text) and `/healthz` are served when enabled.
//
// Threads: run the io_context on as many threads as you like; each connection runs on its
// own strand, so a request's coroutine tree never runs on two threads at once (set
// `one_io_thread` when only one thread runs it, to skip the strands).
#ifndef CUTOFF_HTTP_SERVER_HPP_
#define CUTOFF_HTTP_SERVER_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/budget_headers.hpp"
#include "cutoff/http/message.hpp"
#include "cutoff/http/tls.hpp"
#include "cutoff/http/websocket.hpp"

namespace cutoff {
class DeadlineTimerService;
namespace observe {
class Registry;
}
namespace resilience {
class ServiceTimeAdmission;
}
}  // namespace cutoff

namespace cutoff::http {

using Handler = std::function<boost::asio::awaitable<Response>(const Request&, const Context&)>;

// A WebSocket route: runs for the life of the connection. `ctx` has no deadline; it stops with
// `cancelled` when the peer goes away and with `shutdown` when the server stops.
using WebSocketHandler = std::function<boost::asio::awaitable<void>(WebSocket&, const Request&, const Context&)>;

struct RouteOptions {
  std::string name;               // operation name for metrics and logs; default: the path
  std::optional<Duration> budget;  // the route's declared budget (tightens the caller's)
  // false: the handler gets an unbound context: no budget headers, no deadline, no disconnect
  // watch (e.g. /metrics; the lab's baseline servers, which never stop their work).
  bool bind_deadline = true;
  // How long a handler that answers its own stops (a GraphQL executor returning a partial
  // result) may take after its context stops before the server cancels it. Zero: at once.
  Duration stop_grace = Duration::zero();
  // Refuses a request whose budget is below the route's recent service time with 504
  // deadline_exceeded before the handler runs, and times the handler's runs, keyed by the
  // route's name (resilience/service_time_admission.hpp). Null (the default): off. Shared
  // by any number of routes and servers; must outlive the server. Ignored when
  // `bind_deadline` is false.
  resilience::ServiceTimeAdmission* admission = nullptr;
};

// What one client can hold of the server (DESIGN.md point 10). docs/http.md lists what a
// client sees when it reaches each.
struct ServerLimits {
  std::size_t max_header_bytes = 16 * 1024;
  std::size_t max_body_bytes = 1024 * 1024;
  // To the end of the headers: from accept for a connection's first request (a peer that
  // connects and sends nothing holds a slot this long, not `idle_timeout`), from the first
  // byte for later keep-alive requests.
  Duration header_timeout = std::chrono::seconds(10);
  Duration body_timeout = std::chrono::seconds(30);
  Duration idle_timeout = std::chrono::seconds(60);    // between keep-alive requests
  // A response, or a WebSocket message, that cannot be written within this (a client that
  // does not read) closes the connection.
  Duration write_timeout = std::chrono::seconds(30);
  std::size_t max_connections = 1024;
  // Open connections from one peer: an IPv4 address, or an IPv6 /64 (one host usually holds a
  // whole /64). 0: no limit.
  std::size_t max_connections_per_peer = 64;
  // Off: loopback peers (127.0.0.0/8, ::1) are not limited per peer. A reverse proxy or
  // sidecar on the same host, the lab and the benchmarks all arrive from loopback, where one
  // address stands for many clients; `max_connections` still bounds them.
  bool limit_loopback_peers = false;
  // A larger WebSocket message (or frame) is refused with close code 1009.
  std::size_t max_websocket_message_bytes = 1024 * 1024;
  // A WebSocket peer not heard from for this long is pinged, and closed when nothing (a pong
  // or anything else) arrives within `websocket_pong_timeout` of the ping. Zero: no pings.
  // Frames are only read while the route's handler has a read() pending, so a handler that
  // stops reading has its peer closed too.
  Duration websocket_ping_interval = std::chrono::seconds(30);
  Duration websocket_pong_timeout = std::chrono::seconds(10);
};

struct ServerOptions {
  // Set: every connection starts with a TLS handshake (https://), bounded by
  // `limits.header_timeout` from accept; see tls.hpp. The constructor throws
  // std::invalid_argument when the certificate or key cannot be loaded.
  std::optional<TlsServerOptions> tls;
  ServerLimits limits;
  BudgetPolicy budget;
  // Where /metrics, request counters and deadline outcomes go; null: no metrics.
  observe::Registry* metrics = nullptr;
  bool serve_metrics = true;  // GET /metrics (when `metrics` is set)
  bool serve_health = true;   // GET /healthz
  // One JSON line per request and occasional warnings; null: discarded.
  std::function<void(std::string_view line)> log;
  // Deadline timers; null: the process-wide service.
  DeadlineTimerService* timers = nullptr;
  // The io_context runs on a single thread: connections then skip their strands (cheaper).
  // Leave false when several threads run it.
  bool one_io_thread = false;
};

class Server {
 public:
  Server(boost::asio::any_io_executor executor, ServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Routes match the path exactly. Register before listen().
  void route(std::string method, std::string path, Handler handler, RouteOptions options = {});
  // A WebSocket endpoint; `subprotocols` in preference order (empty: any or none).
  void websocket(std::string path, WebSocketHandler handler, std::vector<std::string> subprotocols = {},
                 RouteOptions options = {});

  // Binds and starts accepting; returns the bound port (0 picks a free one). Throws
  // std::system_error when the address cannot be bound.
  std::uint16_t listen(std::string_view address, std::uint16_t port);

  // Stops accepting and closes idle connections; requests in flight may finish within
  // `grace`, then their contexts stop with `shutdown` (answered 503). Thread-safe; once only.
  void shutdown(Duration grace);
  // Calls shutdown(grace) on the first SIGINT or SIGTERM.
  void stop_on_signals(Duration grace);
  // The signal that started the shutdown (0: none).
  int stop_signal() const noexcept;

  // The log sink of ServerOptions (null when none), for handlers whose errors belong in the
  // same log as the server's own lines.
  const std::function<void(std::string_view line)>& log_sink() const noexcept;

  // Whether connections are served over TLS (ServerOptions::tls).
  bool serves_tls() const noexcept;
  std::size_t open_connections() const noexcept;
  std::size_t requests_in_flight() const noexcept;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace cutoff::http

#endif  // CUTOFF_HTTP_SERVER_HPP_
