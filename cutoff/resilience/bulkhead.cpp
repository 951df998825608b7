#include "cutoff/resilience/bulkhead.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/core/internal/wake_signal.hpp"

namespace cutoff::resilience {

namespace asio = boost::asio;

// A queued caller. `granted` is set under Bulkhead::mu_ by whoever hands it a slot.
struct Bulkhead::Waiter : cutoff::internal::WakeSignal {
  bool granted = false;
};

// Owns a queued caller's place until it has turned into a permit. Whatever ends the wait (a
// grant, a stop, an Asio cancellation, the frame being destroyed), the place is either
// removed from the queue or, when a slot reached it first, that slot is passed on.
class Bulkhead::QueueGuard {
 public:
  QueueGuard(Bulkhead* owner, std::shared_ptr<Waiter> waiter) : owner_(owner), waiter_(std::move(waiter)) {}
  QueueGuard(const QueueGuard&) = delete;
  QueueGuard& operator=(const QueueGuard&) = delete;
  ~QueueGuard() { leave(); }

  // The caller keeps the slot it was granted.
  void keep() noexcept { waiter_.reset(); }

  void leave() noexcept {
    if (!waiter_) return;
    bool granted;
    {
      std::lock_guard lock(owner_->mu_);
      granted = waiter_->granted;
      if (!granted) {
        auto& q = owner_->waiters_;
        q.erase(std::find(q.begin(), q.end(), waiter_));
        ++owner_->stats_.stopped_waiting;
        if (owner_->rejected_stopped_) owner_->rejected_stopped_->inc();
        owner_->PublishLocked();
      }
    }
    waiter_.reset();
    if (granted) owner_->Release();  // a slot that reached a caller who left goes to the next
  }

 private:
  Bulkhead* owner_;
  std::shared_ptr<Waiter> waiter_;
};

Bulkhead::Bulkhead(BulkheadOptions options) : options_(std::move(options)) {
  if (options_.max_concurrent == 0) options_.max_concurrent = 1;
  if (auto* m = options_.metrics) {
    rejected_full_ = &m->bulkhead_rejected.with({options_.name, "full"});
    rejected_stopped_ = &m->bulkhead_rejected.with({options_.name, "stopped"});
    in_use_gauge_ = &m->bulkhead_in_use.with({options_.name});
    queued_gauge_ = &m->bulkhead_queued.with({options_.name});
  }
}

Bulkhead::~Bulkhead() = default;

BulkheadStats Bulkhead::stats() const {
  std::lock_guard lock(mu_);
  BulkheadStats s = stats_;
  s.queued = waiters_.size();
  return s;
}

void Bulkhead::PublishLocked() noexcept {
  if (in_use_gauge_) in_use_gauge_->set(static_cast<double>(stats_.in_use));
  if (queued_gauge_) queued_gauge_->set(static_cast<double>(waiters_.size()));
}

Bulkhead::Permit Bulkhead::try_acquire() {
  std::lock_guard lock(mu_);
  if (stats_.in_use >= options_.max_concurrent) return Permit();
  ++stats_.in_use;
  ++stats_.admitted;
  stats_.max_in_use_seen = std::max(stats_.max_in_use_seen, stats_.in_use);
  PublishLocked();
  return Permit(this);
}

void Bulkhead::Release() noexcept {
  std::shared_ptr<Waiter> next;
  {
    std::lock_guard lock(mu_);
    if (!waiters_.empty()) {
      // The slot moves to the first waiter: in_use does not change.
      next = std::move(waiters_.front());
      waiters_.pop_front();
      next->granted = true;
    } else {
      --stats_.in_use;
    }
    PublishLocked();
  }
  if (next) next->Signal();
}

asio::awaitable<Bulkhead::Permit> Bulkhead::acquire(const Context& ctx) { return Acquire(this, ctx); }

asio::awaitable<Bulkhead::Permit> Bulkhead::Acquire(Bulkhead* self, Context ctx) {
  ctx.check();
  std::shared_ptr<Waiter> waiter;
  {
    std::lock_guard lock(self->mu_);
    if (self->stats_.in_use < self->options_.max_concurrent) {
      ++self->stats_.in_use;
      ++self->stats_.admitted;
      self->stats_.max_in_use_seen = std::max(self->stats_.max_in_use_seen, self->stats_.in_use);
      self->PublishLocked();
    } else if (self->waiters_.size() >= self->options_.max_queue) {
      ++self->stats_.rejected;
      if (self->rejected_full_) self->rejected_full_->inc();
      throw Error(ErrorCode::overloaded,
                  "bulkhead '" + self->options_.name + "' is full: " + std::to_string(self->stats_.in_use) +
                      " calls running and " + std::to_string(self->waiters_.size()) + " callers waiting",
                  ctx.request_id());
    } else {
      waiter = std::make_shared<Waiter>();
      self->waiters_.push_back(waiter);
      self->PublishLocked();
    }
  }
  if (!waiter) co_return Permit(self);

  QueueGuard guard(self, waiter);
  if (ctx.bound()) {
    using namespace asio::experimental::awaitable_operators;
    co_await (waiter->Wait() || async_wait_stop(ctx, asio::as_tuple(asio::use_awaitable)));
  } else {
    co_await waiter->Wait();
  }
  bool admitted = false;
  {
    std::lock_guard lock(self->mu_);
    // A grant and a stop can land together; the stop wins, so a caller whose budget is gone
    // never starts its call. The slot then goes to the next waiter (guard.leave()).
    if (waiter->granted && !ctx.stop_requested()) {
      guard.keep();
      admitted = true;
      ++self->stats_.admitted;
      self->stats_.max_in_use_seen = std::max(self->stats_.max_in_use_seen, self->stats_.in_use);
    }
  }
  if (admitted) co_return Permit(self);
  guard.leave();
  if (ctx.stop_requested()) throw Error::stopped(ctx.stop_reason(), ctx.request_id());
  // Only an Asio cancellation of the caller's coroutine ends the wait otherwise.
  throw boost::system::system_error(asio::error::operation_aborted);
}

}  // namespace cutoff::resilience
