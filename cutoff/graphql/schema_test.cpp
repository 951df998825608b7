#include "cutoff/graphql/schema.hpp"

#include <gtest/gtest.h>

namespace cutoff::graphql {
namespace {

constexpr const char* kSdl = R"(
  "Warehouse API"
  schema { query: Query mutation: Mutation }
  type Query { warehouse(id: ID!): Warehouse node(id: ID!): Node things: [Thing!]! }
  type Mutation { reserve(sku: String!, qty: Int = 1): Boolean }
  interface Node { id: ID! }
  type Warehouse implements Node {
    id: ID!
    name: String!
    bins(first: Int! = 10, mode: Mode = FAST): [Bin!]!
    stockValuation: Float @budget(ms: 120)
    old: String @deprecated(reason: "use name")
  }
  type Bin implements Node { id: ID! sku: String! }
  union Thing = Warehouse | Bin
  enum Mode { FAST SLOW @deprecated }
  input Filter { sku: String = "x" min: Int }
  scalar DateTime @specifiedBy(url: "https://tools.ietf.org/html/rfc3339")
  extend type Bin { qty: Int }
)";

TEST(Schema, BuildsTypesFromSdl) {
  SchemaResult r = Schema::from_sdl(kSdl);
  ASSERT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0].message);
  const Schema& s = *r.schema;
  EXPECT_EQ(s.description(), "Warehouse API");
  ASSERT_NE(s.query_type(), nullptr);
  EXPECT_EQ(s.query_type()->name, "Query");
  EXPECT_EQ(s.mutation_type()->name, "Mutation");
  EXPECT_EQ(s.subscription_type(), nullptr);
  const Type* w = s.find_type("Warehouse");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->kind, TypeKind::object);
  const Field* bins = w->find_field("bins");
  ASSERT_NE(bins, nullptr);
  EXPECT_EQ(bins->type->display(), "[Bin!]!");
  EXPECT_EQ(bins->args[0].default_value_text, "10");
  EXPECT_EQ(bins->args[1].default_value->as_string(), "FAST");
  EXPECT_EQ(w->find_field("stockValuation")->budget, std::chrono::milliseconds(120));
  EXPECT_TRUE(w->find_field("old")->deprecated);
  EXPECT_EQ(w->find_field("old")->deprecation_reason, "use name");
  const Type* node = s.find_type("Node");
  EXPECT_EQ(node->possible_types.size(), 2u);
  EXPECT_TRUE(s.is_possible_type(*node, *w));
  EXPECT_EQ(s.find_type("Thing")->possible_types.size(), 2u);
  EXPECT_TRUE(s.find_type("Mode")->find_enum_value("SLOW")->deprecated);
  EXPECT_NE(s.find_type("Bin")->find_field("qty"), nullptr);  // from the extension
  EXPECT_EQ(s.find_type("DateTime")->specified_by_url, "https://tools.ietf.org/html/rfc3339");
  EXPECT_NE(s.find_type("__Schema"), nullptr);
  EXPECT_NE(s.find_directive("skip"), nullptr);
  EXPECT_NE(s.find_directive("budget"), nullptr);
  EXPECT_EQ(s.list_of(w), s.list_of(w));  // interned
}

TEST(Schema, ReportsErrors) {
  auto errors_of = [](const char* sdl) {
    SchemaResult r = Schema::from_sdl(sdl);
    EXPECT_FALSE(r.ok()) << sdl;
    return r.errors.empty() ? std::string() : r.errors[0].message;
  };
  EXPECT_EQ(errors_of("type Query { a: Missing }"), "Unknown type \"Missing\".");
  EXPECT_EQ(errors_of("type Query { a: Int } type Query { b: Int }"), "There can be only one type named \"Query\".");
  EXPECT_EQ(errors_of("type Foo { a: Int }"), "Query root type must be provided.");
  EXPECT_EQ(errors_of("interface I { a: Int } type Query implements I { b: Int }"),
            "Interface field I.a expected but Query does not provide it.");
  EXPECT_EQ(errors_of("input In { a: Int } type Query { a: In }"),
            "The type of Query.a must be Output Type but got: In.");
  EXPECT_EQ(errors_of("type Query { a: Int @budget(ms: 0) }"), "@budget(ms:) must be positive.");
  SchemaResult bad = Schema::from_sdl("type Query {\n  a: Int\n  b: ]\n}");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors[0].locations[0].line, 3u);  // in the caller's SDL, not the prelude
}

