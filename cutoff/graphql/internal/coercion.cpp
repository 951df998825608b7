#include "cutoff/graphql/internal/coercion.hpp"

#include <optional>
#include <utility>

#include "cutoff/graphql/values.hpp"

namespace cutoff::graphql::internal {

namespace json = boost::json;

json::object coerce_variable_values(const Schema& schema, const OperationDefinition& operation,
                                    const json::object& given, std::vector<GraphQLError>& errors) {
  json::object variables;
  for (const VariableDefinition& def : operation.variables) {
    const Type* type = schema.type_from_ref(def.type);
    if (!type || !type->is_input()) {
      errors.push_back({"Variable \"$" + std::string(def.name) + "\" expected value of type \"" + def.type.to_string() +
                            "\" which cannot be used as an input type.",
                        {def.loc},
                        {},
                        {}});
      continue;
    }
    auto it = given.find(def.name);
    if (it == given.end()) {
      if (def.default_value) {
        std::string error;
        auto v = coerce_literal(*def.default_value, *type, {}, &error);
        if (v) variables[def.name] = std::move(*v);
      } else if (type->is_non_null()) {
        errors.push_back({"Variable \"$" + std::string(def.name) + "\" of required type \"" + def.type.to_string() +
                              "\" was not provided.",
                          {def.loc},
                          {},
                          {}});
      }
      continue;
    }
    InputError error;
    auto v = coerce_input(it->value(), *type, &error);
    if (!v) {
      // graphql-js's words: the value that failed, and where it sits when that is inside.
      std::string message = "Variable \"$" + std::string(def.name) + "\" got invalid value " + error.shown;
      if (!error.path.empty()) message += " at \"" + std::string(def.name) + error.path + "\"";
      errors.push_back({message + "; " + error.message, {def.loc}, {}, {}});
      continue;
    }
    variables[def.name] = std::move(*v);
  }
  return variables;
}

json::object coerce_argument_values(const Field& def, const Selection& node, const json::object& variables,
                                    std::string* error) {
  json::object args;
  if (def.args.empty()) return args;
  for (const InputValue& a : def.args) {
    const Argument* given = nullptr;
    for (const Argument& x : node.arguments)
      if (x.name == a.name) given = &x;
    std::optional<json::value> v;
    if (given) {
      v = coerce_literal(given->value, *a.type, variables, error);
      if (!v && !error->empty()) {
        *error = "Argument \"" + a.name + "\" has invalid value " + print_literal(given->value) + ": " + *error;
        return {};
      }
    }
    if (!v) {
      if (a.default_value) {
        v = coerce_input(*a.default_value, *a.type, error);
        if (!v) return {};
      } else if (a.type->is_non_null()) {
        *error = given ? "Argument \"" + a.name + "\" of non-null type \"" + a.type->display() + "\" must not be null."
                       : "Argument \"" + a.name + "\" of required type \"" + a.type->display() + "\" was not provided.";
        return {};
      } else {
        continue;
      }
    }
    args[a.name] = std::move(*v);
  }
  error->clear();
  return args;
}

}  // namespace cutoff::graphql::internal
