#include "cutoff/ops/http/operations_http.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <optional>
#include <thread>

#include "cutoff/core/error.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/resilience/service_time_admission.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::ops {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using cutoff::test_support::Scaled;
std::int64_t ScaledMs(Duration d) { return Scaled(d) / 1ms; }

asio::awaitable<json::value> SleepThenReport(const Call& call) {
  const std::int64_t remaining = std::chrono::ceil<std::chrono::milliseconds>(call.ctx.remaining()).count();
  if (const json::value* ms = call.args.as_object().if_contains("ms"))
    co_await test_support::Sleep(std::chrono::milliseconds(ms->to_number<std::int64_t>()));
  co_return json::object{{"remaining_ms", remaining}, {"args", call.args}};
}

class OperationsHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.bind("h.sleep").deadline(Scaled(300ms)).describe("Sleeps").handler(SleepThenReport);
    registry_.bind("h.long").deadline(60s).handler(SleepThenReport);
    registry_.bind("h.count").handler([this](const Call&) -> asio::awaitable<json::value> {
      ++calls_;
      co_return json::object{{"calls", calls_.load()}};
    });
    registry_.bind("h.commit").deadline(60s).handler([](const Call& call) -> asio::awaitable<json::value> {
      const auto& a = call.args.as_object();
      co_await test_support::Sleep(std::chrono::milliseconds(a.at("work_ms").to_number<std::int64_t>()));
      call.ctx.commit_ledger()->note_commit_point();
      co_await test_support::Sleep(std::chrono::milliseconds(a.at("after_ms").to_number<std::int64_t>()));
      co_return json::object{{"committed", true}};
    });
    registry_.bind("h.keyed")
        .takes_idempotency_key()
        .deadline(60s)
        .handler([](const Call& call) -> asio::awaitable<json::value> {
          if (call.args.as_object().contains("commit")) {
            call.ctx.commit_ledger()->note_commit_point(true);
            co_await test_support::Sleep(10s);
          }
          co_return json::object{{"key", call.idempotency_key ? json::value(*call.idempotency_key) : json::value()}};
        });
    // POSTs to another service (a write, as far as the client knows), then works on for
    // `after_ms`: its effect lives over there.
    registry_.bind("h.forward").deadline(60s).handler([this](const Call& call) -> asio::awaitable<json::value> {
      const auto& a = call.args.as_object();
      const auto executor = co_await asio::this_coro::executor;  // apart: see http::Client's constructors
      http::Client client(executor, {.policy = {.attempt_timeout = 60s}});
      http::ClientRequest req{.method = "POST", .url = base_ + "/remote", .body = json::serialize(a.at("remote_ms"))};
      req.headers.set("Content-Type", "application/json");
      auto calling = client.request(call.ctx, std::move(req));
      http::Response r = co_await std::move(calling);
      co_await test_support::Sleep(std::chrono::milliseconds(a.at("after_ms").to_number<std::int64_t>()));
      co_return json::object{{"remote_status", r.status}};
    });
    registry_.bind("h.bad").handler([](const Call& call) -> asio::awaitable<json::value> {
      throw Error(ErrorCode::invalid_argument, "ms must be a number", call.ctx.request_id());
      co_return nullptr;
    });
    registry_.patch("ns:h").tag("test");
    registry_.freeze();
    server_ = std::make_unique<http::Server>(io_.get_executor());
    mount_operations(*server_, registry_);
    // Another service's write: it takes the body's milliseconds whatever budget it is sent, so
    // only the caller's own stop can end the exchange early.
    server_->route(
        "POST", "/remote",
        [](const http::Request& req, const Context&) -> asio::awaitable<http::Response> {
          co_await test_support::Sleep(std::chrono::milliseconds(std::stoll(req.body)));
          co_return http::Response::json(200, "{}");
        },
        {.name = "remote", .bind_deadline = false});
    port_ = server_->listen("127.0.0.1", 0);
    base_ = "http://127.0.0.1:" + std::to_string(port_);
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    server_->shutdown(100ms);
    thread_.join();
  }

  struct Answer {
    http::Response response;
    json::value body;
    Duration took{};
  };

  Answer Send(http::ClientRequest req) {
    req.url = base_ + req.url;
    const auto start = Clock::now();
    Answer a;
    a.response = test_support::RunSync([&]() -> asio::awaitable<http::Response> {
      const auto executor = co_await asio::this_coro::executor;  // apart: see http::Client's constructors
      http::Client client(executor, {.policy = {.attempt_timeout = 60s}});
      co_return co_await client.request(Context::background(), req);
    });
    a.took = Clock::now() - start;
    boost::system::error_code ec;
    a.body = json::parse(a.response.body, ec);
    return a;
  }
  Answer Post(std::string name, std::string body, std::vector<std::pair<std::string, std::string>> headers = {}) {
    http::ClientRequest req{.method = "POST", .url = "/ops/" + name, .body = std::move(body)};
    req.headers.set("Content-Type", "application/json");
    req.headers.set("X-Request-Id", "req-7");
    for (auto& [k, v] : headers) req.headers.set(k, v);
    return Send(std::move(req));
  }

  Registry registry_;
  std::atomic<int> calls_{0};
  asio::io_context io_;
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
  std::uint16_t port_ = 0;
  std::string base_;
};

