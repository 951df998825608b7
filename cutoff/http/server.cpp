#include "cutoff/http/server.hpp"


#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <chrono>
#include <list>
#include <mutex>
#include <unordered_map>
#include <iterator>
#include <new>
#include <random>
#include <span>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/commit_ledger.hpp"
#include "cutoff/core/deadline_timer_service.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/core/json_text.hpp"
#include "cutoff/http/error_document.hpp"
#include "cutoff/http/internal/beast_request.hpp"
#include "cutoff/http/internal/peer_state.hpp"
#include "cutoff/observe/deadline_metrics.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/observe/process_metrics.hpp"
#include "cutoff/observe/request_log.hpp"
#include "cutoff/observe/trace.hpp"

namespace cutoff::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace websocket = boost::beast::websocket;
using tcp = asio::ip::tcp;
using asio::as_tuple;
using asio::use_awaitable;

namespace {

constexpr int kFirstStatus = 100;
constexpr int kLastStatus = 599;

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }


Response ErrorResponse(ErrorCode code, std::string_view message, std::string_view request_id) {
  const auto& info = cutoff::info(code);
  // Internal details stay in the log; the client gets the taxonomy's summary.
  const std::string_view shown = code == ErrorCode::internal ? info.summary : message;
  Response r = Response::json(info.http_status, error_document(info.name, shown, request_id));
  if (code == ErrorCode::deadline_exceeded) r.headers.set(kDeadlineExpiredHeader, "1");
  return r;
}

bool ValidRequestId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || c == ':' || c == '/' || c == '+' || c == '=';
    if (!ok) return false;
  }
  return true;
}

std::string NewRequestId();

// The caller's X-Request-Id when it is safe to log and echo, a new one otherwise.
std::string RequestIdFor(const Request& req) {
  if (auto id = req.headers.get("X-Request-Id"); id && ValidRequestId(*id)) return std::string(*id);
  return NewRequestId();
}

// 15 hex digits (60 random bits): enough to correlate logs, and short enough for the
// string's inline buffer, so the id and its copies cost no allocation.
std::string NewRequestId() {
  // splitmix64 over a per-thread sequence seeded once: ids need to be distinct, not secret,
  // and this is a few instructions against a Mersenne twister's state update.
  thread_local std::uint64_t sequence = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  std::uint64_t v = (sequence += 0x9e3779b97f4a7c15ULL);
  v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
  v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
  v ^= v >> 31;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(15, '0');
  for (int i = 14; i >= 0; --i, v >>= 4) out[i] = kHex[v & 15];
  return out;
}

// Maps a failed header/body read to the answer the client gets (0: close silently).
int StatusForReadError(const boost::system::error_code& ec) {
  if (ec == bhttp::error::header_limit) return 431;
  if (ec == bhttp::error::body_limit) return 413;
  if (ec == beast::error::timeout) return 408;
  if (ec == bhttp::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
      ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor ||
      ec == bhttp::error::partial_message)
    return 0;
  return 400;
}

std::string_view ReadErrorCode(int status) {
  switch (status) {
    case 431: return "header_too_large";
    case 413: return "body_too_large";
    case 408: return "read_timeout";
    default: return "bad_request";
  }
}

bool ValidFieldName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u >= 0x7f || c == ':' || c == '(' || c == ')' || c == ',' || c == ';' || c == '"' ||
        c == '/' || c == '[' || c == ']' || c == '?' || c == '=' || c == '{' || c == '}' || c == '\\' || c == '<' ||
        c == '>' || c == '@')
      return false;
  }
  return true;
}

bool ValidFieldValue(std::string_view value) {
  for (char c : value)
    if (c == '\r' || c == '\n' || c == '\0') return false;
  return true;
}

// The status line and header block of `r`: one contiguous buffer, written together with the
// body in a single gathered send. Framing fields (Content-Length, Connection,
// Transfer-Encoding) are the server's; fields a handler set that would break the framing
// (CR, LF or NUL in a value, a malformed name) are dropped, never written.
std::string SerializeHead(const Response& r, unsigned version, bool keep_alive, bool* dropped) {
  std::string out;
  out.reserve(96 + r.headers.fields().size() * 48);
  out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(r.status);
  out += ' ';
  out += reason_phrase(r.status);
  out += "\r\n";
  for (const auto& f : r.headers.fields()) {
    if (iequals(f.name, "Content-Length") || iequals(f.name, "Connection") || iequals(f.name, "Transfer-Encoding"))
      continue;
    if (!ValidFieldName(f.name) || !ValidFieldValue(f.value)) {
      *dropped = true;
      continue;
    }
    out += f.name;
    out += ": ";
    out += f.value;
    out += "\r\n";
  }
  const bool bodiless = (r.status >= 100 && r.status < 200) || r.status == 204 || r.status == 304;
  if (!bodiless) {
    out += "Content-Length: ";
    out += std::to_string(r.body.size());
    out += "\r\n";
  }
  if (version >= 11 && !keep_alive) out += "Connection: close\r\n";
  if (version < 11 && keep_alive) out += "Connection: keep-alive\r\n";
  out += "\r\n";
  return out;
}

std::string RemoteAddress(const tcp::endpoint& ep) {
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

// The whole answer to a connection refused at a connection cap, written before any request is
// read: a 503 the client can parse and retry after.
std::string RefusalResponse(std::string_view message) {
  Response r = Response::json(503, error_document("overloaded", message, {}));
  r.headers.set("Retry-After", "1");
  bool dropped = false;
  return SerializeHead(r, 11, /*keep_alive=*/false, &dropped) + r.body;
}

// Refused connections being answered at once; beyond this a refused connection is closed
// without an answer, so a connection flood costs no more than this many short coroutines.
constexpr std::size_t kMaxRefusing = 256;

}  // namespace

// One accepted connection. Lives as long as its session coroutine; the server keeps a weak
// reference to reach it (sweeper, shutdown). Touched only on its executor, except the atomic
// read deadline.
//
// One cancellation signal serves the whole session: it cancels whatever the session awaits,
// a read (timeout, shutdown) or the handler (its context stopped). Emissions are posted to the
// connection's executor and checked against `generation`, so a late one never hits the next
// phase. This costs no timer and no extra coroutine per request.
struct Connection : std::enable_shared_from_this<Connection> {
  Connection(tcp::socket socket, asio::any_io_executor ex)
      : stream(std::move(socket)), executor(std::move(ex)), accepted(std::chrono::steady_clock::now()) {}
  beast::tcp_stream stream;
  asio::any_io_executor executor;
  std::chrono::steady_clock::time_point accepted;
  std::string remote;  // address:port, for Request::remote_address
  std::string peer;    // the key it counts under for the per-peer limit; empty: not counted
  asio::cancellation_signal cancel;
  std::uint64_t generation = 0;
  // Steady-clock nanoseconds after which the pending read or write is cancelled by the sweeper;
  // 0: none.
  std::atomic<std::int64_t> io_deadline{0};
  bool io_timed_out = false;
  // Like io_deadline, for writes that are not the session's own await (a WebSocket message
  // written by a route's coroutine): when it passes, the sweeper closes the socket, which
  // fails every operation on it.
  std::atomic<std::int64_t> close_deadline{0};

