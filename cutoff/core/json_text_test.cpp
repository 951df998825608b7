#include "cutoff/core/json_text.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace cutoff {
namespace {

TEST(JsonText, EscapesAsJsonStringifyDoes) {
  std::string out;
  append_json_string(out, "a\"b\\c/\b\f\n\r\t\x01\x1f é ✓");
  // What JSON.stringify gives for the same string: short escapes where JSON has them,
  // \u00XX (lower-case hex) for the other control characters, '/' and UTF-8 as they are.
  EXPECT_EQ(out, R"("a\"b\\c/\b\f\n\r\t\u0001\u001f é ✓")");
}

TEST(JsonText, EveryControlCharacterIsEscaped) {
  for (int c = 0; c < 0x20; ++c) {
    std::string out;
    append_json_string(out, std::string(1, static_cast<char>(c)));
    EXPECT_EQ(out.size() == 4 || out.size() == 8, true) << c << ": " << out;  // "\n" or "\u00XX"
    EXPECT_EQ(out[1], '\\') << c;
  }
  std::string out;
  append_json_string(out, std::string_view("\0x", 2));
  EXPECT_EQ(out, R"("\u0000x")");
}

TEST(JsonText, WritesIntoAnyBufferWithPushBackAndAppend) {
  struct Buffer {
    std::string text;
    void push_back(char c) { text.push_back(c); }
    void append(const char* p, std::size_t n) { text.append(p, n); }
  } b;
  append_json_string_to(b, "x\ny");
  EXPECT_EQ(b.text, R"("x\ny")");
}

}  // namespace
}  // namespace cutoff
