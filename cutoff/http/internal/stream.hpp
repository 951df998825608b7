// A TCP connection with or without TLS over it, read and written the same way: the server's
// sessions and the client's pooled connections hold one, and Beast's HTTP and WebSocket code
// runs over it unchanged.
//
//   internal::Stream plain(std::move(socket));              // http://
//   internal::Stream tls(std::move(socket), &tls_context);  // https://
//   co_await tls.async_handshake(asio::ssl::stream_base::server, use_awaitable);
//   co_await bhttp::async_read(tls, buffer, parser, use_awaitable);
//
// The choice is made per connection, not per type, so that one session loop serves both: a
// plain stream pays one predictable branch per operation. Every operation honours per-operation
// cancellation (Asio's SSL stream forwards it to the socket), which is how the session's
// timeouts, stops and shutdown reach a read or a handshake in progress.
//
// Not movable: the TLS layer refers to the TCP stream it is built on.
#ifndef CUTOFF_HTTP_INTERNAL_STREAM_HPP_
#define CUTOFF_HTTP_INTERNAL_STREAM_HPP_

#include <openssl/ssl.h>

#include <boost/asio/append.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <cstddef>
#include <memory>
#include <utility>

namespace cutoff::http::internal {

class Stream {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;
  using TlsLayer = boost::asio::ssl::stream<boost::beast::tcp_stream&>;

  // `tls` null: plain TCP.
  explicit Stream(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls = nullptr)
      : tcp_(std::move(socket)), tls_(tls ? std::make_unique<TlsLayer>(tcp_, *tls) : nullptr) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  executor_type get_executor() noexcept { return tcp_.get_executor(); }
  bool tls() const noexcept { return tls_ != nullptr; }
  // The TLS layer; only when tls().
  TlsLayer& tls_layer() noexcept { return *tls_; }
  boost::beast::tcp_stream& tcp() noexcept { return tcp_; }
  boost::asio::ip::tcp::socket& socket() noexcept { return tcp_.socket(); }
  // TLS input already taken off the socket and not yet read (records, or the bytes of one):
  // the socket looks quiet while the connection is not.
  bool has_buffered_input() const noexcept { return tls_ && SSL_has_pending(tls_->native_handle()) == 1; }

  // Sends FIN, then closes the socket (no TLS close_notify: the peer reads the end of the
  // connection, which is all a stop needs to say).
  void Close() noexcept {
    boost::system::error_code ignored;
    socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
    socket().close(ignored);
  }

  template <typename MutableBuffers, typename Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const MutableBuffers& b) {
          if (tls_) tls_->async_read_some(b, std::move(handler));
          else tcp_.async_read_some(b, std::move(handler));
        },
        token, buffers);
  }

  template <typename ConstBuffers, typename Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const ConstBuffers& b) {
          // Plain writes go to the socket itself: tcp_stream's timer bookkeeping buys nothing
          // here, timeouts are the sweeper's.
          if (tls_) tls_->async_write_some(b, std::move(handler));
          else tcp_.socket().async_write_some(b, std::move(handler));
        },
        token, buffers);
  }

  // The TLS handshake; completes at once with success on a plain stream.
  template <typename Token>
  auto async_handshake(boost::asio::ssl::stream_base::handshake_type type, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code)>(
        [this](auto handler, boost::asio::ssl::stream_base::handshake_type t) {
          if (tls_) {
            tls_->async_handshake(t, std::move(handler));
          } else {
            boost::asio::post(tcp_.get_executor(), boost::asio::append(std::move(handler), boost::system::error_code()));
          }
        },
        token, type);
  }

  // What Beast's WebSocket stream calls to close and tear down the stream it runs over.
  friend void beast_close_socket(Stream& s) { s.Close(); }
  friend void teardown(boost::beast::role_type role, Stream& s, boost::system::error_code& ec) {
    if (!s.tls_) {
      boost::beast::websocket::teardown(role, s.socket(), ec);  // FIN, then drain until the peer's
      return;
    }
    s.Close();
    ec = {};
  }
  // Over TLS the closing handshake ends with close_notify both ways (a peer that reads to the
  // end otherwise sees a truncated stream), bounded by the WebSocket's close timeout; a peer
  // that closes without answering ours still ends the connection cleanly.
  template <typename Handler>
  friend void async_teardown(boost::beast::role_type role, Stream& s, Handler&& handler) {
    if (!s.tls_) {
      // Beast's own: FIN, then read until the peer's, so the close frame is not lost to a reset.
      boost::beast::websocket::async_teardown(role, s.socket(), std::forward<Handler>(handler));
      return;
    }
    boost::asio::async_compose<Handler, void(boost::system::error_code)>(
        [&s, shut = false](auto& self, boost::system::error_code ec = {}) mutable {
          if (!shut) {
            shut = true;
            s.tls_->async_shutdown(std::move(self));
            return;
          }
          s.Close();
          if (ec == boost::asio::ssl::error::stream_truncated || ec == boost::asio::error::eof) ec = {};
          self.complete(ec);
        },
        handler, s.tcp_);
  }

 private:
  boost::beast::tcp_stream tcp_;
  std::unique_ptr<TlsLayer> tls_;  // null: plain TCP
};

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_STREAM_HPP_
