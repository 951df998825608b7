// The request log of the `cutoff ... serve` commands: one JSON line per request on stderr,
// whole lines even when several threads log at once.
//
//   if (!quiet) server_options.log = cutoff::cli::StderrLines();
//   if (!quiet) server_options.log = cutoff::cli::StderrLinesOf("B");  // {"service":"B",...}
#ifndef CUTOFF_APPS_CUTOFF_STDERR_LOG_HPP_
#define CUTOFF_APPS_CUTOFF_STDERR_LOG_HPP_

#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "cutoff/core/json_text.hpp"

namespace cutoff::cli {

inline std::function<void(std::string_view)> StderrLines() {
  auto mu = std::make_shared<std::mutex>();
  return [mu](std::string_view line) {
    std::lock_guard lock(*mu);
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fputc('\n', stderr);
  };
}

// The same, each JSON object line tagged with the service it comes from, so that several
// services (the relays of a chain) can share a terminal.
inline std::function<void(std::string_view)> StderrLinesOf(const std::string& service) {
  return [write = StderrLines(), service](std::string_view line) {
    std::string tagged = "{\"service\":";
    append_json_string(tagged, service);
    if (line.size() > 2) tagged += ",";
    tagged.append(line.substr(1));
    write(tagged);
  };
}

}  // namespace cutoff::cli

#endif  // CUTOFF_APPS_CUTOFF_STDERR_LOG_HPP_
