// The lab report page: `lab-results.json` rendered as one self-contained HTML page.
//
//   boost::json::value results = boost::json::parse(text);
//   std::string page = cutoff::lab::RenderLabReport(results);
//
// The page needs nothing else: CSS is inline, the charts are SVG drawn here, there is no
// script, and its Content-Security-Policy forbids every fetch, so it works opened from
// file:// and can be mailed around. The results document is embedded as well (in
// <script type="application/json" id="lab-results">), so the page carries its own data.
//
// The page leads with what differs between the modes, in words generated from the figures
// (SummarizeLab, which `cutoff lab` also prints under its table), then shows each scenario
// with every figure defined where it is shown.
//
// Any value is accepted: a figure that is missing, null or of the wrong type is shown as
// "–", a scenario without a timeline gets empty charts, and anything that is not a results
// document gives a page that says so. Every string from the document is escaped; the output
// depends only on the document (no clock, no locale), byte for byte.
// The document's shape is described in docs/lab.md ("Results file").
//
// The page is put together from parts with one job each: report_model.hpp reads the document,
// report_summary.hpp says what it shows, report_tables.hpp and report_charts.hpp draw it, and
// report_page.hpp holds the page's fixed head, style sheet and foot.
#ifndef CUTOFF_APPS_CUTOFF_LAB_REPORT_HTML_HPP_
#define CUTOFF_APPS_CUTOFF_LAB_REPORT_HTML_HPP_

#include <boost/json/value.hpp>
#include <string>

#include "lab/report_summary.hpp"  // SummarizeLab, which the page leads with

namespace cutoff::lab {

std::string RenderLabReport(const boost::json::value& results);

}  // namespace cutoff::lab

#endif  // CUTOFF_APPS_CUTOFF_LAB_REPORT_HTML_HPP_
