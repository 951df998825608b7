#include "cutoff/graphql/values.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "cutoff/graphql/internal/suggestions.hpp"

namespace cutoff::graphql {
namespace {

namespace json = boost::json;

// A value in an error message, as graphql-js's inspect() writes it: lists as `[1, 2]` (their
// first 10 items, then "... N more items"), objects as `{ a: 1 }` with bare keys, a list or
// object nested more than two deep as `[Array]` or `[Object]`, strings as JSON, and the
// numbers JSON has no text for as JavaScript writes them (NaN, Infinity, -Infinity).
constexpr int kInspectDepth = 2;
constexpr std::size_t kInspectItems = 10;

// A list of `items` (a JSON array or a Data list), each written by `show(item, depth)`.
template <typename Items, typename Show>
void InspectList(std::string& out, const Items& items, int depth, Show show) {
  if (items.empty()) {
    out += "[]";
    return;
  }
  if (depth >= kInspectDepth) {
    out += "[Array]";
    return;
  }
  out += '[';
  const std::size_t shown = std::min(items.size(), kInspectItems);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    show(items[i], depth + 1);
  }
  if (const std::size_t more = items.size() - shown; more > 0)
    out += ", ... " + std::to_string(more) + (more == 1 ? " more item" : " more items");
  out += ']';
}

void InspectTo(std::string& out, const json::value& v, int depth) {
  switch (v.kind()) {
    case json::kind::double_: {
      const double d = v.get_double();
      if (std::isnan(d)) out += "NaN";
      else if (std::isinf(d)) out += d > 0 ? "Infinity" : "-Infinity";
      else append_js_number(out, d);
      return;
    }
    case json::kind::array:
      InspectList(out, v.get_array(), depth, [&](const json::value& item, int level) { InspectTo(out, item, level); });
      return;
    case json::kind::object: {
      const json::object& o = v.get_object();
      if (o.empty()) {
        out += "{}";
        return;
      }
      if (depth >= kInspectDepth) {
        out += "[Object]";
        return;
      }
      out += "{ ";
      bool first = true;
      for (const auto& member : o) {
        if (!first) out += ", ";
        first = false;
        out += member.key();
        out += ": ";
        InspectTo(out, member.value(), depth + 1);
      }
      out += " }";
      return;
    }
    default: append_json(out, v); return;
  }
}

std::string Inspect(const json::value& v) {
  std::string out;
  InspectTo(out, v, 0);
  return out;
}

// The same for a resolver's value. A C++ object shows nothing of itself: `{}`.
void InspectDataTo(std::string& out, const Data& d, int depth) {
  if (const json::value* j = d.if_json()) return InspectTo(out, *j, depth);
  const auto& s = d.storage();
  switch (s.index()) {
    case 0: out += "null"; return;
    case 1: out += std::get<bool>(s) ? "true" : "false"; return;
    case 2: out += std::to_string(std::get<std::int64_t>(s)); return;
    case 3: InspectTo(out, json::value(std::get<double>(s)), depth); return;
    case 4: append_json_string(out, std::get<std::string>(s)); return;
    case 7:
      InspectList(out, std::get<Data::List>(s), depth,
                  [&](const Data& item, int level) { InspectDataTo(out, item, level); });
      return;
    case 10: append_json_string(out, std::get<std::string_view>(s)); return;
    default: out += "{}"; return;  // an object, or a value still to come
  }
}

std::string InspectData(const Data& d) {
  std::string out;
  InspectDataTo(out, d, 0);
  return out;
}

// What an error message shows of a value: its JSON, or the resolver's value it came from when
// that has no JSON form (a list of C++ values, an object).
struct Shown {
  const json::value* json = nullptr;
  const Data* data = nullptr;
  std::string text() const { return json ? Inspect(*json) : InspectData(*data); }
};

bool IsIntegral(double d) { return std::isfinite(d) && std::trunc(d) == d; }

// ID's text for an integral number `v` (`d` as a double): an integer exactly, a double as
// JavaScript's String() prints it ("100000000000000000000", "1e+21"), as graphql-js does.
json::value IdText(const json::value& v, double d) {
  if (v.is_int64()) return json::string(std::to_string(v.get_int64()));
  if (v.is_uint64()) return json::string(std::to_string(v.get_uint64()));
  char buf[kJsNumberMax];
  return json::string(buf, format_js_number(d, buf));
}

// A JSON number as double, if it is one.
std::optional<double> NumberOf(const json::value& v) {
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  if (v.is_double()) return v.get_double();
  return std::nullopt;
}

// JavaScript's Number(string) for the numeric strings graphql-js accepts in serialize.
std::optional<double> NumericString(std::string_view s) {
  if (s.empty()) return std::nullopt;
  double d = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), d);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return d;
}

