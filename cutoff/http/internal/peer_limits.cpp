#include "cutoff/http/internal/peer_limits.hpp"

namespace cutoff::http::internal {

namespace ip = boost::asio::ip;

std::string PeerKey(ip::address address, const ServerLimits& limits) {
  if (limits.max_connections_per_peer == 0) return {};
  if (address.is_v6() && address.to_v6().is_v4_mapped()) address = ip::make_address_v4(ip::v4_mapped, address.to_v6());
  if (address.is_loopback() && !limits.limit_loopback_peers) return {};
  if (address.is_v4()) {
    const auto b = address.to_v4().to_bytes();
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }
  const auto b = address.to_v6().to_bytes();
  return "6" + std::string(reinterpret_cast<const char*>(b.data()), 8);
}

bool PeerCounts::Admit(const std::string& key) {
  if (key.empty()) return true;
  std::lock_guard lock(mu_);
  std::size_t& n = open_[key];
  if (n >= max_per_peer_) {
    if (n == 0) open_.erase(key);
    return false;
  }
  ++n;
  return true;
}

void PeerCounts::Release(const std::string& key) {
  if (key.empty()) return;
  std::lock_guard lock(mu_);
  auto it = open_.find(key);
  if (it != open_.end() && --it->second == 0) open_.erase(it);
}

}  // namespace cutoff::http::internal
