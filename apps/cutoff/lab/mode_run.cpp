#include "lab/mode_run.hpp"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>
#include <unistd.h>

#include "cutoff/core/error.hpp"
#include "cutoff/grpc/server.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/message.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/sql/connect.hpp"
#include "warehouse/gateway.hpp"
#include "warehouse/inventory.hpp"
#include "warehouse/inventory_grpc.hpp"

// g++ 12 reports Asio's coroutine frame delete as mismatched with its own operator new in
// large coroutines here (both are awaitable_frame_base's). Elsewhere the same warning was the
// sign of a real miscompile, a braced aggregate in a co_await expression (docs/architecture.md);
// this file has none of those, and its tests pass under ASan.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace cutoff::lab::internal {

namespace asio = boost::asio;

Ms Scaled(double seconds, double scale) {
  return Ms(std::max<std::int64_t>(1, std::llround(seconds * 1000.0 * scale)));
}

Layers::Layers(double scale)
    : user(Scaled(5, scale)),
      gateway(Scaled(2, scale)),
      inventory(Scaled(10, scale)),
      query(Scaled(8, scale)),
      valuation_cap(Scaled(1.5, scale)) {}

resilience::PolicyOptions GatewayPolicy(wh::Mode mode, bool naive_retries) {
  if (!naive_retries) return resilience::PolicyOptions{};  // one attempt, no breaker
  if (mode == wh::Mode::cutoff) return wh::default_inventory_policy();
  resilience::PolicyOptions naive;  // no breaker
  naive.retry = wh::default_inventory_policy().retry;
  naive.retry.budget_ratio = -1;  // no retry budget: every call may be tried 3 times
  return naive;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t i =
      std::min(v.size() - 1, static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())) - 1));
  return v[i];
}

void Bump(json::object& counts, const std::string& key) {
  counts[key] = (counts.contains(key) ? counts[key].as_int64() : 0) + 1;
}

double Round(double x, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(x * f) / f;
}

