#include "cutoff/graphql/http/graphql_ws.hpp"

#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <algorithm>
#include <atomic>
#include <mutex>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cutoff/graphql/event_stream.hpp"
#include "cutoff/graphql/metrics_recorder.hpp"
#include "cutoff/observe/metrics.hpp"
#include "fixture/fixture_resolvers.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::graphql {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr std::string_view kSchema = R"(
  type Query { hello: String, hang: String, big: String, slowBig: String, huge: String }
  type Subscription { ticks: Tick, stuck: Tick, feed: String }
  type Tick { n: Int, slow: Int }
)";

// The server's bound on one socket's outbound queue in these tests, and its write timeout.
constexpr std::size_t kMaxQueuedBytes = 1024 * 1024;
constexpr auto kWriteTimeout = 3s;

// Events of 16 KiB, all ready at once, then the end; counts the events pulled.
constexpr int kFeedEvents = 2000;
class CountingStream : public EventStream {
 public:
  CountingStream(std::atomic<int>& pulls, int count) : pulls_(pulls), left_(count) {}
  asio::awaitable<std::optional<Data>> next(const Context&) override {
    if (left_ == 0) co_return std::nullopt;
    --left_;
    ++pulls_;
    co_return Data::from(std::string(16 * 1024, 'f'));
  }

 private:
  std::atomic<int>& pulls_;
  int left_;
};