TEST_F(OperationsHttp, PostRunsTheOperation) {
  Answer a = Post("h.long", R"({"x":[1,2]})");
  EXPECT_EQ(a.response.status, 200);
  EXPECT_EQ(a.response.headers.get("Content-Type"), "application/json");
  EXPECT_EQ(json::serialize(a.body.at("args")), R"({"x":[1,2]})");
  // An empty body is {}.
  a = Post("h.long", "");
  EXPECT_EQ(a.response.status, 200);
  EXPECT_EQ(json::serialize(a.body.at("args")), "{}");
}

TEST_F(OperationsHttp, ErrorsAreJsonDocumentsWithTheTaxonomysStatus) {
  Answer a = Post("h.long", "{nope");
  EXPECT_EQ(a.response.status, 400);
  EXPECT_EQ(a.body.at("error").at("code"), "invalid_argument");
  EXPECT_EQ(a.body.at("error").at("request_id"), "req-7");
  a = Post("h.bad", "{}");
  EXPECT_EQ(a.response.status, 400);
  EXPECT_EQ(a.body.at("error").at("message"), "ms must be a number");
  a = Post("h.nope", "{}");
  EXPECT_EQ(a.response.status, 404);
  EXPECT_EQ(a.body.at("error").at("code"), "not_found");
  a = Post("h.long", "{}", {{"Content-Type", "text/plain"}});
  EXPECT_EQ(a.response.status, 400);
}

TEST_F(OperationsHttp, TheRoutesBudgetIsTheOperationsDeadline) {
  Answer a = Post("h.sleep", "{}");
  ASSERT_EQ(a.response.status, 200) << a.response.body;
  const auto remaining = a.body.at("remaining_ms").to_number<std::int64_t>();
  EXPECT_LE(remaining, ScaledMs(300ms));
  EXPECT_GT(remaining, 0);
}

TEST_F(OperationsHttp, BudgetHeaderTightensTheDeclaredBudget) {
  Answer a = Post("h.long", "{}", {{"Deadline-Budget-Ms", std::to_string(ScaledMs(200ms))}});
  ASSERT_EQ(a.response.status, 200);
  EXPECT_LE(a.body.at("remaining_ms").to_number<std::int64_t>(), ScaledMs(200ms));
  // And stops the work when it runs out: 504 with Deadline-Expired.
  a = Post("h.long", R"({"ms": 10000})", {{"Deadline-Budget-Ms", std::to_string(ScaledMs(150ms))}});
  EXPECT_EQ(a.response.status, 504);
  EXPECT_EQ(a.response.headers.get("Deadline-Expired"), "1");
  EXPECT_EQ(a.body.at("error").at("code"), "deadline_exceeded");
  EXPECT_EQ(a.body.at("error").at("request_id"), "req-7");
  EXPECT_GE(a.took, Scaled(150ms) - 5ms);
  EXPECT_LT(a.took, Scaled(1500ms));
}

