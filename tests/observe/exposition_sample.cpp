// Prints a /metrics page with the metrics cutoff's modules report (deadline outcomes per
// operation and field path, budgets received, overshoot, orphaned backend work, rejected
// header values, pool use and waits, ambiguous commits), with a few samples each, so that
// `promtool check metrics` can lint the exposition (CTest: observe.promtool_accepts_exposition).
#include <cstdio>

#include "cutoff/observe/metrics.hpp"

int main() {
  using cutoff::observe::exponential_buckets;
  cutoff::observe::Registry r;
  r.counter("cutoff_deadline_exceeded_total", "Operations and GraphQL fields cut by their deadline.",
            {"operation", "path"})
      .with({"GetWarehouse", "warehouse.bins.stock"})
      .inc(3);
  r.histogram("cutoff_budget_received_seconds", "Budgets granted to requests at entry.", {"operation"},
              exponential_buckets(0.005, 2, 12))
      .with({"GetWarehouse"})
      .observe(0.25);
  r.histogram("cutoff_overshoot_seconds", "Time from a stop being requested to the work returning.", {"layer"},
              exponential_buckets(0.0005, 2, 14))
      .with({"sql"})
      .observe(0.0036);
  r.histogram("cutoff_orphaned_work_seconds", "Time from the response being sent to the backend work ending.",
              {"backend"}, exponential_buckets(0.001, 2, 16))
      .with({"postgresql"})
      .observe(0.28);
  r.counter("cutoff_budget_header_rejected_total", "Inbound budget header values ignored, by reason.",
            {"header", "reason"})
      .with({"grpc-timeout", "bad_unit"})
      .inc();
  r.gauge("cutoff_pool_connections_in_use", "Connections leased from a pool.", {"pool"}).with({"main"}).set(4);
  r.histogram("cutoff_pool_wait_seconds", "Time spent queued for a pooled connection.", {"pool"},
              exponential_buckets(0.0001, 4, 10))
      .with({"main"})
      .observe(0.002);
  r.counter("cutoff_commit_ambiguous_total", "Stops that landed at or after a commit point.", {"operation"})
      .with({"Reserve"})
      .inc();
  std::fputs(r.expose().c_str(), stdout);
  return 0;
}
