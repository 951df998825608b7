#include "lab/report_html.hpp"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "lab/report_charts.hpp"
#include "lab/report_model.hpp"
#include "lab/report_page.hpp"
#include "lab/report_tables.hpp"
#include "lab/report_text.hpp"

namespace cutoff::lab {
namespace report {
namespace {

namespace json = boost::json;

// The run's settings as written, a term per key.
void Settings(std::string& out, const json::value* settings) {
  if (!settings || !settings->is_object() || settings->get_object().empty()) return;
  out += "<dl class=\"settings\">";
  for (const auto& [key, value] : settings->get_object()) {
    out += "<div><dt>";
    AppendHtml(out, key);
    out += "</dt><dd>";
    switch (value.kind()) {
      case json::kind::string: AppendHtml(out, value.get_string()); break;
      case json::kind::int64: out += std::to_string(value.get_int64()); break;
      case json::kind::uint64: out += std::to_string(value.get_uint64()); break;
      case json::kind::double_: out += Shortest(value.get_double()); break;
      case json::kind::bool_: out += value.get_bool() ? "true" : "false"; break;
      case json::kind::null: out += kMissing; break;
      default: AppendHtml(out, json::serialize(value));
    }
    out += "</dd></div>";
  }
  out += "</dl>\n";
}

// Sentences as a list of class `cls`.
void Sentences(std::string& out, std::string_view cls, const std::vector<std::string>& sentences) {
  if (sentences.empty()) return;
  out += "<ul class=\"";
  out += cls;
  out += "\">";
  for (const std::string& s : sentences) {
    out += "<li>";
    AppendHtml(out, s);
    out += "</li>";
  }
  out += "</ul>\n";
}

// An overload run's cheap lookups: their p99 per window over time, and each mode's threshold
// for "recovered" (twice its baseline p99).
void RecoveryChart(std::string& out, const std::string& id, std::string_view scenario, const Modes& modes,
                   const std::vector<Band>& bands) {
  std::vector<Series> p99;
  std::vector<Limit> thresholds;
  for (std::size_t i = 0; i < kModes.size(); ++i) {
    p99.push_back({&kModes[i], Points(modes[i], "fast_p99_windows", "p99_ms")});
    if (auto base = Fig(modes[i], "baseline_fast_p99_ms")) {
      thresholds.push_back(
          {2 * *base, "", kModes[i].color, "threshold", std::string(kModes[i].key) + ": twice its baseline p99"});
    }
  }
  LineChart(out, "recovery", id, scenario, "Cheap lookups' p99 over time",
            "The p99 latency of the cheap lookups started in each half second; one without a complete answer "
            "counts as the user's whole patience. A mode has recovered once its line is back under its dashed "
            "line, twice its p99 before the overload.",
            "p99 ms", p99, thresholds, bands);
}

// A scenario's section: what it shows in words (`sentences`), its table and its charts.
void Scenario(std::string& out, const json::value& scenario, std::size_t index, const json::value* settings,
              const std::vector<std::string>& sentences) {
  const std::string id = "s" + std::to_string(index);
  const std::string_view name = String(Field(&scenario, "name"));
  std::string_view title = String(Field(&scenario, "title"));
  const std::string fallback = "Scenario " + std::to_string(index + 1);
  if (title.empty()) title = name.empty() ? std::string_view(fallback) : name;
  const Modes modes = ModesOf(scenario);
  const Kind kind = KindOf(name, modes);

  out += "<section class=\"scenario\" id=\"scenario-" + std::to_string(index) + "\" data-scenario=\"";
  AppendHtml(out, name);
  out += "\">\n<header><h2>";
  AppendHtml(out, title);
  out += "</h2>";
  if (!name.empty()) {
    out += "<code>";
    AppendHtml(out, name);
    out += "</code>";
  }
  out += "</header>\n<div class=\"words\">";
  Sentences(out, "in-words", sentences);
  // Desktop: the table on the left, the charts beside it; narrow: what each request got and
  // the database's time first, then the table, then the timelines.
  out += "</div>\n<div class=\"layout\">";
  FiguresTable(out, name, kind, modes, Number(Field(settings, "user_ms")));
  out += "<div class=\"side key-charts\">";
  OutcomesChart(out, id + "-outcomes", name, kind, modes);
  ZombieChart(out, id + "-zombie", name, modes);
  out += "</div>\n<div class=\"side time-charts\">\n";

  std::vector<Series> pool, answers;
  std::vector<Limit> limits;
  // Partial answers are the GraphQL scenario's result: its chart counts them too (goodput,
  // complete answers only, is 0 there). Older documents have goodput only.
  std::string_view answers_key = kind.graphql ? "answered_rps" : "goodput_rps";
  if (kind.graphql && std::all_of(modes.begin(), modes.end(),
                                  [](const json::value* m) { return Timeline(m, "answered_rps").empty(); })) {
    answers_key = "goodput_rps";
  }
  for (std::size_t i = 0; i < kModes.size(); ++i) {
    pool.push_back({&kModes[i], Timeline(modes[i], "pool_in_use")});
    answers.push_back({&kModes[i], Timeline(modes[i], answers_key)});
    if (auto size = Fig(modes[i], "pool_size");
        size && std::none_of(limits.begin(), limits.end(), [&](const Limit& l) { return l.value == *size; })) {
      limits.push_back(PoolSizeLimit(*size));
    }
  }
  std::vector<Band> bands;
  for (const Phase& p : Phases(modes)) bands.push_back({p.name, p.from, p.to});
  LineChart(out, "pool", id + "-pool", name, "Pool occupancy over time",
            "Database connections in use, sampled every 100 ms. At the dashed line every connection is taken and "
            "callers queue.",
            "connections in use", pool, limits, bands);
  if (answers_key == "answered_rps") {
    LineChart(out, "goodput", id + "-goodput", name, "Answers with data over time",
              "Complete or partial answers received in the last second, sampled every 100 ms. Here partial "
              "answers are the result: goodput counts complete answers only.",
              "answers/s", answers, {});
  } else {
    LineChart(out, "goodput", id + "-goodput", name, "Goodput over time",
              "Complete answers (all the data asked for, no error), both kinds, received in the last second, "
              "sampled every 100 ms.",
              "complete answers/s", answers, {}, bands);
  }
  if (kind.overload) RecoveryChart(out, id + "-recovery", name, modes, bands);
  out += "</div></div>\n";

  CutFieldsTable(out, name, modes);
  if (const json::value* notes = Field(&scenario, "notes"); notes && notes->is_array() && !notes->get_array().empty()) {
    out += "<ul class=\"notes\">";
    for (const json::value& note : notes->get_array()) {
      out += "<li>";
      if (note.is_string()) {
        AppendHtml(out, note.get_string());
      } else {
        AppendHtml(out, json::serialize(note));
      }
      out += "</li>";
    }
    out += "</ul>\n";
  }
  out += "</section>\n";
}

// The page's header: when and on what the run was made, the modes, what the run shows in
// words (`sentences`), the scenarios and the settings.
void PageHeader(std::string& out, const json::value& results, const std::vector<const json::value*>& scenarios,
                const std::vector<std::string>& sentences) {
  out += "<header class=\"page\"><h1>cutoff lab report</h1>\n<p class=\"meta\">";
  const std::string_view generated = String(Field(&results, "generated_at"));
  const std::string_view database = String(Field(&results, "database"));
  const std::size_t count = scenarios.size();
  out += "Generated <b>";
  if (generated.empty()) {
    out += kMissing;
  } else {
    AppendHtml(out, generated);
  }
  out += "</b> &#183; database <b>";
  if (database.empty()) {
    out += kMissing;
  } else {
    AppendHtml(out, database);
  }
  out += "</b> &#183; " + std::to_string(count) + (count == 1 ? " scenario" : " scenarios") + "</p>\n";
  out += "<p class=\"modes\">";
  for (const Mode& mode : kModes) {
    out += "<span>";
    AppendSwatch(out, mode);
    out += "<b>";
    out += mode.key;
    out += "</b> ";
    out += mode.description;
    out += "</span>";
  }
  out += "</p>\n";

  if (!sentences.empty()) {
    out += "<section class=\"summary\" id=\"summary\"><h3>What this run shows</h3>\n";
    Sentences(out, "in-words", sentences);
    out += "</section>\n";
  }
  if (count > 1) {
    out += "<nav>";
    for (std::size_t i = 0; i < count; ++i) {
      std::string_view name = String(Field(scenarios[i], "name"));
      const std::string fallback = "Scenario " + std::to_string(i + 1);
      out += "<a href=\"#scenario-" + std::to_string(i) + "\">";
      AppendHtml(out, name.empty() ? std::string_view(fallback) : name);
      out += "</a>";
    }
    out += "</nav>\n";
  }
  Settings(out, Field(&results, "settings"));
  out += "</header>\n";
}

// Why the page shows less than a results document would, if it does.
void Warnings(std::string& out, const json::value& results, std::size_t scenarios) {
  if (!results.is_object()) {
    out += "<p class=\"warning\">The results document is not a JSON object; there is nothing to show.</p>\n";
    return;
  }
  const auto version = Number(Field(&results, "version"));
  if (!version || *version != 1) {
    out += "<p class=\"warning\">This page reads results version 1; the document says version ";
    out += version ? Shortest(*version) : std::string(kMissing);
    out += ". Figures it does not recognise are not shown.</p>\n";
  }
  if (scenarios == 0) out += "<p class=\"warning\">The results document holds no scenarios.</p>\n";
}

}  // namespace
}  // namespace report

std::string RenderLabReport(const boost::json::value& results) {
  std::string out;
  out.reserve(96 * 1024);
  report::OpenPage(out, report::String(report::Field(&results, "database")));
  const std::vector<const boost::json::value*> scenarios = report::ScenarioList(results);
  const LabSummary summary = SummarizeLab(results);  // a sentence list per scenario, in the same order
  report::PageHeader(out, results, scenarios, summary.run);
  report::Warnings(out, results, scenarios.size());
  const boost::json::value* settings = report::Field(&results, "settings");
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    report::Scenario(out, *scenarios[i], i, settings, summary.scenarios[i].second);
  }
  report::ClosePage(out, results);
  return out;
}

}  // namespace cutoff::lab
