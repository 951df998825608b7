#include "cutoff/effects/saga.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>
#include <random>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/commit_ledger.hpp"
#include "cutoff/effects/idempotency.hpp"
#include "cutoff/effects/internal/fault_points.hpp"
#include "cutoff/observe/metrics.hpp"

// g++ 12 reports Asio's coroutine frame delete as mismatched in large coroutines, as in
// effects.cpp (which says why this is the false positive and not the braced-aggregate miscompile).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace cutoff::effects {

namespace asio = boost::asio;
using sql::Value;
using internal::NowMs;

// ---- Steps and outcomes. ----

SagaStep SagaStep::local_step(std::string name, SagaLocalBody body, SagaLocalBody compensation,
                              SagaStepOptions options) {
  SagaStep s;
  s.name = std::move(name);
  s.local = std::move(body);
  s.compensate_local = std::move(compensation);
  s.options = options;
  return s;
}

SagaStep SagaStep::remote_step(std::string name, SagaRemoteBody body, SagaRemoteBody compensation,
                               SagaStepOptions options) {
  SagaStep s;
  s.name = std::move(name);
  s.remote = std::move(body);
  s.compensate_remote = std::move(compensation);
  s.options = options;
  return s;
}

SagaStep SagaStep::remote_step_with_local_compensation(std::string name, SagaRemoteBody body,
                                                       SagaLocalBody compensation, SagaStepOptions options) {
  SagaStep s = remote_step(std::move(name), std::move(body), nullptr, options);
  s.compensate_local = std::move(compensation);
  return s;
}

SagaStep SagaStep::local_step_with_remote_compensation(std::string name, SagaLocalBody body,
                                                       SagaRemoteBody compensation, SagaStepOptions options) {
  SagaStep s = local_step(std::move(name), std::move(body), nullptr, options);
  s.compensate_remote = std::move(compensation);
  return s;
}

Error SagaOutcome::to_error() const {
  const std::string rid = error ? error->request_id() : std::string();
  switch (state) {
    case SagaState::completed:
      return Error(ErrorCode::internal, "saga " + saga_id + " completed", rid);
    case SagaState::compensated:
      if (error) {
        return Error(error->code(), "saga " + saga_id + " was undone after step '" + failed_step + "' failed: " +
                                        error->message(),
                     rid);
      }
      return Error(ErrorCode::internal, "saga " + saga_id + " was undone", rid);
    case SagaState::step_ambiguous:
      return Error(ErrorCode::commit_ambiguous,
                   "step_ambiguous: step '" + failed_step + "' of saga " + saga_id +
                       " may or may not have happened, so nothing was compensated; settle it with `cutoff saga "
                       "resume " + saga_id + "`" + (error ? " (" + error->message() + ")" : std::string()),
                   rid);
    case SagaState::compensation_failed:
      return Error(ErrorCode::commit_ambiguous,
                   "compensation_failed: saga " + saga_id + " could not undo step '" + failed_step +
                       "' within its budget; `cutoff saga resume " + saga_id + "` tries again" +
                       (error ? " (" + error->message() + ")" : std::string()),
                   rid);
    case SagaState::running:
    case SagaState::compensating:
      break;
  }
  return Error(ErrorCode::internal, "saga " + saga_id + " did not reach a final state", rid);
}

void SagaOutcome::check() const {
  if (state != SagaState::completed) throw to_error();
}

// ---- The engine. ----

struct Sagas::Metrics {
  explicit Metrics(observe::Registry& r)
      : outcomes(r.counter("cutoff_saga_outcomes_total", "Sagas by final state reached in this process.",
                           {"saga", "state"})),
        compensations(r.counter("cutoff_saga_compensations_total",
                                "Compensation attempts by step and outcome (done, retried, failed).",
                                {"saga", "step", "outcome"})) {}
  observe::Family<observe::Counter>& outcomes;
  observe::Family<observe::Counter>& compensations;
};

// One saga being driven by this process.
struct Sagas::Run {
  const SagaDefinition* def = nullptr;
  std::string id;
  std::string token;      // our ownership of the journal row
  std::string input;
  std::string request_id;
  Context base;           // the caller's context (values, timers) for detached work
  std::vector<std::string> results;  // per step: what it returned (when done)
  std::vector<bool> done;            // per step: happened and not undone
  // per step: an earlier attempt may have happened (resume found its row `sent` or
  // `ambiguous`); whatever this attempt meets short of a refusal leaves it ambiguous
  std::vector<bool> in_doubt;
  int next_step = 0;
  SagaState state = SagaState::running;
  std::string failed_step;
  std::optional<Error> error;
  bool journal_lost = false;  // a journal write failed: the saga continues from its journal later
};

