// PostgreSQL driver: libpq in non-blocking mode on Asio, with the budget and the stop
// reaching the server.
//
//   cutoff::sql::PgOptions opts{.url = "postgresql://app@127.0.0.1:5432/warehouse"};
//   cutoff::sql::Pool pool(cutoff::sql::postgresql_factory(opts), {.max_size = 8});
//   auto conn = co_await pool.acquire(ctx);
//   auto rows = co_await conn->execute(ctx, "select * from item where sku = $1", params);
//
// With propagation on, the remaining budget (in ms, rounded up) is the session's
// statement_timeout, so the server ends the statement at the deadline even if this process
// dies. It is set at session level by a statement prepared once per connection,
//   select set_config('statement_timeout', $1, false)
// and sent in the same round trip as the statement (a libpq pipeline ending in one Sync; one
// implicit or explicit transaction), only when the value in force is tighter than the budget
// or looser by more than a slack of 1/16 of it (2-250 ms). A smaller timeout of the session's
// own is kept; a statement without a deadline restores the session's own value; nothing is
// sent before a statement in an aborted transaction (it would fail the ROLLBACK that recovers
// it). See internal/pg_statement_timeout.hpp.
//
// When the context stops first, a cancel request goes out from a dedicated thread (PQcancel
// blocks), the connection is drained to the end of the pipeline, and only then is it reused:
// a cancel is never sent when nothing is in flight, and the next statement is never sent
// before the cancel was delivered. A server that does not finish within `drain_grace`, and a
// stop while the pipeline is still being written (its Sync not out, so nothing can commit),
// get the connection closed instead. SQLSTATE 57014 is classified by what the client did, not
// by the server's (localisable) message. A COMMIT is never cancelled: a stop while it is in
// flight is recorded (see Transaction) and the answer awaited for `commit_grace`.
//
// Connecting never blocks the executor: a host name is resolved with Asio and passed to
// libpq as `hostaddr`. URLs are libpq's (`postgresql://user:pass@host:port/db?param=value`)
// or key=value connection strings.
//
// With `Propagation::off` the driver is a client with only a client-side timeout: no
// statement_timeout, no cancel; at the stop it gives up, closes the socket and reports the
// stop, and the statement runs on at the server.
#ifndef CUTOFF_SQL_PG_PG_CONNECTION_HPP_
#define CUTOFF_SQL_PG_PG_CONNECTION_HPP_

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>

#include "cutoff/core/context.hpp"
#include "cutoff/sql/connection.hpp"
#include "cutoff/sql/pool.hpp"

namespace cutoff::sql {

struct PgOptions {
  std::string url;  // postgresql://... or "host=... dbname=..."
  DriverOptions driver;
  bool read_only = false;  // the session is read-only (default_transaction_read_only=on)
  std::string application_name = "cutoff";  // unless the URL sets one
};

boost::asio::awaitable<std::unique_ptr<Connection>> open_postgresql(const Context& ctx, PgOptions options);
ConnectionFactory postgresql_factory(PgOptions options);

}  // namespace cutoff::sql

#endif  // CUTOFF_SQL_PG_PG_CONNECTION_HPP_
