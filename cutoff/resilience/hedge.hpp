// Hedging: when an attempt is slow, start another one beside it and take whichever answers
// first. Trims the tail latency that a slow replica or a lost packet adds.
//
//   cutoff::resilience::Hedge hedge({.delay = 40ms, .max_attempts = 2});
//   Row r = co_await hedge.run(ctx, [&](const cutoff::Context& attempt) { return read_row(attempt, key); });
//
// - The first attempt starts at once. Each `delay` without an answer starts one more, up to
//   `max_attempts` in all. An attempt that fails with a retryable error (see `retryable`)
//   starts the next one at once instead of waiting out the delay.
// - The first success wins. Every other attempt is cancelled: its context is stopped with
//   `cancelled` and what it awaits is cancelled through Asio. The call returns only after all
//   of them have finished, so no attempt outlives it.
// - A non-retryable failure (including a stop or commit_ambiguous) ends the call with that
//   error, after cancelling the others. When every attempt failed, the last error surfaces.
// - No attempt starts once `ctx` has stopped or with less than `min_attempt_time` left; no
//   hedge is scheduled that would start after the deadline.
// Each attempt runs under its own child of `ctx` (with_cancel), so the callable can tell its
// attempt apart from its siblings. Only use hedging for idempotent calls.
//
// The attempts run on the caller's executor, which must be a strand or a single-threaded
// context (as everywhere in cutoff). A Hedge is thread-safe to share.
#ifndef CUTOFF_RESILIENCE_HEDGE_HPP_
#define CUTOFF_RESILIENCE_HEDGE_HPP_

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/cancel.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/resilience/internal/awaitable_value.hpp"
#include "cutoff/resilience/metrics.hpp"

namespace cutoff::resilience {

struct HedgeOptions {
  Duration delay = std::chrono::milliseconds(50);
  int max_attempts = 2;  // including the first
  Duration min_attempt_time = Duration::zero();
  // Failures after which the others may still succeed; empty: retry_may_help (core/error.hpp). Stops and
  // commit_ambiguous always end the call.
  std::function<bool(const Error&)> retryable;
  std::string name = "default";  // metric label
  ResilienceMetrics* metrics = nullptr;
};

struct HedgeStats {
  std::uint64_t calls = 0;
  std::uint64_t hedges = 0;     // attempts started after the first
  std::uint64_t cancelled = 0;  // attempts stopped because another one settled the call
};

class Hedge {
 public:
  explicit Hedge(HedgeOptions options = {});
  Hedge(const Hedge&) = delete;
  Hedge& operator=(const Hedge&) = delete;

  template <typename F>
  boost::asio::awaitable<internal::CallResult<F>> run(const Context& ctx, F f) {
    using T = internal::CallResult<F>;
    return internal::Unvalued<T>(Run(this, ctx, internal::Valued(std::move(f))));
  }

  HedgeStats stats() const noexcept;
  const HedgeOptions& options() const noexcept { return options_; }

 private:
  // The shared state of one call's attempts. Touched only on the caller's executor.
  template <typename T>
  struct Race {
    struct Slot {
      CancelSource stop;
      bool done = false;
    };
    explicit Race(const boost::asio::any_io_executor& ex)
        : wake(ex, boost::asio::steady_timer::time_point::max()) {}
    boost::asio::steady_timer wake;  // the caller waits on it; attempts cancel it to wake it
    std::vector<Slot> attempts;
    int running = 0;
    std::optional<T> winner;
    std::exception_ptr fatal;  // ends the call
    std::exception_ptr last;   // the latest retryable failure
    bool start_next_now = false;
  };

  // Stops every attempt, whatever way the caller's frame is left.
  template <typename T>
  struct StopAll {
    Race<T>* race;
    ~StopAll() {
      for (auto& a : race->attempts) a.stop.request_stop(StopReason::cancelled);
    }
  };

  template <typename T, typename F>
  static boost::asio::awaitable<void> Attempt(std::shared_ptr<Race<T>> race, std::size_t index, Context attempt,
                                              F* f, const Hedge* self) {
    std::exception_ptr error;
    try {
      auto value = co_await with_context(attempt, (*f)(attempt));
      if (!race->winner && !race->fatal) race->winner.emplace(std::move(value));
    } catch (...) {
      error = std::current_exception();
    }
    if (error && !race->winner && !race->fatal) {
      if (self->EndsCall(error)) {
        race->fatal = error;
      } else {
        race->last = error;
        race->start_next_now = true;
      }
    }
    race->attempts[index].done = true;
    --race->running;
    race->wake.cancel();
  }

