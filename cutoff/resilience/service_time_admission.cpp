#include "cutoff/resilience/service_time_admission.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/observe/metrics.hpp"

namespace cutoff::resilience {

namespace {

constexpr std::size_t kMaxSamplesCap = 4096;

struct Sample {
  TimePoint at;  // when the run ended: its age is counted from there
  Duration took;
  bool stopped = false;  // censored: the run was stopped after `took`
};

// `d * factor`, saturating.
Duration Scaled(Duration d, double factor) noexcept {
  const double ns = static_cast<double>(d.count()) * factor;
  if (!(ns < static_cast<double>(std::numeric_limits<Duration::rep>::max()))) return Duration::max();
  return Duration(static_cast<Duration::rep>(ns));
}

std::string Milliseconds(Duration d) {
  const double ms = std::chrono::duration<double, std::milli>(d).count();
  char buf[32];
  if (ms >= 100) std::snprintf(buf, sizeof buf, "%.0f", ms);
  else if (ms >= 1) std::snprintf(buf, sizeof buf, "%.1f", ms);
  else std::snprintf(buf, sizeof buf, "%.2f", ms);
  return buf;
}

// "p10", "p99.9"; with a factor other than 1, "1.5 x p90".
std::string EstimateName(double quantile, double factor) {
  char buf[48];
  if (factor == 1.0) std::snprintf(buf, sizeof buf, "p%g", quantile * 100);
  else std::snprintf(buf, sizeof buf, "%g x p%g", factor, quantile * 100);
  return buf;
}

}  // namespace

// A key's recent samples twice: in the order they arrived (a ring, to expire and evict the
// oldest) and sorted by service time (so that the quantile is one index away). With at most
// max_samples of them, keeping the sorted copy costs a binary search and a short memmove per
// sample, instead of a selection over all of them whenever one arrives.
class ServiceTimeAdmission::Key {
 public:
  Key(std::string n, std::size_t capacity) : name(std::move(n)), ring(capacity) { sorted.reserve(capacity); }

  const std::string name;
  std::mutex mu;
  std::vector<Sample> ring;  // ring[(head + i) % capacity], i < sorted.size(): oldest first
  std::size_t head = 0;
  std::vector<Duration> sorted;  // the same samples' service times, ascending
  std::size_t completed = 0;     // of the samples held, runs that completed
  bool probed = false;
  TimePoint last_probe{};
  observe::Counter* refused = nullptr;  // null without metrics
  observe::Counter* probes = nullptr;
  observe::Counter* dry_run = nullptr;
  observe::Gauge* estimate = nullptr;

  std::size_t held() const noexcept { return sorted.size(); }

  // The oldest sample leaves.
  void PopOldest() noexcept {
    const Duration took = ring[head].took;
    if (!ring[head].stopped) --completed;
    sorted.erase(std::lower_bound(sorted.begin(), sorted.end(), took));
    head = (head + 1) % ring.size();
  }
  void Push(const Sample& s) noexcept {
    if (held() == ring.size()) PopOldest();
    ring[(head + held()) % ring.size()] = s;
    if (!s.stopped) ++completed;
    sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), s.took), s.took);  // capacity reserved
  }
  // Nearest rank: the smallest sample with at least a share `q` of them at or below it. Needs
  // held() > 0.
  Duration Quantile(double q) const noexcept {
    const double rank = std::ceil(q * static_cast<double>(held()));
    const std::size_t index = rank < 1 ? 0 : std::min(static_cast<std::size_t>(rank), held()) - 1;
    return sorted[index];
  }
};

ServiceTimeAdmission::ServiceTimeAdmission(ServiceTimeAdmissionOptions options)
    : options_(options), clock_(options_.clock ? *options_.clock : Clock::steady()) {
  if (!(options_.quantile >= 0)) options_.quantile = 0;  // also catches NaN
  if (options_.quantile > 1) options_.quantile = 1;
  if (!(options_.factor > 0) || std::isinf(options_.factor)) options_.factor = 1;
  options_.max_samples = std::clamp<std::size_t>(options_.max_samples, 1, kMaxSamplesCap);
  options_.min_samples = std::clamp<std::size_t>(options_.min_samples, 1, options_.max_samples);
  if (options_.max_age <= Duration::zero()) options_.max_age = std::chrono::seconds(10);
  if (options_.probe_interval < Duration::zero()) options_.probe_interval = Duration::zero();
}

ServiceTimeAdmission::~ServiceTimeAdmission() = default;

