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
    values_[i].append_json(out);
  }
  out.push_back('}');
  return out;
}

}  // namespace cutoff::sql
