// What the lab report reads from a results document (docs/lab.md, "Results file"): the three
// modes every scenario runs in, a scenario's modes and figures, what its slow requests are, its
// error codes and its timelines. Every reader accepts any value: what is missing, null or of
// the wrong type reads as absent, and numbers are finite and clamped to ±kLimit.
//
//   for (const boost::json::value* scenario : report::ScenarioList(results)) {
//     const report::Modes modes = report::ModesOf(*scenario);
//     std::optional<double> p99 = report::Fig(modes[2], "p99_ms");  // cutoff's
//   }
#ifndef CUTOFF_APPS_CUTOFF_LAB_REPORT_MODEL_HPP_
#define CUTOFF_APPS_CUTOFF_LAB_REPORT_MODEL_HPP_

#include <array>
#include <boost/json/value.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cutoff::lab::report {

// The three modes every scenario runs in, in column order, with their chart colours
// (distinguishable with the common colour-vision deficiencies, readable on white).
struct Mode {
  std::string_view key;
  std::string_view meaning;
  std::string_view color;
  std::string_view phrase;       // in a sentence: "under cutoff, ..."
  std::string_view description;  // in the page's header, after the mode's name
};
inline constexpr std::array<Mode, 3> kModes{{
    {"none", "no deadlines", "#b2457e", "with no deadlines", "no deadlines anywhere"},
    {"timeouts", "per-layer timeouts", "#d08300", "under per-layer timeouts",
     "each layer has its own timeout, nothing propagated"},
    {"cutoff", "deadline propagation", "#1f6fb2", "under cutoff", "the request's deadline propagated to every layer"},
}};
// The order modes are named in sentences: cutoff first, against the other two.
inline constexpr std::array<std::size_t, 3> kSentenceOrder{2, 1, 0};

inline constexpr std::string_view kMissing = "\u2013";  // en dash
inline constexpr double kLimit = 1e15;                  // values beyond are clamped before any arithmetic

// ---- reading the document -------------------------------------------------------------

// `v`'s member `key`, or null when `v` is null or not an object.
const boost::json::value* Field(const boost::json::value* v, std::string_view key);
// A finite number, clamped to ±kLimit; nothing for anything else.
std::optional<double> Number(const boost::json::value* v);
// A string, or empty for anything else.
std::string_view String(const boost::json::value* v);

// The document's scenarios, in its order.
std::vector<const boost::json::value*> ScenarioList(const boost::json::value& results);

// ---- a scenario's modes and figures -----------------------------------------------------

using Modes = std::array<const boost::json::value*, 3>;  // kModes order; null where a mode is absent

Modes ModesOf(const boost::json::value& scenario);

// A mode's figure `key`.
std::optional<double> Fig(const boost::json::value* mode, std::string_view key);

// Whether any mode sent cheap lookups (the scenarios that have them).
bool HasFastRequests(const Modes& modes);

// Whether the lab had to stop work still running after the mode's load ended (`drained` is
// false), which makes its zombie figures lower bounds.
bool LeftWorkRunning(const boost::json::value* mode);

// What a scenario's slow requests are.
struct Kind {
  std::string_view noun;    // a heading: "Valuation requests"
  std::string_view plural;  // in a sentence: "valuation requests"
  std::string_view what;    // what one is
  bool graphql;             // its result is the cut fields
  bool overload = false;    // its result is goodput under overload and the recovery after it
  bool orders = false;      // its result is what the orders did against what the users were told
};

Kind KindOf(std::string_view name, const Modes& modes);

// An errors object's codes, the most frequent first (then by name).
std::vector<std::pair<std::string, double>> Codes(const boost::json::value* mode, std::string_view key);

// ---- timelines ------------------------------------------------------------------------

struct Sample {
  double t;
  double y;
};

// The samples of one timeline field, in time order; samples without both numbers are skipped.
std::vector<Sample> Timeline(const boost::json::value* mode, std::string_view key);
// The same for any array of objects of a mode with a time `t` (e.g. "fast_p99_windows").
std::vector<Sample> Points(const boost::json::value* mode, std::string_view array, std::string_view key);

// A phase of an overload run, in seconds since the start of its load.
struct Phase {
  std::string name;
  double from, to;
};

// The phases of the first mode that has any (overload runs), in time order; those without a
// name or both times are skipped.
std::vector<Phase> Phases(const Modes& modes);

}  // namespace cutoff::lab::report

#endif  // CUTOFF_APPS_CUTOFF_LAB_REPORT_MODEL_HPP_
