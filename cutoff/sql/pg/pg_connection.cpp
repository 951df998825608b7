#include "cutoff/sql/pg/pg_connection.hpp"

#include <libpq-fe.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cutoff/core/cancel.hpp"
#include "cutoff/sql/comment.hpp"
#include "cutoff/sql/database_error.hpp"
#include "cutoff/sql/internal/driver_metrics.hpp"
#include "cutoff/sql/pg/internal/pg_cancel.hpp"
#include "cutoff/sql/pg/internal/pg_connect.hpp"
#include "cutoff/sql/pg/internal/pg_statement_timeout.hpp"
#include "cutoff/sql/pg/internal/pg_values.hpp"

namespace cutoff::sql {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct Query {
  enum class Type { params, prepared, prepare };
  const char* sql;  // the SQL, or for `prepared` the statement name
  std::span<const Value> params;
  Type type = Type::params;
  const char* name = nullptr;  // for `prepare`
};

enum class Kind {
  statement,  // a stop cancels it
  commit,     // a stop is recorded; the answer is awaited for commit_grace
  control,    // ROLLBACK: no context stop reaches it (it runs under an unbound one)
};

// What one pipeline (queries + sync) came back with.
struct Batch {
  std::vector<internal::PgResult> results;  // one per query; null if none arrived
  bool lost = false;                        // the connection failed
  bool gave_up = false;                     // stopped waiting (grace ran out, or propagation off)
  std::string lost_message;
};

class PgConnection;

// Lets callbacks from other threads find the connection, if it still exists. Touched only
// on the connection's executor.
struct Anchor {
  PgConnection* owner = nullptr;
};

class PgConnection final : public Connection {
 public:
  PgConnection(internal::PgConnPtr pg, PgOptions options)
      : pg_(std::move(pg)),
        options_(std::move(options)),
        anchor_(std::make_shared<Anchor>()),
        metrics_(internal::DriverMetrics::make(options_.driver.metrics, "postgresql")) {
    anchor_->owner = this;
    cancel_ = internal::MakeCancelHandle(pg_.get());
  }

  ~PgConnection() override {
    anchor_->owner = nullptr;
    Close();
  }

  std::string_view driver() const noexcept override { return "postgresql"; }
  // BEGIN READ ONLY: the server rejects writes (SQLSTATE 25006).
  bool enforces_read_only() const noexcept override { return true; }

  asio::awaitable<Result> execute(const Context& ctx, std::string_view sql, std::span<const Value> params) override {
    ctx.check();
    if (broken_) throw Error(ErrorCode::unavailable, "connection is broken", ctx.request_id());
    const std::string text = with_comment(sql, ctx.values());
    Query queries[2];
    std::size_t n = 0;
    Value budget_value;
    std::int64_t want = -1;  // the statement_timeout to send first (-1: none)
    const bool budget_bound = options_.driver.propagation == Propagation::on && !ctx.deadline().is_never();
    if (options_.driver.propagation == Propagation::on) {
      std::optional<std::int64_t> budget_ms;  // unbound: restore the session's own setting
      if (budget_bound) {
        budget_ms = ctx.deadline().remaining_ms_ceil(ctx.clock());
        if (*budget_ms <= 0) throw Error::stopped(StopReason::deadline_exceeded, ctx.request_id());
      }
      want = internal::TimeoutToSend(budget_ms, session_timeout_ms_, applied_timeout_ms_);
    }
    // An aborted transaction refuses everything but ROLLBACK (TO SAVEPOINT): sending the
    // budget statement first would fail the very statement that recovers it.
    if (want >= 0 && PQtransactionStatus(pg_.get()) == PQTRANS_INERROR) want = -1;
    if (want >= 0) {
      budget_value = Value(std::to_string(want));
      queries[n++] = {internal::kBudgetStatement, std::span<const Value>(&budget_value, 1), Query::Type::prepared};
    }
    queries[n++] = {text.c_str(), params};
    Batch batch = co_await RunBatch(ctx, std::span<const Query>(queries, n), Kind::statement);
    if (batch.gave_up) throw StopError(ctx, "gave up waiting for the server; connection closed");
    if (batch.lost) throw DatabaseError(ErrorCode::unavailable, "08006", batch.lost_message, ctx.request_id());
    for (std::size_t i = 0; i < n; ++i) {
      PGresult* r = batch.results[i].get();
      if (!r) throw DatabaseError(ErrorCode::internal, "XX000", "no result from the server", ctx.request_id());
      const ExecStatusType st = PQresultStatus(r);
      if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
        if (i + 1 == n) {
          if (want >= 0) applied_timeout_ms_ = want;
          co_return internal::ToResult(r);
        }
        continue;
      }
      // A failed statement aborts its transaction, which undoes a SET made in it.
      if (want >= 0 || in_tx_) applied_timeout_ms_ = -1;
      ThrowResultError(ctx, r, budget_bound);
    }
    co_return Result();
  }

