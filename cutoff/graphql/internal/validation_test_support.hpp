// What the validation tests share: one schema for every rule, and helpers that validate a
// document against it and compare errors and their locations.
//
//   ExpectOnlyError("{ dog { nme } }", "Cannot query field \"nme\" on type \"Dog\". Did you mean \"name\"?",
//                   {At("{ dog { nme } }", "nme")});
#ifndef CUTOFF_GRAPHQL_INTERNAL_VALIDATION_TEST_SUPPORT_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_VALIDATION_TEST_SUPPORT_HPP_

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cutoff/graphql/parser.hpp"
#include "cutoff/graphql/schema.hpp"
#include "cutoff/graphql/validation.hpp"

namespace cutoff::graphql {

inline void PrintTo(const Location& l, std::ostream* os) { *os << l.line << ":" << l.column; }

// Time bounds catch super-linear blowups, which are orders of magnitude; unoptimised and
// sanitised builds run about ten times slower.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__OPTIMIZE__)
inline constexpr int kSlowdown = 10;
#else
inline constexpr int kSlowdown = 1;
#endif

// One schema for every rule: interfaces (one implementing another), unions, enums, input
// objects with defaults and required fields, non-null arguments, lists, custom scalars (one
// with a codec), a repeatable directive, and all three root types.
inline constexpr const char* kSchema = R"(
schema { query: Query mutation: Mutation subscription: Subscription }

directive @tag(name: String!) repeatable on QUERY | FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT
directive @onQuery on QUERY
directive @onMutation on MUTATION
directive @onSubscription on SUBSCRIPTION
directive @onFragment on FRAGMENT_DEFINITION
directive @onVariable on VARIABLE_DEFINITION
directive @cached(ttl: Int = 60) on FIELD

scalar DateTime
scalar JSON

enum Color { RED GREEN BLUE }
enum Size { SMALL MEDIUM LARGE }
enum DogCommand { SIT HEEL DOWN }

interface Node { id: ID! }
interface Named { name: String }
interface Pet implements Named { name: String nickname: String }

type Dog implements Pet & Named & Node {
  id: ID!
  name: String
  nickname: String
  barks: Boolean
  barkVolume: Int
  doesKnowCommand(command: DogCommand!): Boolean
  isHouseTrained(atOtherHomes: Boolean = true): Boolean
  owner: Human
}
type Cat implements Pet & Named & Node { id: ID! name: String nickname: String meows: Boolean meowVolume: Int furColor: Color }
type Human implements Named & Node { id: ID! name: String pets: [Pet] friends: [Human!]! relatives(first: Int): [Human] iq: Int }
type Alien implements Named { name: String iq: Int numEyes: Int }

union CatOrDog = Cat | Dog
union HumanOrAlien = Human | Alien
union DogOrHuman = Dog | Human

input Filter { color: Color size: Size = SMALL tags: [String!] nested: Filter limit: Int! offset: Int! = 0 }
input Point { x: Float! y: Float! }

type Query {
  dog: Dog
  cat: Cat
  pet: Pet
  named: Named
  human(id: ID!): Human
  node(id: ID!): Node
  catOrDog: CatOrDog
  humanOrAlien: HumanOrAlien
  dogOrHuman: DogOrHuman
  search(filter: Filter!): [Named]
  args(int: Int, float: Float, string: String, boolean: Boolean, id: ID, color: Color, ints: [Int], when: DateTime,
       json: JSON, point: Point, withDefault: Int! = 1, matrix: [[Int]], filters: [Filter]): String
  nonNull(int: Int!, ints: [Int!]): String
  multipleReqs(req1: Int!, req2: Int!, opt: Int = 0): String
}
type Mutation { createDog(name: String!): Dog setColor(color: Color!): Color }
type Subscription { newDog: Dog newCat: Cat ticks(every: Int = 1): Int }
)";

inline const Schema& TestSchema() {
  static const std::unique_ptr<Schema> schema = [] {
    SchemaResult r = Schema::from_sdl(kSchema);
    if (!r.ok()) {
      ADD_FAILURE() << r.errors[0].message;
      std::abort();
    }
    // DateTime literals must be RFC 3339 strings: a codec that rejects and one that throws.
    ScalarCodec date_time;
    date_time.parse = [](const boost::json::value& v) -> std::optional<boost::json::value> {
      if (!v.is_string()) return std::nullopt;
      const auto& s = v.as_string();
      if (s.size() < 10 || s[4] != '-' || s[7] != '-') throw std::invalid_argument("not an RFC 3339 date-time");
      return v;
    };
    r.schema->scalar("DateTime", std::move(date_time));
    return std::move(r.schema);
  }();
  return *schema;
}

inline std::vector<GraphQLError> Validate(const std::string& source, const ValidationOptions& options = {},
                                          const ParseOptions& parse_options = {}) {
  ParseResult parsed = parse(source, parse_options);
  EXPECT_TRUE(parsed.ok()) << (parsed.error ? parsed.error->message : "") << "\n" << source;
  if (!parsed.ok()) return {GraphQLError{"(did not parse)", {}, {}, {}}};
  return validate(TestSchema(), *parsed.document, options);
}

// Where the `nth` occurrence of `needle` starts in `source` (documents here are ASCII).
inline Location At(std::string_view source, std::string_view needle, int nth = 1) {
  std::size_t pos = std::string_view::npos;
  for (int i = 0; i < nth; ++i) {
    pos = source.find(needle, pos == std::string_view::npos ? 0 : pos + 1);
    if (pos == std::string_view::npos) {
      ADD_FAILURE() << "no occurrence " << nth << " of '" << needle << "'";
      return {};
    }
  }
  Location loc{1, 1};
  for (std::size_t i = 0; i < pos; ++i) {
    if (source[i] == '\n') {
      ++loc.line;
      loc.column = 1;
    } else {
      ++loc.column;
    }
  }
  return loc;
}

inline std::string Messages(const std::vector<GraphQLError>& errors) {
  std::string out;
  for (const auto& e : errors) out += "\n  " + e.message;
  return out;
}

inline void ExpectValid(const std::string& source) {
  SCOPED_TRACE(source);
  const auto errors = Validate(source);
  EXPECT_TRUE(errors.empty()) << Messages(errors);
}

// The first error has `message` and `locations`.
inline void ExpectError(const std::string& source, const std::string& message, const std::vector<Location>& locations) {
  SCOPED_TRACE(source);
  const auto errors = Validate(source);
  ASSERT_FALSE(errors.empty()) << "expected: " << message;
  EXPECT_EQ(errors[0].message, message) << Messages(errors);
  EXPECT_EQ(errors[0].locations, locations);
  EXPECT_EQ(errors[0].code, "GRAPHQL_VALIDATION_FAILED");
}

// Exactly one error.
inline void ExpectOnlyError(const std::string& source, const std::string& message, const std::vector<Location>& locations) {
  SCOPED_TRACE(source);
  const auto errors = Validate(source);
  ASSERT_EQ(errors.size(), 1u) << Messages(errors);
  EXPECT_EQ(errors[0].message, message);
  EXPECT_EQ(errors[0].locations, locations);
}

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_INTERNAL_VALIDATION_TEST_SUPPORT_HPP_