ServiceTimeAdmission::Key* ServiceTimeAdmission::key(std::string_view name) {
  std::lock_guard lock(keys_mu_);
  if (auto it = keys_.find(name); it != keys_.end()) return it->second.get();
  if (keys_.size() >= options_.max_keys) {
    untracked_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  auto k = std::make_unique<Key>(std::string(name), options_.max_samples);
  if (ResilienceMetrics* m = options_.metrics) {
    k->refused = &m->doomed_refused.with({name});
    k->probes = &m->doomed_admitted.with({name, "probe"});
    k->dry_run = &m->doomed_admitted.with({name, "dry_run"});
    k->estimate = &m->service_time_estimate.with({name});
  }
  Key* raw = k.get();
  keys_.emplace(std::string(name), std::move(k));
  return raw;
}

ServiceTimeAdmission::Key* ServiceTimeAdmission::Find(std::string_view name) const {
  std::lock_guard lock(keys_mu_);
  const auto it = keys_.find(name);
  return it == keys_.end() ? nullptr : it->second.get();
}

namespace {

// Sets the key's gauge to its estimate (0 while it has none).
void ShowEstimate(ServiceTimeAdmission::Key& k, const ServiceTimeAdmissionOptions& o) noexcept {
  if (!k.estimate) return;
  k.estimate->set(k.held() >= o.min_samples ? std::chrono::duration<double>(k.Quantile(o.quantile)).count() : 0.0);
}

// Forgets the samples of `k` that are `max_age` old at `now`. Samples arrive in time order
// (give or take the moment between reading the clock and taking the lock), so the expired
// ones are the oldest. Called with k.mu held.
void Expire(ServiceTimeAdmission::Key& k, TimePoint now, const ServiceTimeAdmissionOptions& o) noexcept {
  bool changed = false;
  while (k.held() > 0 && now - k.ring[k.head].at >= o.max_age) {
    k.PopOldest();
    changed = true;
  }
  if (changed) ShowEstimate(k, o);
}

}  // namespace

ServiceTimeAdmission::Ticket ServiceTimeAdmission::admit(const Context& ctx, Key* key) {
  if (ctx.stop_requested()) throw Error::stopped(ctx.stop_reason(), ctx.request_id());
  if (!key) return Ticket();
  // Unbound: one branch, no lock.
  if (!ctx.bound() || ctx.deadline().is_never()) return Ticket(this, key, clock_.now(), false);
  return Admit(ctx.remaining(), key, ctx.request_id());
}

ServiceTimeAdmission::Ticket ServiceTimeAdmission::admit(Duration remaining, Key* key, std::string_view request_id) {
  if (!key) return Ticket();
  if (remaining == Duration::max()) return Ticket(this, key, clock_.now(), false);
  return Admit(std::max(remaining, Duration::zero()), key, request_id);
}

ServiceTimeAdmission::Ticket ServiceTimeAdmission::Admit(Duration remaining, Key* key, std::string_view request_id) {
  const TimePoint now = clock_.now();
  Duration needs{};
  std::size_t held = 0;
  {
    std::lock_guard lock(key->mu);
    Expire(*key, now, options_);
    if (key->held() < options_.min_samples) return Ticket(this, key, now, false);
    needs = Scaled(key->Quantile(options_.quantile), options_.factor);
    if (remaining >= needs) return Ticket(this, key, now, false);
    // Doomed, by the recent runs.
    if (options_.dry_run) {
      dry_run_.fetch_add(1, std::memory_order_relaxed);
      if (key->dry_run) key->dry_run->inc();
      return Ticket(this, key, now, false);
    }
    if (options_.probe_interval > Duration::zero() &&
        (!key->probed || now - key->last_probe >= options_.probe_interval)) {
      key->probed = true;
      key->last_probe = now;
      probes_.fetch_add(1, std::memory_order_relaxed);
      if (key->probes) key->probes->inc();
      return Ticket(this, key, now, true);
    }
    held = key->held();
    if (key->refused) key->refused->inc();
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  throw Error(ErrorCode::deadline_exceeded,
              "refused before starting: " + key->name + " needs ~" + Milliseconds(needs) + " ms (" +
                  EstimateName(options_.quantile, options_.factor) + " of the last " + std::to_string(held) +
                  " runs), " + Milliseconds(remaining) + " ms left",
              std::string(request_id));
}

void ServiceTimeAdmission::Finish(Key* key, TimePoint started, bool stopped) noexcept {
  const TimePoint now = clock_.now();
  Record(*key, now, std::max(now - started, Duration::zero()), stopped);
}

void ServiceTimeAdmission::record(Key* key, Duration service_time) noexcept {
  if (key) Record(*key, clock_.now(), std::max(service_time, Duration::zero()), false);
}

void ServiceTimeAdmission::record_stopped(Key* key, Duration ran_for) noexcept {
  if (key) Record(*key, clock_.now(), std::max(ran_for, Duration::zero()), true);
}

void ServiceTimeAdmission::Record(Key& key, TimePoint now, Duration took, bool stopped) noexcept {
  std::lock_guard lock(key.mu);
  Expire(key, now, options_);
  if (stopped) {
    // Censored: the work needed at least `took`. Evidence only while too few runs completed
    // to estimate from, and only at or above the estimate (it can only raise it).
    if (key.completed >= options_.min_samples || (key.held() > 0 && took < key.Quantile(options_.quantile))) {
      censored_dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    censored_kept_.fetch_add(1, std::memory_order_relaxed);
  } else {
    samples_.fetch_add(1, std::memory_order_relaxed);
  }
  key.Push(Sample{now, took, stopped});
  ShowEstimate(key, options_);
}

std::optional<Duration> ServiceTimeAdmission::estimate(std::string_view name) const {
  Key* key = Find(name);
  if (!key) return std::nullopt;
  const TimePoint now = clock_.now();
  std::lock_guard lock(key->mu);
  Expire(*key, now, options_);
  if (key->held() < options_.min_samples) return std::nullopt;
  return key->Quantile(options_.quantile);
}

std::size_t ServiceTimeAdmission::recent_samples(std::string_view name) const {
  Key* key = Find(name);
  if (!key) return 0;
  const TimePoint now = clock_.now();
  std::lock_guard lock(key->mu);
  Expire(*key, now, options_);
  return key->held();
}

ServiceTimeAdmissionStats ServiceTimeAdmission::stats() const noexcept {
  ServiceTimeAdmissionStats s;
  s.refused = refused_.load(std::memory_order_relaxed);
  s.probes = probes_.load(std::memory_order_relaxed);
  s.dry_run = dry_run_.load(std::memory_order_relaxed);
  s.samples = samples_.load(std::memory_order_relaxed);
  s.censored_kept = censored_kept_.load(std::memory_order_relaxed);
  s.censored_dropped = censored_dropped_.load(std::memory_order_relaxed);
  s.untracked = untracked_.load(std::memory_order_relaxed);
  {
    std::lock_guard lock(keys_mu_);
    s.keys = keys_.size();
  }
  return s;
}

}  // namespace cutoff::resilience
