#include "cutoff/graphql/http/graphql_over_http.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <algorithm>
#include <mutex>
#include <thread>

#include "cutoff/http/client.hpp"
#include "fixture/fixture_resolvers.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::graphql {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using http::ClientRequest;

constexpr std::string_view kSchema = R"(
  type Query { fast: String, slow: String, hello(name: String): String, list: [Int!]! }
  type Mutation { bump: Int }
)";

class GraphQLOverHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    fixture_ = boost::json::parse(R"({"fast": "ok", "slow": {"$delay_ms": 5000, "$value": "late"},
                                      "hello": {"$arg": "name"}, "list": [1, 2, 3], "bump": 1})");
    auto built = Schema::from_sdl(std::string(kSchema));
    ASSERT_TRUE(built.ok());
    schema_ = std::move(built.schema);
    install_fixture_resolvers(*schema_);
    server_ = std::make_unique<http::Server>(io_.get_executor());
    mount_graphql(*server_, "/graphql", *schema_, {.root_value = Data::json(&fixture_)}, {.name = "graphql"});
    port_ = server_->listen("127.0.0.1", 0);
    url_ = "http://127.0.0.1:" + std::to_string(port_) + "/graphql";
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    server_->shutdown(100ms);
    thread_.join();
  }

  http::Response Send(ClientRequest req) {
    if (req.url.empty()) req.url = url_;
    return test_support::RunSync([&]() -> asio::awaitable<http::Response> {
      http::Client client(co_await asio::this_coro::executor);
      co_return co_await client.request(Context::background(), req);
    });
  }
  http::Response Post(std::string body, std::string_view accept = "application/graphql-response+json",
                      std::vector<std::pair<std::string, std::string>> headers = {}) {
    ClientRequest req{.method = "POST", .body = std::move(body)};
    req.headers.set("Content-Type", "application/json");
    if (!accept.empty()) req.headers.set("Accept", accept);
    for (auto& [k, v] : headers) req.headers.set(k, v);
    return Send(std::move(req));
  }

  boost::json::value fixture_;
  std::unique_ptr<Schema> schema_;
  asio::io_context io_;
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
  std::uint16_t port_ = 0;
  std::string url_;
};

TEST_F(GraphQLOverHttp, PostAndGetExecute) {
  auto r = Post(R"({"query": "query Q($n: String) { fast hello(name: $n) }", "variables": {"n": "ann"},
                    "operationName": "Q", "extensions": {}})");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.get("Content-Type"), "application/graphql-response+json; charset=utf-8");
  EXPECT_EQ(r.body, R"({"data":{"fast":"ok","hello":"ann"}})");

  ClientRequest get{.url = url_ + "?query=%7B%20list%20%7D"};
  r = Send(get);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.get("Content-Type"), "application/json; charset=utf-8");  // no Accept
  EXPECT_EQ(r.body, R"({"data":{"list":[1,2,3]}})");

  get.url = url_ + "?query=query%20Q(%24n%3AString)%7Bhello(name%3A%24n)%7D&variables=%7B%22n%22%3A%22bo%22%7D";
  EXPECT_EQ(Send(get).body, R"({"data":{"hello":"bo"}})");
}

TEST_F(GraphQLOverHttp, MutationsAreRefusedOverGet) {
  ClientRequest get{.url = url_ + "?query=mutation%20%7B%20bump%20%7D"};
  auto r = Send(get);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers.get("Allow"), "POST");
  EXPECT_EQ(Post(R"({"query": "mutation { bump }"})").body, R"({"data":{"bump":1}})");
}

TEST_F(GraphQLOverHttp, MediaTypesAndStatusCodes) {
  // Parse and validation errors: 400 without data for graphql-response+json, 200 for json.
  auto r = Post(R"({"query": "{ fast"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body.find("\"data\""), std::string::npos);
  r = Post(R"({"query": "{ nope }"})", "application/json");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("Cannot query field"), std::string::npos);
  // Variable coercion failure.
  EXPECT_EQ(Post(R"({"query": "query($n: String!) { hello(name: $n) }"})").status, 400);
  EXPECT_EQ(Post(R"({"query": "query($n: String!) { hello(name: $n) }"})", "application/json").status, 200);
  // Accept negotiation.
  EXPECT_EQ(Post(R"({"query": "{ fast }"})", "*/*").headers.get("Content-Type"), "application/json; charset=utf-8");
  EXPECT_EQ(Post(R"({"query": "{ fast }"})", "text/html").status, 406);
  EXPECT_EQ(Post(R"({"query": "{ fast }"})", "application/json, application/graphql-response+json")
                .headers.get("Content-Type"),
            "application/graphql-response+json; charset=utf-8");
  // Malformed HTTP-level requests.
  EXPECT_EQ(Post("{not json").status, 400);
  EXPECT_EQ(Post("[]").status, 400);
  EXPECT_EQ(Post(R"({"query": 1})").status, 400);
  EXPECT_EQ(Post(R"({"query": "{ fast }", "variables": "x"})").status, 400);
  EXPECT_EQ(Post(R"({"query": "{ fast }", "operationName": 1})").status, 400);
  EXPECT_EQ(Post(R"({"query": "{ fast }", "extensions": "x"})").status, 400);
  EXPECT_EQ(Post(R"({"variables": {}})").status, 400);
  EXPECT_EQ(Post("").status, 400);
  ClientRequest no_type{.method = "POST", .body = R"({"query": "{ fast }"})"};
  EXPECT_EQ(Send(no_type).status, 415);
  no_type.headers.set("Content-Type", "text/plain");
  EXPECT_EQ(Send(no_type).status, 415);
  no_type.headers.set("Content-Type", "application/json; charset=latin1");
  EXPECT_EQ(Send(no_type).status, 415);
  no_type.headers.set("Content-Type", "application/json; charset=UTF-8");
  EXPECT_EQ(Send(no_type).status, 200);
}

