// An HTTP/1.1 client that carries the caller's deadline to the next service, stops the remote
// work when the caller stops, and runs every call through the resilience policy of the
// upstream it goes to.
//
//   cutoff::http::Client client(executor, {.policy = {.attempt_timeout = 2s,
//                                                     .retry = {.max_attempts = 3}}});
//   Response r = co_await client.get(ctx, "http://127.0.0.1:8081/stock?sku=42");
//   if (r.status == 504 && deadline_expired(r)) { /* the budget is spent: do not retry */ }
//
// Each call:
// - goes through the policy of its upstream (its host:port; resilience/policy.hpp), in the
//   fixed order: deadline gate → bulkhead → circuit breaker → retry (backoff and a retry
//   budget shared by the upstream's calls) → [hedge] → attempt timeout → the request. Each
//   upstream has its own bulkhead, breaker and retry budget; `upstreams` names and configures
//   particular ones, `policy` is everybody else's. By default: one attempt of at most 10 s,
//   nothing else;
// - fails locally with `deadline_exceeded`, sending nothing, when the context's budget is
//   already spent; otherwise sends `Deadline-Budget-Ms` with the milliseconds left (less
//   `reply_margin`), rounded up (a live budget never reads as 0; a Deadline-Budget-Ms the
//   caller set itself is kept only when it is tighter);
// - bounds each attempt by min(time remaining, attempt_timeout): an attempt cut by its own
//   timeout fails with `attempt_timeout`, one cut by the caller's deadline with
//   `deadline_exceeded`, and a caller that stops fails with its own reason;
// - on any stop, closes the connection instead of returning it to the pool, so the remote
//   server sees the disconnect and stops the handler working for us;
// - forwards `X-Request-Id` and a child of the context's `traceparent`;
// - reuses keep-alive connections per host (a pooled connection the server already closed is
//   detected before reuse).
// What is retried (when the policy allows more than one attempt and its retry budget has a
// token): connection failures, attempt timeouts and 502/503/504 answers. Never a 504 with
// `Deadline-Expired: 1` (that budget is spent everywhere), never a `commit_ambiguous`, never
// a stop; and a request that may write (see `may_write`) without an `Idempotency-Key` (nor
// `idempotent`) only while none of it has left the client: once sent, repeating it could apply
// it twice. A backoff that would outlive the deadline is not waited out; the last real outcome
// surfaces. Hedging, when the policy has it, applies only to requests that do not write.
// Connection failures are `unavailable`, an open breaker too, a full bulkhead `overloaded`.
// Responses of any status are returned, not thrown.
// With `metrics` set, the policies count into the cutoff_resilience_* families (attempts,
// retries, retries abandoned by reason, attempt timeouts, bulkhead and breaker state), labelled
// with the upstream's name; each attempt stopped in flight counts in
// cutoff_stops_total{layer="http_client", reason} (the caller's stop reason, or
// `attempt_timeout`) and its overshoot (stop → the call returned, its connection closed) in
// cutoff_overshoot_seconds{layer="http_client"}.
//
// What became of a request is one of three things, and `exchange()` says which (Delivery):
// not sent (nothing left the client: a safe failure), sent and not answered (the server may
// have acted on it), or answered. A request whose method may write (anything but GET, HEAD,
// OPTIONS, TRACE) that was sent and not answered fails with `commit_ambiguous`, never with
// the stop or timeout that cut it; the caller's CommitLedger (Context::commit_ledger) notes a
// possible commit point for it, and so does an answer that does not rule the effect out (a
// 2xx, a `commit_ambiguous` document, an unexplained 5xx). A 4xx, or a cutoff error document
// with a code a server only uses before its commit point (deadline_exceeded, overloaded, ...),
// rules it out. A request carrying `Idempotency-Key` is noted as keyed: repeating it with the
// same key is safe (CommitLedger::retry_with_same_key_safe).
//
//   http::Exchange x = co_await client.exchange(ctx, std::move(req));
//   switch (x.delivery) {
//     case http::Delivery::answered: use(x.response); break;
//     case http::Delivery::sent: /* x.error->code() == commit_ambiguous for a POST */ break;
//     case http::Delivery::not_sent: /* nothing happened there: x.error says why */ break;
//   }
//
// https:// URLs are called over TLS (tls.hpp): the server's certificate is verified against
// `ClientOptions::tls`, the handshake is part of connecting (bounded by the connect timeout and
// the attempt's deadline), and a stop closes the connection under the TLS stream as it does a
// plain one. Plain and TLS connections are pooled apart.
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
#include <vector>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/http/message.hpp"
#include "cutoff/http/tls.hpp"
#include "cutoff/resilience/policy.hpp"