bool InInt32(double d) { return d >= -2147483648.0 && d <= 2147483647.0; }

// The Int rules shared by input coercion and output serialization: a whole number that fits
// in 32 bits.
std::optional<json::value> CheckInt(std::optional<double> d, const Shown& shown, std::string* error) {
  if (!d || !IsIntegral(*d)) {
    *error = "Int cannot represent non-integer value: " + shown.text();
    return std::nullopt;
  }
  if (!InInt32(*d)) {
    *error = "Int cannot represent non 32-bit signed integer value: " + shown.text();
    return std::nullopt;
  }
  return json::value(static_cast<std::int64_t>(*d));
}

std::optional<json::value> CoerceScalarInput(const json::value& v, const Type& type, std::string* error) {
  const std::string& n = type.name;
  if (n == "Int") return CheckInt(NumberOf(v), Shown{&v}, error);
  if (n == "Float") {
    auto d = NumberOf(v);
    if (!d || !std::isfinite(*d)) {
      *error = "Float cannot represent non numeric value: " + Inspect(v);
      return std::nullopt;
    }
    if (v.is_double()) return v;
    return json::value(*d);
  }
  if (n == "String") {
    if (!v.is_string()) {
      *error = "String cannot represent a non string value: " + Inspect(v);
      return std::nullopt;
    }
    return v;
  }
  if (n == "Boolean") {
    if (!v.is_bool()) {
      *error = "Boolean cannot represent a non boolean value: " + Inspect(v);
      return std::nullopt;
    }
    return v;
  }
  if (n == "ID") {
    if (v.is_string()) return v;
    auto d = NumberOf(v);
    if (d && IsIntegral(*d)) return IdText(v, *d);
    *error = "ID cannot represent value: " + Inspect(v);
    return std::nullopt;
  }
  if (type.codec.parse) {
    auto r = type.codec.parse(v);
    if (!r) *error = "Expected value of type \"" + n + "\", found " + Inspect(v) + ".";
    return r;
  }
  return v;  // a custom scalar without a codec: passed through
}

enum class Outcome { value, absent, invalid };

struct Coerced {
  Outcome outcome;
  json::value value;
};

Coerced CoerceLiteral(const Value& v, const Type& type, const json::object& vars, std::string* error);

Coerced Invalid(std::string* error, std::string message) {
  *error = std::move(message);
  return {Outcome::invalid, {}};
}

