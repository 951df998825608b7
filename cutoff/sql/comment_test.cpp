#include "cutoff/sql/comment.hpp"

#include <gtest/gtest.h>

namespace cutoff::sql {
namespace {

TEST(Comment, SortedKeysAndEncodedValues) {
  RequestValues v;
  v.request_id = "req-42";
  v.operation = "Get Item";
  v.trace.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  EXPECT_EQ(with_comment("select 1", v),
            "select 1 /*operation='Get%20Item',request_id='req-42',"
            "traceparent='00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'*/");
}

TEST(Comment, KeepsTrailingSemicolonLast) {
  RequestValues v;
  v.request_id = "r1";
  EXPECT_EQ(with_comment("select 1;  \n", v), "select 1 /*request_id='r1'*/;");
}

TEST(Comment, NothingToSayLeavesStatementAlone) {
  EXPECT_EQ(with_comment("select 1", RequestValues{}), "select 1");
}

TEST(Comment, ValuesCannotCloseTheComment) {
  RequestValues v;
  v.request_id = "x*/ drop table t; --'";
  std::string out = with_comment("select 1", v);
  EXPECT_EQ(out.find("*/"), out.size() - 2);
  EXPECT_EQ(out.find("drop table t;"), std::string::npos);
}

}  // namespace
}  // namespace cutoff::sql
