// Effects: durable writes that survive a stop without being duplicated or misreported.
//
// An effect region wraps one transaction's worth of durable work:
//
//   cutoff::effects::Effects effects(pool, {.timeout = 2s, .max_in_flight = 32, .sink = publish});
//   co_await effects.install(ctx);  // the idempotency and outbox tables
//
//   cutoff::effects::EffectRequest req{.operation = "stock.reserve", .idempotency_key = key,
//                                      .fingerprint = args_json};  // named: see docs/effects.md
//   cutoff::effects::EffectOutcome out = co_await effects.run(ctx, req,
//       [&](cutoff::effects::Effect& fx) -> boost::asio::awaitable<std::string> {
//         co_await fx.execute("update bin set reserved = reserved + $1 where id = $2", {qty, bin});
//         co_await fx.publish("stock.changed", R"({"bin":7})");  // same transaction
//         co_return R"({"reserved":true})";                     // stored under the key
//       });
//   // out.result is the body's result, or the stored one when the key was seen before
//
// What the region guarantees:
// - Entry: an expired or stopped context is refused before anything runs; over the admission
//   limit the region is refused with `overloaded`. Both are safe to retry.
// - The body runs under the caller's context tightened to the region's own `timeout`: a stop
//   there rolls the transaction back and is reported as itself (deadline_exceeded, cancelled).
// - Once it decides to commit, the region is shielded: the caller's stop (and Asio
//   cancellation of the calling coroutine) no longer interrupts it. COMMIT and the
//   after-commit work (outbox dispatch, after_commit callbacks) run to completion, and only
//   then is a pending stop re-raised, as `commit_ambiguous` (see classify.hpp).
// - An idempotency key is claimed before the transaction and its result is recorded in the
//   same transaction as the effect: a repeat with the same fingerprint gets the stored result,
//   a different fingerprint or a claim still running is `idempotency_conflict`, and a claim
//   left by a crashed process expires after `timeout` (plus `claim_margin`). A key that is
//   empty, too long or has control characters is `invalid_argument`, refused at entry.
// - Outbox messages are rows written in the effect's transaction and dispatched after COMMIT
//   with a fresh budget of their own (never the producer's); `relay()` redelivers what a
//   failed or crashed dispatch left (at least once).
// - The request's CommitLedger (core/commit_ledger.hpp) learns about every commit point, so
//   an operation that reports a later stop reports it honestly.
//
// Thread-safe: one Effects serves many concurrent requests. It must outlive its regions.
#ifndef CUTOFF_EFFECTS_EFFECTS_HPP_
#define CUTOFF_EFFECTS_EFFECTS_HPP_

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/core/context.hpp"
#include "cutoff/effects/admission.hpp"
#include "cutoff/effects/classify.hpp"
#include "cutoff/observe/deadline_metrics.hpp"
#include "cutoff/sql/pool.hpp"
#include "cutoff/sql/transaction.hpp"

