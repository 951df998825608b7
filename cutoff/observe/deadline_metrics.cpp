#include "cutoff/observe/deadline_metrics.hpp"

namespace cutoff::observe {

std::vector<double> latency_buckets() { return exponential_buckets(0.0005, 2, 15); }

DeadlineMetrics::DeadlineMetrics(Registry& registry)
    : deadline_exceeded(registry.counter("cutoff_deadline_exceeded_total",
                                         "Operations and GraphQL fields cut by their deadline.",
                                         {"operation", "path"})),
      stopped(registry.counter("cutoff_stopped_total", "Operations and GraphQL fields cut by any stop, by reason.",
                               {"operation", "path", "reason"})),
      overshoot(registry.histogram("cutoff_overshoot_seconds",
                                   "Time from a stop being requested to the work returning.", {"layer"},
                                   latency_buckets())),
      budget_received(registry.histogram("cutoff_budget_received_seconds",
                                         "Budgets received from callers, after the service's maximum.",
                                         {"surface"}, latency_buckets())),
      header_rejected(registry.counter("cutoff_budget_header_rejected_total",
                                       "Inbound budget header values ignored, by header and reason.",
                                       {"header", "reason"})),
      orphaned_work(registry.histogram("cutoff_orphaned_work_seconds",
                                       "Time from the response being sent to the backend work for it ending.",
                                       {"backend"}, latency_buckets())),
      commit_ambiguous(registry.counter("cutoff_commit_ambiguous_total",
                                        "Stops that landed at or after a commit point.", {"operation"})) {}

}  // namespace cutoff::observe
