// The warehouse services on loopback, on SQLite: the gateway's outbound fan-out limits (a query
// with thousands of aliases) and the idempotency key checks on the inventory's HTTP route and
// the gateway's reserveStock.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>

#include "cutoff/core/error.hpp"
#include "cutoff/effects/effects.hpp"
#include "cutoff/grpc/client.hpp"
#include "cutoff/grpc/server.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"
#include "warehouse/gateway.hpp"
#include "warehouse/inventory.hpp"
#include "warehouse/inventory_grpc.hpp"
#include "warehouse/inventory.pb.h"
#include "warehouse/outbound_limits.hpp"

namespace cutoff::warehouse {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;
using cutoff::test_support::Scaled;
using cutoff::test_support::Sleep;

// ---- OutboundLimits alone ----

template <typename T>
asio::awaitable<std::string> CodeOf(asio::awaitable<T> op) {
  try {
    co_await std::move(op);
  } catch (const Error& e) {
    co_return std::string(to_string(e.code()));
  }
  co_return "ok";
}

TEST(OutboundLimits, AQueuedCallLeavesWithDeadlineExceededAndAFullQueueIsOverloaded) {
  OutboundLimits limits({.per_operation = 1, .per_operation_queue = 1, .total = 8, .total_queue = 8});
  RunSync([&]() -> asio::awaitable<void> {
    const OutboundLimits::Operation op = limits.begin_operation(Context());
    OutboundLimits::Permit held = co_await limits.acquire(op.context());
    // The one queue place, under a short deadline: it leaves when the deadline passes.
    const Context soon = op.context().with_timeout(50ms);
    const auto started = std::chrono::steady_clock::now();
    std::string queued;
    asio::co_spawn(
        co_await asio::this_coro::executor,
        [&]() -> asio::awaitable<void> { queued = co_await CodeOf(limits.acquire(soon)); }, asio::detached);
    co_await Sleep(10ms);
    // The queue is full now: refused at once.
    try {
      co_await limits.acquire(op.context());
      ADD_FAILURE() << "admitted past a full queue";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::overloaded);
      EXPECT_NE(std::string(e.message()).find("per-operation limit"), std::string::npos) << e.message();
    }
    while (queued.empty()) co_await Sleep(5ms);
    EXPECT_EQ(queued, "deadline_exceeded");
    EXPECT_LT(std::chrono::steady_clock::now() - started, Scaled(1000ms));
    // Another operation has its own limit; both share the gateway-wide one.
    const OutboundLimits::Operation other = limits.begin_operation(Context());
    OutboundLimits::Permit second = co_await limits.acquire(other.context());
    EXPECT_EQ(limits.total_stats().in_use, 2u);
    EXPECT_EQ(limits.operations(), 2u);
  });
  EXPECT_EQ(limits.operations(), 0u);
  EXPECT_EQ(limits.total_stats().in_use, 0u);
}

TEST(OutboundLimits, TheGatewayWideQueueIsBoundedToo) {
  OutboundLimits limits({.per_operation = 8, .per_operation_queue = 8, .total = 1, .total_queue = 0});
  RunSync([&]() -> asio::awaitable<void> {
    const OutboundLimits::Operation op = limits.begin_operation(Context());
    OutboundLimits::Permit held = co_await limits.acquire(op.context());
    try {
      co_await limits.acquire(op.context());
      ADD_FAILURE() << "admitted past the gateway-wide limit";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::overloaded);
      EXPECT_NE(std::string(e.message()).find("the gateway has 1 calls"), std::string::npos) << e.message();
    }
    // A call under no operation (a context with values of its own) still takes a gateway slot.
    EXPECT_EQ(co_await CodeOf(limits.acquire(Context().with_request_id("elsewhere"))), "overloaded");
  });
}

// ---- The services on loopback ----

class WarehouseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cutoff-warehouse-test-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  // Starts both services; `gateway`, `inventory_limits` and `inventory` as the test needs. Both
  // services' metrics go to registries of their own (gateway_metrics_, inventory_metrics_).
  void Start(GatewayOptions gateway, std::size_t inventory_max_connections = 1024,
             const std::function<void(InventoryOptions&)>& inventory = {}) {
    InventoryOptions inv;
    inv.db_url = "sqlite:" + (dir_ / "warehouse.db").string();
    inv.data.bins_per_warehouse = 20;
    inv.data.movements_per_bin = 2;
    inv.valuation_steps = 1;  // no calibration: nothing here values stock
    inv.metrics = &inventory_metrics_;
    if (inventory) inventory(inv);
    inventory_ = std::make_unique<Inventory>(inv);
    const Context setup = Context().with_timeout(std::chrono::minutes(2));
    auto started = asio::co_spawn(io_, inventory_->start(setup), asio::use_future);
    io_.run();
    io_.restart();
    started.get();
    guard_.emplace(io_.get_executor());  // from here the loop runs on its thread until TearDown

    http::ServerOptions iso = inventory_->server_options(nullptr);
    iso.one_io_thread = true;
    iso.limits.max_connections = inventory_max_connections;
    inventory_server_ = std::make_unique<http::Server>(io_.get_executor(), iso);
    inventory_->mount(*inventory_server_, &inventory_metrics_);
    inventory_url_ = "http://127.0.0.1:" + std::to_string(inventory_server_->listen("127.0.0.1", 0));
    inventory_grpc_ = std::make_unique<grpc::Server>(io_.get_executor(),
                                                     inventory_grpc_options(*inventory_, &inventory_metrics_));
    mount_inventory_grpc(*inventory_, *inventory_grpc_);
    inventory_grpc_target_ = "127.0.0.1:" + std::to_string(inventory_grpc_->listen("127.0.0.1", 0));

    gateway.inventory_url = inventory_url_;
    gateway.inventory_grpc_target = inventory_grpc_target_;
    gateway.metrics = &gateway_metrics_;
    gateway_ = std::make_unique<Gateway>(io_.get_executor(), gateway);
    http::ServerOptions gso = gateway_->server_options(nullptr);
    gso.one_io_thread = true;
    gateway_server_ = std::make_unique<http::Server>(io_.get_executor(), gso);
    gateway_->mount(*gateway_server_, &gateway_metrics_);
    gateway_url_ = "http://127.0.0.1:" + std::to_string(gateway_server_->listen("127.0.0.1", 0)) + "/graphql";
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    if (thread_.joinable()) {
      asio::post(io_, [this] {
        gateway_server_->shutdown(0ms);
        inventory_server_->shutdown(0ms);
        inventory_->stop_all();
      });
      inventory_grpc_->shutdown(0ms);  // thread-safe
      inventory_grpc_.reset();  // waits for its calls, which need the loop (the guard keeps it up)
      asio::post(io_, [this] { guard_.reset(); });
      // Servers drain quickly; stop the loop in any case so a stuck connection cannot hang us.
      std::this_thread::sleep_for(200ms);
      io_.stop();
      thread_.join();
    }
    inventory_grpc_.reset();
    gateway_server_.reset();
    inventory_server_.reset();
    gateway_.reset();
    inventory_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // POSTs a GraphQL request to the gateway; the parsed answer.
  static asio::awaitable<json::value> GraphQL(http::Client& client, const std::string& url, std::string query,
                                              json::object variables = {}) {
    json::object body{{"query", std::move(query)}, {"variables", std::move(variables)}};
    http::ClientRequest req;
    req.method = "POST";
    req.url = url;
    req.body = json::serialize(body);
    req.headers.set("Content-Type", "application/json");
    req.headers.set("Accept", "application/json");
    const Context ctx = Context().with_timeout(30s);
    http::Response r = co_await client.request(ctx, std::move(req));
    EXPECT_EQ(r.status, 200) << r.body.substr(0, 500);
    co_return json::parse(r.body);
  }

  asio::awaitable<std::int64_t> Reserved(http::Client& client, int bin) {
    const Context ctx = Context().with_timeout(10s);
    http::Response r = co_await client.get(ctx, inventory_url_ + "/bin?id=" + std::to_string(bin));
    co_return json::parse(r.body).at("reserved").to_number<std::int64_t>();
  }

  std::filesystem::path dir_;
  observe::Registry gateway_metrics_, inventory_metrics_;  // outlive the services
  asio::io_context io_{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard_;
  std::unique_ptr<Inventory> inventory_;
  std::unique_ptr<Gateway> gateway_;
  std::unique_ptr<http::Server> inventory_server_;
  std::unique_ptr<http::Server> gateway_server_;
  std::unique_ptr<grpc::Server> inventory_grpc_;
  std::string inventory_url_, gateway_url_, inventory_grpc_target_;
  std::thread thread_;
};

// The hostile probe's query: 3,000 aliases, each a call to the inventory. Before the limits the
// gateway opened a connection per alias, the inventory's connection limit closed the excess
// ("partial message", UNAVAILABLE) and other users' queries waited behind them.
TEST_F(WarehouseTest, AThousandsOfAliasesQueryIsBoundedAndOthersStillGetAnswers) {
  GatewayOptions gw;
  gw.max_calls_per_operation = 4;
  gw.max_queued_calls_per_operation = 32;
  gw.max_calls = 6;
  gw.max_queued_calls = 64;
  Start(gw, /*inventory_max_connections=*/16);

  std::string hostile = "{";
  for (int i = 0; i < 3000; ++i) hostile += " a" + std::to_string(i) + ": warehouses { id bins(first: 1) { id } }";
  hostile += " }";

  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    const auto ex = co_await asio::this_coro::executor;
    // Two hostile clients at once (wanting more than the gateway-wide limit between them), and
    // one ordinary client asking a cheap question again and again meanwhile. (Each hostile
    // query also costs the gateway's event loop ~50-100 ms to parse, validate and execute: the
    // margin below allows for that, not for waiting behind the hostile calls.)
    int hostile_done = 0;
    std::vector<json::value> answers(2);
    for (int c = 0; c < 2; ++c) {
      asio::co_spawn(
          ex,
          [&, c]() -> asio::awaitable<void> {
            try {
              answers[c] = co_await GraphQL(client, gateway_url_, hostile);
            } catch (const std::exception& e) {
              ADD_FAILURE() << "hostile client " << c << ": " << e.what();
            }
            ++hostile_done;
          },
          asio::detached);
    }
    Duration slowest{};
    int cheap = 0;
    do {
      const auto t0 = std::chrono::steady_clock::now();
      json::value r = co_await GraphQL(client, gateway_url_, "{ bin(id: 7) { id qty } }");
      slowest = std::max<Duration>(slowest, std::chrono::steady_clock::now() - t0);
      ++cheap;
      // Before the limits: UNAVAILABLE "127.0.0.1:port: partial message" here.
      EXPECT_EQ(json::serialize(r),
                R"({"data":{"bin":{"id":"7","qty":)" +
                    std::to_string(r.at("data").as_object().contains("bin") && r.at("data").at("bin").is_object()
                                       ? r.at("data").at("bin").at("qty").to_number<std::int64_t>()
                                       : -1) +
                    "}}}");
    } while (hostile_done < 2 && cheap < 2000);
    for (int i = 0; i < 3000 && hostile_done < 2; ++i) co_await Sleep(10ms);  // they use our locals
    EXPECT_EQ(hostile_done, 2);
    std::printf(
        "  2 hostile queries; %d cheap queries meanwhile, the slowest in %lld ms; the inventory saw %zu "
        "requests at once at most\n",
        cheap, static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(slowest).count()),
        inventory_->stats().max_requests_in_flight);
    EXPECT_LT(slowest, Scaled(std::chrono::milliseconds(750))) << "the cheap query's slowest answer among " << cheap;

    for (const json::value& a : answers) {
      if (!a.is_object() || !a.as_object().contains("errors")) {
        ADD_FAILURE() << "no errors: " << json::serialize(a).substr(0, 300);
        continue;
      }
      const std::string text = json::serialize(a);
      EXPECT_EQ(text.find("partial message"), std::string::npos);
      const json::array& errors = a.at("errors").as_array();
      std::size_t overloaded = 0, per_operation = 0;
      for (const json::value& e : errors) {
        const std::string code(e.at("extensions").at("code").as_string());
        EXPECT_TRUE(code == "OVERLOADED" || code == "DEADLINE_EXCEEDED") << json::serialize(e);
        EXPECT_FALSE(e.at("path").as_array().empty()) << json::serialize(e);
        if (code == "OVERLOADED") ++overloaded;
        if (json::serialize(e.at("message")).find("per-operation limit") != std::string::npos) ++per_operation;
      }
      // (Query.warehouses is non-null: the first error nulls `data`, and the executor need not
      // report every sibling that fails after that.)
      EXPECT_GT(overloaded, 0u);
      EXPECT_GT(per_operation, 0u);
    }
  });
  const InventoryStats s = inventory_->stats();
  EXPECT_LE(s.max_requests_in_flight, gw.max_calls) << "the inventory saw more calls at once than the gateway cap";
  EXPECT_GE(s.max_requests_in_flight, 1u);
  EXPECT_EQ(gateway_->outbound_limits().total_stats().in_use, 0u);
  EXPECT_EQ(gateway_->outbound_limits().operations(), 0u);
}

