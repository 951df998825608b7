#include "lab/report_model.hpp"

#include <algorithm>
#include <cmath>

namespace cutoff::lab::report {

namespace json = boost::json;

const json::value* Field(const json::value* v, std::string_view key) {
  if (!v || !v->is_object()) return nullptr;
  return v->get_object().if_contains(key);
}

std::optional<double> Number(const json::value* v) {
  if (!v) return std::nullopt;
  double d;
  switch (v->kind()) {
    case json::kind::int64: d = static_cast<double>(v->get_int64()); break;
    case json::kind::uint64: d = static_cast<double>(v->get_uint64()); break;
    case json::kind::double_: d = v->get_double(); break;
    default: return std::nullopt;
  }
  if (!std::isfinite(d)) return std::nullopt;
  return std::clamp(d, -kLimit, kLimit);
}

std::string_view String(const json::value* v) {
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

std::vector<const json::value*> ScenarioList(const json::value& results) {
  std::vector<const json::value*> list;
  const json::value* scenarios = Field(&results, "scenarios");
  if (!scenarios || !scenarios->is_array()) return list;
  for (const json::value& s : scenarios->get_array()) list.push_back(&s);
  return list;
}

Modes ModesOf(const json::value& scenario) {
  const json::value* modes_value = Field(&scenario, "modes");
  Modes modes{};
  for (std::size_t i = 0; i < kModes.size(); ++i) {
    const json::value* mode = Field(modes_value, kModes[i].key);
    modes[i] = mode && mode->is_object() ? mode : nullptr;
  }
  return modes;
}

std::optional<double> Fig(const json::value* mode, std::string_view key) { return Number(Field(mode, key)); }

bool HasFastRequests(const Modes& modes) {
  return std::any_of(modes.begin(), modes.end(), [](const json::value* m) {
    auto n = Fig(m, "fast_requests");
    return n && *n > 0;
  });
}

bool LeftWorkRunning(const json::value* mode) {
  const json::value* drained = Field(mode, "drained");
  return drained && drained->is_bool() && !drained->get_bool();
}

Kind KindOf(std::string_view name, const Modes& modes) {
  bool cut = false, overload = false;
  for (const json::value* m : modes) {
    cut = cut || Field(m, "cut_fields") || Field(m, "cut_fields_total");
    overload = overload || Field(m, "capacity_per_s") || Field(m, "goodput_ratio");
  }
  if (name == "overload" || (overload && !cut)) {
    return {"Valuation requests", "valuation requests",
            "each asks for one small warehouse's stockValuation, well within the budget at low load; sent by a few "
            "users one after the other to measure the capacity, then at half, three times and half the capacity "
            "by users who retry",
            false, true};
  }
  const bool orders = std::any_of(modes.begin(), modes.end(), [](const json::value* m) {
    return Field(m, "orphan_shipments") != nullptr;
  });
  if (name == "orders" || orders) {
    return {"Orders", "orders",
            "each places an order: a saga reserves the stock in the inventory, then books the shipment with the "
            "shipping service",
            false, false, true};
  }
  if (name == "chain" || name == "amplification") {
    return {"Valuation requests", "valuation requests",
            "each asks for warehouse 1's name and stockValuation; the valuation takes longer than the budget in "
            "every mode",
            false};
  }
  if (name == "graphql" || cut) {
    return {"Operations", "operations",
            "each is one GraphQL operation asking for every warehouse's name, stockValuation and first bins, "
            "resolved concurrently",
            true};
  }
  return {"Requests", "requests", "the scenario's requests", false};
}

std::vector<std::pair<std::string, double>> Codes(const json::value* mode, std::string_view key) {
  std::vector<std::pair<std::string, double>> codes;
  const json::value* errors = Field(mode, key);
  if (!errors || !errors->is_object()) return codes;
  for (const auto& [code, count] : errors->get_object()) {
    if (auto n = Number(&count)) codes.emplace_back(std::string(code), *n);
  }
  std::stable_sort(codes.begin(), codes.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return codes;
}

std::vector<Sample> Timeline(const json::value* mode, std::string_view key) { return Points(mode, "timeline", key); }

std::vector<Sample> Points(const json::value* mode, std::string_view array, std::string_view key) {
  std::vector<Sample> out;
  const json::value* timeline = Field(mode, array);
  if (!timeline || !timeline->is_array()) return out;
  for (const json::value& sample : timeline->get_array()) {
    const auto t = Number(Field(&sample, "t"));
    const auto y = Number(Field(&sample, key));
    if (t && y) out.push_back({*t, *y});
  }
  std::stable_sort(out.begin(), out.end(), [](const Sample& a, const Sample& b) { return a.t < b.t; });
  return out;
}

std::vector<Phase> Phases(const Modes& modes) {
  std::vector<Phase> out;
  for (const json::value* m : modes) {
    const json::value* phases = Field(m, "phases");
    if (!phases || !phases->is_array()) continue;
    for (const json::value& p : phases->get_array()) {
      const std::string_view name = String(Field(&p, "name"));
      const auto from = Number(Field(&p, "from")), to = Number(Field(&p, "to"));
      if (!name.empty() && from && to && *from <= *to) out.push_back({std::string(name), *from, *to});
    }
    if (!out.empty()) break;
  }
  std::stable_sort(out.begin(), out.end(), [](const Phase& a, const Phase& b) { return a.from < b.from; });
  return out;
}

}  // namespace cutoff::lab::report