  bool busy = false;         // a request (or a WebSocket) is being served
  bool watching = false;     // a disconnect watch is pending
  bool websocket = false;
  bool close_after = false;  // answer the current request, then close
  std::optional<CancelSource> source;
  std::shared_ptr<ResponseMark> response;  // the current (or last) request's
  std::shared_ptr<RequestValues> values;   // the current (or last) request's, reused when free

  void SetIoDeadline(Duration timeout) {
    io_timed_out = false;
    io_deadline.store((std::chrono::steady_clock::now() + timeout).time_since_epoch().count(),
                        std::memory_order_relaxed);
  }
  void SetIoDeadlineAt(std::chrono::steady_clock::time_point at) {
    io_timed_out = false;
    io_deadline.store(at.time_since_epoch().count(), std::memory_order_relaxed);
  }
  void ClearIoDeadline() { io_deadline.store(0, std::memory_order_relaxed); }
  void SetCloseDeadline(Duration timeout) {
    close_deadline.store((std::chrono::steady_clock::now() + timeout).time_since_epoch().count(),
                         std::memory_order_relaxed);
  }
  void ClearCloseDeadline() { close_deadline.store(0, std::memory_order_relaxed); }
  // On the connection's executor: closes the socket if `deadline` is still the one pending.
  void CloseExpired(std::int64_t deadline) {
    if (deadline == 0 || close_deadline.load(std::memory_order_relaxed) != deadline) return;
    close_deadline.store(0, std::memory_order_relaxed);
    boost::system::error_code ignored;
    stream.socket().close(ignored);
  }

  // On the connection's executor: cancels the read or write if `deadline` is still the one
  // pending.
  void IoExpired(std::int64_t deadline) {
    if (deadline == 0 || io_deadline.load(std::memory_order_relaxed) != deadline) return;
    io_deadline.store(0, std::memory_order_relaxed);
    io_timed_out = true;
    cancel.emit(asio::cancellation_type::terminal);
  }

  // On the connection's executor: cancels the handler of request `gen`, after `grace`.
  void StopHandler(std::uint64_t gen, Duration grace) {
    if (!busy || generation != gen) return;
    if (grace <= Duration::zero()) {
      cancel.emit(asio::cancellation_type::terminal);
      return;
    }
    auto timer = std::make_shared<asio::steady_timer>(executor, grace);
    timer->async_wait([self = shared_from_this(), gen, timer](const boost::system::error_code& ec) {
      if (!ec && self->busy && self->generation == gen) self->cancel.emit(asio::cancellation_type::terminal);
    });
  }

  // Watches the socket while request `gen` is handled: a peer that closes (or resets) stops
  // the request's context with `cancelled`. Bytes of a pipelined request end the watch.
  void WatchDisconnect(std::uint64_t gen) {
    stream.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this(), gen](
                                                           const boost::system::error_code& ec) {
      if (ec == asio::error::operation_aborted || !self->busy || self->generation != gen) return;
      if (!ec) {
        switch (internal::PeekPeer(self->stream.socket().native_handle())) {
          case internal::PeerState::has_data: return;
          case internal::PeerState::quiet: self->WatchDisconnect(gen); return;
          case internal::PeerState::gone: break;
        }
      }
      if (self->source) self->source->request_stop(StopReason::cancelled);
    });
  }
};

struct RouteEntry {
  std::string method;  // empty for WebSocket routes
  std::string path;
  Handler handler;
  WebSocketHandler ws_handler;
  std::vector<std::string> subprotocols;
  RouteOptions options;
  // Request counters by status, filled on first use so the hot path takes no lock.
  std::unique_ptr<std::array<std::atomic<observe::Counter*>, kLastStatus - kFirstStatus + 1>> by_status;
  observe::Histogram* duration = nullptr;
};

