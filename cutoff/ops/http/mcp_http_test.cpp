#include "cutoff/ops/http/mcp_http.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <future>
#include <thread>

#include "cutoff/http/client.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::ops {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test_support::Scaled;

constexpr std::string_view kInitialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";

std::string SleepCall(int id, int ms) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":"m.sleep","arguments":{"ms":)" + std::to_string(ms) + "}}}";
}

class McpHttp : public ::testing::Test {
 protected:
  void Start(McpMountOptions options = {}) {
    registry_.bind("m.sleep").deadline(60s).describe("Sleeps").handler([](const Call& call) -> asio::awaitable<json::value> {
      const auto ms = call.args.as_object().at("ms").to_number<std::int64_t>();
      co_await test_support::Sleep(std::chrono::milliseconds(ms));
      co_return json::object{{"slept_ms", ms}};
    });
    registry_.freeze();
    server_ = std::make_unique<http::Server>(io_.get_executor());
    options.server.metrics = &metrics_;
    mount_mcp(*server_, registry_, std::move(options));
    base_ = "http://127.0.0.1:" + std::to_string(server_->listen("127.0.0.1", 0));
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    if (!server_) return;
    server_->shutdown(100ms);
    thread_.join();
  }

  http::Response Send(std::string method, std::string body, std::vector<std::pair<std::string, std::string>> headers = {},
                      Context ctx = Context::background()) {
    http::ClientRequest req{.method = std::move(method), .url = base_ + "/mcp", .body = std::move(body)};
    req.headers.set("Content-Type", "application/json");
    req.headers.set("Accept", "application/json, text/event-stream");
    for (auto& [k, v] : headers) req.headers.set(k, v);
    return test_support::RunSync([&]() -> asio::awaitable<http::Response> {
      const auto executor = co_await asio::this_coro::executor;
      http::Client client(executor, {.policy = {.attempt_timeout = 60s}});
      co_return co_await client.request(ctx, req);
    });
  }
  std::string OpenSession() {
    const http::Response r = Send("POST", std::string(kInitialize));
    EXPECT_EQ(r.status, 200) << r.body;
    return std::string(r.headers.get("Mcp-Session-Id").value_or(""));
  }

  double Counted(std::string_view outcome) {
    const std::string text = metrics_.expose();
    const std::string series = "cutoff_mcp_tool_calls_total{tool=\"m.sleep\",outcome=\"" + std::string(outcome) + "\"} ";
    const auto at = text.find(series);
    return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size()));
  }

  Registry registry_;
  observe::Registry metrics_;
  asio::io_context io_;
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
  std::string base_;
};

TEST_F(McpHttp, ASessionOpensServesAndEnds) {
  Start();
  const std::string id = OpenSession();
  ASSERT_EQ(id.size(), 32u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(OpenSession(), id);  // each initialize is a new session

  http::Response r = Send("POST", R"({"jsonrpc":"2.0","method":"notifications/initialized"})", {{"Mcp-Session-Id", id}});
  EXPECT_EQ(r.status, 202);
  EXPECT_TRUE(r.body.empty());
  r = Send("POST", R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
           {{"Mcp-Session-Id", id}, {"MCP-Protocol-Version", "2025-11-25"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.get("Content-Type"), "application/json");
  EXPECT_EQ(json::parse(r.body).at("result").at("tools").at(0).at("description"), "Sleeps. Time budget: 60 s.");
  r = Send("POST", SleepCall(2, 1), {{"Mcp-Session-Id", id}});
  EXPECT_FALSE(json::parse(r.body).at("result").as_object().contains("structuredContent")) << r.body;  // no output schema
  EXPECT_EQ(json::parse(r.body).at("result").at("isError"), false);

  EXPECT_EQ(Send("GET", "").status, 405);
  EXPECT_EQ(Send("DELETE", "", {{"Mcp-Session-Id", id}}).status, 204);
  EXPECT_EQ(Send("POST", R"({"jsonrpc":"2.0","id":3,"method":"ping"})", {{"Mcp-Session-Id", id}}).status, 404);
  EXPECT_EQ(Send("DELETE", "", {{"Mcp-Session-Id", id}}).status, 404);
}

TEST_F(McpHttp, RequestsOutsideASessionAreRefused) {
  Start();
  http::Response r = Send("POST", R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body).at("error").at("code"), -32600);
  EXPECT_EQ(Send("POST", "{not json").status, 400);
  EXPECT_EQ(Send("POST", R"({"jsonrpc":"2.0","id":1,"method":"ping"})", {{"Mcp-Session-Id", "feed"}}).status, 404);
  // A refused initialize opens nothing.
  r = Send("POST", R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body).at("error").at("code"), -32602);
  EXPECT_FALSE(r.headers.contains("Mcp-Session-Id"));
  // A version this server does not speak.
  const std::string id = OpenSession();
  EXPECT_EQ(Send("POST", R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
                 {{"Mcp-Session-Id", id}, {"MCP-Protocol-Version", "2099-01-01"}})
                .status,
            400);
  // Malformed messages inside a session are JSON-RPC errors; the session carries on.
  r = Send("POST", "[1,2]", {{"Mcp-Session-Id", id}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body).at("error").at("code"), -32600);
  EXPECT_EQ(Send("POST", R"({"jsonrpc":"2.0","id":1,"method":"ping"})", {{"Mcp-Session-Id", id}}).status, 200);
}

TEST_F(McpHttp, OnlyLoopbackOrListedOriginsMayCall) {
  Start({.allowed_origins = {"https://agent.example"}});
  EXPECT_EQ(Send("POST", std::string(kInitialize), {{"Origin", "http://evil.example"}}).status, 403);
  EXPECT_EQ(Send("POST", std::string(kInitialize), {{"Origin", "http://localhost.evil.example"}}).status, 403);
  EXPECT_EQ(Send("POST", std::string(kInitialize), {{"Origin", "http://127.0.0.1:abc"}}).status, 403);
  EXPECT_EQ(Send("POST", std::string(kInitialize), {{"Origin", "http://localhost:5173"}}).status, 200);
  EXPECT_EQ(Send("POST", std::string(kInitialize), {{"Origin", "http://[::1]:8080"}}).status, 200);
  EXPECT_EQ(Send("POST", std::string(kInitialize), {{"Origin", "https://agent.example"}}).status, 200);
}

TEST_F(McpHttp, TheBudgetHeaderShortensACall) {
  Start();
  const std::string id = OpenSession();
  const auto start = Clock::now();
  const http::Response r = Send("POST", SleepCall(1, 60000), {{"Mcp-Session-Id", id}, {"Deadline-Budget-Ms", "100"}});
  EXPECT_LT(Clock::now() - start, Scaled(100ms) + Scaled(1000ms));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body).at("result").at("_meta").at("dev.cutoff/error").at("code"), "deadline_exceeded");
}

