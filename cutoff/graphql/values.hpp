// Input coercion (variables and argument literals) and leaf output serialization, as the
// GraphQL spec's CoerceVariableValues, CoerceArgumentValues and CompleteValue define them.
//
//   std::string error;
//   auto v = coerce_input(json, *schema.find_type("Int"), &error);  // nullopt + message on failure
//
// Numbers are written the way JavaScript's JSON.stringify writes them (shortest round trip,
// `1e+21`, `1e-7`), so responses are byte-for-byte comparable with graphql-js.
#ifndef CUTOFF_GRAPHQL_VALUES_HPP_
#define CUTOFF_GRAPHQL_VALUES_HPP_

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <optional>
#include <string>

#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/data.hpp"
#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql {

// A JSON input value (a variable) coerced to `type`; nullopt with `*error` set when invalid.
std::optional<boost::json::value> coerce_input(const boost::json::value& v, const Type& type, std::string* error);
// Why a value could not be coerced, and where, in graphql-js's words.
struct InputError {
  std::string message;  // `Int cannot represent non-integer value: "x"`
  std::string path;     // where in the value, as graphql-js prints it: "[1]", ".x[2]"; empty: the value itself
  std::string shown;    // the value found there, as graphql-js's inspect() shows it
};
// The same, telling where: a variable's error reads `Variable "$v" got invalid value "x" at
// "v[1]"; Int cannot represent non-integer value: "x"`. (The overload above gives the message,
// after `At "value[1]": ` when the failure is inside the value.)
std::optional<boost::json::value> coerce_input(const boost::json::value& v, const Type& type, InputError* error);

// An argument literal coerced to `type`, reading variables from `variables` (already
// coerced). nullopt with `*error` set when invalid; nullopt with `*error` empty when the literal
// is a variable that was not provided, so the caller can fall back to a default.
std::optional<boost::json::value> coerce_literal(const Value& v, const Type& type, const boost::json::object& variables,
                                                 std::string* error);

// A leaf value to its JSON output form; nullopt with `*error` set when it cannot be
// represented (a field error).
std::optional<boost::json::value> serialize_leaf(const Data& v, const Type& type, std::string* error);

// Appends a JSON number the way JavaScript's JSON.stringify does (non-finite: null).
void append_js_number(std::string& out, double d);
// The same text written to `buf`, which holds kJsNumberMax chars; returns its length.
inline constexpr std::size_t kJsNumberMax = 32;
std::size_t format_js_number(double d, char* buf);
// Appends any JSON value, numbers as JavaScript writes them.
void append_json(std::string& out, const boost::json::value& v);

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_VALUES_HPP_
