#include "cutoff/graphql/operation_limits.hpp"

#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/parser.hpp"
#include "cutoff/graphql/validation.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::graphql {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;

std::unique_ptr<Schema> Build(const std::string& sdl) {
  SchemaResult r = Schema::from_sdl(sdl);
  EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0].message);
  return std::move(r.schema);
}

struct Measured {
  std::unique_ptr<Document> doc;
  OperationMeasure measure;
};

Measured MeasureOf(const Schema& schema, const std::string& query, const std::string& variables = "{}",
                   OperationLimits limits = {}) {
  ParseResult parsed = parse(query);
  EXPECT_TRUE(parsed.ok()) << (parsed.error ? parsed.error->message : "");
  Measured m;
  m.doc = std::move(parsed.document);
  EXPECT_TRUE(validate(schema, *m.doc).empty()) << validate(schema, *m.doc)[0].message;
  const json::object vars = json::parse(variables).as_object();
  m.measure = measure_operation(schema, *m.doc, m.doc->operations.at(0), vars, limits);
  return m;
}

constexpr const char* kShop = R"(
  type Query {
    shop: Shop
    shops: [Shop!]!
    products(first: Int, last: Int): [Product!]! @listSize(slicingArguments: ["first", "last"])
    top(limit: Int = 5): [Product!]! @listSize(slicingArguments: ["limit"], requireOneSlicingArgument: false)
    search(first: Int!): ProductConnection! @listSize(slicingArguments: ["first"], sizedFields: ["edges"])
    expensive(weight: Int @cost(weight: "7")): Int @cost(weight: 40)
  }
  type Shop { name: String products: [Product!]! @listSize(assumedSize: 3) owner: Person }
  type Person @cost(weight: 5) { name: String }
  type Product { id: ID! name: String }
  type ProductConnection { edges: [Edge!]! total: Int }
  type Edge { node: Product! }
)";

TEST(OperationLimits, DepthCountsFieldsThroughFragments) {
  auto schema = Build(kShop);
  EXPECT_EQ(MeasureOf(*schema, "{ shop { name } }").measure.depth, 2u);
  EXPECT_EQ(MeasureOf(*schema, "{ shop { ...S } } fragment S on Shop { products { ...P } } fragment P on Product { id }")
                .measure.depth,
            3u);
  EXPECT_EQ(MeasureOf(*schema, "{ __typename }").measure.depth, 1u);
}

TEST(OperationLimits, CostFollowsTheCostSpecification) {
  auto schema = Build(kShop);
  // An object costs 1, a scalar 0.
  EXPECT_EQ(MeasureOf(*schema, "{ shop { name } }").measure.cost, 1);
  // A list without @listSize: 10 items of cost 1.
  EXPECT_EQ(MeasureOf(*schema, "{ shops { name } }").measure.cost, 10);
  // assumedSize: 3 products in each of 10 shops, plus the shops.
  EXPECT_EQ(MeasureOf(*schema, "{ shops { products { id } } }").measure.cost, 10 * (1 + 3));
  // A slicing argument, literal or variable, sizes the list.
  EXPECT_EQ(MeasureOf(*schema, "{ products(first: 25) { id } }").measure.cost, 25);
  EXPECT_EQ(MeasureOf(*schema, "query($n: Int) { products(last: $n) { id } }", R"({"n": 40})").measure.cost, 40);
  // A default counts as given.
  EXPECT_EQ(MeasureOf(*schema, "{ top { id } }").measure.cost, 5);
  EXPECT_EQ(MeasureOf(*schema, "{ top(limit: 2) { id } }").measure.cost, 2);
  // sizedFields: the connection costs 1, its edges `first` each (an edge and its node).
  EXPECT_EQ(MeasureOf(*schema, "{ search(first: 4) { total edges { node { id } } } }").measure.cost, 1 + 4 * 2);
  // @cost on a field, an argument and a type.
  EXPECT_EQ(MeasureOf(*schema, "{ expensive }").measure.cost, 40);
  EXPECT_EQ(MeasureOf(*schema, "{ expensive(weight: 1) }").measure.cost, 47);
  EXPECT_EQ(MeasureOf(*schema, "{ shop { owner { name } } }").measure.cost, 1 + 5);
  // A fragment counts once per use.
  EXPECT_EQ(MeasureOf(*schema, "{ a: shop { ...S } b: shop { ...S } } fragment S on Shop { owner { name } }")
                .measure.cost,
            2 * (1 + 5));
}

