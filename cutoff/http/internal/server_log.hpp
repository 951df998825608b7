// The server's JSON log lines (ServerOptions::log): one per request (observe::RequestLog) and
// the events around them. Without a sink every call writes nothing.
//
//   internal::ServerLog log(options.log);
//   log.HandlerError(ctx, e.message());   // {"event":"handler_error","request_id":..}
//   log.RejectedBudgetHeader(rejected, request_id);  // at most one a second
#ifndef CUTOFF_HTTP_INTERNAL_SERVER_LOG_HPP_
#define CUTOFF_HTTP_INTERNAL_SERVER_LOG_HPP_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>

#include "cutoff/core/context.hpp"
#include "cutoff/core/budget_headers.hpp"
#include "cutoff/observe/request_log.hpp"

namespace cutoff::http::internal {

class ServerLog {
 public:
  using Sink = std::function<void(std::string_view line)>;

  explicit ServerLog(const Sink& sink) : sink_(sink) {}

  // False when there is no sink: the caller can skip building a line.
  bool enabled() const noexcept { return static_cast<bool>(sink_); }
  void Line(std::string_view line) const {
    if (sink_) sink_(line);
  }

  void Request(const observe::RequestLog& entry) const;
  // A handler failed with something other than cutoff::Error; `what` is not sent to the client.
  void HandlerError(const Context& ctx, std::string_view what) const;
  // An inbound budget header was ignored. Logged at most once a second: a client sending
  // garbage must not flood the log.
  void RejectedBudgetHeader(const RejectedHeader& rejected, std::string_view request_id);
  void ResponseHeaderDropped() const;
  void ConnectionError(std::string_view what) const;
  void WebSocketError(std::string_view what) const;
  void ShutdownSignal(int signal) const;

 private:
  const Sink& sink_;  // ServerOptions::log, which outlives the server
  std::atomic<std::int64_t> last_rejection_log_{0};
};

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_SERVER_LOG_HPP_
