#include "cutoff/resilience/circuit_breaker.hpp"

#include <algorithm>

#include "cutoff/core/error.hpp"

namespace cutoff::resilience {

std::string_view to_string(BreakerState s) noexcept {
  switch (s) {
    case BreakerState::closed: return "closed";
    case BreakerState::open: return "open";
    case BreakerState::half_open: return "half_open";
  }
  return "unknown";
}

BreakerOutcome default_breaker_outcome(const std::exception_ptr& error) noexcept {
  if (!error) return BreakerOutcome::success;
  if (is_cancellation(error)) return BreakerOutcome::ignored;
  if (const Error* e = find_error(error)) {
    if (never_retried(e->code())) return BreakerOutcome::ignored;
    if (is_caller_error(e->code())) return BreakerOutcome::success;  // the dependency answered, sensibly
  }
  return BreakerOutcome::failure;
}

CircuitBreaker::CircuitBreaker(BreakerOptions options)
    : options_(std::move(options)), clock_(options_.clock ? *options_.clock : Clock::steady()) {
  if (options_.half_open_probes == 0) options_.half_open_probes = 1;
  if (options_.window <= Duration::zero()) options_.window = std::chrono::seconds(10);
  bucket_length_ = std::max<Duration>(options_.window / static_cast<int>(kBuckets), Duration(1));
  if (auto* m = options_.metrics) {
    state_gauge_ = &m->breaker_state.with({options_.name});
    rejected_counter_ = &m->breaker_rejected.with({options_.name});
    state_gauge_->set(0);
  }
}

BreakerOutcome CircuitBreaker::Classify(const std::exception_ptr& error) const noexcept {
  if (!options_.classify) return default_breaker_outcome(error);
  try {
    return options_.classify(error);
  } catch (...) {
    return BreakerOutcome::failure;
  }
}

void CircuitBreaker::Notify(const Transition& t) const {
  if (t.happened && options_.on_transition) options_.on_transition(t.from, t.to);
}

CircuitBreaker::Transition CircuitBreaker::MoveToLocked(BreakerState to, TimePoint now) noexcept {
  Transition t{state_, to, state_ != to};
  state_ = to;
  ++generation_;
  probes_in_flight_ = 0;
  probe_successes_ = 0;
  consecutive_ = 0;
  if (to == BreakerState::open) {
    opened_at_ = now;
    ++stats_.times_opened;
  }
  if (to == BreakerState::closed) buckets_.fill(Bucket{});  // a fresh start after recovery
  if (state_gauge_) state_gauge_->set(static_cast<double>(static_cast<int>(to)));
  return t;
}

void CircuitBreaker::RefreshLocked(TimePoint now, Transition& t) noexcept {
  if (state_ == BreakerState::open && now - opened_at_ >= options_.open_for)
    t = MoveToLocked(BreakerState::half_open, now);
}

CircuitBreaker::Bucket& CircuitBreaker::BucketLocked(TimePoint now) noexcept {
  const std::int64_t epoch = now.time_since_epoch() / bucket_length_;
  Bucket& b = buckets_[static_cast<std::size_t>(epoch % static_cast<std::int64_t>(kBuckets))];
  if (b.epoch != epoch) b = Bucket{epoch, 0, 0};
  return b;
}

bool CircuitBreaker::RateTrippedLocked(TimePoint now) noexcept {
  if (options_.failure_rate <= 0) return false;
  const std::int64_t current = now.time_since_epoch() / bucket_length_;
  std::uint64_t calls = 0, failures = 0;
  for (const Bucket& b : buckets_) {
    if (b.epoch > current - static_cast<std::int64_t>(kBuckets) && b.epoch <= current) {
      calls += b.calls;
      failures += b.failures;
    }
  }
  if (calls == 0 || calls < options_.minimum_calls) return false;
  return static_cast<double>(failures) >= options_.failure_rate * static_cast<double>(calls);
}

CircuitBreaker::Ticket CircuitBreaker::admit(const Context& ctx) {
  Transition t;
  bool admitted = false;
  bool probe = false;
  std::uint64_t generation = 0;
  Duration retry_in{};
  {
    std::lock_guard lock(mu_);
    const TimePoint now = clock_.now();
    RefreshLocked(now, t);
    switch (state_) {
      case BreakerState::closed:
        admitted = true;
        break;
      case BreakerState::half_open:
        if (probes_in_flight_ < options_.half_open_probes) {
          ++probes_in_flight_;
          admitted = probe = true;
        }
        break;
      case BreakerState::open:
        retry_in = options_.open_for - (now - opened_at_);
        break;
    }
    generation = generation_;
    if (!admitted) {
      ++stats_.rejected;
      if (rejected_counter_) rejected_counter_->inc();
    }
  }
  Notify(t);
  if (!admitted) {
    std::string message = "circuit breaker '" + options_.name + "' is ";
    if (retry_in > Duration::zero()) {
      message += "open; the next probe in " +
                 std::to_string(std::chrono::ceil<std::chrono::milliseconds>(retry_in).count()) + " ms";
    } else {
      message += "half-open and its probes are in flight";
    }
    throw Error(ErrorCode::unavailable, std::move(message), ctx.request_id());
  }
  return Ticket(this, generation, probe);
}

void CircuitBreaker::Record(std::uint64_t generation, bool probe, BreakerOutcome outcome) noexcept {
  Transition t;
  {
    std::lock_guard lock(mu_);
    const TimePoint now = clock_.now();
    switch (outcome) {
      case BreakerOutcome::success: ++stats_.successes; break;
      case BreakerOutcome::failure: ++stats_.failures; break;
      case BreakerOutcome::ignored: ++stats_.ignored; break;
    }
    // A call admitted before the last transition says nothing about the current state (a
    // slow call admitted while closed must not close a breaker that opened since).
    if (generation == generation_) {
      if (state_ == BreakerState::closed && outcome != BreakerOutcome::ignored) {
        Bucket& b = BucketLocked(now);
        ++b.calls;
        if (outcome == BreakerOutcome::failure) {
          ++b.failures;
          ++consecutive_;
          const bool tripped = (options_.consecutive_failures > 0 && consecutive_ >= options_.consecutive_failures) ||
                               RateTrippedLocked(now);
          if (tripped) t = MoveToLocked(BreakerState::open, now);
        } else {
          consecutive_ = 0;
        }
      } else if (state_ == BreakerState::half_open && probe) {
        --probes_in_flight_;
        if (outcome == BreakerOutcome::failure) {
          t = MoveToLocked(BreakerState::open, now);
        } else if (outcome == BreakerOutcome::success && ++probe_successes_ >= options_.half_open_probes) {
          t = MoveToLocked(BreakerState::closed, now);
        }
      }
    }
  }
  Notify(t);
}

BreakerState CircuitBreaker::state() const {
  std::lock_guard lock(mu_);
  if (state_ == BreakerState::open && clock_.now() - opened_at_ >= options_.open_for) return BreakerState::half_open;
  return state_;
}

BreakerStats CircuitBreaker::stats() const {
  BreakerStats s;
  {
    std::lock_guard lock(mu_);
    s = stats_;
  }
  s.state = state();
  return s;
}

void CircuitBreaker::trip() {
  Transition t;
  {
    std::lock_guard lock(mu_);
    t = MoveToLocked(BreakerState::open, clock_.now());
  }
  Notify(t);
}

void CircuitBreaker::reset() {
  Transition t;
  {
    std::lock_guard lock(mu_);
    t = MoveToLocked(BreakerState::closed, clock_.now());
  }
  Notify(t);
}

}  // namespace cutoff::resilience
