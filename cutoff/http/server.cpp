#include "cutoff/http/server.hpp"

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
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
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <cerrno>
#include <chrono>
#include <list>
#include <mutex>
#include <random>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/deadline_timer_service.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/core/json_text.hpp"
#include "cutoff/http/internal/beast_request.hpp"
#include "cutoff/observe/deadline_metrics.hpp"
#include "cutoff/observe/metrics.hpp"
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

std::string ErrorBody(std::string_view code, std::string_view message, std::string_view request_id) {
  std::string out = "{\"error\":{\"code\":";
  append_json_string(out, code);
  out += ",\"message\":";
  append_json_string(out, message);
  if (!request_id.empty()) {
    out += ",\"request_id\":";
    append_json_string(out, request_id);
  }
  out += "}}";
  return out;
}

Response ErrorResponse(ErrorCode code, std::string_view message, std::string_view request_id) {
  const auto& info = cutoff::info(code);
  // Internal details stay in the log; the client gets the taxonomy's summary.
  const std::string_view shown = code == ErrorCode::internal ? info.summary : message;
  Response r = Response::json(info.http_status, ErrorBody(info.name, shown, request_id));
  if (code == ErrorCode::deadline_exceeded) r.headers.set(kDeadlineExpiredHeader, "1");
  return r;
}

