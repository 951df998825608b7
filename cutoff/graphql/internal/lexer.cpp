#include "cutoff/graphql/internal/lexer.hpp"

#include <cstdio>
#include <utility>

#include "cutoff/graphql/parser.hpp"

namespace cutoff::graphql::internal {

namespace {

bool IsNameStart(unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsNameContinue(unsigned char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

void AppendUtf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int HexValue(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Printable(unsigned char c) {
  if (c >= 0x20 && c < 0x7F) {
    if (c == '"') return "'\"'";
    return std::string("\"") + static_cast<char>(c) + "\"";
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", c);
  return buf;
}

}  // namespace

std::string_view token_name(Tok t) {
  switch (t) {
    case Tok::eof: return "<EOF>";
    case Tok::bang: return "\"!\"";
    case Tok::dollar: return "\"$\"";
    case Tok::amp: return "\"&\"";
    case Tok::paren_l: return "\"(\"";
    case Tok::paren_r: return "\")\"";
    case Tok::spread: return "\"...\"";
    case Tok::colon: return "\":\"";
    case Tok::equals: return "\"=\"";
    case Tok::at: return "\"@\"";
    case Tok::bracket_l: return "\"[\"";
    case Tok::bracket_r: return "\"]\"";
    case Tok::brace_l: return "\"{\"";
    case Tok::pipe: return "\"|\"";
    case Tok::brace_r: return "\"}\"";
    case Tok::name: return "Name";
    case Tok::int_: return "Int";
    case Tok::float_: return "Float";
    case Tok::string: return "String";
    case Tok::block_string: return "BlockString";
  }
  return "?";
}

Lexer::Lexer(std::string_view src, std::size_t max_tokens) : src_(src), max_tokens_(max_tokens) {
  if (src_.size() >= 3 && static_cast<unsigned char>(src_[0]) == 0xEF &&
      static_cast<unsigned char>(src_[1]) == 0xBB && static_cast<unsigned char>(src_[2]) == 0xBF)
    pos_ = 3;
}

Token Lexer::next() {
  if (++count_ > max_tokens_)
    throw SyntaxError{"Document is too large: more than " + std::to_string(max_tokens_) + " tokens.", LocAt(pos_)};
  SkipIgnored();
  Token t;
  t.start = pos_;
  t.loc = LocAt(pos_);
  if (pos_ >= src_.size()) {
    t.kind = Tok::eof;
    t.end = pos_;
    return t;
  }
  const unsigned char c = static_cast<unsigned char>(src_[pos_]);
  auto single = [&](Tok k) {
    t.kind = k;
    t.end = ++pos_;
    return t;
  };
  switch (c) {
    case '!': return single(Tok::bang);
    case '$': return single(Tok::dollar);
    case '&': return single(Tok::amp);
    case '(': return single(Tok::paren_l);
    case ')': return single(Tok::paren_r);
    case ':': return single(Tok::colon);
    case '=': return single(Tok::equals);
    case '@': return single(Tok::at);
    case '[': return single(Tok::bracket_l);
    case ']': return single(Tok::bracket_r);
    case '{': return single(Tok::brace_l);
    case '|': return single(Tok::pipe);
    case '}': return single(Tok::brace_r);
    case '.':
      if (src_.substr(pos_, 3) == "...") {
        t.kind = Tok::spread;
        pos_ += 3;
        t.end = pos_;
        return t;
      }
      throw SyntaxError{"Syntax Error: Unexpected \".\".", t.loc};
    case '"':
      if (src_.substr(pos_, 3) == "\"\"\"") return ReadBlockString(std::move(t));
      return ReadString(std::move(t));
    default: break;
  }
  if (IsNameStart(c)) {
    while (pos_ < src_.size() && IsNameContinue(static_cast<unsigned char>(src_[pos_]))) ++pos_;
    t.kind = Tok::name;
    t.end = pos_;
    return t;
  }
  if (IsDigit(c) || c == '-') return ReadNumber(std::move(t));
  throw SyntaxError{"Syntax Error: Unexpected character: " + Printable(c) + ".", t.loc};
}

Location Lexer::LocAt(std::size_t pos) {
  // Advance the line and column bookkeeping to `pos`. Positions come in order, so the work
  // is linear in the document, even for one very long line.
  if (pos < scan_) {  // not expected; recount the column from the line's start
    scan_ = line_start_;
    column_ = 1;
  }
  while (scan_ < pos) {
    const unsigned char c = static_cast<unsigned char>(src_[scan_]);
    if (c == '\n' || (c == '\r' && (scan_ + 1 >= src_.size() || src_[scan_ + 1] != '\n'))) {
      ++line_;
      line_start_ = scan_ + 1;
      column_ = 1;
    } else {
      if ((c & 0xC0) != 0x80) ++column_;  // a code point starts here
      if (c >= 0xF0) ++column_;           // outside the BMP: two UTF-16 units
    }
    ++scan_;
  }
  return Location{line_, column_};
}

void Lexer::SkipIgnored() {
  while (pos_ < src_.size()) {
    const unsigned char c = static_cast<unsigned char>(src_[pos_]);
    if (c == ' ' || c == '\t' || c == ',' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '#') {
      while (pos_ < src_.size() && src_[pos_] != '\n' && src_[pos_] != '\r') ++pos_;
    } else if (c == 0xEF && pos_ + 2 < src_.size() && static_cast<unsigned char>(src_[pos_ + 1]) == 0xBB &&
               static_cast<unsigned char>(src_[pos_ + 2]) == 0xBF) {
      pos_ += 3;  // a byte order mark is ignored anywhere
    } else {
      return;
    }
  }
}

Token Lexer::ReadNumber(Token t) {
  bool is_float = false;
  if (src_[pos_] == '-') ++pos_;
  auto digit_at = [&](std::size_t p) { return p < src_.size() && IsDigit(static_cast<unsigned char>(src_[p])); };
  auto expect_digits = [&]() {
    if (!digit_at(pos_)) {
      std::string got = pos_ < src_.size() ? Printable(static_cast<unsigned char>(src_[pos_])) : "<EOF>";
      throw SyntaxError{"Syntax Error: Invalid number, expected digit but got: " + got + ".", LocAt(pos_)};
    }
    while (digit_at(pos_)) ++pos_;
  };
  if (pos_ < src_.size() && src_[pos_] == '0') {
    ++pos_;
    if (digit_at(pos_))
      throw SyntaxError{"Syntax Error: Invalid number, unexpected digit after 0: " +
                            Printable(static_cast<unsigned char>(src_[pos_])) + ".",
                        LocAt(pos_)};
  } else {
    expect_digits();
  }
  if (pos_ < src_.size() && src_[pos_] == '.') {
    is_float = true;
    ++pos_;
    expect_digits();
  }
  if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
    is_float = true;
    ++pos_;
    if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-')) ++pos_;
    expect_digits();
  }
  if (pos_ < src_.size() && (src_[pos_] == '.' || IsNameStart(static_cast<unsigned char>(src_[pos_]))))
    throw SyntaxError{"Syntax Error: Invalid number, expected digit but got: " +
                          Printable(static_cast<unsigned char>(src_[pos_])) + ".",
                      LocAt(pos_)};
  t.kind = is_float ? Tok::float_ : Tok::int_;
  t.end = pos_;
  return t;
}

std::uint32_t Lexer::ReadUnicodeEscape(std::size_t& p) {
  // p points after "\u"
  auto bad = [&]() -> SyntaxError {
    return SyntaxError{"Syntax Error: Invalid Unicode escape sequence.", LocAt(p)};
  };
  if (p < src_.size() && src_[p] == '{') {
    std::uint32_t cp = 0;
    std::size_t q = p + 1;
    int digits = 0;
    while (q < src_.size() && src_[q] != '}') {
      const int h = HexValue(static_cast<unsigned char>(src_[q]));
      if (h < 0 || ++digits > 6) throw bad();
      cp = cp * 16 + static_cast<std::uint32_t>(h);
      ++q;
    }
    if (q >= src_.size() || digits == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) throw bad();
    p = q + 1;
    return cp;
  }
  auto read4 = [&](std::size_t at) -> int {
    if (at + 4 > src_.size()) return -1;
    int v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const int h = HexValue(static_cast<unsigned char>(src_[at + i]));
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    return v;
  };
  const int v = read4(p);
  if (v < 0) throw bad();
  p += 4;
  if (v >= 0xD800 && v <= 0xDBFF) {  // a surrogate pair written as two escapes
    if (p + 1 < src_.size() && src_[p] == '\\' && src_[p + 1] == 'u') {
      const int lo = read4(p + 2);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        p += 6;
        return 0x10000 + ((static_cast<std::uint32_t>(v) - 0xD800) << 10) + (static_cast<std::uint32_t>(lo) - 0xDC00);
      }
    }
    throw bad();
  }
  if (v >= 0xDC00 && v <= 0xDFFF) throw bad();
  return static_cast<std::uint32_t>(v);
}

Token Lexer::ReadString(Token t) {
  std::size_t p = pos_ + 1;
  std::string out;
  while (p < src_.size()) {
    const unsigned char c = static_cast<unsigned char>(src_[p]);
    if (c == '"') {
      t.kind = Tok::string;
      t.value = std::move(out);
      pos_ = p + 1;
      t.end = pos_;
      return t;
    }
    if (c == '\n' || c == '\r') break;
    if (c < 0x20 && c != '\t')
      throw SyntaxError{"Syntax Error: Invalid character within String: " + Printable(c) + ".", LocAt(p)};
    if (c == '\\') {
      if (p + 1 >= src_.size()) break;
      const char e = src_[p + 1];
      p += 2;
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': AppendUtf8(out, ReadUnicodeEscape(p)); break;
        default:
          throw SyntaxError{"Syntax Error: Invalid character escape sequence: \"\\" + std::string(1, e) + "\".",
                            LocAt(p - 2)};
      }
      continue;
    }
    out.push_back(static_cast<char>(c));
    ++p;
  }
  throw SyntaxError{"Syntax Error: Unterminated string.", LocAt(p)};
}

Token Lexer::ReadBlockString(Token t) {
  std::size_t p = pos_ + 3;
  std::string raw;
  while (p < src_.size()) {
    if (src_.substr(p, 3) == "\"\"\"") {
      t.kind = Tok::block_string;
      t.value = block_string_value(raw);
      pos_ = p + 3;
      t.end = pos_;
      return t;
    }
    if (src_.substr(p, 4) == "\\\"\"\"") {
      raw += "\"\"\"";
      p += 4;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(src_[p]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
      throw SyntaxError{"Syntax Error: Invalid character within String: " + Printable(c) + ".", LocAt(p)};
    raw.push_back(static_cast<char>(c));
    ++p;
  }
  throw SyntaxError{"Syntax Error: Unterminated string.", LocAt(p)};
}

}  // namespace cutoff::graphql::internal
