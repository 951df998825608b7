#include "cutoff/observe/request_id.hpp"

#include <cstdint>
#include <random>

namespace cutoff::observe {

bool valid_request_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || c == ':' || c == '/' || c == '+' || c == '=';
    if (!ok) return false;
  }
  return true;
}

std::string new_request_id() {
  // splitmix64 over a per-thread sequence seeded once: ids need to be distinct, not secret,
  // and this is a few instructions against a Mersenne twister's state update.
  thread_local std::uint64_t sequence = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  std::uint64_t v = (sequence += 0x9e3779b97f4a7c15ULL);
  v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
  v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
  v ^= v >> 31;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(15, '0');
  for (int i = 14; i >= 0; --i, v >>= 4) out[i] = kHex[v & 15];
  return out;
}

}  // namespace cutoff::observe
