// Executing GraphQL operations under a deadline that reaches every resolver.
//
//   cutoff::graphql::Request req{.document = doc.get(), .operation_name = "Q", .variables = vars};
//   Response r = co_await cutoff::graphql::execute(schema, req, ctx.with_timeout(250ms));
//   send(r.to_json());  // {"errors":[...],"data":{...}}
//
// The spec's algorithm (variable and argument coercion, field collection with @skip/@include,
// value completion, abstract types, lists, null propagation to the nearest nullable
// ancestor), plus deadlines:
// - sibling fields of a query and list items run concurrently: asynchronous resolvers start in
//   order, each after the synchronous part of the response is written, and all of them start
//   before any that suspended resumes (one that finishes without suspending costs a coroutine
//   call, no spawn); root mutation fields run one after another;
// - each field checks the operation's context at entry (one atomic load): a field not started
//   when the deadline passed is never started; asynchronous resolvers in flight are cancelled
//   through Asio (terminal), including the I/O they wait on;
// - a field cut short becomes null with an error at its path whose extensions.code is
//   DEADLINE_EXCEEDED (CANCELLED when the client went away); completed siblings keep their
//   values; nulls in non-null positions propagate as usual;
// - `@budget(ms: N)` on a field definition runs that field under min(remaining, N ms): when
//   the cap fires, only that field is cut. The cap covers everything that produces the
//   field's value: its resolver (synchronous or asynchronous), pending values (Data::pending)
//   and list items, and the fields below it, each cut at its own path. A producer that
//   ignores cancellation and returns a value anyway keeps it (it may have had effects);
// - a resolver's unexpected exception is masked as the schema's ErrorMasking says, and
//   reported to the recorder (`internal_error`) with its real message;
// - at most `max_stop_errors` stop errors are listed; the rest are summarised in one error
//   ("... and N more fields were stopped"), so a list of 10,000 cut items yields a bounded
//   response;
// - StopPolicy::whole_response turns any stop into one error and no data;
// - limits (ExecutionOptions): an operation nested too deep or estimated too costly (with
//   its fragments expanded, see operation_limits.hpp) is refused before any resolver runs; a
//   response that grows past `max_response_bytes` stops the execution; and a walk that has
//   run for `yield_after` lets the event loop run before it goes on. No part of execution
//   recurses deeper than the operation's depth, which the depth limit bounds.
//
// Execution must run on one strand (or a single-threaded io_context): a request's coroutine
// tree shares its state without locks. The Schema, Document and variables must outlive it.
//
// Subscriptions (spec 6.2.3) start with `subscribe` and deliver one response per event:
//
//   SubscribeOptions opts;                  // opts.event_budget: each event's own deadline
//   SubscribeResult s = co_await cutoff::graphql::subscribe(schema, req, stream_ctx, opts);
//   if (!s.ok()) co_return send_error(s.errors.to_json());   // did not start
//   while (std::optional<Response> r = co_await s.subscription->next()) send_next(r->to_json());
//   if (s.subscription->end() == Subscription::End::failed)
//     send_error(s.subscription->failure().to_json());
//   else
//     send_complete();
//
// `stream_ctx` is the subscription's context: it normally has no deadline and is stopped when
// the client completes the subscription or goes away. Each event executes under a fresh child
// of it with `event_budget`, so a slow event is cut (DEADLINE_EXCEEDED at the fields it did
// not finish, as in `execute`) while the stream goes on with the next event.
#ifndef CUTOFF_GRAPHQL_EXECUTOR_HPP_
#define CUTOFF_GRAPHQL_EXECUTOR_HPP_

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/data.hpp"
#include "cutoff/graphql/error.hpp"
#include "cutoff/graphql/event_stream.hpp"
#include "cutoff/graphql/operation_limits.hpp"
#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql {

// Receives what the executor cut, per operation and field path (the metrics module
// implements it). Called on the execution's strand.
class ExecutionRecorder {
 public:
  virtual ~ExecutionRecorder() = default;
  // `path` like "warehouse.bins.3.stock"; `overshoot` is stop requested → resolver returned
  // (zero for a field that was never started).
  virtual void field_stopped(std::string_view operation, std::string_view path, StopReason reason,
                             Duration overshoot) = 0;
  // A mutation root field answered COMMIT_AMBIGUOUS: its effect may have landed.
  virtual void field_ambiguous(std::string_view /*operation*/, std::string_view /*path*/) {}
  // An unexpected error (see ErrorMasking in schema.hpp) at `path` ("" for a subscription's
  // source stream), with the exception's own `message`, which the client may not have seen:
  // for the server's log. `request_id` is the operation context's.
  virtual void internal_error(std::string_view /*operation*/, std::string_view /*path*/,
                              std::string_view /*request_id*/, std::string_view /*message*/) {}
};

enum class StopPolicy {
  partial,         // cut fields become null with errors; everything else is returned
  whole_response,  // any stop fails the whole response: one error, no data
};

