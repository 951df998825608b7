// Channel<T>: a bounded FIFO queue between coroutines, whose waits honour their context.
//
//   cutoff::Channel<Job> jobs(64);  // at most 64 queued; a 65th sender waits
//   // producer:
//   if (!co_await jobs.send(ctx, std::move(job))) return;  // false: the channel was closed
//   // consumer:
//   while (std::optional<Job> job = co_await jobs.receive(ctx)) run(*job);
//   // nullopt: closed, and everything sent before the close has been received
//   jobs.close();
//
// - send() hands the value to the first waiting receiver, or buffers it while fewer than
//   `capacity` values wait, or else waits (FIFO among senders) until a receiver makes room.
//   Capacity 0 is a rendezvous: every send waits for a receiver.
// - receive() takes the oldest value (and moves the first waiting sender's value into the
//   room it made), or takes it straight from a waiting sender, or waits (FIFO among
//   receivers). try_send() and try_receive() never wait and never barge: a value goes to a
//   waiting receiver first, and senders wait only while the buffer is full.
// - close() is for the producing side. Later sends, and senders waiting at that moment,
//   return false (their values are destroyed). Receivers drain what is buffered, then get
//   nullopt, and so do receivers waiting at that moment. Idempotent.
// - A waiter whose context stops leaves at once with cutoff::Error::stopped (the stop's
//   reason); a caller already stopped fails before touching the channel; a waiter cancelled
//   through Asio leaves with operation_aborted. No value is lost to a stop: a value handed
//   to a receiver in the same instant it stops goes to the next receiver, or back to the
//   front of the buffer (which may then hold one more than `capacity` for a moment). A
//   sender whose value was taken in the same instant it stopped returns true: the value was
//   delivered, and saying otherwise would invite a duplicate.
//
// Thread-safe: senders and receivers may run on different executors and threads; a wake is
// posted to the waiter's executor. Each operation takes a short lock; one that does not wait
// allocates nothing beyond the buffer (sized to `capacity` up front). A waiting caller costs
// one allocation. The Channel must outlive its waiters.
#ifndef CUTOFF_CORE_CHANNEL_HPP_
#define CUTOFF_CORE_CHANNEL_HPP_

#include <algorithm>
#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "cutoff/core/context.hpp"
#include "cutoff/core/internal/wait_list.hpp"

namespace cutoff {

template <typename T>
class Channel : private internal::WaitOwner {
 public:
  explicit Channel(std::size_t capacity) : capacity_(capacity), buffer_(capacity) {}
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel() override = default;

  // Delivers `value` (see above): true once it is buffered or taken, false when the channel
  // is closed. Throws cutoff::Error (the stop's error), or
  // boost::system::system_error(operation_aborted) when cancelled through Asio; the value is
  // then destroyed.
  boost::asio::awaitable<bool> send(const Context& ctx, T value) { return Send(this, ctx, std::move(value)); }
  // The next value; nullopt once the channel is closed and drained. Throws like send().
  boost::asio::awaitable<std::optional<T>> receive(const Context& ctx) { return Receive(this, ctx); }

  // Delivers `value` if that needs no wait: true. False when the buffer is full or the
  // channel closed (closed() tells which); `value` is then left as it was.
  bool try_send(T&& value) {
    std::lock_guard lock(mu_);
    return !closed_ && DeliverLocked(value);
  }
  bool try_send(const T& value) {
    T copy(value);
    return try_send(std::move(copy));
  }
  // The next value if one is there; nullopt when empty or closed and drained (closed()
  // tells which).
  std::optional<T> try_receive() {
    std::lock_guard lock(mu_);
    return TakeLocked();
  }

  void close() noexcept {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    while (internal::Waiter* w = senders_.PopFront()) CloseLocked(w);
    while (internal::Waiter* w = receivers_.PopFront()) CloseLocked(w);
  }

  bool closed() const {
    std::lock_guard lock(mu_);
    return closed_;
  }
  // Values buffered now.
  std::size_t size() const {
    std::lock_guard lock(mu_);
    return buffer_.size();
  }
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t waiting_senders() const {
    std::lock_guard lock(mu_);
    return senders_.size();
  }
  std::size_t waiting_receivers() const {
    std::lock_guard lock(mu_);
    return receivers_.size();
  }

 private:
  // A queued sender (value: what it sends) or receiver (value: what it was handed).
  struct Node : internal::Waiter {
    explicit Node(bool r) noexcept : receiver(r) {}
    std::optional<T> value;
    const bool receiver;
  };

