// Fuzzes validation. Input: an executable document, validated against a fixed schema with
// interfaces, unions, enums, input objects and every root type. Validation must not crash or
// hang, and its results must respect the contract: every error has a message and the
// validation code, the error limit holds, and a lower limit yields a prefix of the errors.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cutoff/graphql/parser.hpp"
#include "cutoff/graphql/schema.hpp"
#include "cutoff/graphql/validation.hpp"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

constexpr const char* kSchema = R"(
directive @tag(name: String!) repeatable on QUERY | FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT
directive @onVariable on VARIABLE_DEFINITION
scalar JSON
enum Color { RED GREEN BLUE }
interface Node { id: ID! }
interface Named { name: String }
interface Pet implements Named { name: String nickname: String }
type Dog implements Pet & Named & Node {
  id: ID! name: String nickname: String barks: Boolean
  doesKnowCommand(command: Color!): Boolean owner: Human
}
type Cat implements Pet & Named & Node { id: ID! name: String nickname: String meows: Boolean color: Color }
type Human implements Named & Node { id: ID! name: String pets: [Pet] friends: [Human!]! relatives(first: Int = 3): [Human] }
union CatOrDog = Cat | Dog
input Filter { color: Color tags: [String!] nested: Filter limit: Int! offset: Int = 0 }
type Query {
  dog: Dog cat: Cat pet: Pet human(id: ID!): Human node(id: ID!): Node catOrDog: CatOrDog
  search(filter: Filter!): [Named]
  args(int: Int, float: Float, string: String, boolean: Boolean, id: ID, color: Color, ints: [Int!], json: JSON): String
}
type Mutation { createDog(name: String!): Dog }
type Subscription { newDog: Dog ticks: Int }
)";

const cutoff::graphql::Schema& FuzzSchema() {
  static const std::unique_ptr<cutoff::graphql::Schema> schema = [] {
    cutoff::graphql::SchemaResult r = cutoff::graphql::Schema::from_sdl(kSchema);
    Require(r.ok());
    return std::move(r.schema);
  }();
  return *schema;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cutoff::graphql;
  const Schema& schema = FuzzSchema();
  ParseResult parsed = parse(size ? std::string(reinterpret_cast<const char*>(data), size) : std::string());
  if (!parsed.ok()) return 0;

  ValidationOptions options;
  options.max_errors = 50;
  options.max_field_comparisons = 100'000;  // keeps adversarial inputs quick to run
  const std::vector<GraphQLError> errors = validate(schema, *parsed.document, options);
  Require(errors.size() <= options.max_errors + 1);
  for (const auto& e : errors) {
    Require(!e.message.empty());
    Require(e.code == "GRAPHQL_VALIDATION_FAILED");
    for (const auto& l : e.locations) Require(l.line >= 1 && l.column >= 1);
  }

  ValidationOptions fewer = options;
  fewer.max_errors = 2;
  const std::vector<GraphQLError> first = validate(schema, *parsed.document, fewer);
  Require(first.size() <= 3);
  for (std::size_t i = 0; i < first.size() && i < 2; ++i) Require(first[i].message == errors[i].message);
  return 0;
}
