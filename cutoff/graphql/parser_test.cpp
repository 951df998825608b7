#include "cutoff/graphql/parser.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace cutoff::graphql {
namespace {

// Time bounds catch super-linear blowups, which are orders of magnitude; unoptimised and
// sanitised builds run about ten times slower.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__OPTIMIZE__)
constexpr int kSlowdown = 10;
#else
constexpr int kSlowdown = 1;
#endif

std::unique_ptr<Document> Parse(const std::string& src) {
  ParseResult r = parse(src);
  EXPECT_TRUE(r.ok()) << (r.error ? r.error->message : "");
  return std::move(r.document);
}

GraphQLError ParseError(const std::string& src) {
  ParseResult r = parse(src);
  EXPECT_FALSE(r.ok()) << src;
  return r.error.value_or(GraphQLError{});
}

TEST(Parser, ShorthandQueryWithArgumentsAliasesAndDirectives) {
  auto doc = Parse("{ w: warehouse(id: \"w1\") @include(if: true) { id name } }");
  ASSERT_EQ(doc->operations.size(), 1u);
  const auto& op = doc->operations[0];
  EXPECT_EQ(op.type, OperationType::query);
  ASSERT_EQ(op.selection_set.size(), 1u);
  const Selection& f = op.selection_set[0];
  EXPECT_EQ(f.alias, "w");
  EXPECT_EQ(f.name, "warehouse");
  EXPECT_EQ(f.response_key(), "w");
  ASSERT_EQ(f.arguments.size(), 1u);
  EXPECT_EQ(f.arguments[0].value.kind, Value::Kind::string);
  EXPECT_EQ(f.arguments[0].value.string, "w1");
  ASSERT_EQ(f.directives.size(), 1u);
  EXPECT_EQ(f.directives[0].name, "include");
  EXPECT_EQ(f.selection_set.size(), 2u);
  EXPECT_EQ(f.loc, (Location{1, 3}));
}

TEST(Parser, OperationsVariablesFragments) {
  auto doc = Parse(R"(
    query Q($id: ID!, $first: Int = 10, $tags: [String!]) @op {
      item(id: $id) { ...Parts ... on Widget { size } ... @skip(if: false) { id } }
    }
    mutation M { reserve(qty: 1.5e3, mode: FAST, opts: {a: [1, 2], b: null}) }
    fragment Parts on Item { id }
  )");
  ASSERT_EQ(doc->operations.size(), 2u);
  const auto& q = doc->operations[0];
  EXPECT_EQ(q.name, "Q");
  ASSERT_EQ(q.variables.size(), 3u);
  EXPECT_EQ(q.variables[0].type.to_string(), "ID!");
  EXPECT_EQ(q.variables[1].default_value->raw, "10");
  EXPECT_EQ(q.variables[2].type.to_string(), "[String!]");
  EXPECT_EQ(q.variables[2].type.named_type(), "String");
  const auto& item = q.selection_set[0];
  ASSERT_EQ(item.selection_set.size(), 3u);
  EXPECT_EQ(item.selection_set[0].kind, Selection::Kind::fragment_spread);
  EXPECT_EQ(item.selection_set[1].kind, Selection::Kind::inline_fragment);
  EXPECT_EQ(item.selection_set[1].type_condition, "Widget");
  EXPECT_EQ(item.selection_set[2].type_condition, "");
  const auto& m = doc->operations[1];
  EXPECT_EQ(m.type, OperationType::mutation);
  const auto& args = m.selection_set[0].arguments;
  EXPECT_EQ(args[0].value.kind, Value::Kind::float_);
  EXPECT_EQ(args[1].value.kind, Value::Kind::enum_);
  EXPECT_EQ(args[2].value.kind, Value::Kind::object);
  EXPECT_EQ(args[2].value.fields[0].value.list.size(), 2u);
  EXPECT_EQ(args[2].value.fields[1].value.kind, Value::Kind::null);
  ASSERT_EQ(doc->fragments.size(), 1u);
  EXPECT_EQ(doc->fragments[0].type_condition, "Item");
}

TEST(Parser, RecordsWhereNamesAndTypeConditionsStart) {
  auto doc = Parse("query Q($ id: ID) { a: item { ...Parts ... on Widget { size } } }\nfragment Parts on Item { id }");
  const auto& op = doc->operations[0];
  EXPECT_EQ(op.name_loc, (Location{1, 7}));
  EXPECT_EQ(op.variables[0].loc, (Location{1, 9}));
  EXPECT_EQ(op.variables[0].name_loc, (Location{1, 11}));
  const Selection& item = op.selection_set[0];
  EXPECT_EQ(item.loc, (Location{1, 21}));
  EXPECT_EQ(item.name_loc, (Location{1, 24}));
  EXPECT_EQ(item.selection_set_loc, (Location{1, 29}));
  EXPECT_EQ(item.selection_set[0].name_loc, (Location{1, 34}));
  EXPECT_EQ(item.selection_set[1].type_condition_loc, (Location{1, 47}));
  EXPECT_EQ(item.selection_set[1].selection_set_loc, (Location{1, 54}));
  const auto& f = doc->fragments[0];
  EXPECT_EQ(f.name_loc, (Location{2, 10}));
  EXPECT_EQ(f.type_condition_loc, (Location{2, 19}));
}

TEST(Parser, StringEscapesAndBlockStrings) {
  auto doc = Parse(R"({ f(a: "tab\there \u00e9 \uD83D\uDE00 \u{1F600} \"q\"", b: """
      first
        indented
      last \""" done
  """) })");
  const auto& args = doc->operations[0].selection_set[0].arguments;
  EXPECT_EQ(args[0].value.string, "tab\there \xC3\xA9 \xF0\x9F\x98\x80 \xF0\x9F\x98\x80 \"q\"");
  EXPECT_EQ(args[1].value.string, "first\n  indented\nlast \"\"\" done");
  EXPECT_TRUE(args[1].value.block);
}

