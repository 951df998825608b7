#include "cutoff/graphql/values.hpp"

#include "cutoff/graphql/schema.hpp"

#include <gtest/gtest.h>

#include <cmath>
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

}  // namespace
}  // namespace cutoff::graphql
