// W3C Trace Context: accepting `traceparent` from a caller and forwarding it downstream.
//
//   std::optional<TraceParent> in = parse_traceparent(request.header("traceparent"));
//   TraceParent out = in ? in->child() : TraceParent::root();   // new span, same trace
//   client_request.set("traceparent", out.to_string());
//
// The parser follows the W3C Trace Context recommendation (level 1): version 00 takes exactly
// `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`; all-zero ids, upper-case hex and
// version ff are rejected; a higher version is read by its first four fields (as the spec asks
// of forward-compatible parsers). A rejected header starts a new trace rather than failing
// the request.
#ifndef CUTOFF_OBSERVE_TRACE_HPP_
#define CUTOFF_OBSERVE_TRACE_HPP_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cutoff::observe {

struct TraceParent {
  std::array<std::uint8_t, 16> trace_id{};
  std::array<std::uint8_t, 8> parent_id{};
  std::uint8_t flags = 0;  // bit 0: sampled

  bool sampled() const noexcept { return flags & 1; }
  // The same trace with a fresh random span id: what to send to the next service.
  TraceParent child() const;
  // A new trace (random ids), sampled.
  static TraceParent root();
  // "00-<trace id>-<parent id>-<flags>"
  std::string to_string() const;
  std::string trace_id_hex() const;
  std::string parent_id_hex() const;
};

std::optional<TraceParent> parse_traceparent(std::string_view header);

}  // namespace cutoff::observe

#endif  // CUTOFF_OBSERVE_TRACE_HPP_