Coerced CoerceLiteral(const Value& v, const Type& type, const json::object& vars, std::string* error) {
  if (v.kind == Value::Kind::variable) {
    auto it = vars.find(v.raw);
    if (it == vars.end()) return {Outcome::absent, {}};
    if (type.kind == TypeKind::non_null && it->value().is_null())
      return Invalid(error, "Expected non-nullable type \"" + type.display() + "\" not to be null.");
    return {Outcome::value, it->value()};
  }
  if (type.kind == TypeKind::non_null) {
    if (v.kind == Value::Kind::null)
      return Invalid(error, "Expected non-nullable type \"" + type.display() + "\" not to be null.");
    return CoerceLiteral(v, *type.of_type, vars, error);
  }
  if (v.kind == Value::Kind::null) return {Outcome::value, nullptr};
  switch (type.kind) {
    case TypeKind::list: {
      json::array out;
      if (v.kind == Value::Kind::list) {
        for (const Value& item : v.list) {
          Coerced c = CoerceLiteral(item, *type.of_type, vars, error);
          if (c.outcome == Outcome::invalid) return c;
          if (c.outcome == Outcome::absent) {
            if (type.of_type->is_non_null()) return Invalid(error, "Expected non-nullable list item to be provided.");
            out.push_back(nullptr);
          } else {
            out.push_back(std::move(c.value));
          }
        }
        return {Outcome::value, std::move(out)};
      }
      Coerced c = CoerceLiteral(v, *type.of_type, vars, error);
      if (c.outcome != Outcome::value) return c.outcome == Outcome::absent ? Coerced{Outcome::value, nullptr} : c;
      out.push_back(std::move(c.value));
      return {Outcome::value, std::move(out)};
    }
    case TypeKind::input_object: {
      if (v.kind != Value::Kind::object)
        return Invalid(error, "Expected type \"" + type.name + "\" to be an object.");
      json::object out;
      for (const ObjectField& f : v.fields)
        if (!type.find_input_field(f.name))
          return Invalid(error, "Field \"" + std::string(f.name) + "\" is not defined by type \"" + type.name + "\".");
      for (const InputValue& def : type.input_fields) {
        const ObjectField* given = nullptr;
        for (const ObjectField& f : v.fields)
          if (f.name == def.name) given = &f;
        Coerced c{Outcome::absent, {}};
        if (given) {
          c = CoerceLiteral(given->value, *def.type, vars, error);
          if (c.outcome == Outcome::invalid) return c;
        }
        if (c.outcome == Outcome::absent) {
          if (def.default_value) {
            std::string inner;
            auto d = coerce_input(*def.default_value, *def.type, &inner);
            if (!d) return Invalid(error, inner);
            out[def.name] = std::move(*d);
          } else if (def.type->is_non_null()) {
            return Invalid(error, "Field \"" + type.name + "." + def.name + "\" of required type \"" +
                                      def.type->display() + "\" was not provided.");
          }
          continue;
        }
        out[def.name] = std::move(c.value);
      }
      return {Outcome::value, std::move(out)};
    }
    case TypeKind::enum_: {
      if (v.kind != Value::Kind::enum_)
        return Invalid(error, "Enum \"" + type.name + "\" cannot represent non-enum value: " + print_literal(v) + ".");
      if (!type.find_enum_value(v.raw))
        return Invalid(error, "Value \"" + std::string(v.raw) + "\" does not exist in \"" + type.name + "\" enum.");
      return {Outcome::value, json::string(v.raw)};
    }
    case TypeKind::scalar: {
      // Literals of the built-in scalars are checked by kind, like graphql-js's parseLiteral.
      const std::string& n = type.name;
      const bool builtin = n == "Int" || n == "Float" || n == "String" || n == "Boolean" || n == "ID";
      if (builtin) {
        if (n == "Int" && v.kind != Value::Kind::int_)
          return Invalid(error, "Int cannot represent non-integer value: " + print_literal(v));
        if (n == "Float" && v.kind != Value::Kind::int_ && v.kind != Value::Kind::float_)
          return Invalid(error, "Float cannot represent non numeric value: " + print_literal(v));
        if (n == "String" && v.kind != Value::Kind::string)
          return Invalid(error, "String cannot represent a non string value: " + print_literal(v));
        if (n == "Boolean" && v.kind != Value::Kind::boolean)
          return Invalid(error, "Boolean cannot represent a non boolean value: " + print_literal(v));
        if (n == "ID" && v.kind != Value::Kind::string && v.kind != Value::Kind::int_)
          return Invalid(error, "ID cannot represent a non-string and non-integer value: " + print_literal(v));
        if (n == "ID" && v.kind == Value::Kind::int_) return {Outcome::value, json::string(v.raw)};
      }
      json::value j = literal_to_json(v);
      // Variables nested in a custom scalar's literal are substituted.
      auto r = CoerceScalarInput(j, type, error);
      if (!r) return {Outcome::invalid, {}};
      return {Outcome::value, std::move(*r)};
    }
    default: return Invalid(error, "Unexpected input type \"" + type.display() + "\".");
  }
}

}  // namespace

