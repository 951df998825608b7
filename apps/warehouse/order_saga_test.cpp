// The order saga across two services over HTTP on loopback: the inventory reserves stock in its
// database, then books the shipment with the shipping service. A refusal releases the
// reservation, a spent budget is a definite failure, and a caller that leaves mid-booking
// leaves a step_ambiguous saga that resume settles with the same key. A shipping service with
// a timeout of its own that books on after answering 504 (the lab's `timeouts` mode) makes the
// saga undo an order that ships: the baseline the lab measures.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>
#include <unistd.h>

#include "cutoff/grpc/server.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/server.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/ops/catalog.hpp"
#include "cutoff/ops/invoker.hpp"
#include "cutoff/ops/mcp/tools.hpp"
#include "warehouse/inventory.hpp"
#include "warehouse/operations.hpp"
#include "warehouse/order_saga.hpp"
#include "warehouse/shipping.hpp"
#include "warehouse/shipping_grpc.hpp"

namespace cutoff::warehouse {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;
using cutoff::test_support::Scaled;
using cutoff::test_support::Sleep;

class OrderSagaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cutoff-order-saga-test-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  // `over_grpc`: the saga books through the shipping service's gRPC service.
  // `tune` adjusts the shipping service's options.
  void Start(std::chrono::milliseconds booking_time = 0ms, std::chrono::milliseconds reply_margin = 20ms,
             bool over_grpc = false, const std::function<void(ShippingOptions&)>& tune = nullptr) {
    ShippingOptions ship;
    ship.db_url = "sqlite:" + (dir_ / "shipping.db").string();
    ship.booking_time = booking_time;
    ship.route_budget = std::max<std::chrono::milliseconds>(ship.route_budget, 3 * booking_time);
    if (tune) tune(ship);
    shipping_ = std::make_unique<Shipping>(ship);
    setup_ = Context().with_timeout(1min);  // outlives the coroutines that take it by reference
    auto ship_started = asio::co_spawn(io_, shipping_->start(setup_), asio::use_future);
    io_.run();
    io_.restart();
    ship_started.get();
    guard_.emplace(io_.get_executor());
    http::ServerOptions sso = shipping_->server_options(nullptr);
    sso.one_io_thread = true;
    shipping_server_ = std::make_unique<http::Server>(io_.get_executor(), sso);
    shipping_->mount(*shipping_server_);
    shipping_url_ = "http://127.0.0.1:" + std::to_string(shipping_server_->listen("127.0.0.1", 0));
    if (over_grpc) {
      shipping_grpc_ = std::make_unique<grpc::Server>(io_.get_executor(), shipping_grpc_options(*shipping_, nullptr));
      mount_shipping_grpc(*shipping_, *shipping_grpc_);
      shipping_grpc_target_ = "127.0.0.1:" + std::to_string(shipping_grpc_->listen("127.0.0.1", 0));
    }

    InventoryOptions inv;
    inv.db_url = "sqlite:" + (dir_ / "warehouse.db").string();
    inv.data.bins_per_warehouse = 5;
    inv.data.movements_per_bin = 1;
    inv.valuation_steps = 1;
    if (!over_grpc) inv.shipping_url = shipping_url_;
    inv.shipping_reply_margin = reply_margin;
    inv.retention = retention_;
    inv.shipping_retention = shipping_retention_;
    // Budgets that still fit a booking stretched by a slow build (CUTOFF_TEST_TIME_SCALE).
    inv.order_budget = std::max<std::chrono::milliseconds>(inv.order_budget, 3 * booking_time);
    inv.metrics = &metrics_;
    inventory_ = std::make_unique<Inventory>(inv);
    std::promise<void> started;
    auto done = started.get_future();
    asio::co_spawn(io_, inventory_->start(setup_),
                   [&started](std::exception_ptr e) { e ? started.set_exception(e) : started.set_value(); });
    thread_ = std::thread([this] { io_.run(); });
    done.get();
    std::promise<void> mounted;
    asio::post(io_, [&] {
      if (over_grpc) inventory_->use_shipping_grpc(io_.get_executor(), shipping_grpc_target_);
      http::ServerOptions iso = inventory_->server_options(nullptr);
      iso.one_io_thread = true;
      inventory_server_ = std::make_unique<http::Server>(io_.get_executor(), iso);
      inventory_->mount(*inventory_server_);
      inventory_url_ = "http://127.0.0.1:" + std::to_string(inventory_server_->listen("127.0.0.1", 0));
      mounted.set_value();
    });
    mounted.get_future().get();
  }

