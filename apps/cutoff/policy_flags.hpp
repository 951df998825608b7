// The command line's flags for a resilience policy (resilience/policy.hpp): how calls to one
// upstream are tried. One set of names in every command, with a prefix naming the upstream
// where a command has several (`--inventory-attempts`).
//
//   PolicyFlags flags = PolicyFlags::from(wh::default_inventory_policy());
//   AddPolicyFlags(app, "inventory-", "calls to the inventory", flags);
//   resilience::PolicyOptions policy = flags.policy();
#ifndef CUTOFF_APPS_CUTOFF_POLICY_FLAGS_HPP_
#define CUTOFF_APPS_CUTOFF_POLICY_FLAGS_HPP_

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cutoff/resilience/policy.hpp"

namespace cutoff::cli {

struct PolicyFlags {
  int attempts = 1;                      // --attempts: 1, no retries
  double retry_budget = 0.1;             // --retry-budget: retries per call; negative: no budget
  std::int64_t attempt_timeout_ms = 0;   // --attempt-timeout-ms: 0, none (or the command's)
  std::uint32_t breaker_failures = 0;    // --breaker-failures: 0, no breaker
  std::int64_t breaker_open_ms = 5'000;  // --breaker-open-ms
  std::int64_t hedge_ms = 0;             // --hedge-ms: 0, no hedging
  double throttle_k = 0;                 // --throttle-k: 0, no client-side throttling
  std::size_t max_concurrent = 0;        // --max-concurrent: 0, no bulkhead
  std::size_t max_queue = 64;            // --max-queue

  // The flags that stand for `p` (its backoff and breaker thresholds other than these are kept).
  static PolicyFlags from(const resilience::PolicyOptions& p);
  // The policy they describe, on top of `base` (whose other settings stay).
  resilience::PolicyOptions policy(resilience::PolicyOptions base = {}) const;
};

// Adds --<prefix>attempts, --<prefix>retry-budget, --<prefix>breaker-failures,
// --<prefix>breaker-open-ms, --<prefix>hedge-ms and --<prefix>throttle-k; with `bulkhead`, --<prefix>max-concurrent
// and --<prefix>max-queue; with `attempt_timeout`, --<prefix>attempt-timeout-ms. `what` names
// the calls in the help text ("calls to the inventory"). Defaults are shown as they are in `f`.
void AddPolicyFlags(CLI::App* app, const std::string& prefix, const std::string& what, PolicyFlags& f, bool bulkhead,
                    bool attempt_timeout);

}  // namespace cutoff::cli

#endif  // CUTOFF_APPS_CUTOFF_POLICY_FLAGS_HPP_
