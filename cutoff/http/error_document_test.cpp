#include "cutoff/http/error_document.hpp"

#include <gtest/gtest.h>

namespace cutoff::http {
namespace {

TEST(ErrorDocument, WhatIsWrittenReadsBack) {
  const std::string body = error_document("deadline_exceeded", "the \"budget\" ran out", "req-1");
  EXPECT_EQ(body, R"({"error":{"code":"deadline_exceeded","message":"the \"budget\" ran out","request_id":"req-1"}})");
  const auto e = parse_error_document(body);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, ErrorCode::deadline_exceeded);
  EXPECT_EQ(e->message, "the \"budget\" ran out");
  EXPECT_EQ(error_document("overloaded", "full", ""), R"({"error":{"code":"overloaded","message":"full"}})");
}

TEST(ErrorDocument, AnUnknownCodeOrNoMessageStillReads) {
  const auto e = parse_error_document(R"({"error":{"code":"from_the_future"}})");
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->code);
  EXPECT_EQ(e->message, "");
}

TEST(ErrorDocument, AnythingElseIsNotOne) {
  EXPECT_FALSE(parse_error_document(""));
  EXPECT_FALSE(parse_error_document("not json"));
  EXPECT_FALSE(parse_error_document("[]"));
  EXPECT_FALSE(parse_error_document(R"({"data":null})"));
  EXPECT_FALSE(parse_error_document(R"({"error":"deadline_exceeded"})"));
}

}  // namespace
}  // namespace cutoff::http
