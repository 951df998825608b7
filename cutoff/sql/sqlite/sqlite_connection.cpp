#include "cutoff/sql/sqlite/sqlite_connection.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "cutoff/core/cancel.hpp"
#include "cutoff/sql/comment.hpp"
#include "cutoff/sql/database_error.hpp"
#include "cutoff/sql/internal/driver_metrics.hpp"
#include "cutoff/core/internal/wake_signal.hpp"
#include "cutoff/sql/sqlite/internal/fault_points.hpp"

namespace cutoff::sql {
namespace {

namespace asio = boost::asio;

// The closest PostgreSQL SQLSTATE for an SQLite result code, so callers can treat both alike.
std::string SqlstateFor(int rc, const char* message) {
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT: return "23000";
    case SQLITE_READONLY: return "25006";
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return "55P03";
    case SQLITE_FULL: return "53100";
    case SQLITE_NOMEM: return "53200";
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE: return "22000";
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR: return "58030";
    case SQLITE_ERROR:
      if (message && std::strncmp(message, "no such table", 13) == 0) return "42P01";
      if (message && std::strncmp(message, "no such column", 14) == 0) return "42703";
      if (message && std::strncmp(message, "no such function", 16) == 0) return "42883";
      return "42000";
    default: return "XX000";
  }
}

// State shared by a connection and its worker thread. The worker owns `db`; other threads
// only ever call sqlite3_interrupt on it, under `interrupt_mu`.
struct Worker {
  sqlite3* db = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  bool closing = false;
  std::thread thread;

  // The statement being stepped: read by the progress and busy handlers (worker thread only).
  CancelToken token;
  Deadline deadline;
  const Clock* clock = &Clock::steady();
  std::chrono::milliseconds busy_wait{5000};
  std::optional<TimePoint> busy_since;

  // What the handlers check from now on: a statement's context (or the opening's).
  void WatchUnder(CancelToken t, Deadline d, const Clock* c) {
    token = std::move(t);
    deadline = d;
    clock = c;
    busy_since.reset();
  }

  std::mutex interrupt_mu;
  std::uint64_t running_seq = 0;  // the statement that a stop may interrupt; 0: none

  void Post(std::function<void()> job) {
    {
      std::lock_guard lock(mu);
      jobs.push_back(std::move(job));
    }
    cv.notify_one();
  }

  void Run() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return closing || !jobs.empty(); });
        if (jobs.empty()) break;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      job();
    }
    if (db) sqlite3_close_v2(db);
    db = nullptr;
  }

  void Close(bool detach) {
    {
      std::lock_guard lock(mu);
      closing = true;
    }
    cv.notify_one();
    if (detach)
      thread.detach();  // a zombie statement still runs; the thread closes the db when it ends
    else if (thread.joinable())
      thread.join();
  }

  static int OnProgress(void* self) noexcept { return static_cast<Worker*>(self)->token.stop_requested() ? 1 : 0; }

  static int OnBusy(void* self, int count) noexcept {
    auto* w = static_cast<Worker*>(self);
    if (w->token.stop_requested()) return 0;
    const TimePoint now = w->clock->now();
    if (count == 0 || !w->busy_since) w->busy_since = now;
    if (now - *w->busy_since >= w->busy_wait) return 0;
    const Duration left = w->deadline.remaining_at(now);
    if (left <= Duration::zero()) return 0;
    // Short sleeps so that a stop is noticed within a few milliseconds.
    const Duration nap = std::min<Duration>(left, count < 10 ? std::chrono::milliseconds(1)
                                                             : std::chrono::milliseconds(4));
    std::this_thread::sleep_for(nap);
    return 1;
  }

  static int OnCommit(void* self) noexcept {
    (void)self;
    if (auto fault = cutoff::internal::armed_fault(internal::kSqliteCommit)) (*fault)();
    return 0;  // never turn the commit into a rollback
  }
};

// One trip to the worker and back. The worker (or, with propagation off, the stop) finishes
// the call and wakes the coroutine; the call holds no Asio object, so whichever thread drops
// the last reference may do so.
struct Call : cutoff::internal::WakeSignal {
  // First caller wins; returns false if the call had already finished or been abandoned.
  bool Finish(bool abandon) {
    {
      std::lock_guard lock(mu);
      if (finished || abandoned) return false;
      (abandon ? abandoned : finished) = true;
    }
    Signal();
    return true;
  }

  std::mutex mu;
  bool finished = false;
  bool abandoned = false;
  Result result;
  std::exception_ptr error;
  bool in_tx_after = false;
};

