// Writing JSON text by hand on hot paths (responses, log lines, result rows) without a DOM.
//
//   std::string out = "{\"name\":";
//   cutoff::append_json_string(out, name);  // quoted and escaped
//   out += "}";
#ifndef CUTOFF_CORE_JSON_TEXT_HPP_
#define CUTOFF_CORE_JSON_TEXT_HPP_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

// How many bytes from the start of `s` are copied as they are: eight at a time while no byte
// of a word is a control character, '"' or '\\' (each test below is exact for "some byte is").
inline std::size_t PlainPrefix(std::string_view s) noexcept {
  constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    const std::uint64_t quote = w ^ (kOnes * '"'), backslash = w ^ (kOnes * '\\');
    const std::uint64_t special = ((w - kOnes * 0x20) & ~w) | ((quote - kOnes) & ~quote) |
                                  ((backslash - kOnes) & ~backslash);
    if (special & kHigh) break;
  }
  while (i < s.size() && kEscape[static_cast<unsigned char>(s[i])] == 0) ++i;
  return i;
}

}  // namespace json_text_internal

// Appends `s` as a JSON string literal: quotes, backslashes and control characters are
// escaped the way JavaScript's JSON.stringify escapes them; everything else (UTF-8 included)
// is copied as is. `Out` is std::string or any buffer with push_back(char) and
// append(const char*, size_t).
template <typename Out>
void append_json_string_to(Out& out, std::string_view s) {
  out.push_back('"');
  // Runs that need no escaping are copied in one go; most strings are one such run.
  std::size_t run = 0;
  for (std::size_t i = json_text_internal::PlainPrefix(s); i < s.size(); ++i) {
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
