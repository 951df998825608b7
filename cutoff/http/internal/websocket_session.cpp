#include "cutoff/http/internal/websocket_session.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <exception>
#include <optional>
#include <utility>

#include "cutoff/http/internal/field_lists.hpp"
#include "cutoff/http/internal/request_id.hpp"
#include "cutoff/http/websocket.hpp"

namespace cutoff::http::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace websocket = boost::beast::websocket;
using asio::as_tuple;
using asio::use_awaitable;
using WebSocketStream = websocket::stream<Stream&>;

namespace {

class BeastWebSocket final : public WebSocket {
 public:
  BeastWebSocket(WebSocketStream& ws, Connection& connection, std::size_t max_message, Duration write_timeout,
                 std::string subprotocol, CancelSource source)
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
  WebSocketStream& ws_;
  Connection& connection_;
  std::size_t max_message_;
  Duration write_timeout_;
  std::string subprotocol_;
  CancelSource source_;
};

// Pings a WebSocket peer not heard from for `interval` and closes the connection when nothing
// arrives within `pong_timeout` of the ping. Returns only when cancelled (its handler ended),
// so the handler always ends on its own, through a failed read.
asio::awaitable<void> KeepAlive(WebSocketStream& ws, BeastWebSocket& socket, Connection& c, Duration interval,
                                Duration pong_timeout) {
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

// Sets `ws` up as the server runs it and answers the opening handshake; false when it failed.
// `protocol` receives the negotiated subprotocol.
asio::awaitable<bool> Accept(WebSocketStream& ws, const RouteEntry& route, const BeastRequest& beast_request,
                             const Request& req, const ServerLimits& limits, std::string& protocol) {
  // Beast's timer bounds the opening and closing handshakes; liveness is KeepAlive's, which
  // (unlike Beast's idle timeout) has a ping interval and a pong timeout of its own.
  websocket::stream_base::timeout timeouts = websocket::stream_base::timeout::suggested(beast::role_type::server);
  timeouts.handshake_timeout = limits.write_timeout;
  timeouts.idle_timeout = websocket::stream_base::none();
  timeouts.keep_alive_pings = false;
  ws.set_option(timeouts);
  ws.read_message_max(0);  // BeastWebSocket::read enforces max_websocket_message_bytes (see there)
  if (auto offered = req.headers.get("Sec-WebSocket-Protocol"))
    protocol = ChooseSubprotocol(*offered, route.subprotocols);
  ws.set_option(websocket::stream_base::decorator([protocol](websocket::response_type& res) {
    if (!protocol.empty()) res.set(bhttp::field::sec_websocket_protocol, protocol);
  }));
  auto [ec] = co_await ws.async_accept(beast_request, as_tuple(use_awaitable));
  co_return !ec;
}

}  // namespace

std::string ChooseSubprotocol(std::string_view offered, const std::vector<std::string>& accepted) {
  std::vector<std::string_view> offers;
  ForEachListElement(offered, [&](std::string_view offer) { offers.push_back(offer); });
  for (const auto& a : accepted)
    for (auto o : offers)
      if (o == a) return a;
  return {};
}

asio::awaitable<void> ServeWebSocket(Connection& c, const RouteEntry& route, BeastRequest beast_request, Request req,
                                     WebSocketEnvironment env) {
  const ServerLimits& limits = env.limits;
  WebSocketStream ws(c.stream);
  std::string protocol;
  if (!co_await Accept(ws, route, beast_request, req, limits, protocol)) co_return;

  RequestValues values;
  values.request_id = RequestIdFor(req);
  values.operation = route.name;
  auto [ctx, source] = env.background.with_values(std::move(values)).with_cancel();
  c.busy = true;
  c.serving_websocket = true;
  c.stop_source = source;
  BeastWebSocket socket(ws, c, limits.max_websocket_message_bytes, limits.write_timeout, protocol, source);
  ws.control_callback([&socket](websocket::frame_type, beast::string_view) { socket.heard = true; });
  auto run = [&]() -> asio::awaitable<void> {
    try {
      co_await route.ws_handler(socket, req, ctx);
    } catch (const std::exception& e) {
      env.log.WebSocketError(e.what());
    }
  };
  if (limits.websocket_ping_interval > Duration::zero()) {
    using namespace asio::experimental::awaitable_operators;
    co_await (run() || KeepAlive(ws, socket, c, limits.websocket_ping_interval, limits.websocket_pong_timeout));
  } else {
    co_await run();
  }
  ws.control_callback();
  source.request_stop(StopReason::cancelled);
  c.busy = false;
  c.stop_source.reset();
  if (ws.is_open()) {
    websocket::close_reason why(websocket::close_code::normal);
    co_await ws.async_close(why, as_tuple(use_awaitable));
  }
}

}  // namespace cutoff::http::internal
