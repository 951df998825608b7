// What the gRPC server counts: calls by method and status and their durations, calls in
// flight, calls cut by a stop per method, and the families every surface shares
// (observe::DeadlineMetrics: stops and overshoot with layer "grpc", budgets received with
// surface "grpc", rejected budget headers). Without a registry nothing is recorded.
//
//   internal::ServerMetrics metrics(options.metrics);
//   internal::MethodSeries series = metrics.SeriesFor("/inventory.v1.Inventory/GetStock");
//   metrics.CountCall(series, "DEADLINE_EXCEEDED", took);
#ifndef CUTOFF_GRPC_INTERNAL_SERVER_METRICS_HPP_
#define CUTOFF_GRPC_INTERNAL_SERVER_METRICS_HPP_

#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/stop_reason.hpp"
#include "cutoff/observe/deadline_metrics.hpp"
#include "cutoff/observe/metrics.hpp"

namespace cutoff::grpc::internal {

inline constexpr int kStatusCodes = 17;  // OK (0) to UNAUTHENTICATED (16)

// One method's series, looked up once, so that counting a call takes no lock.
struct MethodSeries {
  std::string name;
  std::shared_ptr<std::array<std::atomic<observe::Counter*>, kStatusCodes>> by_status;
  observe::Histogram* durations = nullptr;  // null without a registry
};

class ServerMetrics {
 public:
  explicit ServerMetrics(observe::Registry* registry);

  MethodSeries SeriesFor(const std::string& method);

  void CountCall(MethodSeries& method, int status, Duration took);
  void CountUnknownMethod();
  void CallStarted() noexcept {
    if (in_flight_) in_flight_->add(1);
  }
  void CallEnded() noexcept {
    if (in_flight_) in_flight_->add(-1);
  }
  // A call refused before its handler ran because its budget was spent.
  void RefusedAtEntry(const std::string& method);
  // A handler stopped by `reason`, `overshoot` from the stop to the handler's return.
  void HandlerStopped(const std::string& method, StopReason reason, Duration overshoot);
  void CommitAmbiguous(const std::string& method);
  // Server streaming: a message written, and one skipped because its own budget ran out.
  void MessageSent(const std::string& method);
  void MessageCut(const std::string& method);
  void BudgetReceived(Duration budget);
  void BudgetHeaderRejected(std::string_view header, std::string_view reason);

 private:
  observe::Registry* registry_;
  observe::Family<observe::Counter>* calls_ = nullptr;
  observe::Family<observe::Histogram>* durations_ = nullptr;
  observe::Gauge* in_flight_ = nullptr;
  observe::Family<observe::Counter>* deadline_exceeded_ = nullptr;
  observe::Family<observe::Counter>* stopped_ = nullptr;
  observe::Family<observe::Counter>* commit_ambiguous_ = nullptr;
  observe::Family<observe::Counter>* messages_ = nullptr;
  observe::Family<observe::Counter>* messages_cut_ = nullptr;
  std::optional<observe::DeadlineMetrics> deadline_;
  std::optional<observe::LayerStops> stops_;
};

}  // namespace cutoff::grpc::internal

#endif  // CUTOFF_GRPC_INTERNAL_SERVER_METRICS_HPP_
