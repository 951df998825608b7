// Latch: a one-shot countdown that coroutines wait for, with waits that honour their context.
//
//   cutoff::Latch loaded(3);           // three caches to warm
//   for (auto& cache : caches)
//     asio::co_spawn(ex, warm(cache, [&] { loaded.count_down(); }), asio::detached);
//   co_await loaded.wait(ctx);         // all three done, or cutoff::Error when ctx stops
//
// - count_down(n) lowers the count; the call that brings it to zero releases every waiter
//   (each on its own executor) and every later wait() at once. A latch made with 0 is open.
//   Counting below zero is a caller's bug; the latch stays open.
// - wait() follows Event's rules (event.hpp): a waiter whose context stops leaves at once
//   with cutoff::Error::stopped, a caller already stopped fails first, an Asio cancellation
//   fails with operation_aborted. wait() on an open latch is one atomic load.
//
// Thread-safe. The Latch must outlive its waiters.
#ifndef CUTOFF_CORE_LATCH_HPP_
#define CUTOFF_CORE_LATCH_HPP_

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <cstddef>

#include "cutoff/core/context.hpp"
#include "cutoff/core/event.hpp"

namespace cutoff {

class Latch {
 public:
  explicit Latch(std::ptrdiff_t count) noexcept : count_(count), open_(count <= 0) {}
  Latch(const Latch&) = delete;
  Latch& operator=(const Latch&) = delete;

  void count_down(std::ptrdiff_t n = 1) noexcept {
    if (n <= 0) return;
    const std::ptrdiff_t before = count_.fetch_sub(n, std::memory_order_acq_rel);
    if (before > 0 && before - n <= 0) open_.set();
  }
  // Whether the count has reached zero.
  bool try_wait() const noexcept { return open_.is_set(); }
  std::ptrdiff_t count() const noexcept {
    const std::ptrdiff_t c = count_.load(std::memory_order_acquire);
    return c > 0 ? c : 0;
  }

  // Returns once the count is zero. Throws cutoff::Error (the stop's error), or
  // boost::system::system_error(operation_aborted) when cancelled through Asio.
  boost::asio::awaitable<void> wait(const Context& ctx) { return open_.wait(ctx); }

 private:
  std::atomic<std::ptrdiff_t> count_;
  Event open_;
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_LATCH_HPP_
