// The Validator behind validate() (validation.hpp): one walk over the document in
// graphql-js's visiting order, tracking what graphql-js's TypeInfo tracks (parent type, field,
// input type); at each node the rules run in the order of graphql-js's specifiedRules, so that
// errors come out in the same order. The rules on documents, operations, fragments and
// selections are in validation.cpp, those on arguments, directives, values and variables in
// validation_values.cpp; OverlappingFieldsCanBeMerged is the OverlapChecker's.
//
//   std::vector<GraphQLError> errors = internal::Validator(schema, document, options).run();
#ifndef CUTOFF_GRAPHQL_INTERNAL_VALIDATOR_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_VALIDATOR_HPP_

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/error.hpp"
#include "cutoff/graphql/internal/overlap_checker.hpp"
#include "cutoff/graphql/schema.hpp"
#include "cutoff/graphql/validation.hpp"

namespace cutoff::graphql::internal {

// A variable as used somewhere, with the type the position expects (graphql-js's
// getVariableUsages).
struct VariableUsage {
  const Value* node = nullptr;
  const Type* type = nullptr;  // null: unknown position
  bool location_has_default = false;
};

// Fields the document may select beyond a type's own (the introspection meta-fields).
struct MetaFields {
  Field typename_field;
  Field schema_field;
  Field type_field;

  explicit MetaFields(const Schema& schema);
};

class Validator {
 public:
  // All three must outlive the validator.
  Validator(const Schema& schema, const Document& document, const ValidationOptions& options);
  Validator(const Validator&) = delete;
  Validator& operator=(const Validator&) = delete;

  // Every error of the document, at most options.max_errors and the one saying so. Once.
  std::vector<GraphQLError> run();

 private:
  void Report(std::string message, std::vector<Location> locations);
  std::size_t ErrorsLeft() const;
  const FragmentDefinition* Fragment(std::string_view name) const;
  const Field* FieldDef(const Type& parent, std::string_view name) const;
  const std::vector<const Selection*>& FragmentSpreads(const SelectionSet& set);
  std::vector<const FragmentDefinition*> RecursivelyReferencedFragments(const OperationDefinition& op);

  // validation.cpp
  void CheckExecutableDefinitions();
  void VisitOperation(const OperationDefinition& op);
  void VisitVariableDefinition(const VariableDefinition& v);
  bool ConditionMatches(std::string_view type_condition, const Type& runtime) const;
  void CheckSingleFieldSubscription(const OperationDefinition& op);
  void VisitFragment(const FragmentDefinition& f);
  void DetectFragmentCycles(const FragmentDefinition& start);
  void CheckUnusedFragments();
  void VisitSelectionSet(const SelectionSet& set, const Type* type);
  void VisitField(const Selection& f, const Type* parent);
  void ReportUnknownField(const Type& parent, const Selection& f);
  void VisitFragmentSpread(const Selection& s, const Type* parent);
  void VisitInlineFragment(const Selection& s, const Type* parent, const Type* enclosing_type);
  void CheckKnownType(std::string_view name, Location loc);

  // validation_values.cpp
  void CheckOperationVariables(const OperationDefinition& op);
  bool AllowedVariableUsage(const Type& var_type, const VariableDefinition& def, const Type& location_type,
                            bool location_has_default) const;
  void CheckUniqueArguments(const std::vector<Argument>& args);
  void CheckUniqueDirectives(const std::vector<Directive>& directives);
  void VisitDirectives(const std::vector<Directive>& directives, std::string_view location);
  void VisitValue(const Value& v, const Type* type, bool check);
  void CheckLeafValue(const Value& v, const Type* location_type);
  void CollectUsages(const Value& v, const Type* type, bool has_default, std::vector<VariableUsage>& out) const;
  void CollectUsages(const std::vector<Directive>& directives, std::vector<VariableUsage>& out) const;
  void CollectUsages(const SelectionSet& set, const Type* type, std::vector<VariableUsage>& out) const;
  std::vector<VariableUsage> OperationUsages(const OperationDefinition& op) const;
  const std::vector<VariableUsage>& FragmentUsages(const FragmentDefinition& f);

  const Schema& schema_;
  const Document& doc_;
  const ValidationOptions& options_;
  const MetaFields meta_;
  FragmentMap fragments_;
  OverlapChecker overlaps_;
  std::unordered_set<std::string_view> defined_types_;
  std::vector<GraphQLError> errors_;

  std::unordered_map<std::string_view, Location> operation_names_;
  std::unordered_map<std::string_view, Location> fragment_names_;
  std::unordered_map<const SelectionSet*, std::vector<const Selection*>> spreads_;
  std::unordered_map<const FragmentDefinition*, std::vector<VariableUsage>> fragment_usages_;
  // NoFragmentCycles
  std::unordered_set<std::string_view> visited_fragments_;
  std::vector<const Selection*> spread_path_;
  std::unordered_map<std::string_view, std::size_t> spread_path_index_;
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_VALIDATOR_HPP_