struct Server::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::any_io_executor ex, ServerOptions opts)
      : executor(std::move(ex)), control(asio::make_strand(executor)), options(std::move(opts)) {
    if (options.metrics) {
      auto& reg = *options.metrics;
      deadline.emplace(reg);
      requests = &reg.counter("cutoff_http_requests_total", "HTTP requests answered, by route and status.",
                              {"route", "code"});
      durations = &reg.histogram("cutoff_http_request_duration_seconds",
                                 "Time from a request's headers being read to its response being written.",
                                 {"route"}, observe::latency_buckets());
      bad_requests = &reg.counter("cutoff_http_bad_requests_total",
                                  "Requests refused before routing (limits, timeouts, malformed), by reason.",
                                  {"reason"});
      connections_gauge = &reg.gauge("cutoff_http_connections", "Open HTTP connections.").with({});
      in_flight_gauge = &reg.gauge("cutoff_http_requests_in_flight", "Requests being handled.").with({});
      budget_received = &deadline->budget_received.with({"http"});
      http_stops.emplace(*deadline, "http");
    }
  }

  asio::any_io_executor executor;
  asio::strand<asio::any_io_executor> control;  // shutdown state: signals, grace timer
  ServerOptions options;
  std::list<RouteEntry> routes;  // stable addresses
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors;
  std::atomic<std::size_t> connections{0};
  std::atomic<std::size_t> in_flight{0};
  std::atomic<bool> shutting_down{false};
  std::atomic<int> signal_number{0};
  std::unique_ptr<asio::signal_set> signals;
  std::unique_ptr<asio::steady_timer> grace_timer;

  // Written once: the answers to connections refused at the caps.
  const std::string refused_busy = RefusalResponse("too many open connections");
  const std::string refused_peer = RefusalResponse("too many connections from this address");
  std::atomic<std::size_t> refusing{0};

  std::mutex peers_mu;  // guards `peers`
  std::unordered_map<std::string, std::size_t> peers;  // open connections by PeerKey

  std::mutex mu;  // guards `live`
  std::list<std::pair<std::weak_ptr<Connection>, asio::any_io_executor>> live;

  std::optional<observe::DeadlineMetrics> deadline;
  observe::Family<observe::Counter>* requests = nullptr;
  observe::Family<observe::Histogram>* durations = nullptr;
  observe::Family<observe::Counter>* bad_requests = nullptr;
  observe::Gauge* connections_gauge = nullptr;
  observe::Gauge* in_flight_gauge = nullptr;
  observe::Histogram* budget_received = nullptr;
  std::optional<observe::LayerStops> http_stops;  // handlers stopped: stops and overshoot
  std::atomic<std::int64_t> last_rejection_log{0};

  Context Background() const {
    return options.timers ? Context::background(*options.timers) : Context::background();
  }

  void Log(std::string_view line) const {
    if (options.log) options.log(line);
  }

  void CountBadRequest(std::string_view reason) {
    if (bad_requests) bad_requests->with({reason}).inc();
  }

  void CountRequest(RouteEntry* route, int status, Duration took) {
    if (!requests) return;
    if (status < kFirstStatus || status > kLastStatus) status = 500;
    if (!route) {
      requests->with({"unmatched", std::to_string(status)}).inc();
      return;
    }
    auto& slot = (*route->by_status)[status - kFirstStatus];
    observe::Counter* counter = slot.load(std::memory_order_acquire);
    if (!counter) {  // the first request of this route with this status
      counter = &requests->with({RouteName(*route), std::to_string(status)});
      slot.store(counter, std::memory_order_release);
    }
    counter->inc();
    route->duration->observe(Seconds(took));
  }

  static std::string RouteName(const RouteEntry& r) { return r.options.name.empty() ? r.path : r.options.name; }

  void ReportRejections(const InboundBudget& inbound, std::string_view request_id) {
    if (inbound.rejected.empty()) return;
    if (deadline)
      for (const auto& r : inbound.rejected) deadline->header_rejected.with({r.name, to_string(r.reason)}).inc();
    // Logged at most once a second: a client sending garbage must not flood the log.
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    auto last = last_rejection_log.load(std::memory_order_relaxed);
    if (now - last < std::chrono::nanoseconds(std::chrono::seconds(1)).count()) return;
    if (!last_rejection_log.compare_exchange_strong(last, now)) return;
    const auto& r = inbound.rejected.front();
    std::string line = "{\"event\":\"budget_header_rejected\",\"header\":";
    append_json_string(line, r.name);
    line += ",\"value\":";
    append_json_string(line, r.value);
    line += ",\"reason\":";
    append_json_string(line, to_string(r.reason));
    line += ",\"request_id\":";
    append_json_string(line, request_id);
    line += "}";
    Log(line);
  }

  // What `address` counts under for the per-peer limit; empty: it is not limited. An IPv6
  // peer counts by its /64, which one host usually holds whole (so rotating addresses within
  // it gains nothing); an IPv4-mapped address counts as the IPv4 one.
  std::string PeerKey(asio::ip::address address) const {
    const auto& l = options.limits;
    if (l.max_connections_per_peer == 0) return {};
    if (address.is_v6() && address.to_v6().is_v4_mapped())
      address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
    if (address.is_loopback() && !l.limit_loopback_peers) return {};
    if (address.is_v4()) {
      const auto b = address.to_v4().to_bytes();
      return std::string(reinterpret_cast<const char*>(b.data()), b.size());
    }
    const auto b = address.to_v6().to_bytes();
    return "6" + std::string(reinterpret_cast<const char*>(b.data()), 8);
  }

  // Counts a connection from `key`; false (and nothing counted) when that peer is at its limit.
  bool AdmitPeer(const std::string& key) {
    if (key.empty()) return true;
    std::lock_guard lock(peers_mu);
    std::size_t& n = peers[key];
    if (n >= options.limits.max_connections_per_peer) {
      if (n == 0) peers.erase(key);
      return false;
    }
    ++n;
    return true;
  }

  void ReleasePeer(const std::string& key) {
    if (key.empty()) return;
    std::lock_guard lock(peers_mu);
    auto it = peers.find(key);
    if (it != peers.end() && --it->second == 0) peers.erase(it);
  }

  // Answers a connection refused at a cap with `response` and closes it.
  void Refuse(std::shared_ptr<Connection> c, const std::string& response);

  void Track(const std::shared_ptr<Connection>& c, asio::any_io_executor ex) {
    std::lock_guard lock(mu);
    live.emplace_back(c, std::move(ex));
  }

  void ForEachLive(const std::function<void(Connection&)>& f) {
    std::vector<std::pair<std::shared_ptr<Connection>, asio::any_io_executor>> targets;
    {
      std::lock_guard lock(mu);
      for (auto it = live.begin(); it != live.end();) {
        if (auto c = it->first.lock()) {
          targets.emplace_back(std::move(c), it->second);
          ++it;
        } else {
          it = live.erase(it);
        }
      }
    }
    for (auto& [c, ex] : targets) asio::post(ex, [c = c, f] { f(*c); });
  }

  void ConnectionClosed(const Connection& c) {
    ReleasePeer(c.peer);
    if (connections_gauge) connections_gauge->add(-1);
    if (connections.fetch_sub(1) == 1 && shutting_down.load()) {
      // The last connection is gone: let the io_context run out of work.
      asio::post(control, [self = shared_from_this()] {
        if (self->grace_timer) self->grace_timer->cancel();
        if (self->sweep_timer) self->sweep_timer->cancel();
      });
    }
  }

  RouteEntry* FindRoute(std::string_view path, std::string_view method, bool websocket, bool& path_known,
                        std::string& allow) {
    RouteEntry* found = nullptr;
    RouteEntry* get = nullptr;  // answers HEAD when no route of its own does (RFC 9110, 9.3.2)
    for (auto& r : routes) {
      if (r.path != path) continue;
      const bool is_ws = static_cast<bool>(r.ws_handler);
      if (is_ws != websocket) continue;
      path_known = true;
      if (is_ws || r.method == method) {
        found = &r;
        break;
      }
      if (r.method == "GET") get = &r;
      if (!allow.empty()) allow += ", ";
      allow += r.method;
      if (r.method == "GET") allow += ", HEAD";
    }
    if (!found && method == "HEAD") found = get;
    return found;
  }

  asio::awaitable<void> AcceptLoop(std::shared_ptr<Impl> self, tcp::acceptor& acceptor);
  // Runs the route's handler and turns anything it throws into a response: the taxonomy's
  // status for cutoff::Error, 500 (details logged, not sent) for anything else.
  // `failed` receives the code of the error it turned into a response, for the request log.
  asio::awaitable<Response> RunHandler(const RouteEntry& route, const Request& req, const Context& ctx,
                                       std::optional<ErrorCode>& failed);
  void LogInternal(const Context& ctx, std::string_view what) const {
    std::string line = "{\"event\":\"handler_error\",\"request_id\":";
    append_json_string(line, ctx.request_id());
    line += ",\"operation\":";
    append_json_string(line, ctx.operation());
    line += ",\"message\":";
    append_json_string(line, what);
    line += "}";
    Log(line);
  }
  // Writes `r` in one gathered send, bounded by `timeout` (through the sweeper). False when
  // the connection failed or timed out.
  asio::awaitable<bool> WriteResponse(Connection& c, const Response& r, unsigned version, bool keep_alive,
                                      bool head_only, Duration timeout);
  asio::awaitable<void> Session(std::shared_ptr<Impl> self, std::shared_ptr<Connection> c);
  // Binds the request's context and runs its handler; nullopt when the client went away.
  // `started` is when its headers were read.
  asio::awaitable<std::optional<Response>> Dispatch(Connection& c, RouteEntry* route, Request& req,
                                                    std::chrono::steady_clock::time_point started);
  asio::awaitable<void> ServeWebSocket(Connection& c, RouteEntry& route, internal::BeastRequest beast_request,
                                       Request req);
  void BeginShutdown(Duration grace);
  // Every sweep_interval, cancels reads past their deadline: one timer for all connections
  // instead of one per read.
  void Sweep();
  std::unique_ptr<asio::steady_timer> sweep_timer;
  Duration sweep_interval{};
};

