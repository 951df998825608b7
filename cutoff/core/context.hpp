// Context: a request's deadline, its stop signal and its identity, passed explicitly.
//
// A Context is bound once where a request enters and handed down to everything that works
// for it. Children can only tighten: a child's deadline is the `min` of its parent's and its
// own, and a child stops (with the parent's reason) when its parent stops. `detached()` makes
// the context for an effect region: same request values, no inherited cancellation, its own
// short deadline.
//
//   auto [ctx, stop] = cutoff::Context::background()
//                          .with_request_id("req-42")
//                          .with_cancel(cutoff::Deadline::after(250ms));
//   auto field = ctx.with_timeout(120ms);   // min(remaining, 120ms)
//   field.check();                          // throws cutoff::Error when stopped
//   if (field.stop_requested()) return;     // one atomic load, never reads the clock
//   stop.request_stop(cutoff::StopReason::cancelled);  // the client went away
//
// Copies are cheap (reference counts). A default-constructed Context is unbound: it never
// stops, and checking it is a single pointer test. Contexts are thread-safe to share.
#ifndef CUTOFF_CORE_CONTEXT_HPP_
#define CUTOFF_CORE_CONTEXT_HPP_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "cutoff/core/cancel.hpp"
#include "cutoff/core/clock.hpp"
#include "cutoff/core/commit_ledger.hpp"
#include "cutoff/core/deadline.hpp"
#include "cutoff/core/internal/stop_state.hpp"
#include "cutoff/core/stop_reason.hpp"

namespace cutoff {

class DeadlineTimerService;

// W3C trace context, carried verbatim; parsing and validation belong to the observe module.
struct TraceContext {
  std::string traceparent;
  std::string tracestate;
};

// When the response to a request went out. The server that answers sets it once; backends
// still working for the request after that moment (a statement holding a pooled connection)
// measure how long they outlived it: orphaned work.
class ResponseMark {
 public:
  // The first call wins.
  void mark_sent(TimePoint at) noexcept {
    TimePoint::rep expected = 0;
    at_.compare_exchange_strong(expected, std::max<TimePoint::rep>(at.time_since_epoch().count(), 1),
                                std::memory_order_release, std::memory_order_relaxed);
  }
  // Clears the mark, for reuse by the next request of a connection.
  void reset() noexcept { at_.store(0, std::memory_order_relaxed); }
  std::optional<TimePoint> sent() const noexcept {
    const auto v = at_.load(std::memory_order_acquire);
    if (v == 0) return std::nullopt;
    return TimePoint(TimePoint::duration(v));
  }

 private:
  std::atomic<TimePoint::rep> at_{0};
};

// Identity of the request a context works for. Shared (not copied) by children.
struct RequestValues {
  std::string request_id;
  std::string operation;
  TraceContext trace;
  std::shared_ptr<ResponseMark> response;  // null: nobody marks the response (no server)
  std::shared_ptr<CommitLedger> commits;   // null: nobody asks what was committed
};

class Context {
 public:
  // Unbound: never stops, no values, uses the global deadline timer service.
  Context() noexcept = default;

  static Context background() noexcept { return Context(); }
  // Unbound, but children's deadlines are measured on `timers.clock()` and fired by `timers`.
  static Context background(DeadlineTimerService& timers) noexcept;

  // A child whose deadline is min(this deadline, d). Returns a copy of this context when `d`
  // does not tighten anything. A deadline already passed gives a child that is already
  // stopped with deadline_exceeded (entry fail-fast).
  Context with_deadline(Deadline d) const;
  template <typename Rep, typename Period>
  Context with_timeout(std::chrono::duration<Rep, Period> timeout) const {
    return with_deadline(Deadline::after(timeout, clock()));
  }

  // A child that can also be stopped on its own through the returned source (e.g. when the
  // client disconnects). Stopping it does not stop the parent.
  std::pair<Context, CancelSource> with_cancel(Deadline d = Deadline::never()) const;

  // For effect regions: the same request values, none of this context's cancellation, and a
  // fresh deadline `timeout` from now.
  template <typename Rep, typename Period>
  Context detached(std::chrono::duration<Rep, Period> timeout) const {
    return detached_until(Deadline::after(timeout, clock()));
  }
  Context detached_until(Deadline d) const;

  // Replace request values; the stop state is shared with this context.
  Context with_values(RequestValues values) const;
  // The same with values already allocated (a server reusing one set per connection).
  Context with_values(std::shared_ptr<const RequestValues> values) const;
  Context with_request_id(std::string id) const;
  Context with_operation(std::string name) const;
  Context with_trace(TraceContext trace) const;
  Context with_commit_ledger(std::shared_ptr<CommitLedger> ledger) const;
  // The invocation's ledger; null when none was attached.
  CommitLedger* commit_ledger() const noexcept { return values().commits.get(); }

  // The hot-path check: one pointer test when unbound, plus one acquire load when bound.
  bool stop_requested() const noexcept { return state_ && state_->stop_requested(); }
  StopReason stop_reason() const noexcept { return state_ ? state_->reason() : StopReason::none; }

  // Throws `Error::stopped(reason)` (with the request id) when stopped.
  void check() const {
    if (stop_requested()) [[unlikely]]
      ThrowStopped();
  }

  // Whether this context can ever stop (a deadline or a cancel source is bound somewhere).
  bool bound() const noexcept { return static_cast<bool>(state_); }
  Deadline deadline() const noexcept;
  // Time left on this context's clock, clamped at zero; Duration::max() when no deadline.
  Duration remaining() const noexcept;

  CancelToken token() const noexcept { return CancelToken(state_); }
  const RequestValues& values() const noexcept;
  const std::string& request_id() const noexcept { return values().request_id; }
  const std::string& operation() const noexcept { return values().operation; }

  DeadlineTimerService& timers() const noexcept;
  const Clock& clock() const noexcept;

 private:
  struct State;
  Context(internal::RefPtr<internal::StopState> state, std::shared_ptr<const RequestValues> values,
          DeadlineTimerService* timers) noexcept
      : state_(std::move(state)), values_(std::move(values)), timers_(timers) {}

  Context MakeChild(Deadline d, bool linked_to_parent) const;
  [[noreturn]] void ThrowStopped() const;

  internal::RefPtr<internal::StopState> state_;   // null: unbound
  std::shared_ptr<const RequestValues> values_;   // null: empty values
  DeadlineTimerService* timers_ = nullptr;        // null: DeadlineTimerService::global()
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_CONTEXT_HPP_
