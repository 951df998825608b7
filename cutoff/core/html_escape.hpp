// Writing text into HTML by hand: in element content or in an attribute value quoted with
// either quote, a string escaped here is read back as the same characters and cannot end or
// open markup.
//
//   std::string page = "<p title=\"";
//   cutoff::append_html_escaped(page, title);  // "a<b" -> "a&lt;b"
//   page += "\">" + cutoff::html_escaped(text) + "</p>";
#ifndef CUTOFF_CORE_HTML_ESCAPE_HPP_
#define CUTOFF_CORE_HTML_ESCAPE_HPP_

#include <string>
#include <string_view>

namespace cutoff {

// Appends `text` with the five characters markup is made of replaced by references:
// & < > " ' become &amp; &lt; &gt; &quot; &#39;. Everything else (UTF-8, control characters)
// is copied as is; a caller that must keep characters HTML does not allow out of its page
// replaces them itself.
void append_html_escaped(std::string& out, std::string_view text);

// The same, as a new string.
std::string html_escaped(std::string_view text);

}  // namespace cutoff

#endif  // CUTOFF_CORE_HTML_ESCAPE_HPP_
