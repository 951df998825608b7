// TLS on the server and the client: the same budget, stop and disconnect behaviour as plain
// HTTP, verification on by default, the handshake bounded on both sides, and clear errors for
// a bad configuration. Certificates come from a CA made for the test run (ThrowawayCa).
#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <memory>
#include <stdexcept>
#include <thread>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/throwaway_ca.hpp"
#include "tests/support/time_scale.hpp"
#include "tests/support/with_client.hpp"

namespace cutoff::http {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::IssuedCertificate;
using cutoff::test_support::Sleep;
using cutoff::test_support::ThrowawayCa;
using cutoff::test_support::TimeScale;
using cutoff::test_support::WithClient;
using SteadyClock = std::chrono::steady_clock;
using tcp = asio::ip::tcp;

std::int64_t NowNs() { return SteadyClock::now().time_since_epoch().count(); }

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ca_ = new ThrowawayCa();
    localhost_ = new IssuedCertificate(ca_->Issue("localhost", {"DNS:localhost", "IP:127.0.0.1", "IP:::1"}));
    elsewhere_ = new IssuedCertificate(ca_->Issue("elsewhere", {"DNS:elsewhere.test"}));
    other_ca_ = new ThrowawayCa("another CA");
  }
  static void TearDownTestSuite() {
    delete localhost_;
    delete elsewhere_;
    delete ca_;
    delete other_ca_;
  }

  // Starts a TLS server with `cert` on 127.0.0.1 and the test's routes.
  void Start(const IssuedCertificate& cert, ServerLimits limits = {}) {
    server_ = std::make_unique<Server>(
        io_.get_executor(),
        ServerOptions{.tls = TlsServerOptions{cert.chain_file, cert.key_file}, .limits = limits, .metrics = &metrics_});
    server_->route("GET", "/headers", [this](const Request& req, const Context&) -> asio::awaitable<Response> {
      ++calls_;
      co_return Response::text(200, std::string(req.headers.get("Deadline-Budget-Ms").value_or("")));
    });
    server_->websocket("/echo", [](WebSocket& ws, const Request&, const Context&) -> asio::awaitable<void> {
      while (auto message = co_await ws.read()) co_await ws.write("echo:" + *message);
    });
    server_->route("GET", "/slow", [this](const Request&, const Context& ctx) -> asio::awaitable<Response> {
      ++calls_;
      started_at_ = NowNs();
      try {
        co_await Sleep(5s);
      } catch (...) {
        slow_reason_ = ctx.stop_reason();
        slow_stopped_at_ = NowNs();
        throw;
      }
      co_return Response::text(200, "done");
    });
    port_ = server_->listen("127.0.0.1", 0);
    base_ = "https://127.0.0.1:" + std::to_string(port_);
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    if (!server_) return;
    server_->shutdown(100ms);
    thread_.join();
  }

  ClientOptions Trusting() const { return {.tls = {.ca_file = ca_->certificate_file()}}; }

  Exchange Get(ClientOptions options, std::string url, Duration timeout = 2s) {
    return WithClient(std::move(options), [&](Client& c) -> asio::awaitable<Exchange> {
      // Named, not temporaries of the co_await: g++ 12 destroys those twice.
      const Context ctx = Context::background().with_timeout(timeout);
      auto exchanging = c.exchange(ctx, {.url = url});
      co_return co_await std::move(exchanging);
    });
  }

  std::string Exposition() { return metrics_.expose(); }

  // Speaks TLS `version` by hand, asks for /slow and, once the handler runs, leaves the way
  // curl and Go do: close_notify, then (`then_fin`) its side of the TCP connection. Returns how
  // long after the close_notify the handler was stopped; fails the test if it never was.
  Duration LeavePolitely(int version, bool then_fin) {
    asio::io_context io;
    asio::ssl::context tls(asio::ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(tls.native_handle(), version);
    SSL_CTX_set_max_proto_version(tls.native_handle(), version);
    tls.set_verify_mode(asio::ssl::verify_none);
    asio::ssl::stream<tcp::socket> s(io, tls);
    s.next_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    s.handshake(asio::ssl::stream_base::client);
    EXPECT_EQ(SSL_version(s.native_handle()), version);
    asio::write(s, asio::buffer(std::string("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n")));
    for (int i = 0; i < 2000 && started_at_.load() == 0; ++i) std::this_thread::sleep_for(2ms);
    std::this_thread::sleep_for(20ms);  // inside the handler
    const std::int64_t left_at = NowNs();
    s.async_shutdown([](const boost::system::error_code&) {});  // sends close_notify, then waits for the reply
    io.run_for(20ms);
    boost::system::error_code closed_already;  // the server may have closed on the alert alone
    if (then_fin) s.next_layer().shutdown(tcp::socket::shutdown_send, closed_already);
    for (int i = 0; i < 1500 && slow_stopped_at_.load() == 0; ++i) std::this_thread::sleep_for(2ms);
    EXPECT_EQ(slow_reason_.load(), StopReason::cancelled);
    if (slow_stopped_at_.load() == 0) return Duration::max();
    return std::chrono::nanoseconds(slow_stopped_at_.load() - left_at);
  }

  // Connects over plain TCP, sends `bytes`, and reads until the server closes (or `limit`).
  // Returns how long the server took to close it.
  Duration RawUntilClosed(const std::string& bytes, Duration limit) {
    asio::io_context io;
    tcp::socket s(io);
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    if (!bytes.empty()) asio::write(s, asio::buffer(bytes));
    const auto start = SteadyClock::now();
    s.non_blocking(false);
    timeval tv{.tv_sec = static_cast<time_t>(std::chrono::duration_cast<std::chrono::seconds>(limit).count() + 1),
               .tv_usec = 0};
    setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[4096];
    boost::system::error_code ec;
    while (!ec) s.read_some(asio::buffer(buf), ec);
    return SteadyClock::now() - start;
  }

  static ThrowawayCa* ca_;
  static ThrowawayCa* other_ca_;
  static IssuedCertificate* localhost_;
  static IssuedCertificate* elsewhere_;

  asio::io_context io_;
  observe::Registry metrics_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::uint16_t port_ = 0;
  std::string base_;
  std::atomic<int> calls_{0};
  std::atomic<std::int64_t> started_at_{0};
  std::atomic<StopReason> slow_reason_{StopReason::none};
  std::atomic<std::int64_t> slow_stopped_at_{0};
};