class GraphQLWs : public ::testing::Test {
 protected:
  void SetUp() override {
    fixture_ = boost::json::parse(R"({"hello": "world", "hang": {"$hang": true},
      "ticks": {"$interval_ms": 20, "$events": [
        {"n": 1, "slow": 1}, {"n": 2, "slow": {"$delay_ms": 10000, "$value": 2}}, {"n": 3, "slow": 3}]},
      "stuck": {"$events": [{"n": 1, "slow": {"$hang": true}}]}})");
    auto built = Schema::from_sdl(std::string(kSchema));
    ASSERT_TRUE(built.ok()) << built.errors[0].message;
    schema_ = std::move(built.schema);
    // Large results, counted: how many operations the server ran for a client.
    schema_->resolve("Query", "big", [this](FieldContext&) {
      ++big_calls_;
      return Data::from(std::string(64 * 1024, 'b'));
    });
    schema_->resolve_async("Query", "slowBig", [this](FieldContext&) -> asio::awaitable<Data> {
      ++slow_big_calls_;
      asio::steady_timer wait(co_await asio::this_coro::executor, 200ms);
      co_await wait.async_wait(asio::use_awaitable);
      co_return Data::from(std::string(256 * 1024, 's'));
    });
    schema_->resolve("Query", "huge", [](FieldContext&) { return Data::from(std::string(2 * 1024 * 1024, 'h')); });
    // A subscription whose events are ready at once, counted as they are pulled.
    schema_->subscribe("Subscription", "feed", [this](FieldContext&) -> asio::awaitable<std::unique_ptr<EventStream>> {
      co_return std::make_unique<CountingStream>(feed_pulls_, kFeedEvents);
    });
    schema_->resolve("Subscription", "feed", [](FieldContext& f) { return f.parent; });
    install_fixture_resolvers(*schema_);
    recorder_ = std::make_unique<MetricsRecorder>(registry_);
    server_ = std::make_unique<http::Server>(io_.get_executor(), http::ServerOptions{.one_io_thread = true});
    GraphQLWsOptions options;
    options.subscribe.event_budget = 150ms * test_support::TimeScale();
    options.subscribe.execution.recorder = recorder_.get();
    options.connection_init_timeout = 300ms * test_support::TimeScale();
    options.root_value = Data::json(&fixture_);
    options.max_queued_bytes = kMaxQueuedBytes;
    options.write_timeout = kWriteTimeout * test_support::TimeScale();
    mount_graphql_ws(*server_, "/graphql", *schema_, options);
    port_ = server_->listen("127.0.0.1", 0);
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    server_->shutdown(100ms);
    thread_.join();
  }

  std::unique_ptr<websocket::stream<tcp::socket>> Connect(std::string_view protocol = kGraphQLTransportWs,
                                                          int receive_buffer = 0) {
    auto ws = std::make_unique<websocket::stream<tcp::socket>>(client_io_);
    if (receive_buffer > 0) {
      // A small window, so that a client that does not read stalls the server's writes soon
      // instead of after megabytes of loopback buffering.
      ws->next_layer().open(tcp::v4());
      ws->next_layer().set_option(asio::socket_base::receive_buffer_size(receive_buffer));
    }
    ws->next_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    ws->set_option(websocket::stream_base::decorator([p = std::string(protocol)](websocket::request_type& req) {
      req.set(beast::http::field::sec_websocket_protocol, p);
    }));
    ws->handshake("127.0.0.1", "/graphql");
    return ws;
  }
  static void Write(websocket::stream<tcp::socket>& ws, std::string_view text) {
    ws.text(true);
    ws.write(asio::buffer(text.data(), text.size()));
  }
  // The next message as parsed JSON, or the close code (as {"closed": code}; -1 when nothing
  // came within 10 s, so that a server that never answers fails a test instead of hanging it).
  boost::json::object Read(websocket::stream<tcp::socket>& ws) {
    beast::flat_buffer b;
    std::optional<boost::system::error_code> result;
    ws.async_read(b, [&](boost::system::error_code ec, std::size_t) { result = ec; });
    client_io_.run_for(10s * test_support::TimeScale());
    if (!result) {
      ws.next_layer().cancel();
      client_io_.run();
    }
    client_io_.restart();
    if (*result == asio::error::operation_aborted) return {{"closed", -1}};
    if (*result) return {{"closed", ws.reason().code}};
    return boost::json::parse(beast::buffers_to_string(b.data())).as_object();
  }
  std::unique_ptr<websocket::stream<tcp::socket>> Ready(int receive_buffer = 0) {
    auto ws = Connect(kGraphQLTransportWs, receive_buffer);
    Write(*ws, R"({"type":"connection_init","payload":{}})");
    EXPECT_EQ(Read(*ws).at("type"), "connection_ack");
    return ws;
  }
  // Writes `messages` without reading anything; returns how many went out within `limit`.
  std::size_t WriteAll(websocket::stream<tcp::socket>& ws, const std::vector<std::string>& messages,
                       Duration limit) {
    auto written = std::make_shared<std::size_t>(0);
    asio::co_spawn(
        client_io_,
        [&ws, &messages, written]() -> asio::awaitable<void> {
          ws.text(true);
          for (const auto& m : messages) {
            auto [ec, n] = co_await ws.async_write(asio::buffer(m), asio::as_tuple(asio::use_awaitable));
            if (ec) co_return;
            ++*written;
          }
        },
        asio::detached);
    client_io_.run_for(limit);
    client_io_.restart();
    return *written;
  }
  static std::vector<std::string> Subscribes(std::string_view prefix, int count, std::string_view query) {
    std::vector<std::string> out;
    for (int i = 0; i < count; ++i)
      out.push_back(R"({"id":")" + std::string(prefix) + std::to_string(i) + R"(","type":"subscribe","payload":{"query":")" +
                    std::string(query) + R"("}})");
    return out;
  }
  // `{ hello }` on a fresh socket: how long the server took to answer it.
  Duration HelloLatency() {
    auto other = Ready();
    const auto t0 = SteadyClock::now();
    Write(*other, R"({"id":"h","type":"subscribe","payload":{"query":"{ hello }"}})");
    EXPECT_EQ(boost::json::serialize(Read(*other).at("payload")), R"({"data":{"hello":"world"}})");
    return SteadyClock::now() - t0;
  }
  double Metric(std::string_view series) {
    const std::string text = registry_.expose();
    const auto at = text.find(std::string(series) + " ");
    return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size() + 1));
  }

  boost::json::value fixture_;
  std::unique_ptr<Schema> schema_;
  observe::Registry registry_;
  std::unique_ptr<MetricsRecorder> recorder_;
  asio::io_context io_;
  asio::io_context client_io_;
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
  std::uint16_t port_ = 0;
  std::atomic<int> big_calls_{0};
  std::atomic<int> slow_big_calls_{0};
  std::atomic<int> feed_pulls_{0};
};