// Whether a statement's error is a stop (not the database's own error).
bool IsStop(const std::exception_ptr& e) {
  const Error* error = find_error(e);
  return error && error->stop_reason() != StopReason::none;
}

enum class Mode {
  statement,  // watched: progress handler, interrupt, deadline-aware busy handler
  commit,     // never interrupted
  control,    // BEGIN/ROLLBACK/PRAGMA: not interrupted
};

struct Job {
  std::string sql;
  std::vector<Value> params;
  CancelToken token;
  Deadline deadline;
  const Clock* clock;
  std::string request_id;
  std::string comment;  // the sqlcommenter comment appended to `sql` (empty: none)
};

// A column's name, without the statement comment: SQLite names an unaliased expression by
// its text up to the next token, which for the last one is the comment with_comment()
// appended ("1 /*request_id='r'*/" for `select 1`).
std::string ColumnName(sqlite3_stmt* stmt, int i, std::string_view comment) {
  const char* raw = sqlite3_column_name(stmt, i);
  std::string_view name = raw ? raw : "";
  if (!comment.empty() && name.ends_with(comment)) {
    name.remove_suffix(comment.size());
    while (!name.empty() && (name.back() == ' ' || name.back() == '\n' || name.back() == '\t' || name.back() == '\r'))
      name.remove_suffix(1);
  }
  return std::string(name);
}

Value ColumnValue(sqlite3_stmt* stmt, int i) {
  switch (sqlite3_column_type(stmt, i)) {
    case SQLITE_INTEGER: return Value(static_cast<std::int64_t>(sqlite3_column_int64(stmt, i)));
    case SQLITE_FLOAT: return Value(sqlite3_column_double(stmt, i));
    case SQLITE_TEXT: {
      auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
      return Value(std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt, i))));
    }
    case SQLITE_BLOB: {
      auto* p = static_cast<const char*>(sqlite3_column_blob(stmt, i));
      return Value(Blob{std::string(p ? p : "", static_cast<std::size_t>(sqlite3_column_bytes(stmt, i)))});
    }
    default: return Value();
  }
}

// Which of `params` SQLite's parameter slot `slot` (1-based) takes. $N and ?N name the N-th,
// as PostgreSQL reads them: by number, wherever they appear and however often (SQLite numbers
// its slots in order of first appearance, so "b = $2 and a = $1" has $2 in slot 1). Anything
// else (a plain ?, :name) takes the slot's own position.
std::size_t ParamIndex(sqlite3_stmt* stmt, int slot) {
  const char* name = sqlite3_bind_parameter_name(stmt, slot);
  if (name && (name[0] == '$' || name[0] == '?') && name[1] != '\0') {
    std::size_t n = 0;
    const char* c = name + 1;
    for (; *c >= '0' && *c <= '9' && n < 100000; ++c) n = n * 10 + static_cast<std::size_t>(*c - '0');
    if (*c == '\0' && n >= 1) return n - 1;
  }
  return static_cast<std::size_t>(slot - 1);
}