namespace {

class StepFailed : public std::exception {
 public:
  StepFailed(Error error, bool ambiguous) : error(std::move(error)), ambiguous(ambiguous) {}
  const char* what() const noexcept override { return error.what(); }
  Error error;
  bool ambiguous;
};

// What `failure` means; Asio's abort of a coroutine whose context stopped reads as that stop.
Error AsError(const std::exception_ptr& failure, const std::string& rid, const Context* ctx = nullptr) {
  return to_error(failure, ctx && ctx->stop_requested() ? ctx->stop_reason() : StopReason::none, rid);
}

// "25 h", "90 min", "40 s": a duration in a message, in the largest unit that is at least 2.
std::string DescribeAge(std::int64_t ms) {
  if (ms >= 2 * 3'600'000) return std::to_string(ms / 3'600'000) + " h";
  if (ms >= 2 * 60'000) return std::to_string(ms / 60'000) + " min";
  if (ms >= 2'000) return std::to_string(ms / 1'000) + " s";
  return std::to_string(ms) + " ms";
}

// Error texts are kept in the journal and shown by `cutoff saga show`: a remote service's
// message is cut rather than stored whole.
constexpr std::size_t kMaxJournalMessageBytes = 1024;
std::string JournalMessage(const Error& e) {
  std::string m = e.message();
  if (m.size() > kMaxJournalMessageBytes) {
    m.resize(kMaxJournalMessageBytes);
    m += "...";
  }
  return m;
}

using Statement = internal::SagaStatement;

// In one transaction: `own`, an UPDATE of the saga row that checks its owner and returns a
// row, then `rest`. False, with nothing written, when `own` matched nothing: the saga is no
// longer this process's (or no longer where this process left it).
asio::awaitable<bool> OwnedWrite(sql::Pool& pool, const Context& caller, const Statement& own,
                                 const std::vector<Statement>& rest) {
  // The journal is the saga's bookkeeping, not an effect of the caller's: what the saga leaves
  // behind reaches the caller's ledger once, from run(), by its outcome.
  const Context ctx = caller.with_commit_ledger(nullptr);
  sql::Pool::Lease conn = co_await pool.acquire(ctx);
  sql::Transaction tx = co_await sql::Transaction::begin(*conn, ctx, sql::AccessMode::read_write);
  sql::Result r = co_await tx.execute(ctx, own.sql, own.params);
  if (r.size() != 1) {
    co_await tx.rollback();
    co_return false;
  }
  for (const Statement& statement : rest) co_await tx.execute(ctx, statement.sql, statement.params);
  co_await tx.commit(ctx);
  co_return true;
}

// Another process took the saga over (resume): this one leaves everything to it.
class SagaTakenOver : public Error {
 public:
  SagaTakenOver(const std::string& id, const std::string& rid)
      : Error(ErrorCode::idempotency_conflict, "saga " + id + " was taken over by another process", rid) {}
};
SagaTakenOver TakenOver(const std::string& id, const std::string& rid) { return SagaTakenOver(id, rid); }

void CheckSagaId(std::string_view id, const std::string& rid) {
  if (id.size() > kMaxSagaIdBytes)
    throw Error(ErrorCode::invalid_argument,
                "a saga id is at most " + std::to_string(kMaxSagaIdBytes) + " bytes", rid);
  if (auto problem = idempotency_key_problem(id)) throw Error(ErrorCode::invalid_argument, "saga id: " + *problem, rid);
}

asio::awaitable<void> SagaFault(std::string_view step, internal::SagaPoint point, const Context& ctx) {
  if (auto fault = cutoff::internal::armed_fault(internal::kSagaStep)) {
    auto injected = (*fault)(step, point, ctx);  // named: g++ 12 destroys temporaries twice
    co_await std::move(injected);
  }
}

// Journal writes after the saga's own budget may be spent.
Context JournalContext(const Context& base, std::chrono::milliseconds timeout) {
  return base.detached(timeout).with_commit_ledger(nullptr);
}

}  // namespace

// The saga row's owner check: bumps its version (every write to the row does, so a takeover
// can tell the row has not changed since it was read); `sets` adds assignments and `where`
// conditions, with `extra` as their parameters from $4.
Statement Sagas::OwnerCheck(const Run& run, const std::string& sets, const std::string& where,
                            std::vector<sql::Value> extra) const {
  Statement st;
  st.sql = "update " + journal_.saga_table() + " set version = version + 1, updated_ms = $1" + sets +
           " where id = $2 and owner_token = $3" + where + " returning id";
  st.params = {NowMs(), run.id, run.token};
  for (sql::Value& v : extra) st.params.push_back(std::move(v));
  return st;
}

Sagas::Sagas(Effects& effects, SagaOptions options)
    : effects_(effects),
      options_(std::move(options)),
      journal_(effects.pool(), effects.options().table_prefix),
      compensations_(options_.max_compensations_in_flight) {
  if (options_.registry) metrics_ = std::make_unique<Metrics>(*options_.registry);
}

Sagas::~Sagas() = default;

void Sagas::define(SagaDefinition definition) {
  auto refuse = [&](const std::string& why) {
    throw Error(ErrorCode::invalid_argument, "saga definition '" + definition.name + "': " + why);
  };
  if (definition.name.empty() || definition.name.size() > 200) refuse("its name must be 1 to 200 bytes");
  if (definitions_.count(definition.name)) refuse("a saga with this name is already defined");
  if (definition.steps.empty()) refuse("it has no steps");
  if (definition.budget <= std::chrono::milliseconds::zero()) refuse("its budget must be positive");
  std::vector<std::string_view> names;
  for (const SagaStep& s : definition.steps) {
    if (s.name.empty() || s.name.size() > kMaxSagaStepNameBytes || idempotency_key_problem(s.name))
      refuse("step names are 1 to " + std::to_string(kMaxSagaStepNameBytes) + " printable bytes");
    if (s.name.find('/') != std::string::npos) refuse("step '" + s.name + "': '/' separates keys");
    if (std::find(names.begin(), names.end(), s.name) != names.end()) refuse("step '" + s.name + "' twice");
    names.push_back(s.name);
    if (static_cast<bool>(s.local) == static_cast<bool>(s.remote))
      refuse("step '" + s.name + "' needs exactly one body, local or remote");
    if (s.compensate_local && s.compensate_remote) refuse("step '" + s.name + "' has two compensations");
    if (s.options.budget && *s.options.budget <= std::chrono::milliseconds::zero())
      refuse("step '" + s.name + "': its budget must be positive");
  }
  std::string name = definition.name;
  definitions_.emplace(std::move(name), std::move(definition));
}

