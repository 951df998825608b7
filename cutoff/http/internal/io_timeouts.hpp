// Read and write timeouts without a timer per operation: each connection holds the deadline
// of its pending read or write in a SweptDeadline, and one IoTimeoutSweeper for the whole
// server looks at every connection a few times per shortest timeout and expires those past it.
//
//   c.SetIoDeadline(limits.header_timeout);    // arms c.io_deadline, on the connection's executor
//   co_await c.stream.async_read_some(...);    // cancelled by the sweeper when it is due
//   c.ClearIoDeadline();
//
//   IoTimeoutSweeper sweeper(control, SweepInterval(limits));
//   sweeper.Start(live, owner, [&] { return wound_down; });
#ifndef CUTOFF_HTTP_INTERNAL_IO_TIMEOUTS_HPP_
#define CUTOFF_HTTP_INTERNAL_IO_TIMEOUTS_HPP_

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "cutoff/core/clock.hpp"
#include "cutoff/http/server.hpp"

namespace cutoff::http::internal {

class LiveConnections;

// A deadline the sweeper enforces, in steady-clock nanoseconds since the epoch (0: none). Set
// and cleared on the connection's executor and read by the sweeper on its own, hence atomic;
// relaxed is enough because an expiry is checked again, with Expire(), on the connection's
// executor before it acts.
class SweptDeadline {
 public:
  void SetAfter(Duration timeout) noexcept { SetAt(std::chrono::steady_clock::now() + timeout); }
  void SetAt(std::chrono::steady_clock::time_point at) noexcept {
    at_.store(at.time_since_epoch().count(), std::memory_order_relaxed);
  }
  void Clear() noexcept { at_.store(0, std::memory_order_relaxed); }

  // The pending deadline when it is not after `now` (steady-clock nanoseconds); 0 otherwise.
  std::int64_t DueBy(std::int64_t now) const noexcept {
    const std::int64_t at = at_.load(std::memory_order_relaxed);
    return at != 0 && now >= at ? at : 0;
  }
  // True, and cleared, when `due` (from DueBy) is still the pending deadline: an expiry posted
  // before the operation ended, or before the next one was armed, does nothing.
  bool Expire(std::int64_t due) noexcept {
    if (due == 0 || at_.load(std::memory_order_relaxed) != due) return false;
    at_.store(0, std::memory_order_relaxed);
    return true;
  }

 private:
  std::atomic<std::int64_t> at_{0};
};

// How often the sweeper looks: an eighth of the shortest timeout of `limits`, within 5 ms to
// 250 ms, so a timeout fires at most an eighth late and an idle server wakes rarely.
Duration SweepInterval(const ServerLimits& limits);

// Every interval, posts to each live connection past its io or close deadline the expiry of
// that deadline (Connection::IoExpired, Connection::CloseExpired): one timer for all
// connections instead of one per read. Runs on `executor`; Start() and Stop() are called there.
class IoTimeoutSweeper {
 public:
  IoTimeoutSweeper(boost::asio::any_io_executor executor, Duration interval) : timer_(executor), interval_(interval) {}

  // Sweeps `connections` until Stop(), or until `finished()` is true when a sweep is due.
  // `owner` (which holds `connections` and this sweeper) is kept alive meanwhile.
  void Start(LiveConnections& connections, std::shared_ptr<const void> owner, std::function<bool()> finished);
  void Stop() { timer_.cancel(); }

 private:
  void Schedule(LiveConnections& connections, std::shared_ptr<const void> owner);

  boost::asio::steady_timer timer_;
  const Duration interval_;
  std::function<bool()> finished_;
};

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_IO_TIMEOUTS_HPP_
