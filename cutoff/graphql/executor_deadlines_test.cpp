// The executor under deadlines: cut fields, @budget caps on every way a value is produced, the
// recorder of stopped fields.
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

class Deadlines : public Exec {
 protected:
  void SetUp() override {
    Build(R"(type Query { fast: Int slow: Int slowNonNull: Int! capped: Int @budget(ms: 50) obj: Obj
                          list(n: Int!): [Obj] }
             type Obj { fast: Int slow: Int child: Obj }
             type Mutation { step(n: Int!): Int })");
    auto delayed = [](std::chrono::milliseconds d, int v) {
      return [d, v](FieldContext&) -> asio::awaitable<Data> {
        co_await Sleep(d);
        co_return Data::from(v);
      };
    };
    schema_->resolve_async("Query", "fast", delayed(10ms, 1));
    schema_->resolve_async("Query", "slow", delayed(2000ms, 2));
    schema_->resolve_async("Query", "slowNonNull", delayed(2000ms, 3));
    schema_->resolve_async("Query", "capped", delayed(300ms, 4));
    schema_->resolve_async("Query", "obj", [](FieldContext&) -> asio::awaitable<Data> {
      co_await Sleep(10ms);
      co_return Data::from(std::string("obj"));
    });
    schema_->resolve("Query", "list", [](FieldContext& f) {
      Data::List items(static_cast<std::size_t>(f.arg("n")->as_int64()), Data::from(std::string("o")));
      return Data::list(std::move(items));
    });
    schema_->resolve_async("Obj", "fast", delayed(10ms, 5));
    schema_->resolve_async("Obj", "slow", delayed(2000ms, 6));
    schema_->resolve("Obj", "child", [](FieldContext&) { return Data::from(std::string("child")); });
  }
};

TEST_F(Deadlines, SiblingsRunConcurrently) {
  schema_->resolve_async("Query", "slow", [](FieldContext&) -> asio::awaitable<Data> {
    co_await Sleep(150ms);
    co_return Data::from(2);
  });
  const auto start = std::chrono::steady_clock::now();
  Response r = Run("{ a: slow b: slow c: slow }");
  EXPECT_EQ(r.data, R"({"a":2,"b":2,"c":2})");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 400ms);  // not 450 ms
}

TEST_F(Deadlines, CutFieldsBecomeNullWithDeadlineErrorsAndSiblingsKeepValues) {
  const auto start = std::chrono::steady_clock::now();
  Response r = Run("{ fast slow obj { fast slow } }", "{}", Context().with_timeout(150ms));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.data, R"({"fast":1,"slow":null,"obj":{"fast":5,"slow":null}})");
  ASSERT_EQ(r.errors.size(), 2u) << r.to_json();
  EXPECT_EQ(r.errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_EQ(r.errors[0].to_json().find("\"path\":[\"slow\"]") != std::string::npos, true);
  EXPECT_EQ(r.errors[1].to_json().find("\"path\":[\"obj\",\"slow\"]") != std::string::npos, true);
  EXPECT_LT(took, 600ms);  // the 2 s resolvers were cancelled, not awaited
}

TEST_F(Deadlines, CutNonNullFieldBubbles) {
  Response r = Run("{ fast slowNonNull }", "{}", Context().with_timeout(100ms));
  EXPECT_EQ(r.to_json().find("\"data\":null") != std::string::npos, true) << r.to_json();
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "DEADLINE_EXCEEDED");
}

TEST_F(Deadlines, FieldsNotStartedBeforeTheDeadlineNeverStart) {
  int started = 0;
  schema_->resolve("Obj", "child", [&](FieldContext&) {
    ++started;
    return Data::from(std::string("child"));
  });
  schema_->resolve_async("Query", "obj", [](FieldContext&) -> asio::awaitable<Data> {
    std::this_thread::sleep_for(120ms);  // burns the budget without yielding
    co_return Data::from(std::string("obj"));
  });
  Response r = Run("{ obj { child { fast } } }", "{}", Context().with_timeout(50ms));
  EXPECT_EQ(started, 0);
  EXPECT_EQ(r.data, R"({"obj":{"child":null}})");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "DEADLINE_EXCEEDED");
}

TEST_F(Deadlines, BudgetCapCutsOnlyThatField) {
  const auto start = std::chrono::steady_clock::now();
  Response r = Run("{ capped fast }", "{}", Context().with_timeout(5s));
  EXPECT_EQ(r.data, R"({"capped":null,"fast":1})");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 250ms);
}

TEST_F(Deadlines, CancellationGivesCancelled) {
  auto [ctx, source] = Context().with_cancel();
  std::thread canceller([source = source] {
    std::this_thread::sleep_for(60ms);
    source.request_stop(StopReason::cancelled);
  });
  Response r = Run("{ fast slow }", "{}", ctx);
  canceller.join();
  EXPECT_EQ(r.data, R"({"fast":1,"slow":null})");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "CANCELLED");
}

