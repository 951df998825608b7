// Building a Schema from a parsed SDL document (Schema::from_sdl): the types and directives it
// defines, extensions merged in, resolved member types, the cost and @budget directives read,
// and the type-system rules checked. Every problem is an error with its location; a schema
// with errors is not used.
//
//   internal::SchemaBuilder builder(*schema, prelude_lines);
//   builder.build(document);  // the prelude's definitions first
//   if (!builder.errors.empty()) return report(builder.errors);
//
// The building is in schema_builder.cpp, the type-system rules (directive uses, reserved
// names, deprecated required inputs, directive cycles, interface implementations) in
// schema_rules.cpp.
#ifndef CUTOFF_GRAPHQL_INTERNAL_SCHEMA_BUILDER_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_SCHEMA_BUILDER_HPP_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/error.hpp"
#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql::internal {

class SchemaBuilder {
 public:
  // Lines up to `prelude_lines` are the built-in prelude, which may use reserved names.
  SchemaBuilder(Schema& s, std::uint32_t prelude_lines) : s_(s), prelude_lines_(prelude_lines) {}

  // Builds `doc` into the schema; what is wrong goes to `errors`.
  void build(const Document& doc);

  std::vector<GraphQLError> errors;

 private:
  using Seen = std::unordered_map<std::string_view, Location>;  // directive name → first use

  // schema_builder.cpp
  void Error(std::string message, Location loc);
  void ErrorAt(std::string message, std::vector<Location> locations);
  const Type* Resolve(const TypeRef& ref);
  void Deprecation(const std::vector<Directive>& ds, bool& deprecated, std::string& reason);
  std::vector<InputValue> InputValues(const std::vector<InputValueDefinition>& defs);
  std::optional<double> CostWeight(const std::vector<Directive>& ds);
  std::optional<ListSize> ListSizeOf(const std::vector<Directive>& ds, const Field& f, const std::string& type_name);
  std::optional<std::chrono::milliseconds> Budget(const std::vector<Directive>& ds);
  void AddImplicitCostDirectives();
  const DirectiveDef* FindDirective(std::string_view name) const;

  // schema_rules.cpp
  void CheckDirectiveUses(const Document& doc);
  void CheckUses(const std::vector<Directive>& ds, std::string_view location, Seen* seen = nullptr);
  void CheckReservedNames(const Document& doc);
  void CheckDeprecatedRequired(const Document& doc);
  void CheckDirectiveCycles(const Document& doc);
  void CheckImplementations(const Type& t);

  Schema& s_;
  std::uint32_t prelude_lines_;
  std::vector<DirectiveDef> implicit_;  // @cost and @listSize when the schema does not declare them
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_SCHEMA_BUILDER_HPP_
