// Sagas: a sequence of steps under one deadline that never compensates a step it is unsure of.
//
//   cutoff::effects::Sagas sagas(effects);  // journal tables beside the effects store's
//   co_await sagas.install(ctx);
//   sagas.define({.name = "orders.fulfil", .budget = 5s, .steps = {
//       cutoff::effects::SagaStep::local("reserve",
//           [](cutoff::effects::Effect& fx, const cutoff::effects::SagaCall& call) -> asio::awaitable<std::string> {
//             std::vector<cutoff::sql::Value> sku{call.input};  // named: no braced list in a co_await
//             co_await fx.execute("update bin set reserved = reserved + 1 where sku = $1", sku);
//             co_return "{}";
//           },
//           [](cutoff::effects::Effect& fx, const cutoff::effects::SagaCall& call) -> asio::awaitable<std::string> {
//             std::vector<cutoff::sql::Value> sku{call.input};
//             co_await fx.execute("update bin set reserved = reserved - 1 where sku = $1", sku);
//             co_return "{}";
//           }),
//       cutoff::effects::SagaStep::remote("ship",
//           [&](const cutoff::Context& ctx, const cutoff::effects::SagaCall& call) -> asio::awaitable<std::string> {
//             co_return co_await shipping.create(ctx, call.input, call.idempotency_key);
//           }, {}, {.keyed = true})}});
//   cutoff::effects::SagaOutcome out = co_await sagas.run(ctx, "orders.fulfil", "A-1", "order-42");
//
// What a saga guarantees:
// - Steps run in order under the saga's context: the caller's, tightened to the definition's
//   budget and, per step, to the step's budget. A stopped saga starts no further step.
// - A local step runs in an effect region of `effects`; its journal row is written in the same
//   transaction, so a step the journal calls done happened and one it does not mention did
//   not. A remote step is journalled `sent` before its call and `done` after the answer; its
//   call gets `idempotency_key` (saga id / step) to send upstream.
// - A step that fails safely (nothing of it remains) starts compensation: the compensations of
//   the completed steps run in reverse order, each in an effect region on a context detached
//   from the caller with `compensation_timeout` of its own, admission-limited, keyed by saga
//   id / step / "compensate" so a repeat cannot undo twice, retried with backoff within that
//   budget. Asio cancellation of the caller does not interrupt them. The saga reports the
//   step's error (`failed_step` names it).
// - A step whose outcome is ambiguous (a stop at or after its commit point, or a remote call
//   sent and not answered, or a keyed one whose key is still in use upstream:
//   idempotency_conflict) ends the saga as `step_ambiguous` naming the step, and nothing is
//   compensated: undoing what may not have happened and keeping what did are both wrong.
//   `resume` settles a local step from the journal (its row commits with its effect) and
//   repeats a keyed remote step; an unkeyed remote step needs `resolve`.
// - A saga whose process died is `running` (or `compensating`) past its owner's lease;
//   `resume` takes it over, continues forward from the first step not done (or finishes the
//   compensation), and the old owner can no longer commit a step (its token is checked in the
//   step's transaction).
// - The same saga id run twice returns the first saga's outcome when it is final, and
//   `idempotency_conflict` while it is still owned.
//
// Thread-safe: define() everything before the first run(); then one Sagas serves many
// concurrent sagas. It must outlive them, and `effects` must outlive it.
#ifndef CUTOFF_EFFECTS_SAGA_HPP_
#define CUTOFF_EFFECTS_SAGA_HPP_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/effects/admission.hpp"
#include "cutoff/effects/effects.hpp"
#include "cutoff/effects/saga_journal.hpp"

namespace cutoff::effects {

namespace internal {
// One statement of a journal write (saga.cpp).
struct SagaStatement {
  std::string sql;
  std::vector<sql::Value> params;
};
}  // namespace internal

// What a step (or a compensation) is given.
struct SagaCall {
  std::string saga_id;
  std::string step;
  int step_index = 0;
  std::string input;                 // the saga's input
  std::vector<std::string> results;  // the results of the steps before this one, in order
  std::string result;                // compensations: what this step returned
  std::string idempotency_key;       // "<saga id>/<step>" (a compensation: ".../compensate")
};

using SagaLocalBody = std::function<boost::asio::awaitable<std::string>(Effect&, const SagaCall&)>;
using SagaRemoteBody = std::function<boost::asio::awaitable<std::string>(const Context&, const SagaCall&)>;

struct SagaStepOptions {
  // A cap on the step's share of the saga's budget (tighten-only).
  std::optional<std::chrono::milliseconds> budget;
  // Remote steps: the call sends `idempotency_key` upstream, so repeating it after an
  // ambiguous outcome (resume) cannot apply it twice.
  bool keyed = false;
  // Keyed remote steps: how long the service called remembers a key (its idempotency
  // retention). `resume` repeats the step with its key only while the saga is younger than
  // this: past it the service may have forgotten the key and would apply a repeat as new, so
  // the step is left ambiguous for `resolve`, as an unkeyed one is.
  std::chrono::milliseconds key_lifetime{std::chrono::hours(24)};
};

struct SagaStep {
  std::string name;
  SagaLocalBody local;    // exactly one of local and remote
  SagaRemoteBody remote;
  SagaLocalBody compensate_local;  // at most one; neither: nothing to undo
  SagaRemoteBody compensate_remote;
  SagaStepOptions options;

