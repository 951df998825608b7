#include "cutoff/graphql/internal/blocks.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cutoff::graphql::internal {
namespace {

struct Counted {
  explicit Counted(int* live, std::string text) : live(live), text(std::move(text)) { ++*live; }
  ~Counted() { --*live; }
  int* live;
  std::string text;
};

TEST(Blocks, ObjectsKeepTheirAddressAndAreDestroyedWithTheCollection) {
  int live = 0;
  {
    Blocks<Counted, 4> blocks;
    std::vector<Counted*> seen;
    for (int i = 0; i < 10; ++i) seen.push_back(&blocks.emplace(&live, "item " + std::to_string(i)));
    EXPECT_EQ(blocks.size(), 10u);
    EXPECT_EQ(live, 10);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)]->text, "item " + std::to_string(i));
  }
  EXPECT_EQ(live, 0);
}

TEST(Blocks, ACollectionReusesTheBlocksOfTheOneBeforeOnItsThread) {
  int live = 0;
  const Counted* first = nullptr;
  {
    Blocks<Counted, 4> blocks;
    first = &blocks.emplace(&live, "a");
  }
  Blocks<Counted, 4> again;
  EXPECT_EQ(&again.emplace(&live, "b"), first);
  EXPECT_EQ(live, 1);
}

}  // namespace
}  // namespace cutoff::graphql::internal
