// Fuzzes the MCP session's message handling: each input is one JSON-RPC message sent to an
// initialized session over a registry of quick tools (echo, and one that always fails). The
// session never throws, and every reply is a JSON-RPC 2.0 object with either a result or an
// error; notifications and stray responses get none.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "cutoff/core/error.hpp"
#include "cutoff/ops/mcp/session.hpp"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;

const cutoff::ops::Registry& Tools() {
  static const cutoff::ops::Registry registry = [] {
    cutoff::ops::Registry r;
    r.bind("f.echo")
        .request_schema(json::parse(R"({"type":"object"})"))
        .response_schema(json::parse(R"({"type":"object"})"))
        .handler([](const cutoff::ops::Call& call) -> asio::awaitable<json::value> { co_return call.args; });
    r.bind("f.keyed").takes_idempotency_key().handler(
        [](const cutoff::ops::Call&) -> asio::awaitable<json::value> {
          throw cutoff::Error(cutoff::ErrorCode::invalid_argument, "always fails");
          co_return json::value();
        });
    r.freeze();
    return r;
  }();
  return registry;
}

std::optional<std::string> Handle(cutoff::ops::mcp::Session& session, std::string_view message) {
  asio::io_context io;
  auto reply = asio::co_spawn(io, session.handle(cutoff::Context(), message), asio::use_future);
  io.run();
  return reply.get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cutoff::ops::mcp::Server server(Tools(), {.max_message_bytes = 64 * 1024});
  cutoff::ops::mcp::Session session(server);
  if (!Handle(session, R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})"))
    std::abort();
  const std::optional<std::string> reply =
      Handle(session, std::string_view(reinterpret_cast<const char*>(data), size));
  if (!reply) return 0;
  boost::system::error_code ec;
  const json::value parsed = json::parse(*reply, ec);
  if (ec || !parsed.is_object()) std::abort();
  const json::object& o = parsed.as_object();
  if (o.if_contains("jsonrpc") == nullptr || o.at("jsonrpc") != "2.0" || !o.contains("id")) std::abort();
  if (o.contains("result") == o.contains("error")) std::abort();
  if (session.calls_in_flight() != 0) std::abort();
  return 0;
}
