#include "cutoff/sql/script.hpp"

#include <gtest/gtest.h>

namespace cutoff::sql {
namespace {

using Statements = std::vector<std::string>;

TEST(SplitStatements, SplitsAtEachSemicolonAndTrims) {
  EXPECT_EQ(split_statements("select 1; select 2", Dialect::sqlite), (Statements{"select 1", "select 2"}));
  EXPECT_EQ(split_statements("  select 1 ;\n\n select 2;\n", Dialect::postgresql), (Statements{"select 1", "select 2"}));
  EXPECT_EQ(split_statements("select 1", Dialect::sqlite), (Statements{"select 1"}));
  EXPECT_EQ(split_statements("", Dialect::sqlite), Statements{});
  EXPECT_EQ(split_statements(" ;; \n", Dialect::sqlite), Statements{});
}

TEST(SplitStatements, CommentsOnlyAreLeftOutAndKeptInsideStatements) {
  EXPECT_EQ(split_statements("-- a; b\nselect 1; /* ; */", Dialect::sqlite), (Statements{"-- a; b\nselect 1"}));
  EXPECT_EQ(split_statements("select 1 /* x; y */ + 1; -- done;", Dialect::postgresql),
            (Statements{"select 1 /* x; y */ + 1"}));
  // PostgreSQL nests block comments; SQLite does not.
  EXPECT_EQ(split_statements("/* a /* b */ ; */ select 1; select 2", Dialect::postgresql),
            (Statements{"/* a /* b */ ; */ select 1", "select 2"}));
  EXPECT_EQ(split_statements("/* a /* b */ select 1; select 2", Dialect::sqlite),
            (Statements{"/* a /* b */ select 1", "select 2"}));
}

TEST(SplitStatements, SemicolonsInStringsAndNamesStay) {
  EXPECT_EQ(split_statements("select 'a;b', 'it''s;'; select 2", Dialect::sqlite),
            (Statements{"select 'a;b', 'it''s;'", "select 2"}));
  EXPECT_EQ(split_statements(R"(select "x;y" from "t"";"; select 2)", Dialect::postgresql),
            (Statements{R"(select "x;y" from "t"";")", "select 2"}));
  EXPECT_EQ(split_statements("select `a;` , [b;c]; select 2", Dialect::sqlite),
            (Statements{"select `a;` , [b;c]", "select 2"}));
  EXPECT_EQ(split_statements(R"(select E'a\';b'; select 2)", Dialect::postgresql),
            (Statements{R"(select E'a\';b')", "select 2"}));
  // Outside PostgreSQL's E'' strings a backslash is an ordinary character.
  EXPECT_EQ(split_statements(R"(select 'a\'; select 2)", Dialect::sqlite), (Statements{R"(select 'a\')", "select 2"}));
}

TEST(SplitStatements, PostgresDollarQuotesAndParameters) {
  const char* fn = "create function f() returns int as $$ select 1; $$ language sql";
  EXPECT_EQ(split_statements(std::string(fn) + "; select f()", Dialect::postgresql), (Statements{fn, "select f()"}));
  const char* tagged = "do $body$ begin perform 1; end $body$";
  EXPECT_EQ(split_statements(std::string(tagged) + ";select 2", Dialect::postgresql), (Statements{tagged, "select 2"}));
  EXPECT_EQ(split_statements("select $1::int; select $2", Dialect::postgresql),
            (Statements{"select $1::int", "select $2"}));
}

TEST(SplitStatements, BodiesEndingWithEnd) {
  const char* trigger = "CREATE TEMP TRIGGER t AFTER INSERT ON a BEGIN insert into b values (1); delete from c; END";
  EXPECT_EQ(split_statements(std::string(trigger) + "; select 1", Dialect::sqlite), (Statements{trigger, "select 1"}));
  const char* atomic = "create function g() returns int begin atomic select 1; select 2; end";
  EXPECT_EQ(split_statements(std::string(atomic) + "; select 3", Dialect::postgresql),
            (Statements{atomic, "select 3"}));
  // A transaction's BEGIN is no body.
  EXPECT_EQ(split_statements("begin; select 1; end;", Dialect::postgresql), (Statements{"begin", "select 1", "end"}));
}

}  // namespace
}  // namespace cutoff::sql
