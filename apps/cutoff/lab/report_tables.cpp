#include "lab/report_tables.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <set>
#include <vector>

#include "lab/report_text.hpp"

namespace cutoff::lab::report {
namespace {

namespace json = boost::json;

// ---- the comparison table -------------------------------------------------------------

enum class Better { neither, higher, lower };

struct Figure {
  std::string_view key;
  std::string_view label;
  std::string_view unit;
  int decimals;  // -1: a count
  Better better;
  std::string_view definition;
  double scale = 1;  // shown times this (a share as a percentage)
};

using Values = std::array<std::optional<double>, 3>;

// One table row, its definition under its name; the best value is marked when the values differ.
void FigureRow(std::string& out, std::string_view key, std::string_view label, std::string_view unit,
               std::string_view definition, bool sub, int decimals, Better better, const Values& values) {
  bool marked = false;  // whether a best value is marked
  double best = 0;
  if (better != Better::neither) {
    int present = 0;
    for (const auto& v : values) {
      if (!v) continue;
      if (present++ == 0 || (better == Better::higher ? *v > best : *v < best)) best = *v;
    }
    marked = present >= 2 && std::any_of(values.begin(), values.end(), [&](const auto& v) { return v && *v != best; });
  }
  out += "<tr data-figure=\"";
  AppendHtml(out, key);
  out += sub ? "\" class=\"sub\"><th scope=\"row\">" : "\"><th scope=\"row\">";
  AppendHtml(out, label);
  if (!unit.empty()) {
    out += " <span class=\"unit\">";
    AppendHtml(out, unit);
    out += "</span>";
  }
  if (!definition.empty()) {
    out += "<span class=\"def\">";
    AppendHtml(out, definition);
    out += "</span>";
  }
  out += "</th>";
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += "<td data-mode=\"";
    out += kModes[i].key;
    out += "\"";
    if (marked && values[i] && *values[i] == best) out += " class=\"best\"";
    out += ">";
    out += values[i] ? Display(*values[i], decimals < 0 ? CountDecimals(*values[i]) : decimals) : std::string(kMissing);
    out += "</td>";
  }
  out += "</tr>\n";
}

// The rows of a figures table, written group by group.
class TableRows {
 public:
  TableRows(std::string& out, const Modes& modes) : out_(out), modes_(modes) {}

  Values values(std::string_view key, double scale = 1) const {
    Values v;
    for (std::size_t i = 0; i < modes_.size(); ++i) {
      if (auto n = Fig(modes_[i], key)) v[i] = std::clamp(*n * scale, -kLimit, kLimit);
    }
    return v;
  }
  bool has(std::string_view key) const {
    const Values v = values(key);
    return std::any_of(v.begin(), v.end(), [](const auto& x) { return x.has_value(); });
  }
  bool has_object(std::string_view key) const {
    return std::any_of(modes_.begin(), modes_.end(), [&](const json::value* m) {
      const json::value* o = Field(m, key);
      return o && o->is_object();
    });
  }

  // A group of rows under a heading with its definition; the group is written with its first row.
  void group(std::string_view id, std::string_view title, std::string definition) {
    pending_ =
        "<tbody data-group=\"" + std::string(id) + "\"><tr class=\"group\"><th scope=\"rowgroup\" colspan=\"4\">";
    AppendHtml(pending_, title);
    if (!definition.empty()) {
      pending_ += "<span class=\"def\">";
      AppendHtml(pending_, definition);
      pending_ += "</span>";
    }
    pending_ += "</th></tr>\n";
  }

  // A figure no mode recorded (one a scenario does not have) gets no row.
  void row(const Figure& f, std::string_view definition = {}) {
    const Values v = values(f.key, f.scale);
    if (std::none_of(v.begin(), v.end(), [](const auto& x) { return x.has_value(); })) return;
    begin_row();
    FigureRow(out_, f.key, f.label, f.unit, definition.empty() ? f.definition : definition, false, f.decimals, f.better,
              v);
  }