namespace cutoff::effects {

// One outbox row.
struct OutboxMessage {
  std::int64_t id = 0;
  std::string topic;
  std::string payload;
  std::string request_id;  // the producer's, for tracing only
};

// Delivers one message. It gets a fresh context (dispatch_timeout, the producer's request id,
// none of the producer's budget) and throws to leave the message for the relay.
using OutboxSink = std::function<boost::asio::awaitable<void>(const Context&, const OutboxMessage&)>;

struct EffectsOptions {
  // Each region's own deadline, from entry. Bounds the body; COMMIT and after-commit work are
  // allowed `timeout` again from the commit point.
  std::chrono::milliseconds timeout{2000};
  std::size_t max_in_flight = 64;
  // Prefix of the tables: <prefix>idempotency, <prefix>outbox.
  std::string table_prefix = "cutoff_";
  // How long a finished idempotency record and a delivered outbox message are kept (sweep()).
  std::chrono::milliseconds retention{std::chrono::hours(24)};
  // Added to `timeout` for a claim's expiry, for clock differences between processes.
  std::chrono::milliseconds claim_margin{500};
  // Budget of each outbox delivery.
  std::chrono::milliseconds dispatch_timeout{2000};
  OutboxSink sink;  // null: messages wait in the table for a relay with a sink
  // commit_ambiguous per operation; regions ended by a stop in cutoff_stops_total{layer="effect"}
  // with their overshoot (stop → region rolled back, or its commit finished).
  observe::DeadlineMetrics* metrics = nullptr;
};

// The longest idempotency key accepted, in bytes. Keys are stored, compared and logged; a
// client that can send megabyte keys could fill the idempotency table with them.
inline constexpr std::size_t kMaxIdempotencyKeyBytes = 255;

// Why `key` cannot be an idempotency key, or nullopt when it can. A key is 1 to
// kMaxIdempotencyKeyBytes bytes with no control characters (U+0000-U+001F, U+007F) and no
// leading or trailing space. An empty key is refused rather than read as "no key":
// a client that sends one believes its retries are safe. Control characters and outer blanks
// are refused because keys travel in HTTP headers (CR LF would split one, parsers trim
// blanks, so " k" and "k" would become one key) and end up in log lines.
std::optional<std::string> idempotency_key_problem(std::string_view key);
// Throws Error(invalid_argument) naming the problem with `key` (see above).
void check_idempotency_key(std::string_view key, const std::string& request_id = {});

struct EffectRequest {
  std::string operation;  // for errors, metrics and the idempotency scope
  // nullopt: no idempotency. A key that is present must pass check_idempotency_key(); an
  // invalid one (empty included) is refused with invalid_argument before anything runs.
  std::optional<std::string> idempotency_key;
  std::string fingerprint;      // what was asked (e.g. canonical arguments); compared on repeats
  sql::AccessMode mode = sql::AccessMode::read_write;
};

struct EffectOutcome {
  std::string result;
  bool replayed = false;  // the stored result of an earlier request with the same key
};

struct EffectStats {
  std::uint64_t committed = 0;
  std::uint64_t rolled_back = 0;       // stopped or failed before the commit point
  std::uint64_t ambiguous = 0;         // reported commit_ambiguous
  std::uint64_t rejected = 0;          // admission limit
  std::uint64_t replayed = 0;
  std::uint64_t conflicts = 0;
  std::uint64_t dispatched = 0;        // outbox messages delivered
  std::uint64_t dispatch_failures = 0;
  std::uint64_t after_commit_failures = 0;
};

class Effects;

// What the body of a region works with.
class Effect {
 public:
  // The body's context: the caller's, tightened to the region's deadline.
  const Context& context() const noexcept { return ctx_; }
  sql::Connection& connection() const noexcept { return *conn_; }

  boost::asio::awaitable<sql::Result> execute(std::string_view sql, std::span<const sql::Value> params = {});
  boost::asio::awaitable<sql::Result> execute(std::string_view sql, std::initializer_list<sql::Value> params) {
    return execute(sql, std::span<const sql::Value>(params.begin(), params.size()));
  }
  // Writes a message to the outbox in this transaction; it is dispatched after COMMIT.
  boost::asio::awaitable<void> publish(std::string topic, std::string payload);
  // Work to run after COMMIT, to completion even when a stop is pending. It gets a context
  // detached from the caller, bounded by the region's timeout. Failures are counted, not
  // raised: the effect is already durable.
  void after_commit(std::function<boost::asio::awaitable<void>(const Context&)> work);

 private:
  friend class Effects;
  Effect(Effects& owner, sql::Connection& conn, Context ctx, bool nested) noexcept
      : owner_(&owner), conn_(&conn), ctx_(std::move(ctx)), nested_(nested) {}

