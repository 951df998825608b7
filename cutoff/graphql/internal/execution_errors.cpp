#include "cutoff/graphql/internal/execution_errors.hpp"

#include <utility>

#include "cutoff/core/error.hpp"

namespace cutoff::graphql::internal {

GraphQLError unexpected_error(const ErrorSink& sink, std::string_view what, std::vector<Location> locations,
                              std::vector<PathSegment> path, std::string_view code) {
  if (sink.recorder) sink.recorder->internal_error(sink.operation, path_text(path), sink.ctx.request_id(), what);
  const ErrorMasking& masking = sink.schema.error_masking();
  if (!masking.enabled) {
    GraphQLError e{std::string(what), std::move(locations), std::move(path), std::string(code)};
    if (!code.empty()) e.error_code = ErrorCode::internal;
    return e;
  }
  std::string message = masking.message;
  if (!sink.ctx.request_id().empty()) message += " (request id: " + sink.ctx.request_id() + ")";
  return GraphQLError::of(ErrorCode::internal, std::move(message), std::move(locations), std::move(path));
}

namespace {

// A failure that is neither a stop nor ambiguous, as the client sees it: a public
// cutoff::Error keeps its message and code; anything else is unexpected, and masked as the
// schema says (a cutoff::Error of code internal keeps its code when unmasked).
GraphQLError PlainFailure(const ErrorSink& sink, const std::exception_ptr& error, const Error& e,
                          std::vector<Location> locations, std::vector<PathSegment> path) {
  if (e.code() == ErrorCode::internal)
    return unexpected_error(sink, e.message(), std::move(locations), std::move(path),
                            find_error(error) ? e.info().graphql_code : std::string_view());
  return GraphQLError::of(e.code(), e.message(), std::move(locations), std::move(path));
}

}  // namespace

GraphQLError error_from(std::exception_ptr error, std::vector<Location> locations, std::vector<PathSegment> path,
                        const Context& ctx, const ErrorSink& sink) {
  if (const auto* field_error = find_exception<FieldError>(error))
    return GraphQLError{field_error->message, std::move(locations), std::move(path), field_error->code};
  const Error e = to_error(error, ctx.stop_reason(), ctx.request_id());
  if (e.stop_reason() != StopReason::none)
    return GraphQLError::of(error_code_for(e.stop_reason()), {}, std::move(locations), std::move(path));
  return PlainFailure(sink, error, e, std::move(locations), std::move(path));
}

std::optional<GraphQLError> ExecutionErrors::stopped(const PathNode* path, const FieldGroup& g, StopReason reason,
                                                     Duration overshoot, bool started) {
  if (reason == StopReason::none) reason = StopReason::cancelled;
  if (first_stop_reason_ == StopReason::none) first_stop_reason_ = reason;
  if (options_.recorder) options_.recorder->field_stopped(operation_, path_text(path), reason, overshoot);
  const ErrorCodeInfo& i = info(error_code_for(reason));
  const bool ambiguous = FieldMayHaveWritten();
  if (stop_errors_ >= options_.max_stop_errors) {
    ++suppressed_stop_errors_;
    if (ambiguous) {
      ambiguous_ = suppressed_ambiguous_ = true;
      if (options_.recorder) options_.recorder->field_ambiguous(operation_, path_text(path));
    }
    return std::nullopt;
  }
  ++stop_errors_;
  if (ambiguous)
    return AmbiguousError(path, g,
                          "it was stopped by " + std::string(i.name) + " after its effect may have been applied");
  if (!started && field_ledger_ && path->parent == nullptr)  // a root mutation field
    return GraphQLError::of(
        i.code, "This mutation field was never started (" + std::string(i.summary) + "), so it did nothing.",
        g.locations(), path_of(path));
  return GraphQLError::of(i.code, {}, g.locations(), path_of(path));
}

std::optional<GraphQLError> ExecutionErrors::failed(const PathNode* path, const FieldGroup& g, std::exception_ptr error,
                                                    const Context& ctx, bool externally_cancelled) {
  if (const auto* field_error = find_exception<FieldError>(error))
    return GraphQLError{field_error->message, g.locations(), path_of(path), field_error->code};
  // An Asio abort is this field's stop, or our caller cancelling us through Asio: a
  // cancellation, not a bug.
  const StopReason aborted_by = ctx.stop_requested()   ? ctx.stop_reason()
                                : externally_cancelled ? StopReason::cancelled
                                                       : StopReason::none;
  const Error e = to_error(error, aborted_by, ctx.request_id());
  if (e.stop_reason() != StopReason::none) return stopped(path, g, e.stop_reason(), Overshoot(ctx));
  // A failure that says nothing about the effect (no answer, a timeout, a refusal by
  // the infrastructure) after the field's effect may have landed is ambiguous too.
  if (e.code() == ErrorCode::commit_ambiguous || (FieldMayHaveWritten() && e.info().leaves_effect_unknown)) {
    if (field_ledger_) return AmbiguousError(path, g, e.message());
    return GraphQLError::of(e.code(), e.message(), g.locations(), path_of(path));
  }
  return PlainFailure(sink(), error, e, g.locations(), path_of(path));
}

bool ExecutionErrors::finish(Response& response) {
  if (suppressed_stop_errors_ > 0) {
    errors_.push_back(
        GraphQLError::of(suppressed_ambiguous_ ? ErrorCode::commit_ambiguous : error_code_for(first_stop_reason_),
                         "... and " + std::to_string(suppressed_stop_errors_) + " more fields were stopped (" +
                             std::string(cutoff::to_string(first_stop_reason_)) + ")"));
  }
  // The HTTP client's "sent, no answer" arrives as a commit_ambiguous error, not a stop.
  const bool stopped = first_stop_reason_ != StopReason::none || (ambiguous_ && ctx_.stop_requested());
  if (options_.policy == StopPolicy::whole_response && stopped) {
    // One error for the whole response must not read as "nothing happened" when a
    // mutation field's effect may have landed.
    const ErrorCodeInfo& i = info(ambiguous_ ? ErrorCode::commit_ambiguous : error_code_for(first_stop_reason_));
    response.has_data = false;
    response.errors.push_back(GraphQLError::of(i.code, ambiguous_ ? ambiguous_message_ : std::string()));
    return false;
  }
  response.errors = std::move(errors_);
  return true;
}

GraphQLError ExecutionErrors::AmbiguousError(const PathNode* path, const FieldGroup& g, std::string_view cause) {
  const bool keyed = field_ledger_->unkeyed_commit_points() == field_mark_.unkeyed &&
                     field_ledger_->commit_points() > field_mark_.commits;
  std::string m = "The mutation may have taken effect (" + std::string(cause) + "). ";
  m += keyed ? "Retrying with the same idempotency key is safe: it returns the first outcome instead of applying it "
               "again."
             : "Check whether it took effect before trying again.";
  ambiguous_ = true;
  if (ambiguous_message_.empty()) ambiguous_message_ = m;
  if (options_.recorder) options_.recorder->field_ambiguous(operation_, path_text(path));
  return GraphQLError::of(ErrorCode::commit_ambiguous, std::move(m), g.locations(), path_of(path));
}

Duration ExecutionErrors::Overshoot(const Context& ctx) const {
  const TimePoint now = SteadyClock::now();
  TimePoint stopped = stop_time_;
  if (ctx.stop_reason() == StopReason::deadline_exceeded && !ctx.deadline().is_never())
    stopped = ctx.deadline().time_point();
  if (stopped == TimePoint{} || stopped > now) return Duration::zero();
  return now - stopped;
}

}  // namespace cutoff::graphql::internal
