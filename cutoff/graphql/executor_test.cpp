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
#include <cmath>
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

// Synchronous resolvers of built-in scalars have a way of their own through the executor
// (FieldGroup::Kind::sync_leaf). A value that way does not write itself (one to coerce, a
// JSON value, a pending one, one the type cannot hold, null in a non-null field) still comes
// out as graphql-js gives it.
TEST_F(Exec, SynchronousLeavesGiveWhatGraphqlJsGivesForEveryKindOfValue) {
  Build(
      "type Query { s: String id: ID i: Int f: Float b: Boolean j: String p: String big: Int nan: Float "
      "b1: Boolean notBool: Boolean req: String! thrown: Int }");
  schema_->resolve("Query", "s", [](FieldContext&) { return Data::from(7); });          // coerced: "7"
  schema_->resolve("Query", "id", [](FieldContext&) { return Data::from(42); });        // "42"
  schema_->resolve("Query", "i", [](FieldContext&) { return Data::from(3.0); });        // 3
  schema_->resolve("Query", "f", [](FieldContext&) { return Data::from(2); });          // 2
  schema_->resolve("Query", "b", [](FieldContext&) { return Data::from(true); });
  static const boost::json::value text = "from json";
  schema_->resolve("Query", "j", [](FieldContext&) { return Data::json(&text); });
  schema_->resolve("Query", "p", [](FieldContext&) {
    return Data::pending([]() -> asio::awaitable<Data> { co_return Data::borrow("later"); });
  });
  schema_->resolve("Query", "big", [](FieldContext&) { return Data::from(std::int64_t{1} << 40); });
  schema_->resolve("Query", "nan", [](FieldContext&) { return Data::from(std::nan("")); });
  schema_->resolve("Query", "b1", [](FieldContext&) { return Data::from(1); });  // true, as graphql-js
  schema_->resolve("Query", "notBool", [](FieldContext&) { return Data::borrow("x"); });
  schema_->resolve("Query", "req", [](FieldContext&) { return Data(); });
  schema_->resolve("Query", "thrown", [](FieldContext&) -> Data { throw FieldError("no", "NO"); });
  Response r = Run("{ s id i f b j p big nan b1 notBool thrown }", "{}");
  EXPECT_EQ(r.data,
            R"({"s":"7","id":"42","i":3,"f":2,"b":true,"j":"from json","p":"later","big":null,"nan":null,)"
            R"("b1":true,"notBool":null,"thrown":null})");
  ASSERT_EQ(r.errors.size(), 4u);
  EXPECT_EQ(r.errors[0].message, "Int cannot represent non 32-bit signed integer value: 1099511627776");
  EXPECT_EQ(r.errors[1].message, "Float cannot represent non numeric value: NaN");
  EXPECT_EQ(r.errors[2].message, "Boolean cannot represent a non boolean value: \"x\"");
  EXPECT_EQ(r.errors[3].code, "NO");
  Response required = Run("{ s req }", "{}");
  EXPECT_EQ(required.data, "null");
  ASSERT_EQ(required.errors.size(), 1u);
  EXPECT_EQ(required.errors[0].message, "Cannot return null for non-nullable field Query.req.");
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

}  // namespace
}  // namespace cutoff::graphql
