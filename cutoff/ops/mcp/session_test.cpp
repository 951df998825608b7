#include "cutoff/ops/mcp/session.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <stdexcept>
#include <string>

#include "cutoff/core/error.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::ops::mcp {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test_support::Scaled;

const Context kUnbound;

std::int64_t Arg(const Call& call, std::string_view key, std::int64_t fallback) {
  const json::value* v = call.args.as_object().if_contains(key);
  return v ? v->to_number<std::int64_t>() : fallback;
}

Registry MakeRegistry() {
  Registry r;
  r.bind("t.echo")
      .describe("Returns its arguments")
      .request_schema(json::parse(R"({"type":"object","properties":{"text":{"type":"string"}}})"))
      .handler([](const Call& call) -> asio::awaitable<json::value> { co_return call.args; });
  r.bind("t.sleep")
      .describe("Sleeps")
      .deadline(60s)
      .response_schema(json::parse(R"({"type":"object","properties":{"slept_ms":{"type":"integer"}}})"))
      .handler([](const Call& call) -> asio::awaitable<json::value> {
        const std::int64_t ms = Arg(call, "ms", 0);
        co_await test_support::Sleep(std::chrono::milliseconds(ms));
        co_return json::object{{"slept_ms", ms}};
      });
  r.bind("t.short").deadline(Scaled(150ms)).handler([](const Call&) -> asio::awaitable<json::value> {
    co_await test_support::Sleep(60s);
    co_return json::object();
  });
  // Commits after work_ms, then works on for after_ms.
  r.bind("t.commit").deadline(60s).handler([](const Call& call) -> asio::awaitable<json::value> {
    co_await test_support::Sleep(std::chrono::milliseconds(Arg(call, "work_ms", 0)));
    call.ctx.commit_ledger()->note_commit_point();
    co_await test_support::Sleep(std::chrono::milliseconds(Arg(call, "after_ms", 0)));
    co_return json::object{{"committed", true}};
  });
  r.bind("t.keyed").takes_idempotency_key().handler([](const Call& call) -> asio::awaitable<json::value> {
    json::object out{{"args", call.args}};
    out["key"] = call.idempotency_key ? json::value(*call.idempotency_key) : json::value(nullptr);
    co_return out;
  });
  r.bind("t.throws").handler([](const Call&) -> asio::awaitable<json::value> {
    throw std::runtime_error("secret internal detail");
    co_return json::value();
  });
  r.freeze();
  return r;
}

class SessionTest : public ::testing::Test {
 protected:
  SessionTest() : registry_(MakeRegistry()), server_(registry_, {.name = "test", .metrics = &metrics_}) {}

  // Handles one message; the parsed reply, or null when there is none.
  json::value Send(Session& session, std::string_view message, Context ctx = {}) {
    std::optional<std::string> reply = test_support::RunSync([&]() -> asio::awaitable<std::optional<std::string>> {
      co_return co_await session.handle(ctx, message);
    });
    return reply ? json::parse(*reply) : json::value(nullptr);
  }

  void Initialize(Session& session) {
    const json::value r =
        Send(session, R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",
                         "capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    ASSERT_TRUE(r.as_object().contains("result")) << json::serialize(r);
  }

  json::value CallTool(Session& session, std::string_view name, std::string_view arguments = "{}",
                       std::string_view meta = "") {
    std::string message = R"({"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":")" + std::string(name) +
                          R"(","arguments":)" + std::string(arguments);
    if (!meta.empty()) message += R"(,"_meta":)" + std::string(meta);
    message += "}}";
    return Send(session, message);
  }

  double Counted(std::string_view tool, std::string_view outcome) {
    const std::string text = metrics_.expose();
    const std::string series =
        "cutoff_mcp_tool_calls_total{tool=\"" + std::string(tool) + "\",outcome=\"" + std::string(outcome) + "\"} ";
    const auto at = text.find(series);
    return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size()));
  }

  static int ErrorCodeOf(const json::value& reply) { return reply.at("error").at("code").to_number<int>(); }
  static std::string ToolErrorCode(const json::value& reply) {
    return std::string(reply.at("result").at("_meta").at("dev.cutoff/error").at("code").as_string());
  }
  static std::string Text(const json::value& reply) {
    return std::string(reply.at("result").at("content").at(0).at("text").as_string());
  }

  observe::Registry metrics_;
  Registry registry_;
  Server server_;
};

