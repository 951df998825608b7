// The lab report's charts, drawn here so that the page needs nothing else: line charts over
// time as inline SVG, and bars per mode as HTML (they wrap on a narrow screen). Each is a
// <figure> with its caption, the definition of what it shows and its key; the geometry
// depends only on the figures, so the same document always gives the same markup.
//
//   std::vector<report::Series> pool;
//   for (std::size_t i = 0; i < 3; ++i) {
//     pool.push_back({&report::kModes[i], report::Timeline(modes[i], "pool_in_use")});
//   }
//   report::LineChart(out, "pool", "s0-pool", "chain", "Pool occupancy over time", "What it shows.",
//                     "connections in use", pool, {report::PoolSizeLimit(10)});
//   report::OutcomesChart(out, "s0-outcomes", "chain", kind, modes);
#ifndef CUTOFF_APPS_CUTOFF_LAB_REPORT_CHARTS_HPP_
#define CUTOFF_APPS_CUTOFF_LAB_REPORT_CHARTS_HPP_

#include <string>
#include <string_view>
#include <vector>

#include "lab/report_model.hpp"

namespace cutoff::lab::report {

// One mode's line.
struct Series {
  const Mode* mode;
  std::vector<Sample> samples;
};

// A dashed horizontal line across a chart: `label` beside it (empty: none), `key` in the key
// under the chart, `data` names its data attribute (data-pool-size="10").
struct Limit {
  double value;
  std::string label;
  std::string_view color = "#57606a";
  std::string_view data = "pool-size";
  std::string key;  // the key's entry; empty: none (another line already has it)
};
Limit PoolSizeLimit(double size);

// A stretch of time shaded behind the lines, named at its top (an overload run's phases).
struct Band {
  std::string name;
  double from, to;
};

// A line per mode over time; `limits` are drawn as dashed horizontal lines, `bands` shaded
// behind everything.
void LineChart(std::string& out, std::string_view kind, std::string_view id, std::string_view scenario,
               std::string_view caption, std::string_view definition, std::string_view y_label,
               const std::vector<Series>& series, const std::vector<Limit>& limits,
               const std::vector<Band>& bands = {});

// A stacked bar per mode and kind of request: answered in full, partially, failed.
void OutcomesChart(std::string& out, std::string_view id, std::string_view scenario, const Kind& kind,
                   const Modes& modes);

// A bar per mode of the database's statement time, to one scale, its part nobody waited for
// dark.
void ZombieChart(std::string& out, std::string_view id, std::string_view scenario, const Modes& modes);

}  // namespace cutoff::lab::report

#endif  // CUTOFF_APPS_CUTOFF_LAB_REPORT_CHARTS_HPP_
