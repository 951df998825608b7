#include "cutoff/http/internal/header_checks.hpp"

#include <gtest/gtest.h>

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <string>

namespace cutoff::http::internal {
namespace {

namespace bhttp = boost::beast::http;

BeastRequest Get(unsigned version = 11) {
  BeastRequest req{bhttp::verb::get, "/", version};
  if (version >= 11) req.set(bhttp::field::host, "example.com");
  return req;
}

TEST(HeaderChecks, FindsTheEndOfTheHeaderBlock) {
  const std::string bytes = "GET / HTTP/1.1\r\nHost: a\r\n\r\nbody";
  EXPECT_EQ(find_header_end(bytes), bytes.size() - 4);
  EXPECT_EQ(find_header_end("GET / HTTP/1.1\r\nHost: a\r\n"), std::string_view::npos);
}

TEST(HeaderChecks, AResumedSearchFindsAnEndThatStraddlesTheReads) {
  const std::string bytes = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
  // The previous read ended inside the final CRLF CRLF, at each of its bytes.
  for (std::size_t searched = bytes.size() - 4; searched < bytes.size(); ++searched)
    EXPECT_EQ(find_header_end(bytes, searched), bytes.size()) << searched;
  EXPECT_EQ(find_header_end("\r\n\r\n", 1), 4u);
}

TEST(HeaderChecks, ObsFoldIsALineStartingWithSpaceOrTab) {
  const std::string folded = "GET / HTTP/1.1\r\nX-A: one\r\n two\r\nHost: a\r\n\r\n";
  EXPECT_TRUE(has_obs_fold(folded, folded.size()));
  const std::string tab = "GET / HTTP/1.1\r\nX-A: one\r\n\ttwo\r\nHost: a\r\n\r\n";
  EXPECT_TRUE(has_obs_fold(tab, tab.size()));
  const std::string plain = "GET / HTTP/1.1\r\nX-A: one two\r\nHost: a\r\n\r\n";
  EXPECT_FALSE(has_obs_fold(plain, plain.size()));
}

TEST(HeaderChecks, ABodyStartingWithSpaceIsNoFold) {
  const std::string head = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n";
  const std::string bytes = head + " ab";
  EXPECT_FALSE(has_obs_fold(bytes, head.size()));
}

TEST(HeaderChecks, BareLineFeeds) {
  EXPECT_TRUE(has_bare_lf("GET / HTTP/1.1\nHost: a\n"));
  EXPECT_TRUE(has_bare_lf("\n"));
  EXPECT_FALSE(has_bare_lf("GET / HTTP/1.1\r\nHost: a\r\n"));
  // Only from `from` on: the bytes before it were checked by an earlier read.
  EXPECT_FALSE(has_bare_lf("a\nb\r\n", 2));
}

TEST(HeaderChecks, HostCharacters) {
  EXPECT_TRUE(ValidHost("example.com:8080"));
  EXPECT_TRUE(ValidHost("[::1]:80"));
  EXPECT_TRUE(ValidHost("xn--caf-dma.example"));
  EXPECT_FALSE(ValidHost("exa mple.com"));
  EXPECT_FALSE(ValidHost("a/b"));
  EXPECT_FALSE(ValidHost("a@b"));
}

TEST(HeaderChecks, PlainRequestsPassTheFramingRules) {
  EXPECT_EQ(framing_error(Get()), "");
  EXPECT_EQ(framing_error(Get(10)), "");  // HTTP/1.0 needs no Host
  BeastRequest chunked = Get();
  chunked.set(bhttp::field::transfer_encoding, " , Chunked ,");
  EXPECT_EQ(framing_error(chunked), "");
}

TEST(HeaderChecks, TransferEncodingOtherThanChunkedIsRefused) {
  for (const char* te : {"gzip", "gzip, chunked", "chunked, gzip", "chunked, chunked", ""}) {
    BeastRequest req = Get();
    req.set(bhttp::field::transfer_encoding, te);
    EXPECT_NE(framing_error(req), "") << te;
  }
  BeastRequest two_fields = Get();
  two_fields.insert(bhttp::field::transfer_encoding, "chunked");
  two_fields.insert(bhttp::field::transfer_encoding, "chunked");
  EXPECT_NE(framing_error(two_fields), "");
}

// framing_error of a request with exactly `fields` (no Host unless given). Its answers are
// string literals, so they outlive the request.
std::string_view FramingErrorOf(unsigned version, std::initializer_list<std::pair<bhttp::field, const char*>> fields) {
  BeastRequest req{bhttp::verb::get, "/", version};
  for (const auto& [name, value] : fields) req.insert(name, value);
  return framing_error(req);
}

TEST(HeaderChecks, TransferEncodingWithContentLengthOrInHttp10IsRefused) {
  using enum bhttp::field;
  EXPECT_EQ(FramingErrorOf(11, {{host, "a"}, {transfer_encoding, "chunked"}, {content_length, "3"}}),
            "Content-Length and Transfer-Encoding together");
  EXPECT_EQ(FramingErrorOf(10, {{transfer_encoding, "chunked"}}),
            "Transfer-Encoding is not allowed in an HTTP/1.0 request");
}

TEST(HeaderChecks, HostMustBeThereOnceAndWellFormed) {
  using enum bhttp::field;
  EXPECT_EQ(FramingErrorOf(11, {}), "an HTTP/1.1 request needs a Host header");
  EXPECT_EQ(FramingErrorOf(11, {{host, "a.example"}, {host, "b.example"}}), "more than one Host header");
  EXPECT_EQ(FramingErrorOf(11, {{host, "a b"}}), "malformed Host header");
  EXPECT_EQ(FramingErrorOf(10, {{host, "a b"}}), "malformed Host header");
  EXPECT_EQ(FramingErrorOf(10, {{host, "a"}, {host, "b"}}), "more than one Host header");
}

TEST(HeaderChecks, ReadErrorsMapToTheirStatus) {
  EXPECT_EQ(StatusForReadError(bhttp::error::header_limit), 431);
  EXPECT_EQ(StatusForReadError(bhttp::error::body_limit), 413);
  EXPECT_EQ(StatusForReadError(boost::beast::error::timeout), 408);
  EXPECT_EQ(StatusForReadError(bhttp::error::bad_field), 400);
  EXPECT_EQ(StatusForReadError(bhttp::error::bad_version), 400);
  // The peer went away: nobody to answer.
  EXPECT_EQ(StatusForReadError(bhttp::error::end_of_stream), 0);
  EXPECT_EQ(StatusForReadError(bhttp::error::partial_message), 0);
  EXPECT_EQ(StatusForReadError(boost::asio::error::eof), 0);
  EXPECT_EQ(StatusForReadError(boost::asio::error::connection_reset), 0);
  EXPECT_EQ(StatusForReadError(boost::asio::error::operation_aborted), 0);
}

TEST(HeaderChecks, EachRefusalHasACode) {
  EXPECT_EQ(ReadErrorCode(431), "header_too_large");
  EXPECT_EQ(ReadErrorCode(413), "body_too_large");
  EXPECT_EQ(ReadErrorCode(408), "read_timeout");
  EXPECT_EQ(ReadErrorCode(400), "bad_request");
}

}  // namespace
}  // namespace cutoff::http::internal
