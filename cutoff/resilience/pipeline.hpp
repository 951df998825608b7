// Pipeline: the resilience pieces composed in the one order that keeps each honest.
//
//   cutoff::resilience::Bulkhead bh({.max_concurrent = 8, .max_queue = 16});
//   cutoff::resilience::CircuitBreaker br({.consecutive_failures = 5, .open_for = 5s});
//   cutoff::resilience::RetryBudget budget({.ratio = 0.1});
//   cutoff::resilience::Pipeline p({.bulkhead = &bh,
//                                   .breaker = &br,
//                                   .retry = cutoff::resilience::RetryOptions{.max_attempts = 3,
//                                                                             .budget = &budget},
//                                   .attempt_timeout = 200ms});
//   Reply r = co_await p.run(ctx, [&](const cutoff::Context& attempt) -> asio::awaitable<Reply> {
//     co_return co_await backend.get(attempt, key);
//   });
//
// Outermost first:
//   deadline gate → bulkhead → circuit breaker → throttle → retry → [hedge] → attempt timeout → call
//
// - The gate comes first so that a stopped request takes nothing: no slot, no breaker
//   probe, no retry-budget deposit. It also bounds everything inside by the context.
// - The bulkhead is outside the retries so that one caller holds one slot for its whole
//   sequence instead of queueing again per attempt, and a caller that times out in the queue
//   never reaches the retry budget.
// - The breaker is outside the retries so that an open breaker answers at once instead of
//   each retry bouncing off it (no retry spin), and it judges a call by its final outcome.
// - The throttle (throttle.hpp) is after the breaker, so that an open breaker answers first and
//   a call the throttle refuses counts neither way in the breaker (the dependency never saw
//   it); and outside the retries for the breaker's reasons: a refused call is not retried.
// - The attempt timeout is innermost so that each attempt (and each hedge) gets its own
//   min(remaining, attempt_timeout) and its timeout is retryable `attempt_timeout`, while the
//   caller's deadline stays `deadline_exceeded`.
// Every piece is optional; a Pipeline with nothing set is just the gate.
//
// The callable receives the attempt's context; use it (not the caller's) for the work.
// A call may narrow what the shared pieces do for it (PipelineCall): which failures may be tried
// again (a write without an idempotency key, once it has left), and whether it may be hedged
// (only calls that are safe to run twice at once).
// Thread-safe to share; the bulkhead and breaker are borrowed and must outlive the pipeline.
#ifndef CUTOFF_RESILIENCE_PIPELINE_HPP_
#define CUTOFF_RESILIENCE_PIPELINE_HPP_

#include <boost/asio/awaitable.hpp>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/resilience/attempt_timeout.hpp"
#include "cutoff/resilience/bulkhead.hpp"
#include "cutoff/resilience/circuit_breaker.hpp"
#include "cutoff/resilience/hedge.hpp"
#include "cutoff/resilience/internal/awaitable_value.hpp"
#include "cutoff/resilience/metrics.hpp"
#include "cutoff/resilience/retry.hpp"
#include "cutoff/resilience/throttle.hpp"

namespace cutoff::resilience {

struct PipelineOptions {
  Bulkhead* bulkhead = nullptr;                 // null: no concurrency limit
  CircuitBreaker* breaker = nullptr;            // null: no breaker
  Throttle* throttle = nullptr;                 // null: no client-side throttling
  std::optional<RetryOptions> retry;            // none: one attempt
  std::optional<HedgeOptions> hedge;            // none: no hedging
  Duration attempt_timeout = Duration::zero();  // zero: attempts are bounded by the deadline only
  // Label for the pipeline's metrics; also given to its retry and hedge when theirs are left
  // at "default" with no metrics.
  std::string name = "default";
  ResilienceMetrics* metrics = nullptr;
};

// What one call sets for itself; the default is what the pipeline is configured to do.
struct PipelineCall {
  // Replaces the retry's `retryable` for this call (stops and commit_ambiguous are never retried).
  std::function<bool(const Error&)> retryable;
  // False: this call is never hedged, even when the pipeline hedges.
  bool may_hedge = true;
  // True: each attempt's work ends by itself when its context stops (cutoff's gRPC client
  // cancels its call on the stop). The pipeline then awaits it directly instead of racing it
  // against the stop, which costs two coroutines and a parallel group per call. Leave it false
  // for a callable that may ignore its context: the race is what cuts it at the deadline.
  bool honours_context = false;
  // The operation, for the throttle's accounts (a request path, a gRPC method): a dependency
  // overloaded on one operation is throttled on that one only. Empty: one account. It must
  // outlive the call.
  std::string_view key;
  // True when the value the call returned is itself a refusal (an HTTP 504 with Deadline-Expired,
  // a 429): the throttle counts it as refused. Empty: a value is an accepted call.
  std::function<bool()> refused_answer;
};

class Pipeline {
 public:
  explicit Pipeline(PipelineOptions options = {});
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  ~Pipeline();

