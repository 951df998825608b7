// What a connected socket's peer has done, read without consuming anything: the server's
// disconnect watch and the client's check of a pooled connection ask the same question.
#ifndef CUTOFF_HTTP_INTERNAL_PEER_STATE_HPP_
#define CUTOFF_HTTP_INTERNAL_PEER_STATE_HPP_

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

namespace cutoff::http::internal {

// The content type of a TLS record that carries an alert (RFC 8446, 5.1).
inline constexpr unsigned char kTlsAlertRecord = 21;

enum class PeerState {
  quiet,     // connected, nothing to read
  has_data,  // bytes are waiting
  gone,      // closed (EOF) or failed
};

// `tls`: the connection carries TLS records. A peer that closes a TLS connection first sends a
// close_notify alert, so the bytes waiting are not the next request: that peer is leaving.
// Under TLS 1.2 the alert shows as its record type (21; an alert is never anything but the end
// or a failure). TLS 1.3 hides record types, so there the sign is the FIN that clients (curl,
// Go, Java, browsers) send right after their close_notify: bytes waiting behind a closed
// read side. A TLS 1.3 peer that sends close_notify and keeps its TCP side open looks like one
// that sent more data, and is not seen leaving until it closes.
inline PeerState PeekPeer(int fd, bool tls = false) noexcept {
  unsigned char byte;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) {
    if (!tls) return PeerState::has_data;
    if (byte == kTlsAlertRecord) return PeerState::gone;
    pollfd p{.fd = fd, .events = POLLRDHUP, .revents = 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) ? PeerState::gone
                                                                                  : PeerState::has_data;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return PeerState::quiet;
  return PeerState::gone;
}

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_PEER_STATE_HPP_
