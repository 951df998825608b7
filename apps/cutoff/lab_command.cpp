// `cutoff lab`: the lab, which shows what deadlines do to a service under load.
//
//   cutoff lab report --results lab-results.json --out lab-report.html
//
// `lab report` renders a results document (docs/lab.md, "Results file") as one
// self-contained HTML page (lab/report_html.hpp). Exit codes: 0 when the page was
// written; 2 when the results cannot be read, are not JSON or are not a results document
// (and for bad usage); 1 when the page cannot be written.
#include <algorithm>
#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "commands.hpp"
#include "conventions.hpp"
#include "lab/lab_runner.hpp"
#include "lab/report_html.hpp"

namespace cutoff::cli {
namespace {

namespace json = boost::json;

struct ReportOptions {
  std::string results_path = "lab-results.json";
  std::string out_path = "lab-report.html";
};

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "cutoff lab report: %s\n", message.c_str());
  return code;
}

// The file's bytes, or false with the reason.
bool Slurp(const std::string& path, std::string* out, std::string* error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    *error = "is a directory";
    return false;
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = errno ? std::strerror(errno) : "cannot open";
    return false;
  }
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) {
    *error = "read error";
    return false;
  }
  return true;
}

// Parses `text`; on failure says what and where (line and column, from 1).
bool ParseJson(const std::string& text, json::value* out, std::string* error) {
  json::stream_parser parser;
  json::error_code ec;
  const std::size_t used = parser.write(text.data(), text.size(), ec);
  if (!ec) parser.finish(ec);
  if (ec) {
    const std::size_t at = std::min(used, text.size());
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') {
        ++line, column = 1;
      } else {
        ++column;
      }
    }
    *error = ec.message() + " at line " + std::to_string(line) + ", column " + std::to_string(column);
    return false;
  }
  *out = parser.release();
  return true;
}

// Only a document that says it is one: the renderer copes with anything, but a page made
// from the wrong file would be a silent mistake.
bool IsResultsDocument(const json::value& v, std::string* error) {
  const json::object* doc = v.if_object();
  if (!doc) {
    *error = "the document is not a JSON object";
    return false;
  }
  const json::value* version = doc->if_contains("version");
  if (!version || !version->is_number() || version->to_number<double>() != 1) {
    *error = version ? "unsupported \"version\" " + json::serialize(*version) + " (this cutoff reads version 1)"
                     : "no \"version\" (expected 1)";
    return false;
  }
  const json::value* scenarios = doc->if_contains("scenarios");
  if (!scenarios || !scenarios->is_array()) {
    *error = "no \"scenarios\" array";
    return false;
  }
  return true;
}