// Asking for more than the cost limit allows is refused before a single call goes out.
TEST_F(WarehouseTest, AnOperationOverTheCostLimitMakesNoCallAtAll) {
  Start(GatewayOptions{}, /*inventory_max_connections=*/16);
  std::string costly = "{";
  for (int i = 0; i < 3000; ++i) costly += " a" + std::to_string(i) + ": warehouses { id bins(first: 100) { id } }";
  costly += " }";
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    const json::value r = co_await GraphQL(client, gateway_url_, costly);
    const std::string text = json::serialize(r);
    EXPECT_FALSE(r.as_object().contains("data")) << text.substr(0, 300);
    EXPECT_NE(text.find("COST_LIMIT_EXCEEDED"), std::string::npos) << text.substr(0, 300);
  });
  EXPECT_EQ(inventory_->stats().max_requests_in_flight, 0u);
}

// An empty key used to mean "no key": reserveStock(idempotencyKey: "") reserved on every call.
TEST_F(WarehouseTest, TheInventoryRefusesAMissingEmptyOrInvalidIdempotencyKey) {
  Start(GatewayOptions{});
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    const std::int64_t before = co_await Reserved(client, 7);
    auto post = [&](std::optional<std::vector<std::string>> keys) -> asio::awaitable<http::Response> {
      http::ClientRequest req;
      req.method = "POST";
      req.url = inventory_url_ + "/reservations";
      req.body = R"({"binId": 7, "qty": 1})";
      req.headers.set("Content-Type", "application/json");
      if (keys)
        for (const std::string& k : *keys) req.headers.add("Idempotency-Key", k);
      const Context ctx = Context().with_timeout(10s);
      co_return co_await client.request(ctx, std::move(req));
    };
    using Keys = std::vector<std::string>;
    const std::vector<std::optional<Keys>> bad = {std::nullopt, Keys{""},
                                                  Keys{std::string(effects::kMaxIdempotencyKeyBytes + 1, 'k')},
                                                  Keys{"a\x01"
                                                       "b"},
                                                  Keys{"one", "two"}};
    for (const auto& keys : bad) {
      for (int i = 0; i < 5; ++i) {
        http::Response r = co_await post(keys);
        EXPECT_EQ(r.status, 400) << r.body;
        // Our refusal is an error document; a header the HTTP parser refuses first is a 400 too.
        json::error_code ec;
        const json::value doc = json::parse(r.body, ec);
        if (!ec && doc.is_object() && doc.as_object().contains("error")) {
          const std::string code = json::serialize(doc.at("error").at("code"));
          EXPECT_TRUE(code == R"("invalid_argument")" || code == R"("bad_request")") << r.body;
        }
      }
    }
    EXPECT_EQ(co_await Reserved(client, 7), before) << "a refused key reserved stock";

    // The longest key is a key like any other: it reserves once.
    const Keys longest{std::string(effects::kMaxIdempotencyKeyBytes, 'k')};
    http::Response first = co_await post(longest);
    http::Response again = co_await post(longest);
    EXPECT_EQ(first.status, 200) << first.body;
    EXPECT_EQ(again.status, 200) << again.body;
    if (again.status == 200) {
      EXPECT_TRUE(json::parse(again.body).at("replayed").as_bool());
    }
    EXPECT_EQ(co_await Reserved(client, 7), before + 1);
  });
}