  void TearDown() override {
    if (thread_.joinable()) {
      asio::post(io_, [this] {
        if (inventory_server_) inventory_server_->shutdown(0ms);
        shipping_server_->shutdown(0ms);
        inventory_->stop_all();
      });
      if (shipping_grpc_) {
        shipping_grpc_->shutdown(0ms);  // thread-safe
        shipping_grpc_.reset();         // waits for its calls, which need the loop
      }
      asio::post(io_, [this] { guard_.reset(); });
      std::this_thread::sleep_for(200ms);
      io_.stop();
      thread_.join();
    }
    inventory_server_.reset();
    shipping_server_.reset();
    inventory_.reset();
    shipping_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  static http::ClientRequest Order(const std::string& url, const std::string& key, int bin, int qty) {
    http::ClientRequest req;
    req.method = "POST";
    req.url = url + "/orders";
    req.headers.set("Content-Type", "application/json");
    req.headers.set("Idempotency-Key", key);
    req.body = order_input(bin, qty, "Lyon");
    return req;
  }

  // The bin's reserved count and the order's shipment status (200 or 404), from the services.
  std::pair<std::int64_t, int> State(int bin, const std::string& order) {
    std::pair<std::int64_t, int> out;
    RunSync([&]() -> asio::awaitable<void> {
      http::Client client(co_await asio::this_coro::executor);
      const Context ctx = Context().with_timeout(10s);
      http::Response b = co_await client.get(ctx, inventory_url_ + "/bin?id=" + std::to_string(bin));
      out.first = json::parse(b.body).at("reserved").to_number<std::int64_t>();
      http::Response s = co_await client.get(ctx, shipping_url_ + "/shipments?order=" + order);
      out.second = s.status;
    });
    return out;
  }

  // Runs `work` on the services' loop (their pools and clients belong to it) and waits.
  void OnLoop(std::function<asio::awaitable<void>()> work) {
    asio::co_spawn(io_, std::move(work), asio::use_future).get();
  }

  effects::SagaRecord Journal(const std::string& order) {
    effects::SagaRecord rec;
    OnLoop([&]() -> asio::awaitable<void> {
      const Context ctx = Context().with_timeout(10s);
      auto found = co_await inventory_->sagas()->journal().find(ctx, order);
      EXPECT_TRUE(found.has_value());
      if (found) rec = *found;
    });
    return rec;
  }

  // Places an order whose caller hangs up (closes its connection) 300 ms in, mid-booking
  // when bookings take longer.
  void HangUpMidBooking(const std::string& order, int bin, int qty) {
    RunSync([&]() -> asio::awaitable<void> {
      http::Client client(co_await asio::this_coro::executor);
      auto [ctx, source] = Context().with_cancel(Deadline::after(20s));
      std::thread leave([&source] {
        std::this_thread::sleep_for(Scaled(300ms));
        source.request_stop(StopReason::cancelled);
      });
      try {
        co_await client.request(ctx, Order(inventory_url_, order, bin, qty));
      } catch (const Error&) {
      }
      leave.join();
    });
  }

  // The order's journal once its saga no longer runs (or after 5 s).
  effects::SagaRecord SettledJournal(const std::string& order) {
    effects::SagaRecord j;
    for (int i = 0; i < 500; ++i) {
      j = Journal(order);
      if (j.state != effects::SagaState::running) break;
      std::this_thread::sleep_for(10ms);
    }
    return j;
  }

  std::optional<effects::SagaRecord> Find(const std::string& order) {
    std::optional<effects::SagaRecord> rec;
    OnLoop([&]() -> asio::awaitable<void> { rec = co_await inventory_->sagas()->journal().find(Context().with_timeout(10s), order); });
    return rec;
  }

  std::chrono::milliseconds retention_ = std::chrono::hours(24);  // InventoryOptions::retention
  std::chrono::milliseconds shipping_retention_ = std::chrono::hours(24);  // ::shipping_retention
  std::filesystem::path dir_;
  observe::Registry metrics_;  // outlives the inventory
  Context setup_;
  asio::io_context io_{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard_;
  std::unique_ptr<Shipping> shipping_;
  std::unique_ptr<Inventory> inventory_;
  std::unique_ptr<http::Server> shipping_server_, inventory_server_;
  std::unique_ptr<grpc::Server> shipping_grpc_;
  std::string shipping_url_, inventory_url_, shipping_grpc_target_;
  std::thread thread_;
};

TEST_F(OrderSagaTest, AnOrderReservesThenShipsAndARepeatReplaysIt) {
  Start();
  http::Response first, again;
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    first = co_await client.request(Context().with_timeout(10s), Order(inventory_url_, "o-1", 1, 2));
    again = co_await client.request(Context().with_timeout(10s), Order(inventory_url_, "o-1", 1, 2));
  });
  ASSERT_EQ(first.status, 200) << first.body;
  json::value answer = json::parse(first.body);
  EXPECT_EQ(answer.at("state"), "completed");
  EXPECT_EQ(answer.at("shipment").at("orderId"), "o-1");
  EXPECT_EQ(answer.at("shipment").at("qty"), 2);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(json::parse(again.body).at("replayed"), true);
  EXPECT_EQ(State(1, "o-1"), std::make_pair(std::int64_t{2}, 200));  // reserved once, shipped once
  effects::SagaRecord j = Journal("o-1");
  EXPECT_EQ(j.state, effects::SagaState::completed);
  ASSERT_EQ(j.steps.size(), 2u);
  EXPECT_EQ(j.steps[1].attempts, 1);
}

