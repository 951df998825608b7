#include "cutoff/sql/pool.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include "cutoff/core/error.hpp"

namespace cutoff::sql {

namespace asio = boost::asio;

Pool::Pool(ConnectionFactory factory, PoolOptions options)
    : factory_(std::move(factory)),
      options_(options),
      slots_(std::max<std::size_t>(options.max_size, 1), options.max_waiters) {
  if (options_.max_size == 0) options_.max_size = 1;
}

Pool::~Pool() = default;

PoolStats Pool::stats() const {
  const std::size_t waiting = slots_.waiting();
  std::lock_guard lock(mu_);
  PoolStats s = stats_;
  s.idle = idle_.size();
  s.waiting = waiting;
  return s;
}

void Pool::Release(std::unique_ptr<Connection> conn) noexcept {
  std::unique_ptr<Connection> doomed;
  {
    std::lock_guard lock(mu_);
    --stats_.in_use;
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
    try {
      slot = co_await slots_.acquire(ctx);
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

}  // namespace cutoff::sql
