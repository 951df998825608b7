#include "cutoff/sql/pg/internal/host_list.hpp"

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <stdexcept>

namespace cutoff::sql::internal {
namespace {

std::vector<std::string> Split(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = s.find(',', start);
    out.emplace_back(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

bool NeedsLookup(const std::string& entry) {
  if (entry.empty() || entry[0] == '/' || entry[0] == '@') return false;  // default, socket dir, abstract socket
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(entry, ec);
  return static_cast<bool>(ec);
}

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out.push_back(',');
    out += parts[i];
  }
  return out;
}

}  // namespace

std::vector<std::string> NamesToResolve(std::string_view host) {
  std::vector<std::string> names;
  for (std::string& entry : Split(host))
    if (NeedsLookup(entry) && std::find(names.begin(), names.end(), entry) == names.end())
      names.push_back(std::move(entry));
  return names;
}

HostLists ExpandHosts(std::string_view host, std::string_view port,
                      const std::map<std::string, std::vector<std::string>>& resolved) {
  const std::vector<std::string> hosts = Split(host);
  const std::vector<std::string> ports = port.empty() ? std::vector<std::string>{} : Split(port);
  const bool per_host = ports.size() > 1;
  if (per_host && ports.size() != hosts.size())
    throw std::invalid_argument("the connection string names " + std::to_string(hosts.size()) + " hosts but " +
                                std::to_string(ports.size()) + " ports");
  std::vector<std::string> out_host, out_addr, out_port;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const std::string& h = hosts[i];
    auto add = [&](const std::string& addr) {
      out_host.push_back(h);
      out_addr.push_back(addr);
      if (per_host) out_port.push_back(ports[i]);
    };
    if (!NeedsLookup(h)) {
      boost::system::error_code ec;
      const auto ip = boost::asio::ip::make_address(h, ec);
      add(ec ? std::string() : ip.to_string());  // empty: libpq uses the host entry itself
      continue;
    }
    auto it = resolved.find(h);
    if (it == resolved.end() || it->second.empty()) throw std::invalid_argument("no address for host " + h);
    std::vector<std::string> seen;
    for (const std::string& addr : it->second) {
      if (std::find(seen.begin(), seen.end(), addr) != seen.end()) continue;
      seen.push_back(addr);
      add(addr);
    }
  }
  HostLists lists;
  lists.host = Join(out_host);
  lists.hostaddr = Join(out_addr);
  lists.port = per_host ? Join(out_port) : std::string(port);
  return lists;
}

}  // namespace cutoff::sql::internal