TEST_F(OrderSagaTest, ARefusedShipmentReleasesTheReservation) {
  Start();
  http::Response r, status;
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    r = co_await client.request(Context().with_timeout(10s), Order(inventory_url_, "o-2", 2, 30));
    status = co_await client.get(Context().with_timeout(10s), inventory_url_ + "/orders?id=o-2");
  });
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("a shipment holds at most 20 items"), std::string::npos) << r.body;
  EXPECT_EQ(State(2, "o-2"), std::make_pair(std::int64_t{0}, 404));
  ASSERT_EQ(status.status, 200);
  json::value journal = json::parse(status.body);
  EXPECT_EQ(journal.at("state"), "compensated");
  EXPECT_EQ(journal.at("failed_step"), "ship");
  EXPECT_EQ(journal.at("steps").at(0).at("state"), "compensated");
  EXPECT_EQ(journal.at("steps").at(1).at("state"), "failed");
  // The inventory's registry counts the outcome and the compensation.
  const std::string exposed = metrics_.expose();
  EXPECT_NE(exposed.find(R"(cutoff_saga_outcomes_total{saga="warehouse.order",state="compensated"} 1)"),
            std::string::npos)
      << exposed;
  EXPECT_NE(exposed.find(R"(cutoff_saga_compensations_total{saga="warehouse.order",step="reserve",outcome="done"} 1)"),
            std::string::npos)
      << exposed;
}

TEST_F(OrderSagaTest, ABudgetSpentWhileBookingIsADefiniteFailureAndIsUndone) {
  // The shipping service stops at its (propagated) deadline, shortly before the inventory's,
  // and says so: nothing was booked, so the reservation is released.
  Start(/*booking_time=*/Scaled(3000ms), /*reply_margin=*/Scaled(200ms));
  http::Response r;
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    http::ClientRequest req = Order(inventory_url_, "o-3", 3, 1);
    req.headers.set("Deadline-Budget-Ms", std::to_string(Scaled(800ms).count()));
    r = co_await client.request(Context().with_timeout(20s), std::move(req));
  });
  EXPECT_EQ(r.status, 504) << r.body;
  EXPECT_NE(r.body.find("deadline_exceeded"), std::string::npos) << r.body;
  EXPECT_EQ(State(3, "o-3"), std::make_pair(std::int64_t{0}, 404));
  EXPECT_EQ(Journal("o-3").state, effects::SagaState::compensated);
}

TEST_F(OrderSagaTest, OverGrpcABudgetSpentWhileBookingIsADefiniteFailureAndIsUndoneToo) {
  // The gRPC client tells shipping its budget less the margin in metadata (the call's own gRPC
  // deadline is the whole budget), so shipping's stop comes first and its answer arrives.
  Start(/*booking_time=*/Scaled(3000ms), /*reply_margin=*/Scaled(200ms), /*over_grpc=*/true);
  http::Response r;
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    http::ClientRequest req = Order(inventory_url_, "o-3g", 3, 1);
    req.headers.set("Deadline-Budget-Ms", std::to_string(Scaled(800ms).count()));
    r = co_await client.request(Context().with_timeout(20s), std::move(req));
  });
  EXPECT_EQ(r.status, 504) << r.body;
  EXPECT_NE(r.body.find("deadline_exceeded"), std::string::npos) << r.body;
  EXPECT_EQ(State(3, "o-3g"), std::make_pair(std::int64_t{0}, 404));
  EXPECT_EQ(Journal("o-3g").state, effects::SagaState::compensated);
}