namespace {

// coerce_input's walk: `path` is where `v` sits in the whole value (graphql-js's notation),
// restored on return.
std::optional<json::value> CoerceInputAt(const json::value& v, const Type& type, std::string& path, InputError* error) {
  auto fail = [&](std::string message) -> std::optional<json::value> {
    error->message = std::move(message);
    error->path = path;
    error->shown = Inspect(v);
    return std::nullopt;
  };
  if (type.kind == TypeKind::non_null) {
    if (v.is_null()) return fail("Expected non-nullable type \"" + type.display() + "\" not to be null.");
    return CoerceInputAt(v, *type.of_type, path, error);
  }
  if (v.is_null()) return json::value(nullptr);
  switch (type.kind) {
    case TypeKind::list: {
      json::array out;
      if (!v.is_array()) {  // a single value stands for a list of one
        auto c = CoerceInputAt(v, *type.of_type, path, error);
        if (!c) return std::nullopt;
        out.push_back(std::move(*c));
        return json::value(std::move(out));
      }
      const std::size_t at = path.size();
      std::size_t i = 0;
      for (const json::value& item : v.as_array()) {
        path += '[' + std::to_string(i++) + ']';
        auto c = CoerceInputAt(item, *type.of_type, path, error);
        path.resize(at);
        if (!c) return std::nullopt;
        out.push_back(std::move(*c));
      }
      return json::value(std::move(out));
    }
    case TypeKind::input_object: {
      if (!v.is_object()) return fail("Expected type \"" + type.name + "\" to be an object.");
      const json::object& in = v.as_object();
      json::object out;
      for (const InputValue& def : type.input_fields) {
        auto it = in.find(def.name);
        if (it == in.end()) {
          if (def.default_value) {
            std::string from_default;  // the schema's own value: its path is not the caller's
            auto d = CoerceInputAt(*def.default_value, *def.type, from_default, error);
            if (!d) return std::nullopt;
            out[def.name] = std::move(*d);
          } else if (def.type->is_non_null()) {
            return fail("Field \"" + def.name + "\" of required type \"" + def.type->display() +
                        "\" was not provided.");
          }
          continue;
        }
        const std::size_t at = path.size();
        path += '.' + def.name;
        auto c = CoerceInputAt(it->value(), *def.type, path, error);
        path.resize(at);
        if (!c) return std::nullopt;
        out[def.name] = std::move(*c);
      }
      for (const auto& kv : in) {  // graphql-js looks at the given fields after the defined ones
        if (type.find_input_field(kv.key())) continue;
        std::vector<std::string_view> names;
        for (const InputValue& def : type.input_fields) names.push_back(def.name);
        return fail("Field \"" + std::string(kv.key()) + "\" is not defined by type \"" + type.name + "\"." +
                    internal::did_you_mean(internal::suggestion_list(kv.key(), names)));
      }
      return json::value(std::move(out));
    }
    case TypeKind::enum_: {
      if (v.is_string() && type.find_enum_value(v.as_string())) return v;
      // The enum values near what was given, as graphql-js offers them.
      const std::string given = v.is_string() ? std::string(v.as_string()) : Inspect(v);
      std::vector<std::string_view> names;
      for (const EnumValue& e : type.enum_values) names.push_back(e.name);
      const std::string offer = internal::did_you_mean("the enum value", internal::suggestion_list(given, names));
      if (!v.is_string())
        return fail("Enum \"" + type.name + "\" cannot represent non-string value: " + given + "." + offer);
      return fail("Value \"" + given + "\" does not exist in \"" + type.name + "\" enum." + offer);
    }
    case TypeKind::scalar: {
      std::string message;
      auto c = CoerceScalarInput(v, type, &message);
      if (!c) return fail(std::move(message));
      return c;
    }
    default: return fail("Unexpected input type \"" + type.display() + "\".");
  }
}

}  // namespace

std::optional<json::value> coerce_input(const json::value& v, const Type& type, InputError* error) {
  std::string path;
  return CoerceInputAt(v, type, path, error);
}

std::optional<json::value> coerce_input(const json::value& v, const Type& type, std::string* error) {
  InputError e;
  auto c = coerce_input(v, type, &e);
  if (!c) *error = e.path.empty() ? e.message : "At \"value" + e.path + "\": " + e.message;
  return c;
}

std::optional<json::value> coerce_literal(const Value& v, const Type& type, const json::object& variables,
                                          std::string* error) {
  Coerced c = CoerceLiteral(v, type, variables, error);
  if (c.outcome == Outcome::invalid) return std::nullopt;
  if (c.outcome == Outcome::absent) {
    error->clear();
    return std::nullopt;
  }
  return std::move(c.value);
}