bool Sagas::defines(std::string_view name) const noexcept { return definitions_.find(name) != definitions_.end(); }

const SagaDefinition& Sagas::Find(const std::string& name, const std::string& request_id) const {
  auto it = definitions_.find(name);
  if (it == definitions_.end())
    throw Error(ErrorCode::not_found, "no saga named '" + name + "' is defined in this process", request_id);
  return it->second;
}

asio::awaitable<void> Sagas::install(const Context& ctx) {
  co_await effects_.install(ctx);
  co_await journal_.install(ctx);
}

SagaCall Sagas::CallFor(const Run& run, int index) const {
  SagaCall call;
  call.saga_id = run.id;
  call.step = run.def->steps[index].name;
  call.step_index = index;
  call.input = run.input;
  call.results.assign(run.results.begin(), run.results.begin() + index);
  call.result = run.results[index];
  call.idempotency_key = run.id + "/" + call.step;
  return call;
}

asio::awaitable<SagaOutcome> Sagas::run(const Context& ctx, std::string name, std::string input) {
  std::string random_id;  // named: no temporaries in a co_await expression (g++ 12)
  co_return co_await run(ctx, std::move(name), std::move(input), std::move(random_id));
}

asio::awaitable<SagaOutcome> Sagas::run(const Context& ctx, std::string name, std::string input,
                                        std::string saga_id) {
  const std::string& rid = ctx.request_id();
  const SagaDefinition& def = Find(name, rid);
  if (input.size() > options_.max_input_bytes)
    throw Error(ErrorCode::invalid_argument,
                "a saga's input is at most " + std::to_string(options_.max_input_bytes) + " bytes", rid);
  const bool caller_id = !saga_id.empty();
  if (caller_id) CheckSagaId(saga_id, rid);
  else saga_id = internal::NewToken();
  // An expired caller starts nothing, not even a journal row.
  ctx.check();
  const Context saga_ctx = ctx.with_timeout(def.budget);

  Run run;
  run.def = &def;
  run.id = saga_id;
  run.token = internal::NewToken();
  run.input = std::move(input);
  run.request_id = rid;
  run.base = ctx;
  run.results.assign(def.steps.size(), std::string());
  run.done.assign(def.steps.size(), false);
  run.in_doubt.assign(def.steps.size(), false);

  // The owner's lease: the saga's budget, then a compensation budget per step and the
  // journal's, with a margin for clocks. Nothing this process does for the saga outlives it.
  const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(saga_ctx.remaining());
  const std::int64_t now = NowMs();
  const std::int64_t lease = now + remaining.count() +
                             static_cast<std::int64_t>(def.steps.size()) * options_.compensation_timeout.count() +
                             2 * options_.journal_timeout.count() + options_.lease_margin.count();
  bool inserted = false;
  {
    sql::Pool::Lease conn = co_await effects_.pool().acquire(saga_ctx);
    std::vector<Value> p{saga_id, name, run.input, static_cast<std::int64_t>(def.steps.size()), rid, run.token,
                         lease, now};
    sql::Result r = co_await conn->execute(
        saga_ctx,
        "insert into " + journal_.saga_table() +
            " (id, name, state, input, step_count, next_step, request_id, owner_token, owner_until_ms, created_ms,"
            " updated_ms, version) values ($1, $2, 'running', $3, $4, 0, $5, $6, $7, $8, $8, 0)"
            " on conflict (id) do nothing returning id",
        p);
    inserted = r.size() == 1;
  }  // the connection goes back before find() takes one: a small pool must not wait on itself
  {
    if (!inserted) {
      std::optional<SagaRecord> first = co_await journal_.find(saga_ctx, saga_id);
      if (!first) throw Error(ErrorCode::idempotency_conflict, "saga " + saga_id + " is changing hands", rid);
      if (first->name != name || first->input != run.input)
        throw Error(ErrorCode::idempotency_conflict, "saga id " + saga_id + " was used for a different saga", rid);
      if (!is_final(first->state)) {
        throw Error(ErrorCode::idempotency_conflict,
                    "saga " + saga_id + " is " + std::string(to_string(first->state)) +
                        (first->interrupted(NowMs()) || first->owner_until_ms == 0
                             ? "; `cutoff saga resume " + saga_id + "` carries it on"
                             : " in another request"),
                    rid);
      }
      SagaOutcome out;
      out.saga_id = saga_id;
      out.state = first->state;
      out.result = first->result;
      out.failed_step = first->failed_step;
      if (!first->error_code.empty()) {
        out.error = Error(parse_error_code(first->error_code).value_or(ErrorCode::internal), first->error_message, rid);
      }
      out.replayed = true;
      co_return out;
    }
  }
  SagaOutcome out = co_await Drive(run, saga_ctx);
  // The caller's ledger learns what is left behind: a completed saga wrote something (and a
  // repeat with the caller's id replays it); an ambiguous or half-undone one may have.
  if (CommitLedger* ledger = ctx.commit_ledger()) {
    if (out.state == SagaState::completed) ledger->note_commit_point(caller_id);
    else if (out.state != SagaState::compensated) ledger->note_commit_point(false);
  }
  co_return out;
}