void Bind(sqlite3_stmt* stmt, const std::vector<Value>& params, const std::string& request_id) {
  const int slots = sqlite3_bind_parameter_count(stmt);
  if (slots == 0 && params.empty()) return;
  // As PostgreSQL counts them: the highest parameter the statement names.
  std::size_t wanted = 0;
  for (int i = 1; i <= slots; ++i) wanted = std::max(wanted, ParamIndex(stmt, i) + 1);
  if (wanted != params.size() && slots > 0)
    throw Error(ErrorCode::invalid_argument,
                "statement takes " + std::to_string(wanted) + " parameters, " + std::to_string(params.size()) +
                    " given",
                request_id);
  for (int i = 0; i < slots; ++i) {
    const Value& v = params[ParamIndex(stmt, i + 1)];
    int rc;
    if (v.is_null()) rc = sqlite3_bind_null(stmt, i + 1);
    else if (auto* n = v.if_int()) rc = sqlite3_bind_int64(stmt, i + 1, *n);
    else if (auto* d = v.if_double()) rc = sqlite3_bind_double(stmt, i + 1, *d);
    else if (auto* s = v.if_text()) rc = sqlite3_bind_text64(stmt, i + 1, s->data(), s->size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    else rc = sqlite3_bind_blob64(stmt, i + 1, v.if_blob()->bytes.data(), v.if_blob()->bytes.size(), SQLITE_TRANSIENT);
    if (rc != SQLITE_OK)
      throw DatabaseError(ErrorCode::invalid_argument, "22000", "cannot bind parameter " + std::to_string(i + 1),
                          request_id);
  }
}

// Runs every statement in `job.sql` on the worker thread; returns the last one's result.
Result ExecuteOnWorker(Worker& w, const Job& job) {
  sqlite3* db = w.db;
  const char* tail = job.sql.c_str();
  const char* end = tail + job.sql.size();
  Result last;
  auto fail = [&](int rc) -> void {
    const char* msg = sqlite3_errmsg(db);
    const int primary = rc & 0xff;
    if (primary == SQLITE_INTERRUPT || ((primary == SQLITE_BUSY || primary == SQLITE_LOCKED) &&
                                        (job.token.stop_requested() || job.deadline.expired(*job.clock)))) {
      StopReason why = job.token.reason();
      if (why == StopReason::none) why = job.deadline.expired(*job.clock) ? StopReason::deadline_exceeded
                                                                          : StopReason::cancelled;
      throw Error::stopped(why, job.request_id);
    }
    std::string sqlstate = SqlstateFor(rc, msg);
    throw DatabaseError(error_code_for_sqlstate(sqlstate), sqlstate, std::string("sqlite: ") + msg, job.request_id);
  };
  while (tail < end) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db, tail, static_cast<int>(end - tail), &raw, &tail);
    if (rc != SQLITE_OK) fail(rc);
    if (!raw) continue;  // only whitespace or a comment was left
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw, &sqlite3_finalize);
    Bind(raw, job.params, job.request_id);
    const int ncol = sqlite3_column_count(raw);
    auto names = std::make_shared<std::vector<std::string>>();
    for (int i = 0; i < ncol; ++i) names->push_back(ColumnName(raw, i, job.comment));
    std::vector<Row> rows;
    for (;;) {
      rc = sqlite3_step(raw);
      if (rc == SQLITE_ROW) {
        std::vector<Value> values;
        values.reserve(static_cast<std::size_t>(ncol));
        for (int i = 0; i < ncol; ++i) values.push_back(ColumnValue(raw, i));
        rows.emplace_back(names, std::move(values));
      } else if (rc == SQLITE_DONE) {
        break;
      } else {
        fail(rc);
      }
    }
    const std::int64_t changed = sqlite3_stmt_readonly(raw) ? 0 : sqlite3_changes64(db);
    last = Result(std::move(names), std::move(rows), changed);
  }
  return last;
}

class SqliteConnection final : public Connection {
 public:
  SqliteConnection(std::shared_ptr<Worker> worker, SqliteOptions options)
      : w_(std::move(worker)),
        options_(std::move(options)),
        metrics_(internal::DriverMetrics::make(options_.driver.metrics, "sqlite")) {}

  ~SqliteConnection() override { w_->Close(/*detach=*/zombie_); }

  std::string_view driver() const noexcept override { return "sqlite"; }
  // PRAGMA query_only: SQLite rejects writes (SQLITE_READONLY).
  bool enforces_read_only() const noexcept override { return true; }

  asio::awaitable<Result> execute(const Context& ctx, std::string_view sql, std::span<const Value> params) override {
    ctx.check();
    if (broken_) throw Error(ErrorCode::unavailable, "connection is broken", ctx.request_id());
    auto run = Run(ctx, with_comment(sql, ctx.values()), {params.begin(), params.end()}, Mode::statement,
                   sql_comment(ctx.values()));
    co_return co_await std::move(run);
  }

  asio::awaitable<void> begin(const Context& ctx, AccessMode mode) override {
    ctx.check();
    if (in_tx_) throw Error(ErrorCode::invalid_argument, "a transaction is already open", ctx.request_id());
    // IMMEDIATE takes the write lock now, waiting for it under the deadline, instead of
    // failing later with SQLITE_BUSY when a read transaction tries to upgrade.
    co_await Run(ctx, mode == AccessMode::read_only ? "BEGIN DEFERRED; PRAGMA query_only=1" : "BEGIN IMMEDIATE", {},
                 Mode::statement);
    tx_mode_ = mode;
  }

  asio::awaitable<CommitReport> commit(const Context& ctx) override {
    CommitReport report;
    std::exception_ptr failure;
    try {
      co_await Run(ctx, "COMMIT", {}, Mode::commit);
    } catch (...) {
      failure = std::current_exception();
    }
    report.stopped_in_flight = ctx.stop_reason();  // the caller checked just before sending
    if (!failure) {
      report.phase = CommitPhase::committed;
    } else {
      report.error = failure;
      report.error_message = Describe(failure);
      if (in_tx_) co_await rollback();
      report.phase = CommitPhase::rolled_back;  // SQLite answers in-process: never lost
    }
    co_await RestoreQueryOnly();
    co_return report;
  }

