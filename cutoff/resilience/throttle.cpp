#include "cutoff/resilience/throttle.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cutoff/core/error.hpp"

namespace cutoff::resilience {

namespace {

// The bucket of `a` that `epoch` falls in; `fresh`: emptied first when it still counts an
// older slice of time.
template <typename Account>
auto& BucketOf(Account& a, std::int64_t epoch, bool fresh) {
  auto& b = a.buckets[static_cast<std::size_t>(epoch % static_cast<std::int64_t>(a.buckets.size()))];
  if (fresh && b.epoch != epoch) b = {epoch, 0, 0};
  return b;
}

}  // namespace

ThrottleOutcome default_throttle_outcome(const std::exception_ptr& error, bool caller_stopped) noexcept {
  if (!error) return ThrottleOutcome::accepted;
  const Error* e = find_error(error);
  if (!e) {
    if (is_cancellation(error)) return ThrottleOutcome::ignored;  // an Asio abort: our caller's
    return ThrottleOutcome::accepted;                             // not a refusal we can name: no reason to send less
  }
  switch (e->code()) {
    case ErrorCode::overloaded:
    case ErrorCode::unavailable:
    case ErrorCode::attempt_timeout: return ThrottleOutcome::refused;
    case ErrorCode::deadline_exceeded: return caller_stopped ? ThrottleOutcome::ignored : ThrottleOutcome::refused;
    default: break;
  }
  return never_retried(e->code()) ? ThrottleOutcome::ignored : ThrottleOutcome::accepted;
}

Throttle::Throttle(ThrottleOptions options)
    : options_(std::move(options)), clock_(options_.clock ? *options_.clock : Clock::steady()) {
  options_.k = std::max(1.0, options_.k);
  if (options_.window <= Duration::zero()) options_.window = std::chrono::seconds(2);
  bucket_length_ = std::max<Duration>(options_.window / static_cast<int>(Account{}.buckets.size()), Duration(1));
  if (auto* m = options_.metrics) throttled_counter_ = &m->throttled.with({options_.name});
}

Throttle::~Throttle() = default;

Throttle::Account& Throttle::AccountLocked(std::string_view key) {
  if (auto it = accounts_.find(key); it != accounts_.end()) return it->second;
  if (accounts_.size() >= options_.max_keys) return overflow_;
  return accounts_.emplace(std::string(key), Account{}).first->second;
}

double Throttle::RatioLocked(const Account& a, std::int64_t now_epoch) const noexcept {
  const auto n = static_cast<std::int64_t>(a.buckets.size());
  double requests = 0, accepts = 0;
  for (const Bucket& b : a.buckets) {
    if (b.epoch > now_epoch - n && b.epoch <= now_epoch) {
      requests += b.requests;
      accepts += b.accepts;
    }
  }
  if (requests < options_.minimum_requests) return 0;
  return std::max(0.0, (requests - options_.k * accepts) / (requests + 1));
}

Throttle::Ticket Throttle::admit(const Context& ctx, std::string_view key) {
  double ratio = 0;
  bool refuse = false;
  Account* account = nullptr;
  std::int64_t epoch = 0;
  {
    std::lock_guard lock(mu_);
    epoch = EpochOf(clock_.now());
    account = &AccountLocked(key);
    // Refused here or not, it was asked for: that is what lets the ratio fall again.
    ++BucketOf(*account, epoch, true).requests;
    ratio = RatioLocked(*account, epoch);
    if (ratio <= 0) {
      account->credit = 0;
    } else {
      account->credit += ratio;
      if (account->credit >= 1) {
        account->credit -= 1;
        refuse = true;
        ++stats_.throttled;
      }
    }
  }
  if (refuse) {
    if (throttled_counter_) throttled_counter_->inc();
    char percent[16];
    std::snprintf(percent, sizeof percent, "%.0f%%", ratio * 100);
    std::string message = "throttled here, not sent: '" + options_.name + "'";
    if (!key.empty()) message += " (" + std::string(key) + ")";
    message += " refused most recent calls, so " + std::string(percent) + " of new ones are refused before they leave";
    throw Error(ErrorCode::overloaded, std::move(message), ctx.request_id());
  }
  return Ticket(this, account, epoch);
}

void Throttle::Record(Account& a, std::int64_t epoch, ThrottleOutcome outcome) noexcept {
  std::lock_guard lock(mu_);
  switch (outcome) {
    case ThrottleOutcome::accepted: {
      ++stats_.accepted;
      ++BucketOf(a, EpochOf(clock_.now()), true).accepts;
      break;
    }
    case ThrottleOutcome::refused: ++stats_.refused; break;
    case ThrottleOutcome::ignored: {
      ++stats_.ignored;
      // Not the dependency's doing: take the request back if its bucket still counts.
      Bucket& b = BucketOf(a, epoch, false);
      if (b.epoch == epoch && b.requests > 0) --b.requests;
      break;
    }
  }
}

double Throttle::refusal_ratio(std::string_view key) const {
  std::lock_guard lock(mu_);
  const std::int64_t now = EpochOf(clock_.now());
  if (auto it = accounts_.find(key); it != accounts_.end()) return RatioLocked(it->second, now);
  return accounts_.size() >= options_.max_keys ? RatioLocked(overflow_, now) : 0;
}

ThrottleStats Throttle::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace cutoff::resilience
