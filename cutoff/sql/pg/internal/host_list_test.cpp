#include "cutoff/sql/pg/internal/host_list.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace cutoff::sql::internal {
namespace {

TEST(HostList, OnlyNamesAreLookedUpEachOnce) {
  EXPECT_EQ(NamesToResolve("localhost"), std::vector<std::string>{"localhost"});
  EXPECT_EQ(NamesToResolve("a,127.0.0.1,::1,/var/run/postgresql,,a,b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(NamesToResolve("10.0.0.1").empty());
}

TEST(HostList, EveryAddressOfANameBecomesAnEntry) {
  // Debian's localhost: ::1 first. A server on 127.0.0.1 only must still be reached.
  HostLists l = ExpandHosts("localhost", "5432", {{"localhost", {"::1", "127.0.0.1", "::1"}}});
  EXPECT_EQ(l.host, "localhost,localhost");
  EXPECT_EQ(l.hostaddr, "::1,127.0.0.1");  // repeats dropped
  EXPECT_EQ(l.port, "5432");                // one port applies to every entry
}

TEST(HostList, PerHostPortsFollowTheirHostsAddresses) {
  HostLists l = ExpandHosts("a,10.0.0.9,/tmp", "1,2,3", {{"a", {"10.0.0.1", "10.0.0.2"}}});
  EXPECT_EQ(l.host, "a,a,10.0.0.9,/tmp");
  EXPECT_EQ(l.hostaddr, "10.0.0.1,10.0.0.2,10.0.0.9,");  // a socket directory keeps its host entry
  EXPECT_EQ(l.port, "1,1,2,3");
  EXPECT_EQ(ExpandHosts("a", "", {{"a", {"10.0.0.1"}}}).port, "");
}

TEST(HostList, MismatchedPortsAndUnresolvedNamesAreRefused) {
  EXPECT_THROW(ExpandHosts("a,b,c", "1,2", {{"a", {"1.1.1.1"}}, {"b", {"1.1.1.2"}}, {"c", {"1.1.1.3"}}}),
               std::invalid_argument);
  EXPECT_THROW(ExpandHosts("a", "1", {}), std::invalid_argument);
  EXPECT_THROW(ExpandHosts("a", "1", {{"a", {}}}), std::invalid_argument);
}

}  // namespace
}  // namespace cutoff::sql::internal