TEST_F(SessionTest, InitializeAgreesOnTheClientsVersionOrOffersTheNewest) {
  Session a(server_);
  json::value r = Send(a, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})");
  EXPECT_EQ(r.at("id"), 1);
  EXPECT_EQ(r.at("result").at("protocolVersion"), "2025-03-26");
  EXPECT_EQ(r.at("result").at("serverInfo").at("name"), "test");
  EXPECT_TRUE(r.at("result").at("capabilities").as_object().contains("tools"));
  EXPECT_EQ(a.protocol_version(), "2025-03-26");
  // Once only.
  r = Send(a, R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})");
  EXPECT_EQ(ErrorCodeOf(r), -32600);

  Session b(server_);
  r = Send(b, R"({"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"1999-01-01"}})");
  EXPECT_EQ(r.at("result").at("protocolVersion").as_string(), kProtocolVersions[0]);
  Session c(server_);
  EXPECT_EQ(ErrorCodeOf(Send(c, R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{}})")), -32602);
}

TEST_F(SessionTest, ToolsWaitForInitializeButPingDoesNot) {
  Session s(server_);
  EXPECT_EQ(ErrorCodeOf(Send(s, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})")), -32600);
  EXPECT_EQ(ErrorCodeOf(CallTool(s, "t.echo")), -32600);
  EXPECT_TRUE(Send(s, R"({"jsonrpc":"2.0","id":2,"method":"ping"})").at("result").as_object().empty());
}

TEST_F(SessionTest, TheToolListStatesEachBudget) {
  Session s(server_);
  Initialize(s);
  const json::value r = Send(s, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  const json::array& tools = r.at("result").at("tools").as_array();
  ASSERT_EQ(tools.size(), registry_.operations().size());
  std::map<std::string, json::object> by_name;
  for (const json::value& t : tools) by_name[std::string(t.at("name").as_string())] = t.as_object();
  EXPECT_EQ(by_name["t.sleep"]["description"], "Sleeps. Time budget: 60 s.");
  EXPECT_EQ(by_name["t.sleep"]["_meta"].at("dev.cutoff/deadline-seconds"), 60);
  EXPECT_EQ(by_name["t.echo"]["description"], "Returns its arguments. No time budget is declared; only the caller's budget applies.");
  EXPECT_EQ(by_name["t.echo"]["inputSchema"].at("properties").at("text").at("type"), "string");
  EXPECT_FALSE(by_name["t.echo"].contains("outputSchema"));
  EXPECT_EQ(by_name["t.sleep"]["outputSchema"].at("type"), "object");
  EXPECT_EQ(by_name["t.throws"]["inputSchema"], json::parse(R"({"type":"object"})"));
  // Keys can be passed as an argument only where the operation records them.
  EXPECT_TRUE(by_name["t.keyed"]["inputSchema"].at("properties").as_object().contains("idempotency_key"));
  EXPECT_FALSE(by_name["t.echo"]["inputSchema"].at("properties").as_object().contains("idempotency_key"));
}

TEST_F(SessionTest, ACallReturnsTextAndStructuredContent) {
  Session s(server_);
  Initialize(s);
  json::value r = CallTool(s, "t.sleep", R"({"ms":1})");
  EXPECT_EQ(r.at("id"), "c1");
  EXPECT_EQ(r.at("result").at("isError"), false);
  EXPECT_EQ(r.at("result").at("structuredContent").at("slept_ms"), 1);
  EXPECT_EQ(json::parse(Text(r)).at("slept_ms"), 1);
  // No outputSchema: text only.
  r = CallTool(s, "t.echo", R"({"text":"hi"})");
  EXPECT_FALSE(r.at("result").as_object().contains("structuredContent"));
  EXPECT_EQ(json::parse(Text(r)).at("text"), "hi");
  EXPECT_EQ(Counted("t.sleep", "ok"), 1);
}

TEST_F(SessionTest, AToolThatOverrunsItsBudgetIsStoppedAndSaysSo) {
  Session s(server_);
  Initialize(s);
  const auto start = Clock::now();
  const json::value r = CallTool(s, "t.short");
  const auto took = Clock::now() - start;
  EXPECT_GE(took, Scaled(150ms) - 5ms);
  EXPECT_LT(took, Scaled(150ms) + Scaled(500ms));  // the handler's 60 s sleep was stopped
  EXPECT_EQ(r.at("result").at("isError"), true);
  EXPECT_EQ(ToolErrorCode(r), "deadline_exceeded");
  EXPECT_EQ(r.at("result").at("_meta").at("dev.cutoff/error").at("retryable"), false);
  EXPECT_NE(Text(r).find("deadline_exceeded (not retryable)"), std::string::npos) << Text(r);
  EXPECT_EQ(Counted("t.short", "deadline_exceeded"), 1);
}

TEST_F(SessionTest, TheCallersBudgetInMetaOnlyShortens) {
  Session s(server_);
  Initialize(s);
  auto start = Clock::now();
  json::value r = CallTool(s, "t.sleep", R"({"ms":60000})", R"({"dev.cutoff/budget-ms":100})");
  EXPECT_LT(Clock::now() - start, Scaled(100ms) + Scaled(500ms));
  EXPECT_EQ(ToolErrorCode(r), "deadline_exceeded");
  // A budget longer than the operation's does not extend it.
  start = Clock::now();
  r = CallTool(s, "t.short", "{}", R"({"dev.cutoff/budget-ms":60000})");
  EXPECT_LT(Clock::now() - start, Scaled(150ms) + Scaled(500ms));
  EXPECT_EQ(ToolErrorCode(r), "deadline_exceeded");
  // Zero: spent before it starts.
  r = CallTool(s, "t.sleep", R"({"ms":1})", R"({"dev.cutoff/budget-ms":0})");
  EXPECT_EQ(ToolErrorCode(r), "deadline_exceeded");
  EXPECT_EQ(ErrorCodeOf(CallTool(s, "t.sleep", "{}", R"({"dev.cutoff/budget-ms":-1})")), -32602);
  EXPECT_EQ(ErrorCodeOf(CallTool(s, "t.sleep", "{}", R"({"dev.cutoff/budget-ms":"soon"})")), -32602);
}

TEST_F(SessionTest, AStopAfterTheCommitIsCommitAmbiguousAndSaysNotToRetryWithoutAKey) {
  Session s(server_);
  Initialize(s);
  const json::value r =
      CallTool(s, "t.commit", R"({"work_ms":1,"after_ms":60000})", R"({"dev.cutoff/budget-ms":100})");
  EXPECT_EQ(r.at("result").at("isError"), true);
  EXPECT_EQ(ToolErrorCode(r), "commit_ambiguous");
  EXPECT_NE(Text(r).find("Do not retry it without an idempotency key"), std::string::npos) << Text(r);
  EXPECT_EQ(Counted("t.commit", "commit_ambiguous"), 1);
}

TEST_F(SessionTest, CancelledNotificationStopsTheCallAndNoReplyIsSent) {
  Session s(server_);
  Initialize(s);
  asio::io_context io;
  std::optional<std::optional<std::string>> reply;
  Clock::time_point cancelled_at, returned_at;
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    reply = co_await s.handle(kUnbound, R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t.sleep","arguments":{"ms":60000}}})");
    returned_at = Clock::now();
  }, asio::detached);
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    co_await test_support::Sleep(50ms);
    EXPECT_EQ(s.calls_in_flight(), 1u);
    // A cancel for another id changes nothing.
    const auto other = co_await s.handle(kUnbound, R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}})");
    EXPECT_FALSE(other);
    co_await test_support::Sleep(20ms);
    EXPECT_EQ(s.calls_in_flight(), 1u);
    cancelled_at = Clock::now();
    const auto ours = co_await s.handle(kUnbound, R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}})");
    EXPECT_FALSE(ours);
  }, asio::detached);
  io.run();
  ASSERT_TRUE(reply.has_value());
  EXPECT_FALSE(reply->has_value());  // the client forgot the request: no reply
  EXPECT_LT(returned_at - cancelled_at, Scaled(100ms));
  EXPECT_EQ(s.calls_in_flight(), 0u);
  EXPECT_EQ(Counted("t.sleep", "cancelled"), 1);
}

