#include "cutoff/core/internal/stop_state.hpp"

namespace cutoff::internal {

bool StopState::request_stop(StopReason reason) noexcept {
  if (reason == StopReason::none) return false;
  auto expected = static_cast<std::uint8_t>(StopReason::none);
  if (!reason_.compare_exchange_strong(expected, static_cast<std::uint8_t>(reason),
                                       std::memory_order_acq_rel)) {
    return false;
  }
  std::unique_lock lock(mu_);
  stopping_thread_ = std::this_thread::get_id();
  while (head_ != nullptr) {
    CallbackNode* node = head_;
    head_ = node->next;
    if (head_) head_->prev = nullptr;
    node->prev = node->next = nullptr;
    running_ = node;
    bool destroyed = false;
    node->destroyed_while_running = &destroyed;
    lock.unlock();
    node->invoke(node, reason);
    lock.lock();
    running_ = nullptr;
    if (!destroyed) {
      node->destroyed_while_running = nullptr;
      node->finished.store(true, std::memory_order_release);
      node->finished.notify_all();
    }
  }
  stopping_thread_ = std::thread::id();
  return true;
}

bool StopState::add(CallbackNode* node) noexcept {
  if (!stop_requested()) {
    std::lock_guard lock(mu_);
    if (!stop_requested()) {
      node->next = head_;
      node->prev = nullptr;
      if (head_) head_->prev = node;
      head_ = node;
      return true;
    }
  }
  node->invoke(node, reason());
  node->finished.store(true, std::memory_order_release);
  return false;
}

void StopState::remove(CallbackNode* node) noexcept {
  std::unique_lock lock(mu_);
  const bool linked = node->prev != nullptr || head_ == node;
  if (linked) {
    if (node->prev) node->prev->next = node->next;
    else head_ = node->next;
    if (node->next) node->next->prev = node->prev;
    node->prev = node->next = nullptr;
    return;
  }
  if (running_ == node) {
    if (stopping_thread_ == std::this_thread::get_id()) {
      // The callback is deregistering itself (or something it triggered is): the stopping
      // thread must not touch the node once it returns.
      if (node->destroyed_while_running) *node->destroyed_while_running = true;
      return;
    }
    lock.unlock();
    node->finished.wait(false, std::memory_order_acquire);
    // The stopping thread publishes `finished` under the lock; taking it once more makes sure
    // it has left the node (notify included) before our caller frees it.
    lock.lock();
    return;
  }
  // Already ran (or ran at registration): nothing to do. If it ran on another thread the
  // stopping thread published `finished` under the lock we just took.
}

}  // namespace cutoff::internal
