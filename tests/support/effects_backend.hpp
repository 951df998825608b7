// Test support for the effects module: the same tests on SQLite and PostgreSQL.
//
// A Backend opens a pool on a fresh database (a temporary SQLite file, or the throwaway
// PostgreSQL server with tables under a unique prefix), knows a statement that runs until it
// is stopped, and can make the next COMMIT of the effect table slow or hook into it.
#ifndef CUTOFF_TESTS_SUPPORT_EFFECTS_BACKEND_HPP_
#define CUTOFF_TESTS_SUPPORT_EFFECTS_BACKEND_HPP_

#include <boost/asio/awaitable.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>

#include "cutoff/sql/pg/pg_connection.hpp"
#include "cutoff/sql/pool.hpp"
#include "cutoff/sql/sqlite/internal/fault_points.hpp"
#include "cutoff/sql/sqlite/sqlite_connection.hpp"
#include "tests/support/postgres.hpp"

namespace cutoff::test_support {

inline std::string UniqueName(const std::string& stem) {
  static std::mt19937_64 rng(std::random_device{}());
  static std::mutex mu;
  std::lock_guard lock(mu);
  return stem + std::to_string(rng() % 1000000000);
}

class Backend {
 public:
  explicit Backend(std::string driver) : Backend(std::move(driver), UniqueName("fx"), {}) {}
  // Attaches to the database another Backend made (in another process): the same tables,
  // and the SQLite file is left for its owner to remove.
  Backend(std::string driver, std::string prefix, std::filesystem::path sqlite_path)
      : driver_(std::move(driver)), prefix_(std::move(prefix)), owns_file_(sqlite_path.empty()) {
    hook_ = std::make_shared<Hook>();
    if (driver_ == "sqlite") {
      path_ = owns_file_ ? std::filesystem::temp_directory_path() / (prefix_ + ".db") : sqlite_path;
      sql::SqliteOptions opts;
      opts.path = path_.string();
      auto hook = hook_;
      commit_fault_.emplace(sql::internal::kSqliteCommit, [hook] {
        std::function<void()> f;
        {
          std::lock_guard lock(hook->mu);
          f = std::move(hook->once);
          hook->once = nullptr;
        }
        if (f) f();
      });
      pool_ = std::make_unique<sql::Pool>(sql::sqlite_factory(opts), Options());
    } else {
      sql::PgOptions opts;
      opts.url = cutoff::test_support::TestPostgresUrl();
      pool_ = std::make_unique<sql::Pool>(sql::postgresql_factory(opts), Options());
    }
  }
  ~Backend() {
    pool_.reset();
    if (!path_.empty() && owns_file_) {
      std::error_code ec;
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + suffix, ec);
    }
  }

  bool available() const { return driver_ == "sqlite" || !cutoff::test_support::TestPostgresUrl().empty(); }
  bool postgres() const { return driver_ == "postgresql"; }
  sql::Pool& pool() { return *pool_; }
  const std::string& prefix() const { return prefix_; }  // for table names: unique per test
  // SQLite: the database file (another process may open it too).
  const std::filesystem::path& sqlite_path() const { return path_; }
  std::string items() const { return prefix_ + "_items"; }

  // A statement that runs until it is stopped.
  std::string endless_statement() const {
    return postgres() ? "select pg_sleep(60)"
                      : "with recursive c(x) as (select 1 union all select x + 1 from c) select count(*) from c";
  }

  // SQLite: runs `f` on the worker thread inside the next COMMIT (sqlite3_commit_hook).
  // PostgreSQL has no such hook; create_items(slow_commit_ms) makes COMMIT slow instead.
  void during_next_commit(std::function<void()> f) {
    std::lock_guard lock(hook_->mu);
    hook_->once = std::move(f);
  }

  // The effect table. On PostgreSQL, `slow_commit_ms` > 0 makes every COMMIT that inserted
  // into it take that long.
  boost::asio::awaitable<void> create_items(int slow_commit_ms = 0) {
    sql::Pool::Lease conn = co_await pool_->acquire(Context());
    co_await conn->execute(Context(), "create table " + items() + " (id integer primary key, note text)", {});
    if (postgres() && slow_commit_ms > 0) {
      co_await conn->execute(Context(),
                             "create function " + items() + "_slow() returns trigger language plpgsql as "
                             "$$ begin perform pg_sleep(" + std::to_string(slow_commit_ms / 1000.0) +
                             "); return null; end $$",
                             {});
      co_await conn->execute(Context(),
                             "create constraint trigger slow after insert on " + items() +
                                 " deferrable initially deferred for each row execute function " + items() + "_slow()",
                             {});
    }
  }

  boost::asio::awaitable<std::int64_t> count(const std::string& table, const std::string& where = "") {
    sql::Pool::Lease conn = co_await pool_->acquire(Context());
    // Built outside the co_await: g++ 12 mishandles conditional temporaries inside one.
    std::string sql = "select count(*) from " + table;
    if (!where.empty()) sql += " where " + where;
    sql::Result r = co_await conn->execute(Context(), sql, {});
    co_return r[0].get<std::int64_t>(0);
  }

  boost::asio::awaitable<void> drop_all() {
    if (!postgres()) co_return;
    sql::Pool::Lease conn = co_await pool_->acquire(Context());
    for (const char* t : {"_items", "_idempotency", "_outbox", "_saga", "_saga_step", "_undo"})
      co_await conn->execute(Context(), "drop table if exists " + prefix_ + t, {});
    co_await conn->execute(Context(), "drop function if exists " + items() + "_slow()", {});
  }

 private:
  struct Hook {
    std::mutex mu;
    std::function<void()> once;
  };
  static sql::PoolOptions Options() {
    sql::PoolOptions o;
    o.max_size = 8;
    o.max_waiters = 1024;
    return o;
  }

  std::string driver_;
  std::string prefix_;
  std::filesystem::path path_;
  bool owns_file_ = true;
  std::shared_ptr<Hook> hook_;
  std::optional<cutoff::internal::ScopedFault> commit_fault_;  // SQLite: runs hook_->once
  std::unique_ptr<sql::Pool> pool_;
};

}  // namespace cutoff::test_support

#endif  // CUTOFF_TESTS_SUPPORT_EFFECTS_BACKEND_HPP_
