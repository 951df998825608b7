#include "lab/orders_run.hpp"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <filesystem>
#include <future>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <unistd.h>

#include "cutoff/core/error.hpp"
#include "cutoff/effects/saga.hpp"
#include "cutoff/effects/saga_journal.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/error_document.hpp"
#include "cutoff/http/message.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/sql/pool.hpp"
#include "warehouse/inventory.hpp"
#include "warehouse/order_saga.hpp"
#include "warehouse/shipping.hpp"

// g++ 12 reports Asio's coroutine frame delete as mismatched with its own operator new in
// large coroutines (see mode_run.cpp); this file has no braced aggregate in a co_await
// expression.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace cutoff::lab::internal {

namespace asio = boost::asio;
using effects::SagaState;

namespace {

constexpr std::int64_t kTooBig = 25;  // items: more than a shipment holds (max_items, 20)
constexpr std::size_t kOrderBins = 16;

double Seconds(Ms d) { return std::chrono::duration<double>(d).count(); }

// What a user told "failed" by an answer may take as final: any error but commit_ambiguous.
// (A user who gave up or hung up was told nothing.)
bool ToldFailed(const std::string& told) {
  return told != "completed" && told != "commit_ambiguous" && told != "client_gave_up" && told != "hung_up";
}

}  // namespace

ScenarioSpec OrdersSpec(const LabOptions& o) {
  const Layers l(o.scale);
  // Half the chain's rate: 8 orders a second with the defaults.
  const double rate = o.rate > 0 ? o.rate : 0.2 * o.pool_size / Seconds(l.gateway);
  ScenarioSpec s;
  s.name = "orders";
  s.title = "Orders: a saga reserves stock in the inventory, then books the shipment with the shipping service (" +
            std::to_string(Scaled(0.4, o.scale).count()) + " to " + std::to_string(Scaled(3.2, o.scale).count()) +
            " ms a booking); users wait " + std::to_string(l.user.count()) + " ms or " +
            std::to_string((l.user / 4).count()) + " ms, some hang up half-way, and one order in eight is refused";
  s.rate_from = s.rate_to = rate;
  return s;
}

struct OrdersRun::ShippingHost {
  asio::io_context io{1};
  std::string db_path;
  std::unique_ptr<wh::Shipping> service;
  std::unique_ptr<http::Server> server;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
  std::thread thread;

  ~ShippingHost() {
    Stop();
    server.reset();
    service.reset();
    RemoveDatabase();
  }
  void Stop() {
    if (!thread.joinable()) return;
    server->shutdown(Ms(100));
    service->stop_all();
    guard.reset();
    thread.join();
  }
  void RemoveDatabase() const {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(db_path + suffix, ec);
  }
};

OrdersRun::OrdersRun(const LabOptions& lab, const ScenarioSpec& spec, wh::Mode mode, std::string db, bool postgres,
                     std::int64_t* valuation_steps)
    : ModeRun(lab, spec, mode, std::move(db), postgres, valuation_steps) {}

OrdersRun::~OrdersRun() = default;

template <class Body>
auto OrdersRun::On(asio::io_context& io, Body body) {
  return asio::co_spawn(io, body(), asio::use_future).get();
}

void OrdersRun::Configure(wh::InventoryOptions& options) {
  // The saga's own budget. Under cutoff the user's patience, tightened by what each user sends;
  // under timeouts the inventory's own timeout; under none no deadline at all.
  options.order_budget = mode_ == wh::Mode::cutoff     ? layers_.user
                         : mode_ == wh::Mode::timeouts ? layers_.inventory
                                                       : Ms(std::chrono::hours(1));
  options.shipping_reply_margin = Scaled(0.4, lab_.scale);
}