TEST(Parser, TypeSystemLanguage) {
  auto doc = Parse(R"(
    "The schema"
    schema { query: Query mutation: Mutation }
    """
    A warehouse.
    """
    type Warehouse implements Node & Named @key(fields: "id") {
      "its id" id: ID!
      bins(first: Int! = 10 @deprecated): [Bin!]!
      stockValuation: Float @budget(ms: 120)
    }
    interface Node { id: ID! }
    interface Named implements Node { id: ID! name: String }
    union Thing = | Warehouse | Bin
    enum Mode { FAST "slow" SLOW @deprecated(reason: "no") }
    input Filter { sku: String = "x", min: Int }
    scalar DateTime @specifiedBy(url: "https://example.com")
    directive @budget(ms: Int!) repeatable on FIELD_DEFINITION | FIELD
    extend type Warehouse { extra: Int }
    extend schema @tag
  )");
  EXPECT_EQ(doc->schemas.size(), 2u);
  EXPECT_EQ(doc->schemas[0].description, "The schema");
  EXPECT_EQ(doc->schemas[0].operation_types.size(), 2u);
  EXPECT_TRUE(doc->schemas[1].extension);
  ASSERT_EQ(doc->types.size(), 8u);
  const auto& w = doc->types[0];
  EXPECT_EQ(w.description, "A warehouse.");
  EXPECT_EQ(w.interfaces.size(), 2u);
  EXPECT_EQ(w.fields.size(), 3u);
  EXPECT_EQ(w.fields[0].description, "its id");
  EXPECT_EQ(w.fields[1].arguments[0].default_value->raw, "10");
  EXPECT_EQ(w.fields[2].directives[0].name, "budget");
  EXPECT_EQ(doc->types[3].members.size(), 2u);
  EXPECT_EQ(doc->types[4].values.size(), 2u);
  EXPECT_EQ(doc->types[4].values[1].description, "slow");
  EXPECT_EQ(doc->types[5].input_fields.size(), 2u);
  EXPECT_TRUE(doc->types[7].extension);
  ASSERT_EQ(doc->directives.size(), 1u);
  EXPECT_TRUE(doc->directives[0].repeatable);
  EXPECT_EQ(doc->directives[0].locations.size(), 2u);
  EXPECT_EQ(doc->type_system_locations.size(), 11u);
}

