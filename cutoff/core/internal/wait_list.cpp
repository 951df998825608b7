#include "cutoff/core/internal/wait_list.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include "cutoff/core/cancel.hpp"
#include "cutoff/core/error.hpp"

namespace cutoff::internal {

namespace asio = boost::asio;

void Waiter::Wake() noexcept {
  std::lock_guard lock(wake_mu_);
  if (woken_) return;
  woken_ = true;
  // The timer lives in the waiting frame and belongs to its executor: only touch it there,
  // and only if the frame is still waiting when the post runs.
  if (timer_)
    asio::post(executor_, [self = shared_from_this()] {
      std::lock_guard inner(self->wake_mu_);
      if (self->timer_) self->timer_->cancel();
    });
}

void WaitList::PushBack(Waiter* w) noexcept {
  w->list_ = this;
  w->next_ = nullptr;
  w->prev_ = tail_;
  if (tail_) tail_->next_ = w;
  else head_ = w;
  tail_ = w;
  ++size_;
}

Waiter* WaitList::PopFront() noexcept {
  Waiter* w = head_;
  if (w) Remove(w);
  return w;
}

Waiter* WaitList::PopBack() noexcept {
  Waiter* w = tail_;
  if (w) Remove(w);
  return w;
}

void WaitList::Remove(Waiter* w) noexcept {
  if (w->prev_) w->prev_->next_ = w->next_;
  else head_ = w->next_;
  if (w->next_) w->next_->prev_ = w->prev_;
  else tail_ = w->prev_;
  w->prev_ = w->next_ = nullptr;
  w->list_ = nullptr;
  --size_;
}

void WaitOwner::StopLocked(Waiter& w, StopReason reason) noexcept {
  if (w.state != Waiter::State::queued) return;  // granted or closed first: the waiter decides
  WaitList* list = w.list_;
  list->Remove(&w);
  w.state = Waiter::State::stopped;
  w.stop = reason;
  LeftLocked(*list);
  w.Wake();
}

Waiter::State WaitOwner::SettleLocked(Waiter& w) noexcept {
  if (w.state == Waiter::State::queued) {
    WaitList* list = w.list_;
    list->Remove(&w);
    w.state = Waiter::State::left;
    LeftLocked(*list);
  }
  return w.state;
}

// Owns the queued waiter's place until the wait has settled: whatever ends the wait early
// (an exception, the frame destroyed while suspended), the waiter leaves its list, or passes
// on a grant that reached it.
class WaitOwner::Departure {
 public:
  Departure(WaitOwner* owner, Waiter* w) noexcept : owner_(owner), w_(w) {}
  Departure(const Departure&) = delete;
  Departure& operator=(const Departure&) = delete;
  ~Departure() {
    if (!w_) return;
    Waiter::State state;
    {
      std::lock_guard lock(owner_->mu_);
      state = owner_->SettleLocked(*w_);
    }
    if (state == Waiter::State::granted) owner_->PassOn(*w_);
  }
  void settled() noexcept { w_ = nullptr; }

 private:
  WaitOwner* owner_;
  Waiter* w_;
};

namespace {

// Forgets the frame's timer (and its executor) when the wait ends, however it ends.
struct TimerRegistration {
  std::mutex& mu;
  boost::asio::steady_timer*& timer;
  boost::asio::any_io_executor& executor;
  ~TimerRegistration() {
    std::lock_guard lock(mu);
    timer = nullptr;
    executor = {};
  }
};

}  // namespace

asio::awaitable<Waiter::State> WaitOwner::Await(std::shared_ptr<Waiter> w, const Context& ctx, GrantPolicy policy) {
  Departure departure(this, w.get());
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor, asio::steady_timer::time_point::max());
  {
    // Runs at once, here, when the context stopped after the caller's check; otherwise on the
    // stopping thread. Either way the waiter leaves its list under mu_ right away.
    CancelCallback on_stop(ctx.token(), [this, raw = w.get()](StopReason reason) noexcept {
      std::lock_guard lock(mu_);
      StopLocked(*raw, reason);
    });
    bool woken;
    {
      std::lock_guard lock(w->wake_mu_);
      woken = w->woken_;
      if (!woken) {
        w->timer_ = &timer;
        w->executor_ = executor;
      }
    }
    if (!woken) {
      TimerRegistration registration{w->wake_mu_, w->timer_, w->executor_};
      co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }
  }  // on_stop is gone: no stop callback touches `w` after this point

  // The wake and an Asio cancellation both end the timer's wait; the coroutine's own state
  // says whether it was cancelled.
  const bool cancelled = (co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none;
  Waiter::State state;
  {
    std::lock_guard lock(mu_);
    state = SettleLocked(*w);
  }
  departure.settled();

  if (state == Waiter::State::granted && policy == GrantPolicy::grant_wins) co_return state;
  const bool stopped = ctx.stop_requested();
  // A grant that landed together with a stop or a cancellation goes to the next waiter.
  if (state == Waiter::State::granted && (stopped || cancelled)) PassOn(*w);
  if (state == Waiter::State::stopped) throw Error::stopped(w->stop, ctx.request_id());
  if (stopped) throw Error::stopped(ctx.stop_reason(), ctx.request_id());
  if (cancelled || state == Waiter::State::left) throw boost::system::system_error(asio::error::operation_aborted);
  co_return state;
}

}  // namespace cutoff::internal
