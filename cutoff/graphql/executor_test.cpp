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
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::graphql {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::Sleep;

class Exec : public ::testing::Test {
 protected:
  void Build(const char* sdl) {
    SchemaResult r = Schema::from_sdl(sdl);
    ASSERT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0].message);
    schema_ = std::move(r.schema);
  }

  // Runs `query` against `root` (a JSON fixture read by the default resolver).
  Response Run(const std::string& query, const std::string& root_json = "{}", Context ctx = Context(),
               const std::string& variables = "{}", ExecutionOptions options = {}) {
    ParseResult parsed = parse(query);
    EXPECT_TRUE(parsed.ok()) << (parsed.error ? parsed.error->message : "");
    root_ = boost::json::parse(root_json);
    // The root value: a JSON object whose members the root fields read.
    for (const char* t : {"Query", "Mutation"})
      if (const Type* type = schema_->find_type(t))
        for (const Field& f : type->fields)
          if (!f.sync && !f.async)
            schema_->resolve(t, f.name, [this, name = f.name](FieldContext&) {
              auto it = root_.as_object().find(name);
              return it == root_.as_object().end() ? Data() : Data::json(&it->value());
            });
    Request req;
    req.document = parsed.document.get();
    req.variables = boost::json::parse(variables).as_object();
    doc_ = std::move(parsed.document);
    return cutoff::test_support::RunSync(
        [&]() -> asio::awaitable<Response> { co_return co_await execute(*schema_, req, ctx, options); });
  }

  std::string Json(const std::string& query, const std::string& root_json = "{}", Context ctx = Context()) {
    return Run(query, root_json, ctx).to_json();
  }

  std::unique_ptr<Schema> schema_;
  std::unique_ptr<Document> doc_;
  boost::json::value root_;
};

TEST_F(Exec, ResolvesFromJsonInSelectionOrder) {
  Build(
      "type Query { item: Item items: [Item!]! } type Item { id: ID! name: String qty: Int price: Float ok: Boolean }");
  EXPECT_EQ(
      Json("{ items { name id } item { qty price ok alias: id } }",
           R"({"item": {"id": 7, "qty": 3, "price": 2.5, "ok": true},
                     "items": [{"id": "a", "name": "A"}, {"id": "b", "name": null}]})"),
      R"({"data":{"items":[{"name":"A","id":"a"},{"name":null,"id":"b"}],"item":{"qty":3,"price":2.5,"ok":true,"alias":"7"}}})");
}

TEST_F(Exec, NullInNonNullFieldBubblesToNearestNullableAncestor) {
  Build("type Query { a: A } type A { b: B! } type B { c: Int! d: Int }");
  Response r = Run("{ a { b { c d } } }", R"({"a": {"b": {"c": null, "d": 1}}})");
  EXPECT_EQ(r.data, R"({"a":null})");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "Cannot return null for non-nullable field B.c.");
  EXPECT_EQ(
      r.errors[0].to_json(),
      R"({"message":"Cannot return null for non-nullable field B.c.","locations":[{"line":1,"column":11}],"path":["a","b","c"]})");
}

TEST_F(Exec, NonNullRootFieldNullsData) {
  Build("type Query { a: Int! b: Int }");
  Response r = Run("{ b a }", R"({"b": 1})");
  EXPECT_EQ(r.to_json().find("\"data\":null") != std::string::npos, true) << r.to_json();
}

TEST_F(Exec, ListItemErrors) {
  Build("type Query { xs: [Int!] ys: [Int]! }");
  Response r = Run("{ xs ys }", R"({"xs": [1, null, 3], "ys": [1, null, "x"]})");
  EXPECT_EQ(r.data, R"({"xs":null,"ys":[1,null,null]})");
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0].to_json().find("\"path\":[\"xs\",1]") != std::string::npos, true);
  EXPECT_EQ(r.errors[1].message, "Int cannot represent non-integer value: \"x\"");
}

TEST_F(Exec, ResolverErrorsCarryCodes) {
  Build("type Query { a: Int b: Int c: String }");
  schema_->resolve("Query", "a", [](FieldContext&) -> Data { throw FieldError("nope", "NOT_ALLOWED"); });
  schema_->resolve("Query", "b", [](FieldContext&) -> Data { throw std::runtime_error("boom"); });
  Response r = Run("{ a b c }", R"({"c": "ok"})");
  EXPECT_EQ(r.data, R"({"a":null,"b":null,"c":"ok"})");
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0].code, "NOT_ALLOWED");
  EXPECT_EQ(r.errors[1].message, "Internal server error");  // masked (ErrorMasking)
  EXPECT_EQ(r.errors[1].code, "INTERNAL_SERVER_ERROR");
}

