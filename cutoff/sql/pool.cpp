#include "cutoff/sql/pool.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "cutoff/core/error.hpp"

namespace cutoff::sql {

namespace asio = boost::asio;

Pool::Pool(ConnectionFactory factory, PoolOptions options)
    : factory_(std::move(factory)),
      options_(options),
      slots_(std::max<std::size_t>(options.max_size, 1), options.max_waiters, options.newest_first_after) {
  if (options_.max_size == 0) options_.max_size = 1;
}

Pool::~Pool() = default;

PoolStats Pool::stats() const {
  const std::size_t waiting = slots_.waiting();
  std::lock_guard lock(mu_);
  PoolStats s = stats_;
  s.idle = idle_.size();
  s.mean_hold = Duration(static_cast<Duration::rep>(mean_hold_ns_));
  s.waiting = waiting;
  return s;
}

namespace {

constexpr double kHoldWeight = 0.05;        // of each new hold in the mean: about the last 20
constexpr std::uint64_t kHoldsToJudge = 8;  // holds seen before a wait is judged at all
// Holds vary, and a caller admitted with just enough budget on average is cut half the time,
// after holding a connection for nothing: it must have a quarter more than the estimate.
constexpr double kSpare = 1.25;

std::string Ms(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ns >= 1e8 ? "%.0f" : "%.1f", ns / 1e6);
  return buf;
}

}  // namespace

void Pool::Release(std::unique_ptr<Connection> conn, Duration held) noexcept {
  std::unique_ptr<Connection> doomed;
  {
    std::lock_guard lock(mu_);
    --stats_.in_use;
    if (held > Duration::zero()) {
      const auto ns = static_cast<double>(held.count());
      mean_hold_ns_ = holds_++ == 0 ? ns : mean_hold_ns_ + kHoldWeight * (ns - mean_hold_ns_);
    }
    if (!conn || !conn->reusable()) {
      // Closing it is the cleanup: the server rolls back whatever was left open.
      doomed = std::move(conn);
      --stats_.open;
      if (doomed) ++stats_.discarded;
    } else {
      idle_.push_back({std::move(conn), std::chrono::steady_clock::now()});
    }
  }
  doomed.reset();  // closes outside the lock
}

asio::awaitable<Pool::Lease> Pool::acquire(const Context& ctx) {
  ctx.check();
  Semaphore::Permit slot = slots_.try_acquire();
  if (!slot) {
    if (options_.refuse_doomed_waits) RefuseIfDoomed(ctx);
    const std::size_t ahead = slots_.waiting();
    const auto queued_at = std::chrono::steady_clock::now();
    try {
      slot = co_await slots_.acquire(ctx);
      const auto waited = static_cast<double>((std::chrono::steady_clock::now() - queued_at).count());
      std::lock_guard lock(mu_);
      const double per_place = waited / static_cast<double>(ahead + 1);
      wait_per_place_ns_ =
          waits_++ == 0 ? per_place : wait_per_place_ns_ + kHoldWeight * (per_place - wait_per_place_ns_);
    } catch (...) {
      std::lock_guard lock(mu_);
      const Error* e = find_error(std::current_exception());
      if (e && e->code() == ErrorCode::overloaded) {
        ++stats_.rejected;
        throw Error(ErrorCode::overloaded,
                    "connection pool exhausted: " + std::to_string(options_.max_size) + " in use and " +
                        std::to_string(options_.max_waiters) + " callers already waiting",
                    ctx.request_id());
      }
      ++stats_.stopped_waiting;  // its context stopped, or it was cancelled through Asio
      throw;
    }
  }

  // The slot is ours: an idle connection, or a new one (an idle one exists whenever all the
  // connections the pool may have are open and not in use).
  for (;;) {
    std::unique_ptr<Connection> conn;
    std::chrono::steady_clock::time_point idle_since{};
    {
      std::lock_guard lock(mu_);
      ++stats_.in_use;
      if (!idle_.empty()) {
        conn = std::move(idle_.back().conn);  // most recently used: warm, and lets others age out
        idle_since = idle_.back().since;
        idle_.pop_back();
      } else {
        ++stats_.open;
        stats_.max_open_seen = std::max(stats_.max_open_seen, stats_.open);
      }
    }

    if (!conn) {
      std::exception_ptr failure;
      try {
        conn = co_await factory_(ctx);
      } catch (...) {
        failure = std::current_exception();
      }
      if (failure) {
        Release(nullptr);  // and the slot goes back as `slot` unwinds
        std::rethrow_exception(failure);
      }
      {
        std::lock_guard lock(mu_);
        ++stats_.opened;
      }
      co_return Lease(this, std::move(slot), std::move(conn));
    }

    // Not pinged when idle for less than health_check_after: one handed on by its last user
    // has hardly been idle at all.
    Lease lease(this, std::move(slot), std::move(conn));
    if (std::chrono::steady_clock::now() - idle_since < options_.health_check_after && lease->reusable())
      co_return lease;
    if (co_await lease->ping(ctx) && lease->reusable()) co_return lease;
    // Dead: Release() closes it (unless it says it is still reusable); keep the slot and
    // try the next one.
    Release(std::move(lease.conn_));
    slot = std::move(lease.slot_);
  }
}

void Pool::RefuseIfDoomed(const Context& ctx) {
  if (!ctx.bound() || ctx.deadline().is_never()) return;
  const std::size_t ahead = slots_.waiting();
  std::lock_guard lock(mu_);
  if (holds_ < kHoldsToJudge) return;
  const double n = static_cast<double>(options_.max_size);
  // The wait: measured per place in the queue when callers have waited (it then counts what
  // really holds the connections up, short and long holds alike), else from the mean hold.
  const double per_place = waits_ >= kHoldsToJudge ? wait_per_place_ns_ : mean_hold_ns_ / n;
  const double wait_ns = per_place * static_cast<double>(ahead + 1);
  const double needs_ns = kSpare * (wait_ns + mean_hold_ns_);
  const auto left_ns = static_cast<double>(std::max(ctx.remaining(), Duration::zero()).count());
  if (left_ns >= needs_ns) return;
  ++stats_.refused_doomed;
  throw Error(ErrorCode::deadline_exceeded,
              "connection pool: refused before waiting: needs ~" + Ms(needs_ns) + " ms (~" + Ms(wait_ns) +
                  " ms for one of " + std::to_string(options_.max_size) + " connections with " + std::to_string(ahead) +
                  " callers ahead, then a typical hold of " + Ms(mean_hold_ns_) + " ms), " + Ms(left_ns) + " ms left",
              ctx.request_id());
}

}  // namespace cutoff::sql
