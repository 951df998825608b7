// The OpenSSL contexts behind TlsServerOptions and TlsClientOptions, and the per-connection
// setup of a client's TLS stream (SNI, name check). Kept out of the public headers: only the
// server and client sources include OpenSSL.
//
//   auto server_tls = internal::MakeServerTlsContext(options.tls);   // throws on a bad file
//   internal::Stream s(std::move(socket), client_tls.get());
//   internal::PrepareClientTls(s, "inventory.internal", options.tls);
#ifndef CUTOFF_HTTP_INTERNAL_TLS_CONTEXT_HPP_
#define CUTOFF_HTTP_INTERNAL_TLS_CONTEXT_HPP_

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>
#include <memory>
#include <string>

#include "cutoff/http/internal/stream.hpp"
#include "cutoff/http/tls.hpp"

namespace cutoff::http::internal {

// Throws std::invalid_argument naming the file and OpenSSL's reason when the certificate or key
// cannot be loaded, or do not match.
std::unique_ptr<boost::asio::ssl::context> MakeServerTlsContext(const TlsServerOptions& options);
// Throws std::invalid_argument when `ca_file` cannot be loaded.
std::unique_ptr<boost::asio::ssl::context> MakeClientTlsContext(const TlsClientOptions& options);
// The client context for the system's trust store, made on the first call and shared by every
// client that names no CA file (loading the store reads files). Throws std::invalid_argument
// when the store cannot be loaded, on that call and every later one.
std::shared_ptr<boost::asio::ssl::context> SystemClientTlsContext();
// Why a handshake failed, in words: for an untrusted certificate, OpenSSL's verification reason
// ("self-signed certificate in certificate chain", "certificate has expired", a name mismatch).
std::string DescribeHandshakeFailure(Stream& stream, const boost::system::error_code& ec);
// Names `host` in the ClientHello (SNI, unless it is an IP address) and, unless verification is
// off, requires the server's certificate to be issued for it. Throws std::invalid_argument for
// a host OpenSSL cannot take.
void PrepareClientTls(Stream& stream, const std::string& host, const TlsClientOptions& options);

}  // namespace cutoff::http::internal

#endif  // CUTOFF_HTTP_INTERNAL_TLS_CONTEXT_HPP_
