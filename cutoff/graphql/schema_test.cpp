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