TEST_F(WarehouseTest, ReserveStockRefusesAnEmptyOrInvalidIdempotencyKey) {
  Start(GatewayOptions{});
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    const std::int64_t before = co_await Reserved(client, 7);
    const std::string reserve =
        "mutation($k: String!) { reserveStock(binId: 7, qty: 1, idempotencyKey: $k) { reserved replayed } }";
    const std::vector<std::string> bad = {"", std::string(effects::kMaxIdempotencyKeyBytes + 1, 'k'),
                                          "a\r\nX-Injected: 1", " padded"};
    for (const std::string& key : bad) {
      for (int i = 0; i < 5; ++i) {
        json::object vars;
        vars["k"] = key;
        json::value r = co_await GraphQL(client, gateway_url_, reserve, std::move(vars));
        if (!r.as_object().contains("errors")) {
          ADD_FAILURE() << "accepted a bad key: " << json::serialize(r);
          continue;
        }
        const json::value& e = r.at("errors").at(0);
        EXPECT_EQ(json::serialize(e.at("extensions").at("code")), R"("BAD_USER_INPUT")") << json::serialize(r);
        EXPECT_EQ(json::serialize(e.at("path")), R"(["reserveStock"])") << json::serialize(r);
        EXPECT_NE(json::serialize(e.at("message")).find("idempotency key"), std::string::npos) << json::serialize(r);
      }
    }
    // The literal in the document, as the probe sent it.
    for (int i = 0; i < 20; ++i) {
      json::value r = co_await GraphQL(
          client, gateway_url_, R"(mutation { reserveStock(binId: 7, qty: 1, idempotencyKey: "") { reserved } })");
      const json::value* code =
          r.as_object().contains("errors") ? &r.at("errors").at(0).at("extensions").at("code") : nullptr;
      EXPECT_TRUE(code && json::serialize(*code) == R"("BAD_USER_INPUT")") << json::serialize(r);
    }
    EXPECT_EQ(co_await Reserved(client, 7), before) << "a refused key reserved stock";

    json::object vars;
    vars["k"] = "order 7 (first)";
    json::value first = co_await GraphQL(client, gateway_url_, reserve, vars);
    json::value again = co_await GraphQL(client, gateway_url_, reserve, vars);
    EXPECT_EQ(json::serialize(first.at("data")),
              R"({"reserveStock":{"reserved":)" + std::to_string(before + 1) + R"(,"replayed":false}})");
    EXPECT_EQ(json::serialize(again.at("data")),
              R"({"reserveStock":{"reserved":)" + std::to_string(before + 1) + R"(,"replayed":true}})");
    EXPECT_EQ(co_await Reserved(client, 7), before + 1);
  });
}

