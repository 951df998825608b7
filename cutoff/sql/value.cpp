#include "cutoff/sql/value.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "cutoff/core/error.hpp"
#include "cutoff/core/json_text.hpp"

namespace cutoff::sql {
namespace {

void AppendBase64(std::string& out, std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    auto n = (unsigned(static_cast<unsigned char>(bytes[i])) << 16) |
             (unsigned(static_cast<unsigned char>(bytes[i + 1])) << 8) |
             unsigned(static_cast<unsigned char>(bytes[i + 2]));
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (std::size_t rest = bytes.size() - i; rest > 0) {
    unsigned n = unsigned(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) n |= unsigned(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
}

bool IsJsonNumber(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

// One scalar in text form (a numeric, an array element), written in `form`.
void AppendTextAs(std::string& out, std::string_view text, JsonForm form) {
  switch (form) {
    case JsonForm::boolean:
      if (text == "t" || text == "true") return void(out += "true");
      if (text == "f" || text == "false") return void(out += "false");
      break;
    case JsonForm::number:
      // PostgreSQL prints numbers as JSON does, save NaN and the infinities.
      if (IsJsonNumber(text)) return void(out += text);
      break;
    case JsonForm::json:
      return void(out += text);  // the database checked it is JSON
    default: break;
  }
  append_json_string(out, text);
}

// PostgreSQL's array text form as a JSON array. False (and `out` as it was) when `text` is not
// in that form.
bool AppendPgArray(std::string& out, std::string_view text, JsonForm element) {
  const std::size_t mark = out.size();
  std::size_t i = 0;
  if (!text.empty() && text[0] == '[') {  // dimension decoration: [1:2]={...}
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos) return false;
    i = eq + 1;
  }
  int depth = 0;
  bool expect_element = true;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '{') {
      if (!expect_element) break;
      out.push_back('[');
      ++depth;
      ++i;
      continue;
    }
    if (c == '}') {
      if (depth == 0) break;
      out.push_back(']');
      --depth;
      ++i;
      expect_element = false;
      if (depth == 0) return i == text.size() || (out.resize(mark), false);
      continue;
    }
    if (c == ',') {
      if (expect_element || depth == 0) break;
      out.push_back(',');
      expect_element = true;
      ++i;
      continue;
    }
    if (!expect_element || depth == 0) break;
    if (c == '"') {
      std::string value;
      ++i;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        value.push_back(text[i++]);
      }
      if (i == text.size()) break;
      ++i;  // the closing quote
      AppendTextAs(out, value, element);
    } else {
      const std::size_t from = i;
      while (i < text.size() && text[i] != ',' && text[i] != '}') ++i;
      const std::string_view value = text.substr(from, i - from);
      if (value.size() == 4 && (value == "NULL" || value == "null")) {
        out += "null";
      } else {
        AppendTextAs(out, value, element);
      }
    }
    expect_element = false;
  }
  out.resize(mark);
  return false;
}

}  // namespace

std::string_view Value::type_name() const noexcept {
  switch (v_.index()) {
    case 0: return "null";
    case 1: return "integer";
    case 2: return "real";
    case 3: return "text";
    default: return "blob";
  }
}

void Value::append_json(std::string& out) const {
  if (is_null()) {
    out += "null";
  } else if (auto* i = if_int()) {
    out += std::to_string(*i);
  } else if (auto* d = if_double()) {
    if (!std::isfinite(*d)) {
      out += "null";
    } else {
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, *d);
      out.append(buf, r.ptr);
    }
  } else if (auto* s = if_text()) {
    append_json_string(out, *s);
  } else {
    out.push_back('"');
    AppendBase64(out, if_blob()->bytes);
    out.push_back('"');
  }
}

namespace internal {

void ThrowConversion(std::string_view column, const Value& v, std::string_view wanted) {
  std::string held = std::string(v.type_name());
  if (auto* s = v.if_text()) held += " '" + s->substr(0, 40) + "'";
  throw Error(ErrorCode::invalid_argument,
              "column '" + std::string(column) + "' holds " + held + ", not " + std::string(wanted));
}

std::optional<std::int64_t> ToInt(const Value& v) noexcept {
  if (auto* i = v.if_int()) return *i;
  if (auto* d = v.if_double()) {
    if (std::isfinite(*d) && std::trunc(*d) == *d && *d >= -9.2e18 && *d <= 9.2e18)
      return static_cast<std::int64_t>(*d);
    return std::nullopt;
  }
  if (auto* s = v.if_text()) {
    if (*s == "t" || *s == "true") return 1;  // PostgreSQL booleans in text form
    if (*s == "f" || *s == "false") return 0;
    std::int64_t out = 0;
    auto r = std::from_chars(s->data(), s->data() + s->size(), out);
    if (r.ec == std::errc() && r.ptr == s->data() + s->size()) return out;
  }
  return std::nullopt;
}

std::optional<double> ToDouble(const Value& v) noexcept {
  if (auto* d = v.if_double()) return *d;
  if (auto* i = v.if_int()) return static_cast<double>(*i);
  if (auto* s = v.if_text()) {
    double out = 0;
    auto r = std::from_chars(s->data(), s->data() + s->size(), out);
    if (r.ec == std::errc() && r.ptr == s->data() + s->size()) return out;
  }
  return std::nullopt;
}

}  // namespace internal

std::size_t Row::index_of(std::string_view column) const {
  for (std::size_t i = 0; i < columns_->size(); ++i)
    if ((*columns_)[i] == column) return i;
  throw Error(ErrorCode::invalid_argument, "no column named '" + std::string(column) + "'");
}

std::string Row::to_json() const {
  std::string out = "{";
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (i) out.push_back(',');
    append_json_string(out, name_of(i));
    out.push_back(':');
    const Value& v = values_[i];
    const ColumnForm form = forms_ && i < forms_->size() ? (*forms_)[i] : ColumnForm{};
    const std::string* text = v.if_text();
    if (form.form == JsonForm::boolean && v.if_int()) {
      out += *v.if_int() ? "true" : "false";
    } else if (text && (form.form == JsonForm::json || form.form == JsonForm::number || form.form == JsonForm::boolean)) {
      AppendTextAs(out, *text, form.form);
    } else if (text && form.form == JsonForm::array) {
      if (!AppendPgArray(out, *text, form.element)) append_json_string(out, *text);
    } else {
      v.append_json(out);
    }
  }
  out.push_back('}');
  return out;
}

}  // namespace cutoff::sql
