// HTTP's Retry-After field (RFC 9110 section 10.2.3): how long a server that answered 503 (or
// 429) asks its client to wait before trying again. http::Client reads it into the error it
// throws (Error::retry_after), so the retry policy waits at least that long; http::Server
// writes it for an error that carries one.
//
//   auto wait = cutoff::http::parse_retry_after("120", std::chrono::system_clock::now());  // 120 s
//   wait = cutoff::http::parse_retry_after("Wed, 21 Oct 2026 07:28:00 GMT", now);            // until then
//   std::string value = cutoff::http::format_retry_after(1500ms);                            // "2"
#ifndef CUTOFF_HTTP_RETRY_AFTER_HPP_
#define CUTOFF_HTTP_RETRY_AFTER_HPP_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "cutoff/core/clock.hpp"

namespace cutoff::http {

// The longest wait a Retry-After value is read as: a larger one (or a date further away) is
// this, which no retry policy waits for.
inline constexpr Duration kMaxRetryAfter = std::chrono::hours(24);

// delay-seconds (digits only) or an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), relative
// to `now`; a date already past is zero. nullopt for anything else: a signed or fractional
// number, surrounding junk, the obsolete RFC 850 and asctime date forms.
std::optional<Duration> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now);

// The field's value for `wait`: whole seconds, rounded up, at least 1.
std::string format_retry_after(Duration wait);

}  // namespace cutoff::http

#endif  // CUTOFF_HTTP_RETRY_AFTER_HPP_
