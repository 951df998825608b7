// Writing JSON text by hand on hot paths (responses, log lines, result rows) without a DOM.
//
//   std::string out = "{\"name\":";
//   cutoff::append_json_string(out, name);  // quoted and escaped
//   out += "}";
#ifndef CUTOFF_CORE_JSON_TEXT_HPP_
#define CUTOFF_CORE_JSON_TEXT_HPP_

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace cutoff {

namespace json_text_internal {

// For each byte: 0 when it is copied as is, else the character after the backslash of its
// escape ('u' for \u00XX).
inline constexpr std::array<char, 256> kEscape = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = 'u';
  t['\b'] = 'b';
  t['\t'] = 't';
  t['\n'] = 'n';
  t['\f'] = 'f';
  t['\r'] = 'r';
  t['"'] = '"';
  t['\\'] = '\\';
  return t;
}();

}  // namespace json_text_internal

// Appends `s` as a JSON string literal: quotes, backslashes and control characters are
// escaped the way JavaScript's JSON.stringify escapes them; everything else (UTF-8 included)
// is copied as is. `Out` is std::string or any buffer with push_back(char) and
// append(const char*, size_t).
template <typename Out>
void append_json_string_to(Out& out, std::string_view s) {
  out.push_back('"');
  // Runs that need no escaping are copied in one go.
  std::size_t run = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char e = json_text_internal::kEscape[static_cast<unsigned char>(s[i])];
    if (e == 0) [[likely]]
      continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    if (e == 'u') {
      static constexpr char kHex[] = "0123456789abcdef";
      const auto c = static_cast<unsigned char>(s[i]);
      const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out.append(u, 6);
    } else {
      const char pair[2] = {'\\', e};
      out.append(pair, 2);
    }
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

inline void append_json_string(std::string& out, std::string_view s) { append_json_string_to(out, s); }

}  // namespace cutoff

#endif  // CUTOFF_CORE_JSON_TEXT_HPP_
