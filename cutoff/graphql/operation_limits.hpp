// Limits on what one GraphQL operation may ask for, checked before any resolver runs.
//
//   OperationLimits limits{.max_depth = 32, .max_cost = 20'000};
//   OperationMeasure m = measure_operation(schema, doc, *op, variables, limits);
//   if (auto error = check_operation_limits(m, limits)) return refuse(*error);
//
// Fragments make a short document describe a huge response: a chain of spreads nests
// thousands of levels deep, and fragments that each spread the next one twice double the
// response with every definition. Both are measured here on the document as written, in time
// linear in its size: each fragment is measured once, and a spread adds its fragment's
// measure (a fragment used twice counts twice), so a bomb is priced, never expanded.
//
// - Depth: the deepest field nesting after fragment expansion (`{ a { b } }` is 2).
// - Cost, after the GraphQL cost specification (the `@cost` and `@listSize` directives,
//   schema.hpp): a field costs its weight (`@cost`, else its type's `@cost`, else 1 for an
//   object, interface or union and 0 for a scalar or enum), plus the weights of the arguments
//   it is given, plus its selection's cost times the size of its list: the largest slicing
//   argument given, else `assumedSize`, else `default_list_size` (per level of list). A field
//   with `sizedFields` applies the size to those child fields instead. Every branch of an
//   abstract selection is counted, so the cost bounds the work from above.
//
// The executor checks both before executing (ExecutionOptions::limits) and answers an
// operation over a limit with one error and no data: extensions.code DEPTH_LIMIT_EXCEEDED or
// COST_LIMIT_EXCEEDED (and BAD_USER_INPUT when a field with `requireOneSlicingArgument` is
// not given exactly one slicing argument).
#ifndef CUTOFF_GRAPHQL_OPERATION_LIMITS_HPP_
#define CUTOFF_GRAPHQL_OPERATION_LIMITS_HPP_

#include <boost/json/object.hpp>
#include <cstddef>
#include <optional>

#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/error.hpp"
#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql {

struct OperationLimits {
  // Field nesting after fragment expansion; 0: no limit. The standard introspection query
  // needs 14.
  std::size_t max_depth = 64;
  // The static cost; 0: no limit. GraphiQL's introspection query costs a few thousand on a
  // schema of a hundred types.
  double max_cost = 200'000;
  // Items assumed for a list field without @listSize.
  double default_list_size = 10;
};

struct OperationMeasure {
  std::size_t depth = 0;
  double cost = 0;  // saturates at 1e18
  // Set when the operation cannot be priced (a field that needs exactly one slicing
  // argument got none or several).
  std::optional<GraphQLError> error;
};

// Measures `operation` of `document`, which must have passed validate(): fragment cycles are
// refused there (here they only make the measure an error). `variables` are the coerced
// variable values (slicing arguments may come from them).
OperationMeasure measure_operation(const Schema& schema, const Document& document,
                                   const OperationDefinition& operation, const boost::json::object& variables,
                                   const OperationLimits& limits);

// The error for an operation over `limits`, or nullopt.
std::optional<GraphQLError> check_operation_limits(const OperationMeasure& measure, const OperationLimits& limits);

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_OPERATION_LIMITS_HPP_
