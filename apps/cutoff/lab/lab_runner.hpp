// The lab runner: the warehouse services under load in three modes, measured side by side.
//
//   cutoff::lab::LabOptions opts;          // SQLite in $TMPDIR, every scenario
//   boost::json::value results = cutoff::lab::RunLab(opts);   // progress on stderr
//
// Each scenario runs the gateway and inventory services in this process, once per mode (none,
// timeouts, cutoff), with the same load, and measures from the client's side (what each
// request got: a complete answer, a partial one or none; goodput, latency) and from the
// database's side (pool occupancy, and statement-seconds spent after the caller already had
// its answer or gave up: zombie work). docs/lab.md explains each scenario and figure.
#ifndef CUTOFF_APPS_CUTOFF_LAB_LAB_RUNNER_HPP_
#define CUTOFF_APPS_CUTOFF_LAB_LAB_RUNNER_HPP_

#include <boost/json/value.hpp>
#include <string>
#include <vector>

namespace cutoff::lab {

struct LabOptions {
  std::string db;  // database URL; empty: a SQLite file in $TMPDIR
  std::vector<std::string> scenarios = {"chain", "amplification", "graphql", "overload", "orders"};
  std::vector<std::string> modes = {"none", "timeouts", "cutoff"};
  // The timeout table (user 5 s, service A 2 s, service B 10 s, query 8 s) times this.
  double scale = 0.05;
  double duration_s = 10;  // load per scenario and mode
  int pool_size = 4;
  double rate = 0;       // requests per second; 0: from the pool size and the scale
  bool progress = true;  // a live line on stderr
  // How the gateway calls the inventory: "http" (its routes) or "grpc" (inventory.proto).
  std::string inventory_transport = "http";
};

// Throws std::runtime_error when the services cannot start (e.g. the database is unreachable).
boost::json::value RunLab(const LabOptions& options);

// The comparison table for a terminal (under 100 columns): one line per scenario and mode,
// headed by what each column is and its unit; then what the columns mean, why requests failed
// (apart from the field errors inside partial answers), and what the run shows in words.
std::string FormatTable(const boost::json::value& results);

}  // namespace cutoff::lab

#endif  // CUTOFF_APPS_CUTOFF_LAB_LAB_RUNNER_HPP_
