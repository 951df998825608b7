#include "cutoff/ops/catalog.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>

namespace cutoff::ops {

namespace json = boost::json;

namespace {

std::int64_t CeilMillis(Duration d) { return std::chrono::ceil<std::chrono::milliseconds>(d).count(); }

json::object GenericObject() {
  json::object o;
  o["type"] = "object";
  return o;
}

json::object JsonContent(json::value schema) {
  json::object media;
  media["schema"] = std::move(schema);
  json::object content;
  content["application/json"] = std::move(media);
  return content;
}

json::object RefTo(std::string_view schema) {
  json::object o;
  o["$ref"] = "#/components/schemas/" + std::string(schema);
  return o;
}

json::object ErrorResponse(std::string description) {
  json::object r;
  r["description"] = std::move(description);
  r["content"] = JsonContent(RefTo("Error"));
  return r;
}

json::object ErrorSchema() {
  json::object code{{"type", "string"},
                    {"description", "Stable machine code: deadline_exceeded, commit_ambiguous, not_found, ..."}};
  json::object message{{"type", "string"}};
  json::object request_id{{"type", "string"}};
  json::object inner{{"type", "object"},
                     {"required", json::array{"code", "message"}},
                     {"properties", json::object{{"code", code}, {"message", message}, {"request_id", request_id}}}};
  return json::object{{"type", "object"}, {"required", json::array{"error"}},
                      {"properties", json::object{{"error", inner}}}};
}

}  // namespace

std::string describe_with_budget(const OperationInfo& info) {
  std::string out = info.description;
  if (!out.empty() && out.back() != '.') out += '.';
  if (!out.empty()) out += ' ';
  if (info.deadline)
    out += "Time budget: " + format_seconds(*info.deadline) + " s.";
  else
    out += "No time budget is declared; only the caller's budget applies.";
  return out;
}

std::string format_seconds(Duration d) {
  const std::int64_t ms = CeilMillis(d);
  std::string out = std::to_string(ms / 1000);
  if (const std::int64_t frac = ms % 1000; frac != 0) {
    std::string digits = std::to_string(frac);
    digits.insert(0, 3 - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out;
}

json::value deadline_seconds_json(Duration d) {
  const std::int64_t ms = CeilMillis(d);
  if (ms % 1000 == 0) return json::value(ms / 1000);
  return json::value(static_cast<double>(ms) / 1000.0);
}

json::value catalog_json(const Registry& registry) {
  json::array ops;
  for (const ResolvedOperation* op : registry.operations()) {
    const OperationInfo& info = op->info;
    json::object o;
    o["name"] = info.name;
    o["description"] = info.description;
    if (!info.tag.empty()) o["tag"] = info.tag;
    o["deadline_seconds"] = info.deadline ? deadline_seconds_json(*info.deadline) : json::value(nullptr);
    switch (info.deadline_source.kind) {
      case DeadlineSource::Kind::none: o["deadline_source"] = "none"; break;
      case DeadlineSource::Kind::plan: o["deadline_source"] = "plan"; break;
      case DeadlineSource::Kind::patch:
        o["deadline_source"] = "patch";
        o["deadline_selector"] = info.deadline_source.selector;
        break;
    }
    if (info.request_schema) o["request_schema"] = *info.request_schema;
    if (info.response_schema) o["response_schema"] = *info.response_schema;
    ops.push_back(std::move(o));
  }
  return json::object{{"operations", std::move(ops)}};
}

json::value openapi_document(const Registry& registry, const OpenApiOptions& options) {
  json::object paths;
  for (const ResolvedOperation* op : registry.operations()) {
    const OperationInfo& info = op->info;
    json::object post;
    post["operationId"] = info.name;
    post["summary"] = info.description.empty() ? info.name : info.description;
    post["description"] = describe_with_budget(info);
    if (info.deadline) post["x-deadline-seconds"] = deadline_seconds_json(*info.deadline);
    if (!info.tag.empty()) post["tags"] = json::array{json::value(info.tag)};
    json::object budget_header{
        {"name", "Deadline-Budget-Ms"},
        {"in", "header"},
        {"required", false},
        {"description", "The caller's remaining budget in milliseconds; it can only shorten the operation's."},
        {"schema", json::object{{"type", "integer"}, {"minimum", 0}}}};
    post["parameters"] = json::array{std::move(budget_header)};
    json::object body;
    body["required"] = true;
    body["content"] = JsonContent(info.request_schema ? *info.request_schema : json::value(GenericObject()));
    post["requestBody"] = std::move(body);

    json::object responses;
    json::object ok;
    ok["description"] = "The operation's result";
    ok["content"] = JsonContent(info.response_schema ? *info.response_schema : json::value(GenericObject()));
    responses["200"] = std::move(ok);
    responses["400"] = ErrorResponse("invalid_argument: the arguments are not valid");
    responses["500"] = ErrorResponse(
        "commit_ambiguous: stopped at or after the commit point, the operation may have taken effect "
        "(do not retry blindly); or internal");
    responses["503"] = ErrorResponse("overloaded, unavailable or shutdown: retry after a backoff");
    json::object timeout = ErrorResponse(
        "deadline_exceeded: the time budget ran out before the operation committed; do not retry with "
        "the same budget");
    timeout["headers"] = json::object{
        {"Deadline-Expired",
         json::object{{"description", "1 when the caller's propagated budget was spent"},
                      {"schema", json::object{{"type", "string"}, {"enum", json::array{"1"}}}}}}};
    responses["504"] = std::move(timeout);
    post["responses"] = std::move(responses);

    json::object item;
    item["post"] = std::move(post);
    paths[options.path_prefix + "/" + info.name] = std::move(item);
  }
  json::object doc;
  doc["openapi"] = "3.1.0";
  doc["info"] = json::object{{"title", options.title}, {"version", options.version}};
  doc["paths"] = std::move(paths);
  doc["components"] = json::object{{"schemas", json::object{{"Error", ErrorSchema()}}}};
  return doc;
}

}  // namespace cutoff::ops
