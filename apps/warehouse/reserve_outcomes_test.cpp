// reserveStock under budgets from 1 ms upward, on SQLite and PostgreSQL, checked against the
// database after every call: an answer that says the reservation did not happen must find no
// reservation, a success must find it, and only COMMIT_AMBIGUOUS may find either.
//
// The gateway and the inventory run on loopback as in `cutoff demo serve`; the budget is the
// caller's Deadline-Budget-Ms header. Each database is swept twice: as it is (on loopback a
// reservation can take less than the smallest budget a header can carry), and with every step
// of the inventory's effect region slowed by 2 ms, so stops land before, during and after its
// COMMIT. Before reading the database the test waits for the
// inventory to finish every request (a commit in flight when the gateway answered completes
// shielded, and would land after a read made too early).
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>

#include "cutoff/core/error.hpp"
#include "cutoff/effects/classify.hpp"
#include "cutoff/effects/internal/fault_points.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/error_document.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/sql/connect.hpp"
#include "tests/support/postgres.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "warehouse/gateway.hpp"
#include "warehouse/inventory.hpp"

namespace cutoff::warehouse {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;
using cutoff::test_support::Sleep;

constexpr int kBin = 7;
constexpr int kMaxBudgetMs = 150;       // the sweep's bound, whatever happens
constexpr int kSuccessesToFinish = 10;  // consecutive successes once the budget suffices

// Runs SQL on its own connection (test setup and the reads that check the outcome). No
// budget travels with it: CREATE DATABASE cannot share a pipeline with set_config().
asio::awaitable<sql::Result> Sql(std::string url, std::string statement, std::vector<sql::Value> params = {}) {
  sql::DatabaseOptions db;
  db.url = std::move(url);
  db.driver.propagation = sql::Propagation::off;
  const Context ctx = Context().with_timeout(30s);
  std::unique_ptr<sql::Connection> conn = co_await sql::connect(ctx, db);
  co_return co_await conn->execute(ctx, statement, params);
}

class ReserveOutcomes : public ::testing::Test {
 protected:
  void TearDown() override {
    if (thread_.joinable()) {
      asio::post(io_, [this] {
        gateway_server_->shutdown(0ms);
        inventory_server_->shutdown(0ms);
        inventory_->stop_all();
      });
      asio::post(io_, [this] { guard_.reset(); });
      std::this_thread::sleep_for(200ms);
      io_.stop();
      thread_.join();
    }
    gateway_server_.reset();
    inventory_server_.reset();
    gateway_.reset();
    inventory_.reset();
    slow_disk_.reset();
  }

  void Start(const std::string& db_url) {
    db_url_ = db_url;
    InventoryOptions inv;
    inv.db_url = db_url;
    inv.data.bins_per_warehouse = 20;
    inv.data.movements_per_bin = 2;
    inv.valuation_steps = 1;
    // A slow disk, when the sweep asks for one: each step of the reservation's effect region
    // (before its statements, at COMMIT, after it) takes `step_delay_` longer, so the budgets
    // land stops on every step, the shielded commit included.
    slow_disk_.emplace(effects::internal::kEffectStep, [this](effects::Step step,
                                                             const Context&) -> asio::awaitable<void> {
      const auto delay = std::chrono::microseconds(step_delay_us_.load());
      if (delay.count() == 0 ||
          (step != effects::Step::body && step != effects::Step::sending_commit && step != effects::Step::after_commit))
        co_return;
      asio::steady_timer t(co_await asio::this_coro::executor, delay);
      co_await t.async_wait(asio::use_awaitable);  // not stoppable: a disk is not either
    });
    inventory_ = std::make_unique<Inventory>(inv);
    const Context setup = Context().with_timeout(std::chrono::minutes(2));  // outlives the start
    auto started = asio::co_spawn(io_, inventory_->start(setup), asio::use_future);
    io_.run();
    io_.restart();
    started.get();
    guard_.emplace(io_.get_executor());
    http::ServerOptions iso = inventory_->server_options(nullptr);
    iso.one_io_thread = true;
    inventory_server_ = std::make_unique<http::Server>(io_.get_executor(), iso);
    inventory_->mount(*inventory_server_);
    GatewayOptions gateway;
    gateway.inventory_url = "http://127.0.0.1:" + std::to_string(inventory_server_->listen("127.0.0.1", 0));
    gateway_ = std::make_unique<Gateway>(io_.get_executor(), gateway);
    http::ServerOptions gso = gateway_->server_options(nullptr);
    gso.one_io_thread = true;
    gateway_server_ = std::make_unique<http::Server>(io_.get_executor(), gso);
    gateway_->mount(*gateway_server_);
    gateway_url_ = "http://127.0.0.1:" + std::to_string(gateway_server_->listen("127.0.0.1", 0)) + "/graphql";
    thread_ = std::thread([this] { io_.run(); });
  }

  // The outcome of one reserveStock under `budget_ms`: "ok", or the error's GraphQL code.
  asio::awaitable<std::string> Reserve(http::Client& client, int budget_ms, const std::string& key) {
    json::object vars{{"k", key}};
    json::object body{
        {"query", "mutation($k: String!) { reserveStock(binId: 7, qty: 1, idempotencyKey: $k) { reserved } }"},
        {"variables", std::move(vars)}};
    http::ClientRequest req{.method = "POST", .url = gateway_url_, .body = json::serialize(body)};
    req.headers.set("Content-Type", "application/json");
    req.headers.set("Accept", "application/json");
    req.headers.set(cutoff::kBudgetHeader, std::to_string(budget_ms));
    const Context ctx = Context().with_timeout(30s);  // the test waits for the answer
    auto calling = client.request(ctx, std::move(req));
    http::Response r = co_await std::move(calling);
    json::error_code ec;
    json::value doc = json::parse(r.body, ec);
    if (ec || !doc.is_object()) co_return "unreadable " + std::to_string(r.status) + ": " + r.body;
    const json::object& o = doc.as_object();
    if (const json::value* errors = o.if_contains("errors")) {
      const json::value& first = errors->as_array().at(0);
      const json::value* ext = first.as_object().if_contains("extensions");
      const json::value* code = ext ? ext->as_object().if_contains("code") : nullptr;
      co_return code ? std::string(code->as_string()) : "uncoded: " + r.body;
    }
    if (auto remote = http::parse_error_document(r.body); remote && remote->code)  // refused at entry
      co_return std::string(info(*remote->code).graphql_code);
    const json::value* data = o.if_contains("data");
    if (data && data->is_object() && !data->as_object().at("reserveStock").is_null()) co_return "ok";
    co_return "unexpected: " + r.body;
  }

