// The per-peer connection limit (ServerLimits::max_connections_per_peer): what a peer's
// address counts under, and the open connections counted by it.
//
//   internal::PeerCounts peers(limits.max_connections_per_peer);
//   std::string key = internal::PeerKey(endpoint.address(), limits);
//   if (!peers.Admit(key)) ...;  // refuse with 503
//   ...
//   peers.Release(key);          // when the connection closes
#ifndef CUTOFF_HTTP_INTERNAL_PEER_LIMITS_HPP_
#define CUTOFF_HTTP_INTERNAL_PEER_LIMITS_HPP_

#include <boost/asio/ip/address.hpp>
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cutoff/http/server.hpp"

namespace cutoff::http::internal {

// What `address` counts under for the per-peer limit; empty: it is not limited (no limit, or
// a loopback peer while `limit_loopback_peers` is off). An IPv6 peer counts by its /64, which
// one host usually holds whole (so rotating addresses within it gains nothing); an
// IPv4-mapped address counts as the IPv4 one.
std::string PeerKey(boost::asio::ip::address address, const ServerLimits& limits);

// Open connections by PeerKey. Thread-safe.
class PeerCounts {
 public:
  explicit PeerCounts(std::size_t max_per_peer) : max_per_peer_(max_per_peer) {}

  // Counts a connection from `key`; false (and nothing counted) when that peer is at its
  // limit. An empty key is always admitted and never counted.
  bool Admit(const std::string& key);
  // The connection counted by Admit(key) closed.
  void Release(const std::string& key);

 private:
  const std::size_t max_per_peer_;
  std::mutex mu_;
  std::unordered_map<std::string, std::size_t> open_;  // guarded by mu_
};

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_PEER_LIMITS_HPP_
