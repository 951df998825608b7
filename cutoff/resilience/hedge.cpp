#include "cutoff/resilience/hedge.hpp"

#include "cutoff/core/error.hpp"

namespace cutoff::resilience {

Hedge::Hedge(HedgeOptions options) : options_(std::move(options)) {
  if (options_.max_attempts < 1) options_.max_attempts = 1;
  if (options_.delay < Duration::zero()) options_.delay = Duration::zero();
  if (options_.metrics) hedges_metric_ = &options_.metrics->hedges.with({options_.name});
}

HedgeStats Hedge::stats() const noexcept {
  return {calls_.load(std::memory_order_relaxed), hedges_.load(std::memory_order_relaxed),
          cancelled_.load(std::memory_order_relaxed)};
}

bool Hedge::EndsCall(const std::exception_ptr& error) const noexcept {
  const Error* e = find_error(error);
  if (!e || never_retried(e->code())) return true;
  try {
    return !(options_.retryable ? options_.retryable(*e) : retry_may_help(e->code()));
  } catch (...) {
    return true;
  }
}

bool Hedge::HedgeFits(const Context& ctx, Duration after) const noexcept {
  if (ctx.stop_requested()) return false;
  if (ctx.deadline().is_never()) return true;
  const Duration remaining = ctx.remaining();
  return remaining > after && remaining - after > Duration::zero() && remaining - after >= options_.min_attempt_time;
}

void Hedge::CountHedge() noexcept {
  hedges_.fetch_add(1, std::memory_order_relaxed);
  if (hedges_metric_) hedges_metric_->inc();
}

}  // namespace cutoff::resilience