// One value of a series in an exposition, or -1.
double Metric(const std::string& text, const std::string& series) {
  const auto at = text.find(series + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 1));
}

// The gateway's calls to the inventory run through its policy: with the inventory gone, each
// call is tried 3 times (nothing was sent: safe even for a write), and after 5 failed calls
// the breaker opens and the gateway stops calling; its /metrics show both, named "inventory".
TEST_F(WarehouseTest, TheGatewayCallsTheInventoryThroughItsPolicy) {
  Start(GatewayOptions{});
  std::promise<void> down;
  asio::post(io_, [&] {
    inventory_server_->shutdown(0ms);
    down.set_value();
  });
  down.get_future().get();
  std::this_thread::sleep_for(50ms);  // the listener is closed
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    for (int i = 0; i < 8; ++i) {
      const json::value r = co_await GraphQL(client, gateway_url_, "{ bin(id: 1) { id } }");
      const std::string text = json::serialize(r);
      EXPECT_NE(text.find("UNAVAILABLE"), std::string::npos) << text.substr(0, 300);
    }
  });
  const std::string text = gateway_metrics_.expose();
  EXPECT_EQ(Metric(text, R"(cutoff_resilience_attempts_total{name="inventory"})"), 15) << text;
  EXPECT_EQ(Metric(text, R"(cutoff_resilience_retries_total{name="inventory"})"), 10) << text;
  EXPECT_EQ(Metric(text, R"(cutoff_resilience_breaker_state{name="inventory"})"), 1) << text;
  EXPECT_EQ(Metric(text, R"(cutoff_resilience_breaker_rejected_total{name="inventory"})"), 3) << text;
}

