// The gRPC server: the deadline bound at entry from every source, fail-fast, the client's
// cancel and the shutdown reaching the handler, errors through the core table, limits,
// metrics and the request id.
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <future>
#include <vector>

#include "cutoff/grpc/internal/byte_buffers.hpp"
#include "cutoff/grpc/internal/grpc_fixture_test.hpp"

namespace cutoff::grpc {
namespace {

using namespace std::chrono_literals;
using test_support::TimeScale;

Context WithBudget(Duration d) { return Context::background().with_timeout(d); }

// A raw gRPC call, outside cutoff's client: metadata and deadline exactly as given.
struct RawResult {
  ::grpc::Status status;
  std::string body;
  std::multimap<std::string, std::string> trailers;
};
RawResult RawCall(const std::string& target, const std::string& method, const std::string& request,
                  std::optional<std::chrono::milliseconds> deadline,
                  std::vector<std::pair<std::string, std::string>> metadata = {}) {
  auto channel = ::grpc::CreateChannel(target, ::grpc::InsecureChannelCredentials());
  ::grpc::GenericStub stub(channel);
  ::grpc::ClientContext context;
  if (deadline) context.set_deadline(std::chrono::system_clock::now() + *deadline);
  for (const auto& [k, v] : metadata) context.AddMetadata(k, v);
  ::grpc::ByteBuffer req = internal::ToByteBuffer(request);
  ::grpc::ByteBuffer res;
  std::promise<::grpc::Status> done;
  stub.UnaryCall(&context, method, ::grpc::StubOptions(), &req, &res, [&](::grpc::Status s) { done.set_value(s); });
  RawResult out;
  out.status = done.get_future().get();
  out.body = internal::Flatten(res);
  for (const auto& [k, v] : context.GetServerTrailingMetadata())
    out.trailers.emplace(std::string(k.data(), k.size()), std::string(v.data(), v.size()));
  return out;
}

long Millis(const std::string& s) { return std::stol(s); }

TEST_F(GrpcFixture, AUnaryCallIsAnswered) {
  Start();
  const Result r = Call(WithBudget(2s), kEcho, "hello");
  ASSERT_FALSE(r.error) << r.error->what();
  EXPECT_EQ(r.response, "hello");
}

TEST_F(GrpcFixture, TheGrpcDeadlineBindsTheHandlersContext) {
  Start();
  const RawResult r = RawCall(target_, kBudget, "", 700ms);
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_LE(Millis(r.body), 700 + kGrpcDeadlineRoundingMs);
  EXPECT_GT(Millis(r.body), 700 - 200 * TimeScale());
}

TEST_F(GrpcFixture, BudgetMetadataOnlyTightens) {
  Start();
  const RawResult tighter = RawCall(target_, kBudget, "", 5000ms, {{"deadline-budget-ms", "300"}});
  ASSERT_TRUE(tighter.status.ok());
  EXPECT_LE(Millis(tighter.body), 300);
  const RawResult looser = RawCall(target_, kBudget, "", 400ms, {{"deadline-budget-ms", "9000"}});
  ASSERT_TRUE(looser.status.ok());
  EXPECT_LE(Millis(looser.body), 400 + kGrpcDeadlineRoundingMs);
  // Forged values never extend anything: counted, ignored.
  const RawResult forged = RawCall(target_, kBudget, "", 400ms, {{"deadline-budget-ms", "-5"}});
  ASSERT_TRUE(forged.status.ok());
  EXPECT_LE(Millis(forged.body), 400 + kGrpcDeadlineRoundingMs);
  EXPECT_NE(metrics_.expose().find("cutoff_budget_header_rejected_total{header=\"deadline-budget-ms\",reason=\"negative\"} 1"),
            std::string::npos)
      << metrics_.expose();
}

TEST_F(GrpcFixture, TheServiceMaximumAndTheMethodsBudgetTighten) {
  options_.budget.max_budget = 2s;
  MethodOptions method;
  method.budget = 250ms;
  Start(method);
  const RawResult unbounded = RawCall(target_, kBudget, "", std::nullopt);
  ASSERT_TRUE(unbounded.status.ok());
  EXPECT_LE(Millis(unbounded.body), 250);
  EXPECT_GT(Millis(unbounded.body), 100);
}

TEST_F(GrpcFixture, ASpentBudgetFailsBeforeTheHandler) {
  Start();
  const RawResult r = RawCall(target_, kEcho, "x", 5s, {{"deadline-budget-ms", "0"}});
  EXPECT_EQ(r.status.error_code(), ::grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(r.trailers.count("cutoff-error-code"), 1u);
  EXPECT_EQ(r.trailers.find("cutoff-error-code")->second, "deadline_exceeded");
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(GrpcFixture, TheClientsCancelStopsTheHandlerAsCancelledWithinMilliseconds) {
  Start();
  const std::int64_t cancelled_at = CancelOnceStarted(kSlow, "x");
  WaitForSlowStop();
  EXPECT_EQ(slow_reason_.load(), StopReason::cancelled);
  const auto overshoot = std::chrono::nanoseconds(slow_stopped_at_.load() - cancelled_at);
  EXPECT_LT(overshoot, TimeScale() * 200ms);
}

TEST_F(GrpcFixture, TheBudgetStopsTheHandlerAsDeadlineExceeded) {
  Start();
  const RawResult r = RawCall(target_, kSlow, "", 300ms);
  EXPECT_EQ(r.status.error_code(), ::grpc::StatusCode::DEADLINE_EXCEEDED);
  WaitForSlowStop();
  EXPECT_EQ(slow_reason_.load(), StopReason::deadline_exceeded);
  EXPECT_LT(std::chrono::nanoseconds(slow_stopped_at_.load() - started_at_.load()), 300ms + TimeScale() * 200ms);
}

TEST_F(GrpcFixture, ErrorsAreAnsweredWithTheCoreTablesStatusAndCode) {
  Start();
  const RawResult not_found = RawCall(target_, kFail, "not_found", 2s);
  EXPECT_EQ(not_found.status.error_code(), ::grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(not_found.status.error_message(), "no such sku");
  EXPECT_EQ(not_found.trailers.find("cutoff-error-code")->second, "not_found");
  const RawResult overloaded = RawCall(target_, kFail, "overloaded", 2s);
  EXPECT_EQ(overloaded.status.error_code(), ::grpc::StatusCode::RESOURCE_EXHAUSTED);
  // An unexpected exception is internal, and its text is not sent.
  const RawResult internal = RawCall(target_, kFail, "boom", 2s);
  EXPECT_EQ(internal.status.error_code(), ::grpc::StatusCode::INTERNAL);
  EXPECT_EQ(internal.status.error_message().find("secret"), std::string::npos);
  // A failure after the handler's work passed a commit point may have taken effect.
  const RawResult committed = RawCall(target_, kFail, "commit", 2s);
  EXPECT_EQ(committed.status.error_code(), ::grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(committed.trailers.find("cutoff-error-code")->second, "commit_ambiguous");
}

TEST_F(GrpcFixture, AnErrorsPushbackIsSentAsGrpcRetryPushbackMs) {
  Start();
  const RawResult wait = RawCall(target_, kFail, "pushback 1500", 2s);
  EXPECT_EQ(wait.status.error_code(), ::grpc::StatusCode::RESOURCE_EXHAUSTED);
  ASSERT_EQ(wait.trailers.count("grpc-retry-pushback-ms"), 1u);
  EXPECT_EQ(wait.trailers.find("grpc-retry-pushback-ms")->second, "1500");
  const RawResult never = RawCall(target_, kFail, "pushback -1", 2s);
  EXPECT_EQ(never.trailers.find("grpc-retry-pushback-ms")->second, "-1");
  EXPECT_EQ(RawCall(target_, kFail, "overloaded", 2s).trailers.count("grpc-retry-pushback-ms"), 0u);
}

TEST_F(GrpcFixture, AnUnknownMethodIsUnimplemented) {
  Start();
  const RawResult r = RawCall(target_, "/test.Probe/Nothing", "", 2s);
  EXPECT_EQ(r.status.error_code(), ::grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(r.trailers.find("cutoff-error-code")->second, "not_found");
}

TEST_F(GrpcFixture, CallsPastTheLimitAreRefusedAtOnce) {
  options_.limits.max_calls_in_flight = 1;
  Start();
  std::thread slow([&] { RawCall(target_, kSlow, "", 600ms); });
  for (int i = 0; i < 2000 && started_at_.load() == 0; ++i) std::this_thread::sleep_for(2ms);
  const RawResult refused = RawCall(target_, kEcho, "x", 2s);
  EXPECT_EQ(refused.status.error_code(), ::grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(refused.trailers.find("cutoff-error-code")->second, "overloaded");
  slow.join();
}

TEST_F(GrpcFixture, ALargerMessageThanTheLimitIsRefused) {
  options_.limits.max_request_bytes = 1024;
  Start();
  const RawResult r = RawCall(target_, kEcho, std::string(4096, 'x'), 2s);
  EXPECT_EQ(r.status.error_code(), ::grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(calls_.load(), 0);
  EXPECT_TRUE(RawCall(target_, kEcho, "small", 2s).status.ok());
}

TEST_F(GrpcFixture, ShutdownDrainsThenStopsWithShutdown) {
  Start();
  std::promise<RawResult> result;
  std::thread caller([&] { result.set_value(RawCall(target_, kSlow, "", 10s)); });
  for (int i = 0; i < 2000 && started_at_.load() == 0; ++i) std::this_thread::sleep_for(2ms);
  server_->shutdown(100ms);
  const RawResult r = result.get_future().get();
  caller.join();
  WaitForSlowStop();
  EXPECT_EQ(slow_reason_.load(), StopReason::shutdown);
  EXPECT_EQ(r.status.error_code(), ::grpc::StatusCode::UNAVAILABLE);
  EXPECT_GE(std::chrono::nanoseconds(slow_stopped_at_.load() - started_at_.load()), 90ms);
}

TEST_F(GrpcFixture, TheRequestIdAndTraceAreTakenAndEchoed) {
  Start();
  const RawResult r = RawCall(target_, kRequestId, "", 2s,
                              {{"x-request-id", "req-42"},
                               {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.body.substr(0, 7), "req-42 ");
  EXPECT_NE(r.body.find("00-4bf92f3577b34da6a3ce929d0e0e4736-"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("00f067aa0ba902b7"), std::string::npos) << "a child span, not the caller's";
  const RawResult bad = RawCall(target_, kRequestId, "", 2s, {{"x-request-id", "bad id"}});
  EXPECT_EQ(bad.body.find("bad id"), std::string::npos);
}

TEST_F(GrpcFixture, MetricsCountCallsByMethodAndStatus) {
  Start();
  RawCall(target_, kEcho, "x", 2s);
  RawCall(target_, kSlow, "", 100ms);
  // The stopped call is counted once its handler has returned and its status is sent, a moment
  // after the client already has DEADLINE_EXCEEDED from gRPC: wait (bounded) for that.
  for (int i = 0; i < 1000 && calls_in_flight() > 0; ++i) std::this_thread::sleep_for(2ms);
  const std::string text = metrics_.expose();
  EXPECT_NE(text.find("cutoff_grpc_server_calls_total{method=\"/test.Probe/Echo\",code=\"OK\"} 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("cutoff_grpc_server_calls_total{method=\"/test.Probe/Slow\",code=\"DEADLINE_EXCEEDED\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cutoff_stops_total{layer=\"grpc\",reason=\"deadline_exceeded\"} 1"), std::string::npos) << text;
}

TEST_F(GrpcFixture, OneLogLinePerCall) {
  std::mutex mu;
  std::vector<std::string> lines;
  options_.log = [&](std::string_view line) {
    std::lock_guard lock(mu);
    lines.emplace_back(line);
  };
  Start();
  RawCall(target_, kEcho, "x", 2s, {{"x-request-id", "req-7"}});
  std::lock_guard lock(mu);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("\"request_id\":\"req-7\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("\"operation\":\"/test.Probe/Echo\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("\"outcome\":\"ok\""), std::string::npos) << lines[0];
}

// Bytes that are not HTTP/2, and a connection that says nothing: each is closed (the silent one
// at the handshake timeout), and calls from others are answered meanwhile.
TEST_F(GrpcFixture, GarbageAndSilentConnectionsAreClosedAndOthersServed) {
  options_.limits.handshake_timeout = 300ms;
  Start();
  boost::asio::io_context io;
  const boost::asio::ip::tcp::endpoint at(boost::asio::ip::make_address("127.0.0.1"), port_);
  boost::asio::ip::tcp::socket garbage(io), silent(io);
  garbage.connect(at);
  silent.connect(at);
  boost::asio::write(garbage, boost::asio::buffer(std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n") +
                                                  std::string(4096, '\0')));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(RawCall(target_, kEcho, "x", 2s).status.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, TimeScale() * 500ms);
  // Both are closed by the server: reads end.
  const auto closed = [](boost::asio::ip::tcp::socket& s) {
    timeval tv{.tv_sec = 5, .tv_usec = 0};
    setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[4096];
    boost::system::error_code ec;
    while (!ec) s.read_some(boost::asio::buffer(buf), ec);
    return ec == boost::asio::error::eof || ec == boost::asio::error::connection_reset;
  };
  EXPECT_TRUE(closed(garbage));
  const auto silent_from = std::chrono::steady_clock::now();
  EXPECT_TRUE(closed(silent));
  EXPECT_LT(std::chrono::steady_clock::now() - silent_from, 300ms + TimeScale() * 1s);
}

// A server stream read through gRPC's own callback client; `cancel_after` messages, it cancels.
class StreamReader : public ::grpc::ClientBidiReactor<::grpc::ByteBuffer, ::grpc::ByteBuffer> {
 public:
  StreamReader(::grpc::GenericStub& stub, const std::string& method, const std::string& request,
               std::chrono::milliseconds deadline, std::size_t cancel_after = 0)
      : cancel_after_(cancel_after) {
    context_.set_deadline(std::chrono::system_clock::now() + deadline);
    stub.PrepareBidiStreamingCall(&context_, method, ::grpc::StubOptions(), this);
    request_ = internal::ToByteBuffer(request);
    StartWriteLast(&request_, ::grpc::WriteOptions());
    StartRead(&incoming_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    messages.push_back(internal::Flatten(incoming_));
    if (cancel_after_ != 0 && messages.size() == cancel_after_) {
      cancelled_at = NowNs();
      context_.TryCancel();
    }
    StartRead(&incoming_);
  }
  void OnDone(const ::grpc::Status& s) override { done_.set_value(s); }
  ::grpc::Status Wait() { return done_.get_future().get(); }

  std::vector<std::string> messages;  // read on gRPC's thread; look only after Wait()
  std::int64_t cancelled_at = 0;

 private:
  ::grpc::ClientContext context_;
  ::grpc::ByteBuffer request_, incoming_;
  std::size_t cancel_after_;
  std::promise<::grpc::Status> done_;
};

TEST_F(GrpcFixture, AStreamsMessagesArriveInOrderAndItEndsOk) {
  Start();
  auto channel = ::grpc::CreateChannel(target_, ::grpc::InsecureChannelCredentials());
  ::grpc::GenericStub stub(channel);
  StreamReader reader(stub, kCount, "4", 2s);
  EXPECT_TRUE(reader.Wait().ok());
  EXPECT_EQ(reader.messages, (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_NE(metrics_.expose().find("cutoff_grpc_server_messages_total{method=\"/test.Probe/Count\"} 4"), std::string::npos);
}

TEST_F(GrpcFixture, TheCallsDeadlineEndsTheWholeStream) {
  Start();
  auto channel = ::grpc::CreateChannel(target_, ::grpc::InsecureChannelCredentials());
  ::grpc::GenericStub stub(channel);
  StreamReader reader(stub, kCount, "tick", 330ms);
  EXPECT_EQ(reader.Wait().error_code(), ::grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_GE(reader.messages.size(), 2u);
  EXPECT_LE(reader.messages.size(), 7u);
  WaitForSlowStop();
  EXPECT_EQ(slow_reason_.load(), StopReason::deadline_exceeded);
}

TEST_F(GrpcFixture, AMessageOverItsOwnBudgetIsSkippedAndTheStreamGoesOn) {
  MethodOptions count;
  count.message_budget = 100ms;
  Start({}, count);
  auto channel = ::grpc::CreateChannel(target_, ::grpc::InsecureChannelCredentials());
  ::grpc::GenericStub stub(channel);
  StreamReader reader(stub, kCount, "4 2000", 5s);  // message 1 would take 2 s
  EXPECT_TRUE(reader.Wait().ok());
  EXPECT_EQ(reader.messages, (std::vector<std::string>{"0", "2", "3"}));
  EXPECT_NE(metrics_.expose().find("cutoff_grpc_server_messages_cut_total{method=\"/test.Probe/Count\"} 1"),
            std::string::npos)
      << metrics_.expose();
}

TEST_F(GrpcFixture, TheClientsCancelStopsTheStreamWithinMilliseconds) {
  Start();
  auto channel = ::grpc::CreateChannel(target_, ::grpc::InsecureChannelCredentials());
  ::grpc::GenericStub stub(channel);
  StreamReader reader(stub, kCount, "tick", 10s, /*cancel_after=*/2);
  EXPECT_EQ(reader.Wait().error_code(), ::grpc::StatusCode::CANCELLED);
  // The cancel lands either inside the handler (its wait ends, as cancelled) or while a message
  // is being written (the handler is not run again): both end the call within milliseconds and
  // count one stop for the reason cancelled.
  std::int64_t ended_at = 0;
  for (int i = 0; i < 5000 && ended_at == 0; ++i) {
    if (calls_in_flight() == 0) ended_at = NowNs();
    else std::this_thread::sleep_for(1ms);
  }
  ASSERT_NE(ended_at, 0) << "the stream is still running 5 s after the cancel";
  EXPECT_LT(std::chrono::nanoseconds(ended_at - reader.cancelled_at), TimeScale() * 200ms);
  EXPECT_NE(slow_reason_.load(), StopReason::deadline_exceeded);
  if (slow_stopped_at_.load() != 0) {
    EXPECT_EQ(slow_reason_.load(), StopReason::cancelled);
    EXPECT_LT(std::chrono::nanoseconds(slow_stopped_at_.load() - reader.cancelled_at), TimeScale() * 200ms);
  }
  EXPECT_NE(metrics_.expose().find("cutoff_grpc_server_stopped_total{method=\"/test.Probe/Count\",reason=\"cancelled\"} 1"),
            std::string::npos)
      << metrics_.expose();
}

// A client that opens a call and never sends its message (no grpc-timeout either) holds its
// slot only until the service maximum: the server cancels the call there.
class SilentCall : public ::grpc::ClientBidiReactor<::grpc::ByteBuffer, ::grpc::ByteBuffer> {
 public:
  SilentCall(::grpc::GenericStub& stub, const std::string& method) {
    stub.PrepareBidiStreamingCall(&context_, method, ::grpc::StubOptions(), this);
    StartCall();
  }
  void OnDone(const ::grpc::Status& s) override { done_.set_value(s); }
  std::future<::grpc::Status> Done() { return done_.get_future(); }

 private:
  ::grpc::ClientContext context_;
  std::promise<::grpc::Status> done_;
};

TEST_F(GrpcFixture, ACallWhoseMessageNeverComesEndsAtTheServiceMaximum) {
  options_.budget.max_budget = 300ms;
  Start();
  auto channel = ::grpc::CreateChannel(target_, ::grpc::InsecureChannelCredentials());
  ::grpc::GenericStub stub(channel);
  const auto started = std::chrono::steady_clock::now();
  SilentCall silent(stub, kEcho);
  auto done = silent.Done();
  ASSERT_EQ(done.wait_for(TimeScale() * 5s), std::future_status::ready) << "the call is still open";
  EXPECT_NE(done.get().error_code(), ::grpc::StatusCode::OK);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 250ms);
  for (int i = 0; i < 500 && calls_in_flight() != 0; ++i) std::this_thread::sleep_for(2ms);
  EXPECT_EQ(calls_in_flight(), 0u);
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(GrpcFixture, AnInlineHandlerRunsOnGrpcsThreadWithTheCallsBudget) {
  Start();
  const RawResult echo = RawCall(target_, kInline, "hello", 2s, {{"x-request-id", "req-9"}});
  ASSERT_TRUE(echo.status.ok()) << echo.status.error_message();
  EXPECT_EQ(echo.body, "hello");
  EXPECT_EQ(RawCall(target_, kInline, "thread", 2s).body, "grpc");
  const RawResult budget = RawCall(target_, kInline, "budget", 5000ms, {{"deadline-budget-ms", "300"}});
  ASSERT_TRUE(budget.status.ok());
  EXPECT_LE(Millis(budget.body), 300);
  EXPECT_GT(Millis(budget.body), 300 - 200 * TimeScale());
  EXPECT_NE(metrics_.expose().find("cutoff_grpc_server_calls_total{method=\"/test.Probe/Inline\",code=\"OK\"} 3"),
            std::string::npos)
      << metrics_.expose();
}

TEST_F(GrpcFixture, AnInlineHandlersErrorsGoThroughTheCoreTable) {
  Start();
  const RawResult not_found = RawCall(target_, kInline, "not_found", 2s);
  EXPECT_EQ(not_found.status.error_code(), ::grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(not_found.trailers.find("cutoff-error-code")->second, "not_found");
  const RawResult committed = RawCall(target_, kInline, "commit", 2s);
  EXPECT_EQ(committed.status.error_code(), ::grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(committed.trailers.find("cutoff-error-code")->second, "commit_ambiguous");
  const RawResult internal = RawCall(target_, kInline, "boom", 2s);
  EXPECT_EQ(internal.status.error_code(), ::grpc::StatusCode::INTERNAL);
  EXPECT_EQ(internal.status.error_message().find("secret"), std::string::npos);
  // A spent budget: refused before the handler, as for any method.
  const RawResult spent = RawCall(target_, kInline, "x", 5s, {{"deadline-budget-ms", "0"}});
  EXPECT_EQ(spent.status.error_code(), ::grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(calls_.load(), 3);
}

TEST_F(GrpcFixture, AnInlineHandlerSeesItsDeadlineAndTheClientsCancelThroughCheck) {
  Start();
  const RawResult r = RawCall(target_, kInline, "spin", 300ms);
  EXPECT_EQ(r.status.error_code(), ::grpc::StatusCode::DEADLINE_EXCEEDED);
  WaitForSlowStop();
  EXPECT_EQ(slow_reason_.load(), StopReason::deadline_exceeded);
  EXPECT_LT(std::chrono::nanoseconds(slow_stopped_at_.load() - started_at_.load()), 300ms + TimeScale() * 200ms);
  for (int i = 0; i < 1000 && calls_in_flight() > 0; ++i) std::this_thread::sleep_for(2ms);
  EXPECT_NE(metrics_.expose().find(
                "cutoff_grpc_server_stopped_total{method=\"/test.Probe/Inline\",reason=\"deadline_exceeded\"} 1"),
            std::string::npos)
      << metrics_.expose();

  started_at_ = 0;
  slow_stopped_at_ = 0;
  const std::int64_t cancelled_at = CancelOnceStarted(kInline, "spin");
  WaitForSlowStop();
  EXPECT_EQ(slow_reason_.load(), StopReason::cancelled);
  EXPECT_LT(std::chrono::nanoseconds(slow_stopped_at_.load() - cancelled_at), TimeScale() * 200ms);
}

TEST(GrpcServer, MethodPathsAreChecked) {
  boost::asio::io_context io;
  Server server(io.get_executor(), ServerOptions());
  EXPECT_THROW(server.unary("Echo", nullptr), std::invalid_argument);
  EXPECT_THROW(server.unary("/nopackage", nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace cutoff::grpc
