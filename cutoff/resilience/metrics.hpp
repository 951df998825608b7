// The metric families the resilience pieces count into.
//
// Off by default: every piece takes a `ResilienceMetrics*` in its options, and a null pointer
// costs one branch per event. Each piece looks up its own series (labelled with the piece's
// name) once, when it is constructed.
//
//   cutoff::observe::Registry registry;
//   cutoff::resilience::ResilienceMetrics metrics(registry);
//   cutoff::resilience::Bulkhead inventory({.max_concurrent = 8, .name = "inventory",
//                                           .metrics = &metrics});
//   // cutoff_resilience_bulkhead_rejected_total{name="inventory",reason="full"} ...
//
// Series are labelled with the piece's `name`, except ServiceTimeAdmission's, which are
// labelled with the key (a route or operation name the service registered; at most
// `max_keys` of them).
#ifndef CUTOFF_RESILIENCE_METRICS_HPP_
#define CUTOFF_RESILIENCE_METRICS_HPP_

#include "cutoff/observe/metrics.hpp"

namespace cutoff::resilience {

struct ResilienceMetrics {
  // Registers the families, or finds them when another component already did.
  explicit ResilienceMetrics(observe::Registry& registry);

  // {name}: attempts a pipeline started, the first, retries and hedges alike.
  observe::Family<observe::Counter>& attempts;
  // {name}: attempts after the first.
  observe::Family<observe::Counter>& retries;
  // {name, reason}: retries not taken although the error was retryable. reason: budget (the
  // retry budget was spent), deadline (the backoff would outlive the deadline, or the next
  // attempt would not fit), attempts (max_attempts reached).
  observe::Family<observe::Counter>& retries_abandoned;
  // {name}: attempts ended by their own timeout (attempt_timeout).
  observe::Family<observe::Counter>& attempt_timeouts;
  // {name, reason}: callers the bulkhead turned away. reason: full (overloaded at once),
  // stopped (their context stopped while they queued).
  observe::Family<observe::Counter>& bulkhead_rejected;
  // {name}: calls running inside the bulkhead, and callers queued.
  observe::Family<observe::Gauge>& bulkhead_in_use;
  observe::Family<observe::Gauge>& bulkhead_queued;
  // {name}: 0 closed, 1 open, 2 half-open.
  observe::Family<observe::Gauge>& breaker_state;
  // {name}: calls refused because the breaker was open (or half-open with its probes taken).
  observe::Family<observe::Counter>& breaker_rejected;
  // {name}: calls a throttle refused before sending them (throttle.hpp).
  observe::Family<observe::Counter>& throttled;
  // {name}: hedged attempts started after the first.
  observe::Family<observe::Counter>& hedges;
  // ServiceTimeAdmission, labelled with the key (the route or operation name):
  // {name}: requests refused with deadline_exceeded before starting, their remaining budget
  // below the recent service time.
  observe::Family<observe::Counter>& doomed_refused;
  // {name, reason}: requests that looked doomed but ran. reason: probe (one per
  // probe_interval, to keep the estimate fresh), dry_run (refusals are off).
  observe::Family<observe::Counter>& doomed_admitted;
  // {name}: the service time a remaining budget is compared with (the quantile, before the
  // factor), as of the key's last use; 0 while it has too few recent samples to refuse.
  observe::Family<observe::Gauge>& service_time_estimate;
  // AdaptiveLimit, {name}: runs allowed at once now.
  observe::Family<observe::Gauge>& concurrency_limit;
};

}  // namespace cutoff::resilience

#endif  // CUTOFF_RESILIENCE_METRICS_HPP_
