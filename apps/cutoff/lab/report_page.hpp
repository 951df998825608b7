// The lab report page's fixed parts: the head (a Content-Security-Policy that forbids every
// fetch, the title, the inline style sheet) and the foot (what the page's marks mean, and the
// results document embedded as inert JSON). What lies between is written from the document.
//
//   std::string out;
//   report::OpenPage(out, "sqlite");  // <!DOCTYPE html> ... <main>
//   ...                               // the header and the scenarios
//   report::ClosePage(out, results);  // <footer> ... </html>
#ifndef CUTOFF_APPS_CUTOFF_LAB_REPORT_PAGE_HPP_
#define CUTOFF_APPS_CUTOFF_LAB_REPORT_PAGE_HPP_

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

namespace cutoff::lab::report {

// From the doctype to the opening of <main>; `database` (escaped) goes into the title.
void OpenPage(std::string& out, std::string_view database);

// The footer, the end of <main>, `results` in <script type="application/json" id="lab-results">
// and the end of the page.
void ClosePage(std::string& out, const boost::json::value& results);

}  // namespace cutoff::lab::report

#endif  // CUTOFF_APPS_CUTOFF_LAB_REPORT_PAGE_HPP_
