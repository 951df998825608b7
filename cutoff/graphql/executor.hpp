// Executing GraphQL operations under a deadline that reaches every resolver.
//
//   cutoff::graphql::Request req{.document = doc.get(), .operation_name = "Q", .variables = vars};
//   Response r = co_await cutoff::graphql::execute(schema, req, ctx.with_timeout(250ms));
//   send(r.to_json());  // {"errors":[...],"data":{...}}
//
// The spec's algorithm (variable and argument coercion, field collection with @skip/@include,
// value completion, abstract types, lists, null propagation to the nearest nullable
// ancestor), plus deadlines:
// - sibling fields of a query and list items run concurrently (asynchronous resolvers are all
//   started, in order, before any is awaited); root mutation fields run one after another;
// - each field checks the operation's context at entry (one atomic load): a field not started
//   when the deadline passed is never started; asynchronous resolvers in flight are cancelled
//   through Asio (terminal), including the I/O they wait on;
// - a field cut short becomes null with an error at its path whose extensions.code is
//   DEADLINE_EXCEEDED (CANCELLED when the client went away); completed siblings keep their
//   values; nulls in non-null positions propagate as usual;
// - `@budget(ms: N)` on a field definition runs that field under min(remaining, N ms): when
//   the cap fires, only that field is cut;
// - at most `max_stop_errors` stop errors are listed; the rest are summarised in one error
//   ("... and N more fields were stopped"), so a list of 10,000 cut items yields a bounded
//   response;
// - StopPolicy::whole_response turns any stop into one error and no data.
//
// Execution must run on one strand (or a single-threaded io_context): a request's coroutine
// tree shares its state without locks. The Schema, Document and variables must outlive it.
#ifndef CUTOFF_GRAPHQL_EXECUTOR_HPP_
#define CUTOFF_GRAPHQL_EXECUTOR_HPP_

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/data.hpp"
#include "cutoff/graphql/error.hpp"
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
};

enum class StopPolicy {
  partial,         // cut fields become null with errors; everything else is returned
  whole_response,  // any stop fails the whole response: one error, no data
};

struct ExecutionOptions {
  StopPolicy policy = StopPolicy::partial;
  std::size_t max_stop_errors = 50;
  ExecutionRecorder* recorder = nullptr;
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

  // {"errors":[...],"data":...}: members present only when meaningful; errors first.
  std::string to_json() const;
};

boost::asio::awaitable<Response> execute(const Schema& schema, const Request& request, Context ctx,
                                         ExecutionOptions options = {});

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_EXECUTOR_HPP_
