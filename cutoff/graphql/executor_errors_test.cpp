// The executor's errors: unexpected ones masked for clients, and what a cut mutation field
// reports by what its ledger says.
#include "cutoff/graphql/executor.hpp"

#include <gtest/gtest.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <algorithm>
#include <functional>
#include <future>
#include <thread>

#include "cutoff/core/error.hpp"
#include "cutoff/graphql/metrics_recorder.hpp"
#include "cutoff/graphql/parser.hpp"
#include "fixture/fixture_resolvers.hpp"
#include "cutoff/graphql/internal/executor_fixture_test.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::graphql {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::Sleep;
using executor_test::Exec;

// Unexpected errors: the client sees a generic message with the request id, the recorder
// the real one; errors meant for clients keep their message and code.
class Masking : public Exec {
 protected:
  class Log : public ExecutionRecorder {
   public:
    void field_stopped(std::string_view, std::string_view, StopReason, Duration) override {}
    void internal_error(std::string_view operation, std::string_view path, std::string_view request_id,
                        std::string_view message) override {
      lines.push_back(std::string(operation) + " " + std::string(path) + " " + std::string(request_id) + " " +
                      std::string(message));
    }
    std::vector<std::string> lines;
  };

  void SetUp() override {
    Build("type Query { sync: Int async: Int pending: [Int] field: Int public: Int internal: Int u: U } "
          "union U = X type X { n: Int }");
    schema_->resolve("Query", "sync", [](FieldContext&) -> Data {
      throw std::runtime_error("connect failed: password=hunter2");
    });
    schema_->resolve_async("Query", "async", [](FieldContext&) -> asio::awaitable<Data> {
      co_await Sleep(1ms);
      throw std::runtime_error("async secret");
    });
    schema_->resolve("Query", "pending", [](FieldContext&) {
      return Data::list({Data::from(1), Data::pending([]() -> asio::awaitable<Data> {
                           co_await Sleep(1ms);
                           throw std::logic_error("pending secret");
                         })});
    });
    schema_->resolve("Query", "field", [](FieldContext&) -> Data { throw FieldError("no stock", "NO_STOCK"); });
    schema_->resolve("Query", "public", [](FieldContext&) -> Data {
      throw cutoff::Error(ErrorCode::overloaded, "the stock service is busy");
    });
    schema_->resolve("Query", "internal", [](FieldContext&) -> Data {
      throw cutoff::Error(ErrorCode::internal, "duplicate key (email)=(a@example.com)");
    });
    schema_->resolve("Query", "u", [](FieldContext&) { return Data::from(1); });
    schema_->type_resolver("U", [](const Data&, const Schema&) -> const Type* { throw 42; });
  }

  Response Masked(const std::string& query, Log* log) {
    ExecutionOptions options;
    options.recorder = log;
    return Run(query, "{}", Context().with_request_id("req-7"), "{}", options);
  }
};

TEST_F(Masking, UnexpectedErrorsShowAGenericMessageWithTheRequestId) {
  Log log;
  Response r = Masked("query Q { sync async pending u { ... on X { n } } }", &log);
  EXPECT_EQ(r.data, R"({"sync":null,"async":null,"pending":[1,null],"u":null})");
  ASSERT_EQ(r.errors.size(), 4u) << r.to_json();
  for (const GraphQLError& e : r.errors) {
    EXPECT_EQ(e.message, "Internal server error (request id: req-7)");
    EXPECT_EQ(e.code, "INTERNAL_SERVER_ERROR");
  }
  const std::vector<PathSegment> item{"pending", std::int64_t{1}};  // a list item's error, at its path
  EXPECT_TRUE(std::any_of(r.errors.begin(), r.errors.end(), [&](const GraphQLError& e) { return e.path == item; }));
  const std::string text = r.to_json();
  EXPECT_EQ(text.find("hunter2"), std::string::npos);
  EXPECT_EQ(text.find("secret"), std::string::npos);
  std::sort(log.lines.begin(), log.lines.end());
  EXPECT_EQ(log.lines, (std::vector<std::string>{"Q async req-7 async secret",
                                                 "Q pending.1 req-7 pending secret",
                                                 "Q sync req-7 connect failed: password=hunter2",
                                                 "Q u req-7 unknown exception"}));
}