ThrowawayCa* TlsTest::ca_ = nullptr;
ThrowawayCa* TlsTest::other_ca_ = nullptr;
IssuedCertificate* TlsTest::localhost_ = nullptr;
IssuedCertificate* TlsTest::elsewhere_ = nullptr;

TEST_F(TlsTest, AnHttpsCallIsAnsweredWithTheBudgetCarriedOver) {
  Start(*localhost_);
  const Exchange x = Get(Trusting(), base_ + "/headers", 300ms);
  ASSERT_EQ(x.delivery, Delivery::answered) << (x.error ? x.error->what() : "");
  EXPECT_EQ(x.response.status, 200);
  const long budget = std::stol(x.response.body);
  EXPECT_LE(budget, 300);
  EXPECT_GT(budget, 100);
}

TEST_F(TlsTest, AHostNameIsVerifiedAndSentAsServerName) {
  Start(*localhost_);
  // `localhost` may resolve to ::1 first, where nothing listens: the client moves on to
  // 127.0.0.1, and the certificate's DNS name is what is checked.
  const Exchange x = Get(Trusting(), "https://localhost:" + std::to_string(port_) + "/headers");
  ASSERT_EQ(x.delivery, Delivery::answered) << (x.error ? x.error->what() : "");
  EXPECT_EQ(x.response.status, 200);
}

// wss://: the WebSocket upgrade and its frames over the TLS stream, with Beast's own client.
TEST_F(TlsTest, AWebSocketRunsOverTls) {
  Start(*localhost_);
  asio::io_context io;
  asio::ssl::context tls(asio::ssl::context::tls_client);
  tls.load_verify_file(ca_->certificate_file());
  tls.set_verify_mode(asio::ssl::verify_peer);
  boost::beast::websocket::stream<asio::ssl::stream<tcp::socket>> ws(io, tls);
  boost::beast::get_lowest_layer(ws).connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
  ws.next_layer().handshake(asio::ssl::stream_base::client);
  ws.handshake("127.0.0.1", "/echo");
  ws.write(asio::buffer(std::string("hi")));
  boost::beast::flat_buffer b;
  ws.read(b);
  EXPECT_EQ(boost::beast::buffers_to_string(b.data()), "echo:hi");
  ws.close(boost::beast::websocket::close_code::normal);
}

