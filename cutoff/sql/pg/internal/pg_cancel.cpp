#include "cutoff/sql/pg/internal/pg_cancel.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace cutoff::sql::internal {
namespace {

// The one thread PQcancel runs on. Jobs complete in order.
class CancelThread {
 public:
  static CancelThread& instance() {
    static CancelThread thread;
    return thread;
  }

  void Submit(std::shared_ptr<PGcancel> cancel, std::function<void()> done) {
    {
      std::lock_guard lock(mu_);
      jobs_.push_back({std::move(cancel), std::move(done)});
    }
    cv_.notify_one();
  }

  std::uint64_t sent() const noexcept { return sent_.load(std::memory_order_relaxed); }

  ~CancelThread() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  struct Job {
    std::shared_ptr<PGcancel> cancel;
    std::function<void()> done;
  };

  CancelThread() : thread_([this] { Run(); }) {}

  void Run() {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      char err[256];
      PQcancel(job.cancel.get(), err, sizeof err);  // a failure leaves the drain grace to act
      sent_.fetch_add(1, std::memory_order_relaxed);
      job.done();
    }
  }

  std::atomic<std::uint64_t> sent_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace

std::shared_ptr<PGcancel> MakeCancelHandle(PGconn* conn) {
  return std::shared_ptr<PGcancel>(PQgetCancel(conn), [](PGcancel* c) {
    if (c) PQfreeCancel(c);
  });
}

void SendCancelRequest(std::shared_ptr<PGcancel> cancel, std::function<void()> done) {
  CancelThread::instance().Submit(std::move(cancel), std::move(done));
}

std::uint64_t CancelRequestsSent() noexcept { return CancelThread::instance().sent(); }

}  // namespace cutoff::sql::internal