TEST(OperationLimits, RequireOneSlicingArgumentIsEnforced) {
  auto schema = Build(kShop);
  for (const char* q : {"{ products { id } }", "{ products(first: 1, last: 2) { id } }"}) {
    const OperationMeasure m = MeasureOf(*schema, q).measure;
    ASSERT_TRUE(m.error) << q;
    EXPECT_EQ(m.error->code, "BAD_USER_INPUT");
    EXPECT_NE(m.error->message.find("Query.products"), std::string::npos) << m.error->message;
    EXPECT_TRUE(check_operation_limits(m, {}));
  }
}

TEST(OperationLimits, BadCostDirectivesAreSchemaErrors) {
  for (const char* sdl : {"type Query { a: Int @cost(weight: \"x\") }", "type Query { a: Int @cost(weight: -1) }",
                          "type Query { a: [Int] @listSize(slicingArguments: [\"first\"]) }",
                          "type Query { a: [Int] @listSize(assumedSize: \"3\") }"}) {
    EXPECT_FALSE(Schema::from_sdl(sdl).ok()) << sdl;
  }
  // Declared by the schema, as schemas written for other servers do.
  EXPECT_TRUE(Schema::from_sdl(R"(
    directive @cost(weight: Int!) on FIELD_DEFINITION | OBJECT | SCALAR | ENUM | ARGUMENT_DEFINITION
    directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!],
                        requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
    type Query { a(first: Int): [Int] @listSize(slicingArguments: ["first"]) @cost(weight: 2) }
  )")
                  .ok());
}

// Each fragment spreads the next one twice: the response doubles with every definition.
std::string DoublingBomb(int n) {
  std::string q = "{ __type(name: \"__Type\") { ...f0 } }";
  for (int i = 0; i < n; ++i)
    q += " fragment f" + std::to_string(i) + " on __Type { a: ofType { ...f" + std::to_string(i + 1) +
         " } b: ofType { ...f" + std::to_string(i + 1) + " } }";
  q += " fragment f" + std::to_string(n) + " on __Type { name }";
  return q;
}

// a0 -> a1 -> ... each one field deeper: thousands of levels from a short document.
std::string DeepChain(int n) {
  std::string q = "{ __type(name: \"__Type\") { ...a0 } }";
  for (int i = 0; i < n; ++i)
    q += " fragment a" + std::to_string(i) + " on __Type { ofType { ...a" + std::to_string(i + 1) + " } }";
  q += " fragment a" + std::to_string(n) + " on __Type { name }";
  return q;
}

TEST(OperationLimits, BombsArePricedWithoutBeingExpanded) {
  auto schema = Build("type Query { a: Int }");
  const auto start = std::chrono::steady_clock::now();
  const Measured bomb = MeasureOf(*schema, DoublingBomb(60));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_GT(bomb.measure.cost, 1e17);  // 2^60 objects
  EXPECT_EQ(bomb.measure.depth, 62u);
  const std::optional<GraphQLError> refused = check_operation_limits(bomb.measure, {});  // 62 is not too deep
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code, "COST_LIMIT_EXCEEDED");
  EXPECT_NE(refused->message.find("more than 10^18"), std::string::npos) << refused->message;

  const Measured deep = MeasureOf(*schema, DeepChain(5000));
  EXPECT_EQ(deep.measure.depth, 5002u);
}

TEST(OperationLimits, TheIntrospectionQueryIsAccepted) {
  auto schema = Build(kShop);
  // GraphiQL's introspection query, as graphql-js's getIntrospectionQuery() writes it.
  const std::string query = R"(
    query IntrospectionQuery {
      __schema {
        queryType { name } mutationType { name } subscriptionType { name }
        types { ...FullType }
        directives { name description locations args { ...InputValue } }
      }
    }
    fragment FullType on __Type {
      kind name description
      fields(includeDeprecated: true) {
        name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason
      }
      inputFields { ...InputValue }
      interfaces { ...TypeRef }
      enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
      possibleTypes { ...TypeRef }
    }
    fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
    fragment TypeRef on __Type {
      kind name
      ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name
        ofType { kind name ofType { kind name ofType { kind name } } } } } } } }
    })";
  const Measured m = MeasureOf(*schema, query);
  EXPECT_FALSE(check_operation_limits(m.measure, {})) << m.measure.cost;
  EXPECT_EQ(m.measure.depth, 14u);
  EXPECT_GT(m.measure.cost, 100);
}

