// Field values that are comma-separated lists (RFC 9110 section 5.6.1): Transfer-Encoding,
// Sec-WebSocket-Protocol.
//
//   internal::ForEachListElement(" gzip , chunked", [](std::string_view coding) { ... });  // "gzip", "chunked"
#ifndef CUTOFF_HTTP_INTERNAL_FIELD_LISTS_HPP_
#define CUTOFF_HTTP_INTERNAL_FIELD_LISTS_HPP_

#include <string_view>

namespace cutoff::http::internal {

// Calls `f` with each element of the list `value`, without the spaces and tabs around it.
// Empty elements do not count.
template <typename F>
void ForEachListElement(std::string_view value, F&& f) {
  while (!value.empty()) {
    const auto comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) f(item);
  }
}

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_FIELD_LISTS_HPP_
