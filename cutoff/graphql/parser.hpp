// Parsing GraphQL documents: operations, fragments and the type-system language (SDL).
//
//   auto r = cutoff::graphql::parse("query Q($id: ID!) { item(id: $id) { name } }");
//   if (!r.ok()) {
//     // r.error->message == "Syntax Error: ...", r.error->locations == {{line, column}}
//   }
//
// A hand-written recursive-descent parser over an on-the-fly lexer. Bad input is an error
// with a location, never a crash: nesting deeper than `max_depth` and documents with more
// than `max_tokens` tokens are rejected with a clear message.
#ifndef CUTOFF_GRAPHQL_PARSER_HPP_
#define CUTOFF_GRAPHQL_PARSER_HPP_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/error.hpp"

namespace cutoff::graphql {

struct ParseOptions {
  std::size_t max_depth = 128;       // selection sets, list/object values, list types
  std::size_t max_tokens = 250'000;  // bounds work per document
};

struct ParseResult {
  std::unique_ptr<Document> document;  // null on error
  std::optional<GraphQLError> error;
  bool ok() const noexcept { return document != nullptr; }
};

ParseResult parse(std::string source, const ParseOptions& options = {});

// The decoded value of a block string's raw contents (the spec's BlockStringValue()).
std::string block_string_value(std::string_view raw);

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_PARSER_HPP_
