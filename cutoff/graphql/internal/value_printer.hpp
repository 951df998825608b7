// The GraphQL text of a value literal, as graphql-js's print() writes it: `{a: 1, b: "x"}`,
// `[1, 2]`, strings in double quotes with graphql-js's escapes, enum values bare, variables as
// `$name`. Error messages show literals with it; sorted, it is also the key under which two
// literals compare equal.
//
//   std::string text;
//   internal::append_literal(text, value);                        // {b: 2, a: "x"}
//   internal::append_literal(text, value, FieldOrder::sorted);    // {a: "x", b: 2}
#ifndef CUTOFF_GRAPHQL_INTERNAL_VALUE_PRINTER_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_VALUE_PRINTER_HPP_

#include <string>

#include "cutoff/graphql/ast.hpp"

namespace cutoff::graphql::internal {

enum class FieldOrder {
  as_written,
  sorted,  // object fields in the natural order of their names, at every level (graphql-js's sortValueNode)
};

// Appends the text of `v` to `out`.
void append_literal(std::string& out, const Value& v, FieldOrder order = FieldOrder::as_written);

// The text of `v`.
std::string literal_text(const Value& v, FieldOrder order = FieldOrder::as_written);

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_VALUE_PRINTER_HPP_
