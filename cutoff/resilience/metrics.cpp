#include "cutoff/resilience/metrics.hpp"

namespace cutoff::resilience {

ResilienceMetrics::ResilienceMetrics(observe::Registry& registry)
    : attempts(registry.counter("cutoff_resilience_attempts_total",
                                "Attempts started by a pipeline: first attempts, retries and hedges.", {"name"})),
      retries(registry.counter("cutoff_resilience_retries_total", "Attempts after the first.", {"name"})),
      retries_abandoned(registry.counter(
          "cutoff_resilience_retries_abandoned_total",
          "Retryable failures not retried: budget spent, deadline too close, attempts used up, or the server's "
          "pushback.",
          {"name", "reason"})),
      attempt_timeouts(registry.counter("cutoff_resilience_attempt_timeouts_total",
                                        "Attempts ended by their own timeout.", {"name"})),
      bulkhead_rejected(registry.counter("cutoff_resilience_bulkhead_rejected_total",
                                         "Callers turned away by a bulkhead: full queue or stopped while queued.",
                                         {"name", "reason"})),
      bulkhead_in_use(
          registry.gauge("cutoff_resilience_bulkhead_in_use", "Calls running inside a bulkhead.", {"name"})),
      bulkhead_queued(registry.gauge("cutoff_resilience_bulkhead_queued", "Callers queued at a bulkhead.", {"name"})),
      breaker_state(registry.gauge("cutoff_resilience_breaker_state",
                                   "Circuit breaker state: 0 closed, 1 open, 2 half-open.", {"name"})),
      breaker_rejected(registry.counter("cutoff_resilience_breaker_rejected_total",
                                        "Calls refused by an open circuit breaker.", {"name"})),
      throttled(registry.counter("cutoff_resilience_throttled_total",
                                 "Calls refused by a client-side throttle before they were sent: the dependency "
                                 "had been refusing most calls.",
                                 {"name"})),
      hedges(registry.counter("cutoff_resilience_hedges_total", "Hedged attempts started after the first.", {"name"})),
      doomed_refused(registry.counter("cutoff_resilience_doomed_refused_total",
                                      "Requests refused before starting: their remaining budget was below the "
                                      "recent service time.",
                                      {"name"})),
      doomed_admitted(registry.counter("cutoff_resilience_doomed_admitted_total",
                                       "Requests that looked doomed but ran: probes, or dry run.", {"name", "reason"})),
      service_time_estimate(registry.gauge("cutoff_resilience_service_time_estimate_seconds",
                                           "The recent service time remaining budgets are compared with (0: too "
                                           "few samples to refuse).",
                                           {"name"})),
      concurrency_limit(registry.gauge("cutoff_resilience_concurrency_limit",
                                       "Runs an adaptive concurrency limit allows at once now.", {"name"})) {}

}  // namespace cutoff::resilience