TEST_F(Masking, PublicErrorsKeepTheirMessageAndCode) {
  Log log;
  Response r = Masked("{ field public internal }", &log);
  ASSERT_EQ(r.errors.size(), 3u) << r.to_json();
  EXPECT_EQ(r.errors[0].message, "no stock");
  EXPECT_EQ(r.errors[0].code, "NO_STOCK");
  EXPECT_EQ(r.errors[1].message, "the stock service is busy");
  EXPECT_EQ(r.errors[1].code, "OVERLOADED");
  // A cutoff::Error of code `internal` is an unclassified failure: masked, as the HTTP
  // server masks it, keeping its code.
  EXPECT_EQ(r.errors[2].message, "Internal server error (request id: req-7)");
  EXPECT_EQ(r.errors[2].code, "INTERNAL_SERVER_ERROR");
  EXPECT_EQ(log.lines, (std::vector<std::string>{" internal req-7 duplicate key (email)=(a@example.com)"}));
}

TEST_F(Masking, ConfiguredPerSchema) {
  schema_->mask_errors({.enabled = true, .message = "Something went wrong"});
  Response r = Masked("{ sync }", nullptr);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "Something went wrong (request id: req-7)");
  // Without a request id, only the message.
  r = Run("{ sync }");
  EXPECT_EQ(r.errors.at(0).message, "Something went wrong");

  schema_->mask_errors({.enabled = false});
  Log log;
  r = Masked("{ sync }", &log);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "connect failed: password=hunter2");
  EXPECT_EQ(r.errors[0].code, "");
  EXPECT_EQ(log.lines.size(), 1u);  // logged either way
}

// What a cut mutation field reports, by what its ledger says (CommitLedger, per root field).
class MutationOutcomes : public Exec {
 protected:
  void SetUp() override {
    Build(R"(type Query { q: Int }
             type Mutation { write(keyed: Boolean!, ms: Int!): Int plain(ms: Int!): Int
                             lost: Int mustWrite(ms: Int!): Int! })");
    // Notes a possible commit (as the HTTP client does once a POST left), then waits.
    auto write = [](FieldContext& f) -> asio::awaitable<Data> {
      f.ctx.commit_ledger()->note_commit_point(f.arg("keyed")->as_bool());
      co_await Sleep(std::chrono::milliseconds(f.arg("ms")->as_int64()));
      co_return Data::from(1);
    };
    schema_->resolve_async("Mutation", "write", write);
    schema_->resolve_async("Mutation", "mustWrite", [](FieldContext& f) -> asio::awaitable<Data> {
      f.ctx.commit_ledger()->note_commit_point(true);
      co_await Sleep(std::chrono::milliseconds(f.arg("ms")->as_int64()));
      co_return Data::from(1);
    });
    schema_->resolve_async("Mutation", "plain", [](FieldContext& f) -> asio::awaitable<Data> {
      co_await Sleep(std::chrono::milliseconds(f.arg("ms")->as_int64()));
      co_return Data::from(2);
    });
    schema_->resolve_async("Mutation", "lost", [](FieldContext& f) -> asio::awaitable<Data> {
      throw Error(ErrorCode::commit_ambiguous, "POST /x was sent but not answered", f.ctx.request_id());
      co_return Data();
    });
  }
};

TEST_F(MutationOutcomes, AFieldCutAfterItsEffectLeftIsCommitAmbiguousAndLaterFieldsNeverStarted) {
  auto ledger = std::make_shared<CommitLedger>();
  Response r = Run("mutation { a: write(keyed: true, ms: 2000) b: plain(ms: 1) }", "{}",
                   Context().with_commit_ledger(ledger).with_timeout(100ms));
  EXPECT_EQ(r.data, R"({"a":null,"b":null})");
  ASSERT_EQ(r.errors.size(), 2u) << r.to_json();
  EXPECT_EQ(r.errors[0].code, "COMMIT_AMBIGUOUS");
  EXPECT_NE(r.errors[0].message.find("same idempotency key is safe"), std::string::npos) << r.errors[0].message;
  EXPECT_EQ(r.errors[1].code, "DEADLINE_EXCEEDED");
  EXPECT_NE(r.errors[1].message.find("never started"), std::string::npos) << r.errors[1].message;
  EXPECT_EQ(ledger->commit_points(), 1u);  // the caller's ledger heard about it
}

