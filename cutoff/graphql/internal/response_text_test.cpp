#include "cutoff/graphql/internal/response_text.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace cutoff::graphql::internal {
namespace {

using Part = ResponseText::Part;

TEST(ResponseText, TextWrittenAtOnceIsTheBuffer) {
  ResponseText text;
  text.begin(text.root());
  text.out() += R"({"a":1})";
  text.end();
  EXPECT_EQ(std::move(text).render(), R"({"a":1})");
}

TEST(ResponseText, HolesAreFilledLaterInAnyOrder) {
  ResponseText text;
  text.begin(text.root());
  text.out() += "[";
  Part* a = text.hole();
  text.out() += ",";
  Part* b = text.hole();
  text.out() += "]";
  text.end();
  text.begin(b);
  text.out() += "2";
  text.end();
  text.begin(a);
  text.out() += "{\"x\":";
  Part* inner = text.hole();
  text.out() += "}";
  text.end();
  text.begin(inner);
  text.out() += "true";
  text.end();
  EXPECT_EQ(std::move(text).render(), R"([{"x":true},2])");
}

TEST(ResponseText, WalksOverALongTextWriteChunksThatRenderAsOne) {
  // Each walk writes 100 KiB; past 256 KiB the next walk starts a chunk of its own. A block
  // cut in a later chunk is nulled, a hole inside it filled, all rendered in order.
  const std::string run(100 * 1024, 'x');
  ResponseText text;
  text.begin_walk(text.root());
  text.out() += "[\"" + run;
  Part* next = text.hole();
  text.out() += "\"]";
  text.end();
  std::string expected = "[\"" + run;
  for (int walk = 0; walk < 6; ++walk) {
    text.begin_walk(next);
    text.out() += run;
    if (walk == 4) {
      const ResponseText::Mark m = text.mark();
      text.out() += "dropped";
      Part* block = text.cut(m);
      text.hole();
      block->nulled = true;
      text.resume(m.part);
      expected += run + "null";
    } else {
      expected += run;
    }
    next = text.hole();
    text.end();
  }
  expected += "\"]";
  EXPECT_EQ(std::move(text).render(), expected);
}

TEST(ResponseText, TruncateDropsTextAndHolesSinceTheMark) {
  ResponseText text;
  text.begin(text.root());
  text.out() += "[1,";
  const ResponseText::Mark m = text.mark();
  text.out() += "{\"a\":";
  text.hole();
  text.out() += ",\"b\":";
  text.truncate(m);
  text.out() += "null]";
  text.end();
  EXPECT_EQ(std::move(text).render(), "[1,null]");
}

TEST(ResponseText, ACutBlockCanBeNulledAfterItWasWritten) {
  ResponseText text;
  text.begin(text.root());
  text.out() += R"({"keep":1,"item":)";
  const ResponseText::Mark m = text.mark();
  text.out() += R"({"a":)";
  Part* block = text.cut(m);  // a hole inside may null the item later
  Part* h = text.hole();
  h->target = block;
  text.out() += "}";
  text.resume(m.part);
  text.out() += R"(,"after":2})";
  text.end();
  // The hole fails in a non-null position: its block becomes null.
  h->target->nulled = true;
  EXPECT_EQ(std::move(text).render(), R"({"keep":1,"item":null,"after":2})");
}

TEST(ResponseText, ACutBlockThatIsNotNulledKeepsItsText) {
  ResponseText text;
  text.begin(text.root());
  text.out() += "[0,";
  Part* before = text.hole();
  text.out() += ",";
  const ResponseText::Mark m = text.mark();
  text.out() += "[";
  Part* inside = text.hole();
  text.out() += ",5";
  text.cut(m);
  text.out() += "]";
  text.resume(m.part);
  text.out() += "]";
  text.end();
  text.begin(before);
  text.out() += "1";
  text.end();
  text.begin(inside);
  text.out() += "4";
  text.end();
  EXPECT_EQ(std::move(text).render(), "[0,1,[4,5]]");
}

TEST(ResponseText, NestedCutsInTheSameRunSplitItTwice) {
  ResponseText text;
  text.begin(text.root());
  text.out() += "{";
  const ResponseText::Mark outer = text.mark();
  text.out() += "[";
  const ResponseText::Mark inner = text.mark();
  text.out() += "[";
  Part* inner_block = text.cut(inner);
  text.hole()->target = inner_block;
  text.out() += "]";
  text.resume(inner.part);
  Part* outer_block = text.cut(outer);
  text.hole()->target = outer_block;
  text.out() += "]";
  text.resume(outer.part);
  text.out() += "}";
  text.end();
  inner_block->nulled = true;
  EXPECT_EQ(std::move(text).render(), "{[null]}");
}

TEST(ResponseText, ANulledRootIsNull) {
  ResponseText text;
  text.begin(text.root());
  text.out() += "{\"a\":";
  text.hole();
  text.out() += "}";
  text.end();
  text.root()->nulled = true;
  EXPECT_EQ(std::move(text).render(), "null");
}

}  // namespace
}  // namespace cutoff::graphql::internal
