// The lab report's tables: a scenario's figures side by side, a column per mode, each figure
// defined under its name and the best value of a row marked where the modes differ; and the
// GraphQL fields each mode's last partial answer left out. A figure no mode recorded gets no
// row; one a mode did not record shows as "–".
//
//   report::FiguresTable(out, "chain", report::KindOf("chain", modes), modes, /*user_ms=*/250.0);
//   report::CutFieldsTable(out, "graphql", modes);  // nothing when no mode has cut_fields
#ifndef CUTOFF_APPS_CUTOFF_LAB_REPORT_TABLES_HPP_
#define CUTOFF_APPS_CUTOFF_LAB_REPORT_TABLES_HPP_

#include <optional>
#include <string>
#include <string_view>

#include "lab/report_model.hpp"

namespace cutoff::lab::report {

// The comparison table of a scenario; `user_ms` is how long the simulated user waits.
void FiguresTable(std::string& out, std::string_view scenario, const Kind& kind, const Modes& modes,
                  std::optional<double> user_ms);

// The last partial answer of each mode: a row per field any of them cut, a column per mode.
void CutFieldsTable(std::string& out, std::string_view scenario, const Modes& modes);

}  // namespace cutoff::lab::report

#endif  // CUTOFF_APPS_CUTOFF_LAB_REPORT_TABLES_HPP_
