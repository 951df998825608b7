// Executing one operation (spec 6.3 ExecuteQuery and ExecuteMutation, 6.2.3.2
// ExecuteSubscriptionEvent): execute() and each subscription event run it. The walk that
// writes the response and propagates nulls is in execution.cpp; it uses the pieces beside
// it for the rest:
//   operation_setup   the operation, its variables, root type and limits, before anything runs;
//   field_collection  which fields a selection set selects on a type;
//   coercion          a field's argument values;
//   execution_errors  what error a failed or stopped field gets, and the response's errors;
//   field_tasks       the fields that complete later, and their cancellation;
//   walk_limits       the response's size limit and the walk's time slice;
//   response_writer   where a walk's values go in the response text, and where a null lands;
//   response_text     the response's JSON text, written out of order.
//
//   Response r = co_await internal::execute_operation(schema, request, ctx, options, /*event=*/false);
#ifndef CUTOFF_GRAPHQL_INTERNAL_EXECUTION_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_EXECUTION_HPP_

#include <boost/asio/awaitable.hpp>

#include "cutoff/core/context.hpp"
#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql::internal {

// execute() as executor.hpp describes it. `event`: executing a subscription event
// (request.root_value is the event), where a root field without a resolver takes the event
// itself as its value.
boost::asio::awaitable<Response> execute_operation(const Schema& schema, const Request& request, Context ctx,
                                                   ExecutionOptions options, bool event);

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_EXECUTION_HPP_