asio::awaitable<SagaOutcome> Sagas::Drive(Run& run, const Context& saga_ctx) {
  std::exception_ptr lost;
  try {
    if (run.state == SagaState::running) co_await Forward(run, saga_ctx);
    if (run.state == SagaState::compensating) co_await Compensate(run);
    co_await Finish(run, run.state);
  } catch (...) {
    lost = std::current_exception();
  }
  if (lost) {
    // The journal could not be written (or read): whatever happened stays in it, and the
    // owner's lease lets `resume` carry the saga on once it runs out.
    const bool any_step = run.next_step > 0 || std::find(run.done.begin(), run.done.end(), true) != run.done.end();
    Error e = AsError(lost, run.request_id);
    if (!any_step && !run.journal_lost) throw e;
    throw Error(ErrorCode::commit_ambiguous,
                "saga " + run.id + ": its journal could not be written (" + std::string(e.what()) +
                    "); steps may have happened; `cutoff saga resume " + run.id + "` settles it",
                run.request_id);
  }
  if (metrics_) metrics_->outcomes.with({run.def->name, std::string(to_string(run.state))}).inc();
  SagaOutcome out;
  out.saga_id = run.id;
  out.state = run.state;
  if (run.state == SagaState::completed) out.result = run.results.back();
  out.failed_step = run.failed_step;
  out.error = run.error;
  co_return out;
}

asio::awaitable<void> Sagas::Forward(Run& run, const Context& saga_ctx) {
  const int n = static_cast<int>(run.def->steps.size());
  for (int i = run.next_step; i < n; ++i) {
    const SagaStep& step = run.def->steps[i];
    co_await SagaFault(step.name, internal::SagaPoint::before_step, saga_ctx);
    if (saga_ctx.stop_requested()) {  // a stopped saga starts no further step
      // ... and undoes nothing around one an earlier attempt may have applied.
      run.state = run.in_doubt[i] ? SagaState::step_ambiguous : SagaState::compensating;
      run.failed_step = step.name;
      run.error = Error::stopped(saga_ctx.stop_reason(), run.request_id);
      co_return;
    }
    Context step_ctx = step.options.budget ? saga_ctx.with_timeout(*step.options.budget) : saga_ctx;
    std::optional<StepFailed> failed;
    try {
      if (step.local) co_await RunLocal(run, step_ctx, i);
      else co_await RunRemote(run, step_ctx, i);
    } catch (const StepFailed& f) {
      failed = f;
    }
    if (failed) {
      run.failed_step = step.name;
      run.error = failed->error;
      run.state = failed->ambiguous ? SagaState::step_ambiguous : SagaState::compensating;
      co_return;
    }
    co_await SagaFault(step.name, internal::SagaPoint::after_step, saga_ctx);
  }
  run.state = SagaState::completed;
}

asio::awaitable<void> Sagas::RunLocal(Run& run, const Context& step_ctx, int index) {
  const SagaStep& step = run.def->steps[index];
  SagaCall call = CallFor(run, index);
  // The step's effect, its journal row and the saga's progress commit together; the owner
  // token check keeps a process that lost the saga from committing a step of it.
  EffectBody body = [&](Effect& fx) -> asio::awaitable<std::string> {
    // Only from where this owner left the saga: a step is committed at most once.
    const Statement own = OwnerCheck(run, ", next_step = $4", " and next_step = $5",
                                     {static_cast<std::int64_t>(index + 1), static_cast<std::int64_t>(index)});
    sql::Result owned = co_await fx.execute(own.sql, own.params);
    if (owned.size() != 1) throw TakenOver(run.id, run.request_id);
    std::string result = co_await step.local(fx, call);
    if (result.size() > options_.max_result_bytes)
      throw Error(ErrorCode::invalid_argument,
                  "step '" + step.name + "' returned " + std::to_string(result.size()) + " bytes; a step's result is at most " +
                      std::to_string(options_.max_result_bytes),
                  run.request_id);
    std::vector<Value> row{run.id, static_cast<std::int64_t>(index), step.name, result, NowMs()};
    co_await fx.execute("insert into " + journal_.step_table() +
                            " (saga_id, step_index, name, state, result, attempts, updated_ms)"
                            " values ($1, $2, $3, 'done', $4, 1, $5) on conflict (saga_id, step_index) do update"
                            " set state = 'done', result = excluded.result, error_code = null,"
                            " error_message = null, attempts = " +
                            journal_.step_table() + ".attempts + 1, updated_ms = excluded.updated_ms",
                        row);
    co_return result;
  };
  EffectRequest request;
  request.operation = run.def->name + "." + step.name;
  std::exception_ptr failure;
  try {
    const Context region_ctx = step_ctx.with_commit_ledger(nullptr);  // named: it outlives the region
    EffectOutcome out = co_await effects_.run(region_ctx, request, body);
    run.results[index] = std::move(out.result);
    run.done[index] = true;
    run.next_step = index + 1;
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    if (find_exception<SagaTakenOver>(failure)) {
      run.journal_lost = true;  // another process owns the saga now: leave everything to it
      std::rethrow_exception(failure);
    }
    Error e = AsError(failure, run.request_id, &step_ctx);
    // The region rolled back unless it reports commit_ambiguous; its journal row went with it.
    throw StepFailed(std::move(e), e.code() == ErrorCode::commit_ambiguous);
  }
}

