// The HTTP server end to end: routing, budgets, request values, errors, HEAD, metrics, threads,
// shutdown. Limits and malformed requests are in server_limits_test.cpp, WebSockets in
// server_websocket_test.cpp.
#include "cutoff/http/server.hpp"

#include <gtest/gtest.h>

#include "cutoff/http/internal/server_fixture_test.hpp"

namespace cutoff::http::server_test {
namespace {

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

// Records what each request on a connection saw of its context.
class KeepAliveValues : public ServerFixture {
 protected:
  struct Seen {
    RequestValues values;
    const RequestValues* object = nullptr;  // where the context's values lived
    bool response_already_sent = false;
    Duration remaining{};
  };

  void Routes(Server& s) override {
    s.route("POST", "/first", Record(first_), {.name = "First", .budget = 2s});
    s.route("GET", "/second", Record(second_), {.name = "Second"});
  }
  Handler Record(Seen& seen) {
    return [this, &seen](const Request&, const Context& ctx) -> asio::awaitable<Response> {
      std::lock_guard lock(mu_);
      // A copy: holding the context's own values would keep the connection from reusing them.
      seen.values = ctx.values();
      seen.object = &ctx.values();
      seen.response_already_sent = ctx.values().response && ctx.values().response->sent().has_value();
      seen.remaining = ctx.remaining();
      co_return Response::text(200, "seen\n");
    };
  }

  std::mutex mu_;
  Seen first_, second_;
};

TEST_F(KeepAliveValues, ASecondRequestOnTheConnectionSeesNoneOfTheFirstsValues) {
  Start({.budget = {.max_budget = 5s}});
  auto s = Connect();
  bhttp::request<bhttp::string_body> first{bhttp::verb::post, "/first", 11};
  first.set("X-Request-Id", "first-request");
  first.set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  first.set("tracestate", "vendor=value");
  first.set("Deadline-Budget-Ms", "300");
  first.body() = "order";
  const auto r1 = Send(s, std::move(first));
  ASSERT_EQ(r1.result_int(), 200);
  ASSERT_TRUE(r1.keep_alive());
  const auto r2 = Send(s, bhttp::request<bhttp::string_body>{bhttp::verb::get, "/second", 11});
  ASSERT_EQ(r2.result_int(), 200);

  std::lock_guard lock(mu_);
  // The first request had a value in every field that could carry over...
  EXPECT_EQ(first_.values.request_id, "first-request");
  EXPECT_EQ(first_.values.operation, "First");
  EXPECT_EQ(first_.values.trace.traceparent.substr(0, 36), "00-4bf92f3577b34da6a3ce929d0e0e4736-");
  EXPECT_EQ(first_.values.trace.tracestate, "vendor=value");
  EXPECT_TRUE(first_.values.commits);  // a POST gets a ledger
  ASSERT_TRUE(first_.values.response);
  EXPECT_TRUE(first_.values.response->sent().has_value());
  EXPECT_LE(first_.remaining, 300ms);
  // ...and the second sees only its own.
  EXPECT_EQ(second_.values.request_id, std::string(r2["X-Request-Id"]));
  EXPECT_NE(second_.values.request_id, "first-request");
  EXPECT_EQ(second_.values.operation, "Second");
  EXPECT_EQ(second_.values.trace.traceparent, "");
  EXPECT_EQ(second_.values.trace.tracestate, "");
  EXPECT_FALSE(second_.values.commits);  // a GET gets none
  ASSERT_TRUE(second_.values.response);
  EXPECT_NE(second_.values.response, first_.values.response);  // the first's is still held (by first_)
  EXPECT_FALSE(second_.response_already_sent);
  EXPECT_GT(second_.remaining, 2s);  // the service's 5 s, not the first's 300 ms
  // Both requests' contexts used the connection's one values object: the reuse this test
  // is about did happen.
  EXPECT_EQ(second_.object, first_.object);
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

}  // namespace
}  // namespace cutoff::http::server_test