TEST_F(SessionTest, TheTransportsContextStopsCalls) {
  Session s(server_);
  Initialize(s);
  auto [ctx, stop] = Context().with_cancel();
  asio::io_context io;
  std::optional<std::string> reply;
  asio::co_spawn(io, [&, ctx = ctx]() -> asio::awaitable<void> {
    reply = co_await s.handle(ctx, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t.sleep","arguments":{"ms":60000}}})");
  }, asio::detached);
  asio::co_spawn(io, [&, stop = stop]() -> asio::awaitable<void> {
    co_await test_support::Sleep(30ms);
    stop.request_stop(StopReason::cancelled);
  }, asio::detached);
  io.run();
  ASSERT_TRUE(reply);
  EXPECT_EQ(ToolErrorCode(json::parse(*reply)), "cancelled");
}

TEST_F(SessionTest, StopCallsStopsThoseRunningAndRefusesLaterOnes) {
  Session s(server_);
  Initialize(s);
  asio::io_context io;
  std::optional<std::string> reply;
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    reply = co_await s.handle(kUnbound, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t.sleep","arguments":{"ms":60000}}})");
  }, asio::detached);
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    co_await test_support::Sleep(30ms);
    s.stop_calls(StopReason::shutdown);
  }, asio::detached);
  io.run();
  ASSERT_TRUE(reply);
  EXPECT_EQ(ToolErrorCode(json::parse(*reply)), "shutdown");
  EXPECT_EQ(ToolErrorCode(CallTool(s, "t.echo")), "shutdown");
}