struct ExecutionOptions {
  StopPolicy policy = StopPolicy::partial;
  std::size_t max_stop_errors = 50;
  ExecutionRecorder* recorder = nullptr;
  // Depth and cost, checked before any resolver runs (operation_limits.hpp).
  OperationLimits limits;
  // The response's `data` may grow to this many bytes while it is written; past it the
  // execution stops (resolvers in flight are cancelled) and answers one RESPONSE_TOO_LARGE
  // error without data. 0: no limit.
  std::size_t max_response_bytes = 32 * 1024 * 1024;
  // How long the executor may write the response without letting other work on its executor
  // run. Past it, the fields not yet started (inside a list or an object, the rest of it, as
  // one task) are queued and the execution yields (a post), so one huge operation does not stall
  // every other request on the event loop. Checked every 256 fields. Zero: never yield.
  Duration yield_after = std::chrono::milliseconds(2);
};

struct Request {
  const Document* document = nullptr;  // parsed; validate() it first
  std::string operation_name;          // empty: the document's only operation
  boost::json::object variables;
  Data root_value;  // the parent of the root fields (null by default)
};

struct Response {
  bool has_data = false;  // false for request errors (no operation, bad variables)
  std::string data;       // JSON text of `data` ("null" when it was nulled)
  std::vector<GraphQLError> errors;

  // {"errors":[...],"data":...}: members present only when meaningful; errors first. The
  // rvalue form writes into `data`'s buffer instead of copying it.
  std::string to_json() const&;
  std::string to_json() &&;
};

// The operation `name` selects in `doc`, or its only operation when `name` is empty; null when
// there is no such operation (execute() then reports why).
const OperationDefinition* select_operation(const Document& doc, std::string_view name) noexcept;

boost::asio::awaitable<Response> execute(const Schema& schema, const Request& request, Context ctx,
                                         ExecutionOptions options = {});

// ---- subscriptions -------------------------------------------------------------------------------

struct SubscribeOptions {
  // How each event executes: stop policy, error bound, recorder.
  ExecutionOptions execution;
  // Each event executes under a fresh child of the subscription's context with this timeout
  // (so min(what the subscription has left, event_budget)); `@budget` caps still apply
  // inside. Duration::max(): events get no deadline of their own.
  Duration event_budget = std::chrono::seconds(5);
};

struct SubscribeResult;

// A started subscription: the response stream of one subscription operation. Not thread-safe:
// call next() on the strand the subscription runs on, one call at a time. The Schema and the
// Document must outlive it; the request's variables and root value are copied.
class Subscription {
 public:
  enum class End : std::uint8_t {
    none,       // next() may still produce responses
    completed,  // the source stream ended
    stopped,    // the subscription's context stopped (stop_reason() says why)
    failed,     // the source stream failed (failure() holds the error)
  };

  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;
  ~Subscription();

  // Waits for the next source event and executes the subscription's selection set for it,
  // with the event as the root field's value (the root field's resolver, if any, receives
  // the event as its parent and maps it; without one the event itself is the value).
  // Returns nullopt once the stream has ended, and end() then says how.
  //
  // When the subscription's context stops while waiting for an event, next() returns nullopt
  // promptly. When it stops while an event executes, that event's execution is cut like any
  // execution: next() returns its response, whose unfinished fields carry the stop's code
  // (CANCELLED when the client went away, SHUTTING_DOWN, or DEADLINE_EXCEEDED when the
  // subscription's own deadline passed), and the following call returns nullopt. A
  // transport whose client completed the subscription or disconnected discards that
  // response; one shutting down may still send it. Cancelling the coroutine awaiting next()
  // through Asio (say `next() || timer`) ends the subscription too: end() is `stopped` with
  // reason `cancelled`, and next() completes as a cancelled Asio operation does (it throws
  // when cancelled while waiting for an event).
  boost::asio::awaitable<std::optional<Response>> next();

  End end() const noexcept { return end_; }
  // The reason for End::stopped; none otherwise.
  StopReason stop_reason() const noexcept { return stop_reason_; }
  // For End::failed: the source stream's error as a response without data (its path is the
  // root field's), ready to send as graphql-transport-ws `error`.
  const Response& failure() const noexcept { return failure_; }
  const Context& context() const noexcept { return ctx_; }

 private:
  friend boost::asio::awaitable<SubscribeResult> subscribe(const Schema&, const Request&, Context, SubscribeOptions);
  Subscription(const Schema& schema, const Request& request, Context ctx, SubscribeOptions options,
               std::unique_ptr<EventStream> stream, std::string field_key, Location field_location);
  void Stop(StopReason reason);

  const Schema& schema_;
  Request request_;
  Context ctx_;
  SubscribeOptions options_;
  std::unique_ptr<EventStream> stream_;
  std::string field_key_;  // the root field's response key, for stream errors' paths
  Location field_location_;
  End end_ = End::none;
  StopReason stop_reason_ = StopReason::none;
  Response failure_;
};

struct SubscribeResult {
  std::unique_ptr<Subscription> subscription;  // null when the subscription did not start
  Response errors;                             // why it did not start: errors, no data
  bool ok() const noexcept { return subscription != nullptr; }
};

// CreateSourceEventStream (spec 6.2.3.1) for a validated document: coerces the variables,
// finds the subscription's root field, coerces its arguments and calls its source resolver
// under `ctx` (which becomes the subscription's context). Fails with errors and no data when
// the operation is not a subscription, the root field has no source resolver, the context
// has already stopped, or the source resolver throws (the error is at the root field's
// path, with its code).
boost::asio::awaitable<SubscribeResult> subscribe(const Schema& schema, const Request& request, Context ctx,
                                                  SubscribeOptions options = {});

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_EXECUTOR_HPP_
