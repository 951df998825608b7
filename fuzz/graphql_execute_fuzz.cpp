// Fuzzes the whole request path a GraphQL server runs: parse, validate, measure and execute.
// Input: an executable document, run against a fixed schema (interfaces, unions, lists,
// recursive types, @budget, @cost and @listSize) whose fields resolve from a JSON fixture,
// with introspection. Nothing may crash, hang or recurse without bound, whatever the
// document: fragment chains and bombs are refused by the limits, and an execution always
// completes with a well-formed response whose errors each have a message.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "cutoff/core/context.hpp"
#include "cutoff/graphql/document_cache.hpp"
#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/schema.hpp"
#include "fixture/fixture_resolvers.hpp"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

constexpr const char* kSchema = R"(
interface Node { id: ID! }
type Dog implements Node { id: ID! name: String friends: [Dog!]! @listSize(assumedSize: 2) owner: Human }
type Human implements Node {
  id: ID! name: String pets(first: Int): [Dog] @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false)
  boss: Human
}
union Thing = Dog | Human
enum Color { RED GREEN }
input Filter { color: Color nested: Filter limit: Int }
type Query {
  dog: Dog human: Human node(id: ID!): Node things: [Thing!] color: Color
  search(filter: Filter): [Node] @cost(weight: 3)
  slow: Int @budget(ms: 5) words: [String] broken: String matrix: [[Int]]
}
type Mutation { rename(name: String!): Dog }
)";

constexpr const char* kFixture = R"({
  "dog": {"id": "d1", "name": "Rex", "owner": {"id": "h1", "name": "Ann"},
          "friends": [{"id": "d2", "name": "Fido", "friends": []}, {"id": "d3", "friends": []}]},
  "human": {"id": "h1", "name": "Ann", "pets": [{"id": "d1", "friends": []}], "boss": {"id": "h2", "boss": null}},
  "node": {"__typename": "Dog", "id": "d9", "friends": []},
  "things": [{"__typename": "Dog", "id": "d1", "friends": []}, {"__typename": "Human", "id": "h1"}],
  "color": "RED",
  "search": [{"__typename": "Human", "id": "h3"}],
  "slow": {"$delay_ms": 50, "$value": 1},
  "words": ["a", "b", {"$error": "no word", "$code": "NOPE"}],
  "broken": {"$error": "broken"},
  "matrix": [[1, 2], [3]],
  "rename": {"id": "d1", "name": {"$arg": "name"}, "friends": []}
})";

struct Fixture {
  std::unique_ptr<cutoff::graphql::Schema> schema;
  boost::json::value root;
};

const Fixture& TheFixture() {
  static const Fixture fixture = [] {
    cutoff::graphql::SchemaResult r = cutoff::graphql::Schema::from_sdl(kSchema);
    Require(r.ok());
    cutoff::graphql::install_fixture_resolvers(*r.schema);
    return Fixture{std::move(r.schema), boost::json::parse(kFixture)};
  }();
  return fixture;
}

// Executes and keeps the response where the fuzz target reads it.
boost::asio::awaitable<void> RunOne(const cutoff::graphql::Schema& schema, const cutoff::graphql::Request& req,
                                    cutoff::Context ctx, cutoff::graphql::ExecutionOptions options,
                                    std::optional<cutoff::graphql::Response>* out) {
  *out = co_await cutoff::graphql::execute(schema, req, std::move(ctx), options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cutoff::graphql;
  const Fixture& f = TheFixture();
  ValidationOptions validation;
  validation.max_field_comparisons = 100'000;  // keeps adversarial inputs quick to run
  auto prepared = prepare_document(*f.schema, std::string(reinterpret_cast<const char*>(data), size), {}, validation);
  if (!prepared->ok()) return 0;

  ExecutionOptions options;
  options.limits.max_cost = 5'000;  // bounds what one input may make the fixture produce
  options.max_response_bytes = 1 << 20;
  Request req;
  req.document = prepared->document.get();
  req.root_value = Data::json(&f.root);
  // The document's first operation (execute() reports an ambiguous choice itself).
  if (prepared->document->operations.size() > 1) req.operation_name = std::string(prepared->document->operations[0].name);

  boost::asio::io_context io;
  const cutoff::Context ctx = cutoff::Context().with_timeout(std::chrono::milliseconds(20));
  std::optional<Response> result;
  boost::asio::co_spawn(io, RunOne(*f.schema, req, ctx, options, &result), [](std::exception_ptr e) {
    Require(!e);  // execution reports failures in the response, never by throwing
  });
  io.run();
  Require(result.has_value());
  const Response& r = *result;
  for (const GraphQLError& e : r.errors) Require(!e.message.empty());
  if (r.has_data) {
    boost::system::error_code ec;
    boost::json::parse(r.data, ec);
    Require(!ec);  // the response text is well-formed JSON
  }
  Require(r.data.size() <= options.max_response_bytes + 64 * 1024);
  boost::system::error_code ec;
  boost::json::parse(Response(r).to_json(), ec);
  Require(!ec);
  return 0;
}
