#include "cutoff/graphql/values.hpp"

#include "cutoff/graphql/schema.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace cutoff::graphql {
namespace {

std::string Js(double d) {
  std::string out;
  append_js_number(out, d);
  return out;
}

// What JavaScript's Number.prototype.toString prints (checked in Node), on both sides of
// every switch between notations and of the integer fast path.
TEST(JsNumber, PrintsWhatJavaScriptPrints) {
  EXPECT_EQ(Js(0), "0");
  EXPECT_EQ(Js(-0.0), "0");
  EXPECT_EQ(Js(1), "1");
  EXPECT_EQ(Js(-1), "-1");
  EXPECT_EQ(Js(100), "100");
  EXPECT_EQ(Js(1.5), "1.5");
  EXPECT_EQ(Js(-2.25), "-2.25");
  EXPECT_EQ(Js(0.1), "0.1");
  EXPECT_EQ(Js(123.456), "123.456");
  EXPECT_EQ(Js(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(Js(-2.0 / 3), "-0.6666666666666666");
  EXPECT_EQ(Js(1e15 + 0.5), "1000000000000000.5");
  EXPECT_EQ(Js(9007199254740991.0), "9007199254740991");
  EXPECT_EQ(Js(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(Js(1e20), "100000000000000000000");
  EXPECT_EQ(Js(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(Js(1e21), "1e+21");
  EXPECT_EQ(Js(1.2345678901234567e21), "1.2345678901234568e+21");
  EXPECT_EQ(Js(1e300), "1e+300");
  EXPECT_EQ(Js(0.000123), "0.000123");
  EXPECT_EQ(Js(1e-6), "0.000001");
  EXPECT_EQ(Js(1.5e-6), "0.0000015");
  EXPECT_EQ(Js(1e-7), "1e-7");
  EXPECT_EQ(Js(-1.5e-7), "-1.5e-7");
  EXPECT_EQ(Js(5e-324), "5e-324");
  EXPECT_EQ(Js(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(Js(std::nan("")), "null");
}

// The numbers JSON cannot write are named as graphql-js's inspect() names them, not as null.
TEST(SerializeLeaf, AFloatThatIsNotFiniteIsNamedAsJavaScriptNamesIt) {
  auto built = Schema::from_sdl("type Query { x: Float }");
  ASSERT_TRUE(built.schema) << (built.errors.empty() ? "" : built.errors.front().message);
  const Type& float_type = *built.schema->find_type("Float");
  const std::pair<double, const char*> cases[] = {{std::numeric_limits<double>::quiet_NaN(), "NaN"},
                                                  {std::numeric_limits<double>::infinity(), "Infinity"},
                                                  {-std::numeric_limits<double>::infinity(), "-Infinity"}};
  for (const auto& [value, name] : cases) {
    std::string error;
    EXPECT_FALSE(serialize_leaf(Data::from(value), float_type, &error).has_value());
    EXPECT_EQ(error, std::string("Float cannot represent non numeric value: ") + name);
  }
}


// graphql-js turns an integral number into an ID with String(): past 2^53 that is the
// shortest digits padded with zeros, and from 1e21 on the exponent form. Integers of 64 bits
// keep every digit.
TEST(SerializeLeaf, AnIdFromALargeNumberIsWhatJavaScriptsStringGives) {
  auto built = Schema::from_sdl("type Query { x: ID }");
  ASSERT_TRUE(built.schema) << (built.errors.empty() ? "" : built.errors.front().message);
  const Type& id_type = *built.schema->find_type("ID");
  const std::pair<double, const char*> doubles[] = {{1e20, "100000000000000000000"},
                                                    {1e21, "1e+21"},
                                                    {-1e300, "-1e+300"},
                                                    {1152921504606846976.0, "1152921504606847000"},
                                                    {42.0, "42"}};
  for (const auto& [value, text] : doubles) {
    std::string error;
    auto out = serialize_leaf(Data::from(value), id_type, &error);
    ASSERT_TRUE(out.has_value()) << error;
    EXPECT_EQ(out->as_string(), text);
    auto in = coerce_input(boost::json::value(value), id_type, &error);
    ASSERT_TRUE(in.has_value()) << error;
    EXPECT_EQ(in->as_string(), text);
  }
  std::string error;
  auto max = serialize_leaf(Data::from(std::numeric_limits<std::int64_t>::max()), id_type, &error);
  ASSERT_TRUE(max.has_value()) << error;
  EXPECT_EQ(max->as_string(), "9223372036854775807");
  auto umax = coerce_input(boost::json::value(std::numeric_limits<std::uint64_t>::max()), id_type, &error);
  ASSERT_TRUE(umax.has_value()) << error;
  EXPECT_EQ(umax->as_string(), "18446744073709551615");
}

}  // namespace
}  // namespace cutoff::graphql