TEST_F(Exec, ArgumentsVariablesAndDirectives) {
  Build("type Query { echo(x: Int = 5, s: [String], e: Mode): String } enum Mode { A B }");
  schema_->resolve("Query", "echo", [](FieldContext& f) {
    std::string out;
    for (const auto& kv : f.args) out += std::string(kv.key()) + "=" + boost::json::serialize(kv.value()) + ";";
    return Data::from(out);
  });
  Response r = Run("query($v: Int, $t: Boolean!) { a: echo b: echo(x: $v, s: \"one\", e: B) c: echo @skip(if: $t) }",
                   "{}", Context(), R"({"v": 9, "t": true})");
  EXPECT_EQ(r.data, R"({"a":"x=5;","b":"x=9;s=[\"one\"];e=\"B\";"})");
}

TEST_F(Exec, BadVariablesAreARequestError) {
  Build("type Query { a(x: Int!): Int }");
  Response r = Run("query($x: Int!) { a(x: $x) }", "{}", Context(), R"({"x": "nope"})");
  EXPECT_FALSE(r.has_data);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.to_json().find("\"data\""), std::string::npos);
  r = Run("query($x: Int!) { a(x: $x) }");
  EXPECT_EQ(r.errors[0].message, "Variable \"$x\" of required type \"Int!\" was not provided.");
}

TEST_F(Exec, AbstractTypesFromTypename) {
  Build("type Query { things: [Thing] } union Thing = A | B type A { a: Int } type B { b: Int }");
  EXPECT_EQ(Json("{ things { __typename ... on A { a } ... on B { b } } }",
                 R"({"things": [{"__typename": "A", "a": 1}, {"__typename": "B", "b": 2}]})"),
            R"({"data":{"things":[{"__typename":"A","a":1},{"__typename":"B","b":2}]}})");
}

TEST_F(Exec, Introspection) {
  Build(
      "\"Root\" type Query { w: Warehouse } type Warehouse { id: ID! bins(first: Int = 10): [Bin!]! } type Bin { id: "
      "ID }");
  Response r = Run(R"({ __schema { queryType { name } } __type(name: "Warehouse") { kind name
      fields { name args { name defaultValue type { name } } type { kind name ofType { kind ofType { kind ofType { name } } } } } } })");
  EXPECT_TRUE(r.errors.empty()) << r.to_json();
  EXPECT_EQ(
      r.data,
      R"({"__schema":{"queryType":{"name":"Query"}},"__type":{"kind":"OBJECT","name":"Warehouse","fields":[)"
      R"({"name":"id","args":[],"type":{"kind":"NON_NULL","name":null,"ofType":{"kind":"SCALAR","ofType":null}}},)"
      R"({"name":"bins","args":[{"name":"first","defaultValue":"10","type":{"name":"Int"}}],)"
      R"("type":{"kind":"NON_NULL","name":null,"ofType":{"kind":"LIST","ofType":{"kind":"NON_NULL","ofType":{"name":"Bin"}}}}}]}})");
}

TEST_F(Exec, IntrospectionShowsBudgets) {
  Build(
      R"("Stock" schema { query: Query } type Query { w: W } type W { "Slow." value: Float @budget(ms: 120) id: ID })");
  schema_->declare_operation_budget(std::chrono::milliseconds(2000));
  Response r = Run(R"({ __schema { description } __type(name: "W") { fields { name description } } })");
  EXPECT_TRUE(r.errors.empty()) << r.to_json();
  EXPECT_EQ(
      r.data,
      R"({"__schema":{"description":"Stock\n\nTime budget: each operation runs under at most 2000 ms."},)"
      R"("__type":{"fields":[{"name":"value","description":"Slow.\n\nTime budget: this field is cut after 120 ms."},)"
      R"({"name":"id","description":null}]}})");
}

// ---- deadlines ----------------------------------------------------------------------------------

