#include "cutoff/http/internal/websocket_session.hpp"

#include <gtest/gtest.h>

namespace cutoff::http::internal {
namespace {

TEST(ChooseSubprotocol, PicksTheServersFirstPreferenceThatIsOffered) {
  const std::vector<std::string> accepted{"graphql-transport-ws", "graphql-ws"};
  EXPECT_EQ(ChooseSubprotocol("graphql-ws, graphql-transport-ws", accepted), "graphql-transport-ws");
  EXPECT_EQ(ChooseSubprotocol("other,\tgraphql-ws ", accepted), "graphql-ws");
  EXPECT_EQ(ChooseSubprotocol("other", accepted), "");
  EXPECT_EQ(ChooseSubprotocol("", accepted), "");
  EXPECT_EQ(ChooseSubprotocol(" , ,graphql-ws", accepted), "graphql-ws");
}

TEST(ChooseSubprotocol, ARouteThatAcceptsNoneAnswersWithNone) { EXPECT_EQ(ChooseSubprotocol("graphql-ws", {}), ""); }

TEST(ChooseSubprotocol, NamesCompareExactly) {
  EXPECT_EQ(ChooseSubprotocol("GraphQL-WS", {"graphql-ws"}), "");
  EXPECT_EQ(ChooseSubprotocol("graphql-ws-extra", {"graphql-ws"}), "");
}

}  // namespace
}  // namespace cutoff::http::internal
