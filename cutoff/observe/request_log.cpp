#include "cutoff/observe/request_log.hpp"

#include <charconv>
#include <cstdio>
#include <ctime>

#include "cutoff/core/json_text.hpp"

namespace cutoff::observe {

std::string RequestLog::to_json() const {
  using namespace std::chrono;
  const auto ms = duration_cast<milliseconds>(at.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char ts[96];  // room for any int the format could see
  std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  std::string out = "{\"ts\":\"";
  out += ts;
  out += '"';
  auto member = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    out += ",\"";
    out += key;
    out += "\":";
    append_json_string(out, value);
  };
  member("request_id", request_id);
  member("operation", operation);
  member("outcome", outcome);
  if (budget_received) out += ",\"budget_ms\":" + std::to_string(budget_received->count());
  char used[32];
  std::snprintf(used, sizeof used, "%.1f", time_used.count());
  out += ",\"used_ms\":";
  out += used;
  member("trace_id", trace_id);
  out += '}';
  return out;
}

}  // namespace cutoff::observe