// Under cutoff, a request whose budget is below its route's recent service time is refused
// before its handler runs (so before it takes a connection): 504 deadline_exceeded, counted on
// the inventory's /metrics.
TEST_F(WarehouseTest, TheInventoryRefusesADoomedRequestBeforeItTakesAConnection) {
  // The route's service time is well under a millisecond here; a factor makes it a whole
  // 2 s, so that a budget of 500 ms is doomed whatever the machine's speed.
  Start(GatewayOptions{}, 1024, [](InventoryOptions& inv) {
    inv.admission->min_samples = 5;
    inv.admission->factor = 2'000'000;
    inv.admission->probe_interval = 0ms;
  });
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    for (int i = 0; i < 5; ++i) {
      const Context ample = Context().with_timeout(30s);
      EXPECT_EQ((co_await client.get(ample, inventory_url_ + "/bin?id=1")).status, 200);
    }
    const Context doomed = Context().with_timeout(500ms);
    const http::Response r = co_await client.get(doomed, inventory_url_ + "/bin?id=1");
    EXPECT_EQ(r.status, 504);
    EXPECT_TRUE(http::deadline_expired(r));
    EXPECT_NE(r.body.find("refused before starting"), std::string::npos) << r.body;
  });
  const std::string text = inventory_metrics_.expose();
  EXPECT_EQ(Metric(text, R"(cutoff_resilience_doomed_refused_total{name="inventory.bin"})"), 1) << text;
}

// The gateway throttles a route the inventory keeps refusing (here every bin lookup is doomed
// once the route has its samples): after the throttle's minimum, most calls fail in the
// gateway with OVERLOADED and never reach the inventory; its /metrics count them.
TEST_F(WarehouseTest, TheGatewayThrottlesARouteTheInventoryKeepsRefusing) {
  Start(GatewayOptions{}, 1024, [](InventoryOptions& inv) {
    inv.admission->min_samples = 5;
    inv.admission->factor = 2'000'000;
    inv.admission->probe_interval = std::chrono::hours(1);
  });
  int doomed = 0, overloaded = 0, answered = 0;
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    for (int i = 0; i < 5; ++i) {  // the samples: answered
      const Context ample = Context().with_timeout(30s);
      EXPECT_EQ((co_await client.get(ample, inventory_url_ + "/bin?id=1")).status, 200);
    }
    for (int i = 0; i < 60; ++i) {
      const json::value r = co_await GraphQL(client, gateway_url_, "{ bin(id: 1) { id } }");
      const std::string text = json::serialize(r);
      if (text.find("DEADLINE_EXCEEDED") != std::string::npos) ++doomed;
      if (text.find(R"("bin":{"id":"1"})") != std::string::npos) ++answered;
      if (text.find("OVERLOADED") != std::string::npos && text.find("not sent") != std::string::npos) ++overloaded;
    }
  });
  EXPECT_EQ(doomed + overloaded + answered, 60);
  EXPECT_LE(answered, 1);  // the admission's one probe
  EXPECT_GT(overloaded, 25);
  const std::string gateway = gateway_metrics_.expose();
  EXPECT_EQ(Metric(gateway, R"(cutoff_resilience_throttled_total{name="inventory"})"), overloaded) << gateway;
  const std::string inventory = inventory_metrics_.expose();
  EXPECT_EQ(Metric(inventory, R"(cutoff_resilience_doomed_refused_total{name="inventory.bin"})"), doomed) << inventory;
}

