#include "cutoff/sql/connect.hpp"

#include <gtest/gtest.h>

#include "tests/support/run_sync.hpp"

namespace cutoff::sql {
namespace {

TEST(DatabaseUrl, AcceptedForms) {
  EXPECT_EQ(parse_database_url("sqlite::memory:").target, ":memory:");
  EXPECT_EQ(parse_database_url("sqlite:data/app.db").target, "data/app.db");
  EXPECT_EQ(parse_database_url("sqlite:///tmp/app.db").target, "/tmp/app.db");
  DatabaseUrl pg = parse_database_url("postgresql://u@127.0.0.1:5432/db");
  EXPECT_EQ(pg.driver, Driver::postgresql);
  EXPECT_EQ(pg.target, "postgresql://u@127.0.0.1:5432/db");
  EXPECT_EQ(parse_database_url("postgres://h/db").driver, Driver::postgresql);
}

TEST(DatabaseUrl, RejectsOthersWithTheAcceptedForms) {
  for (const char* bad : {"", "sqlite:", "mysql://x", "file.db", "sqlite://"}) {
    try {
      parse_database_url(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(e.message().find("sqlite:PATH"), std::string::npos);
    }
  }
}

TEST(Connect, OpensTheDriverTheUrlNames) {
  const DatabaseOptions db{.url = "sqlite::memory:"};
  cutoff::test_support::RunSync([&]() -> boost::asio::awaitable<void> {
    auto conn = co_await connect(Context(), db);
    EXPECT_EQ(conn->driver(), "sqlite");
  });
}

}  // namespace
}  // namespace cutoff::sql
