// The gRPC client against a cutoff server: the budget out as grpc-timeout, a stop as
// RST_STREAM, codes back through the trailer and the core table, retries only where they
// cannot apply a call twice, honest outcomes for writes, and TLS.
#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>

#include "cutoff/core/commit_ledger.hpp"
#include "cutoff/grpc/internal/grpc_fixture_test.hpp"
#include "tests/support/throwaway_ca.hpp"

namespace cutoff::grpc {
namespace {

using namespace std::chrono_literals;
using test_support::TimeScale;

Context WithBudget(Duration d) { return Context::background().with_timeout(d); }

TEST_F(GrpcFixture, TheGrpcTimeoutSentIsTheRemainingBudget) {
  Start();
  const Result r = Call(WithBudget(800ms), kBudget, "");
  ASSERT_FALSE(r.error) << r.error->what();
  EXPECT_LE(std::stol(r.response), 800 + kGrpcDeadlineRoundingMs);
  EXPECT_GT(std::stol(r.response), 800 - 100 * TimeScale());
}

TEST_F(GrpcFixture, TheAttemptTimeoutTightensTheDeadlineSent) {
  Start();
  ClientOptions client;
  client.policy.attempt_timeout = 300ms;
  const Result r = Call(WithBudget(5s), kBudget, "", CallOptions(), client);
  ASSERT_FALSE(r.error) << r.error->what();
  EXPECT_LE(std::stol(r.response), 300 + kGrpcDeadlineRoundingMs);
}

TEST_F(GrpcFixture, AReplyMarginTellsTheServerLessThanTheCallsOwnDeadline) {
  Start();
  ClientOptions client;
  client.reply_margin = 300ms;
  const Result r = Call(WithBudget(1000ms), kBudget, "", CallOptions(), client);
  ASSERT_FALSE(r.error) << r.error->what();
  EXPECT_LE(std::stol(r.response), 700 + kGrpcDeadlineRoundingMs);
  EXPECT_GT(std::stol(r.response), 700 - 100 * TimeScale());
  // A tighter value of the caller's own wins; a looser one is dropped (the server reads one).
  CallOptions tighter;
  tighter.metadata.emplace_back("deadline-budget-ms", "250");
  const Result t = Call(WithBudget(1000ms), kBudget, "", tighter, client);
  ASSERT_FALSE(t.error) << t.error->what();
  EXPECT_LE(std::stol(t.response), 250);
  CallOptions looser;
  looser.metadata.emplace_back("deadline-budget-ms", "900");
  const Result l = Call(WithBudget(1000ms), kBudget, "", looser, client);
  ASSERT_FALSE(l.error) << l.error->what();
  EXPECT_LE(std::stol(l.response), 700 + kGrpcDeadlineRoundingMs);
}

TEST_F(GrpcFixture, ASpentBudgetSendsNothing) {
  Start();
  auto [ctx, source] = Context::background().with_timeout(5s).with_cancel();
  source.request_stop(StopReason::deadline_exceeded);
  const Result r = Call(ctx, kEcho, "x");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code(), ErrorCode::deadline_exceeded);
  EXPECT_EQ(calls_.load(), 0);
}

// The caller stops while the server works: the server hears of it at once.
TEST_F(GrpcFixture, TheCallersStopCancelsTheServersWorkWithinMilliseconds) {
  Start();
  std::atomic<std::int64_t> stopped_at{0};
  auto [ctx, source] = Context::background().with_timeout(10s).with_cancel();
  std::thread stopper([&, source = source] {
    for (int i = 0; i < 2000 && started_at_.load() == 0; ++i) std::this_thread::sleep_for(2ms);
    std::this_thread::sleep_for(20ms);
    stopped_at = NowNs();
    source.request_stop(StopReason::cancelled);
  });
  CallOptions read;
  read.may_write = false;
  const Result r = Call(ctx, kSlow, "", read);
  stopper.join();
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code(), ErrorCode::cancelled) << r.error->what();
  WaitForSlowStop();
  EXPECT_EQ(slow_reason_.load(), StopReason::cancelled);
  EXPECT_LT(std::chrono::nanoseconds(slow_stopped_at_.load() - stopped_at.load()), TimeScale() * 200ms);
}

