// The errors of one execution, and what they say about it: which fields were stopped and by
// what, whether a mutation's effect may have landed, and which errors were unexpected (a bug
// in a resolver, masked for the client, logged with its real message). It decides what error
// a failed field gets; the execution writes the null.
//
//   ExecutionErrors errors(schema, options, operation.name, ctx);
//   if (std::optional<GraphQLError> e = errors.failed(path, group, std::current_exception(), ctx, false))
//     ...  // null at the field, `e` reported; nullopt: only counted (past max_stop_errors)
//   if (errors.finish(response)) response.data = ...;  // else one error for the whole response
#ifndef CUTOFF_GRAPHQL_INTERNAL_EXECUTION_ERRORS_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_EXECUTION_ERRORS_HPP_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/commit_ledger.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/graphql/error.hpp"
#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/internal/field_collection.hpp"
#include "cutoff/graphql/internal/response_path.hpp"

namespace cutoff::graphql::internal {

// Where an unexpected error is reported, and how it is shown.
struct ErrorSink {
  const Schema& schema;
  ExecutionRecorder* recorder;
  std::string_view operation;
  const Context& ctx;  // the operation's: its request id names the error in the log
};

// An unexpected error (an exception that is neither a FieldError nor a public cutoff::Error):
// reported with its real message to the recorder, shown to the client as the schema's
// masking says. `code` is kept when the error had one (a cutoff::Error of code internal).
GraphQLError unexpected_error(const ErrorSink& sink, std::string_view what, std::vector<Location> locations,
                              std::vector<PathSegment> path, std::string_view code = {});

// An error that ended something other than a field (a source stream's creation or its
// next event) as a GraphQL error at `path`. A cancellation caused by a stop of `ctx` reports
// the stop.
GraphQLError error_from(std::exception_ptr error, std::vector<Location> locations, std::vector<PathSegment> path,
                        const Context& ctx, const ErrorSink& sink);

// The field errors of one execution. `ctx` is the operation's context (the execution's
// member, which outlives this).
class ExecutionErrors {
 public:
  ExecutionErrors(const Schema& schema, const ExecutionOptions& options, std::string_view operation, const Context& ctx)
      : schema_(schema), options_(options), operation_(operation), ctx_(ctx) {}

  void add(GraphQLError e) { errors_.push_back(std::move(e)); }

  // The error of a field cut by a stop (`reason`; `started`: its resolver ran), or nullopt
  // when it is only counted: past max_stop_errors, stops are summarised in one error.
  // `overshoot` goes to the recorder.
  std::optional<GraphQLError> stopped(const PathNode* path, const FieldGroup& g, StopReason reason, Duration overshoot,
                                      bool started = true);

  // The error of a field whose resolver (or type resolver, or serializer) threw `error`
  // under `ctx`. A FieldError and a cutoff::Error of a public code keep their message and
  // code; a stop or an Asio abort is a stop (`externally_cancelled`: the caller cancelled
  // the execution through Asio); anything else is unexpected, and masked as the schema says.
  std::optional<GraphQLError> failed(const PathNode* path, const FieldGroup& g, std::exception_ptr error,
                                     const Context& ctx, bool externally_cancelled);

  // A mutation root field runs from here to end_mutation_field(): what `ledger` gains in
  // between is its effect, which makes its stop or failure ambiguous.
  void begin_mutation_field(const CommitLedger* ledger) {
    field_ledger_ = ledger;
    field_mark_ = {ledger->commit_points(), ledger->unkeyed_commit_points()};
  }
  void end_mutation_field() { field_ledger_ = nullptr; }

  // The operation's context stopped (called from any thread): overshoots count from now.
  void note_stop() noexcept { stop_time_ = SteadyClock::now(); }

  // Ends the execution's errors: the summary of the stops past max_stop_errors, then into
  // `response.errors`. False when StopPolicy::whole_response turned a stop into the
  // response's only error (and no data).
  bool finish(Response& response);

  ErrorSink sink() const { return ErrorSink{schema_, options_.recorder, operation_, ctx_}; }

 private:
  // Whether the mutation root field now running may have made something durable (its
  // share of the ledger). Always false outside a mutation's root fields.
  bool FieldMayHaveWritten() const noexcept {
    return field_ledger_ &&
           (field_ledger_->commit_points() > field_mark_.commits || field_ledger_->after_commit_pending());
  }
  // The error for a mutation field whose effect may have landed; `cause` says what cut it.
  GraphQLError AmbiguousError(const PathNode* path, const FieldGroup& g, std::string_view cause);
  // Stop requested → now.
  Duration Overshoot(const Context& ctx) const;

  const Schema& schema_;
  const ExecutionOptions& options_;
  std::string_view operation_;
  const Context& ctx_;
  std::vector<GraphQLError> errors_;
  std::size_t stop_errors_ = 0;
  std::size_t suppressed_stop_errors_ = 0;
  // The mutation root field running now and the ledger's counts when it started (null: not
  // in a mutation's root field).
  const CommitLedger* field_ledger_ = nullptr;
  struct {
    std::uint32_t commits = 0;
    std::uint32_t unkeyed = 0;
  } field_mark_;
  bool ambiguous_ = false;             // some field's effect may have landed
  bool suppressed_ambiguous_ = false;  // ... and its error was summarised
  std::string ambiguous_message_;
  StopReason first_stop_reason_ = StopReason::none;
  std::atomic<TimePoint> stop_time_{TimePoint{}};
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_EXECUTION_ERRORS_HPP_