// ---- in the executor -----------------------------------------------------------------------

Response Execute(const Schema& schema, const std::string& query, ExecutionOptions options = {},
                 const std::string& root = "{}") {
  ParseResult parsed = parse(query);
  EXPECT_TRUE(parsed.ok()) << (parsed.error ? parsed.error->message : "");
  const std::vector<GraphQLError> errors = validate(schema, *parsed.document);
  EXPECT_TRUE(errors.empty()) << errors[0].message;
  json::parse_options deep;
  deep.max_depth = 1000;
  const json::value root_value = json::parse(root, {}, deep);
  Request req;
  req.document = parsed.document.get();
  req.root_value = Data::json(&root_value);
  return cutoff::test_support::RunSync(
      [&]() -> asio::awaitable<Response> { co_return co_await execute(schema, req, Context(), options); });
}

// Runs `f` on a thread whose stack is `bytes` (sanitizers' frames are several times larger).
void OnSmallStack(std::size_t bytes, std::function<void()> f) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  bytes *= 8;
#endif
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* p) -> void* {
                  (*static_cast<std::function<void()>*>(p))();
                  return nullptr;
                },
                &f),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

TEST(OperationLimitsExec, TheDeepestAcceptedOperationRunsOnASmallStack) {
  auto schema = Build("type Query { node: Node } type Node { child: Node name: String }");
  const std::size_t depth = OperationLimits{}.max_depth;
  // node { child { child ... { name } } }, `depth` fields deep, through fragments.
  std::string query = "{ node { ...c1 } }";
  for (std::size_t i = 1; i + 2 < depth; ++i)
    query += " fragment c" + std::to_string(i) + " on Node { child { ...c" + std::to_string(i + 1) + " } }";
  query += " fragment c" + std::to_string(depth - 2) + " on Node { child { name } }";
  std::string root = "{\"name\":\"leaf\"}";
  for (std::size_t i = 1; i < depth - 1; ++i) root = "{\"child\":" + root + "}";
  root = "{\"node\":" + root + "}";
  Response r;
  OnSmallStack(256 * 1024, [&] { r = Execute(*schema, query, {}, root); });
  ASSERT_TRUE(r.errors.empty()) << r.errors[0].message;
  EXPECT_NE(r.data.find("\"name\":\"leaf\""), std::string::npos);

  // One level more is refused before anything runs.
  const std::string deeper = "{ node { child { ...c1 } } }" + query.substr(query.find(" fragment"));
  const Response refused = Execute(*schema, deeper, {}, root);
  EXPECT_FALSE(refused.has_data);
  ASSERT_EQ(refused.errors.size(), 1u);
  EXPECT_EQ(refused.errors[0].code, "DEPTH_LIMIT_EXCEEDED");
}

TEST(OperationLimitsExec, ExpansionBombsAreRefusedBeforeAnyResolverRuns) {
  auto schema = Build("type Query { a: Int }");
  for (const auto& [q, code] : {std::pair{DeepChain(6000), "DEPTH_LIMIT_EXCEEDED"},
                                std::pair{DoublingBomb(30), "COST_LIMIT_EXCEEDED"}}) {
    Response r;
    OnSmallStack(256 * 1024, [&] { r = Execute(*schema, q); });
    EXPECT_FALSE(r.has_data);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].code, code);
  }
  ExecutionOptions cost_only;
  cost_only.limits.max_depth = 0;
  const Response r = Execute(*schema, DoublingBomb(24), cost_only);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "COST_LIMIT_EXCEEDED");
  EXPECT_NE(r.errors[0].message.find("the limit is 200000"), std::string::npos) << r.errors[0].message;
}

TEST(OperationLimitsExec, LongSpreadChainsCollectWithoutRecursion) {
  // Fragments that only spread the next one: depth 1, but collecting the root's fields walks
  // the whole chain.
  auto schema = Build("type Query { a: Int }");
  std::string q = "{ ...s0 }";
  const int n = 900;
  for (int i = 0; i < n; ++i) q += " fragment s" + std::to_string(i) + " on Query { ...s" + std::to_string(i + 1) + " }";
  q += " fragment s" + std::to_string(n) + " on Query { a }";
  Response r;
  OnSmallStack(64 * 1024, [&] { r = Execute(*schema, q, {}, R"({"a": 1})"); });
  EXPECT_EQ(r.to_json(), R"({"data":{"a":1}})");
}