namespace cutoff::observe {
class Registry;
}

namespace cutoff::http {

// A named upstream with a policy of its own.
struct Upstream {
  std::string authority;  // "host:port" as in the URLs called (port included, 80 too)
  std::string name;       // metric label; empty: the authority
  resilience::PolicyOptions policy;
};

// The policy of an upstream nobody configured: one attempt of at most 10 s.
inline resilience::PolicyOptions default_call_policy() {
  return resilience::PolicyOptions{.attempt_timeout = std::chrono::seconds(10)};
}

struct ClientOptions {
  resilience::PolicyOptions policy = default_call_policy();  // every upstream not in `upstreams`
  std::vector<Upstream> upstreams;
  std::size_t max_upstreams = 64;                      // policies kept; past it, new upstreams share one ("other")
  Duration connect_timeout = std::chrono::seconds(3);  // also tightened by the attempt's
  std::size_t max_idle_per_host = 32;
  Duration max_idle_time = std::chrono::seconds(30);  // pooled connections older are closed
  std::size_t max_response_bytes = 16 * 1024 * 1024;
  observe::Registry* metrics = nullptr;  // policies, stops and overshoot (see above); null: none
  // Taken off the budget sent downstream (never more than half of what is left), so that the
  // server's deadline fires first and its answer still arrives within ours: a write it stopped
  // before its commit point then comes back as a definite `deadline_exceeded`, instead of a
  // request sent and never answered (`commit_ambiguous`). Zero sends the whole budget.
  Duration reply_margin = Duration::zero();
  // For https:// URLs. The constructor throws std::invalid_argument for a `ca_file` that cannot
  // be loaded; the system's store is loaded on the first https:// call.
  TlsClientOptions tls;
};

struct ClientRequest {
  std::string method = "GET";
  std::string url;  // http[s]://host[:port]/path?query
  Headers headers;
  std::string body;
  // Repeating it is harmless although its method may write (a PUT-like POST): retried like a
  // GET. An `Idempotency-Key` header has the same effect.
  bool idempotent = false;
  // Whether the request may take effect on the server. nullopt: by its method (all but the
  // safe methods may). False for a POST that only reads, such as a GraphQL query: a stop
  // after it left is then reported as the stop, not as commit_ambiguous.
  std::optional<bool> may_write;
};

// What became of a request, as far as the client can know.
enum class Delivery : std::uint8_t {
  not_sent,  // no byte of it left the client (no connection, spent budget, stopped before)
  sent,      // some or all of it left and no answer came back: the server may have acted on it
  answered,  // a response came back (of any status)
};
std::string_view to_string(Delivery d) noexcept;

// The outcome of one request: the response when answered, otherwise the error.
struct Exchange {
  Delivery delivery = Delivery::not_sent;
  Response response;           // answered only
  std::optional<Error> error;  // set unless answered
};

// An http:// or https:// URL split for connecting. nullopt for anything else (other schemes,
// userinfo, a bad port).
struct Url {
  std::string host;  // without brackets for IPv6
  std::uint16_t port = 80;  // 443 by default for https
  bool tls = false;         // https
  std::string target;  // "/path?query", at least "/"
};
std::optional<Url> parse_url(std::string_view url);

// True for a 504 answer that says the caller's budget was spent (do not retry it).
bool deadline_expired(const Response& r) noexcept;

class Client {
 public:
  // Two constructors rather than a defaulted argument: g++ 12 miscompiles a defaulted
  // class-type argument in a full-expression that also holds a co_await, such as
  // `Client c(co_await asio::this_coro::executor);` (the temporary's strings are freed from
  // the wrong address). docs/platform-facts in architecture.md has the details.
  explicit Client(boost::asio::any_io_executor executor);
  Client(boost::asio::any_io_executor executor, ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Never throws for what happened to the request (see Delivery); throws only std::bad_alloc
  // and the like.
  boost::asio::awaitable<Exchange> exchange(const Context& ctx, ClientRequest req);
  // exchange(), with the error thrown unless answered.
  boost::asio::awaitable<Response> request(const Context& ctx, ClientRequest req);
  boost::asio::awaitable<Response> get(const Context& ctx, std::string url);
  boost::asio::awaitable<Response> post(const Context& ctx, std::string url, std::string body,
                                        std::string_view content_type = "application/json");

  // Connections waiting in the pool, and connections opened so far (for tests and metrics).
  std::size_t idle_connections() const;
  std::size_t connections_opened() const noexcept;
  // The policy calls to `authority` ("host:port") run through, built on first use; for its
  // statistics (breaker state, retry budget).
  resilience::Policy& policy(std::string_view authority);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace cutoff::http

#endif  // CUTOFF_HTTP_CLIENT_HPP_
