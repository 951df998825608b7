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
#include <string_view>

#include "cutoff/core/context.hpp"
#include "cutoff/core/internal/fault_injection.hpp"
#include "cutoff/effects/effects.hpp"

namespace cutoff::effects::internal {

// At each step of every region, with the caller's context; the action may stop that context,
// wait, or throw as the step's failure.
inline constexpr cutoff::internal::FaultPoint<boost::asio::awaitable<void>(Step, const Context& caller)>
    kEffectStep{"effects.step"};

// Where a saga stands when its step point is reached.
enum class SagaPoint { before_step, after_step };

// Before each step, just before the saga checks its context, and after each step's outcome
// is journalled, with the saga's context; the action may stop it, wait, or end the process.
inline constexpr cutoff::internal::FaultPoint<boost::asio::awaitable<void>(std::string_view step, SagaPoint point,
                                                                           const Context& saga)>
    kSagaStep{"effects.saga_step"};

}  // namespace cutoff::effects::internal

#endif  // CUTOFF_EFFECTS_INTERNAL_FAULT_POINTS_HPP_
