// The HTTP server's WebSocket routes: subprotocols, keep-alive pings, message size, writes to a
// peer that does not read.
#include "cutoff/http/server.hpp"

#include <gtest/gtest.h>

#include "cutoff/http/internal/server_fixture_test.hpp"

namespace cutoff::http::server_test {
namespace {

class WebSocketServer : public ServerFixture {
 protected:
  void Routes(Server& s) override {
    s.websocket(
        "/echo",
        [this](WebSocket& ws, const Request&, const Context& ctx) -> asio::awaitable<void> {
          protocol_ = std::string(ws.subprotocol());
          while (auto message = co_await ws.read()) co_await ws.write("echo:" + *message);
          stopped_ = ctx.stop_reason();
          done_ = true;
        },
        {"graphql-transport-ws"});
    // Writes until a write fails, as a server pushing to a client that never reads.
    s.websocket("/flood", [this](WebSocket& ws, const Request&, const Context&) -> asio::awaitable<void> {
      const std::string chunk(64 * 1024, 'x');
      while (co_await ws.write(chunk)) {
      }
      flood_done_ = true;
    });
  }
  std::atomic<bool> flood_done_{false};
  std::string protocol_;
  std::atomic<StopReason> stopped_{StopReason::none};
  std::atomic<bool> done_{false};
};

TEST_F(WebSocketServer, EchoesWithTheNegotiatedSubprotocolAndStopsOnClose) {
  Start();
  beast::websocket::stream<tcp::socket> ws(Connect());
  ws.set_option(beast::websocket::stream_base::decorator([](beast::websocket::request_type& req) {
    req.set(bhttp::field::sec_websocket_protocol, "other, graphql-transport-ws");
  }));
  beast::websocket::response_type handshake;
  ws.handshake(handshake, "127.0.0.1", "/echo");
  EXPECT_EQ(handshake[bhttp::field::sec_websocket_protocol], "graphql-transport-ws");
  ws.write(asio::buffer(std::string("hi")));
  beast::flat_buffer b;
  ws.read(b);
  EXPECT_EQ(beast::buffers_to_string(b.data()), "echo:hi");
  ws.close(beast::websocket::close_code::normal);
  for (int i = 0; i < 200 && !done_; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(done_);
  EXPECT_EQ(stopped_.load(), StopReason::cancelled);
  EXPECT_EQ(protocol_, "graphql-transport-ws");
}

// Reads one WebSocket message on `io` within `limit`; the read's error, or timed_out.
boost::system::error_code ReadWithin(asio::io_context& io, beast::websocket::stream<tcp::socket>& ws,
                                     beast::flat_buffer& b, Duration limit) {
  std::optional<boost::system::error_code> result;
  ws.async_read(b, [&](boost::system::error_code ec, std::size_t) { result = ec; });
  io.restart();
  io.run_for(limit);
  if (result) return *result;
  boost::system::error_code ignored;
  ws.next_layer().close(ignored);
  io.restart();
  io.run();  // the aborted read completes
  return asio::error::timed_out;
}

TEST_F(WebSocketServer, APeerThatDoesNotAnswerPingsIsClosed) {
  Start({.limits = {.websocket_ping_interval = 200ms, .websocket_pong_timeout = 200ms}});
  beast::websocket::stream<tcp::socket> ws(Connect());
  ws.handshake("127.0.0.1", "/echo");
  // The client never reads, so it never answers the server's pings.
  const auto t0 = Clock::now();
  bool closed = false;
  const std::string got = ReadUntilClosed(ws.next_layer(), 5s * TimeScale(), &closed);
  EXPECT_TRUE(closed);
  ASSERT_GE(got.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(got[0]), 0x89);  // FIN + ping
  EXPECT_GE(Clock::now() - t0, 350ms);
  EXPECT_LT(Clock::now() - t0, 3s * TimeScale());
  for (int i = 0; i < 400 && !done_; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(done_);
  EXPECT_EQ(stopped_.load(), StopReason::cancelled);
}

TEST_F(WebSocketServer, APeerThatAnswersPingsStaysConnected) {
  Start({.limits = {.websocket_ping_interval = 100ms, .websocket_pong_timeout = 300ms}});
  beast::websocket::stream<tcp::socket> ws(Connect());
  ws.handshake("127.0.0.1", "/echo");
  int pings = 0;
  ws.control_callback([&](beast::websocket::frame_type kind, beast::string_view) {
    if (kind == beast::websocket::frame_type::ping) ++pings;
  });
  beast::flat_buffer b;
  // A pending read answers pings; no message comes, so it is still pending after a second.
  bool read_done = false;
  ws.async_read(b, [&](boost::system::error_code, std::size_t) { read_done = true; });
  client_io_.run_for(1200ms);
  EXPECT_FALSE(read_done);
  EXPECT_GE(pings, 3);
  EXPECT_FALSE(done_);
  boost::system::error_code ignored;
  ws.next_layer().close(ignored);
  client_io_.restart();
  client_io_.run();  // the aborted read completes
}

TEST_F(WebSocketServer, AMessageOverTheLimitIsClosedWith1009) {
  Start({.limits = {.max_websocket_message_bytes = 1024}});
  // One frame far larger than the limit (and than the socket buffers, so a server that closes
  // with it unread resets the connection), then a message in small frames that add up past it.
  for (const bool fragmented : {false, true}) {
    SCOPED_TRACE(fragmented ? "fragmented" : "one frame");
    done_ = false;
    beast::websocket::stream<tcp::socket> ws(Connect());
    ws.handshake("127.0.0.1", "/echo");
    if (fragmented) {
      ws.auto_fragment(true);
      ws.write_buffer_bytes(256);
    } else {
      ws.auto_fragment(false);
    }
    boost::system::error_code ec;
    ws.write(asio::buffer(std::string(fragmented ? 4096 : 8 * 1024 * 1024, 'x')), ec);
    EXPECT_FALSE(ec) << ec.message();
    beast::flat_buffer b;
    EXPECT_EQ(ReadWithin(client_io_, ws, b, 5s * TimeScale()), beast::websocket::error::closed);
    EXPECT_EQ(ws.reason().code, beast::websocket::close_code::too_big);
    for (int i = 0; i < 400 && !done_; ++i) std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(done_);
  }
}

TEST_F(WebSocketServer, AWriteToAPeerThatDoesNotReadFailsAfterTheWriteTimeout) {
  Start({.limits = {.write_timeout = 300ms}});
  beast::websocket::stream<tcp::socket> ws(Connect());
  ws.handshake("127.0.0.1", "/flood");
  // Never read: the server's socket buffer fills and its write cannot complete.
  for (int i = 0; i < 2000 && !flood_done_; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(flood_done_);
  bool closed = false;
  boost::system::error_code ec;
  ReadUntilClosed(ws.next_layer(), 5s * TimeScale(), &closed);
  EXPECT_TRUE(closed);
}

}  // namespace
}  // namespace cutoff::http::server_test
