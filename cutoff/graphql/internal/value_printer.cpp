#include "cutoff/graphql/internal/value_printer.hpp"

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "cutoff/graphql/internal/natural_compare.hpp"

namespace cutoff::graphql::internal {

namespace {

// graphql-js's printString: JSON's escapes, and \uXXXX (upper-case hex) for the other C0
// controls, DEL and the C1 controls.
void PrintString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  auto escape_unit = [&](unsigned c) {
    out += "\\u00";
    out.push_back(kHex[(c >> 4) & 0xF]);
    out.push_back(kHex[c & 0xF]);
  };
  out.push_back('"');
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          escape_unit(c);
        } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
          escape_unit(static_cast<unsigned char>(s[++i]));  // C1 controls U+0080..U+009F
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

bool IsWhiteSpace(char c) { return c == ' ' || c == '\t'; }

// The length JavaScript gives `s`: UTF-16 code units.
std::size_t Utf16Length(std::string_view s) {
  std::size_t n = 0;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c & 0xC0) != 0x80) ++n;  // a code point starts here
    if (c >= 0xF0) ++n;           // outside the BMP: two units
  }
  return n;
}

// graphql-js's printBlockString (not minimised): `value` between triple quotes, `"""` escaped,
// on lines of its own when it has several lines, is long, or ends in a way that would merge
// with the closing quotes.
void PrintBlockString(std::string& out, std::string_view value) {
  std::string escaped;
  for (std::size_t i = 0; i < value.size();) {
    if (value.compare(i, 3, "\"\"\"") == 0) {
      escaped += "\\\"\"\"";
      i += 3;
    } else {
      escaped.push_back(value[i++]);
    }
  }
  // The lines after the first (line terminators: \r\n, \n, \r).
  bool single_line = true;
  bool later_lines_indented = true;  // every later line is empty or starts with white space
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] != '\n' && escaped[i] != '\r') continue;
    if (escaped[i] == '\r' && i + 1 < escaped.size() && escaped[i + 1] == '\n') ++i;
    single_line = false;
    const std::size_t next = i + 1;
    if (next < escaped.size() && escaped[next] != '\n' && escaped[next] != '\r' && !IsWhiteSpace(escaped[next]))
      later_lines_indented = false;
  }
  const bool force_leading_newline = !single_line && later_lines_indented;
  const bool trailing_triple_quotes = escaped.size() >= 4 && escaped.compare(escaped.size() - 4, 4, "\\\"\"\"") == 0;
  const bool trailing_quote = !value.empty() && value.back() == '"' && !trailing_triple_quotes;
  const bool trailing_slash = !value.empty() && value.back() == '\\';
  const bool force_trailing_newline = trailing_quote || trailing_slash;
  const bool multiple_lines = !single_line || Utf16Length(value) > 70 || force_trailing_newline ||
                              force_leading_newline || trailing_triple_quotes;
  const bool skip_leading_newline = single_line && !value.empty() && IsWhiteSpace(value[0]);
  out += "\"\"\"";
  if ((multiple_lines && !skip_leading_newline) || force_leading_newline) out.push_back('\n');
  out += escaped;
  if (multiple_lines || force_trailing_newline) out.push_back('\n');
  out += "\"\"\"";
}

}  // namespace

void append_literal(std::string& out, const Value& v, LiteralStyle style) {
  switch (v.kind) {
    case Value::Kind::variable:
      out.push_back('$');
      out += v.raw;
      return;
    case Value::Kind::int_:
    case Value::Kind::float_:
    case Value::Kind::enum_: out += v.raw; return;
    case Value::Kind::string:
      if (v.block && style.block_strings) PrintBlockString(out, v.string);
      else PrintString(out, v.string);
      return;
    case Value::Kind::boolean: out += v.boolean ? "true" : "false"; return;
    case Value::Kind::null: out += "null"; return;
    case Value::Kind::list:
      out.push_back('[');
      for (std::size_t i = 0; i < v.list.size(); ++i) {
        if (i) out += ", ";
        append_literal(out, v.list[i], style);
      }
      out.push_back(']');
      return;
    case Value::Kind::object: {
      std::vector<const ObjectField*> fields;
      for (const auto& f : v.fields) fields.push_back(&f);
      if (style.sorted_fields)
        std::stable_sort(fields.begin(), fields.end(), [](const ObjectField* a, const ObjectField* b) {
          return natural_compare(a->name, b->name) < 0;
        });
      out.push_back('{');
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i) out += ", ";
        out += fields[i]->name;
        out += ": ";
        append_literal(out, fields[i]->value, style);
      }
      out.push_back('}');
      return;
    }
  }
}

std::string literal_text(const Value& v, LiteralStyle style) {
  std::string out;
  append_literal(out, v, style);
  return out;
}

}  // namespace cutoff::graphql::internal
