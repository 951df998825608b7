// The spec's CoerceVariableValues (6.1.2) and CoerceArgumentValues (6.4.1) for the executor:
// a request's variables for its operation, and a field's arguments from the document's
// literals and those variables (values.hpp coerces the values themselves).
//
//   std::vector<GraphQLError> errors;
//   boost::json::object variables = coerce_variable_values(schema, operation, request.variables, errors);
//   std::string error;
//   boost::json::object args = coerce_argument_values(field, selection, variables, &error);
#ifndef CUTOFF_GRAPHQL_INTERNAL_COERCION_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_COERCION_HPP_

#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/error.hpp"
#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql::internal {

// The variables of `operation` from `given`, with defaults applied; one error per variable
// that is missing, invalid or not of an input type is appended to `errors`.
boost::json::object coerce_variable_values(const Schema& schema, const OperationDefinition& operation,
                                           const boost::json::object& given, std::vector<GraphQLError>& errors);

// The arguments of field `def` as `node` gives them; empty with `*error` set when one is
// invalid or a required one is missing (`*error` is cleared otherwise).
boost::json::object coerce_argument_values(const Field& def, const Selection& node,
                                           const boost::json::object& variables, std::string* error);

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_COERCION_HPP_
