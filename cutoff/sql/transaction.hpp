// Transaction: an explicit transaction that knows where it stands relative to its commit point.
//
//   auto tx = co_await cutoff::sql::Transaction::begin(*conn, ctx);
//   std::vector<cutoff::sql::Value> params{n, sku};
//   co_await tx.execute(ctx, "update stock set qty = qty - $1 where sku = $2", params);
//   co_await tx.commit(ctx);
//
// Or let `transact` begin, commit, and roll back on any exception:
//
//   co_await cutoff::sql::transact(*conn, ctx, cutoff::sql::AccessMode::read_write,
//       [&](cutoff::sql::Transaction& tx) -> boost::asio::awaitable<void> { ... });
//
// How a stop is reported depends on when it landed:
// - before COMMIT was sent: the transaction is rolled back, and the stop's own error
//   (deadline_exceeded / cancelled / shutdown) says, truthfully, that nothing was written;
// - while COMMIT was in flight, or after it completed: `commit_ambiguous` (never retryable), because
//   the caller is told "failed" about work that may be durable. The COMMIT itself is never
//   cancelled; `phase()` tells what is known (committed, or unknown if the answer was lost).
//   If the server answered that the COMMIT failed (`phase()` rolled_back), the stop's own
//   error: nothing was committed;
// - a read-only transaction the backend enforces (BEGIN READ ONLY; SQLite query_only) is never
//   ambiguous: it has nothing to commit.
// Losing the connection during COMMIT is `commit_ambiguous` too.
//
// Destroying an open Transaction does not roll it back (that needs a round trip): the
// connection stays in a transaction, so the pool closes it and the server rolls back.
#ifndef CUTOFF_SQL_TRANSACTION_HPP_
#define CUTOFF_SQL_TRANSACTION_HPP_

#include <boost/asio/awaitable.hpp>
#include <exception>
#include <span>
#include <string_view>
#include <type_traits>

#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/sql/connection.hpp"

namespace cutoff::sql {

class Transaction {
 public:
  static boost::asio::awaitable<Transaction> begin(Connection& conn, const Context& ctx,
                                                   AccessMode mode = AccessMode::read_write);

  Transaction(Transaction&&) noexcept = default;
  Transaction& operator=(Transaction&&) noexcept = default;

  boost::asio::awaitable<Result> execute(const Context& ctx, std::string_view sql,
                                         std::span<const Value> params = {});

  // Fails fast (and rolls back) if `ctx` already stopped; otherwise sends COMMIT and waits
  // for it, even through a stop. Throws commit_ambiguous as described above.
  boost::asio::awaitable<void> commit(const Context& ctx);
  // Rolls back if still open; a no-op after commit or rollback. Never throws.
  boost::asio::awaitable<void> rollback();

  CommitPhase phase() const noexcept { return phase_; }
  AccessMode mode() const noexcept { return mode_; }
  // Read-only on a backend that refuses writes in it: nothing can have been committed.
  bool read_only_enforced() const noexcept {
    return mode_ == AccessMode::read_only && conn_->enforces_read_only();
  }
  // True from the moment COMMIT is about to be sent.
  bool commit_point_reached() const noexcept {
    return phase_ == CommitPhase::committing || phase_ == CommitPhase::committed ||
           phase_ == CommitPhase::unknown;
  }

  // The error to report for a stop seen now: commit_ambiguous once the transaction reached
  // its commit point (unless it is read-only and enforced), the stop's own error before that.
  Error stop_error(StopReason reason, const std::string& request_id = {}) const;
  // Throws stop_error(...) if `ctx` stopped. Use after commit, before replying.
  void check(const Context& ctx) const {
    if (ctx.stop_requested()) throw stop_error(ctx.stop_reason(), ctx.request_id());
  }

 private:
  Transaction(Connection& conn, AccessMode mode) noexcept : conn_(&conn), mode_(mode) {}

  Connection* conn_;
  AccessMode mode_;
  CommitPhase phase_ = CommitPhase::open;
};

// begin → body(tx) → commit; any exception from the body rolls back and is rethrown.
template <typename Body>
boost::asio::awaitable<void> transact(Connection& conn, const Context& ctx, AccessMode mode, Body body) {
  Transaction tx = co_await Transaction::begin(conn, ctx, mode);
  std::exception_ptr failure;
  try {
    co_await body(tx);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    co_await tx.rollback();
    std::rethrow_exception(failure);
  }
  co_await tx.commit(ctx);
}

}  // namespace cutoff::sql

#endif  // CUTOFF_SQL_TRANSACTION_HPP_
