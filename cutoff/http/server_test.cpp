#include "cutoff/http/server.hpp"

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
#include "cutoff/observe/metrics.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::http {
namespace {

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
std::string ReadUntilClosed(tcp::socket& s, Duration limit, bool* closed = nullptr) {
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
Handler Sleeper(Probe& probe, std::chrono::milliseconds d) {
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
bhttp::response<bhttp::string_body> ParseOneResponse(const std::string& bytes) {
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
int CountResponses(std::string_view bytes) {
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

TEST_F(BasicServer, ServesRoutesWithKeepAlive) {
  Start();
  auto s = Connect();
  std::set<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    bhttp::request<bhttp::string_body> req{bhttp::verb::get, "/hello?name=ann", 11};
    auto res = Send(s, std::move(req));
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body(), "hello ann\n");
    EXPECT_TRUE(res.keep_alive());
    const std::string id(res["X-Request-Id"]);
    EXPECT_EQ(id.size(), 15u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 3u);  // a new id for each request
  bhttp::request<bhttp::string_body> post{bhttp::verb::post, "/echo", 11};
  post.body() = "payload";
  EXPECT_EQ(Send(s, std::move(post)).body(), "payload");
}

TEST_F(BasicServer, UnknownPathIs404AndWrongMethodIs405) {
  Start();
  EXPECT_EQ(Get("/nope").result_int(), 404);
  auto res = Get("/echo");
  EXPECT_EQ(res.result_int(), 405);
  EXPECT_EQ(res["Allow"], "POST");
}

TEST_F(BasicServer, RequestIdIsKeptWhenValid) {
  Start();
  EXPECT_EQ(Get("/hello", {{"X-Request-Id", "req-42"}})["X-Request-Id"], "req-42");
  EXPECT_NE(Get("/hello", {{"X-Request-Id", "bad id with spaces"}})["X-Request-Id"], "bad id with spaces");
}

TEST_F(BasicServer, BudgetIsTheTightestOfRouteServiceAndHeaders) {
  Start({.budget = {.max_budget = 5s, .legacy_ms_headers = {"X-Client-Timeout-Ms"}}});
  auto remaining_ms = [&](std::vector<std::pair<std::string, std::string>> headers) {
    auto res = Get("/budget", std::move(headers));
    EXPECT_EQ(res.result_int(), 200);
    return std::stoll(res.body()) / 1'000'000;
  };
  EXPECT_LE(remaining_ms({}), 2000);  // the route's 2 s
  EXPECT_GT(remaining_ms({}), 1500);
  EXPECT_LE(remaining_ms({{"Deadline-Budget-Ms", "300"}}), 300);
  EXPECT_LE(remaining_ms({{"grpc-timeout", "200m"}}), 200);
  EXPECT_LE(remaining_ms({{"X-Client-Timeout-Ms", "100"}, {"Deadline-Budget-Ms", "900"}}), 100);
  // Garbage never extends: the route's budget still holds, and each value is counted.
  EXPECT_LE(remaining_ms({{"Deadline-Budget-Ms", "99999999999999999999999"}}), 2000);
  EXPECT_LE(remaining_ms({{"Deadline-Budget-Ms", "-5"}}), 2000);
  EXPECT_LE(remaining_ms({{"grpc-timeout", "10x"}}), 2000);
  EXPECT_LE(remaining_ms({{"Deadline-Budget-Ms", "NaN"}}), 2000);
  EXPECT_LE(remaining_ms({{"Deadline-Budget-Ms", "100"}, {"Deadline-Budget-Ms", "90000"}}), 100);
  EXPECT_EQ(MetricValue("cutoff_budget_header_rejected_total{header=\"Deadline-Budget-Ms\",reason=\"overflow\"}"),
            1);
  EXPECT_EQ(MetricValue("cutoff_budget_header_rejected_total{header=\"Deadline-Budget-Ms\",reason=\"negative\"}"),
            1);
  EXPECT_EQ(MetricValue("cutoff_budget_header_rejected_total{header=\"grpc-timeout\",reason=\"bad_unit\"}"), 1);
  bool logged = false;
  for (const auto& line : Log()) logged |= line.find("budget_header_rejected") != std::string::npos;
  EXPECT_TRUE(logged);
}

TEST_F(BasicServer, SpentBudgetIsAnswered504BeforeTheHandler) {
  Start();
  auto res = Get("/budget", {{"Deadline-Budget-Ms", "0"}});
  EXPECT_EQ(res.result_int(), 504);
  EXPECT_EQ(res["Deadline-Expired"], "1");
  EXPECT_NE(res.body().find("\"code\":\"deadline_exceeded\""), std::string::npos);
  EXPECT_FALSE(probe_.started);
  EXPECT_EQ(MetricValue("cutoff_http_deadline_exceeded_total{route=\"Budget\"}"), 1);
}

TEST_F(BasicServer, HandlerPastItsDeadlineIsStoppedAndAnswered504) {
  Start();
  const auto t0 = Clock::now();
  auto res = Get("/slow", {{"Deadline-Budget-Ms", "100"}});
  const auto took = Clock::now() - t0;
  EXPECT_EQ(res.result_int(), 504);
  EXPECT_EQ(res["Deadline-Expired"], "1");
  EXPECT_GE(took, 100ms);
  EXPECT_LT(took, 1000ms * TimeScale());
  ASSERT_TRUE(probe_.WaitFinished());
  EXPECT_EQ(probe_.reason, StopReason::deadline_exceeded);
  EXPECT_EQ(MetricValue("cutoff_http_deadline_exceeded_total{route=\"Slow\"}"), 1);
  EXPECT_EQ(MetricValue("cutoff_http_stopped_total{route=\"Slow\",reason=\"deadline_exceeded\"}"), 1);
  EXPECT_EQ(MetricValue("cutoff_stops_total{layer=\"http\",reason=\"deadline_exceeded\"}"), 1);
  EXPECT_EQ(MetricValue("cutoff_overshoot_seconds_count{layer=\"http\"}"), 1);
  EXPECT_EQ(MetricValue("cutoff_http_requests_total{route=\"Slow\",code=\"504\"}"), 1);
}

TEST_F(BasicServer, ClientDisconnectCancelsTheHandlerWithinMilliseconds) {
  Start();
  auto s = Connect();
  bhttp::request<bhttp::string_body> req{bhttp::verb::get, "/slow", 11};
  req.set(bhttp::field::host, "127.0.0.1");
  req.prepare_payload();
  bhttp::write(s, req);
  ASSERT_TRUE(probe_.WaitStarted());
  const auto closed_at = Clock::now();
  s.close();
  ASSERT_TRUE(probe_.WaitFinished());
  EXPECT_EQ(probe_.reason, StopReason::cancelled);
  EXPECT_LT(probe_.stopped_at - closed_at, 100ms * TimeScale());
  // Logged as 499 with outcome cancelled.
  for (int i = 0; i < 100 && MetricValue("cutoff_http_requests_total{route=\"Slow\",code=\"499\"}") == 0; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(MetricValue("cutoff_http_requests_total{route=\"Slow\",code=\"499\"}"), 1);
  bool logged = false;
  for (const auto& line : Log()) logged |= line.find("\"outcome\":\"cancelled\"") != std::string::npos;
  EXPECT_TRUE(logged);
}

TEST_F(BasicServer, TheResponseIsMarkedWhenItIsSent) {
  Start();
  Get("/budget");
  ASSERT_TRUE(probe_.WaitStarted());
  ASSERT_TRUE(probe_.values.response);
  for (int i = 0; i < 200 && !probe_.values.response->sent(); ++i) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(probe_.values.response->sent().has_value());
}

TEST_F(BasicServer, TraceparentIsContinuedAsAChildSpan) {
  Start();
  Get("/budget", {{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}});
  ASSERT_TRUE(probe_.WaitStarted());
  const auto& tp = probe_.values.trace.traceparent;
  ASSERT_EQ(tp.size(), 55u);
  EXPECT_EQ(tp.substr(0, 36), "00-4bf92f3577b34da6a3ce929d0e0e4736-");
  EXPECT_NE(tp.substr(36, 16), "00f067aa0ba902b7");
  EXPECT_EQ(probe_.values.operation, "Budget");
}

TEST_F(BasicServer, ErrorsFollowTheTaxonomyWithoutLeakingDetails) {
  Start();
  auto overloaded = Get("/overloaded");
  EXPECT_EQ(overloaded.result_int(), 503);
  EXPECT_NE(overloaded.body().find("\"code\":\"overloaded\""), std::string::npos);
  auto bug = Get("/bug");
  EXPECT_EQ(bug.result_int(), 500);
  EXPECT_EQ(bug.body().find("deadbeef"), std::string::npos);
  bool logged = false;  // ... but the log has them
  for (const auto& line : Log()) logged |= line.find("deadbeef") != std::string::npos;
  EXPECT_TRUE(logged);
  auto s = Connect();
  bhttp::request<bhttp::string_body> post{bhttp::verb::post, "/ambiguous", 11};
  EXPECT_EQ(Send(s, std::move(post)).result_int(), 500);
  EXPECT_EQ(MetricValue("cutoff_http_commit_ambiguous_total{route=\"PlaceOrder\"}"), 1);
}

// A plain route's request carries a ledger when its method may write; a stop after its work
// passed a commit point is answered commit_ambiguous, before one the stop itself.
TEST_F(BasicServer, AStopAfterAHandlersCommitPointIsAnsweredCommitAmbiguous) {
  Start();
  EXPECT_EQ(Get("/ledger").body(), "none");  // safe methods pay nothing
  auto post = [&](std::string body) {
    auto s = Connect();
    bhttp::request<bhttp::string_body> req{bhttp::verb::post, "/reserve", 11};
    req.set("Deadline-Budget-Ms", "100");
    req.body() = std::move(body);
    req.prepare_payload();
    return Send(s, std::move(req));
  };
  auto before = post("");
  EXPECT_EQ(before.result_int(), 504) << before.body();
  EXPECT_NE(before.body().find("\"code\":\"deadline_exceeded\""), std::string::npos) << before.body();
  auto after = post("commit");
  EXPECT_EQ(after.result_int(), 500) << after.body();
  EXPECT_NE(after.body().find("\"code\":\"commit_ambiguous\""), std::string::npos) << after.body();
  EXPECT_NE(after.body().find("request Reserve was stopped (deadline_exceeded) at or after its commit point"),
            std::string::npos)
      << after.body();
  EXPECT_NE(after.body().find("reconcile before running it again"), std::string::npos) << after.body();
  EXPECT_TRUE(after["Deadline-Expired"].empty());  // not a spent budget to give up on: unknown
  auto keyed = post("commit keyed");
  EXPECT_NE(keyed.body().find("retry with the same Idempotency-Key"), std::string::npos) << keyed.body();
  // A failure that says nothing of the effect, after the commit point: ambiguous too.
  EXPECT_EQ(post("fail").result_int(), 503);  // no commit point before it: a safe failure
  auto failed = post("commit fail");
  EXPECT_EQ(failed.result_int(), 500) << failed.body();
  EXPECT_NE(failed.body().find("request Reserve failed (unavailable) at or after its commit point"), std::string::npos)
      << failed.body();
  EXPECT_EQ(MetricValue("cutoff_http_commit_ambiguous_total{route=\"Reserve\"}"), 3);
  EXPECT_EQ(MetricValue("cutoff_http_deadline_exceeded_total{route=\"Reserve\"}"), 3);
}

TEST_F(BasicServer, HeadersThatWouldSplitTheResponseAreDropped) {
  Start();
  const std::string raw = Raw("GET /split HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(raw.find("evil"), std::string::npos) << raw;
  EXPECT_NE(raw.find("X-Fine: yes\r\n"), std::string::npos);
  EXPECT_NE(raw.find("Content-Length: 4\r\n"), std::string::npos);
  EXPECT_NE(raw.find("Connection: close\r\n"), std::string::npos);
  EXPECT_EQ(raw.substr(raw.size() - 4), "body");
  EXPECT_EQ(MetricValue("cutoff_http_bad_requests_total{reason=\"invalid_response_header\"}"), 1);
}

TEST_F(BasicServer, Http10AndHead) {
  Start();
  std::string raw = Raw("GET /hello HTTP/1.0\r\n\r\n");
  EXPECT_EQ(raw.substr(0, 17), "HTTP/1.0 200 OK\r\n");
  EXPECT_NE(raw.find("hello world"), std::string::npos);
  // HEAD is GET without the body, on every GET route (the built-in ones too).
  for (const char* path : {"/hello", "/healthz", "/metrics"}) {
    const std::string get = Raw(std::string("GET ") + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const std::string head = Raw(std::string("HEAD ") + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(head.substr(0, 17), "HTTP/1.1 200 OK\r\n") << path << ": " << head;
    const auto length = [](const std::string& r) {
      const auto at = r.find("Content-Length: ");
      return at == std::string::npos ? std::string() : r.substr(at + 16, r.find("\r\n", at) - at - 16);
    };
    if (std::string(path) != "/metrics") {  // the metrics move between the two requests
      EXPECT_EQ(length(head), length(get)) << path;
    }
    EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "") << path;  // no body
  }
  const std::string post_only = Raw("HEAD /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(post_only.substr(0, 12), "HTTP/1.1 405") << post_only;
  EXPECT_NE(post_only.find("Allow: POST\r\n"), std::string::npos) << post_only;
  const std::string wrong = Raw("DELETE /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(wrong.find("Allow: GET, HEAD\r\n"), std::string::npos) << wrong;
}

TEST_F(BasicServer, MetricsAndHealth) {
  Start();
  Get("/hello");
  auto health = Get("/healthz");
  EXPECT_EQ(health.result_int(), 200);
  auto metrics = Get("/metrics");
  EXPECT_EQ(metrics.result_int(), 200);
  EXPECT_NE(metrics.body().find("cutoff_http_requests_total{route=\"/hello\",code=\"200\"} 1"), std::string::npos);
  EXPECT_NE(metrics.body().find("cutoff_http_connections"), std::string::npos);
  // What a Prometheus client library serves, and the build.
  for (const char* name : {"\nprocess_cpu_seconds_total ", "\nprocess_resident_memory_bytes ", "\nprocess_open_fds ",
                           "\nprocess_max_fds ", "\nprocess_start_time_seconds ", "\ncutoff_build_info{version="})
    EXPECT_NE(metrics.body().find(name), std::string::npos) << name;
}

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

TEST_F(BasicServer, ManyClientsOnSeveralIoThreads) {
  Start();
  // Two more threads run the same io_context: connections run on strands.
  std::vector<std::thread> extra;
  for (int i = 0; i < 2; ++i) extra.emplace_back([this] { io_.run(); });
  std::atomic<int> ok{0}, expired{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 6; ++t) {
    clients.emplace_back([&, t] {
      asio::io_context io;
      tcp::socket s(io);
      s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
      beast::flat_buffer b;
      for (int i = 0; i < 30; ++i) {
        const bool slow = (i + t) % 5 == 0;
        bhttp::request<bhttp::string_body> req{bhttp::verb::get, slow ? "/slow" : "/hello", 11};
        req.set(bhttp::field::host, "127.0.0.1");
        if (slow) req.set("Deadline-Budget-Ms", "20");
        req.prepare_payload();
        bhttp::write(s, req);
        bhttp::response<bhttp::string_body> res;
        bhttp::read(s, b, res);
        (res.result_int() == 200 ? ok : expired)++;
      }
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(ok.load() + expired.load(), 180);
  EXPECT_EQ(expired.load(), 36);
  server_->shutdown(100ms);
  for (auto& t : extra) t.join();
}

// RFC 9112 section 6: a request whose body length the server cannot be sure of is refused and
// its connection closed, so the bytes behind it (here a second request) are never parsed.
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

// Connects from `source` (another loopback address: Linux routes all of 127/8 to lo).
std::optional<tcp::socket> ConnectFrom(asio::io_context& io, std::string_view source, std::uint16_t port) {
  tcp::socket s(io);
  boost::system::error_code ec;
  s.open(tcp::v4(), ec);
  if (!ec) s.bind(tcp::endpoint(asio::ip::make_address(std::string(source)), 0), ec);
  if (!ec) s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  if (ec) return std::nullopt;
  return s;
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

class ShutdownServer : public ServerFixture {
 protected:
  void Routes(Server& s) override {
    s.route("GET", "/short", Sleeper(short_, 300ms));
    s.route("GET", "/long", Sleeper(long_, 10000ms));
  }
  Probe short_, long_;
};

TEST_F(ShutdownServer, InFlightRequestsFinishWithinGraceThenStopWithShutdown) {
  Start();
  auto idle = Connect();
  auto s1 = Connect();
  auto s2 = Connect();
  bhttp::request<bhttp::string_body> r1{bhttp::verb::get, "/short", 11};
  bhttp::request<bhttp::string_body> r2{bhttp::verb::get, "/long", 11};
  r1.set(bhttp::field::host, "127.0.0.1");
  r2.set(bhttp::field::host, "127.0.0.1");
  r1.prepare_payload();
  r2.prepare_payload();
  bhttp::write(s1, r1);
  bhttp::write(s2, r2);
  ASSERT_TRUE(short_.WaitStarted());
  ASSERT_TRUE(long_.WaitStarted());
  server_->shutdown(1000ms * TimeScale());

  bhttp::response<bhttp::string_body> res1, res2;
  beast::flat_buffer b1, b2;
  bhttp::read(s1, b1, res1);
  EXPECT_EQ(res1.result_int(), 200);  // finished within the grace period
  EXPECT_FALSE(res1.keep_alive());
  bhttp::read(s2, b2, res2);
  EXPECT_EQ(res2.result_int(), 503);  // stopped at the end of it
  EXPECT_NE(res2.body().find("\"code\":\"shutdown\""), std::string::npos);
  ASSERT_TRUE(long_.WaitFinished());
  EXPECT_EQ(long_.reason, StopReason::shutdown);
  // The idle connection was closed.
  char c;
  boost::system::error_code ec;
  idle.read_some(asio::buffer(&c, 1), ec);
  EXPECT_TRUE(ec);
  // New connections are refused.
  tcp::socket late(client_io_);
  late.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
  EXPECT_TRUE(ec);
}

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
}  // namespace cutoff::http
