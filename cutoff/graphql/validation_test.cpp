#include "cutoff/graphql/validation.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/graphql/parser.hpp"

namespace cutoff::graphql {

[[maybe_unused]] static void PrintTo(const Location& l, std::ostream* os) { *os << l.line << ":" << l.column; }

namespace {

// Time bounds catch super-linear blowups, which are orders of magnitude; unoptimised and
// sanitised builds run about ten times slower.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__OPTIMIZE__)
constexpr int kSlowdown = 10;
#else
constexpr int kSlowdown = 1;
#endif

// One schema for every rule: interfaces (one implementing another), unions, enums, input
// objects with defaults and required fields, non-null arguments, lists, custom scalars (one
// with a codec), a repeatable directive, and all three root types.
constexpr const char* kSchema = R"(
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

const Schema& TestSchema() {
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

std::vector<GraphQLError> Validate(const std::string& source, const ValidationOptions& options = {},
                                   const ParseOptions& parse_options = {}) {
  ParseResult parsed = parse(source, parse_options);
  EXPECT_TRUE(parsed.ok()) << (parsed.error ? parsed.error->message : "") << "\n" << source;
  if (!parsed.ok()) return {GraphQLError{"(did not parse)", {}, {}, {}}};
  return validate(TestSchema(), *parsed.document, options);
}

// Where the `nth` occurrence of `needle` starts in `source` (documents here are ASCII).
Location At(std::string_view source, std::string_view needle, int nth = 1) {
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

std::string Messages(const std::vector<GraphQLError>& errors) {
  std::string out;
  for (const auto& e : errors) out += "\n  " + e.message;
  return out;
}

void ExpectValid(const std::string& source) {
  SCOPED_TRACE(source);
  const auto errors = Validate(source);
  EXPECT_TRUE(errors.empty()) << Messages(errors);
}

// The first error has `message` and `locations`.
void ExpectError(const std::string& source, const std::string& message, const std::vector<Location>& locations) {
  SCOPED_TRACE(source);
  const auto errors = Validate(source);
  ASSERT_FALSE(errors.empty()) << "expected: " << message;
  EXPECT_EQ(errors[0].message, message) << Messages(errors);
  EXPECT_EQ(errors[0].locations, locations);
  EXPECT_EQ(errors[0].code, "GRAPHQL_VALIDATION_FAILED");
}

// Exactly one error.
void ExpectOnlyError(const std::string& source, const std::string& message, const std::vector<Location>& locations) {
  SCOPED_TRACE(source);
  const auto errors = Validate(source);
  ASSERT_EQ(errors.size(), 1u) << Messages(errors);
  EXPECT_EQ(errors[0].message, message);
  EXPECT_EQ(errors[0].locations, locations);
}

// ---- 5.1 ExecutableDefinitions ---------------------------------------------------------------------

TEST(ExecutableDefinitions, OperationsAndFragmentsAreExecutable) {
  ExpectValid("query Q { dog { ...F } }\nfragment F on Dog { name }");
}

TEST(ExecutableDefinitions, TypeDefinitionsAndExtensionsAreNot) {
  const std::string doc = "query Q { dog { name } }\ntype Cow { name: String }\nextend type Dog { color: String }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "The \"Cow\" definition is not executable.");
  EXPECT_EQ(errors[0].locations, (std::vector<Location>{{2, 1}}));
  EXPECT_EQ(errors[1].message, "The \"Dog\" definition is not executable.");
  EXPECT_EQ(errors[1].locations, (std::vector<Location>{{3, 1}}));
}

TEST(ExecutableDefinitions, SchemaAndDirectiveDefinitions) {
  ExpectError("{ dog { name } }\nschema { query: Query }", "The schema definition is not executable.", {{2, 1}});
  ExpectError("{ dog { name } }\ndirective @foo on FIELD", "The \"foo\" definition is not executable.", {{2, 1}});
}

// ---- 5.2 operations ----------------------------------------------------------------------------------

TEST(UniqueOperationNames, DistinctNamesAreValid) {
  ExpectValid("query Foo { dog { name } } query Bar { cat { name } } mutation Baz { setColor(color: RED) }");
}

TEST(UniqueOperationNames, RepeatedNameIsReportedAtBothNames) {
  const std::string doc = "query Foo { dog { name } }\nmutation Foo { setColor(color: RED) }";
  ExpectOnlyError(doc, "There can be only one operation named \"Foo\".", {At(doc, "Foo"), At(doc, "Foo", 2)});
}

TEST(LoneAnonymousOperation, OneAnonymousOperationIsValid) { ExpectValid("{ dog { name } }"); }

TEST(LoneAnonymousOperation, AnonymousBesideAnotherOperation) {
  const std::string doc = "{ dog { name } }\nquery Q { cat { name } }";
  ExpectOnlyError(doc, "This anonymous operation must be the only defined operation.", {{1, 1}});
}

TEST(LoneAnonymousOperation, TwoAnonymousOperationsAreBothReported) {
  const auto errors = Validate("{ dog { name } }\n{ cat { name } }");
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[1].locations, (std::vector<Location>{{2, 1}}));
}

TEST(SingleFieldSubscriptions, OneRootFieldIsValid) {
  ExpectValid("subscription S { newDog { name } }");
  ExpectValid("subscription S { ...F } fragment F on Subscription { ticks }");
  ExpectValid("subscription { newDog { name } newCat @skip(if: true) { name } }");
}

TEST(SingleFieldSubscriptions, MoreThanOneRootField) {
  const std::string doc = "subscription S { newDog { name } newCat { name } ticks }";
  ExpectOnlyError(doc, "Subscription \"S\" must select only one top level field.",
                  {At(doc, "newCat"), At(doc, "ticks")});
}

TEST(SingleFieldSubscriptions, FieldsFromFragmentsCount) {
  const std::string doc = "subscription { newDog { name } ...F }\nfragment F on Subscription { ticks }";
  ExpectOnlyError(doc, "Anonymous Subscription must select only one top level field.", {At(doc, "ticks")});
}

TEST(SingleFieldSubscriptions, NoIntrospectionRootField) {
  const std::string doc = "subscription S { __typename }";
  ExpectOnlyError(doc, "Subscription \"S\" must not select an introspection top level field.",
                  {At(doc, "__typename")});
}

// ---- 5.3 fields ----------------------------------------------------------------------------------------

TEST(FieldsOnCorrectType, KnownFieldsAndMetaFields) {
  ExpectValid(
      "{ dog { __typename name ... on Pet { nickname } } catOrDog { __typename ... on Cat { meows } } "
      "__schema { queryType { name } } __type(name: \"Dog\") { name } }");
}

TEST(FieldsOnCorrectType, UnknownFieldSuggestsSimilarNames) {
  const std::string doc = "{ dog { nam } }";
  ExpectOnlyError(doc, "Cannot query field \"nam\" on type \"Dog\". Did you mean \"name\"?", {At(doc, "nam")});
}

TEST(FieldsOnCorrectType, UnknownFieldWithoutSuggestions) {
  const std::string doc = "{ dog { xyzzy } }";
  ExpectOnlyError(doc, "Cannot query field \"xyzzy\" on type \"Dog\".", {At(doc, "xyzzy")});
}

TEST(FieldsOnCorrectType, OnInterfaceSuggestsImplementations) {
  const std::string doc = "{ pet { barks } }";
  ExpectOnlyError(doc, "Cannot query field \"barks\" on type \"Pet\". Did you mean to use an inline fragment on \"Dog\"?",
                  {At(doc, "barks")});
}

TEST(FieldsOnCorrectType, OnUnionSuggestsInterfacesFirst) {
  const std::string doc = "{ catOrDog { name } }";
  ExpectOnlyError(doc,
                  "Cannot query field \"name\" on type \"CatOrDog\". Did you mean to use an inline fragment on "
                  "\"Named\", \"Pet\", \"Cat\", or \"Dog\"?",
                  {At(doc, "name")});
}

TEST(FieldsOnCorrectType, SchemaMetaFieldOnlyOnQueryRoot) {
  const std::string doc = "{ dog { __schema { queryType { name } } } }";
  ExpectError(doc, "Cannot query field \"__schema\" on type \"Dog\".", {At(doc, "__schema")});
}

TEST(FieldsOnCorrectType, AliasedFieldIsReportedAtTheAlias) {
  const std::string doc = "{ dog { label: nickName } }";
  ExpectOnlyError(doc, "Cannot query field \"nickName\" on type \"Dog\". Did you mean \"nickname\" or \"name\"?",
                  {At(doc, "label")});
}

TEST(OverlappingFieldsCanBeMerged, IdenticalFieldsMerge) {
  ExpectValid("{ dog { name name otherName: name doesKnowCommand(command: SIT) doesKnowCommand(command: SIT) } }");
}

TEST(OverlappingFieldsCanBeMerged, DifferentFieldsUnderOneName) {
  const std::string doc = "{ dog { x: name x: nickname } }";
  ExpectOnlyError(doc,
                  "Fields \"x\" conflict because \"name\" and \"nickname\" are different fields. Use different "
                  "aliases on the fields to fetch both if this was intentional.",
                  {At(doc, "x: name"), At(doc, "x: nickname")});
}

TEST(OverlappingFieldsCanBeMerged, DifferingArguments) {
  const std::string doc = "{ dog { doesKnowCommand(command: SIT) doesKnowCommand(command: HEEL) } }";
  ExpectOnlyError(doc,
                  "Fields \"doesKnowCommand\" conflict because they have differing arguments. Use different aliases "
                  "on the fields to fetch both if this was intentional.",
                  {At(doc, "doesKnowCommand"), At(doc, "doesKnowCommand", 2)});
}

TEST(OverlappingFieldsCanBeMerged, ArgumentObjectsCompareRegardlessOfFieldOrder) {
  ExpectValid("{ search(filter: {limit: 1, color: RED}) { name } search(filter: {color: RED, limit: 1}) { name } }");
}

TEST(OverlappingFieldsCanBeMerged, DifferentObjectTypesMayDiverge) {
  ExpectValid("{ catOrDog { ... on Dog { x: name } ... on Cat { x: nickname } } }");
}

TEST(OverlappingFieldsCanBeMerged, InterfaceAndObjectMayNot) {
  const std::string doc = "{ pet { ... on Dog { n: name } ... on Pet { n: nickname } } }";
  ExpectError(doc,
              "Fields \"n\" conflict because \"name\" and \"nickname\" are different fields. Use different aliases "
              "on the fields to fetch both if this was intentional.",
              {At(doc, "n: name"), At(doc, "n: nickname")});
}

TEST(OverlappingFieldsCanBeMerged, ConflictingReturnTypesEvenOnDifferentObjects) {
  const std::string doc = "{ catOrDog { ... on Dog { v: barkVolume } ... on Cat { v: name } } }";
  ExpectOnlyError(doc,
                  "Fields \"v\" conflict because they return conflicting types \"Int\" and \"String\". Use different "
                  "aliases on the fields to fetch both if this was intentional.",
                  {At(doc, "v: barkVolume"), At(doc, "v: name")});
}

TEST(OverlappingFieldsCanBeMerged, NullabilityAndListShapesMustMatch) {
  const std::string doc = "{ node(id: 1) { ... on Dog { i: id } ... on Human { i: name } } }";
  ExpectError(doc,
              "Fields \"i\" conflict because they return conflicting types \"ID!\" and \"String\". Use different "
              "aliases on the fields to fetch both if this was intentional.",
              {At(doc, "i: id"), At(doc, "i: name")});
  const std::string lists = "{ dogOrHuman { ... on Human { f: friends { name } } ... on Dog { f: owner { name } } } }";
  ExpectError(lists,
              "Fields \"f\" conflict because they return conflicting types \"[Human!]!\" and \"Human\". Use "
              "different aliases on the fields to fetch both if this was intentional.",
              {At(lists, "f: friends"), At(lists, "f: owner")});
}

TEST(OverlappingFieldsCanBeMerged, ConflictsInSubSelections) {
  const std::string doc = "{ dog { owner { n: name } } dog { owner { n: iq } } }";
  ExpectOnlyError(doc,
                  "Fields \"dog\" conflict because subfields \"owner\" conflict because subfields \"n\" conflict "
                  "because \"name\" and \"iq\" are different fields. Use different aliases on the fields to fetch "
                  "both if this was intentional.",
                  {At(doc, "dog"), At(doc, "owner"), At(doc, "n: name"), At(doc, "dog", 2), At(doc, "owner", 2),
                   At(doc, "n: iq")});
}

TEST(OverlappingFieldsCanBeMerged, ConflictsBetweenFragments) {
  const std::string doc = "{ dog { ...A ...B } }\nfragment A on Dog { x: name }\nfragment B on Dog { x: barks }";
  ExpectOnlyError(doc,
                  "Fields \"x\" conflict because \"name\" and \"barks\" are different fields. Use different aliases "
                  "on the fields to fetch both if this was intentional.",
                  {At(doc, "x: name"), At(doc, "x: barks")});
}

TEST(OverlappingFieldsCanBeMerged, ConflictsBetweenFieldsAndNestedFragments) {
  const std::string doc =
      "{ dog { x: name ...A } }\nfragment A on Dog { ...B }\nfragment B on Dog { x: barks }";
  ExpectOnlyError(doc,
                  "Fields \"x\" conflict because \"name\" and \"barks\" are different fields. Use different aliases "
                  "on the fields to fetch both if this was intentional.",
                  {At(doc, "x: name"), At(doc, "x: barks")});
}

TEST(OverlappingFieldsCanBeMerged, ManyFragmentLevelsStayFast) {
  // L_i and R_i both spread L_{i-1} and R_{i-1} under the same field: without memoising
  // fragment pairs the comparisons double at every level.
  std::string doc = "{ human(id: 1) { ...L40 ...R40 } }\n"
                    "fragment L0 on Human { name }\nfragment R0 on Human { name }\n";
  for (int i = 1; i <= 40; ++i) {
    const std::string p = std::to_string(i - 1), n = std::to_string(i);
    doc += "fragment L" + n + " on Human { friends { ...L" + p + " ...R" + p + " } }\n";
    doc += "fragment R" + n + " on Human { friends { ...R" + p + " ...L" + p + " } }\n";
  }
  const auto start = std::chrono::steady_clock::now();
  ExpectValid(doc);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2 * kSlowdown));
}

