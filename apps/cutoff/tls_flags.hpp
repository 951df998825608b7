// The command line's TLS flags, one set of names in every command: --tls-cert and --tls-key
// serve https:// instead of http://, --ca-file names the authorities an https:// upstream's
// certificate must come from (default: the system's).
//
//   TlsFlags tls;
//   AddTlsServerFlags(serve, tls);
//   AddTlsClientFlags(serve, tls, "--next");
//   server_options.tls = tls.server();              // nullopt without --tls-cert
//   client_options.tls = tls.client();
#ifndef CUTOFF_APPS_CUTOFF_TLS_FLAGS_HPP_
#define CUTOFF_APPS_CUTOFF_TLS_FLAGS_HPP_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cutoff/http/tls.hpp"

namespace cutoff::cli {

struct TlsFlags {
  std::string cert_file;  // --tls-cert
  std::string key_file;   // --tls-key
  std::string ca_file;    // --ca-file

  std::optional<http::TlsServerOptions> server() const;
  http::TlsClientOptions client() const;
};

// --tls-cert and --tls-key, each requiring the other; files must exist.
void AddTlsServerFlags(CLI::App* app, TlsFlags& f);
// --ca-file; `what` names the calls it applies to in the help text ("calls to --next").
void AddTlsClientFlags(CLI::App* app, TlsFlags& f, const std::string& what);

}  // namespace cutoff::cli

#endif  // CUTOFF_APPS_CUTOFF_TLS_FLAGS_HPP_
