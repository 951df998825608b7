// Opening a database by URL, whichever driver it needs.
//
//   cutoff::sql::DatabaseOptions db{.url = "sqlite:warehouse.db"};
//   cutoff::sql::Pool pool(cutoff::sql::connection_factory(db), {.max_size = 4});
//
// URLs:
//   sqlite:PATH             a database file (created if missing, unless read-only)
//   sqlite:///abs/path.db   the same, URL-style
//   sqlite::memory:         a private in-memory database (one per connection)
//   postgresql://user:password@host:port/dbname?param=value   (also postgres://)
#ifndef CUTOFF_SQL_CONNECT_HPP_
#define CUTOFF_SQL_CONNECT_HPP_

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "cutoff/core/context.hpp"
#include "cutoff/sql/connection.hpp"
#include "cutoff/sql/pool.hpp"

namespace cutoff::sql {

enum class Driver { sqlite, postgresql };

struct DatabaseUrl {
  Driver driver;
  std::string target;  // the SQLite path (":memory:" for memory) or the PostgreSQL URL
};

// Throws cutoff::Error(invalid_argument) naming the accepted forms.
DatabaseUrl parse_database_url(std::string_view url);

struct DatabaseOptions {
  std::string url;
  DriverOptions driver;
  bool read_only = false;
};

ConnectionFactory connection_factory(const DatabaseOptions& options);
boost::asio::awaitable<std::unique_ptr<Connection>> connect(const Context& ctx, const DatabaseOptions& options);

}  // namespace cutoff::sql

#endif  // CUTOFF_SQL_CONNECT_HPP_