TEST_F(OrderSagaTest, ACallerLeavingMidBookingLeavesAnAmbiguousStepThatResumeSettles) {
  Start(/*booking_time=*/Scaled(1000ms));
  HangUpMidBooking("o-4", 4, 3);
  // The inventory's call to shipping left and was cut unanswered: ship is ambiguous, and the
  // reservation is kept rather than released on a guess.
  effects::SagaRecord j = SettledJournal("o-4");
  EXPECT_EQ(j.state, effects::SagaState::step_ambiguous);
  EXPECT_EQ(j.failed_step, "ship");
  ASSERT_EQ(j.steps.size(), 2u);
  EXPECT_EQ(j.steps[1].state, effects::SagaStepState::ambiguous);
  EXPECT_EQ(State(4, "o-4").first, 3);

  // resume repeats the booking with the same key; the saga completes and ships once. Until the
  // shipping service has rolled the cut booking back, its key is still in use there, and the
  // step stays ambiguous rather than being undone.
  effects::SagaOutcome out;
  for (int i = 0; i < 50; ++i) {
    OnLoop([&]() -> asio::awaitable<void> {
      const Context ctx = Context().with_timeout(20s);
      out = co_await inventory_->sagas()->resume(ctx, "o-4");
    });
    if (out.state != effects::SagaState::step_ambiguous) break;
    EXPECT_NE(std::string(out.error ? out.error->message() : "").find("still in progress"), std::string::npos);
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(out.state, effects::SagaState::completed) << (out.error ? out.error->what() : "");
  EXPECT_EQ(State(4, "o-4"), std::make_pair(std::int64_t{3}, 200));
  EXPECT_EQ(Journal("o-4").steps[1].attempts, 2);
}

// Past shipping's retention its record of the booking's key may be gone, and a repeat would
// be booked as a new shipment: resume leaves the order for resolve and sends nothing.
TEST_F(OrderSagaTest, AnAmbiguousOrderOlderThanShippingsRetentionIsNotBookedAgainOnResume) {
  shipping_retention_ = 100ms;
  Start(/*booking_time=*/Scaled(1000ms));
  HangUpMidBooking("o-9", 4, 2);  // 300 ms in: older than 100 ms by the time it is resumed
  ASSERT_EQ(SettledJournal("o-9").state, effects::SagaState::step_ambiguous);
  effects::SagaOutcome out;
  OnLoop([&]() -> asio::awaitable<void> {
    const Context ctx = Context().with_timeout(20s);
    out = co_await inventory_->sagas()->resume(ctx, "o-9");
  });
  EXPECT_EQ(out.state, effects::SagaState::step_ambiguous);
  ASSERT_TRUE(out.error);
  EXPECT_NE(out.error->message().find("keeps idempotency keys"), std::string::npos) << out.error->message();
  EXPECT_NE(out.error->message().find("cutoff saga resolve o-9 --step ship"), std::string::npos);
  EXPECT_EQ(Journal("o-9").steps[1].attempts, 1);  // not sent again
  EXPECT_EQ(State(4, "o-9").first, 2);             // the stock stays reserved
}

TEST_F(OrderSagaTest, TheSweepersForgetFinishedOrdersPastTheirRetentionButNotAnAmbiguousOne) {
  retention_ = 1ms;
  Start(/*booking_time=*/Scaled(1000ms));
  // An order left ambiguous: its caller hangs up mid-booking.
  HangUpMidBooking("kept", 4, 1);
  // And one that completes.
  http::Response done;
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    done = co_await client.request(Context().with_timeout(20s), Order(inventory_url_, "swept", 1, 1));
  });
  ASSERT_EQ(done.status, 200) << done.body;
  ASSERT_EQ(SettledJournal("kept").state, effects::SagaState::step_ambiguous);

  asio::post(io_, [this] { inventory_->start_sweepers(io_.get_executor(), 20ms); });
  bool forgotten = false;
  for (int i = 0; i < 500 && !forgotten; ++i) {
    forgotten = !Find("swept").has_value();
    if (!forgotten) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(forgotten) << "the completed order's saga is still in the journal";
  EXPECT_EQ(Journal("kept").state, effects::SagaState::step_ambiguous);  // never swept: it needs settling
  // Its idempotency record went too: the same key is a new order now, not a replay.
  http::Response again;
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    again = co_await client.request(Context().with_timeout(20s), Order(inventory_url_, "swept", 1, 1));
  });
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_NE(json::parse(again.body).at("replayed"), true) << again.body;
  asio::post(io_, [this] { inventory_->stop_sweepers(); });
}