  // A ring of values, sized to the capacity up front; grows only past it (a value put back).
  class Ring {
   public:
    explicit Ring(std::size_t capacity) : slots_(std::max<std::size_t>(capacity, 1)) {}
    bool empty() const noexcept { return size_ == 0; }
    std::size_t size() const noexcept { return size_; }
    void push_back(T&& v) {
      if (size_ == slots_.size()) Grow();
      slots_[(head_ + size_) % slots_.size()].emplace(std::move(v));
      ++size_;
    }
    void push_front(T&& v) {
      if (size_ == slots_.size()) Grow();
      head_ = (head_ + slots_.size() - 1) % slots_.size();
      slots_[head_].emplace(std::move(v));
      ++size_;
    }
    T pop_front() {
      T v = std::move(*slots_[head_]);
      slots_[head_].reset();
      head_ = (head_ + 1) % slots_.size();
      --size_;
      return v;
    }

   private:
    void Grow() {
      std::vector<std::optional<T>> bigger(slots_.size() * 2);
      for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[(head_ + i) % slots_.size()]);
      slots_ = std::move(bigger);
      head_ = 0;
    }
    std::vector<std::optional<T>> slots_;
    std::size_t head_ = 0;
    std::size_t size_ = 0;
  };

  // Under mu_, channel open: to the first waiting receiver, else into the buffer if there is
  // room. Moves from `value` only when it returns true.
  bool DeliverLocked(T& value) {
    if (internal::Waiter* w = receivers_.PopFront()) {
      static_cast<Node*>(w)->value.emplace(std::move(value));
      GrantLocked(w);
      return true;
    }
    if (buffer_.size() >= capacity_) return false;
    buffer_.push_back(std::move(value));
    return true;
  }

  // Under mu_: the oldest value, topping the buffer up from the first waiting sender.
  std::optional<T> TakeLocked() {
    std::optional<T> value;
    if (!buffer_.empty()) {
      value.emplace(buffer_.pop_front());
      if (internal::Waiter* w = senders_.PopFront()) {
        auto* sender = static_cast<Node*>(w);
        buffer_.push_back(std::move(*sender->value));
        sender->value.reset();
        GrantLocked(w);
      }
    } else if (internal::Waiter* w = senders_.PopFront()) {  // a rendezvous
      auto* sender = static_cast<Node*>(w);
      value.emplace(std::move(*sender->value));
      sender->value.reset();
      GrantLocked(w);
    }
    return value;
  }

  // A receiver left holding a value handed to it: the value goes to the next receiver, or
  // back to the front of the buffer, where it was the oldest.
  void PassOn(internal::Waiter& w) noexcept override {
    auto& node = static_cast<Node&>(w);
    if (!node.receiver || !node.value) return;  // a sender's grant is a delivery: nothing to give back
    std::lock_guard lock(mu_);
    if (internal::Waiter* next = receivers_.PopFront()) {
      static_cast<Node*>(next)->value.emplace(std::move(*node.value));
      GrantLocked(next);
    } else {
      buffer_.push_front(std::move(*node.value));
    }
    node.value.reset();
  }

  static boost::asio::awaitable<bool> Send(Channel* self, Context ctx, T value) {
    ctx.check();
    std::shared_ptr<Node> node;
    bool sent = false;
    {
      std::lock_guard lock(self->mu_);
      if (!self->closed_ && !(sent = self->DeliverLocked(value))) {
        node = std::make_shared<Node>(false);
        node->value.emplace(std::move(value));
        self->senders_.PushBack(node.get());
      }
    }
    if (!node) co_return sent;
    const auto state = co_await self->Await(node, ctx, GrantPolicy::grant_wins);
    co_return state == internal::Waiter::State::granted;
  }

  static boost::asio::awaitable<std::optional<T>> Receive(Channel* self, Context ctx) {
    ctx.check();
    std::shared_ptr<Node> node;
    std::optional<T> value;
    {
      std::lock_guard lock(self->mu_);
      value = self->TakeLocked();
      if (!value && !self->closed_) {
        node = std::make_shared<Node>(true);
        self->receivers_.PushBack(node.get());
      }
    }
    if (!node) co_return value;
    if (co_await self->Await(node, ctx, GrantPolicy::stop_wins) == internal::Waiter::State::closed)
      co_return std::nullopt;
    co_return std::move(node->value);
  }

  const std::size_t capacity_;
  bool closed_ = false;           // guarded by mu_
  Ring buffer_;                   // guarded by mu_
  internal::WaitList senders_;    // guarded by mu_
  internal::WaitList receivers_;  // guarded by mu_
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_CHANNEL_HPP_
