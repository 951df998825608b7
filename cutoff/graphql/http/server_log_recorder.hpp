// Internal to the GraphQL transports: unexpected resolver errors, which clients see masked
// (ErrorMasking in schema.hpp), written to the HTTP server's log with their real message and
// the request id, so an operator can find what a client's "Internal server error (request
// id: ...)" was.
//
//   {"event":"graphql_error","request_id":"req-7","operation":"Q","path":"item.price","message":"..."}
#ifndef CUTOFF_GRAPHQL_HTTP_SERVER_LOG_RECORDER_HPP_
#define CUTOFF_GRAPHQL_HTTP_SERVER_LOG_RECORDER_HPP_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "cutoff/core/json_text.hpp"
#include "cutoff/graphql/executor.hpp"
#include "cutoff/http/server.hpp"

namespace cutoff::graphql::internal {

// Passes everything on to `next` (the caller's recorder, if any) and logs unexpected errors.
class ServerLogRecorder final : public ExecutionRecorder {
 public:
  ServerLogRecorder(std::function<void(std::string_view line)> log, ExecutionRecorder* next)
      : log_(std::move(log)), next_(next) {}

  void field_stopped(std::string_view operation, std::string_view path, StopReason reason,
                     Duration overshoot) override {
    if (next_) next_->field_stopped(operation, path, reason, overshoot);
  }

  void internal_error(std::string_view operation, std::string_view path, std::string_view request_id,
                      std::string_view message) override {
    std::string line = "{\"event\":\"graphql_error\",\"request_id\":";
    append_json_string(line, request_id);
    line += ",\"operation\":";
    append_json_string(line, operation);
    line += ",\"path\":";
    append_json_string(line, path);
    line += ",\"message\":";
    append_json_string(line, message);
    line += "}";
    log_(line);
    if (next_) next_->internal_error(operation, path, request_id, message);
  }

 private:
  std::function<void(std::string_view line)> log_;
  ExecutionRecorder* next_;
};

// Points `options.recorder` at a ServerLogRecorder in front of it when `server` has a log;
// the returned recorder must live as long as the options are used (null: nothing changed).
inline std::shared_ptr<ExecutionRecorder> log_to_server(const http::Server& server, ExecutionOptions& options) {
  if (!server.log_sink()) return nullptr;
  auto recorder = std::make_shared<ServerLogRecorder>(server.log_sink(), options.recorder);
  options.recorder = recorder.get();
  return recorder;
}

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_HTTP_SERVER_LOG_RECORDER_HPP_