TEST(OverlappingFieldsCanBeMerged, TwoMegabytesOfRepeatedFieldsValidateQuickly) {
  std::string doc = "{ dog {";
  while (doc.size() < 2 * 1024 * 1024) doc += " name";
  doc += " } }";
  ParseOptions big;
  big.max_tokens = 1'000'000;
  ParseResult parsed = parse(doc, big);
  ASSERT_TRUE(parsed.ok());
  const auto start = std::chrono::steady_clock::now();
  const auto errors = validate(TestSchema(), *parsed.document);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2 * kSlowdown));
  EXPECT_TRUE(errors.empty()) << Messages(errors);
}

TEST(OverlappingFieldsCanBeMerged, RepeatedSelectionsAndSpreadsValidateQuickly) {
  std::string doc = "{ dog {";
  for (int i = 0; i < 20000; ++i) doc += " owner { friends { name } ...H } ...D";
  doc += " } }\nfragment D on Dog { name owner { name } }\nfragment H on Human { name friends { iq } }";
  const auto start = std::chrono::steady_clock::now();
  ExpectValid(doc);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2 * kSlowdown));
}

TEST(OverlappingFieldsCanBeMerged, ComparisonBudgetRejectsAdversarialDocuments) {
  // Distinct fields under one response name must be compared pairwise.
  std::string doc = "{ dog {";
  for (int i = 0; i < 200; ++i) doc += " owner { a" + std::to_string(i) + ": name }";
  doc += " } }";
  ValidationOptions options;
  options.max_field_comparisons = 1000;
  const auto errors = Validate(doc, options);
  ASSERT_EQ(errors.size(), 1u) << Messages(errors);
  EXPECT_EQ(errors[0].message,
            "Validation aborted: checking that fields can be merged needs more than 1000 comparisons.");
  EXPECT_TRUE(Validate(doc).empty());  // well within the default budget
}

