#include "cutoff/graphql/parser.hpp"

#include <cstring>
#include <stdexcept>
#include <utility>

namespace cutoff::graphql {

std::string_view to_string(OperationType t) noexcept {
  switch (t) {
    case OperationType::query: return "query";
    case OperationType::mutation: return "mutation";
    case OperationType::subscription: return "subscription";
  }
  return "query";
}

std::string TypeRef::to_string() const {
  switch (kind) {
    case Kind::named: return std::string(name);
    case Kind::list: return "[" + of->to_string() + "]";
    case Kind::non_null: return of->to_string() + "!";
  }
  return {};
}

namespace {

enum class Tok : std::uint8_t {
  eof, bang, dollar, amp, paren_l, paren_r, spread, colon, equals, at, bracket_l, bracket_r,
  brace_l, pipe, brace_r, name, int_, float_, string, block_string,
};

std::string_view TokName(Tok t) {
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

struct Token {
  Tok kind = Tok::eof;
  std::size_t start = 0, end = 0;
  Location loc;
  std::string value;  // decoded strings
};

struct SyntaxError {
  std::string message;
  Location loc;
};

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

class Lexer {
 public:
  Lexer(std::string_view src, std::size_t max_tokens) : src_(src), max_tokens_(max_tokens) {
    if (src_.size() >= 3 && static_cast<unsigned char>(src_[0]) == 0xEF &&
        static_cast<unsigned char>(src_[1]) == 0xBB && static_cast<unsigned char>(src_[2]) == 0xBF)
      pos_ = 3;
  }

  Token Next() {
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

  std::string_view Text(const Token& t) const { return src_.substr(t.start, t.end - t.start); }

 private:
  Location LocAt(std::size_t pos) {
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

  void SkipIgnored() {
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

  Token ReadNumber(Token t) {
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

  std::uint32_t ReadUnicodeEscape(std::size_t& p) {
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

  Token ReadString(Token t) {
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

  Token ReadBlockString(Token t) {
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

  std::string_view src_;
  std::size_t pos_ = 0;
  std::size_t scan_ = 0;
  std::size_t line_start_ = 0;
  std::uint32_t line_ = 1;
  std::uint32_t column_ = 1;  // at scan_
  std::size_t count_ = 0;
  std::size_t max_tokens_;
};

class Parser {
 public:
  Parser(std::string_view src, const ParseOptions& options) : lex_(src, options.max_tokens), options_(options) {
    tok_ = lex_.Next();
  }

  void ParseDocument(Document& doc) {
    if (tok_.kind == Tok::eof) throw SyntaxError{"Syntax Error: Unexpected <EOF>.", tok_.loc};
    while (tok_.kind != Tok::eof) ParseDefinition(doc);
  }

 private:
  // ---- token helpers ----
  std::string_view Text() const { return lex_.Text(tok_); }
  bool Peek(Tok k) const { return tok_.kind == k; }
  bool PeekName(std::string_view n) const { return tok_.kind == Tok::name && Text() == n; }
  Token Advance() {
    Token t = std::move(tok_);
    tok_ = lex_.Next();
    return t;
  }
  [[noreturn]] void Unexpected() {
    std::string what = tok_.kind == Tok::eof ? "<EOF>"
                       : tok_.kind == Tok::name || tok_.kind == Tok::int_ || tok_.kind == Tok::float_
                           ? std::string(TokName(tok_.kind)) + " \"" + std::string(Text()) + "\""
                           : std::string(TokName(tok_.kind));
    throw SyntaxError{"Syntax Error: Unexpected " + what + ".", tok_.loc};
  }
  Token Expect(Tok k) {
    if (tok_.kind != k) {
      std::string found = tok_.kind == Tok::name ? "Name \"" + std::string(Text()) + "\"" : std::string(TokName(tok_.kind));
      throw SyntaxError{"Syntax Error: Expected " + std::string(TokName(k)) + ", found " + found + ".", tok_.loc};
    }
    return Advance();
  }
  bool Skip(Tok k) {
    if (tok_.kind != k) return false;
    Advance();
    return true;
  }
  void ExpectKeyword(std::string_view kw) {
    if (!PeekName(kw))
      throw SyntaxError{"Syntax Error: Expected \"" + std::string(kw) + "\", found " +
                            (tok_.kind == Tok::name ? "Name \"" + std::string(Text()) + "\"" : std::string(TokName(tok_.kind))) +
                            ".",
                        tok_.loc};
    Advance();
  }
  std::string_view ParseName() {
    Token t = Expect(Tok::name);
    return lex_.Text(t);
  }

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser, Location loc) : p(parser) {
      if (++p.depth_ > p.options_.max_depth)
        throw SyntaxError{"Syntax Error: Document is nested too deeply (more than " +
                              std::to_string(p.options_.max_depth) + " levels).",
                          loc};
    }
    ~DepthGuard() { --p.depth_; }
  };

  // ---- definitions ----
  void ParseDefinition(Document& doc) {
    if (Peek(Tok::brace_l)) {
      OperationDefinition op;
      op.loc = tok_.loc;
      op.selection_set = ParseSelectionSet();
      doc.operations.push_back(std::move(op));
      return;
    }
    std::string description;
    const bool has_description = Peek(Tok::string) || Peek(Tok::block_string);
    Location start = tok_.loc;
    if (has_description) description = Advance().value;
    if (!Peek(Tok::name)) Unexpected();
    const std::string_view kw = Text();
    if (!has_description) {
      if (kw == "query" || kw == "mutation" || kw == "subscription") {
        doc.operations.push_back(ParseOperation());
        return;
      }
      if (kw == "fragment") {
        doc.fragments.push_back(ParseFragment());
        return;
      }
      if (kw == "extend") {
        doc.type_system_locations.push_back(start);
        ParseExtension(doc);
        return;
      }
    }
    if (kw == "schema" || kw == "scalar" || kw == "type" || kw == "interface" || kw == "union" || kw == "enum" ||
        kw == "input" || kw == "directive") {
      doc.type_system_locations.push_back(start);
      ParseTypeSystemDefinition(doc, std::move(description), start, false);
      return;
    }
    Unexpected();
  }

  OperationDefinition ParseOperation() {
    OperationDefinition op;
    op.loc = tok_.loc;
    const std::string_view kw = ParseName();
    op.type = kw == "mutation" ? OperationType::mutation
              : kw == "subscription" ? OperationType::subscription
                                     : OperationType::query;
    if (Peek(Tok::name)) {
      op.name_loc = tok_.loc;
      op.name = ParseName();
    }
    if (Skip(Tok::paren_l)) {
      do {
        VariableDefinition v;
        v.loc = tok_.loc;
        Expect(Tok::dollar);
        v.name_loc = tok_.loc;
        v.name = ParseName();
        Expect(Tok::colon);
        v.type = ParseType();
        if (Skip(Tok::equals)) v.default_value = ParseValue(true);
        v.directives = ParseDirectives(true);
        op.variables.push_back(std::move(v));
      } while (!Skip(Tok::paren_r));
    }
    op.directives = ParseDirectives(false);
    op.selection_set = ParseSelectionSet();
    return op;
  }

  FragmentDefinition ParseFragment() {
    FragmentDefinition f;
    f.loc = tok_.loc;
    ExpectKeyword("fragment");
    if (PeekName("on")) Unexpected();
    f.name_loc = tok_.loc;
    f.name = ParseName();
    ExpectKeyword("on");
    f.type_condition_loc = tok_.loc;
    f.type_condition = ParseName();
    f.directives = ParseDirectives(false);
    f.selection_set = ParseSelectionSet();
    return f;
  }

  SelectionSet ParseSelectionSet() {
    DepthGuard guard(*this, tok_.loc);
    Expect(Tok::brace_l);
    SelectionSet set;
    do {
      set.push_back(ParseSelection());
    } while (!Skip(Tok::brace_r));
    return set;
  }

  Selection ParseSelection() {
    Selection s;
    s.loc = tok_.loc;
    if (Skip(Tok::spread)) {
      if (Peek(Tok::name) && !PeekName("on")) {
        s.kind = Selection::Kind::fragment_spread;
        s.name_loc = tok_.loc;
        s.name = ParseName();
        s.directives = ParseDirectives(false);
        return s;
      }
      s.kind = Selection::Kind::inline_fragment;
      if (PeekName("on")) {
        Advance();
        s.type_condition_loc = tok_.loc;
        s.type_condition = ParseName();
      }
      s.directives = ParseDirectives(false);
      s.selection_set_loc = tok_.loc;
      s.selection_set = ParseSelectionSet();
      return s;
    }
    s.kind = Selection::Kind::field;
    s.name_loc = tok_.loc;
    std::string_view first = ParseName();
    if (Skip(Tok::colon)) {
      s.alias = first;
      s.name_loc = tok_.loc;
      s.name = ParseName();
    } else {
      s.name = first;
    }
    s.arguments = ParseArguments(false);
    s.directives = ParseDirectives(false);
    if (Peek(Tok::brace_l)) {
      s.selection_set_loc = tok_.loc;
      s.selection_set = ParseSelectionSet();
    }
    return s;
  }

  std::vector<Argument> ParseArguments(bool is_const) {
    std::vector<Argument> args;
    if (!Skip(Tok::paren_l)) return args;
    do {
      Argument a;
      a.loc = tok_.loc;
      a.name = ParseName();
      Expect(Tok::colon);
      a.value = ParseValue(is_const);
      args.push_back(std::move(a));
    } while (!Skip(Tok::paren_r));
    return args;
  }

  std::vector<Directive> ParseDirectives(bool is_const) {
    std::vector<Directive> out;
    while (Peek(Tok::at)) {
      Directive d;
      d.loc = tok_.loc;
      Advance();
      d.name = ParseName();
      d.arguments = ParseArguments(is_const);
      out.push_back(std::move(d));
    }
    return out;
  }

  Value ParseValue(bool is_const) {
    Value v;
    v.loc = tok_.loc;
    switch (tok_.kind) {
      case Tok::bracket_l: {
        DepthGuard guard(*this, tok_.loc);
        Advance();
        v.kind = Value::Kind::list;
        while (!Skip(Tok::bracket_r)) v.list.push_back(ParseValue(is_const));
        return v;
      }
      case Tok::brace_l: {
        DepthGuard guard(*this, tok_.loc);
        Advance();
        v.kind = Value::Kind::object;
        while (!Skip(Tok::brace_r)) {
          ObjectField f;
          f.loc = tok_.loc;
          f.name = ParseName();
          Expect(Tok::colon);
          f.value = ParseValue(is_const);
          v.fields.push_back(std::move(f));
        }
        return v;
      }
      case Tok::int_:
        v.kind = Value::Kind::int_;
        v.raw = Text();
        Advance();
        return v;
      case Tok::float_:
        v.kind = Value::Kind::float_;
        v.raw = Text();
        Advance();
        return v;
      case Tok::string:
      case Tok::block_string:
        v.kind = Value::Kind::string;
        v.block = tok_.kind == Tok::block_string;
        v.string = Advance().value;
        return v;
      case Tok::name: {
        const std::string_view n = Text();
        if (n == "true" || n == "false") {
          v.kind = Value::Kind::boolean;
          v.boolean = n == "true";
        } else if (n == "null") {
          v.kind = Value::Kind::null;
        } else {
          v.kind = Value::Kind::enum_;
          v.raw = n;
        }
        Advance();
        return v;
      }
      case Tok::dollar: {
        Advance();
        if (is_const) {
          const std::string name = Peek(Tok::name) ? std::string(Text()) : std::string();
          throw SyntaxError{"Syntax Error: Unexpected variable \"$" + name + "\" in constant value.", v.loc};
        }
        v.kind = Value::Kind::variable;
        v.raw = ParseName();
        return v;
      }
      default: Unexpected();
    }
  }

  TypeRef ParseType() {
    TypeRef t;
    t.loc = tok_.loc;
    if (Peek(Tok::bracket_l)) {
      DepthGuard guard(*this, tok_.loc);
      Advance();
      t.kind = TypeRef::Kind::list;
      t.of = std::make_unique<TypeRef>(ParseType());
      Expect(Tok::bracket_r);
    } else {
      t.kind = TypeRef::Kind::named;
      t.name = ParseName();
    }
    if (Peek(Tok::bang)) {
      Advance();
      TypeRef nn;
      nn.loc = t.loc;
      nn.kind = TypeRef::Kind::non_null;
      nn.of = std::make_unique<TypeRef>(std::move(t));
      return nn;
    }
    return t;
  }

  // ---- type system ----
  std::string ParseDescription() {
    if (Peek(Tok::string) || Peek(Tok::block_string)) return Advance().value;
    return {};
  }

  std::vector<std::string_view> ParseImplements() {
    std::vector<std::string_view> out;
    if (!PeekName("implements")) return out;
    Advance();
    Skip(Tok::amp);
    do {
      out.push_back(ParseName());
    } while (Skip(Tok::amp));
    return out;
  }

  std::vector<InputValueDefinition> ParseArgumentDefs(Tok open, Tok close) {
    std::vector<InputValueDefinition> out;
    if (!Skip(open)) return out;
    do {
      InputValueDefinition d;
      d.description = ParseDescription();
      d.loc = tok_.loc;
      d.name = ParseName();
      Expect(Tok::colon);
      d.type = ParseType();
      if (Skip(Tok::equals)) d.default_value = ParseValue(true);
      d.directives = ParseDirectives(true);
      out.push_back(std::move(d));
    } while (!Skip(close));
    return out;
  }

  std::vector<FieldDefinition> ParseFieldDefs() {
    std::vector<FieldDefinition> out;
    if (!Skip(Tok::brace_l)) return out;
    do {
      FieldDefinition f;
      f.description = ParseDescription();
      f.loc = tok_.loc;
      f.name = ParseName();
      f.arguments = ParseArgumentDefs(Tok::paren_l, Tok::paren_r);
      Expect(Tok::colon);
      f.type = ParseType();
      f.directives = ParseDirectives(true);
      out.push_back(std::move(f));
    } while (!Skip(Tok::brace_r));
    return out;
  }

  std::vector<RootOperationType> ParseRootOperationTypes() {
    std::vector<RootOperationType> out;
    Expect(Tok::brace_l);
    do {
      RootOperationType r;
      r.loc = tok_.loc;
      const std::string_view op = ParseName();
      if (op == "query") r.operation = OperationType::query;
      else if (op == "mutation") r.operation = OperationType::mutation;
      else if (op == "subscription") r.operation = OperationType::subscription;
      else throw SyntaxError{"Syntax Error: Unexpected Name \"" + std::string(op) + "\".", r.loc};
      Expect(Tok::colon);
      r.type = ParseName();
      out.push_back(r);
    } while (!Skip(Tok::brace_r));
    return out;
  }

  void ParseTypeSystemDefinition(Document& doc, std::string description, Location start, bool extension) {
    const std::string_view kw = ParseName();
    if (kw == "schema") {
      SchemaDefinition s;
      s.extension = extension;
      s.description = std::move(description);
      s.loc = start;
      s.directives = ParseDirectives(true);
      if (!extension || Peek(Tok::brace_l)) s.operation_types = ParseRootOperationTypes();
      doc.schemas.push_back(std::move(s));
      return;
    }
    if (kw == "directive") {
      if (extension) throw SyntaxError{"Syntax Error: Unexpected Name \"directive\".", start};
      DirectiveDefinition d;
      d.description = std::move(description);
      d.loc = start;
      Expect(Tok::at);
      d.name = ParseName();
      d.arguments = ParseArgumentDefs(Tok::paren_l, Tok::paren_r);
      if (PeekName("repeatable")) {
        Advance();
        d.repeatable = true;
      }
      ExpectKeyword("on");
      Skip(Tok::pipe);
      do {
        d.locations.push_back(ParseName());
      } while (Skip(Tok::pipe));
      doc.directives.push_back(std::move(d));
      return;
    }
    TypeDefinition t;
    t.extension = extension;
    t.description = std::move(description);
    t.loc = start;
    t.name = ParseName();
    if (kw == "scalar") {
      t.kind = TypeDefinition::Kind::scalar;
      t.directives = ParseDirectives(true);
    } else if (kw == "type" || kw == "interface") {
      t.kind = kw == "type" ? TypeDefinition::Kind::object : TypeDefinition::Kind::interface;
      t.interfaces = ParseImplements();
      t.directives = ParseDirectives(true);
      t.fields = ParseFieldDefs();
    } else if (kw == "union") {
      t.kind = TypeDefinition::Kind::union_;
      t.directives = ParseDirectives(true);
      if (Skip(Tok::equals)) {
        Skip(Tok::pipe);
        do {
          t.members.push_back(ParseName());
        } while (Skip(Tok::pipe));
      }
    } else if (kw == "enum") {
      t.kind = TypeDefinition::Kind::enum_;
      t.directives = ParseDirectives(true);
      if (Skip(Tok::brace_l)) {
        do {
          EnumValueDefinition v;
          v.description = ParseDescription();
          v.loc = tok_.loc;
          v.name = ParseName();
          if (v.name == "true" || v.name == "false" || v.name == "null")
            throw SyntaxError{"Syntax Error: Name \"" + std::string(v.name) + "\" is reserved and cannot be used for an enum value.",
                              v.loc};
          v.directives = ParseDirectives(true);
          t.values.push_back(std::move(v));
        } while (!Skip(Tok::brace_r));
      }
    } else if (kw == "input") {
      t.kind = TypeDefinition::Kind::input_object;
      t.directives = ParseDirectives(true);
      t.input_fields = ParseArgumentDefs(Tok::brace_l, Tok::brace_r);
    } else {
      throw SyntaxError{"Syntax Error: Unexpected Name \"" + std::string(kw) + "\".", start};
    }
    doc.types.push_back(std::move(t));
  }

  void ParseExtension(Document& doc) {
    Location start = tok_.loc;
    ExpectKeyword("extend");
    if (!Peek(Tok::name)) Unexpected();
    ParseTypeSystemDefinition(doc, {}, start, true);
  }

  Lexer lex_;
  const ParseOptions& options_;
  Token tok_;
  std::size_t depth_ = 0;
};

}  // namespace

std::string block_string_value(std::string_view raw) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\n' || raw[i] == '\r') {
      lines.push_back(raw.substr(start, i - start));
      if (raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  lines.push_back(raw.substr(start));
  auto indent_of = [](std::string_view l) {
    std::size_t n = 0;
    while (n < l.size() && (l[n] == ' ' || l[n] == '\t')) ++n;
    return n;
  };
  std::size_t common = std::string_view::npos;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::size_t ind = indent_of(lines[i]);
    if (ind < lines[i].size() && ind < common) common = ind;
  }
  if (common != std::string_view::npos)
    for (std::size_t i = 1; i < lines.size(); ++i) lines[i] = lines[i].substr(std::min(common, lines[i].size()));
  auto blank = [&](std::string_view l) { return indent_of(l) == l.size(); };
  std::size_t first = 0, last = lines.size();
  while (first < last && blank(lines[first])) ++first;
  while (last > first && blank(lines[last - 1])) --last;
  std::string out;
  for (std::size_t i = first; i < last; ++i) {
    if (i > first) out.push_back('\n');
    out.append(lines[i]);
  }
  return out;
}

ParseResult parse(std::string source, const ParseOptions& options) {
  ParseResult result;
  auto doc = std::make_unique<Document>();
  doc->source = std::make_shared<const std::string>(std::move(source));
  try {
    Parser parser(*doc->source, options);
    parser.ParseDocument(*doc);
    result.document = std::move(doc);
  } catch (const SyntaxError& e) {
    result.error = GraphQLError{e.message, {e.loc}, {}, graphql_codes::kParseFailed};
  }
  return result;
}

}  // namespace cutoff::graphql
