#include "lab/lab_runner.hpp"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <thread>

#include "cutoff/sql/connect.hpp"
#include "lab/mode_run.hpp"
#include "lab/orders_run.hpp"
#include "lab/overload_run.hpp"
#include "lab/report_summary.hpp"

namespace cutoff::lab {
namespace {

namespace json = boost::json;
using namespace internal;

std::vector<ScenarioSpec> Specs(const LabOptions& o) {
  const Layers l(o.scale);
  // Valuations per second: 0.4 x pool size / gateway budget. Held for the gateway's budget
  // (cutoff) they keep under a third of the pool busy; held for the whole query (400 ms against
  // 100 ms) they need more connections than there are, even where the database has a core for
  // each statement. Amplification ramps up to half of that, since every failure is retried twice.
  const double base = o.rate > 0 ? o.rate : 0.4 * o.pool_size / std::chrono::duration<double>(l.gateway).count();
  const double fast = base;
  const std::string chain_query = "{ warehouse(id: 1) { name stockValuation } }";
  std::vector<ScenarioSpec> all = {
      {"chain",
       "Timeout chain: user " + std::to_string(l.user.count()) + " ms, gateway " + std::to_string(l.gateway.count()) +
           " ms, inventory " + std::to_string(l.inventory.count()) + " ms, valuation query " +
           std::to_string(l.query.count()) + " ms (5 s / 2 s / 10 s / 8 s scaled; stockValuation capped at " +
           std::to_string(l.valuation_cap.count()) + " ms), with cheap bin lookups alongside",
       chain_query, base, base, fast, 0, false},
      {"amplification",
       "Rising load on the slow valuation, each failure retried twice, and cheap bin lookups queueing behind it",
       chain_query, 0.15 * base, 0.5 * base, fast, 2, false},
      {"graphql",
       "One operation with concurrent resolvers: every warehouse's valuation and its first bins, cut at the deadline",
       "{ warehouses { id name stockValuation bins(first: 3) { id qty } } }", 0, 0, 0, 0, true},
      OverloadSpec(o),
      OrdersSpec(o),
  };
  std::vector<ScenarioSpec> chosen;
  for (const std::string& name : o.scenarios) {
    auto it = std::find_if(all.begin(), all.end(), [&](const ScenarioSpec& s) { return s.name == name; });
    if (it == all.end())
      throw std::invalid_argument("unknown scenario \"" + name + "\" (chain, amplification, graphql, overload, orders)");
    chosen.push_back(*it);
  }
  return chosen;
}

std::string Iso8601Now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

json::value RunLab(const LabOptions& options) {
  std::string db = options.db;
  if (db.empty()) db = "sqlite:" + (std::filesystem::temp_directory_path() / "cutoff-lab.db").string();
  const bool postgres = sql::parse_database_url(db).driver == sql::Driver::postgresql;
  std::vector<wh::Mode> modes;
  for (const std::string& m : options.modes) {
    auto mode = wh::parse_mode(m);
    if (!mode) throw std::invalid_argument("unknown mode \"" + m + "\" (none, timeouts, cutoff)");
    modes.push_back(*mode);
  }
  const std::vector<ScenarioSpec> specs = Specs(options);
  std::int64_t valuation_steps = 0;  // calibrated by the first run, then shared
  json::array scenarios;
  for (const ScenarioSpec& spec : specs) {
    json::object modes_out;
    for (wh::Mode mode : modes) {
      std::unique_ptr<ModeRun> run;
      if (spec.name == "overload")
        run = std::make_unique<OverloadRun>(options, spec, mode, db, postgres, &valuation_steps);
      else if (spec.name == "orders")
        run = std::make_unique<OrdersRun>(options, spec, mode, db, postgres, &valuation_steps);
      else
        run = std::make_unique<ModeRun>(options, spec, mode, db, postgres, &valuation_steps);
      modes_out[wh::to_string(mode)] = run->Run();
    }
    scenarios.push_back(json::object{{"name", spec.name}, {"title", spec.title}, {"modes", std::move(modes_out)}});
  }
  const Layers l(options.scale);
  json::object settings{{"scale", options.scale},
                        {"duration_s", options.duration_s},
                        {"pool_size", options.pool_size},
                        {"inventory_transport", options.inventory_transport},
                        {"user_ms", l.user.count()},
                        {"gateway_ms", l.gateway.count()},
                        {"inventory_ms", l.inventory.count()},
                        {"query_ms", l.query.count()},
                        {"valuation_steps", valuation_steps},
                        {"cores", std::thread::hardware_concurrency()}};
  return json::object{{"version", 1},
                      {"generated_at", Iso8601Now()},
                      {"database", postgres ? "postgresql" : "sqlite"},
                      {"settings", std::move(settings)},
                      {"scenarios", std::move(scenarios)}};
}

namespace {

// `text` broken into lines of at most `width` columns, each starting with `indent`.
std::string Wrap(const std::string& text, std::size_t width, const std::string& first, const std::string& indent) {
  std::string out, line = first;
  std::size_t at = 0;
  bool empty = true;
  while (at < text.size()) {
    const std::size_t space = std::min(text.find(' ', at), text.size());
    const std::string word = text.substr(at, space - at);
    at = space + 1;
    if (!empty && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = indent;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  return out + line + "\n";
}

// The overload scenarios' own figures, under the main table; empty when the run has none.
std::string OverloadTable(const json::value& results) {
  std::string rows;
  char line[320];
  for (const json::value& s : results.at("scenarios").as_array()) {
    for (const auto& [mode, v] : s.at("modes").as_object()) {
      const json::object& m = v.as_object();
      if (!m.contains("capacity_per_s")) continue;
      auto num = [&](const char* k) {
        return m.contains(k) && m.at(k).is_number() ? m.at(k).to_number<double>() : 0.0;
      };
      char recovery[32];
      const bool never = m.contains("recovered") && m.at("recovered").is_bool() && !m.at("recovered").as_bool();
      std::snprintf(recovery, sizeof recovery, never ? "never" : "%.1f", num("recovery_s"));
      std::snprintf(line, sizeof line, "%-13s %-8s %8.1f %8.1f %8.1f %8.1f %7.2f %7.0f %8s\n",
                    std::string(s.at("name").as_string()).c_str(), std::string(mode).c_str(), num("capacity_per_s"),
                    num("offered_per_s"), num("overload_attempts_per_s"), num("goodput_per_s"), num("goodput_ratio"),
                    num("overload_retries"), recovery);
      rows += line;
    }
  }
  if (rows.empty()) return rows;
  std::string out =
      "\nUnder overload: the capacity measured at low load, then about three times that offered by users\n"
      "who retry, then the excess taken away:\n";
  std::snprintf(line, sizeof line, "%-13s %-8s %8s %8s %8s %8s %7s %7s %8s\n", "", "", "capacity", "offered", "sent",
                "goodput", "goodput", "", "");
  out += line;
  std::snprintf(line, sizeof line, "%-13s %-8s %8s %8s %8s %8s %7s %7s %8s\n", "scenario", "mode", "req/s", "req/s",
                "req/s", "req/s", "/capac.", "retries", "recovery");
  out += line + rows;
  out +=
      "capacity: complete answers per second at low load. offered: new requests per second during the\n"
      "  overload; sent: with the retries. goodput: complete answers per second during the overload.\n"
      "recovery: seconds after the excess stopped until the cheap lookups' p99 was within twice its\n"
      "  level before the overload (never: not within the time watched).\n";
  return out;
}

// The orders scenarios' own figures, under the main table; empty when the run has none.
std::string OrdersTable(const json::value& results) {
  std::string rows;
  char line[320];
  for (const json::value& s : results.at("scenarios").as_array()) {
    for (const auto& [mode, v] : s.at("modes").as_object()) {
      const json::object& m = v.as_object();
      if (!m.contains("orphan_shipments")) continue;
      auto num = [&](const json::object& o, const char* k) {
        return o.contains(k) && o.at(k).is_number() ? o.at(k).to_number<double>() : 0.0;
      };
      static const json::object kNone;
      const json::object& told =
          m.contains("request_errors") && m.at("request_errors").is_object() ? m.at("request_errors").as_object() : kNone;
      const double gone = num(told, "client_gave_up") + num(told, "hung_up");
      const double unknown = num(told, "commit_ambiguous");
      std::snprintf(line, sizeof line, "%-13s %-8s %6.0f %9.0f %6.0f %7.0f %7.0f %6.0f %6.0f %7.0f %8.0f %7.0f %5.0f\n",
                    std::string(s.at("name").as_string()).c_str(), std::string(mode).c_str(), num(m, "orders"),
                    num(m, "ok"), num(m, "failed") - gone - unknown, unknown, gone, num(m, "left_unsettled"),
                    num(m, "unsettled"), num(m, "shipments"), num(m, "orphan_shipments"), num(m, "false_failures"),
                    num(m, "reserved_drift"));
      rows += line;
    }
  }
  if (rows.empty()) return rows;
  std::string out =
      "\nOrders: what each user was told, then what had happened once every saga had ended and those\n"
      "left unsettled were resumed:\n";
  std::snprintf(line, sizeof line, "%-13s %-8s %6s %9s %6s %7s %7s %6s %6s %7s %8s %7s %5s\n", "", "", "", "told",
                "told", "told", "gave up", "open", "open", "", "shipped", "failed,", "stock");
  out += line;
  std::snprintf(line, sizeof line, "%-13s %-8s %6s %9s %6s %7s %7s %6s %6s %7s %8s %7s %5s\n", "scenario", "mode",
                "orders", "completed", "failed", "unknown", "hung up", "at end", "after", "shipped", "no stock",
                "shipped", "drift");
  out += line + rows;
  out +=
      "told unknown: answered commit_ambiguous. open at end: sagas neither completed nor undone when\n"
      "  the load ended; open after: still so once the lab had resumed them. shipped no stock: shipments\n"
      "  of orders whose reservation was released. failed, shipped: users told their order failed\n"
      "  although it shipped. stock drift: items reserved less those the saga journal holds (0: agree).\n";
  return out;
}

}  // namespace

std::string FormatTable(const json::value& results) {
  // Two header lines: what each column is, then its unit. 98 columns wide.
  std::string out;
  char line[320];
  std::snprintf(line, sizeof line, "%-13s %-8s %8s %7s %6s %8s %8s %6s %7s %7s %8s\n", "", "", "complete", "partial",
                "failed", "lookups", "goodput", "p99", "queued", "zombie", "stop p99");
  out += line;
  std::snprintf(line, sizeof line, "%-13s %-8s %8s %7s %6s %8s %8s %6s %7s %7s %8s\n", "scenario", "mode", "answers",
                "answers", "reqs", "ok/sent", "req/s", "ms", "s", "%", "ms");
  out += line;
  std::string errors;
  for (const json::value& s : results.at("scenarios").as_array()) {
    for (const auto& [mode, v] : s.at("modes").as_object()) {
      const json::object& m = v.as_object();
      auto num = [&](const char* k) {
        return m.contains(k) && m.at(k).is_number() ? m.at(k).to_number<double>() : 0.0;
      };
      char lookups[32] = "-";
      if (num("fast_requests") > 0)
        std::snprintf(lookups, sizeof lookups, "%.0f/%.0f", num("fast_ok"), num("fast_requests"));
      const std::string name(s.at("name").as_string());
      std::snprintf(line, sizeof line, "%-13s %-8s %8.0f %7.0f %6.0f %8s %8.1f %6.0f %7.2f %7.1f %8.0f\n", name.c_str(),
                    std::string(mode).c_str(), num("ok"), num("partial"), num("failed"), lookups, num("goodput_rps"),
                    num("p99_ms"), num("pool_queued_s"), 100 * num("zombie_share"), num("overshoot_p99_ms"));
      out += line;
      // The codes, the most frequent first: of the failed requests (both kinds), and apart
      // from them the field errors inside partial answers.
      auto codes = [&](std::initializer_list<const char*> keys) {
        std::map<std::string, std::int64_t> sum;
        for (const char* key : keys)
          if (const json::value* e = m.if_contains(key); e && e->is_object())
            for (const auto& [code, n] : e->as_object())
              if (n.is_int64()) sum[std::string(code)] += n.as_int64();
        std::vector<std::pair<std::int64_t, std::string>> sorted;
        for (const auto& [code, n] : sum) sorted.emplace_back(n, code);
        std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        std::string text;
        for (const auto& [n, code] : sorted) text += (text.empty() ? "" : " ") + code + "=" + std::to_string(n);
        return text;
      };
      const std::string failed = codes({"request_errors", "fast_request_errors"});
      const std::string field = codes({"field_errors"});
      const std::string text = "failed: " + (failed.empty() ? std::string("none") : failed);
      std::snprintf(line, sizeof line, "%-13s %-8s ", name.c_str(), std::string(mode).c_str());
      const std::string indent(23, ' ');
      if (field.empty()) {
        errors += Wrap(text, 98, line, indent);
      } else if (std::strlen(line) + text.size() + field.size() + 16 <= 98) {
        errors += Wrap(text + "; field errors: " + field, 98, line, indent);
      } else {
        errors += Wrap(text, 98, line, indent) + Wrap("field errors: " + field, 98, indent, indent);
      }
    }
  }
  out +=
      "\ncomplete/partial/failed: the slow requests (valuations; graphql: operations), retries included;\n"
      "  partial: data with some fields cut; failed: no data, or the user gave up.\n"
      "lookups: cheap bin lookups answered in full, of those sent. goodput: complete answers per second.\n"
      "p99: latency of the slow requests, to the answer or to giving up. queued: how long some caller\n"
      "  waited for a database connection. zombie: share of the database's statement time spent after\n"
      "  the caller had its answer. stop p99: how long after the answer a still-running statement ended.\n\n"
      "Why requests failed, and the field errors inside partial answers (counted apart):\n";
  out += errors;
  out += OverloadTable(results);
  out += OrdersTable(results);
  const LabSummary summary = SummarizeLab(results);
  if (!summary.run.empty()) {
    out += "\nWhat this run shows:\n";
    for (const std::string& sentence : summary.run) out += Wrap(sentence, 98, "- ", "  ");
  }
  return out;
}

}  // namespace cutoff::lab
