#include "cutoff/http/internal/io_timeouts.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <utility>

#include "cutoff/http/internal/connection.hpp"

namespace cutoff::http::internal {

namespace asio = boost::asio;

Duration SweepInterval(const ServerLimits& limits) {
  const Duration shortest =
      std::min({limits.idle_timeout, limits.header_timeout, limits.body_timeout, limits.write_timeout});
  return std::clamp<Duration>(shortest / 8, std::chrono::milliseconds(5), std::chrono::milliseconds(250));
}

void IoTimeoutSweeper::Start(LiveConnections& connections, std::shared_ptr<const void> owner,
                             std::function<bool()> finished) {
  finished_ = std::move(finished);
  Schedule(connections, std::move(owner));
}

void IoTimeoutSweeper::Schedule(LiveConnections& connections, std::shared_ptr<const void> owner) {
  timer_.expires_after(interval_);
  timer_.async_wait([this, &connections, owner = std::move(owner)](const boost::system::error_code& ec) mutable {
    if (ec || finished_()) return;
    const std::int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
    connections.VisitLocked([now](const std::shared_ptr<Connection>& c) {
      if (const std::int64_t due = c->io_deadline.DueBy(now)) asio::post(c->executor, [c, due] { c->IoExpired(due); });
      if (const std::int64_t due = c->close_deadline.DueBy(now))
        asio::post(c->executor, [c, due] { c->CloseExpired(due); });
    });
    Schedule(connections, std::move(owner));
  });
}

}  // namespace cutoff::http::internal
