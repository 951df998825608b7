// Opening a libpq connection without blocking the executor, under the context's budget.
//
// The connection string (a URL or key=value pairs) is parsed by libpq; host names are resolved
// with Asio and handed to libpq as `hostaddr` (see host_list.hpp), and libpq's connect is
// polled on the socket with Asio. The connection comes back non-blocking and in pipeline
// mode, with the session read-only when PgOptions::read_only asks for it and an
// application_name unless the string sets one.
//
//   cutoff::sql::internal::PgConnPtr pg = co_await cutoff::sql::internal::ConnectLibpq(ctx, options);
#ifndef CUTOFF_SQL_PG_INTERNAL_PG_CONNECT_HPP_
#define CUTOFF_SQL_PG_INTERNAL_PG_CONNECT_HPP_

#include <libpq-fe.h>

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>

#include "cutoff/core/context.hpp"
#include "cutoff/sql/pg/pg_connection.hpp"

namespace cutoff::sql::internal {

struct PgConnDeleter {
  void operator()(PGconn* c) const noexcept { PQfinish(c); }
};
// A PGconn, closed with PQfinish.
using PgConnPtr = std::unique_ptr<PGconn, PgConnDeleter>;

// Throws Error(invalid_argument) for a connection string libpq cannot parse (or whose port
// list does not match its host list), DatabaseError(unavailable, 08001) when no host can be
// resolved or reached, and the context's stop.
boost::asio::awaitable<PgConnPtr> ConnectLibpq(const Context& ctx, const PgOptions& options);

// A libpq message without the newline libpq ends it with.
std::string TrimMessage(std::string message);

}  // namespace cutoff::sql::internal

#endif  // CUTOFF_SQL_PG_INTERNAL_PG_CONNECT_HPP_
