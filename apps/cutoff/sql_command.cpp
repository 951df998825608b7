// `cutoff sql exec`: run statements against SQLite or PostgreSQL under a time budget, and
// show what a client-side timeout alone leaves behind.
//
//   cutoff sql exec --db sqlite:app.db --budget-ms 100 "select * from item"
//   cutoff sql exec --db postgresql://postgres@127.0.0.1:5432/postgres
//       --budget-ms 100 --propagation off "select pg_sleep(5)"   # exits 6; still running
//   cutoff sql exec --db sqlite:app.db @schema.sql "select count(*) from item"
//   cutoff sql exec --db sqlite:app.db < script.sql               # no statement: standard input
//
// Each SQL argument is inline text, @FILE or - (standard input); with none, the statements
// come from standard input. A text with several statements ("select 1; select 2") runs them
// one by one, in order, each in its own transaction (unless the script opens one).
// Rows go to stdout as JSON lines in the types a reader expects (PostgreSQL bool as
// true/false, json/jsonb embedded, arrays as arrays, numeric as exact numbers); errors to
// stderr as one line; the exit code follows the error table (6 deadline_exceeded, 130/143
// stopped by SIGINT/SIGTERM, 2 invalid SQL or usage, 1 other database errors).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_future.hpp>
#include <csignal>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "commands.hpp"
#include "conventions.hpp"
#include "signal_stop.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/sql/connect.hpp"
#include "cutoff/sql/database_error.hpp"
#include "cutoff/sql/script.hpp"

namespace cutoff::cli {
namespace {

namespace asio = boost::asio;

struct ExecOptions {
  std::string db;
  std::int64_t budget_ms = -1;  // -1: no deadline; 0: already spent
  std::string propagation = "on";
  bool read_only = false;
  std::string request_id;
  std::string operation = "cli.sql.exec";
  std::vector<std::string> statements;  // each inline, @FILE or -; none: standard input
};

int Usage(const std::string& message) {
  std::fprintf(stderr, "cutoff sql exec: %s\n", message.c_str());
  return 2;
}

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
  sql::Dialect dialect = sql::Dialect::sqlite;
  try {
    dialect = sql::parse_database_url(db.url).driver == sql::Driver::postgresql ? sql::Dialect::postgresql
                                                                                 : sql::Dialect::sqlite;
  } catch (const Error& e) {
    PrintError(e);
    return 2;
  }
  // Every statement of every argument (or of standard input), in order.
  std::vector<std::string> statements;
  std::vector<std::string> args = opts.statements;
  if (args.empty()) {
    if (isatty(STDIN_FILENO)) std::fprintf(stderr, "cutoff sql exec: reading statements from standard input (end with Ctrl-D)\n");
    args.push_back("-");
  }
  for (const std::string& arg : args) {
    std::string error;
    std::optional<Input> text = ReadInput("SQL", arg, &error);
    if (!text) return Usage(error);
    for (std::string& statement : sql::split_statements(text->text, dialect)) statements.push_back(std::move(statement));
  }
  if (statements.empty()) return Usage("no statement to run (give SQL as arguments, @FILE, or on standard input)");

  Context base = Context().with_request_id(opts.request_id.empty() ? NewRequestId() : opts.request_id)
                     .with_operation(opts.operation);
  const Deadline deadline =
      opts.budget_ms >= 0 ? Deadline::after(std::chrono::milliseconds(opts.budget_ms)) : Deadline::never();
  auto [ctx, stop] = base.with_cancel(deadline);

  asio::io_context io;
  SignalStop signals(io, stop);

  int exit_code = 0;
  bool stopped = false;
  auto run = [&, ctx = ctx]() -> asio::awaitable<void> {
    try {
      auto conn = co_await sql::connect(ctx, db);
      for (const std::string& statement : statements) {
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
      "With a budget the remaining budget reaches the database and a stop ends the statement\n"
      "there; with --propagation off only this client gives up (the statement keeps running).");
  static ExecOptions opts;
  exec->add_option("--db", opts.db, "sqlite:PATH, sqlite::memory: or postgresql://user@host:port/dbname")
      ->required();
  AddBudgetOption(exec, opts.budget_ms,
                  "Time budget for everything, connecting included (0: already spent; default: none)",
                  {"--deadline-ms"});
  exec->add_option("--propagation", opts.propagation,
                   "on: the budget and the stop reach the database; off: client-side timeout only")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  exec->add_flag("--read-only", opts.read_only, "Open the session read-only (enforced by the database)");
  exec->add_option("--request-id", opts.request_id, "Request id for the statement comment (default: random)");
  exec->add_option("--operation", opts.operation, "Operation name for the statement comment")->capture_default_str();
  exec->add_option("SQL", opts.statements,
                   std::string("Statements, run in order, each in its own transaction; each ") + kInputHelp +
                       "; several in one text are split at their semicolons (default: read standard input)");
  exec->footer(
      "Rows: JSON lines; PostgreSQL bool as true/false, json/jsonb embedded, arrays as arrays, numeric as\n"
      "exact numbers. Exit codes: 0 ok, 1 database or other error, 2 usage or invalid SQL, 6 deadline_exceeded,\n"
      "130/143 stopped by SIGINT/SIGTERM.\n");
  exec->callback([] {
    const int code = RunExec(opts);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace cutoff::cli
