// A WebSocket connection as the server's WebSocket routes see it, without Beast.
//
//   server.websocket("/echo", [](WebSocket& ws, const Request&, const Context& ctx) -> asio::awaitable<void> {
//     while (auto message = co_await ws.read()) co_await ws.write(*message);
//   });
//
// One read and one write may be outstanding at a time (concurrently with each other); callers
// that write from several coroutines queue their writes (all on the connection's strand).
#ifndef CUTOFF_HTTP_WEBSOCKET_HPP_
#define CUTOFF_HTTP_WEBSOCKET_HPP_

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cutoff::http {

class WebSocket {
 public:
  virtual ~WebSocket() = default;
  // The next text or binary message; nullopt when the peer closed or the connection failed,
  // including when the server closed it: a message over the server's size limit (close 1009)
  // or a peer that stopped answering pings. Pings are answered only while a read is pending.
  virtual boost::asio::awaitable<std::optional<std::string>> read() = 0;
  // Sends a text message; returns false when the connection is gone, including when the
  // message could not be written within the server's write timeout (the peer does not read).
  virtual boost::asio::awaitable<bool> write(std::string_view text) = 0;
  // Sends a close frame with `code` and `reason` (e.g. 4400 for a protocol error).
  virtual boost::asio::awaitable<void> close(std::uint16_t code, std::string_view reason) = 0;
  // The negotiated subprotocol, empty when none.
  virtual std::string_view subprotocol() const noexcept = 0;
};

}  // namespace cutoff::http

#endif  // CUTOFF_HTTP_WEBSOCKET_HPP_
