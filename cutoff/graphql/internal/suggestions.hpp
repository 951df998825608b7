// "Did you mean …?": the known names close to a misspelt one, and the tail of the message
// that offers them, as graphql-js's suggestionList and didYouMean word them. Names in
// messages are quoted with `quoted`.
//
//   std::vector<std::string> close = internal::suggestion_list("nme", {"name", "id"});  // {"name"}
//   std::string message = "Cannot query field " + internal::quoted("nme") + " on type \"Item\"." +
//                         internal::did_you_mean(close);  // ... " Did you mean \"name\"?"
#ifndef CUTOFF_GRAPHQL_INTERNAL_SUGGESTIONS_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_SUGGESTIONS_HPP_

#include <string>
#include <string_view>
#include <vector>

namespace cutoff::graphql::internal {

// The `options` near `input`, nearest first, ties in natural order, each once. Near: within a
// Damerau-Levenshtein distance of 40% of the input's length plus one, where a change of case
// alone counts as one edit.
std::vector<std::string> suggestion_list(std::string_view input, const std::vector<std::string_view>& options);

// " Did you mean "a", "b", or "c"?" with the first five suggestions; empty without any.
// `sub_message` comes before the names (" Did you mean the enum value "A"?").
std::string did_you_mean(std::string_view sub_message, const std::vector<std::string>& suggestions);
std::string did_you_mean(const std::vector<std::string>& suggestions);

// `s` in double quotes, as messages show names (not escaped: names need none).
std::string quoted(std::string_view s);

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_SUGGESTIONS_HPP_
