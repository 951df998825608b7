// Pool: a bounded set of connections whose checkout honours the caller's context.
//
//   cutoff::sql::Pool pool(cutoff::sql::sqlite_factory({.path = "app.db"}), {.max_size = 4});
//   {
//     cutoff::sql::Pool::Lease conn = co_await pool.acquire(ctx);
//     co_await conn->execute(ctx, "select 1", {});
//   }  // back to the pool (or closed, if it is not clean)
//
// - At most `max_size` connections exist at once, opened lazily.
// - A caller that finds none free waits in FIFO order (a cutoff::Semaphore of `max_size`
//   permits, semaphore.hpp); when its context stops while it waits, it leaves the queue at
//   once with deadline_exceeded / cancelled (no connection is taken), and a connection handed
//   to it in that instant goes to the next caller.
// - When `max_waiters` callers already wait, the next fails fast with `overloaded`.
// - `newest_first_after`: once the longest waiter has waited that long, a connection that
//   comes back goes to the newest waiter (Semaphore's newest_first_after): under overload the
//   connections then serve callers with budget left, and the oldest leave at their deadlines
//   without taking one. Off by default (FIFO throughout).
// - With `refuse_doomed_waits`, a caller that would wait fails at once with deadline_exceeded
//   when its budget cannot cover the expected wait plus a typical hold: (k + 1) / max_size
//   holds for the k callers ahead of it, then one of its own, a hold being the recent mean time
//   a lease is kept (an exponential average of the last ~20). Without this, a queue longer
//   than the budgets allow hands each connection to a caller that is about to be cut at its
//   deadline, and under overload nearly every statement is cut part-way: the pool is busy and
//   nothing completes. Refused this way, the excess costs nothing and the callers that get a
//   connection have the time to use it. Off by default: it refuses on an estimate, and a
//   caller whose work is much shorter than the pool's typical hold may be refused although it
//   would have fitted.
// - A connection comes back only if it is clean (no transaction open, nothing in flight, not
//   broken); otherwise it is closed and its slot reopened on demand. An idle connection older
//   than `health_check_after` is pinged before it is handed out.
//
// Thread-safe. The Pool must outlive its leases.
#ifndef CUTOFF_SQL_POOL_HPP_
#define CUTOFF_SQL_POOL_HPP_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "cutoff/core/context.hpp"
#include "cutoff/core/semaphore.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/sql/connection.hpp"

namespace cutoff::sql {

// Opens one connection under the given context.
using ConnectionFactory = std::function<boost::asio::awaitable<std::unique_ptr<Connection>>(const Context&)>;

struct PoolOptions {
  std::size_t max_size = 4;
  std::size_t max_waiters = 256;
  std::chrono::milliseconds health_check_after{30'000};
  bool refuse_doomed_waits = false;               // see above
  Duration newest_first_after = Duration::max();  // see above; max: never
};

struct PoolStats {
  std::size_t open = 0;  // connections that exist (idle + in use + being opened)
  std::size_t idle = 0;
  std::size_t in_use = 0;
  std::size_t waiting = 0;
  std::size_t max_open_seen = 0;  // high-water mark of `open`
  std::uint64_t opened = 0;
  std::uint64_t discarded = 0;        // closed because they came back unclean or failed a ping
  std::uint64_t rejected = 0;         // overloaded: the wait queue was full
  std::uint64_t stopped_waiting = 0;  // left the queue because their context stopped
  std::uint64_t refused_doomed = 0;   // refused before waiting: the budget could not cover it
  Duration mean_hold{};               // recent mean time a lease is kept (zero: none yet)
};

class Pool {
 public:
  class Lease;

  Pool(ConnectionFactory factory, PoolOptions options = {});
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool();

  boost::asio::awaitable<Lease> acquire(const Context& ctx);

  PoolStats stats() const;
  const PoolOptions& options() const noexcept { return options_; }

 private:
  struct Idle {
    std::unique_ptr<Connection> conn;
    std::chrono::steady_clock::time_point since;
  };

  // Takes back a connection that was in use (or, null, one that failed to open): idle when
  // clean, closed otherwise. The caller's slot is given back separately, after this. `held`
  // is how long a lease kept it (zero: no lease, nothing learnt).
  void Release(std::unique_ptr<Connection> conn, Duration held = Duration::zero()) noexcept;
  // Throws deadline_exceeded when `ctx` cannot wait for a connection and use it (see above).
  void RefuseIfDoomed(const Context& ctx);

  ConnectionFactory factory_;
  PoolOptions options_;
  // One permit per connection that may exist: its holder uses an idle connection or opens
  // one. Callers wait for a permit here.
  Semaphore slots_;
  mutable std::mutex mu_;
  std::vector<Idle> idle_;
  PoolStats stats_;  // `waiting` comes from slots_
  double mean_hold_ns_ = 0;
  std::uint64_t holds_ = 0;
  double wait_per_place_ns_ = 0;  // recent waits for a connection, per place in the queue
  std::uint64_t waits_ = 0;
};

// A leased connection. Movable; returns the connection to the pool when destroyed.
class Pool::Lease {
 public:
  Lease() noexcept = default;
  Lease(Lease&&) noexcept = default;
  Lease& operator=(Lease&& other) noexcept {
    reset();
    pool_ = other.pool_;
    conn_ = std::move(other.conn_);
    slot_ = std::move(other.slot_);
    since_ = other.since_;
    return *this;
  }
  ~Lease() { reset(); }

  Connection* operator->() const noexcept { return conn_.get(); }
  Connection& operator*() const noexcept { return *conn_; }
  Connection* get() const noexcept { return conn_.get(); }
  explicit operator bool() const noexcept { return static_cast<bool>(conn_); }

  // Gives the connection back now.
  void reset() noexcept {
    if (!conn_) return;
    pool_->Release(std::move(conn_), std::chrono::steady_clock::now() - since_);
    slot_.release();  // after the connection is idle, so the next caller finds it
  }

 private:
  friend class Pool;
  Lease(Pool* pool, Semaphore::Permit slot, std::unique_ptr<Connection> conn) noexcept
      : pool_(pool), conn_(std::move(conn)), slot_(std::move(slot)), since_(std::chrono::steady_clock::now()) {}

  Pool* pool_ = nullptr;
  std::unique_ptr<Connection> conn_;
  Semaphore::Permit slot_;
  std::chrono::steady_clock::time_point since_{};
};

}  // namespace cutoff::sql

#endif  // CUTOFF_SQL_POOL_HPP_
