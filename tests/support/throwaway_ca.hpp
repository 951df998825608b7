// ThrowawayCa: a certificate authority made at test time with the openssl command line, in a
// directory of its own that is removed with it, and server certificates it issues. Test-only.
//
//   test_support::ThrowawayCa ca;                                  // throws if openssl fails
//   test_support::IssuedCertificate cert = ca.Issue("server", {"DNS:localhost", "IP:127.0.0.1"});
//   http::ServerOptions o{.tls = http::TlsServerOptions{cert.chain_file, cert.key_file}};
//   http::ClientOptions c{.tls = {.ca_file = ca.certificate_file()}};
#ifndef CUTOFF_TESTS_SUPPORT_THROWAWAY_CA_HPP_
#define CUTOFF_TESTS_SUPPORT_THROWAWAY_CA_HPP_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string>

namespace cutoff::test_support {

struct IssuedCertificate {
  std::string chain_file;  // PEM: the certificate
  std::string key_file;    // PEM: its private key, unencrypted
};

class ThrowawayCa {
 public:
  explicit ThrowawayCa(const std::string& name = "cutoff test CA") {
    char pattern[] = "/tmp/cutoff-ca-XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("ThrowawayCa: mkdtemp failed");
    dir_ = pattern;
    Write("openssl.cnf",
          "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = unused\n"
          "[ca_ext]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n"
          "subjectKeyIdentifier = hash\n");
    Run("req -x509 -config " + Path("openssl.cnf") + " -extensions ca_ext " + NewKey(Path("ca.key")) +
        " -days 2 -subj '/CN=" + name + "' -out " + Path("ca.pem"));
  }
  ~ThrowawayCa() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ThrowawayCa(const ThrowawayCa&) = delete;
  ThrowawayCa& operator=(const ThrowawayCa&) = delete;

  const std::string& directory() const { return dir_; }
  std::string certificate_file() const { return Path("ca.pem"); }

  // A server certificate for the subject alternative names `names` ("DNS:localhost",
  // "IP:127.0.0.1"), signed by this authority, valid for two days.
  IssuedCertificate Issue(const std::string& stem, std::initializer_list<std::string> names) {
    std::string san;
    for (const auto& n : names) san += (san.empty() ? "" : ",") + n;
    Write(stem + ".cnf",
          "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = unused\n"
          "[server_ext]\nbasicConstraints = CA:FALSE\nkeyUsage = critical,digitalSignature\n"
          "extendedKeyUsage = serverAuth\nsubjectAltName = " +
              san + "\n");
    IssuedCertificate out{Path(stem + ".pem"), Path(stem + ".key")};
    Run("req -new -config " + Path(stem + ".cnf") + " " + NewKey(out.key_file) + " -subj '/CN=" + stem + "' -out " +
        Path(stem + ".csr"));
    Run("x509 -req -in " + Path(stem + ".csr") + " -CA " + Path("ca.pem") + " -CAkey " + Path("ca.key") +
        " -set_serial " + std::to_string(++serial_) + " -days 2 -extfile " + Path(stem + ".cnf") +
        " -extensions server_ext -out " + out.chain_file);
    return out;
  }

  // Writes `text` to a file of the directory; returns its path.
  std::string Write(const std::string& file, const std::string& text) const {
    std::ofstream(Path(file)) << text;
    return Path(file);
  }

 private:
  std::string Path(const std::string& file) const { return dir_ + "/" + file; }
  static std::string NewKey(const std::string& key_file) {
    return "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + key_file;
  }
  void Run(const std::string& args) const {
    const std::string command = "openssl " + args + " >" + Path("openssl.log") + " 2>&1";
    if (std::system(command.c_str()) != 0)
      throw std::runtime_error("ThrowawayCa: `" + command + "` failed; see " + Path("openssl.log"));
  }

  std::string dir_;
  int serial_ = 1;
};

}  // namespace cutoff::test_support

#endif  // CUTOFF_TESTS_SUPPORT_THROWAWAY_CA_HPP_
