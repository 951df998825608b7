// `cutoff sql exec`: run statements against SQLite or PostgreSQL under a deadline, and show
// what a client-side timeout alone leaves behind.
//
//   cutoff sql exec --db sqlite:app.db --deadline-ms 100 "select * from item"
//   cutoff sql exec --db postgresql://postgres@127.0.0.1:5432/postgres
//       --deadline-ms 100 --propagation off "select pg_sleep(5)"   # exits 6; still running
//
// Rows go to stdout as JSON lines; errors to stderr as one line; the exit code follows the
// error taxonomy (6 for deadline_exceeded, 130/143 when stopped by SIGINT/SIGTERM).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_future.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "commands.hpp"
#include "signal_stop.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/sql/connect.hpp"
#include "cutoff/sql/database_error.hpp"

namespace cutoff::cli {
namespace {

namespace asio = boost::asio;

struct ExecOptions {
  std::string db;
  std::int64_t deadline_ms = 0;  // 0: no deadline
  std::string propagation = "on";
  bool read_only = false;
  std::string request_id;
  std::string operation = "cli.sql.exec";
  std::vector<std::string> statements;
};

std::string NewRequestId() {
  std::mt19937_64 rng(std::random_device{}());
  char buf[24];
  std::snprintf(buf, sizeof buf, "cli-%012llx", static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
  return buf;
}

void PrintError(const Error& e) {
  std::string line = "cutoff sql exec: " + std::string(e.info().name) + ": " + e.message();
  if (auto* db = dynamic_cast<const sql::DatabaseError*>(&e)) line += " (SQLSTATE " + db->sqlstate() + ")";
  if (!e.request_id().empty()) line += " [request " + e.request_id() + "]";
  std::fprintf(stderr, "%s\n", line.c_str());
}

int RunExec(const ExecOptions& opts) {
  sql::DatabaseOptions db;
  db.url = opts.db;
  db.read_only = opts.read_only;
  db.driver.propagation = opts.propagation == "off" ? sql::Propagation::off : sql::Propagation::on;
  try {
    (void)sql::parse_database_url(db.url);
  } catch (const Error& e) {
    PrintError(e);
    return 2;
  }

  Context base = Context().with_request_id(opts.request_id.empty() ? NewRequestId() : opts.request_id)
                     .with_operation(opts.operation);
  const Deadline deadline =
      opts.deadline_ms > 0 ? Deadline::after(std::chrono::milliseconds(opts.deadline_ms)) : Deadline::never();
  auto [ctx, stop] = base.with_cancel(deadline);

  asio::io_context io;
  SignalStop signals(io, stop);

  int exit_code = 0;
  bool stopped = false;
  auto run = [&, ctx = ctx]() -> asio::awaitable<void> {
    try {
      auto conn = co_await sql::connect(ctx, db);
      for (const std::string& statement : opts.statements) {
        sql::Result result = co_await conn->execute(ctx, statement, {});
        std::string out;
        for (const sql::Row& row : result.rows()) {
          out += row.to_json();
          out.push_back('\n');
        }
        std::fwrite(out.data(), 1, out.size(), stdout);
      }
    } catch (const Error& e) {
      PrintError(e);
      stopped = e.stop_reason() != StopReason::none;
      exit_code = cli_exit_code(e.code(), signals.signal());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cutoff sql exec: internal: %s\n", e.what());
      exit_code = 1;
    }
    signals.cancel();
  };
  asio::co_spawn(io, run(), asio::detached);
  io.run();
  std::fflush(stdout);
  std::fflush(stderr);
  if (stopped && db.driver.propagation == sql::Propagation::off) {
    // A client with only a timeout leaves its statement running; an embedded (SQLite) one
    // is still running in this process, so leave without waiting for it.
    std::_Exit(exit_code);
  }
  return exit_code;
}

}  // namespace

void AddSqlCommand(CLI::App& app) {
  CLI::App* sql = app.add_subcommand("sql", "Run SQL under a deadline (SQLite or PostgreSQL)");
  sql->require_subcommand(1);
  CLI::App* exec = sql->add_subcommand(
      "exec",
      "Run statements and print their rows as JSON lines.\n"
      "With a deadline the remaining budget reaches the database and a stop ends the statement\n"
      "there; with --propagation off only this client gives up (the statement keeps running).");
  static ExecOptions opts;
  exec->add_option("--db", opts.db, "sqlite:PATH, sqlite::memory: or postgresql://user@host:port/dbname")
      ->required();
  exec->add_option("--deadline-ms", opts.deadline_ms, "Time budget for everything, connecting included")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{86'400'000}));
  exec->add_option("--propagation", opts.propagation,
                   "on: the budget and the stop reach the database; off: client-side timeout only")
      ->check(CLI::IsMember({"on", "off"}));
  exec->add_flag("--read-only", opts.read_only, "Open the session read-only (enforced by the database)");
  exec->add_option("--request-id", opts.request_id, "Request id for the statement comment (default: random)");
  exec->add_option("--operation", opts.operation, "Operation name for the statement comment");
  exec->add_option("SQL", opts.statements, "Statements, run in order, each in its own transaction")->required();
  exec->footer(
      "Exit codes: 0 ok, 1 database or other error, 2 usage or invalid SQL, 6 deadline_exceeded, "
      "130/143 stopped by SIGINT/SIGTERM.");
  exec->callback([] {
    const int code = RunExec(opts);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace cutoff::cli
