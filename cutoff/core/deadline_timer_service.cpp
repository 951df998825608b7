#include "cutoff/core/deadline_timer_service.hpp"

#include <boost/intrusive/set.hpp>
#include <vector>

namespace cutoff {
namespace {

struct ByWhen {
  bool operator()(const DeadlineTimerService::Entry& a, const DeadlineTimerService::Entry& b) const noexcept {
    return a.when() < b.when();
  }
};

using EntrySet = boost::intrusive::multiset<DeadlineTimerService::Entry, boost::intrusive::compare<ByWhen>,
                                            boost::intrusive::constant_time_size<true>>;

}  // namespace

struct DeadlineTimerService::Impl {
  mutable std::mutex mu;
  std::condition_variable cv;
  EntrySet entries;
  // The time the thread sleeps until; TimePoint::min() while it is awake and will look at
  // the set again before sleeping. An arm earlier than this must wake it.
  TimePoint wake_target = TimePoint::max();
  bool thread_started = false;
  bool stopping = false;
  std::thread thread;
};

DeadlineTimerService::DeadlineTimerService(const Clock& clock, Mode mode)
    : clock_(clock), mode_(mode), impl_(std::make_unique<Impl>()) {}

DeadlineTimerService::~DeadlineTimerService() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
    for (auto& e : impl_->entries) e.armed_ = false;
    impl_->entries.clear();
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

DeadlineTimerService& DeadlineTimerService::global() {
  // Deliberately leaked: contexts may outlive static destruction order.
  static DeadlineTimerService* service = new DeadlineTimerService(Clock::steady(), Mode::kThread);
  return *service;
}

void DeadlineTimerService::arm(Entry& entry, TimePoint when) {
  bool wake = false;
  {
    std::lock_guard lock(impl_->mu);
    if (entry.armed_) impl_->entries.erase(impl_->entries.iterator_to(entry));
    entry.when_ = when;
    entry.armed_ = true;
    impl_->entries.insert(entry);
    if (mode_ == Mode::kThread) {
      if (!impl_->thread_started) StartThreadLocked();
      wake = when < impl_->wake_target;
    }
  }
  if (wake) impl_->cv.notify_one();
}

void DeadlineTimerService::disarm(Entry& entry) noexcept {
  std::lock_guard lock(impl_->mu);
  if (!entry.armed_) return;
  impl_->entries.erase(impl_->entries.iterator_to(entry));
  entry.armed_ = false;
}

std::size_t DeadlineTimerService::armed() const {
  std::lock_guard lock(impl_->mu);
  return impl_->entries.size();
}

std::size_t DeadlineTimerService::fire_due() {
  std::vector<internal::RefPtr<internal::StopState>> due;
  {
    std::lock_guard lock(impl_->mu);
    const TimePoint now = clock_.now();
    while (!impl_->entries.empty() && impl_->entries.begin()->when_ <= now) {
      Entry& e = *impl_->entries.begin();
      impl_->entries.erase(impl_->entries.begin());
      e.armed_ = false;
      // A target whose count reached zero is being destroyed: it no longer needs a stop.
      if (e.target_->try_add_ref()) due.push_back(internal::RefPtr<internal::StopState>::adopt(e.target_));
    }
  }
  // Outside the lock: callbacks may create or destroy contexts, which arm and disarm.
  for (auto& s : due) s->request_stop(StopReason::deadline_exceeded);
  return due.size();
}

void DeadlineTimerService::StartThreadLocked() {
  impl_->thread_started = true;
  impl_->thread = std::thread([this] { RunThread(); });
}

void DeadlineTimerService::RunThread() {
  std::unique_lock lock(impl_->mu);
  while (!impl_->stopping) {
    if (impl_->entries.empty()) {
      impl_->wake_target = TimePoint::max();
      impl_->cv.wait(lock);
      impl_->wake_target = TimePoint::min();
      continue;
    }
    const TimePoint next = impl_->entries.begin()->when_;
    if (next > clock_.now()) {
      impl_->wake_target = next;
      impl_->cv.wait_until(lock, next);
      impl_->wake_target = TimePoint::min();
      continue;
    }
    lock.unlock();
    fire_due();
    lock.lock();
  }
}

}  // namespace cutoff