TEST_F(McpHttp, AClientThatHangsUpStopsItsCall) {
  Start();
  const std::string id = OpenSession();
  const auto start = Clock::now();
  // A stop, not a deadline: a deadline would travel as Deadline-Budget-Ms and end the call there.
  auto [ctx, stop] = Context().with_cancel();
  std::thread stopper([stop = stop] {
    std::this_thread::sleep_for(100ms);
    stop.request_stop(StopReason::cancelled);
  });
  EXPECT_THROW(Send("POST", SleepCall(1, 60000), {{"Mcp-Session-Id", id}}, ctx), Error);
  stopper.join();
  // The server sees the connection close and stops the call with cancelled.
  while (Counted("cancelled") == 0 && Clock::now() - start < Scaled(3s)) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(Counted("cancelled"), 1);
  EXPECT_LT(Clock::now() - start, Scaled(100ms) + Scaled(500ms));
}

TEST_F(McpHttp, ACancelNotificationStopsACallRunningOnAnotherRequest) {
  Start();
  const std::string id = OpenSession();
  auto call = std::async(std::launch::async, [&] { return Send("POST", SleepCall(9, 60000), {{"Mcp-Session-Id", id}}); });
  std::this_thread::sleep_for(Scaled(100ms));
  const auto cancelled_at = Clock::now();
  EXPECT_EQ(Send("POST", R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}})",
                 {{"Mcp-Session-Id", id}})
                .status,
            202);
  const http::Response r = call.get();
  EXPECT_LT(Clock::now() - cancelled_at, Scaled(200ms));
  EXPECT_EQ(r.status, 202);  // no reply for a cancelled request
  EXPECT_EQ(Counted("cancelled"), 1);
}

TEST_F(McpHttp, EndingASessionStopsItsCalls) {
  Start();
  const std::string id = OpenSession();
  auto call = std::async(std::launch::async, [&] { return Send("POST", SleepCall(1, 60000), {{"Mcp-Session-Id", id}}); });
  std::this_thread::sleep_for(Scaled(100ms));
  EXPECT_EQ(Send("DELETE", "", {{"Mcp-Session-Id", id}}).status, 204);
  const http::Response r = call.get();
  EXPECT_EQ(json::parse(r.body).at("result").at("_meta").at("dev.cutoff/error").at("code"), "cancelled");
}

TEST_F(McpHttp, SessionsAreLimited) {
  Start({.max_sessions = 2, .session_idle_timeout = Scaled(300ms)});
  OpenSession();
  OpenSession();
  const http::Response r = Send("POST", std::string(kInitialize));
  EXPECT_EQ(r.status, 503);
  // Idle sessions make room.
  std::this_thread::sleep_for(Scaled(400ms));
  EXPECT_EQ(OpenSession().size(), 32u);
}

}  // namespace
}  // namespace cutoff::ops