TEST(OverlappingFieldsCanBeMerged, ManyConflictsStopAtTheErrorLimit) {
  // 1000 fields that all conflict pairwise: half a million conflicts, of which 100 are reported.
  std::string doc = "{ human(id: 1) {";
  for (int i = 0; i < 1000; ++i) doc += " r: relatives(first: " + std::to_string(i) + ") { name }";
  doc += " } }";
  const auto start = std::chrono::steady_clock::now();
  const auto errors = Validate(doc);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(kSlowdown));
  ASSERT_EQ(errors.size(), 101u);
  EXPECT_EQ(errors[0].message,
            "Fields \"r\" conflict because they have differing arguments. Use different aliases on the fields to "
            "fetch both if this was intentional.");
  EXPECT_EQ(errors[100].message, "Too many validation errors, error limit reached. Validation aborted.");
}

TEST(OverlappingFieldsCanBeMerged, DeepRecursionThroughFragmentsIsBounded) {
  // Two chains of fragments nest a field inside itself; comparing the chains recurses through
  // both. Reasonable depths are checked, absurd ones rejected without exhausting the stack.
  auto chains = [](int n) {
    std::string doc = "{ human(id: 1) { friends { ...A0 } friends { ...B0 } } }\n";
    for (int i = 0; i < n; ++i) {
      const std::string next = i + 1 < n ? std::to_string(i + 1) : "";
      for (const char* c : {"A", "B"})
        doc += "fragment " + std::string(c) + std::to_string(i) + " on Human { friends { " +
               (next.empty() ? std::string("name") : "..." + std::string(c) + next) + " } }\n";
    }
    return doc;
  };
  ExpectValid(chains(200));
  const auto errors = Validate(chains(3000));
  ASSERT_EQ(errors.size(), 1u) << Messages(errors);
  EXPECT_EQ(errors[0].message,
            "Validation aborted: fields are nested too deeply through fragments to check that they can be merged.");
}

TEST(ScalarLeafs, LeavesWithoutAndObjectsWithSelections) {
  ExpectValid("{ dog { name barks owner { friends { name } } } cat { furColor } }");
}

TEST(ScalarLeafs, LeafWithSelection) {
  const std::string doc = "{ dog { name { x } } }";
  ExpectOnlyError(doc, "Field \"name\" must not have a selection since type \"String\" has no subfields.",
                  {At(doc, "{ x")});
  const std::string e = "{ cat { furColor { x } } }";
  ExpectOnlyError(e, "Field \"furColor\" must not have a selection since type \"Color\" has no subfields.",
                  {At(e, "{ x")});
}

TEST(ScalarLeafs, ObjectWithoutSelection) {
  const std::string doc = "{ dog }";
  ExpectOnlyError(doc, "Field \"dog\" of type \"Dog\" must have a selection of subfields. Did you mean \"dog { ... }\"?",
                  {At(doc, "dog")});
  const std::string list = "{ human(id: 1) { friends } }";
  ExpectOnlyError(list,
                  "Field \"friends\" of type \"[Human!]!\" must have a selection of subfields. Did you mean \"friends "
                  "{ ... }\"?",
                  {At(list, "friends")});
}

// ---- 5.4 arguments ------------------------------------------------------------------------------------

TEST(KnownArgumentNames, KnownFieldAndDirectiveArguments) {
  ExpectValid("{ dog @include(if: true) { doesKnowCommand(command: SIT) isHouseTrained name @cached(ttl: 5) } }");
}

TEST(KnownArgumentNames, UnknownFieldArgumentWithSuggestion) {
  const std::string doc = "{ dog { doesKnowCommand(comand: SIT) } }";
  ExpectError(doc, "Unknown argument \"comand\" on field \"Dog.doesKnowCommand\". Did you mean \"command\"?",
              {At(doc, "comand")});
}

TEST(KnownArgumentNames, UnknownArgumentOnInterfaceField) {
  const std::string doc = "{ pet { name(upper: true) } }";
  ExpectOnlyError(doc, "Unknown argument \"upper\" on field \"Pet.name\".", {At(doc, "upper")});
}

