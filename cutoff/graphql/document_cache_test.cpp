#include "cutoff/graphql/document_cache.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cutoff::graphql {
namespace {

std::unique_ptr<Schema> Build() {
  SchemaResult r = Schema::from_sdl("type Query { a: Int b: String }");
  EXPECT_TRUE(r.ok());
  return std::move(r.schema);
}

// A valid query of about `fields` fields, distinct per `n`.
std::string Query(int n, int fields) {
  std::string q = "query Q" + (n < 0 ? std::string("hot") : std::to_string(n)) + " {";
  for (int i = 0; i < fields; ++i) q += " f" + std::to_string(i) + ": a";
  return q + " }";
}

TEST(DocumentCache, AHotQueryIsPreparedOnce) {
  auto schema = Build();
  DocumentCache cache(1 << 20);
  auto first = cache.prepare(*schema, "{ a }", {}, {});
  auto second = cache.prepare(*schema, "{ a }", {}, {});
  ASSERT_TRUE(first->ok());
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(cache.entries(), 1u);
}

TEST(DocumentCache, InvalidDocumentsAreNeverKept) {
  auto schema = Build();
  DocumentCache cache(1 << 20);
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(cache.prepare(*schema, "{ nope" + std::to_string(i) + " }", {}, {})->ok());  // validation
    EXPECT_FALSE(cache.prepare(*schema, "{ a " + std::to_string(i), {}, {})->ok());             // syntax
  }
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(DocumentCache, IsBoundedInBytesAndKeepsTheRecentlyUsed) {
  auto schema = Build();
  const std::size_t max = 2 << 20;
  DocumentCache cache(max);
  auto hot = cache.prepare(*schema, Query(-1, 10), {}, {});
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(cache.prepare(*schema, Query(i, 200), {}, {})->ok());
    EXPECT_EQ(cache.prepare(*schema, Query(-1, 10), {}, {}).get(), hot.get());  // used: stays
    EXPECT_LE(cache.bytes(), max);
  }
  EXPECT_GT(cache.entries(), 10u);
  EXPECT_LT(cache.entries(), 300u);
  // Each entry counts at least its text and syntax nodes.
  auto doc = prepare_document(*schema, Query(0, 200), {}, {});
  EXPECT_GT(estimated_bytes(*doc->document), 200 * sizeof(Selection));
}

TEST(DocumentCache, ADocumentOverASixteenthOfTheCacheIsNotKept) {
  auto schema = Build();
  DocumentCache cache(64 * 1024);
  EXPECT_TRUE(cache.prepare(*schema, Query(0, 2000), {}, {})->ok());
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_TRUE(cache.prepare(*schema, Query(1, 3), {}, {})->ok());
  EXPECT_EQ(cache.entries(), 1u);
}

TEST(DocumentCache, ZeroBytesCachesNothing) {
  auto schema = Build();
  DocumentCache cache(0);
  auto a = cache.prepare(*schema, "{ a }", {}, {});
  auto b = cache.prepare(*schema, "{ a }", {}, {});
  EXPECT_TRUE(a->ok());
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(cache.entries(), 0u);
}

}  // namespace
}  // namespace cutoff::graphql
