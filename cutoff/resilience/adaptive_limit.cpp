#include "cutoff/resilience/adaptive_limit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cutoff::resilience {

namespace {

constexpr std::size_t kMinWindow = 4;

AdaptiveLimitOptions Checked(AdaptiveLimitOptions o) {
  if (o.min_limit < 1) throw std::invalid_argument("AdaptiveLimit: min_limit must be at least 1");
  if (o.max_limit < o.min_limit) throw std::invalid_argument("AdaptiveLimit: max_limit must be at least min_limit");
  if (o.initial_limit == 0) o.initial_limit = o.max_limit;
  o.initial_limit = std::clamp(o.initial_limit, o.min_limit, o.max_limit);
  if (!(o.tolerance > 1.0)) throw std::invalid_argument("AdaptiveLimit: tolerance must be above 1");
  if (!(o.backoff > 0.0 && o.backoff < 1.0)) throw std::invalid_argument("AdaptiveLimit: backoff must be in (0, 1)");
  if (!(o.max_stopped_share >= 0.0 && o.max_stopped_share <= 1.0))
    throw std::invalid_argument("AdaptiveLimit: max_stopped_share must be in [0, 1]");
  o.window = std::max(o.window, kMinWindow);
  return o;
}

}  // namespace

AdaptiveLimit::AdaptiveLimit(AdaptiveLimitOptions options)
    : options_(Checked(std::move(options))),
      clock_(options_.clock ? *options_.clock : Clock::steady()),
      permits_(options_.max_limit, options_.max_queue, options_.newest_first_after),
      limit_(options_.max_limit) {
  if (options_.metrics) limit_gauge_ = &options_.metrics->concurrency_limit.with({options_.name});
  window_opened_ = clock_.now();
  std::lock_guard lock(mu_);
  SetLimitLocked(options_.initial_limit);
  window_.reserve(options_.window);
}

AdaptiveLimit::~AdaptiveLimit() {
  // Parked permits are this object's own; give them back so the Semaphore ends balanced.
  std::lock_guard lock(mu_);
  if (parked_ > 0) permits_.release(std::exchange(parked_, 0));
}

boost::asio::awaitable<AdaptiveLimit::Permit> AdaptiveLimit::Acquire(AdaptiveLimit* self, Context ctx) {
  Semaphore::Permit inner = self->permits_.try_acquire();
  if (!inner) {
    {
      std::lock_guard lock(self->mu_);
      self->waited_ = true;
    }
    try {
      inner = co_await self->permits_.acquire(ctx);
    } catch (Error& e) {
      // The queue is full: tell the caller when trying again could find room.
      if (e.code() == ErrorCode::overloaded) self->PushBack(e);
      throw;
    }
  }
  const TimePoint started = self->clock_.now();
  {
    std::lock_guard lock(self->mu_);
    ++self->in_use_;
  }
  co_return Permit(self, std::move(inner), started);
}

void AdaptiveLimit::PushBack(Error& refused) const {
  std::lock_guard lock(mu_);
  const Duration run = stats_.last_median > Duration::zero() ? stats_.last_median : stats_.baseline;
  if (run <= Duration::zero() || limit_ == 0) return;  // nothing measured yet: no estimate
  // A permit comes back about every run / limit; the full queue and this caller go first.
  const double runs_ahead = static_cast<double>(options_.max_queue + 1) / static_cast<double>(limit_);
  refused.set_retry_after(std::chrono::duration_cast<Duration>(run * runs_ahead));
}

void AdaptiveLimit::Return(Semaphore::Permit inner, TimePoint started, Permit::Outcome outcome) noexcept {
  const TimePoint now = clock_.now();
  std::lock_guard lock(mu_);
  --in_use_;
  if (outcome == Permit::Outcome::completed) {
    window_.push_back(now - started);
    ++stats_.samples;
  } else if (outcome == Permit::Outcome::stopped) {
    ++window_stopped_;
    ++stats_.stopped;
  }
  const std::size_t runs = window_.size() + window_stopped_;
  if (runs >= options_.window || (runs >= kMinWindow && now - window_opened_ >= options_.max_window_age))
    CloseWindowLocked(now);
  if (owed_ > 0) {
    // The limit fell below the permits in use: this one stays out of circulation.
    inner.detach();
    --owed_;
    ++parked_;
  }
  // Otherwise `inner` goes back when it leaves this scope (to the next waiter, if any).
}

void AdaptiveLimit::CloseWindowLocked(TimePoint now) noexcept {
  const std::size_t runs = window_.size() + window_stopped_;
  bool congested = static_cast<double>(window_stopped_) > options_.max_stopped_share * static_cast<double>(runs);
  if (!window_.empty()) {
    auto mid = window_.begin() + static_cast<std::ptrdiff_t>(window_.size() / 2);
    std::nth_element(window_.begin(), mid, window_.end());
    const Duration median = *mid;
    stats_.last_median = median;
    if (stats_.baseline == Duration::zero() || median < stats_.baseline ||
        now - baseline_at_ > options_.baseline_max_age) {
      stats_.baseline = median;
      baseline_at_ = now;
    }
    const double allowed = options_.tolerance * std::chrono::duration<double>(stats_.baseline).count();
    if (std::chrono::duration<double>(median).count() > allowed) congested = true;
  } else {
    congested = true;  // every run of the window was cut at its deadline
  }

  if (congested) {
    const auto scaled = static_cast<std::size_t>(std::floor(static_cast<double>(limit_) * options_.backoff));
    const std::size_t lower = std::max(options_.min_limit, std::min(limit_ - 1, scaled));
    if (lower < limit_) {
      ++stats_.decreases;
      SetLimitLocked(lower);
    }
  } else if (waited_ && limit_ < options_.max_limit) {
    ++stats_.increases;
    SetLimitLocked(limit_ + 1);
  }
  window_.clear();
  window_stopped_ = 0;
  window_opened_ = now;
  waited_ = permits_.waiting() > 0;
}

void AdaptiveLimit::SetLimitLocked(std::size_t limit) noexcept {
  if (limit < limit_) {
    for (std::size_t n = limit_ - limit; n > 0; --n) {
      // A free permit is parked now; one in use is parked when it comes back.
      if (Semaphore::Permit p = permits_.try_acquire()) {
        p.detach();
        ++parked_;
      } else {
        ++owed_;
      }
    }
  } else if (limit > limit_) {
    std::size_t n = limit - limit_;
    const std::size_t forgiven = std::min(owed_, n);
    owed_ -= forgiven;
    n -= forgiven;
    parked_ -= n;
    if (n > 0) permits_.release(n);
  }
  limit_ = limit;
  stats_.limit = limit;
  if (limit_gauge_) limit_gauge_->set(static_cast<double>(limit));
}

std::size_t AdaptiveLimit::limit() const {
  std::lock_guard lock(mu_);
  return limit_;
}

AdaptiveLimitStats AdaptiveLimit::stats() const {
  std::lock_guard lock(mu_);
  AdaptiveLimitStats s = stats_;
  s.in_use = in_use_;
  s.waiting = permits_.waiting();
  return s;
}

}  // namespace cutoff::resilience