// The caller stops a write the server is working on: it may have taken effect, and the caller's
// ledger hears so. (At the deadline instead, the server's own stop may answer first, with a
// definite deadline_exceeded: that answer would rule the effect out.)
TEST_F(GrpcFixture, AWriteSentAndNotAnsweredIsCommitAmbiguousAndNoted) {
  Start();
  auto ledger = std::make_shared<CommitLedger>();
  auto [ctx, source] = Context::background().with_commit_ledger(ledger).with_timeout(10s).with_cancel();
  std::thread stopper([&, source = source] {
    for (int i = 0; i < 2000 && started_at_.load() == 0; ++i) std::this_thread::sleep_for(2ms);
    std::this_thread::sleep_for(20ms);
    source.request_stop(StopReason::cancelled);
  });
  const Result r = Call(ctx, kSlow, "");
  stopper.join();
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code(), ErrorCode::commit_ambiguous) << r.error->what();
  EXPECT_TRUE(ledger->may_have_written());
  WaitForSlowStop();
  EXPECT_EQ(slow_reason_.load(), StopReason::cancelled);
}

TEST_F(GrpcFixture, CodesComeBackFromTheServersTrailer) {
  Start();
  EXPECT_EQ(Call(WithBudget(2s), kFail, "not_found").error->code(), ErrorCode::not_found);
  EXPECT_EQ(Call(WithBudget(2s), kFail, "boom").error->code(), ErrorCode::internal);
  const Result committed = Call(WithBudget(2s), kFail, "commit");
  EXPECT_EQ(committed.error->code(), ErrorCode::commit_ambiguous);
  const Result unknown = Call(WithBudget(2s), "/test.Probe/Nothing", "");
  EXPECT_EQ(unknown.error->code(), ErrorCode::not_found);
}

TEST_F(GrpcFixture, TheRequestIdAndATraceChildTravel) {
  Start();
  const Context ctx = WithBudget(2s).with_request_id("req-9").with_trace(
      TraceContext{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""});
  const Result r = Call(ctx, kRequestId, "");
  ASSERT_FALSE(r.error) << r.error->what();
  EXPECT_EQ(r.response.substr(0, 6), "req-9 ");
  EXPECT_NE(r.response.find("4bf92f3577b34da6a3ce929d0e0e4736"), std::string::npos) << r.response;
}

TEST_F(GrpcFixture, ARefusalThatRulesOutTheEffectIsRetried) {
  Start();
  ClientOptions client;
  client.policy.retry.max_attempts = 3;
  client.policy.retry.backoff.initial = 1ms;
  const Result r = Call(WithBudget(2s), kFail, "overloaded", CallOptions(), client);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code(), ErrorCode::overloaded);
  EXPECT_EQ(calls_.load(), 3) << "overloaded before its commit point: safe to repeat";
}

// The server's pushback travels as grpc-retry-pushback-ms: the retry waits at least that long,
// and a server that asks not to be retried (-1) is not.
TEST_F(GrpcFixture, TheServersPushbackHoldsTheRetryBack) {
  Start();
  ClientOptions client;
  client.policy.retry.max_attempts = 2;
  client.policy.retry.backoff.initial = 1ms;
  Result r = Call(WithBudget(5s), kFail, "pushback 300", CallOptions(), client);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code(), ErrorCode::overloaded);
  ASSERT_EQ(arrivals_.size(), 2u);
  EXPECT_GE(arrivals_[1] - arrivals_[0], 300ms);
  EXPECT_EQ(r.error->retry_after(), std::optional<Duration>(300ms)) << "the client's error keeps the pushback";

  arrivals_.clear();
  r = Call(WithBudget(5s), kFail, "pushback -1", CallOptions(), client);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code(), ErrorCode::overloaded);
  EXPECT_EQ(arrivals_.size(), 1u);
}

// The throttle keeps an account per method: a method the server keeps refusing is mostly
// refused here, unsent, and the others are not touched.
TEST_F(GrpcFixture, TheThrottleRefusesAnOverloadedMethodBeforeSendingAndOnlyThatMethod) {
  Start();
  ClientOptions options;
  options.policy.throttle = resilience::ThrottleOptions{.k = 2, .window = 60s, .minimum_requests = 10};
  int refused_here = 0, refused_there = 0, healthy = 0;
  test_support::RunSync([&]() -> boost::asio::awaitable<void> {
    Client client(co_await boost::asio::this_coro::executor, target_, options);
    const Context ctx = WithBudget(10s);  // outlives the calls, which hold it by reference
    for (int i = 0; i < 40; ++i) {
      try {
        auto failing = client.call(ctx, kFail, "overloaded");
        co_await std::move(failing);
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::overloaded);
        const bool here = std::string(e.what()).find("not sent") != std::string::npos;
        (here ? refused_here : refused_there)++;
      }
      auto echo = client.call(ctx, kEcho, "x");
      if (co_await std::move(echo) == "x") ++healthy;
    }
  });
  EXPECT_EQ(refused_here + refused_there, 40);
  EXPECT_EQ(calls_.load(), refused_there + healthy) << "a refused call never reaches the server";
  EXPECT_GT(refused_here, 20);
  EXPECT_EQ(healthy, 40);
}

