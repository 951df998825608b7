#include "cutoff/ops/http/mcp_http.hpp"

#include <algorithm>
#include <atomic>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string_view>
#include <unordered_map>

namespace cutoff::ops {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr std::string_view kSessionHeader = "Mcp-Session-Id";
constexpr std::string_view kVersionHeader = "MCP-Protocol-Version";

// An HTTP-level refusal, in the JSON-RPC error shape the client's transport reports.
http::Response Refusal(int status, std::string message) {
  return http::Response::json(
      status, json::serialize(json::object{{"jsonrpc", "2.0"},
                                           {"id", nullptr},
                                           {"error", json::object{{"code", -32600}, {"message", std::move(message)}}}}));
}

struct SessionEntry {
  explicit SessionEntry(const mcp::Server& server) : session(server) {}
  mcp::Session session;
  std::atomic<SteadyClock::rep> last_used{SteadyClock::now().time_since_epoch().count()};
  void touch() { last_used.store(SteadyClock::now().time_since_epoch().count(), std::memory_order_relaxed); }
};

// The open sessions, by id.
class Sessions {
 public:
  Sessions(std::size_t max, Duration idle_timeout) : max_(max), idle_timeout_(idle_timeout) {}

  std::shared_ptr<SessionEntry> find(std::string_view id) {
    std::lock_guard lock(mu_);
    auto it = by_id_.find(std::string(id));
    if (it == by_id_.end()) return nullptr;
    it->second->touch();
    return it->second;
  }

  // The new session's id, or nullopt when the limit is reached even after dropping idle
  // sessions.
  std::optional<std::string> open(std::shared_ptr<SessionEntry> entry) {
    std::lock_guard lock(mu_);
    if (by_id_.size() >= max_) {
      const auto idle_before = (SteadyClock::now() - idle_timeout_).time_since_epoch().count();
      for (auto it = by_id_.begin(); it != by_id_.end();) {
        if (it->second->last_used.load(std::memory_order_relaxed) < idle_before &&
            it->second->session.calls_in_flight() == 0) {
          it->second->session.stop_calls(StopReason::cancelled);
          it = by_id_.erase(it);
        } else {
          ++it;
        }
      }
      if (by_id_.size() >= max_) return std::nullopt;
    }
    std::string id = NewId();
    by_id_.emplace(id, std::move(entry));
    return id;
  }

  std::shared_ptr<SessionEntry> remove(std::string_view id) {
    std::lock_guard lock(mu_);
    auto it = by_id_.find(std::string(id));
    if (it == by_id_.end()) return nullptr;
    std::shared_ptr<SessionEntry> entry = std::move(it->second);
    by_id_.erase(it);
    return entry;
  }

 private:
  // 128 bits from the system's random source, as hex: not guessable, so one client cannot
  // reach (or end) another's session.
  std::string NewId() {
    char text[33];
    const std::uint64_t hi = (std::uint64_t{random_()} << 32) | random_();
    const std::uint64_t lo = (std::uint64_t{random_()} << 32) | random_();
    std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(hi),
                  static_cast<unsigned long long>(lo));
    return text;
  }

  const std::size_t max_;
  const Duration idle_timeout_;
  std::mutex mu_;
  std::random_device random_;  // guarded by mu_
  std::unordered_map<std::string, std::shared_ptr<SessionEntry>> by_id_;  // guarded by mu_
};

bool LoopbackOrigin(std::string_view origin) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (origin.substr(0, scheme.size()) != scheme) continue;
    std::string_view host = origin.substr(scheme.size());
    if (host.starts_with("[::1]")) {
      host.remove_prefix(5);
    } else {
      const std::size_t colon = host.find(':');
      const std::string_view name = host.substr(0, colon);
      if (!http::iequals(name, "localhost") && name != "127.0.0.1") return false;
      host.remove_prefix(name.size());
    }
    if (host.empty()) return true;
    if (host.front() != ':' || host.size() == 1) return false;
    return std::all_of(host.begin() + 1, host.end(), [](char c) { return c >= '0' && c <= '9'; });
  }
  return false;
}

bool AllowedOrigin(const http::Request& req, const std::vector<std::string>& allowed) {
  const auto origin = req.headers.get("Origin");
  if (!origin) return true;
  if (LoopbackOrigin(*origin)) return true;
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return http::iequals(a, *origin); });
}