TEST_F(MutationOutcomes, AmbiguousFieldsAreCountedPerOperationAndField) {
  observe::Registry registry;
  MetricsRecorder recorder(registry);
  ExecutionOptions options;
  options.recorder = &recorder;
  Response r = Run("mutation Reserve { a: write(keyed: true, ms: 2000) b: plain(ms: 1) }", "{}",
                   Context().with_timeout(100ms), "{}", options);
  ASSERT_EQ(r.errors.size(), 2u) << r.to_json();
  observe::DeadlineMetrics m(registry);
  EXPECT_EQ(m.field_commit_ambiguous.with({"Reserve", "a"}).value(), 1);
  EXPECT_EQ(m.field_commit_ambiguous.with({"Reserve", "b"}).value(), 0);  // never started: nothing landed
  r = Run("mutation Lost { lost }", "{}", Context(), "{}", options);
  EXPECT_EQ(m.field_commit_ambiguous.with({"Lost", "lost"}).value(), 1);
}

TEST_F(MutationOutcomes, OneFieldsEffectIsNotAttributedToTheNextField) {
  // a commits and finishes; b writes nothing and is cut in flight: nothing of b's can have
  // landed, so b is DEADLINE_EXCEEDED although the operation's ledger has a commit point.
  Response r = Run("mutation { a: write(keyed: false, ms: 1) b: plain(ms: 2000) c: write(keyed: false, ms: 1) }",
                   "{}", Context().with_timeout(150ms));
  EXPECT_EQ(r.data, R"({"a":1,"b":null,"c":null})");
  ASSERT_EQ(r.errors.size(), 2u) << r.to_json();
  EXPECT_EQ(r.errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_EQ(r.errors[0].message.find("never started"), std::string::npos) << "b was started";
  EXPECT_EQ(r.errors[1].code, "DEADLINE_EXCEEDED");
  EXPECT_NE(r.errors[1].message.find("never started"), std::string::npos);
}

TEST_F(MutationOutcomes, AnUnkeyedEffectSaysToCheckAndAThrownCommitAmbiguousKeepsItsCode) {
  Response r = Run("mutation { write(keyed: false, ms: 2000) }", "{}", Context().with_timeout(80ms));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "COMMIT_AMBIGUOUS");
  EXPECT_NE(r.errors[0].message.find("Check whether it took effect"), std::string::npos) << r.errors[0].message;

  r = Run("mutation { lost }");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "COMMIT_AMBIGUOUS");
  EXPECT_NE(r.errors[0].message.find("sent but not answered"), std::string::npos) << r.errors[0].message;
}

TEST_F(MutationOutcomes, ANonNullFieldCutAfterItsEffectAndTheWholeResponsePolicy) {
  // The data is nulled; the later field still says it never started.
  Response r = Run("mutation { a: mustWrite(ms: 2000) b: plain(ms: 1) }", "{}", Context().with_timeout(80ms));
  EXPECT_EQ(r.data, "null");
  ASSERT_EQ(r.errors.size(), 2u) << r.to_json();
  EXPECT_EQ(r.errors[0].code, "COMMIT_AMBIGUOUS");
  EXPECT_EQ(r.errors[1].code, "DEADLINE_EXCEEDED");
  EXPECT_NE(r.errors[1].message.find("never started"), std::string::npos);

  ExecutionOptions whole;
  whole.policy = StopPolicy::whole_response;
  r = Run("mutation { a: write(keyed: true, ms: 2000) }", "{}", Context().with_timeout(80ms), "{}", whole);
  EXPECT_FALSE(r.has_data);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "COMMIT_AMBIGUOUS");
}