TEST_F(OperationsHttp, BudgetHeaderNeverExtendsTheDeclaredBudget) {
  Answer a = Post("h.sleep", "{}", {{"Deadline-Budget-Ms", "60000"}});
  ASSERT_EQ(a.response.status, 200);
  EXPECT_LE(a.body.at("remaining_ms").to_number<std::int64_t>(), ScaledMs(300ms));
  a = Post("h.sleep", R"({"ms": 10000})", {{"Deadline-Budget-Ms", "60000"}});
  EXPECT_EQ(a.response.status, 504);
  EXPECT_EQ(a.response.headers.get("Deadline-Expired"), "1");
  EXPECT_GE(a.took, Scaled(300ms) - 5ms);
  EXPECT_LT(a.took, Scaled(2000ms));
}

TEST_F(OperationsHttp, SpentBudgetNeverReachesTheOperation) {
  Answer a = Post("h.count", "{}", {{"Deadline-Budget-Ms", "0"}});
  EXPECT_EQ(a.response.status, 504);
  EXPECT_EQ(a.response.headers.get("Deadline-Expired"), "1");
  EXPECT_EQ(calls_, 0);
  EXPECT_EQ(Post("h.count", "{}").response.status, 200);
  EXPECT_EQ(calls_, 1);
}

TEST_F(OperationsHttp, LateStopAfterACommitIs500CommitAmbiguous) {
  Answer a = Post("h.commit", json::serialize(json::object{{"work_ms", ScaledMs(20ms)}, {"after_ms", 10'000}}),
                  {{"Deadline-Budget-Ms", std::to_string(ScaledMs(200ms))}});
  EXPECT_EQ(a.response.status, 500);
  EXPECT_EQ(a.body.at("error").at("code"), "commit_ambiguous");
  EXPECT_EQ(a.body.at("error").at("request_id"), "req-7");
  EXPECT_FALSE(a.response.headers.contains("Deadline-Expired"));
  // Before the commit point it is a plain deadline.
  a = Post("h.commit", json::serialize(json::object{{"work_ms", 10'000}, {"after_ms", 0}}),
           {{"Deadline-Budget-Ms", std::to_string(ScaledMs(100ms))}});
  EXPECT_EQ(a.response.status, 504);
}

TEST_F(OperationsHttp, TheIdempotencyKeyHeaderReachesTheOperation) {
  Answer a = Post("h.keyed", "{}", {{"Idempotency-Key", "order-17"}});
  ASSERT_EQ(a.response.status, 200) << a.response.body;
  EXPECT_EQ(a.body.at("key"), "order-17");
  // An operation that does not take keys refuses one rather than run unprotected.
  a = Post("h.count", "{}", {{"Idempotency-Key", "order-17"}});
  EXPECT_EQ(a.response.status, 400) << a.response.body;
  EXPECT_EQ(a.body.at("error").at("code"), "invalid_argument");
  EXPECT_EQ(calls_, 0);
  // Two keys: which one would be honoured?
  http::ClientRequest twice{.method = "POST", .url = "/ops/h.keyed", .body = "{}"};
  twice.headers.add("Idempotency-Key", "a");
  twice.headers.add("Idempotency-Key", "b");
  a = Send(std::move(twice));
  EXPECT_EQ(a.response.status, 400) << a.response.body;
  // A keyed call stopped after its commit point: 500 commit_ambiguous, retry with the key.
  a = Post("h.keyed", R"({"commit": true})",
           {{"Idempotency-Key", "order-18"}, {"Deadline-Budget-Ms", std::to_string(ScaledMs(150ms))}});
  EXPECT_EQ(a.response.status, 500) << a.response.body;
  EXPECT_EQ(a.body.at("error").at("code"), "commit_ambiguous");
  EXPECT_NE(json::serialize(a.body.at("error").at("message")).find("same Idempotency-Key"), std::string::npos)
      << a.response.body;
}

// An effect in another service, reached over HTTP, is a commit point like a local one.
TEST_F(OperationsHttp, AStopAfterARemoteWriteLeftIs500CommitAmbiguous) {
  const std::string budget = std::to_string(ScaledMs(150ms));
  // Sent, never answered within the budget.
  Answer a = Post("h.forward", R"({"remote_ms": 10000, "after_ms": 0})", {{"Deadline-Budget-Ms", budget}});
  EXPECT_EQ(a.response.status, 500) << a.response.body;
  EXPECT_EQ(a.body.at("error").at("code"), "commit_ambiguous");
  // Answered, then stopped in the caller's own later work.
  a = Post("h.forward", R"({"remote_ms": 0, "after_ms": 10000})", {{"Deadline-Budget-Ms", budget}});
  EXPECT_EQ(a.response.status, 500) << a.response.body;
  EXPECT_EQ(a.body.at("error").at("code"), "commit_ambiguous");
  // Within the budget: the remote answer comes back.
  a = Post("h.forward", R"({"remote_ms": 0, "after_ms": 0})");
  EXPECT_EQ(a.response.status, 200) << a.response.body;
  EXPECT_EQ(a.body.at("remote_status"), 200);
}

TEST_F(OperationsHttp, ServesTheCatalogAndTheOpenApiDocument) {
  Answer a = Send({.url = "/catalog.json"});
  ASSERT_EQ(a.response.status, 200);
  EXPECT_EQ(a.body.at("operations").as_array().size(), 7u);
  a = Send({.url = "/openapi.json"});
  ASSERT_EQ(a.response.status, 200);
  EXPECT_EQ(a.body.at("openapi"), "3.1.0");
  const json::object& sleep = a.body.at("paths").at("/ops/h.sleep").at("post").as_object();
  EXPECT_EQ(sleep.at("x-deadline-seconds"), deadline_seconds_json(Scaled(300ms)));
  EXPECT_EQ(sleep.at("tags").at(0), "test");
  EXPECT_NE(sleep.at("description").as_string().find("Time budget: "), std::string::npos);
  EXPECT_FALSE(a.body.at("paths").at("/ops/h.count").at("post").as_object().contains("x-deadline-seconds"));
}

TEST(OperationsHttpMount, RequiresAFrozenRegistry) {
  asio::io_context io;
  http::Server server(io.get_executor());
  Registry r;
  EXPECT_THROW(mount_operations(server, r), ConfigError);
}

// MountOptions::admission reaches the invoker: a request whose budget is below the operation's
// recent service time is answered 504 deadline_exceeded before the operation runs.
TEST(OperationsHttpAdmission, ADoomedRequestIs504BeforeTheOperationRuns) {
  std::atomic<int> runs{0};
  Registry registry;
  registry.bind("h.work").handler([&runs](const Call&) -> asio::awaitable<json::value> {
    ++runs;
    co_await test_support::Sleep(Scaled(100ms));
    co_return json::object();
  });
  registry.freeze();
  resilience::ServiceTimeAdmission admission({.quantile = 0.5, .min_samples = 2, .probe_interval = Duration::zero()});
  asio::io_context io;
  http::Server server(io.get_executor());
  mount_operations(server, registry, {.admission = &admission});
  const std::string url = "http://127.0.0.1:" + std::to_string(server.listen("127.0.0.1", 0)) + "/ops/h.work";
  std::thread thread([&io] { io.run(); });
  auto post = [&](std::optional<int> budget_ms) {
    http::ClientRequest req{.method = "POST", .url = url, .body = "{}"};
    if (budget_ms) req.headers.set("Deadline-Budget-Ms", std::to_string(*budget_ms));
    return test_support::RunSync([&]() -> asio::awaitable<http::Response> {
      const auto executor = co_await asio::this_coro::executor;  // apart: see http::Client's constructors
      http::Client client(executor, {.policy = {.attempt_timeout = 60s}});
      co_return co_await client.request(Context::background(), req);
    });
  };
  EXPECT_EQ(post(std::nullopt).status, 200);
  EXPECT_EQ(post(std::nullopt).status, 200);
  const http::Response refused = post(10);
  EXPECT_EQ(refused.status, 504);
  EXPECT_EQ(refused.headers.get("Deadline-Expired"), "1");
  EXPECT_NE(refused.body.find("refused before starting: h.work needs ~"), std::string::npos) << refused.body;
  EXPECT_EQ(runs.load(), 2);
  server.shutdown(100ms);
  thread.join();
}

}  // namespace
}  // namespace cutoff::ops
