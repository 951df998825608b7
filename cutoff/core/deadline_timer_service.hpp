// DeadlineTimerService: turns deadlines into stops, so that checks never read the clock.
//
// When a Context is given a deadline, its state is armed here; when the deadline passes,
// the service requests a stop with `StopReason::deadline_exceeded`. Hot-path checks are then
// a single atomic load of the stop flag.
//
// Production code uses `DeadlineTimerService::global()`, which runs one background thread
// (started on first use). Tests build their own service on a ManualClock without a thread
// and call `fire_due()` after moving the clock:
//
//   cutoff::ManualClock clock;
//   cutoff::DeadlineTimerService timers(clock, cutoff::DeadlineTimerService::Mode::kManual);
//   auto ctx = cutoff::Context::background(timers).with_timeout(100ms);
//   clock.advance(100ms);
//   timers.fire_due();
//   assert(ctx.stop_reason() == cutoff::StopReason::deadline_exceeded);
#ifndef CUTOFF_CORE_DEADLINE_TIMER_SERVICE_HPP_
#define CUTOFF_CORE_DEADLINE_TIMER_SERVICE_HPP_

#include <boost/intrusive/set_hook.hpp>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/internal/stop_state.hpp"

namespace cutoff {

class DeadlineTimerService {
 public:
  enum class Mode {
    kThread,  // a background thread fires deadlines as they pass (needs Clock::steady())
    kManual,  // nothing fires until fire_due() is called
  };

  // One armed deadline. Embedded in the object it stops (no allocation to arm).
  class Entry : public boost::intrusive::set_base_hook<boost::intrusive::link_mode<boost::intrusive::normal_link>> {
   public:
    explicit Entry(internal::StopState* target) noexcept : target_(target) {}
    TimePoint when() const noexcept { return when_; }

   private:
    friend class DeadlineTimerService;
    internal::StopState* target_;
    TimePoint when_{};
    bool armed_ = false;  // guarded by the service's mutex
  };

  explicit DeadlineTimerService(const Clock& clock = Clock::steady(), Mode mode = Mode::kThread);
  DeadlineTimerService(const DeadlineTimerService&) = delete;
  DeadlineTimerService& operator=(const DeadlineTimerService&) = delete;
  ~DeadlineTimerService();

  // The process-wide service on the steady clock. Never destroyed.
  static DeadlineTimerService& global();

  const Clock& clock() const noexcept { return clock_; }

  // Stops `entry`'s target with deadline_exceeded at `when`. The target must stay alive
  // until disarm() returns (the service takes a reference only while firing).
  void arm(Entry& entry, TimePoint when);
  // Safe to call whether or not the entry is armed or has fired.
  void disarm(Entry& entry) noexcept;

  // Fires every entry whose deadline is at or before clock().now(). Returns how many fired.
  std::size_t fire_due();

  // Number of armed entries (for tests and metrics).
  std::size_t armed() const;

 private:
  struct Impl;
  void RunThread();
  void StartThreadLocked();

  const Clock& clock_;
  const Mode mode_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_DEADLINE_TIMER_SERVICE_HPP_
