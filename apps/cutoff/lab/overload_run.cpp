#include "lab/overload_run.hpp"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cmath>

namespace cutoff::lab::internal {

namespace asio = boost::asio;

namespace {

constexpr double kOverload = 3.0;      // offered load in the overload phase, times the capacity
constexpr double kLow = 0.5;           // offered load before and after it, times the capacity
constexpr double kLookupRate = 40;     // cheap lookups per second, in every phase
constexpr double kWindow = 0.5;        // seconds: the lookups' p99 is taken per window
constexpr double kRecovered = 2.0;     // back when the p99 is within this times the baseline's
constexpr double kWarmUp = 0.25;       // share of the capacity phase not measured
constexpr int kOverloadWarehouse = 6;  // a small warehouse: its valuation is ~3% of warehouse 1's
constexpr int kRetries = 2;            // a user retries a request without a complete answer twice

// Users of the capacity phase: half as many as connections. Enough to keep the database busy
// (its statements compete for the same cores), and few enough that nobody queues for a
// connection and no request nears its deadline, so every mode measures the same thing: a
// service at work, not one already overloaded by the measurement (a closed loop as large as
// the pool, under `timeouts`, turns each request cut at its deadline into a zombie statement
// plus a new request).
int CapacityUsers(const LabOptions& lab) { return std::max(1, lab.pool_size / 2); }

}  // namespace

ScenarioSpec OverloadSpec(const LabOptions& options) {
  (void)options;
  ScenarioSpec spec;
  spec.name = "overload";
  spec.title =
      "Overload: capacity measured, then three times that offered by users who retry twice, then the "
      "excess removed while the cheap lookups show whether the services recover";
  spec.query = "{ stockValuation(warehouseId: " + std::to_string(kOverloadWarehouse) + ") }";
  spec.fast_rate = kLookupRate;
  spec.max_retries = kRetries;
  spec.naive_retries = true;
  return spec;
}

OverloadRun::OverloadRun(const LabOptions& lab, const ScenarioSpec& spec, wh::Mode mode, std::string db, bool postgres,
                         std::int64_t* valuation_steps)
    : ModeRun(lab, spec, mode, std::move(db), postgres, valuation_steps) {
  const double d = lab.duration_s;
  double at = 0;
  for (auto [name, share] : {std::pair{"capacity", 0.3}, {"baseline", 0.2}, {"overload", 0.6}, {"recovery", 0.8}}) {
    phases_.push_back({name, at, at + share * d});
    at += share * d;
  }
  load_for_ = at;
}

std::string_view OverloadRun::PhaseAt(double t) const {
  for (const Phase& p : phases_)
    if (t < p.to) return p.name;
  return "drain";
}

double OverloadRun::CompletePerSecond(double from, double to) const {
  const auto n = std::count_if(attempts_.begin(), attempts_.end(), [&](const Attempt& a) {
    const double end = Since(t0_, a.end);
    return !a.fast && a.ok() && end >= from && end < to;
  });
  return to > from ? static_cast<double>(n) / (to - from) : 0.0;
}

asio::awaitable<void> OverloadRun::ClosedLoopUser(int user, double until) {
  for (int n = 0; Since(t0_, Clock::now()) < until; ++n)
    co_await User(tag_ + "c" + std::to_string(user) + "-" + std::to_string(n), spec_.query, false, 0);
}

asio::awaitable<void> OverloadRun::Arrivals(double rate, double until) {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer timer(ex);
  double next = Since(t0_, Clock::now());
  for (;;) {
    const double t = Since(t0_, Clock::now());
    if (t >= until) break;
    for (; next <= t && next < until; next += 1.0 / rate)
      asio::co_spawn(ex, User(tag_ + "q" + std::to_string(next_user_++), spec_.query, false, spec_.max_retries),
                     asio::detached);
    timer.expires_after(Ms(2));
    co_await timer.async_wait(asio::use_awaitable);
  }
}

asio::awaitable<void> OverloadRun::Lookups() {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const double until = phases_.back().to;
  int n = 0;
  for (double next = 0;;) {
    const double t = Since(t0_, Clock::now());
    if (t >= until) break;
    for (; next <= t; next += 1.0 / kLookupRate, ++n)
      asio::co_spawn(timer.get_executor(), User(tag_ + "f" + std::to_string(n), LookupQuery(n), true, 0),
                     asio::detached);
    timer.expires_after(Ms(2));
    co_await timer.async_wait(asio::use_awaitable);
  }
}

asio::awaitable<void> OverloadRun::Load() {
  auto ex = co_await asio::this_coro::executor;
  bool lookups_done = false;
  asio::co_spawn(ex, Lookups(), [&lookups_done](std::exception_ptr) { lookups_done = true; });

  const Phase& capacity = phases_[0];
  for (int u = 0; u < CapacityUsers(lab_); ++u) asio::co_spawn(ex, ClosedLoopUser(u, capacity.to), asio::detached);
  asio::steady_timer timer(ex);
  timer.expires_at(t0_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(capacity.to)));
  co_await timer.async_wait(asio::use_awaitable);
  capacity_ = CompletePerSecond(capacity.from + kWarmUp * (capacity.to - capacity.from), capacity.to);
  const double rate = std::max(capacity_, 1.0);  // a service that answered nothing still gets load

