#include "cutoff/ops/http/operations_http.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/http/idempotency_key.hpp"
#include "cutoff/ops/invoker.hpp"

namespace cutoff::ops {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

bool JsonContentType(const http::Request& req) {
  const auto type = req.headers.get("Content-Type");
  if (!type) return true;  // curl -d without -H: accept
  std::string_view essence = type->substr(0, type->find(';'));
  while (!essence.empty() && (essence.back() == ' ' || essence.back() == '\t')) essence.remove_suffix(1);
  return http::iequals(essence, "application/json") || http::iequals(essence, "application/x-www-form-urlencoded");
}

}  // namespace

void mount_operations(http::Server& server, const Registry& registry, MountOptions options) {
  // Checks the registry is frozen.
  auto invoker = std::make_shared<const Invoker>(registry, InvokerOptions{.admission = options.admission});
  for (const ResolvedOperation* op : registry.operations()) {
    const std::string name = op->info.name;
    http::RouteOptions route{.name = name, .budget = op->info.deadline, .stop_grace = options.stop_grace};
    server.route(
        "POST", options.prefix + "/" + name,
        [invoker, name](const http::Request& req, const Context& ctx) -> asio::awaitable<http::Response> {
          if (!JsonContentType(req))
            throw Error(ErrorCode::invalid_argument, "send the arguments as application/json", ctx.request_id());
          json::value args = json::object();
          if (!req.body.empty()) {
            boost::system::error_code ec;
            args = json::parse(req.body, ec);
            if (ec)
              throw Error(ErrorCode::invalid_argument, "the request body is not valid JSON: " + ec.message(),
                          ctx.request_id());
          }
          // The key names this invocation; the operation records it with its effect (or
          // the invocation is refused: a key nobody honours is worse than none).
          InvokeOptions invoke;
          if (std::optional<std::string> key = http::idempotency_key(req, ctx.request_id()))
            invoke.idempotency_key = std::move(*key);
          auto invoking = invoker->invoke(ctx, name, std::move(args), std::move(invoke));
          json::value result = co_await std::move(invoking);
          co_return http::Response::json(200, json::serialize(result));
        },
        std::move(route));
  }
  if (!options.catalog_path.empty()) {
    auto body = std::make_shared<const std::string>(json::serialize(catalog_json(registry)));
    server.route(
        "GET", options.catalog_path,
        [body](const http::Request&, const Context&) -> asio::awaitable<http::Response> {
          co_return http::Response::json(200, *body);
        },
        {.name = "catalog", .bind_deadline = false});
  }
  if (!options.openapi_path.empty()) {
    auto body = std::make_shared<const std::string>(json::serialize(
        openapi_document(registry, {.title = options.title, .version = options.version, .path_prefix = options.prefix})));
    server.route(
        "GET", options.openapi_path,
        [body](const http::Request&, const Context&) -> asio::awaitable<http::Response> {
          co_return http::Response::json(200, *body);
        },
        {.name = "openapi", .bind_deadline = false});
  }
}

}  // namespace cutoff::ops
