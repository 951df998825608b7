// One scenario in one mode: the warehouse services started in this process, a load of users
// against them, and what the clients and the database saw. Internal to the lab runner
// (lab_runner.cpp, which chooses the scenarios); docs/lab.md describes the scenarios and
// figures.
//
//   ModeRun run(options, spec, wh::Mode::cutoff, db, postgres, &valuation_steps);
//   boost::json::object figures = run.Run();
//
// A scenario with a load of its own (overload_run.hpp, orders_run.hpp) derives from ModeRun: it
// overrides Load() and adds its figures in AddFigures(), and may set the inventory up
// (Configure, Started) and look at what the run left behind before the services stop
// (Settle); the services, the users, the sampling and the common figures are this class's.
#ifndef CUTOFF_APPS_CUTOFF_LAB_MODE_RUN_HPP_
#define CUTOFF_APPS_CUTOFF_LAB_MODE_RUN_HPP_

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cutoff/core/clock.hpp"
#include "cutoff/resilience/policy.hpp"
#include "lab/lab_runner.hpp"
#include "warehouse/mode.hpp"

namespace cutoff::http {
class Client;
}
namespace boost::asio {
class io_context;
}
namespace cutoff::warehouse {
class Inventory;
struct InventoryOptions;
}

namespace cutoff::lab::internal {

namespace json = boost::json;
namespace wh = cutoff::warehouse;
using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

inline double Since(Clock::time_point t0, Clock::time_point t) { return std::chrono::duration<double>(t - t0).count(); }

// `seconds` of the unscaled timeout table, times `scale`; at least 1 ms.
Ms Scaled(double seconds, double scale);

// The timeout table of the chain (user 5 s, gateway 2 s, inventory 10 s, query 8 s), scaled.
struct Layers {
  Ms user, gateway, inventory, query;
  Ms valuation_cap;  // the gateway's @budget on stockValuation: 1.5 s of its 2 s
  explicit Layers(double scale);
};

// How the gateway calls the inventory. With `naive_retries` (the overload scenario): under
// `cutoff` the reference policy (warehouse::default_inventory_policy(): a retry budget and a
// breaker), under `timeouts` and `none` the usual naive setup, 3 attempts with no retry budget
// and no breaker. Otherwise one attempt per call and no breaker in every mode, so that only
// the deadlines differ.
resilience::PolicyOptions GatewayPolicy(wh::Mode mode, bool naive_retries);

// ---- What the database saw ------------------------------------------------------------------

struct Statement {
  std::string request_id;
  Clock::time_point start, end;
};

// Statements as the database ran them. Shared with the driver's observer, which may report a
// statement abandoned by its caller long after the run that started it.
class StatementLog {
 public:
  void started() noexcept { ++running_; }
  void ended(std::string_view rid, Clock::time_point start, Clock::time_point end) {
    --running_;
    add(rid, start, end);
  }
  void add(std::string_view rid, Clock::time_point start, Clock::time_point end) {
    if (rid.empty()) return;
    std::lock_guard lock(mu_);
    statements_.push_back({std::string(rid), start, end});
  }
  // Statements running right now (SQLite; the watcher counts them on PostgreSQL).
  int running() const noexcept { return running_.load(); }
  std::vector<Statement> take() {
    std::lock_guard lock(mu_);
    return std::exchange(statements_, {});
  }

 private:
  std::atomic<int> running_{0};
  std::mutex mu_;
  std::vector<Statement> statements_;
};

class PgActivityWatcher;

// ---- What the clients saw ---------------------------------------------------------------------

// What one request got. Exactly one of complete, partial and failed holds.
enum class Outcome {
  complete,  // data and no error: everything asked for
  partial,   // data with field errors: some fields cut or failed, the rest answered
  failed,    // no data: a request error, an HTTP error, or the user gave up
};

struct Attempt {
  std::string id;
  Clock::time_point start, end;
  bool fast = false;  // an unrelated cheap query
  Outcome outcome = Outcome::failed;
  bool ok() const { return outcome == Outcome::complete; }
  std::vector<std::string> codes;  // every error code of the response, lowercase
  std::string request_code;        // failed: why (the first error's code, http_<status>, client_gave_up)
  std::size_t valuations = 0;      // stockValuation fields asked for in an answer with data
  std::vector<std::pair<std::string, std::int64_t>> cut;  // (path, warehouse id) cut at the deadline
};

double Percentile(std::vector<double> v, double p);
double Round(double x, int digits = 1);
// counts[key] += 1, from 0 when it is not there.
void Bump(json::object& counts, const std::string& key);

// ---- One scenario in one mode -----------------------------------------------------------------

struct ScenarioSpec {
  std::string name;
  std::string title;
  std::string query;                  // what each user sends
  double rate_from = 0, rate_to = 0;  // arrivals per second (open loop), ramped
  double fast_rate = 0;               // unrelated cheap queries per second
  int max_retries = 0;                // a user retries a failed request this often
  bool sequential = false;            // one operation at a time (graphql)
  // How the gateway retries its calls to the inventory (see GatewayPolicy).
  bool naive_retries = false;
};

class ModeRun {
 public:
  ModeRun(const LabOptions& lab, const ScenarioSpec& spec, wh::Mode mode, std::string db, bool postgres,
          std::int64_t* valuation_steps);
  virtual ~ModeRun();
  ModeRun(const ModeRun&) = delete;
  ModeRun& operator=(const ModeRun&) = delete;

