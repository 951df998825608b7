// What the HTTP server's tests share: a server on its own io_context thread (ServerFixture),
// BasicServer (the routes most tests use), a probe for what a handler saw, and raw-socket
// helpers. Test-only.
//
//   TEST_F(BasicServer, ServesRoutesWithKeepAlive) {
//     Start();
//     EXPECT_EQ(Get("/hello").result_int(), 200);
//   }
#ifndef CUTOFF_HTTP_INTERNAL_SERVER_FIXTURE_TEST_HPP_
#define CUTOFF_HTTP_INTERNAL_SERVER_FIXTURE_TEST_HPP_

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <poll.h>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "cutoff/core/asio.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

// Named (not anonymous): the fixtures are one type in every test file that uses them.
namespace cutoff::http::server_test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using cutoff::test_support::Sleep;
using cutoff::test_support::TimeScale;
using Clock = std::chrono::steady_clock;

// Reads what the server sends until it closes the connection or `limit` passes; `closed`
// tells which. Bounded, so a server that holds a connection fails the test instead of hanging it.
inline std::string ReadUntilClosed(tcp::socket& s, Duration limit, bool* closed = nullptr) {
  std::string out;
  const auto until = Clock::now() + limit;
  if (closed) *closed = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) return out;
    pollfd p{s.native_handle(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char chunk[4096];
    boost::system::error_code ec;
    const auto n = s.read_some(asio::buffer(chunk), ec);
    if (ec) {
      if (closed) *closed = true;
      return out;
    }
    out.append(chunk, n);
  }
}

// A server on its own io_context thread, stopped at the end of the test.
class ServerFixture : public ::testing::Test {
 protected:
  void Start(ServerOptions options = {}) {
    options.metrics = &registry_;
    options.log = [this](std::string_view line) {
      std::lock_guard lock(log_mu_);
      log_.emplace_back(line);
    };
    server_ = std::make_unique<Server>(io_.get_executor(), std::move(options));
    Routes(*server_);
    port_ = server_->listen("127.0.0.1", 0);
    thread_ = std::thread([this] { io_.run(); });
  }
  virtual void Routes(Server&) {}

  void TearDown() override {
    if (server_) server_->shutdown(200ms);
    if (thread_.joinable()) {
      // The io_context runs out of work once every connection is closed.
      auto done = std::async(std::launch::async, [this] { thread_.join(); });
      if (done.wait_for(10s) != std::future_status::ready) {
        io_.stop();
        done.wait();
        ADD_FAILURE() << "the server did not wind down after shutdown";
      }
    }
    server_.reset();
  }

  std::vector<std::string> Log() {
    std::lock_guard lock(log_mu_);
    return log_;
  }

  tcp::socket Connect() {
    tcp::socket s(client_io_);
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    return s;
  }

  bhttp::response<bhttp::string_body> Send(tcp::socket& s, bhttp::request<bhttp::string_body> req) {
    if (req.find(bhttp::field::host) == req.end()) req.set(bhttp::field::host, "127.0.0.1");
    req.prepare_payload();
    bhttp::write(s, req);
    bhttp::response<bhttp::string_body> res;
    bhttp::read(s, buffer_, res);
    return res;
  }

  bhttp::response<bhttp::string_body> Get(std::string target,
                                          std::vector<std::pair<std::string, std::string>> headers = {}) {
    auto s = Connect();
    bhttp::request<bhttp::string_body> req{bhttp::verb::get, target, 11};
    req.set(bhttp::field::host, "127.0.0.1");
    for (auto& [k, v] : headers) req.insert(k, v);
    return Send(s, std::move(req));
  }

  // Raw bytes in, raw bytes out until the server closes (or 5 s).
  std::string Raw(std::string_view bytes) {
    auto s = Connect();
    asio::write(s, asio::buffer(bytes.data(), bytes.size()));
    return ReadUntilClosed(s, 5s * TimeScale());
  }

  double MetricValue(std::string_view series) {
    const std::string text = registry_.expose();
    const auto at = text.find(std::string(series) + " ");
    if (at == std::string::npos) return 0;
    return std::stod(text.substr(at + series.size() + 1));
  }

  asio::io_context io_;
  asio::io_context client_io_;
  observe::Registry registry_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::uint16_t port_ = 0;
  beast::flat_buffer buffer_;
  std::mutex log_mu_;
  std::vector<std::string> log_;
};

// Records what a handler saw, for the test thread to wait on.
struct Probe {
  std::mutex mu;
  std::condition_variable cv;
  bool started = false;
  bool finished = false;
  StopReason reason = StopReason::none;
  Clock::time_point stopped_at;
  Duration remaining{};
  RequestValues values;

  void Start(const Context& ctx) {
    std::lock_guard lock(mu);
    started = true;
    remaining = ctx.remaining();
    values = ctx.values();
    cv.notify_all();
  }
  void Finish(StopReason r) {
    std::lock_guard lock(mu);
    finished = true;
    reason = r;
    stopped_at = Clock::now();
    cv.notify_all();
  }
  bool WaitStarted(std::chrono::milliseconds d = 5s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, d * TimeScale(), [&] { return started; });
  }
  bool WaitFinished(std::chrono::milliseconds d = 5s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, d * TimeScale(), [&] { return finished; });
  }
};

