// Connection: the driver-neutral interface every SQL driver implements.
//
// Most code does not use a Connection directly but leases one from a Pool and opens a
// Transaction on it. Every call takes the Context whose budget and stop it runs under:
//
//   cutoff::sql::Result r = co_await conn.execute(ctx, "select count(*) from item", {});
//
// The contract every driver keeps (see docs/sql.md):
// - Fail fast: a stopped context fails before anything is sent.
// - With propagation on, the remaining budget reaches the database (PostgreSQL keeps it as
//   the session's statement_timeout, re-set in the statement's round trip only when the value
//   in force is too tight or too loose; SQLite's progress handler watches the deadline), and
//   a stop ends the statement on the server (PQcancel, sqlite3_interrupt) before the call
//   returns. The connection is drained and stays usable (PostgreSQL closes it instead when
//   the drain outlasts drain_grace, or the stop came while the statement was being sent).
// - With propagation off, the driver behaves like a client with only a client-side timeout:
//   the call returns at the stop, the statement keeps running, and the connection is broken.
// - Outside a transaction each statement runs in its own implicit transaction.
// - A statement gets a sqlcommenter comment with the request id, operation and trace context
//   (see comment.hpp).
#ifndef CUTOFF_SQL_CONNECTION_HPP_
#define CUTOFF_SQL_CONNECTION_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/sql/value.hpp"

namespace cutoff::observe {
class Registry;
}

namespace cutoff::sql {

enum class Propagation : std::uint8_t {
  on,   // the budget and the stop reach the statement on the server
  off,  // client-side timeout only: give up locally, leave the statement running
};

enum class AccessMode : std::uint8_t { read_write, read_only };

// Where a transaction stands relative to its commit point.
enum class CommitPhase : std::uint8_t {
  open,         // statements may run; nothing durable yet
  committing,   // COMMIT was sent and no answer has arrived (the commit point is passed)
  committed,    // the database confirmed the commit
  rolled_back,  // nothing was committed
  unknown,      // COMMIT was sent and the answer was lost (connection gone, or gave up waiting)
};
std::string_view to_string(CommitPhase p) noexcept;

// What a driver's commit saw.
struct CommitReport {
  CommitPhase phase = CommitPhase::unknown;  // committed, rolled_back or unknown
  StopReason stopped_in_flight = StopReason::none;  // a stop observed while COMMIT was out
  std::exception_ptr error;  // the database's (or the connection's) error when the commit failed
  std::string error_message;
};

// A statement seen by DriverOptions::statement_observer.
struct StatementEvent {
  std::string_view request_id;
  TimePoint started;
  std::optional<TimePoint> ended;  // empty: the statement has just started
};

// Timing knobs shared by the drivers.
struct DriverOptions {
  Propagation propagation = Propagation::on;
  // After a stop, how long to wait for the server to confirm the statement ended (cancel sent,
  // result drained) before giving up on the connection. PostgreSQL only: an SQLite call waits
  // for its worker to finish the interrupted statement.
  std::chrono::milliseconds drain_grace{2000};
  // How long a COMMIT in flight may take to answer after a stop before its outcome is called
  // unknown. The commit is never cancelled. PostgreSQL only: SQLite's COMMIT runs in-process
  // and always answers.
  std::chrono::milliseconds commit_grace{5000};
  // Called on a driver thread when a statement starts in the database and again when it ends
  // there (steady clock). With propagation off this is the only place where an abandoned
  // statement's real end shows. For measurements; null: not called. Drivers that run
  // statements in-process call it (SQLite); for PostgreSQL, watch pg_stat_activity instead.
  std::function<void(const StatementEvent&)> statement_observer;
  // Where statements stopped (cutoff_stops_total{layer="sql"}, cutoff_overshoot_seconds) and
  // orphaned work (cutoff_orphaned_work_seconds{backend}: a statement that ended on the server
  // after its request's response was sent, by the request's ResponseMark;
  // cutoff_orphaned_work_unobserved_total{backend}: one PostgreSQL gave up on before its end
  // was seen) are recorded. Null: nothing is. Must outlive the connections (and a statement
  // abandoned with propagation off, which runs on after its connection).
  observe::Registry* metrics = nullptr;
};

class Connection {
 public:
  virtual ~Connection() = default;

  // "sqlite" or "postgresql".
  virtual std::string_view driver() const noexcept = 0;
  // Whether the backend refuses writes inside a read-only transaction. Only then is a stop at
  // the end of a read-only transaction safe to report as a plain stop: a backend that accepts
  // the flag without enforcing it may have let a write through.
  virtual bool enforces_read_only() const noexcept { return false; }

  // Runs one statement with positional parameters ($1.. for PostgreSQL, ?/?NNN/$N for SQLite).
  // Throws cutoff::Error for stops (deadline_exceeded, cancelled, shutdown; never
  // commit_ambiguous, which is Transaction's) and DatabaseError for the database's own
  // errors. A statement outside a transaction that completed before the stop took effect
  // returns its result.
  virtual boost::asio::awaitable<Result> execute(const Context& ctx, std::string_view sql,
                                                 std::span<const Value> params) = 0;

  // Explicit transactions; Transaction wraps these and tracks the commit point.
  virtual boost::asio::awaitable<void> begin(const Context& ctx, AccessMode mode) = 0;
  // Sends COMMIT at once (the caller checked the context) and waits for the answer; a stop
  // while waiting is recorded, not acted on, for up to commit_grace. Never throws.
  virtual boost::asio::awaitable<CommitReport> commit(const Context& ctx) = 0;
  // Rolls back if a transaction is open; never throws, marks the connection broken on failure.
  virtual boost::asio::awaitable<void> rollback() = 0;

  // A cheap round trip, for health checks; false when the connection is unusable.
  virtual boost::asio::awaitable<bool> ping(const Context& ctx) = 0;

  // Whether the connection can be handed to the next user (not broken, no transaction open,
  // nothing in flight).
  virtual bool reusable() const noexcept = 0;
  virtual bool in_transaction() const noexcept = 0;
};

}  // namespace cutoff::sql

#endif  // CUTOFF_SQL_CONNECTION_HPP_
