#include "cutoff/graphql/graphiql_page.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>

namespace cutoff::graphql {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

TEST(GraphiqlPage, IsAnHtmlDocument) {
  const auto page = graphiql_page();
  ASSERT_GT(page.size(), 100'000u);  // GraphiQL and React are in it
  EXPECT_EQ(lower(page.substr(0, 14)), "<!doctype html");
  EXPECT_NE(page.find("id=\"graphiql\""), std::string_view::npos);
  EXPECT_NE(lower(page.substr(page.size() - 200)).find("</html>"), std::string_view::npos);
  EXPECT_EQ(page.find('\0'), std::string_view::npos);
}

TEST(GraphiqlPage, LoadsNothingFromElsewhere) {
  const auto page = lower(graphiql_page());
  for (const char* external : {"<script src=\"http", "<script src=\"//", "<link href=\"http", "<link href=\"//",
                               "rel=\"stylesheet\"", "@import"}) {
    EXPECT_EQ(page.find(external), std::string::npos) << external;
  }
}

TEST(GraphiqlPage, EndpointIsConfigurableOnce) {
  const auto page = graphiql_page();
  const auto at = page.find("data-endpoint=\"/graphql\"");
  ASSERT_NE(at, std::string_view::npos);
  EXPECT_EQ(page.find("data-endpoint=", at + 1), std::string_view::npos);
}

TEST(GraphiqlPage, IsStable) {
  EXPECT_EQ(graphiql_page().data(), graphiql_page().data());
}

}  // namespace
}  // namespace cutoff::graphql
