#include "cutoff/sql/value.hpp"

#include <gtest/gtest.h>

#include "cutoff/core/error.hpp"

namespace cutoff::sql {
namespace {

Row MakeRow(std::vector<std::string> names, std::vector<Value> values) {
  return Row(std::make_shared<std::vector<std::string>>(std::move(names)), std::move(values));
}

TEST(Value, KindsAndTypedAccess) {
  Row row = MakeRow({"id", "price", "name", "note", "flag", "data"},
                    {std::int64_t{7}, 2.5, "widget", nullptr, "t", Blob{"\x01\x02"}});
  EXPECT_EQ(row.get<std::int64_t>(0), 7);
  EXPECT_EQ(row.get<int>("id"), 7);
  EXPECT_DOUBLE_EQ(row.get<double>("price"), 2.5);
  EXPECT_DOUBLE_EQ(row.get<double>("id"), 7.0);
  EXPECT_EQ(row.get<std::string>("name"), "widget");
  EXPECT_EQ(row.get<std::optional<std::string>>("note"), std::nullopt);
  EXPECT_TRUE(row.get<bool>("flag"));
  EXPECT_EQ(row.get<Blob>("data").bytes, "\x01\x02");
  EXPECT_TRUE(row.is_null(3));
}

TEST(Value, LossyConversionsThrowNamingTheColumn) {
  Row row = MakeRow({"price", "name", "big"}, {2.5, "widget", std::int64_t{1} << 40});
  try {
    (void)row.get<std::int64_t>("price");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(e.message().find("price"), std::string::npos);
  }
  EXPECT_THROW((void)row.get<std::int64_t>("name"), Error);
  EXPECT_THROW((void)row.get<int>("big"), Error);
  EXPECT_THROW((void)row.get<int>("nope"), Error);
  EXPECT_THROW((void)MakeRow({"x"}, {nullptr}).get<int>(0), Error);
}

TEST(Value, NumericTextConverts) {
  Row row = MakeRow({"n", "d"}, {"42", "1.5"});
  EXPECT_EQ(row.get<std::int64_t>("n"), 42);
  EXPECT_DOUBLE_EQ(row.get<double>("d"), 1.5);
}

TEST(Value, RowToJson) {
  Row row = MakeRow({"id", "name", "x", "b", "q"}, {std::int64_t{1}, "a\"b\n", nullptr, Blob{"abcd"}, 0.5});
  EXPECT_EQ(row.to_json(), R"({"id":1,"name":"a\"b\n","x":null,"b":"YWJjZA==","q":0.5})");
}

// Column forms (set by the PostgreSQL driver): values come out as the JSON types they are.
TEST(Value, RowToJsonInColumnForms) {
  auto names = std::make_shared<std::vector<std::string>>(
      std::vector<std::string>{"b", "j", "n", "ints", "texts", "flags", "grid", "nan", "docs", "empty", "none"});
  auto forms = std::make_shared<std::vector<ColumnForm>>(std::vector<ColumnForm>{
      {JsonForm::boolean}, {JsonForm::json}, {JsonForm::number}, {JsonForm::array, JsonForm::number},
      {JsonForm::array, JsonForm::value}, {JsonForm::array, JsonForm::boolean}, {JsonForm::array, JsonForm::number},
      {JsonForm::number}, {JsonForm::array, JsonForm::json}, {JsonForm::array, JsonForm::number},
      {JsonForm::json}});
  Row row(names,
          {std::int64_t{1}, R"({"a": [1, 2]})", "12345678901234567890.000000000001", "{1,-2,NULL}",
           R"({"a b",c,"q\"x","NULL",NULL})", "{t,f}", "{{1,2},{3,4}}", "NaN", R"({"{\"k\": 1}"})", "{}", nullptr},
          forms);
  EXPECT_EQ(row.to_json(),
            R"({"b":true,"j":{"a": [1, 2]},"n":12345678901234567890.000000000001,"ints":[1,-2,null],)"
            R"("texts":["a b","c","q\"x","NULL",null],"flags":[true,false],"grid":[[1,2],[3,4]],"nan":"NaN",)"
            R"("docs":[{"k": 1}],"empty":[],"none":null})");
  // Text that is not in the array form stays a string.
  Row odd(std::make_shared<std::vector<std::string>>(std::vector<std::string>{"a"}), {"{1,2"},
          std::make_shared<std::vector<ColumnForm>>(std::vector<ColumnForm>{{JsonForm::array, JsonForm::number}}));
  EXPECT_EQ(odd.to_json(), R"({"a":"{1,2"})");
}

}  // namespace
}  // namespace cutoff::sql