TEST_F(GraphQLOverHttp, TheRequestsBudgetCutsSlowFieldsAndKeepsTheRest) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = Post(R"({"query": "{ fast slow }"})", "application/graphql-response+json",
                {{"Deadline-Budget-Ms", "100"}});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s * test_support::TimeScale());
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find(R"("data":{"fast":"ok","slow":null})"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("DEADLINE_EXCEEDED"), std::string::npos);
  // An already spent budget never reaches the executor.
  r = Post(R"({"query": "{ fast }"})", "application/graphql-response+json", {{"Deadline-Budget-Ms", "0"}});
  EXPECT_EQ(r.status, 504);
  EXPECT_EQ(r.headers.get("Deadline-Expired"), "1");
}

// A resolver's unexpected error: the client gets a generic message with the request id, the
// server's log the real message under the same id.
TEST(GraphQLOverHttpErrors, UnexpectedErrorsAreMaskedAndLoggedWithTheRequestId) {
  auto built = Schema::from_sdl("type Query { broken: String fine: String }");
  ASSERT_TRUE(built.ok());
  Schema& schema = *built.schema;
  schema.resolve("Query", "broken", [](FieldContext&) -> Data { throw std::runtime_error("db password=hunter2"); });
  schema.resolve("Query", "fine", [](FieldContext&) { return Data::from("ok"); });
  std::mutex mu;
  std::vector<std::string> lines;
  asio::io_context io;
  http::Server server(io.get_executor(), {.log = [&](std::string_view line) {
                                            std::lock_guard lock(mu);
                                            lines.emplace_back(line);
                                          }});
  mount_graphql(server, "/graphql", schema);
  const std::uint16_t port = server.listen("127.0.0.1", 0);
  std::thread thread([&] { io.run(); });
  ClientRequest req{.method = "POST", .url = "http://127.0.0.1:" + std::to_string(port) + "/graphql",
                    .body = R"({"query": "query Q { broken fine }"})"};
  req.headers.set("Content-Type", "application/json");
  req.headers.set("X-Request-Id", "req-42");
  http::Response r = test_support::RunSync([&]() -> asio::awaitable<http::Response> {
    http::Client client(co_await asio::this_coro::executor);
    co_return co_await client.request(Context::background(), req);
  });
  server.shutdown(100ms);
  thread.join();
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find(R"x("message":"Internal server error (request id: req-42)")x"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("code":"INTERNAL_SERVER_ERROR")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("fine":"ok")"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("hunter2"), std::string::npos) << r.body;
  std::lock_guard lock(mu);
  const std::string expected =
      R"({"event":"graphql_error","request_id":"req-42","operation":"Q","path":"broken","message":"db password=hunter2"})";
  EXPECT_NE(std::find(lines.begin(), lines.end(), expected), lines.end());
}

// A whole-response stop after a mutation's effect may have landed is a 500 COMMIT_AMBIGUOUS,
// neither a 4xx nor a retryable 504.
TEST(GraphQLOverHttpMutations, AWholeResponseStopAfterAnEffectIs500CommitAmbiguous) {
  auto built = Schema::from_sdl("type Query { q: Int } type Mutation { order: Int }");
  ASSERT_TRUE(built.ok());
  std::unique_ptr<Schema> schema = std::move(built.schema);
  schema->resolve_async("Mutation", "order", [](FieldContext& f) -> asio::awaitable<Data> {
    f.ctx.commit_ledger()->note_commit_point(/*idempotency_keyed=*/true);  // the effect left
    co_await test_support::Sleep(10s);
    co_return Data::from(1);
  });
  asio::io_context io;
  http::Server server(io.get_executor());
  GraphQLHttpOptions options;
  options.execution.policy = StopPolicy::whole_response;
  mount_graphql(server, "/graphql", *schema, options, {.name = "graphql", .stop_grace = 250ms});
  const std::string url = "http://127.0.0.1:" + std::to_string(server.listen("127.0.0.1", 0)) + "/graphql";
  std::thread thread([&] { io.run(); });
  http::Response r = test_support::RunSync([&]() -> asio::awaitable<http::Response> {
    http::Client client(co_await asio::this_coro::executor);
    ClientRequest req{.method = "POST", .url = url, .body = R"({"query": "mutation { order }"})"};
    req.headers.set("Content-Type", "application/json");
    req.headers.set("Accept", "application/graphql-response+json");
    req.headers.set("Deadline-Budget-Ms", "100");
    co_return co_await client.request(Context::background().with_timeout(10s), req);
  });
  EXPECT_EQ(r.status, 500) << r.body;
  EXPECT_NE(r.body.find("COMMIT_AMBIGUOUS"), std::string::npos) << r.body;
  EXPECT_FALSE(r.headers.contains("Deadline-Expired"));
  server.shutdown(100ms);
  thread.join();
}

}  // namespace
}  // namespace cutoff::graphql