TEST(KnownArgumentNames, UnknownDirectiveArgument) {
  const std::string doc = "{ dog @skip(if: true, unless: false) { name } }";
  ExpectOnlyError(doc, "Unknown argument \"unless\" on directive \"@skip\".", {At(doc, "unless")});
  const std::string s = "{ dog { name @cached(tll: 5) } }";
  ExpectOnlyError(s, "Unknown argument \"tll\" on directive \"@cached\". Did you mean \"ttl\"?", {At(s, "tll")});
}

TEST(UniqueArgumentNames, DistinctArgumentsAreValid) {
  ExpectValid("{ multipleReqs(req1: 1, req2: 2) dog @include(if: true) { name } }");
}

TEST(UniqueArgumentNames, RepeatedFieldArgument) {
  const std::string doc = "{ dog { isHouseTrained(atOtherHomes: true, atOtherHomes: false) } }";
  ExpectOnlyError(doc, "There can be only one argument named \"atOtherHomes\".",
                  {At(doc, "atOtherHomes"), At(doc, "atOtherHomes", 2)});
}

TEST(UniqueArgumentNames, RepeatedDirectiveArgument) {
  const std::string doc = "{ dog @include(if: true, if: false) { name } }";
  ExpectOnlyError(doc, "There can be only one argument named \"if\".", {At(doc, "if"), At(doc, "if", 2)});
}

TEST(ProvidedRequiredArguments, RequiredArgumentsProvidedOrDefaulted) {
  ExpectValid("{ multipleReqs(req1: 1, req2: 2) args dog { isHouseTrained } human(id: 4) { name } }");
}

TEST(ProvidedRequiredArguments, MissingFieldArgument) {
  const std::string doc = "{ dog { doesKnowCommand } }";
  ExpectOnlyError(doc,
                  "Field \"doesKnowCommand\" argument \"command\" of type \"DogCommand!\" is required, but it was not "
                  "provided.",
                  {At(doc, "doesKnowCommand")});
}

TEST(ProvidedRequiredArguments, EachMissingArgumentIsReported) {
  const std::string doc = "{ multipleReqs }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message,
            "Field \"multipleReqs\" argument \"req1\" of type \"Int!\" is required, but it was not provided.");
  EXPECT_EQ(errors[1].message,
            "Field \"multipleReqs\" argument \"req2\" of type \"Int!\" is required, but it was not provided.");
}

TEST(ProvidedRequiredArguments, MissingDirectiveArgument) {
  const std::string doc = "{ dog @include { name } }";
  ExpectOnlyError(doc, "Directive \"@include\" argument \"if\" of type \"Boolean!\" is required, but it was not provided.",
                  {At(doc, "@include")});
}

TEST(ProvidedRequiredArguments, MetaFieldArgument) {
  const std::string doc = "{ __type { name } }";
  ExpectOnlyError(doc, "Field \"__type\" argument \"name\" of type \"String!\" is required, but it was not provided.",
                  {At(doc, "__type")});
}

TEST(ProvidedRequiredArguments, ReportedAfterTheFieldsOwnErrors) {
  // graphql-js checks required arguments when leaving the field.
  const std::string doc = "{ dog { doesKnowCommand(comand: SIT) } }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[1].message,
            "Field \"doesKnowCommand\" argument \"command\" of type \"DogCommand!\" is required, but it was not "
            "provided.");
}

// ---- 5.5 fragments -------------------------------------------------------------------------------------

TEST(UniqueFragmentNames, DistinctNamesAreValid) {
  ExpectValid("{ dog { ...A ...B } }\nfragment A on Dog { name }\nfragment B on Dog { barks }");
}

TEST(UniqueFragmentNames, RepeatedName) {
  const std::string doc = "{ dog { ...F } }\nfragment F on Dog { name }\nfragment F on Dog { name }";
  ExpectOnlyError(doc, "There can be only one fragment named \"F\".", {At(doc, "F on"), At(doc, "F on", 2)});
}

TEST(KnownTypeNames, KnownTypesInVariablesAndConditions) {
  ExpectValid(
      "query Q($f: Filter, $c: Color!) { search(filter: {limit: 1, nested: $f}) { ... on Human { name } } args(ints: "
      "[1]) @include(if: true) ...F args2: args(color: GREEN) dog { ... { name } } c: args(color: $c) }\n"
      "fragment F on Query { dog { name } }");
}

TEST(KnownTypeNames, UnknownVariableType) {
  const std::string doc = "query Q($a: [Strin!]) { args(string: $a) }";
  ExpectError(doc, "Unknown type \"Strin\". Did you mean \"String\"?", {At(doc, "Strin")});
}

TEST(KnownTypeNames, UnknownFragmentTypeCondition) {
  const std::string doc = "{ dog { ...F } }\nfragment F on Dgo { name }";
  ExpectOnlyError(doc, "Unknown type \"Dgo\". Did you mean \"Dog\"?", {At(doc, "Dgo")});
}

TEST(KnownTypeNames, UnknownInlineFragmentTypeCondition) {
  const std::string doc = "{ pet { ... on Kitten { name } } }";
  ExpectOnlyError(doc, "Unknown type \"Kitten\". Did you mean \"Filter\"?", {At(doc, "Kitten")});
  const std::string far = "{ pet { ... on Zebra { name } } }";
  ExpectOnlyError(far, "Unknown type \"Zebra\".", {At(far, "Zebra")});
}

TEST(FragmentsOnCompositeTypes, ObjectInterfaceAndUnionConditions) {
  ExpectValid("{ dog { ...F ... on Pet { name } } catOrDog { ... on CatOrDog { __typename } } }\n"
              "fragment F on Dog { name }");
}

TEST(FragmentsOnCompositeTypes, FragmentOnScalar) {
  const std::string doc = "{ dog { ...F } }\nfragment F on Color { x }";
  ExpectOnlyError(doc, "Fragment \"F\" cannot condition on non composite type \"Color\".", {At(doc, "Color")});
}

TEST(FragmentsOnCompositeTypes, InlineFragmentOnScalarOrInput) {
  const std::string doc = "{ dog { ... on Boolean { x } } }";
  ExpectOnlyError(doc, "Fragment cannot condition on non composite type \"Boolean\".", {At(doc, "Boolean")});
  const std::string input = "{ dog { ... on Filter { x } } }";
  ExpectOnlyError(input, "Fragment cannot condition on non composite type \"Filter\".", {At(input, "Filter")});
}

TEST(NoUnusedFragments, FragmentsUsedTransitively) {
  ExpectValid("query Q { dog { ...A } }\nfragment A on Dog { owner { ...B } }\nfragment B on Human { name }");
}

TEST(NoUnusedFragments, UnusedFragment) {
  const std::string doc = "{ dog { name } }\nfragment Unused on Dog { name }";
  ExpectOnlyError(doc, "Fragment \"Unused\" is never used.", {{2, 1}});
}

