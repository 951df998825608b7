// Where tests inject faults into the HTTP client (see core/internal/fault_injection.hpp).
//
//   internal::ScopedFault slow_dns(http::internal::kClientResolve, [] { return 5s; });
#ifndef CUTOFF_HTTP_INTERNAL_FAULT_POINTS_HPP_
#define CUTOFF_HTTP_INTERNAL_FAULT_POINTS_HPP_

#include <chrono>

#include "cutoff/core/internal/fault_injection.hpp"

namespace cutoff::http::internal {

// Before the client's host name lookup: how much longer the lookup takes (a slow name server).
inline constexpr cutoff::internal::FaultPoint<std::chrono::milliseconds()> kClientResolve{"http.client.resolve"};

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_FAULT_POINTS_HPP_
