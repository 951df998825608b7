// An HTTP/1.1 client that carries the caller's deadline to the next service and stops the
// remote work when the caller stops.
//
//   cutoff::http::Client client(executor, {.attempt_timeout = 2s});
//   Response r = co_await client.get(ctx, "http://127.0.0.1:8081/stock?sku=42");
//   if (r.status == 504 && deadline_expired(r)) { /* the budget is spent: do not retry */ }
//
// Each call:
// - fails locally with `deadline_exceeded`, sending nothing, when the context's budget is
//   already spent; otherwise sends `Deadline-Budget-Ms` with the milliseconds left, rounded
//   up (a live budget never reads as 0; a Deadline-Budget-Ms the caller set itself is kept
//   only when it is tighter);
// - bounds each attempt by min(time remaining, attempt_timeout): an attempt cut by its own
//   timeout fails with `attempt_timeout`, one cut by the caller's deadline with
//   `deadline_exceeded`, and a caller that stops fails with its own reason;
// - on any stop, closes the connection instead of returning it to the pool, so the remote
//   server sees the disconnect and stops the handler working for us;
// - forwards `X-Request-Id` and a child of the context's `traceparent`;
// - reuses keep-alive connections per host (a pooled connection the server already closed is
//   detected before reuse);
// - retries (up to max_attempts, idempotent methods only) connection failures and 502/503
//   and 504 answers, except a 504 with `Deadline-Expired: 1`: that budget is spent
//   everywhere. A backoff that would outlive the deadline is not waited out; the last real
//   error surfaces.
// Connection failures are `unavailable`. Responses of any status are returned, not thrown.
// With `metrics` set, each attempt stopped in flight counts in
// cutoff_stops_total{layer="http_client", reason} (the caller's stop reason, or
// `attempt_timeout`) and its overshoot (stop → the call returned, its connection closed) in
// cutoff_overshoot_seconds{layer="http_client"}.
//
// Thread-safe: one Client may serve many strands.
#ifndef CUTOFF_HTTP_CLIENT_HPP_
#define CUTOFF_HTTP_CLIENT_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/http/message.hpp"

namespace cutoff::observe {
class Registry;
}

namespace cutoff::http {

struct ClientOptions {
  Duration attempt_timeout = std::chrono::seconds(10);  // per attempt, tightened by the budget
  Duration connect_timeout = std::chrono::seconds(3);   // also tightened by the attempt's
  int max_attempts = 1;                                   // 1: no retries
  Duration retry_backoff = std::chrono::milliseconds(25);  // doubled after each retry
  std::size_t max_idle_per_host = 32;
  Duration max_idle_time = std::chrono::seconds(30);  // pooled connections older are closed
  std::size_t max_response_bytes = 16 * 1024 * 1024;
  observe::Registry* metrics = nullptr;  // stops and overshoot (see above); null: none
};

struct ClientRequest {
  std::string method = "GET";
  std::string url;  // http://host[:port]/path?query
  Headers headers;
  std::string body;
  bool idempotent = false;  // allow retries for a non-idempotent method (e.g. a keyed POST)
};

// An http:// URL split for connecting. nullopt for anything else (https, userinfo, bad port).
struct Url {
  std::string host;  // without brackets for IPv6
  std::uint16_t port = 80;
  std::string target;  // "/path?query", at least "/"
};
std::optional<Url> parse_url(std::string_view url);

// True for a 504 answer that says the caller's budget was spent (do not retry it).
bool deadline_expired(const Response& r) noexcept;

class Client {
 public:
  explicit Client(boost::asio::any_io_executor executor, ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  boost::asio::awaitable<Response> request(const Context& ctx, ClientRequest req);
  boost::asio::awaitable<Response> get(const Context& ctx, std::string url);
  boost::asio::awaitable<Response> post(const Context& ctx, std::string url, std::string body,
                                        std::string_view content_type = "application/json");

  // Connections waiting in the pool, and connections opened so far (for tests and metrics).
  std::size_t idle_connections() const;
  std::size_t connections_opened() const noexcept;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace cutoff::http

#endif  // CUTOFF_HTTP_CLIENT_HPP_
