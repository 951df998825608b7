// Prints a /metrics page with the families cutoff's modules register (observe::DeadlineMetrics
// for every layer's deadline outcomes, stops and overshoot, orphaned backend work; the HTTP
// server's request families; SQL pool callbacks; the resilience pieces' families
// (resilience::ResilienceMetrics); process metrics and cutoff_build_info), with a few samples
// each, so that `promtool check metrics` can lint the exposition (CTest:
// observe.promtool_accepts_exposition).
#include <chrono>
#include <cstdio>

#include "cutoff/observe/deadline_metrics.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/observe/process_metrics.hpp"
#include "cutoff/resilience/metrics.hpp"

int main() {
  using namespace std::chrono_literals;
  using cutoff::StopReason;
  cutoff::observe::Registry r;
  cutoff::observe::DeadlineMetrics m(r);
  m.route_deadline_exceeded.with({"GetWarehouse"}).inc(3);
  m.route_stopped.with({"GetWarehouse", "deadline_exceeded"}).inc(3);
  m.route_stopped.with({"GetWarehouse", "cancelled"}).inc();
  m.field_deadline_exceeded.with({"GetWarehouse", "warehouse.bins.stock"}).inc(2);
  m.field_stopped.with({"GetWarehouse", "warehouse.bins.stock", "deadline_exceeded"}).inc(2);
  m.field_commit_ambiguous.with({"Reserve", "reserveStock"}).inc();
  for (const char* layer : {"http", "graphql", "sql", "http_client", "effect"}) {
    cutoff::observe::LayerStops stops(m, layer);
    stops.record(StopReason::deadline_exceeded, 3600us);
    stops.record(StopReason::cancelled, 800us);
  }
  cutoff::observe::LayerStops(m, "http_client").record("attempt_timeout", 1200us);
  m.budget_received.with({"http"}).observe(0.25);
  m.header_rejected.with({"grpc-timeout", "bad_unit"}).inc();
  m.orphaned_work.with({"postgresql"}).observe(0.28);
  m.orphaned_work.with({"sqlite"}).observe(0.004);
  m.orphaned_work_unobserved.with({"postgresql"}).inc();
  m.route_commit_ambiguous.with({"ReserveStock"}).inc();
  m.commit_ambiguous.with({"Reserve"}).inc();
  r.counter("cutoff_http_requests_total", "HTTP requests answered, by route and status.", {"route", "code"})
      .with({"GetWarehouse", "200"})
      .inc(10);
  r.histogram("cutoff_http_request_duration_seconds",
              "Time from a request's headers being read to its response being written.", {"route"},
              cutoff::observe::latency_buckets())
      .with({"GetWarehouse"})
      .observe(0.012);
  r.gauge_callback("cutoff_pool_connections_in_use", "Connections leased from the pool (including ones being opened).",
                   {"pool"}, {"main"}, [] { return 4.0; });
  r.counter_callback("cutoff_pool_rejected_total", "Checkouts refused because the wait queue was full (overloaded).",
                     {"pool"}, {"main"}, [] { return 2.0; });
  cutoff::resilience::ResilienceMetrics res(r);
  res.attempts.with({"inventory"}).inc(12);
  res.retries.with({"inventory"}).inc(4);
  res.retries_abandoned.with({"inventory", "budget"}).inc();
  res.attempt_timeouts.with({"inventory"}).inc(2);
  res.bulkhead_rejected.with({"inventory", "full"}).inc();
  res.bulkhead_in_use.with({"inventory"}).set(3);
  res.bulkhead_queued.with({"inventory"}).set(1);
  res.breaker_state.with({"inventory"}).set(0);
  res.breaker_rejected.with({"inventory"}).inc();
  res.hedges.with({"inventory"}).inc();
  res.doomed_refused.with({"GetStock"}).inc(7);
  res.doomed_admitted.with({"GetStock", "probe"}).inc();
  res.doomed_admitted.with({"GetStock", "dry_run"}).inc(0);
  res.service_time_estimate.with({"GetStock"}).set(0.12);
  cutoff::observe::register_process_metrics(r);
  cutoff::observe::register_build_info(r);
  std::fputs(r.expose().c_str(), stdout);
  return 0;
}
