// Writing JSON text by hand on hot paths (responses, log lines, result rows) without a DOM.
//
//   std::string out = "{\"name\":";
//   cutoff::append_json_string(out, name);  // quoted and escaped
//   out += "}";
#ifndef CUTOFF_CORE_JSON_TEXT_HPP_
#define CUTOFF_CORE_JSON_TEXT_HPP_

#include <string>
#include <string_view>

namespace cutoff {

// Appends `s` as a JSON string literal: quotes, backslashes and control characters are
// escaped the way JavaScript's JSON.stringify escapes them; everything else (UTF-8 included)
// is copied as is.
void append_json_string(std::string& out, std::string_view s);

}  // namespace cutoff

#endif  // CUTOFF_CORE_JSON_TEXT_HPP_