bool SpokenVersion(std::string_view version) {
  return std::find(std::begin(mcp::kProtocolVersions), std::end(mcp::kProtocolVersions), version) !=
         std::end(mcp::kProtocolVersions);
}

bool IsInitialize(std::string_view body) {
  boost::system::error_code ec;
  json::parse_options options;
  options.max_depth = 64;
  const json::value msg = json::parse(body, ec, {}, options);
  if (ec || !msg.is_object()) return false;
  const json::value* method = msg.as_object().if_contains("method");
  return method && method->is_string() && method->as_string() == "initialize" && msg.as_object().contains("id");
}

struct Mount {
  Mount(const Registry& registry, McpMountOptions o)
      : options(std::move(o)),
        server(registry, options.server),
        sessions(options.max_sessions, options.session_idle_timeout) {}
  McpMountOptions options;
  mcp::Server server;
  Sessions sessions;
};

asio::awaitable<http::Response> Post(std::shared_ptr<Mount> mount, const http::Request& req, const Context& ctx) {
  if (!AllowedOrigin(req, mount->options.allowed_origins))
    co_return Refusal(403, "this origin may not call the MCP endpoint");
  if (const auto version = req.headers.get(kVersionHeader); version && !SpokenVersion(*version))
    co_return Refusal(400, "unsupported MCP-Protocol-Version \"" + std::string(*version) + "\"");
  const auto id = req.headers.get(kSessionHeader);
  if (!id) {
    if (!IsInitialize(req.body))
      co_return Refusal(400, "send the Mcp-Session-Id header the initialize answer gave, or initialize first");
    auto entry = std::make_shared<SessionEntry>(mount->server);
    std::optional<std::string> reply = co_await entry->session.handle(ctx, req.body);
    http::Response res = http::Response::json(200, reply.value_or("{}"));
    if (entry->session.protocol_version().empty()) co_return res;  // refused: no session opened
    const std::optional<std::string> opened = mount->sessions.open(std::move(entry));
    if (!opened) co_return Refusal(503, "too many MCP sessions are open; try again later");
    res.headers.set(kSessionHeader, *opened);
    co_return res;
  }
  std::shared_ptr<SessionEntry> entry = mount->sessions.find(*id);
  if (!entry) co_return Refusal(404, "no such MCP session (it ended or never existed): initialize a new one");
  std::optional<std::string> reply = co_await entry->session.handle(ctx, req.body);
  if (!reply) co_return http::Response{.status = 202};
  co_return http::Response::json(200, std::move(*reply));
}

}  // namespace

void mount_mcp(http::Server& server, const Registry& registry, McpMountOptions options) {
  const std::string path = options.path;
  const Duration grace = options.stop_grace;
  auto mount = std::make_shared<Mount>(registry, std::move(options));  // checks the registry is frozen
  server.route(
      "POST", path,
      [mount](const http::Request& req, const Context& ctx) -> asio::awaitable<http::Response> {
        return Post(mount, req, ctx);
      },
      {.name = "mcp", .stop_grace = grace});
  server.route(
      "GET", path,
      [](const http::Request&, const Context&) -> asio::awaitable<http::Response> {
        http::Response res = Refusal(405, "this server offers no event stream; POST messages instead");
        res.headers.set("Allow", "POST, DELETE");
        co_return res;
      },
      {.name = "mcp", .bind_deadline = false});
  server.route(
      "DELETE", path,
      [mount](const http::Request& req, const Context&) -> asio::awaitable<http::Response> {
        if (!AllowedOrigin(req, mount->options.allowed_origins))
          co_return Refusal(403, "this origin may not call the MCP endpoint");
        const auto id = req.headers.get(kSessionHeader);
        if (!id) co_return Refusal(400, "send the Mcp-Session-Id header of the session to end");
        std::shared_ptr<SessionEntry> entry = mount->sessions.remove(*id);
        if (!entry) co_return Refusal(404, "no such MCP session");
        entry->session.stop_calls(StopReason::cancelled);
        co_return http::Response{.status = 204};
      },
      {.name = "mcp", .bind_deadline = false});
}

}  // namespace cutoff::ops