// Asynchronous fields start after the synchronous part of the operation is written: a
// parent they read after suspending (here a JSON item of a list another resolver owns) must
// still be there.
TEST_F(Exec, AsynchronousFieldsReadTheirParentAfterSuspending) {
  Build("type Query { items: [Item!]! } type Item { name: String! label: String! inner: [Item!] }");
  schema_->resolve("Query", "items", [](FieldContext&) {
    return Data::json_value(boost::json::parse(R"([{"name": "a", "inner": [{"name": "a1"}]}, {"name": "b"}])"));
  });
  schema_->resolve_async("Item", "label", [](FieldContext& f) -> asio::awaitable<Data> {
    co_await Sleep(5ms);
    co_return Data::from("label of " + std::string(f.parent.if_json()->as_object().at("name").as_string()));
  });
  EXPECT_EQ(Json("{ items { label inner { label } } }"),
            R"({"data":{"items":[{"label":"label of a","inner":[{"label":"label of a1"}]},)"
            R"({"label":"label of b","inner":null}]}})");
}

// A non-null asynchronous field that fails after the text around it was written nulls the
// nearest nullable value around it, and only that: siblings written before and after it keep
// their values.
TEST_F(Exec, LateNullsReplaceOnlyTheNearestNullableValue) {
  Build(R"(type Query { boxes: [Box] }
           type Box { id: Int! item: Item! after: Int }
           type Item { ok: Int! late: Int! })");
  schema_->resolve("Query", "boxes", [](FieldContext&) {
    Data::List boxes;
    for (int i = 0; i < 3; ++i) boxes.push_back(Data::from(i));
    return Data::list(std::move(boxes));
  });
  schema_->resolve("Box", "id", [](FieldContext& f) { return f.parent; });
  schema_->resolve("Box", "item", [](FieldContext& f) { return f.parent; });
  schema_->resolve("Box", "after", [](FieldContext&) { return Data::from(9); });
  schema_->resolve("Item", "ok", [](FieldContext&) { return Data::from(1); });
  schema_->resolve_async("Item", "late", [](FieldContext& f) -> asio::awaitable<Data> {
    const std::int64_t i = std::get<std::int64_t>(f.parent.storage());
    co_await Sleep(std::chrono::milliseconds(5 * (3 - i)));
    if (i == 1) throw FieldError("late failed");
    co_return Data::from(i * 10);
  });
  Response r = Run("{ boxes { id item { ok late } after } }");
  EXPECT_EQ(r.data, R"({"boxes":[{"id":0,"item":{"ok":1,"late":0},"after":9},null,)"
                    R"({"id":2,"item":{"ok":1,"late":20},"after":9}]})");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].to_json(),
            R"({"message":"late failed","locations":[{"line":1,"column":24}],"path":["boxes",1,"item","late"]})");
}

// On a strand of a two-thread pool (the documented way to run an execution on more than one
// thread) asynchronous fields still run concurrently and complete in place.
TEST_F(Exec, RunsOnAStrandOfAThreadPool) {
  Build("type Query { items(n: Int!): [Item!]! } type Item { n: Int! slow: Int! }");
  schema_->resolve("Query", "items", [](FieldContext& f) {
    Data::List items;
    for (std::int64_t i = 0; i < f.arg("n")->as_int64(); ++i) items.push_back(Data::from(i));
    return Data::list(std::move(items));
  });
  schema_->resolve("Item", "n", [](FieldContext& f) { return f.parent; });
  schema_->resolve_async("Item", "slow", [](FieldContext& f) -> asio::awaitable<Data> {
    const std::int64_t n = std::get<std::int64_t>(f.parent.storage());
    co_await Sleep(100ms);
    co_return Data::from(n * 2);
  });
  ParseResult parsed = parse("{ items(n: 20) { n slow } }");
  ASSERT_TRUE(parsed.ok());
  Request req;
  req.document = parsed.document.get();
  asio::thread_pool pool(2);
  // Held until the pool has joined, so that the executor's shared state is freed here: the
  // reference count Asio frees it by (a release decrement and an acquire fence) is one
  // ThreadSanitizer cannot follow.
  const asio::any_io_executor strand = asio::make_strand(pool);
  const auto start = std::chrono::steady_clock::now();
  std::future<Response> done = asio::co_spawn(strand, execute(*schema_, req, Context()), asio::use_future);
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready);
  Response r = done.get();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);  // 20 × 100 ms would be 2 s
  std::string expected = R"({"items":[)";
  for (int i = 0; i < 20; ++i)
    expected +=
        (i ? "," : "") + std::string(R"({"n":)") + std::to_string(i) + R"(,"slow":)" + std::to_string(2 * i) + "}";
  expected += "]}";
  EXPECT_EQ(r.data, expected);
  EXPECT_TRUE(r.errors.empty());
  pool.join();
}

