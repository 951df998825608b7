#include "cutoff/core/budget_headers.hpp"

#include <gtest/gtest.h>

namespace cutoff {
namespace {

using namespace std::chrono_literals;
using SysClock = std::chrono::system_clock;

Duration Ok(const BudgetOrRejection& r) {
  EXPECT_TRUE(std::holds_alternative<Duration>(r)) << "rejected: " << to_string(std::get<Rejection>(r));
  return std::holds_alternative<Duration>(r) ? std::get<Duration>(r) : Duration::min();
}

Rejection Rejected(const BudgetOrRejection& r) {
  EXPECT_TRUE(std::holds_alternative<Rejection>(r));
  return std::holds_alternative<Rejection>(r) ? std::get<Rejection>(r) : Rejection::malformed;
}

TEST(ParseBudgetMs, AcceptsPlainMilliseconds) {
  EXPECT_EQ(Ok(parse_budget_ms("1500")), 1500ms);
  EXPECT_EQ(Ok(parse_budget_ms(" 42\t")), 42ms);
  EXPECT_EQ(Ok(parse_budget_ms("0")), 0ms);  // already expired: fail fast
  EXPECT_EQ(Ok(parse_budget_ms("000000000000000000000007")), 7ms);
}

TEST(ParseBudgetMs, RejectsBadValues) {
  EXPECT_EQ(Rejected(parse_budget_ms("-5")), Rejection::negative);
  EXPECT_EQ(Rejected(parse_budget_ms("-")), Rejection::malformed);
  EXPECT_EQ(Rejected(parse_budget_ms("")), Rejection::malformed);
  EXPECT_EQ(Rejected(parse_budget_ms("   ")), Rejection::malformed);
  EXPECT_EQ(Rejected(parse_budget_ms("NaN")), Rejection::malformed);
  EXPECT_EQ(Rejected(parse_budget_ms("1.5")), Rejection::malformed);
  EXPECT_EQ(Rejected(parse_budget_ms("1e3")), Rejection::malformed);
  EXPECT_EQ(Rejected(parse_budget_ms("+5")), Rejection::malformed);
  EXPECT_EQ(Rejected(parse_budget_ms("0x10")), Rejection::malformed);
  EXPECT_EQ(Rejected(parse_budget_ms("12 34")), Rejection::malformed);
  EXPECT_EQ(Rejected(parse_budget_ms("99999999999999999999")), Rejection::overflow);
  EXPECT_EQ(Rejected(parse_budget_ms("9300000000000")), Rejection::overflow);  // > Duration range
  EXPECT_EQ(Rejected(parse_budget_ms(std::string(65, '1'))), Rejection::malformed);
}

TEST(ParseGrpcTimeout, EveryUnit) {
  EXPECT_EQ(Ok(parse_grpc_timeout("2H")), 2h);
  EXPECT_EQ(Ok(parse_grpc_timeout("3M")), 3min);
  EXPECT_EQ(Ok(parse_grpc_timeout("4S")), 4s);
  EXPECT_EQ(Ok(parse_grpc_timeout("150m")), 150ms);
  EXPECT_EQ(Ok(parse_grpc_timeout("99999999u")), 99999999us);
  EXPECT_EQ(Ok(parse_grpc_timeout("7n")), 7ns);
  EXPECT_EQ(Ok(parse_grpc_timeout("0m")), 0ms);
  EXPECT_EQ(Ok(parse_grpc_timeout("99999999H")), Duration::max());  // valid, saturated
}

TEST(ParseGrpcTimeout, RejectsBadValues) {
  EXPECT_EQ(Rejected(parse_grpc_timeout("100")), Rejection::malformed);
  EXPECT_EQ(Rejected(parse_grpc_timeout("10x")), Rejection::bad_unit);
  EXPECT_EQ(Rejected(parse_grpc_timeout("10ms")), Rejection::malformed);
  EXPECT_EQ(Rejected(parse_grpc_timeout("m")), Rejection::malformed);
  EXPECT_EQ(Rejected(parse_grpc_timeout("-5S")), Rejection::negative);
  EXPECT_EQ(Rejected(parse_grpc_timeout("123456789S")), Rejection::overflow);
  EXPECT_EQ(Rejected(parse_grpc_timeout("")), Rejection::malformed);
}

TEST(ParseRfc3339, ValidForms) {
  const auto base = std::chrono::sys_days(std::chrono::year(2026) / 11 / 30) + 17h;
  EXPECT_EQ(parse_rfc3339("2026-11-30T17:00:00Z"), base);
  EXPECT_EQ(parse_rfc3339("2026-11-30t17:00:00z"), base);
  EXPECT_EQ(parse_rfc3339("2026-11-30 17:00:00Z"), base);
  EXPECT_EQ(parse_rfc3339("2026-11-30T17:00:00.250Z"), base + 250ms);
  EXPECT_EQ(parse_rfc3339("2026-11-30T17:00:00.123456789123Z"), base + 123456789ns);
  EXPECT_EQ(parse_rfc3339("2026-11-30T18:30:00+01:30"), base);
  EXPECT_EQ(parse_rfc3339("2026-11-30T16:00:00-01:00"), base);
  EXPECT_TRUE(parse_rfc3339("2024-02-29T00:00:00Z").has_value());
  EXPECT_TRUE(parse_rfc3339("2016-12-31T23:59:60Z").has_value());
}

TEST(ParseRfc3339, InvalidForms) {
  for (const char* bad : {"", "2026-11-30", "2026-11-30T17:00:00", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
                          "2023-02-29T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T17:60:00Z",
                          "2026-11-30T17:00:00.Z", "2026-11-30T17:00:00+0100", "2026-11-30T17:00:00Zjunk",
                          "26-11-30T17:00:00Z", "2026-11-30T17:00:00+24:00", "NaN", "2026-1x-30T17:00:00Z",
                          // outside what the system clock can represent (found by the fuzzer)
                          "1049-01-01T00:00:00+01:00", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z"}) {
    EXPECT_FALSE(parse_rfc3339(bad).has_value()) << bad;
  }
}

class InboundBudgetTest : public ::testing::Test {
 protected:
  BudgetPolicy policy_{.max_budget = 10s, .max_clock_skew = 2s, .legacy_ms_headers = {"X-Client-Timeout-Ms"}};
  SysClock::time_point now_ = std::chrono::sys_days(std::chrono::year(2026) / 11 / 30) + 17h;

  InboundBudget Parse(std::vector<HeaderField> headers) { return parse_inbound_budget(headers, policy_, now_); }
};

TEST_F(InboundBudgetTest, NoHeadersGivesTheServiceMaximum) {
  auto r = Parse({{"Content-Type", "application/json"}});
  EXPECT_EQ(r.budget, 10s);
  EXPECT_FALSE(r.from_caller);
  EXPECT_TRUE(r.rejected.empty());
}

TEST_F(InboundBudgetTest, EveryFormatTightensAndNamesAreCaseInsensitive) {
  EXPECT_EQ(Parse({{"deadline-budget-ms", "250"}}).budget, 250ms);
  EXPECT_EQ(Parse({{"GRPC-TIMEOUT", "3S"}}).budget, 3s);
  EXPECT_EQ(Parse({{"x-request-deadline", "2026-11-30T17:00:01.500Z"}}).budget, 1500ms);
  EXPECT_EQ(Parse({{"x-client-timeout-ms", "700"}}).budget, 700ms);
  auto all = Parse({{"Deadline-Budget-Ms", "900"}, {"grpc-timeout", "800m"}, {"X-Client-Timeout-Ms", "1200"}});
  EXPECT_EQ(all.budget, 800ms);
  EXPECT_TRUE(all.from_caller);
}

TEST_F(InboundBudgetTest, NothingExtendsBeyondTheServiceMaximum) {
  EXPECT_EQ(Parse({{"Deadline-Budget-Ms", "60000"}}).budget, 10s);
  EXPECT_EQ(Parse({{"grpc-timeout", "99999999H"}}).budget, 10s);
  EXPECT_EQ(Parse({{"X-Request-Deadline", "2026-11-30T17:00:11Z"}}).budget, 10s);  // within skew
}

TEST_F(InboundBudgetTest, ZeroMeansExpired) {
  auto r = Parse({{"Deadline-Budget-Ms", "0"}});
  EXPECT_EQ(r.budget, Duration::zero());
  EXPECT_TRUE(r.from_caller);
  EXPECT_EQ(Parse({{"X-Request-Deadline", "2026-11-30T16:59:59Z"}}).budget, Duration::zero());  // 1 s ago
}

TEST_F(InboundBudgetTest, ForgedAndMalformedValuesAreCountedAndNeverExtend) {
  const std::vector<std::pair<HeaderField, Rejection>> cases = {
      {{"Deadline-Budget-Ms", "-1"}, Rejection::negative},
      {{"Deadline-Budget-Ms", "NaN"}, Rejection::malformed},
      {{"Deadline-Budget-Ms", "18446744073709551616"}, Rejection::overflow},
      {{"Deadline-Budget-Ms", std::string_view("99999999999999999999999999999999999999999999999999999999999999999999")},
       Rejection::malformed},
      {{"grpc-timeout", "5Y"}, Rejection::bad_unit},
      {{"grpc-timeout", "123456789m"}, Rejection::overflow},
      {{"X-Request-Deadline", "2099-01-01T00:00:00Z"}, Rejection::clock_skew},
      {{"X-Request-Deadline", "2001-01-01T00:00:00Z"}, Rejection::clock_skew},
      {{"X-Request-Deadline", "tomorrow"}, Rejection::malformed},
      {{"X-Request-Deadline", "1697-01-01T00:00:00+01:00"}, Rejection::clock_skew},  // found by the fuzzer
      {{"X-Request-Deadline", "2261-12-31T23:59:59Z"}, Rejection::clock_skew},
      {{"X-Client-Timeout-Ms", "1.5"}, Rejection::malformed},
  };
  for (const auto& [header, reason] : cases) {
    auto r = Parse({header});
    SCOPED_TRACE(std::string(header.name) + ": " + std::string(header.value));
    EXPECT_EQ(r.budget, 10s);
    EXPECT_FALSE(r.from_caller);
    ASSERT_EQ(r.rejected.size(), 1u);
    EXPECT_EQ(r.rejected[0].reason, reason);
    EXPECT_LE(r.rejected[0].value.size(), kMaxBudgetValueLength);
  }
}

TEST_F(InboundBudgetTest, ConflictingDuplicatesAreCountedAndTheTightestWins) {
  auto r = Parse({{"Deadline-Budget-Ms", "500"}, {"Deadline-Budget-Ms", "100"}, {"Deadline-Budget-Ms", "900"}});
  EXPECT_EQ(r.budget, 100ms);
  ASSERT_EQ(r.rejected.size(), 2u);
  EXPECT_EQ(r.rejected[0].reason, Rejection::conflicting);
  auto same = Parse({{"Deadline-Budget-Ms", "500"}, {"Deadline-Budget-Ms", " 500"}});
  EXPECT_TRUE(same.rejected.empty());
  EXPECT_EQ(same.budget, 500ms);
}

TEST_F(InboundBudgetTest, FoldedListsCountAsTheirElements) {
  auto r = Parse({{"Deadline-Budget-Ms", "900, 50"}});
  EXPECT_EQ(r.budget, 50ms);
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_EQ(r.rejected[0].reason, Rejection::conflicting);
  auto bad = Parse({{"grpc-timeout", "100m,,x"}});
  EXPECT_EQ(bad.budget, 100ms);
  EXPECT_EQ(bad.rejected.size(), 2u);
  auto huge = Parse({{"Deadline-Budget-Ms", std::string(300, '1') + ",1"}});
  EXPECT_EQ(huge.budget, 10s);
  EXPECT_EQ(huge.rejected.size(), 1u);
}

TEST_F(InboundBudgetTest, ABadHeaderDoesNotHideAGoodOne) {
  auto r = Parse({{"Deadline-Budget-Ms", "garbage"}, {"grpc-timeout", "300m"}});
  EXPECT_EQ(r.budget, 300ms);
  EXPECT_EQ(r.rejected.size(), 1u);
}

TEST_F(InboundBudgetTest, FormatsCanBeTurnedOff) {
  policy_.accept_grpc_timeout = false;
  policy_.accept_request_deadline = false;
  auto r = Parse({{"grpc-timeout", "1m"}, {"X-Request-Deadline", "2026-11-30T17:00:00.001Z"}});
  EXPECT_EQ(r.budget, 10s);
  EXPECT_FALSE(r.from_caller);
}

TEST(FormatBudgetMs, RoundsUpAndNeverSendsZero) {
  ManualClock clock;
  EXPECT_EQ(format_budget_ms(Deadline::after(1500ms, clock), clock), "1500");
  EXPECT_EQ(format_budget_ms(Deadline::after(1499us, clock), clock), "2");
  EXPECT_EQ(format_budget_ms(Deadline::after(1ns, clock), clock), "1");
  EXPECT_EQ(format_budget_ms(Deadline::after(0ms, clock), clock), std::nullopt);
  EXPECT_EQ(format_budget_ms(Deadline::never(), clock), std::nullopt);
  auto d = Deadline::after(10ms, clock);
  clock.advance(11ms);
  EXPECT_EQ(format_budget_ms(d, clock), std::nullopt);
}

TEST(FormatBudgetMs, AReplyMarginComesOffTheBudgetButNeverMoreThanHalf) {
  ManualClock clock;
  EXPECT_EQ(format_budget_ms(Deadline::after(1000ms, clock), 200ms, clock), "800");
  EXPECT_EQ(format_budget_ms(Deadline::after(100ms, clock), 200ms, clock), "50");
  EXPECT_EQ(format_budget_ms(Deadline::after(1000ms, clock), Duration::zero(), clock), "1000");
  EXPECT_EQ(format_budget_ms(Deadline::after(1ns, clock), 200ms, clock), "1");  // a live budget never reads 0
  EXPECT_EQ(format_budget_ms(Deadline::after(0ms, clock), 200ms, clock), std::nullopt);
  EXPECT_EQ(format_budget_ms(Deadline::never(), 200ms, clock), std::nullopt);
}

TEST(FormatBudgetMs, RoundTripsThroughTheParser) {
  ManualClock clock;
  for (auto budget : {1ns, Duration(1ms), Duration(999us), Duration(5s), Duration(1234567us)}) {
    auto value = format_budget_ms(Deadline::after(budget, clock), clock);
    ASSERT_TRUE(value.has_value());
    auto parsed = Ok(parse_budget_ms(*value));
    EXPECT_GE(parsed, budget);           // rounded up, never down
    EXPECT_LT(parsed - budget, 1ms);     // by less than one millisecond
  }
}

}  // namespace
}  // namespace cutoff