// PostgreSQL: statements as pg_stat_activity shows them, polled every few milliseconds from a
// connection of its own. A statement ends when it is no longer seen active.
class PgActivityWatcher {
 public:
  PgActivityWatcher(std::string url, std::shared_ptr<StatementLog> log) : url_(std::move(url)), log_(std::move(log)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~PgActivityWatcher() { stop(); }
  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int active() const noexcept { return active_.load(); }
  int peak_active() const noexcept { return peak_.load(); }
  void reset_peak() noexcept { peak_ = 0; }

 private:
  struct Seen {
    std::string rid;
    Clock::time_point first, last;
  };

  void Run() {
    asio::io_context io;
    asio::co_spawn(io, Poll(), asio::detached);
    io.run();
  }

  asio::awaitable<void> Poll() {
    std::unique_ptr<sql::Connection> conn;
    try {
      sql::DatabaseOptions db;
      db.url = url_;
      conn = co_await sql::connect(Context().with_timeout(std::chrono::seconds(10)), db);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cutoff lab: cannot watch pg_stat_activity: %s\n", e.what());
      co_return;
    }
    std::map<std::string, Seen> seen;  // pid + query_start
    asio::steady_timer timer(co_await asio::this_coro::executor);
    while (!stopping_) {
      const auto now = Clock::now();
      std::map<std::string, Seen> next;
      try {
        sql::Result r =
            co_await conn->execute(Context().with_timeout(std::chrono::seconds(2)),
                                   "select pid::text || '/' || query_start::text as k, query from pg_stat_activity "
                                   "where state = 'active' and pid <> pg_backend_pid() and query like '%request_id=%'",
                                   {});
        for (std::size_t i = 0; i < r.size(); ++i) {
          const std::string key = r[i].get<std::string>("k");
          const std::string query = r[i].get<std::string>("query");
          auto at = query.find("request_id='");
          if (at == std::string::npos) continue;
          at += 12;
          const auto close = query.find('\'', at);
          const std::string_view raw = std::string_view(query).substr(at, close - at);  // sqlcommenter: percent-encoded
          Seen s{http::percent_decode(raw, /*plus_is_space=*/false).value_or(std::string(raw)), now, now};
          if (auto it = seen.find(key); it != seen.end()) s.first = it->second.first;
          next[key] = s;
        }
      } catch (const std::exception&) {
      }
      for (auto& [key, s] : seen)
        if (!next.contains(key)) log_->add(s.rid, s.first, s.last + Ms(2));  // ended between polls
      seen = std::move(next);
      active_ = static_cast<int>(seen.size());
      peak_ = std::max(peak_.load(), active_.load());
      timer.expires_after(Ms(5));
      co_await timer.async_wait(asio::use_awaitable);
    }
    for (auto& [key, s] : seen) log_->add(s.rid, s.first, s.last);
  }

  std::string url_;
  std::shared_ptr<StatementLog> log_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> active_{0}, peak_{0};
  std::thread thread_;
};

namespace {

// Whether `data` answers anything: an object with a field that is not null (`{"bin": null}`
// answers nothing).
bool HasData(const json::value* data) {
  if (!data || !data->is_object()) return false;
  const json::object& o = data->as_object();
  return std::any_of(o.begin(), o.end(), [](const auto& kv) { return !kv.value().is_null(); });
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// A statement that ended within this of its caller's answer did not run on (the resolution
// of the measurement on PostgreSQL, which polls pg_stat_activity every 5 ms).
constexpr double kRanOn = 0.005;  // seconds

}  // namespace

ModeRun::ModeRun(const LabOptions& lab, const ScenarioSpec& spec, wh::Mode mode, std::string db, bool postgres,
                 std::int64_t* valuation_steps)
    : lab_(lab),
      spec_(spec),
      mode_(mode),
      layers_(lab.scale),
      load_for_(lab.duration_s),
      db_(std::move(db)),
      postgres_(postgres),
      valuation_steps_(valuation_steps) {
  // Request ids unique to this run: work a previous run left behind is never counted here.
  tag_ = std::string(1, spec_.name[0]) + std::string(1, wh::to_string(mode_)[0]) + "-";
}

ModeRun::~ModeRun() = default;

int ModeRun::DbRunning() const { return watcher_ ? watcher_->active() : log_->running(); }

std::string ModeRun::LookupQuery(int n) {
  return "{ bin(id: " + std::to_string(1 + (n * 37) % 4000) + ") { qty available } }";
}

bool ModeRun::WaitIdle(Duration limit, bool pool_too) {
  const auto until = Clock::now() + limit;
  auto busy = [&] {
    if (DbRunning() > 0) return true;
    if (!pool_too) return false;
    const sql::PoolStats ps = inventory_->pool().stats();
    return ps.in_use > 0 || ps.waiting > 0;
  };
  while (busy()) {
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(Ms(10));
  }
  return true;
}

json::object ModeRun::Run() {
  std::optional<PgActivityWatcher> watcher;
  if (postgres_) {
    watcher.emplace(db_, log_);
    watcher_ = &*watcher;
  }

  // The services, each on a thread of its own (as two processes would be: a gateway busy with
  // GraphQL does not hold up the inventory handing its connections over).
  wh::InventoryOptions inv;
  inv.db_url = db_;
  inv.mode = mode_;
  inv.pool_size = static_cast<std::size_t>(lab_.pool_size);
  inv.valuation_time = layers_.query;
  inv.valuation_steps = *valuation_steps_;
  inv.own_timeout = layers_.inventory;
  inv.pool_newest_first_after = Scaled(0.1, lab_.scale);  // 100 ms, scaled like the budgets
  if (!postgres_) {
    inv.statement_observer = [log = log_](const sql::StatementEvent& e) {
      if (!e.ended) return log->started();
      log->ended(e.request_id, Clock::time_point(e.started.time_since_epoch()),
                 Clock::time_point(e.ended->time_since_epoch()));
    };
  }
  Configure(inv);
  inventory_ = std::make_unique<wh::Inventory>(inv);
  asio::io_context inventory_io(1), gateway_io(1);
  {
    const Context setup = Context().with_timeout(std::chrono::minutes(5));
    auto started = asio::co_spawn(inventory_io, inventory_->start(setup), asio::use_future);
    inventory_io.run();
    inventory_io.restart();
    started.get();
  }
  *valuation_steps_ = inventory_->valuation_steps();
  http::ServerOptions iso = inventory_->server_options(nullptr);
  iso.one_io_thread = true;
  http::Server inventory_server(inventory_io.get_executor(), iso);
  inventory_->mount(inventory_server);
  const std::uint16_t inventory_port = inventory_server.listen("127.0.0.1", 0);
  inventory_url_ = "http://127.0.0.1:" + std::to_string(inventory_port);
  wh::GatewayOptions gw;
  gw.inventory_url = inventory_url_;
  // Over gRPC the inventory's calls run on the same loop as its HTTP routes would.
  std::unique_ptr<grpc::Server> inventory_grpc;
  if (const auto transport = wh::parse_inventory_transport(lab_.inventory_transport);
      transport == wh::InventoryTransport::grpc) {
    inventory_grpc = std::make_unique<grpc::Server>(inventory_io.get_executor(),
                                                    wh::inventory_grpc_options(*inventory_, nullptr));
    wh::mount_inventory_grpc(*inventory_, *inventory_grpc);
    gw.inventory_transport = *transport;
    gw.inventory_grpc_target = "127.0.0.1:" + std::to_string(inventory_grpc->listen("127.0.0.1", 0));
  } else if (!transport) {
    throw std::invalid_argument("the inventory transport is http or grpc, not \"" + lab_.inventory_transport + "\"");
  }
  gw.mode = mode_;
  gw.operation_budget = layers_.gateway;
  gw.valuation_cap = layers_.valuation_cap;
  gw.inventory_policy = GatewayPolicy(mode_, spec_.naive_retries);
  wh::Gateway gateway(gateway_io.get_executor(), gw);
  http::ServerOptions gso = gateway.server_options(nullptr);
  gso.one_io_thread = true;
  http::Server gateway_server(gateway_io.get_executor(), gso);
  gateway.mount(gateway_server);
  gateway_url_ = "http://127.0.0.1:" + std::to_string(gateway_server.listen("127.0.0.1", 0)) + "/graphql";
  Started(inventory_io);
  auto inventory_guard = asio::make_work_guard(inventory_io);
  auto gateway_guard = asio::make_work_guard(gateway_io);
  std::thread inventory_thread([&inventory_io] { inventory_io.run(); });
  std::thread gateway_thread([&gateway_io] { gateway_io.run(); });
  WaitIdle(std::chrono::seconds(10), false);
  log_->take();  // setup statements are not part of the run

  // The load, on this thread.
  asio::io_context users(1);
  http::ClientOptions co;
  // The user's patience bounds every wait; under cutoff the user also sends it as a budget.
  co.policy.attempt_timeout = mode_ == wh::Mode::cutoff ? Duration(std::chrono::hours(1)) : Duration(layers_.user);
  co.max_idle_per_host = 1024;
  client_ = std::make_unique<http::Client>(users.get_executor(), co);
  if (watcher_) watcher_->reset_peak();
  t0_ = Clock::now();
  asio::co_spawn(users, Load(), asio::detached);
  asio::co_spawn(users, Sample(), asio::detached);
  users.run();
  const double duration = Since(t0_, Clock::now());

  // Work still running for callers that are gone: let it end on its own, up to a bound (a
  // backlog with no timeout anywhere could take minutes), then stop what is left.
  drained_ = WaitIdle(std::max<Duration>(std::chrono::seconds(2), 10 * layers_.query), true);
  Settle(inventory_io);
  inventory_->stop_all();
  gateway_server.shutdown(Ms(100));
  inventory_server.shutdown(Ms(100));
  if (inventory_grpc) {
    inventory_grpc->shutdown(Ms(100));
    inventory_grpc.reset();  // waits for its calls, on the loop the guard still keeps running
  }
  gateway_guard.reset();
  inventory_guard.reset();
  gateway_thread.join();
  inventory_thread.join();
  client_.reset();
  inventory_.reset();  // closes the pool; abandoned statements end on their own
  // The next run starts on a quiet database.
  if (!WaitIdle(std::chrono::seconds(60), false))
    std::fprintf(stderr, "cutoff lab: statements of this run are still running after a minute\n");
  if (watcher) watcher->stop();
  const std::vector<Statement> statements = log_->take();
  if (lab_.progress) std::fprintf(stderr, "\n");
  return Figures(duration, statements);
}

asio::awaitable<void> ModeRun::Load() {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer timer(ex);
  int n = 0, f = 0;
  double next_fast = 0, next_slow = 0;
  if (spec_.sequential) {
    while (Since(t0_, Clock::now()) < load_for_) {
      co_await User(tag_ + "g" + std::to_string(n++), spec_.query, false, 0);
      timer.expires_after(layers_.user);
      co_await timer.async_wait(asio::use_awaitable);
    }
  } else {
    for (;;) {
      const double t = Since(t0_, Clock::now());
      if (t >= load_for_) break;
      if (t >= next_slow) {
        asio::co_spawn(ex, User(tag_ + "q" + std::to_string(n++), spec_.query, false, spec_.max_retries),
                       asio::detached);
        const double rate = spec_.rate_from + (spec_.rate_to - spec_.rate_from) * (t / load_for_);
        next_slow += 1.0 / std::max(rate, 0.1);
      }
      if (spec_.fast_rate > 0 && t >= next_fast) {
        asio::co_spawn(ex, User(tag_ + "f" + std::to_string(f), LookupQuery(f), true, 0), asio::detached);
        ++f;
        next_fast += 1.0 / spec_.fast_rate;
      }
      timer.expires_after(Ms(2));
      co_await timer.async_wait(asio::use_awaitable);
    }
  }
  co_await Finish();
}

asio::awaitable<void> ModeRun::Finish() {
  // Let the last requests end (the user gives up after its patience at the latest).
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (in_flight_ > 0) {
    timer.expires_after(Ms(10));
    co_await timer.async_wait(asio::use_awaitable);
  }
  loading_ = false;
}

asio::awaitable<void> ModeRun::User(std::string id, std::string query, bool fast, int retries_left) {
  ++in_flight_;
  ++sent_;
  Attempt a;
  a.id = id;
  a.fast = fast;
  a.start = Clock::now();
  Context ctx = Context().with_request_id(id);
  if (mode_ == wh::Mode::cutoff) ctx = ctx.with_timeout(layers_.user);  // sent as Deadline-Budget-Ms
  http::ClientRequest req;
  req.method = "POST";
  req.url = gateway_url_;
  req.headers.set("Content-Type", "application/json");
  req.body = json::serialize(json::object{{"query", query}});
  req.may_write = false;  // queries: a user who gives up gave up, nothing can have landed
  try {
    http::Response r = co_await client_->request(ctx, std::move(req));
    json::error_code ec;
    json::value body = json::parse(r.body, ec);
    const json::object* o = ec ? nullptr : body.if_object();
    const json::value* data = o ? o->if_contains("data") : nullptr;
    const json::value* errors = o ? o->if_contains("errors") : nullptr;
    const bool has_data = HasData(data);
    if (errors && errors->is_array()) {
      for (const json::value& e : errors->as_array()) {
        const json::object* eo = e.if_object();
        if (!eo) continue;
        std::string code = "internal";
        if (auto* ext = eo->if_contains("extensions"); ext && ext->is_object())
          if (auto* c = ext->as_object().if_contains("code"); c && c->is_string())
            code = Lower(std::string(c->as_string()));
        a.codes.push_back(code);
        // warehouses.3.stockValuation
        if (auto* path = eo->if_contains("path"); path && path->is_array()) {
          std::string p;
          std::int64_t index = -1;
          for (const json::value& seg : path->as_array()) {
            if (!p.empty()) p += '.';
            if (seg.is_int64()) {
              index = seg.as_int64();
              p += std::to_string(index);
            } else if (seg.is_string()) {
              p += std::string(seg.as_string());
            }
          }
          if (has_data && p.ends_with("stockValuation") && index >= 0) a.cut.emplace_back(p, index + 1);
        }
      }
    }
    if (r.status != 200 && a.codes.empty()) a.codes.push_back("http_" + std::to_string(r.status));
    if (has_data) {
      if (const json::value* list = data->as_object().if_contains("warehouses"); list && list->is_array()) {
        a.valuations = list->as_array().size();
      } else if (const json::value* one = data->as_object().if_contains("warehouse"); one && one->is_object()) {
        a.valuations = one->as_object().contains("stockValuation") ? 1 : 0;
      }
      a.outcome = a.codes.empty() ? Outcome::complete : Outcome::partial;
    } else {
      a.outcome = Outcome::failed;
      a.request_code = a.codes.empty() ? std::string("no_data") : a.codes.front();
    }
  } catch (const Error& e) {
    // The user's patience ran out (or the connection failed): it gives up on the request.
    a.codes.push_back(e.code() == ErrorCode::deadline_exceeded || e.code() == ErrorCode::attempt_timeout
                          ? "client_gave_up"
                          : std::string(to_string(e.code())));
    a.outcome = Outcome::failed;
    a.request_code = a.codes.back();
  }
  a.end = Clock::now();
  // Every mode's user behaves the same: a failure is retried after a short pause while the
  // load lasts. What a retry costs the backend is what differs.
  const bool retry = !a.ok() && retries_left > 0 && Since(t0_, a.end) < load_for_;
  Record(std::move(a));
  --in_flight_;
  if (retry) {
    ++retries_;
    asio::steady_timer pause(co_await asio::this_coro::executor, layers_.gateway / 4);
    co_await pause.async_wait(asio::use_awaitable);
    co_await User(id + "r", std::move(query), fast, retries_left - 1);
  }
}

void ModeRun::Record(Attempt a) {
  if (a.ok()) {
    ++ok_;
    ok_times_.push_back(a.end);
  }
  if (a.outcome != Outcome::failed) answered_times_.push_back(a.end);
  attempts_.push_back(std::move(a));
}

asio::awaitable<void> ModeRun::Sample() {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const bool tty = isatty(2);
  for (int tick = 0; loading_; ++tick) {
    const double t = Since(t0_, Clock::now());
    const sql::PoolStats ps = inventory_->pool().stats();
    const int db = DbRunning();
    peak_pool_ = std::max(peak_pool_, ps.in_use);
    peak_waiting_ = std::max(peak_waiting_, ps.waiting);
    peak_db_ = std::max(peak_db_, db);
    if (ps.waiting > 0) ++queued_samples_;
    if (tick % 5 == 0) {  // every 100 ms
      const auto window = Clock::now() - std::chrono::seconds(1);
      const auto recent = std::count_if(ok_times_.begin(), ok_times_.end(), [&](auto x) { return x >= window; });
      const auto answered =
          std::count_if(answered_times_.begin(), answered_times_.end(), [&](auto x) { return x >= window; });
      timeline_.push_back(json::object{{"t", std::round(t * 100) / 100},
                                       {"pool_in_use", ps.in_use},
                                       {"pool_waiting", ps.waiting},
                                       {"db_running", db},
                                       {"goodput_rps", recent},
                                       {"answered_rps", answered},
                                       {"in_flight", in_flight_}});
      if (lab_.progress && (tty || tick % 50 == 0)) {
        std::string phase(PhaseAt(t));
        if (!phase.empty()) phase = " " + phase + std::string(8 - std::min<std::size_t>(8, phase.size()), ' ');
        std::fprintf(stderr, "%s  %-13s %-9s %5.1fs%s  sent %5d  ok %5d  in flight %4d  pool %zu/%d  db %3d%s",
                     tty ? "\r" : "", spec_.name.c_str(), std::string(wh::to_string(mode_)).c_str(), t, phase.c_str(),
                     sent_, ok_, in_flight_, ps.in_use, lab_.pool_size, db, tty ? "   " : "\n");
        std::fflush(stderr);
      }
    }
    timer.expires_after(Ms(20));
    co_await timer.async_wait(asio::use_awaitable);
  }
}

json::object ModeRun::Figures(double duration, const std::vector<Statement>& statements) {
  std::map<std::string, const Attempt*> by_id;
  std::vector<double> latency, fast_latency;
  // `errors` (every code of every response, as results version 1 always had it) mixes field
  // errors and request errors; request_errors counts each failed request once, by why it failed,
  // and field_errors the errors inside answers that had data.
  json::object errors, request_errors, fast_request_errors, field_errors;
  int ok = 0, partial = 0, failed = 0, requests = 0;
  int fast_ok = 0, fast_partial = 0, fast_failed = 0, fast_requests = 0;
  std::int64_t valuations_asked = 0;
  for (const Attempt& a : attempts_) {
    by_id[a.id] = &a;
    const double ms = std::chrono::duration<double, std::milli>(a.end - a.start).count();
    for (const std::string& c : a.codes) Bump(errors, c);
    if (a.outcome == Outcome::failed) {
      Bump(a.fast ? fast_request_errors : request_errors, a.request_code);
    } else {
      for (const std::string& c : a.codes) Bump(field_errors, c);
    }
    if (a.fast) {
      ++fast_requests;
      fast_latency.push_back(ms);
      ++(a.outcome == Outcome::complete ? fast_ok : a.outcome == Outcome::partial ? fast_partial : fast_failed);
      continue;
    }
    ++requests;
    latency.push_back(ms);
    ++(a.outcome == Outcome::complete ? ok : a.outcome == Outcome::partial ? partial : failed);
    valuations_asked += static_cast<std::int64_t>(a.valuations);
  }
  // Zombie work: statement time after the caller had its answer (or gave up), including
  // statements that only started after that.
  const bool debug = std::getenv("CUTOFF_LAB_DEBUG") != nullptr;
  if (debug) {
    for (const Attempt& a : attempts_) {
      std::string codes;
      for (const std::string& c : a.codes) codes += " " + c;
      std::fprintf(stderr, "attempt %-12s %8.3f s .. %8.3f s %-8s%s\n", a.id.c_str(), Since(t0_, a.start),
                   Since(t0_, a.end),
                   a.outcome == Outcome::complete  ? "complete"
                   : a.outcome == Outcome::partial ? "partial"
                                                   : "failed",
                   codes.c_str());
    }
  }
  double zombie = 0, db_seconds = 0;
  int zombie_statements = 0;
  std::vector<double> overshoot;
  std::map<std::string, double> outlived;  // "attempt.vK" -> ms past the answer
  for (const Statement& s : statements) {
    const std::string attempt = s.request_id.substr(0, s.request_id.find('.'));
    auto it = by_id.find(attempt);
    if (debug)
      std::fprintf(stderr, "statement %-16s %8.3f s .. %8.3f s, answered %8.3f s\n", s.request_id.c_str(),
                   Since(t0_, s.start), Since(t0_, s.end), it == by_id.end() ? -1.0 : Since(t0_, it->second->end));
    if (it == by_id.end()) continue;
    db_seconds += std::chrono::duration<double>(s.end - s.start).count();
    const Clock::time_point answered = it->second->end;
    const Clock::time_point from = std::max(s.start, answered);
    if (s.end <= from) continue;
    const double seconds = std::chrono::duration<double>(s.end - from).count();
    zombie += seconds;
    if (seconds > kRanOn) ++zombie_statements;
    const double past = std::chrono::duration<double, std::milli>(s.end - answered).count();
    overshoot.push_back(past);
    outlived[s.request_id] = std::max(outlived[s.request_id], past);
  }
  json::object m;
  m["requests"] = requests;
  m["ok"] = ok;
  m["partial"] = partial;
  m["failed"] = failed;
  m["fast_requests"] = fast_requests;
  m["fast_ok"] = fast_ok;
  m["fast_partial"] = fast_partial;
  m["fast_failed"] = fast_failed;
  // Complete answers per second, both kinds. Every answer counted arrived within the user's
  // patience: the user stops waiting then.
  m["goodput_rps"] = Round((ok + fast_ok) / std::max(duration, 0.001), 2);
  m["answered_rps"] = Round((ok + partial + fast_ok + fast_partial) / std::max(duration, 0.001), 2);
  m["p50_ms"] = Round(Percentile(latency, 0.50));
  m["p99_ms"] = Round(Percentile(latency, 0.99));
  m["fast_p99_ms"] = Round(Percentile(fast_latency, 0.99));
  m["errors"] = std::move(errors);
  m["request_errors"] = std::move(request_errors);
  m["fast_request_errors"] = std::move(fast_request_errors);
  m["field_errors"] = std::move(field_errors);
  m["retries"] = retries_;
  m["pool_size"] = lab_.pool_size;
  m["peak_pool_in_use"] = peak_pool_;
  m["peak_pool_waiting"] = peak_waiting_;
  m["pool_queued_s"] = Round(queued_samples_ * 0.02, 2);
  m["peak_db_running"] = peak_db_;
  m["db_seconds"] = Round(db_seconds, 3);
  m["zombie_seconds"] = Round(zombie, 3);
  m["zombie_share"] = Round(db_seconds > 0 ? zombie / db_seconds : 0.0, 3);
  m["zombie_statements"] = zombie_statements;
  m["overshoot_p50_ms"] = Round(Percentile(overshoot, 0.50));
  m["overshoot_p99_ms"] = Round(Percentile(overshoot, 0.99));
  m["duration_s"] = Round(duration, 2);
  m["drained"] = drained_;
  if (spec_.name == "graphql") {
    // Every field cut from an answer, and how long after the answer the statement behind it
    // ended (0: it had ended before). Gone: it had ended, or ended within kRanOn.
    std::vector<double> cut_outlived;
    int gone = 0;
    for (const Attempt& a : attempts_) {
      for (const auto& [path, warehouse] : a.cut) {
        auto o = outlived.find(a.id + ".v" + std::to_string(warehouse));
        const double ms = o == outlived.end() ? 0.0 : o->second;
        cut_outlived.push_back(ms);
        if (ms <= kRanOn * 1000) ++gone;
      }
    }
    m["valuations_asked"] = valuations_asked;
    m["cut_fields_total"] = cut_outlived.size();
    m["cut_fields_gone"] = gone;
    // Nothing cut: nothing to say how long it ran on.
    m["cut_outlived_p50_ms"] =
        cut_outlived.empty() ? json::value(nullptr) : json::value(Round(Percentile(cut_outlived, 0.50)));
    m["cut_outlived_max_ms"] = cut_outlived.empty()
                                   ? json::value(nullptr)
                                   : json::value(Round(*std::max_element(cut_outlived.begin(), cut_outlived.end())));
    // The fields cut in the last answer that had any, and how long the statement behind each
    // one outlived the response.
    json::array cut;
    for (auto a = attempts_.rbegin(); a != attempts_.rend(); ++a) {
      if (a->cut.empty()) continue;
      for (const auto& [path, warehouse] : a->cut) {
        auto o = outlived.find(a->id + ".v" + std::to_string(warehouse));
        cut.push_back(json::object{{"path", path}, {"outlived_ms", Round(o == outlived.end() ? 0.0 : o->second)}});
      }
      break;
    }
    m["cut_fields"] = std::move(cut);
  }
  AddFigures(m);
  m["timeline"] = std::move(timeline_);
  return m;
}

}  // namespace cutoff::lab::internal