  static SagaStep local_step(std::string name, SagaLocalBody body, SagaLocalBody compensation = nullptr,
                             SagaStepOptions options = {});
  static SagaStep remote_step(std::string name, SagaRemoteBody body, SagaRemoteBody compensation = nullptr,
                              SagaStepOptions options = {});
  // A remote step undone by a local compensation, and the other way round.
  static SagaStep remote_step_with_local_compensation(std::string name, SagaRemoteBody body,
                                                      SagaLocalBody compensation, SagaStepOptions options = {});
  static SagaStep local_step_with_remote_compensation(std::string name, SagaLocalBody body,
                                                      SagaRemoteBody compensation, SagaStepOptions options = {});
};

struct SagaDefinition {
  std::string name;                            // e.g. "orders.fulfil"
  std::chrono::milliseconds budget{10000};     // the whole saga's, tighten-only against the caller's
  std::vector<SagaStep> steps;
};

struct SagaOptions {
  // Each compensation's own budget, retries included (detached from the caller).
  std::chrono::milliseconds compensation_timeout{5000};
  // Journal writes made after a stop, when the saga's own budget may be spent.
  std::chrono::milliseconds journal_timeout{2000};
  std::size_t max_compensations_in_flight = 16;
  // Added to an owner's lease before another process may take the saga over.
  std::chrono::milliseconds lease_margin{2000};
  std::size_t max_input_bytes = 64 * 1024;
  // A step's result is kept in the journal and handed to later steps: a local step that
  // returns more fails (before its commit); a remote step's larger answer is not kept.
  std::size_t max_result_bytes = 64 * 1024;
  // compensations and outcomes per saga (cutoff_saga_*), when set.
  observe::Registry* registry = nullptr;
};

// The longest saga id, in bytes; ids follow the idempotency key rules otherwise.
inline constexpr std::size_t kMaxSagaIdBytes = 128;
inline constexpr std::size_t kMaxSagaStepNameBytes = 64;

struct SagaOutcome {
  std::string saga_id;
  SagaState state = SagaState::running;
  std::string result;             // completed: the last step's result
  std::string failed_step;        // compensated, step_ambiguous, compensation_failed
  std::optional<Error> error;     // why it did not complete
  bool replayed = false;          // the outcome of an earlier run with the same id

  bool completed() const noexcept { return state == SagaState::completed; }
  // The error a caller reports: the failed step's error when everything was compensated (a
  // safe failure); commit_ambiguous for step_ambiguous and compensation_failed, naming the
  // step and the saga. Throws nothing when the saga completed.
  void check() const;
  Error to_error() const;
};

class Sagas {
 public:
  explicit Sagas(Effects& effects, SagaOptions options = {});
  ~Sagas();
  Sagas(const Sagas&) = delete;
  Sagas& operator=(const Sagas&) = delete;

  // Adds a definition; throws invalid_argument for a duplicate or malformed one.
  void define(SagaDefinition definition);
  bool defines(std::string_view name) const noexcept;

  // Creates the journal tables (and the effects store's) if they do not exist.
  boost::asio::awaitable<void> install(const Context& ctx);

  // Runs the saga `name` with `input` under `ctx`. `saga_id`: the caller's id for it (a
  // repeat returns the first run's final outcome); empty: a random one.
  boost::asio::awaitable<SagaOutcome> run(const Context& ctx, std::string name, std::string input,
                                          std::string saga_id);
  // The same with a random id. (Overloads rather than a defaulted argument: g++ 12 miscompiles
  // a defaulted class-type argument in a full-expression that holds a co_await.)
  boost::asio::awaitable<SagaOutcome> run(const Context& ctx, std::string name, std::string input);
  // Takes over an interrupted, ambiguous or uncompensated saga and carries it to a final
  // state under `ctx`. not_found for an unknown id or definition; idempotency_conflict while
  // its owner's lease runs (unless `force`).
  boost::asio::awaitable<SagaOutcome> resume(const Context& ctx, std::string saga_id, bool force);
  boost::asio::awaitable<SagaOutcome> resume(const Context& ctx, std::string saga_id);
  // Settles an unkeyed remote step left ambiguous, from what an operator found out: it
  // happened (`happened` true: the saga continues as if it had answered `result`) or not.
  // Then resumes.
  boost::asio::awaitable<SagaOutcome> resolve(const Context& ctx, std::string saga_id, std::string step,
                                              bool happened, std::string result);

  SagaJournal& journal() noexcept { return journal_; }
  const SagaOptions& options() const noexcept { return options_; }

 private:
  struct Run;
  struct Metrics;

  boost::asio::awaitable<SagaOutcome> Drive(Run& run, const Context& ctx);
  boost::asio::awaitable<void> Forward(Run& run, const Context& saga_ctx);
  boost::asio::awaitable<void> RunLocal(Run& run, const Context& step_ctx, int index);
  boost::asio::awaitable<void> RunRemote(Run& run, const Context& step_ctx, int index);
  boost::asio::awaitable<void> Compensate(Run& run);
  boost::asio::awaitable<bool> CompensateStep(Run& run, int index);
  boost::asio::awaitable<void> Finish(Run& run, SagaState state);
  internal::SagaStatement OwnerCheck(const Run& run, const std::string& sets, const std::string& where,
                                     std::vector<sql::Value> extra) const;
  SagaCall CallFor(const Run& run, int index) const;
  const SagaDefinition& Find(const std::string& name, const std::string& request_id) const;

  Effects& effects_;
  SagaOptions options_;
  SagaJournal journal_;
  AdmissionLimit compensations_;
  std::map<std::string, SagaDefinition, std::less<>> definitions_;
  std::unique_ptr<Metrics> metrics_;
};

}  // namespace cutoff::effects

#endif  // CUTOFF_EFFECTS_SAGA_HPP_