TEST_F(TlsTest, KeepAliveReusesTheTlsConnection) {
  Start(*localhost_);
  const auto opened = WithClient(Trusting(), [&](Client& c) -> asio::awaitable<std::size_t> {
    for (int i = 0; i < 3; ++i) {
      const Context ctx = Context::background().with_timeout(2s);
      auto getting = c.get(ctx, base_ + "/headers");
      const Response r = co_await std::move(getting);
      EXPECT_EQ(r.status, 200);
    }
    co_return c.connections_opened();
  });
  EXPECT_EQ(opened, 1u);
}

TEST_F(TlsTest, AnUntrustedCertificateFailsBeforeAnythingIsSent) {
  Start(*localhost_);
  const Exchange x = Get({.tls = {.ca_file = other_ca_->certificate_file()}}, base_ + "/headers");
  EXPECT_EQ(x.delivery, Delivery::not_sent);
  ASSERT_TRUE(x.error);
  EXPECT_EQ(x.error->code(), ErrorCode::unavailable);
  EXPECT_NE(std::string(x.error->what()).find("the server's certificate is not trusted: "), std::string::npos)
      << x.error->what();
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(TlsTest, ACertificateForAnotherNameIsRefused) {
  Start(*elsewhere_);
  const Exchange x = Get(Trusting(), base_ + "/headers");
  EXPECT_EQ(x.delivery, Delivery::not_sent);
  ASSERT_TRUE(x.error);
  EXPECT_EQ(x.error->code(), ErrorCode::unavailable);
  EXPECT_NE(std::string(x.error->what()).find("not issued for the host called"), std::string::npos) << x.error->what();
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(TlsTest, InsecureSkipVerifyAcceptsAnyCertificate) {
  Start(*elsewhere_);
  const Exchange x = Get({.tls = {.insecure_skip_verify = true}}, base_ + "/headers");
  ASSERT_EQ(x.delivery, Delivery::answered) << (x.error ? x.error->what() : "");
  EXPECT_EQ(x.response.status, 200);
}

TEST_F(TlsTest, TheCallersStopReachesTheHandlerAsCancelledWithinMilliseconds) {
  Start(*localhost_);
  std::atomic<std::int64_t> stopped_at{0};
  const Exchange x = WithClient(Trusting(), [&](Client& c) -> asio::awaitable<Exchange> {
    auto [ctx, source] = Context::background().with_timeout(5s).with_cancel();
    const auto executor = co_await asio::this_coro::executor;
    asio::co_spawn(
        executor,
        [this, &stopped_at, source = source]() -> asio::awaitable<void> {
          for (int i = 0; i < 2000 && started_at_.load() == 0; ++i) co_await Sleep(2ms);
          co_await Sleep(20ms);  // inside the handler
          stopped_at = NowNs();
          source.request_stop(StopReason::cancelled);
        },
        asio::detached);
    auto exchanging = c.exchange(ctx, {.url = base_ + "/slow"});
    co_return co_await std::move(exchanging);
  });
  ASSERT_TRUE(x.error);
  EXPECT_EQ(x.error->code(), ErrorCode::cancelled);
  for (int i = 0; i < 500 && slow_stopped_at_.load() == 0; ++i) std::this_thread::sleep_for(2ms);
  EXPECT_EQ(slow_reason_.load(), StopReason::cancelled);
  ASSERT_NE(slow_stopped_at_.load(), 0);
  const auto overshoot = std::chrono::nanoseconds(slow_stopped_at_.load() - stopped_at.load());
  EXPECT_LT(overshoot, TimeScale() * 200ms) << "the server saw the caller's stop "
                                             << std::chrono::duration_cast<std::chrono::milliseconds>(overshoot).count()
                                             << " ms later";
}

// A client that closes politely is gone as surely as one that drops the connection. Under
// TLS 1.2 the close_notify alone says so; under TLS 1.3 (record types are hidden) the FIN
// after it does.
TEST_F(TlsTest, AClientsCloseNotifyStopsTheHandlerAsCancelled) {
  Start(*localhost_);
  const Duration took = LeavePolitely(TLS1_2_VERSION, /*then_fin=*/false);
  EXPECT_LT(took, TimeScale() * 200ms);
}

TEST_F(TlsTest, AClientsCloseNotifyAndFinStopTheHandlerUnderTls12) {
  Start(*localhost_);
  EXPECT_LT(LeavePolitely(TLS1_2_VERSION, /*then_fin=*/true), TimeScale() * 200ms);
}

TEST_F(TlsTest, AClientsCloseNotifyAndFinStopTheHandlerUnderTls13) {
  Start(*localhost_);
  EXPECT_LT(LeavePolitely(TLS1_3_VERSION, /*then_fin=*/true), TimeScale() * 200ms);
}

TEST_F(TlsTest, TheBudgetStopsTheHandlerThere) {
  Start(*localhost_);
  ClientOptions options = Trusting();
  options.reply_margin = 50ms;  // the server's deadline comes first, and its answer arrives
  const Exchange x = Get(options, base_ + "/slow", 300ms);
  ASSERT_EQ(x.delivery, Delivery::answered) << (x.error ? x.error->what() : "");
  EXPECT_EQ(x.response.status, 504);
  EXPECT_TRUE(deadline_expired(x.response) || x.response.body.find("deadline_exceeded") != std::string::npos)
      << x.response.body;
  for (int i = 0; i < 500 && slow_stopped_at_.load() == 0; ++i) std::this_thread::sleep_for(2ms);
  EXPECT_EQ(slow_reason_.load(), StopReason::deadline_exceeded);
}

// A server that accepts and never says anything: the client's handshake waits on it, and the
// caller's budget is what ends the wait.
TEST(TlsClient, TheHandshakeCountsAgainstTheBudget) {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const auto port = acceptor.local_endpoint().port();
  tcp::socket held(io);
  acceptor.async_accept(held, [](const boost::system::error_code&) {});
  std::thread thread([&] { io.run_for(5s); });
  const auto start = SteadyClock::now();
  const Exchange x = WithClient({.tls = {.insecure_skip_verify = true}}, [&](Client& c) -> asio::awaitable<Exchange> {
    const Context ctx = Context::background().with_timeout(150ms);
    auto exchanging = c.exchange(ctx, {.url = "https://127.0.0.1:" + std::to_string(port) + "/"});
    co_return co_await std::move(exchanging);
  });
  const auto took = SteadyClock::now() - start;
  io.stop();
  thread.join();
  EXPECT_EQ(x.delivery, Delivery::not_sent);
  ASSERT_TRUE(x.error);
  EXPECT_EQ(x.error->code(), ErrorCode::deadline_exceeded) << x.error->what();
  EXPECT_GE(took, 140ms);
  EXPECT_LT(took, 150ms + TimeScale() * 300ms);
}

TEST_F(TlsTest, PlainHttpOnATlsPortIsCountedAndTheServerKeepsServing) {
  Start(*localhost_);
  RawUntilClosed("GET /headers HTTP/1.1\r\nHost: a\r\n\r\n", 5s);
  EXPECT_NE(Exposition().find("cutoff_http_bad_requests_total{reason=\"tls_handshake_failed\"} 1"), std::string::npos)
      << Exposition();
  EXPECT_EQ(calls_.load(), 0);
  const Exchange x = Get(Trusting(), base_ + "/headers");
  ASSERT_EQ(x.delivery, Delivery::answered) << (x.error ? x.error->what() : "");
  EXPECT_EQ(x.response.status, 200);
}

TEST_F(TlsTest, ASilentConnectionIsClosedAtTheHeaderTimeout) {
  Start(*localhost_, {.header_timeout = 200ms});
  const Duration took = RawUntilClosed("", 5s);
  EXPECT_GE(took, 150ms);
  EXPECT_LT(took, TimeScale() * 2s);
  for (int i = 0; i < 500 && Exposition().find("tls_handshake_timeout") == std::string::npos; ++i)
    std::this_thread::sleep_for(2ms);
  EXPECT_NE(Exposition().find("cutoff_http_bad_requests_total{reason=\"tls_handshake_timeout\"} 1"), std::string::npos)
      << Exposition();
}

// A ClientHello sent a byte at a time (a slow sender) holds its connection no longer than the
// header timeout, and the server serves others meanwhile.
TEST_F(TlsTest, ASlowHandshakeIsClosedAtTheHeaderTimeout) {
  Start(*localhost_, {.header_timeout = 300ms});
  asio::io_context io;
  tcp::socket s(io);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
  // The start of a TLS record carrying a handshake message (a ClientHello), one byte per 50 ms.
  const unsigned char hello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
                                 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  const auto start = SteadyClock::now();
  boost::system::error_code ec;
  for (unsigned char byte : hello) {
    asio::write(s, asio::buffer(&byte, 1), ec);
    if (ec) break;
    EXPECT_EQ(Get(Trusting(), base_ + "/headers").response.status, 200);  // others are served meanwhile
    std::this_thread::sleep_for(50ms);
  }
  char buf[64];
  s.non_blocking(false);
  while (!ec) s.read_some(asio::buffer(buf), ec);  // until the server closes it
  const auto took = SteadyClock::now() - start;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, TimeScale() * 2s);
  for (int i = 0; i < 500 && Exposition().find("tls_handshake_timeout") == std::string::npos; ++i)
    std::this_thread::sleep_for(2ms);
  EXPECT_NE(Exposition().find("cutoff_http_bad_requests_total{reason=\"tls_handshake_timeout\"} 1"), std::string::npos);
}

// Many connections that fail their handshakes (garbage, a truncated hello, a close halfway)
// leave nothing behind: every one is closed and counted, and the server goes on serving.
TEST_F(TlsTest, FailedHandshakesLeaveNothingBehind) {
  Start(*localhost_);
  asio::io_context io;
  for (int i = 0; i < 60; ++i) {
    tcp::socket s(io);
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    boost::system::error_code ec;
    switch (i % 3) {
      case 0: asio::write(s, asio::buffer(std::string(300, '\0')), ec); break;      // not TLS at all
      case 1: asio::write(s, asio::buffer("\x16\x03\x01\x00\x05hello", 10), ec); break;  // a bogus hello
      case 2: break;                                                                 // connect, close
    }
    s.close(ec);
  }
  const std::string series = "cutoff_http_bad_requests_total{reason=\"tls_handshake_failed\"} ";
  const auto counted = [&] {
    const std::string text = Exposition();
    const auto at = text.find(series);
    return at == std::string::npos ? 0.0 : std::stod(text.substr(at + series.size()));
  };
  for (int i = 0; i < 2500 && (server_->open_connections() > 0 || counted() < 60); ++i)
    std::this_thread::sleep_for(2ms);
  EXPECT_EQ(server_->open_connections(), 0u);
  EXPECT_EQ(counted(), 60) << "every failed handshake is counted";
  const Exchange x = Get(Trusting(), base_ + "/headers");
  ASSERT_EQ(x.delivery, Delivery::answered) << (x.error ? x.error->what() : "");
  EXPECT_EQ(x.response.status, 200);
}

TEST_F(TlsTest, ABadCertificateOrKeyIsAClearStartupError) {
  const auto refused = [&](TlsServerOptions tls) -> std::string {
    try {
      Server s(io_.get_executor(), {.tls = tls});
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(accepted)";
  };
  const std::string missing = ca_->directory() + "/missing.key";
  EXPECT_NE(refused({localhost_->chain_file, missing}).find(missing), std::string::npos);
  EXPECT_NE(refused({missing, localhost_->key_file}).find(missing), std::string::npos);
  const std::string mismatch = refused({localhost_->chain_file, elsewhere_->key_file});
  EXPECT_NE(mismatch.find(elsewhere_->key_file), std::string::npos) << mismatch;
  EXPECT_NE(mismatch.find("mismatch"), std::string::npos) << mismatch;
  EXPECT_NE(refused({"", ""}).find("needs both"), std::string::npos);
}

TEST_F(TlsTest, ABadCaFileIsAClearStartupError) {
  const std::string not_pem = ca_->Write("not.pem", "this is not a certificate\n");
  try {
    Client c(io_.get_executor(), {.tls = {.ca_file = not_pem}});
    ADD_FAILURE() << "a CA file without certificates was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(not_pem), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cutoff::http