  asio::awaitable<void> begin(const Context& ctx, AccessMode mode) override {
    ctx.check();
    if (broken_) throw Error(ErrorCode::unavailable, "connection is broken", ctx.request_id());
    if (in_tx_) throw Error(ErrorCode::invalid_argument, "a transaction is already open", ctx.request_id());
    Query q{mode == AccessMode::read_only ? "BEGIN READ ONLY" : "BEGIN", {}};
    Batch batch = co_await RunBatch(ctx, std::span<const Query>(&q, 1), Kind::statement);
    if (batch.gave_up) throw StopError(ctx, "gave up waiting for BEGIN");
    if (batch.lost) throw DatabaseError(ErrorCode::unavailable, "08006", batch.lost_message, ctx.request_id());
    PGresult* r = batch.results[0].get();
    if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) ThrowResultError(ctx, r, false);
  }

  asio::awaitable<CommitReport> commit(const Context& ctx) override {
    CommitReport report;
    if (broken_) {
      report.phase = CommitPhase::rolled_back;  // nothing was sent; the server rolls back
      report.error = std::make_exception_ptr(Error(ErrorCode::unavailable, "connection is broken", ctx.request_id()));
      report.error_message = "connection is broken";
      co_return report;
    }
    Query q{"COMMIT", {}};
    Batch batch = co_await RunBatch(ctx, std::span<const Query>(&q, 1), Kind::commit);
    report.stopped_in_flight = stop_seen_ != StopReason::none ? stop_seen_ : ctx.stop_reason();
    if (batch.gave_up || batch.lost) {
      report.phase = CommitPhase::unknown;
      report.error_message = batch.gave_up ? "no answer to COMMIT within the commit grace; connection closed"
                                           : "connection lost during COMMIT: " + batch.lost_message;
      report.error = std::make_exception_ptr(Error(ErrorCode::commit_ambiguous, report.error_message, ctx.request_id()));
      co_return report;
    }
    PGresult* r = batch.results[0].get();
    if (r && PQresultStatus(r) == PGRES_COMMAND_OK) {
      if (std::string_view(PQcmdStatus(r)) == "COMMIT") {
        report.phase = CommitPhase::committed;
      } else {  // COMMIT of a failed transaction answers ROLLBACK
        report.phase = CommitPhase::rolled_back;
        applied_timeout_ms_ = -1;
        report.error_message = "the transaction had failed; COMMIT rolled it back";
        report.error = std::make_exception_ptr(
            DatabaseError(ErrorCode::invalid_argument, "25P02", report.error_message, ctx.request_id()));
      }
    } else {
      report.phase = CommitPhase::rolled_back;
      applied_timeout_ms_ = -1;
      try {
        ThrowResultError(ctx, r, false);
      } catch (...) {
        report.error = std::current_exception();
      }
      report.error_message = r ? internal::TrimMessage(PQresultErrorMessage(r)) : "no result";
    }
    co_return report;
  }

  asio::awaitable<void> rollback() override {
    if (!in_tx_ || broken_) co_return;
    applied_timeout_ms_ = -1;  // a SET inside the transaction is undone
    Query q{"ROLLBACK", {}};
    Batch batch = co_await RunBatch(Context(), std::span<const Query>(&q, 1), Kind::control);
    if (batch.lost || batch.gave_up || !batch.results[0] || PQresultStatus(batch.results[0].get()) != PGRES_COMMAND_OK)
      MarkBroken();
  }

  asio::awaitable<bool> ping(const Context& ctx) override {
    if (broken_) co_return false;
    Query q{"SELECT 1", {}};
    Batch batch = co_await RunBatch(ctx, std::span<const Query>(&q, 1), Kind::statement);
    if (batch.gave_up) throw StopError(ctx, "gave up waiting for ping");
    if (batch.lost || !batch.results[0] || PQresultStatus(batch.results[0].get()) != PGRES_TUPLES_OK) MarkBroken();
    co_return !broken_;
  }

  // Prepares the budget statement and reads the session's own statement_timeout.
  asio::awaitable<void> Init(const Context& ctx) {
    Query queries[2] = {{internal::kBudgetSql, {}, Query::Type::prepare, internal::kBudgetStatement},
                        {"SHOW statement_timeout", {}}};
    Batch batch = co_await RunBatch(ctx, std::span<const Query>(queries, 2), Kind::statement);
    if (batch.gave_up) throw StopError(ctx, "gave up while setting up the connection");
    if (batch.lost) throw DatabaseError(ErrorCode::unavailable, "08006", batch.lost_message, ctx.request_id());
    for (int i = 0; i < 2; ++i) {
      PGresult* r = batch.results[static_cast<std::size_t>(i)].get();
      if (!r || (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK))
        ThrowResultError(ctx, r, false);
    }
    PGresult* show = batch.results[1].get();
    if (PQntuples(show) == 1) session_timeout_ms_ = internal::ParseTimeoutSetting(PQgetvalue(show, 0, 0));
    applied_timeout_ms_ = session_timeout_ms_;
  }

  bool reusable() const noexcept override { return !broken_ && !in_tx_ && inflight_seq_ == 0; }
  bool in_transaction() const noexcept override { return in_tx_; }

 private:
  Error StopError(const Context& ctx, const std::string& detail) const {
    StopReason why = stop_seen_ != StopReason::none ? stop_seen_ : ctx.stop_reason();
    if (why == StopReason::none) why = StopReason::cancelled;
    Error base = Error::stopped(why, ctx.request_id());
    return Error(base.code(), base.message() + " (" + detail + ")", ctx.request_id());
  }

  [[noreturn]] void ThrowResultError(const Context& ctx, PGresult* r, bool budget_sent) const {
    if (!r) throw DatabaseError(ErrorCode::internal, "XX000", "no result from the server", ctx.request_id());
    const char* state_c = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const std::string state = state_c ? state_c : "XX000";
    const std::string message = internal::TrimMessage(PQresultErrorMessage(r));
    if (state == "57014") {
      // Classified by what this client did, not by the server's words.
      if (cancel_sent_ && stop_seen_ != StopReason::none) throw Error::stopped(stop_seen_, ctx.request_id());
      if (budget_sent && ctx.remaining() <= 10ms) {  // our statement_timeout: the budget ran out
        if (metrics_)  // the server ended it at the budget
          metrics_->stopped(ctx, observe::StopStamp(), StopReason::deadline_exceeded);
        throw Error::stopped(StopReason::deadline_exceeded, ctx.request_id());
      }
      if (ctx.stop_requested()) throw Error::stopped(ctx.stop_reason(), ctx.request_id());
      throw DatabaseError(ErrorCode::attempt_timeout, state, "statement ended by a server-side timeout: " + message,
                          ctx.request_id());
    }
    throw DatabaseError(error_code_for_sqlstate(state), state, message, ctx.request_id());
  }

  // The batch's outcome in the metrics: a statement stopped (from the stop to the end of the
  // drain, or to giving up), and its end on the server relative to the request's response. The
  // end is known when the pipeline's Sync came back; after giving up (the socket closed) the
  // server may run the statement on, unseen.
  void RecordBatch(const Context& ctx, Kind kind, const Batch& batch) const noexcept {
    if (kind == Kind::statement && stop_seen_ != StopReason::none) metrics_->stopped(stop_seen_, stop_at_);
    const ResponseMark* response = ctx.values().response.get();
    if (!response) return;
    if (!batch.lost && !batch.gave_up)
      metrics_->statement_ended(response, SteadyClock::now());
    else if (batch.gave_up)
      metrics_->statement_unobserved();
  }

  void MarkBroken() noexcept {
    broken_ = true;
    Close();
  }

  void Close() noexcept { pg_.reset(); }

  // Runs on the executor when the context stops while a batch is in flight.
  void OnStop(StopReason reason, Kind kind, TimePoint at) {
    if (stop_seen_ == StopReason::none) {
      stop_seen_ = reason;
      stop_at_ = at;
    }
    std::chrono::milliseconds grace = options_.driver.drain_grace;
    if (kind == Kind::commit) {
      grace = options_.driver.commit_grace;  // never cancel a COMMIT; wait for its answer
    } else if (options_.driver.propagation == Propagation::off) {
      GiveUp();  // a client-side timeout: stop listening, tell the server nothing
      return;
    } else if (flushing_) {
      // Half-sent: the Sync is not out, so nothing can commit. Closing is the cleanest stop.
      GiveUp();
      return;
    } else if (!cancel_sent_) {
      cancel_sent_ = true;
      cancel_pending_ = true;
      internal::SendCancelRequest(cancel_, [anchor = anchor_, ex = io_->executor] {
        asio::post(ex, [anchor] {
          if (!anchor->owner) return;
          anchor->owner->cancel_pending_ = false;
          if (anchor->owner->io_) anchor->owner->io_->cancel_done.cancel();
        });
      });
    }
    io_->grace.expires_after(grace);
    io_->grace.async_wait([anchor = anchor_, seq = inflight_seq_](boost::system::error_code ec) {
      if (ec || !anchor->owner || anchor->owner->inflight_seq_ != seq) return;
      anchor->owner->GiveUp();
    });
  }

  void GiveUp() {
    gave_up_ = true;
    boost::system::error_code ignored;
    if (io_) io_->sock.cancel(ignored);
  }

  // Waits for the socket; false when the wait was abandoned (gave up). An Asio cancellation
  // of the calling coroutine counts as a stop with reason `cancelled`.
  asio::awaitable<bool> WaitSocket(asio::posix::stream_descriptor::wait_type type, const Context& ctx, Kind kind,
                                   bool& external_cancel) {
    for (;;) {
      if (gave_up_) co_return false;
      auto [ec] = co_await io_->sock.async_wait(type, asio::as_tuple(asio::use_awaitable));
      if (!ec) co_return true;
      if (gave_up_) co_return false;
      if (ec == asio::error::operation_aborted) {
        if (!external_cancel) {
          external_cancel = true;
          // Keep awaiting the drain below even though our caller was cancelled.
          co_await asio::this_coro::throw_if_cancelled(false);
          OnStop(ctx.stop_reason() != StopReason::none ? ctx.stop_reason() : StopReason::cancelled, kind,
                 SteadyClock::now());
        }
        if (gave_up_) co_return false;
        continue;
      }
      co_return true;  // let libpq report the socket error
    }
  }

  asio::awaitable<Batch> RunBatch(const Context& ctx, std::span<const Query> queries, Kind kind) {
    Batch batch;
    batch.results.resize(queries.size());
    PGconn* pg = pg_.get();
    // Asio objects live only as long as the batch, on the caller's executor, so the connection
    // can move between executors (and outlive an io_context) while idle in a pool.
    BatchIo io(co_await asio::this_coro::executor, &io_);
    boost::system::error_code assign_error;
    io.sock.assign(PQsocket(pg), assign_error);
    if (assign_error) {
      MarkBroken();
      batch.lost = true;
      batch.lost_message = "cannot watch the connection's socket: " + assign_error.message();
      co_return batch;
    }
    io_ = &io;
    stop_seen_ = StopReason::none;
    cancel_sent_ = false;
    gave_up_ = false;
    inflight_seq_ = ++seq_;

    for (const Query& q : queries) {
      internal::PgParams p(q.params);
      int sent = 0;
      switch (q.type) {
        case Query::Type::params:
          sent = PQsendQueryParams(pg, q.sql, p.size(), nullptr, p.values(), p.lengths(), p.formats(), 0);
          break;
        case Query::Type::prepared:
          sent = PQsendQueryPrepared(pg, q.sql, p.size(), p.values(), p.lengths(), p.formats(), 0);
          break;
        case Query::Type::prepare:
          sent = PQsendPrepare(pg, q.name, q.sql, 0, nullptr);
          break;
      }
      if (!sent) {
        batch.lost = true;
        break;
      }
    }
    if (!batch.lost && !PQpipelineSync(pg)) batch.lost = true;

    // From here the statement is in flight: a stop acts on it.
    auto on_stop_cb = [anchor = anchor_, ex = io.executor, seq = inflight_seq_, kind](StopReason reason) noexcept {
      asio::post(ex, [anchor, seq, kind, reason, at = SteadyClock::now()] {
        if (anchor->owner && anchor->owner->inflight_seq_ == seq) anchor->owner->OnStop(reason, kind, at);
      });
    };
    CancelCallback<decltype(on_stop_cb)> on_stop(kind == Kind::control ? CancelToken() : ctx.token(),
                                                 std::move(on_stop_cb));
    bool external_cancel = false;

    flushing_ = true;
    while (!batch.lost && !batch.gave_up) {
      const int flushed = PQflush(pg);
      if (flushed == 0) break;
      if (flushed < 0) {
        batch.lost = true;
        break;
      }
      if (!co_await WaitSocket(asio::posix::stream_descriptor::wait_write, ctx, kind, external_cancel))
        batch.gave_up = true;
    }
    flushing_ = false;

    std::size_t index = 0;
    while (!batch.lost && !batch.gave_up) {
      if (PQisBusy(pg)) {
        if (!co_await WaitSocket(asio::posix::stream_descriptor::wait_read, ctx, kind, external_cancel)) {
          batch.gave_up = true;
          break;
        }
        if (!PQconsumeInput(pg)) batch.lost = true;
        continue;
      }
      PGresult* raw = PQgetResult(pg);
      if (!raw) {
        if (++index > queries.size() + 1) batch.lost = true;  // protocol confusion: never reuse
        continue;
      }
      internal::PgResult r(raw);
      if (PQresultStatus(raw) == PGRES_PIPELINE_SYNC) break;
      if (index < batch.results.size() && !batch.results[index]) batch.results[index] = std::move(r);
    }
    if (batch.lost && batch.lost_message.empty())
      batch.lost_message = pg_ ? internal::TrimMessage(PQerrorMessage(pg)) : "connection closed";

    inflight_seq_ = 0;
    io.grace.cancel();
    if (metrics_) RecordBatch(ctx, kind, batch);
    // A cancel request still on its way could hit the next statement: wait until it was
    // delivered (PQcancel returned) before anything else is sent on this connection.
    if (cancel_pending_) {
      io.cancel_done.expires_after(options_.driver.drain_grace);
      co_await io.cancel_done.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    io_ = nullptr;
    io.sock.release();  // libpq owns the descriptor
    if (cancel_pending_ || batch.lost || batch.gave_up) {
      MarkBroken();
    } else if (!broken_) {
      in_tx_ = PQtransactionStatus(pg) == PQTRANS_INTRANS || PQtransactionStatus(pg) == PQTRANS_INERROR;
    }
    if (external_cancel) co_await asio::this_coro::throw_if_cancelled(true);
    co_return batch;
  }

  struct BatchIo {
    BatchIo(asio::any_io_executor ex, BatchIo** slot)
        : executor(ex), sock(ex), grace(ex), cancel_done(ex), slot(slot) {}
    // Also runs when a coroutine frame is destroyed mid-batch (its io_context went away):
    // the descriptor belongs to libpq and must not be closed by Asio.
    ~BatchIo() {
      if (sock.is_open()) sock.release();
      if (*slot == this) *slot = nullptr;
    }
    asio::any_io_executor executor;
    asio::posix::stream_descriptor sock;
    asio::steady_timer grace;        // bounds the drain after a stop
    asio::steady_timer cancel_done;  // woken when a cancel request was delivered
    BatchIo** slot;                  // the connection's pointer to the batch in flight
  };

  internal::PgConnPtr pg_;
  std::shared_ptr<PGcancel> cancel_;
  PgOptions options_;
  std::shared_ptr<Anchor> anchor_;
  std::shared_ptr<const internal::DriverMetrics> metrics_;  // null: no metrics
  BatchIo* io_ = nullptr;  // the batch in flight

  bool broken_ = false;
  bool in_tx_ = false;
  std::int64_t session_timeout_ms_ = 0;  // the session's own statement_timeout (0: none)
  std::int64_t applied_timeout_ms_ = -1;  // what is in force now (-1: unknown)
  // The batch in flight (0: none) and what happened to it; executor only.
  std::uint64_t seq_ = 0;
  std::uint64_t inflight_seq_ = 0;
  StopReason stop_seen_ = StopReason::none;
  TimePoint stop_at_{};  // when stop_seen_ was requested (steady clock)
  bool cancel_sent_ = false;
  bool cancel_pending_ = false;
  bool gave_up_ = false;
  bool flushing_ = false;  // the pipeline is not fully sent yet
};

}  // namespace


asio::awaitable<std::unique_ptr<Connection>> open_postgresql(const Context& ctx, PgOptions options) {
  internal::PgConnPtr pg = co_await internal::ConnectLibpq(ctx, options);
  auto conn = std::make_unique<PgConnection>(std::move(pg), std::move(options));
  co_await conn->Init(ctx);
  co_return conn;
}

ConnectionFactory postgresql_factory(PgOptions options) {
  return [options = std::move(options)](const Context& ctx) { return open_postgresql(ctx, options); };
}

}  // namespace cutoff::sql