namespace {

class BeastWebSocket final : public WebSocket {
 public:
  BeastWebSocket(websocket::stream<beast::tcp_stream&>& ws, Connection& connection, std::size_t max_message,
                 Duration write_timeout, std::string subprotocol, CancelSource source)
      : ws_(ws),
        connection_(connection),
        max_message_(max_message),
        write_timeout_(write_timeout),
        subprotocol_(std::move(subprotocol)),
        source_(std::move(source)) {}

  asio::awaitable<std::optional<std::string>> read() override {
    beast::flat_buffer buffer;
    do {
      // At most one byte past the limit: an oversized message is refused as soon as it shows,
      // never buffered whole.
      const std::size_t room = max_message_ - std::min(buffer.size(), max_message_) + 1;
      auto [ec, n] = co_await ws_.async_read_some(buffer, room, as_tuple(use_awaitable));
      if (ec) {
        // The peer closed or vanished: whatever works for it stops.
        source_.request_stop(StopReason::cancelled);
        co_return std::nullopt;
      }
      heard = true;
      if (buffer.size() > max_message_) {
        // 1009, with a closing handshake that reads (and drops) the rest of the message. The
        // limit is ours, not Beast's read_message_max: Beast closes the socket with the rest
        // unread, the kernel then resets the connection, and the client loses the close frame
        // (it sees 1006).
        const websocket::close_reason why(websocket::close_code::too_big, "message too big");
        co_await ws_.async_close(why, as_tuple(use_awaitable));
        source_.request_stop(StopReason::cancelled);
        co_return std::nullopt;
      }
    } while (!ws_.is_message_done());
    co_return beast::buffers_to_string(buffer.data());
  }

  asio::awaitable<bool> write(std::string_view text) override {
    ws_.text(true);
    // A peer that stops reading fills the socket's buffers and the write never completes:
    // after write_timeout the sweeper closes the connection, failing it.
    connection_.SetCloseDeadline(write_timeout_);
    auto [ec, n] = co_await ws_.async_write(asio::buffer(text.data(), text.size()), as_tuple(use_awaitable));
    connection_.ClearCloseDeadline();
    co_return !ec;
  }

  asio::awaitable<void> close(std::uint16_t code, std::string_view reason) override {
    const auto shown = reason.substr(0, websocket::reason_string::static_capacity);
    websocket::close_reason why(static_cast<websocket::close_code>(code),
                                boost::beast::string_view(shown.data(), shown.size()));
    co_await ws_.async_close(why, as_tuple(use_awaitable));
  }

  std::string_view subprotocol() const noexcept override { return subprotocol_; }

  // Something (a message or a control frame) arrived since the keep-alive last looked.
  bool heard = false;

 private:
  websocket::stream<beast::tcp_stream&>& ws_;
  Connection& connection_;
  std::size_t max_message_;
  Duration write_timeout_;
  std::string subprotocol_;
  CancelSource source_;
};

std::string ChooseSubprotocol(std::string_view offered, const std::vector<std::string>& accepted) {
  // Offered: "a, b, c" in the client's preference; we pick by the server's preference.
  std::vector<std::string_view> offers;
  while (!offered.empty()) {
    const auto comma = offered.find(',');
    std::string_view item = offered.substr(0, comma);
    offered = comma == std::string_view::npos ? std::string_view() : offered.substr(comma + 1);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) offers.push_back(item);
  }
  for (const auto& a : accepted)
    for (auto o : offers)
      if (o == a) return a;
  return {};
}

// Pings a WebSocket peer not heard from for `interval` and closes the connection when nothing
// arrives within `pong_timeout` of the ping. Returns only when cancelled (its handler ended),
// so the handler always ends on its own, through a failed read.
asio::awaitable<void> KeepAlive(websocket::stream<beast::tcp_stream&>& ws, BeastWebSocket& socket, Connection& c,
                                Duration interval, Duration pong_timeout) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    socket.heard = false;
    timer.expires_after(interval);
    if (auto [ec] = co_await timer.async_wait(as_tuple(use_awaitable)); ec) co_return;
    if (socket.heard) continue;
    // A ping behind a write that cannot complete waits for it; write_timeout bounds that.
    if (auto [ec] = co_await ws.async_ping({}, as_tuple(use_awaitable)); !ec) {
      timer.expires_after(pong_timeout);
      if (auto [tec] = co_await timer.async_wait(as_tuple(use_awaitable)); tec) co_return;
      if (socket.heard) continue;
    }
    boost::system::error_code ignored;
    c.stream.socket().close(ignored);  // the handler's read fails and it winds down
    timer.expires_at(asio::steady_timer::time_point::max());
    co_await timer.async_wait(as_tuple(use_awaitable));
    co_return;
  }
}

}  // namespace

void Server::Impl::Refuse(std::shared_ptr<Connection> c, const std::string& response) {
  if (refusing.fetch_add(1) >= kMaxRefusing) {
    refusing.fetch_sub(1);
    return;  // `c` closes as it goes
  }
  asio::co_spawn(
      c->executor,
      [self = shared_from_this(), c, &response]() -> asio::awaitable<void> {
        c->stream.expires_after(std::chrono::seconds(1));  // answer and drain, in all
        auto [ec, n] = co_await asio::async_write(c->stream, asio::buffer(response), as_tuple(use_awaitable));
        boost::system::error_code e;
        c->stream.socket().shutdown(tcp::socket::shutdown_send, e);
        // Read what the client sent until it closes: closing with unread bytes resets the
        // connection, and a reset can destroy the 503 before the client reads it.
        std::array<char, 2048> sink;
        for (std::size_t drained = 0; !ec && drained < 64 * 1024;) {
          auto [rec, rn] = co_await c->stream.async_read_some(asio::buffer(sink), as_tuple(use_awaitable));
          ec = rec;
          drained += rn;
        }
        c->stream.socket().close(e);
        self->refusing.fetch_sub(1);
      },
      asio::detached);
}

