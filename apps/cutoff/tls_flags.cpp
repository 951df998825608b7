#include "tls_flags.hpp"

namespace cutoff::cli {

std::optional<http::TlsServerOptions> TlsFlags::server() const {
  if (cert_file.empty()) return std::nullopt;
  return http::TlsServerOptions{.certificate_chain_file = cert_file, .private_key_file = key_file};
}

http::TlsClientOptions TlsFlags::client() const { return {.ca_file = ca_file}; }

void AddTlsServerFlags(CLI::App* app, TlsFlags& f) {
  CLI::Option* cert =
      app->add_option("--tls-cert", f.cert_file, "Serve https:// with this PEM certificate chain (default: none, plain http://)")
          ->check(CLI::ExistingFile);
  CLI::Option* key =
      app->add_option("--tls-key", f.key_file, "The PEM private key of --tls-cert (default: none)")->check(CLI::ExistingFile);
  cert->needs(key);
  key->needs(cert);
}

void AddTlsClientFlags(CLI::App* app, TlsFlags& f, const std::string& what) {
  app->add_option("--ca-file", f.ca_file,
                  "PEM certificate authorities trusted for https:// " + what + " (default: the system's)")
      ->check(CLI::ExistingFile);
}

}  // namespace cutoff::cli
