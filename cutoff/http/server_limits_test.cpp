// The HTTP server against what a client can hold of it and against malformed requests: clear
// 4xx answers, framing a proxy could read differently, connection caps, timeouts.
#include "cutoff/http/server.hpp"

#include <gtest/gtest.h>

#include "cutoff/http/internal/server_fixture_test.hpp"

namespace cutoff::http::server_test {
namespace {

TEST_F(BasicServer, BadRequestsGetClear4xxAndTheServerKeepsServing) {
  Start({.limits = {.max_header_bytes = 1024, .max_body_bytes = 64, .header_timeout = 300ms}});
  EXPECT_EQ(Raw("NOT HTTP AT ALL\r\n\r\n").substr(0, 12), "HTTP/1.1 400");
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\r\nX-Big: " + std::string(4000, 'a') + "\r\n\r\n").substr(0, 12),
            "HTTP/1.1 431");
  EXPECT_EQ(Raw("POST /echo HTTP/1.1\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'b')).substr(0, 12),
            "HTTP/1.1 413");
  EXPECT_EQ(Raw("POST /echo HTTP/1.1\r\nContent-Length: abc\r\n\r\n").substr(0, 12), "HTTP/1.1 400");
  // A slow client that never finishes its headers is cut off by the header timeout.
  const auto t0 = Clock::now();
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\r\nX-Slow: ").substr(0, 12), "HTTP/1.1 408");
  EXPECT_LT(Clock::now() - t0, 3s * TimeScale());
  EXPECT_EQ(Get("/hello").result_int(), 200);
  EXPECT_GE(MetricValue("cutoff_http_bad_requests_total{reason=\"bad_request\"}"), 2);
}

TEST_F(BasicServer, ExpectContinueIsHonoured) {
  Start();
  auto s = Connect();
  const std::string head = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n";
  asio::write(s, asio::buffer(head));
  std::string got(25, '\0');
  asio::read(s, asio::buffer(got));
  EXPECT_EQ(got, "HTTP/1.1 100 Continue\r\n\r\n");
  asio::write(s, asio::buffer(std::string("hello")));
  bhttp::response<bhttp::string_body> res;
  bhttp::read(s, buffer_, res);
  EXPECT_EQ(res.body(), "hello");
}

TEST_F(BasicServer, ConnectionCapAnswers503) {
  Start({.limits = {.max_connections = 2}});
  auto a = Connect();
  auto b = Connect();
  std::this_thread::sleep_for(50ms);
  const std::string third = Raw("GET /hello HTTP/1.1\r\n\r\n");
  EXPECT_EQ(third.substr(0, 12), "HTTP/1.1 503");
  a.close();
  b.close();
  for (int i = 0; i < 200 && server_->open_connections() > 0; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(Get("/hello").result_int(), 200);
}

TEST_F(BasicServer, UntrustworthyFramingIs400AndTheBytesBehindItNeverRun) {
  Start();
  const std::string smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::vector<std::string> heads = {
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nContent-Length: 0\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n",
      "POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n",
  };
  for (const auto& head : heads) {
    SCOPED_TRACE(head);
    // The body is the chunked encoding of nothing, then the smuggled request.
    const std::string out = Raw(head + "\r\n0\r\n\r\n" + smuggled);
    EXPECT_EQ(out.substr(0, 12), "HTTP/1.1 400");
    EXPECT_EQ(CountResponses(out), 1);
    const auto res = ParseOneResponse(out);
    EXPECT_FALSE(res.keep_alive());
  }
  // Plain chunked still works, and the request behind it runs as its own request.
  const std::string ok = Raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" +
                             std::string("GET /smuggled HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  EXPECT_EQ(ok.substr(0, 12), "HTTP/1.1 200");
  EXPECT_NE(ok.find("hello"), std::string::npos);
  EXPECT_EQ(CountResponses(ok), 2);
  EXPECT_EQ(smuggled_.load(), 1);  // only the legitimate pipelined one
  EXPECT_EQ(Get("/hello").result_int(), 200);
}

TEST_F(BasicServer, MissingRepeatedOrMalformedHostIs400) {
  Start();
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\r\n\r\n").substr(0, 12), "HTTP/1.1 400");
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n").substr(0, 12), "HTTP/1.1 400");
  EXPECT_EQ(Raw("GET /hello HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n").substr(0, 12), "HTTP/1.1 400");
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\r\nHost: a/b@c\r\n\r\n").substr(0, 12), "HTTP/1.1 400");
  // HTTP/1.0 needs no Host; an empty one and an IPv6 literal with a port are valid.
  EXPECT_EQ(Raw("GET /hello HTTP/1.0\r\n\r\n").substr(0, 12), "HTTP/1.0 200");
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n").substr(0, 12), "HTTP/1.1 200");
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n").substr(0, 12),
            "HTTP/1.1 200");
}

TEST_F(BasicServer, ObsFoldIs400) {
  Start();
  const std::string out = Raw("GET /hello HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(out.substr(0, 12), "HTTP/1.1 400");
  EXPECT_EQ(CountResponses(out), 1);
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tb\r\n\r\n").substr(0, 12), "HTTP/1.1 400");
  EXPECT_EQ(smuggled_.load(), 0);
  // A body that starts with a space is not a fold.
  const std::string body = Raw("POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 3\r\n\r\n ab");
  EXPECT_EQ(body.substr(0, 12), "HTTP/1.1 200");
  EXPECT_EQ(body.substr(body.size() - 3), " ab");
}

// Control bytes in a field and bare LF line ends are refused. Bytes above 0x7f (obs-text,
// e.g. UTF-8) are allowed in values, as RFC 9110 allows.
TEST_F(BasicServer, ControlBytesAndBareLineFeedsInTheHeaderAre400) {
  Start();
  using namespace std::string_literals;
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n"s).substr(0, 12), "HTTP/1.1 400");
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n").substr(0, 12), "HTTP/1.1 400");
  // Bare LF line ends: refused at once, not left to wait for a CRLF CRLF until the header timeout.
  const auto t0 = Clock::now();
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\nHost: x\n\n").substr(0, 12), "HTTP/1.1 400");
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n").substr(0, 12), "HTTP/1.1 400");
  EXPECT_LT(Clock::now() - t0, 2s * TimeScale());
  EXPECT_EQ(Raw("GET /hello HTTP/1.1\r\nHost: x\r\nX-A: caf\xc3\xa9\r\nConnection: close\r\n\r\n").substr(0, 12),
            "HTTP/1.1 200");
}

TEST_F(BasicServer, ConnectionCap503IsAWellFormedResponse) {
  Start({.limits = {.max_connections = 1}});
  auto held = Connect();
  std::this_thread::sleep_for(50ms);
  auto s = Connect();
  const std::string head = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
  asio::write(s, asio::buffer(head));
  bool closed = false;
  const std::string out = ReadUntilClosed(s, 5s * TimeScale(), &closed);
  EXPECT_TRUE(closed);
  const auto res = ParseOneResponse(out);
  EXPECT_EQ(res.result_int(), 503);
  EXPECT_EQ(res.body().size(), res.payload_size().value_or(0));
  EXPECT_NE(res.body().find("\"code\":\"overloaded\""), std::string::npos);
  EXPECT_EQ(res[bhttp::field::retry_after], "1");
  EXPECT_FALSE(res.keep_alive());
}

// A connection that sends nothing is closed by the header timeout, counted from accept, and
// not held for the (much longer) idle timeout.
TEST_F(BasicServer, SilentConnectionIsClosedByTheHeaderTimeout) {
  Start({.limits = {.header_timeout = 300ms, .idle_timeout = 60s}});
  const auto t0 = Clock::now();
  auto silent = Connect();
  bool closed = false;
  ReadUntilClosed(silent, 5s * TimeScale(), &closed);
  EXPECT_TRUE(closed);
  EXPECT_GE(Clock::now() - t0, 250ms);
  EXPECT_LT(Clock::now() - t0, 3s * TimeScale());
  // A first byte does not restart the clock: a trickle of header bytes ends at the same bound.
  const auto t1 = Clock::now();
  auto trickle = Connect();
  bool trickle_closed = false;
  std::string got;
  for (int i = 0; i < 40 && !trickle_closed; ++i) {
    boost::system::error_code ec;
    asio::write(trickle, asio::buffer(std::string_view(i == 0 ? "GET /hello HTTP/1.1\r\n" : "X")), ec);
    got += ReadUntilClosed(trickle, 100ms, &trickle_closed);
  }
  EXPECT_TRUE(trickle_closed);
  EXPECT_EQ(got.substr(0, 12), "HTTP/1.1 408");
  EXPECT_LT(Clock::now() - t1, 3s * TimeScale());
  // Keep-alive requests still get the idle timeout between them.
  EXPECT_EQ(Get("/hello").result_int(), 200);
}

TEST_F(BasicServer, PerPeerConnectionLimitAnswers503AndOtherPeersAreServed) {
  Start({.limits = {.max_connections_per_peer = 2, .limit_loopback_peers = true}});
  auto a = ConnectFrom(client_io_, "127.0.0.1", port_);
  auto b = ConnectFrom(client_io_, "127.0.0.1", port_);
  ASSERT_TRUE(a && b);
  std::this_thread::sleep_for(50ms);
  auto c = ConnectFrom(client_io_, "127.0.0.1", port_);
  ASSERT_TRUE(c);
  bool closed = false;
  const std::string out = ReadUntilClosed(*c, 5s * TimeScale(), &closed);
  EXPECT_TRUE(closed);
  const auto res = ParseOneResponse(out);
  EXPECT_EQ(res.result_int(), 503);
  EXPECT_NE(res.body().find("too many connections from this address"), std::string::npos);
  EXPECT_GE(MetricValue("cutoff_http_bad_requests_total{reason=\"too_many_connections_per_peer\"}"), 1);

  // Another peer is served while this one is at its limit.
  auto other = ConnectFrom(client_io_, "127.0.0.2", port_);
  if (!other) GTEST_SKIP() << "cannot bind 127.0.0.2 here";
  const std::string health = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  asio::write(*other, asio::buffer(health));
  EXPECT_EQ(ReadUntilClosed(*other, 5s * TimeScale()).substr(0, 12), "HTTP/1.1 200");

  // A slot given back is free again.
  a->close();
  for (int i = 0; i < 400 && server_->open_connections() > 1; ++i) std::this_thread::sleep_for(5ms);
  auto d = ConnectFrom(client_io_, "127.0.0.1", port_);
  ASSERT_TRUE(d);
  asio::write(*d, asio::buffer(health));
  EXPECT_EQ(ReadUntilClosed(*d, 5s * TimeScale()).substr(0, 12), "HTTP/1.1 200");
}

// Loopback peers (a local proxy, the lab, benchmarks) are not limited per peer by default.
TEST_F(BasicServer, LoopbackPeersAreNotLimitedPerPeerByDefault) {
  Start();
  std::vector<tcp::socket> sockets;
  for (int i = 0; i < 80; ++i) sockets.push_back(Connect());
  const std::string health = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  int ok = 0;
  for (auto& s : sockets) {
    asio::write(s, asio::buffer(health));
    bhttp::response<bhttp::string_body> res;
    beast::flat_buffer b;
    bhttp::read(s, b, res);
    ok += res.result_int() == 200;
  }
  EXPECT_EQ(ok, 80);
}

}  // namespace
}  // namespace cutoff::http::server_test
