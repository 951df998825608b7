#include "cutoff/sql/pool.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/internal/wake_signal.hpp"

namespace cutoff::sql {

namespace asio = boost::asio;

// A caller queued for a connection, woken by a grant (from whichever thread released one).
struct Pool::Waiter : cutoff::internal::WakeSignal {
  std::unique_ptr<Connection> conn;  // a clean idle connection handed over
  bool permit = false;               // or the right to open a new one
  bool granted = false;              // guarded by Pool::mu_
};

Pool::Pool(ConnectionFactory factory, PoolOptions options)
    : factory_(std::move(factory)), options_(options) {
  if (options_.max_size == 0) options_.max_size = 1;
}

Pool::~Pool() = default;

PoolStats Pool::stats() const {
  std::lock_guard lock(mu_);
  PoolStats s = stats_;
  s.idle = idle_.size();
  s.waiting = waiters_.size();
  return s;
}

void Pool::Wake(const std::shared_ptr<Waiter>& w) noexcept { w->Signal(); }

std::shared_ptr<Pool::Waiter> Pool::HandOverLocked(std::unique_ptr<Connection>& conn) {
  if (waiters_.empty()) return nullptr;
  if (conn) {
    auto w = std::move(waiters_.front());
    waiters_.pop_front();
    w->conn = std::move(conn);
    w->granted = true;
    ++stats_.in_use;
    return w;
  }
  if (stats_.open >= options_.max_size) return nullptr;
  auto w = std::move(waiters_.front());
  waiters_.pop_front();
  w->permit = true;
  w->granted = true;
  ++stats_.open;
  ++stats_.in_use;
  stats_.max_open_seen = std::max(stats_.max_open_seen, stats_.open);
  return w;
}

void Pool::Release(std::unique_ptr<Connection> conn) noexcept {
  std::unique_ptr<Connection> doomed;
  std::shared_ptr<Waiter> w;
  {
    std::lock_guard lock(mu_);
    --stats_.in_use;
    if (!conn || !conn->reusable()) {
      // Closing it is the cleanup: the server rolls back whatever was left open.
      doomed = std::move(conn);
      --stats_.open;
      if (doomed) ++stats_.discarded;
      w = HandOverLocked(conn);  // conn is null here: grants a slot
    } else if (!waiters_.empty()) {
      w = HandOverLocked(conn);
    } else {
      idle_.push_back({std::move(conn), std::chrono::steady_clock::now()});
    }
  }
  doomed.reset();  // closes outside the lock
  if (w) Wake(w);
}

asio::awaitable<Pool::Lease> Pool::acquire(const Context& ctx) {
  ctx.check();
  for (;;) {
    std::unique_ptr<Connection> conn;
    std::chrono::steady_clock::time_point idle_since{};
    bool open_new = false;
    std::shared_ptr<Waiter> waiter;
    {
      std::lock_guard lock(mu_);
      if (!idle_.empty()) {
        conn = std::move(idle_.back().conn);  // most recently used: warm, and lets others age out
        idle_since = idle_.back().since;
        idle_.pop_back();
        ++stats_.in_use;
      } else if (stats_.open < options_.max_size) {
        ++stats_.open;
        ++stats_.in_use;
        stats_.max_open_seen = std::max(stats_.max_open_seen, stats_.open);
        open_new = true;
      } else if (waiters_.size() >= options_.max_waiters) {
        ++stats_.rejected;
        throw Error(ErrorCode::overloaded,
                    "connection pool exhausted: " + std::to_string(options_.max_size) + " in use and " +
                        std::to_string(waiters_.size()) + " callers already waiting",
                    ctx.request_id());
      } else {
        waiter = std::make_shared<Waiter>();
        waiters_.push_back(waiter);
      }
    }

    if (waiter) {
      if (ctx.bound()) {
        using namespace asio::experimental::awaitable_operators;
        co_await (waiter->Wait() || async_wait_stop(ctx, asio::as_tuple(asio::use_awaitable)));
      } else {
        co_await waiter->Wait();
      }
      bool granted;
      {
        std::lock_guard lock(mu_);
        granted = waiter->granted;
        if (granted) {
          conn = std::move(waiter->conn);
          open_new = waiter->permit;
          // Handed over straight from its last user: it has not been idle, so no ping.
          idle_since = std::chrono::steady_clock::now();
        } else {
          waiters_.erase(std::find(waiters_.begin(), waiters_.end(), waiter));
          ++stats_.stopped_waiting;
        }
      }
      if (!granted) throw Error::stopped(ctx.stop_reason(), ctx.request_id());
      if (ctx.stop_requested()) {
        Release(std::move(conn));  // a null conn gives the slot back
        throw Error::stopped(ctx.stop_reason(), ctx.request_id());
      }
    }

    if (open_new) {
      std::exception_ptr failure;
      try {
        conn = co_await factory_(ctx);
      } catch (...) {
        failure = std::current_exception();
      }
      if (failure) {
        Release(nullptr);
        std::rethrow_exception(failure);
      }
      {
        std::lock_guard lock(mu_);
        ++stats_.opened;
      }
      co_return Lease(this, std::move(conn));
    }

    Lease lease(this, std::move(conn));
    if (std::chrono::steady_clock::now() - idle_since < options_.health_check_after &&
        lease->reusable())
      co_return lease;
    if (co_await lease->ping(ctx) && lease->reusable()) co_return lease;
    // The lease closes the dead connection on the way out; try the next one.
  }
}

}  // namespace cutoff::sql
