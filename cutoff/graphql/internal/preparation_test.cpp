#include "cutoff/graphql/internal/preparation.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <string>
#include <thread>

namespace cutoff::graphql::internal {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

TEST(Preparation, ALargeDocumentIsPreparedWhileTheLoopServesOthers) {
  SchemaResult built = Schema::from_sdl("type Query { hello: String }");
  ASSERT_TRUE(built.ok());
  std::string large = "{";
  for (int i = 0; i < 40'000; ++i) large += " a" + std::to_string(i) + ": hello";
  large += " }";
  ASSERT_GE(large.size(), kPrepareInlineBytes);

  asio::io_context io;
  DocumentCache cache(std::size_t{512} << 20);
  std::shared_ptr<const PreparedDocument> doc, small;
  std::thread::id resumed_on;
  int ticks = 0;
  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto preparing = prepare_off_loop_if_large(*built.schema, large, {}, {}, &cache);
        doc = co_await std::move(preparing);
        resumed_on = std::this_thread::get_id();
        auto inline_one = prepare_off_loop_if_large(*built.schema, "{ hello }", {}, {}, nullptr);
        small = co_await std::move(inline_one);
        done = true;
      },
      asio::detached);
  // Another client on the loop, ticking while the document is parsed elsewhere.
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer t(io);
        while (!done) {
          t.expires_after(1ms);
          co_await t.async_wait(asio::use_awaitable);
          ++ticks;
        }
      },
      asio::detached);
  io.run();
  ASSERT_TRUE(doc && doc->ok());
  EXPECT_EQ(doc->document->operations[0].selection_set.size(), 40'000u);
  EXPECT_EQ(resumed_on, std::this_thread::get_id());  // back on the caller's executor
  EXPECT_EQ(cache.entries(), 1u);
  ASSERT_TRUE(small && small->ok());
  EXPECT_GT(ticks, 1);  // the loop ran meanwhile
  return_freed_memory_soon();
}

}  // namespace
}  // namespace cutoff::graphql::internal
