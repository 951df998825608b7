#include "cutoff/sql/connect.hpp"

#include "cutoff/core/error.hpp"
#include "cutoff/sql/pg/pg_connection.hpp"
#include "cutoff/sql/sqlite/sqlite_connection.hpp"

namespace cutoff::sql {

DatabaseUrl parse_database_url(std::string_view url) {
  auto starts = [&](std::string_view p) { return url.substr(0, p.size()) == p; };
  if (starts("postgresql://") || starts("postgres://")) return {Driver::postgresql, std::string(url)};
  if (starts("sqlite:")) {
    std::string_view rest = url.substr(7);
    if (rest == ":memory:") return {Driver::sqlite, ":memory:"};
    if (rest.substr(0, 2) == "//") rest.remove_prefix(2);  // sqlite:///abs/path
    if (!rest.empty() && rest.find('\0') == std::string_view::npos) return {Driver::sqlite, std::string(rest)};
  }
  std::string shown(url.substr(0, 80));
  for (char& c : shown)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  throw Error(ErrorCode::invalid_argument,
              "unsupported database URL '" + shown +
                  "': use sqlite:PATH, sqlite::memory: or postgresql://user@host:port/dbname");
}

ConnectionFactory connection_factory(const DatabaseOptions& options) {
  DatabaseUrl url = parse_database_url(options.url);
  if (url.driver == Driver::sqlite) {
    SqliteOptions s;
    s.path = url.target;
    s.driver = options.driver;
    s.read_only = options.read_only;
    return sqlite_factory(std::move(s));
  }
  PgOptions p;
  p.url = url.target;
  p.driver = options.driver;
  p.read_only = options.read_only;
  return postgresql_factory(std::move(p));
}

boost::asio::awaitable<std::unique_ptr<Connection>> connect(const Context& ctx, const DatabaseOptions& options) {
  ConnectionFactory factory = connection_factory(options);
  co_return co_await factory(ctx);
}

}  // namespace cutoff::sql