void OrdersRun::Started(asio::io_context& inventory_io) {
  const auto now_ms = std::chrono::duration_cast<Ms>(std::chrono::system_clock::now().time_since_epoch()).count();
  stamp_ = tag_ + std::to_string(now_ms) + "-";

  // The shipping service, with a database of its own, on a thread of its own (a second
  // process, in effect), in the same mode as the inventory.
  shipping_ = std::make_unique<ShippingHost>();
  shipping_->db_path =
      (std::filesystem::temp_directory_path() / ("cutoff-lab-shipping-" + std::to_string(getpid()) + ".db")).string();
  shipping_->RemoveDatabase();
  wh::ShippingOptions so;
  so.db_url = "sqlite:" + shipping_->db_path;
  so.pool_size = 4;
  so.mode = mode_;
  so.own_timeout = Scaled(2, lab_.scale);
  so.booking_time = Scaled(0.4, lab_.scale);
  so.booking_time_max = Scaled(3.2, lab_.scale);
  shipping_->service = std::make_unique<wh::Shipping>(so);
  {
    const Context setup = Context().with_timeout(std::chrono::seconds(30));
    auto started = asio::co_spawn(shipping_->io, shipping_->service->start(setup), asio::use_future);
    shipping_->io.run();
    shipping_->io.restart();
    started.get();
  }
  http::ServerOptions sso = shipping_->service->server_options(nullptr);
  sso.one_io_thread = true;
  shipping_->server = std::make_unique<http::Server>(shipping_->io.get_executor(), sso);
  shipping_->service->mount(*shipping_->server);
  const std::uint16_t port = shipping_->server->listen("127.0.0.1", 0);
  shipping_->guard.emplace(asio::make_work_guard(shipping_->io));
  shipping_->thread = std::thread([io = &shipping_->io] { io->run(); });
  inventory().use_shipping(inventory_io.get_executor(), "http://127.0.0.1:" + std::to_string(port));

  // The bins orders take stock from. Each run starts them with nothing reserved, so that what
  // it finds reserved at the end is what its own orders hold.
  auto setup = [this]() -> asio::awaitable<void> {
    const Context ctx = Context().with_timeout(std::chrono::seconds(30));
    sql::Pool::Lease conn = co_await inventory().pool().acquire(ctx);
    const std::vector<sql::Value> limit{static_cast<std::int64_t>(kOrderBins)};
    sql::Result r = co_await conn->execute(ctx, "select id from bin where qty >= 200 order by id limit $1", limit);
    for (std::size_t i = 0; i < r.size(); ++i) bins_.push_back(r[i].get<std::int64_t>("id"));
    for (std::int64_t id : bins_) {
      const std::vector<sql::Value> p{id};
      co_await conn->execute(ctx, "update bin set reserved = 0 where id = $1", p);
    }
  };
  // The inventory's loop already has its servers' accepts pending: run it only until this is done.
  auto done = asio::co_spawn(inventory_io, setup(), asio::use_future);
  while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) inventory_io.run_one();
  done.get();
  if (bins_.empty()) throw std::runtime_error("the warehouse database has no bin with 200 items for the orders");
}

asio::awaitable<void> OrdersRun::Load() {
  auto ex = co_await asio::this_coro::executor;
  http::ClientOptions co;
  co.max_idle_per_host = 1024;
  // A user's budget leaves its answer the time to arrive: it is sent less this.
  co.reply_margin = Scaled(0.4, lab_.scale);
  users_client_ = std::make_unique<http::Client>(ex, co);
  asio::steady_timer timer(ex);
  int n = 0;
  double next = 0;
  for (;;) {
    const double t = Since(t0_, Clock::now());
    if (t >= load_for_) break;
    if (t >= next) {
      asio::co_spawn(ex, PlaceOrder(n++), asio::detached);
      next += 1.0 / std::max(spec_.rate_from, 0.1);
    }
    timer.expires_after(Ms(2));
    co_await timer.async_wait(asio::use_awaitable);
  }
  co_await Finish();
}