Response PlainError(int status, std::string_view code, std::string_view message) {
  Response r = Response::json(status, ErrorBody(code, message, {}));
  r.headers.set("Connection", "close");
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

std::string NewRequestId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t v = rng();
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[i] = kHex[v & 15];
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

std::string RemoteAddress(const tcp::socket& socket) {
  boost::system::error_code ec;
  const auto ep = socket.remote_endpoint(ec);
  if (ec) return {};
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

}  // namespace

// One accepted connection. Lives as long as its session coroutine; the server keeps a weak
// reference to reach it at shutdown. Touched only on its strand.
struct Connection : std::enable_shared_from_this<Connection> {
  explicit Connection(tcp::socket socket) : stream(std::move(socket)), read_timer(stream.get_executor()) {}
  beast::tcp_stream stream;
  // Read timeouts cancel the read instead of closing the socket (as tcp_stream's own expiry
  // would), so that a slow client can still be told 408.
  asio::steady_timer read_timer;
  asio::cancellation_signal read_cancel;
  std::uint64_t read_generation = 0;
  bool read_timed_out = false;

  // Arms the read timer; the returned token cancels the read when it fires.
  auto TimedRead(Duration timeout) {
    const auto generation = ++read_generation;
    read_timed_out = false;
    read_timer.expires_after(timeout);
    read_timer.async_wait([self = shared_from_this(), generation](const boost::system::error_code& ec) {
      if (ec || self->read_generation != generation) return;
      self->read_timed_out = true;
      self->read_cancel.emit(asio::cancellation_type::terminal);
    });
    return asio::bind_cancellation_slot(read_cancel.slot(), as_tuple(use_awaitable));
  }
  void ReadDone() {
    ++read_generation;
    read_timer.cancel();
  }

  bool busy = false;         // a request (or a WebSocket) is being served
  bool websocket = false;
  bool close_after = false;  // answer the current request, then close
  std::optional<CancelSource> source;
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
      overshoot = &deadline->overshoot.with({"http"});
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

  std::mutex mu;  // guards `live`
  std::list<std::pair<std::weak_ptr<Connection>, asio::any_io_executor>> live;

  std::optional<observe::DeadlineMetrics> deadline;
  observe::Family<observe::Counter>* requests = nullptr;
  observe::Family<observe::Histogram>* durations = nullptr;
  observe::Family<observe::Counter>* bad_requests = nullptr;
  observe::Gauge* connections_gauge = nullptr;
  observe::Gauge* in_flight_gauge = nullptr;
  observe::Histogram* budget_received = nullptr;
  observe::Histogram* overshoot = nullptr;
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
    const std::string name = route ? RouteName(*route) : std::string("unmatched");
    if (!route) {
      requests->with({name, std::to_string(status)}).inc();
      return;
    }
    auto& slot = (*route->by_status)[status - kFirstStatus];
    observe::Counter* counter = slot.load(std::memory_order_acquire);
    if (!counter) {
      counter = &requests->with({name, std::to_string(status)});
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

  void ConnectionClosed() {
    if (connections_gauge) connections_gauge->add(-1);
    if (connections.fetch_sub(1) == 1 && shutting_down.load()) {
      // The last connection is gone: let the io_context run out of work.
      asio::post(control, [self = shared_from_this()] {
        if (self->grace_timer) self->grace_timer->cancel();
      });
    }
  }

  RouteEntry* FindRoute(std::string_view path, std::string_view method, bool websocket, bool& path_known,
                        std::string& allow) {
    RouteEntry* found = nullptr;
    for (auto& r : routes) {
      if (r.path != path) continue;
      const bool is_ws = static_cast<bool>(r.ws_handler);
      if (is_ws != websocket) continue;
      path_known = true;
      if (is_ws || r.method == method) {
        found = &r;
        break;
      }
      if (!allow.empty()) allow += ", ";
      allow += r.method;
    }
    return found;
  }

  asio::awaitable<void> AcceptLoop(std::shared_ptr<Impl> self, tcp::acceptor& acceptor);
  asio::awaitable<void> Session(std::shared_ptr<Impl> self, std::shared_ptr<Connection> c);
  asio::awaitable<std::optional<Response>> Dispatch(Connection& c, RouteEntry* route, Request& req);
  asio::awaitable<void> ServeWebSocket(Connection& c, RouteEntry& route, internal::BeastRequest beast_request,
                                       Request req);
  void BeginShutdown(Duration grace);
};

namespace {

// Runs the route's handler and turns anything it throws into a response.
asio::awaitable<Response> RunHandler(const Handler& handler, const Request& req, const Context& ctx) {
  try {
    co_return co_await handler(req, ctx);
  } catch (const Error& e) {
    co_return ErrorResponse(e.code(), e.message(), ctx.request_id());
  } catch (const boost::system::system_error& e) {
    // A handler cancelled because its context stopped reports the stop, not the abort.
    if (ctx.stop_requested()) co_return ErrorResponse(error_code_for(ctx.stop_reason()), {}, ctx.request_id());
    co_return ErrorResponse(ErrorCode::internal, e.what(), ctx.request_id());
  } catch (const std::exception& e) {
    co_return ErrorResponse(ErrorCode::internal, e.what(), ctx.request_id());
  }
}

// Completes when the client is gone (the stop is requested first). Pipelined bytes make the
// socket readable without a disconnect; the watch then gives up and waits to be cancelled.
asio::awaitable<void> WatchDisconnect(tcp::socket& socket, CancelSource source) {
  for (;;) {
    auto [ec] = co_await socket.async_wait(tcp::socket::wait_read, as_tuple(use_awaitable));
    if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) co_return;
    if (!ec) {
      char byte;
      const ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n > 0) {
        asio::steady_timer forever(socket.get_executor(), asio::steady_timer::time_point::max());
        co_await forever.async_wait(as_tuple(use_awaitable));
        co_return;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    }
    source.request_stop(StopReason::cancelled);
    co_return;
  }
}

// Completes `grace` after `ctx` stops, with the stop's reason.
asio::awaitable<StopReason> StoppedThenGrace(const Context& ctx, Duration grace) {
  const StopReason reason = co_await async_wait_stop(ctx, use_awaitable);
  if (grace > Duration::zero()) {
    asio::steady_timer wait(co_await asio::this_coro::executor, grace);
    co_await wait.async_wait(use_awaitable);
  }
  co_return reason;
}

class BeastWebSocket final : public WebSocket {
 public:
  BeastWebSocket(websocket::stream<beast::tcp_stream&>& ws, std::string subprotocol, CancelSource source)
      : ws_(ws), subprotocol_(std::move(subprotocol)), source_(std::move(source)) {}

  asio::awaitable<std::optional<std::string>> read() override {
    beast::flat_buffer buffer;
    auto [ec, n] = co_await ws_.async_read(buffer, as_tuple(use_awaitable));
    if (ec) {
      // The peer closed or vanished: whatever works for it stops.
      source_.request_stop(StopReason::cancelled);
      co_return std::nullopt;
    }
    co_return beast::buffers_to_string(buffer.data());
  }

  asio::awaitable<bool> write(std::string_view text) override {
    ws_.text(true);
    auto [ec, n] = co_await ws_.async_write(asio::buffer(text.data(), text.size()), as_tuple(use_awaitable));
    co_return !ec;
  }

  asio::awaitable<void> close(std::uint16_t code, std::string_view reason) override {
    const auto shown = reason.substr(0, websocket::reason_string::static_capacity);
    websocket::close_reason why(static_cast<websocket::close_code>(code),
                                boost::beast::string_view(shown.data(), shown.size()));
    co_await ws_.async_close(why, as_tuple(use_awaitable));
  }

  std::string_view subprotocol() const noexcept override { return subprotocol_; }

 private:
  websocket::stream<beast::tcp_stream&>& ws_;
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

}  // namespace

asio::awaitable<void> Server::Impl::AcceptLoop(std::shared_ptr<Impl> self, tcp::acceptor& acceptor) {
  for (;;) {
    auto strand = asio::make_strand(executor);
    auto [ec, socket] = co_await acceptor.async_accept(strand, as_tuple(use_awaitable));
    if (shutting_down.load()) co_return;
    if (ec) {
      if (ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor) co_return;
      // Out of descriptors or a transient network error: back off briefly, keep serving.
      asio::steady_timer pause(executor, std::chrono::milliseconds(10));
      co_await pause.async_wait(as_tuple(use_awaitable));
      continue;
    }
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    socket.set_option(asio::socket_base::keep_alive(true), ignored);
    auto c = std::make_shared<Connection>(std::move(socket));
    if (connections.fetch_add(1) >= options.limits.max_connections) {
      connections.fetch_sub(1);
      CountBadRequest("too_many_connections");
      asio::co_spawn(
          strand,
          [c]() -> asio::awaitable<void> {
            static constexpr std::string_view kBusy =
                "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
                "Retry-After: 1\r\nContent-Length: 72\r\n\r\n"
                "{\"error\":{\"code\":\"overloaded\",\"message\":\"too many open connections\"}}";
            c->stream.expires_after(std::chrono::seconds(1));
            co_await asio::async_write(c->stream, asio::buffer(kBusy.data(), kBusy.size()),
                                       as_tuple(use_awaitable));
            boost::system::error_code e;
            c->stream.socket().shutdown(tcp::socket::shutdown_both, e);
          },
          asio::detached);
      continue;
    }
    if (connections_gauge) connections_gauge->add(1);
    Track(c, strand);
    asio::co_spawn(strand, Session(self, std::move(c)), asio::detached);
  }
}

// `keep_alive` holds the server state for as long as the session runs.
asio::awaitable<void> Server::Impl::Session(std::shared_ptr<Impl> /*keep_alive*/, std::shared_ptr<Connection> c) {
  struct Closed {
    Impl* impl;
    ~Closed() { impl->ConnectionClosed(); }
  } closed{this};
  const auto& limits = options.limits;
  const std::string remote = RemoteAddress(c->stream.socket());
  beast::flat_buffer buffer(limits.max_header_bytes + limits.max_body_bytes + 64 * 1024);
  try {
    for (;;) {
      if (shutting_down.load()) break;
      // Between requests: wait for the first byte under the idle timeout.
      if (buffer.size() == 0) {
        auto [ec, n] = co_await c->stream.async_read_some(buffer.prepare(4096), c->TimedRead(limits.idle_timeout));
        c->ReadDone();
        if (ec) break;
        buffer.commit(n);
      }
      internal::BeastRequestParser parser;
      internal::configure_request_parser(parser, limits.max_header_bytes, limits.max_body_bytes);
      auto [hec, hn] = co_await bhttp::async_read_header(c->stream, buffer, parser, c->TimedRead(limits.header_timeout));
      c->ReadDone();
      boost::system::error_code ec = c->read_timed_out ? beast::error::timeout : hec;
      if (!ec && !parser.is_done()) {
        const auto expect = parser.get()[bhttp::field::expect];
        if (iequals(expect, "100-continue")) {
          static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
          c->stream.expires_after(limits.write_timeout);
          co_await asio::async_write(c->stream, asio::buffer(kContinue.data(), kContinue.size()),
                                     as_tuple(use_awaitable));
          c->stream.expires_never();
        }
        auto [bec, bn] = co_await bhttp::async_read(c->stream, buffer, parser, c->TimedRead(limits.body_timeout));
        c->ReadDone();
        ec = c->read_timed_out ? beast::error::timeout : bec;
      }
      if (ec) {
        const int status = StatusForReadError(ec);
        if (status == 0) break;
        CountBadRequest(ReadErrorCode(status));
        Response r = PlainError(status, ReadErrorCode(status), ec.message());
        bhttp::response<bhttp::string_body> out{static_cast<bhttp::status>(status), 11};
        out.reason(reason_phrase(status));
        for (const auto& f : r.headers.fields()) out.set(f.name, f.value);
        out.body() = std::move(r.body);
        out.keep_alive(false);
        out.prepare_payload();
        c->stream.expires_after(std::chrono::seconds(2));
        co_await bhttp::async_write(c->stream, out, as_tuple(use_awaitable));
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
        res = co_await Dispatch(*c, route, req);
      }
      if (!res) break;  // the client is gone: nothing to write
      CountRequest(route, res->status, std::chrono::steady_clock::now() - started);

      const bool keep = keep_alive && !shutting_down.load() && !c->close_after;
      bhttp::response<bhttp::string_body> out{static_cast<bhttp::status>(res->status), req.version};
      out.reason(reason_phrase(res->status));
      for (const auto& f : res->headers.fields()) out.insert(f.name, f.value);
      out.body() = std::move(res->body);
      out.keep_alive(keep);
      out.prepare_payload();
      c->stream.expires_after(limits.write_timeout);
      auto [wec, wn] = co_await bhttp::async_write(c->stream, out, as_tuple(use_awaitable));
      c->stream.expires_never();
      if (wec || !keep) break;
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

asio::awaitable<std::optional<Response>> Server::Impl::Dispatch(Connection& c, RouteEntry* route, Request& req) {
  const auto started = std::chrono::steady_clock::now();
  RequestValues values;
  if (auto id = req.headers.get("X-Request-Id"); id && ValidRequestId(*id))
    values.request_id = std::string(*id);
  else
    values.request_id = NewRequestId();
  values.operation = RouteName(*route);
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
  StopReason stop = StopReason::none;
  const bool bind = options.bind_deadlines && route->options.bind_deadline;
  if (!bind) {
    const Context ctx = Background().with_values(std::move(values));
    res = co_await RunHandler(route->handler, req, ctx);
  } else {
    const auto headers = req.headers.views();
    const InboundBudget inbound = parse_inbound_budget(headers, options.budget, std::chrono::system_clock::now());
    ReportRejections(inbound, request_id);
    budget = inbound.budget;
    if (route->options.budget) budget = std::min(*budget, *route->options.budget);
    if (inbound.from_caller && budget_received) budget_received->observe(Seconds(inbound.budget));
    if (*budget <= Duration::zero()) {
      // Entry fail-fast: the caller's budget is already spent; no handler runs.
      if (deadline) {
        deadline->deadline_exceeded.with({values.operation, ""}).inc();
        deadline->stopped.with({values.operation, "", "deadline_exceeded"}).inc();
      }
      res = ErrorResponse(ErrorCode::deadline_exceeded, "the request's budget was already spent on arrival",
                          request_id);
    } else {
      const std::string operation = values.operation;
      const Context base = Background().with_values(std::move(values));
      auto [ctx, source] = base.with_cancel(Deadline::after(*budget, base.clock()));
      c.busy = true;
      c.source = source;
      in_flight.fetch_add(1);
      if (in_flight_gauge) in_flight_gauge->add(1);
      std::atomic<std::int64_t> stopped_at{0};
      CancelCallback on_stop(ctx.token(), [&stopped_at](StopReason) noexcept {
        stopped_at.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
      });
      using namespace asio::experimental::awaitable_operators;
      auto outcome = co_await (RunHandler(route->handler, req, ctx) ||
                               WatchDisconnect(c.stream.socket(), source) ||
                               StoppedThenGrace(ctx, route->options.stop_grace));
      const StopReason reason = ctx.stop_reason();
      stop = reason;
      if (outcome.index() == 0) {
        res = std::move(std::get<0>(outcome));
      } else if (reason != StopReason::cancelled && reason != StopReason::none) {
        res = ErrorResponse(error_code_for(reason), std::string(cutoff::info(error_code_for(reason)).summary),
                            request_id);
      }
      if (reason != StopReason::none) {
        const auto stop_ns = stopped_at.load(std::memory_order_relaxed);
        if (overshoot && stop_ns != 0)
          overshoot->observe(std::max(0.0, Seconds(std::chrono::steady_clock::now().time_since_epoch() -
                                                   std::chrono::steady_clock::duration(stop_ns))));
        if (deadline) {
          if (reason == StopReason::deadline_exceeded) deadline->deadline_exceeded.with({operation, ""}).inc();
          deadline->stopped.with({operation, "", std::string(to_string(reason))}).inc();
        }
      }
      in_flight.fetch_sub(1);
      if (in_flight_gauge) in_flight_gauge->add(-1);
      c.busy = false;
      c.source.reset();
    }
  }

  const int status = res ? res->status : 499;
  if (res) res->headers.set("X-Request-Id", request_id);
  if (options.log) {
    observe::RequestLog log;
    log.request_id = request_id;
    log.operation = RouteName(*route);
    if (!res) {
      log.outcome = "cancelled";
    } else if (stop != StopReason::none) {
      // The handler answered (e.g. a partial GraphQL result) but its context was stopped.
      log.outcome = std::string(to_string(error_code_for(stop)));
    } else if (auto code = res->status >= 400 ? std::optional<std::string>() : std::optional<std::string>("ok")) {
      log.outcome = *code;
    } else {
      log.outcome = "http_" + std::to_string(status);
      for (const auto& info : all_error_codes())
        if (res->body.find("\"code\":\"" + std::string(info.name) + "\"") != std::string::npos &&
            info.http_status == status) {
          log.outcome = std::string(info.name);
          break;
        }
    }
    if (budget) log.budget_received = std::chrono::ceil<std::chrono::milliseconds>(*budget);
    log.time_used = std::chrono::steady_clock::now() - started;
    log.trace_id = trace_id;
    Log(log.to_json());
  }
  if (!res) {
    CountRequest(route, 499, std::chrono::steady_clock::now() - started);
  }
  co_return res;
}

asio::awaitable<void> Server::Impl::ServeWebSocket(Connection& c, RouteEntry& route,
                                                   internal::BeastRequest beast_request, Request req) {
  websocket::stream<beast::tcp_stream&> ws(c.stream);
  ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  ws.read_message_max(options.limits.max_websocket_message_bytes);
  std::string protocol;
  if (auto offered = req.headers.get("Sec-WebSocket-Protocol"))
    protocol = ChooseSubprotocol(*offered, route.subprotocols);
  ws.set_option(websocket::stream_base::decorator([protocol](websocket::response_type& res) {
    if (!protocol.empty()) res.set(bhttp::field::sec_websocket_protocol, protocol);
  }));
  auto [ec] = co_await ws.async_accept(beast_request, as_tuple(use_awaitable));
  if (ec) co_return;

  RequestValues values;
  if (auto id = req.headers.get("X-Request-Id"); id && ValidRequestId(*id))
    values.request_id = std::string(*id);
  else
    values.request_id = NewRequestId();
  values.operation = RouteName(route);
  auto [ctx, source] = Background().with_values(std::move(values)).with_cancel();
  c.busy = true;
  c.websocket = true;
  c.source = source;
  BeastWebSocket socket(ws, protocol, source);
  try {
    co_await route.ws_handler(socket, req, ctx);
  } catch (const std::exception& e) {
    std::string line = "{\"event\":\"websocket_error\",\"message\":";
    append_json_string(line, e.what());
    line += "}";
    Log(line);
  }
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
    if (self->connections.load() == 0) return;
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
std::size_t Server::requests_in_flight() const noexcept { return impl_->in_flight.load(); }

}  // namespace cutoff::http
