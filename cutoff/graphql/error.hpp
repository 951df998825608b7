// GraphQL errors as the response shows them: message, locations, path, extensions.code.
//
//   GraphQLError e{"Cannot query field \"nme\" on type \"Item\".", {{1, 9}}};
//   std::string json = e.to_json();  // {"message":"...","locations":[{"line":1,"column":9}]}
#ifndef CUTOFF_GRAPHQL_ERROR_HPP_
#define CUTOFF_GRAPHQL_ERROR_HPP_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "cutoff/core/json_text.hpp"
#include "cutoff/graphql/ast.hpp"

namespace cutoff::graphql {

// One step of a response path: a field's response key or a list index.
using PathSegment = std::variant<std::string, std::int64_t>;

struct GraphQLError {
  std::string message;
  std::vector<Location> locations;
  std::vector<PathSegment> path;  // empty: not tied to a field
  std::string code;               // extensions.code; empty: none

  // {"message":..,"locations":[..],"path":[..],"extensions":{"code":..}}, members omitted when empty.
  std::string to_json() const;
  void append_json(std::string& out) const;
};

using cutoff::append_json_string;

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_ERROR_HPP_