// Under cutoff, valuations run under an adaptive concurrency limit: valuations cut at their
// deadline while running are congestion, a window of them lowers the limit, and the
// inventory's /metrics show it. It never goes below two valuations at once.
TEST_F(WarehouseTest, ValuationsCutAtTheirDeadlineLowerTheInventorysConcurrencyLimit) {
  Start(GatewayOptions{}, 1024, [](InventoryOptions& inv) {
    inv.valuation_steps = 0;  // calibrated at start: each valuation takes about 300 ms
    inv.valuation_time = 300ms;
    inv.valuation_limit->window = 4;
  });
  const auto limit = [&] {
    return Metric(inventory_metrics_.expose(), R"(cutoff_resilience_concurrency_limit{name="inventory.valuation"})");
  };
  const auto cut_valuations = [&](int n) {
    RunSync([&]() -> asio::awaitable<void> {
      http::Client client(co_await asio::this_coro::executor);
      for (int i = 0; i < n; ++i) {
        // The budget goes with the request; the client gives up at the same moment.
        const Context short_budget = Context().with_timeout(40ms);
        try {
          EXPECT_EQ((co_await client.get(short_budget, inventory_url_ + "/valuation?warehouse=1")).status, 504);
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ErrorCode::deadline_exceeded);
        }
      }
    });
  };
  EXPECT_EQ(limit(), 4);  // the pool's size
  cut_valuations(4);
  // The last run records its stop as it unwinds, just after its answer went out.
  for (int i = 0; i < 200 && limit() != 3; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(limit(), 3) << inventory_metrics_.expose();
  // Two more congested windows: 3 to 2, and then no lower (a third of a second is ample to
  // see it drop to 1, which it does with min_limit 1).
  cut_valuations(8);
  for (int i = 0; i < 200 && limit() != 2; ++i) std::this_thread::sleep_for(10ms);
  for (int i = 0; i < 30 && limit() == 2; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(limit(), 2) << inventory_metrics_.expose();
}

// ---- The inventory over gRPC (inventory.proto) ----

// With --inventory-transport grpc the gateway answers as it does over HTTP: lists, a bin, an
// unknown bin as null, an idempotent reservation (the second call replayed, stock moved once);
// the inventory's gRPC metrics count the calls and the gateway's policy is named "inventory".
TEST_F(WarehouseTest, TheGatewayReachesTheInventoryOverGrpc) {
  GatewayOptions gateway;
  gateway.inventory_transport = InventoryTransport::grpc;
  Start(gateway);
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    const json::value r = co_await GraphQL(
        client, gateway_url_,
        "{ warehouses { id name bins(first: 2) { id warehouseId qty available } } bin(id: 3) { id warehouseId } "
        "none: bin(id: 999999) { id } }");
    const json::value& data = r.at("data");
    EXPECT_EQ(data.at("warehouses").as_array().size(), 8u) << json::serialize(r);
    EXPECT_EQ(json::serialize(data.at("warehouses").at(0).at("name")), R"("Rotterdam")");
    EXPECT_EQ(data.at("warehouses").at(1).at("bins").as_array().size(), 2u);
    EXPECT_EQ(json::serialize(data.at("warehouses").at(1).at("bins").at(0).at("warehouseId")), R"("2")");
    EXPECT_EQ(json::serialize(data.at("bin")), R"({"id":"3","warehouseId":"1"})");
    EXPECT_TRUE(data.at("none").is_null());
    EXPECT_FALSE(r.as_object().contains("errors")) << json::serialize(r);

    const std::int64_t before = co_await Reserved(client, 7);
    const std::string reserve =
        R"(mutation { reserveStock(binId: 7, qty: 2, idempotencyKey: "grpc-1") { binId reserved replayed } })";
    const json::value first = co_await GraphQL(client, gateway_url_, reserve);
    const json::value again = co_await GraphQL(client, gateway_url_, reserve);
    EXPECT_EQ(json::serialize(first.at("data")), R"({"reserveStock":{"binId":"7","reserved":)" +
                                                     std::to_string(before + 2) + R"(,"replayed":false}})");
    EXPECT_EQ(json::serialize(again.at("data")), R"({"reserveStock":{"binId":"7","reserved":)" +
                                                     std::to_string(before + 2) + R"(,"replayed":true}})");
    EXPECT_EQ(co_await Reserved(client, 7), before + 2);
  });
  const std::string inventory = inventory_metrics_.expose();
  EXPECT_EQ(Metric(inventory,
                   R"(cutoff_grpc_server_calls_total{method="/cutoff.warehouse.v1.Inventory/Reserve",code="OK"})"),
            2)
      << inventory;
  EXPECT_EQ(Metric(inventory,
                   R"(cutoff_grpc_server_calls_total{method="/cutoff.warehouse.v1.Inventory/GetBin",code="NOT_FOUND"})"),
            1)
      << inventory;
  const std::string gateway_text = gateway_metrics_.expose();
  EXPECT_GE(Metric(gateway_text, R"(cutoff_resilience_attempts_total{name="inventory"})"), 5) << gateway_text;
}

