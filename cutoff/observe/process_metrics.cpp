#include "cutoff/observe/process_metrics.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#ifndef CUTOFF_VERSION
#define CUTOFF_VERSION "unknown"
#endif

namespace cutoff::observe {
namespace {

double CpuSeconds() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

// Fields 1 and 2 of /proc/self/statm (virtual size, resident set), in pages.
double StatmBytes(int field) {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  return static_cast<double>(field == 0 ? size : resident) * page;
}

double OpenFds() {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return 0;
  double n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n - 1;  // the descriptor opendir itself holds
}

double MaxFds() {
  rlimit l{};
  if (getrlimit(RLIMIT_NOFILE, &l) != 0 || l.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<double>(l.rlim_cur);
}

// Boot time (/proc/stat btime) plus the process's start in clock ticks after boot
// (/proc/self/stat field 22), as client_golang computes it.
double StartTimeSeconds() {
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  const auto close = line.rfind(')');  // the command name may contain spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  unsigned long long start_ticks = 0;
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) start_ticks = std::stoull(field);
  std::ifstream boot("/proc/stat");
  double btime = 0;
  while (std::getline(boot, line))
    if (line.rfind("btime ", 0) == 0) btime = std::stod(line.substr(6));
  if (btime == 0) return 0;
  return btime + static_cast<double>(start_ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::string Compiler() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "gcc " __VERSION__;
#else
  return "unknown";
#endif
}

}  // namespace

namespace {
// Two servers built at once on one registry must not both register: that would expose each
// series twice, which Prometheus rejects.
std::mutex g_register_mu;
}  // namespace

std::string_view build_version() noexcept { return CUTOFF_VERSION; }

void register_process_metrics(Registry& registry) {
  std::lock_guard lock(g_register_mu);
  if (registry.contains("process_cpu_seconds_total")) return;
  registry.counter_callback("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", {}, {},
                            &CpuSeconds);
  registry.gauge_callback("process_resident_memory_bytes", "Resident memory size in bytes.", {}, {},
                          [] { return StatmBytes(1); });
  registry.gauge_callback("process_virtual_memory_bytes", "Virtual memory size in bytes.", {}, {},
                          [] { return StatmBytes(0); });
  registry.gauge_callback("process_open_fds", "Number of open file descriptors.", {}, {}, &OpenFds);
  registry.gauge_callback("process_max_fds", "Maximum number of open file descriptors.", {}, {}, &MaxFds);
  // Read once: it does not change.
  const double start = StartTimeSeconds();
  registry.gauge_callback("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", {},
                          {}, [start] { return start; });
}

void register_build_info(Registry& registry) {
  std::lock_guard lock(g_register_mu);
  if (registry.contains("cutoff_build_info")) return;
  registry.gauge_callback("cutoff_build_info", "The cutoff library this process was built with; always 1.",
                          {"version", "compiler"}, {std::string(build_version()), Compiler()}, [] { return 1.0; });
}

}  // namespace cutoff::observe
