// Request ids: made for a request that arrives without a usable one, and checked before a
// caller's id is logged or echoed. Every server (HTTP, gRPC) uses the same two rules.
//
//   std::string id = cutoff::observe::valid_request_id(theirs) ? std::string(theirs)
//                                                               : cutoff::observe::new_request_id();
#ifndef CUTOFF_OBSERVE_REQUEST_ID_HPP_
#define CUTOFF_OBSERVE_REQUEST_ID_HPP_

#include <string>
#include <string_view>

namespace cutoff::observe {

// True when `id` may be logged and echoed as it is: 1 to 128 characters of [A-Za-z0-9-_.:/+=].
bool valid_request_id(std::string_view id) noexcept;

// 15 hex digits (60 random bits): enough to correlate logs, and short enough for the string's
// inline buffer, so the id and its copies cost no allocation.
std::string new_request_id();

}  // namespace cutoff::observe

#endif  // CUTOFF_OBSERVE_REQUEST_ID_HPP_
