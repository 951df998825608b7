// One structured JSON log line per request: who asked, what for, how it ended, and how much of
// its budget it had and used.
//
//   RequestLog log{.request_id = ctx.request_id(), .operation = "GetWarehouse",
//                  .outcome = "deadline_exceeded", .budget_received = 250ms, .time_used = 251ms,
//                  .trace_id = trace.trace_id_hex()};
//   std::fputs((log.to_json() + "\n").c_str(), stderr);
//   // {"ts":"2026-11-30T19:20:01.123Z","request_id":"req-42","operation":"GetWarehouse",
//   //  "outcome":"deadline_exceeded","budget_ms":250,"used_ms":251.0,"trace_id":"4bf9..."}
#ifndef CUTOFF_OBSERVE_REQUEST_LOG_HPP_
#define CUTOFF_OBSERVE_REQUEST_LOG_HPP_

#include <chrono>
#include <optional>
#include <string>

namespace cutoff::observe {

struct RequestLog {
  std::string request_id;
  std::string operation;
  std::string outcome;  // "ok" or a taxonomy code
  std::optional<std::chrono::milliseconds> budget_received;  // none: unbound
  std::chrono::duration<double, std::milli> time_used{0};
  std::string trace_id;  // empty: none
  std::chrono::system_clock::time_point at = std::chrono::system_clock::now();

  // One line of JSON, members in a fixed order, empty members left out.
  std::string to_json() const;
};

}  // namespace cutoff::observe

#endif  // CUTOFF_OBSERVE_REQUEST_LOG_HPP_