constexpr std::string_view kHangCancelled =
    R"(cutoff_graphql_field_stopped_total{operation="anonymous",field="hang",reason="cancelled"})";
constexpr std::string_view kStuckCancelled =
    R"(cutoff_graphql_field_stopped_total{operation="anonymous",field="stuck.slow",reason="cancelled"})";

TEST_F(GraphQLWs, EachEventGetsItsOwnDeadlineAndTheStreamGoesOn) {
  auto ws = Ready();
  const auto t0 = SteadyClock::now();
  Write(*ws, R"({"id":"1","type":"subscribe","payload":{"query":"subscription { ticks { n slow } }"}})");
  auto first = Read(*ws);
  EXPECT_EQ(first.at("type"), "next");
  EXPECT_EQ(first.at("id"), "1");
  EXPECT_EQ(boost::json::serialize(first.at("payload")), R"({"data":{"ticks":{"n":1,"slow":1}}})");
  auto second = Read(*ws);  // cut at its own 150 ms, not the stream's end
  const std::string payload = boost::json::serialize(second.at("payload"));
  EXPECT_NE(payload.find(R"("data":{"ticks":{"n":2,"slow":null}})"), std::string::npos) << payload;
  EXPECT_NE(payload.find("DEADLINE_EXCEEDED"), std::string::npos);
  EXPECT_NE(payload.find(R"("path":["ticks","slow"])"), std::string::npos);
  auto third = Read(*ws);
  EXPECT_EQ(boost::json::serialize(third.at("payload")), R"({"data":{"ticks":{"n":3,"slow":3}}})");
  EXPECT_EQ(Read(*ws).at("type"), "complete");
  EXPECT_LT(SteadyClock::now() - t0, 2s * test_support::TimeScale());
}

TEST_F(GraphQLWs, ClientCompleteCancelsTheEventBeingExecuted) {
  auto ws = Ready();
  Write(*ws, R"({"id":"s","type":"subscribe","payload":{"query":"subscription { stuck { n slow } }"}})");
  std::this_thread::sleep_for(50ms);  // the event is executing: its `slow` field hangs
  Write(*ws, R"({"id":"s","type":"complete"})");
  const auto t0 = SteadyClock::now();
  while (Metric(R"(cutoff_graphql_field_stopped_total{operation="anonymous",field="stuck.slow",reason="cancelled"})") == 0 &&
         SteadyClock::now() - t0 < 2s * test_support::TimeScale())
    std::this_thread::sleep_for(1ms);
  EXPECT_LT(SteadyClock::now() - t0, 100ms * test_support::TimeScale());
  // Nothing more comes for "s": the next message is the answer to our ping.
  Write(*ws, R"({"type":"ping"})");
  EXPECT_EQ(Read(*ws).at("type"), "pong");
  // The id can be used again.
  Write(*ws, R"({"id":"s","type":"subscribe","payload":{"query":"{ hello }"}})");
  EXPECT_EQ(boost::json::serialize(Read(*ws).at("payload")), R"({"data":{"hello":"world"}})");
  EXPECT_EQ(Read(*ws).at("type"), "complete");
}

TEST_F(GraphQLWs, DisconnectCancelsTheEventBeingExecuted) {
  auto ws = Ready();
  Write(*ws, R"({"id":"s","type":"subscribe","payload":{"query":"subscription { stuck { n slow } }"}})");
  std::this_thread::sleep_for(50ms);
  ws->next_layer().close();
  const auto t0 = SteadyClock::now();
  while (Metric(R"(cutoff_graphql_field_stopped_total{operation="anonymous",field="stuck.slow",reason="cancelled"})") == 0 &&
         SteadyClock::now() - t0 < 2s * test_support::TimeScale())
    std::this_thread::sleep_for(1ms);
  EXPECT_LT(SteadyClock::now() - t0, 100ms * test_support::TimeScale());
}

