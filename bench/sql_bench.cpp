// sql_bench: what the budget plumbing costs on a trivial statement, and how long a statement
// outlives its deadline on the server, with propagation on and off.
//
//   build/bin/sql_bench                      # SQLite, plus a throwaway PostgreSQL
//   build/bin/sql_bench --pg postgresql://postgres@127.0.0.1:5432/postgres
//   build/bin/sql_bench --no-pg --json out.json
//
// Overshoot is "deadline → the statement ended where it runs":
// - propagation on: when execute() returned (it returns only after the server confirmed the
//   end: the cancelled result was drained, or the SQLite worker stopped), an upper bound;
// - propagation off: execute() returns at the deadline, so the end is observed from outside:
//   PostgreSQL by polling pg_stat_activity every 0.5 ms, SQLite by polling for the committed
//   rows of the abandoned INSERT.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_future.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cutoff/core/context.hpp"
#include "cutoff/sql/pg/pg_connection.hpp"
#include "cutoff/sql/sqlite/sqlite_connection.hpp"

namespace {

namespace asio = boost::asio;
using namespace cutoff;
using namespace cutoff::sql;
using namespace std::chrono_literals;
using Ms = std::chrono::duration<double, std::milli>;
using Us = std::chrono::duration<double, std::micro>;

template <typename F>
auto Run(F&& make) {
  asio::io_context io;
  auto future = asio::co_spawn(io, std::forward<F>(make)(), asio::use_future);
  io.run();
  return future.get();
}

asio::awaitable<void> Sleep(std::chrono::microseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = p * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(rank);
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

struct Report {
  std::string json = "{";
  void Add(const std::string& key, double value) {
    if (json.size() > 1) json += ",";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4f", value);
    json += "\"" + key + "\":" + buf;
  }
};

// Mean latency (µs) of `select 1` on one connection, unbound vs bound, alternating rounds.
asio::awaitable<std::pair<double, double>> SelectOne(Connection& conn, int rounds, int per_round) {
  std::vector<double> unbound, bound;
  for (int r = 0; r < rounds; ++r) {
    for (int mode = 0; mode < 2; ++mode) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < per_round; ++i) {
        Context ctx = mode == 0 ? Context() : Context().with_timeout(30s);
        co_await conn.execute(ctx, "select 1", {});
      }
      const double us = Us(std::chrono::steady_clock::now() - start).count() / per_round;
      (mode == 0 ? unbound : bound).push_back(us);
    }
  }
  co_return std::pair{Percentile(unbound, 0.5), Percentile(bound, 0.5)};
}

void PrintOverhead(const char* driver, std::pair<double, double> r, Report& report, const char* key) {
  const double overhead = (r.second / r.first - 1) * 100;
  std::printf("  %-11s unbound %7.1f us   bound %7.1f us   overhead %+5.1f%%  (target < 5%%)\n", driver, r.first,
              r.second, overhead);
  report.Add(std::string(key) + "_select1_unbound_us", r.first);
  report.Add(std::string(key) + "_select1_bound_us", r.second);
  report.Add(std::string(key) + "_select1_overhead_pct", overhead);
}

void PrintOvershoot(const char* what, const std::vector<double>& ms, Report& report, const std::string& key) {
  std::printf("  %-34s n=%-4zu p50 %8.2f ms   p99 %8.2f ms   max %8.2f ms\n", what, ms.size(), Percentile(ms, 0.5),
              Percentile(ms, 0.99), ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end()));
  report.Add(key + "_p50_ms", Percentile(ms, 0.5));
  report.Add(key + "_p99_ms", Percentile(ms, 0.99));
}

constexpr const char* kEndless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

asio::awaitable<std::vector<double>> SqliteOvershootOn(int n, std::chrono::milliseconds budget) {
  const SqliteOptions opts{};
  auto conn = co_await open_sqlite(Context(), opts);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    const Deadline d = Deadline::after(budget);
    try {
      co_await conn->execute(Context().with_deadline(d), kEndless, {});
    } catch (const Error&) {
    }
    out.push_back(Ms(std::chrono::steady_clock::now() - d.time_point()).count());
  }
  co_return out;
}

