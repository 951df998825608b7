#include "cutoff/http/internal/server_log.hpp"

#include <chrono>
#include <string>

#include "cutoff/core/json_text.hpp"

namespace cutoff::http::internal {

namespace {

// {"event":"<event>","<key>":"<value>"}
std::string EventLine(std::string_view event, std::string_view key, std::string_view value) {
  std::string line = "{\"event\":";
  append_json_string(line, event);
  line += ",\"";
  line += key;
  line += "\":";
  append_json_string(line, value);
  line += "}";
  return line;
}

}  // namespace

void ServerLog::Request(const observe::RequestLog& entry) const {
  if (sink_) sink_(entry.to_json());
}

void ServerLog::HandlerError(const Context& ctx, std::string_view what) const {
  if (!sink_) return;
  std::string line = "{\"event\":\"handler_error\",\"request_id\":";
  append_json_string(line, ctx.request_id());
  line += ",\"operation\":";
  append_json_string(line, ctx.operation());
  line += ",\"message\":";
  append_json_string(line, what);
  line += "}";
  sink_(line);
}

void ServerLog::RejectedBudgetHeader(const RejectedHeader& rejected, std::string_view request_id) {
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  auto last = last_rejection_log_.load(std::memory_order_relaxed);
  if (now - last < std::chrono::nanoseconds(std::chrono::seconds(1)).count()) return;
  if (!last_rejection_log_.compare_exchange_strong(last, now)) return;
  std::string line = "{\"event\":\"budget_header_rejected\",\"header\":";
  append_json_string(line, rejected.name);
  line += ",\"value\":";
  append_json_string(line, rejected.value);
  line += ",\"reason\":";
  append_json_string(line, to_string(rejected.reason));
  line += ",\"request_id\":";
  append_json_string(line, request_id);
  line += "}";
  Line(line);
}

void ServerLog::ResponseHeaderDropped() const {
  Line("{\"event\":\"response_header_dropped\",\"reason\":\"a handler set a header that is not valid HTTP\"}");
}

void ServerLog::ConnectionError(std::string_view what) const {
  if (sink_) sink_(EventLine("connection_error", "message", what));
}

void ServerLog::WebSocketError(std::string_view what) const {
  if (sink_) sink_(EventLine("websocket_error", "message", what));
}

void ServerLog::ShutdownSignal(int signal) const {
  Line("{\"event\":\"shutdown\",\"signal\":" + std::to_string(signal) + "}");
}

}  // namespace cutoff::http::internal
