#include "cutoff/core/error.hpp"

#include <gtest/gtest.h>

#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>
#include <csignal>
#include <stdexcept>
#include <set>

#include "cutoff/core/commit_ledger.hpp"

namespace cutoff {
namespace {

TEST(ErrorTaxonomy, MatchesTheDesignTable) {
  struct Row {
    ErrorCode code;
    bool retryable;
    int http;
    std::string_view graphql;
    std::string_view grpc;
    int exit;
  };
  const Row rows[] = {
      {ErrorCode::deadline_exceeded, false, 504, "DEADLINE_EXCEEDED", "DEADLINE_EXCEEDED", 6},
      {ErrorCode::cancelled, false, 499, "CANCELLED", "CANCELLED", 130},
      {ErrorCode::commit_ambiguous, false, 500, "COMMIT_AMBIGUOUS", "UNKNOWN", 1},
      {ErrorCode::attempt_timeout, true, 504, "UPSTREAM_TIMEOUT", "UNAVAILABLE", 1},
      {ErrorCode::overloaded, true, 503, "OVERLOADED", "RESOURCE_EXHAUSTED", 1},
      {ErrorCode::idempotency_conflict, false, 409, "IDEMPOTENCY_CONFLICT", "ABORTED", 1},
  };
  for (const auto& r : rows) {
    const auto& i = info(r.code);
    SCOPED_TRACE(std::string(i.name));
    EXPECT_EQ(i.code, r.code);
    EXPECT_EQ(i.retryable, r.retryable);
    EXPECT_EQ(i.http_status, r.http);
    EXPECT_EQ(i.graphql_code, r.graphql);
    EXPECT_EQ(i.grpc_name, r.grpc);
    EXPECT_EQ(i.cli_exit, r.exit);
  }
  EXPECT_EQ(info(ErrorCode::deadline_exceeded).grpc_status, 4);
  EXPECT_EQ(info(ErrorCode::cancelled).grpc_status, 1);
  EXPECT_EQ(info(ErrorCode::overloaded).grpc_status, 8);
}

TEST(ErrorTaxonomy, NamesAreUniqueAndParseBack) {
  std::set<std::string_view> names, gql;
  for (const auto& row : all_error_codes()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_TRUE(gql.insert(row.graphql_code).second) << row.graphql_code;
    EXPECT_EQ(parse_error_code(row.name), row.code);
    EXPECT_EQ(parse_graphql_error_code(row.graphql_code), row.code);
    EXPECT_EQ(to_string(row.code), row.name);
    EXPECT_FALSE(row.summary.empty());
  }
  EXPECT_FALSE(parse_error_code("DEADLINE_EXCEEDED").has_value());
  EXPECT_FALSE(parse_error_code("").has_value());
  EXPECT_EQ(parse_graphql_error_code("DEADLINE_EXCEEDED"), ErrorCode::deadline_exceeded);
  EXPECT_EQ(parse_graphql_error_code("BAD_USER_INPUT"), ErrorCode::invalid_argument);
  EXPECT_FALSE(parse_graphql_error_code("deadline_exceeded").has_value());
  EXPECT_FALSE(parse_graphql_error_code("GRAPHQL_PARSE_FAILED").has_value());
  EXPECT_FALSE(parse_graphql_error_code("").has_value());
}

TEST(ErrorTaxonomy, AGrpcStatusFromAnyPeerReadsAsOneCode) {
  EXPECT_EQ(error_code_for_grpc_status(4), ErrorCode::deadline_exceeded);
  EXPECT_EQ(error_code_for_grpc_status(1), ErrorCode::cancelled);
  EXPECT_EQ(error_code_for_grpc_status(14), ErrorCode::unavailable);  // not shutdown, not attempt_timeout
  EXPECT_EQ(error_code_for_grpc_status(8), ErrorCode::overloaded);
  EXPECT_EQ(error_code_for_grpc_status(10), ErrorCode::idempotency_conflict);
  EXPECT_EQ(error_code_for_grpc_status(3), ErrorCode::invalid_argument);
  EXPECT_EQ(error_code_for_grpc_status(5), ErrorCode::not_found);
  EXPECT_EQ(error_code_for_grpc_status(13), ErrorCode::internal);
  // Only a cutoff peer's own trailer says commit_ambiguous; anyone's UNKNOWN is unclassified.
  EXPECT_EQ(error_code_for_grpc_status(2), ErrorCode::internal);
  EXPECT_EQ(error_code_for_grpc_status(7), ErrorCode::invalid_argument);   // PERMISSION_DENIED
  EXPECT_EQ(error_code_for_grpc_status(16), ErrorCode::invalid_argument);  // UNAUTHENTICATED
  EXPECT_EQ(error_code_for_grpc_status(12), ErrorCode::not_found);         // UNIMPLEMENTED
  EXPECT_EQ(error_code_for_grpc_status(15), ErrorCode::internal);          // DATA_LOSS
  EXPECT_EQ(error_code_for_grpc_status(99), ErrorCode::internal);
  // Every code the server answers with comes back as itself, except those that share a status
  // (and commit_ambiguous, which only the trailer carries).
  for (const auto& row : all_error_codes()) {
    if (row.code == ErrorCode::commit_ambiguous) continue;
    const ErrorCode back = error_code_for_grpc_status(row.grpc_status);
    if (back != row.code) {
      EXPECT_EQ(info(back).grpc_status, row.grpc_status) << row.name;
    }
  }
}

TEST(ErrorTaxonomy, CliExitCodeForSignals) {
  EXPECT_EQ(cli_exit_code(ErrorCode::cancelled, SIGINT), 130);
  EXPECT_EQ(cli_exit_code(ErrorCode::cancelled, SIGTERM), 143);
  EXPECT_EQ(cli_exit_code(ErrorCode::cancelled), 130);
  EXPECT_EQ(cli_exit_code(ErrorCode::deadline_exceeded, SIGINT), 6);
  EXPECT_EQ(cli_exit_code(ErrorCode::commit_ambiguous), 1);
}

TEST(Error, StoppedKeepsTheReason) {
  auto d = Error::stopped(StopReason::deadline_exceeded, "req-1");
  EXPECT_EQ(d.code(), ErrorCode::deadline_exceeded);
  EXPECT_EQ(d.stop_reason(), StopReason::deadline_exceeded);
  EXPECT_EQ(d.request_id(), "req-1");
  EXPECT_FALSE(d.retryable());
  EXPECT_STREQ(d.what(), "deadline_exceeded: the time budget ran out");

  auto c = Error::stopped(StopReason::cancelled);
  EXPECT_EQ(c.code(), ErrorCode::cancelled);
  EXPECT_EQ(c.info().http_status, 499);

  auto s = Error::stopped(StopReason::shutdown);
  EXPECT_EQ(s.code(), ErrorCode::shutdown);
  EXPECT_EQ(s.stop_reason(), StopReason::shutdown);
  EXPECT_TRUE(s.retryable());
}

TEST(Error, CustomMessage) {
  Error e(ErrorCode::overloaded, "pool exhausted (4 of 4 in use)");
  EXPECT_EQ(e.message(), "pool exhausted (4 of 4 in use)");
  EXPECT_STREQ(e.what(), "overloaded: pool exhausted (4 of 4 in use)");
  EXPECT_EQ(e.stop_reason(), StopReason::none);
  EXPECT_TRUE(e.retryable());
}

// The one rule for a failure after a commit point, and the codes it applies to.
TEST(ReportAfterCommitPoint, OnlyFailuresThatSayNothingOfTheEffectBecomeAmbiguous) {
  for (const ErrorCodeInfo& i : all_error_codes()) {
    const bool unknown = i.code == ErrorCode::deadline_exceeded || i.code == ErrorCode::cancelled ||
                         i.code == ErrorCode::shutdown || i.code == ErrorCode::attempt_timeout ||
                         i.code == ErrorCode::unavailable || i.code == ErrorCode::overloaded;
    EXPECT_EQ(i.leaves_effect_unknown, unknown) << i.name;
    CommitLedger clean, committed;
    committed.note_commit_point();
    const Error failure(i.code, "x", "req-1");
    EXPECT_EQ(report_after_commit_point(failure, clean, "operation a").code(), i.code) << i.name;
    const Error reported = report_after_commit_point(failure, committed, "operation a");
    EXPECT_EQ(reported.code(), unknown ? ErrorCode::commit_ambiguous : i.code) << i.name;
    EXPECT_EQ(reported.request_id(), "req-1");
  }
}

TEST(ReportAfterCommitPoint, SaysWhetherARetryWithTheSameKeyIsSafe) {
  CommitLedger keyed, mixed, pending;
  keyed.note_commit_point(/*idempotency_keyed=*/true);
  mixed.note_commit_point(true);
  mixed.note_commit_point(false);
  pending.note_after_commit_queued();
  const Error stop = Error::stopped(StopReason::deadline_exceeded, "r");
  EXPECT_EQ(report_after_commit_point(stop, keyed, "operation orders.create").message(),
            "operation orders.create was stopped (deadline_exceeded) at or after its commit point; it may have "
            "taken effect, so retry with the same Idempotency-Key (safe: it returns the first outcome)");
  EXPECT_NE(report_after_commit_point(stop, mixed, "x").message().find("reconcile before running it again"),
            std::string::npos);
  EXPECT_EQ(report_after_commit_point(stop, pending, "x").code(), ErrorCode::commit_ambiguous);
  EXPECT_NE(report_after_commit_point(Error(ErrorCode::unavailable, "down"), keyed, "x").message().find(
                "x failed (unavailable)"),
            std::string::npos);
}

TEST(ErrorPredicates, StopsAreTheThreeStopCodesAndEachNamesItsReason) {
  std::set<StopReason> reasons;
  for (const ErrorCodeInfo& i : all_error_codes()) {
    const bool stop = i.code == ErrorCode::deadline_exceeded || i.code == ErrorCode::cancelled ||
                      i.code == ErrorCode::shutdown;
    EXPECT_EQ(is_stop(i.code), stop) << i.name;
    if (stop) {
      reasons.insert(stop_reason_of(i.code));
      EXPECT_EQ(error_code_for(stop_reason_of(i.code)), i.code) << i.name;
      EXPECT_EQ(Error::stopped(stop_reason_of(i.code)).code(), i.code) << i.name;
    } else {
      EXPECT_EQ(stop_reason_of(i.code), StopReason::none) << i.name;
    }
  }
  EXPECT_EQ(reasons.size(), 3U);
  EXPECT_EQ(error_code_for(StopReason::none), ErrorCode::internal);
}

TEST(ErrorPredicates, RetriesHelpOnlyForTransientInfrastructureFailures) {
  std::set<ErrorCode> helps, never, caller;
  for (const ErrorCodeInfo& i : all_error_codes()) {
    if (retry_may_help(i.code)) helps.insert(i.code);
    if (never_retried(i.code)) never.insert(i.code);
    if (is_caller_error(i.code)) caller.insert(i.code);
    EXPECT_FALSE(retry_may_help(i.code) && never_retried(i.code)) << i.name;
  }
  EXPECT_EQ(helps, (std::set<ErrorCode>{ErrorCode::attempt_timeout, ErrorCode::overloaded, ErrorCode::unavailable}));
  EXPECT_EQ(never, (std::set<ErrorCode>{ErrorCode::deadline_exceeded, ErrorCode::cancelled, ErrorCode::shutdown,
                                        ErrorCode::commit_ambiguous}));
  EXPECT_EQ(caller, (std::set<ErrorCode>{ErrorCode::invalid_argument, ErrorCode::not_found,
                                         ErrorCode::idempotency_conflict}));
}

std::exception_ptr Thrown(auto exception) { return std::make_exception_ptr(exception); }

TEST(ToError, ACutoffErrorIsItselfWithItsStopReason) {
  const Error e = to_error(Thrown(Error::stopped(StopReason::shutdown, "r1")), StopReason::cancelled, "r2");
  EXPECT_EQ(e.code(), ErrorCode::shutdown);
  EXPECT_EQ(e.stop_reason(), StopReason::shutdown);
  EXPECT_EQ(e.request_id(), "r1");
  const Error plain = to_error(Thrown(Error(ErrorCode::not_found, "no such item")));
  EXPECT_EQ(plain.code(), ErrorCode::not_found);
  EXPECT_EQ(plain.message(), "no such item");
  EXPECT_EQ(plain.stop_reason(), StopReason::none);
}

TEST(ToError, AnAsioAbortIsTheStopBehindItOrABug) {
  const auto aborted = Thrown(boost::system::system_error(boost::asio::error::operation_aborted));
  const Error stopped = to_error(aborted, StopReason::deadline_exceeded, "r");
  EXPECT_EQ(stopped.code(), ErrorCode::deadline_exceeded);
  EXPECT_EQ(stopped.stop_reason(), StopReason::deadline_exceeded);
  EXPECT_EQ(stopped.request_id(), "r");
  const Error unexplained = to_error(aborted);
  EXPECT_EQ(unexplained.code(), ErrorCode::internal);
  EXPECT_EQ(unexplained.stop_reason(), StopReason::none);
  // Another system error is a failure whatever the stop.
  const Error refused =
      to_error(Thrown(boost::system::system_error(boost::asio::error::connection_refused)), StopReason::cancelled);
  EXPECT_EQ(refused.code(), ErrorCode::internal);
}

TEST(ToError, AnythingElseIsInternalAndKeepsWhatItSaid) {
  EXPECT_EQ(to_error(Thrown(std::runtime_error("disk on fire"))).message(), "disk on fire");
  EXPECT_EQ(to_error(Thrown(std::runtime_error("x"))).code(), ErrorCode::internal);
  EXPECT_EQ(to_error(Thrown(42)).message(), "unknown exception");
  EXPECT_EQ(to_error(nullptr).code(), ErrorCode::internal);
}

TEST(FindException, FindsTheThrownTypeAndOnlyIt) {
  const auto e = Thrown(Error(ErrorCode::unavailable, "down"));
  ASSERT_NE(find_error(e), nullptr);
  EXPECT_EQ(find_error(e)->code(), ErrorCode::unavailable);
  EXPECT_EQ(find_exception<std::runtime_error>(e), nullptr);
  EXPECT_EQ(find_error(Thrown(std::runtime_error("x"))), nullptr);
  EXPECT_EQ(find_error(nullptr), nullptr);
  EXPECT_TRUE(is_cancellation(Thrown(Error::stopped(StopReason::cancelled))));
  EXPECT_TRUE(is_cancellation(Thrown(boost::system::system_error(boost::asio::error::operation_aborted))));
  EXPECT_FALSE(is_cancellation(e));
  EXPECT_FALSE(is_cancellation(nullptr));
}

}  // namespace
}  // namespace cutoff