TEST_F(GraphQLWs, QueriesAndErrors) {
  auto ws = Ready();
  Write(*ws, R"({"id":"q","type":"subscribe","payload":{"query":"query Q { hello }","operationName":"Q"}})");
  auto next = Read(*ws);
  EXPECT_EQ(next.at("type"), "next");
  EXPECT_EQ(Read(*ws).at("type"), "complete");
  Write(*ws, R"({"id":"v","type":"subscribe","payload":{"query":"{ nope }"}})");
  auto error = Read(*ws);
  EXPECT_EQ(error.at("type"), "error");
  EXPECT_TRUE(error.at("payload").is_array());
  Write(*ws, R"({"id":"p","type":"subscribe","payload":{"query":"{ hello"}})");
  EXPECT_EQ(Read(*ws).at("type"), "error");
  Write(*ws, R"({"type":"ping","payload":{"x":1}})");
  EXPECT_EQ(Read(*ws).at("type"), "pong");
}

// Over WebSocket too, a resolver's unexpected error reaches the client masked and the
// server's log with its real message (the request id is the socket's).
TEST_F(GraphQLWs, UnexpectedErrorsAreMaskedAndLogged) {
  schema_->resolve("Query", "big", [](FieldContext&) -> Data { throw std::runtime_error("cache password=hunter2"); });
  std::mutex mu;
  std::vector<std::string> lines;
  asio::io_context io;
  http::Server server(io.get_executor(), {.log = [&](std::string_view line) {
                                            std::lock_guard lock(mu);
                                            lines.emplace_back(line);
                                          }});
  GraphQLWsOptions options;
  options.root_value = Data::json(&fixture_);
  mount_graphql_ws(server, "/graphql", *schema_, options);
  port_ = server.listen("127.0.0.1", 0);
  std::thread thread([&] { io.run(); });
  {
    auto ws = Ready();
    Write(*ws, R"({"id":"q","type":"subscribe","payload":{"query":"query Q { big hello }"}})");
    auto next = Read(*ws);
    EXPECT_EQ(next.at("type"), "next");
    const std::string payload = boost::json::serialize(next.at("payload"));
    EXPECT_NE(payload.find("Internal server error (request id: "), std::string::npos) << payload;
    EXPECT_NE(payload.find(R"("hello":"world")"), std::string::npos) << payload;
    EXPECT_EQ(payload.find("hunter2"), std::string::npos) << payload;
    EXPECT_EQ(Read(*ws).at("type"), "complete");
  }
  server.shutdown(100ms);
  thread.join();
  std::lock_guard lock(mu);
  const auto logged = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find(R"("event":"graphql_error")") != std::string::npos &&
           l.find(R"("path":"big","message":"cache password=hunter2")") != std::string::npos;
  });
  EXPECT_NE(logged, lines.end());
}

TEST_F(GraphQLWs, ProtocolViolationsCloseWithTheProtocolsCodes) {
  auto close_code = [&](std::vector<std::string> messages, bool init = false) {
    auto ws = init ? Ready() : Connect();
    for (const auto& m : messages) Write(*ws, m);
    for (;;) {
      auto msg = Read(*ws);
      if (msg.contains("closed")) return msg.at("closed").to_number<std::int64_t>();
    }
  };
  EXPECT_EQ(close_code({R"({"id":"1","type":"subscribe","payload":{"query":"{ hello }"}})"}), 4401);
  EXPECT_EQ(close_code({"not json"}), 4400);
  EXPECT_EQ(close_code({R"({"type":"what"})"}), 4400);
  EXPECT_EQ(close_code({R"({"type":"connection_init"})"}, true), 4429);
  // (`hang` runs until stopped, so the first is still running when the second arrives.)
  EXPECT_EQ(close_code({R"({"id":"d","type":"subscribe","payload":{"query":"{ hang }"}})",
                        R"({"id":"d","type":"subscribe","payload":{"query":"{ hang }"}})"},
                       true),
            4409);
  EXPECT_EQ(close_code({}), 4408);  // no connection_init within the timeout
  {
    auto ws = Connect("something-else");
    EXPECT_EQ(Read(*ws).at("closed").to_number<std::int64_t>(), 4406);
  }
}