TEST_F(Deadlines, ErrorsForACutLongListStayBounded) {
  Response r = Run("{ list(n: 10000) { slow } }", "{}", Context().with_timeout(100ms));
  // 10,000 cut fields: the first 50 are listed, the rest summarised in one error.
  ASSERT_EQ(r.errors.size(), 51u);
  EXPECT_EQ(r.errors.back().message, "... and 9950 more fields were stopped (deadline_exceeded)");
  EXPECT_EQ(r.errors.back().code, "DEADLINE_EXCEEDED");
  EXPECT_EQ(r.data.substr(0, 30), R"({"list":[{"slow":null},{"slow")");
}

TEST_F(Deadlines, WholeResponsePolicy) {
  ExecutionOptions whole;
  whole.policy = StopPolicy::whole_response;
  Response r = Run("{ fast slow }", "{}", Context().with_timeout(100ms), "{}", whole);
  EXPECT_FALSE(r.has_data);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_EQ(r.to_json().find("\"data\""), std::string::npos);
}

TEST_F(Deadlines, MutationFieldsRunSeriallyAndACutLeavesLaterOnesUnstarted) {
  std::vector<int> applied;
  schema_->resolve_async("Mutation", "step", [&](FieldContext& f) -> asio::awaitable<Data> {
    const int n = static_cast<int>(f.arg("n")->as_int64());
    co_await Sleep(60ms);
    applied.push_back(n);
    co_return Data::from(n);
  });
  Response r =
      Run("mutation { a: step(n: 1) b: step(n: 2) c: step(n: 3) d: step(n: 4) }", "{}", Context().with_timeout(150ms));
  EXPECT_EQ(applied, (std::vector<int>{1, 2}));  // serial: 60 + 60 < 150 < 180
  EXPECT_EQ(r.data, R"({"a":1,"b":2,"c":null,"d":null})");
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_EQ(r.errors[1].code, "DEADLINE_EXCEEDED");
}

// @budget on every way a value is produced: each test's value would take 2 s or more; the
// cap is 50 ms, so an answer well under a second proves the cap cut it.
class Budgets : public Exec {
 protected:
  void SetUp() override {
    Build(R"(type Query { asyncCapped: Int @budget(ms: 50) pendingCapped: Int @budget(ms: 50)
                          itemsCapped: [Int] @budget(ms: 50) syncCapped: Obj @budget(ms: 50)
                          uncappedPending: Int fast: Int }
             type Obj { slow: Int pending: Int remainingMs: Int })");
    schema_->resolve_async("Query", "asyncCapped", [](FieldContext&) -> asio::awaitable<Data> {
      co_await Sleep(2s);
      co_return Data::from(1);
    });
    schema_->resolve("Query", "pendingCapped", [](FieldContext&) { return Slow(2s, 2); });
    schema_->resolve("Query", "itemsCapped", [](FieldContext&) {
      return Data::list({Data::from(1), Slow(5ms, 2), Slow(2s, 3), Slow(10ms, 4)});
    });
    schema_->resolve("Query", "uncappedPending", [](FieldContext&) { return Slow(20ms, 5); });
    schema_->resolve("Query", "syncCapped", [](FieldContext& f) {
      // The resolver itself runs under the cap.
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(f.ctx.remaining());
      return Data::json_value(boost::json::object{{"remainingMs", left.count()}});
    });
    schema_->resolve("Query", "fast", [](FieldContext&) { return Data::from(7); });
    schema_->resolve_async("Obj", "slow", [](FieldContext&) -> asio::awaitable<Data> {
      co_await Sleep(2s);
      co_return Data::from(6);
    });
    schema_->resolve("Obj", "pending", [](FieldContext&) { return Slow(2s, 7); });
  }

  static Data Slow(std::chrono::milliseconds after, int v) {
    return Data::pending([after, v]() -> asio::awaitable<Data> {
      co_await Sleep(after);
      co_return Data::from(v);
    });
  }

  // Runs `query` with a generous operation deadline: only the caps can explain a fast answer.
  Response Timed(const std::string& query, std::chrono::steady_clock::duration* took) {
    const auto start = std::chrono::steady_clock::now();
    Response r = Run(query, "{}", Context().with_timeout(10s));
    *took = std::chrono::steady_clock::now() - start;
    return r;
  }
};