asio::awaitable<void> Sagas::RunRemote(Run& run, const Context& step_ctx, int index) {
  const SagaStep& step = run.def->steps[index];
  SagaCall call = CallFor(run, index);
  sql::Pool& pool = effects_.pool();
  const bool in_doubt = run.in_doubt[index];
  std::exception_ptr not_sent;
  bool owned = true;
  try {
    // Journalled before the call leaves, with the owner's claim: a crash from here on leaves
    // a `sent` row.
    const Statement own = OwnerCheck(run, "", " and next_step = $4", {static_cast<std::int64_t>(index)});
    std::vector<Statement> rest(1);
    rest[0].sql = "insert into " + journal_.step_table() +
                  " (saga_id, step_index, name, state, attempts, updated_ms)"
                  " values ($1, $2, $3, 'sent', 1, $4) on conflict (saga_id, step_index) do update"
                  " set state = 'sent', error_code = null, error_message = null, attempts = " +
                  journal_.step_table() + ".attempts + 1, updated_ms = excluded.updated_ms";
    rest[0].params = {run.id, static_cast<std::int64_t>(index), step.name, NowMs()};
    owned = co_await OwnedWrite(pool, step_ctx, own, rest);
  } catch (...) {
    not_sent = std::current_exception();
  }
  if (!owned) {
    run.journal_lost = true;
    throw TakenOver(run.id, run.request_id);
  }
  if (not_sent) {
    // Stopped (or the journal failed) before the call left: nothing of this attempt happened.
    // A step an earlier attempt may have applied stays ambiguous, its row as it was.
    Error e = AsError(not_sent, run.request_id, &step_ctx);
    if (step_ctx.stop_requested() && !is_stop(e.code())) e = Error::stopped(step_ctx.stop_reason(), run.request_id);
    throw StepFailed(std::move(e), in_doubt);
  }
  auto ledger = std::make_shared<CommitLedger>();
  std::string result;
  std::exception_ptr failure;
  try {
    const Context call_ctx = step_ctx.with_commit_ledger(ledger);  // named: it outlives the call
    result = co_await step.remote(call_ctx, call);
  } catch (...) {
    failure = std::current_exception();
  }
  const Context journal = JournalContext(run.base, options_.journal_timeout);
  co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
  std::optional<StepFailed> failed;
  if (failure) {
    Error e = AsError(failure, run.request_id, &step_ctx);
    // A keyed step's key conflicting upstream means an earlier call with it may still be
    // running there (or was applied under other terms): undoing the saga now could leave it
    // applied, so it is as unsettled as an unanswered call.
    const bool key_in_doubt = step.options.keyed && e.code() == ErrorCode::idempotency_conflict;
    // A stop of the saga during the call reads as the stop, whatever the client threw.
    if (!is_stop(e.code()) && step_ctx.stop_requested() && e.code() != ErrorCode::commit_ambiguous)
      e = Error::stopped(step_ctx.stop_reason(), run.request_id);
    Error reported = report_after_commit_point(e, *ledger, "saga step " + run.def->name + "." + step.name);
    // Only a refusal on the request's merits rules the step out once the call may have been
    // applied: an `internal` answer after it left (a 500 from a handler that committed, a reply
    // that does not parse) says nothing of the effect, nor does any failure of a repeat of a
    // step an earlier attempt may have applied.
    const bool unexplained = !is_caller_error(e.code()) && (ledger->may_have_written() || in_doubt);
    failed.emplace(reported, reported.code() == ErrorCode::commit_ambiguous || key_in_doubt || unexplained);
  } else if (result.size() > options_.max_result_bytes) {
    result.clear();  // it happened; what it answered is too big to keep
  }
  std::exception_ptr journal_failure;
  bool owned_after = true;
  try {
    Statement own = failed ? OwnerCheck(run, "", " and next_step = $4", {static_cast<std::int64_t>(index)})
                           : OwnerCheck(run, ", next_step = $4", " and next_step = $5",
                                        {static_cast<std::int64_t>(index + 1), static_cast<std::int64_t>(index)});
    std::vector<Statement> rest(1);
    if (failed) {
      rest[0].sql = "update " + journal_.step_table() +
                    " set state = $1, error_code = $2, error_message = $3, updated_ms = $4"
                    " where saga_id = $5 and step_index = $6";
      rest[0].params = {failed->ambiguous ? "ambiguous" : "failed", std::string(to_string(failed->error.code())),
                        JournalMessage(failed->error), NowMs(), run.id, static_cast<std::int64_t>(index)};
    } else {
      rest[0].sql = "update " + journal_.step_table() +
                    " set state = 'done', result = $1, updated_ms = $2 where saga_id = $3 and step_index = $4";
      rest[0].params = {result, NowMs(), run.id, static_cast<std::int64_t>(index)};
    }
    owned_after = co_await OwnedWrite(pool, journal, own, rest);
  } catch (...) {
    journal_failure = std::current_exception();
  }
  co_await asio::this_coro::reset_cancellation_state();
  if (journal_failure) {
    run.journal_lost = true;
    std::rethrow_exception(journal_failure);
  }
  if (!owned_after) {
    run.journal_lost = true;
    throw TakenOver(run.id, run.request_id);
  }
  if (failed) throw *failed;
  run.results[index] = std::move(result);
  run.done[index] = true;
  run.next_step = index + 1;
}