TEST(OperationLimitsExec, AResponseOverItsLimitStopsTheExecution) {
  auto schema = Build("type Query { words: [String] slow: Int }");
  std::atomic<int> slow_finished{0};
  schema->resolve("Query", "words", [](FieldContext&) {
    Data::List words;
    for (int i = 0; i < 100'000; ++i) words.push_back(Data::from(std::string("word number ") + std::to_string(i)));
    return Data::list(std::move(words));
  });
  schema->resolve_async("Query", "slow", [&](FieldContext&) -> asio::awaitable<Data> {
    asio::steady_timer t(co_await asio::this_coro::executor, 10s);
    co_await t.async_wait(asio::use_awaitable);  // cancelled when the response is abandoned
    ++slow_finished;
    co_return Data::from(std::int64_t{1});
  });
  ExecutionOptions options;
  options.max_response_bytes = 100'000;
  const auto start = std::chrono::steady_clock::now();
  const Response r = Execute(*schema, "{ slow words }", options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);  // the slow resolver was cancelled
  EXPECT_FALSE(r.has_data);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "RESPONSE_TOO_LARGE");
  // It starts when the walk first yields, and is cancelled when the rest of the list, written
  // after that, passes the limit.
  EXPECT_EQ(slow_finished.load(), 0);
  // Under the limit the same operation is unaffected.
  options.max_response_bytes = 10'000'000;
  schema->resolve_async("Query", "slow", [](FieldContext&) -> asio::awaitable<Data> {
    co_return Data::from(std::int64_t{1});
  });
  const Response whole = Execute(*schema, "{ slow words }", options);
  EXPECT_TRUE(whole.errors.empty());
  EXPECT_GT(whole.data.size(), 1'000'000u);
}

// Busies the thread for `d`, as a resolver doing real work would.
void Spin(Duration d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Executes `document` on an event loop that also serves another client, a 1 ms tick;
// `worst_gap` receives the longest wait between two ticks.
Response ExecuteBesideATick(const Schema& schema, const Document& document, Duration yield_after, Duration* worst_gap,
                            const Context& ctx = Context()) {
  asio::io_context io;
  Request req;
  req.document = &document;
  ExecutionOptions options;
  options.yield_after = yield_after;
  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer tick(io);
        auto last = std::chrono::steady_clock::now();
        while (!done) {
          tick.expires_after(1ms);
          co_await tick.async_wait(asio::use_awaitable);
          const auto now = std::chrono::steady_clock::now();
          *worst_gap = std::max<Duration>(*worst_gap, now - last);
          last = now;
        }
      },
      asio::detached);
  auto result = asio::co_spawn(
      io,
      [&]() -> asio::awaitable<Response> {
        Response r = co_await execute(schema, req, ctx, options);
        done = true;
        co_return r;
      },
      asio::use_future);
  io.run();
  return result.get();
}

std::unique_ptr<Document> Parsed(const Schema& schema, const std::string& query) {
  ParseResult parsed = parse(query);
  EXPECT_TRUE(parsed.ok());
  EXPECT_TRUE(validate(schema, *parsed.document).empty());
  return std::move(parsed.document);
}

TEST(OperationLimitsExec, TheResponseLimitCountsEveryChunkOfALongText) {
  // 400,000 words, about 8 MB of text: the walk yields many times and writes its later parts
  // in chunks of their own. The limit is on the whole text.
  auto schema = Build("type Query { words: [String] }");
  schema->resolve("Query", "words", [](FieldContext&) {
    Data::List words;
    for (int i = 0; i < 400'000; ++i) words.push_back(Data::from("word number " + std::to_string(i)));
    return Data::list(std::move(words));
  });
  ExecutionOptions options;
  options.max_response_bytes = 2'000'000;
  options.yield_after = 1ms;
  const Response r = Execute(*schema, "{ words }", options);
  EXPECT_FALSE(r.has_data);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].code, "RESPONSE_TOO_LARGE");
}

// The same document executed yielding every 2 ms and never, each beside a tick.
struct BothWays {
  Response yielding, unyielding;
  Duration gap_yielding{}, gap_unyielding{};
};
BothWays ExecuteBothWays(const Schema& schema, const Document& document) {
  BothWays b;
  b.yielding = ExecuteBesideATick(schema, document, 2ms, &b.gap_yielding);
  b.unyielding = ExecuteBesideATick(schema, document, Duration::zero(), &b.gap_unyielding);
  return b;
}

