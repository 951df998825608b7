#include "cutoff/core/context.hpp"

#include "cutoff/core/deadline_timer_service.hpp"
#include "cutoff/core/error.hpp"

namespace cutoff {

// The state behind a bound context: its stop state, its deadline, its link to the parent and
// its armed timer, all in one allocation.
struct Context::State final : internal::StopState {
  State(Deadline d, DeadlineTimerService& t) noexcept
      : deadline(d), timers(t), timer_entry(this), parent_link(this) {}

  ~State() override {
    timers.disarm(timer_entry);
    if (parent) parent->remove(&parent_link);
  }

  struct ParentLink : internal::CallbackNode {
    explicit ParentLink(State* o) noexcept : CallbackNode(&Forward), owner(o) {}
    static void Forward(CallbackNode* self, StopReason reason) noexcept {
      static_cast<ParentLink*>(self)->owner->request_stop(reason);
    }
    State* owner;
  };

  const Deadline deadline;
  DeadlineTimerService& timers;
  DeadlineTimerService::Entry timer_entry;
  internal::RefPtr<internal::StopState> parent;  // set only while parent_link is registered
  ParentLink parent_link;
};

namespace {
const RequestValues& EmptyValues() noexcept {
  static const RequestValues empty;
  return empty;
}
}  // namespace

Context Context::background(DeadlineTimerService& timers) noexcept { return Context({}, {}, &timers); }

DeadlineTimerService& Context::timers() const noexcept {
  return timers_ ? *timers_ : DeadlineTimerService::global();
}

const Clock& Context::clock() const noexcept { return timers().clock(); }

Deadline Context::deadline() const noexcept {
  return state_ ? static_cast<const State*>(state_.get())->deadline : Deadline::never();
}

Duration Context::remaining() const noexcept { return deadline().remaining(clock()); }

const RequestValues& Context::values() const noexcept { return values_ ? *values_ : EmptyValues(); }

Context Context::MakeChild(Deadline d, bool linked_to_parent) const {
  DeadlineTimerService& service = timers();
  auto* raw = new State(d, service);
  auto state = internal::RefPtr<internal::StopState>::adopt(raw);
  if (linked_to_parent && state_) {
    // If the parent is already stopped, add() runs the link now and stops the child.
    if (state_->add(&raw->parent_link)) raw->parent = state_;
  }
  if (!raw->stop_requested() && !d.is_never()) {
    const TimePoint now = service.clock().now();
    if (d.expired_at(now)) {
      raw->request_stop(StopReason::deadline_exceeded);
    } else if (!linked_to_parent || d < deadline()) {
      // A child whose deadline equals its parent's is stopped by the parent's timer.
      service.arm(raw->timer_entry, d.time_point());
    }
  }
  return Context(std::move(state), values_, timers_);
}

Context Context::with_deadline(Deadline d) const {
  const Deadline current = deadline();
  if (!(d < current)) return *this;
  return MakeChild(d, /*linked_to_parent=*/true);
}

std::pair<Context, CancelSource> Context::with_cancel(Deadline d) const {
  Context child = MakeChild(min(deadline(), d), /*linked_to_parent=*/true);
  CancelSource source(child.state_);
  return {std::move(child), std::move(source)};
}

Context Context::detached_until(Deadline d) const { return MakeChild(d, /*linked_to_parent=*/false); }

Context Context::with_values(RequestValues values) const {
  return Context(state_, std::make_shared<const RequestValues>(std::move(values)), timers_);
}

Context Context::with_values(std::shared_ptr<const RequestValues> values) const {
  return Context(state_, std::move(values), timers_);
}

Context Context::with_request_id(std::string id) const {
  RequestValues v = values();
  v.request_id = std::move(id);
  return with_values(std::move(v));
}

Context Context::with_operation(std::string name) const {
  RequestValues v = values();
  v.operation = std::move(name);
  return with_values(std::move(v));
}

Context Context::with_trace(TraceContext trace) const {
  RequestValues v = values();
  v.trace = std::move(trace);
  return with_values(std::move(v));
}

Context Context::with_commit_ledger(std::shared_ptr<CommitLedger> ledger) const {
  RequestValues v = values();
  v.commits = std::move(ledger);
  return with_values(std::move(v));
}

void Context::ThrowStopped() const { throw Error::stopped(stop_reason(), request_id()); }

}  // namespace cutoff
