#include "cutoff/grpc/internal/server_metrics.hpp"

#include <chrono>

#include "cutoff/core/error.hpp"

namespace cutoff::grpc::internal {
namespace {

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

// gRPC's status names, by number (grpc::StatusCode).
constexpr std::array<std::string_view, kStatusCodes> kStatusNames = {
    "OK",           "CANCELLED",          "UNKNOWN",        "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL",          "UNAVAILABLE",    "DATA_LOSS",        "UNAUTHENTICATED"};

}  // namespace

ServerMetrics::ServerMetrics(observe::Registry* registry) : registry_(registry) {
  if (!registry) return;
  auto& reg = *registry;
  deadline_.emplace(reg);
  calls_ = &reg.counter("cutoff_grpc_server_calls_total", "gRPC calls answered, by method and status.",
                        {"method", "code"});
  durations_ = &reg.histogram("cutoff_grpc_server_call_duration_seconds",
                              "Time from a call's arrival to its status being sent.", {"method"},
                              observe::latency_buckets());
  in_flight_ = &reg.gauge("cutoff_grpc_server_calls_in_flight", "gRPC calls being handled.").with({});
  deadline_exceeded_ = &reg.counter("cutoff_grpc_server_deadline_exceeded_total",
                                    "gRPC calls cut by their deadline (also those refused with a spent budget).",
                                    {"method"});
  stopped_ = &reg.counter("cutoff_grpc_server_stopped_total", "gRPC calls cut by any stop, by method and reason.",
                          {"method", "reason"});
  commit_ambiguous_ = &reg.counter("cutoff_grpc_server_commit_ambiguous_total",
                                   "gRPC calls answered commit_ambiguous, by method.", {"method"});
  messages_ = &reg.counter("cutoff_grpc_server_messages_total", "Messages written on server-streaming calls.",
                           {"method"});
  messages_cut_ = &reg.counter("cutoff_grpc_server_messages_cut_total",
                               "Server-streaming messages skipped because their own budget ran out.", {"method"});
  stops_.emplace(*deadline_, "grpc");
}

MethodSeries ServerMetrics::SeriesFor(const std::string& method) {
  MethodSeries series;
  series.name = method;
  series.by_status = std::make_shared<std::array<std::atomic<observe::Counter*>, kStatusCodes>>();
  if (durations_) series.durations = &durations_->with({method});
  return series;
}

void ServerMetrics::CountCall(MethodSeries& method, int status, Duration took) {
  if (!calls_) return;
  if (status < 0 || status >= kStatusCodes) status = 2;  // UNKNOWN
  auto& slot = (*method.by_status)[static_cast<std::size_t>(status)];
  observe::Counter* counter = slot.load(std::memory_order_acquire);
  if (!counter) {  // the first call of this method with this status
    counter = &calls_->with({method.name, kStatusNames[static_cast<std::size_t>(status)]});
    slot.store(counter, std::memory_order_release);
  }
  counter->inc();
  method.durations->observe(Seconds(took));
}

void ServerMetrics::CountUnknownMethod() {
  if (calls_) calls_->with({"unknown", "UNIMPLEMENTED"}).inc();
}

void ServerMetrics::RefusedAtEntry(const std::string& method) {
  if (!deadline_exceeded_) return;
  deadline_exceeded_->with({method}).inc();
  stopped_->with({method, "deadline_exceeded"}).inc();
}

void ServerMetrics::HandlerStopped(const std::string& method, StopReason reason, Duration overshoot) {
  if (stops_) stops_->record(reason, overshoot);
  if (!stopped_) return;
  if (reason == StopReason::deadline_exceeded) deadline_exceeded_->with({method}).inc();
  stopped_->with({method, to_string(reason)}).inc();
}

void ServerMetrics::CommitAmbiguous(const std::string& method) {
  if (commit_ambiguous_) commit_ambiguous_->with({method}).inc();
}

void ServerMetrics::MessageSent(const std::string& method) {
  if (messages_) messages_->with({method}).inc();
}

void ServerMetrics::MessageCut(const std::string& method) {
  if (messages_cut_) messages_cut_->with({method}).inc();
}

void ServerMetrics::BudgetReceived(Duration budget) {
  if (deadline_) deadline_->budget_received.with({"grpc"}).observe(Seconds(budget));
}

void ServerMetrics::BudgetHeaderRejected(std::string_view header, std::string_view reason) {
  if (deadline_) deadline_->header_rejected.with({header, reason}).inc();
}

}  // namespace cutoff::grpc::internal