// A wide object: Query.item's `spin` busies the thread for 20 µs, and WideItemQuery selects
// it 12,000 times (240 ms of work in one object), then `rest`.
void ResolveWideItem(Schema& schema) {
  schema.resolve("Item", "spin", [](FieldContext&) {
    Spin(20us);
    return Data::from(std::int64_t{1});
  });
  static const int kItem = 0;
  schema.resolve("Query", "item", [](FieldContext&) { return Data::object(&kItem); });
}
std::string WideItemQuery(const std::string& rest) {
  std::string query = "{ item {";
  for (int i = 0; i < 12000; ++i) query += " s" + std::to_string(i) + ": spin";
  return query + " " + rest;
}

TEST(OperationLimitsExec, ALongWalkLetsOtherWorkRun) {
  auto schema = Build("type Query { item: Item } type Item { spin: Int name: String }");
  ResolveWideItem(*schema);
  const auto doc = Parsed(*schema, WideItemQuery("name } }"));

  const auto [yielding, unyielding, gap_yielding, gap_unyielding] = ExecuteBothWays(*schema, *doc);
  EXPECT_TRUE(yielding.errors.empty());
  EXPECT_EQ(yielding.to_json(), unyielding.to_json());  // the same response either way
  EXPECT_GT(gap_unyielding, 200ms);                     // the walk held the loop
  // Ticks every few ms while yielding (a loaded machine preempts the thread now and then,
  // hence the margins).
  EXPECT_LT(gap_yielding, std::min<Duration>(cutoff::test_support::Scaled(Duration(100ms)), gap_unyielding / 3))
      << "the walk held the event loop";
}

TEST(OperationLimitsExec, ANullInANonNullFieldLeftForLaterNullsItsObject) {
  // The walk yields inside a wide object; its last field, written by a later walk, is a
  // non-null field that fails: the object becomes null, as without yielding.
  auto schema = Build("type Query { item: Item other: Int } type Item { spin: Int must: Int! }");
  ResolveWideItem(*schema);
  schema->resolve("Item", "must", [](FieldContext&) { return Data(); });
  schema->resolve("Query", "other", [](FieldContext&) { return Data::from(std::int64_t{7}); });
  const auto doc = Parsed(*schema, WideItemQuery("must } other }"));
  const auto [yielding, unyielding, gap_yielding, gap_unyielding] = ExecuteBothWays(*schema, *doc);
  const std::string text = yielding.to_json();
  EXPECT_EQ(text, unyielding.to_json());
  const json::value v = json::parse(text);
  EXPECT_TRUE(v.at("data").at("item").is_null());
  EXPECT_EQ(v.at("data").at("other").as_int64(), 7);
  ASSERT_EQ(v.at("errors").as_array().size(), 1u);
  EXPECT_EQ(json::serialize(v.at("errors").at(0).at("path")), R"(["item","must"])");
}

// A list: 12,000 items, 20 µs each. Its walk yields inside the list, and the items left are
// written later, in order, as one continuation per yield.
constexpr const char* kItems = "type Query { items: [Item!] words: [String] } type Item { n: Int! spin: Int }";
constexpr int kListItems = 12'000;

// `last_start`: set to the time each `spin` starts.
std::unique_ptr<Schema> ItemsSchema(int null_at = -1,
                                    std::atomic<std::chrono::steady_clock::time_point>* last_start = nullptr) {
  auto schema = Build(kItems);
  static const std::vector<int> items = [] {
    std::vector<int> v(kListItems);
    for (int i = 0; i < kListItems; ++i) v[i] = i;
    return v;
  }();
  schema->resolve("Query", "items", [](FieldContext&) {
    Data::List out;
    for (const int& i : items) out.push_back(Data::object(&i));
    return Data::list(std::move(out));
  });
  schema->resolve("Query", "words", [](FieldContext&) {
    Data::List out;
    for (int i = 0; i < kListItems; ++i) out.push_back(Data::from("word " + std::to_string(i)));
    return Data::list(std::move(out));
  });
  schema->resolve("Item", "n", [null_at](FieldContext& f) {
    const int n = *f.parent.as<int>();
    return n == null_at ? Data() : Data::from(std::int64_t{n});
  });
  schema->resolve("Item", "spin", [last_start](FieldContext&) {
    if (last_start) *last_start = std::chrono::steady_clock::now();
    Spin(20us);
    return Data::from(std::int64_t{1});
  });
  return schema;
}