  co_await Arrivals(kLow * rate, phases_[1].to);
  co_await Arrivals(kOverload * rate, phases_[2].to);
  co_await Arrivals(kLow * rate, phases_[3].to);
  while (!lookups_done) {
    timer.expires_after(Ms(10));
    co_await timer.async_wait(asio::use_awaitable);
  }
  co_await Finish();
}

void OverloadRun::AddFigures(json::object& m) {
  const Phase& baseline = phases_[1];
  const Phase& overload = phases_[2];
  const Phase& recovery = phases_[3];
  const double goodput = CompletePerSecond(overload.from, overload.to);
  int overload_attempts = 0, overload_retries = 0;
  for (const Attempt& a : attempts_) {
    const double start = Since(t0_, a.start);
    if (a.fast || start < overload.from || start >= overload.to) continue;
    ++overload_attempts;
    if (a.id.ends_with("r")) ++overload_retries;
  }
  // The cheap lookups' latency per window of their start; one without a complete answer counts
  // as the user's whole patience (it was not answered within it).
  const double patience_ms = static_cast<double>(layers_.user.count());
  const int windows = static_cast<int>(std::ceil(recovery.to / kWindow - 1e-9));
  std::vector<std::vector<double>> by_window(static_cast<std::size_t>(std::max(windows, 0)));
  std::vector<double> base;
  for (const Attempt& a : attempts_) {
    if (!a.fast) continue;
    const double start = Since(t0_, a.start);
    const double ms = a.ok() ? std::chrono::duration<double, std::milli>(a.end - a.start).count() : patience_ms;
    const auto w = static_cast<std::size_t>(start / kWindow);
    if (w < by_window.size()) by_window[w].push_back(ms);
    if (start >= baseline.from && start < baseline.to) base.push_back(ms);
  }
  const double baseline_p99 = Percentile(base, 0.99);
  json::array series;
  double recovered_at = -1;
  for (std::size_t w = 0; w < by_window.size(); ++w) {
    const double end = static_cast<double>(w + 1) * kWindow;
    const double p99 = Percentile(by_window[w], 0.99);
    series.push_back(json::object{{"t", Round(end, 2)},
                                  {"p99_ms", by_window[w].empty() ? json::value(nullptr) : json::value(Round(p99))},
                                  {"lookups", by_window[w].size()}});
    const double start = end - kWindow;
    if (recovered_at < 0 && start >= overload.to - 1e-9 && !by_window[w].empty() && p99 <= kRecovered * baseline_p99)
      recovered_at = end;
  }
  json::array phases;
  for (const Phase& p : phases_)
    phases.push_back(json::object{{"name", p.name}, {"from", Round(p.from, 2)}, {"to", Round(p.to, 2)}});
  m["capacity_per_s"] = Round(capacity_);
  m["offered_per_s"] = Round(kOverload * capacity_);
  m["low_offered_per_s"] = Round(kLow * capacity_);
  m["goodput_per_s"] = Round(goodput);
  m["goodput_ratio"] = capacity_ > 0 ? json::value(Round(goodput / capacity_, 2)) : json::value(nullptr);
  m["overload_attempts_per_s"] = Round(overload_attempts / (overload.to - overload.from));
  m["overload_retries"] = overload_retries;
  m["baseline_fast_p99_ms"] = Round(baseline_p99);
  m["recovered"] = recovered_at >= 0;
  m["recovery_s"] = Round(recovered_at >= 0 ? recovered_at - overload.to : recovery.to - overload.to, 2);
  m["phases"] = std::move(phases);
  m["fast_p99_windows"] = std::move(series);
}

}  // namespace cutoff::lab::internal
