// MetricsRecorder: reports what the executor cut to the metrics registry.
//
//   cutoff::observe::Registry registry;
//   cutoff::graphql::MetricsRecorder recorder(registry);
//   ExecutionOptions options{.recorder = &recorder};
//
// Each cut field increments cutoff_graphql_field_deadline_exceeded_total{operation, field}
// (for deadline stops) and cutoff_graphql_field_stopped_total{operation, field, reason} (any
// stop), and cutoff_stops_total{layer="graphql", reason} with its overshoot in
// cutoff_overshoot_seconds{layer="graphql"}. A mutation field answered COMMIT_AMBIGUOUS
// increments cutoff_graphql_field_commit_ambiguous_total{operation, field}. An anonymous operation is counted as
// "anonymous". List indices are dropped from field paths ("warehouse.bins.3.stock" is counted
// as "warehouse.bins.stock") so that a long list does not create a series per item.
#ifndef CUTOFF_GRAPHQL_METRICS_RECORDER_HPP_
#define CUTOFF_GRAPHQL_METRICS_RECORDER_HPP_

#include <string>
#include <string_view>

#include "cutoff/graphql/executor.hpp"
#include "cutoff/observe/deadline_metrics.hpp"
#include "cutoff/observe/metrics.hpp"

namespace cutoff::graphql {

class MetricsRecorder : public ExecutionRecorder {
 public:
  explicit MetricsRecorder(observe::Registry& registry);
  explicit MetricsRecorder(const observe::DeadlineMetrics& metrics);
  void field_stopped(std::string_view operation, std::string_view path, StopReason reason,
                     Duration overshoot) override;
  void field_ambiguous(std::string_view operation, std::string_view path) override;

  // "a.3.b.10.c" -> "a.b.c"
  static std::string field_path(std::string_view response_path);

 private:
  observe::Family<observe::Counter>& deadline_exceeded_;
  observe::Family<observe::Counter>& stopped_;
  observe::Family<observe::Counter>& ambiguous_;
  observe::LayerStops stops_;
};

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_METRICS_RECORDER_HPP_