TEST_F(OrderSagaTest, BookingsTakeATimeDrawnFromTheirRange) {
  Start(Scaled(50ms), 20ms, false, [](ShippingOptions& s) { s.booking_time_max = Scaled(150ms); });
  for (int i = 0; i < 4; ++i) {
    http::Response r;
    const auto began = std::chrono::steady_clock::now();
    RunSync([&]() -> asio::awaitable<void> {
      http::Client client(co_await asio::this_coro::executor);
      r = co_await client.request(Context().with_timeout(20s), Order(inventory_url_, "r-" + std::to_string(i), 1, 1));
    });
    const auto took = std::chrono::steady_clock::now() - began;
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_GE(took, Scaled(50ms));
    EXPECT_LT(took, Scaled(150ms) + 5s);  // generous: a busy machine
  }
}

TEST_F(OrderSagaTest, UnderPerLayerTimeoutsShippingAnswers504AndShipsAnOrderTheSagaUndid) {
  // The lab's `timeouts` baseline (docs/lab.md, "orders"): shipping's own timeout answers 504
  // deadline_exceeded and the booking goes on. The saga takes the answer at its word (a 504
  // deadline_exceeded says nothing was done) and releases the stock; the order ships anyway.
  Start(Scaled(800ms), 20ms, false, [](ShippingOptions& s) {
    s.mode = Mode::timeouts;
    s.own_timeout = Scaled(100ms);
  });
  http::Response r;
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    r = co_await client.request(Context().with_timeout(20s), Order(inventory_url_, "o-9", 2, 1));
  });
  EXPECT_EQ(r.status, 504) << r.body;
  EXPECT_NE(r.body.find("deadline_exceeded"), std::string::npos) << r.body;
  EXPECT_EQ(Journal("o-9").state, effects::SagaState::compensated);
  std::pair<std::int64_t, int> state;
  for (int i = 0; i < 100; ++i) {
    state = State(2, "o-9");
    if (state.second == 200) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(state, std::make_pair(std::int64_t{0}, 200));  // released, and shipped
}

TEST_F(OrderSagaTest, RefusesMalformedOrders) {
  Start();
  std::vector<int> statuses;
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    const Context ctx = Context().with_timeout(10s);
    http::ClientRequest no_key = Order(inventory_url_, "x", 1, 1);
    no_key.headers.erase("Idempotency-Key");
    statuses.push_back((co_await client.request(ctx, std::move(no_key))).status);
    http::ClientRequest bad_body = Order(inventory_url_, "o-5", 1, 1);
    bad_body.body = R"({"binId":"one"})";
    statuses.push_back((co_await client.request(ctx, std::move(bad_body))).status);
    statuses.push_back((co_await client.request(ctx, Order(inventory_url_, std::string(300, 'k'), 1, 1))).status);
    statuses.push_back((co_await client.request(ctx, Order(inventory_url_, "o-6", 1, 0))).status);
    statuses.push_back((co_await client.get(ctx, inventory_url_ + "/orders?id=nope")).status);
  });
  EXPECT_EQ(statuses, (std::vector<int>{400, 400, 400, 400, 404}));
}

// ---- The same saga with the shipping call over gRPC ----

