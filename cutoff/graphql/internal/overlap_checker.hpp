// OverlappingFieldsCanBeMerged (spec 5.3.2): the fields a selection set gives one response
// name must be one field with the same arguments, unless they are on object types that can
// never apply to the same object, and their return types and sub-selections must merge too.
// validate() runs it on every selection set it visits.
//
// graphql-js's algorithm: each selection set compares the fields it collects (through inline
// fragments) among themselves, with the fragments it spreads, and those fragments with each
// other; two fields of the same response name compare their sub-selections in turn. Fragment
// pairs are memoised, and within a group of fields with one response name only structurally
// distinct fields are compared (identical ones give identical results), which keeps
// repetition linear. The comparisons are capped, and so is the recursion through fragments:
// past either, one error says the check was abandoned, and the checker checks nothing more.
//
//   internal::OverlapChecker overlaps(schema, fragments, options.max_field_comparisons,
//                                     [&](std::string message, std::vector<Location> locations) { ... });
//   overlaps.check(operation.selection_set, schema.root_type(operation.type), errors_still_allowed);
#ifndef CUTOFF_GRAPHQL_INTERNAL_OVERLAP_CHECKER_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_OVERLAP_CHECKER_HPP_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql::internal {

// The document's fragments by name.
using FragmentMap = std::unordered_map<std::string_view, const FragmentDefinition*>;

class OverlapChecker {
 public:
  using Reporter = std::function<void(std::string message, std::vector<Location> locations)>;

  // `schema` and `fragments` must outlive the checker; it may compare `max_comparisons` field
  // pairs in all. Conflicts go to `report`.
  OverlapChecker(const Schema& schema, const FragmentMap& fragments, std::size_t max_comparisons, Reporter report);
  ~OverlapChecker();
  OverlapChecker(const OverlapChecker&) = delete;
  OverlapChecker& operator=(const OverlapChecker&) = delete;

  // Reports the conflicts among the fields of `set`, selected on `parent_type` (null:
  // unknown). Only `wanted` are needed (the errors still allowed), which bounds the memory an
  // invalid document can make this take.
  void check(const SelectionSet& set, const Type* parent_type, std::size_t wanted);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_OVERLAP_CHECKER_HPP_