TEST(NoUnusedFragments, FragmentUsedOnlyByUnusedFragment) {
  const std::string doc = "{ dog { name } }\nfragment A on Dog { ...B }\nfragment B on Dog { name }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "Fragment \"A\" is never used.");
  EXPECT_EQ(errors[1].message, "Fragment \"B\" is never used.");
  EXPECT_EQ(errors[1].locations, (std::vector<Location>{{3, 1}}));
}

TEST(KnownFragmentNames, KnownFragments) { ExpectValid("{ dog { ...F } }\nfragment F on Dog { name }"); }

TEST(KnownFragmentNames, UnknownFragmentIsReportedAtItsName) {
  const std::string doc = "{ dog { ...Missing } }";
  ExpectOnlyError(doc, "Unknown fragment \"Missing\".", {At(doc, "Missing")});
}

TEST(NoFragmentCycles, SharedFragmentsAreNotCycles) {
  ExpectValid("{ dog { ...A ...B } }\nfragment A on Dog { ...C }\nfragment B on Dog { ...C }\nfragment C on Dog { name }");
}

TEST(NoFragmentCycles, SpreadWithinItself) {
  const std::string doc = "{ dog { ...A } }\nfragment A on Dog { ...A }";
  ExpectOnlyError(doc, "Cannot spread fragment \"A\" within itself.", {At(doc, "...A", 2)});
}

TEST(NoFragmentCycles, CycleThroughAnotherFragment) {
  const std::string doc = "{ dog { ...A } }\nfragment A on Dog { owner { name } ...B }\nfragment B on Dog { ...A }";
  ExpectOnlyError(doc, "Cannot spread fragment \"A\" within itself via \"B\".", {At(doc, "...B"), At(doc, "...A", 2)});
}

TEST(NoFragmentCycles, LongCycleIsReportedOnceWithoutRecursion) {
  constexpr int kFragments = 20000;
  std::string doc = "{ dog { ...F0 } }\n";
  for (int i = 0; i < kFragments; ++i)
    doc += "fragment F" + std::to_string(i) + " on Dog { ...F" + std::to_string((i + 1) % kFragments) + " }\n";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 1u) << errors[0].message.substr(0, 200);
  EXPECT_EQ(errors[0].message.rfind("Cannot spread fragment \"F0\" within itself via \"F1\", \"F2\", ", 0), 0u);
  EXPECT_EQ(errors[0].locations.size(), static_cast<std::size_t>(kFragments));
}

TEST(PossibleFragmentSpreads, SpreadsThatCanApply) {
  ExpectValid(
      "{ pet { ... on Dog { barks } ...CatF } dog { ... on Pet { name } ... on CatOrDog { __typename } } "
      "catOrDog { ... on Pet { name } } dogOrHuman { ... on CatOrDog { __typename } } named { ... on Pet { name } } }\n"
      "fragment CatF on Cat { meows }");
}

TEST(PossibleFragmentSpreads, InlineObjectOnDifferentObject) {
  const std::string doc = "{ dog { ... on Cat { meows } } }";
  ExpectOnlyError(doc, "Fragment cannot be spread here as objects of type \"Dog\" can never be of type \"Cat\".",
                  {At(doc, "...")});
}

TEST(PossibleFragmentSpreads, NamedFragmentOnDifferentObject) {
  const std::string doc = "{ dog { ...CatFields } }\nfragment CatFields on Cat { meows }";
  ExpectOnlyError(doc,
                  "Fragment \"CatFields\" cannot be spread here as objects of type \"Dog\" can never be of type "
                  "\"Cat\".",
                  {At(doc, "...")});
}

TEST(PossibleFragmentSpreads, ObjectOutsideUnion) {
  const std::string doc = "{ catOrDog { ... on Human { name } } }";
  ExpectOnlyError(doc,
                  "Fragment cannot be spread here as objects of type \"CatOrDog\" can never be of type \"Human\".",
                  {At(doc, "...")});
}

TEST(PossibleFragmentSpreads, DisjointAbstractTypes) {
  const std::string doc = "{ humanOrAlien { ... on Pet { name } } }";
  ExpectOnlyError(doc,
                  "Fragment cannot be spread here as objects of type \"HumanOrAlien\" can never be of type \"Pet\".",
                  {At(doc, "...")});
}

// ---- 5.6 values ----------------------------------------------------------------------------------------

TEST(ValuesOfCorrectType, GoodLiterals) {
  ExpectValid(
      "{ args(int: -2147483648, float: 1, string: \"s\", boolean: false, id: 4, color: RED, ints: [1, 2], "
      "when: \"2021-10-01T00:00:00Z\", json: {a: [1, \"x\", {b: null, c: RED}]}, point: {x: 1, y: 2.5}, "
      "withDefault: 3, matrix: [[1], [2, null]], filters: [{limit: 1}]) "
      "a2: args(id: \"x\", float: -1.5e3, int: 2147483647, ints: null, string: \"\"\"block\"\"\") }");
}

TEST(ValuesOfCorrectType, SingleValueForAList) {
  ExpectValid("{ args(ints: 1, matrix: 1, filters: {limit: 2}) nonNull(int: 1, ints: 3) }");
}

TEST(ValuesOfCorrectType, IntFromString) {
  const std::string doc = "{ args(int: \"3\") }";
  ExpectOnlyError(doc, "Int cannot represent non-integer value: \"3\"", {At(doc, "\"3\"")});
}

TEST(ValuesOfCorrectType, IntFromFloat) {
  const std::string doc = "{ args(int: 1.5) }";
  ExpectOnlyError(doc, "Int cannot represent non-integer value: 1.5", {At(doc, "1.5")});
}

TEST(ValuesOfCorrectType, IntOutside32Bits) {
  const std::string doc = "{ args(int: 2147483648) }";
  ExpectOnlyError(doc, "Int cannot represent non 32-bit signed integer value: 2147483648", {At(doc, "2147483648")});
  const std::string huge = "{ args(int: -99999999999999999999999) }";
  ExpectOnlyError(huge, "Int cannot represent non 32-bit signed integer value: -99999999999999999999999",
                  {At(huge, "-9")});
}

TEST(ValuesOfCorrectType, FloatFromString) {
  const std::string doc = "{ args(float: \"1.5\") }";
  ExpectOnlyError(doc, "Float cannot represent non numeric value: \"1.5\"", {At(doc, "\"1.5\"")});
}

TEST(ValuesOfCorrectType, StringFromNumberWithEscapesInTheMessage) {
  const std::string doc = "{ args(string: 1) }";
  ExpectOnlyError(doc, "String cannot represent a non string value: 1", {At(doc, "1")});
  const std::string s = "{ args(int: \"a\\\"b\\n\") }";
  ExpectOnlyError(s, "Int cannot represent non-integer value: \"a\\\"b\\n\"", {At(s, "\"a")});
}

TEST(ValuesOfCorrectType, BooleanFromEnum) {
  const std::string doc = "{ args(boolean: TRUE) }";
  ExpectOnlyError(doc, "Boolean cannot represent a non boolean value: TRUE", {At(doc, "TRUE")});
}

