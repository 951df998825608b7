#include "cutoff/graphql/http/graphql_ws.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <thread>

#include "cutoff/graphql/fixture.hpp"
#include "cutoff/graphql/metrics_recorder.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/testing/time_scale.hpp"

namespace cutoff::graphql {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr std::string_view kSchema = R"(
  type Query { hello: String }
  type Subscription { ticks: Tick, stuck: Tick }
  type Tick { n: Int, slow: Int }
)";

class GraphQLWs : public ::testing::Test {
 protected:
  void SetUp() override {
    fixture_ = boost::json::parse(R"({"hello": "world",
      "ticks": {"$interval_ms": 20, "$events": [
        {"n": 1, "slow": 1}, {"n": 2, "slow": {"$delay_ms": 10000, "$value": 2}}, {"n": 3, "slow": 3}]},
      "stuck": {"$events": [{"n": 1, "slow": {"$hang": true}}]}})");
    auto built = Schema::from_sdl(std::string(kSchema));
    ASSERT_TRUE(built.ok()) << built.errors[0].message;
    schema_ = std::move(built.schema);
    install_fixture_resolvers(*schema_);
    recorder_ = std::make_unique<MetricsRecorder>(registry_);
    server_ = std::make_unique<http::Server>(io_.get_executor(), http::ServerOptions{.one_io_thread = true});
    GraphQLWsOptions options;
    options.subscribe.event_budget = 150ms * testing::TimeScale();
    options.subscribe.execution.recorder = recorder_.get();
    options.connection_init_timeout = 300ms * testing::TimeScale();
    options.root_value = Data::json(&fixture_);
    mount_graphql_ws(*server_, "/graphql", *schema_, options);
    port_ = server_->listen("127.0.0.1", 0);
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    server_->shutdown(100ms);
    thread_.join();
  }

  std::unique_ptr<websocket::stream<tcp::socket>> Connect(std::string_view protocol = kGraphQLTransportWs) {
    auto ws = std::make_unique<websocket::stream<tcp::socket>>(client_io_);
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
  // The next message as parsed JSON, or the close code (as {"closed": code}).
  static boost::json::object Read(websocket::stream<tcp::socket>& ws) {
    beast::flat_buffer b;
    boost::system::error_code ec;
    ws.read(b, ec);
    if (ec) return {{"closed", ws.reason().code}};
    return boost::json::parse(beast::buffers_to_string(b.data())).as_object();
  }
  std::unique_ptr<websocket::stream<tcp::socket>> Ready() {
    auto ws = Connect();
    Write(*ws, R"({"type":"connection_init","payload":{}})");
    EXPECT_EQ(Read(*ws).at("type"), "connection_ack");
    return ws;
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
};

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
  EXPECT_LT(SteadyClock::now() - t0, 2s * testing::TimeScale());
}

TEST_F(GraphQLWs, ClientCompleteCancelsTheEventBeingExecuted) {
  auto ws = Ready();
  Write(*ws, R"({"id":"s","type":"subscribe","payload":{"query":"subscription { stuck { n slow } }"}})");
  std::this_thread::sleep_for(50ms);  // the event is executing: its `slow` field hangs
  Write(*ws, R"({"id":"s","type":"complete"})");
  const auto t0 = SteadyClock::now();
  while (Metric(R"(cutoff_stopped_total{operation="anonymous",path="stuck.slow",reason="cancelled"})") == 0 &&
         SteadyClock::now() - t0 < 2s * testing::TimeScale())
    std::this_thread::sleep_for(1ms);
  EXPECT_LT(SteadyClock::now() - t0, 100ms * testing::TimeScale());
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
  while (Metric(R"(cutoff_stopped_total{operation="anonymous",path="stuck.slow",reason="cancelled"})") == 0 &&
         SteadyClock::now() - t0 < 2s * testing::TimeScale())
    std::this_thread::sleep_for(1ms);
  EXPECT_LT(SteadyClock::now() - t0, 100ms * testing::TimeScale());
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
  EXPECT_EQ(close_code({R"({"id":"d","type":"subscribe","payload":{"query":"subscription { stuck { n } }"}})",
                        R"({"id":"d","type":"subscribe","payload":{"query":"subscription { stuck { n } }"}})"},
                       true),
            4409);
  EXPECT_EQ(close_code({}), 4408);  // no connection_init within the timeout
  {
    auto ws = Connect("something-else");
    EXPECT_EQ(Read(*ws).at("closed").to_number<std::int64_t>(), 4406);
  }
}

}  // namespace
}  // namespace cutoff::graphql
