// Internal: the shared state behind CancelSource, CancelToken and Context.
//
// Not part of the public API; include cutoff/core/cancel.hpp instead.
#ifndef CUTOFF_CORE_INTERNAL_STOP_STATE_HPP_
#define CUTOFF_CORE_INTERNAL_STOP_STATE_HPP_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>

#include "cutoff/core/stop_reason.hpp"

namespace cutoff::internal {

class StopState;

// One registered stop callback. Lives inside the object that registered it (no allocation).
struct CallbackNode {
  using InvokeFn = void (*)(CallbackNode* self, StopReason reason) noexcept;

  explicit CallbackNode(InvokeFn fn) noexcept : invoke(fn) {}

  InvokeFn invoke;
  CallbackNode* prev = nullptr;
  CallbackNode* next = nullptr;
  // Set by the stopping thread while this node's callback runs: lets a callback that
  // deregisters itself tell the stopping thread not to touch the node afterwards.
  bool* destroyed_while_running = nullptr;
  std::atomic<bool> finished{false};
};

// Reference-counted stop state: a reason (none until stopped) and the list of callbacks to
// run when a stop is requested. Subclasses (the context state) add fields and are freed
// through the virtual destructor.
class StopState {
 public:
  StopState() noexcept = default;
  StopState(const StopState&) = delete;
  StopState& operator=(const StopState&) = delete;
  virtual ~StopState() = default;

  bool stop_requested() const noexcept {
    return reason_.load(std::memory_order_acquire) != static_cast<std::uint8_t>(StopReason::none);
  }
  StopReason reason() const noexcept {
    return static_cast<StopReason>(reason_.load(std::memory_order_acquire));
  }

  // Records `reason` and runs every registered callback on this thread. Returns false (and
  // does nothing) if a stop was already requested or `reason` is `none`.
  bool request_stop(StopReason reason) noexcept;

  // Registers `node`. If a stop was already requested, runs the callback now, on this thread,
  // and returns false (the node is then not linked).
  bool add(CallbackNode* node) noexcept;

  // Unregisters `node`. When its callback is running on another thread, waits until it has
  // returned, so that nothing it touches is destroyed under it.
  void remove(CallbackNode* node) noexcept;

  void add_ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  // Takes a reference unless the count already reached zero (the object is being destroyed).
  bool try_add_ref() noexcept {
    auto n = refs_.load(std::memory_order_relaxed);
    while (n != 0) {
      if (refs_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel)) return true;
    }
    return false;
  }

 private:
  std::atomic<std::uint32_t> refs_{1};
  std::atomic<std::uint8_t> reason_{static_cast<std::uint8_t>(StopReason::none)};
  std::mutex mu_;
  CallbackNode* head_ = nullptr;          // guarded by mu_
  std::thread::id stopping_thread_;       // guarded by mu_; set while callbacks run
  CallbackNode* running_ = nullptr;       // guarded by mu_
};

// A minimal intrusive smart pointer for StopState and subclasses.
template <typename T>
class RefPtr {
 public:
  RefPtr() noexcept = default;
  // Adopts one reference that the caller already owns.
  static RefPtr adopt(T* p) noexcept { return RefPtr(p); }
  static RefPtr share(T* p) noexcept {
    if (p) p->add_ref();
    return RefPtr(p);
  }
  RefPtr(const RefPtr& o) noexcept : p_(o.p_) {
    if (p_) p_->add_ref();
  }
  template <typename U>
  RefPtr(const RefPtr<U>& o) noexcept : p_(o.get()) {  // NOLINT: implicit upcast
    if (p_) p_->add_ref();
  }
  RefPtr(RefPtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  RefPtr& operator=(RefPtr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~RefPtr() {
    if (p_) p_->release();
  }
  T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  friend bool operator==(const RefPtr& a, const RefPtr& b) noexcept { return a.p_ == b.p_; }

 private:
  explicit RefPtr(T* p) noexcept : p_(p) {}
  T* p_ = nullptr;
};

}  // namespace cutoff::internal

#endif  // CUTOFF_CORE_INTERNAL_STOP_STATE_HPP_
