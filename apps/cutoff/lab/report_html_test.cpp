#include "lab/report_html.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
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

json::value Mode(double goodput, double zombie) {
  json::array timeline;
  for (int i = 0; i < 5; ++i) {
    timeline.push_back(json::object{{"t", i * 0.1}, {"pool_in_use", i}, {"goodput_rps", goodput}, {"in_flight", i}});
  }
  return json::object{{"requests", 1000},
                      {"ok", static_cast<int>(goodput * 10)},
                      {"goodput_rps", goodput},
                      {"p50_ms", 12.5},
                      {"p99_ms", 48.25},
                      {"errors", json::object{{"deadline_exceeded", 7}, {"cancelled", 2}}},
                      {"pool_size", 10},
                      {"peak_pool_in_use", 9},
                      {"zombie_seconds", zombie},
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
      {"settings", json::object{{"scale", 0.01}, {"duration_s", 20}}},
      {"scenarios",
       json::array{json::object{{"name", "chain"},
                                {"title", title},
                                {"modes", json::object{{"none", Mode(20.5, 181.4)},
                                                       {"timeouts", Mode(19.26, 176.9)},
                                                       {"cutoff", Mode(193.75, 0.42)}}},
                                {"notes", json::array{"a note"}}}}}};
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

  const std::string goodput = Between(page, "<tr data-figure=\"goodput_rps\">", "</tr>");
  EXPECT_THAT(goodput, HasSubstr("<td data-mode=\"none\">20.5</td>"));
  EXPECT_THAT(goodput, HasSubstr("<td data-mode=\"timeouts\">19.3</td>"));
  EXPECT_THAT(goodput, HasSubstr("<td data-mode=\"cutoff\" class=\"best\" title=\"best\">193.8</td>"));
  const std::string zombie = Between(page, "<tr data-figure=\"zombie_seconds\">", "</tr>");
  EXPECT_THAT(zombie, HasSubstr("<td data-mode=\"cutoff\" class=\"best\" title=\"best\">0.42</td>"));
  EXPECT_THAT(zombie, HasSubstr("<td data-mode=\"none\">181.40</td>"));
  // Equal everywhere: nothing is best.
  EXPECT_THAT(Between(page, "<tr data-figure=\"p50_ms\">", "</tr>"), Not(HasSubstr("best")));
  // Errors: the total, then each code, sorted.
  const std::size_t errors = page.find("<tr data-figure=\"errors\">");
  ASSERT_NE(errors, std::string::npos);
  EXPECT_THAT(Between(page, "<tr data-figure=\"errors\">", "</tr>"), HasSubstr(">9</td>"));
  EXPECT_LT(page.find("data-figure=\"errors.cancelled\""), page.find("data-figure=\"errors.deadline_exceeded\""));
  EXPECT_GT(page.find("data-figure=\"errors.cancelled\""), errors);
}

TEST(LabReport, ChartsHaveALinePerModeAndABarPerMode) {
  const std::string page = RenderLabReport(Results());
  for (std::string_view chart : {"pool", "goodput"}) {
    const std::string svg = Between(page, "data-chart=\"" + std::string(chart) + "\"", "</svg>");
    EXPECT_EQ(Count(svg, "<path class=\"series\""), 3u) << chart;
    EXPECT_EQ(Count(svg, "data-points=\"5\""), 3u) << chart;
  }
  const std::string pool = Between(page, "data-chart=\"pool\"", "</svg>");
  EXPECT_THAT(pool, HasSubstr("<line class=\"limit\" data-pool-size=\"10\""));
  const std::string bars = Between(page, "data-chart=\"zombie\"", "</svg>");
  EXPECT_EQ(Count(bars, "<rect class=\"bar\""), 3u);
  EXPECT_THAT(bars, HasSubstr("data-mode=\"cutoff\" data-value=\"0.42\""));
  EXPECT_THAT(page, HasSubstr("id=\"s0-pool\""));
  EXPECT_THAT(page, HasSubstr("id=\"s0-goodput\""));
  EXPECT_THAT(page, HasSubstr("id=\"s0-zombie\""));
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
  cutoff["errors"].as_object()["<code>"] = 1;

  const std::string page = RenderLabReport(results);
  EXPECT_EQ(Count(page, "<script"), 1u);
  EXPECT_EQ(Count(page, "</script"), 1u);
  EXPECT_EQ(Count(page, "<!--"), 0u);
  EXPECT_EQ(Count(page, "<img"), 0u);
  EXPECT_EQ(Count(page, "<svg onload"), 0u);
  EXPECT_EQ(Count(page, "<b>not"), 0u);
  EXPECT_EQ(Count(page, "<i>db"), 0u);
  EXPECT_EQ(Count(page, "<k>"), 0u);
  EXPECT_THAT(page, HasSubstr("<tr data-figure=\"errors.&lt;code&gt;\" class=\"sub\"><th scope=\"row\">&lt;code&gt;</th>"));
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
  EXPECT_THAT(Between(page, "<tr data-figure=\"goodput_rps\">", "</tr>"),
              HasSubstr("<td data-mode=\"none\">\u2013</td><td data-mode=\"timeouts\">\u2013</td>"));
  EXPECT_THAT(Between(page, "<tr data-figure=\"p99_ms\">", "</tr>"), HasSubstr("<td data-mode=\"none\">\u2013</td>"));
  // The one present value of a row is not "best".
  EXPECT_THAT(Between(page, "<tr data-figure=\"goodput_rps\">", "</tr>"), Not(HasSubstr("best")));
  const std::string pool = Between(page, "data-chart=\"pool\"", "</svg>");
  EXPECT_EQ(Count(pool, "<path class=\"series\""), 0u);
  EXPECT_THAT(pool, HasSubstr("no timeline samples"));
  EXPECT_THAT(pool, HasSubstr("none (no samples)"));
  EXPECT_EQ(Count(Between(page, "data-chart=\"zombie\"", "</svg>"), "<rect class=\"bar\""), 3u);
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
  EXPECT_THAT(Between(page, "<tr data-figure=\"requests\">", "</tr>"), HasSubstr(">1,234,567<"));
  EXPECT_THAT(Between(page, "<tr data-figure=\"ok\">", "</tr>"), HasSubstr(">1234<"));
}

}  // namespace
}  // namespace cutoff::lab
