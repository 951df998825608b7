// `cutoff lab`: the lab, which shows what deadlines do to a service under load.
//
//   cutoff lab report --results lab-results.json --out lab-report.html
//
// `lab report` renders a results document (docs/lab.md, "Results file") as one
// self-contained HTML page (lab/report_html.hpp). Exit codes: 0 when the page was
// written; 2 when the results cannot be read, are not JSON or are not a results document
// (and for bad usage); 1 when the page cannot be written.
#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

#include "commands.hpp"
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

}  // namespace

void AddLabCommand(CLI::App& app) {
  CLI::App* lab = app.add_subcommand(
      "lab",
      "The lab: scenarios run with no deadlines, with per-layer timeouts and with cutoff, side by side");
  // The runner will be `lab`'s own action; until it exists, `lab` needs a subcommand.
  lab->require_subcommand(1);
  CLI::App* report = lab->add_subcommand(
      "report",
      "Render a results document (lab-results.json) as one self-contained HTML page: a comparison\n"
      "table and charts of pool occupancy, goodput and zombie work per scenario. The page loads\n"
      "nothing from anywhere (it works opened from file://) and embeds the results it shows.\n"
      "Exit codes: 0 written; 2 unreadable, invalid or not a results document; 1 cannot write.");
  static ReportOptions opts;
  report->add_option("--results", opts.results_path, "The results document to read")->capture_default_str();
  report->add_option("--out", opts.out_path, "Where to write the page ('-': standard output)")
      ->capture_default_str();
  report->callback([] {
    const int code = RunReport(opts);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace cutoff::cli