// Writes next to the destination and renames, so a reader never sees half a page.
bool WritePage(const std::string& path, const std::string& page, std::string* error) {
  if (path == "-") {
    const bool ok = std::fwrite(page.data(), 1, page.size(), stdout) == page.size() && std::fflush(stdout) == 0;
    if (!ok) *error = std::strerror(errno);
    return ok;
  }
  const std::string temporary = path + ".tmp";
  {
    errno = 0;
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      *error = errno ? std::strerror(errno) : "cannot open";
      return false;
    }
    out.write(page.data(), static_cast<std::streamsize>(page.size()));
    out.close();
    if (!out) {
      *error = "write error";
      std::remove(temporary.c_str());
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    *error = ec.message();
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

int RunReport(const ReportOptions& opts) {
  std::string text, error;
  if (!Slurp(opts.results_path, &text, &error)) return Fail(2, "cannot read " + opts.results_path + ": " + error);
  json::value results;
  if (!ParseJson(text, &results, &error)) return Fail(2, opts.results_path + " is not valid JSON: " + error);
  if (!IsResultsDocument(results, &error)) {
    return Fail(2, opts.results_path + " is not a lab results document: " + error);
  }
  const std::string page = lab::RenderLabReport(results);
  if (!WritePage(opts.out_path, page, &error)) return Fail(1, "cannot write " + opts.out_path + ": " + error);
  if (opts.out_path != "-") {
    const std::size_t scenarios = results.as_object().at("scenarios").as_array().size();
    std::fprintf(stderr, "cutoff lab report: wrote %s (%zu scenario%s, %zu KiB)\n", opts.out_path.c_str(), scenarios,
                 scenarios == 1 ? "" : "s", (page.size() + 1023) / 1024);
  }
  return 0;
}

struct RunOptions {
  lab::LabOptions lab;
  std::string results_path = "lab-results.json";
  std::string report_path = "lab-report.html";
  bool quiet = false;
};

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= s.size()) {
    const std::size_t comma = std::min(s.find(',', from), s.size());
    if (comma > from) out.push_back(s.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

int RunLabCommand(RunOptions& opts, const std::string& scenarios, const std::string& modes) {
  if (!scenarios.empty()) opts.lab.scenarios = SplitList(scenarios);
  if (!modes.empty()) opts.lab.modes = SplitList(modes);
  opts.lab.progress = !opts.quiet;
  json::value results;
  try {
    results = lab::RunLab(opts.lab);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "cutoff lab: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cutoff lab: %s\n", e.what());
    return 1;
  }
  std::string error;
  if (!WritePage(opts.results_path, json::serialize(results) + "\n", &error)) {
    std::fprintf(stderr, "cutoff lab: cannot write %s: %s\n", opts.results_path.c_str(), error.c_str());
    return 1;
  }
  if (!WritePage(opts.report_path, lab::RenderLabReport(results), &error)) {
    std::fprintf(stderr, "cutoff lab: cannot write %s: %s\n", opts.report_path.c_str(), error.c_str());
    return 1;
  }
  std::printf("\n%s\nresults: %s\nreport:  %s\n", lab::FormatTable(results).c_str(),
              std::filesystem::absolute(opts.results_path).string().c_str(),
              std::filesystem::absolute(opts.report_path).string().c_str());
  return 0;
}

}  // namespace

void AddLabCommand(CLI::App& app) {
  CLI::App* lab = app.add_subcommand(
      "lab", "The lab: scenarios run with no deadlines, with per-layer timeouts and with cutoff, side by side");
  lab->description(
      "The lab: the reference warehouse services under load, run with no deadlines (none), with\n"
      "per-layer timeouts (timeouts) and with cutoff, side by side. Prints a live progress line,\n"
      "then a comparison table; writes lab-results.json and lab-report.html (docs/lab.md).");
  lab->require_subcommand(0, 1);
  static RunOptions run;
  static std::string scenarios, modes;
  lab->add_option("--db", run.lab.db, "Database URL: sqlite:PATH or postgresql://... (default: SQLite in $TMPDIR)");
  lab->add_option("--scenarios", scenarios, "Comma-separated: chain,amplification,graphql,overload,orders (default: all)");
  lab->add_option("--modes", modes, "Comma-separated: none,timeouts,cutoff (default: all)");
  lab->add_option("--scale", run.lab.scale, "The timeout table (5 s / 2 s / 10 s / 8 s) times this")
      ->check(Number(0.005, 2.0))
      ->capture_default_str();
  lab->add_option("--duration-s", run.lab.duration_s, "Load per scenario and mode, in seconds")
      ->check(Number(1.0, 3600.0))
      ->capture_default_str();
  lab->add_option("--inventory-transport", run.lab.inventory_transport,
                  "How the gateway calls the inventory: http, or grpc (inventory.proto)")
      ->check(CLI::IsMember({"http", "grpc"}))
      ->capture_default_str();
  lab->add_option("--pool-size", run.lab.pool_size, "The inventory service's database connections")
      ->check(Number(1, 256))
      ->capture_default_str();
  lab->add_option("--rate", run.lab.rate, "Requests per second (0: from the pool size and the scale)")
      ->check(Number(0.0, 100000.0))
      ->capture_default_str();
  lab->add_option("--results", run.results_path, "Where to write the results")->capture_default_str();
  lab->add_option("--report", run.report_path, "Where to write the report page")->capture_default_str();
  lab->add_flag("--quiet", run.quiet, "No progress line");
  lab->callback([lab] {
    if (lab->got_subcommand("report")) return;
    const int code = RunLabCommand(run, scenarios, modes);
    if (code != 0) throw CLI::RuntimeError(code);
  });
  CLI::App* report =
      lab->add_subcommand("report",
                          "Render a results document (lab-results.json) as one self-contained HTML page: a comparison\n"
                          "table and charts of pool occupancy, goodput and zombie work per scenario. The page loads\n"
                          "nothing from anywhere (it works opened from file://) and embeds the results it shows.\n"
                          "Exit codes: 0 written; 2 unreadable, invalid or not a results document; 1 cannot write.");
  static ReportOptions opts;
  report->add_option("--results", opts.results_path, "The results document to read")->capture_default_str();
  report->add_option("--out", opts.out_path, "Where to write the page ('-': standard output)")->capture_default_str();
  report->callback([] {
    const int code = RunReport(opts);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace cutoff::cli
