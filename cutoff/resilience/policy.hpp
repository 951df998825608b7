// Policy: one dependency's resilience pieces, owned together and composed in the fixed order;
// PolicySet: a client's policies, one per dependency it calls.
//
//   cutoff::resilience::ResilienceMetrics metrics(registry);
//   cutoff::resilience::Policy inventory("inventory",
//                                        {.attempt_timeout = 500ms,
//                                         .retry = {.max_attempts = 3, .budget_ratio = 0.1},
//                                         .bulkhead = {.max_concurrent = 64, .max_queue = 256},
//                                         .breaker = cutoff::resilience::BreakerOptions{}},
//                                        &metrics);
//   Stock s = co_await inventory.run(ctx, [&](const cutoff::Context& attempt) { return fetch(attempt); });
//
// PolicyOptions are plain values, so a service can fill them from its flags; the Policy builds
// and owns what they describe (the bulkhead, the breaker, the retry budget) and runs calls
// through a Pipeline (pipeline.hpp): deadline gate → bulkhead → breaker → throttle → retry →
// [hedge] → attempt timeout → call. Every piece is off unless configured, except the retry budget, which
// is on whenever retries are: per-call attempt limits alone let retries multiply the load on a
// dependency exactly when it fails for everyone.
//
// A PolicySet gives each dependency (a key such as "host:port") a Policy of its own, built on
// first use from the options named for it or from the defaults. Keys come from the code's own
// configuration, but the set is bounded anyway (`max_policies`): past it, new keys share one
// overflow policy, labelled "other", instead of growing memory and metric series.
//
// Thread-safe; a Policy must outlive the calls running through it.
#ifndef CUTOFF_RESILIENCE_POLICY_HPP_
#define CUTOFF_RESILIENCE_POLICY_HPP_

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cutoff/core/clock.hpp"
#include "cutoff/resilience/backoff.hpp"
#include "cutoff/resilience/bulkhead.hpp"
#include "cutoff/resilience/circuit_breaker.hpp"
#include "cutoff/resilience/hedge.hpp"
#include "cutoff/resilience/metrics.hpp"
#include "cutoff/resilience/pipeline.hpp"
#include "cutoff/resilience/retry_budget.hpp"
#include "cutoff/resilience/throttle.hpp"

namespace cutoff::resilience {

struct RetryPolicy {
  int max_attempts = 1;  // including the first; 1: no retries
  BackoffOptions backoff{};
  Duration min_attempt_time = Duration::zero();  // a retry is not started with less left
  // The longest server pushback (Retry-After, grpc-retry-pushback-ms) a retry waits for; a
  // longer one ends the call with the server's answer (retry.hpp).
  Duration max_pushback = std::chrono::seconds(30);
  // The retry budget shared by every call through the policy (retry_budget.hpp): over any
  // `budget_window`, at most budget_ratio * calls + budget_min_per_second * window retries.
  // A negative ratio turns the budget off: only max_attempts bounds the retries.
  double budget_ratio = 0.1;
  double budget_min_per_second = 10;
  Duration budget_window = std::chrono::seconds(10);
};

struct BulkheadPolicy {
  std::size_t max_concurrent = 0;  // calls running at once; 0: no bulkhead
  std::size_t max_queue = 64;      // callers waiting for one of them (they leave at their deadline)
};

struct PolicyOptions {
  Duration attempt_timeout = Duration::zero();  // per attempt, min(remaining, this); zero: none
  RetryPolicy retry{};
  BulkheadPolicy bulkhead{};
  std::optional<BreakerOptions> breaker;  // none: no breaker
  std::optional<ThrottleOptions> throttle;  // none: no client-side throttling (throttle.hpp)
  std::optional<HedgeOptions> hedge;      // none: no hedging (only calls that allow it are hedged)
  const Clock* clock = nullptr;           // for the breaker and the retry budget; null: steady
};

class Policy {
 public:
  Policy(std::string name, PolicyOptions options, ResilienceMetrics* metrics = nullptr);
  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;
  ~Policy();

  // `f(const Context& attempt)` returns boost::asio::awaitable<T>; see Pipeline::run.
  template <typename F>
  boost::asio::awaitable<internal::CallResult<F>> run(const Context& ctx, F f, PipelineCall call = {}) {
    return pipeline_->run(ctx, std::move(f), std::move(call));
  }

  const std::string& name() const noexcept { return name_; }
  const PolicyOptions& options() const noexcept { return options_; }
  // The pieces, for their statistics; null when not configured.
  const Bulkhead* bulkhead() const noexcept { return bulkhead_.get(); }
  CircuitBreaker* breaker() const noexcept { return breaker_.get(); }
  const Throttle* throttle() const noexcept { return throttle_.get(); }
  const RetryBudget* retry_budget() const noexcept { return budget_.get(); }
  const Pipeline& pipeline() const noexcept { return *pipeline_; }

 private:
  std::string name_;
  PolicyOptions options_;
  std::unique_ptr<Bulkhead> bulkhead_;
  std::unique_ptr<CircuitBreaker> breaker_;
  std::unique_ptr<Throttle> throttle_;
  std::unique_ptr<RetryBudget> budget_;
  std::unique_ptr<Pipeline> pipeline_;
};

struct PolicySetOptions {
  PolicyOptions defaults{};  // for every key not named below
  // Options for particular keys, and the name their metrics carry.
  struct Named {
    std::string key;   // e.g. "127.0.0.1:8081"
    std::string name;  // metric label; empty: the key
    PolicyOptions options;
  };
  std::vector<Named> named;
  std::size_t max_policies = 64;  // past it, new keys share the overflow policy "other"
  ResilienceMetrics* metrics = nullptr;
};

class PolicySet {
 public:
  explicit PolicySet(PolicySetOptions options = {});
  PolicySet(const PolicySet&) = delete;
  PolicySet& operator=(const PolicySet&) = delete;
  ~PolicySet();

  // The policy for `key`, built on first use. The reference stays valid for the set's life.
  Policy& get(std::string_view key);
  // Policies built so far (the overflow one included once used).
  std::size_t size() const;

 private:
  PolicySetOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Policy>, std::less<>> policies_;
  std::unique_ptr<Policy> overflow_;
};

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_POLICY_HPP_
