#include "cutoff/resilience/retry_budget.hpp"

#include <algorithm>

namespace cutoff::resilience {

RetryBudget::RetryBudget(RetryBudgetOptions options)
    : options_(options), clock_(options_.clock ? *options_.clock : Clock::steady()) {
  if (!(options_.ratio >= 0)) options_.ratio = 0;  // also catches NaN
  if (!(options_.min_per_second >= 0)) options_.min_per_second = 0;
  if (options_.window <= Duration::zero()) options_.window = std::chrono::seconds(10);
  slice_length_ = std::max<Duration>(options_.window / static_cast<int>(kSlices), Duration(1));
  reserve_ = options_.min_per_second * std::chrono::duration<double>(options_.window).count();
}

std::int64_t RetryBudget::Epoch() const noexcept { return clock_.now().time_since_epoch() / slice_length_; }

RetryBudget::Slice& RetryBudget::SliceLocked(std::int64_t epoch) noexcept {
  Slice& s = slices_[static_cast<std::size_t>(epoch % static_cast<std::int64_t>(kSlices))];
  if (s.epoch != epoch) s = Slice{epoch, 0, 0};
  return s;
}

double RetryBudget::BalanceLocked(std::int64_t epoch) const noexcept {
  std::uint64_t deposits = 0, withdrawals = 0;
  for (const Slice& s : slices_) {
    if (s.epoch > epoch - static_cast<std::int64_t>(kSlices) && s.epoch <= epoch) {
      deposits += s.deposits;
      withdrawals += s.withdrawals;
    }
  }
  return reserve_ + options_.ratio * static_cast<double>(deposits) - static_cast<double>(withdrawals);
}

void RetryBudget::deposit() noexcept {
  const std::int64_t epoch = Epoch();
  std::lock_guard lock(mu_);
  ++SliceLocked(epoch).deposits;
  ++stats_.deposits;
}

bool RetryBudget::try_withdraw() noexcept {
  const std::int64_t epoch = Epoch();
  std::lock_guard lock(mu_);
  if (BalanceLocked(epoch) < 1.0 - 1e-9) {  // tolerate 10 * 0.1 summing to 0.999...
    ++stats_.refused;
    return false;
  }
  ++SliceLocked(epoch).withdrawals;
  ++stats_.withdrawals;
  return true;
}

double RetryBudget::balance() const noexcept {
  const std::int64_t epoch = Epoch();
  std::lock_guard lock(mu_);
  return BalanceLocked(epoch);
}

RetryBudgetStats RetryBudget::stats() const noexcept {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace cutoff::resilience
