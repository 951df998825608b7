// The host lists of a PostgreSQL connection string, with every name resolved to all of its
// addresses, in the form libpq tries one after another (`host`, `hostaddr`, `port`).
//
// libpq resolves a `host` with a blocking getaddrinfo, so the driver resolves names itself and
// hands libpq `hostaddr`. A name may have several addresses (Debian's `localhost` is ::1, then
// 127.0.0.1): each becomes an entry of its own, so that a server listening on only one of them
// is still reached, as libpq would reach it.
//
//   auto names = cutoff::sql::internal::NamesToResolve("db.internal,10.0.0.7");  // {"db.internal"}
//   HostLists l = ExpandHosts("db.internal,10.0.0.7", "5432",
//                             {{"db.internal", {"10.0.0.5", "10.0.0.6"}}});
//   // l.host     == "db.internal,db.internal,10.0.0.7"
//   // l.hostaddr == "10.0.0.5,10.0.0.6,10.0.0.7"
#ifndef CUTOFF_SQL_PG_INTERNAL_HOST_LIST_HPP_
#define CUTOFF_SQL_PG_INTERNAL_HOST_LIST_HPP_

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cutoff::sql::internal {

struct HostLists {
  std::string host;
  std::string hostaddr;
  std::string port;  // the port list, one entry per host entry when ports were given per host
};

// The entries of a comma-separated `host` list that are names to look up (not an IP address,
// not a Unix-socket directory, not empty), each once.
std::vector<std::string> NamesToResolve(std::string_view host);

// `host` and `port` as given; `resolved` maps each name of NamesToResolve to its addresses.
// A single port (or none) applies to every entry; a list of one port per host is repeated
// for each address of that host. Throws std::invalid_argument when a name has no addresses
// in `resolved`, or a port list does not match the host list.
HostLists ExpandHosts(std::string_view host, std::string_view port,
                      const std::map<std::string, std::vector<std::string>>& resolved);

}  // namespace cutoff::sql::internal

#endif  // CUTOFF_SQL_PG_INTERNAL_HOST_LIST_HPP_
