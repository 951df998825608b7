// Where tests inject faults into effect regions (see core/internal/fault_injection.hpp).
//
//   internal::ScopedFault stop_at_commit(effects::internal::kEffectStep,
//       [&](Step s, const Context&) -> asio::awaitable<void> {
//         if (s == Step::sending_commit) source.request_stop(StopReason::cancelled);
//         co_return;
//       });
#ifndef CUTOFF_EFFECTS_INTERNAL_FAULT_POINTS_HPP_
#define CUTOFF_EFFECTS_INTERNAL_FAULT_POINTS_HPP_

#include <boost/asio/awaitable.hpp>

#include "cutoff/core/context.hpp"
#include "cutoff/core/internal/fault_injection.hpp"
#include "cutoff/effects/effects.hpp"

namespace cutoff::effects::internal {

// At each step of every region, with the caller's context; the action may stop that context,
// wait, or throw as the step's failure.
inline constexpr cutoff::internal::FaultPoint<boost::asio::awaitable<void>(Step, const Context& caller)>
    kEffectStep{"effects.step"};

}  // namespace cutoff::effects::internal

#endif  // CUTOFF_EFFECTS_INTERNAL_FAULT_POINTS_HPP_