asio::awaitable<void> Sagas::Compensate(Run& run) {
  // Detached from the caller: Asio cancellation of the calling coroutine does not cut a
  // compensation short either.
  co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
  std::exception_ptr failure;
  try {
    const Context journal = JournalContext(run.base, options_.journal_timeout);
    int pending = 0;
    for (bool d : run.done) pending += d ? 1 : 0;
    const std::int64_t lease = NowMs() + pending * options_.compensation_timeout.count() +
                               2 * options_.journal_timeout.count() + options_.lease_margin.count();
    {
      sql::Pool::Lease conn = co_await effects_.pool().acquire(journal);
      std::vector<Value> p{run.failed_step, run.error ? std::string(to_string(run.error->code())) : std::string(),
                           run.error ? JournalMessage(*run.error) : std::string(), lease, NowMs(), run.id, run.token};
      sql::Result r = co_await conn->execute(journal,
                                             "update " + journal_.saga_table() +
                                                 " set state = 'compensating', failed_step = $1, error_code = $2,"
                                                 " error_message = $3, owner_until_ms = $4, updated_ms = $5,"
                                                 " version = version + 1"
                                                 " where id = $6 and owner_token = $7 returning id",
                                             p);
      if (r.size() != 1) throw TakenOver(run.id, run.request_id);
    }
    run.state = SagaState::compensated;
    for (int i = static_cast<int>(run.done.size()) - 1; i >= 0; --i) {
      if (!run.done[i]) continue;
      if (!co_await CompensateStep(run, i)) {
        // Undoing an earlier step may rely on this one being undone: stop here.
        run.state = SagaState::compensation_failed;
        break;
      }
      run.done[i] = false;
    }
  } catch (...) {
    failure = std::current_exception();
  }
  co_await asio::this_coro::reset_cancellation_state();
  if (failure) {
    run.journal_lost = true;
    std::rethrow_exception(failure);
  }
}

asio::awaitable<bool> Sagas::CompensateStep(Run& run, int index) {
  const SagaStep& step = run.def->steps[index];
  if (!step.compensate_local && !step.compensate_remote) co_return true;  // nothing to undo
  SagaCall call = CallFor(run, index);
  call.idempotency_key += "/compensate";
  // Its own budget, none of the caller's: the caller may be what ran out.
  const Context comp_ctx = run.base.detached(options_.compensation_timeout).with_commit_ledger(nullptr);
  const std::string& saga_name = run.def->name;
  auto count = [&](const char* outcome) {
    if (metrics_) metrics_->compensations.with({saga_name, step.name, outcome}).inc();
  };
  std::optional<Error> last;
  auto executor = co_await asio::this_coro::executor;
  thread_local std::mt19937 jitter{std::random_device{}()};
  for (int attempt = 0;; ++attempt) {
    std::exception_ptr failure;
    try {
      comp_ctx.check();
      std::optional<AdmissionLimit::Ticket> ticket = compensations_.try_enter();
      if (!ticket)
        throw Error(ErrorCode::overloaded, "too many compensations in flight", run.request_id);
      if (step.compensate_local) {
        EffectBody body = [&](Effect& fx) -> asio::awaitable<std::string> {
          const Statement own = OwnerCheck(run, "", "", {});
          sql::Result owned = co_await fx.execute(own.sql, own.params);
          if (owned.size() != 1) throw TakenOver(run.id, run.request_id);
          // Guarded: a step already undone (by an earlier attempt whose answer was lost) is
          // not undone twice.
          std::vector<Value> mark{NowMs(), run.id, static_cast<std::int64_t>(index)};
          sql::Result marked = co_await fx.execute(
              "update " + journal_.step_table() +
                  " set state = 'compensated', error_code = null, error_message = null, attempts = attempts + 1,"
                  " updated_ms = $1 where saga_id = $2 and step_index = $3"
                  " and state in ('done', 'compensation_failed') returning step_index",
              mark);
          if (marked.size() == 0) co_return std::string();
          co_return co_await step.compensate_local(fx, call);
        };
        EffectRequest request;
        request.operation = saga_name + "." + step.name + ".compensate";
        request.idempotency_key = call.idempotency_key;
        request.fingerprint = call.idempotency_key;
        co_await effects_.run(comp_ctx, request, body);
      } else {
        co_await step.compensate_remote(comp_ctx, call);
        const Statement own = OwnerCheck(run, "", "", {});
        std::vector<Statement> rest(1);
        rest[0].sql = "update " + journal_.step_table() +
                      " set state = 'compensated', error_code = null, error_message = null,"
                      " attempts = attempts + 1, updated_ms = $1 where saga_id = $2 and step_index = $3";
        rest[0].params = {NowMs(), run.id, static_cast<std::int64_t>(index)};
        if (!co_await OwnedWrite(effects_.pool(), comp_ctx, own, rest)) throw TakenOver(run.id, run.request_id);
      }
      count("done");
      co_return true;
    } catch (...) {
      failure = std::current_exception();
    }
    if (find_exception<SagaTakenOver>(failure)) {
      run.journal_lost = true;
      std::rethrow_exception(failure);
    }
    Error e = AsError(failure, run.request_id);
    last = e;
    // Refused on its merits: another attempt would be refused the same way.
    const bool hopeless = is_caller_error(e.code()) && e.code() != ErrorCode::idempotency_conflict;
    auto delay = std::chrono::milliseconds(std::min(1000, 20 << std::min(attempt, 6)));
    delay = delay / 2 + std::chrono::milliseconds(jitter() % (delay.count() / 2 + 1));
    if (hopeless || comp_ctx.stop_requested() || comp_ctx.remaining() <= delay) break;
    count("retried");
    asio::steady_timer timer(executor, delay);
    try {
      co_await with_context(comp_ctx, timer.async_wait(asio::use_awaitable));
    } catch (const Error&) {
      break;
    }
  }
  count("failed");
  run.failed_step = step.name;
  run.error = Error(last ? last->code() : ErrorCode::internal,
                    "compensating step '" + step.name + "' failed: " + (last ? last->message() : std::string()),
                    run.request_id);
  const Context journal = JournalContext(run.base, options_.journal_timeout);
  const Statement own = OwnerCheck(run, "", "", {});
  std::vector<Statement> rest(1);
  rest[0].sql = "update " + journal_.step_table() +
                " set state = 'compensation_failed', error_code = $1, error_message = $2,"
                " attempts = attempts + 1, updated_ms = $3 where saga_id = $4 and step_index = $5";
  rest[0].params = {std::string(to_string(run.error->code())), JournalMessage(*run.error), NowMs(), run.id,
                    static_cast<std::int64_t>(index)};
  if (!co_await OwnedWrite(effects_.pool(), journal, own, rest)) {
    run.journal_lost = true;
    throw TakenOver(run.id, run.request_id);
  }
  co_return false;
}

