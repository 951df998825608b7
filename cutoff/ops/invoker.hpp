// Invoker: runs the operations of a frozen Registry under a request's Context.
//
//   cutoff::ops::Invoker invoker(registry);          // registry.freeze() first
//   InvokeOptions options{.budget = 800ms};          // named: g++ 12 miscompiles a braced one
//   boost::json::value out = co_await invoker.invoke(ctx, "orders.create", args, options);
//
// What an invocation guarantees:
// - The budget is bound once, at entry: min(ctx's deadline, the caller's `budget`, the
//   operation's effective deadline). Nothing extends it.
// - Entry fail-fast: when that budget is already spent (or ctx already stopped), the
//   invocation fails at once with the stop's error; no hook and no handler runs.
// - The whole plan is bounded: before hooks, the handler, after hooks and every operation
//   dispatched through Call::invoke run under the one context; when it stops, whatever they
//   await is cancelled (Asio terminal) and no further step starts.
// - Nested invocations (Call::invoke, or invoke() with a context that already carries a
//   CommitLedger) inherit the caller's context and can only tighten it.
// - Late stops are honest: each top-level invocation attaches a CommitLedger to its context
//   (nested ones share it). An invocation that ends with a stop (deadline_exceeded,
//   cancelled or shutdown) while the ledger says something may have been written fails with
//   `commit_ambiguous` (non-retryable) instead, whatever the stop's reason; the message
//   names the reason. So does one that fails with attempt_timeout, unavailable or overloaded
//   then (a later step was refused or timed out; the earlier commit may stand). See
//   docs/operations.md.
// - Doomed work is refused (with InvokerOptions::admission): an invocation whose budget is
//   below the operation's recent service time fails with deadline_exceeded before any hook
//   or handler runs, instead of taking a connection only to be cut at its deadline. Nested
//   invocations are judged by their own operation's service time.
// - Idempotency keys: InvokeOptions::idempotency_key reaches the handler as
//   Call::idempotency_key when the operation declares takes_idempotency_key(); otherwise the
//   invocation is refused with invalid_argument before anything runs. A commit_ambiguous
//   outcome of a keyed invocation says that retrying with the same key is safe.
//
// Errors are cutoff::Error: not_found for an unknown operation, the stop's code, or
// commit_ambiguous; errors thrown by handlers and hooks pass through unchanged.
#ifndef CUTOFF_OPS_INVOKER_HPP_
#define CUTOFF_OPS_INVOKER_HPP_

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <string_view>
#include <unordered_map>

#include "cutoff/core/context.hpp"
#include "cutoff/ops/registry.hpp"
#include "cutoff/resilience/service_time_admission.hpp"

namespace cutoff::ops {

struct InvokerOptions {
  // Refuses an invocation whose budget (after every tightening) is below the operation's
  // recent service time with deadline_exceeded, before any hook or handler runs, and times
  // the invocations that run, keyed by operation name (resilience/service_time_admission.hpp).
  // Null (the default): off. Must outlive the invoker.
  resilience::ServiceTimeAdmission* admission = nullptr;
};

class Invoker {
 public:
  // ConfigError(not_frozen) when `registry` is not frozen. `registry` must outlive this.
  explicit Invoker(const Registry& registry, InvokerOptions options = {});

  boost::asio::awaitable<boost::json::value> invoke(Context ctx, std::string_view name, boost::json::value args,
                                                    InvokeOptions options = {}) const;

  const Registry& registry() const noexcept { return *registry_; }

 private:
  const Registry* registry_;
  InvokerOptions options_;
  // Each operation's key in options_.admission, looked up once.
  std::unordered_map<const ResolvedOperation*, resilience::ServiceTimeAdmission::Key*> admission_keys_;
};

}  // namespace cutoff::ops

#endif  // CUTOFF_OPS_INVOKER_HPP_