// A variable that cannot be coerced is reported as graphql-js reports it: the value that
// failed (inspect()'s text), where it sits inside the variable, then why. Each expected
// message was printed by graphql-js 16 for the same schema, operation and variables.
TEST_F(Exec, AnInvalidVariableIsReportedWhereItFailedAsGraphqlJsReportsIt) {
  Build(
      "input In { x: [Int], y: String!, e: Color, n: In2 }\n"
      "input In2 { z: Float! }\n"
      "enum Color { RED GREEN }\n"
      "type Query { a(v: [Int]): Int b(w: In): Int c(c: Color): Int d(m: [[Int!]]!): Int e(id: ID): Int }");
  struct Case {
    const char* query;
    const char* variables;
    const char* message;
  };
  const Case cases[] = {
      {"query ($v: [Int]) { a(v: $v) }", R"({"v":[1,"x"]})",
       R"(Variable "$v" got invalid value "x" at "v[1]"; Int cannot represent non-integer value: "x")"},
      {"query ($w: In) { b(w: $w) }", R"({"w":{"x":[1,2,[3]],"y":"s"}})",
       R"(Variable "$w" got invalid value [3] at "w.x[2]"; Int cannot represent non-integer value: [3])"},
      {"query ($w: In) { b(w: $w) }", R"({"w":{"x":[1]}})",
       R"(Variable "$w" got invalid value { x: [1] }; Field "y" of required type "String!" was not provided.)"},
      {"query ($w: In) { b(w: $w) }", R"({"w":{"y":"s","quux":1}})",
       R"(Variable "$w" got invalid value { y: "s", quux: 1 }; Field "quux" is not defined by type "In".)"},
      {"query ($w: In) { b(w: $w) }", R"({"w":{"y":"s","n":{"z":"no"}}})",
       R"(Variable "$w" got invalid value "no" at "w.n.z"; Float cannot represent non numeric value: "no")"},
      {"query ($w: In) { b(w: $w) }", R"({"w":{"y":"s","e":"BLUE"}})",
       R"(Variable "$w" got invalid value "BLUE" at "w.e"; Value "BLUE" does not exist in "Color" enum.)"},
      {"query ($m: [[Int!]]!) { d(m: $m) }", R"({"m":[[1,null]]})",
       R"(Variable "$m" got invalid value null at "m[0][1]"; Expected non-nullable type "Int!" not to be null.)"},
      {"query ($w: In) { b(w: $w) }", R"({"w":"str"})",
       R"(Variable "$w" got invalid value "str"; Expected type "In" to be an object.)"},
      {"query ($c: Color) { c(c: $c) }", R"({"c":1})",
       R"(Variable "$c" got invalid value 1; Enum "Color" cannot represent non-string value: 1.)"},
      {"query ($id: ID) { e(id: $id) }", R"({"id":1.5})",
       R"(Variable "$id" got invalid value 1.5; ID cannot represent value: 1.5)"},
      {"query ($v: [Int]) { a(v: $v) }", R"({"v":[1,2,3,4,5,6,7,8,9,10,11,12.5]})",
       R"(Variable "$v" got invalid value 12.5 at "v[11]"; Int cannot represent non-integer value: 12.5)"},
      // Names near a misspelt one are offered, as graphql-js offers them.
      {"query ($w: In) { b(w: $w) }", R"({"w":{"y":"s","yy":1}})",
       R"(Variable "$w" got invalid value { y: "s", yy: 1 }; Field "yy" is not defined by type "In". Did you mean "y"?)"},
      {"query ($c: Color) { c(c: $c) }", R"({"c":"red"})",
       R"(Variable "$c" got invalid value "red"; Value "red" does not exist in "Color" enum. Did you mean the enum value "RED"?)"},
      {"query ($c: Color) { c(c: $c) }", R"({"c":"GREN"})",
       R"(Variable "$c" got invalid value "GREN"; Value "GREN" does not exist in "Color" enum. Did you mean the enum value "GREEN" or "RED"?)"},
  };
  for (const Case& c : cases) {
    Response r = Run(c.query, "{}", Context(), c.variables);
    ASSERT_EQ(r.errors.size(), 1u) << c.variables << ": " << r.to_json();
    EXPECT_EQ(r.errors[0].message, c.message) << c.variables;
    EXPECT_FALSE(r.has_data) << c.variables;
  }
}

}  // namespace
}  // namespace cutoff::graphql
