// What both execute() and subscribe() do before any resolver runs: select the request's
// operation, check its kind, coerce its variables, find its root type and check the
// operation's limits (spec 6.1 ExecuteRequest up to ExecuteQuery, ExecuteMutation or
// Subscribe).
//
//   std::optional<OperationSetup> s = setup_operation(schema, request, options.limits, false, response.errors);
//   if (!s) return response;  // request errors, no data
//   ... s->operation, s->root_type, s->variables ...
#ifndef CUTOFF_GRAPHQL_INTERNAL_OPERATION_SETUP_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_OPERATION_SETUP_HPP_

#include <boost/json/object.hpp>
#include <optional>
#include <vector>

#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/error.hpp"
#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/operation_limits.hpp"
#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql::internal {

struct OperationSetup {
  const OperationDefinition* operation = nullptr;
  const Type* root_type = nullptr;  // the schema's root type for the operation's kind
  boost::json::object variables;    // coerced
};

// The operation `request` selects, ready to execute; nullopt with request errors appended to
// `errors` when it cannot run. `subscription`: only a subscription operation will do.
// `request.document` must not be null.
std::optional<OperationSetup> setup_operation(const Schema& schema, const Request& request,
                                              const OperationLimits& limits, bool subscription,
                                              std::vector<GraphQLError>& errors);

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_OPERATION_SETUP_HPP_