TEST_F(SessionTest, CallsBeyondTheLimitAreRefusedAsOverloaded) {
  Server small(registry_, {.max_calls_in_flight = 1});
  Session s(small);
  Initialize(s);
  asio::io_context io;
  std::optional<std::string> first, second;
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    first = co_await s.handle(kUnbound, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t.sleep","arguments":{"ms":200}}})");
  }, asio::detached);
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    co_await test_support::Sleep(20ms);
    second = co_await s.handle(kUnbound, R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t.echo","arguments":{}}})");
    // The same id twice at once is a client bug.
    const auto dup = co_await s.handle(kUnbound, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t.echo"}})");
    EXPECT_EQ(ToolErrorCode(json::parse(*dup)), "overloaded");  // the limit is checked first
  }, asio::detached);
  io.run();
  EXPECT_EQ(json::parse(*first).at("result").at("isError"), false);
  const json::value r = json::parse(*second);
  EXPECT_EQ(ToolErrorCode(r), "overloaded");
  EXPECT_EQ(r.at("result").at("_meta").at("dev.cutoff/error").at("retryable"), true);
}

TEST_F(SessionTest, ASecondCallWithAnIdStillRunningIsRefused) {
  Session s(server_);
  Initialize(s);
  asio::io_context io;
  std::optional<std::string> dup;
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    co_await s.handle(kUnbound, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t.sleep","arguments":{"ms":100}}})");
  }, asio::detached);
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    co_await test_support::Sleep(20ms);
    dup = co_await s.handle(kUnbound, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t.echo"}})");
  }, asio::detached);
  io.run();
  ASSERT_TRUE(dup);
  EXPECT_EQ(ErrorCodeOf(json::parse(*dup)), -32600);
}