asio::awaitable<void> Server::Impl::AcceptLoop(std::shared_ptr<Impl> self, tcp::acceptor& acceptor) {
  for (;;) {
    // Each connection on its own strand, unless the io_context runs on one thread anyway.
    asio::any_io_executor conn_executor =
        options.one_io_thread ? executor : asio::any_io_executor(asio::make_strand(executor));
    auto [ec, socket] = co_await acceptor.async_accept(conn_executor, as_tuple(use_awaitable));
    if (shutting_down.load()) co_return;
    if (ec) {
      if (ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor) co_return;
      // Out of descriptors or a transient network error: back off briefly, keep serving.
      asio::steady_timer pause(control, std::chrono::milliseconds(10));
      co_await pause.async_wait(as_tuple(use_awaitable));
      continue;
    }
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    socket.set_option(asio::socket_base::keep_alive(true), ignored);
    const tcp::endpoint peer = socket.remote_endpoint(ignored);
    auto c = std::make_shared<Connection>(std::move(socket), conn_executor);
    if (connections.fetch_add(1) >= options.limits.max_connections) {
      connections.fetch_sub(1);
      CountBadRequest("too_many_connections");
      Refuse(std::move(c), refused_busy);
      continue;
    }
    c->peer = PeerKey(peer.address());
    if (!AdmitPeer(c->peer)) {
      connections.fetch_sub(1);
      CountBadRequest("too_many_connections_per_peer");
      c->peer.clear();
      Refuse(std::move(c), refused_peer);
      continue;
    }
    c->remote = RemoteAddress(peer);
    if (connections_gauge) connections_gauge->add(1);
    Track(c, conn_executor);
    asio::cancellation_signal& signal = c->cancel;
    asio::co_spawn(conn_executor, Session(self, c), asio::bind_cancellation_slot(signal.slot(), asio::detached));
  }
}

asio::awaitable<Response> Server::Impl::RunHandler(const RouteEntry& route, const Request& req,
                                                   const Context& ctx, std::optional<ErrorCode>& failed) {
  // The answer for a handler's error, read against the request's ledger (a stop after the
  // handler's work committed is commit_ambiguous, never a safe failure).
  auto answer = [&](const Error& raw) {
    const CommitLedger* ledger = ctx.commit_ledger();
    const Error e = ledger ? report_after_commit_point(raw, *ledger, "request " + RouteName(route)) : raw;
    failed = e.code();
    if (e.code() == ErrorCode::commit_ambiguous && deadline)
      deadline->route_commit_ambiguous.with({RouteName(route)}).inc();
    return ErrorResponse(e.code(), e.message(), ctx.request_id());
  };
  std::exception_ptr failure;
  try {
    co_return co_await route.handler(req, ctx);
  } catch (...) {
    failure = std::current_exception();
  }
  // A handler cancelled because its context stopped reports the stop, not the abort.
  const Error e = to_error(failure, ctx.stop_reason(), ctx.request_id());
  if (e.code() == ErrorCode::internal) LogInternal(ctx, e.message());
  co_return answer(e);
}

asio::awaitable<bool> Server::Impl::WriteResponse(Connection& c, const Response& r, unsigned version,
                                                  bool keep_alive, bool head_only, Duration timeout) {
  bool dropped = false;
  const std::string head = SerializeHead(r, version, keep_alive, &dropped);
  if (dropped) {
    CountBadRequest("invalid_response_header");
    Log("{\"event\":\"response_header_dropped\",\"reason\":\"a handler set a header that is not valid HTTP\"}");
  }
  const bool bodiless = head_only || (r.status >= 100 && r.status < 200) || r.status == 204 || r.status == 304;
  const std::array<asio::const_buffer, 2> buffers{asio::buffer(head),
                                                   bodiless ? asio::const_buffer() : asio::buffer(r.body)};
  c.SetIoDeadline(timeout);
  auto [ec, n] = co_await asio::async_write(c.stream.socket(), buffers, as_tuple(use_awaitable));
  c.ClearIoDeadline();
  co_return !ec;
}

void Server::Impl::Sweep() {
  sweep_timer->expires_after(sweep_interval);
  sweep_timer->async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec) return;
    if (self->shutting_down.load() && self->connections.load() == 0) return;
    const std::int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
    {
      std::lock_guard lock(self->mu);
      for (auto it = self->live.begin(); it != self->live.end();) {
        auto c = it->first.lock();
        if (!c) {
          it = self->live.erase(it);
          continue;
        }
        const std::int64_t deadline = c->io_deadline.load(std::memory_order_relaxed);
        if (deadline != 0 && now >= deadline)
          asio::post(it->second, [c, deadline] { c->IoExpired(deadline); });
        const std::int64_t close_at = c->close_deadline.load(std::memory_order_relaxed);
        if (close_at != 0 && now >= close_at)
          asio::post(it->second, [c, close_at] { c->CloseExpired(close_at); });
        ++it;
      }
    }
    self->Sweep();
  });
}

