// Exposes a connection pool's state as Prometheus metrics.
//
//   cutoff::sql::Pool pool(factory, {.max_size = 8});
//   cutoff::sql::register_pool_metrics(registry, pool, "main");
//   // cutoff_pool_connections_in_use{pool="main"} 3, cutoff_pool_waiting{pool="main"} 0, ...
//
// The values are read from Pool::stats() when the page is exposed; the pool must outlive the
// registry's exposition. Orphaned work is not the pool's to measure (a lease held after the
// response says nothing about the statement's end on the server): the drivers record it, with
// DriverOptions::metrics set.
#ifndef CUTOFF_SQL_POOL_METRICS_HPP_
#define CUTOFF_SQL_POOL_METRICS_HPP_

#include <string>

#include "cutoff/observe/metrics.hpp"
#include "cutoff/sql/pool.hpp"

namespace cutoff::sql {

void register_pool_metrics(observe::Registry& registry, Pool& pool, const std::string& name);

}  // namespace cutoff::sql

#endif  // CUTOFF_SQL_POOL_METRICS_HPP_
