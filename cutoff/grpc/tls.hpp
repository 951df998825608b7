// TLS for gRPC, through gRPC's own SSL credentials: PEM files named here are read when the
// server starts listening or the client is made, and a file that cannot be read is an error
// then.
//
//   cutoff::grpc::ServerOptions server;
//   server.tls = cutoff::grpc::TlsServerOptions{"server.pem", "server.key"};
//   cutoff::grpc::ClientOptions client;
//   client.tls = cutoff::grpc::TlsClientOptions{.ca_file = "ca.pem"};
#ifndef CUTOFF_GRPC_TLS_HPP_
#define CUTOFF_GRPC_TLS_HPP_

#include <string>

namespace cutoff::grpc {

struct TlsServerOptions {
  std::string certificate_chain_file;  // PEM: the server's certificate, then any intermediates
  std::string private_key_file;        // PEM, unencrypted
};

struct TlsClientOptions {
  std::string ca_file;  // PEM bundle of trusted authorities; empty: gRPC's default roots
  // The name the server's certificate must carry when it is not the target's host (a test CA
  // issuing for "localhost" reached as 127.0.0.1). Empty: the target's host.
  std::string server_name;
};

}  // namespace cutoff::grpc

#endif  // CUTOFF_GRPC_TLS_HPP_
