// The request log of the `cutoff ... serve` commands: one JSON line per request on stderr,
// whole lines even when several threads log at once.
//
//   if (!quiet) server_options.log = cutoff::cli::StderrLines();
#ifndef CUTOFF_APPS_CUTOFF_STDERR_LOG_HPP_
#define CUTOFF_APPS_CUTOFF_STDERR_LOG_HPP_

#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>

namespace cutoff::cli {

inline std::function<void(std::string_view)> StderrLines() {
  auto mu = std::make_shared<std::mutex>();
  return [mu](std::string_view line) {
    std::lock_guard lock(*mu);
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fputc('\n', stderr);
  };
}

}  // namespace cutoff::cli

#endif  // CUTOFF_APPS_CUTOFF_STDERR_LOG_HPP_
