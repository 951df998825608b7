#include "lab/report_html.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>
#include <cstddef>
#include <locale>
#include <regex>
#include <string>
#include <string_view>

namespace cutoff::lab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

namespace json = boost::json;

std::size_t Count(std::string_view haystack, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string_view::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// The text between the first `open` at or after `from` and the `close` that follows it.
std::string Between(const std::string& s, std::string_view open, std::string_view close, std::size_t from = 0) {
  const std::size_t begin = s.find(open, from);
  if (begin == std::string::npos) return {};
  const std::size_t end = s.find(close, begin + open.size());
  return end == std::string::npos ? std::string() : s.substr(begin + open.size(), end - begin - open.size());
}

// A mode of the chain scenario: no valuation is answered in full (it never fits), so what
// succeeded is the cheap lookups, and `partial` valuations came back without the valuation.
json::value Mode(double goodput, double zombie) {
  json::array timeline;
  for (int i = 0; i < 5; ++i) {
    timeline.push_back(json::object{{"t", i * 0.1}, {"pool_in_use", i}, {"goodput_rps", goodput},
                                    {"answered_rps", goodput * 2}, {"in_flight", i}});
  }
  const int fast_ok = static_cast<int>(goodput * 10);
  return json::object{{"requests", 1000},
                      {"ok", 0},
                      {"partial", 991},
                      {"failed", 9},
                      {"fast_requests", 2000},
                      {"fast_ok", fast_ok},
                      {"fast_partial", 0},
                      {"fast_failed", 2000 - fast_ok},
                      {"goodput_rps", goodput},
                      {"answered_rps", goodput * 2},
                      {"p50_ms", 12.5},
                      {"p99_ms", 48.25},
                      {"errors", json::object{{"deadline_exceeded", 998}, {"cancelled", 2}}},
                      {"request_errors", json::object{{"deadline_exceeded", 7}, {"cancelled", 2}}},
                      {"fast_request_errors", json::object{{"client_gave_up", 2000 - fast_ok}}},
                      {"field_errors", json::object{{"deadline_exceeded", 991}}},
                      {"pool_size", 10},
                      {"peak_pool_in_use", 9},
                      {"db_seconds", zombie + 10},
                      {"zombie_seconds", zombie},
                      {"zombie_share", std::round(1000 * zombie / (zombie + 10)) / 1000},  // as the lab rounds it
                      {"zombie_statements", 31},
                      {"overshoot_p50_ms", nullptr},
                      {"overshoot_p99_ms", nullptr},
                      {"timeline", timeline}};
}

json::value Results(std::string_view title = "Timeout chain") {
  return json::object{
      {"version", 1},
      {"generated_at", "2026-11-30T12:00:00Z"},
      {"database", "sqlite"},
      {"settings", json::object{{"scale", 0.01}, {"duration_s", 20}, {"user_ms", 250}}},
      {"scenarios",
       json::array{json::object{{"name", "chain"},
                                {"title", title},
                                {"modes", json::object{{"none", Mode(20.5, 181.4)},
                                                       {"timeouts", Mode(19.26, 176.9)},
                                                       {"cutoff", Mode(193.75, 0.42)}}},
                                {"notes", json::array{"a note"}}}}}};
}

// A GraphQL mode: `answered` operations of `sent` had data, each with `cut` valuations cut;
// `running` of the cut fields' statements were still running when the answer arrived.
json::value GraphqlMode(int sent, int answered, int cut, int running, double longest) {
  json::array cut_fields;
  for (int i = 0; i < cut; ++i) {
    cut_fields.push_back(json::object{{"path", "warehouses." + std::to_string(i) + ".stockValuation"},
                                      {"outlived_ms", i < running ? longest : 0.0}});
  }
  json::object m{{"requests", sent},
                 {"ok", 0},
                 {"partial", answered},
                 {"failed", sent - answered},
                 {"fast_requests", 0},
                 {"fast_ok", 0},
                 {"fast_partial", 0},
                 {"fast_failed", 0},
                 {"goodput_rps", 0.0},
                 {"answered_rps", answered / 10.0},
                 {"request_errors", sent > answered ? json::object{{"client_gave_up", sent - answered}} : json::object{}},
                 {"field_errors", json::object{{"deadline_exceeded", answered * cut}}},
                 {"errors", json::object{{"deadline_exceeded", answered * cut}}},
                 {"valuations_asked", answered * 8},
                 {"cut_fields_total", answered * cut},
                 {"cut_fields_gone", answered * (cut - running)},
                 {"cut_outlived_p50_ms", answered ? json::value(0.0) : json::value(nullptr)},
                 {"cut_outlived_max_ms", answered ? json::value(running ? longest : 0.0) : json::value(nullptr)},
                 {"cut_fields", answered ? cut_fields : json::array{}},
                 {"db_seconds", 10.0},
                 {"zombie_seconds", running ? 6.1 : 0.04},
                 {"zombie_share", running ? 0.61 : 0.004},
                 {"timeline", json::array{json::object{{"t", 0}, {"answered_rps", 0}, {"goodput_rps", 0}},
                                          json::object{{"t", 1}, {"answered_rps", answered / 10.0}, {"goodput_rps", 0}}}}};
  return m;
}

json::value GraphqlResults() {
  return json::object{
      {"version", 1},
      {"scenarios", json::array{json::object{{"name", "graphql"},
                                             {"title", "GraphQL"},
                                             {"modes", json::object{{"none", GraphqlMode(6, 0, 0, 0, 0)},
                                                                    {"timeouts", GraphqlMode(9, 5, 8, 3, 1073.4)},
                                                                    {"cutoff", GraphqlMode(10, 10, 7, 0, 0)}}}}}}};
}

// The cells of one table row, by mode.
std::string Row(const std::string& page, std::string_view figure, std::size_t from = 0) {
  return Between(page, "<tr data-figure=\"" + std::string(figure) + "\"", "</tr>", from);
}

TEST(LabReport, IsOneSelfContainedPage) {
  const std::string page = RenderLabReport(Results());
  EXPECT_THAT(page, ::testing::StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(page, ::testing::EndsWith("</html>\n"));
  EXPECT_THAT(page, HasSubstr("default-src 'none'"));  // the browser refuses every fetch
  // Nothing refers to another resource: no URLs other than the SVG namespace.
  EXPECT_EQ(Count(page, "http://"), Count(page, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(Count(page, "https://"), 0u);
  EXPECT_EQ(Count(page, " src="), 0u);
  EXPECT_EQ(Count(page, "<script"), 1u);  // the embedded results, which do not run
  EXPECT_THAT(page, HasSubstr("<script type=\"application/json\" id=\"lab-results\">"));
}

TEST(LabReport, TableHasTheThreeModesAndMarksTheBest) {
  const std::string page = RenderLabReport(Results());
  const std::string head = Between(page, "<table class=\"figures\"", "</thead>");
  const std::size_t none = head.find("data-mode=\"none\""), timeouts = head.find("data-mode=\"timeouts\""),
                    cutoff = head.find("data-mode=\"cutoff\"");
  ASSERT_NE(none, std::string::npos);
  ASSERT_NE(timeouts, std::string::npos);
  ASSERT_NE(cutoff, std::string::npos);
  EXPECT_LT(none, timeouts);
  EXPECT_LT(timeouts, cutoff);

  const std::string goodput = Row(page, "goodput_rps");
  EXPECT_THAT(goodput, HasSubstr("<td data-mode=\"none\">20.5</td>"));
  EXPECT_THAT(goodput, HasSubstr("<td data-mode=\"timeouts\">19.3</td>"));
  EXPECT_THAT(goodput, HasSubstr("<td data-mode=\"cutoff\" class=\"best\">193.8</td>"));
  EXPECT_THAT(goodput, HasSubstr("<span class=\"def\">complete answers per second"));  // defined where shown
  const std::string zombie = Row(page, "zombie_seconds");
  EXPECT_THAT(zombie, HasSubstr("<td data-mode=\"cutoff\" class=\"best\">0.42</td>"));
  EXPECT_THAT(zombie, HasSubstr("<td data-mode=\"none\">181.40</td>"));
  // A share is shown as a percentage.
  EXPECT_THAT(Row(page, "zombie_share"), HasSubstr("<td data-mode=\"cutoff\" class=\"best\">4.0</td>"));
  // Equal everywhere: nothing is best.
  EXPECT_THAT(Row(page, "p50_ms"), Not(HasSubstr("best")));
  // Failed requests: the total, then each code that failed one, sorted.
  const std::size_t failed = page.find("<tr data-figure=\"failed\">");
  ASSERT_NE(failed, std::string::npos);
  EXPECT_THAT(Row(page, "failed"), HasSubstr(">9</td>"));
  EXPECT_LT(page.find("data-figure=\"request_errors.cancelled\""), page.find("data-figure=\"request_errors.deadline_exceeded\""));
  EXPECT_GT(page.find("data-figure=\"request_errors.cancelled\""), failed);
}

// The chain's valuations never complete: what succeeded is the cheap lookups, and the page
// says so in rows of their own instead of one "Successful 0".
TEST(LabReport, WhatSucceededIsCountedWhereItSucceeded) {
  const std::string page = RenderLabReport(Results());
  EXPECT_THAT(Row(page, "ok"), HasSubstr("<td data-mode=\"cutoff\">0</td>"));
  EXPECT_THAT(Row(page, "partial"), HasSubstr("<td data-mode=\"cutoff\">991</td>"));
  const std::string lookups = Row(page, "fast_ok");
  EXPECT_THAT(lookups, HasSubstr("<td data-mode=\"cutoff\" class=\"best\">1937</td>"));
  EXPECT_THAT(lookups, HasSubstr("<td data-mode=\"none\">205</td>"));
  EXPECT_THAT(Row(page, "fast_failed"), HasSubstr("<td data-mode=\"none\">1795</td>"));
  // The outcome bars: every request of a kind in one bar, its parts the counts.
  const std::string outcomes = Between(page, "data-chart=\"outcomes\"", "</figure>");
  EXPECT_THAT(outcomes, HasSubstr("<h4>Valuation requests</h4>"));
  EXPECT_THAT(outcomes, HasSubstr("<h4>Cheap lookups</h4>"));
  EXPECT_THAT(outcomes, HasSubstr("<span class=\"seg partial\" data-count=\"991\" style=\"width:99.1%"));
  EXPECT_THAT(outcomes, HasSubstr("<span class=\"seg complete\" data-count=\"1937\" style=\"width:96.8%"));
  EXPECT_THAT(outcomes, HasSubstr("<b>0</b> in full &#183; <b>991</b> partially &#183; <b>9</b> failed, of 1000"));
  // In words, from the numbers.
  const LabSummary summary = SummarizeLab(Results());
  ASSERT_EQ(summary.scenarios.size(), 1u);
  const std::vector<std::string>& chain = summary.scenarios[0].second;
  EXPECT_THAT(chain, ::testing::Contains(HasSubstr("Cheap lookups answered in full: 1937 of 2000 under cutoff, 192 of "
                                                   "2000 under per-layer timeouts and 205 of 2000 with no deadlines.")));
  EXPECT_THAT(chain, ::testing::Contains(HasSubstr(", all of it cheap lookups.")));
  EXPECT_THAT(summary.run, ::testing::Contains(HasSubstr("No valuation request or GraphQL operation was answered in full")));
}

// Field errors (inside answers that had data) and request errors (requests with no data) are
// two figures, never one sum: failed requests can never outnumber the requests.
TEST(LabReport, FieldErrorsAreCountedApartFromFailedRequests) {
  const std::string page = RenderLabReport(Results());
  EXPECT_THAT(Row(page, "failed"), HasSubstr("<td data-mode=\"none\">9</td>"));
  EXPECT_THAT(Row(page, "field_errors"), HasSubstr("<td data-mode=\"none\">991</td>"));
  EXPECT_THAT(page, HasSubstr("<tbody data-group=\"field-errors\">"));
  EXPECT_EQ(Count(page, "data-figure=\"errors\""), 0u);  // the old mixed count is not shown
  EXPECT_EQ(Count(page, "data-figure=\"errors."), 0u);
  // A document from before request_errors still shows its mixed count, named as such.
  json::value old = Results();
  for (auto& [key, mode] : old.as_object()["scenarios"].as_array()[0].as_object()["modes"].as_object()) {
    mode.as_object().erase("request_errors");
    mode.as_object().erase("field_errors");
  }
  const std::string legacy = RenderLabReport(old);
  EXPECT_THAT(Row(legacy, "errors"), HasSubstr("field and request errors together"));
  EXPECT_THAT(Row(legacy, "errors"), HasSubstr("<td data-mode=\"none\">1000</td>"));
  EXPECT_EQ(Count(legacy, "data-figure=\"field_errors\""), 0u);
}

// The GraphQL scenario's result: partial answers, their cut fields, and whether the statements
// behind them were gone when the answer arrived.
TEST(LabReport, GraphqlShowsPartialAnswersAndTheCutFieldsStatements) {
  const std::string page = RenderLabReport(GraphqlResults());
  EXPECT_THAT(Row(page, "partial"), HasSubstr("<td data-mode=\"cutoff\">10</td>"));
  EXPECT_THAT(Row(page, "failed"), HasSubstr("<td data-mode=\"none\">6</td>"));
  EXPECT_THAT(Row(page, "cut_fields_total"), HasSubstr("<td data-mode=\"cutoff\">70</td>"));
  EXPECT_THAT(Row(page, "cut_fields_gone"), HasSubstr("<td data-mode=\"timeouts\">25</td>"));
  EXPECT_THAT(Row(page, "cut_outlived_max_ms"), HasSubstr("<td data-mode=\"timeouts\">1073.4</td>"));
  // Nothing was cut without deadlines: nothing to rank there.
  EXPECT_THAT(Row(page, "cut_outlived_max_ms"), HasSubstr("<td data-mode=\"none\">\u2013</td>"));
  EXPECT_THAT(Row(page, "cut_outlived_max_ms"), HasSubstr("<td data-mode=\"cutoff\" class=\"best\">0.0</td>"));
  // Its timeline chart counts partial answers (goodput is 0 throughout).
  const std::string chart = Between(page, "data-chart=\"goodput\"", "</figure>");
  EXPECT_THAT(chart, HasSubstr("Answers with data over time"));
  // The last partial answer's cut fields, a column per mode; none had no partial answer.
  const std::string cut = Between(page, "<table class=\"cut-fields\"", "</table>");
  EXPECT_EQ(Count(cut, "<tr data-path="), 8u);
  EXPECT_THAT(cut, HasSubstr("rowspan=\"8\" class=\"muted nothing-cut\">no answer had a cut field"));
  EXPECT_THAT(Between(cut, "<tr data-path=\"warehouses.7.stockValuation\"", "</tr>"),
              HasSubstr("<td data-mode=\"cutoff\" class=\"muted\">not cut</td>"));
  EXPECT_THAT(Between(cut, "<tr data-path=\"warehouses.0.stockValuation\"", "</tr>"),
              HasSubstr("<td data-mode=\"timeouts\">1073.4</td>"));

  const LabSummary summary = SummarizeLab(GraphqlResults());
  const std::vector<std::string>& words = summary.scenarios.at(0).second;
  EXPECT_THAT(words, ::testing::Contains("No operation was answered in full in any mode."));
  EXPECT_THAT(words, ::testing::Contains(HasSubstr("Under cutoff, all 10 were answered partially; 70 of 80 valuations "
                                                   "were cut, and every one's statement had stopped")));
  EXPECT_THAT(words, ::testing::Contains(HasSubstr("Under per-layer timeouts, of 9, 5 were answered partially and the "
                                                   "user gave up on 4; 40 of 40 valuations were cut, and the statements "
                                                   "behind 15 of them were still running when the answer arrived, for "
                                                   "up to 1073 ms.")));
  EXPECT_THAT(words, ::testing::Contains(HasSubstr("With no deadlines, the user gave up on all 6.")));
  EXPECT_THAT(summary.run, ::testing::Contains(HasSubstr("all 70 under cutoff and 25 of 40 under per-layer timeouts")));
}

// The page leads with what differs, in words made from the figures: other figures, other words.
TEST(LabReport, LeadsWithASummaryMadeFromTheFigures) {
  json::value results = GraphqlResults();
  std::string page = RenderLabReport(results);
  const std::size_t summary = page.find("<section class=\"summary\"");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_LT(summary, page.find("<section class=\"scenario\""));
  EXPECT_THAT(Between(page, "<section class=\"summary\"", "</section>"),
              HasSubstr("Work nobody waited for (statements still running after their caller had its answer or had "
                        "given up): 0.4% of the database&#39;s statement time under cutoff, against 61% under "
                        "per-layer timeouts and 0.4% with no deadlines."));
  auto& timeouts = results.as_object()["scenarios"].as_array()[0].as_object()["modes"].as_object()["timeouts"].as_object();
  timeouts["zombie_seconds"] = 2.5;
  page = RenderLabReport(results);
  EXPECT_THAT(Between(page, "<section class=\"summary\"", "</section>"), HasSubstr("against 25% under per-layer timeouts"));
  // Nothing to compare, nothing said.
  EXPECT_TRUE(SummarizeLab(json::parse("{\"version\": 1, \"scenarios\": []}")).run.empty());
  EXPECT_TRUE(SummarizeLab(json::parse("[1, 2]")).run.empty());
}

// An orders mode: `orphans` orders shipped with their stock released, `lies` users told a failed
// order that shipped, `left` sagas left ambiguous and resumed.
json::value OrdersMode(int orphans, int lies, int left) {
  return json::object{{"requests", 40},
                      {"ok", 20},
                      {"partial", 0},
                      {"failed", 20},
                      {"request_errors", json::object{{"deadline_exceeded", 10}, {"hung_up", 10}}},
                      {"orders", 40},
                      {"told_ambiguous", 0},
                      {"sagas_left", json::object{{"completed", 25 - left}, {"compensated", 15}, {"step_ambiguous", left}}},
                      {"left_unsettled", left},
                      {"resumed", left},
                      {"resumed_final", left},
                      {"unsettled", 0},
                      {"completed_orders", 25},
                      {"compensated_orders", 15},
                      {"shipments", 25 + orphans},
                      {"orphan_shipments", orphans},
                      {"unshipped_orders", 0},
                      {"false_failures", lies},
                      {"false_successes", 0},
                      {"reserved_drift_before_resume", 0},
                      {"reserved_drift", 0},
                      {"db_seconds", 1.0},
                      {"zombie_seconds", 0.1},
                      {"zombie_share", 0.1}};
}

TEST(LabReport, OrdersCompareWhatUsersWereToldWithWhatHappened) {
  const json::value results = json::object{
      {"version", 1},
      {"scenarios", json::array{json::object{{"name", "orders"},
                                             {"title", "Orders"},
                                             {"modes", json::object{{"none", OrdersMode(0, 0, 0)},
                                                                    {"timeouts", OrdersMode(7, 4, 0)},
                                                                    {"cutoff", OrdersMode(0, 0, 6)}}}}}}};
  const std::string page = RenderLabReport(results);
  EXPECT_THAT(page, HasSubstr("data-group=\"orders\""));
  // Fewer orphans is better: cutoff and none are marked, timeouts is not.
  const std::string orphans = Row(page, "orphan_shipments");
  EXPECT_THAT(orphans, HasSubstr("<td data-mode=\"timeouts\">7</td>"));
  EXPECT_THAT(orphans, HasSubstr("<td data-mode=\"cutoff\" class=\"best\">0</td>"));
  EXPECT_THAT(Row(page, "false_failures"), HasSubstr("<td data-mode=\"timeouts\">4</td>"));
  EXPECT_THAT(page, HasSubstr("step_ambiguous"));  // the sagas left, by state
  EXPECT_THAT(Row(page, "failed"), HasSubstr("or hung up"));
  const LabSummary summary = SummarizeLab(results);
  ASSERT_EQ(summary.scenarios.size(), 1u);
  const std::vector<std::string>& words = summary.scenarios[0].second;
  EXPECT_THAT(words, ::testing::Contains(
                         "Users told their order had failed although it was shipped: 0 under cutoff, 4 under "
                         "per-layer timeouts and 0 with no deadlines."));
  EXPECT_THAT(words, ::testing::Contains("Shipments booked for an order whose stock reservation was released: 0 "
                                         "under cutoff, 7 under per-layer timeouts and 0 with no deadlines."));
  EXPECT_THAT(words, ::testing::Contains("Sagas left ambiguous or half-undone when the load ended: 6 (all settled "
                                         "by resuming) under cutoff, 0 under per-layer timeouts and 0 with no "
                                         "deadlines."));
}

TEST(LabReport, ChartsHaveALinePerModeAndABarPerMode) {
  const std::string page = RenderLabReport(Results());
  for (std::string_view chart : {"pool", "goodput"}) {
    const std::string svg = Between(page, "data-chart=\"" + std::string(chart) + "\"", "</svg>");
    EXPECT_EQ(Count(svg, "<path class=\"series\""), 3u) << chart;
    EXPECT_EQ(Count(svg, "data-points=\"5\""), 3u) << chart;
    EXPECT_THAT(svg, HasSubstr("<p class=\"def\">")) << chart;  // what it shows, under its caption
  }
  const std::string pool = Between(page, "data-chart=\"pool\"", "</figure>");
  EXPECT_THAT(pool, HasSubstr("<line class=\"limit\" data-pool-size=\"10\""));
  EXPECT_THAT(pool, HasSubstr("<ul class=\"legend\"><li data-mode=\"none\">"));  // HTML: it wraps on a phone
  EXPECT_THAT(Between(page, "data-chart=\"goodput\"", "</figure>"), HasSubstr("Goodput over time"));
  const std::string bars = Between(page, "data-chart=\"zombie\"", "</figure>");
  EXPECT_EQ(Count(bars, "<div class=\"bar-row bar\""), 3u);
  EXPECT_THAT(bars, HasSubstr("data-mode=\"cutoff\" data-value=\"0.42\" data-db=\"10.42\""));
  EXPECT_THAT(bars, HasSubstr("<b>0.42 s</b> of 10.42 s (4.0%)"));
  EXPECT_THAT(page, HasSubstr("id=\"s0-pool\""));
  EXPECT_THAT(page, HasSubstr("id=\"s0-goodput\""));
  EXPECT_THAT(page, HasSubstr("id=\"s0-zombie\""));
  EXPECT_THAT(page, HasSubstr("id=\"s0-outcomes\""));
}

TEST(LabReport, StringsFromTheDocumentAreInert) {
  const std::string hostile = "</script><img src=x onerror=alert(1)><!-- \xE2\x80\xA8 & \"q\" 'a'";
  json::value results = Results(hostile);
  auto& scenario = results.as_object()["scenarios"].as_array()[0].as_object();
  scenario["name"] = "x\" onmouseover=\"alert(1)";
  scenario["notes"] = json::array{"<b>not bold</b>"};
  results.as_object()["database"] = "<i>db</i>";
  results.as_object()["settings"].as_object()["<k>"] = "</style><script>alert(1)</script>";
  auto& cutoff = scenario["modes"].as_object()["cutoff"].as_object();
  cutoff["cut_fields"] = json::array{json::object{{"path", "<svg onload=alert(1)>"}, {"outlived_ms", 1.5}}};
  cutoff["request_errors"].as_object()["<code>"] = 1;

  const std::string page = RenderLabReport(results);
  EXPECT_EQ(Count(page, "<script"), 1u);
  EXPECT_EQ(Count(page, "</script"), 1u);
  EXPECT_EQ(Count(page, "<!--"), 0u);
  EXPECT_EQ(Count(page, "<img"), 0u);
  EXPECT_EQ(Count(page, "<svg onload"), 0u);
  EXPECT_EQ(Count(page, "<b>not"), 0u);
  EXPECT_EQ(Count(page, "<i>db"), 0u);
  EXPECT_EQ(Count(page, "<k>"), 0u);
  EXPECT_THAT(page, HasSubstr("<tr data-figure=\"request_errors.&lt;code&gt;\" class=\"sub\"><th scope=\"row\">&lt;code&gt;</th>"));
  EXPECT_EQ(Count(page, "</style>"), 1u);
  const std::string markup = page.substr(0, page.find("<script"));  // the JSON has \" in strings
  EXPECT_EQ(Count(markup, "\" onmouseover"), 0u);
  EXPECT_THAT(page, HasSubstr("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&lt;!-- "));
  EXPECT_THAT(page, HasSubstr("x&quot; onmouseover=&quot;alert(1)"));

  // The embedded document reads back as the original, and holds no raw U+2028.
  const std::string embedded = Between(page, "<script type=\"application/json\" id=\"lab-results\">", "</script>");
  EXPECT_THAT(embedded, Not(HasSubstr("\xE2\x80\xA8")));
  EXPECT_THAT(embedded, HasSubstr("\\u003c/script\\u003e"));
  EXPECT_THAT(embedded, HasSubstr("\\u2028"));
  EXPECT_EQ(json::parse(embedded), results);
}

TEST(LabReport, MissingFiguresShowAsADash) {
  json::value results = Results();
  auto& modes = results.as_object()["scenarios"].as_array()[0].as_object()["modes"].as_object();
  modes.erase("timeouts");                                      // a whole mode
  modes["none"].as_object()["goodput_rps"] = nullptr;           // null
  modes["none"].as_object()["p99_ms"] = "fast";                 // the wrong type
  modes["none"].as_object().erase("timeline");                  // no samples
  modes["cutoff"].as_object()["timeline"] = json::array{1, json::object{{"t", "x"}}, json::object{{"t", 0.5}}};

  const std::string page = RenderLabReport(results);
  EXPECT_THAT(Row(page, "goodput_rps"),
              HasSubstr("<td data-mode=\"none\">\u2013</td><td data-mode=\"timeouts\">\u2013</td>"));
  EXPECT_THAT(Row(page, "p99_ms"), HasSubstr("<td data-mode=\"none\">\u2013</td>"));
  // The one present value of a row is not "best".
  EXPECT_THAT(Row(page, "goodput_rps"), Not(HasSubstr("best")));
  const std::string pool = Between(page, "data-chart=\"pool\"", "</figure>");
  EXPECT_EQ(Count(pool, "<path class=\"series\""), 0u);
  EXPECT_THAT(pool, HasSubstr("no timeline samples"));
  EXPECT_THAT(pool, HasSubstr("none (no samples)"));
  EXPECT_EQ(Count(Between(page, "data-chart=\"zombie\"", "</figure>"), "<div class=\"bar-row bar\""), 3u);
  EXPECT_THAT(Between(page, "data-chart=\"outcomes\"", "</figure>"), HasSubstr("<div class=\"bar-row outcome\" data-mode=\"timeouts\">"));
}

TEST(LabReport, AnyValueGivesAPage) {
  for (const char* text : {"null", "[]", "{}", "\"text\"", "{\"version\": 2, \"scenarios\": [1, null, {}]}",
                           "{\"version\": 1, \"scenarios\": [{\"modes\": {\"none\": [], \"cutoff\": "
                           "{\"timeline\": [{\"t\": 1e308, \"pool_in_use\": -1e308}, {\"t\": -5, "
                           "\"pool_in_use\": 3}], \"zombie_seconds\": -2, \"pool_size\": 1e300}}}]}"}) {
    const std::string page = RenderLabReport(json::parse(text));
    EXPECT_THAT(page, ::testing::EndsWith("</html>\n")) << text;
    EXPECT_FALSE(std::regex_search(page, std::regex("[^a-z](nan|inf)[^a-z]"))) << text;
  }
  EXPECT_THAT(RenderLabReport(json::parse("[]")), HasSubstr("not a JSON object"));
  EXPECT_THAT(RenderLabReport(json::parse("{\"version\": 2, \"scenarios\": []}")),
              HasSubstr("reads results version 1; the document says version 2"));
}

TEST(LabReport, OutputIsDeterministic) {
  const std::string first = RenderLabReport(Results());
  EXPECT_EQ(first, RenderLabReport(Results()));
  EXPECT_EQ(first, RenderLabReport(json::parse(json::serialize(Results()))));
  // Numbers do not depend on the locale's decimal separator.
  struct Comma : std::numpunct<char> {
    char do_decimal_point() const override { return ','; }
  };
  const std::locale previous = std::locale::global(std::locale(std::locale::classic(), new Comma));
  EXPECT_EQ(first, RenderLabReport(Results()));
  std::locale::global(previous);
}

TEST(LabReport, LargeCountsAreGrouped) {
  json::value results = Results();
  auto& none = results.as_object()["scenarios"].as_array()[0].as_object()["modes"].as_object()["none"].as_object();
  none["requests"] = 1234567;
  none["ok"] = 1234;
  const std::string page = RenderLabReport(results);
  EXPECT_THAT(Row(page, "requests"), HasSubstr(">1,234,567<"));
  EXPECT_THAT(Row(page, "ok"), HasSubstr(">1234<"));
}

}  // namespace
}  // namespace cutoff::lab
