#include "cutoff/core/html_escape.hpp"

#include <cstddef>

namespace cutoff {

void append_html_escaped(std::string& out, std::string_view text) {
  // Copy runs that need no escaping in one go.
  std::size_t run = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::string_view reference;
    switch (text[i]) {
      case '&': reference = "&amp;"; break;
      case '<': reference = "&lt;"; break;
      case '>': reference = "&gt;"; break;
      case '"': reference = "&quot;"; break;
      case '\'': reference = "&#39;"; break;
      default: continue;
    }
    out.append(text.data() + run, i - run);
    out += reference;
    run = i + 1;
  }
  out.append(text.data() + run, text.size() - run);
}

std::string html_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_html_escaped(out, text);
  return out;
}

}  // namespace cutoff
