// ServiceTimeAdmission: refuses work that cannot finish before its deadline, before it starts.
//
//   cutoff::resilience::ServiceTimeAdmission admission({.quantile = 0.1, .metrics = &metrics});
//   auto ticket = admission.admit(ctx, "GetStock");  // throws deadline_exceeded when doomed
//   Stock s = co_await fetch_stock(ctx);
//   ticket.completed();                              // one service-time sample
//   // or, the same in one call:
//   Stock s = co_await admission.run(ctx, "GetStock", [&](const cutoff::Context& c) { return fetch_stock(c); });
//
// `http::RouteOptions::admission` and `ops::InvokerOptions::admission` do this per route and per
// operation, before the handler runs.
//
// For each key (a route or operation name that the service registers, never text from a
// request) it keeps the service times of the latest `max_samples` runs that completed, forgets
// those older than `max_age`, and estimates their `quantile`. `admit` refuses a context whose
// remaining budget is below `factor` times that estimate, with cutoff::Error
// `deadline_exceeded`:
//
//   refused before starting: GetStock needs ~120 ms (p10 of the last 57 runs), 80 ms left
//
// so the request fails at once instead of taking a slot or a connection and being cut at its
// deadline.
//
// - No estimate, no refusal: a key refuses nothing until it holds `min_samples` recent samples.
// - Unbound contexts (no deadline) are never refused, and admitting them takes no lock; their
//   runs are still timed (one clock read at each end) and recorded, because their service
//   time is as good a sample as any.
// - The quantile says how sure a refusal is: below the q-quantile, fewer than a share q of the
//   recent runs would have fitted in the budget left. The default, p10, refuses only requests
//   that nine in ten recent runs would have missed, so a route whose requests vary in cost
//   (cheap and expensive queries on one path) does not refuse its cheap ones.
// - Metastability: a key that refuses everything receives no new samples, and a stale estimate
//   would refuse forever. Two guards: samples expire after `max_age` (with fewer than
//   `min_samples` left, refusals stop), and one doomed-looking request per `probe_interval`
//   runs anyway as a probe, so a service that has recovered shows it within a few probes.
// - Stopped runs (deadline, cancel, shutdown) are censored: the work took at least as long as
//   it ran. Such a time is evidence only while fewer than `min_samples` recent runs completed,
//   and only when it is at or above the current estimate (a lower bound above the estimate can
//   only raise it); otherwise it is dropped. Once runs complete, their times are the evidence:
//   under overload most stopped runs were waiting (for a connection, behind others), and
//   counting those waits as service time would raise the estimate until everything is
//   refused. Failures record nothing: how long a failure took says nothing of how long the
//   work takes.
// - `dry_run` judges and counts, and refuses nothing: for watching what it would do first.
// - Memory is bounded: at most `max_keys` keys (further names are never refused and learn
//   nothing), at most `max_samples` samples each.
//
// Thread-safe (one mutex per key, one for the set of keys). The clock is injectable, for tests.
// The admission must outlive its keys' users and tickets.
#ifndef CUTOFF_RESILIENCE_SERVICE_TIME_ADMISSION_HPP_
#define CUTOFF_RESILIENCE_SERVICE_TIME_ADMISSION_HPP_

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/resilience/internal/awaitable_value.hpp"
#include "cutoff/resilience/metrics.hpp"

namespace cutoff::resilience {

struct ServiceTimeAdmissionOptions {
  // The estimate is this quantile (in [0, 1]) of the recent service times; a request is
  // refused when its remaining budget is below `factor` (> 0) times the estimate.
  double quantile = 0.1;
  double factor = 1.0;
  std::size_t min_samples = 20;                 // recent samples a key needs before it refuses
  std::size_t max_samples = 128;                // samples kept per key (the latest), 1 to 4096
  Duration max_age = std::chrono::seconds(10);  // older samples are forgotten
  // Per key, one request that would be refused runs anyway (a probe) when this long has passed
  // since the last probe. Zero: no probes (expiry alone ends a stale estimate).
  Duration probe_interval = std::chrono::milliseconds(250);
  std::size_t max_keys = 1024;   // keys tracked; further names are never refused
  bool dry_run = false;          // judge and count, refuse nothing
  const Clock* clock = nullptr;  // measures service times and ages; null: Clock::steady()
  ResilienceMetrics* metrics = nullptr;
};

struct ServiceTimeAdmissionStats {
  std::uint64_t refused = 0;           // deadline_exceeded before starting
  std::uint64_t probes = 0;            // doomed-looking requests let through as probes
  std::uint64_t dry_run = 0;           // doomed-looking requests let through by dry_run
  std::uint64_t samples = 0;           // completed runs recorded
  std::uint64_t censored_kept = 0;     // stopped runs recorded (see above)
  std::uint64_t censored_dropped = 0;  // stopped runs dropped
  std::size_t keys = 0;                // keys tracked
  std::uint64_t untracked = 0;         // lookups of new names refused because max_keys were taken
};

class ServiceTimeAdmission {
 public:
  // One key's samples and estimate. Stable for the admission's lifetime; opaque.
  class Key;

