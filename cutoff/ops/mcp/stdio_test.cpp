#include "cutoff/ops/mcp/stdio.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>

#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::ops::mcp {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test_support::Scaled;

constexpr std::string_view kInitialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})";

Registry MakeRegistry() {
  Registry r;
  r.bind("t.sleep").deadline(60s).handler([](const Call& call) -> asio::awaitable<json::value> {
    const auto ms = call.args.as_object().at("ms").to_number<std::int64_t>();
    co_await test_support::Sleep(std::chrono::milliseconds(ms));
    co_return json::object{{"slept_ms", ms}};
  });
  r.bind("t.big").handler([](const Call& call) -> asio::awaitable<json::value> {
    co_return json::object{{"text", std::string(call.args.as_object().at("bytes").to_number<std::size_t>(), 'x')}};
  });
  r.freeze();
  return r;
}

// serve_stdio on two pipes, on its own thread; the test writes requests and reads replies.
class StdioTest : public ::testing::Test {
 protected:
  void Start(ServerOptions server_options = {}, StdioOptions options = {}) {
    server_options.metrics = &metrics_;
    server_.emplace(registry_, server_options);
    session_.emplace(*server_);
    int in[2], out[2];
    ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    server_in_ = in[0];
    to_server_ = in[1];
    from_server_ = out[0];
    server_out_ = out[1];
    auto [ctx, stop] = Context().with_cancel();
    stop_ = stop;
    done_ = asio::co_spawn(io_, serve_stdio(ctx, *session_, server_in_, server_out_, options), asio::use_future);
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    CloseInput();
    if (thread_.joinable()) thread_.join();
    for (int fd : {server_in_, from_server_, server_out_})
      if (fd >= 0) ::close(fd);
  }

  void Write(std::string_view text) {
    while (!text.empty()) {
      const ssize_t n = ::write(to_server_, text.data(), text.size());
      ASSERT_GT(n, 0);
      text.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void WriteLine(std::string_view text) { Write(std::string(text) + "\n"); }
  void CloseInput() {
    if (to_server_ >= 0) ::close(to_server_);
    to_server_ = -1;
  }

  // The next reply line, or nullopt when none comes within `wait` (or the output ended).
  std::optional<json::value> ReadReply(std::chrono::milliseconds wait = 5000ms) {
    const auto until = Clock::now() + Scaled(wait);
    for (;;) {
      if (const auto nl = buffered_.find('\n'); nl != std::string::npos) {
        std::string line = buffered_.substr(0, nl);
        buffered_.erase(0, nl + 1);
        return json::parse(line);
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      if (left <= 0) return std::nullopt;
      pollfd fd{from_server_, POLLIN, 0};
      if (::poll(&fd, 1, static_cast<int>(left)) <= 0) return std::nullopt;
      char buf[65536];
      const ssize_t n = ::read(from_server_, buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      buffered_.append(buf, static_cast<std::size_t>(n));
    }
  }

  bool Finished(std::chrono::milliseconds wait) {
    return done_.wait_for(Scaled(wait)) == std::future_status::ready;
  }

  double Counted(std::string_view outcome) {
    const std::string text = metrics_.expose();
    const std::string series = "cutoff_mcp_tool_calls_total{tool=\"t.sleep\",outcome=\"" + std::string(outcome) + "\"} ";
    const auto at = text.find(series);
    return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size()));
  }

  Registry registry_ = MakeRegistry();
  observe::Registry metrics_;
  std::optional<Server> server_;
  std::optional<Session> session_;
  asio::io_context io_;
  CancelSource stop_;
  std::future<void> done_;
  std::thread thread_;
  int server_in_ = -1, to_server_ = -1, from_server_ = -1, server_out_ = -1;
  std::string buffered_;
};

TEST_F(StdioTest, ServesOneMessagePerLineAndAnswersPingsWhileACallRuns) {
  Start();
  WriteLine(kInitialize);
  auto r = ReadReply();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at("result").at("protocolVersion"), "2025-11-25");
  WriteLine(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  WriteLine(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t.sleep","arguments":{"ms":300}}})");
  // "\r\n" ends a line too, and blank lines are skipped.
  Write("\n   \r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r\n");
  r = ReadReply();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at("id"), 2);  // the ping did not wait for the call
  r = ReadReply();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at("id"), 1);
  EXPECT_EQ(json::parse(r->at("result").at("content").at(0).at("text").as_string()).at("slept_ms"), 300)
      << json::serialize(*r);
  CloseInput();
  EXPECT_TRUE(Finished(2000ms));
}

TEST_F(StdioTest, TheEndOfInputStopsRunningCallsWithCancelled) {
  Start();
  WriteLine(kInitialize);
  ASSERT_TRUE(ReadReply());
  WriteLine(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t.sleep","arguments":{"ms":60000}}})");
  std::this_thread::sleep_for(Scaled(50ms));
  const auto closed = Clock::now();
  CloseInput();
  ASSERT_TRUE(Finished(2000ms));
  EXPECT_LT(Clock::now() - closed, Scaled(500ms));
  EXPECT_EQ(Counted("cancelled"), 1);
  const auto r = ReadReply(100ms);  // written before serve_stdio returned
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at("result").at("_meta").at("dev.cutoff/error").at("code"), "cancelled");
}