  // A row per code any mode reported in the errors object `key` (sorted by name); a mode with
  // the object and without the code has 0 of it.
  void codes(std::string_view key) {
    std::set<std::string> codes;
    for (const json::value* m : modes_) {
      for (const auto& [code, n] : Codes(m, key)) codes.insert(code);
    }
    for (const std::string& code : codes) {
      Values counts;
      for (std::size_t i = 0; i < modes_.size(); ++i) {
        const json::value* errors = Field(modes_[i], key);
        if (!errors || !errors->is_object()) continue;
        const json::value* count = errors->get_object().if_contains(code);
        counts[i] = count ? Number(count) : std::optional<double>(0.0);
      }
      begin_row();
      FigureRow(out_, std::string(key) + "." + code, code, "", "", true, -1, Better::neither, counts);
    }
  }

  // A row of the sum of an errors object's counts.
  void total(std::string_view key, std::string_view label, std::string_view definition) {
    Values totals;
    for (std::size_t i = 0; i < modes_.size(); ++i) {
      const json::value* errors = Field(modes_[i], key);
      if (!errors || !errors->is_object()) continue;
      totals[i] = 0.0;
      for (const auto& [code, n] : Codes(modes_[i], key)) totals[i] = std::clamp(*totals[i] + n, -kLimit, kLimit);
    }
    if (std::none_of(totals.begin(), totals.end(), [](const auto& x) { return x.has_value(); })) return;
    begin_row();
    FigureRow(out_, key, label, "", definition, false, -1, Better::neither, totals);
  }

  void end() {
    if (open_) out_ += "</tbody>\n";
    open_ = false;
  }

 private:
  void begin_row() {
    if (pending_.empty()) return;
    if (open_) out_ += "</tbody>\n";
    out_ += pending_;
    pending_.clear();
    open_ = true;
  }

