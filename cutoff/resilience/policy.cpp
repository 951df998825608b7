#include "cutoff/resilience/policy.hpp"

namespace cutoff::resilience {

namespace {

// The piece `o` describes, named after its policy, counting into the policy's metrics and
// reading its clock unless `o` names its own.
template <typename Piece, typename Options>
std::unique_ptr<Piece> Build(Options o, const std::string& name, ResilienceMetrics* metrics, const Clock* clock) {
  o.name = name;
  if (!o.metrics) o.metrics = metrics;
  if (!o.clock) o.clock = clock;
  return std::make_unique<Piece>(std::move(o));
}

}  // namespace

Policy::Policy(std::string name, PolicyOptions options, ResilienceMetrics* metrics)
    : name_(std::move(name)), options_(std::move(options)) {
  PipelineOptions p;
  p.name = name_;
  p.metrics = metrics;
  p.attempt_timeout = options_.attempt_timeout;
  if (options_.bulkhead.max_concurrent > 0) {
    bulkhead_ = std::make_unique<Bulkhead>(BulkheadOptions{.max_concurrent = options_.bulkhead.max_concurrent,
                                                           .max_queue = options_.bulkhead.max_queue,
                                                           .name = name_,
                                                           .metrics = metrics});
    p.bulkhead = bulkhead_.get();
  }
  if (options_.breaker) {
    breaker_ = Build<CircuitBreaker>(*options_.breaker, name_, metrics, options_.clock);
    p.breaker = breaker_.get();
  }
  if (options_.throttle) {
    throttle_ = Build<Throttle>(*options_.throttle, name_, metrics, options_.clock);
    p.throttle = throttle_.get();
  }
  const RetryPolicy& r = options_.retry;
  if (r.max_attempts > 1) {
    if (r.budget_ratio >= 0) {
      budget_ = std::make_unique<RetryBudget>(RetryBudgetOptions{.ratio = r.budget_ratio,
                                                                 .min_per_second = r.budget_min_per_second,
                                                                 .window = r.budget_window,
                                                                 .clock = options_.clock});
    }
    p.retry = RetryOptions{.max_attempts = r.max_attempts,
                           .backoff = r.backoff,
                           .min_attempt_time = r.min_attempt_time,
                           .max_pushback = r.max_pushback,
                           .budget = budget_.get()};
  }
  if (options_.hedge) p.hedge = *options_.hedge;
  pipeline_ = std::make_unique<Pipeline>(std::move(p));
}

Policy::~Policy() = default;

PolicySet::PolicySet(PolicySetOptions options) : options_(std::move(options)) {}

PolicySet::~PolicySet() = default;

Policy& PolicySet::get(std::string_view key) {
  std::lock_guard lock(mu_);
  if (auto it = policies_.find(key); it != policies_.end()) return *it->second;
  if (policies_.size() >= options_.max_policies) {
    if (!overflow_) overflow_ = std::make_unique<Policy>("other", options_.defaults, options_.metrics);
    return *overflow_;
  }
  std::string name(key);
  const PolicyOptions* chosen = &options_.defaults;
  for (const auto& n : options_.named) {
    if (n.key == key) {
      chosen = &n.options;
      if (!n.name.empty()) name = n.name;
      break;
    }
  }
  auto policy = std::make_unique<Policy>(std::move(name), *chosen, options_.metrics);
  Policy& out = *policy;
  policies_.emplace(std::string(key), std::move(policy));
  return out;
}

std::size_t PolicySet::size() const {
  std::lock_guard lock(mu_);
  return policies_.size() + (overflow_ ? 1 : 0);
}

}  // namespace cutoff::resilience
