// Fuzzes the server's request parsing: the search for the end of the header block (resumed
// across reads, as the server does) and the obs-fold check on its raw lines, Beast's parser
// configured as the server configures it (header and body limits), the RFC 9112 framing
// checks on the parsed header, the conversion to http::Request, and what handlers read from it
// (path, query parameters, budget headers). Input is split in two at a point chosen by its
// first byte, as bytes arrive in pieces from a socket.
#include <boost/asio/buffer.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cutoff/core/budget_headers.hpp"
#include "cutoff/http/internal/beast_request.hpp"
#include "cutoff/http/internal/header_checks.hpp"
#include "cutoff/http/message.hpp"

namespace {

// Feeds bytes to the parser as the server's reads do: bytes the parser did not consume are
// presented again, followed by the new ones (Beast's put() contract). Returns false on a
// parse error.
class Feeder {
 public:
  explicit Feeder(cutoff::http::internal::BeastRequestParser& parser) : parser_(parser) {}

  bool Add(std::string_view bytes) {
    pending_.append(bytes);
    boost::system::error_code ec;
    while (!pending_.empty() && !parser_.is_done()) {
      const std::size_t used = parser_.put(boost::asio::buffer(pending_.data(), pending_.size()), ec);
      pending_.erase(0, used);
      if (ec == boost::beast::http::error::need_more) return true;
      if (ec) return false;
      if (used == 0) return true;
    }
    return true;
  }

 private:
  cutoff::http::internal::BeastRequestParser& parser_;
  std::string pending_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t split = data[0] % size;
  std::string_view first(reinterpret_cast<const char*>(data) + 1, split > 0 ? split - 1 : 0);
  std::string_view second(reinterpret_cast<const char*>(data) + (split > 0 ? split : 1),
                          size - (split > 0 ? split : 1));

  namespace internal = cutoff::http::internal;
  // The server resumes the search where the previous read's bytes ended; it must find what a
  // search of everything finds.
  const std::string all = std::string(first) + std::string(second);
  const std::size_t whole = internal::find_header_end(all);
  if (internal::find_header_end(first) == std::string_view::npos &&
      internal::find_header_end(all, first.size()) != whole)
    std::abort();
  (void)internal::has_bare_lf(first);
  (void)internal::has_bare_lf(all, first.size());
  if (whole != std::string_view::npos) {
    if (whole > all.size() || all.compare(whole - 4, 4, "\r\n\r\n") != 0) std::abort();
    (void)internal::has_obs_fold(std::string_view(all).substr(0, whole), whole);
  }

  cutoff::http::internal::BeastRequestParser parser;
  cutoff::http::internal::configure_request_parser(parser, 16 * 1024, 64 * 1024);
  parser.eager(true);
  Feeder feeder(parser);
  if (!feeder.Add(first) || !feeder.Add(second)) return 0;
  if (!parser.is_header_done()) return 0;
  // What the framing checks let through, Beast frames as the server expects: a
  // Transfer-Encoding that passes is chunked, and never comes with a Content-Length.
  const std::string_view refused = internal::framing_error(parser.get());
  const auto& head = parser.get();
  const bool te = head.find(boost::beast::http::field::transfer_encoding) != head.end();
  if (refused.empty() && te &&
      (!parser.chunked() || head.find(boost::beast::http::field::content_length) != head.end()))
    std::abort();
  if (!refused.empty() || !parser.is_done()) return 0;

  const cutoff::http::Request req = cutoff::http::internal::to_request(parser.release(), "127.0.0.1:1");
  if (req.path().size() > req.target.size()) std::abort();
  (void)req.query();
  (void)req.query_param("query");
  (void)req.query_param("variables");
  const auto headers = req.headers.views();
  const cutoff::BudgetPolicy policy{.legacy_ms_headers = {"X-Client-Timeout-Ms"}};
  const auto inbound = cutoff::parse_inbound_budget(headers, policy, std::chrono::system_clock::now());
  if (inbound.budget > policy.max_budget || inbound.budget < cutoff::Duration::zero()) std::abort();
  return 0;
}