  // The caller's coroutine may be cancelled through Asio while attempts run; they must still
  // be awaited, which needs co_await not to throw. throw_if_cancelled belongs to the whole
  // coroutine thread, so it is turned off for the race and restored before leaving.
  template <typename F>
  static boost::asio::awaitable<internal::CallResult<F>> Run(Hedge* self, Context ctx, F f) {
    namespace asio = boost::asio;
    ctx.check();
    const bool throw_if_cancelled = co_await asio::this_coro::throw_if_cancelled();
    co_await asio::this_coro::throw_if_cancelled(false);
    std::optional<internal::CallResult<F>> value;
    std::exception_ptr error;
    try {
      value.emplace(co_await RunRace(self, ctx, f));
    } catch (...) {
      error = std::current_exception();
    }
    co_await asio::this_coro::throw_if_cancelled(throw_if_cancelled);
    if (error) std::rethrow_exception(error);
    co_return std::move(*value);
  }

  template <typename F>
  static boost::asio::awaitable<internal::CallResult<F>> RunRace(Hedge* self, const Context& ctx, F& f) {
    using T = internal::CallResult<F>;
    namespace asio = boost::asio;
    using Clock = asio::steady_timer::clock_type;
    self->calls_.fetch_add(1, std::memory_order_relaxed);
    const auto executor = co_await asio::this_coro::executor;
    auto race = std::make_shared<Race<T>>(executor);
    StopAll<T> stop_all{race.get()};

    int started = 0;
    auto next_at = Clock::now();
    // Attempts wake the wait below by cancelling the timer; a cancellation of the caller is
    // told apart through the cancellation state.
    auto start = [&] {
      auto [attempt, stop] = ctx.with_cancel();
      race->attempts.push_back({stop});
      ++race->running;
      if (++started > 1) self->CountHedge();
      race->start_next_now = false;
      next_at = Clock::now() + self->options_.delay;
      asio::co_spawn(executor, Attempt<T, F>(race, race->attempts.size() - 1, std::move(attempt), &f, self),
                     asio::detached);
    };

    start();
    bool aborted = false;
    for (;;) {
      if (race->winner || race->fatal) break;
      const bool may_start = started < self->options_.max_attempts && !ctx.stop_requested();
      const auto wait = std::max<Duration>(next_at - Clock::now(), Duration::zero());
      if (may_start && (race->start_next_now || wait == Duration::zero()) && self->HedgeFits(ctx, Duration::zero())) {
        start();
        continue;
      }
      if (race->running == 0) break;
      // Schedule the next hedge only if it could still start in time.
      const bool scheduled = may_start && !race->start_next_now && self->HedgeFits(ctx, wait);
      race->wake.expires_at(scheduled ? next_at : asio::steady_timer::time_point::max());
      co_await race->wake.async_wait(asio::as_tuple(asio::use_awaitable));
      const asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
      if (state.cancelled() != asio::cancellation_type::none) {
        aborted = true;
        break;
      }
    }

    // Settled (or abandoned): stop the others and wait until every attempt has returned.
    for (auto& a : race->attempts) {
      if (!a.done && a.stop.request_stop(StopReason::cancelled))
        self->cancelled_.fetch_add(1, std::memory_order_relaxed);
    }
    while (race->running > 0) {
      race->wake.expires_at(asio::steady_timer::time_point::max());
      co_await race->wake.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    if (aborted) throw boost::system::system_error(asio::error::operation_aborted);
    if (race->winner) co_return std::move(*race->winner);
    if (race->fatal) std::rethrow_exception(race->fatal);
    if (race->last) std::rethrow_exception(race->last);
    ctx.check();
    throw Error(ErrorCode::internal, "hedging ended without an outcome", ctx.request_id());
  }

  bool EndsCall(const std::exception_ptr& error) const noexcept;
  // Whether an attempt started `after` from now would have at least min_attempt_time left.
  bool HedgeFits(const Context& ctx, Duration after) const noexcept;
  void CountHedge() noexcept;

  HedgeOptions options_;
  std::atomic<std::uint64_t> calls_{0}, hedges_{0}, cancelled_{0};
  observe::Counter* hedges_metric_ = nullptr;
};

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_HEDGE_HPP_
