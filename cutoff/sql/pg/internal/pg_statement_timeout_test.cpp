#include "cutoff/sql/pg/internal/pg_statement_timeout.hpp"

#include <gtest/gtest.h>

namespace cutoff::sql::internal {
namespace {

TEST(PgStatementTimeout, SettingsReadAsMilliseconds) {
  EXPECT_EQ(ParseTimeoutSetting("0"), 0);
  EXPECT_EQ(ParseTimeoutSetting("250"), 250);
  EXPECT_EQ(ParseTimeoutSetting("250ms"), 250);
  EXPECT_EQ(ParseTimeoutSetting("5s"), 5'000);
  EXPECT_EQ(ParseTimeoutSetting("2min"), 120'000);
  EXPECT_EQ(ParseTimeoutSetting("1h"), 3'600'000);
  EXPECT_EQ(ParseTimeoutSetting("1d"), 86'400'000);
  EXPECT_EQ(ParseTimeoutSetting("2500us"), 2);
  EXPECT_EQ(ParseTimeoutSetting("500us"), 1);  // a timeout, however short, is not "none"
  EXPECT_EQ(ParseTimeoutSetting(""), 0);
  EXPECT_EQ(ParseTimeoutSetting("-1"), 0);
  EXPECT_EQ(ParseTimeoutSetting("5 weeks"), 0);
}

TEST(PgStatementTimeout, SlackIsASixteenthOfTheBudgetWithinBounds) {
  EXPECT_EQ(BackstopSlackMs(10), 2);
  EXPECT_EQ(BackstopSlackMs(1'600), 100);
  EXPECT_EQ(BackstopSlackMs(100'000), 250);
}

TEST(PgStatementTimeout, TheBudgetIsSentUnlessTheValueInForceIsCloseAbove) {
  EXPECT_EQ(TimeoutToSend(1'000, 0, -1), 1'000);  // unknown
  EXPECT_EQ(TimeoutToSend(1'000, 0, 0), 1'000);   // none in force
  EXPECT_EQ(TimeoutToSend(1'000, 0, 1'000), -1);
  EXPECT_EQ(TimeoutToSend(1'000, 0, 1'062), -1);     // within the slack (62 ms) above
  EXPECT_EQ(TimeoutToSend(1'000, 0, 1'063), 1'000);  // looser by more
  EXPECT_EQ(TimeoutToSend(1'000, 0, 999), 1'000);    // tighter: would end the statement early
}

TEST(PgStatementTimeout, TheSessionsOwnSmallerTimeoutWins) {
  EXPECT_EQ(TimeoutToSend(1'000, 500, -1), 500);
  EXPECT_EQ(TimeoutToSend(1'000, 500, 500), -1);
  EXPECT_EQ(TimeoutToSend(300, 500, 500), 300);
}

TEST(PgStatementTimeout, AnUnboundStatementRestoresTheSessionsSetting) {
  EXPECT_EQ(TimeoutToSend(std::nullopt, 0, 1'000), 0);
  EXPECT_EQ(TimeoutToSend(std::nullopt, 0, 0), -1);
  EXPECT_EQ(TimeoutToSend(std::nullopt, 500, -1), 500);
  EXPECT_EQ(TimeoutToSend(std::nullopt, 500, 500), -1);
}

}  // namespace
}  // namespace cutoff::sql::internal