  asio::awaitable<std::int64_t> ReservedInDatabase() {
    auto reading = Sql(db_url_, "select reserved from bin where id = $1", {kBin});
    sql::Result r = co_await std::move(reading);
    co_return r[0].get<std::int64_t>("reserved");
  }

  // Until the inventory has no request in flight (what it still commits lands first).
  asio::awaitable<void> InventoryQuiet() {
    for (int i = 0; i < 2500 && inventory_->stats().requests_in_flight > 0; ++i) co_await Sleep(2ms);
    EXPECT_EQ(inventory_->stats().requests_in_flight, 0u) << "the inventory is still working";
    co_await Sleep(5ms);
  }

  // The sweep, with each effect step slowed by `step_delay`. Returns outcome -> count.
  std::map<std::string, int> Sweep(const std::string& label, std::chrono::microseconds step_delay) {
    step_delay_us_ = step_delay.count();
    std::map<std::string, int> seen;
    RunSync([&]() -> asio::awaitable<void> {
      http::Client client(co_await asio::this_coro::executor);
      std::int64_t reserved = co_await ReservedInDatabase();
      int successes_in_a_row = 0;
      for (int ms = 1; ms <= kMaxBudgetMs && successes_in_a_row < kSuccessesToFinish; ++ms) {
        const std::string key = "sweep-" + label + "-" + std::to_string(::getpid()) + "-" + std::to_string(ms);
        const std::string outcome = co_await Reserve(client, ms, key);
        co_await InventoryQuiet();
        const std::int64_t now = co_await ReservedInDatabase();
        const bool landed = now == reserved + 1;
        EXPECT_TRUE(now == reserved || landed) << ms << " ms: reserved went from " << reserved << " to " << now;
        if (outcome == "ok") {
          EXPECT_TRUE(landed) << ms << " ms: success without the reservation";
        } else if (outcome == "COMMIT_AMBIGUOUS") {
          // Either is honest; which one it was is counted.
        } else if (outcome == "DEADLINE_EXCEEDED" || outcome == "CANCELLED" || outcome == "OVERLOADED") {
          EXPECT_FALSE(landed) << ms << " ms: " << outcome << " (did not happen) with the reservation present";
        } else {
          ADD_FAILURE() << ms << " ms: unexpected outcome " << outcome;
        }
        successes_in_a_row = outcome == "ok" ? successes_in_a_row + 1 : 0;
        ++seen[outcome + (outcome == "COMMIT_AMBIGUOUS" ? (landed ? " (landed)" : " (did not land)") : "")];
        ++seen["budgets"];
        reserved = now;
      }
    });
    std::string summary;
    for (const auto& [k, v] : seen) summary += " " + k + "=" + std::to_string(v);
    std::printf("reserveStock sweep on %s:%s\n", label.c_str(), summary.c_str());
    ::testing::Test::RecordProperty("outcomes", summary);
    EXPECT_GE(seen["ok"], 1) << "no budget up to " << kMaxBudgetMs << " ms was enough";
    return seen;
  }

  std::string db_url_;
  std::atomic<std::int64_t> step_delay_us_{0};
  std::optional<cutoff::internal::ScopedFault> slow_disk_;  // armed while the services run
  asio::io_context io_{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard_;
  std::unique_ptr<Inventory> inventory_;
  std::unique_ptr<Gateway> gateway_;
  std::unique_ptr<http::Server> inventory_server_;
  std::unique_ptr<http::Server> gateway_server_;
  std::string gateway_url_;
  std::thread thread_;
};

TEST_F(ReserveOutcomes, EveryBudgetFromOneMillisecondTellsTheTruthOnSQLite) {
  const auto dir = std::filesystem::temp_directory_path() / ("cutoff-reserve-outcomes-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Start("sqlite:" + (dir / "warehouse.db").string());
  Sweep("sqlite", 0us);
  Sweep("sqlite-slowed", 2000us);
  TearDown();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_F(ReserveOutcomes, EveryBudgetFromOneMillisecondTellsTheTruthOnPostgreSQL) {
  const std::string server = cutoff::test_support::TestPostgresUrl();
  if (server.empty()) GTEST_SKIP() << "no test PostgreSQL";
  // A database of its own: the warehouse tables have fixed names.
  const std::string name = "cutoff_reserve_outcomes_" + std::to_string(::getpid());
  const std::string url = server.substr(0, server.rfind('/') + 1) + name;
  RunSync([&]() -> asio::awaitable<void> {
    co_await Sql(server, "drop database if exists " + name);
    co_await Sql(server, "create database " + name);
  });
  Start(url);
  Sweep("postgresql", 0us);
  Sweep("postgresql-slowed", 2000us);
  TearDown();
  RunSync([&]() -> asio::awaitable<void> { co_await Sql(server, "drop database if exists " + name + " with (force)"); });
}

}  // namespace
}  // namespace cutoff::warehouse