TEST_F(StdioTest, AStopOfTheContextStopsCallsWithItsReason) {
  Start();
  WriteLine(kInitialize);
  ASSERT_TRUE(ReadReply());
  WriteLine(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t.sleep","arguments":{"ms":60000}}})");
  std::this_thread::sleep_for(Scaled(50ms));
  stop_.request_stop(StopReason::shutdown);
  ASSERT_TRUE(Finished(2000ms));
  const auto r = ReadReply(100ms);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at("result").at("_meta").at("dev.cutoff/error").at("code"), "shutdown");
}

TEST_F(StdioTest, ALineTooLongIsRefusedWithoutBeingKeptAndTheNextOneIsServed) {
  Start({.max_message_bytes = 1000});
  WriteLine(kInitialize);
  ASSERT_TRUE(ReadReply());
  std::thread writer([this] {
    // 5 MB in one line: far over the limit and over any pipe buffer.
    const std::string chunk(64 * 1024, 'a');
    for (int i = 0; i < 80; ++i) Write(chunk);
    WriteLine("");
    WriteLine(R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  });
  auto r = ReadReply();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at("error").at("code"), -32600);
  EXPECT_EQ(r->at("id"), nullptr);
  r = ReadReply();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at("id"), 2);
  writer.join();
}

TEST_F(StdioTest, ALastLineWithoutANewlineIsServed) {
  Start();
  Write(std::string(kInitialize));
  CloseInput();
  const auto r = ReadReply();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at("id"), 0);
  EXPECT_TRUE(Finished(2000ms));
}

TEST_F(StdioTest, AClientThatStopsReadingIsNotBufferedWithoutBound) {
  Start({}, {.max_queued_output_bytes = 256 * 1024});
  WriteLine(kInitialize);
  ASSERT_TRUE(ReadReply());
  // Ten replies of ~100 KB that nobody reads: more than the 256 KB the server queues (a pipe
  // holds 64 KB), so it stops reading its input.
  for (int i = 0; i < 10; ++i)
    WriteLine(R"({"jsonrpc":"2.0","id":)" + std::to_string(i + 1) +
              R"(,"method":"tools/call","params":{"name":"t.big","arguments":{"bytes":100000}}})");
  std::this_thread::sleep_for(Scaled(300ms));
  // Now 1,000 pings of ~1 KB: the input pipe fills and this writer blocks long before the end.
  std::atomic<int> written{0};
  std::thread writer([&] {
    const std::string pad(1000, 'p');
    for (int i = 0; i < 1000; ++i) {
      WriteLine(R"({"jsonrpc":"2.0","id":"p)" + std::to_string(i) + R"(","method":"ping","params":{"pad":")" + pad + "\"}}");
      ++written;
    }
  });
  std::this_thread::sleep_for(Scaled(300ms));
  EXPECT_LT(written.load(), 200);
  // Reading lets everything through, nothing lost.
  int replies = 0;
  while (replies < 1010 && ReadReply()) ++replies;
  EXPECT_EQ(replies, 1010);
  writer.join();
}

TEST_F(StdioTest, OutputGoneEndsTheSession) {
  Start();
  WriteLine(kInitialize);
  ASSERT_TRUE(ReadReply());
  WriteLine(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t.sleep","arguments":{"ms":60000}}})");
  ::close(from_server_);
  from_server_ = -1;
  WriteLine(R"({"jsonrpc":"2.0","id":2,"method":"ping"})");  // its reply cannot be written
  ASSERT_TRUE(Finished(3000ms));
  EXPECT_EQ(Counted("cancelled"), 1);
}

TEST(StdioFileTest, ARegularFileCanBeTheInput) {
  const Registry registry = MakeRegistry();
  Server server(registry);
  Session session(server);
  char in_path[] = "/tmp/cutoff-mcp-in-XXXXXX";
  const int in = ::mkstemp(in_path);
  ASSERT_GE(in, 0);
  const std::string text = std::string(kInitialize) + "\n" + R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})" + "\n";
  ASSERT_EQ(::write(in, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::lseek(in, 0, SEEK_SET);
  char out_path[] = "/tmp/cutoff-mcp-out-XXXXXX";
  const int out = ::mkstemp(out_path);
  ASSERT_GE(out, 0);
  asio::io_context io;
  auto done = asio::co_spawn(io, serve_stdio(Context(), session, in, out), asio::use_future);
  io.run();
  done.get();
  ::lseek(out, 0, SEEK_SET);
  std::string written(1 << 16, '\0');
  written.resize(static_cast<std::size_t>(::read(out, written.data(), written.size())));
  ::close(in);
  ::close(out);
  ::unlink(in_path);
  ::unlink(out_path);
  EXPECT_NE(written.find(R"("id":0,"result")"), std::string::npos) << written;
  EXPECT_NE(written.find(R"("tools":[)"), std::string::npos) << written;
}

}  // namespace
}  // namespace cutoff::ops::mcp
