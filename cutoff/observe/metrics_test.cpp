#include "cutoff/observe/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <ctime>
#include <string>
#include <thread>

#include "cutoff/observe/deadline_metrics.hpp"
#include "cutoff/observe/process_metrics.hpp"

namespace cutoff::observe {
namespace {

TEST(Metrics, CountersGaugesAndLabels) {
  Registry r;
  auto& hits = r.counter("cutoff_fields_cut_total", "Work cut by its deadline.", {"operation", "path"});
  hits.with({"GetItem", "item.stock"}).inc();
  hits.with({"GetItem", "item.stock"}).inc(2);
  hits.with({"GetItem", "item.stock"}).inc(-5);  // ignored: counters only go up
  hits.with({"Other", "a\"b\\c\nd"}).inc();
  auto& in_use = r.gauge("cutoff_pool_in_use", "Connections leased.", {"pool"});
  in_use.with({"main"}).set(3);
  in_use.with({"main"}).add(-1);
  EXPECT_EQ(r.expose(),
            "# HELP cutoff_fields_cut_total Work cut by its deadline.\n"
            "# TYPE cutoff_fields_cut_total counter\n"
            "cutoff_fields_cut_total{operation=\"GetItem\",path=\"item.stock\"} 3\n"
            "cutoff_fields_cut_total{operation=\"Other\",path=\"a\\\"b\\\\c\\nd\"} 1\n"
            "# HELP cutoff_pool_in_use Connections leased.\n"
            "# TYPE cutoff_pool_in_use gauge\n"
            "cutoff_pool_in_use{pool=\"main\"} 2\n");
}

TEST(Metrics, Histograms) {
  Registry r;
  auto& h = r.histogram("cutoff_overshoot_seconds", "Stop requested to work returned.", {}, {0.25, 1, 4});
  for (double v : {0.125, 0.25, 0.5, 8.0}) h.with({}).observe(v);
  EXPECT_EQ(r.expose(),
            "# HELP cutoff_overshoot_seconds Stop requested to work returned.\n"
            "# TYPE cutoff_overshoot_seconds histogram\n"
            "cutoff_overshoot_seconds_bucket{le=\"0.25\"} 2\n"
            "cutoff_overshoot_seconds_bucket{le=\"1\"} 3\n"
            "cutoff_overshoot_seconds_bucket{le=\"4\"} 3\n"
            "cutoff_overshoot_seconds_bucket{le=\"+Inf\"} 4\n"
            "cutoff_overshoot_seconds_sum 8.875\n"
            "cutoff_overshoot_seconds_count 4\n");
  EXPECT_EQ(exponential_buckets(0.001, 2, 3), (std::vector<double>{0.001, 0.002, 0.004}));
}

TEST(Metrics, RejectsBadNamesAndConflictingRegistrations) {
  Registry r;
  EXPECT_THROW(r.counter("1bad", "x"), std::invalid_argument);
  EXPECT_THROW(r.counter("ok_total", "x", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW(r.histogram("h", "x", {"le"}, {1}), std::invalid_argument);
  EXPECT_THROW(r.histogram("h2", "x", {}, {2, 1}), std::invalid_argument);
  auto& a = r.counter("same_total", "help", {"a"});
  EXPECT_EQ(&a, &r.counter("same_total", "help", {"a"}));  // registering again returns it
  EXPECT_THROW(r.counter("same_total", "help", {"b"}), std::invalid_argument);
  EXPECT_THROW(r.gauge("same_total", "help", {"a"}), std::invalid_argument);
  EXPECT_THROW(a.with({"x", "y"}), std::invalid_argument);
}

TEST(Metrics, ConcurrentUpdatesAreNotLost) {
  Registry r;
  auto& c = r.counter("c_total", "c").with({});
  auto& h = r.histogram("h_seconds", "h", {}, {0.5}).with({});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.inc();
        h.observe(i % 2 ? 1.0 : 0.1);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 40000);
  EXPECT_EQ(h.snapshot().count, 40000u);
  EXPECT_EQ(h.snapshot().cumulative[0], 20000u);
}

TEST(Metrics, CallbackSeriesAreReadAtExposition) {
  Registry r;
  double in_use = 2;
  r.gauge_callback("cutoff_pool_connections_in_use", "Leased.", {"pool"}, {"main"}, [&] { return in_use; });
  r.counter_callback("cutoff_pool_rejected_total", "Rejected.", {"pool"}, {"main"}, [] { return 7.0; });
  in_use = 3;
  EXPECT_EQ(r.expose(),
            "# HELP cutoff_pool_connections_in_use Leased.\n# TYPE cutoff_pool_connections_in_use gauge\n"
            "cutoff_pool_connections_in_use{pool=\"main\"} 3\n"
            "# HELP cutoff_pool_rejected_total Rejected.\n# TYPE cutoff_pool_rejected_total counter\n"
            "cutoff_pool_rejected_total{pool=\"main\"} 7\n");
  EXPECT_THROW(r.gauge_callback("g", "x", {"a"}, {}, [] { return 0.0; }), std::invalid_argument);
}

TEST(Metrics, ValueFormatting) {
  EXPECT_EQ(format_value(1), "1");
  EXPECT_EQ(format_value(0.25), "0.25");
  EXPECT_EQ(format_value(1.0 / 0.0), "+Inf");
  EXPECT_EQ(format_value(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
}

// The value of one sample line ("name{labels} value"), or -1 when it is absent.
double Sample(const std::string& text, const std::string& series) {
  const auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

TEST(Metrics, LayerStopsCountByLayerAndReason) {
  Registry r;
  LayerStops sql(r, "sql");
  LayerStops client(r, "http_client");
  sql.record(StopReason::deadline_exceeded, std::chrono::milliseconds(2));
  sql.record(StopReason::cancelled, std::chrono::milliseconds(-1));  // counted as zero
  sql.record(StopReason::none, std::chrono::milliseconds(5));        // not a stop
  client.record("attempt_timeout", std::chrono::milliseconds(1));
  const std::string text = "\n" + r.expose();
  EXPECT_EQ(Sample(text, R"(cutoff_stops_total{layer="sql",reason="deadline_exceeded"})"), 1) << text;
  EXPECT_EQ(Sample(text, R"(cutoff_stops_total{layer="sql",reason="cancelled"})"), 1);
  EXPECT_EQ(Sample(text, R"(cutoff_stops_total{layer="sql",reason="shutdown"})"), 0);
  EXPECT_EQ(Sample(text, R"(cutoff_stops_total{layer="http_client",reason="attempt_timeout"})"), 1);
  EXPECT_EQ(Sample(text, R"(cutoff_overshoot_seconds_count{layer="sql"})"), 2);
  EXPECT_DOUBLE_EQ(Sample(text, R"(cutoff_overshoot_seconds_sum{layer="sql"})"), 0.002);
  EXPECT_EQ(Sample(text, R"(cutoff_overshoot_seconds_count{layer="http_client"})"), 1);
}

TEST(Metrics, StopStampMeasuresFromTheStop) {
  CancelSource source;
  StopStamp stamp;
  EXPECT_EQ(stamp.since_stop(), Duration::zero());  // not armed, not stopped
  stamp.arm(source.token());
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(stamp.since_stop(), Duration::zero());  // armed, not stopped
  source.request_stop(StopReason::cancelled);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GE(stamp.since_stop(), std::chrono::milliseconds(5));
  EXPECT_LT(stamp.since_stop(), std::chrono::seconds(5));
}

TEST(Metrics, ProcessMetricsAndBuildInfo) {
  Registry r;
  register_process_metrics(r);
  register_build_info(r);
  register_process_metrics(r);  // again: no second series
  register_build_info(r);
  const std::string text = "\n" + r.expose();
  EXPECT_GT(Sample(text, "process_cpu_seconds_total"), 0) << text;
  EXPECT_GT(Sample(text, "process_resident_memory_bytes"), 1e5);
  EXPECT_GT(Sample(text, "process_virtual_memory_bytes"), Sample(text, "process_resident_memory_bytes"));
  EXPECT_GE(Sample(text, "process_open_fds"), 3);
  EXPECT_GT(Sample(text, "process_max_fds"), Sample(text, "process_open_fds"));
  const double start = Sample(text, "process_start_time_seconds");
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(start, now + 1);
  EXPECT_GT(start, now - 3600);  // this test process started recently
  const std::string info = "cutoff_build_info{version=\"" + std::string(build_version()) + "\",compiler=\"";
  EXPECT_NE(text.find(info), std::string::npos) << text;
  EXPECT_EQ(build_version(), "0.1.0");
  std::size_t count = 0;
  for (std::size_t at = text.find("\nprocess_open_fds "); at != std::string::npos;
       at = text.find("\nprocess_open_fds ", at + 1))
    ++count;
  EXPECT_EQ(count, 1u);
}

}  // namespace
}  // namespace cutoff::observe
