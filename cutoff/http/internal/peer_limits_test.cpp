#include "cutoff/http/internal/peer_limits.hpp"

#include <gtest/gtest.h>

namespace cutoff::http::internal {
namespace {

namespace ip = boost::asio::ip;

std::string Key(std::string_view address, ServerLimits limits = {}) {
  return PeerKey(ip::make_address(std::string(address)), limits);
}

TEST(PeerLimits, AnIpv4PeerCountsByItsAddress) {
  EXPECT_EQ(Key("203.0.113.7"), Key("203.0.113.7"));
  EXPECT_NE(Key("203.0.113.7"), Key("203.0.113.8"));
  EXPECT_FALSE(Key("203.0.113.7").empty());
}

TEST(PeerLimits, AnIpv4MappedPeerCountsAsItsIpv4Address) { EXPECT_EQ(Key("::ffff:203.0.113.7"), Key("203.0.113.7")); }

TEST(PeerLimits, AnIpv6PeerCountsByItsSlash64) {
  EXPECT_EQ(Key("2001:db8:1:2::1"), Key("2001:db8:1:2:ffff:ffff:ffff:ffff"));
  EXPECT_NE(Key("2001:db8:1:2::1"), Key("2001:db8:1:3::1"));
}

TEST(PeerLimits, LoopbackIsNotLimitedUnlessAskedAndNoLimitMeansNoKey) {
  EXPECT_EQ(Key("127.0.0.1"), "");
  EXPECT_EQ(Key("127.0.0.2"), "");
  EXPECT_EQ(Key("::1"), "");
  EXPECT_EQ(Key("::ffff:127.0.0.1"), "");
  EXPECT_NE(Key("127.0.0.1", {.limit_loopback_peers = true}), "");
  EXPECT_EQ(Key("203.0.113.7", {.max_connections_per_peer = 0}), "");
}

TEST(PeerLimits, APeerAtItsLimitIsRefusedUntilOneOfItsConnectionsCloses) {
  PeerCounts counts(2);
  const std::string a = Key("203.0.113.7"), b = Key("203.0.113.8");
  EXPECT_TRUE(counts.Admit(a));
  EXPECT_TRUE(counts.Admit(a));
  EXPECT_FALSE(counts.Admit(a));
  EXPECT_TRUE(counts.Admit(b));  // other peers are not affected
  counts.Release(a);
  EXPECT_TRUE(counts.Admit(a));
  EXPECT_FALSE(counts.Admit(a));
}

TEST(PeerLimits, AnUnlimitedPeerIsAlwaysAdmitted) {
  PeerCounts counts(1);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(counts.Admit(""));
  counts.Release("");
}

}  // namespace
}  // namespace cutoff::http::internal