asio::awaitable<void> Sagas::Finish(Run& run, SagaState state) {
  co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
  std::exception_ptr failure;
  try {
    const Context journal = JournalContext(run.base, options_.journal_timeout);
    sql::Pool::Lease conn = co_await effects_.pool().acquire(journal);
    std::optional<std::string> result;
    if (state == SagaState::completed) result = run.results.back();
    std::vector<Value> p{std::string(to_string(state)),
                         run.failed_step.empty() ? Value() : Value(run.failed_step),
                         run.error ? Value(std::string(to_string(run.error->code()))) : Value(),
                         run.error ? Value(JournalMessage(*run.error)) : Value(),
                         result ? Value(*result) : Value(),
                         NowMs(),
                         run.id,
                         run.token};
    // The owner lets go: a final saga needs nobody, and an ambiguous or half-undone one is
    // resumable at once.
    sql::Result r = co_await conn->execute(journal,
                                           "update " + journal_.saga_table() +
                                               " set state = $1, failed_step = $2, error_code = $3,"
                                               " error_message = $4, result = $5, updated_ms = $6,"
                                               " owner_token = null, owner_until_ms = 0, version = version + 1"
                                               " where id = $7 and owner_token = $8 returning id",
                                           p);
    if (r.size() != 1)
      throw Error(ErrorCode::idempotency_conflict, "saga " + run.id + " was taken over by another process",
                  run.request_id);
  } catch (...) {
    failure = std::current_exception();
  }
  co_await asio::this_coro::reset_cancellation_state();
  if (failure) {
    run.journal_lost = true;
    std::rethrow_exception(failure);
  }
}

asio::awaitable<SagaOutcome> Sagas::resume(const Context& ctx, std::string saga_id) {
  co_return co_await resume(ctx, std::move(saga_id), false);
}

asio::awaitable<SagaOutcome> Sagas::resume(const Context& ctx, std::string saga_id, bool force) {
  const std::string& rid = ctx.request_id();
  CheckSagaId(saga_id, rid);
  ctx.check();
  std::optional<SagaRecord> rec = co_await journal_.find(ctx, saga_id);
  if (!rec) throw Error(ErrorCode::not_found, "no saga with id " + saga_id, rid);
  const SagaDefinition& def = Find(rec->name, rid);
  if (static_cast<std::size_t>(rec->step_count) != def.steps.size())
    throw Error(ErrorCode::invalid_argument,
                "saga " + saga_id + " was started with " + std::to_string(rec->step_count) +
                    " steps and its definition now has " + std::to_string(def.steps.size()),
                rid);
  // A journal row belongs to the step of its index only while the definition keeps it there.
  for (const SagaStepRecord& s : rec->steps) {
    if (s.index < 0 || s.index >= rec->step_count || def.steps[s.index].name != s.name)
      throw Error(ErrorCode::invalid_argument,
                  "saga " + saga_id + "'s step " + std::to_string(s.index) + " was '" + s.name +
                      "' and its definition's is not: resume it with the definition it was started with",
                  rid);
  }
  if (is_final(rec->state)) {
    SagaOutcome out;
    out.saga_id = saga_id;
    out.state = rec->state;
    out.result = rec->result;
    out.failed_step = rec->failed_step;
    if (!rec->error_code.empty())
      out.error = Error(parse_error_code(rec->error_code).value_or(ErrorCode::internal), rec->error_message, rid);
    out.replayed = true;
    co_return out;
  }
  const std::int64_t now = NowMs();
  if (!force && rec->owner_until_ms >= now)
    throw Error(ErrorCode::idempotency_conflict,
                "saga " + saga_id + " is still owned by the process running it (its lease ends in " +
                    std::to_string((rec->owner_until_ms - now + 999) / 1000) + " s)",
                rid);

  const Context saga_ctx = ctx.with_timeout(def.budget);
  Run run;
  run.def = &def;
  run.id = saga_id;
  run.token = internal::NewToken();
  run.input = rec->input;
  run.request_id = rid;
  run.base = ctx;
  run.results.assign(def.steps.size(), std::string());
  run.done.assign(def.steps.size(), false);
  run.in_doubt.assign(def.steps.size(), false);
  run.next_step = rec->next_step;
  for (const SagaStepRecord& s : rec->steps) {
    if (s.index < 0 || s.index >= static_cast<int>(def.steps.size())) continue;
    if (s.state == SagaStepState::done || s.state == SagaStepState::compensation_failed) {
      run.results[s.index] = s.result;
      run.done[s.index] = true;
    }
  }
  const bool compensating = rec->state == SagaState::compensating || rec->state == SagaState::compensation_failed;
  run.state = compensating ? SagaState::compensating : SagaState::running;
  if (compensating) {
    run.failed_step = rec->failed_step;
    if (!rec->error_code.empty())
      run.error = Error(parse_error_code(rec->error_code).value_or(ErrorCode::internal), rec->error_message, rid);
  }
  // Take it over: the old owner's token stops matching, so it cannot commit a step any more.
  {
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(saga_ctx.remaining());
    const std::int64_t lease = NowMs() + remaining.count() +
                               static_cast<std::int64_t>(def.steps.size()) * options_.compensation_timeout.count() +
                               2 * options_.journal_timeout.count() + options_.lease_margin.count();
    sql::Pool::Lease conn = co_await effects_.pool().acquire(saga_ctx);
    // Compared on the version every write bumps: nothing changed since the journal was read.
    std::vector<Value> p{run.token, lease, std::string(to_string(run.state)), NowMs(), saga_id, rec->version};
    sql::Result r = co_await conn->execute(saga_ctx,
                                           "update " + journal_.saga_table() +
                                               " set owner_token = $1, owner_until_ms = $2, state = $3,"
                                               " updated_ms = $4, version = version + 1"
                                               " where id = $5 and version = $6 returning id",
                                           p);
    if (r.size() != 1)
      throw Error(ErrorCode::idempotency_conflict, "saga " + saga_id + " changed while it was being taken over", rid);
  }
  // A remote step whose call may have left: repeat it only when it is keyed.
  if (!compensating && run.next_step < static_cast<int>(def.steps.size())) {
    const SagaStep& next = def.steps[run.next_step];
    for (const SagaStepRecord& s : rec->steps) {
      if (s.index != run.next_step || !next.remote) continue;
      const bool unsettled = s.state == SagaStepState::sent || s.state == SagaStepState::ambiguous;
      run.in_doubt[s.index] = unsettled;
      if (!unsettled) continue;
      const std::string settle_by_hand =
          "; find out, then `cutoff saga resolve " + saga_id + " --step " + next.name + " --happened yes|no`";
      // The saga's start bounds when the key was first sent, so a younger saga's key is still
      // remembered wherever it landed.
      const std::int64_t age_ms = now - rec->created_ms;
      if (!next.options.keyed) {
        run.state = SagaState::step_ambiguous;
        run.failed_step = next.name;
        run.error = Error(ErrorCode::commit_ambiguous,
                          "step '" + next.name + "' is a remote call without an idempotency key" +
                              " that may have been applied" + settle_by_hand,
                          rid);
      } else if (age_ms > next.options.key_lifetime.count()) {
        run.state = SagaState::step_ambiguous;
        run.failed_step = next.name;
        run.error = Error(ErrorCode::commit_ambiguous,
                          "step '" + next.name + "' may have been applied, and the saga began " + DescribeAge(age_ms) +
                              " ago, past the " + DescribeAge(next.options.key_lifetime.count()) +
                              " its service keeps idempotency keys: a repeat could apply it twice" + settle_by_hand,
                          rid);
      }
    }
  }
  co_return co_await Drive(run, saga_ctx);
}