  std::string& out_;
  const Modes& modes_;
  std::string pending_;
  bool open_ = false;
};

// A table's column header for `mode`: its swatch and name, and what the mode is when asked.
void ModeHeader(std::string& out, const Mode& mode, bool with_meaning) {
  out += "<th scope=\"col\" data-mode=\"";
  out += mode.key;
  out += "\"><span class=\"mode-name\">";
  AppendSwatch(out, mode);
  out += mode.key;
  out += "</span>";
  if (with_meaning) {
    out += "<small>";
    out += mode.meaning;
    out += "</small>";
  }
  out += "</th>";
}

// ---- cut GraphQL fields ---------------------------------------------------------------

// "warehouses.10.x" after "warehouses.9.x": numbers compare as numbers.
bool NaturalLess(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && a[ei] >= '0' && a[ei] <= '9') ++ei;
      while (ej < b.size() && b[ej] >= '0' && b[ej] <= '9') ++ej;
      const std::string_view na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      const std::string_view ta = na.substr(std::min(na.find_first_not_of('0'), na.size()));
      const std::string_view tb = nb.substr(std::min(nb.find_first_not_of('0'), nb.size()));
      if (ta.size() != tb.size()) return ta.size() < tb.size();
      if (ta != tb) return ta < tb;
      i = ei, j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

void FiguresTable(std::string& out, std::string_view scenario, const Kind& kind, const Modes& modes,
                  std::optional<double> user_ms) {
  out += "<div class=\"table-box\"><table class=\"figures\" data-scenario=\"";
  AppendHtml(out, scenario);
  out += "\">\n<thead><tr><th scope=\"col\">figure</th>";
  for (const Mode& mode : kModes) ModeHeader(out, mode, /*with_meaning=*/true);
  out += "</tr></thead>\n";

  TableRows t(out, modes);
  // Orders have hurried users, who wait a quarter of the patience, and users who hang up.
  std::string patience = user_ms ? " after " + Display(*user_ms, 0) + " ms" : std::string();
  if (kind.orders)
    patience = (user_ms ? " (after " + Display(*user_ms, 0) + " ms, or a quarter of that in a hurry)" : std::string()) +
               " or hung up";
  t.group("slow", kind.noun,
          Capitalized(std::string(kind.what)) + ". Each is counted once: a retry is a request of its own.");
  t.row({"requests", "Sent", "", -1, Better::neither, "retries included"});
  t.row({"ok", "Answered in full", "", -1, Better::higher, "all the data asked for, and no error"});
  t.row({"partial", "Answered partially", "", -1, Better::neither,
         "data with field errors: what fit in the budget, the rest cut (see field errors)"});
  t.row({"failed", "Failed", "", -1, Better::lower, ""},
        "no data: the request failed, or the user gave up" + patience + "; by the code that failed it:");
  t.codes("request_errors");
  if (!t.has_object("request_errors") && t.has_object("errors")) {  // a document from before request_errors
    t.total("errors", "Errors", "every error code of every response, field and request errors together");
    t.codes("errors");
  }
  t.row({"p50_ms", "Latency p50", "ms", 1, Better::lower,
         "from sending until the answer, or until the user gave up, whatever the outcome"});
  t.row({"p99_ms", "Latency p99", "ms", 1, Better::lower, ""});
  t.row({"retries", "Retries", "", -1, Better::neither, "failed requests sent again after a short pause (in Sent)"});

  if (HasFastRequests(modes)) {
    t.group("fast", "Cheap lookups",
            "One bin's stock, sent at the same rate alongside: each needs a database connection for a moment.");
    t.row({"fast_requests", "Sent", "", -1, Better::neither, ""});
    t.row({"fast_ok", "Answered in full", "", -1, Better::higher, ""});
    const Values partial = t.values("fast_partial");
    if (std::any_of(partial.begin(), partial.end(), [](const auto& v) { return v && *v > 0; })) {
      t.row({"fast_partial", "Answered partially", "", -1, Better::neither, ""});
    }
    t.row({"fast_failed", "Failed", "", -1, Better::lower, ""}, "no data; by the code that failed it:");
    t.codes("fast_request_errors");
    t.row({"fast_p99_ms", "Latency p99", "ms", 1, Better::lower, ""});
  }

  if (kind.overload) {
    t.group("overload", "Under overload",
            "The capacity measured at low load, three times that offered by users who retry, then the excess taken "
            "away.");
    t.row({"capacity_per_s", "Capacity", "req/s", 1, Better::neither,
           "complete answers per second with half as many users as connections, each sending its next request when "
           "the last is answered"});
    t.row({"offered_per_s", "Offered", "req/s", 1, Better::neither,
           "new requests per second during the overload, about three times the capacity (retries not included)"});
    t.row({"overload_attempts_per_s", "Sent", "req/s", 1, Better::neither,
           "requests per second during the overload, retries included"});
    t.row({"overload_retries", "Retries", "", -1, Better::neither, "of those, retries of a request that failed"});
    t.row({"goodput_per_s", "Goodput", "req/s", 1, Better::higher,
           "complete answers per second during the overload, each within the user's patience"});
    t.row({"goodput_ratio", "Goodput / capacity", "", 2, Better::higher, "how much of its capacity stayed useful"});
    t.row({"baseline_fast_p99_ms", "Lookups' p99 before", "ms", 1, Better::neither,
           "the cheap lookups' p99 at half the capacity, before the overload"});
    t.row({"recovery_s", "Recovery", "s", 1, Better::lower,
           "after the excess stopped, until the cheap lookups' p99 was within twice that again; the length of the "
           "watch when it never was"});
  }

  if (kind.orders) {
    t.group("orders", "What the orders did",
            "Once every saga had ended, the lab resumed each one left ambiguous or half-undone (as cutoff saga "
            "resume does), then compared the stock, the shipments and the saga journal with what each user was "
            "told.");
    t.row({"orders", "Orders placed", "", -1, Better::neither, ""});
    t.row({"told_ambiguous", "Told the outcome is unknown", "", -1, Better::neither,
           "answered commit_ambiguous: the order may have happened, so it is not placed again blindly"});
    t.row({"left_unsettled", "Sagas left unsettled", "", -1, Better::neither,
           "neither completed nor undone when the load ended; every saga by its state then:"});
    t.codes("sagas_left");
    t.row({"resumed", "Resumed", "", -1, Better::neither, "sagas the lab resumed after the load"});
    t.row({"resumed_final", "Settled by resuming", "", -1, Better::neither, "completed or undone after it"});
    t.row({"unsettled", "Still unsettled", "", -1, Better::lower, "after resuming"});
    t.row({"completed_orders", "Completed", "", -1, Better::neither, "stock reserved and the shipment booked"});
    t.row({"compensated_orders", "Undone", "", -1, Better::neither, "the reservation released, nothing to ship"});
    t.row({"shipments", "Shipments booked", "", -1, Better::neither, "by the shipping service"});
    t.row({"orphan_shipments", "Shipped, stock released", "", -1, Better::lower,
           "shipments booked for an order whose saga undid its reservation"});
    t.row({"false_failures", "Told it failed, yet it shipped", "", -1, Better::lower,
           "users answered with an error other than commit_ambiguous whose order was shipped"});
    t.row({"false_successes", "Told it completed, yet it did not", "", -1, Better::lower, ""});
    t.row({"unshipped_orders", "Completed, never shipped", "", -1, Better::lower, ""});
    t.row({"reserved_drift", "Stock against the journal", "items", -1, Better::neither,
           "items reserved on the order bins less those the journal says its sagas hold: 0 when they agree"});
  }

  t.group("goodput", "Useful answers", "");
  t.row({"goodput_rps", "Goodput", "req/s", 1, Better::higher,
         "complete answers per second of load, both kinds: all the data asked for, no error, before the user gave "
         "up"});
  t.row({"answered_rps", "Answers with data", "req/s", 1, Better::higher, "complete or partial answers per second"});

  if (t.has_object("field_errors")) {
    t.group("field-errors", "Field errors",
            "Errors inside answers that had data, one per field left out (a cut valuation, a bins list not read "
            "in time): counted apart from failed requests, never added to them.");
    t.total("field_errors", "Field errors", "");
    t.codes("field_errors");
  }

  if (kind.graphql) {
    t.group("cut", "Cut fields",
            "Valuations left out of partial answers, and what became of the statement behind each one.");
    t.row({"valuations_asked", "Valuations asked for", "", -1, Better::neither,
           "stockValuation fields in the answers that had data"});
    t.row({"cut_fields_total", "Cut", "", -1, Better::neither, "left out of the answer with a field error"});
    t.row({"cut_fields_gone", "Statement already stopped", "", -1, Better::neither,
           "cut fields whose statement had ended when the answer arrived (or within 5 ms of it)"});
    t.row({"cut_outlived_p50_ms", "Statement ran on, p50", "ms", 1, Better::lower,
           "how long after the answer the statement behind a cut field ended (0: it already had; "
           "\u2013: nothing was cut)"});
    t.row({"cut_outlived_max_ms", "Statement ran on, longest", "ms", 1, Better::lower, ""});
  }

  t.group("db", "Database",
          "Statement time as the database saw it, each statement matched to the request that caused it.");
  t.row({"db_seconds", "Statement time", "s", 2, Better::neither, "statement-seconds spent on this mode's requests"});
  std::string zombie = "of that, the time after the caller had its answer or had given up";
  if (LeftWorkRunning(modes[0])) {
    zombie += "; none: at least this (the lab stopped the work left running after the load)";
  }
  t.row({"zombie_seconds", "Work nobody waited for", "s", 2, Better::lower, ""}, zombie);
  t.row({"zombie_share", "Share nobody waited for", "%", 1, Better::lower, "of the statement time", 100});
  t.row({"zombie_statements", "Statements that ran on", "", -1, Better::lower,
         "still running more than 5 ms after their caller had its answer"});
  t.row({"overshoot_p50_ms", "Stop after the answer p50", "ms", 1, Better::lower,
         "of the statements still running when their caller had its answer, how long after it they ended"});
  t.row({"overshoot_p99_ms", "Stop after the answer p99", "ms", 1, Better::lower, ""});

  t.group("pool", "Connection pool", "The inventory service's database connections, sampled every 20 ms.");
  t.row({"pool_size", "Connections", "", -1, Better::neither, ""});
  t.row({"peak_pool_in_use", "Peak in use", "", -1, Better::lower, ""});
  t.row(
      {"pool_queued_s", "Callers queued", "s", 2, Better::lower, "how long some caller was waiting for a connection"});
  t.row({"peak_pool_waiting", "Most callers queued at once", "", -1, Better::lower, ""});
  t.end();
  out += "</table></div>\n";
}

void CutFieldsTable(std::string& out, std::string_view scenario, const Modes& modes) {
  bool any = false;
  std::set<std::string, bool (*)(std::string_view, std::string_view)> paths(
      [](std::string_view a, std::string_view b) { return NaturalLess(a, b); });
  std::array<std::map<std::string, std::optional<double>>, 3> cut;
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const json::value* fields = Field(modes[i], "cut_fields");
    if (!fields) continue;
    any = true;
    if (!fields->is_array()) continue;
    for (const json::value& field : fields->get_array()) {
      const std::string path(String(Field(&field, "path")));
      paths.insert(path);
      auto ms = Number(Field(&field, "outlived_ms"));
      auto [it, inserted] = cut[i].emplace(path, ms);
      if (!inserted && ms && (!it->second || *ms > *it->second)) it->second = ms;
    }
  }
  if (!any) return;
  out += "<figure class=\"chart-box cut-fields-box\" data-chart=\"cut-fields\" data-scenario=\"";
  AppendHtml(out, scenario);
  out +=
      "\"><figcaption>The fields cut from each mode's last partial answer</figcaption>\n<p class=\"def\">How "
      "long after the answer the statement behind each cut field ended, in ms: 0 means it had already stopped. "
      "&#8220;not cut&#8221;: that answer had the field.</p>\n<table class=\"cut-fields\" data-scenario=\"";
  AppendHtml(out, scenario);
  out += "\">\n<thead><tr><th scope=\"col\">field</th>";
  for (const Mode& mode : kModes) ModeHeader(out, mode, /*with_meaning=*/false);
  out += "</tr></thead>\n<tbody>\n";
  std::size_t row = 0;
  for (const std::string& path : paths) {
    out += "<tr data-path=\"";
    AppendHtml(out, path);
    out += "\"><th scope=\"row\"><code>";
    if (path.empty()) out += kMissing;
    for (char c : path) {  // a line may break after each dot
      AppendHtml(out, std::string_view(&c, 1));
      if (c == '.') out += "<wbr>";
    }
    out += "</code></th>";
    for (std::size_t i = 0; i < modes.size(); ++i) {
      const json::value* fields = Field(modes[i], "cut_fields");
      const bool none_cut = fields && fields->is_array() && fields->get_array().empty();
      if (none_cut && row > 0) continue;  // one cell down the whole column
      out += "<td data-mode=\"";
      out += kModes[i].key;
      out += "\"";
      auto it = cut[i].find(path);
      if (none_cut) {
        out +=
            " rowspan=\"" + std::to_string(paths.size()) + "\" class=\"muted nothing-cut\">no answer had a cut field";
      } else if (!fields || !fields->is_array()) {
        out += ">" + std::string(kMissing);
      } else if (it == cut[i].end()) {
        out += " class=\"muted\">not cut";
      } else {
        out += ">" + (it->second ? Display(*it->second, 1) : std::string(kMissing));
      }
      out += "</td>";
    }
    out += "</tr>\n";
    ++row;
  }
  if (paths.empty())
    out += "<tr class=\"none-cut\"><td colspan=\"4\" class=\"muted\">no field was cut in any mode</td></tr>\n";
  out += "</tbody></table></figure>\n";
}

}  // namespace cutoff::lab::report