TEST(ValuesOfCorrectType, IdFromFloat) {
  const std::string doc = "{ args(id: 1.5) }";
  ExpectOnlyError(doc, "ID cannot represent a non-string and non-integer value: 1.5", {At(doc, "1.5")});
}

TEST(ValuesOfCorrectType, EnumFromString) {
  const std::string doc = "{ args(color: \"RED\") }";
  ExpectOnlyError(doc, "Enum \"Color\" cannot represent non-enum value: \"RED\". Did you mean the enum value \"RED\" or \"GREEN\"?",
                  {At(doc, "\"RED\"")});
}

TEST(ValuesOfCorrectType, UnknownEnumValue) {
  const std::string doc = "{ args(color: red) }";
  ExpectOnlyError(doc, "Value \"red\" does not exist in \"Color\" enum. Did you mean the enum value \"RED\"?",
                  {At(doc, "red")});
  const std::string far = "{ args(color: PURPLE) }";
  ExpectOnlyError(far, "Value \"PURPLE\" does not exist in \"Color\" enum.", {At(far, "PURPLE")});
}

TEST(ValuesOfCorrectType, NullForNonNull) {
  const std::string doc = "{ nonNull(int: null) }";
  ExpectOnlyError(doc, "Expected value of type \"Int!\", found null.", {At(doc, "null")});
}

TEST(ValuesOfCorrectType, NullListItemForNonNullItems) {
  const std::string doc = "{ nonNull(int: 1, ints: [1, null]) }";
  ExpectOnlyError(doc, "Expected value of type \"Int!\", found null.", {At(doc, "null")});
}

TEST(ValuesOfCorrectType, BadListItem) {
  const std::string doc = "{ args(ints: [1, \"2\", 3]) }";
  ExpectOnlyError(doc, "Int cannot represent non-integer value: \"2\"", {At(doc, "\"2\"")});
}

TEST(ValuesOfCorrectType, ListWhereAScalarIsExpectedIsReportedWhole) {
  const std::string doc = "{ args(int: [1, \"x\"]) }";
  ExpectOnlyError(doc, "Int cannot represent non-integer value: [1, \"x\"]", {At(doc, "[")});
}

TEST(ValuesOfCorrectType, ObjectWhereAScalarIsExpected) {
  const std::string doc = "{ args(int: {a: 1, b: \"c\"}) }";
  ExpectOnlyError(doc, "Int cannot represent non-integer value: {a: 1, b: \"c\"}", {At(doc, "{a")});
}

TEST(ValuesOfCorrectType, ScalarWhereAnInputObjectIsExpected) {
  const std::string doc = "{ search(filter: 1) { name } }";
  ExpectOnlyError(doc, "Expected value of type \"Filter!\", found 1.", {At(doc, "1")});
}

TEST(ValuesOfCorrectType, NestedInputObjectFields) {
  const std::string doc = "{ search(filter: {limit: 1, nested: {limit: \"x\"}, tags: [\"a\", 2]}) { name } }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "Int cannot represent non-integer value: \"x\"");
  EXPECT_EQ(errors[0].locations, (std::vector<Location>{At(doc, "\"x\"")}));
  EXPECT_EQ(errors[1].message, "String cannot represent a non string value: 2");
}

TEST(ValuesOfCorrectType, CustomScalarAcceptsAnyLiteralWithoutCodec) {
  ExpectValid("{ a: args(json: 1) b: args(json: \"x\") c: args(json: [ENUM, {deep: [null]}]) d: args(json: null) }");
}

TEST(ValuesOfCorrectType, CustomScalarCodecRejects) {
  const std::string doc = "{ args(when: 12) }";
  ExpectOnlyError(doc, "Expected value of type \"DateTime\", found 12.", {At(doc, "12")});
}

TEST(ValuesOfCorrectType, CustomScalarCodecThrows) {
  const std::string doc = "{ args(when: \"yesterday\") }";
  ExpectOnlyError(doc, "Expected value of type \"DateTime\", found \"yesterday\"; not an RFC 3339 date-time",
                  {At(doc, "\"yesterday\"")});
}

TEST(ValuesOfCorrectType, VariableDefaultValues) {
  ExpectValid("query Q($i: Int = 1, $c: Color = RED, $f: Filter = {limit: 2}) { args(int: $i, color: $c) "
              "search(filter: $f) { name } }");
  const std::string doc = "query Q($i: Int = \"x\") { args(int: $i) }";
  ExpectOnlyError(doc, "Int cannot represent non-integer value: \"x\"", {At(doc, "\"x\"")});
  const std::string nn = "query Q($i: Int! = null) { args(int: $i) }";
  ExpectOnlyError(nn, "Expected value of type \"Int!\", found null.", {At(nn, "null")});
}

TEST(ValuesOfCorrectType, DirectiveArguments) {
  const std::string doc = "{ dog @include(if: \"yes\") { name } }";
  ExpectOnlyError(doc, "Boolean cannot represent a non boolean value: \"yes\"", {At(doc, "\"yes\"")});
}

TEST(ValuesOfCorrectType, UnknownArgumentValuesAreNotTypeChecked) {
  const std::string doc = "{ args(nope: {x: [1, \"a\"]}) }";
  ExpectOnlyError(doc, "Unknown argument \"nope\" on field \"Query.args\".", {At(doc, "nope")});
}

TEST(InputObjectRequiredFields, AllRequiredFieldsProvidedOrDefaulted) {
  ExpectValid("{ search(filter: {limit: 1}) { name } args(point: {x: 1, y: 2}) }");
}

TEST(InputObjectRequiredFields, MissingRequiredField) {
  const std::string doc = "{ search(filter: {color: RED}) { name } }";
  ExpectOnlyError(doc, "Field \"Filter.limit\" of required type \"Int!\" was not provided.", {At(doc, "{color")});
}

TEST(InputObjectRequiredFields, NullForRequiredField) {
  const std::string doc = "{ args(point: {x: 1, y: null}) }";
  ExpectOnlyError(doc, "Expected value of type \"Float!\", found null.", {At(doc, "null")});
}

TEST(InputObjectRequiredFields, InsideListsAndNestedObjects) {
  const std::string doc = "{ args(filters: [{limit: 1}, {color: RED}]) search(filter: {limit: 1, nested: {}}) { name } }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "Field \"Filter.limit\" of required type \"Int!\" was not provided.");
  EXPECT_EQ(errors[0].locations, (std::vector<Location>{At(doc, "{color")}));
  EXPECT_EQ(errors[1].locations, (std::vector<Location>{At(doc, "{}")}));
}

TEST(InputObjectFieldNames, KnownFields) { ExpectValid("{ search(filter: {limit: 1, tags: [\"a\"], size: LARGE}) { name } }"); }

