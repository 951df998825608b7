#include "cutoff/effects/effects.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <optional>
#include <utility>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/effects/idempotency.hpp"
#include "cutoff/effects/internal/batched_delete.hpp"
#include "cutoff/effects/internal/fault_points.hpp"
#include "cutoff/effects/internal/periodic.hpp"

// g++ 12 reports Asio's coroutine frame delete as mismatched with its own operator new in
// large coroutines here (both are awaitable_frame_base's). Elsewhere the same warning was the
// sign of a real miscompile, a braced aggregate in a co_await expression (docs/architecture.md);
// this file has none of those, and its tests pass under ASan.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace cutoff::effects {

namespace asio = boost::asio;
using sql::Value;

struct Effects::Counters {
  std::atomic<std::uint64_t> committed{0}, rolled_back{0}, ambiguous{0}, replayed{0}, conflicts{0},
      dispatched{0}, dispatch_failures{0}, after_commit_failures{0};
};

namespace {

constexpr std::string_view kSavepoint = "cutoff_effect";

void Bump(std::atomic<std::uint64_t>& c) noexcept { c.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

std::optional<std::string> idempotency_key_problem(std::string_view key) {
  if (key.empty()) return "the idempotency key is empty";
  if (key.size() > kMaxIdempotencyKeyBytes)
    return "the idempotency key is " + std::to_string(key.size()) + " bytes; the most is " +
           std::to_string(kMaxIdempotencyKeyBytes);
  for (const char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return "the idempotency key contains a control character";
  }
  // (A tab is a control character already.)
  if (key.front() == ' ' || key.back() == ' ') return "the idempotency key starts or ends with a space";
  return std::nullopt;
}

void check_idempotency_key(std::string_view key, const std::string& request_id) {
  if (auto problem = idempotency_key_problem(key)) throw Error(ErrorCode::invalid_argument, *problem, request_id);
}

// ---- Effect ---------------------------------------------------------------------------------

asio::awaitable<sql::Result> Effect::execute(std::string_view sql, std::span<const Value> params) {
  co_return co_await conn_->execute(ctx_, sql, params);
}

asio::awaitable<void> Effect::publish(std::string topic, std::string payload) {
  std::vector<Value> p{topic, payload, ctx_.request_id(), internal::NowMs()};
  sql::Result r = co_await conn_->execute(ctx_,
                                          "insert into " + owner_->outbox_table_ +
                                              " (topic, payload, request_id, created_ms) values ($1, $2, $3, $4)"
                                              " returning id",
                                          p);
  published_.push_back(OutboxMessage{r[0].get<std::int64_t>(0), std::move(topic), std::move(payload),
                                     ctx_.request_id()});
}

void Effect::after_commit(std::function<asio::awaitable<void>(const Context&)> work) {
  if (nested_)
    throw Error(ErrorCode::invalid_argument,
                "after_commit needs a region that owns its transaction (this one is a savepoint in another)",
                ctx_.request_id());
  after_commit_.push_back(std::move(work));
}

// ---- Effects --------------------------------------------------------------------------------

Effects::Effects(sql::Pool& pool, EffectsOptions options)
    : pool_(pool),
      options_(std::move(options)),
      admission_(options_.max_in_flight),
      idempotency_table_(options_.table_prefix + "idempotency"),
      outbox_table_(options_.table_prefix + "outbox"),
      counters_(std::make_unique<Counters>()) {
  if (options_.metrics) stops_.emplace(*options_.metrics, "effect");
}

Effects::~Effects() = default;

EffectStats Effects::stats() const noexcept {
  const Counters& c = *counters_;
  EffectStats s;
  s.committed = c.committed.load(std::memory_order_relaxed);
  s.rolled_back = c.rolled_back.load(std::memory_order_relaxed);
  s.ambiguous = c.ambiguous.load(std::memory_order_relaxed);
  s.rejected = admission_.rejected();
  s.replayed = c.replayed.load(std::memory_order_relaxed);
  s.conflicts = c.conflicts.load(std::memory_order_relaxed);
  s.dispatched = c.dispatched.load(std::memory_order_relaxed);
  s.dispatch_failures = c.dispatch_failures.load(std::memory_order_relaxed);
  s.after_commit_failures = c.after_commit_failures.load(std::memory_order_relaxed);
  return s;
}

asio::awaitable<void> Effects::install(const Context& ctx) {
  sql::Pool::Lease conn = co_await pool_.acquire(ctx);
  co_await internal::CreateIdempotencyTable(*conn, ctx, idempotency_table_);
  const bool pg = conn->driver() == "postgresql";
  const std::string outbox = "create table if not exists " + outbox_table_ + " (id " +
                             (pg ? "bigserial primary key" : "integer primary key autoincrement") +
                             ", topic text not null, payload text not null, request_id text,"
                             " created_ms bigint not null, dispatched_ms bigint, attempts integer not null default 0)";
  co_await conn->execute(ctx, outbox, {});
  co_await conn->execute(ctx,
                         "create index if not exists " + outbox_table_ + "_pending on " + outbox_table_ +
                             " (id) where dispatched_ms is null",
                         {});
}

asio::awaitable<void> Effects::Fault(Step step, const Context& caller) {
  if (auto fault = cutoff::internal::armed_fault(internal::kEffectStep)) {
    auto injected = (*fault)(step, caller);  // a named awaitable (g++ 12 destroys temporaries twice)
    co_await std::move(injected);
  }
}

void Effects::CountStop(StopReason reason, const observe::StopStamp& stamp) const noexcept {
  if (stops_) stops_->record(reason, stamp.since_stop());
}

void Effects::CountAmbiguous(const std::string& operation) noexcept {
  Bump(counters_->ambiguous);
  if (options_.metrics) options_.metrics->commit_ambiguous.with({operation}).inc();
}

asio::awaitable<EffectOutcome> Effects::run(const Context& ctx, EffectRequest request, EffectBody body) {
  // Entry: a spent budget or a bad key enters nothing, not even the admission count or a
  // pool wait.
  ctx.check();
  if (request.idempotency_key) check_idempotency_key(*request.idempotency_key, ctx.request_id());
  AdmissionLimit::Ticket ticket = admission_.enter(request.operation, ctx.request_id());
  const Deadline region = Deadline::after(options_.timeout, ctx.clock());
  sql::Pool::Lease conn = co_await pool_.acquire(ctx.with_deadline(region));
  co_return co_await Run(*conn, ctx, request, body, std::move(ticket), region);
}

asio::awaitable<EffectOutcome> Effects::run_on(sql::Connection& conn, const Context& ctx, EffectRequest request,
                                               EffectBody body) {
  ctx.check();
  if (request.idempotency_key) check_idempotency_key(*request.idempotency_key, ctx.request_id());
  AdmissionLimit::Ticket ticket = admission_.enter(request.operation, ctx.request_id());
  co_return co_await Run(conn, ctx, request, body, std::move(ticket), Deadline::after(options_.timeout, ctx.clock()));
}

asio::awaitable<EffectOutcome> Effects::Run(sql::Connection& conn, const Context& ctx, EffectRequest& request,
                                            EffectBody& body, [[maybe_unused]] AdmissionLimit::Ticket ticket,
                                            Deadline region) {  // the ticket is held until the region ends
  const std::string& rid = ctx.request_id();
  const bool keyed = request.idempotency_key.has_value();
  TransactionShape shape;
  shape.read_only = request.mode == sql::AccessMode::read_only;
  shape.read_only_enforced = conn.enforces_read_only();
  shape.nested = conn.in_transaction();
  if (keyed && shape.nested)
    throw Error(ErrorCode::invalid_argument,
                "an idempotency key needs a region that owns its transaction (this one is a savepoint in another)",
                rid);
  if (keyed && shape.read_only)
    throw Error(ErrorCode::invalid_argument, "an idempotency key needs a read-write region", rid);

  const Context body_ctx = ctx.with_deadline(region);
  observe::StopStamp stamp;  // the start of a stopped region's overshoot
  if (stops_) stamp.arm(body_ctx.token());
  static const std::string kNoKey;
  const internal::IdempotencyKey key{idempotency_table_, request.operation,
                                     keyed ? *request.idempotency_key : kNoKey};

  // ---- Before the commit point: a stop rolls back and is reported as itself. ----
  co_await Fault(Step::before_begin, ctx);
  if (body_ctx.stop_requested()) {
    CountStop(body_ctx.stop_reason(), stamp);
    throw classify_stop(Step::before_begin, body_ctx.stop_reason(), shape, rid);
  }

  std::string token;
  if (keyed) {
    internal::Claim claim = co_await internal::ClaimKey(conn, body_ctx, key, request.fingerprint,
                                                         options_.timeout + options_.claim_margin);
    switch (claim.kind) {
      case internal::Claim::Kind::claimed: token = std::move(claim.token); break;
      case internal::Claim::Kind::replay:
        Bump(counters_->replayed);
        co_return EffectOutcome{std::move(claim.response), true};
      case internal::Claim::Kind::in_progress:
        Bump(counters_->conflicts);
        throw Error(ErrorCode::idempotency_conflict,
                    request.operation + ": a request with this idempotency key is still in progress", rid);
      case internal::Claim::Kind::different_request:
        Bump(counters_->conflicts);
        throw Error(ErrorCode::idempotency_conflict,
                    request.operation + ": this idempotency key was used for a different request", rid);
    }
  }

  Step step = Step::before_begin;
  std::optional<sql::Transaction> tx;
  Effect fx(*this, conn, body_ctx, shape.nested);
  std::string result;
  std::exception_ptr failure;
  try {
    if (shape.nested) {
      co_await conn.execute(body_ctx, "SAVEPOINT " + std::string(kSavepoint), {});
    } else {
      tx.emplace(co_await sql::Transaction::begin(conn, body_ctx, request.mode));
    }
    step = Step::body;
    if (keyed && !co_await internal::LockClaim(conn, body_ctx, key, token))
      throw Error(ErrorCode::idempotency_conflict,
                  request.operation + ": the claim on this idempotency key expired and was taken over", rid);
    co_await Fault(Step::body, ctx);
    result = co_await body(fx);
    if (keyed && !co_await internal::FinishClaim(conn, body_ctx, key, token, result))
      throw Error(ErrorCode::idempotency_conflict,
                  request.operation + ": the claim on this idempotency key expired and was taken over", rid);
    body_ctx.check();
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    // Roll back under a budget of its own: the caller's may be what ran out. Shielded from
    // Asio cancellation too: a server cancels a handler's coroutine when its client hangs up,
    // and a claim left unreleased would refuse every retry with the key until it expires.
    co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
    co_await asio::this_coro::throw_if_cancelled(false);
    const Context cleanup = ctx.detached(options_.timeout);
    if (tx) {
      co_await tx->rollback();
    } else if (shape.nested && step == Step::body) {
      try {
        co_await conn.execute(cleanup, "ROLLBACK TO SAVEPOINT " + std::string(kSavepoint), {});
        co_await conn.execute(cleanup, "RELEASE SAVEPOINT " + std::string(kSavepoint), {});
      } catch (...) {
      }
    }
    if (keyed) {
      try {
        co_await internal::ReleaseClaim(conn, cleanup, key, token);
      } catch (...) {  // it expires on its own
      }
    }
    co_await asio::this_coro::reset_cancellation_state();
    co_await asio::this_coro::throw_if_cancelled(true);
    Bump(counters_->rolled_back);
    const Error* error = find_error(failure);
    if (error && error->code() == ErrorCode::idempotency_conflict) Bump(counters_->conflicts);
    if ((error && is_stop(error->code())) || body_ctx.stop_requested()) {
      const StopReason why = body_ctx.stop_requested() ? body_ctx.stop_reason() : stop_reason_of(error->code());
      Error e = classify_stop(step, why, shape, rid);
      if (e.code() == ErrorCode::commit_ambiguous) CountAmbiguous(request.operation);
      CountStop(why, stamp);
      throw e;
    }
    std::rethrow_exception(failure);
  }

  co_return co_await Commit(conn, ctx, request, shape, token, tx, fx, std::move(result), stamp);
}

asio::awaitable<EffectOutcome> Effects::Commit(sql::Connection& conn, const Context& ctx, EffectRequest& request,
                                               TransactionShape shape, const std::string& token,
                                               std::optional<sql::Transaction>& tx, Effect& fx, std::string result,
                                               const observe::StopStamp& stamp) {
  const std::string& rid = ctx.request_id();
  const bool keyed = !token.empty();
  static const std::string kNoKey;
  const internal::IdempotencyKey key{idempotency_table_, request.operation,
                                     request.idempotency_key ? *request.idempotency_key : kNoKey};
  std::exception_ptr failure;
  // ---- The commit point: from here on nothing the caller does interrupts the region. ----
  co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
  co_await asio::this_coro::throw_if_cancelled(false);
  CommitLedger* ledger = ctx.commit_ledger();
  shape.after_commit_queued = !fx.published_.empty() || !fx.after_commit_.empty();
  if (ledger && !cannot_have_written(shape)) ledger->note_commit_point(keyed);
  std::optional<Step> stopped_at;
  auto note_stop = [&](Step s) {
    if (!stopped_at && ctx.stop_requested()) stopped_at = s;
  };
  note_stop(Step::sending_commit);
  co_await Fault(Step::sending_commit, ctx);
  // Without the ledger: the region noted its commit point above, with its key; the
  // transaction would note it again as unkeyed.
  const Context shield = ctx.detached(options_.timeout).with_commit_ledger(nullptr);
  try {
    if (shape.nested) {
      co_await conn.execute(shield, "RELEASE SAVEPOINT " + std::string(kSavepoint), {});
    } else {
      note_stop(Step::commit_in_flight);
      co_await tx->commit(shield);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    // Rolled back (a database error at COMMIT) or unknown (commit_ambiguous from the driver).
    const Error* error = find_error(failure);
    if (error && error->code() == ErrorCode::commit_ambiguous) {
      CountAmbiguous(request.operation);
    } else {
      Bump(counters_->rolled_back);
      if (keyed) {
        try {
          co_await internal::ReleaseClaim(conn, shield, key, token);
        } catch (...) {
        }
      }
      if (ctx.stop_requested() && shape.nested) {
        CountAmbiguous(request.operation);
        CountStop(ctx.stop_reason(), stamp);
        throw classify_stop(Step::sending_commit, ctx.stop_reason(), shape, rid);
      }
    }
    co_await asio::this_coro::reset_cancellation_state();
    co_await asio::this_coro::throw_if_cancelled(true);
    std::rethrow_exception(failure);
  }
  Bump(counters_->committed);
  note_stop(Step::commit_in_flight);  // a stop that arrived while COMMIT was out

  co_await Fault(Step::after_commit, ctx);
  note_stop(Step::after_commit);
  if (shape.after_commit_queued && !shape.nested) {
    if (ledger) ledger->note_after_commit_queued();
    co_await AfterCommit(fx, shield);
    if (ledger) ledger->note_after_commit_done();
  }
  note_stop(Step::after_commit_work);
  co_await asio::this_coro::reset_cancellation_state();
  co_await asio::this_coro::throw_if_cancelled(true);

  // The stop the region was shielded from, re-raised now that nothing is left half done.
  if (stopped_at) {
    Error e = classify_stop(*stopped_at, ctx.stop_reason(), shape, rid);
    if (e.code() == ErrorCode::commit_ambiguous) CountAmbiguous(request.operation);
    CountStop(ctx.stop_reason(), stamp);
    throw e;
  }
  co_return EffectOutcome{std::move(result), false};
}

asio::awaitable<void> Effects::AfterCommit(Effect& fx, const Context& shield) {
  co_await Fault(Step::after_commit_work, fx.ctx_);
  for (const OutboxMessage& m : fx.published_) co_await Dispatch(m, *fx.conn_);
  for (auto& work : fx.after_commit_) {
    try {
      co_await work(shield);
    } catch (...) {
      Bump(counters_->after_commit_failures);
    }
  }
}

asio::awaitable<bool> Effects::Dispatch(const OutboxMessage& message, sql::Connection& conn) {
  if (!options_.sink) co_return false;
  // A fresh budget: the message must not inherit whatever its producer had left.
  const Context fresh = Context::background(Context().timers())
                            .with_timeout(options_.dispatch_timeout)
                            .with_request_id(message.request_id);
  bool delivered = false;
  try {
    co_await options_.sink(fresh, message);
    delivered = true;
  } catch (...) {
  }
  Bump(delivered ? counters_->dispatched : counters_->dispatch_failures);
  try {
    const Context mark = Context().with_timeout(options_.dispatch_timeout);
    if (delivered) {
      std::vector<Value> p{internal::NowMs(), message.id};
      co_await conn.execute(mark,
                            "update " + outbox_table_ + " set dispatched_ms = $1, attempts = attempts + 1 where id = $2",
                            p);
    } else {
      std::vector<Value> p{message.id};
      co_await conn.execute(mark, "update " + outbox_table_ + " set attempts = attempts + 1 where id = $1", p);
    }
  } catch (...) {  // left undelivered in the table: the relay sends it again (at least once)
  }
  co_return delivered;
}

asio::awaitable<std::size_t> Effects::relay(const Context& ctx, std::size_t limit) {
  sql::Pool::Lease conn = co_await pool_.acquire(ctx);
  // Younger messages may still be on their way from the region that wrote them.
  std::vector<Value> p{internal::NowMs() - options_.dispatch_timeout.count(), static_cast<std::int64_t>(limit)};
  sql::Result r = co_await conn->execute(ctx,
                                         "select id, topic, payload, request_id from " + outbox_table_ +
                                             " where dispatched_ms is null and created_ms < $1 order by id limit $2",
                                         p);
  std::size_t delivered = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    ctx.check();
    OutboxMessage m{r[i].get<std::int64_t>("id"), r[i].get<std::string>("topic"), r[i].get<std::string>("payload"),
                    r[i].get<std::optional<std::string>>("request_id").value_or("")};
    if (co_await Dispatch(m, *conn)) ++delivered;
  }
  co_return delivered;
}

asio::awaitable<std::int64_t> Effects::pending_messages(const Context& ctx) {
  sql::Pool::Lease conn = co_await pool_.acquire(ctx);
  sql::Result r =
      co_await conn->execute(ctx, "select count(*) from " + outbox_table_ + " where dispatched_ms is null", {});
  co_return r[0].get<std::int64_t>(0);
}

asio::awaitable<std::size_t> Effects::sweep(const Context& ctx) {
  sql::Pool::Lease conn = co_await pool_.acquire(ctx);
  const std::int64_t now = internal::NowMs();
  const std::int64_t before = now - options_.retention.count();
  std::size_t swept = co_await internal::SweepRecords(*conn, ctx, idempotency_table_, before, now);
  // Delivered messages, in batches as the records are (undelivered ones wait for the relay).
  const std::vector<Value> p{before};
  swept += co_await internal::DeleteInBatches(
      *conn, ctx, outbox_table_, "id", "dispatched_ms is not null and dispatched_ms < $1", p, internal::kSweepBatch);
  co_return swept;
}

asio::awaitable<void> Effects::run_sweeper(const Context& ctx, std::chrono::milliseconds interval) {
  co_await internal::run_every(ctx, interval,
                               [this](const Context& round) -> asio::awaitable<void> { co_await sweep(round); });
}

}  // namespace cutoff::effects
