// TLS for the HTTP server and client: where the server's certificate and key, and the
// client's trusted certificate authorities, come from.
//
//   http::Server server(executor, {.tls = http::TlsServerOptions{
//                                      .certificate_chain_file = "/etc/cutoff/server.pem",
//                                      .private_key_file = "/etc/cutoff/server.key"}});
//   http::Client client(executor, {.tls = {.ca_file = "/etc/cutoff/ca.pem"}});
//   co_await client.get(ctx, "https://inventory.internal:8443/stock?sku=42");
//
// TLS 1.2 is the oldest version either side accepts. The client verifies the server's
// certificate chain against `ca_file` (or the system's store) and its name against the URL's
// host, and sends the host as SNI. The handshake is part of the work a budget bounds: the
// client's counts against the attempt's connect timeout and deadline, the server's against
// `ServerLimits::header_timeout` (from accept to the end of the first request's headers).
// A stop closes the connection under the TLS stream, as it does a plain one, so the peer
// sees the disconnect at once.
#ifndef CUTOFF_HTTP_TLS_HPP_
#define CUTOFF_HTTP_TLS_HPP_

#include <string>

namespace cutoff::http {

struct TlsServerOptions {
  std::string certificate_chain_file;  // PEM: the server's certificate, then any intermediates
  std::string private_key_file;        // PEM, unencrypted
};

// Applies to https:// URLs; http:// ones are unaffected.
struct TlsClientOptions {
  std::string ca_file;  // PEM bundle of trusted authorities; empty: the system's default store
  // Accept any certificate, for any name. For a test bench against a self-signed server only:
  // it lets anyone on the path read and change the traffic.
  bool insecure_skip_verify = false;
};

}  // namespace cutoff::http

#endif  // CUTOFF_HTTP_TLS_HPP_
