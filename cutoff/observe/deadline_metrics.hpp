// The metric families every layer reports deadline outcomes to, defined in one place.
//
// Three questions, three kinds of family, so that no `sum()` counts one stop twice:
// - Which requests were cut? The HTTP server counts per route:
//   cutoff_http_deadline_exceeded_total{route} and cutoff_http_stopped_total{route, reason}.
// - Which GraphQL fields were cut? The executor's MetricsRecorder counts per operation and
//   field path: cutoff_graphql_field_deadline_exceeded_total{operation, field} and
//   cutoff_graphql_field_stopped_total{operation, field, reason}.
// - What did each layer stop, and how long did the stopped work take to return? Every layer
//   that holds running work counts it in cutoff_stops_total{layer, reason} and observes
//   cutoff_overshoot_seconds{layer} (stop requested → work returned), with `layer` one of
//   http (a handler), graphql (a field; the executor also reports the fields it never started
//   after the stop, with zero overshoot), sql (a statement), http_client (an outbound call),
//   grpc (a gRPC handler), grpc_client (an outbound gRPC call), effect (an effect region:
//   stop → rolled back, or its shielded commit finished).
//   One request stopped at the deadline may count once at each layer it had work in, so sum
//   by layer, not across layers.
// Orphaned backend work, cutoff_orphaned_work_seconds{backend}, is recorded by the SQL
// drivers when a statement ends on the server after the response to its request went out.
//
//   cutoff::observe::Registry registry;
//   cutoff::observe::DeadlineMetrics m(registry);
//   m.route_deadline_exceeded.with({"GetWarehouse"}).inc();
//   cutoff::observe::LayerStops sql(registry, "sql");   // keeps the series: lock-free after
//   sql.record(cutoff::StopReason::deadline_exceeded, 1200us);
//   m.header_rejected.with({"grpc-timeout", "bad_unit"}).inc();
//   m.budget_received.with({"http"}).observe(0.250);
#ifndef CUTOFF_OBSERVE_DEADLINE_METRICS_HPP_
#define CUTOFF_OBSERVE_DEADLINE_METRICS_HPP_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "cutoff/core/cancel.hpp"
#include "cutoff/core/clock.hpp"
#include "cutoff/core/stop_reason.hpp"
#include "cutoff/observe/metrics.hpp"

namespace cutoff::observe {

// Buckets for durations from 0.5 ms to about 8 s.
std::vector<double> latency_buckets();

struct DeadlineMetrics {
  explicit DeadlineMetrics(Registry& registry);

  // {route}: requests cut by their deadline (also those refused at entry with a spent budget).
  Family<Counter>& route_deadline_exceeded;
  // {route, reason}: requests cut by any stop (deadline_exceeded, cancelled, shutdown).
  Family<Counter>& route_stopped;
  // {route}: requests answered commit_ambiguous (a handler's error, or a stop or failure
  // after the request's ledger noted a commit point).
  Family<Counter>& route_commit_ambiguous;
  // {operation, field}: GraphQL fields cut by their deadline; `field` has no list indices.
  Family<Counter>& field_deadline_exceeded;
  // {operation, field, reason}: GraphQL fields cut by any stop.
  Family<Counter>& field_stopped;
  // {operation, field}: GraphQL mutation fields answered COMMIT_AMBIGUOUS (their effect may
  // have landed when they were cut or failed).
  Family<Counter>& field_commit_ambiguous;
  // {layer, reason}: running work stopped, per layer (see above). Use LayerStops.
  Family<Counter>& stops;
  // {layer}: stop requested → the stopped work returned.
  Family<Histogram>& overshoot;
  // {surface}: budgets callers sent us, after tightening by the service's maximum.
  Family<Histogram>& budget_received;
  // {header, reason}: inbound budget headers that were ignored.
  Family<Counter>& header_rejected;
  // {backend}: response sent → the backend work for it ended (sqlite, postgresql).
  Family<Histogram>& orphaned_work;
  // {backend}: backend work still running after the response that the driver stopped
  // watching (it closed the connection), so its end is not in orphaned_work.
  Family<Counter>& orphaned_work_unobserved;
  // {operation}: effect regions whose stop landed at or after a commit point (the effects
  // module; the server counts the requests that answered so in route_commit_ambiguous).
  Family<Counter>& commit_ambiguous;
};

// One layer's series of cutoff_stops_total and cutoff_overshoot_seconds, looked up once so
// that recording takes no lock.
class LayerStops {
 public:
  LayerStops(Registry& registry, std::string_view layer);
  LayerStops(const DeadlineMetrics& metrics, std::string_view layer);

  // `reason` none is ignored. A negative overshoot counts as zero.
  void record(StopReason reason, Duration overshoot) const noexcept;
  // For a layer's own reasons (the HTTP client's `attempt_timeout`): looks the series up.
  void record(std::string_view reason, Duration overshoot) const;

 private:
  Family<Counter>& stops_;
  std::string layer_;
  std::array<Counter*, 4> by_reason_{};  // indexed by StopReason
  Histogram& overshoot_;
};

// When a token stopped, on the steady clock: the start of an overshoot. Registers a callback
// only when armed, so work that records no metrics pays nothing.
class StopStamp {
 public:
  StopStamp() = default;
  StopStamp(const StopStamp&) = delete;
  StopStamp& operator=(const StopStamp&) = delete;

  void arm(const CancelToken& token) { callback_.emplace(token, Mark{&at_}); }
  bool armed() const noexcept { return callback_.has_value(); }
  // Time from the stop to now; zero when the token has not stopped.
  Duration since_stop() const noexcept;

 private:
  struct Mark {
    std::atomic<std::int64_t>* at;
    void operator()(StopReason) noexcept {
      at->store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    }
  };
  std::atomic<std::int64_t> at_{0};
  std::optional<CancelCallback<Mark>> callback_;
};

}  // namespace cutoff::observe

#endif  // CUTOFF_OBSERVE_DEADLINE_METRICS_HPP_