TEST(InputObjectFieldNames, UnknownFieldWithSuggestion) {
  const std::string doc = "{ search(filter: {limit: 1, colour: RED}) { name } }";
  ExpectOnlyError(doc, "Field \"colour\" is not defined by type \"Filter\". Did you mean \"color\"?", {At(doc, "colour")});
}

TEST(InputObjectFieldNames, UnknownFieldInNestedObject) {
  const std::string doc = "{ args(point: {x: 1, y: 2, z: 3}) }";
  ExpectOnlyError(doc, "Field \"z\" is not defined by type \"Point\". Did you mean \"x\" or \"y\"?", {At(doc, "z:")});
}

TEST(UniqueInputFieldNames, SameNamesInDifferentObjects) {
  ExpectValid("{ search(filter: {limit: 1, nested: {limit: 2, nested: {limit: 3}}}) { name } }");
}

TEST(UniqueInputFieldNames, RepeatedField) {
  const std::string doc = "{ search(filter: {limit: 1, limit: 2}) { name } }";
  ExpectOnlyError(doc, "There can be only one input field named \"limit\".", {At(doc, "limit"), At(doc, "limit", 2)});
}

TEST(UniqueInputFieldNames, RepeatedFieldInsideACustomScalar) {
  const std::string doc = "{ args(json: {a: 1, a: 2}) }";
  ExpectOnlyError(doc, "There can be only one input field named \"a\".", {At(doc, "a:"), At(doc, "a:", 2)});
}

// ---- 5.7 directives ------------------------------------------------------------------------------------

TEST(KnownDirectives, DirectivesInTheirLocations) {
  ExpectValid(
      "query Q($v: Int @onVariable) @onQuery @tag(name: \"q\") { args(int: $v) dog @skip(if: false) { ...F @tag(name: "
      "\"s\") ... @include(if: true) { name } } }\nfragment F on Dog @onFragment { name }\n"
      "mutation M @onMutation { setColor(color: RED) }\nsubscription S @onSubscription { ticks }");
}

TEST(KnownDirectives, UnknownDirective) {
  const std::string doc = "{ dog @unknown { name } }";
  ExpectOnlyError(doc, "Unknown directive \"@unknown\".", {At(doc, "@unknown")});
}

TEST(KnownDirectives, MisplacedDirectives) {
  const std::string doc = "query Q @include(if: true) { dog { name } }";
  ExpectOnlyError(doc, "Directive \"@include\" may not be used on QUERY.", {At(doc, "@include")});
  const std::string f = "{ dog { ...F } }\nfragment F on Dog @onQuery { name }";
  ExpectOnlyError(f, "Directive \"@onQuery\" may not be used on FRAGMENT_DEFINITION.", {At(f, "@onQuery")});
  const std::string d = "{ dog { name @deprecated } }";
  ExpectOnlyError(d, "Directive \"@deprecated\" may not be used on FIELD.", {At(d, "@deprecated")});
  const std::string s = "subscription @onQuery { ticks }";
  ExpectOnlyError(s, "Directive \"@onQuery\" may not be used on SUBSCRIPTION.", {At(s, "@onQuery")});
  const std::string v = "query Q($v: Int @onQuery) { args(int: $v) }";
  ExpectOnlyError(v, "Directive \"@onQuery\" may not be used on VARIABLE_DEFINITION.", {At(v, "@onQuery")});
}

TEST(UniqueDirectivesPerLocation, RepeatableAndSpreadOverLocations) {
  ExpectValid("{ dog @skip(if: false) { name @skip(if: false) @tag(name: \"a\") @tag(name: \"b\") } }");
}

TEST(UniqueDirectivesPerLocation, RepeatedDirective) {
  const std::string doc = "{ dog @skip(if: false) @skip(if: true) { name } }";
  ExpectOnlyError(doc, "The directive \"@skip\" can only be used once at this location.",
                  {At(doc, "@skip"), At(doc, "@skip", 2)});
}

TEST(UniqueDirectivesPerLocation, RepeatedOnOperationAndFragmentSpread) {
  const std::string doc = "query Q @onQuery @onQuery { dog { ...F @include(if: true) @include(if: true) } }\n"
                          "fragment F on Dog { name }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "The directive \"@onQuery\" can only be used once at this location.");
  EXPECT_EQ(errors[1].message, "The directive \"@include\" can only be used once at this location.");
}

// ---- 5.8 variables -------------------------------------------------------------------------------------

TEST(UniqueVariableNames, DistinctNames) { ExpectValid("query Q($a: Int, $b: Int) { args(int: $a, withDefault: $b) }"); }

TEST(UniqueVariableNames, RepeatedName) {
  const std::string doc = "query Q($a: Int, $a: Int) { args(int: $a) }";
  ExpectOnlyError(doc, "There can be only one variable named \"$a\".", {At(doc, "a:"), At(doc, "a:", 2)});
}

TEST(VariablesAreInputTypes, ScalarsEnumsAndInputObjects) {
  ExpectValid("query Q($a: Int, $b: [Int!], $c: Filter!, $e: Color) { args(int: $a, ints: $b, color: $e) "
              "search(filter: $c) { name } }");
}

TEST(VariablesAreInputTypes, ObjectTypeVariable) {
  const std::string doc = "query Q($d: Dog, $l: [Pet!]!) { dog { name } }";
  ExpectError(doc, "Variable \"$d\" cannot be non-input type \"Dog\".", {At(doc, "Dog")});
  const auto errors = Validate(doc);
  ASSERT_GE(errors.size(), 2u);
  EXPECT_EQ(errors[1].message, "Variable \"$l\" cannot be non-input type \"[Pet!]!\".");
  EXPECT_EQ(errors[1].locations, (std::vector<Location>{At(doc, "[Pet")}));
}

TEST(NoUndefinedVariables, DefinedDirectlyAndThroughFragments) {
  ExpectValid("query Q($a: Int, $b: Boolean!) { ...F dog @include(if: $b) { name } }\n"
              "fragment F on Query { args(int: $a) }");
}

TEST(NoUndefinedVariables, UndefinedInNamedOperation) {
  const std::string doc = "query Q { args(int: $x) }";
  ExpectOnlyError(doc, "Variable \"$x\" is not defined by operation \"Q\".", {At(doc, "$x"), At(doc, "query")});
}

TEST(NoUndefinedVariables, UndefinedInAnonymousOperation) {
  const std::string doc = "{ args(int: $x) }";
  ExpectOnlyError(doc, "Variable \"$x\" is not defined.", {At(doc, "$x"), {1, 1}});
}

TEST(NoUndefinedVariables, UndefinedThroughFragmentPerOperation) {
  const std::string doc = "query A($a: Int) { ...F }\nquery B { ...F }\nfragment F on Query { args(int: $a) }";
  ExpectOnlyError(doc, "Variable \"$a\" is not defined by operation \"B\".", {At(doc, "$a)"), {2, 1}});
}