TEST_F(OrderSagaTest, OverGrpcAnOrderShipsARefusalIsUndoneAndAHangUpIsAmbiguousUntilResumed) {
  Start(/*booking_time=*/Scaled(1000ms), /*reply_margin=*/20ms, /*over_grpc=*/true);
  http::Response placed, refused;
  RunSync([&]() -> asio::awaitable<void> {
    http::Client client(co_await asio::this_coro::executor);
    placed = co_await client.request(Context().with_timeout(10s), Order(inventory_url_, "g-1", 1, 2));
    refused = co_await client.request(Context().with_timeout(10s), Order(inventory_url_, "g-2", 2, 30));
  });
  ASSERT_EQ(placed.status, 200) << placed.body;
  EXPECT_EQ(json::parse(placed.body).at("shipment").at("orderId"), "g-1");
  EXPECT_EQ(State(1, "g-1"), std::make_pair(std::int64_t{2}, 200));
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("a shipment holds at most 20 items"), std::string::npos) << refused.body;
  EXPECT_EQ(State(2, "g-2"), std::make_pair(std::int64_t{0}, 404));

  // The caller hangs up mid-booking: the gRPC call is cancelled (RST_STREAM) unanswered.
  HangUpMidBooking("g-3", 3, 1);
  effects::SagaRecord j = SettledJournal("g-3");
  EXPECT_EQ(j.state, effects::SagaState::step_ambiguous);
  EXPECT_EQ(State(3, "g-3").first, 1);
  effects::SagaOutcome out;
  for (int i = 0; i < 50; ++i) {
    OnLoop([&]() -> asio::awaitable<void> {
      const Context ctx = Context().with_timeout(20s);
      out = co_await inventory_->sagas()->resume(ctx, "g-3");
    });
    if (out.state != effects::SagaState::step_ambiguous) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(out.state, effects::SagaState::completed) << (out.error ? out.error->what() : "");
  EXPECT_EQ(State(3, "g-3"), std::make_pair(std::int64_t{1}, 200));
}

// ---- The warehouse's operations in the catalog ----

TEST_F(OrderSagaTest, TheCatalogOpenApiAndMcpListShowTheServicesOwnBudgets) {
  Start();
  const ops::Registry registry = warehouse_registry(*inventory_, shipping_.get());
  const json::value catalog = ops::catalog_json(registry);
  std::map<std::string, json::value> by_name;
  for (const json::value& op : catalog.at("operations").as_array())
    by_name[std::string(op.at("name").as_string())] = op;
  ASSERT_EQ(by_name.size(), 9u);
  // The budgets the services' routes bind, read from the same options.
  EXPECT_EQ(by_name["warehouse.order"].at("deadline_seconds"), inventory_->options().order_budget.count() / 1000);
  EXPECT_EQ(by_name["warehouse.bin"].at("deadline_seconds"), inventory_->options().own_timeout.count() / 1000);
  EXPECT_EQ(by_name["shipping.book"].at("deadline_seconds"), shipping_->options().route_budget.count() / 1000);

  const json::value openapi = ops::openapi_document(registry, {.title = "cutoff warehouse"});
  EXPECT_EQ(openapi.at("paths").at("/ops/warehouse.order").at("post").at("x-deadline-seconds"), 3);

  const json::object tools = ops::mcp::tools_list_result(registry);
  bool found = false;
  for (const json::value& tool : tools.at("tools").as_array()) {
    if (tool.at("name") != "warehouse.order") continue;
    found = true;
    const std::string description(tool.at("description").as_string());
    EXPECT_NE(description.find("Time budget: 3 s."), std::string::npos) << description;
  }
  EXPECT_TRUE(found);
}

TEST_F(OrderSagaTest, AnOrderThroughTheInvokerRunsTheSagaUnderTheOperationsBudget) {
  Start();
  const ops::Registry registry = warehouse_registry(*inventory_, shipping_.get());
  ops::Invoker invoker(registry);
  json::value placed;
  std::optional<ErrorCode> without_key;
  OnLoop([&]() -> asio::awaitable<void> {
    const Context ctx = Context().with_timeout(20s);
    ops::InvokeOptions keyed;
    keyed.idempotency_key = "o-7";
    json::value args = json::parse(order_input(5, 2, "Nantes"));
    placed = co_await invoker.invoke(ctx, "warehouse.order", args, keyed);
    try {
      co_await invoker.invoke(ctx, "warehouse.order", args);
    } catch (const Error& e) {
      without_key = e.code();
    }
  });
  EXPECT_EQ(placed.at("state"), "completed");
  EXPECT_EQ(placed.at("shipment").at("destination"), "Nantes");
  EXPECT_EQ(without_key, ErrorCode::invalid_argument);
  EXPECT_EQ(State(5, "o-7"), std::make_pair(std::int64_t{2}, 200));
}

}  // namespace
}  // namespace cutoff::warehouse
