#include "cutoff/core/semaphore.hpp"

#include <memory>
#include <string>

#include "cutoff/core/error.hpp"

namespace cutoff {

namespace asio = boost::asio;

Semaphore::Semaphore(std::size_t permits, std::size_t max_waiters, Duration newest_first_after)
    : state_(static_cast<std::uint64_t>(permits) * kOne),
      max_waiters_(max_waiters),
      newest_first_after_(newest_first_after) {}

Semaphore::~Semaphore() = default;

std::size_t Semaphore::waiting() const {
  std::lock_guard lock(mu_);
  return waiters_.size();
}

void Semaphore::ReleaseSlow(std::size_t n) noexcept {
  if (n == 0) return;
  const std::uint64_t added = static_cast<std::uint64_t>(n) * kOne;
  std::uint64_t s = state_.load(std::memory_order_relaxed);
  while ((s & kWaiters) == 0) {
    if (state_.compare_exchange_weak(s, s + added, std::memory_order_release, std::memory_order_relaxed)) return;
  }
  std::lock_guard lock(mu_);
  // Only holders of mu_ set the flag, so what we read now holds until we unlock.
  s = state_.load(std::memory_order_relaxed);
  while ((s & kWaiters) == 0) {
    if (state_.compare_exchange_weak(s, s + added, std::memory_order_release, std::memory_order_relaxed)) return;
  }
  // Waiters queued, no permit free: hand the permits over in order.
  while (n > 0) {
    internal::Waiter* w = NextLocked();
    if (!w) break;
    GrantLocked(w);
    --n;
  }
  if (waiters_.empty()) state_.store(static_cast<std::uint64_t>(n) * kOne, std::memory_order_release);
}

internal::Waiter* Semaphore::NextLocked() noexcept {
  if (newest_first_after_ != Duration::max()) {
    const internal::Waiter* oldest = waiters_.front();
    if (oldest && std::chrono::steady_clock::now() - oldest->queued_at >= newest_first_after_)
      return waiters_.PopBack();
  }
  return waiters_.PopFront();
}

void Semaphore::PassOn(internal::Waiter&) noexcept { release(1); }

void Semaphore::LeftLocked(internal::WaitList&) noexcept {
  // The flag is set and no permit is free (see state_): the last waiter gone clears it.
  if (waiters_.empty()) state_.store(0, std::memory_order_relaxed);
}

asio::awaitable<Semaphore::Permit> Semaphore::Acquire(Semaphore* self, Context ctx) {
  ctx.check();
  if (!self->TryTake()) co_await self->WaitForPermit(ctx);
  co_return Permit(self);
}

asio::awaitable<void> Semaphore::WaitForPermit(const Context& ctx) {
  std::shared_ptr<internal::Waiter> waiter;
  {
    std::lock_guard lock(mu_);
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    for (;;) {
      if ((s & kWaiters) == 0 && s >= kOne) {
        // Freed since the fast path looked.
        if (state_.compare_exchange_weak(s, s - kOne, std::memory_order_acquire, std::memory_order_relaxed)) break;
        continue;
      }
      if (waiters_.size() >= max_waiters_)
        throw Error(ErrorCode::overloaded,
                    "semaphore: no permit free and " + std::to_string(waiters_.size()) + " callers already waiting",
                    ctx.request_id());
      // Raising the flag races only with releases adding to a word that has no permit.
      if ((s & kWaiters) != 0 ||
          state_.compare_exchange_weak(s, s | kWaiters, std::memory_order_relaxed, std::memory_order_relaxed)) {
        waiter = std::make_shared<internal::Waiter>();
        if (newest_first_after_ != Duration::max()) waiter->queued_at = std::chrono::steady_clock::now();
        waiters_.PushBack(waiter.get());
        break;
      }
    }
  }
  if (waiter) co_await Await(std::move(waiter), ctx, GrantPolicy::stop_wins);
}

}  // namespace cutoff
