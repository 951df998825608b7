#include "cutoff/graphql/executor.hpp"

#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/this_coro.hpp>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/graphql/internal/coercion.hpp"
#include "cutoff/graphql/internal/execution.hpp"
#include "cutoff/graphql/internal/execution_errors.hpp"
#include "cutoff/graphql/internal/field_collection.hpp"
#include "cutoff/graphql/internal/operation_setup.hpp"

namespace cutoff::graphql {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// `{"errors":[...],` (when there are errors), then `"data":` when there is data.
void AppendResponseHead(const Response& r, std::string& out) {
  out.push_back('{');
  if (!r.errors.empty()) {
    out += "\"errors\":[";
    for (std::size_t i = 0; i < r.errors.size(); ++i) {
      if (i) out.push_back(',');
      r.errors[i].append_json(out);
    }
    out.push_back(']');
    if (r.has_data) out.push_back(',');
  }
  if (r.has_data) out += "\"data\":";
}

}  // namespace

std::string Response::to_json() const& {
  std::string out;
  out.reserve(data.size() + 16 + 128 * errors.size());  // one allocation for most responses
  AppendResponseHead(*this, out);
  if (has_data) out += data.empty() ? "null" : data;
  out.push_back('}');
  return out;
}

std::string Response::to_json() && {
  if (!has_data || data.empty()) return static_cast<const Response&>(*this).to_json();
  std::string head;
  AppendResponseHead(*this, head);
  std::string out = std::move(data);
  out.insert(0, head);
  out.push_back('}');
  return out;
}

const OperationDefinition* select_operation(const Document& doc, std::string_view name) noexcept {
  if (name.empty()) return doc.operations.size() == 1 ? &doc.operations.front() : nullptr;
  for (const auto& op : doc.operations)
    if (op.name == name) return &op;
  return nullptr;
}

asio::awaitable<Response> execute(const Schema& schema, const Request& request, Context ctx, ExecutionOptions options) {
  return internal::execute_operation(schema, request, std::move(ctx), std::move(options), /*event=*/false);
}

// ---- subscriptions -------------------------------------------------------------------------------

namespace {

// CreateSourceEventStream (spec 6.2.3.1): the source stream of the subscription's root field,
// or null with `errors` set. `key` and `location` receive the root field's response key and
// location.
asio::awaitable<std::unique_ptr<EventStream>> CreateSourceStream(const Schema& schema, const Request& req,
                                                                 const Context& ctx, const ExecutionOptions& options,
                                                                 std::vector<GraphQLError>& errors, std::string* key,
                                                                 Location* location) {
  std::optional<internal::OperationSetup> setup =
      internal::setup_operation(schema, req, options.limits, /*subscription=*/true, errors);
  if (!setup) co_return nullptr;
  const OperationDefinition& op = *setup->operation;
  const Type& root_type = *setup->root_type;
  // The spec takes the first root field; validation has made it the only one.
  internal::FieldCollector collector(schema, *req.document, setup->variables);
  const internal::Collected& fields = collector.collect(root_type, op.selection_set);
  if (fields.groups.empty()) {
    errors.push_back({"The subscription selects no root field.", {op.loc}, {}, {}});
    co_return nullptr;
  }
  const internal::FieldGroup& g = fields.groups[0];
  *key = std::string(g.key);
  *location = g.nodes[0]->loc;
  std::vector<PathSegment> path{std::string(g.key)};
  const Field* def = g.def;
  if (!def || def == &schema.typename_meta_field()) {
    errors.push_back(
        {"The subscription field \"" + std::string(g.nodes[0]->name) + "\" is not defined.", g.locations(), path, {}});
    co_return nullptr;
  }
  if (!def->subscribe) {
    errors.push_back(
        {"Subscription field " + root_type.name + "." + def->name + " has no event source.", g.locations(), path, {}});
    co_return nullptr;
  }
  if (ctx.stop_requested()) {  // never start after the stop
    errors.push_back(GraphQLError::of(error_code_for(ctx.stop_reason()), {}, g.locations(), path));
    co_return nullptr;
  }
  std::string error;
  json::object args = internal::coerce_argument_values(*def, *g.nodes[0], setup->variables, &error);
  if (!error.empty()) {
    errors.push_back({error, g.locations(), path, {}});
    co_return nullptr;
  }
  std::unique_ptr<EventStream> stream;
  std::exception_ptr failed;
  try {
    FieldContext fc{ctx, req.root_value, args, *def, root_type, schema, setup->variables, *g.nodes[0]};
    stream = co_await with_context(ctx, def->subscribe(fc));
  } catch (...) {
    failed = std::current_exception();
  }
  if (failed) {
    const internal::ErrorSink sink{schema, options.recorder, op.name, ctx};
    errors.push_back(internal::error_from(failed, g.locations(), path, ctx, sink));
    co_return nullptr;
  }
  if (!stream)
    errors.push_back({"Subscription field " + root_type.name + "." + def->name + " returned no event stream.",
                      g.locations(),
                      path,
                      {}});
  co_return stream;
}

}  // namespace

