// What a lab run shows, in plain sentences generated from its figures; the report page leads
// with them and `cutoff lab` prints them under its table.
//
//   const cutoff::lab::LabSummary summary = cutoff::lab::SummarizeLab(results);
//   for (const std::string& sentence : summary.run) std::puts(sentence.c_str());
#ifndef CUTOFF_APPS_CUTOFF_LAB_REPORT_SUMMARY_HPP_
#define CUTOFF_APPS_CUTOFF_LAB_REPORT_SUMMARY_HPP_

#include <boost/json/value.hpp>
#include <string>
#include <utility>
#include <vector>

namespace cutoff::lab {

// What a run shows, in plain sentences generated from its figures: a few about the whole run
// (what differs between the modes), then a few per scenario, named, in the document's order.
// A sentence whose figures are missing is left out; any value gives some (maybe no) sentences.
struct LabSummary {
  std::vector<std::string> run;
  std::vector<std::pair<std::string, std::vector<std::string>>> scenarios;
};
LabSummary SummarizeLab(const boost::json::value& results);

}  // namespace cutoff::lab

#endif  // CUTOFF_APPS_CUTOFF_LAB_REPORT_SUMMARY_HPP_
