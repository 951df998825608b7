#include "cutoff/resilience/retry.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"

namespace cutoff::resilience {

namespace asio = boost::asio;

Retry::Retry(RetryOptions options) : options_(std::move(options)) {
  if (options_.max_attempts < 1) options_.max_attempts = 1;
  if (options_.min_attempt_time < Duration::zero()) options_.min_attempt_time = Duration::zero();
  seeds_.seed(options_.seed != 0 ? options_.seed
                                 : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}());
  if (auto* m = options_.metrics) {
    retries_metric_ = &m->retries.with({options_.name});
    budget_metric_ = &m->retries_abandoned.with({options_.name, "budget"});
    deadline_metric_ = &m->retries_abandoned.with({options_.name, "deadline"});
    attempts_metric_ = &m->retries_abandoned.with({options_.name, "attempts"});
    pushback_metric_ = &m->retries_abandoned.with({options_.name, "pushback"});
  }
}

RetryStats Retry::stats() const noexcept {
  RetryStats s;
  s.calls = calls_.load(std::memory_order_relaxed);
  s.retries = retries_.load(std::memory_order_relaxed);
  s.abandoned_budget = abandoned_budget_.load(std::memory_order_relaxed);
  s.abandoned_deadline = abandoned_deadline_.load(std::memory_order_relaxed);
  s.abandoned_attempts = abandoned_attempts_.load(std::memory_order_relaxed);
  s.abandoned_pushback = abandoned_pushback_.load(std::memory_order_relaxed);
  return s;
}

Backoff Retry::Start() {
  calls_.fetch_add(1, std::memory_order_relaxed);
  if (options_.budget) options_.budget->deposit();
  std::uint64_t seed;
  {
    std::lock_guard lock(seed_mu_);
    seed = seeds_();
  }
  return Backoff(options_.backoff, seed);
}

void Retry::Abandon(std::atomic<std::uint64_t>& count, observe::Counter* metric, const std::exception_ptr& error) {
  count.fetch_add(1, std::memory_order_relaxed);
  if (metric) metric->inc();
  std::rethrow_exception(error);
}

Duration Retry::AfterFailure(const Context& ctx, const std::exception_ptr& error, int attempt, Backoff& backoff,
                             const RetryCall& call) {
  const Error* e = find_error(error);
  if (!e || never_retried(e->code())) std::rethrow_exception(error);
  const auto& retryable = call.retryable ? call.retryable : options_.retryable;
  if (!(retryable ? retryable(*e) : retry_may_help(e->code()))) std::rethrow_exception(error);

  if (ctx.stop_requested()) Stopped(ctx, error);
  if (attempt >= options_.max_attempts) Abandon(abandoned_attempts_, attempts_metric_, error);

  Duration delay = backoff.next();
  if (const std::optional<Duration>& pushback = e->retry_after()) {
    if (*pushback > options_.max_pushback) Abandon(abandoned_pushback_, pushback_metric_, error);
    delay = std::max(delay, *pushback);
  }
  if (!ctx.deadline().is_never()) {
    const Duration remaining = ctx.remaining();
    if (delay >= remaining || remaining - delay < options_.min_attempt_time)
      Abandon(abandoned_deadline_, deadline_metric_, error);
  }
  // Last, so that a retry the deadline would refuse anyway does not spend a token.
  if (options_.budget && !options_.budget->try_withdraw()) Abandon(abandoned_budget_, budget_metric_, error);
  return delay;
}

void Retry::Stopped(const Context& ctx, const std::exception_ptr& error) {
  // Nobody waits for a cancelled or shut-down call. A spent budget, though, is exactly the
  // case where the real error is worth more to the caller than deadline_exceeded.
  if (ctx.stop_reason() != StopReason::deadline_exceeded) throw Error::stopped(ctx.stop_reason(), ctx.request_id());
  Abandon(abandoned_deadline_, deadline_metric_, error);
}

void Retry::Interrupted(const Context& ctx, const std::exception_ptr& interruption, const std::exception_ptr& error) {
  if (ctx.stop_requested()) Stopped(ctx, error);
  std::rethrow_exception(interruption);  // an Asio cancellation of the caller
}

void Retry::BeforeRetry(const Context& ctx, const std::exception_ptr& error) {
  if (ctx.stop_requested()) Stopped(ctx, error);
  // The sleep may have ended later than planned (a busy executor).
  if (!ctx.deadline().is_never() && ctx.remaining() < options_.min_attempt_time)
    Abandon(abandoned_deadline_, deadline_metric_, error);
  retries_.fetch_add(1, std::memory_order_relaxed);
  if (retries_metric_) retries_metric_->inc();
}

asio::awaitable<void> Retry::Sleep(Context ctx, Duration delay) {
  asio::steady_timer timer(co_await asio::this_coro::executor, delay);
  co_await with_context(ctx, timer.async_wait(asio::use_awaitable));
}

}  // namespace cutoff::resilience