// `keep_alive` holds the server state for as long as the session runs.
asio::awaitable<void> Server::Impl::Session(std::shared_ptr<Impl> /*keep_alive*/, std::shared_ptr<Connection> c) {
  struct Closed {
    Impl* impl;
    const Connection& c;
    ~Closed() { impl->ConnectionClosed(c); }
  } closed{this, *c};
  const auto& limits = options.limits;
  const std::string& remote = c->remote;
  beast::flat_buffer buffer(limits.max_header_bytes + limits.max_body_bytes + 64 * 1024);
  // Cancelled reads complete with operation_aborted instead of throwing; the handler phase
  // turns throwing back on (see Dispatch).
  co_await asio::this_coro::throw_if_cancelled(false);
  try {
    for (bool first = true;; first = false) {
      if (shutting_down.load()) break;
      co_await asio::this_coro::reset_cancellation_state();
      if (first) {
        // The first request's headers are due header_timeout after accept: a peer that
        // connects and sends nothing holds its slot that long, not the idle timeout.
        c->SetIoDeadlineAt(c->accepted + limits.header_timeout);
      } else {
        // Between requests: wait for the first byte under the idle timeout.
        if (buffer.size() == 0) {
          c->SetIoDeadline(limits.idle_timeout);
          auto [ec, n] = co_await c->stream.async_read_some(buffer.prepare(4096), as_tuple(use_awaitable));
          c->ClearIoDeadline();
          if (ec) break;
          buffer.commit(n);
        }
        c->SetIoDeadline(limits.header_timeout);
      }
      // Gather the whole header block before parsing it (Beast would too), so its raw lines
      // can be checked for obs-fold, which Beast's parser silently joins.
      boost::system::error_code ec;
      std::size_t header_end = std::string_view::npos;
      bool bare_lf = false;
      for (std::size_t scanned = 0;;) {
        const std::string_view data(static_cast<const char*>(buffer.data().data()), buffer.size());
        header_end = internal::find_header_end(data, scanned);
        if (header_end != std::string_view::npos || data.size() >= limits.max_header_bytes) break;
        // (Once the block is complete, Beast's parser refuses a bare LF in it itself.)
        if ((bare_lf = internal::has_bare_lf(data, scanned))) break;
        scanned = data.size();
        auto [rec, n] = co_await c->stream.async_read_some(buffer.prepare(4096), as_tuple(use_awaitable));
        if (rec) {
          ec = rec;
          break;
        }
        buffer.commit(n);
      }
      c->ClearIoDeadline();
      if (c->io_timed_out) {
        if (buffer.size() == 0) break;  // it never said anything: nothing to answer
        ec = beast::error::timeout;
      }
      internal::BeastRequestParser parser;
      internal::configure_request_parser(parser, limits.max_header_bytes, limits.max_body_bytes);
      std::string_view refused;  // why a parsed header is refused (RFC 9112 framing)
      if (!ec && bare_lf) {
        refused = "a header line ends with a bare LF (CRLF is required)";
      } else if (!ec) {
        if (header_end != std::string_view::npos &&
            internal::has_obs_fold(std::string_view(static_cast<const char*>(buffer.data().data()), header_end),
                                   header_end)) {
          refused = "obs-fold (a header line continued on the next) is not accepted";
        } else {
          // The whole block is buffered (or the limit reached): one put parses it, or fails.
          buffer.consume(parser.put(buffer.data(), ec));
          if (!ec && !parser.is_header_done()) ec = bhttp::error::header_limit;
          if (!ec) refused = internal::framing_error(parser.get());
        }
      }
      if (!ec && refused.empty() && !parser.is_done()) {
        const auto expect = parser.get()[bhttp::field::expect];
        if (iequals(expect, "100-continue")) {
          static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
          c->SetIoDeadline(limits.write_timeout);
          co_await asio::async_write(c->stream.socket(), asio::buffer(kContinue.data(), kContinue.size()),
                                     as_tuple(use_awaitable));
          c->ClearIoDeadline();
        }
        c->SetIoDeadline(limits.body_timeout);
        auto [bec, bn] = co_await bhttp::async_read(c->stream, buffer, parser, as_tuple(use_awaitable));
        c->ClearIoDeadline();
        ec = c->io_timed_out ? beast::error::timeout : bec;
      }
      if (ec || !refused.empty()) {
        // The connection closes after the answer: nothing after a request that could not be
        // read, or whose framing is in doubt, is ever parsed.
        const int status = ec ? StatusForReadError(ec) : 400;
        if (status == 0) break;
        co_await asio::this_coro::reset_cancellation_state();
        CountBadRequest(ReadErrorCode(status));
        const std::string message = ec ? ec.message() : std::string(refused);
        const Response r = Response::json(status, error_document(ReadErrorCode(status), message, {}));
        co_await WriteResponse(*c, r, 11, /*keep_alive=*/false, false, std::chrono::seconds(2));
        break;
      }

      const bool upgrade = websocket::is_upgrade(parser.get());
      const bool keep_alive = parser.get().keep_alive();
      internal::BeastRequest beast_request = parser.release();
      Request req = internal::to_request(upgrade ? internal::BeastRequest(beast_request) : std::move(beast_request),
                                         remote);
      bool path_known = false;
      std::string allow;
      RouteEntry* route = FindRoute(req.path(), req.method, upgrade, path_known, allow);
      if (upgrade && route) {
        co_await ServeWebSocket(*c, *route, std::move(beast_request), std::move(req));
        break;
      }

      const auto started = std::chrono::steady_clock::now();
      std::optional<Response> res;
      if (!route) {
        res = path_known ? ErrorResponse(ErrorCode::invalid_argument, "method not allowed", {})
                         : ErrorResponse(ErrorCode::not_found, "no route for " + std::string(req.path()), {});
        res->status = path_known ? 405 : 404;
        if (path_known) res->headers.set("Allow", allow);
      } else {
        res = co_await Dispatch(*c, route, req, started);
      }
      CountRequest(route, res ? res->status : 499, std::chrono::steady_clock::now() - started);
      if (!res) {  // the client is gone: nothing to write
        if (c->response) c->response->mark_sent(std::chrono::steady_clock::now());
        break;
      }

      const bool keep = keep_alive && !shutting_down.load() && !c->close_after;
      const bool written = co_await WriteResponse(*c, *res, req.version, keep, req.method == "HEAD", limits.write_timeout);
      if (c->response) c->response->mark_sent(std::chrono::steady_clock::now());
      if (!written || !keep) break;
    }
  } catch (const std::exception& e) {
    std::string line = "{\"event\":\"connection_error\",\"message\":";
    append_json_string(line, e.what());
    line += "}";
    Log(line);
  }
  boost::system::error_code ignored;
  c->stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  c->stream.socket().close(ignored);
}

