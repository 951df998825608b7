#include "cutoff/http/internal/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/system/system_error.hpp>
#include <stdexcept>

namespace cutoff::http::internal {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;

namespace {

// The oldest protocol either side speaks, and nothing of the SSL era. No TLS 1.2
// renegotiation: a peer could otherwise make the server repeat the costliest part of a
// handshake at will on one connection, outside any timeout (TLS 1.3 has none).
void Harden(ssl::context& ctx) {
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  SSL_CTX_set_options(ctx.native_handle(), SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
}

[[noreturn]] void Refuse(const std::string& what, const std::string& file, const boost::system::system_error& e) {
  throw std::invalid_argument("TLS: cannot use " + what + " '" + file + "': " + e.code().message());
}

}  // namespace

std::unique_ptr<ssl::context> MakeServerTlsContext(const TlsServerOptions& options) {
  if (options.certificate_chain_file.empty() || options.private_key_file.empty())
    throw std::invalid_argument("TLS: the server needs both a certificate chain file and a private key file");
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  Harden(*ctx);
  try {
    ctx->use_certificate_chain_file(options.certificate_chain_file);
  } catch (const boost::system::system_error& e) {
    Refuse("the certificate chain", options.certificate_chain_file, e);
  }
  try {
    // OpenSSL checks the key against the certificate here ("key values mismatch").
    ctx->use_private_key_file(options.private_key_file, ssl::context::pem);
  } catch (const boost::system::system_error& e) {
    Refuse("the private key", options.private_key_file, e);
  }
  return ctx;
}

std::unique_ptr<ssl::context> MakeClientTlsContext(const TlsClientOptions& options) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  Harden(*ctx);
  if (options.insecure_skip_verify) {
    ctx->set_verify_mode(ssl::verify_none);
    return ctx;
  }
  ctx->set_verify_mode(ssl::verify_peer);
  try {
    if (options.ca_file.empty()) ctx->set_default_verify_paths();
    else ctx->load_verify_file(options.ca_file);
  } catch (const boost::system::system_error& e) {
    Refuse("the CA file", options.ca_file.empty() ? "(system default)" : options.ca_file, e);
  }
  return ctx;
}

std::shared_ptr<ssl::context> SystemClientTlsContext() {
  struct Made {
    std::shared_ptr<ssl::context> context;
    std::string error;
  };
  static const Made made = [] {
    Made m;
    try {
      m.context = MakeClientTlsContext(TlsClientOptions{});
    } catch (const std::invalid_argument& e) {
      m.error = e.what();
    }
    return m;
  }();
  if (!made.context) throw std::invalid_argument(made.error);
  return made.context;
}

std::string DescribeHandshakeFailure(Stream& stream, const boost::system::error_code& ec) {
  if (ec.category() == asio::error::get_ssl_category() &&
      ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_CERTIFICATE_VERIFY_FAILED) {
    const long result = SSL_get_verify_result(stream.tls_layer().native_handle());
    // The chain was trusted and the name check (host_name_verification, our only callback)
    // refused it: OpenSSL records no reason of its own for that.
    if (result == X509_V_OK || result == X509_V_ERR_UNSPECIFIED)
      return "the server's certificate is not issued for the host called";
    return std::string("the server's certificate is not trusted: ") + X509_verify_cert_error_string(result);
  }
  if (ec == ssl::error::stream_truncated || ec == asio::error::eof || ec == asio::error::connection_reset)
    return "the server closed the connection during the handshake";
  return ec.message();
}

void PrepareClientTls(Stream& stream, const std::string& host, const TlsClientOptions& options) {
  SSL* ssl = stream.tls_layer().native_handle();
  boost::system::error_code not_an_address;
  asio::ip::make_address(host, not_an_address);
  // RFC 6066: SNI carries host names only, never a literal address.
  if (not_an_address && SSL_set_tlsext_host_name(ssl, host.c_str()) != 1) {
    ERR_clear_error();
    throw std::invalid_argument("TLS: '" + host + "' cannot be sent as a server name");
  }
  if (!options.insecure_skip_verify) stream.tls_layer().set_verify_callback(ssl::host_name_verification(host));
}

}  // namespace cutoff::http::internal