TEST(NoUnusedVariables, UsedDirectlyAndThroughNestedFragments) {
  ExpectValid("query Q($a: Int) { dog { ...F } }\nfragment F on Dog { owner { ...G } }\n"
              "fragment G on Human { relatives(first: $a) { name } r2: relatives(first: 1) @skip(if: false) { ...H } }\n"
              "fragment H on Human { id ... on Human { name } n: name @tag(name: \"x\") }\n"
              "query R($b: [Int]) { args(ints: $b) }");
}

TEST(NoUnusedVariables, UnusedInNamedOperation) {
  const std::string doc = "query Q($a: Int, $b: Int) { args(int: $a) }";
  ExpectOnlyError(doc, "Variable \"$b\" is never used in operation \"Q\".", {At(doc, "$b")});
}

TEST(NoUnusedVariables, UnusedInAnonymousOperation) {
  const std::string doc = "query ($a: Int) { dog { name } }";
  ExpectOnlyError(doc, "Variable \"$a\" is never used.", {At(doc, "$a")});
}

TEST(VariablesInAllowedPosition, CompatibleTypes) {
  ExpectValid(
      "query Q($i: Int!, $n: Int, $d: Int = 1, $l: [Int!], $b: Boolean!, $f: Filter!, $lim: Int!) { nonNull(int: $i, "
      "ints: [$i]) args(int: $i, withDefault: $n, ints: $l) multipleReqs(req1: $d, req2: $i) "
      "dog @include(if: $b) { name } search(filter: $f) { name } s2: search(filter: {limit: $lim, offset: $n}) { name "
      "} }");
}

TEST(VariablesInAllowedPosition, NullableIntoNonNull) {
  const std::string doc = "query Q($i: Int) { nonNull(int: $i) }";
  ExpectOnlyError(doc, "Variable \"$i\" of type \"Int\" used in position expecting type \"Int!\".",
                  {At(doc, "$i"), At(doc, "$i", 2)});
}

TEST(VariablesInAllowedPosition, NullDefaultDoesNotHelp) {
  const std::string doc = "query Q($i: Int = null) { nonNull(int: $i) }";
  ExpectOnlyError(doc, "Variable \"$i\" of type \"Int\" used in position expecting type \"Int!\".",
                  {At(doc, "$i"), At(doc, "$i", 2)});
}

TEST(VariablesInAllowedPosition, WrongNamedOrListType) {
  const std::string doc = "query Q($s: String) { args(ints: $s) }";
  ExpectOnlyError(doc, "Variable \"$s\" of type \"String\" used in position expecting type \"[Int]\".",
                  {At(doc, "$s"), At(doc, "$s", 2)});
  const std::string l = "query Q($l: [Int]) { args(int: $l) }";
  ExpectOnlyError(l, "Variable \"$l\" of type \"[Int]\" used in position expecting type \"Int\".",
                  {At(l, "$l"), At(l, "$l", 2)});
}

TEST(VariablesInAllowedPosition, InputObjectFieldAndDirective) {
  const std::string doc = "query Q($l: Int, $b: Boolean) { search(filter: {limit: $l}) { name @skip(if: $b) } }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 2u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "Variable \"$l\" of type \"Int\" used in position expecting type \"Int!\".");
  EXPECT_EQ(errors[1].message, "Variable \"$b\" of type \"Boolean\" used in position expecting type \"Boolean!\".");
  EXPECT_EQ(errors[1].locations, (std::vector<Location>{At(doc, "$b"), At(doc, "$b", 2)}));
}

TEST(VariablesInAllowedPosition, ThroughFragments) {
  const std::string doc = "query Q($c: Color) { args(color: $c) ...G }\n"
                          "fragment G on Query { setColor: args(color: $c) }\n"
                          "query R($c: String) { ...G }";
  ExpectOnlyError(doc, "Variable \"$c\" of type \"String\" used in position expecting type \"Color\".",
                  {At(doc, "$c", 4), At(doc, "$c", 3)});
}

// ---- the whole -----------------------------------------------------------------------------------------

TEST(Validate, RichValidDocument) {
  ExpectValid(R"(
    query Everything($id: ID!, $withOwner: Boolean = true, $filter: Filter = {limit: 10}, $when: DateTime) @onQuery {
      human(id: $id) { ...HumanFields relatives(first: 2) { name } }
      search(filter: $filter) {
        __typename
        ... on Human { name iq }
        ... on Alien { name numEyes }
        ... on Pet { nickname }
      }
      pet { name ... on Dog { owner @include(if: $withOwner) { ...HumanFields } doesKnowCommand(command: HEEL) } }
      args(when: $when, json: {anything: [1, true]})
      __schema { types { name kind } }
    }
    fragment HumanFields on Human { id name friends { name } }
    mutation Adopt { createDog(name: "Rex") { id ... on Named { name } } }
  )");
}

TEST(Validate, ErrorsComeInDocumentOrderWithCodes) {
  const std::string doc = "{ dog { nme } }\nquery Q { cat { meow } }";
  const auto errors = Validate(doc);
  ASSERT_EQ(errors.size(), 3u) << Messages(errors);
  EXPECT_EQ(errors[0].message, "This anonymous operation must be the only defined operation.");
  EXPECT_EQ(errors[1].message, "Cannot query field \"nme\" on type \"Dog\". Did you mean \"name\"?");
  EXPECT_EQ(errors[2].message, "Cannot query field \"meow\" on type \"Cat\". Did you mean \"meows\"?");
  for (const auto& e : errors) EXPECT_EQ(e.code, "GRAPHQL_VALIDATION_FAILED");
  EXPECT_EQ(errors[2].to_json(),
            "{\"message\":\"Cannot query field \\\"meow\\\" on type \\\"Cat\\\". Did you mean \\\"meows\\\"?\","
            "\"locations\":[{\"line\":2,\"column\":17}],\"extensions\":{\"code\":\"GRAPHQL_VALIDATION_FAILED\"}}");
}

TEST(Validate, ErrorLimitAbortsWithAFinalError) {
  std::string doc = "{ dog {";
  for (int i = 0; i < 10; ++i) doc += " unknown" + std::to_string(i);
  doc += " } }";
  ValidationOptions options;
  options.max_errors = 3;
  const auto errors = Validate(doc, options);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[2].message, "Cannot query field \"unknown2\" on type \"Dog\".");
  EXPECT_EQ(errors[3].message, "Too many validation errors, error limit reached. Validation aborted.");
  EXPECT_TRUE(errors[3].locations.empty());
  EXPECT_EQ(Validate(doc).size(), 10u);
}

TEST(Validate, MissingRootTypesLeaveOperationsUnchecked) {
  SchemaResult r = Schema::from_sdl("type Query { a: Int }");
  ASSERT_TRUE(r.ok());
  ParseResult parsed = parse("mutation { anything { goes } }");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(validate(*r.schema, *parsed.document).empty());
}

}  // namespace
}  // namespace cutoff::graphql