asio::awaitable<std::optional<Response>> Server::Impl::Dispatch(Connection& c, RouteEntry* route, Request& req,
                                                                std::chrono::steady_clock::time_point started) {
  const std::string operation = RouteName(*route);
  // The request's values, and the mark set when its response is written (or abandoned):
  // backends still working for the request after that record it as orphaned work. Both are
  // the connection's, reused when nothing from the previous request still holds them (only
  // this strand can share them, so a count of one cannot change under us).
  if (!c.values || c.values.use_count() != 1) {
    c.values = std::make_shared<RequestValues>();
  } else {
    c.values->response.reset();
    c.values->commits.reset();
    c.values->trace.traceparent.clear();
    c.values->trace.tracestate.clear();
  }
  RequestValues& values = *c.values;
  values.request_id = RequestIdFor(req);
  values.operation = operation;
  // A request that may write gets a ledger: whether its handler's work passed a commit point
  // (an effect region committed, a POST left for another service) decides whether a stop or
  // a failure that says nothing of the effect is answered commit_ambiguous (RunHandler).
  // Safe methods pay nothing.
  if (!safe_method(req.method)) values.commits = std::make_shared<CommitLedger>();
  if (!c.response || c.response.use_count() != 1) c.response = std::make_shared<ResponseMark>();
  c.response->reset();
  values.response = c.response;
  std::string trace_id;
  if (auto tp = req.headers.get("traceparent")) {
    if (auto parsed = observe::parse_traceparent(*tp)) {
      // Our span is a child of the caller's; outbound calls name it as their parent.
      const auto ours = parsed->child();
      values.trace.traceparent = ours.to_string();
      trace_id = ours.trace_id_hex();
      if (auto state = req.headers.get("tracestate")) values.trace.tracestate = std::string(*state);
    }
  }
  const std::string request_id = values.request_id;

  std::optional<Response> res;
  std::optional<Duration> budget;
  std::optional<ErrorCode> failed;  // the error the answer reports, if any
  StopReason stop = StopReason::none;
  const bool bind = route->options.bind_deadline;
  if (!bind) {
    const Context ctx = Background().with_values(std::shared_ptr<const RequestValues>(c.values));
    res = co_await RunHandler(*route, req, ctx, failed);
  } else {
    // Views of the fields on the stack: requests rarely carry more than 32. The slots are
    // left unconstructed until used (initialising all 32 cost more than reading the headers).
    union Slots {
      Slots() noexcept {}
      HeaderField field[32];
    } on_stack;
    std::vector<HeaderField> on_heap;
    std::span<const HeaderField> headers;
    const auto& fields = req.headers.fields();
    if (fields.size() <= std::size(on_stack.field)) {
      for (std::size_t i = 0; i < fields.size(); ++i)
        new (&on_stack.field[i]) HeaderField{fields[i].name, fields[i].value};
      headers = std::span<const HeaderField>(on_stack.field, fields.size());
    } else {
      on_heap = req.headers.views();
      headers = on_heap;
    }
    const InboundBudget inbound = parse_inbound_budget(headers, options.budget, &std::chrono::system_clock::now);
    ReportRejections(inbound, request_id);
    budget = inbound.budget;
    if (route->options.budget) budget = std::min(*budget, *route->options.budget);
    if (inbound.from_caller && budget_received) budget_received->observe(Seconds(inbound.budget));
    if (*budget <= Duration::zero()) {
      // Entry fail-fast: the caller's budget is already spent; no handler runs.
      if (deadline) {
        deadline->route_deadline_exceeded.with({operation}).inc();
        deadline->route_stopped.with({operation, "deadline_exceeded"}).inc();
      }
      failed = ErrorCode::deadline_exceeded;
      res = ErrorResponse(ErrorCode::deadline_exceeded, "the request's budget was already spent on arrival",
                          request_id);
    } else {
      const Context base = Background().with_values(std::shared_ptr<const RequestValues>(c.values));
      auto [ctx, source] = base.with_cancel(Deadline::after(*budget, base.clock()));
      c.busy = true;
      c.source = source;
      const std::uint64_t gen = ++c.generation;
      in_flight.fetch_add(1);
      if (in_flight_gauge) in_flight_gauge->add(1);
      std::atomic<std::int64_t> stopped_at{0};
      {
        // A stop (deadline, disconnect, shutdown) cancels the handler through the session's
        // cancellation signal, on the connection's executor, after the route's grace.
        std::shared_ptr<Connection> self = c.shared_from_this();
        const Duration grace = route->options.stop_grace;
        CancelCallback on_stop(ctx.token(), [&stopped_at, self, gen, grace](StopReason) noexcept {
          stopped_at.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
          asio::post(self->executor, [self, gen, grace] { self->StopHandler(gen, grace); });
        });
        // The watch is armed from the executor's queue: a handler that answers without ever
        // suspending is done before it runs, and never pays for it (an epoll_ctl per request).
        c.watching = false;
        asio::post(c.executor, [self, gen] {
          if (!self->busy || self->generation != gen) return;
          self->watching = true;
          self->WatchDisconnect(gen);
        });
        co_await asio::this_coro::throw_if_cancelled(true);
        Response handled = co_await RunHandler(*route, req, ctx, failed);
        co_await asio::this_coro::throw_if_cancelled(false);
        c.busy = false;
        ++c.generation;
        if (c.watching) {
          boost::system::error_code ignored;
          c.stream.socket().cancel(ignored);  // ends the disconnect watch
        }
        co_await asio::this_coro::reset_cancellation_state();
        const StopReason reason = ctx.stop_reason();
        stop = reason;
        // A client that went away gets nothing; otherwise the handler's answer (for a stopped
        // handler, RunHandler already turned the stop into the taxonomy's response).
        if (reason != StopReason::cancelled) res = std::move(handled);
      }
      if (stop != StopReason::none) {
        const auto stop_ns = stopped_at.load(std::memory_order_relaxed);
        if (http_stops)
          http_stops->record(stop, stop_ns == 0 ? Duration::zero()
                                                : std::chrono::steady_clock::now().time_since_epoch() -
                                                      std::chrono::steady_clock::duration(stop_ns));
        if (deadline) {
          if (stop == StopReason::deadline_exceeded) deadline->route_deadline_exceeded.with({operation}).inc();
          deadline->route_stopped.with({operation, to_string(stop)}).inc();
        }
      }
      in_flight.fetch_sub(1);
      if (in_flight_gauge) in_flight_gauge->add(-1);
      c.source.reset();
    }
  }

  const int status = res ? res->status : 499;
  if (res) res->headers.set("X-Request-Id", request_id);
  if (options.log) {
    observe::RequestLog log;
    log.request_id = request_id;
    log.operation = operation;
    if (!res) {
      log.outcome = "cancelled";
    } else if (stop != StopReason::none) {
      // The handler answered (e.g. a partial GraphQL result) but its context was stopped.
      log.outcome = std::string(to_string(error_code_for(stop)));
    } else if (failed) {
      log.outcome = std::string(to_string(*failed));
    } else {
      log.outcome = status < 400 ? std::string("ok") : "http_" + std::to_string(status);
    }
    if (budget) log.budget_received = std::chrono::ceil<std::chrono::milliseconds>(*budget);
    log.time_used = std::chrono::steady_clock::now() - started;
    log.trace_id = trace_id;
    Log(log.to_json());
  }
  co_return res;
}

asio::awaitable<void> Server::Impl::ServeWebSocket(Connection& c, RouteEntry& route,
                                                   internal::BeastRequest beast_request, Request req) {
  websocket::stream<beast::tcp_stream&> ws(c.stream);
  // Beast's timer bounds the opening and closing handshakes; liveness is KeepAlive's, which
  // (unlike Beast's idle timeout) has a ping interval and a pong timeout of its own.
  websocket::stream_base::timeout timeouts = websocket::stream_base::timeout::suggested(beast::role_type::server);
  timeouts.handshake_timeout = options.limits.write_timeout;
  timeouts.idle_timeout = websocket::stream_base::none();
  timeouts.keep_alive_pings = false;
  ws.set_option(timeouts);
  ws.read_message_max(0);  // BeastWebSocket::read enforces max_websocket_message_bytes (see there)
  std::string protocol;
  if (auto offered = req.headers.get("Sec-WebSocket-Protocol"))
    protocol = ChooseSubprotocol(*offered, route.subprotocols);
  ws.set_option(websocket::stream_base::decorator([protocol](websocket::response_type& res) {
    if (!protocol.empty()) res.set(bhttp::field::sec_websocket_protocol, protocol);
  }));
  auto [ec] = co_await ws.async_accept(beast_request, as_tuple(use_awaitable));
  if (ec) co_return;

  RequestValues values;
  values.request_id = RequestIdFor(req);
  values.operation = RouteName(route);
  auto [ctx, source] = Background().with_values(std::move(values)).with_cancel();
  c.busy = true;
  c.websocket = true;
  c.source = source;
  BeastWebSocket socket(ws, c, options.limits.max_websocket_message_bytes, options.limits.write_timeout, protocol,
                        source);
  ws.control_callback([&socket](websocket::frame_type, beast::string_view) { socket.heard = true; });
  auto run = [&]() -> asio::awaitable<void> {
    try {
      co_await route.ws_handler(socket, req, ctx);
    } catch (const std::exception& e) {
      std::string line = "{\"event\":\"websocket_error\",\"message\":";
      append_json_string(line, e.what());
      line += "}";
      Log(line);
    }
  };
  const Duration interval = options.limits.websocket_ping_interval;
  if (interval > Duration::zero()) {
    using namespace asio::experimental::awaitable_operators;
    co_await (run() || KeepAlive(ws, socket, c, interval, options.limits.websocket_pong_timeout));
  } else {
    co_await run();
  }
  ws.control_callback();
  source.request_stop(StopReason::cancelled);
  c.busy = false;
  c.source.reset();
  if (ws.is_open()) {
    websocket::close_reason why(websocket::close_code::normal);
    co_await ws.async_close(why, as_tuple(use_awaitable));
  }
}

