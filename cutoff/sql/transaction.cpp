#include "cutoff/sql/transaction.hpp"

#include <string>

namespace cutoff::sql {

namespace asio = boost::asio;

std::string_view to_string(CommitPhase p) noexcept {
  switch (p) {
    case CommitPhase::open: return "open";
    case CommitPhase::committing: return "committing";
    case CommitPhase::committed: return "committed";
    case CommitPhase::rolled_back: return "rolled_back";
    case CommitPhase::unknown: return "unknown";
  }
  return "?";
}

asio::awaitable<Transaction> Transaction::begin(Connection& conn, const Context& ctx, AccessMode mode) {
  ctx.check();
  co_await conn.begin(ctx, mode);
  co_return Transaction(conn, mode);
}

asio::awaitable<Result> Transaction::execute(const Context& ctx, std::string_view sql,
                                             std::span<const Value> params) {
  if (phase_ != CommitPhase::open)
    throw Error(ErrorCode::invalid_argument,
                "statement on a transaction that is " + std::string(to_string(phase_)), ctx.request_id());
  co_return co_await conn_->execute(ctx, sql, params);
}

Error Transaction::stop_error(StopReason reason, const std::string& request_id) const {
  if (!read_only_enforced() && commit_point_reached()) {
    std::string what = phase_ == CommitPhase::committed
                           ? "the transaction committed"
                           : "COMMIT was sent and its outcome is unknown";
    Error e(ErrorCode::commit_ambiguous,
            "stopped (" + std::string(cutoff::to_string(reason)) + ") at or after the commit point: " + what,
            request_id);
    return e;
  }
  return Error::stopped(reason, request_id);
}

asio::awaitable<void> Transaction::commit(const Context& ctx) {
  if (phase_ != CommitPhase::open)
    throw Error(ErrorCode::invalid_argument,
                "commit on a transaction that is " + std::string(to_string(phase_)), ctx.request_id());
  if (ctx.stop_requested()) {
    // Before the commit point: roll back and say so; nothing was written.
    co_await rollback();
    throw Error::stopped(ctx.stop_reason(), ctx.request_id());
  }
  phase_ = CommitPhase::committing;
  // The commit point: whoever reports this request's outcome must not call a later stop a
  // safe failure. (An effect region notes it itself, with its idempotency key, and commits
  // under a context without the ledger.)
  if (!read_only_enforced())
    if (CommitLedger* ledger = ctx.commit_ledger()) ledger->note_commit_point();
  CommitReport report = co_await conn_->commit(ctx);
  phase_ = report.phase;
  const bool read_only = read_only_enforced();
  if (report.stopped_in_flight != StopReason::none) {
    // The server said it rolled back: the stop is reported as what it is, safely.
    if (phase_ == CommitPhase::rolled_back) throw Error::stopped(report.stopped_in_flight, ctx.request_id());
    if (!read_only) throw stop_error(report.stopped_in_flight, ctx.request_id());
    if (phase_ != CommitPhase::committed) throw Error::stopped(report.stopped_in_flight, ctx.request_id());
  }
  if (phase_ == CommitPhase::committed) co_return;
  if (phase_ == CommitPhase::unknown && !read_only) {
    std::string why = report.error_message.empty() ? "no answer to COMMIT" : report.error_message;
    throw Error(ErrorCode::commit_ambiguous, "the outcome of COMMIT is unknown: " + why, ctx.request_id());
  }
  if (report.error) std::rethrow_exception(report.error);
  throw Error(ErrorCode::unavailable, "COMMIT did not complete", ctx.request_id());
}

asio::awaitable<void> Transaction::rollback() {
  if (phase_ != CommitPhase::open) co_return;
  phase_ = CommitPhase::rolled_back;
  co_await conn_->rollback();
}

}  // namespace cutoff::sql
