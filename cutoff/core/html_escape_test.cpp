#include "cutoff/core/html_escape.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cutoff {
namespace {

TEST(HtmlEscape, EachMarkupCharacterBecomesAReference) {
  EXPECT_EQ(html_escaped("&"), "&amp;");
  EXPECT_EQ(html_escaped("<"), "&lt;");
  EXPECT_EQ(html_escaped(">"), "&gt;");
  EXPECT_EQ(html_escaped("\""), "&quot;");
  EXPECT_EQ(html_escaped("'"), "&#39;");
  EXPECT_EQ(html_escaped("</script><a href=\"x\" title='y'>&amp;"),
            "&lt;/script&gt;&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;");
}

TEST(HtmlEscape, PlainTextIsCopiedAsIs) {
  EXPECT_EQ(html_escaped(""), "");
  EXPECT_EQ(html_escaped("query Stock { warehouses { name } }"), "query Stock { warehouses { name } }");
  EXPECT_EQ(html_escaped("caf\xC3\xA9 \xE2\x80\x93 \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xE2\x80\x93 \xF0\x9F\x98\x80");
  // Control characters are the caller's to handle.
  EXPECT_EQ(html_escaped("a\nb\tc\rd\x01"), "a\nb\tc\rd\x01");
  EXPECT_EQ(html_escaped(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(HtmlEscape, AppendsToWhatIsThere) {
  std::string out = "<p title=\"";
  append_html_escaped(out, "a<b & c");
  out += "\">";
  append_html_escaped(out, "");
  append_html_escaped(out, "x>y");
  EXPECT_EQ(out, "<p title=\"a&lt;b &amp; c\">x&gt;y");
}

}  // namespace
}  // namespace cutoff