// A type resolver or a custom scalar's serialize that throws while an asynchronous field's
// value completes fails that field, as a resolver's error does; the execution ends.
TEST_F(Exec, CallbacksThatThrowWhileCompletingFailTheirField) {
  Build("scalar Money type Query { a: U m: Money } union U = X type X { n: Int }");
  schema_->resolve_async("Query", "a", [](FieldContext&) -> asio::awaitable<Data> {
    co_await Sleep(5ms);
    co_return Data::from("x");
  });
  schema_->type_resolver("U", [](const Data&, const Schema&) -> const Type* { throw std::runtime_error("no type"); });
  schema_->resolve("Query", "m", [](FieldContext&) { return Data::from(3); });
  schema_->scalar("Money", ScalarCodec{[](const Data&) -> std::optional<boost::json::value> {
                                         throw FieldError("cannot show money", "BAD_MONEY");
                                       },
                                       nullptr});
  Response r = Run("{ a { ... on X { n } } m }");
  EXPECT_EQ(r.data, R"({"a":null,"m":null})");
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(
      r.errors[0].to_json(),
      R"({"message":"cannot show money","locations":[{"line":1,"column":24}],"path":["m"],"extensions":{"code":"BAD_MONEY"}})");
  EXPECT_EQ(r.errors[1].message, "Internal server error");
}

// A synchronous resolver may resume a suspended asynchronous one inline (here by dispatching
// its completion handler): the resumed field's value is written after the walk that was
// running, never into the middle of it.
TEST_F(Exec, AResolverResumedInsideAnotherFieldsCompletionWritesAfterIt) {
  Build("type Query { waiter: Int later: Later } type Later { opener: Int name: String }");
  std::function<void()> open;  // completes the waiter's wait
  schema_->resolve_async("Query", "waiter", [&open](FieldContext&) -> asio::awaitable<Data> {
    auto wait = [&open](auto handler) {
      auto h = std::make_shared<decltype(handler)>(std::move(handler));
      open = [h] { asio::dispatch(std::move(*h)); };
    };
    co_await asio::async_initiate<const asio::use_awaitable_t<>&, void()>(wait, asio::use_awaitable);
    co_return Data::from(1);
  });
  schema_->resolve_async("Query", "later", [](FieldContext&) -> asio::awaitable<Data> {
    co_return Data::json_value(boost::json::parse(R"({"name": "n"})"));
  });
  schema_->resolve("Later", "opener", [&open](FieldContext&) {
    if (open) std::exchange(open, nullptr)();  // runs the waiter on, inline
    return Data::from(2);
  });
  EXPECT_EQ(Json("{ waiter later { opener name } }"), R"({"data":{"waiter":1,"later":{"opener":2,"name":"n"}}})");
}

// The rvalue form writes the envelope into `data`'s buffer; both forms give the same text.
TEST(ResponseJson, BothFormsWriteTheSameText) {
  Response with_errors;
  with_errors.has_data = true;
  with_errors.data = R"({"a":null})";
  with_errors.errors.push_back({"boom", {}, {std::string("a")}, "X"});
  Response data_only;
  data_only.has_data = true;
  data_only.data = R"({"a":1})";
  Response nulled;
  nulled.has_data = true;  // `data` nulled: the text is empty
  Response no_data;
  no_data.errors.push_back({"Must provide document.", {}, {}, {}});
  for (const Response& r : {with_errors, data_only, nulled, no_data}) {
    const std::string copied = r.to_json();
    EXPECT_EQ(Response(r).to_json(), copied);
    EXPECT_EQ(copied, std::move(Response(r)).to_json());
  }
  EXPECT_EQ(std::move(data_only).to_json(), R"({"data":{"a":1}})");
  EXPECT_EQ(std::move(with_errors).to_json(),
            R"({"errors":[{"message":"boom","path":["a"],"extensions":{"code":"X"}}],"data":{"a":null}})");
  EXPECT_EQ(std::move(nulled).to_json(), R"({"data":null})");
  EXPECT_EQ(std::move(no_data).to_json(), R"({"errors":[{"message":"Must provide document."}]})");
}

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
