#include "cutoff/sql/pg/internal/pg_values.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>

namespace cutoff::sql::internal {
namespace {

struct Column {
  const char* name;
  Oid type;
};
using Cells = std::vector<std::optional<std::string>>;  // nullopt: NULL

// A text-format result as the server sends it, made without a server.
PgResult MakeResult(std::vector<Column> columns, const std::vector<Cells>& rows) {
  PgResult r(PQmakeEmptyPGresult(nullptr, PGRES_TUPLES_OK));
  std::vector<PGresAttDesc> attrs;
  for (const Column& c : columns) {
    attrs.push_back({.name = const_cast<char*>(c.name), .typid = c.type, .typlen = -1, .atttypmod = -1});
  }
  EXPECT_TRUE(PQsetResultAttrs(r.get(), static_cast<int>(attrs.size()), attrs.data()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t c = 0; c < rows[i].size(); ++c) {
      std::string cell = rows[i][c].value_or("");
      EXPECT_TRUE(PQsetvalue(r.get(), static_cast<int>(i), static_cast<int>(c), cell.data(),
                             rows[i][c] ? static_cast<int>(cell.size()) : -1));
    }
  }
  return r;
}

// Type OIDs of pg_type.h.
constexpr Oid kBool = 16, kBytea = 17, kInt8 = 20, kInt4 = 23, kText = 25, kJson = 114, kFloat8 = 701,
              kNumeric = 1700, kInt4Array = 1007, kTextArray = 1009;

TEST(PgValues, TextBecomesTheColumnTypesValue) {
  PgResult r = MakeResult({{"id", kInt8}, {"qty", kInt4}, {"price", kFloat8}, {"ok", kBool}, {"data", kBytea},
                           {"name", kText}, {"amount", kNumeric}},
                          {{"42", "-7", "2.5", "t", "\\x00ff", "widget", "12.30"},
                           {"1", "0", "-1e+300", "f", "\\x", "", "NaN"}});
  Result result = ToResult(r.get());
  EXPECT_EQ(result.columns(), (std::vector<std::string>{"id", "qty", "price", "ok", "data", "name", "amount"}));
  ASSERT_EQ(result.size(), 2u);
  EXPECT_EQ(result[0][0], Value(std::int64_t{42}));
  EXPECT_EQ(result[0][1], Value(std::int64_t{-7}));
  EXPECT_EQ(result[0][2], Value(2.5));
  EXPECT_EQ(result[0][3], Value(std::int64_t{1}));
  EXPECT_EQ(result[0][4], Value(Blob{std::string("\x00\xff", 2)}));
  EXPECT_EQ(result[0][5], Value("widget"));
  EXPECT_EQ(result[0][6], Value("12.30"));  // numeric keeps every digit, as text
  EXPECT_EQ(result[1][2], Value(-1e300));
  EXPECT_EQ(result[1][3], Value(std::int64_t{0}));
  EXPECT_EQ(result[1][4], Value(Blob{}));
  EXPECT_EQ(result[1][5], Value(""));
  EXPECT_EQ(result[1][6], Value("NaN"));
  EXPECT_EQ(result.rows_affected(), 0);
}

TEST(PgValues, NullIsNullWhateverTheType) {
  PgResult r = MakeResult({{"a", kInt8}, {"b", kBytea}, {"c", kText}, {"d", kBool}},
                          {{std::nullopt, std::nullopt, std::nullopt, std::nullopt}});
  Result result = ToResult(r.get());
  ASSERT_EQ(result.size(), 1u);
  for (std::size_t c = 0; c < 4; ++c) EXPECT_TRUE(result[0].is_null(c)) << c;
}

TEST(PgValues, ColumnTypesKeepTheirJsonShape) {
  PgResult r = MakeResult({{"ok", kBool}, {"doc", kJson}, {"amount", kNumeric}, {"ids", kInt4Array},
                           {"tags", kTextArray}, {"name", kText}},
                          {{"t", "{\"a\":1}", "12.30", "{1,2}", "{x,\"y z\",NULL}", "w"}});
  EXPECT_EQ(ToResult(r.get())[0].to_json(),
            R"({"ok":true,"doc":{"a":1},"amount":12.30,"ids":[1,2],"tags":["x","y z",null],"name":"w"})");
}

TEST(PgValues, ACommandHasNoRows) {
  PgResult r(PQmakeEmptyPGresult(nullptr, PGRES_COMMAND_OK));
  Result result = ToResult(r.get());
  EXPECT_TRUE(result.empty());
  EXPECT_TRUE(result.columns().empty());
}

TEST(PgValues, ParametersGoAsTextAndBlobsAsBinary) {
  const std::vector<Value> params{nullptr, std::int64_t{-42}, 0.1, "widget", Blob{std::string("a\0b", 3)}, true};
  PgParams p(params);
  ASSERT_EQ(p.size(), 6);
  EXPECT_EQ(p.values()[0], nullptr);
  EXPECT_STREQ(p.values()[1], "-42");
  EXPECT_STREQ(p.values()[2], "0.1");  // the shortest text that reads back as the same double
  EXPECT_EQ(p.values()[3], params[3].if_text()->c_str());  // text is not copied
  EXPECT_EQ(p.formats()[3], 0);
  EXPECT_EQ(std::string(p.values()[4], static_cast<std::size_t>(p.lengths()[4])), std::string("a\0b", 3));
  EXPECT_EQ(p.formats()[4], 1);
  EXPECT_STREQ(p.values()[5], "1");  // a bool is the integer 0/1
  for (int i : {0, 1, 2, 3, 5}) EXPECT_EQ(p.formats()[i], 0) << i;
}

TEST(PgValues, NoParameters) {
  PgParams p({});
  EXPECT_EQ(p.size(), 0);
}

}  // namespace
}  // namespace cutoff::sql::internal