// The value of `counter` once it has stopped moving (no change for 200 ms, 5 s at most).
int Settled(const std::atomic<int>& counter) {
  int value = counter.load();
  for (const auto t0 = SteadyClock::now(); SteadyClock::now() - t0 < 5s * test_support::TimeScale();) {
    std::this_thread::sleep_for(200ms);
    if (counter.load() == value) break;
    value = counter.load();
  }
  return value;
}

// A client that sends many operations with large results and does not read: the server stops
// running operations for it once a bounded amount is queued (it used to run them all and queue
// every reply: 600 x 64 KiB here), answers others at once, and resumes when the client reads.
TEST_F(GraphQLWs, AClientThatStopsReadingGetsNoMoreWorkDone) {
  auto ws = Ready(8 * 1024);
  constexpr int kCount = 600;
  ASSERT_EQ(WriteAll(*ws, Subscribes("b", kCount, "{ big }"), 5s * test_support::TimeScale()), std::size_t{kCount});
  // Wait until the server has stopped running them.
  const int ran = Settled(big_calls_);
  // What ran is bounded by the queue bound plus what the kernel's socket buffers took in
  // (an 8 KiB receive window here); without backpressure all 600 ran, 38 MiB queued.
  EXPECT_LT(ran, kCount / 4) << "the server kept running operations for a client that does not read";
  EXPECT_LT(HelloLatency(), 500ms * test_support::TimeScale());
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(big_calls_.load(), ran) << "operations ran while the client was still not reading";

  // Reading again lets the rest run: every operation is answered, none is lost.
  int completes = 0;
  const auto t0 = SteadyClock::now();
  while (completes < kCount && SteadyClock::now() - t0 < 10s * test_support::TimeScale()) {
    auto msg = Read(*ws);
    if (msg.contains("closed")) break;
    if (msg.at("type") == "complete") ++completes;
  }
  EXPECT_EQ(completes, kCount);
  EXPECT_EQ(big_calls_.load(), kCount);
}

// A subscription stops pulling events while its client does not read, and goes on when it does.
TEST_F(GraphQLWs, ASubscriptionStopsPullingEventsWhileItsClientDoesNotRead) {
  auto ws = Ready(8 * 1024);
  Write(*ws, R"({"id":"f","type":"subscribe","payload":{"query":"subscription { feed }"}})");
  const int pulled = Settled(feed_pulls_);
  // Without backpressure all 2000 (31 MiB) were pulled and queued at once.
  EXPECT_LT(pulled, kFeedEvents / 4) << "the subscription kept pulling events for a client that does not read";
  EXPECT_LT(HelloLatency(), 500ms * test_support::TimeScale());
  int nexts = 0;
  for (;;) {
    auto msg = Read(*ws);
    if (msg.contains("closed") || msg.at("type") == "complete") break;
    if (msg.at("type") == "next") ++nexts;
  }
  EXPECT_EQ(nexts, kFeedEvents);
  EXPECT_EQ(feed_pulls_.load(), kFeedEvents);
}

// Operations already running when the client stopped reading reply at once, past the bound:
// the socket is closed with 1013, what was queued is dropped, and what still runs is cancelled.
TEST_F(GraphQLWs, RepliesOverflowingTheQueueCloseTheSocketWith1013) {
  auto ws = Ready(8 * 1024);
  Write(*ws, R"({"id":"s","type":"subscribe","payload":{"query":"{ hang }"}})");  // runs until stopped
  constexpr int kCount = 60;  // 60 x 256 KiB, all replying 200 ms from now
  ASSERT_EQ(WriteAll(*ws, Subscribes("q", kCount, "{ slowBig }"), 5s * test_support::TimeScale()), std::size_t{kCount});
  const auto t0 = SteadyClock::now();
  while (Metric(kHangCancelled) == 0 && SteadyClock::now() - t0 < 2s * test_support::TimeScale())
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(Metric(kHangCancelled), 1) << "the hanging query was not cancelled on overflow";
  EXPECT_EQ(slow_big_calls_.load(), kCount);
  EXPECT_LT(HelloLatency(), 500ms * test_support::TimeScale());

  // What was written before the overflow arrives, then the close frame.
  int nexts = 0;
  std::int64_t code = 0;
  for (;;) {
    auto msg = Read(*ws);
    if (msg.contains("closed")) {
      code = msg.at("closed").to_number<std::int64_t>();
      break;
    }
    if (msg.at("type") == "next") ++nexts;
  }
  EXPECT_EQ(code, 1013);
  EXPECT_LT(nexts, kCount);
}

