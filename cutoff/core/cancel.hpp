// CancelSource / CancelToken: a thread-safe, one-shot stop signal that carries its reason.
//
// A CancelSource requests the stop; CancelTokens observe it. A stop is requested at most
// once: the first reason wins. Checking is one atomic load. Callbacks are registered with
// RAII objects: each runs exactly once (immediately, on the registering thread, if the stop
// already happened), and never after its registration object was destroyed.
//
//   cutoff::CancelSource source;
//   cutoff::CancelToken token = source.token();
//   cutoff::CancelCallback on_stop(token, [&](cutoff::StopReason why) noexcept {
//     socket.close();  // runs on the thread that requested the stop
//   });
//   source.request_stop(cutoff::StopReason::cancelled);
//   assert(token.stop_requested() && token.reason() == cutoff::StopReason::cancelled);
//
// Callbacks must not throw. They run on the stopping thread, which may be the deadline timer
// thread: keep them short (post to an executor rather than doing I/O inline).
#ifndef CUTOFF_CORE_CANCEL_HPP_
#define CUTOFF_CORE_CANCEL_HPP_

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "cutoff/core/internal/stop_state.hpp"
#include "cutoff/core/stop_reason.hpp"

namespace cutoff {

class Context;

// Observes a stop. Cheap to copy (one reference count). A default-constructed token can never
// be stopped.
class CancelToken {
 public:
  CancelToken() noexcept = default;

  bool stop_possible() const noexcept { return static_cast<bool>(state_); }
  bool stop_requested() const noexcept { return state_ && state_->stop_requested(); }
  StopReason reason() const noexcept { return state_ ? state_->reason() : StopReason::none; }

  friend bool operator==(const CancelToken&, const CancelToken&) noexcept = default;

 private:
  friend class CancelSource;
  friend class Context;
  template <typename F>
  friend class CancelCallback;
  friend class CancelRegistration;

  explicit CancelToken(internal::RefPtr<internal::StopState> s) noexcept : state_(std::move(s)) {}

  internal::RefPtr<internal::StopState> state_;
};

// Requests a stop. Copies share the same state.
class CancelSource {
 public:
  CancelSource();

  CancelToken token() const noexcept { return CancelToken(state_); }

  // Returns true if this call made the stop (false if already stopped or `reason` is none).
  bool request_stop(StopReason reason = StopReason::cancelled) const noexcept {
    return state_->request_stop(reason);
  }
  bool stop_requested() const noexcept { return state_->stop_requested(); }
  StopReason reason() const noexcept { return state_->reason(); }

 private:
  friend class Context;
  explicit CancelSource(internal::RefPtr<internal::StopState> s) noexcept : state_(std::move(s)) {}

  internal::RefPtr<internal::StopState> state_;
};

// Runs `f(StopReason)` once when `token` is stopped, for as long as this object lives.
// Neither copyable nor movable; stores the callable inline (no allocation).
template <typename F>
class CancelCallback : private internal::CallbackNode {
  static_assert(std::is_nothrow_invocable_v<F&, StopReason> || std::is_invocable_v<F&, StopReason>,
                "a CancelCallback callable takes a StopReason");

 public:
  template <typename G>
  CancelCallback(const CancelToken& token, G&& f) noexcept(std::is_nothrow_constructible_v<F, G>)
      : CallbackNode(&Invoke), f_(std::forward<G>(f)), state_(token.state_) {
    if (state_ && !state_->add(this)) state_ = {};
  }
  CancelCallback(const CancelCallback&) = delete;
  CancelCallback& operator=(const CancelCallback&) = delete;
  ~CancelCallback() {
    if (state_) state_->remove(this);
  }

 private:
  static void Invoke(CallbackNode* self, StopReason reason) noexcept {
    static_cast<CancelCallback*>(self)->f_(reason);
  }

  F f_;
  internal::RefPtr<internal::StopState> state_;
};

template <typename F>
CancelCallback(const CancelToken&, F) -> CancelCallback<F>;

// A movable, type-erased registration, for members and containers. Costs one allocation;
// prefer CancelCallback on hot paths.
class CancelRegistration {
 public:
  CancelRegistration() noexcept = default;
  CancelRegistration(const CancelToken& token, std::function<void(StopReason)> f);

  // Unregisters now (waits for a callback running on another thread to return).
  void reset() noexcept { node_.reset(); }
  explicit operator bool() const noexcept { return static_cast<bool>(node_); }

 private:
  struct Node;
  struct NodeDeleter {
    void operator()(Node* n) const noexcept;
  };
  std::unique_ptr<Node, NodeDeleter> node_;
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_CANCEL_HPP_
