#include "example_operations.hpp"

#include <atomic>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <string>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"

namespace cutoff::cli {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;

constexpr std::int64_t kMaxMs = 86'400'000;

// Waits `ms` under the call's context: the deadline (or Ctrl-C) stops the wait.
asio::awaitable<void> Work(const ops::Call& call, std::int64_t ms) {
  asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
  co_await with_context(call.ctx, timer.async_wait(asio::use_awaitable));
}

const json::object& ArgsObject(const ops::Call& call) {
  if (!call.args.is_object())
    throw Error(ErrorCode::invalid_argument, "the arguments must be a JSON object", call.ctx.request_id());
  return call.args.as_object();
}

// args[key] as milliseconds in [0, 1 day]; `fallback` when absent.
std::int64_t Millis(const ops::Call& call, std::string_view key, std::optional<std::int64_t> fallback) {
  const json::value* v = ArgsObject(call).if_contains(key);
  if (!v) {
    if (fallback) return *fallback;
    throw Error(ErrorCode::invalid_argument, "\"" + std::string(key) + "\" is required", call.ctx.request_id());
  }
  boost::system::error_code ec;
  const auto n = v->to_number<std::int64_t>(ec);
  if (ec || n < 0 || n > kMaxMs)
    throw Error(ErrorCode::invalid_argument,
                "\"" + std::string(key) + "\" must be an integer number of milliseconds from 0 to 86400000",
                call.ctx.request_id());
  return n;
}

json::value Schema(std::string_view text) { return json::parse(text); }

// example.orders.create in an effect region: the order row, the idempotency record and the
// commit point in one transaction; the after-commit work runs to completion even under a stop.
asio::awaitable<json::value> CreateOrderEffect(effects::Effects& effects, const ops::Call& call, std::string sku,
                                               std::int64_t qty, std::int64_t work_ms, std::int64_t after_ms) {
  effects::EffectRequest er;
  er.operation = "example.orders.create";
  er.idempotency_key = call.idempotency_key;
  er.fingerprint = json::serialize(call.args);
  effects::EffectBody body = [sku, qty, work_ms, after_ms](effects::Effect& fx) -> asio::awaitable<std::string> {
    asio::steady_timer work(co_await asio::this_coro::executor, std::chrono::milliseconds(work_ms));
    co_await with_context(fx.context(), work.async_wait(asio::use_awaitable));
    std::vector<sql::Value> p{sku, qty};
    sql::Result r = co_await fx.execute("insert into example_orders (sku, qty) values ($1, $2) returning id", p);
    const std::int64_t id = r[0].get<std::int64_t>("id");
    fx.after_commit([after_ms](const Context& ctx) -> asio::awaitable<void> {
      asio::steady_timer notify(co_await asio::this_coro::executor, std::chrono::milliseconds(after_ms));
      co_await with_context(ctx, notify.async_wait(asio::use_awaitable));  // outbox dispatch, notifications
    });
    co_return json::serialize(json::object{{"order_id", "ord-" + std::to_string(id)}, {"sku", sku}, {"qty", qty},
                                           {"status", "created"}});
  };
  auto running = effects.run(call.ctx, std::move(er), std::move(body));
  effects::EffectOutcome out = co_await std::move(running);
  json::value result = json::parse(out.result);
  result.as_object()["replayed"] = out.replayed;
  co_return result;
}

}  // namespace

asio::awaitable<void> InstallExampleTables(effects::Effects& effects, sql::Pool& pool, const Context& ctx) {
  co_await effects.install(ctx);
  sql::Pool::Lease conn = co_await pool.acquire(ctx);
  // SQLite and PostgreSQL both read this (an identity column would be PostgreSQL only).
  co_await conn->execute(ctx,
                         "create table if not exists example_orders (id integer primary key, sku text not null, "
                         "qty integer not null)",
                         {});
}

ops::Registry MakeExampleRegistry(effects::Effects* effects) {
  ops::Registry r;
  r.bind("example.echo")
      .describe("Returns its arguments")
      .handler([](const ops::Call& call) -> asio::awaitable<json::value> { co_return call.args; });
  r.bind("example.sleep")
      .describe("Waits the given number of milliseconds, honouring the deadline")
      .request_schema(Schema(R"({"type":"object","required":["ms"],
                                 "properties":{"ms":{"type":"integer","minimum":0,"maximum":86400000}}})"))
      .response_schema(Schema(R"({"type":"object","properties":{"slept_ms":{"type":"integer"}}})"))
      .handler([](const ops::Call& call) -> asio::awaitable<json::value> {
        const std::int64_t ms = Millis(call, "ms", std::nullopt);
        co_await Work(call, ms);
        co_return json::object{{"slept_ms", ms}};
      });
  r.bind("example.budget")
      .describe("Returns the time budget the operation was given")
      .handler([](const ops::Call& call) -> asio::awaitable<json::value> {
        const Duration left = call.ctx.remaining();
        json::object out;
        if (left == Duration::max())
          out["remaining_ms"] = nullptr;
        else
          out["remaining_ms"] = std::chrono::ceil<std::chrono::milliseconds>(left).count();
        co_return out;
      });
  auto orders = r.bind("example.orders.create");
  if (effects) orders.takes_idempotency_key();
  orders.deadline(2s)
      .describe("Creates an order: work, a commit point, then after-commit work")
      .request_schema(Schema(R"({"type":"object","required":["sku"],"properties":{
          "sku":{"type":"string"},"qty":{"type":"integer","minimum":1},
          "work_ms":{"type":"integer","minimum":0,"default":200},
          "after_commit_ms":{"type":"integer","minimum":0,"default":400}}})"))
      .response_schema(Schema(R"({"type":"object","properties":{
          "order_id":{"type":"string"},"sku":{"type":"string"},"qty":{"type":"integer"},
          "status":{"type":"string"}}})"))
      .handler([effects](const ops::Call& call) -> asio::awaitable<json::value> {
        static std::atomic<std::uint64_t> next_order{1};
        const json::object& args = ArgsObject(call);
        const json::value* sku = args.if_contains("sku");
        if (!sku || !sku->is_string() || sku->as_string().empty())
          throw Error(ErrorCode::invalid_argument, "\"sku\" must be a non-empty string", call.ctx.request_id());
        std::int64_t qty = 1;
        if (const json::value* q = args.if_contains("qty")) {
          boost::system::error_code ec;
          qty = q->to_number<std::int64_t>(ec);
          if (ec || qty < 1) throw Error(ErrorCode::invalid_argument, "\"qty\" must be a positive integer", call.ctx.request_id());
        }
        const std::int64_t work_ms = Millis(call, "work_ms", 200);
        const std::int64_t after_ms = Millis(call, "after_commit_ms", 400);
        if (effects) {
          auto creating = CreateOrderEffect(*effects, call, std::string(sku->as_string()), qty, work_ms, after_ms);
          co_return co_await std::move(creating);
        }
        co_await Work(call, work_ms);
        // Here a real effect would commit its transaction (the effects module notes this).
        if (CommitLedger* ledger = call.ctx.commit_ledger()) ledger->note_commit_point();
        const std::string id = "ord-" + std::to_string(next_order.fetch_add(1));
        co_await Work(call, after_ms);  // after-commit work: outbox dispatch, notifications
        co_return json::object{{"order_id", id}, {"sku", *sku}, {"qty", qty}, {"status", "created"}};
      });
  r.patch("example.*").deadline(10s);
  r.freeze();
  return r;
}

}  // namespace cutoff::cli