// A client that never reads is dropped once a write has stalled for write_timeout, and what ran
// for it is cancelled.
TEST_F(GraphQLWs, AClientThatNeverReadsIsDroppedAfterTheWriteTimeout) {
  auto ws = Ready(8 * 1024);
  Write(*ws, R"({"id":"s","type":"subscribe","payload":{"query":"{ hang }"}})");  // runs until stopped
  const auto t0 = SteadyClock::now();
  ASSERT_EQ(WriteAll(*ws, Subscribes("b", 300, "{ big }"), 5s * test_support::TimeScale()), std::size_t{300});
  while (Metric(kHangCancelled) == 0 && SteadyClock::now() - t0 < 3 * kWriteTimeout * test_support::TimeScale())
    std::this_thread::sleep_for(10ms);
  const auto took = SteadyClock::now() - t0;
  EXPECT_EQ(Metric(kHangCancelled), 1);
  EXPECT_GT(took, kWriteTimeout / 2);
  EXPECT_LT(took, kWriteTimeout * test_support::TimeScale() + 2s * test_support::TimeScale());
  EXPECT_LT(HelloLatency(), 500ms * test_support::TimeScale());
  // The client finds the connection gone after what was already in its socket buffers.
  const auto t1 = SteadyClock::now();
  std::int64_t code = -1;
  for (;;) {
    auto msg = Read(*ws);
    if (msg.contains("closed")) {
      code = msg.at("closed").to_number<std::int64_t>();
      break;
    }
  }
  EXPECT_NE(code, -1) << "the connection was not dropped";
  EXPECT_LT(SteadyClock::now() - t1, 5s * test_support::TimeScale());
}

// The same bounds hold when the server runs several threads (each connection on a strand).
TEST_F(GraphQLWs, TheBoundsHoldOnAServerWithSeveralThreads) {
  asio::io_context io;
  http::Server server(io.get_executor(), http::ServerOptions{});
  GraphQLWsOptions options;
  options.subscribe.execution.recorder = recorder_.get();
  options.root_value = Data::json(&fixture_);
  options.max_queued_bytes = kMaxQueuedBytes;
  options.write_timeout = kWriteTimeout * test_support::TimeScale();
  mount_graphql_ws(server, "/graphql", *schema_, options);
  port_ = server.listen("127.0.0.1", 0);  // Connect() and HelloLatency() now use this server
  std::thread one([&] { io.run(); });
  std::thread two([&] { io.run(); });

  {  // A client that stops reading stops getting work done.
    auto ws = Ready(8 * 1024);
    ASSERT_EQ(WriteAll(*ws, Subscribes("b", 600, "{ big }"), 5s * test_support::TimeScale()), std::size_t{600});
    int ran = big_calls_.load();
    for (const auto t0 = SteadyClock::now(); SteadyClock::now() - t0 < 5s * test_support::TimeScale();) {
      std::this_thread::sleep_for(200ms);
      if (big_calls_.load() == ran) break;
      ran = big_calls_.load();
    }
    EXPECT_LT(ran, 150);
    EXPECT_LT(HelloLatency(), 500ms * test_support::TimeScale());
  }
  {  // Replies past the bound close the socket with 1013 and cancel what runs for it.
    auto ws = Ready(8 * 1024);
    Write(*ws, R"({"id":"s","type":"subscribe","payload":{"query":"{ hang }"}})");
    ASSERT_EQ(WriteAll(*ws, Subscribes("q", 60, "{ slowBig }"), 5s * test_support::TimeScale()), std::size_t{60});
    const auto t0 = SteadyClock::now();
    while (Metric(kHangCancelled) == 0 && SteadyClock::now() - t0 < 2s * test_support::TimeScale())
      std::this_thread::sleep_for(5ms);
    EXPECT_EQ(Metric(kHangCancelled), 1);
    std::int64_t code = 0;
    for (;;) {
      auto msg = Read(*ws);
      if (msg.contains("closed")) {
        code = msg.at("closed").to_number<std::int64_t>();
        break;
      }
    }
    EXPECT_EQ(code, 1013);
  }
  server.shutdown(100ms);
  one.join();
  two.join();
}

