#include "cutoff/graphql/internal/value_printer.hpp"

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "cutoff/graphql/internal/natural_compare.hpp"

namespace cutoff::graphql::internal {

namespace {

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

}  // namespace

void append_literal(std::string& out, const Value& v, FieldOrder order) {
  switch (v.kind) {
    case Value::Kind::variable:
      out.push_back('$');
      out += v.raw;
      return;
    case Value::Kind::int_:
    case Value::Kind::float_:
    case Value::Kind::enum_: out += v.raw; return;
    case Value::Kind::string:
      if (v.block) {
        std::string body = v.string;
        for (std::size_t p = 0; (p = body.find("\"\"\"", p)) != std::string::npos; p += 4) body.insert(p, "\\");
        out += "\"\"\"" + body + "\"\"\"";
      } else {
        PrintString(out, v.string);
      }
      return;
    case Value::Kind::boolean: out += v.boolean ? "true" : "false"; return;
    case Value::Kind::null: out += "null"; return;
    case Value::Kind::list:
      out.push_back('[');
      for (std::size_t i = 0; i < v.list.size(); ++i) {
        if (i) out += ", ";
        append_literal(out, v.list[i], order);
      }
      out.push_back(']');
      return;
    case Value::Kind::object: {
      std::vector<const ObjectField*> fields;
      for (const auto& f : v.fields) fields.push_back(&f);
      if (order == FieldOrder::sorted)
        std::stable_sort(fields.begin(), fields.end(),
                         [](const ObjectField* a, const ObjectField* b) { return natural_compare(a->name, b->name) < 0; });
      out.push_back('{');
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i) out += ", ";
        out += fields[i]->name;
        out += ": ";
        append_literal(out, fields[i]->value, order);
      }
      out.push_back('}');
      return;
    }
  }
}

std::string literal_text(const Value& v, FieldOrder order) {
  std::string out;
  append_literal(out, v, order);
  return out;
}

}  // namespace cutoff::graphql::internal