  asio::awaitable<void> rollback() override {
    if (!in_tx_ || broken_) co_return;
    try {
      co_await Run(Context(), "ROLLBACK", {}, Mode::control);
    } catch (...) {
      broken_ = true;
    }
    co_await RestoreQueryOnly();
  }

  asio::awaitable<bool> ping(const Context& ctx) override {
    if (broken_) co_return false;
    std::exception_ptr failure;
    try {
      co_await Run(ctx, "SELECT 1", {}, Mode::statement);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) {
      if (ctx.stop_requested()) std::rethrow_exception(failure);
      broken_ = true;
    }
    co_return !broken_;
  }

  bool reusable() const noexcept override { return !broken_ && !in_tx_; }
  bool in_transaction() const noexcept override { return in_tx_; }

 private:
  static std::string Describe(const std::exception_ptr& e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      return x.what();
    } catch (...) {
      return "unknown error";
    }
  }

  asio::awaitable<void> RestoreQueryOnly() {
    if (tx_mode_ != AccessMode::read_only || options_.read_only || broken_) co_return;
    tx_mode_ = AccessMode::read_write;
    try {
      co_await Run(Context(), "PRAGMA query_only=0", {}, Mode::control);
    } catch (...) {
      broken_ = true;
    }
  }

  asio::awaitable<Result> Run(const Context& ctx, std::string sql, std::vector<Value> params, Mode mode,
                              std::string comment = {}) {
    const bool propagate = options_.driver.propagation == Propagation::on;
    const bool watched = mode == Mode::statement && propagate;
    const bool abandon_on_stop = mode == Mode::statement && !propagate && ctx.bound();
    const std::uint64_t seq = next_seq_++;
    auto call = std::make_shared<Call>();
    auto job = std::make_shared<Job>(Job{std::move(sql), std::move(params), watched ? ctx.token() : CancelToken(),
                                         watched ? ctx.deadline() : Deadline::never(), &ctx.clock(),
                                         ctx.request_id(), std::move(comment)});
    // A copy: an abandoned statement may outlive this connection.
    auto observer = mode == Mode::statement ? options_.driver.statement_observer : nullptr;
    // The worker sees the statement's real end, even for one abandoned at a stop: it is the
    // one to tell whether the statement outlived its request's response (orphaned work).
    std::shared_ptr<ResponseMark> response = metrics_ ? ctx.values().response : nullptr;
    std::shared_ptr<const internal::DriverMetrics> metrics = response ? metrics_ : nullptr;
    w_->Post([w = w_.get(), call, job, seq, watched, observer = std::move(observer), hold = w_,
              response = std::move(response), metrics = std::move(metrics)] {
      if (watched) {
        std::lock_guard lock(w->interrupt_mu);
        w->running_seq = seq;
      }
      w->WatchUnder(job->token, job->deadline, job->clock);
      const TimePoint started = observer ? Clock::steady().now() : TimePoint();
      if (observer) observer(StatementEvent{job->request_id, started, std::nullopt});
      try {
        call->result = ExecuteOnWorker(*w, *job);
      } catch (...) {
        call->error = std::current_exception();
      }
      if (observer) observer(StatementEvent{job->request_id, started, Clock::steady().now()});
      if (metrics) metrics->statement_ended(response.get(), SteadyClock::now());
      w->token = CancelToken();
      if (watched) {
        std::lock_guard lock(w->interrupt_mu);
        w->running_seq = 0;
      }
      call->in_tx_after = w->db && !sqlite3_get_autocommit(w->db);
      call->Finish(/*abandon=*/false);
    });

    observe::StopStamp stamp;  // for the overshoot of a stopped statement
    if (metrics_ && (watched || abandon_on_stop)) stamp.arm(ctx.token());
    std::optional<CancelRegistration> on_stop;
    if (watched) {
      on_stop.emplace(ctx.token(), [w = w_, seq](StopReason) {
        std::lock_guard lock(w->interrupt_mu);
        if (w->running_seq == seq) sqlite3_interrupt(w->db);
      });
    } else if (abandon_on_stop) {
      // A client with only a client-side timeout: stop waiting, leave the statement running.
      on_stop.emplace(ctx.token(), [call](StopReason) { call->Finish(/*abandon=*/true); });
    }
    if (!co_await call->Wait()) {
      // Our caller was cancelled through Asio: treat it as a stop, and still wait for the
      // worker (it owns the statement) before returning.
      co_await asio::this_coro::throw_if_cancelled(false);
      if (watched) {
        std::lock_guard lock(w_->interrupt_mu);
        if (w_->running_seq == seq) sqlite3_interrupt(w_->db);
      } else if (mode == Mode::statement) {
        call->Finish(/*abandon=*/true);
      }
      while (!co_await call->Wait()) {
      }
      co_await asio::this_coro::throw_if_cancelled(true);
    }
    on_stop.reset();

    bool abandoned;
    {
      std::lock_guard lock(call->mu);
      abandoned = call->abandoned;
    }
    if (abandoned) {
      if (metrics_) metrics_->stopped(ctx, stamp);  // returned at the stop; the statement runs on
      broken_ = zombie_ = true;
      throw Error::stopped(ctx.stop_reason() != StopReason::none ? ctx.stop_reason() : StopReason::cancelled,
                           ctx.request_id());
    }
    in_tx_ = call->in_tx_after;
    // Take the outcome out of the call: the worker may drop the last reference to it.
    if (std::exception_ptr error = std::move(call->error)) {
      if (metrics_ && watched && IsStop(error)) metrics_->stopped(ctx, stamp);  // interrupted and returned
      std::rethrow_exception(error);
    }
    co_return std::move(call->result);
  }

  std::shared_ptr<Worker> w_;
  SqliteOptions options_;
  std::shared_ptr<const internal::DriverMetrics> metrics_;  // null: no metrics
  std::uint64_t next_seq_ = 1;
  AccessMode tx_mode_ = AccessMode::read_write;
  bool in_tx_ = false;
  bool broken_ = false;
  bool zombie_ = false;  // a statement was abandoned mid-run (propagation off)
};

}  // namespace