Subscription::Subscription(const Schema& schema, const Request& request, Context ctx, SubscribeOptions options,
                           std::unique_ptr<EventStream> stream, std::string field_key, Location field_location)
    : schema_(schema),
      request_(request),
      ctx_(std::move(ctx)),
      options_(options),
      stream_(std::move(stream)),
      field_key_(std::move(field_key)),
      field_location_(field_location) {}

Subscription::~Subscription() = default;

void Subscription::Stop(StopReason reason) {
  end_ = End::stopped;
  stop_reason_ = reason == StopReason::none ? StopReason::cancelled : reason;
  stream_.reset();  // releases what the source holds (a listener, a connection) at once
}

asio::awaitable<std::optional<Response>> Subscription::next() {
  if (end_ != End::none) co_return std::nullopt;
  if (ctx_.stop_requested()) {
    Stop(ctx_.stop_reason());
    co_return std::nullopt;
  }

  // MapSourceToResponseEvent: wait for the source's next event under the subscription's
  // context. with_context also cancels a stream that does not watch the context itself.
  std::optional<Data> event;
  std::exception_ptr failed;
  try {
    event = co_await with_context(ctx_, stream_->next(ctx_));
  } catch (...) {
    failed = std::current_exception();
  }
  if (failed) {
    const asio::cancellation_state cs = co_await asio::this_coro::cancellation_state;
    if (cs.cancelled() != asio::cancellation_type::none) {  // our caller was cancelled through Asio
      Stop(StopReason::cancelled);
      std::rethrow_exception(failed);
    }
    if (ctx_.stop_requested()) {
      Stop(ctx_.stop_reason());
      co_return std::nullopt;
    }
    end_ = End::failed;
    const internal::ErrorSink sink{schema_, options_.execution.recorder, request_.operation_name, ctx_};
    failure_.errors.push_back(internal::error_from(failed, {field_location_}, {field_key_}, ctx_, sink));
    stream_.reset();
    co_return std::nullopt;
  }
  if (!event) {
    end_ = End::completed;
    stream_.reset();
    co_return std::nullopt;
  }
  if (ctx_.stop_requested()) {  // stopped as the event arrived: it is not executed
    Stop(ctx_.stop_reason());
    co_return std::nullopt;
  }

  // ExecuteSubscriptionEvent, under the event's own deadline.
  request_.root_value = std::move(*event);
  Context event_ctx = ctx_.with_timeout(options_.event_budget);
  Response response =
      co_await internal::execute_operation(schema_, request_, std::move(event_ctx), options_.execution, /*event=*/true);
  request_.root_value = Data();  // the event is not kept past its response
  // A stop during the event makes this response the last.
  if (ctx_.stop_requested()) {
    Stop(ctx_.stop_reason());
  } else {
    const asio::cancellation_state cs = co_await asio::this_coro::cancellation_state;
    if (cs.cancelled() != asio::cancellation_type::none) Stop(StopReason::cancelled);
  }
  co_return response;
}

asio::awaitable<SubscribeResult> subscribe(const Schema& schema, const Request& request, Context ctx,
                                           SubscribeOptions options) {
  SubscribeResult result;
  if (!request.document) {
    result.errors.errors.push_back({"Must provide document.", {}, {}, {}});
    co_return result;
  }
  std::string key;
  Location location;
  std::unique_ptr<EventStream> stream =
      co_await CreateSourceStream(schema, request, ctx, options.execution, result.errors.errors, &key, &location);
  if (!stream) co_return result;
  result.subscription.reset(
      new Subscription(schema, request, std::move(ctx), options, std::move(stream), std::move(key), location));
  co_return result;
}

}  // namespace cutoff::graphql