std::optional<json::value> serialize_leaf(const Data& data, const Type& type, std::string* error) {
  // Normalise to a JSON view of the value. One with no JSON form (a list of C++ values, an
  // object) is read as null and shown as itself in the error of a built-in scalar or an enum.
  json::value owned;
  const json::value* v = data.if_json();
  bool opaque = false;  // no JSON form: checked as null, shown as the Data itself
  if (!v) {
    const auto& s = data.storage();
    switch (s.index()) {
      case 0: owned = nullptr; break;
      case 1: owned = std::get<bool>(s); break;
      case 2: owned = std::get<std::int64_t>(s); break;
      case 3: owned = std::get<double>(s); break;
      case 4: owned = json::string(std::get<std::string>(s)); break;
      case 10: owned = json::string(std::get<std::string_view>(s)); break;
      default:
        if (type.kind != TypeKind::enum_ && type.builtin == BuiltinScalar::none) {
          *error = type.name + " cannot represent value: " + InspectData(data);
          return std::nullopt;
        }
        opaque = true;  // `owned` stays null
        break;
    }
    v = &owned;
  }
  const Shown shown{opaque ? nullptr : v, &data};
  const std::string& n = type.name;
  if (type.kind == TypeKind::enum_) {
    if (v->is_string() && type.find_enum_value(v->as_string())) return *v;
    *error = "Enum \"" + n + "\" cannot represent value: " + shown.text();
    return std::nullopt;
  }
  if (n == "Int") {
    std::optional<double> d = NumberOf(*v);
    if (v->is_bool()) d = v->get_bool() ? 1 : 0;
    if (v->is_string()) d = NumericString(v->get_string());
    return CheckInt(d, shown, error);
  }
  if (n == "Float") {
    std::optional<double> d = NumberOf(*v);
    if (v->is_bool()) d = v->get_bool() ? 1 : 0;
    if (v->is_string()) d = NumericString(v->get_string());
    if (!d || !std::isfinite(*d)) {
      *error = "Float cannot represent non numeric value: " + shown.text();
      return std::nullopt;
    }
    if (v->is_int64() || v->is_uint64()) return *v;
    return json::value(*d);
  }
  if (n == "String") {
    if (v->is_string()) return *v;
    if (v->is_bool()) return json::value(json::string(v->get_bool() ? "true" : "false"));
    if (auto d = NumberOf(*v); d && std::isfinite(*d)) {
      std::string out;
      if (v->is_int64()) out = std::to_string(v->get_int64());
      else append_js_number(out, *d);
      return json::value(json::string(out));
    }
    *error = "String cannot represent value: " + shown.text();
    return std::nullopt;
  }
  if (n == "Boolean") {
    if (v->is_bool()) return *v;
    if (auto d = NumberOf(*v); d && std::isfinite(*d)) return json::value(*d != 0);
    *error = "Boolean cannot represent a non boolean value: " + shown.text();
    return std::nullopt;
  }
  if (n == "ID") {
    if (v->is_string()) return *v;
    if (auto d = NumberOf(*v); d && IsIntegral(*d)) return IdText(*v, *d);
    *error = "ID cannot represent value: " + shown.text();
    return std::nullopt;
  }
  if (type.codec.serialize) {
    auto r = type.codec.serialize(data);
    if (!r) *error = n + " cannot represent value: " + shown.text();
    return r;
  }
  return *v;  // a custom scalar without a codec: passed through
}