  // One admitted run. Tell it how the run ended; dropped untold (a failure), it records
  // nothing. Movable.
  class Ticket {
   public:
    Ticket() noexcept = default;  // records nothing
    Ticket(Ticket&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)),
          key_(other.key_),
          started_(other.started_),
          probe_(other.probe_) {}
    Ticket& operator=(Ticket&& other) noexcept {
      owner_ = std::exchange(other.owner_, nullptr);
      key_ = other.key_;
      started_ = other.started_;
      probe_ = other.probe_;
      return *this;
    }
    ~Ticket() = default;

    // The run completed: its time since admit() is a sample.
    void completed() noexcept {
      if (auto* a = std::exchange(owner_, nullptr)) a->Finish(key_, started_, /*stopped=*/false);
    }
    // The run was stopped (deadline, cancel, shutdown): a censored sample (see above).
    void stopped() noexcept {
      if (auto* a = std::exchange(owner_, nullptr)) a->Finish(key_, started_, /*stopped=*/true);
    }
    // Whether it was let through as a probe although it looked doomed.
    bool probe() const noexcept { return probe_; }

   private:
    friend class ServiceTimeAdmission;
    Ticket(ServiceTimeAdmission* owner, Key* key, TimePoint started, bool probe) noexcept
        : owner_(owner), key_(key), started_(started), probe_(probe) {}
    ServiceTimeAdmission* owner_ = nullptr;
    Key* key_ = nullptr;
    TimePoint started_{};
    bool probe_ = false;
  };

  explicit ServiceTimeAdmission(ServiceTimeAdmissionOptions options = {});
  ~ServiceTimeAdmission();
  ServiceTimeAdmission(const ServiceTimeAdmission&) = delete;
  ServiceTimeAdmission& operator=(const ServiceTimeAdmission&) = delete;

  // The key for `name`, created on first use; null once `max_keys` keys exist (that name is
  // then never refused). Look keys up once, where routes and operations are registered.
  Key* key(std::string_view name);

  // A ticket for one run, or cutoff::Error deadline_exceeded (with the request id) when the
  // context's remaining budget is below the key's estimate, or the stop's error when `ctx`
  // has already stopped. A null key admits without timing anything.
  Ticket admit(const Context& ctx, Key* key);
  Ticket admit(const Context& ctx, std::string_view name) { return admit(ctx, key(name)); }
  // The same for a caller that has not bound its context yet: `remaining` is the budget it is
  // about to bind (Duration::max(): none), `request_id` goes into the error.
  Ticket admit(Duration remaining, Key* key, std::string_view request_id = {});

  // Admits, runs `f(ctx)` and records its service time: a completion as a sample, a stop of
  // `ctx` as a censored one, any other failure not at all.
  template <typename F>
  boost::asio::awaitable<internal::CallResult<F>> run(const Context& ctx, Key* key, F f) {
    return Run(this, ctx, key, std::move(f));
  }
  template <typename F>
  boost::asio::awaitable<internal::CallResult<F>> run(const Context& ctx, std::string_view name, F f) {
    return Run(this, ctx, key(name), std::move(f));
  }

  // For work timed by the caller: a completed run's service time, or (`stopped`) how long a
  // stopped run ran.
  void record(Key* key, Duration service_time) noexcept;
  void record_stopped(Key* key, Duration ran_for) noexcept;

  // The key's estimate now (before `factor`): nullopt with fewer than `min_samples` recent
  // samples, or for an unknown name.
  std::optional<Duration> estimate(std::string_view name) const;
  // Samples of `name` younger than `max_age`.
  std::size_t recent_samples(std::string_view name) const;

  ServiceTimeAdmissionStats stats() const noexcept;
  const ServiceTimeAdmissionOptions& options() const noexcept { return options_; }

 private:
  template <typename F>
  static boost::asio::awaitable<internal::CallResult<F>> Run(ServiceTimeAdmission* self, Context ctx, Key* key, F f) {
    Ticket ticket = self->admit(ctx, key);
    try {
      if constexpr (std::is_void_v<internal::CallResult<F>>) {
        co_await f(ctx);
        ticket.completed();
        co_return;
      } else {
        auto value = co_await f(ctx);
        ticket.completed();
        co_return std::move(value);
      }
    } catch (...) {
      if (ctx.stop_requested()) ticket.stopped();
      throw;
    }
  }

  Ticket Admit(Duration remaining, Key* key, std::string_view request_id);
  void Finish(Key* key, TimePoint started, bool stopped) noexcept;
  void Record(Key& key, TimePoint now, Duration took, bool stopped) noexcept;
  Key* Find(std::string_view name) const;

  ServiceTimeAdmissionOptions options_;
  const Clock& clock_;
  mutable std::mutex keys_mu_;
  std::map<std::string, std::unique_ptr<Key>, std::less<>> keys_;
  std::atomic<std::uint64_t> refused_{0}, probes_{0}, dry_run_{0}, samples_{0}, censored_kept_{0}, censored_dropped_{0},
      untracked_{0};
};

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_SERVICE_TIME_ADMISSION_HPP_
