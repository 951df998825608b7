#include "cutoff/resilience/fallback.hpp"

#include "cutoff/core/error.hpp"
#include "cutoff/core/error.hpp"

namespace cutoff::resilience::internal {

bool FallbackAllowed(const Context& ctx, const std::exception_ptr& error,
                     const std::function<bool(const std::exception_ptr&)>& accept) {
  if (is_cancellation(error)) return false;
  if (const Error* e = find_error(error); e && never_retried(e->code())) return false;
  if (ctx.stop_requested()) return false;
  return !accept || accept(error);
}

}  // namespace cutoff::resilience::internal