// A reply that could never fit the queue fails its own operation; the socket carries on.
TEST_F(GraphQLWs, AReplyLargerThanTheQueueBoundIsAnErrorForItsOperation) {
  auto ws = Ready();
  Write(*ws, R"({"id":"h","type":"subscribe","payload":{"query":"{ huge }"}})");
  auto error = Read(*ws);
  EXPECT_EQ(error.at("type"), "error");
  EXPECT_EQ(error.at("id"), "h");
  const std::string payload = boost::json::serialize(error.at("payload"));
  EXPECT_NE(payload.find("RESPONSE_TOO_LARGE"), std::string::npos) << payload.substr(0, 200);
  Write(*ws, R"({"id":"h","type":"subscribe","payload":{"query":"{ hello }"}})");
  EXPECT_EQ(boost::json::serialize(Read(*ws).at("payload")), R"({"data":{"hello":"world"}})");
  EXPECT_EQ(Read(*ws).at("type"), "complete");
}

// Thousands of operations on one socket: the one past max_operations (100) closes it with
// 4400, the ones running are cancelled, and other clients are served meanwhile.
TEST_F(GraphQLWs, ThousandsOfOperationsStopAtMaxOperations) {
  auto ws = Ready();
  WriteAll(*ws, Subscribes("s", 3000, "{ hang }"), 5s * test_support::TimeScale());
  std::int64_t code = 0;
  for (;;) {
    auto msg = Read(*ws);
    if (msg.contains("closed")) {
      code = msg.at("closed").to_number<std::int64_t>();
      break;
    }
  }
  EXPECT_EQ(code, 4400);
  const auto t0 = SteadyClock::now();
  while (Metric(kHangCancelled) < 100 && SteadyClock::now() - t0 < 2s * test_support::TimeScale())
    std::this_thread::sleep_for(5ms);
  // (The last one may be stopped before it started executing.)
  EXPECT_GE(Metric(kHangCancelled), 99);
  EXPECT_LE(Metric(kHangCancelled), 100);
  EXPECT_LT(HelloLatency(), 500ms * test_support::TimeScale());
}

// Before connection_init only ping and pong are allowed (graphql-transport-ws): a ping is
// answered, a subscribe closes the socket with 4401.
TEST_F(GraphQLWs, MessagesBeforeConnectionInit) {
  auto ws = Connect();
  Write(*ws, R"({"type":"ping"})");
  EXPECT_EQ(Read(*ws).at("type"), "pong");
  Write(*ws, R"({"type":"pong"})");
  Write(*ws, R"({"id":"1","type":"complete"})");
  Write(*ws, R"({"id":"1","type":"subscribe","payload":{"query":"{ hello }"}})");
  EXPECT_EQ(Read(*ws).at("closed").to_number<std::int64_t>(), 4401);
}

// A duplicate id is refused while the first operation with it runs, and free once it ended.
TEST_F(GraphQLWs, DuplicateIds) {
  auto ws = Ready();
  Write(*ws, R"({"id":"d","type":"subscribe","payload":{"query":"{ hello }"}})");
  EXPECT_EQ(Read(*ws).at("type"), "next");
  EXPECT_EQ(Read(*ws).at("type"), "complete");
  Write(*ws, R"({"id":"d","type":"subscribe","payload":{"query":"{ hang }"}})");
  Write(*ws, R"({"type":"ping"})");  // answered while the operation runs (it hangs)
  EXPECT_EQ(Read(*ws).at("type"), "pong");
  Write(*ws, R"({"id":"d","type":"subscribe","payload":{"query":"{ hello }"}})");
  EXPECT_EQ(Read(*ws).at("closed").to_number<std::int64_t>(), 4409);
}

}  // namespace
}  // namespace cutoff::graphql
