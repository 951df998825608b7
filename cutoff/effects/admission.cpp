#include "cutoff/effects/admission.hpp"

#include <string>

#include "cutoff/core/error.hpp"

namespace cutoff::effects {

std::optional<AdmissionLimit::Ticket> AdmissionLimit::try_enter() noexcept {
  std::size_t n = in_flight_.load(std::memory_order_relaxed);
  do {
    if (n >= max_) {
      rejected_.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
  } while (!in_flight_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel, std::memory_order_relaxed));
  return Ticket(this);
}

AdmissionLimit::Ticket AdmissionLimit::enter(std::string_view what, std::string_view request_id) {
  if (auto t = try_enter()) return std::move(*t);
  throw Error(ErrorCode::overloaded,
              std::string(what) + ": " + std::to_string(max_) + " effects already in flight; nothing was written",
              std::string(request_id));
}

}  // namespace cutoff::effects
