#include "cutoff/http/internal/responses.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cutoff::http::internal {
namespace {

std::string Head(const Response& r, unsigned version = 11, bool keep_alive = true) {
  bool dropped = false;
  return SerializeHead(r, version, keep_alive, &dropped);
}

TEST(Responses, TheHeadCarriesStatusFieldsAndLength) {
  Response r = Response::text(200, "hello\n");
  EXPECT_EQ(Head(r), "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 6\r\n\r\n");
}

TEST(Responses, ConnectionIsSaidOnlyWhenItDiffersFromTheVersionsDefault) {
  const Response r = Response::text(404, "");
  EXPECT_NE(Head(r, 11, false).find("Connection: close\r\n"), std::string::npos);
  EXPECT_EQ(Head(r, 11, true).find("Connection:"), std::string::npos);
  EXPECT_NE(Head(r, 10, true).find("Connection: keep-alive\r\n"), std::string::npos);
  EXPECT_EQ(Head(r, 10, false).find("Connection:"), std::string::npos);
  EXPECT_EQ(Head(r, 10, false).substr(0, 9), "HTTP/1.0 ");
}

TEST(Responses, FramingFieldsAreTheServersAndBadFieldsAreDropped) {
  Response r = Response::text(200, "body");
  r.headers.set("Content-Length", "999");
  r.headers.set("Transfer-Encoding", "chunked");
  r.headers.set("Connection", "upgrade");
  r.headers.set("X-Injected", "a\r\nSet-Cookie: evil=1");
  r.headers.set("Bad Name", "x");
  r.headers.set("X-Fine", "yes");
  bool dropped = false;
  const std::string head = SerializeHead(r, 11, true, &dropped);
  EXPECT_TRUE(dropped);
  EXPECT_EQ(head.find("999"), std::string::npos);
  EXPECT_EQ(head.find("chunked"), std::string::npos);
  EXPECT_EQ(head.find("upgrade"), std::string::npos);
  EXPECT_EQ(head.find("evil"), std::string::npos);
  EXPECT_EQ(head.find("Bad Name"), std::string::npos);
  EXPECT_NE(head.find("X-Fine: yes\r\n"), std::string::npos);
  EXPECT_NE(head.find("Content-Length: 4\r\n"), std::string::npos);
}

TEST(Responses, BodilessStatusesHaveNoLength) {
  EXPECT_TRUE(Bodiless(101));
  EXPECT_TRUE(Bodiless(204));
  EXPECT_TRUE(Bodiless(304));
  EXPECT_FALSE(Bodiless(200));
  EXPECT_FALSE(Bodiless(404));
  Response r;
  r.status = 204;
  EXPECT_EQ(Head(r).find("Content-Length"), std::string::npos);
}

TEST(Responses, ErrorsFollowTheTaxonomyAndKeepInternalDetailsOut) {
  const Response overloaded = ErrorResponse(ErrorCode::overloaded, "bulkhead full", "rid-1");
  EXPECT_EQ(overloaded.status, 503);
  EXPECT_NE(overloaded.body.find("\"code\":\"overloaded\""), std::string::npos);
  EXPECT_NE(overloaded.body.find("bulkhead full"), std::string::npos);
  EXPECT_NE(overloaded.body.find("\"request_id\":\"rid-1\""), std::string::npos);
  const Response internal = ErrorResponse(ErrorCode::internal, "secret at 0xdeadbeef", "rid-2");
  EXPECT_EQ(internal.status, 500);
  EXPECT_EQ(internal.body.find("deadbeef"), std::string::npos);
  EXPECT_FALSE(internal.headers.contains("Deadline-Expired"));
  const Response late = ErrorResponse(ErrorCode::deadline_exceeded, "too late", "rid-3");
  EXPECT_EQ(late.status, 504);
  EXPECT_EQ(late.headers.get("Deadline-Expired"), "1");
}

TEST(Responses, ARefusalIsAComplete503ThatClosesTheConnection) {
  const std::string refusal = RefusalResponse("too many open connections");
  EXPECT_EQ(refusal.substr(0, 13), "HTTP/1.1 503 ");
  EXPECT_NE(refusal.find("Retry-After: 1\r\n"), std::string::npos);
  EXPECT_NE(refusal.find("Connection: close\r\n"), std::string::npos);
  const auto body_at = refusal.find("\r\n\r\n") + 4;
  const auto length_at = refusal.find("Content-Length: ") + 16;
  EXPECT_EQ(std::stoul(refusal.substr(length_at)), refusal.size() - body_at);
  EXPECT_NE(refusal.find("too many open connections", body_at), std::string::npos);
}

}  // namespace
}  // namespace cutoff::http::internal
