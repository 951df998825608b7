#include "cutoff/graphql/internal/operation_setup.hpp"

#include <string>
#include <utility>

#include "cutoff/graphql/internal/coercion.hpp"

namespace cutoff::graphql::internal {

namespace {

const OperationDefinition* FindOperation(const Document& doc, const std::string& name,
                                         std::vector<GraphQLError>& errors) {
  if (const OperationDefinition* op = select_operation(doc, name)) return op;
  if (!name.empty()) errors.push_back({"Unknown operation named \"" + name + "\".", {}, {}, {}});
  else
    errors.push_back({doc.operations.empty() ? "Must provide an operation."
                                             : "Must provide operation name if query contains multiple operations.",
                      {},
                      {},
                      {}});
  return nullptr;
}

}  // namespace

std::optional<OperationSetup> setup_operation(const Schema& schema, const Request& request,
                                              const OperationLimits& limits, bool subscription,
                                              std::vector<GraphQLError>& errors) {
  const Document& doc = *request.document;
  OperationSetup s;
  s.operation = FindOperation(doc, request.operation_name, errors);
  if (!s.operation) return std::nullopt;
  const OperationDefinition& op = *s.operation;
  if (subscription && op.type != OperationType::subscription) {
    errors.push_back(
        {"Expected a subscription operation, got a " + std::string(to_string(op.type)) + ".", {op.loc}, {}, {}});
    return std::nullopt;
  }
  const std::size_t errors_before = errors.size();
  s.variables = coerce_variable_values(schema, op, request.variables, errors);
  if (errors.size() != errors_before) return std::nullopt;
  s.root_type = schema.root_type(op.type);
  if (!s.root_type) {
    errors.push_back(
        {"Schema is not configured to execute " + std::string(to_string(op.type)) + " operation.", {op.loc}, {}, {}});
    return std::nullopt;
  }
  if (limits.max_depth != 0 || limits.max_cost > 0) {
    if (std::optional<GraphQLError> refused =
            check_operation_limits(measure_operation(schema, doc, op, s.variables, limits), limits)) {
      errors.push_back(std::move(*refused));
      return std::nullopt;
    }
  }
  return s;
}

}  // namespace cutoff::graphql::internal
