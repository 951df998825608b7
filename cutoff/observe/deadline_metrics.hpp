// The metric families every layer reports deadline outcomes to, defined in one place.
//
// The HTTP server, the GraphQL executor, the SQL drivers and the effect regions all count
// into the same families, so a dashboard reads one `cutoff_deadline_exceeded_total` and one
// `cutoff_overshoot_seconds` whatever the layer. Constructing DeadlineMetrics on a registry
// registers the families (or finds them when another layer already did).
//
//   cutoff::observe::Registry registry;
//   cutoff::observe::DeadlineMetrics m(registry);
//   m.deadline_exceeded.with({"GetWarehouse", ""}).inc();         // the whole operation
//   m.overshoot.with({"http"}).observe(0.0012);                     // stop → handler returned
//   m.header_rejected.with({"grpc-timeout", "bad_unit"}).inc();
//   m.budget_received.with({"http"}).observe(0.250);
#ifndef CUTOFF_OBSERVE_DEADLINE_METRICS_HPP_
#define CUTOFF_OBSERVE_DEADLINE_METRICS_HPP_

#include <vector>

#include "cutoff/observe/metrics.hpp"

namespace cutoff::observe {

// Buckets for durations from 0.5 ms to about 8 s.
std::vector<double> latency_buckets();

struct DeadlineMetrics {
  explicit DeadlineMetrics(Registry& registry);

  // {operation, path}: path is empty for a whole operation, a field path for GraphQL fields.
  Family<Counter>& deadline_exceeded;
  // {operation, path, reason}: every stop, by reason (deadline_exceeded, cancelled, shutdown).
  Family<Counter>& stopped;
  // {layer}: stop requested → the work returned (http, graphql, sql).
  Family<Histogram>& overshoot;
  // {surface}: budgets callers sent us, after tightening by the service's maximum.
  Family<Histogram>& budget_received;
  // {header, reason}: inbound budget headers that were ignored.
  Family<Counter>& header_rejected;
  // {backend}: response sent → the backend work for it ended.
  Family<Histogram>& orphaned_work;
  // {operation}: stops that landed at or after a commit point.
  Family<Counter>& commit_ambiguous;
};

}  // namespace cutoff::observe

#endif  // CUTOFF_OBSERVE_DEADLINE_METRICS_HPP_