// A valuation called over gRPC stops at its deadline and at its caller's cancel: the call
// fails with the stop, and the statement is gone from the pool within milliseconds, not at
// the end of its ~2 s.
TEST_F(WarehouseTest, AGrpcValuationStopsItsStatementAtTheDeadlineAndOnCancel) {
  Start(GatewayOptions{}, 1024, [](InventoryOptions& inv) {
    inv.valuation_steps = 0;  // calibrated at start
    inv.valuation_time = 2s;
    inv.valuation_limit.reset();
    inv.admission.reset();
  });
  const auto busy = [&] { return inventory_->pool().stats().in_use; };
  RunSync([&]() -> asio::awaitable<void> {
    grpc::Client client(co_await asio::this_coro::executor, inventory_grpc_target_);
    v1::GetValuationRequest req;
    req.set_warehouse_id(1);
    const std::string method = inventory_grpc_method("GetValuation");
    grpc::CallOptions read;  // a read: a stop after sending is a plain stop, never ambiguous
    read.may_write = false;
    // The deadline: sent as grpc-timeout, bound by the inventory down to the statement.
    {
      const Context ctx = Context().with_timeout(Scaled(150ms));
      const auto started = std::chrono::steady_clock::now();
      std::string bytes = req.SerializeAsString();
      const std::string code = co_await CodeOf(client.call(ctx, method, std::move(bytes), read));
      EXPECT_EQ(code, "deadline_exceeded");
      EXPECT_LT(std::chrono::steady_clock::now() - started, Scaled(1s));
    }
    // The caller's cancel: RST_STREAM, `cancelled` at the inventory.
    {
      auto [ctx, cancel] = Context().with_timeout(30s).with_cancel();
      asio::steady_timer timer(co_await asio::this_coro::executor, Scaled(150ms));
      timer.async_wait([c = cancel](boost::system::error_code) mutable { c.request_stop(StopReason::cancelled); });
      const auto started = std::chrono::steady_clock::now();
      std::string bytes = req.SerializeAsString();
      const std::string code = co_await CodeOf(client.call(ctx, method, std::move(bytes), read));
      EXPECT_EQ(code, "cancelled");
      EXPECT_LT(std::chrono::steady_clock::now() - started, Scaled(1s));
    }
  });
  // Both statements stopped: nothing holds a connection long after (they would for ~2 s).
  const auto until = std::chrono::steady_clock::now() + Scaled(500ms);
  while (busy() != 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(busy(), 0u);
  const std::string text = inventory_metrics_.expose();
  EXPECT_EQ(Metric(text, R"(cutoff_grpc_server_stopped_total{method="/cutoff.warehouse.v1.Inventory/GetValuation",reason="cancelled"})"),
            1)
      << text;
}

// A request that is not its method's message is the caller's mistake: INVALID_ARGUMENT, and
// the service goes on answering.
TEST_F(WarehouseTest, AGrpcRequestThatIsNotItsMessageIsInvalidArgument) {
  Start(GatewayOptions{});
  RunSync([&]() -> asio::awaitable<void> {
    grpc::Client client(co_await asio::this_coro::executor, inventory_grpc_target_);
    const Context ctx = Context().with_timeout(10s);
    std::string garbage("\xff\xff\xff\xff", 4);
    const std::string get_bin = inventory_grpc_method("GetBin");
    EXPECT_EQ(co_await CodeOf(client.call(ctx, get_bin, std::move(garbage))), "invalid_argument");
    v1::GetBinRequest req;
    req.set_id(3);
    std::string bytes = req.SerializeAsString();
    std::string reply = co_await client.call(ctx, get_bin, std::move(bytes));
    v1::Bin bin;
    EXPECT_TRUE(bin.ParseFromString(reply));
    EXPECT_EQ(bin.id(), 3);
    EXPECT_EQ(bin.warehouse_id(), 1);
  });
}

}  // namespace
}  // namespace cutoff::warehouse