asio::awaitable<void> OrdersRun::PlaceOrder(int n) {
  ++in_flight_;
  ++sent_;
  // The same user, with the same order, in every mode.
  std::minstd_rand random(static_cast<unsigned>(n) * 2654435761u + 1u);
  Placed p;
  p.id = stamp_ + std::to_string(n);
  const int slot = n % 8;
  p.kind = slot <= 2 ? Kind::patient : slot <= 4 ? Kind::hurried : slot <= 6 ? Kind::hangs_up : Kind::too_big;
  p.bin = bins_[random() % bins_.size()];
  p.qty = p.kind == Kind::too_big ? kTooBig : 1 + static_cast<std::int64_t>(random() % 3);
  const Ms patience = p.kind == Kind::hurried ? layers_.user / 4 : layers_.user;
  const Ms earliest = Scaled(0.2, lab_.scale), latest = Scaled(3, lab_.scale);
  const Ms hang_up = earliest + Ms(random() % static_cast<unsigned>((latest - earliest).count() + 1));

  Attempt a;
  a.id = p.id;
  a.start = Clock::now();
  auto [base, source] = Context().with_request_id(p.id).with_cancel();
  // Under cutoff the user sends its patience as the budget; elsewhere it just stops waiting.
  const Context ctx = mode_ == wh::Mode::cutoff ? base.with_timeout(patience) : base;
  auto hung_up = std::make_shared<bool>(false);
  asio::steady_timer stop_waiting(co_await asio::this_coro::executor);
  if (p.kind == Kind::hangs_up || mode_ != wh::Mode::cutoff) {
    const bool hangs_up = p.kind == Kind::hangs_up;
    stop_waiting.expires_after(hangs_up ? hang_up : patience);
    stop_waiting.async_wait([source = source, hung_up, hangs_up](const boost::system::error_code& ec) mutable {
      if (ec) return;
      *hung_up = hangs_up;
      source.request_stop(StopReason::cancelled);  // the client closes its connection
    });
  }
  http::ClientRequest req;
  req.method = "POST";
  req.url = inventory_url_ + "/orders";
  req.headers.set("Content-Type", "application/json");
  req.headers.set("Idempotency-Key", p.id);
  req.body = wh::order_input(p.bin, p.qty, "dock " + std::to_string(n % 7));
  try {
    http::Response r = co_await users_client_->request(ctx, std::move(req));
    if (r.status == 200) {
      a.outcome = Outcome::complete;
      p.told = "completed";
    } else {
      std::string code = "http_" + std::to_string(r.status);
      if (auto remote = http::parse_error_document(r.body); remote && remote->code)
        code = std::string(to_string(*remote->code));
      a.codes.push_back(code);
      a.request_code = code;
      p.told = code;
    }
  } catch (const Error& e) {
    // A user who stopped waiting was told nothing, whatever its client makes of the cut call
    // (a POST sent and not answered is commit_ambiguous to the client).
    p.told = *hung_up ? "hung_up" : ctx.stop_requested() ? "client_gave_up" : std::string(to_string(e.code()));
    a.codes.push_back(p.told);
    a.request_code = p.told;
  }
  stop_waiting.cancel();
  a.end = Clock::now();
  Record(std::move(a));
  placed_.push_back(std::move(p));
  --in_flight_;
}