asio::awaitable<std::unique_ptr<Connection>> open_sqlite(const Context& ctx, SqliteOptions options) {
  ctx.check();
  auto w = std::make_shared<Worker>();
  w->busy_wait = options.busy_wait;
  w->thread = std::thread([w] { w->Run(); });
  auto conn = std::make_unique<SqliteConnection>(w, options);

  // Open on the worker thread, like everything else that touches the handle.
  auto call = std::make_shared<Call>();
  w->Post([w = w.get(), call, options, rid = ctx.request_id(), token = ctx.token(), deadline = ctx.deadline(),
           clock = &ctx.clock()] {
    const bool memory = options.path == ":memory:" || options.path.empty();
    int flags = SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_URI;
    flags |= options.read_only && !memory ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int rc = sqlite3_open_v2(memory ? ":memory:" : options.path.c_str(), &w->db, flags, nullptr);
    std::string error;
    if (rc != SQLITE_OK) {
      error = std::string("cannot open sqlite database '") + options.path + "': " +
              (w->db ? sqlite3_errmsg(w->db) : sqlite3_errstr(rc));
    } else {
      sqlite3_extended_result_codes(w->db, 1);
      // The busy handler goes in first: switching to WAL needs a lock that another connection
      // (one closing, say, which checkpoints) may hold for a moment.
      if (options.driver.propagation == Propagation::on) {
        sqlite3_progress_handler(w->db, std::max(1, options.progress_steps), &Worker::OnProgress, w);
        sqlite3_busy_handler(w->db, &Worker::OnBusy, w);
        w->WatchUnder(token, deadline, clock);  // the setup waits under the opening context
      } else {
        sqlite3_busy_timeout(w->db, static_cast<int>(options.busy_wait.count()));
      }
      std::string setup = "PRAGMA foreign_keys=ON;";
      if (!memory && !options.read_only) setup += "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL;";
      if (options.read_only) setup += "PRAGMA query_only=1;";
      char* msg = nullptr;
      if (sqlite3_exec(w->db, setup.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
        error = std::string("cannot set up sqlite database '") + options.path + "': " + (msg ? msg : "?");
        sqlite3_free(msg);
      }
      w->token = CancelToken();
      sqlite3_commit_hook(w->db, &Worker::OnCommit, w);  // a fault point (one atomic load) for tests
    }
    if (!error.empty()) call->error = std::make_exception_ptr(DatabaseError(ErrorCode::unavailable, "08001", error, rid));
    call->Finish(false);
  });
  while (!co_await call->Wait()) {
  }
  if (std::exception_ptr error = std::move(call->error)) std::rethrow_exception(error);
  co_return conn;
}

ConnectionFactory sqlite_factory(SqliteOptions options) {
  return [options = std::move(options)](const Context& ctx) { return open_sqlite(ctx, options); };
}

}  // namespace cutoff::sql
