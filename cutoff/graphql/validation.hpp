// Validation of executable documents against a schema (GraphQL spec October 2021, section 5).
//
//   cutoff::graphql::ParseResult parsed = cutoff::graphql::parse(body);
//   if (!parsed.ok()) return respond_errors({*parsed.error});
//   std::vector<GraphQLError> errors = cutoff::graphql::validate(schema, *parsed.document);
//   if (!errors.empty()) return respond_errors(errors);  // a document with errors is not executed
//
// Every rule of the spec is checked: the rules of graphql-js 16's `specifiedRules`, with the
// same messages ("Cannot query field \"nme\" on type \"Item\". Did you mean \"name\"?"), the same
// locations, and extensions.code "GRAPHQL_VALIDATION_FAILED". Errors come in the order
// graphql-js reports them. Type-system definitions in the document are reported as not
// executable and not validated further.
//
// Validation is safe on hostile documents: fragment cycles are reported rather than followed,
// traversals through fragments keep visited sets and run on explicit stacks, and the check
// that fields can be merged memoises fragment pairs and compares each distinct field once, so
// that `{ a a a ... }` or fragments spread many times stay linear (a conflict repeated by
// identical fields is therefore reported once, where graphql-js reports it per copy). Its work
// is capped by `max_field_comparisons`, and its recursion through fragments by a fixed depth;
// a document past either is rejected with an error.
#ifndef CUTOFF_GRAPHQL_VALIDATION_HPP_
#define CUTOFF_GRAPHQL_VALIDATION_HPP_

#include <cstddef>
#include <vector>

#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/error.hpp"
#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql {

struct ValidationOptions {
  // Collecting stops after this many errors, and a last error says so: "Too many validation
  // errors, error limit reached. Validation aborted." (as graphql-js's maxErrors).
  std::size_t max_errors = 100;
  // Field pairs that OverlappingFieldsCanBeMerged may compare. Real documents need a few
  // thousand; only adversarial ones come near, and they are rejected rather than allowed to
  // take seconds of CPU.
  std::size_t max_field_comparisons = 1'000'000;
};

// Every validation error of `document` (empty: valid), each with code "GRAPHQL_VALIDATION_FAILED".
std::vector<GraphQLError> validate(const Schema& schema, const Document& document,
                                   const ValidationOptions& options = {});

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_VALIDATION_HPP_
