// What the server counts in its metrics registry: requests by route and status and their
// durations, requests refused before routing, open connections, requests in flight, and the
// deadline outcomes of requests (observe::DeadlineMetrics, surface and layer "http"). Without
// a registry every call records nothing.
//
//   internal::ServerMetrics metrics(options.metrics);
//   internal::RouteSeries series = metrics.SeriesFor("GetStock");  // once, when the route is added
//   metrics.CountRequest(series, "GetStock", 200, took);
//   metrics.CountBadRequest("header_too_large");
#ifndef CUTOFF_HTTP_INTERNAL_SERVER_METRICS_HPP_
#define CUTOFF_HTTP_INTERNAL_SERVER_METRICS_HPP_

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

namespace cutoff::http::internal {

inline constexpr int kFirstStatus = 100;
inline constexpr int kLastStatus = 599;

// One route's series, kept with the route so that counting a request takes no lock.
struct RouteSeries {
  // Request counters by status, filled on first use.
  std::unique_ptr<std::array<std::atomic<observe::Counter*>, kLastStatus - kFirstStatus + 1>> by_status;
  observe::Histogram* durations = nullptr;  // null without a registry
};

class ServerMetrics {
 public:
  explicit ServerMetrics(observe::Registry* registry);

  RouteSeries SeriesFor(const std::string& route);

  // A request to the route `name` answered with `status` (499: the client went away), `took`
  // after its headers were read. A status outside 100-599 counts as 500.
  void CountRequest(RouteSeries& route, std::string_view name, int status, Duration took);
  // A request that matched no route (counted as route "unmatched", with no duration).
  void CountUnmatched(int status);
  // A request refused before routing, or a response header dropped, by reason.
  void CountBadRequest(std::string_view reason);

  void ConnectionOpened() noexcept {
    if (connections_) connections_->add(1);
  }
  void ConnectionClosed() noexcept {
    if (connections_) connections_->add(-1);
  }
  void HandlerStarted() noexcept {
    if (in_flight_) in_flight_->add(1);
  }
  void HandlerEnded() noexcept {
    if (in_flight_) in_flight_->add(-1);
  }

  // A caller's budget, after tightening by the service's maximum.
  void BudgetReceived(Duration budget);
  // An inbound budget header that was ignored.
  void BudgetHeaderRejected(std::string_view header, std::string_view reason);
  // A request answered deadline_exceeded before any handler ran: its budget was spent on
  // arrival, or below the route's recent service time (RouteOptions::admission).
  void RefusedAtEntry(const std::string& route);
  // A handler whose context stopped (`stop` not none); `overshoot` from the stop to its end.
  void HandlerStopped(const std::string& route, StopReason stop, Duration overshoot);
  // A request answered commit_ambiguous.
  void CommitAmbiguous(const std::string& route);

 private:
  std::optional<observe::DeadlineMetrics> deadline_metrics_;
  std::optional<observe::LayerStops> http_stops_;  // handlers stopped: stops and overshoot
  observe::Family<observe::Counter>* requests_ = nullptr;
  observe::Family<observe::Histogram>* durations_ = nullptr;
  observe::Family<observe::Counter>* bad_requests_ = nullptr;
  observe::Gauge* connections_ = nullptr;
  observe::Gauge* in_flight_ = nullptr;
  observe::Histogram* budget_received_ = nullptr;
};

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_SERVER_METRICS_HPP_
