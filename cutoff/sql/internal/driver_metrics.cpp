#include "cutoff/sql/internal/driver_metrics.hpp"

namespace cutoff::sql::internal {

std::shared_ptr<const DriverMetrics> DriverMetrics::make(observe::Registry* registry, std::string_view backend) {
  if (!registry) return nullptr;
  return std::make_shared<const DriverMetrics>(*registry, backend);
}

DriverMetrics::DriverMetrics(observe::Registry& registry, std::string_view backend)
    : stops_(registry, "sql"),
      orphaned_(observe::DeadlineMetrics(registry).orphaned_work.with({backend})),
      unobserved_(observe::DeadlineMetrics(registry).orphaned_work_unobserved.with({backend})) {}

void DriverMetrics::stopped(const Context& ctx, const observe::StopStamp& stamp,
                            StopReason reason) const noexcept {
  if (reason == StopReason::none) reason = ctx.stop_reason();
  const bool past_deadline = !ctx.deadline().is_never() && ctx.deadline().expired(ctx.clock());
  if (reason == StopReason::none && past_deadline) reason = StopReason::deadline_exceeded;
  if (reason == StopReason::none) return;
  Duration overshoot = stamp.since_stop();
  if (reason == StopReason::deadline_exceeded && !ctx.deadline().is_never())
    overshoot = ctx.clock().now() - ctx.deadline().time_point();  // may be early: counted as zero
  stops_.record(reason, overshoot);
}

void DriverMetrics::stopped(StopReason reason, TimePoint stopped_at) const noexcept {
  stops_.record(reason, SteadyClock::now() - stopped_at);
}

void DriverMetrics::statement_ended(const ResponseMark* response, TimePoint ended) const noexcept {
  if (!response) return;
  const auto sent = response->sent();
  if (!sent || ended <= *sent) return;  // ended before the response: someone was waiting for it
  orphaned_.observe(std::chrono::duration<double>(ended - *sent).count());
}

}  // namespace cutoff::sql::internal
