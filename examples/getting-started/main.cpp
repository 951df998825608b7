// orders_service: the service docs/getting-started.md builds, step by step.
//
// A GraphQL endpoint with a declared budget for every operation (500 ms), a field capped
// tighter than that with @budget, and a PostgreSQL query behind it that the database itself
// stops when the field's deadline passes.
//
//   orders_service --db postgresql://postgres@127.0.0.1:5432/postgres [--port 8080]
//   curl -s localhost:8080/graphql -H 'Content-Type: application/json' \
//        -d '{"query":"{ orderCount slowReport }"}'
//
// With --check it serves on a free port, sends that query itself, and checks what the guide
// promises: a partial answer within the budget (orderCount, and slowReport cut with
// DEADLINE_EXCEEDED) and no trace of the slow statement left on the database. Exit code 0
// when all of that holds.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include <cutoff/core/context.hpp>
#include <cutoff/graphql/http/graphql_over_http.hpp>
#include <cutoff/graphql/schema.hpp>
#include <cutoff/http/client.hpp>
#include <cutoff/http/server.hpp>
#include <cutoff/sql/connect.hpp>
#include <cutoff/sql/pool.hpp>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::Context;
using cutoff::graphql::Data;
using cutoff::graphql::FieldContext;

// 1. The schema. The operation's budget is declared on the route (below); @budget caps one
//    field tighter than the operation.
constexpr const char* kSchema = R"(
type Query {
  "How many orders there are (fast)."
  orderCount: Int
  "A report that takes the database seconds; it gets 200 ms at most."
  slowReport: String @budget(ms: 200)
}
)";

// 3. Every resolver hands its context to the pool and the statement: the deadline reaches the
//    database as a statement timeout, and a stop becomes a cancel request.
void AddResolvers(cutoff::graphql::Schema& schema, cutoff::sql::Pool& pool) {
  schema.resolve_async("Query", "orderCount", [&pool](FieldContext& f) -> asio::awaitable<Data> {
    auto conn = co_await pool.acquire(f.ctx);
    auto rows = co_await conn->execute(f.ctx, "select count(*) from generate_series(1, 1000)", {});
    co_return Data::from(rows[0].get<std::int64_t>(0));
  });
  schema.resolve_async("Query", "slowReport", [&pool](FieldContext& f) -> asio::awaitable<Data> {
    auto conn = co_await pool.acquire(f.ctx);
    auto rows = co_await conn->execute(f.ctx, "select pg_sleep(5)::text || 'done' as report", {});
    co_return Data::from(rows[0].get<std::string>(0));
  });
}

// --check: send the query, look at the answer and at the database.
asio::awaitable<int> Check(cutoff::http::Client& client, std::string url, std::string db_url) {
  const auto start = std::chrono::steady_clock::now();
  const Context ctx = Context().with_timeout(5s);
  cutoff::http::Response r =
      co_await client.post(ctx, url, R"({"query":"{ orderCount slowReport }"})", "application/json");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  std::printf("%d in %lld ms: %s\n", r.status, static_cast<long long>(ms.count()), r.body.c_str());
  int failures = 0;
  auto expect = [&](bool ok, const char* what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) ++failures;
  };
  expect(r.status == 200, "HTTP 200");
  expect(r.body.find("\"orderCount\":1000") != std::string::npos, "orderCount answered");
  expect(r.body.find("\"slowReport\":null") != std::string::npos, "slowReport is null");
  expect(r.body.find("DEADLINE_EXCEEDED") != std::string::npos, "its error says DEADLINE_EXCEEDED");
  expect(ms < 500ms, "answered within the operation's budget");
  // The database's view: the pg_sleep statement is gone, not running on for nobody.
  cutoff::sql::DatabaseOptions db;
  db.url = db_url;
  const Context look = Context().with_timeout(5s);
  auto conn = co_await cutoff::sql::connect(look, db);
  auto rows = co_await conn->execute(
      look, "select count(*) from pg_stat_activity where state = 'active' and query like '%pg_sleep(5)%' "
            "and pid <> pg_backend_pid()", {});
  expect(rows[0].get<std::int64_t>(0) == 0, "no pg_sleep statement left running on the database");
  co_return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  std::string db_url;
  unsigned port = 8080;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--db") && i + 1 < argc) {
      db_url = argv[++i];
    } else if (!std::strcmp(argv[i], "--port") && i + 1 < argc) {
      port = static_cast<unsigned>(std::stoul(argv[++i]));
    } else if (!std::strcmp(argv[i], "--check")) {
      check = true;
    } else {
      std::fprintf(stderr, "usage: %s --db postgresql://... [--port N] [--check]\n", argv[0]);
      return std::strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  if (db_url.empty()) {
    std::fprintf(stderr, "orders_service: --db postgresql://... is required\n");
    return 2;
  }

  asio::io_context io;

  // 2. A pool of PostgreSQL connections. Propagation is on by default: each statement runs
  //    with the time its context has left, and is cancelled on the server if it stops.
  cutoff::sql::DatabaseOptions db;
  db.url = db_url;
  cutoff::sql::Pool pool(cutoff::sql::connection_factory(db), {.max_size = 4});

  auto built = cutoff::graphql::Schema::from_sdl(kSchema);
  if (!built.ok()) {
    std::fprintf(stderr, "schema: %s\n", built.errors.at(0).message.c_str());
    return 1;
  }
  AddResolvers(*built.schema, pool);

  // 4. The server binds the deadline once per request: min(the route's declared budget, the
  //    caller's Deadline-Budget-Ms or grpc-timeout, the server's maximum).
  cutoff::http::Server server(io.get_executor());
  cutoff::http::RouteOptions route;
  route.budget = 500ms;
  cutoff::graphql::mount_graphql(server, "/graphql", *built.schema, {}, route);
  const std::uint16_t bound = server.listen("127.0.0.1", check ? 0 : static_cast<std::uint16_t>(port));

  if (check) {
    cutoff::http::Client client(io.get_executor());
    auto done = asio::co_spawn(io, Check(client, "http://127.0.0.1:" + std::to_string(bound) + "/graphql", db_url),
                               asio::use_future);
    while (done.wait_for(0s) != std::future_status::ready) io.run_one();
    server.shutdown(100ms);
    io.run_for(200ms);
    return done.get();
  }
  std::printf("orders_service: http://127.0.0.1:%u/graphql (Ctrl-C stops)\n", bound);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](auto, int) { server.shutdown(2s); });
  io.run();
  return 0;
}
