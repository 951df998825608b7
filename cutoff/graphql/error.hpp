// GraphQL errors as the response shows them: message, locations, path, extensions.code.
//
//   GraphQLError e{"Cannot query field \"nme\" on type \"Item\".", {{1, 9}}};
//   std::string json = e.to_json();  // {"message":"...","locations":[{"line":1,"column":9}]}
//
// An error that stands for a row of cutoff's taxonomy (a stop, commit_ambiguous, a
// cutoff::Error a resolver threw) carries its ErrorCode, so a transport picks its status from
// the error table instead of comparing strings:
//
//   GraphQLError e = GraphQLError::of(cutoff::ErrorCode::deadline_exceeded, "the time budget ran out");
//   int status = info(*e.error_code).http_status;  // 504; e.code == "DEADLINE_EXCEEDED"
#ifndef CUTOFF_GRAPHQL_ERROR_HPP_
#define CUTOFF_GRAPHQL_ERROR_HPP_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/core/json_text.hpp"
#include "cutoff/graphql/ast.hpp"

namespace cutoff::graphql {

// One step of a response path: a field's response key or a list index.
using PathSegment = std::variant<std::string, std::int64_t>;

// extensions.code of GraphQL's own failures, which have no row in cutoff's taxonomy.
namespace graphql_codes {
inline constexpr const char* kParseFailed = "GRAPHQL_PARSE_FAILED";
inline constexpr const char* kValidationFailed = "GRAPHQL_VALIDATION_FAILED";
inline constexpr const char* kCostLimitExceeded = "COST_LIMIT_EXCEEDED";
inline constexpr const char* kResponseTooLarge = "RESPONSE_TOO_LARGE";
}  // namespace graphql_codes

struct GraphQLError {
  std::string message;
  std::vector<Location> locations;
  std::vector<PathSegment> path;  // empty: not tied to a field
  std::string code;               // extensions.code; empty: none
  // The taxonomy row behind this error, when it has one; `code` is then its graphql_code.
  // Codes outside the table (GRAPHQL_PARSE_FAILED, an application's own) leave it empty.
  std::optional<ErrorCode> error_code;

  // An error for `c`: extensions.code is the table's graphql_code, the message its summary
  // when `message` is empty.
  static GraphQLError of(ErrorCode c, std::string message = {}, std::vector<Location> locations = {},
                         std::vector<PathSegment> path = {});

  // {"message":..,"locations":[..],"path":[..],"extensions":{"code":..}}, members omitted when empty.
  std::string to_json() const;
  void append_json(std::string& out) const;
};

using cutoff::append_json_string;

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_ERROR_HPP_
