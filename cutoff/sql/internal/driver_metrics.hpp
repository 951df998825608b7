// What the SQL drivers record when DriverOptions::metrics is set: statements stopped
// (cutoff_stops_total{layer="sql", reason}) with their overshoot (stop requested → the driver
// call returned: the statement ended on the server, or the driver gave up on it), and
// orphaned work, the real end of a statement on the server after the response to its request
// went out (cutoff_orphaned_work_seconds{backend}), or a statement the driver stopped watching
// before it ended (cutoff_orphaned_work_unobserved_total{backend}).
//
// Resolved once per connection, so that recording takes no lock; null when metrics are off,
// so the path without metrics costs a pointer test.
#ifndef CUTOFF_SQL_INTERNAL_DRIVER_METRICS_HPP_
#define CUTOFF_SQL_INTERNAL_DRIVER_METRICS_HPP_

#include <memory>
#include <string_view>

#include "cutoff/core/context.hpp"
#include "cutoff/observe/deadline_metrics.hpp"
#include "cutoff/observe/metrics.hpp"

namespace cutoff::sql::internal {

class DriverMetrics {
 public:
  // Null when `registry` is null.
  static std::shared_ptr<const DriverMetrics> make(observe::Registry* registry, std::string_view backend);

  DriverMetrics(observe::Registry& registry, std::string_view backend);

  // A statement that failed while `ctx` was stopped, or past its deadline, was stopped:
  // counts it, with `reason` when the driver knows it (the server ended the statement at the
  // budget). The overshoot runs from the deadline for a deadline stop, else from `stamp`.
  void stopped(const Context& ctx, const observe::StopStamp& stamp,
               StopReason reason = StopReason::none) const noexcept;
  // The same, when the driver saw the stop itself at `stopped_at` (steady clock).
  void stopped(StopReason reason, TimePoint stopped_at) const noexcept;

  // A statement of the request marked by `response` ended at `ended` (steady clock): orphaned
  // work if the response had gone out by then.
  void statement_ended(const ResponseMark* response, TimePoint ended) const noexcept;
  // A statement of a server's request left running, its end unseen.
  void statement_unobserved() const noexcept { unobserved_.inc(); }

 private:
  observe::LayerStops stops_;
  observe::Histogram& orphaned_;
  observe::Counter& unobserved_;
};

}  // namespace cutoff::sql::internal

#endif  // CUTOFF_SQL_INTERNAL_DRIVER_METRICS_HPP_
