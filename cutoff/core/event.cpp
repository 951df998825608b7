#include "cutoff/core/event.hpp"

#include <memory>

namespace cutoff {

Event::~Event() = default;

void Event::set() noexcept {
  std::lock_guard lock(mu_);
  set_.store(true, std::memory_order_release);
  while (internal::Waiter* w = waiters_.PopFront()) GrantLocked(w);
}

void Event::reset() noexcept {
  std::lock_guard lock(mu_);
  set_.store(false, std::memory_order_relaxed);
}

std::size_t Event::waiting() const {
  std::lock_guard lock(mu_);
  return waiters_.size();
}

boost::asio::awaitable<void> Event::Wait(Event* self, Context ctx) {
  ctx.check();
  if (self->is_set()) co_return;
  std::shared_ptr<internal::Waiter> waiter;
  {
    std::lock_guard lock(self->mu_);
    if (!self->set_.load(std::memory_order_relaxed)) {
      waiter = std::make_shared<internal::Waiter>();
      self->waiters_.PushBack(waiter.get());
    }
  }
  if (waiter) co_await self->Await(std::move(waiter), ctx, GrantPolicy::stop_wins);
}

}  // namespace cutoff