TEST(OperationLimitsExec, ALongListLetsOtherWorkRunAndIsWrittenWhole) {
  auto schema = ItemsSchema();
  const auto doc = Parsed(*schema, "{ items { n spin } words }");
  const auto [yielding, unyielding, gap_yielding, gap_unyielding] = ExecuteBothWays(*schema, *doc);
  EXPECT_TRUE(yielding.errors.empty());
  const std::string text = yielding.to_json();
  EXPECT_EQ(text, unyielding.to_json());
  const json::value v = json::parse(text);
  const json::array& items = v.at("data").at("items").as_array();
  ASSERT_EQ(items.size(), static_cast<std::size_t>(kListItems));
  for (int i = 0; i < kListItems; ++i) ASSERT_EQ(items[i].at("n").as_int64(), i);
  EXPECT_EQ(v.at("data").at("words").as_array().back().as_string(), "word " + std::to_string(kListItems - 1));
  EXPECT_GT(gap_unyielding, 200ms);
  EXPECT_LT(gap_yielding, std::min<Duration>(cutoff::test_support::Scaled(Duration(100ms)), gap_unyielding / 3))
      << "the walk held the event loop";
}

TEST(OperationLimitsExec, ANullInANonNullItemLeftForLaterNullsTheList) {
  // Item 10,000 is written long after the first yield, by a continuation; its null still
  // reaches the nullable list, with one error at its path, as without yielding.
  auto schema = ItemsSchema(/*null_at=*/10'000);
  const auto doc = Parsed(*schema, "{ items { n spin } words }");
  const auto [yielding, unyielding, gap_yielding, gap_unyielding] = ExecuteBothWays(*schema, *doc);
  const std::string text = yielding.to_json();
  EXPECT_EQ(text, unyielding.to_json());
  const json::value v = json::parse(text);
  EXPECT_TRUE(v.at("data").at("items").is_null());
  ASSERT_EQ(v.at("errors").as_array().size(), 1u);
  EXPECT_EQ(json::serialize(v.at("errors").at(0).at("path")), R"(["items",10000,"n"])");
}

TEST(OperationLimitsExec, AStopWhileTheRestOfAListWaitsStartsNoFieldAndNamesEach) {
  std::atomic<std::chrono::steady_clock::time_point> last_start{};
  auto schema = ItemsSchema(-1, &last_start);
  const auto doc = Parsed(*schema, "{ items { spin } }");
  Duration gap{};
  // 240 ms of work under a 40 ms budget: the deadline passes while items wait for later walks.
  const Context ctx = Context().with_timeout(40ms);
  const TimePoint deadline = ctx.deadline().time_point();
  const Response r = ExecuteBesideATick(*schema, *doc, 2ms, &gap, ctx);
  // No field starts after the deadline: the last one started before it (or as it passed:
  // a field whose check came just before the timer fired; hence the margin).
  EXPECT_LT(last_start.load(), deadline + cutoff::test_support::Scaled(Duration(10ms)));
  const json::value v = json::parse(r.to_json());
  const json::array& items = v.at("data").at("items").as_array();
  ASSERT_EQ(items.size(), static_cast<std::size_t>(kListItems));  // every item is there
  EXPECT_TRUE(items.front().at("spin").is_int64());
  EXPECT_TRUE(items.back().at("spin").is_null());  // not started: null, with its error
  std::size_t nulls = 0;
  for (const json::value& item : items) nulls += item.at("spin").is_null() ? 1 : 0;
  EXPECT_GT(nulls, 0u);
  // One error per field not started, at its path, up to max_stop_errors; then one that
  // counts the rest.
  const std::size_t named = ExecutionOptions().max_stop_errors;
  ASSERT_GT(nulls, named);
  ASSERT_EQ(r.errors.size(), named + 1);
  const auto* field = std::get_if<std::string>(&r.errors[named - 1].path.back());
  EXPECT_TRUE(field && *field == "spin");
  EXPECT_NE(r.errors.back().message.find("and " + std::to_string(nulls - named) + " more fields"), std::string::npos)
      << r.errors.back().message;
}

}  // namespace
}  // namespace cutoff::graphql
