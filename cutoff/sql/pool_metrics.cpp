#include "cutoff/sql/pool_metrics.hpp"

namespace cutoff::sql {

void register_pool_metrics(observe::Registry& registry, Pool& pool, const std::string& name) {
  const Pool* p = &pool;
  auto gauge = [&](const char* metric, const char* help, auto read) {
    registry.gauge_callback(metric, help, {"pool"}, {name},
                            [p, read] { return static_cast<double>(read(p->stats())); });
  };
  auto counter = [&](const char* metric, const char* help, auto read) {
    registry.counter_callback(metric, help, {"pool"}, {name},
                              [p, read] { return static_cast<double>(read(p->stats())); });
  };
  gauge("cutoff_pool_connections_in_use", "Connections leased from the pool (including ones being opened).",
        [](const PoolStats& s) { return s.in_use; });
  gauge("cutoff_pool_connections_open", "Connections that exist, idle or in use.",
        [](const PoolStats& s) { return s.open; });
  gauge("cutoff_pool_waiting", "Callers queued for a connection.", [](const PoolStats& s) { return s.waiting; });
  counter("cutoff_pool_rejected_total", "Checkouts refused because the wait queue was full (overloaded).",
          [](const PoolStats& s) { return s.rejected; });
  counter("cutoff_pool_stopped_waiting_total", "Callers whose context stopped while they waited for a connection.",
          [](const PoolStats& s) { return s.stopped_waiting; });
  counter("cutoff_pool_refused_doomed_total",
          "Checkouts refused before waiting: the budget left could not cover the wait and a typical hold.",
          [](const PoolStats& s) { return s.refused_doomed; });
  gauge("cutoff_pool_mean_hold_seconds", "Recent mean time a connection is kept by its caller.",
        [](const PoolStats& s) { return std::chrono::duration<double>(s.mean_hold).count(); });
  counter("cutoff_pool_discarded_total", "Connections closed because they came back unclean or failed a ping.",
          [](const PoolStats& s) { return s.discarded; });
}

}  // namespace cutoff::sql