TEST_F(GrpcFixture, AWriteThatMayHaveTakenEffectIsNotRetried) {
  Start();
  ClientOptions client;
  client.policy.retry.max_attempts = 3;
  client.policy.retry.backoff.initial = 1ms;
  const Result r = Call(WithBudget(2s), kFail, "commit", CallOptions(), client);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code(), ErrorCode::commit_ambiguous);
  EXPECT_EQ(calls_.load(), 1);
}

// A reply over the client's size limit is gRPC's own RESOURCE_EXHAUSTED, made after the server
// ran the call: for a write, sent and not answered (commit_ambiguous); for a read, overloaded.
TEST_F(GrpcFixture, AReplyOverTheSizeLimitIsNoAnswerForAWrite) {
  Start();
  ClientOptions small;
  small.max_response_bytes = 1024;
  const std::string big(4096, 'x');
  const Result write = Call(WithBudget(2s), kEcho, big, CallOptions(), small);
  ASSERT_TRUE(write.error);
  EXPECT_EQ(write.error->code(), ErrorCode::commit_ambiguous) << write.error->what();
  CallOptions read;
  read.may_write = false;
  const Result r = Call(WithBudget(2s), kEcho, big, read, small);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code(), ErrorCode::overloaded) << r.error->what();
  EXPECT_EQ(calls_.load(), 2) << "both reached the handler";
}

TEST(GrpcClient, NoServerIsUnavailable) {
  // A port nothing listens on: bound and released.
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const auto port = a.local_endpoint().port();
  a.close();
  const auto r = test_support::RunSync([&]() -> boost::asio::awaitable<std::optional<Error>> {
    const auto executor = co_await boost::asio::this_coro::executor;
    Client client(executor, "127.0.0.1:" + std::to_string(port));
    try {
      const Context ctx = Context::background().with_timeout(1s);  // outlives the call: it is taken by reference
      auto calling = client.call(ctx, "/test.Probe/Echo", "x");
      co_await std::move(calling);
    } catch (const Error& e) {
      co_return e;
    }
    co_return std::nullopt;
  });
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->code() == ErrorCode::unavailable || r->code() == ErrorCode::deadline_exceeded) << r->what();
}

class GrpcTls : public GrpcFixture {
 protected:
  static void SetUpTestSuite() {
    ca_ = new test_support::ThrowawayCa();
    cert_ = new test_support::IssuedCertificate(ca_->Issue("localhost", {"DNS:localhost", "IP:127.0.0.1"}));
  }
  static void TearDownTestSuite() {
    delete cert_;
    delete ca_;
  }
  static test_support::ThrowawayCa* ca_;
  static test_support::IssuedCertificate* cert_;
};
test_support::ThrowawayCa* GrpcTls::ca_ = nullptr;
test_support::IssuedCertificate* GrpcTls::cert_ = nullptr;

TEST_F(GrpcTls, CallsRunOverTlsWithTheSameBudget) {
  options_.tls = TlsServerOptions{cert_->chain_file, cert_->key_file};
  Start();
  ClientOptions client;
  client.tls = TlsClientOptions{ca_->certificate_file(), "localhost"};
  const Result r = Call(WithBudget(800ms), kBudget, "", CallOptions(), client);
  ASSERT_FALSE(r.error) << r.error->what();
  EXPECT_LE(std::stol(r.response), 800 + kGrpcDeadlineRoundingMs);
  // Another CA's client does not trust it: nothing reaches the handler.
  test_support::ThrowawayCa other("another CA");
  ClientOptions untrusting;
  untrusting.tls = TlsClientOptions{other.certificate_file(), "localhost"};
  const int before = calls_.load();
  const Result refused = Call(WithBudget(1s), kEcho, "x", CallOptions(), untrusting);
  ASSERT_TRUE(refused.error);
  EXPECT_EQ(refused.error->code(), ErrorCode::unavailable) << refused.error->what();
  EXPECT_EQ(calls_.load(), before);
}

TEST(GrpcTlsOptions, UnreadableFilesAreClearErrors) {
  boost::asio::io_context io;
  ServerOptions options;
  options.tls = TlsServerOptions{"/nonexistent/server.pem", "/nonexistent/server.key"};
  Server server(io.get_executor(), options);
  try {
    server.listen("127.0.0.1", 0);
    ADD_FAILURE() << "listened without its certificate";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/"), std::string::npos) << e.what();
  }
  ClientOptions client;
  client.tls = TlsClientOptions{"/nonexistent/ca.pem", ""};
  EXPECT_THROW(Client(io.get_executor(), "127.0.0.1:1", client), std::invalid_argument);
}

}  // namespace
}  // namespace cutoff::grpc
