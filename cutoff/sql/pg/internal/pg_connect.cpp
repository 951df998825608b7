#include "cutoff/sql/pg/internal/pg_connect.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <map>
#include <stdexcept>
#include <vector>

#include "cutoff/core/asio.hpp"
#include "cutoff/sql/database_error.hpp"
#include "cutoff/sql/pg/internal/host_list.hpp"

namespace cutoff::sql::internal {
namespace {

namespace asio = boost::asio;

// libpq keywords → values from a URL or key=value string.
std::map<std::string, std::string> ParseConninfo(const std::string& url) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (!opts) {
    std::string message = err ? TrimMessage(err) : "unparseable";
    if (err) PQfreemem(err);
    throw Error(ErrorCode::invalid_argument, "bad PostgreSQL connection string: " + message);
  }
  std::map<std::string, std::string> out;
  for (PQconninfoOption* o = opts; o->keyword; ++o)
    if (o->val) out[o->keyword] = o->val;
  PQconninfoFree(opts);
  return out;
}

}  // namespace

std::string TrimMessage(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

asio::awaitable<PgConnPtr> ConnectLibpq(const Context& ctx, const PgOptions& options) {
  ctx.check();
  auto ex = co_await asio::this_coro::executor;
  std::map<std::string, std::string> params = ParseConninfo(options.url);

  // libpq resolves `host` with a blocking getaddrinfo; resolve here and hand it `hostaddr`,
  // every address of every name, for libpq to try in order under the one deadline.
  const std::string host = params.count("host") ? params["host"] : "";
  if (!host.empty() && !params.count("hostaddr")) {
    std::map<std::string, std::vector<std::string>> resolved;
    for (const std::string& name : NamesToResolve(host)) {
      asio::ip::tcp::resolver resolver(ex);
      asio::ip::tcp::resolver::results_type results;
      try {
        auto resolving = with_context(ctx, resolver.async_resolve(name, "", asio::use_awaitable));
        results = co_await std::move(resolving);
      } catch (const boost::system::system_error& e) {
        throw DatabaseError(ErrorCode::unavailable, "08001",
                            "cannot resolve the database host \"" + name + "\": " + e.code().message(),
                            ctx.request_id());
      }
      std::vector<std::string>& addrs = resolved[name];
      for (const auto& entry : results) addrs.push_back(entry.endpoint().address().to_string());
      if (addrs.empty())
        throw DatabaseError(ErrorCode::unavailable, "08001", "the database host \"" + name + "\" has no address",
                            ctx.request_id());
    }
    HostLists lists;
    try {
      lists = ExpandHosts(host, params.count("port") ? params["port"] : "", resolved);
    } catch (const std::invalid_argument& e) {
      throw Error(ErrorCode::invalid_argument, std::string("bad PostgreSQL connection string: ") + e.what(),
                  ctx.request_id());
    }
    params["host"] = lists.host;
    if (lists.hostaddr.find_first_not_of(',') != std::string::npos) params["hostaddr"] = lists.hostaddr;
    if (!lists.port.empty()) params["port"] = lists.port;
  }
  if (options.read_only) params["options"] += " -c default_transaction_read_only=on";
  if (!params.count("application_name")) params["application_name"] = options.application_name;

  std::vector<const char*> keywords, values;
  for (auto& [k, v] : params) {
    keywords.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  keywords.push_back(nullptr);
  values.push_back(nullptr);

  PgConnPtr pg(PQconnectStartParams(keywords.data(), values.data(), 0));
  if (!pg) throw Error(ErrorCode::internal, "out of memory starting a PostgreSQL connection", ctx.request_id());
  auto fail = [&](const std::string& what) {
    return DatabaseError(ErrorCode::unavailable, "08001", what + ": " + TrimMessage(PQerrorMessage(pg.get())),
                         ctx.request_id());
  };
  if (PQstatus(pg.get()) == CONNECTION_BAD) throw fail("cannot connect to PostgreSQL");
  PQsetnonblocking(pg.get(), 1);

  for (;;) {
    const PostgresPollingStatusType st = PQconnectPoll(pg.get());
    if (st == PGRES_POLLING_OK) break;
    if (st == PGRES_POLLING_FAILED) throw fail("cannot connect to PostgreSQL");
    // The socket can change between polls (e.g. when trying the next address).
    asio::posix::stream_descriptor sock(ex, PQsocket(pg.get()));
    const auto type = st == PGRES_POLLING_READING ? asio::posix::stream_descriptor::wait_read
                                                  : asio::posix::stream_descriptor::wait_write;
    std::exception_ptr failure;
    try {
      co_await with_context(ctx, sock.async_wait(type, asio::use_awaitable));
    } catch (...) {
      failure = std::current_exception();
    }
    sock.release();
    if (failure) std::rethrow_exception(failure);
  }
  if (!PQenterPipelineMode(pg.get())) throw fail("cannot enter pipeline mode");
  co_return pg;
}

}  // namespace cutoff::sql::internal
