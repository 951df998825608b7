#include "cutoff/graphql/metrics_recorder.hpp"

namespace cutoff::graphql {

MetricsRecorder::MetricsRecorder(observe::Registry& registry)
    : MetricsRecorder(observe::DeadlineMetrics(registry)) {}

MetricsRecorder::MetricsRecorder(const observe::DeadlineMetrics& metrics)
    : deadline_exceeded_(metrics.field_deadline_exceeded), stopped_(metrics.field_stopped),
      ambiguous_(metrics.field_commit_ambiguous),
      stops_(metrics, "graphql") {}

std::string MetricsRecorder::field_path(std::string_view response_path) {
  std::string out;
  std::size_t start = 0;
  while (start <= response_path.size()) {
    std::size_t end = response_path.find('.', start);
    if (end == std::string_view::npos) end = response_path.size();
    const std::string_view seg = response_path.substr(start, end - start);
    const bool index = !seg.empty() && seg.find_first_not_of("0123456789") == std::string_view::npos;
    if (!seg.empty() && !index) {
      if (!out.empty()) out.push_back('.');
      out.append(seg);
    }
    start = end + 1;
  }
  return out;
}

void MetricsRecorder::field_stopped(std::string_view operation, std::string_view path, StopReason reason,
                                    Duration overshoot) {
  const std::string op = operation.empty() ? std::string("anonymous") : std::string(operation);
  const std::string field = field_path(path);
  if (reason == StopReason::deadline_exceeded) deadline_exceeded_.with({op, field}).inc();
  stopped_.with({op, field, to_string(reason)}).inc();
  stops_.record(reason, overshoot);
}

void MetricsRecorder::field_ambiguous(std::string_view operation, std::string_view path) {
  const std::string op = operation.empty() ? std::string("anonymous") : std::string(operation);
  ambiguous_.with({op, field_path(path)}).inc();
}

}  // namespace cutoff::graphql