void OrdersRun::Settle(asio::io_context& inventory_io) {
  users_client_.reset();  // its loop has ended
  effects::Sagas& sagas = *inventory().sagas();
  const auto ours = [this](const std::string& id) { return id.starts_with(stamp_); };

  // Sagas whose callers have gone may still be running (under none and timeouts they run on
  // detached): wait for them to end, as a process would before anyone reconciles.
  const auto until = Clock::now() + std::chrono::seconds(30);
  for (;;) {
    auto count = [&]() -> asio::awaitable<std::size_t> {
      const Context ctx = Context().with_timeout(std::chrono::seconds(10));
      effects::SagaListOptions lo;
      lo.only_unfinished = true;
      lo.limit = effects::kMaxSagaListLimit;
      const std::vector<effects::SagaRecord> list = co_await sagas.journal().list(ctx, lo);
      co_return static_cast<std::size_t>(std::count_if(list.begin(), list.end(), [&](const effects::SagaRecord& s) {
        return ours(s.id) && (s.state == SagaState::running || s.state == SagaState::compensating);
      }));
    };
    if (On(inventory_io, count) == 0 || Clock::now() >= until) break;
    std::this_thread::sleep_for(Ms(20));
  }

  struct Truth {
    std::optional<SagaState> before, after;
    bool held_before = false, held_after = false;  // its reservation is held
    bool resumed = false;
    bool shipped = false;
  };
  std::vector<Truth> truth(placed_.size());
  std::int64_t reserved_before = 0, reserved_after = 0;
  auto reserved = [this](const Context& ctx) -> asio::awaitable<std::int64_t> {
    sql::Pool::Lease conn = co_await inventory().pool().acquire(ctx);
    std::int64_t sum = 0;
    for (std::int64_t id : bins_) {
      const std::vector<sql::Value> p{id};
      sql::Result r = co_await conn->execute(ctx, "select reserved from bin where id = $1", p);
      if (r.size() > 0) sum += r[0].get<std::int64_t>("reserved");
    }
    co_return sum;
  };
  // A saga holds its order's reservation when its reserve step is done (not undone).
  auto held = [](const effects::SagaRecord& s) {
    return !s.steps.empty() && s.steps[0].state == effects::SagaStepState::done;
  };
  // Every order's saga state and whether it holds its reservation, into `state` and `holds`.
  auto read_journal = [&](const Context& ctx, std::optional<SagaState> Truth::*state,
                          bool Truth::*holds) -> asio::awaitable<void> {
    for (std::size_t i = 0; i < placed_.size(); ++i) {
      std::optional<effects::SagaRecord> s = co_await sagas.journal().find(ctx, placed_[i].id);
      if (!s) continue;
      truth[i].*state = s->state;
      truth[i].*holds = held(*s);
    }
  };
  auto reconcile = [&]() -> asio::awaitable<void> {
    const Context ctx = Context().with_timeout(std::chrono::minutes(2));
    co_await read_journal(ctx, &Truth::before, &Truth::held_before);
    reserved_before = co_await reserved(ctx);
    // What `cutoff saga resume` does for every saga left ambiguous or half-undone. A cut
    // booking keeps its key in use at the shipping service until it has rolled back, so an
    // attempt may find the step still ambiguous: it is tried again a few times.
    for (std::size_t i = 0; i < placed_.size(); ++i) {
      if (!truth[i].before || effects::is_final(*truth[i].before)) continue;
      truth[i].resumed = true;
      for (int attempt = 0; attempt < 5; ++attempt) {
        std::string id = placed_[i].id;
        bool again = false;
        try {
          const Context resume_ctx = ctx.with_timeout(std::chrono::seconds(5));
          effects::SagaOutcome out = co_await sagas.resume(resume_ctx, std::move(id));
          again = out.state == SagaState::step_ambiguous;
        } catch (const Error&) {
          again = true;
        }
        if (!again) break;
        asio::steady_timer pause(co_await asio::this_coro::executor, Ms(100));
        co_await pause.async_wait(asio::use_awaitable);
      }
    }
    co_await read_journal(ctx, &Truth::after, &Truth::held_after);
    reserved_after = co_await reserved(ctx);
  };
  On(inventory_io, reconcile);
  auto shipments = [&]() -> asio::awaitable<void> {
    const Context ctx = Context().with_timeout(std::chrono::minutes(1));
    for (std::size_t i = 0; i < placed_.size(); ++i)
      truth[i].shipped = !(co_await shipping_->service->find(ctx, placed_[i].id)).empty();
  };
  On(shipping_->io, shipments);
  shipping_->Stop();

  json::object before_counts;
  std::int64_t held_before = 0, held_after = 0;
  int left_unsettled = 0, resumed = 0, resumed_final = 0, unsettled = 0, completed = 0, compensated = 0;
  int shipped = 0, orphans = 0, unshipped = 0, false_failures = 0, false_successes = 0, told_ambiguous = 0;
  for (std::size_t i = 0; i < placed_.size(); ++i) {
    const Placed& p = placed_[i];
    const Truth& t = truth[i];
    const std::string state = t.before ? std::string(effects::to_string(*t.before)) : std::string("not_started");
    Bump(before_counts, state);
    if (t.before && !effects::is_final(*t.before)) ++left_unsettled;
    if (t.held_before) held_before += p.qty;
    if (t.held_after) held_after += p.qty;
    if (t.resumed) {
      ++resumed;
      if (t.after && effects::is_final(*t.after)) ++resumed_final;
    }
    if (t.after && !effects::is_final(*t.after)) ++unsettled;
    const bool done = t.after == SagaState::completed;
    if (done) ++completed;
    if (t.after == SagaState::compensated) ++compensated;
    if (t.shipped) ++shipped;
    if (t.shipped && !done) ++orphans;
    if (done && !t.shipped) ++unshipped;
    if (ToldFailed(p.told) && (t.shipped || done)) ++false_failures;
    if (p.told == "completed" && !(done && t.shipped)) ++false_successes;
    if (p.told == "commit_ambiguous") ++told_ambiguous;
  }
  settled_["orders"] = static_cast<std::int64_t>(placed_.size());
  settled_["told_ambiguous"] = told_ambiguous;
  settled_["sagas_left"] = std::move(before_counts);
  settled_["left_unsettled"] = left_unsettled;
  settled_["resumed"] = resumed;
  settled_["resumed_final"] = resumed_final;
  settled_["unsettled"] = unsettled;
  settled_["completed_orders"] = completed;
  settled_["compensated_orders"] = compensated;
  settled_["shipments"] = shipped;
  settled_["orphan_shipments"] = orphans;
  settled_["unshipped_orders"] = unshipped;
  settled_["false_failures"] = false_failures;
  settled_["false_successes"] = false_successes;
  settled_["reserved_drift_before_resume"] = reserved_before - held_before;
  settled_["reserved_drift"] = reserved_after - held_after;
  settled_["reserved_after"] = reserved_after;
}

void OrdersRun::AddFigures(json::object& figures) {
  for (auto& [key, value] : settled_) figures[key] = value;
}

}  // namespace cutoff::lab::internal
