// Metrics: counters, gauges and histograms with labels, exposed in the Prometheus text format.
//
//   cutoff::observe::Registry registry;
//   auto& hits = registry.counter("cutoff_graphql_field_deadline_exceeded_total",
//                                 "GraphQL fields cut by their deadline.", {"operation", "field"});
//   hits.with({"GetWarehouse", "warehouse.bins.stock"}).inc();
//   auto& overshoot = registry.histogram("cutoff_overshoot_seconds",
//                                        "Stop requested to work returned.", {"layer"},
//                                        cutoff::observe::exponential_buckets(0.0005, 2, 14));
//   overshoot.with({"sql"}).observe(0.0031);
//   std::string text = registry.expose();  // what /metrics serves
//
// Families are created once (registration takes a lock); updating a series is lock-free
// (atomics). Keep references to series on hot paths: `with()` looks the series up under the
// family's lock. Names and label names are checked against Prometheus' rules: a bad name,
// or the same name registered again with another type, help or label set, throws
// std::invalid_argument.
#ifndef CUTOFF_OBSERVE_METRICS_HPP_
#define CUTOFF_OBSERVE_METRICS_HPP_

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace cutoff::observe {

class Counter {
 public:
  // `v` must not be negative (a counter only goes up); negative values are ignored.
  void inc(double v = 1) noexcept {
    if (v > 0) value_.fetch_add(v, std::memory_order_relaxed);
  }
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void set(double v) noexcept { value_.store(v, std::memory_order_relaxed); }
  void add(double v) noexcept { value_.fetch_add(v, std::memory_order_relaxed); }
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  explicit Histogram(const std::vector<double>& bounds);
  void observe(double v) noexcept;
  // Cumulative counts per bound (the last is +Inf), sum and count, read together.
  struct Snapshot {
    std::vector<std::uint64_t> cumulative;
    double sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot snapshot() const;
  const std::vector<double>& bounds() const noexcept { return *bounds_; }

 private:
  std::shared_ptr<const std::vector<double>> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;  // one per bound, plus +Inf
  std::atomic<double> sum_{0};
  std::atomic<std::uint64_t> count_{0};
};

// Buckets `start, start*factor, ...` (`count` of them).
std::vector<double> exponential_buckets(double start, double factor, int count);

// A named metric with one series per combination of label values.
template <typename Metric>
class Family {
 public:
  // The series for these label values (in the order the labels were declared). Throws
  // std::invalid_argument when the number of values is wrong.
  Metric& with(std::initializer_list<std::string_view> values);
  Metric& with(const std::vector<std::string>& values);

 private:
  friend class Registry;
  Family(std::string name, std::string help, std::vector<std::string> labels, std::vector<double> bounds = {})
      : name_(std::move(name)), help_(std::move(help)), labels_(std::move(labels)), bounds_(std::move(bounds)) {}
  Metric& Get(std::vector<std::string> values);

  std::string name_, help_;
  std::vector<std::string> labels_;
  std::vector<double> bounds_;  // histograms
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> series_;
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Family<Counter>& counter(std::string name, std::string help, std::vector<std::string> labels = {});
  Family<Gauge>& gauge(std::string name, std::string help, std::vector<std::string> labels = {});
  // `bounds`: increasing upper bounds (+Inf is implied).
  Family<Histogram>& histogram(std::string name, std::string help, std::vector<std::string> labels,
                               std::vector<double> bounds);

  // Series whose value is read when the page is exposed, for state that something else
  // already counts (a pool's connections, its rejections). `read` must stay valid, and be
  // thread-safe, for as long as the registry exposes it. A family is either callback-based
  // or updated through with(), not both.
  void gauge_callback(std::string name, std::string help, std::vector<std::string> labels,
                      std::vector<std::string> values, std::function<double()> read);
  void counter_callback(std::string name, std::string help, std::vector<std::string> labels,
                        std::vector<std::string> values, std::function<double()> read);

  // Whether a family of this name is registered (for registrations that must happen once).
  bool contains(std::string_view name) const;

  // The Prometheus text exposition format (version 0.0.4), families in registration order.
  std::string expose() const;

 private:
  struct Entry;
  Entry& Register(const std::string& name, const std::string& type, const std::string& help,
                  const std::vector<std::string>& labels, const std::vector<double>& bounds);
  void AddCallback(const std::string& type, std::string name, std::string help, std::vector<std::string> labels,
                   std::vector<std::string> values, std::function<double()> read);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

// Formats a sample value as Prometheus does ("1", "0.25", "+Inf", "NaN").
std::string format_value(double v);

}  // namespace cutoff::observe

#endif  // CUTOFF_OBSERVE_METRICS_HPP_
