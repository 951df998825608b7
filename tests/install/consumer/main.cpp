// A downstream project using an installed cutoff: a deadline that stops the work, a GraphQL
// query executed under a context, a SQLite database in memory, the embedded GraphiQL page.
// install.consumer_project builds it against the static libraries and
// install.consumer_project_shared against the shared ones, each through find_package(cutoff)
// and through the flags of `pkg-config cutoff`.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include <cutoff/core/context.hpp>
#include <cutoff/core/error.hpp>
#include <cutoff/graphql/executor.hpp>
#include <cutoff/graphql/graphiql_page.hpp>
#include <cutoff/graphql/parser.hpp>
#include <cutoff/graphql/schema.hpp>
#include <cutoff/graphql/validation.hpp>
#include <cutoff/sql/sqlite/sqlite_connection.hpp>

namespace asio = boost::asio;
using namespace std::chrono_literals;

// `{ hello }` against a one-field schema, under the caller's context.
asio::awaitable<std::string> Hello(cutoff::Context ctx) {
  auto built = cutoff::graphql::Schema::from_sdl("type Query { hello: String }");
  if (!built.ok()) throw std::runtime_error(built.errors.at(0).message);
  built.schema->resolve("Query", "hello", [](cutoff::graphql::FieldContext&) {
    return cutoff::graphql::Data::from("world");
  });
  cutoff::graphql::ParseResult parsed = cutoff::graphql::parse("{ hello }");
  if (!parsed.ok()) throw std::runtime_error(parsed.error->message);
  if (!cutoff::graphql::validate(*built.schema, *parsed.document).empty()) throw std::runtime_error("invalid");
  const cutoff::graphql::Request request{.document = parsed.document.get()};
  cutoff::graphql::Response response = co_await cutoff::graphql::execute(*built.schema, request, ctx);
  co_return std::move(response).to_json();
}

// A statement on SQLite in memory, under the caller's context.
asio::awaitable<std::int64_t> SixTimesSeven(cutoff::Context ctx) {
  cutoff::sql::SqliteOptions options;
  options.path = ":memory:";
  std::unique_ptr<cutoff::sql::Connection> conn = co_await cutoff::sql::open_sqlite(ctx, options);
  cutoff::sql::Result rows = co_await conn->execute(ctx, "select 6 * 7", {});
  co_return rows[0].get<std::int64_t>(0);
}

int main() {
  auto ctx = cutoff::Context::background().with_request_id("consumer-1").with_timeout(10ms);
  while (!ctx.stop_requested()) std::this_thread::sleep_for(1ms);
  try {
    ctx.check();
    return 1;
  } catch (const cutoff::Error& e) {
    std::cout << e.info().name << " http=" << e.info().http_status;
  }

  asio::io_context io;
  const cutoff::Context budget = cutoff::Context::background().with_timeout(5s);
  auto hello = asio::co_spawn(io, Hello(budget), asio::use_future);
  auto product = asio::co_spawn(io, SixTimesSeven(budget), asio::use_future);
  io.run();
  std::cout << " graphql=" << hello.get() << " sqlite=" << product.get()
            << " graphiql_page_bytes=" << cutoff::graphql::graphiql_page().size() << "\n";
  return 0;
}