std::size_t format_js_number(double d, char* buf) {
  char* out = buf;
  auto put = [&](std::string_view s) { out = std::copy(s.begin(), s.end(), out); };
  if (!std::isfinite(d)) {
    put("null");
    return static_cast<std::size_t>(out - buf);
  }
  if (d == 0) {
    put("0");
    return 1;
  }
  // Integers below 2^53 print as integers; fractions from 1e-6 on in the fixed notation,
  // which the shortest round-trip form of to_chars is whenever it has no exponent. (Doubles
  // from 2^53 on are all integers, which to_chars would print with every digit, exactly.)
  const bool integral = d == std::trunc(d);
  if (integral && std::fabs(d) < 9007199254740992.0)
    return static_cast<std::size_t>(std::to_chars(buf, buf + kJsNumberMax, static_cast<std::int64_t>(d)).ptr - buf);
  if (!integral && std::fabs(d) >= 1e-3 && std::fabs(d) < 1e9) {
    // A fraction of a few decimals (a price, a half): its digits found by scaling, which
    // costs a fraction of to_chars's shortest search. Taken only when the scaled integer
    // divides back to exactly `d` (the division is correctly rounded, so that decimal reads
    // as `d`) with at most 15 significant digits, where only one decimal reads as a given
    // double: it is the shortest text, the one JavaScript prints. The first k that works has
    // no trailing zero (k - 1 would have worked).
    static constexpr double kPow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
    const double a = std::fabs(d);
    for (int k = 1; k <= 6; ++k) {
      const double n = std::nearbyint(a * kPow10[k]);
      if (n / kPow10[k] != a) continue;
      const auto digits = static_cast<std::uint64_t>(n);
      const auto scale = static_cast<std::uint64_t>(kPow10[k]);
      if (d < 0) *out++ = '-';
      out = std::to_chars(out, buf + kJsNumberMax, digits / scale).ptr;
      *out++ = '.';
      std::uint64_t fraction = digits % scale;
      for (int i = k - 1; i >= 0; --i) {
        out[i] = static_cast<char>('0' + fraction % 10);
        fraction /= 10;
      }
      out += k;
      return static_cast<std::size_t>(out - buf);
    }
  }
  if (!integral && std::fabs(d) >= 1e-6) {
    const auto r = std::to_chars(buf, buf + kJsNumberMax, d);
    if (std::find(buf, r.ptr, 'e') == r.ptr) return static_cast<std::size_t>(r.ptr - buf);
  }
  if (d < 0) {
    put("-");
    d = -d;
  }
  char sci_buf[kJsNumberMax];
  const auto r = std::to_chars(sci_buf, sci_buf + sizeof sci_buf, d, std::chars_format::scientific);
  const std::string_view sci(sci_buf, static_cast<std::size_t>(r.ptr - sci_buf));  // "d.ddde+XX"
  const std::size_t e_pos = sci.find('e');
  char digits_buf[kJsNumberMax];
  std::size_t k = 0;
  for (char c : sci.substr(0, e_pos))
    if (c != '.') digits_buf[k++] = c;
  const std::string_view digits(digits_buf, k);
  int exp10 = 0;
  std::from_chars(sci.data() + e_pos + (sci[e_pos + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp10);
  const int n = exp10 + 1;  // value = 0.digits * 10^n
  const auto zeros = [&](int count) { out = std::fill_n(out, count, '0'); };
  if (static_cast<int>(k) <= n && n <= 21) {
    put(digits);
    zeros(n - static_cast<int>(k));
  } else if (0 < n && n <= 21) {
    put(digits.substr(0, static_cast<std::size_t>(n)));
    put(".");
    put(digits.substr(static_cast<std::size_t>(n)));
  } else if (-6 < n && n <= 0) {
    put("0.");
    zeros(-n);
    put(digits);
  } else {
    put(digits.substr(0, 1));
    if (k > 1) {
      put(".");
      put(digits.substr(1));
    }
    put(n - 1 >= 0 ? "e+" : "e-");
    out = std::to_chars(out, buf + kJsNumberMax, std::abs(n - 1)).ptr;
  }
  return static_cast<std::size_t>(out - buf);
}

void append_js_number(std::string& out, double d) {
  char buf[kJsNumberMax];
  out.append(buf, format_js_number(d, buf));
}

void append_json(std::string& out, const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: out += "null"; break;
    case json::kind::bool_: out += v.get_bool() ? "true" : "false"; break;
    case json::kind::int64: out += std::to_string(v.get_int64()); break;
    case json::kind::uint64: out += std::to_string(v.get_uint64()); break;
    case json::kind::double_: append_js_number(out, v.get_double()); break;
    case json::kind::string: append_json_string(out, v.get_string()); break;
    case json::kind::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& item : v.get_array()) {
        if (!first) out.push_back(',');
        first = false;
        append_json(out, item);
      }
      out.push_back(']');
      break;
    }
    case json::kind::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& kv : v.get_object()) {
        if (!first) out.push_back(',');
        first = false;
        append_json_string(out, kv.key());
        out.push_back(':');
        append_json(out, kv.value());
      }
      out.push_back('}');
      break;
    }
  }
}

}  // namespace cutoff::graphql