TEST_F(SessionTest, IdempotencyKeysComeAsAnArgumentOrInMeta) {
  Session s(server_);
  Initialize(s);
  json::value r = CallTool(s, "t.keyed", R"({"a":1,"idempotency_key":"k-1"})");
  EXPECT_EQ(r.at("result").at("isError"), false) << json::serialize(r);
  json::value out = json::parse(Text(r));
  EXPECT_EQ(out.at("key"), "k-1");
  EXPECT_FALSE(out.at("args").as_object().contains("idempotency_key"));  // the handler sees its own arguments
  r = CallTool(s, "t.keyed", R"({"a":1})", R"({"dev.cutoff/idempotency-key":"k-2"})");
  EXPECT_EQ(json::parse(Text(r)).at("key"), "k-2");
  EXPECT_EQ(ErrorCodeOf(CallTool(s, "t.keyed", R"({"idempotency_key":"a"})", R"({"dev.cutoff/idempotency-key":"b"})")),
            -32602);
  EXPECT_EQ(ErrorCodeOf(CallTool(s, "t.keyed", R"({"idempotency_key":""})")), -32602);
  EXPECT_EQ(ErrorCodeOf(CallTool(s, "t.keyed", R"({"idempotency_key":7})")), -32602);
  EXPECT_EQ(ErrorCodeOf(CallTool(s, "t.keyed", "{\"idempotency_key\":\"" + std::string(257, 'k') + "\"}")), -32602);
  // An operation that does not record keys refuses one rather than run unprotected.
  r = CallTool(s, "t.echo", "{}", R"({"dev.cutoff/idempotency-key":"k-3"})");
  EXPECT_EQ(ToolErrorCode(r), "invalid_argument");
}

TEST_F(SessionTest, AFailingToolDoesNotLeakItsMessage) {
  Session s(server_);
  Initialize(s);
  const json::value r = CallTool(s, "t.throws");
  EXPECT_EQ(ToolErrorCode(r), "internal");
  EXPECT_EQ(Text(r).find("secret"), std::string::npos) << Text(r);
}

TEST_F(SessionTest, MalformedMessagesGetJsonRpcErrorsAndTheSessionCarriesOn) {
  Session s(server_);
  Initialize(s);
  struct Case {
    std::string message;
    int code;
  };
  const std::vector<Case> cases = {
      {"{not json", -32700},
      {std::string(100, '[') + std::string(100, ']'), -32700},  // deeper than 64
      {"[]", -32600},
      {R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", -32600},
      {"42", -32600},
      {R"({"id":1,"method":"ping"})", -32600},
      {R"({"jsonrpc":"1.0","id":1,"method":"ping"})", -32600},
      {R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})", -32600},
      {R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", -32600},
      {R"({"jsonrpc":"2.0","id":1,"method":7})", -32600},
      {R"({"jsonrpc":"2.0","id":1})", -32600},
      {R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[1]})", -32600},
      {R"({"jsonrpc":"2.0","id":1,"method":"resources/list"})", -32601},
      {R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}})", -32602},
      {R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}})", -32602},
      {R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t.echo","arguments":[1]}})", -32602},
      {R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t.echo","_meta":3}})", -32602},
      {std::string(server_.options().max_message_bytes + 1, ' '), -32600},
  };
  for (const Case& c : cases) {
    const json::value r = Send(s, c.message);
    ASSERT_TRUE(r.is_object()) << c.message.substr(0, 80);
    EXPECT_EQ(ErrorCodeOf(r), c.code) << c.message.substr(0, 80) << " -> " << json::serialize(r);
    EXPECT_EQ(r.at("jsonrpc"), "2.0");
  }
  // Unknown notifications and stray responses get no reply.
  EXPECT_TRUE(Send(s, R"({"jsonrpc":"2.0","method":"notifications/whatever"})").is_null());
  EXPECT_TRUE(Send(s, R"({"jsonrpc":"2.0","id":5,"result":{}})").is_null());
  EXPECT_TRUE(Send(s, R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}})").is_null());
  // Still serving.
  EXPECT_EQ(CallTool(s, "t.echo", R"({"text":"still"})").at("result").at("isError"), false);
}

}  // namespace
}  // namespace cutoff::ops::mcp
