// The process metrics every Prometheus client library exports, and cutoff's build info.
//
//   cutoff::observe::Registry registry;
//   cutoff::observe::register_process_metrics(registry);
//   cutoff::observe::register_build_info(registry);
//   // process_cpu_seconds_total 0.42, process_resident_memory_bytes 1.2e+07, ...
//   // cutoff_build_info{version="0.1.0",compiler="gcc 12.2.0"} 1
//
// Process metrics use the standard names (client_golang, client_python): process_cpu_seconds_total,
// process_resident_memory_bytes, process_virtual_memory_bytes, process_open_fds,
// process_max_fds and process_start_time_seconds (Unix time). They are read from /proc and
// getrusage when the page is exposed; on a system without /proc the /proc-based ones read 0.
// Both calls may be repeated on the same registry: the second does nothing. The HTTP server
// calls them for the registry it serves on /metrics.
#ifndef CUTOFF_OBSERVE_PROCESS_METRICS_HPP_
#define CUTOFF_OBSERVE_PROCESS_METRICS_HPP_

#include <string_view>

#include "cutoff/observe/metrics.hpp"

namespace cutoff::observe {

void register_process_metrics(Registry& registry);
void register_build_info(Registry& registry);

// The library's version, as built ("0.1.0").
std::string_view build_version() noexcept;

}  // namespace cutoff::observe

#endif  // CUTOFF_OBSERVE_PROCESS_METRICS_HPP_