// The messages and locations of every error `sdl` gets.
std::vector<std::string> ErrorsOf(const std::string& sdl) {
  SchemaResult r = Schema::from_sdl(sdl);
  EXPECT_FALSE(r.ok()) << sdl;
  std::vector<std::string> out;
  for (const GraphQLError& e : r.errors) {
    std::string line = e.message;
    for (const Location& l : e.locations) line += " @" + std::to_string(l.line) + ":" + std::to_string(l.column);
    out.push_back(line);
  }
  return out;
}

using Errors = std::vector<std::string>;

TEST(SchemaDirectives, MalformedBudgetsAreErrorsNotMissingBudgets) {
  EXPECT_EQ(ErrorsOf("type Query {\n  a: Int @budget(msec: 3)\n}"),
            (Errors{"Unknown argument \"msec\" on directive \"@budget\". @2:18",
                    "Directive \"@budget\" argument \"ms\" of type \"Int!\" is required, but it was not provided. @2:10"}));
  EXPECT_EQ(ErrorsOf("type Query {\n  a: Int @budget(ms: \"x\")\n}"),
            (Errors{"Int cannot represent non-integer value: \"x\" @2:22"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int @budget }"),
            (Errors{"Directive \"@budget\" argument \"ms\" of type \"Int!\" is required, but it was not provided. @1:21"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int @budget(ms: null) }"),
            (Errors{"Expected non-nullable type \"Int!\" not to be null. @1:33"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int @budget(ms: 1.5) }"),
            (Errors{"Int cannot represent non-integer value: 1.5 @1:33"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int @budget(ms: -5) }"), (Errors{"@budget(ms:) must be positive. @1:33"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int @budget(ms: 3600001) }"),
            (Errors{"@budget(ms:) must be at most 3600000 (one hour): a per-field cap longer than that is a "
                    "mistake, not a budget. @1:33"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int @budget(ms: 99999999999) }"),
            (Errors{"Int cannot represent non 32-bit signed integer value: 99999999999 @1:33"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int @budget(ms: 5, ms: 6) }"),
            (Errors{"There can be only one argument named \"ms\". @1:29 @1:36"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int @budget(ms: 5) @budget(ms: 6) }"),
            (Errors{"The directive \"@budget\" can only be used once at this location. @1:21 @1:36"}));
  EXPECT_EQ(ErrorsOf("type Query @budget(ms: 5) { a: Int }"),
            (Errors{"Directive \"@budget\" may not be used on OBJECT. @1:12"}));
  EXPECT_EQ(ErrorsOf("type Query { a(x: Int @budget(ms: 5)): Int }"),
            (Errors{"Directive \"@budget\" may not be used on ARGUMENT_DEFINITION. @1:23"}));
  // The largest budget accepted is the one applied.
  SchemaResult ok = Schema::from_sdl("type Query { a: Int @budget(ms: 3600000) }");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.schema->query_type()->find_field("a")->budget, std::chrono::milliseconds(3600000));
}

TEST(SchemaDirectives, UnknownDirectivesAndArgumentsAreErrorsAtEveryLocation) {
  EXPECT_EQ(ErrorsOf("type Query { a: Int @nope }"), (Errors{"Unknown directive \"@nope\". @1:21"}));
  EXPECT_EQ(ErrorsOf("schema @nope { query: Query } type Query { a: Int }"), (Errors{"Unknown directive \"@nope\". @1:8"}));
  EXPECT_EQ(ErrorsOf("type Query { a: E } enum E @nope { X @nope }"),
            (Errors{"Unknown directive \"@nope\". @1:28", "Unknown directive \"@nope\". @1:38"}));
  EXPECT_EQ(ErrorsOf("type Query { a(x: In @nope): Int } input In { y: Int @nope }"),
            (Errors{"Unknown directive \"@nope\". @1:22", "Unknown directive \"@nope\". @1:54"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int }\nextend type Query @nope"), (Errors{"Unknown directive \"@nope\". @2:19"}));
  EXPECT_EQ(ErrorsOf("directive @d(x: Int @nope) on FIELD\ntype Query { a: Int }"),
            (Errors{"Unknown directive \"@nope\". @1:21"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int @deprecated(reason: 5) }"),
            (Errors{"String cannot represent a non string value: 5 @1:41"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int }\nscalar D @specifiedBy(uri: \"x\")"),
            (Errors{"Unknown argument \"uri\" on directive \"@specifiedBy\". @2:23",
                    "Directive \"@specifiedBy\" argument \"url\" of type \"String!\" is required, but it was not "
                    "provided. @2:10"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int @skip(if: true) }"),
            (Errors{"Directive \"@skip\" may not be used on FIELD_DEFINITION. @1:21"}));
  // Declared directives: their own arguments, locations and repeatability.
  EXPECT_EQ(ErrorsOf("directive @tag(name: String!) on OBJECT\ntype Query @tag(name: \"a\") { a: Int }\n"
                     "extend type Query @tag(name: \"b\")"),
            (Errors{"The directive \"@tag\" can only be used once at this location. @2:12 @3:19"}));
  EXPECT_TRUE(Schema::from_sdl("directive @tag(name: String!) repeatable on OBJECT | FIELD_DEFINITION\n"
                               "type Query @tag(name: \"a\") { a: Int @tag(name: \"x\") @tag(name: \"y\") }\n"
                               "extend type Query @tag(name: \"b\")")
                  .ok());
  EXPECT_EQ(ErrorsOf("directive @mode(m: Mode = FAST) on FIELD_DEFINITION\nenum Mode { FAST SLOW }\n"
                     "type Query { a: Int @mode(m: QUICK) b: Int @mode c: Int @mode(m: SLOW) }"),
            (Errors{"Value \"QUICK\" does not exist in \"Mode\" enum. @3:30"}));
}

TEST(SchemaRules, NamesBeginningWithTwoUnderscoresAreReserved) {
  EXPECT_EQ(ErrorsOf("type Query { __a: Int }"),
            (Errors{"Name \"__a\" must not begin with \"__\", which is reserved by GraphQL introspection. @1:14"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int }\ndirective @__mine on FIELD"),
            (Errors{"Name \"__mine\" must not begin with \"__\", which is reserved by GraphQL introspection. @2:1"}));
  EXPECT_EQ(ErrorsOf("type Query { a(__x: Int): Int }\ntype __Mine { a: Int }\nenum E { __V }\ninput I { __f: Int }"),
            (Errors{"Name \"__x\" must not begin with \"__\", which is reserved by GraphQL introspection. @1:16",
                    "Name \"__Mine\" must not begin with \"__\", which is reserved by GraphQL introspection. @2:1",
                    "Name \"__V\" must not begin with \"__\", which is reserved by GraphQL introspection. @3:10",
                    "Name \"__f\" must not begin with \"__\", which is reserved by GraphQL introspection. @4:11"}));
  EXPECT_TRUE(Schema::from_sdl("type Query { a_: Int _b: Int a__b: Int }").ok());  // only a leading "__"
}

TEST(SchemaRules, RequiredArgumentsAndInputFieldsCannotBeDeprecated) {
  EXPECT_EQ(ErrorsOf("type Query { a(x: Int! @deprecated): Int }"),
            (Errors{"Required argument Query.a(x:) cannot be deprecated. @1:24"}));
  EXPECT_EQ(ErrorsOf("type Query { a(x: I): Int }\ninput I { f: String! @deprecated(reason: \"use g\") g: Int }"),
            (Errors{"Required input field I.f cannot be deprecated. @2:22"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int }\ndirective @d(x: Int! @deprecated) on FIELD"),
            (Errors{"Required argument @d(x:) cannot be deprecated. @2:22"}));
  // Optional ones may be: nullable, or non-null with a default.
  EXPECT_TRUE(Schema::from_sdl("type Query { a(x: Int @deprecated, y: Int! = 1 @deprecated): Int }\n"
                               "input I { f: String @deprecated g: Int! = 2 @deprecated }")
                  .ok());
}

TEST(SchemaRules, ADirectiveMustNotReferenceItself) {
  EXPECT_EQ(ErrorsOf("type Query { a: Int }\ndirective @d(x: Int @d) on ARGUMENT_DEFINITION"),
            (Errors{"Directive \"@d\" must not reference itself. @2:1 @2:21"}));
  // Through another directive, and through an argument's input type and enum.
  EXPECT_EQ(ErrorsOf("type Query { a: Int }\n"
                     "directive @a(x: Int @b) on ARGUMENT_DEFINITION\n"
                     "directive @b(y: Int @a) on ARGUMENT_DEFINITION"),
            (Errors{"Directive \"@a\" must not reference itself. @2:1 @3:21",
                    "Directive \"@b\" must not reference itself. @3:1 @2:21"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int }\n"
                     "directive @d(x: Outer) on INPUT_FIELD_DEFINITION | ENUM_VALUE\n"
                     "input Outer { inner: [Inner!] }\ninput Inner { e: E }\nenum E { A B @d }"),
            (Errors{"Directive \"@d\" must not reference itself. @2:1 @5:14"}));
  // Uses elsewhere, and uses of other directives, are fine.
  EXPECT_TRUE(Schema::from_sdl("directive @d(x: In) on FIELD_DEFINITION | INPUT_FIELD_DEFINITION\n"
                               "input In { f: Int @deprecated }\ntype Query { a: Int @d }\ninput Other { g: Int @d }")
                  .ok());
}

TEST(SchemaDirectives, CostDirectivesAreKnownWhetherOrNotDeclared) {
  // Undeclared: the cost specification's arguments and locations.
  SchemaResult r = Schema::from_sdl(R"(
    type Query { a(first: Int @cost(weight: "2")): [Int] @listSize(slicingArguments: "first") @cost(weight: 3) }
    type T @cost(weight: 1.5) { x: Int }
    input In { y: Int @cost(weight: 1) }
    enum E @cost(weight: 1) { V }
    scalar S @cost(weight: 1)
  )");
  ASSERT_TRUE(r.ok()) << r.errors[0].message;
  EXPECT_EQ(r.schema->find_directive("cost"), nullptr);  // not added to what introspection lists
  EXPECT_EQ(ErrorsOf("type Query { a: I } interface I @cost(weight: 1) { x: Int }"),
            (Errors{"Directive \"@cost\" may not be used on INTERFACE. @1:33"}));
  EXPECT_EQ(ErrorsOf("type Query { a: Int @cost }"),
            (Errors{"Directive \"@cost\" argument \"weight\" of type \"String!\" is required, but it was not "
                    "provided. @1:21"}));
  EXPECT_EQ(ErrorsOf("type Query { a: [Int] @listSize(assumedSize: 2, limit: 3) }"),
            (Errors{"Unknown argument \"limit\" on directive \"@listSize\". @1:49"}));
  EXPECT_EQ(ErrorsOf("type Query { a: [Int] @listSize(sizedFields: 3) }"),
            (Errors{"String cannot represent a non string value: 3 @1:46"}));
  EXPECT_EQ(ErrorsOf("type Query { a: [Int] @listSize(requireOneSlicingArgument: 1) }"),
            (Errors{"Boolean cannot represent a non boolean value: 1 @1:60"}));
  EXPECT_EQ(ErrorsOf("type Query { a: [Int] @listSize(assumedSize: -1) }"),
            (Errors{"@listSize(assumedSize:) must be a non-negative Int. @1:46"}));
  EXPECT_EQ(ErrorsOf("enum E @listSize(assumedSize: 1) { V } type Query { a: E }"),
            (Errors{"Directive \"@listSize\" may not be used on ENUM. @1:8"}));
  // Declared by the schema (as the cost specification writes them): checked against that.
  SchemaResult declared = Schema::from_sdl(R"(
    directive @cost(weight: String!) on ARGUMENT_DEFINITION | ENUM | FIELD_DEFINITION | INPUT_FIELD_DEFINITION | OBJECT | SCALAR
    directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!],
                        requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
    type Query { a(first: Int): [Int] @listSize(slicingArguments: ["first"]) @cost(weight: "2") }
  )");
  ASSERT_TRUE(declared.ok()) << declared.errors[0].message;
  EXPECT_EQ(declared.schema->query_type()->find_field("a")->cost, 2.0);
  EXPECT_NE(declared.schema->find_directive("cost"), nullptr);
  EXPECT_EQ(ErrorsOf("directive @cost(weight: Int!) on FIELD_DEFINITION\ntype Query { a: Int @cost(weight: 2) }\n"
                     "type T @cost(weight: 1) { x: Int }")
                .at(0),
            "Directive \"@cost\" may not be used on OBJECT. @3:8");
}

TEST(Schema, RegistersResolvers) {
  SchemaResult r = Schema::from_sdl(kSdl);
  ASSERT_TRUE(r.ok());
  r.schema->resolve("Query", "warehouse", [](FieldContext&) { return Data::from("x"); });
  EXPECT_TRUE(static_cast<bool>(r.schema->find_type("Query")->find_field("warehouse")->sync));
  EXPECT_THROW(r.schema->resolve("Query", "nope", [](FieldContext&) { return Data(); }), std::invalid_argument);
  EXPECT_THROW(r.schema->resolve("Nope", "x", [](FieldContext&) { return Data(); }), std::invalid_argument);
}

}  // namespace
}  // namespace cutoff::graphql
