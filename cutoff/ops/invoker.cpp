#include "cutoff/ops/invoker.hpp"

#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/commit_ledger.hpp"
#include "cutoff/core/error.hpp"

namespace cutoff::ops {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// Before hooks, handler, after hooks; a stop between two steps keeps the next from starting.
asio::awaitable<json::value> RunPlan(const ResolvedOperation& op, const Call& call) {
  for (const BeforeHook& hook : op.before) {
    call.ctx.check();
    co_await hook(call);
  }
  call.ctx.check();
  json::value result = co_await op.handler(call);
  for (const AfterHook& hook : op.after) {
    call.ctx.check();
    co_await hook(call, result);
  }
  co_return result;
}

}  // namespace

asio::awaitable<json::value> Call::invoke(std::string_view name, json::value a, InvokeOptions options) const {
  return invoker->invoke(ctx, name, std::move(a), options);
}

Invoker::Invoker(const Registry& registry, InvokerOptions options) : registry_(&registry), options_(options) {
  if (!registry.frozen())
    throw ConfigError(ConfigError::Kind::not_frozen, "freeze() the operation registry before invoking it");
  if (options_.admission)
    for (const ResolvedOperation* op : registry.operations())
      admission_keys_.emplace(op, options_.admission->key(op->info.name));
}

asio::awaitable<json::value> Invoker::invoke(Context ctx, std::string_view name_view, json::value args,
                                             InvokeOptions options) const {
  const std::string name(name_view);  // the caller's view may not outlive the first suspension
  const ResolvedOperation* op = registry_->find(name);
  if (!op) throw Error(ErrorCode::not_found, "no operation named " + name, ctx.request_id());
  if (options.idempotency_key && !op->info.takes_idempotency_key)
    throw Error(ErrorCode::invalid_argument,
                "operation " + name + " does not take an idempotency key: retrying it with one would not be safe",
                ctx.request_id());

  // One ledger per top-level invocation; nested ones share their caller's.
  if (!ctx.commit_ledger()) ctx = ctx.with_commit_ledger(std::make_shared<CommitLedger>());
  if (options.budget) {
    if (*options.budget <= Duration::zero()) throw Error::stopped(StopReason::deadline_exceeded, ctx.request_id());
    ctx = ctx.with_timeout(*options.budget);
  }
  if (op->info.deadline) ctx = ctx.with_timeout(*op->info.deadline);
  ctx = ctx.with_operation(name);

  // Entry fail-fast: nothing runs on a spent budget. The clock is read once here, in case the
  // deadline passed before its timer flipped the flag.
  if (ctx.stop_requested()) throw Error::stopped(ctx.stop_reason(), ctx.request_id());
  if (!ctx.deadline().is_never() && ctx.remaining() <= Duration::zero())
    throw Error::stopped(StopReason::deadline_exceeded, ctx.request_id());

  // Doomed work is refused before it starts: the budget is below the recent service time.
  resilience::ServiceTimeAdmission::Ticket timing;
  if (options_.admission) {
    const auto key = admission_keys_.find(op);
    if (key != admission_keys_.end()) timing = options_.admission->admit(ctx, key->second);
  }

  const CommitLedger& ledger = *ctx.commit_ledger();
  const Call call{.operation = op->info.name,
                  .ctx = ctx,
                  .args = std::move(args),
                  .invoker = this,
                  .idempotency_key = std::move(options.idempotency_key)};
  std::exception_ptr failure;
  try {
    json::value result = co_await with_context(ctx, RunPlan(*op, call));
    timing.completed();
    co_return std::move(result);
  } catch (...) {
    failure = std::current_exception();
  }
  // A stopped run ran at least this long (a censored sample); a failure says nothing of the work.
  if (ctx.stop_requested()) timing.stopped();
  // A cutoff error, or the caller's own coroutine cancelled because this context stopped (a
  // server that gave the handler no grace), is read against the ledger; anything else is not
  // ours to classify and passes through.
  if (!find_error(failure) && !(ctx.stop_requested() && is_cancellation(failure))) std::rethrow_exception(failure);
  throw report_after_commit_point(to_error(failure, ctx.stop_reason(), ctx.request_id()), ledger, "operation " + name);
}

}  // namespace cutoff::ops
