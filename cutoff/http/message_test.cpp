#include "cutoff/http/message.hpp"

#include <gtest/gtest.h>

#include "cutoff/http/idempotency_key.hpp"

namespace cutoff::http {
namespace {

TEST(Headers, CaseInsensitiveLookupInArrivalOrder) {
  Headers h;
  h.add("Content-Type", "text/plain");
  h.add("X-A", "1");
  h.add("x-a", "2");
  EXPECT_EQ(h.get("content-type"), "text/plain");
  EXPECT_EQ(h.get("X-a"), "1");
  EXPECT_EQ(h.get_all("X-A").size(), 2u);
  EXPECT_FALSE(h.get("missing").has_value());
  h.set("X-A", "3");
  EXPECT_EQ(h.get_all("x-a").size(), 1u);
  EXPECT_EQ(h.get("x-a"), "3");
  h.erase("X-A");
  EXPECT_FALSE(h.contains("x-a"));
  EXPECT_EQ(h.views().size(), 1u);
}

TEST(IdempotencyKey, OneHeaderAtMost) {
  Request r;
  EXPECT_FALSE(idempotency_key(r, "rid").has_value());
  try {
    required_idempotency_key(r, "POST /x needs an Idempotency-Key header", "rid");
    ADD_FAILURE() << "no key, no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.message().c_str(), "POST /x needs an Idempotency-Key header");
    EXPECT_EQ(e.request_id(), "rid");
  }
  r.headers.add("idempotency-key", "k-1");
  EXPECT_EQ(idempotency_key(r, "rid"), "k-1");
  EXPECT_EQ(required_idempotency_key(r, "missing", "rid"), "k-1");
  r.headers.add("Idempotency-Key", "k-2");
  try {
    idempotency_key(r, "rid");
    ADD_FAILURE() << "two keys, no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(e.message(), "send one Idempotency-Key header, not 2");
  }
}

TEST(Request, PathQueryAndParameters) {
  Request r;
  r.target = "/graphql?query=%7B%20a%20%7D&operationName=Q&x=1+2&empty=&flag#frag";
  EXPECT_EQ(r.path(), "/graphql");
  EXPECT_EQ(r.query_param("query"), "{ a }");
  EXPECT_EQ(r.query_param("operationName"), "Q");
  EXPECT_EQ(r.query_param("x"), "1 2");
  EXPECT_EQ(r.query_param("empty"), "");
  EXPECT_EQ(r.query_param("flag"), "");
  EXPECT_FALSE(r.query_param("nope").has_value());
  r.target = "/plain";
  EXPECT_EQ(r.path(), "/plain");
  EXPECT_EQ(r.query(), "");
  EXPECT_FALSE(r.query_param("a").has_value());
}

TEST(PercentDecode, RejectsMalformedEscapes) {
  EXPECT_EQ(percent_decode("a%20b"), "a b");
  EXPECT_EQ(percent_decode("%e2%82%AC"), "\xe2\x82\xac");
  EXPECT_FALSE(percent_decode("%").has_value());
  EXPECT_FALSE(percent_decode("%2").has_value());
  EXPECT_FALSE(percent_decode("%zz").has_value());
  EXPECT_EQ(percent_decode("a+b", false), "a+b");
}

TEST(Response, Helpers) {
  auto r = Response::json(201, "{}");
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.headers.get("content-type"), "application/json");
  EXPECT_EQ(reason_phrase(504), "Gateway Timeout");
  EXPECT_EQ(reason_phrase(499), "Client Closed Request");
  EXPECT_EQ(reason_phrase(299), "Unknown");
}

}  // namespace
}  // namespace cutoff::http
