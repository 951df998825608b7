#include "cutoff/observe/deadline_metrics.hpp"

#include <algorithm>
#include <string>

namespace cutoff::observe {

std::vector<double> latency_buckets() { return exponential_buckets(0.0005, 2, 15); }

DeadlineMetrics::DeadlineMetrics(Registry& registry)
    : route_deadline_exceeded(registry.counter("cutoff_http_deadline_exceeded_total",
                                               "HTTP requests cut by their deadline, by route.", {"route"})),
      route_stopped(registry.counter("cutoff_http_stopped_total", "HTTP requests cut by any stop, by route and reason.",
                                     {"route", "reason"})),
      route_commit_ambiguous(registry.counter("cutoff_http_commit_ambiguous_total",
                                              "HTTP requests answered commit_ambiguous, by route.",
                                              {"route"})),
      field_deadline_exceeded(registry.counter("cutoff_graphql_field_deadline_exceeded_total",
                                               "GraphQL fields cut by their deadline, by operation and field path.",
                                               {"operation", "field"})),
      field_stopped(registry.counter("cutoff_graphql_field_stopped_total",
                                     "GraphQL fields cut by any stop, by operation, field path and reason.",
                                     {"operation", "field", "reason"})),
      field_commit_ambiguous(registry.counter(
          "cutoff_graphql_field_commit_ambiguous_total",
          "GraphQL mutation fields answered COMMIT_AMBIGUOUS, by operation and field path.", {"operation", "field"})),
      stops(registry.counter("cutoff_stops_total", "Running work stopped, by layer and reason.",
                             {"layer", "reason"})),
      overshoot(registry.histogram("cutoff_overshoot_seconds",
                                   "Time from a stop being requested to the stopped work returning, by layer.",
                                   {"layer"}, latency_buckets())),
      budget_received(registry.histogram("cutoff_budget_received_seconds",
                                         "Budgets received from callers, after the service's maximum.",
                                         {"surface"}, latency_buckets())),
      header_rejected(registry.counter("cutoff_budget_header_rejected_total",
                                       "Inbound budget header values ignored, by header and reason.",
                                       {"header", "reason"})),
      orphaned_work(registry.histogram("cutoff_orphaned_work_seconds",
                                       "Time from the response being sent to the backend statement for it ending.",
                                       {"backend"}, latency_buckets())),
      orphaned_work_unobserved(registry.counter(
          "cutoff_orphaned_work_unobserved_total",
          "Backend statements left running after their response whose end the driver could not see.",
          {"backend"})),
      commit_ambiguous(registry.counter("cutoff_commit_ambiguous_total",
                                        "Effect regions stopped at or after a commit point, by operation.",
                                        {"operation"})) {}

LayerStops::LayerStops(Registry& registry, std::string_view layer) : LayerStops(DeadlineMetrics(registry), layer) {}

LayerStops::LayerStops(const DeadlineMetrics& metrics, std::string_view layer)
    : stops_(metrics.stops), layer_(layer), overshoot_(metrics.overshoot.with({layer})) {
  for (StopReason r : {StopReason::deadline_exceeded, StopReason::cancelled, StopReason::shutdown})
    by_reason_[static_cast<std::size_t>(r)] = &stops_.with({layer, to_string(r)});
}

void LayerStops::record(StopReason reason, Duration overshoot) const noexcept {
  const auto i = static_cast<std::size_t>(reason);
  if (i >= by_reason_.size() || !by_reason_[i]) return;
  by_reason_[i]->inc();
  overshoot_.observe(std::chrono::duration<double>(std::max(overshoot, Duration::zero())).count());
}

void LayerStops::record(std::string_view reason, Duration overshoot) const {
  stops_.with({std::string_view(layer_), reason}).inc();
  overshoot_.observe(std::chrono::duration<double>(std::max(overshoot, Duration::zero())).count());
}

Duration StopStamp::since_stop() const noexcept {
  const auto at = at_.load(std::memory_order_relaxed);
  if (at == 0) return Duration::zero();
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  return std::max(Duration::zero(),
                  std::chrono::duration_cast<Duration>(now - std::chrono::steady_clock::duration(at)));
}

}  // namespace cutoff::observe
