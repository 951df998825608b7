// The natural order of names, as graphql-js's naturalCompare: runs of digits compare by their
// numeric value, everything else byte by byte, so "f2" comes before "f10". Suggestions are
// listed in it, and literals are sorted by it to be compared.
//
//   std::stable_sort(names.begin(), names.end(),
//                    [](std::string_view a, std::string_view b) { return internal::natural_compare(a, b) < 0; });
#ifndef CUTOFF_GRAPHQL_INTERNAL_NATURAL_COMPARE_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_NATURAL_COMPARE_HPP_

#include <string_view>

namespace cutoff::graphql::internal {

// Negative when `a` comes first, positive when `b` does, 0 when they are equal.
int natural_compare(std::string_view a, std::string_view b);

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_NATURAL_COMPARE_HPP_