TEST_F(Budgets, CapAnAsynchronousResolver) {
  std::chrono::steady_clock::duration took;
  Response r = Timed("{ asyncCapped fast }", &took);
  EXPECT_EQ(r.data, R"({"asyncCapped":null,"fast":7})");
  ASSERT_EQ(r.errors.size(), 1u) << r.to_json();
  EXPECT_EQ(r.errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_LT(took, cutoff::test_support::Scaled(1000ms));
}

TEST_F(Budgets, CapAPendingValue) {
  std::chrono::steady_clock::duration took;
  Response r = Timed("{ pendingCapped uncappedPending fast }", &took);
  EXPECT_EQ(r.data, R"({"pendingCapped":null,"uncappedPending":5,"fast":7})");
  ASSERT_EQ(r.errors.size(), 1u) << r.to_json();
  EXPECT_EQ(r.errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_EQ(r.errors[0].path, (std::vector<PathSegment>{"pendingCapped"}));
  EXPECT_LT(took, cutoff::test_support::Scaled(1000ms));
}

TEST_F(Budgets, CapPendingListItemsEachAtItsPath) {
  std::chrono::steady_clock::duration took;
  Response r = Timed("{ itemsCapped }", &took);
  EXPECT_EQ(r.data, R"({"itemsCapped":[1,2,null,4]})");
  ASSERT_EQ(r.errors.size(), 1u) << r.to_json();
  EXPECT_EQ(r.errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_EQ(r.errors[0].path, (std::vector<PathSegment>{"itemsCapped", std::int64_t{2}}));
  EXPECT_LT(took, cutoff::test_support::Scaled(1000ms));
}

TEST_F(Budgets, CapASynchronousResolverAndEverythingBelowIt) {
  std::chrono::steady_clock::duration took;
  Response r = Timed("{ syncCapped { remainingMs slow pending } fast }", &took);
  ASSERT_EQ(r.errors.size(), 2u) << r.to_json();
  EXPECT_EQ(r.errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_EQ(r.errors[1].code, "DEADLINE_EXCEEDED");
  EXPECT_LT(took, cutoff::test_support::Scaled(1000ms));
  boost::json::value data = boost::json::parse(r.data);
  EXPECT_LE(data.at("syncCapped").at("remainingMs").as_int64(), 50);
  EXPECT_TRUE(data.at("syncCapped").at("slow").is_null());
  EXPECT_TRUE(data.at("syncCapped").at("pending").is_null());
  EXPECT_EQ(data.at("fast").as_int64(), 7);
}

// The fixture engine (`cutoff graphql exec/serve`) produces delays as pending values; the
// budget that introspection advertises is the one that cuts them.
TEST_F(Exec, FixtureDelaysAreCutByTheBudgetIntrospectionShows) {
  Build("type Query { slow: Int @budget(ms: 100) other: Int }");
  install_fixture_resolvers(*schema_);
  Response shown = Run(R"({ __type(name: "Query") { fields { name description } } })");
  EXPECT_NE(shown.data.find("this field is cut after 100 ms."), std::string::npos) << shown.data;
  EXPECT_EQ(schema_->query_type()->find_field("slow")->budget, std::chrono::milliseconds(100));

  ParseResult parsed = parse("{ slow other }");
  boost::json::value fixture = boost::json::parse(R"({"slow": {"$delay_ms": 2000, "$value": 1}, "other": 2})");
  Request req;
  req.document = parsed.document.get();
  req.root_value = Data::json(&fixture);
  const auto start = std::chrono::steady_clock::now();
  Response r = cutoff::test_support::RunSync(
      [&]() -> asio::awaitable<Response> { co_return co_await execute(*schema_, req, Context()); });
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.data, R"({"slow":null,"other":2})");
  ASSERT_EQ(r.errors.size(), 1u) << r.to_json();
  EXPECT_EQ(r.errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_GE(took, 90ms);
  EXPECT_LT(took, cutoff::test_support::Scaled(1000ms));
}


class Recorder : public ExecutionRecorder {
 public:
  void field_stopped(std::string_view operation, std::string_view path, StopReason reason,
                     Duration overshoot) override {
    entries.push_back({std::string(operation), std::string(path), reason, overshoot});
  }
  struct Entry {
    std::string operation, path;
    StopReason reason;
    Duration overshoot;
  };
  std::vector<Entry> entries;
};

TEST_F(Deadlines, RecorderSeesCutFieldsAndOvershoot) {
  Recorder rec;
  ExecutionOptions opts;
  opts.recorder = &rec;
  Run("query Stock { fast slow obj { slow } }", "{}", Context().with_timeout(100ms), "{}", opts);
  ASSERT_EQ(rec.entries.size(), 2u);
  EXPECT_EQ(rec.entries[0].operation, "Stock");
  EXPECT_EQ(rec.entries[0].reason, StopReason::deadline_exceeded);
  EXPECT_LT(rec.entries[0].overshoot, 100ms);
  std::vector<std::string> paths{rec.entries[0].path, rec.entries[1].path};
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(paths, (std::vector<std::string>{"obj.slow", "slow"}));
}

}  // namespace
}  // namespace cutoff::graphql
