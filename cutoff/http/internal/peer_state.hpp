// What a connected socket's peer has done, read without consuming anything: the server's
// disconnect watch and the client's check of a pooled connection ask the same question.
#ifndef CUTOFF_HTTP_INTERNAL_PEER_STATE_HPP_
#define CUTOFF_HTTP_INTERNAL_PEER_STATE_HPP_

#include <sys/socket.h>

#include <cerrno>

namespace cutoff::http::internal {

enum class PeerState {
  quiet,     // connected, nothing to read
  has_data,  // bytes are waiting
  gone,      // closed (EOF) or failed
};

inline PeerState PeekPeer(int fd) noexcept {
  char byte;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return PeerState::has_data;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return PeerState::quiet;
  return PeerState::gone;
}

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_PEER_STATE_HPP_