asio::awaitable<SagaOutcome> Sagas::resolve(const Context& ctx, std::string saga_id, std::string step,
                                            bool happened, std::string result) {
  const std::string& rid = ctx.request_id();
  CheckSagaId(saga_id, rid);
  std::optional<SagaRecord> rec = co_await journal_.find(ctx, saga_id);
  if (!rec) throw Error(ErrorCode::not_found, "no saga with id " + saga_id, rid);
  const SagaDefinition& def = Find(rec->name, rid);
  if (rec->next_step >= static_cast<int>(def.steps.size()) || def.steps[rec->next_step].name != step)
    throw Error(ErrorCode::invalid_argument, "step '" + step + "' is not the step saga " + saga_id + " waits on", rid);
  const SagaStepRecord* row = nullptr;
  for (const SagaStepRecord& s : rec->steps)
    if (s.index == rec->next_step) row = &s;
  if (!row || (row->state != SagaStepState::sent && row->state != SagaStepState::ambiguous))
    throw Error(ErrorCode::invalid_argument, "step '" + step + "' of saga " + saga_id + " is not ambiguous", rid);
  if (result.size() > options_.max_result_bytes)
    throw Error(ErrorCode::invalid_argument,
                "a step's result is at most " + std::to_string(options_.max_result_bytes) + " bytes", rid);
  if ((rec->state == SagaState::running || rec->state == SagaState::compensating) && rec->owner_until_ms >= NowMs())
    throw Error(ErrorCode::idempotency_conflict, "saga " + saga_id + " is still owned by the process running it", rid);
  {
    // Both writes only if nothing changed since the journal was read (another resolve, a
    // resume that took the saga over): the saga row's version and the step row's state.
    sql::Pool::Lease conn = co_await effects_.pool().acquire(ctx);
    sql::Transaction tx = co_await sql::Transaction::begin(*conn, ctx, sql::AccessMode::read_write);
    std::vector<Value> q{static_cast<std::int64_t>(happened ? rec->next_step + 1 : rec->next_step), NowMs(), saga_id,
                         rec->version};
    sql::Result saga = co_await tx.execute(ctx,
                                           "update " + journal_.saga_table() +
                                               " set next_step = $1, updated_ms = $2, version = version + 1"
                                               " where id = $3 and version = $4 returning id",
                                           q);
    std::vector<Value> p{happened ? "done" : "failed", happened ? Value(result) : Value(), NowMs(), saga_id,
                         static_cast<std::int64_t>(rec->next_step)};
    sql::Result row_now = co_await tx.execute(ctx,
                                              "update " + journal_.step_table() +
                                                  " set state = $1, result = $2, error_code = null,"
                                                  " error_message = null, updated_ms = $3 where saga_id = $4"
                                                  " and step_index = $5 and state in ('sent', 'ambiguous')"
                                                  " returning step_index",
                                              p);
    if (saga.size() != 1 || row_now.size() != 1) {
      co_await tx.rollback();
      throw Error(ErrorCode::idempotency_conflict, "saga " + saga_id + " changed while it was being resolved", rid);
    }
    co_await tx.commit(ctx);
  }
  co_return co_await resume(ctx, std::move(saga_id), false);
}

}  // namespace cutoff::effects
