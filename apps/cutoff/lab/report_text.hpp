// How the lab report writes what it shows: figures as people read them (fixed decimals,
// thousands separated, independent of the locale), strings from the document escaped, and a mode's
// colour chip.
//
//   out += report::Display(12345.6, 1);        // "12,345.6"
//   out += report::Percent(0.964);             // "96%"
//   report::AppendHtml(out, "<b>db</b>");      // "&lt;b&gt;db&lt;/b&gt;"
//   report::AppendSwatch(out, report::kModes[2]);
#ifndef CUTOFF_APPS_CUTOFF_LAB_REPORT_TEXT_HPP_
#define CUTOFF_APPS_CUTOFF_LAB_REPORT_TEXT_HPP_

#include <string>
#include <string_view>

#include "lab/report_model.hpp"

namespace cutoff::lab::report {

// ---- figures --------------------------------------------------------------------------

// `v` with `decimals` digits after the point, independent of the locale; -0 prints as 0.
std::string Fixed(double v, int decimals);
// The shortest text that reads back as `v` (settings are shown as written).
std::string Shortest(double v);
// A figure for people: fixed decimals, thousands separated from 10,000 on.
std::string Display(double v, int decimals);
// Counts are integers; a count that is not is shown with two decimals rather than rounded.
int CountDecimals(double v);
std::string Count(double v);
// A share (0.964) as a percentage: "96%", "1.0%", "0.4%", "0%".
std::string Percent(double share);
// `s` with its first letter upper case (ASCII).
std::string Capitalized(std::string s);

// ---- markup ---------------------------------------------------------------------------

// Text or an attribute value: markup characters become references (cutoff/core/html_escape.hpp),
// control characters but newline and tab (which HTML does not allow) the replacement character.
void AppendHtml(std::string& out, std::string_view s);

// The mode's colour chip, as every table header, bar and the page's header show it.
void AppendSwatch(std::string& out, const Mode& mode);

}  // namespace cutoff::lab::report

#endif  // CUTOFF_APPS_CUTOFF_LAB_REPORT_TEXT_HPP_
