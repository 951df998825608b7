#include "cutoff/http/internal/server_metrics.hpp"

namespace cutoff::http::internal {

namespace {
double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

ServerMetrics::ServerMetrics(observe::Registry* registry) {
  if (!registry) return;
  auto& reg = *registry;
  deadline_metrics_.emplace(reg);
  requests_ =
      &reg.counter("cutoff_http_requests_total", "HTTP requests answered, by route and status.", {"route", "code"});
  durations_ = &reg.histogram("cutoff_http_request_duration_seconds",
                              "Time from a request's headers being read to its response being written.", {"route"},
                              observe::latency_buckets());
  bad_requests_ = &reg.counter("cutoff_http_bad_requests_total",
                               "Requests refused before routing (limits, timeouts, malformed), by reason.", {"reason"});
  connections_ = &reg.gauge("cutoff_http_connections", "Open HTTP connections.").with({});
  in_flight_ = &reg.gauge("cutoff_http_requests_in_flight", "Requests being handled.").with({});
  budget_received_ = &deadline_metrics_->budget_received.with({"http"});
  http_stops_.emplace(*deadline_metrics_, "http");
}

RouteSeries ServerMetrics::SeriesFor(const std::string& route) {
  RouteSeries series;
  series.by_status = std::make_unique<std::array<std::atomic<observe::Counter*>, kLastStatus - kFirstStatus + 1>>();
  if (durations_) series.durations = &durations_->with({route});
  return series;
}

namespace {
int Counted(int status) { return status < kFirstStatus || status > kLastStatus ? 500 : status; }
}  // namespace

void ServerMetrics::CountRequest(RouteSeries& route, std::string_view name, int status, Duration took) {
  if (!requests_) return;
  status = Counted(status);
  auto& slot = (*route.by_status)[status - kFirstStatus];
  observe::Counter* counter = slot.load(std::memory_order_acquire);
  if (!counter) {  // the first request of this route with this status
    counter = &requests_->with({name, std::to_string(status)});
    slot.store(counter, std::memory_order_release);
  }
  counter->inc();
  route.durations->observe(Seconds(took));
}

void ServerMetrics::CountUnmatched(int status) {
  if (requests_) requests_->with({"unmatched", std::to_string(Counted(status))}).inc();
}

void ServerMetrics::CountBadRequest(std::string_view reason) {
  if (bad_requests_) bad_requests_->with({reason}).inc();
}

void ServerMetrics::BudgetReceived(Duration budget) {
  if (budget_received_) budget_received_->observe(Seconds(budget));
}

void ServerMetrics::BudgetHeaderRejected(std::string_view header, std::string_view reason) {
  if (deadline_metrics_) deadline_metrics_->header_rejected.with({header, reason}).inc();
}

void ServerMetrics::RefusedAtEntry(const std::string& route) {
  if (!deadline_metrics_) return;
  deadline_metrics_->route_deadline_exceeded.with({route}).inc();
  deadline_metrics_->route_stopped.with({route, "deadline_exceeded"}).inc();
}

void ServerMetrics::HandlerStopped(const std::string& route, StopReason stop, Duration overshoot) {
  if (http_stops_) http_stops_->record(stop, overshoot);
  if (!deadline_metrics_) return;
  if (stop == StopReason::deadline_exceeded) deadline_metrics_->route_deadline_exceeded.with({route}).inc();
  deadline_metrics_->route_stopped.with({route, to_string(stop)}).inc();
}

void ServerMetrics::CommitAmbiguous(const std::string& route) {
  if (deadline_metrics_) deadline_metrics_->route_commit_ambiguous.with({route}).inc();
}

}  // namespace cutoff::http::internal
