#include "cutoff/http/internal/connection.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <utility>
#include <vector>

#include "cutoff/http/internal/peer_state.hpp"

namespace cutoff::http::internal {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

void Connection::IoExpired(std::int64_t due) {
  if (!io_deadline.Expire(due)) return;
  io_timed_out = true;
  cancel_signal.emit(asio::cancellation_type::terminal);
}

void Connection::CloseExpired(std::int64_t due) {
  if (!close_deadline.Expire(due)) return;
  boost::system::error_code ignored;
  stream.socket().close(ignored);
}

RequestValues& Connection::NextRequestValues() {
  if (values && values.use_count() == 1) {
    *values = RequestValues{};
  } else {
    values = std::make_shared<RequestValues>();
  }
  return *values;
}

const std::shared_ptr<ResponseMark>& Connection::NextResponseMark() {
  if (!response_mark || response_mark.use_count() != 1) response_mark = std::make_shared<ResponseMark>();
  response_mark->reset();
  return response_mark;
}

void Connection::StopHandler(std::uint64_t gen, Duration grace) {
  if (!busy || generation != gen) return;
  if (grace <= Duration::zero()) {
    cancel_signal.emit(asio::cancellation_type::terminal);
    return;
  }
  auto timer = std::make_shared<asio::steady_timer>(executor, grace);
  timer->async_wait([self = shared_from_this(), gen, timer](const boost::system::error_code& ec) {
    if (!ec && self->busy && self->generation == gen) self->cancel_signal.emit(asio::cancellation_type::terminal);
  });
}

void Connection::WatchDisconnect(std::uint64_t gen) {
  stream.socket().async_wait(tcp::socket::wait_read,
                             [self = shared_from_this(), gen](const boost::system::error_code& ec) {
                               if (ec == asio::error::operation_aborted || !self->busy || self->generation != gen)
                                 return;
                               if (ec) {
                                 if (self->stop_source) self->stop_source->request_stop(StopReason::cancelled);
                                 return;
                               }
                               self->CheckPeer(gen);
                             });
}

void Connection::RecheckDisconnect(std::uint64_t gen) {
  auto timer = std::make_shared<asio::steady_timer>(executor, std::chrono::milliseconds(20));
  timer->async_wait([self = shared_from_this(), gen, timer](const boost::system::error_code& ec) {
    if (ec || !self->busy || self->generation != gen) return;
    self->CheckPeer(gen);
  });
}

void Connection::CheckPeer(std::uint64_t gen) {
  switch (PeekPeer(stream.socket().native_handle(), stream.tls())) {
    case PeerState::has_data:
      // Plain HTTP: a pipelined request, read after this one. TLS: maybe a TLS 1.3
      // close_notify whose FIN is still on its way; readiness says nothing more now, so look
      // again shortly.
      if (stream.tls()) RecheckDisconnect(gen);
      return;
    case PeerState::quiet:
      WatchDisconnect(gen);
      return;
    case PeerState::gone:
      if (stop_source) stop_source->request_stop(StopReason::cancelled);
      return;
  }
}

void LiveConnections::Add(const std::shared_ptr<Connection>& c) {
  std::lock_guard lock(mu_);
  live_.emplace_back(c);
}

void LiveConnections::PostToEach(const std::function<void(Connection&)>& f) {
  std::vector<std::shared_ptr<Connection>> targets;
  VisitLocked([&](const std::shared_ptr<Connection>& c) { targets.push_back(c); });
  for (auto& c : targets) asio::post(c->executor, [c, f] { f(*c); });
}

}  // namespace cutoff::http::internal