TEST(Parser, ErrorsHaveMessagesAndLocations) {
  GraphQLError e = ParseError("{ a(b: ) }");
  EXPECT_EQ(e.message, "Syntax Error: Unexpected \")\".");
  ASSERT_EQ(e.locations.size(), 1u);
  EXPECT_EQ(e.locations[0], (Location{1, 8}));
  e = ParseError("query {\n  a\n");
  EXPECT_EQ(e.message, "Syntax Error: Expected Name, found <EOF>.");
  EXPECT_EQ(e.locations[0].line, 3u);
  EXPECT_EQ(ParseError("").message, "Syntax Error: Unexpected <EOF>.");
  EXPECT_EQ(ParseError("{ a(x: 01) }").message, "Syntax Error: Invalid number, unexpected digit after 0: \"1\".");
  EXPECT_EQ(ParseError("{ a(x: 1.) }").message, "Syntax Error: Invalid number, expected digit but got: \")\".");
  EXPECT_EQ(ParseError("{ a(x: \"open) }").message, "Syntax Error: Unterminated string.");
  EXPECT_EQ(ParseError("{ a(x: \"\\q\") }").message, "Syntax Error: Invalid character escape sequence: \"\\q\".");
  EXPECT_EQ(ParseError("{ a(x: \"\\uD800\") }").message, "Syntax Error: Invalid Unicode escape sequence.");
  EXPECT_EQ(ParseError("{ a ? }").message, "Syntax Error: Unexpected character: \"?\".");
  EXPECT_EQ(ParseError("query Q($v: Int = $w) { a }").message,
            "Syntax Error: Unexpected variable \"$w\" in constant value.");
  EXPECT_EQ(ParseError("fragment on on T { a }").message, "Syntax Error: Unexpected Name \"on\".");
  EXPECT_EQ(ParseError("enum E { true }").message,
            "Syntax Error: Name \"true\" is reserved and cannot be used for an enum value.");
}

TEST(Parser, ColumnsCountUtf16UnitsLikeGraphqlJs) {
  GraphQLError e = ParseError("{ a(x: \"\xF0\x9F\x98\x80\") ? }");  // an emoji is two UTF-16 units
  EXPECT_EQ(e.locations[0], (Location{1, 14}));
}

TEST(Parser, DeepNestingIsRejectedNotACrash) {
  std::string deep(100000, '[');
  GraphQLError e = ParseError("{ a(x: " + deep + ") }");
  EXPECT_NE(e.message.find("nested too deeply"), std::string::npos);
  std::string sel;
  for (int i = 0; i < 1000; ++i) sel += "{ a ";
  EXPECT_NE(ParseError(sel).message.find("nested too deeply"), std::string::npos);
}

TEST(Parser, TokenLimit) {
  std::string many = "{";
  for (int i = 0; i < 1000; ++i) many += " a";
  many += " }";
  ParseOptions small;
  small.max_tokens = 100;
  ParseResult r = parse(many, small);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error->message.find("too large"), std::string::npos);
}

TEST(Parser, OneLongLineParsesInLinearTime) {
  std::string doc = "{";
  while (doc.size() < 2 * 1024 * 1024) doc += " field";
  doc += " ? }";
  ParseOptions options;
  options.max_tokens = 1'000'000;
  const auto start = std::chrono::steady_clock::now();
  ParseResult r = parse(doc, options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(kSlowdown));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->locations[0], (Location{1, static_cast<std::uint32_t>(doc.size() - 2)}));
}

TEST(Parser, DocumentsMoveWithoutDanglingNames) {
  ParseResult r = parse("{ a }");  // a short source: would live inside std::string's SSO buffer
  auto moved = std::move(r.document);
  Document other = std::move(*moved);
  EXPECT_EQ(other.operations[0].selection_set[0].name, "a");
}

}  // namespace
}  // namespace cutoff::graphql
