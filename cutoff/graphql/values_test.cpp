#include "cutoff/graphql/values.hpp"

#include "cutoff/graphql/schema.hpp"

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
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

// Fractions of a few decimals take a faster way than the shortest search: it must give the
// same text, which for these magnitudes is the shortest round-trip text in fixed notation
// (what to_chars gives with chars_format::fixed, and what JavaScript prints).
TEST(JsNumber, FractionsOfAFewDecimalsPrintAsTheShortestSearchPrintsThem) {
  auto reference = [](double d) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
    return std::string(buf, r.ptr);
  };
  std::mt19937_64 random(20261207);
  const double scales[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  int checked = 0;
  for (int i = 0; i < 300'000; ++i) {
    double d = 0;
    switch (i % 3) {
      case 0: {  // n / 10^k: the decimals the fast way is for, and some with more digits
        const int k = 1 + static_cast<int>(random() % 8);
        const std::uint64_t n = random() % static_cast<std::uint64_t>(1e9 * scales[k]);
        d = static_cast<double>(n) / scales[k];
        break;
      }
      case 1:  // any double from 1e-3 to 1e9, evenly in the exponent
        d = std::pow(10.0, -3 + 12 * std::uniform_real_distribution<double>(0, 1)(random));
        break;
      default:  // a price-like product, as arithmetic leaves it
        d = static_cast<double>(random() % 100'000) * 0.01 * static_cast<double>(1 + random() % 7);
    }
    if (random() & 1) d = -d;
    if (std::fabs(d) < 1e-3 || std::fabs(d) >= 1e9 || d == std::trunc(d)) continue;
    ASSERT_EQ(Js(d), reference(d)) << "for " << reference(d);
    ++checked;
  }
  EXPECT_GT(checked, 250'000);
  for (double d : {0.1 + 0.2, 1.005, 999999999.999999, 0.001, 0.0015, -0.5, 2.675, 1.1 * 1.1, 0.123456, 0.1234567,
                   123456.7890123, 5e-3})
    EXPECT_EQ(Js(d), reference(d));
  EXPECT_EQ(Js(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(Js(1.5), "1.5");
  EXPECT_EQ(Js(-0.001), "-0.001");
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

// Lists and objects in an error message read as graphql-js's inspect() writes them (each
// expected text printed by graphql-js 16 for the same value).
TEST(SerializeLeaf, ListsAndObjectsInAnErrorAreShownAsGraphqlJsShowsThem) {
  auto built = Schema::from_sdl("enum Color { RED } type Query { c: Color }");
  ASSERT_TRUE(built.schema) << (built.errors.empty() ? "" : built.errors.front().message);
  const Schema& schema = *built.schema;
  const std::pair<const char*, const char*> ints[] = {
      {R"([1,2])", "[1, 2]"},
      {R"({"a":1,"b":[1,{"c":{"d":1}}]})", "{ a: 1, b: [1, [Object]] }"},
      {R"([[[[1]]]])", "[[[Array]]]"},
      {R"({"a":{"b":{"c":{"d":1}}}})", "{ a: { b: [Object] } }"},
      {R"([1,2,3,4,5,6,7,8,9,10,11,12])", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ... 2 more items]"},
      {R"([1,2,3,4,5,6,7,8,9,10,11])", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ... 1 more item]"},
      {R"([])", "[]"},
      {R"({})", "{}"},
      {R"("x")", R"("x")"},
      {R"({"s":"q\""})", R"({ s: "q\"" })"},
      {R"([null,true,1.5,-0.0,1e21,"a"])", R"([null, true, 1.5, 0, 1e+21, "a"])"},
  };
  for (const auto& [json, shown] : ints) {
    const boost::json::value value = boost::json::parse(json);
    std::string error;
    EXPECT_FALSE(serialize_leaf(Data::json(&value), *schema.find_type("Int"), &error).has_value()) << json;
    EXPECT_EQ(error, std::string("Int cannot represent non-integer value: ") + shown);
    EXPECT_FALSE(coerce_input(value, *schema.find_type("Int"), &error).has_value()) << json;
    EXPECT_EQ(error, std::string("Int cannot represent non-integer value: ") + shown);
  }

  // A list of C++ values has no JSON form: it is shown item by item, an object as `{}`, with
  // the message of the field's type.
  const int object = 0;
  Data::List items;
  items.push_back(Data::from(std::int64_t{1}));
  items.push_back(Data::object(&object));
  const Data list = Data::list(std::move(items));
  const std::pair<const char*, const char*> typed[] = {
      {"Int", "Int cannot represent non-integer value: [1, {}]"},
      {"Float", "Float cannot represent non numeric value: [1, {}]"},
      {"String", "String cannot represent value: [1, {}]"},
      {"Boolean", "Boolean cannot represent a non boolean value: [1, {}]"},
      {"ID", "ID cannot represent value: [1, {}]"},
      {"Color", R"(Enum "Color" cannot represent value: [1, {}])"},
  };
  for (const auto& [type, message] : typed) {
    std::string error;
    EXPECT_FALSE(serialize_leaf(list, *schema.find_type(type), &error).has_value()) << type;
    EXPECT_EQ(error, message);
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