  Effects* owner_;
  sql::Connection* conn_;
  Context ctx_;
  bool nested_;
  std::vector<OutboxMessage> published_;
  std::vector<std::function<boost::asio::awaitable<void>(const Context&)>> after_commit_;
};

using EffectBody = std::function<boost::asio::awaitable<std::string>(Effect&)>;

class Effects {
 public:
  Effects(sql::Pool& pool, EffectsOptions options = {});
  ~Effects();
  Effects(const Effects&) = delete;
  Effects& operator=(const Effects&) = delete;

  // Creates the idempotency and outbox tables if they do not exist.
  boost::asio::awaitable<void> install(const Context& ctx);

  // Runs `body` in an effect region on a pooled connection.
  boost::asio::awaitable<EffectOutcome> run(const Context& ctx, EffectRequest request, EffectBody body);

  // Runs `body` on `conn`. When `conn` already has a transaction open (begun outside cutoff),
  // the region is a savepoint in it: its owner commits, so a stop after the body started is
  // commit_ambiguous, and idempotency keys and after_commit work are refused (invalid_argument);
  // published messages wait for the relay.
  boost::asio::awaitable<EffectOutcome> run_on(sql::Connection& conn, const Context& ctx, EffectRequest request,
                                               EffectBody body);

  // Deletes finished idempotency records older than `retention`, claims that expired, and
  // outbox messages delivered more than `retention` ago, a batch per statement; returns how
  // many rows went. Undelivered messages are kept.
  boost::asio::awaitable<std::size_t> sweep(const Context& ctx);
  // Sweeps every `interval` until `ctx` stops (a background task), each round under a budget of
  // `interval` (1 s to 30 s).
  boost::asio::awaitable<void> run_sweeper(const Context& ctx, std::chrono::milliseconds interval);
  // Delivers up to `limit` undelivered outbox messages older than dispatch_timeout, oldest
  // first; returns how many were delivered.
  boost::asio::awaitable<std::size_t> relay(const Context& ctx, std::size_t limit = 100);
  // Outbox messages not yet delivered.
  boost::asio::awaitable<std::int64_t> pending_messages(const Context& ctx);

  EffectStats stats() const noexcept;
  const EffectsOptions& options() const noexcept { return options_; }
  // The pool regions run on (sagas journal on it too).
  sql::Pool& pool() const noexcept { return pool_; }
  const AdmissionLimit& admission() const noexcept { return admission_; }
  const std::string& idempotency_table() const noexcept { return idempotency_table_; }
  const std::string& outbox_table() const noexcept { return outbox_table_; }

 private:
  friend class Effect;
  struct Counters;
  struct Region;

  boost::asio::awaitable<EffectOutcome> Run(sql::Connection& conn, const Context& ctx, EffectRequest& request,
                                            EffectBody& body, AdmissionLimit::Ticket ticket, Deadline region_deadline);
  // From the decision to commit on: COMMIT, after-commit work, and the stop re-raised.
  boost::asio::awaitable<EffectOutcome> Commit(sql::Connection& conn, const Context& ctx, EffectRequest& request,
                                               TransactionShape shape, const std::string& token,
                                               std::optional<sql::Transaction>& tx, Effect& fx, std::string result,
                                               const observe::StopStamp& stamp);
  boost::asio::awaitable<void> Fault(Step step, const Context& caller);
  boost::asio::awaitable<void> AfterCommit(Effect& fx, const Context& shield);
  boost::asio::awaitable<bool> Dispatch(const OutboxMessage& message, sql::Connection& conn);
  void CountAmbiguous(const std::string& operation) noexcept;
  // A region ended by a stop: cutoff_stops_total{layer="effect"} and its overshoot.
  void CountStop(StopReason reason, const observe::StopStamp& stamp) const noexcept;

  sql::Pool& pool_;
  EffectsOptions options_;
  AdmissionLimit admission_;
  std::string idempotency_table_;
  std::string outbox_table_;
  std::unique_ptr<Counters> counters_;
  std::optional<observe::LayerStops> stops_;  // with options.metrics
};

}  // namespace cutoff::effects

#endif  // CUTOFF_EFFECTS_EFFECTS_HPP_