  // `f(const Context& attempt)` returns boost::asio::awaitable<T>.
  template <typename F>
  boost::asio::awaitable<internal::CallResult<F>> run(const Context& ctx, F f, PipelineCall call = {}) {
    using T = internal::CallResult<F>;
    return internal::Unvalued<T>(Run(this, ctx, internal::Valued(std::move(f)), std::move(call)));
  }

  // The pieces the pipeline owns, for their statistics; null when not configured.
  const Retry* retry() const noexcept { return retry_.get(); }
  const Hedge* hedge() const noexcept { return hedge_.get(); }

 private:
  // A copyable handle on a callable owned by an enclosing coroutine frame.
  template <typename F>
  struct Ref {
    F* f;
    auto operator()(const Context& c) const { return (*f)(c); }
  };

  template <typename F>
  static boost::asio::awaitable<internal::CallResult<F>> Run(Pipeline* self, Context ctx, F f, PipelineCall call) {
    ctx.check();  // the gate: a stopped request takes no slot, probe or budget
    if (call.honours_context) co_return co_await Guarded(self, ctx, Ref<F>{&f}, &call);
    co_return co_await with_context(ctx, Guarded(self, ctx, Ref<F>{&f}, &call));
  }

  template <typename F>
  static boost::asio::awaitable<internal::CallResult<F>> Guarded(Pipeline* self, Context ctx, Ref<F> f,
                                                                 const PipelineCall* call) {
    Bulkhead::Permit slot;
    if (self->options_.bulkhead) slot = co_await self->options_.bulkhead->acquire(ctx);
    std::optional<CircuitBreaker::Ticket> ticket;
    if (self->options_.breaker) ticket.emplace(self->options_.breaker->admit(ctx));
    // A refusal here drops the breaker's ticket unrecorded: ignored, the dependency never saw it.
    std::optional<Throttle::Ticket> pass;
    if (self->options_.throttle) pass.emplace(self->options_.throttle->admit(ctx, call->key));
    std::exception_ptr error;
    try {
      auto value = co_await Retried(self, ctx, f, call);
      if (ticket) ticket->success();
      if (pass) {
        if (call->refused_answer && call->refused_answer()) pass->refused();
        else pass->accepted();
      }
      co_return std::move(value);
    } catch (...) {
      error = std::current_exception();
    }
    if (ticket) ticket->record(error);
    if (pass) pass->record(error, ctx.stop_requested());
    std::rethrow_exception(error);
  }

  template <typename F>
  static boost::asio::awaitable<internal::CallResult<F>> Retried(Pipeline* self, const Context& ctx, Ref<F> f,
                                                                 const PipelineCall* call) {
    auto attempt = [self, f, call](const Context& c) { return Attempt(self, c, f, call); };
    if (self->retry_) return self->retry_->run(ctx, attempt, RetryCall{call->retryable});
    return attempt(ctx);
  }

  template <typename F>
  static boost::asio::awaitable<internal::CallResult<F>> Attempt(Pipeline* self, const Context& ctx, Ref<F> f,
                                                                 const PipelineCall* call) {
    auto timed = [self, f, honoured = call->honours_context](const Context& c) {
      if (self->attempts_) self->attempts_->inc();
      if (honoured) return with_attempt_timeout_honoured(c, self->options_.attempt_timeout, f, self->attempt_timeouts_);
      return with_attempt_timeout(c, self->options_.attempt_timeout, f, self->attempt_timeouts_);
    };
    if (self->hedge_ && call->may_hedge) return self->hedge_->run(ctx, timed);
    return timed(ctx);
  }

  PipelineOptions options_;
  std::unique_ptr<Retry> retry_;
  std::unique_ptr<Hedge> hedge_;
  observe::Counter* attempt_timeouts_ = nullptr;
  observe::Counter* attempts_ = nullptr;
};

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_PIPELINE_HPP_