asio::awaitable<std::vector<double>> SqliteOvershootOff(int n, std::chrono::milliseconds budget, const std::string& dir) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    SqliteOptions file;
    file.path = dir + "/overshoot-" + std::to_string(i) + ".db";
    auto observer = co_await open_sqlite(Context(), file);
    co_await observer->execute(Context(), "create table t(x)", {});
    SqliteOptions off = file;
    off.driver.propagation = Propagation::off;
    auto conn = co_await open_sqlite(Context(), off);
    const Deadline d = Deadline::after(budget);
    try {  // about 0.3 s of work on this machine; the caller gives up after `budget`
      co_await conn->execute(Context().with_deadline(d),
                             "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 400000) "
                             "INSERT INTO t SELECT x FROM c",
                             {});
    } catch (const Error&) {
    }
    conn.reset();
    for (;;) {
      Result r = co_await observer->execute(Context(), "select count(*) from t", {});
      if (r[0].get<std::int64_t>(0) > 0) break;
      co_await Sleep(500us);
    }
    out.push_back(Ms(std::chrono::steady_clock::now() - d.time_point()).count());
  }
  co_return out;
}

asio::awaitable<std::vector<double>> PgOvershoot(const PgOptions& base, Propagation propagation, int n,
                                                 std::chrono::milliseconds budget, int* still_active) {
  PgOptions opts = base;
  opts.driver.propagation = propagation;
  auto observer = co_await open_postgresql(Context(), base);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    auto conn = co_await open_postgresql(Context(), opts);
    const std::string rid = "bench-" + std::to_string(i) + "-" + std::to_string(::getpid());
    const Deadline d = Deadline::after(budget);
    const char* sql = propagation == Propagation::on ? "select pg_sleep(5)" : "select pg_sleep(0.3)";
    try {
      co_await conn->execute(Context().with_request_id(rid).with_deadline(d), sql, {});
    } catch (const Error&) {
    }
    auto returned = std::chrono::steady_clock::now();
    std::vector<Value> p{"%request_id='" + rid + "'%"};
    const char* active_sql =
        "select count(*) from pg_stat_activity where state = 'active' and query like $1 and pid <> pg_backend_pid()";
    if (propagation == Propagation::on) {
      out.push_back(Ms(returned - d.time_point()).count());
      Result r = co_await observer->execute(Context(), active_sql, p);
      *still_active += static_cast<int>(r[0].get<std::int64_t>(0));
    } else {
      for (;;) {
        Result r = co_await observer->execute(Context(), active_sql, p);
        if (r[0].get<std::int64_t>(0) == 0) break;
        co_await Sleep(500us);
      }
      out.push_back(Ms(std::chrono::steady_clock::now() - d.time_point()).count());
    }
  }
  co_return out;
}

