#include "cutoff/graphql/internal/value_printer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "cutoff/graphql/parser.hpp"
#include "cutoff/graphql/schema.hpp"
#include "cutoff/graphql/validation.hpp"

namespace cutoff::graphql::internal {
namespace {

// The literal `text` as the argument of `{ f(n: ...) }`, printed. The document must outlive
// the Value, so the text is printed here.
std::string Printed(const std::string& text, LiteralStyle style = {}) {
  ParseResult r = parse("{ f(n: " + text + ") }");
  EXPECT_TRUE(r.ok()) << text << ": " << (r.error ? r.error->message : "");
  if (!r.ok()) return {};
  return literal_text(r.document->operations[0].selection_set[0].arguments[0].value, style);
}

// Each expectation is what graphql-js 16's print(parseValue(text)) gives.
TEST(ValuePrinter, PrintsAsGraphqlJsPrints) {
  EXPECT_EQ(Printed("{b: 1, a: \"x\"}"), "{b: 1, a: \"x\"}");
  EXPECT_EQ(Printed("[1,2]"), "[1, 2]");
  EXPECT_EQ(Printed("[ENUM, $v, null, true, -1.5e3]"), "[ENUM, $v, null, true, -1.5e3]");
  EXPECT_EQ(Printed(R"("a\"b\\c\n\t\b\f\r")"), R"("a\"b\\c\n\t\b\f\r")");
  // Controls as \u00XX in upper-case hex: C0 (but the named ones), DEL and C1.
  EXPECT_EQ(Printed(R"("\u0001\u000b\u001f\u007f\u0085\u009f\u00a0é")"),
            "\"\\u0001\\u000B\\u001F\\u007F\\u0085\\u009F\u00a0é\"");
}

TEST(ValuePrinter, PrintsBlockStringsAsGraphqlJsPrintsThem) {
  EXPECT_EQ(Printed(R"("""block""")"), R"("""block""")");
  EXPECT_EQ(Printed("\"\"\"a\nb\"\"\""), "\"\"\"\na\nb\n\"\"\"");
  EXPECT_EQ(Printed("\"\"\"x\n  y\"\"\""), "\"\"\"\nx\ny\n\"\"\"");
  EXPECT_EQ(Printed(R"("""  lead""")"), R"("""  lead""")");
  EXPECT_EQ(Printed("\"\"\"say \"hi\"\n\"\"\""), "\"\"\"\nsay \"hi\"\n\"\"\"");
  EXPECT_EQ(Printed("\"\"\"slash\\\n\"\"\""), "\"\"\"\nslash\\\n\"\"\"");
  EXPECT_EQ(Printed(R"("""has \""" inside""")"), R"("""has \""" inside""")");
  EXPECT_EQ(Printed(R"("""\"""""")"), "\"\"\"\n\\\"\"\"\n\"\"\"");
  EXPECT_EQ(Printed(R"("""""")"), R"("""""")");
  const std::string long_line(71, 'x');
  EXPECT_EQ(Printed("\"\"\"" + long_line + "\"\"\""), "\"\"\"\n" + long_line + "\n\"\"\"");
  // As ordinary strings, for introspection's default values.
  EXPECT_EQ(Printed("\"\"\"a\nb\"\"\"", {.block_strings = false}), R"("a\nb")");
}

TEST(ValuePrinter, SortsFieldsInNaturalOrderAtEveryLevel) {
  EXPECT_EQ(Printed("{f10: 1, f2: {b: 1, a: 2}, a: [{d: 1, c: 2}]}", {.sorted_fields = true}),
            "{a: [{c: 2, d: 1}], f2: {a: 2, b: 1}, f10: 1}");
}

// The message each of the two checks gives `literal` where an Int is expected.
std::string SchemaError(const std::string& literal) {
  SchemaResult r =
      Schema::from_sdl("directive @d(n: Int) on FIELD_DEFINITION\ntype Query { f: Int @d(n: " + literal + ") }");
  EXPECT_EQ(r.errors.size(), 1u) << literal;
  return r.errors.empty() ? std::string() : r.errors[0].message;
}

std::string ValidationError(const std::string& literal) {
  SchemaResult built = Schema::from_sdl("type Query { f(n: Int): Int }");
  ParseResult doc = parse("{ f(n: " + literal + ") }");
  if (!built.ok() || !doc.ok()) return "(no schema or document)";
  std::vector<GraphQLError> errors = validate(*built.schema, *doc.document);
  EXPECT_EQ(errors.size(), 1u) << literal;
  return errors.empty() ? std::string() : errors[0].message;
}

TEST(ValuePrinter, ALiteralReadsTheSameInSchemaAndValidationErrors) {
  // What graphql-js's validate() says of each.
  const std::pair<std::string, std::string> cases[] = {
      {R"("a\u0007\"b")", R"(Int cannot represent non-integer value: "a\u0007\"b")"},
      {"\"\"\"x\n  y\"\"\"", "Int cannot represent non-integer value: \"\"\"\nx\ny\n\"\"\""},
      {R"({b: 1, a: "\u007f"})", R"(Int cannot represent non-integer value: {b: 1, a: "\u007F"})"},
      {R"([1, "x"])", R"(Int cannot represent non-integer value: [1, "x"])"},
      {"RED", "Int cannot represent non-integer value: RED"},
  };
  for (const auto& [literal, message] : cases) {
    EXPECT_EQ(SchemaError(literal), message) << literal;
    EXPECT_EQ(ValidationError(literal), message) << literal;
  }
}

TEST(ValuePrinter, IntrospectionShowsDefaultsAsGraphqlJsDoes) {
  SchemaResult r =
      Schema::from_sdl("type Query { f(s: String = \"\"\"a\nb\"\"\", t: String = \"x\\u007f\\u000b\"): Int }");
  ASSERT_TRUE(r.ok());
  const Field* f = r.schema->query_type()->find_field("f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->args[0].default_value_text, R"("a\nb")");
  EXPECT_EQ(f->args[1].default_value_text, R"("x\u007F\u000B")");
}

}  // namespace
}  // namespace cutoff::graphql::internal