  // Starts the services, runs the load, waits for the work left to end, stops the services
  // and returns the mode's figures.
  json::object Run();

 protected:
  // The users: by default the spec's open-loop arrivals (or one operation at a time), for
  // `load_for_` seconds, then until the last request ended.
  virtual boost::asio::awaitable<void> Load();
  // Figures of the scenario's own, added to the common ones.
  virtual void AddFigures(json::object& figures) { (void)figures; }
  // Before the inventory is made: its options for this scenario.
  virtual void Configure(wh::InventoryOptions& options) { (void)options; }
  // The inventory has started and is served at `inventory_url_`; its loop is not running yet.
  virtual void Started(boost::asio::io_context& inventory_io) { (void)inventory_io; }
  // The load has ended and the work left has drained; the inventory still runs on its loop.
  virtual void Settle(boost::asio::io_context& inventory_io) { (void)inventory_io; }
  // Records what one request got (the common figures are made of these).
  void Record(Attempt a);
  wh::Inventory& inventory() { return *inventory_; }
  http::Client& client() { return *client_; }
  // A word for the progress line: the phase of the load at `t` seconds (empty: none).
  virtual std::string_view PhaseAt(double t) const {
    (void)t;
    return {};
  }

  // One user's request, recorded in `attempts_`; a request that got no complete answer is
  // retried after a short pause, up to `retries_left` times, while the load lasts.
  boost::asio::awaitable<void> User(std::string id, std::string query, bool fast, int retries_left);
  // A cheap bin lookup, the `n`th.
  static std::string LookupQuery(int n);
  // Waits until no request is in flight, then ends the sampling.
  boost::asio::awaitable<void> Finish();

  const LabOptions& lab_;
  const ScenarioSpec& spec_;
  std::string inventory_url_;  // "http://127.0.0.1:PORT"
  wh::Mode mode_;
  Layers layers_;
  std::string tag_;  // prefixes every request id of this run
  Clock::time_point t0_;
  double load_for_ = 0;  // seconds of load; users retry only within it
  int in_flight_ = 0, sent_ = 0, ok_ = 0, retries_ = 0;
  std::vector<Attempt> attempts_;

 private:
  boost::asio::awaitable<void> Sample();
  // Statements running in the database right now.
  int DbRunning() const;
  // Waits until the database and the pool are idle, at most `limit`; false on the limit.
  bool WaitIdle(Duration limit, bool pool_too);
  json::object Figures(double duration, const std::vector<Statement>& statements);

  std::string db_;
  bool postgres_;
  std::int64_t* valuation_steps_;
  std::shared_ptr<StatementLog> log_ = std::make_shared<StatementLog>();
  std::string gateway_url_;
  std::unique_ptr<wh::Inventory> inventory_;
  std::unique_ptr<http::Client> client_;
  PgActivityWatcher* watcher_ = nullptr;
  bool loading_ = true;
  std::size_t peak_pool_ = 0, peak_waiting_ = 0;
  int peak_db_ = 0;
  int queued_samples_ = 0;  // samples with callers queued for a connection
  bool drained_ = true;     // the backend finished on its own within the drain bound
  json::array timeline_;
  std::vector<Clock::time_point> ok_times_;        // complete answers
  std::vector<Clock::time_point> answered_times_;  // answers with data: complete or partial
};

}  // namespace cutoff::lab::internal

#endif  // CUTOFF_APPS_CUTOFF_LAB_MODE_RUN_HPP_
