#include "cutoff/observe/trace.hpp"

#include <gtest/gtest.h>

namespace cutoff::observe {
namespace {

constexpr const char* kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceParent, ParsesAndPrintsTheW3cExample) {
  auto t = parse_traceparent(kValid);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(t->parent_id_hex(), "00f067aa0ba902b7");
  EXPECT_TRUE(t->sampled());
  EXPECT_EQ(t->to_string(), kValid);
}

TEST(TraceParent, ChildKeepsTheTraceWithANewSpan) {
  auto t = *parse_traceparent(kValid);
  TraceParent c = t.child();
  EXPECT_EQ(c.trace_id, t.trace_id);
  EXPECT_NE(c.parent_id, t.parent_id);
  EXPECT_EQ(c.flags, t.flags);
  TraceParent r = TraceParent::root();
  EXPECT_TRUE(parse_traceparent(r.to_string()));
}

TEST(TraceParent, RejectsInvalidHeaders) {
  for (const char* bad : {
           "",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",      // short flags
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",     // zero trace id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",     // zero parent id
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",     // upper case
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",     // version ff
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-xx",  // extra field on 00
           "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
           "zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
       })
    EXPECT_FALSE(parse_traceparent(bad)) << bad;
}

TEST(TraceParent, FutureVersionsReadTheirFirstFields) {
  EXPECT_TRUE(parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future"));
  EXPECT_FALSE(parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x"));
}

}  // namespace
}  // namespace cutoff::observe
