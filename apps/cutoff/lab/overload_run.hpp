// The overload scenario in one mode: measure the services' capacity, offer about three times
// that with users who retry, then take the excess away and watch whether the services recover.
//
//   OverloadRun run(options, OverloadSpec(options), wh::Mode::timeouts, db, postgres, &steps);
//   boost::json::object figures = run.Run();   // the common figures, and capacity_per_s,
//                                              // goodput_per_s, goodput_ratio, recovery_s, ...
//
// Phases (lengths from LabOptions::duration_s, 19 s at its default of 10):
//   capacity  closed loop: half as many users as connections, each sending its next request
//             when the last one is answered; complete answers per second are the capacity
//   baseline  open loop at half the capacity: the p99 of the cheap lookups here is the baseline
//   overload  open loop at three times the capacity; users retry a request that got no
//             complete answer (twice, after a short pause, the same in every mode)
//   recovery  open loop at half the capacity again; the lookups' p99 in half-second windows
//             says when the services are back
// Cheap bin lookups run at a fixed rate through every phase. docs/lab.md ("overload") has the
// reasoning and the figures.
#ifndef CUTOFF_APPS_CUTOFF_LAB_OVERLOAD_RUN_HPP_
#define CUTOFF_APPS_CUTOFF_LAB_OVERLOAD_RUN_HPP_

#include <string>
#include <vector>

#include "lab/mode_run.hpp"

namespace cutoff::lab::internal {

// The overload scenario's name, title, request and retries.
ScenarioSpec OverloadSpec(const LabOptions& options);

class OverloadRun final : public ModeRun {
 public:
  OverloadRun(const LabOptions& lab, const ScenarioSpec& spec, wh::Mode mode, std::string db, bool postgres,
              std::int64_t* valuation_steps);

 private:
  struct Phase {
    const char* name;
    double from, to;  // seconds since the load started
  };

  boost::asio::awaitable<void> Load() override;
  void AddFigures(json::object& figures) override;
  std::string_view PhaseAt(double t) const override;

  // Open-loop arrivals at `rate` per second until `until` (seconds since the start).
  boost::asio::awaitable<void> Arrivals(double rate, double until);
  // One closed-loop user of the capacity phase.
  boost::asio::awaitable<void> ClosedLoopUser(int user, double until);
  // Cheap lookups at a fixed rate through every phase.
  boost::asio::awaitable<void> Lookups();
  // Complete answers to the scenario's request that ended in [from, to), per second.
  double CompletePerSecond(double from, double to) const;

  std::vector<Phase> phases_;  // capacity, baseline, overload, recovery
  double capacity_ = 0;        // measured in the capacity phase
  int next_user_ = 0;
};

}  // namespace cutoff::lab::internal

#endif  // CUTOFF_APPS_CUTOFF_LAB_OVERLOAD_RUN_HPP_