// A handler that waits up to `d` and reports why it ended.
inline Handler Sleeper(Probe& probe, std::chrono::milliseconds d) {
  return [&probe, d](const Request&, const Context& ctx) -> asio::awaitable<Response> {
    probe.Start(ctx);
    try {
      co_await Sleep(d);
    } catch (...) {
      probe.Finish(ctx.stop_reason());
      throw;
    }
    probe.Finish(StopReason::none);
    co_return Response::text(200, "slept\n");
  };
}

// Parses `bytes` as exactly one HTTP response; fails the test when they are not one.
inline bhttp::response<bhttp::string_body> ParseOneResponse(const std::string& bytes) {
  bhttp::response_parser<bhttp::string_body> parser;
  parser.eager(true);
  boost::system::error_code ec;
  const std::size_t used = parser.put(asio::buffer(bytes), ec);
  EXPECT_FALSE(ec) << ec.message() << " in: " << bytes;
  EXPECT_TRUE(parser.is_done()) << bytes;
  EXPECT_EQ(used, bytes.size()) << "bytes after the response: " << bytes;
  return parser.release();
}

// Status lines ("HTTP/1.x NNN ") in `bytes`.
inline int CountResponses(std::string_view bytes) {
  int n = 0;
  for (auto at = bytes.find("HTTP/1."); at != std::string_view::npos; at = bytes.find("HTTP/1.", at + 1)) {
    const auto line = bytes.substr(at);
    n += line.size() >= 13 && line[8] == ' ' && std::isdigit(static_cast<unsigned char>(line[9])) &&
         std::isdigit(static_cast<unsigned char>(line[10])) && std::isdigit(static_cast<unsigned char>(line[11])) &&
         line[12] == ' ';
  }
  return n;
}

class BasicServer : public ServerFixture {
 protected:
  void Routes(Server& s) override {
    s.route("GET", "/hello", [](const Request& req, const Context&) -> asio::awaitable<Response> {
      co_return Response::text(200, "hello " + req.query_param("name").value_or("world") + "\n");
    });
    s.route("POST", "/echo", [](const Request& req, const Context&) -> asio::awaitable<Response> {
      co_return Response::text(200, req.body);
    });
    s.route("GET", "/budget", [this](const Request&, const Context& ctx) -> asio::awaitable<Response> {
      probe_.Start(ctx);
      co_return Response::text(200, std::to_string(ctx.remaining().count()));
    }, {.name = "Budget", .budget = 2s});
    s.route("GET", "/slow", Sleeper(probe_, 10000ms), {.name = "Slow"});
    // Counts requests: the framing tests check that bytes smuggled behind a rejected request
    // never reach a handler.
    s.route("GET", "/smuggled", [this](const Request&, const Context&) -> asio::awaitable<Response> {
      smuggled_.fetch_add(1);
      co_return Response::text(200, "smuggled\n");
    });
    s.route("GET", "/overloaded", [](const Request&, const Context&) -> asio::awaitable<Response> {
      throw Error(ErrorCode::overloaded, "bulkhead full");
      co_return Response{};
    });
    s.route("GET", "/split", [](const Request&, const Context&) -> asio::awaitable<Response> {
      Response r = Response::text(200, "body");
      r.headers.set("X-Injected", "a\r\nSet-Cookie: evil=1");
      r.headers.set("X-Fine", "yes");
      r.headers.set("Content-Length", "999");
      co_return r;
    });
    s.route("POST", "/ambiguous", [](const Request&, const Context&) -> asio::awaitable<Response> {
      throw Error(ErrorCode::commit_ambiguous, "the commit may have happened");
      co_return Response{};
    }, {.name = "PlaceOrder"});
    // Commits (notes a commit point, as an effect region does) when asked, then works until
    // stopped; reports whether it had a ledger.
    s.route("POST", "/reserve", [](const Request& req, const Context& ctx) -> asio::awaitable<Response> {
      if (!ctx.commit_ledger()) co_return Response::text(200, "no ledger");
      if (req.body.starts_with("commit"))
        ctx.commit_ledger()->note_commit_point(req.body.find("keyed") != std::string::npos);
      if (req.body.ends_with("fail")) throw Error(ErrorCode::unavailable, "the stock service is down");
      auto sleeping = with_context(ctx, Sleep(10s));
      co_await std::move(sleeping);
      co_return Response::text(200, "reserved");
    }, {.name = "Reserve"});
    s.route("GET", "/ledger", [](const Request&, const Context& ctx) -> asio::awaitable<Response> {
      co_return Response::text(200, ctx.commit_ledger() ? "ledger" : "none");
    });
    s.route("GET", "/bug", [](const Request&, const Context&) -> asio::awaitable<Response> {
      throw std::runtime_error("secret detail at 0xdeadbeef");
      co_return Response{};
    });
  }
  Probe probe_;
  std::atomic<int> smuggled_{0};
};

// Connects from `source` (another loopback address: Linux routes all of 127/8 to lo).
inline std::optional<tcp::socket> ConnectFrom(asio::io_context& io, std::string_view source, std::uint16_t port) {
  tcp::socket s(io);
  boost::system::error_code ec;
  s.open(tcp::v4(), ec);
  if (!ec) s.bind(tcp::endpoint(asio::ip::make_address(std::string(source)), 0), ec);
  if (!ec) s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  if (ec) return std::nullopt;
  return s;
}

}  // namespace cutoff::http::server_test

#endif  // CUTOFF_HTTP_INTERNAL_SERVER_FIXTURE_TEST_HPP_
