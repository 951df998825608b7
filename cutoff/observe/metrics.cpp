#include "cutoff/observe/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <variant>

namespace cutoff::observe {
namespace {

bool ValidMetricName(std::string_view n) {
  if (n.empty()) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool ValidLabelName(std::string_view n) {
  if (n.empty() || n.substr(0, 2) == "__" || n == "le") return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

void AppendEscaped(std::string& out, std::string_view s, bool quotes) {
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (quotes && c == '"') out += "\\\"";
    else out.push_back(c);
  }
}

void AppendLabels(std::string& out, const std::vector<std::string>& names, const std::vector<std::string>& values,
                  std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return;
  out.push_back('{');
  bool first = true;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!first) out.push_back(',');
    first = false;
    out += names[i];
    out += "=\"";
    AppendEscaped(out, values[i], true);
    out.push_back('"');
  }
  if (!extra_name.empty()) {
    if (!first) out.push_back(',');
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out.push_back('"');
  }
  out.push_back('}');
}

}  // namespace

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::vector<double> exponential_buckets(double start, double factor, int count) {
  std::vector<double> out;
  double b = start;
  for (int i = 0; i < count; ++i, b *= factor) out.push_back(b);
  return out;
}

Histogram::Histogram(const std::vector<double>& bounds)
    : bounds_(std::make_shared<const std::vector<double>>(bounds)),
      counts_(new std::atomic<std::uint64_t>[bounds.size() + 1]) {
  for (std::size_t i = 0; i <= bounds.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::observe(double v) noexcept {
  const auto& b = *bounds_;
  const std::size_t i = static_cast<std::size_t>(std::lower_bound(b.begin(), b.end(), v) - b.begin());
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= bounds_->size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(running);
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  s.count = running;  // consistent with the buckets even while observations race in
  return s;
}

template <typename Metric>
Metric& Family<Metric>::with(std::initializer_list<std::string_view> values) {
  std::vector<std::string> v;
  v.reserve(values.size());
  for (auto s : values) v.emplace_back(s);
  return Get(std::move(v));
}

template <typename Metric>
Metric& Family<Metric>::with(const std::vector<std::string>& values) {
  return Get(values);
}

template <typename Metric>
Metric& Family<Metric>::Get(std::vector<std::string> values) {
  if (values.size() != labels_.size())
    throw std::invalid_argument("metric " + name_ + " takes " + std::to_string(labels_.size()) +
                                " label values, got " + std::to_string(values.size()));
  std::lock_guard lock(mu_);
  auto& slot = series_[std::move(values)];
  if (!slot) {
    if constexpr (std::is_same_v<Metric, Histogram>)
      slot = std::make_unique<Histogram>(bounds_);
    else
      slot = std::make_unique<Metric>();
  }
  return *slot;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

struct Registry::Entry {
  std::string name, type, help;
  std::vector<std::string> labels;
  std::vector<double> bounds;
  std::variant<std::unique_ptr<Family<Counter>>, std::unique_ptr<Family<Gauge>>, std::unique_ptr<Family<Histogram>>>
      family;
  std::vector<std::pair<std::vector<std::string>, std::function<double()>>> callbacks;
};

Registry::Registry() = default;
Registry::~Registry() = default;

Registry::Entry& Registry::Register(const std::string& name, const std::string& type, const std::string& help,
                                    const std::vector<std::string>& labels, const std::vector<double>& bounds) {
  if (!ValidMetricName(name)) throw std::invalid_argument("invalid metric name '" + name + "'");
  for (const auto& l : labels)
    if (!ValidLabelName(l)) throw std::invalid_argument("invalid label name '" + l + "' for metric " + name);
  for (std::size_t i = 1; i < bounds.size(); ++i)
    if (!(bounds[i] > bounds[i - 1])) throw std::invalid_argument("histogram " + name + ": bounds must increase");
  for (auto& e : entries_) {
    if (e->name != name) continue;
    if (e->type != type || e->help != help || e->labels != labels || e->bounds != bounds)
      throw std::invalid_argument("metric " + name + " is already registered differently");
    return *e;
  }
  auto e = std::make_unique<Entry>();
  e->name = name;
  e->type = type;
  e->help = help;
  e->labels = labels;
  e->bounds = bounds;
  entries_.push_back(std::move(e));
  return *entries_.back();
}

Family<Counter>& Registry::counter(std::string name, std::string help, std::vector<std::string> labels) {
  std::lock_guard lock(mu_);
  Entry& e = Register(name, "counter", help, labels, {});
  auto* f = std::get_if<std::unique_ptr<Family<Counter>>>(&e.family);
  if (!f || !*f) {
    e.family = std::unique_ptr<Family<Counter>>(new Family<Counter>(name, help, labels));
    f = std::get_if<std::unique_ptr<Family<Counter>>>(&e.family);
  }
  return **f;
}

Family<Gauge>& Registry::gauge(std::string name, std::string help, std::vector<std::string> labels) {
  std::lock_guard lock(mu_);
  Entry& e = Register(name, "gauge", help, labels, {});
  auto* f = std::get_if<std::unique_ptr<Family<Gauge>>>(&e.family);
  if (!f || !*f) {
    e.family = std::unique_ptr<Family<Gauge>>(new Family<Gauge>(name, help, labels));
    f = std::get_if<std::unique_ptr<Family<Gauge>>>(&e.family);
  }
  return **f;
}

Family<Histogram>& Registry::histogram(std::string name, std::string help, std::vector<std::string> labels,
                                       std::vector<double> bounds) {
  std::lock_guard lock(mu_);
  Entry& e = Register(name, "histogram", help, labels, bounds);
  auto* f = std::get_if<std::unique_ptr<Family<Histogram>>>(&e.family);
  if (!f || !*f) {
    e.family = std::unique_ptr<Family<Histogram>>(new Family<Histogram>(name, help, labels, bounds));
    f = std::get_if<std::unique_ptr<Family<Histogram>>>(&e.family);
  }
  return **f;
}

void Registry::AddCallback(const std::string& type, std::string name, std::string help,
                           std::vector<std::string> labels, std::vector<std::string> values,
                           std::function<double()> read) {
  if (values.size() != labels.size())
    throw std::invalid_argument("metric " + name + " takes " + std::to_string(labels.size()) + " label values, got " +
                                std::to_string(values.size()));
  std::lock_guard lock(mu_);
  Entry& e = Register(name, type, help, labels, {});
  e.callbacks.emplace_back(std::move(values), std::move(read));
}

void Registry::gauge_callback(std::string name, std::string help, std::vector<std::string> labels,
                              std::vector<std::string> values, std::function<double()> read) {
  AddCallback("gauge", std::move(name), std::move(help), std::move(labels), std::move(values), std::move(read));
}

void Registry::counter_callback(std::string name, std::string help, std::vector<std::string> labels,
                                std::vector<std::string> values, std::function<double()> read) {
  AddCallback("counter", std::move(name), std::move(help), std::move(labels), std::move(values), std::move(read));
}

bool Registry::contains(std::string_view name) const {
  std::lock_guard lock(mu_);
  for (const auto& e : entries_)
    if (e->name == name) return true;
  return false;
}

std::string Registry::expose() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& e : entries_) {
    out += "# HELP " + e->name + " ";
    AppendEscaped(out, e->help, false);
    out += "\n# TYPE " + e->name + " " + e->type + "\n";
    for (const auto& [values, read] : e->callbacks) {
      out += e->name;
      AppendLabels(out, e->labels, values);
      out += " " + format_value(read()) + "\n";
    }
    std::visit(
        [&](const auto& family) {
          using F = std::decay_t<decltype(*family)>;
          if (!family) return;  // a callback-only family
          std::lock_guard series_lock(family->mu_);
          for (const auto& [values, metric] : family->series_) {
            if constexpr (std::is_same_v<F, Family<Histogram>>) {
              const Histogram::Snapshot s = metric->snapshot();
              for (std::size_t i = 0; i < s.cumulative.size(); ++i) {
                out += e->name + "_bucket";
                const std::string le = i < e->bounds.size() ? format_value(e->bounds[i]) : "+Inf";
                AppendLabels(out, e->labels, values, "le", le);
                out += " " + std::to_string(s.cumulative[i]) + "\n";
              }
              out += e->name + "_sum";
              AppendLabels(out, e->labels, values);
              out += " " + format_value(s.sum) + "\n";
              out += e->name + "_count";
              AppendLabels(out, e->labels, values);
              out += " " + std::to_string(s.count) + "\n";
            } else {
              out += e->name;
              AppendLabels(out, e->labels, values);
              out += " " + format_value(metric->value()) + "\n";
            }
          }
        },
        e->family);
  }
  return out;
}

}  // namespace cutoff::observe