std::string StartThrowawayPostgres(const std::string& dir) {
  const std::string cmd = std::string(CUTOFF_SOURCE_DIR) + "/scripts/pg-test-server start " + dir;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {};
  char buf[512] = {};
  std::string url;
  if (fgets(buf, sizeof buf, p)) url = buf;
  if (pclose(p) != 0) return {};
  while (!url.empty() && (url.back() == '\n' || url.back() == '\r')) url.pop_back();
  return url;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sql_bench: budget plumbing overhead and statement overshoot, SQLite and PostgreSQL"};
  std::string pg_url;
  bool no_pg = false;
  int iterations = 100;
  int select_rounds = 10;
  int select_per_round = 2000;
  std::string json_path;
  app.add_option("--pg", pg_url, "PostgreSQL URL (default: start a throwaway server)");
  app.add_flag("--no-pg", no_pg, "SQLite only");
  app.add_option("--iterations", iterations, "Stops measured per overshoot series (propagation on)")
      ->check(CLI::Range(5, 100000));
  app.add_option("--rounds", select_rounds, "Alternating rounds of the select-1 comparison")->check(CLI::Range(1, 1000));
  app.add_option("--per-round", select_per_round, "Statements per round")->check(CLI::Range(10, 1000000));
  app.add_option("--json", json_path, "Also write the numbers as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  Report report;
  const std::string tmp = (std::filesystem::temp_directory_path() / ("cutoff-sql-bench-" + std::to_string(::getpid())))
                              .string();
  std::filesystem::create_directories(tmp);
  bool started_pg = false;
  if (!no_pg && pg_url.empty()) {
    std::fprintf(stderr, "starting a throwaway PostgreSQL in %s/pg ...\n", tmp.c_str());
    pg_url = StartThrowawayPostgres(tmp + "/pg");
    if (pg_url.empty()) {
      std::fprintf(stderr, "sql_bench: could not start PostgreSQL (use --pg URL or --no-pg)\n");
      return 1;
    }
    started_pg = true;
  }
  PgOptions pg;
  pg.url = pg_url;
  const auto budget = 20ms;

  std::printf("select 1 round trip, median of %d rounds x %d statements (unbound vs 30 s budget):\n", select_rounds,
              select_per_round);
  const SqliteOptions memory{};
  PrintOverhead("sqlite", Run([&]() -> asio::awaitable<std::pair<double, double>> {
                  auto conn = co_await open_sqlite(Context(), memory);
                  co_return co_await SelectOne(*conn, select_rounds, select_per_round);
                }),
                report, "sqlite");
  if (!no_pg) {
    PrintOverhead("postgresql", Run([&]() -> asio::awaitable<std::pair<double, double>> {
                    auto conn = co_await open_postgresql(Context(), pg);
                    co_return co_await SelectOne(*conn, select_rounds, select_per_round);
                  }),
                  report, "pg");
    PgOptions client_only = pg;
    client_only.driver.propagation = Propagation::off;
    PrintOverhead("pg (off)", Run([&]() -> asio::awaitable<std::pair<double, double>> {
                    auto conn = co_await open_postgresql(Context(), client_only);
                    co_return co_await SelectOne(*conn, select_rounds, select_per_round);
                  }),
                  report, "pg_off");
  }

  std::printf("\novershoot, deadline -> statement ended where it runs (budget %lld ms):\n",
              static_cast<long long>(budget.count()));
  std::fprintf(stderr, "sqlite, propagation on ...\n");
  PrintOvershoot("sqlite, propagation on", Run([&] { return SqliteOvershootOn(iterations, budget); }), report,
                 "sqlite_on_overshoot");
  std::fprintf(stderr, "sqlite, propagation off ...\n");
  PrintOvershoot("sqlite, propagation off", Run([&] { return SqliteOvershootOff(5, budget, tmp); }), report,
                 "sqlite_off_overshoot");
  if (!no_pg) {
    int still_active = 0;
    std::fprintf(stderr, "postgresql, propagation on ...\n");
    PrintOvershoot("postgresql, propagation on",
                   Run([&] { return PgOvershoot(pg, Propagation::on, iterations, budget, &still_active); }), report,
                   "pg_on_overshoot");
    std::fprintf(stderr, "postgresql, propagation off ...\n");
    PrintOvershoot("postgresql, propagation off",
                   Run([&] { return PgOvershoot(pg, Propagation::off, 5, budget, &still_active); }), report,
                   "pg_off_overshoot");
    std::printf("  statements still active after the call returned (propagation on): %d\n", still_active);
    report.Add("pg_on_still_active", still_active);
  }
  std::printf("  target: p99 < 10 ms with propagation on\n");

  if (started_pg) {
    const std::string cmd = std::string(CUTOFF_SOURCE_DIR) + "/scripts/pg-test-server stop " + tmp + "/pg";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "sql_bench: could not stop the throwaway server\n");
  }
  std::filesystem::remove_all(tmp);
  if (!json_path.empty()) {
    if (FILE* f = std::fopen(json_path.c_str(), "w")) {
      std::fprintf(f, "%s}\n", report.json.c_str());
      std::fclose(f);
    }
  }
  return 0;
}
