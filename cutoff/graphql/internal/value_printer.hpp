// The GraphQL text of a value literal, as graphql-js's print() writes it: `{a: 1, b: "x"}`,
// `[1, 2]`, strings in double quotes with graphql-js's escapes (`"a\"b\u0007"`), block strings
// as block strings, enum values bare, variables as `$name`. It is the one printer of literals:
// schema errors, validation errors and execution errors show a literal the same way
// (print_literal in schema.hpp is this printer), and, with sorted fields, it is the key under
// which two literals compare equal.
//
//   std::string text;
//   internal::append_literal(text, value);                            // {b: 2, a: "x"}
//   internal::append_literal(text, value, {.sorted_fields = true});   // {a: "x", b: 2}
#ifndef CUTOFF_GRAPHQL_INTERNAL_VALUE_PRINTER_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_VALUE_PRINTER_HPP_

#include <string>

#include "cutoff/graphql/ast.hpp"

namespace cutoff::graphql::internal {

struct LiteralStyle {
  // Object fields in the natural order of their names, at every level (graphql-js's
  // sortValueNode), so that literals that differ only in field order print alike.
  bool sorted_fields = false;
  // Block strings as block strings, as written. Off: as ordinary strings, as graphql-js's
  // introspection shows a default value (it prints the value, in which no string is a block).
  bool block_strings = true;
};

// Appends the text of `v` to `out`.
void append_literal(std::string& out, const Value& v, LiteralStyle style = {});

// The text of `v`.
std::string literal_text(const Value& v, LiteralStyle style = {});

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_VALUE_PRINTER_HPP_
