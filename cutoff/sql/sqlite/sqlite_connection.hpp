// SQLite driver: an embedded database whose statements stop when their context does.
//
//   cutoff::sql::SqliteOptions opts{.path = "warehouse.db"};
//   cutoff::sql::Pool pool(cutoff::sql::sqlite_factory(opts), {.max_size = 4});
//   auto conn = co_await pool.acquire(ctx);
//   auto rows = co_await conn->execute(ctx, "select * from item where sku = ?", params);
//
// The SQLite C API blocks, so each connection owns a worker thread that runs its statements;
// the calling coroutine waits without blocking its executor. While a statement runs:
// - a progress handler checks the context every `progress_steps` VM steps (one atomic load),
// - a stop calls `sqlite3_interrupt` at once (for work between progress checks),
// - a busy handler waits for locks only while the context has time left and gives up at the
//   deadline (a plain busy_timeout would ignore both).
// An interrupted statement reports the context's reason; SQLite rolls an interrupted write
// back (inside BEGIN, the whole transaction). File databases opened read-write are switched
// to WAL mode. Read-write transactions begin IMMEDIATE (the write lock is taken, and waited
// for, up front); read-only transactions and connections use `PRAGMA query_only`, which SQLite
// enforces.
//
// With `Propagation::off` none of that is installed: the call returns at the stop while the
// statement runs on in the worker (zombie work, for comparisons), and the connection is broken.
#ifndef CUTOFF_SQL_SQLITE_SQLITE_CONNECTION_HPP_
#define CUTOFF_SQL_SQLITE_SQLITE_CONNECTION_HPP_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "cutoff/core/context.hpp"
#include "cutoff/sql/connection.hpp"
#include "cutoff/sql/pool.hpp"

namespace cutoff::sql {

struct SqliteOptions {
  std::string path = ":memory:";  // a file path, or ":memory:"
  DriverOptions driver;
  bool read_only = false;  // every statement read-only (PRAGMA query_only)
  int progress_steps = 1000;  // VM steps between context checks (≈ 10 µs of work)
  // Longest wait for another writer's lock. With propagation on the wait also ends at the
  // deadline or stop; with propagation off this is a plain busy_timeout.
  std::chrono::milliseconds busy_wait{5000};
};

boost::asio::awaitable<std::unique_ptr<Connection>> open_sqlite(const Context& ctx, SqliteOptions options);
ConnectionFactory sqlite_factory(SqliteOptions options);

}  // namespace cutoff::sql

#endif  // CUTOFF_SQL_SQLITE_SQLITE_CONNECTION_HPP_
