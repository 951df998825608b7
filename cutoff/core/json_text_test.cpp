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

// The word-at-a-time scan finds every byte that needs escaping, wherever it sits in a word,
// and lets every other byte through (UTF-8 and DEL included).
TEST(JsonText, AnyByteAtAnyPositionIsEscapedExactlyAsByteByByte) {
  auto naive = [](std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      if (c == '"') out += "\\\"";
      else if (c == '\\') out += "\\\\";
      else if (c == '\b') out += "\\b";
      else if (c == '\f') out += "\\f";
      else if (c == '\n') out += "\\n";
      else if (c == '\r') out += "\\r";
      else if (c == '\t') out += "\\t";
      else if (c < 0x20) {
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      } else out += static_cast<char>(c);
    }
    return out + "\"";
  };
  for (std::size_t len = 0; len <= 24; ++len) {
    for (std::size_t at = 0; at < len; ++at) {
      for (int c = 0; c < 256; ++c) {
        std::string s(len, 'a');
        s[at] = static_cast<char>(c);
        std::string out;
        append_json_string(out, s);
        ASSERT_EQ(out, naive(s)) << "length " << len << ", byte " << c << " at " << at;
      }
    }
  }
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