void Server::Impl::BeginShutdown(Duration grace) {
  if (shutting_down.exchange(true)) return;
  auto self = shared_from_this();
  asio::post(control, [self, grace] {
    for (auto& a : self->acceptors) {
      boost::system::error_code ignored;
      a->close(ignored);
    }
    if (self->signals) {
      boost::system::error_code ignored;
      self->signals->cancel(ignored);
    }
    // Idle connections close now; busy ones answer their request, then close.
    self->ForEachLive([](Connection& c) {
      if (c.busy && !c.source) return;
      if (c.busy) {
        c.close_after = true;
        return;
      }
      boost::system::error_code ignored;
      c.stream.socket().close(ignored);
    });
    if (self->connections.load() == 0) {
      if (self->sweep_timer) self->sweep_timer->cancel();
      return;
    }
    self->grace_timer = std::make_unique<asio::steady_timer>(self->control, grace);
    self->grace_timer->async_wait([self](const boost::system::error_code& ec) {
      if (ec) return;  // every connection closed in time
      self->ForEachLive([](Connection& c) {
        if (c.source) c.source->request_stop(StopReason::shutdown);
        if (!c.source || c.websocket) {
          boost::system::error_code ignored;
          c.stream.socket().close(ignored);
        }
      });
    });
  });
}

Server::Server(asio::any_io_executor executor, ServerOptions options)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(options))) {
  if (impl_->options.metrics && impl_->options.serve_metrics) {
    observe::Registry* registry = impl_->options.metrics;
    // What every Prometheus client library serves, so a scrape tells processes apart.
    observe::register_process_metrics(*registry);
    observe::register_build_info(*registry);
    route(
        "GET", "/metrics",
        [registry](const Request&, const Context&) -> asio::awaitable<Response> {
          co_return Response::text(200, registry->expose(), "text/plain; version=0.0.4; charset=utf-8");
        },
        {.name = "metrics", .bind_deadline = false});
  }
  if (impl_->options.serve_health) {
    Impl* impl = impl_.get();
    route(
        "GET", "/healthz",
        [impl](const Request&, const Context&) -> asio::awaitable<Response> {
          if (impl->shutting_down.load()) co_return Response::text(503, "shutting down\n");
          co_return Response::text(200, "ok\n");
        },
        {.name = "healthz", .bind_deadline = false});
  }
}

Server::~Server() {
  // Sessions share the Impl; stop accepting and let them wind down on the io_context.
  impl_->BeginShutdown(Duration::zero());
}

void Server::route(std::string method, std::string path, Handler handler, RouteOptions options) {
  RouteEntry& r = impl_->routes.emplace_back();
  r.method = std::move(method);
  r.path = std::move(path);
  r.handler = std::move(handler);
  r.options = std::move(options);
  r.by_status = std::make_unique<std::array<std::atomic<observe::Counter*>, kLastStatus - kFirstStatus + 1>>();
  if (impl_->durations) r.duration = &impl_->durations->with({Impl::RouteName(r)});
}

void Server::websocket(std::string path, WebSocketHandler handler, std::vector<std::string> subprotocols,
                       RouteOptions options) {
  RouteEntry& r = impl_->routes.emplace_back();
  r.path = std::move(path);
  r.ws_handler = std::move(handler);
  r.subprotocols = std::move(subprotocols);
  r.options = std::move(options);
  r.by_status = std::make_unique<std::array<std::atomic<observe::Counter*>, kLastStatus - kFirstStatus + 1>>();
  if (impl_->durations) r.duration = &impl_->durations->with({Impl::RouteName(r)});
}

std::uint16_t Server::listen(std::string_view address, std::uint16_t port) {
  const tcp::endpoint endpoint(asio::ip::make_address(std::string(address)), port);
  auto acceptor = std::make_unique<tcp::acceptor>(impl_->control);
  acceptor->open(endpoint.protocol());
  acceptor->set_option(asio::socket_base::reuse_address(true));
  acceptor->bind(endpoint);
  acceptor->listen(asio::socket_base::max_listen_connections);
  const auto bound = acceptor->local_endpoint().port();
  tcp::acceptor& ref = *acceptor;
  impl_->acceptors.push_back(std::move(acceptor));
  if (!impl_->sweep_timer) {
    const auto& l = impl_->options.limits;
    const Duration shortest = std::min({l.idle_timeout, l.header_timeout, l.body_timeout, l.write_timeout});
    impl_->sweep_interval = std::clamp<Duration>(shortest / 8, std::chrono::milliseconds(5), std::chrono::milliseconds(250));
    impl_->sweep_timer = std::make_unique<asio::steady_timer>(impl_->control);
    asio::post(impl_->control, [impl = impl_] { impl->Sweep(); });
  }
  asio::co_spawn(impl_->control, impl_->AcceptLoop(impl_, ref), asio::detached);
  return bound;
}

void Server::shutdown(Duration grace) { impl_->BeginShutdown(grace); }

void Server::stop_on_signals(Duration grace) {
  impl_->signals = std::make_unique<asio::signal_set>(impl_->control, SIGINT, SIGTERM);
  impl_->signals->async_wait([impl = impl_, grace](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    impl->signal_number.store(signal);
    std::string line = "{\"event\":\"shutdown\",\"signal\":" + std::to_string(signal) + "}";
    impl->Log(line);
    impl->BeginShutdown(grace);
  });
}

int Server::stop_signal() const noexcept { return impl_->signal_number.load(); }
std::size_t Server::open_connections() const noexcept { return impl_->connections.load(); }
const std::function<void(std::string_view line)>& Server::log_sink() const noexcept { return impl_->options.log; }
std::size_t Server::requests_in_flight() const noexcept { return impl_->in_flight.load(); }

}  // namespace cutoff::http
