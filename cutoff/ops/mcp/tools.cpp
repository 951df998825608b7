#include "cutoff/ops/mcp/tools.hpp"

#include <boost/json/serialize.hpp>
#include <string>

#include "cutoff/ops/catalog.hpp"

namespace cutoff::ops::mcp {

namespace json = boost::json;

namespace {

bool IsObjectSchema(const std::optional<json::value>& schema) {
  if (!schema || !schema->is_object()) return false;
  const json::value* type = schema->as_object().if_contains("type");
  return type && type->is_string() && type->as_string() == "object";
}

// What an agent should do after `code`, from the one error table (core/error.hpp).
std::string Advice(const Error& error, bool keyed) {
  switch (error.code()) {
    case ErrorCode::deadline_exceeded:
      return "The call ran out of its time budget and was stopped before anything was committed. "
             "Retrying with the same budget will most likely run out again; retry only with a larger "
             "budget or a smaller request.";
    case ErrorCode::cancelled:
      return "The call was cancelled and stopped before anything was committed.";
    case ErrorCode::shutdown:
      return "The service is shutting down; the call stopped before anything was committed. Retry later.";
    case ErrorCode::commit_ambiguous:
      return keyed ? "The call was stopped at or after its commit point, so its effect may exist. Retrying "
                     "with the same idempotency key is safe: it returns the first outcome instead of acting twice."
                   : "The call was stopped at or after its commit point, so its effect may exist. Do not retry "
                     "it without an idempotency key: check whether the effect happened first.";
    default:
      break;
  }
  if (retry_may_help(error.code())) return "Retrying after a short wait may succeed.";
  if (is_caller_error(error.code())) return "Retrying the same call will fail the same way; change the request.";
  return "Retrying the same call is not expected to help.";
}

}  // namespace

bool takes_key_argument(const OperationInfo& info) {
  if (!info.takes_idempotency_key) return false;
  if (!IsObjectSchema(info.request_schema)) return true;
  const json::value* props = info.request_schema->as_object().if_contains("properties");
  return !(props && props->is_object() && props->as_object().contains(kIdempotencyKeyArgument));
}

bool has_output_schema(const OperationInfo& info) { return IsObjectSchema(info.response_schema); }

json::object tool_definition(const ResolvedOperation& op) {
  const OperationInfo& info = op.info;
  json::object tool;
  tool["name"] = info.name;
  tool["description"] = describe_with_budget(info);
  json::object input = IsObjectSchema(info.request_schema) ? info.request_schema->as_object()
                                                           : json::object{{"type", "object"}};
  if (takes_key_argument(info)) {
    json::value& props = input["properties"];
    if (!props.is_object()) props = json::object();
    props.as_object()[kIdempotencyKeyArgument] = json::object{
        {"type", "string"},
        {"description",
         "Names this call: repeating it with the same key returns the first outcome instead of acting twice. "
         "Pass one whenever the call may need to be retried."}};
  }
  tool["inputSchema"] = std::move(input);
  if (has_output_schema(info)) tool["outputSchema"] = *info.response_schema;
  json::object meta;
  meta[kDeadlineMetaKey] = info.deadline ? deadline_seconds_json(*info.deadline) : json::value(nullptr);
  tool["_meta"] = std::move(meta);
  return tool;
}

json::object tools_list_result(const Registry& registry) {
  json::array tools;
  for (const ResolvedOperation* op : registry.operations()) tools.push_back(tool_definition(*op));
  return json::object{{"tools", std::move(tools)}};
}

json::object tool_success(const json::value& result, bool structured) {
  json::object out;
  out["content"] = json::array{json::object{{"type", "text"}, {"text", json::serialize(result)}}};
  if (structured && result.is_object()) out["structuredContent"] = result;
  out["isError"] = false;
  return out;
}

json::object tool_failure(const Error& error, bool keyed) {
  const ErrorCodeInfo& code = error.info();
  std::string text(code.name);
  text += code.retryable ? " (retryable): " : " (not retryable): ";
  text += error.message();
  if (!text.empty() && text.back() != '.') text += '.';
  text += ' ';
  text += Advice(error, keyed);
  json::object detail{{"code", code.name}, {"message", error.message()}, {"retryable", code.retryable}};
  if (!error.request_id().empty()) detail["request_id"] = error.request_id();
  json::object out;
  out["content"] = json::array{json::object{{"type", "text"}, {"text", std::move(text)}}};
  out["isError"] = true;
  out["_meta"] = json::object{{kErrorMetaKey, std::move(detail)}};
  return out;
}

}  // namespace cutoff::ops::mcp
