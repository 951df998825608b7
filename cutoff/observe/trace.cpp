#include "cutoff/observe/trace.hpp"

#include <random>

namespace cutoff::observe {
namespace {

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case is not allowed
}

template <std::size_t N>
bool ReadHex(std::string_view s, std::array<std::uint8_t, N>& out) {
  if (s.size() != N * 2) return false;
  bool any = false;
  for (std::size_t i = 0; i < N; ++i) {
    const int hi = Hex(s[2 * i]), lo = Hex(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
    any = any || out[i] != 0;
  }
  return any;  // all zeros is invalid for both ids
}

template <std::size_t N>
std::string ToHex(const std::array<std::uint8_t, N>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(N * 2);
  for (std::uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

template <std::size_t N>
void FillRandom(std::array<std::uint8_t, N>& out) {
  thread_local std::mt19937_64 rng(std::random_device{}());
  do {
    for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  } while (out == std::array<std::uint8_t, N>{});
}

}  // namespace

std::optional<TraceParent> parse_traceparent(std::string_view h) {
  // version "-" trace-id "-" parent-id "-" flags [ "-" future fields ]
  if (h.size() < 55) return std::nullopt;
  const int v_hi = Hex(h[0]), v_lo = Hex(h[1]);
  if (v_hi < 0 || v_lo < 0 || h[2] != '-') return std::nullopt;
  const int version = v_hi * 16 + v_lo;
  if (version == 0xff) return std::nullopt;
  if (version == 0 && h.size() != 55) return std::nullopt;
  if (version > 0 && h.size() > 55 && h[55] != '-') return std::nullopt;
  if (h[35] != '-' || h[52] != '-') return std::nullopt;
  TraceParent t;
  if (!ReadHex(h.substr(3, 32), t.trace_id)) return std::nullopt;
  if (!ReadHex(h.substr(36, 16), t.parent_id)) return std::nullopt;
  const int f_hi = Hex(h[53]), f_lo = Hex(h[54]);
  if (f_hi < 0 || f_lo < 0) return std::nullopt;
  t.flags = static_cast<std::uint8_t>(f_hi * 16 + f_lo);
  return t;
}

TraceParent TraceParent::child() const {
  TraceParent c = *this;
  FillRandom(c.parent_id);
  return c;
}

TraceParent TraceParent::root() {
  TraceParent t;
  FillRandom(t.trace_id);
  FillRandom(t.parent_id);
  t.flags = 1;
  return t;
}

std::string TraceParent::trace_id_hex() const { return ToHex(trace_id); }
std::string TraceParent::parent_id_hex() const { return ToHex(parent_id); }

std::string TraceParent::to_string() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "00-" + trace_id_hex() + "-" + parent_id_hex() + "-";
  out.push_back(kDigits[flags >> 4]);
  out.push_back(kDigits[flags & 15]);
  return out;
}

}  // namespace cutoff::observe
