#include "cutoff/http/client.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <thread>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/http/internal/fault_points.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/observe/trace.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"
#include "tests/support/with_client.hpp"

namespace cutoff::http {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;
using cutoff::test_support::WithClient;
using cutoff::test_support::Sleep;
using cutoff::test_support::TimeScale;
using SteadyClock = std::chrono::steady_clock;

// Up to `attempts` attempts of at most 10 s, the backoff doubling from `backoff` without jitter.
resilience::PolicyOptions Retrying(int attempts, Duration backoff) {
  return {.attempt_timeout = 10s,
          .retry = {.max_attempts = attempts,
                    .backoff = {.initial = backoff, .max = 60s, .jitter = resilience::Jitter::none}}};
}

TEST(ParseUrl, AcceptsHttpAndHttpsUrlsOnly) {
  auto u = parse_url("http://127.0.0.1:8080/a/b?c=d#frag");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->target, "/a/b?c=d");
  u = parse_url("HTTP://example.com");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->target, "/");
  u = parse_url("http://[::1]:81?x=1");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->target, "/?x=1");
  u = parse_url("https://example.com/x");
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->port, 443);
  u = parse_url("HTTPS://[::1]:8443");
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->port, 8443);
  EXPECT_FALSE(parse_url("http://a/")->tls);
  for (std::string_view bad : {"https://", "https:/a/", "httpss://a/", "http://", "http://:80/", "http://a:0/", "http://a:65536/", "http://a:x/",
                               "http://u@a/", "http://[::1/", "http://a/ b", "ftp://a/", "http://[]/"})
    EXPECT_FALSE(parse_url(bad)) << bad;
}

// The server side of the tests: routes that report what they saw.
class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<Server>(io_.get_executor(), ServerOptions{});
    server_->route("GET", "/headers", [this](const Request& req, const Context&) -> asio::awaitable<Response> {
      ++calls_;
      std::string out;
      for (auto name : {"Deadline-Budget-Ms", "traceparent", "X-Request-Id"})
        out += std::string(name) + "=" + std::string(req.headers.get(name).value_or("")) + "\n";
      co_return Response::text(200, out);
    });
    server_->route("GET", "/slow", [this](const Request&, const Context& ctx) -> asio::awaitable<Response> {
      ++calls_;
      try {
        co_await Sleep(5s);
      } catch (...) {
        slow_reason_ = ctx.stop_reason();
        slow_stopped_at_ = SteadyClock::now().time_since_epoch().count();
        throw;
      }
      co_return Response::text(200, "done");
    });
    server_->route("GET", "/flaky", [this](const Request&, const Context&) -> asio::awaitable<Response> {
      if (++calls_ < 3) co_return Response::text(503, "busy");
      co_return Response::text(200, "ok");
    });
    server_->route("POST", "/flaky", [this](const Request&, const Context&) -> asio::awaitable<Response> {
      ++calls_;
      co_return Response::text(503, "busy");
    });
    // No answer until the client goes away: the server does not bind the budget it is sent,
    // so only the client's stop ends the exchange.
    for (const char* method : {"GET", "POST"}) {
      server_->route(method, "/hang",
                     [this](const Request&, const Context& ctx) -> asio::awaitable<Response> {
                       ++calls_;
                       auto sleeping = with_context(ctx, Sleep(1500ms));  // longer than any client here waits
                       co_await std::move(sleeping);
                       co_return Response::text(200, "done");
                     },
                     {.name = "hang", .bind_deadline = false});
    }
    server_->route("POST", "/answer", [this](const Request& req, const Context&) -> asio::awaitable<Response> {
      ++calls_;
      // The body names the answer: "200", or an error code the server reports as a document.
      if (req.body == "200") co_return Response::json(200, "{}");
      const auto code = parse_error_code(req.body);
      if (!code) co_return Response::text(502, "bad gateway");
      throw Error(*code, "as asked");
    });
    // Works until the budget it was sent runs out (the server binds it): a write stopped
    // before its commit point, answered as such.
    server_->route("POST", "/until-deadline", [this](const Request&, const Context& ctx) -> asio::awaitable<Response> {
      ++calls_;
      auto sleeping = with_context(ctx, Sleep(5s));
      co_await std::move(sleeping);
      co_return Response::text(200, "done");
    });
    server_->route("GET", "/expired", [this](const Request&, const Context&) -> asio::awaitable<Response> {
      ++calls_;
      Response r = Response::text(504, "spent");
      r.headers.set("Deadline-Expired", "1");
      co_return r;
    });
    port_ = server_->listen("127.0.0.1", 0);
    base_ = "http://127.0.0.1:" + std::to_string(port_);
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    server_->shutdown(100ms);
    thread_.join();
  }

  // A child of `parent` that is stopped (cancelled) as soon as the server has started
  // handling one more request.
  asio::awaitable<Context> StopWhenServed(Context parent) {
    auto [ctx, source] = parent.with_cancel();
    const int before = calls_.load();
    // The executor first: a co_await in the same full expression as the lambda would make
    // g++ 12 destroy the lambda (and the CancelSource it holds) twice.
    const auto executor = co_await asio::this_coro::executor;
    asio::co_spawn(
        executor,
        [this, before, source = source]() -> asio::awaitable<void> {
          for (int i = 0; i < 2000 && calls_.load() == before; ++i) co_await Sleep(2ms);
          co_await Sleep(5ms);  // the server is inside its handler
          source.request_stop(StopReason::cancelled);
        },
        asio::detached);
    co_return ctx;
  }

  asio::io_context io_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::uint16_t port_ = 0;
  std::string base_;
  std::atomic<int> calls_{0};
  std::atomic<StopReason> slow_reason_{StopReason::none};
  std::atomic<std::int64_t> slow_stopped_at_{0};
};

TEST_F(ClientTest, SendsTheBudgetRoundedUpAndForwardsIdentity) {
  const auto parent = observe::parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  std::string body = WithClient({}, [&](Client& c) -> asio::awaitable<std::string> {
    const Context ctx = Context::background()
                            .with_request_id("req-7")
                            .with_trace({.traceparent = parent->to_string()})
                            .with_timeout(250ms);
    co_return (co_await c.get(ctx, base_ + "/headers")).body;
  });
  const auto budget_at = body.find("Deadline-Budget-Ms=") + 19;
  const long budget = std::stol(body.substr(budget_at));
  EXPECT_LE(budget, 250);
  EXPECT_GT(budget, 100);
  EXPECT_NE(body.find("traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-"), std::string::npos);
  EXPECT_EQ(body.find("00f067aa0ba902b7"), std::string::npos);  // a child span, not the parent's
  EXPECT_NE(body.find("X-Request-Id=req-7"), std::string::npos);
}

TEST_F(ClientTest, UnboundCallsSendTheAttemptTimeout) {
  std::string body = WithClient({.policy = {.attempt_timeout = 3s}}, [&](Client& c) -> asio::awaitable<std::string> {
    co_return (co_await c.get(Context::background(), base_ + "/headers")).body;
  });
  // The attempt's 3 s, less whatever passed before the header was written (rounded up).
  const long budget = std::stol(body.substr(body.find("Deadline-Budget-Ms=") + 19));
  EXPECT_LE(budget, 3000) << body;
  EXPECT_GT(budget, 2900) << body;
}

TEST_F(ClientTest, ASpentBudgetIsNeverSent) {
  EXPECT_THROW(
      {
        try {
          WithClient({}, [&](Client& c) -> asio::awaitable<int> {
            const Context ctx = Context::background().with_timeout(0ms);
            co_return (co_await c.get(ctx, base_ + "/headers")).status;
          });
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ErrorCode::deadline_exceeded);
          throw;
        }
      },
      Error);
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(ClientTest, AttemptTimeoutClosesTheConnectionAndTheServerStops) {
  const auto t0 = SteadyClock::now();
  try {
    WithClient({.policy = {.attempt_timeout = 150ms}}, [&](Client& c) -> asio::awaitable<int> {
      co_return (co_await c.get(Context::background().with_timeout(5s), base_ + "/slow")).status;
    });
    ADD_FAILURE() << "expected attempt_timeout";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::attempt_timeout) << e.what();
  }
  const auto took = SteadyClock::now() - t0;
  EXPECT_GE(took, 150ms);
  EXPECT_LT(took, 1s * TimeScale());
  for (int i = 0; i < 200 && slow_stopped_at_ == 0; ++i) std::this_thread::sleep_for(5ms);
  // The server's own budget (from our header) ended it at the same moment, or our close did.
  EXPECT_NE(slow_reason_.load(), StopReason::none);
}

TEST_F(ClientTest, ACallerStopClosesTheConnectionSoTheServerCancels) {
  std::int64_t cancelled_at = 0;
  try {
    WithClient({}, [&](Client& c) -> asio::awaitable<int> {
      auto [ctx, source] = Context::background().with_cancel();
      asio::steady_timer later(co_await asio::this_coro::executor, 150ms);
      later.async_wait([&, source = source](auto) {
        cancelled_at = SteadyClock::now().time_since_epoch().count();
        source.request_stop(StopReason::cancelled);
      });
      co_return (co_await c.get(ctx, base_ + "/slow")).status;
    });
    ADD_FAILURE() << "expected cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::cancelled);
  }
  for (int i = 0; i < 400 && slow_stopped_at_ == 0; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(slow_reason_.load(), StopReason::cancelled);
  const auto lag = std::chrono::nanoseconds(slow_stopped_at_.load() - cancelled_at);
  EXPECT_LT(lag, 100ms * TimeScale());
}

// The value of one sample ("name{labels}"), 0 when absent.
double Metric(const std::string& text, const std::string& series) {
  const auto at = text.find("\n" + series + " ");
  return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size() + 2));
}

TEST_F(ClientTest, StoppedAttemptsAreCountedForLayerHttpClient) {
  observe::Registry registry;
  const ClientOptions short_attempts{.policy = {.attempt_timeout = 100ms}, .metrics = &registry};
  const ClientOptions long_attempts{.policy = {.attempt_timeout = 5s}, .metrics = &registry};
  auto fails = [&](const ClientOptions& options, Context ctx) {
    try {
      WithClient(options,
                 [&](Client& c) -> asio::awaitable<int> { co_return (co_await c.get(ctx, base_ + "/slow")).status; });
      ADD_FAILURE() << "expected a stop";
    } catch (const Error&) {
    }
  };
  fails(short_attempts, Context::background().with_timeout(5s));    // its own timeout
  fails(long_attempts, Context::background().with_timeout(100ms));  // the caller's deadline
  fails(long_attempts, Context::background().with_timeout(0ms));    // never sent: not a stop in flight
  WithClient(long_attempts, [&](Client& c) -> asio::awaitable<int> {
    co_return (co_await c.get(Context::background(), base_ + "/headers")).status;
  });
  const std::string text = "\n" + registry.expose();
  EXPECT_EQ(Metric(text, R"(cutoff_stops_total{layer="http_client",reason="attempt_timeout"})"), 1) << text;
  EXPECT_EQ(Metric(text, R"(cutoff_stops_total{layer="http_client",reason="deadline_exceeded"})"), 1) << text;
  EXPECT_EQ(Metric(text, R"(cutoff_overshoot_seconds_count{layer="http_client"})"), 2) << text;
  EXPECT_LT(Metric(text, R"(cutoff_overshoot_seconds_sum{layer="http_client"})"), 0.5 * TimeScale());
}

TEST_F(ClientTest, KeepAliveConnectionsAreReused) {
  auto opened = WithClient({}, [&](Client& c) -> asio::awaitable<std::size_t> {
    for (int i = 0; i < 5; ++i) EXPECT_EQ((co_await c.get(Context::background(), base_ + "/headers")).status, 200);
    EXPECT_EQ(c.idle_connections(), 1u);
    co_return c.connections_opened();
  });
  EXPECT_EQ(opened, 1u);
}

TEST_F(ClientTest, RetriesTransientAnswersButNotASpentBudget) {
  int status = WithClient({.policy = Retrying(3, 5ms)}, [&](Client& c) -> asio::awaitable<int> {
    co_return (co_await c.get(Context::background().with_timeout(5s), base_ + "/flaky")).status;
  });
  EXPECT_EQ(status, 200);
  EXPECT_EQ(calls_.load(), 3);

  calls_ = 0;
  status = WithClient({.policy = Retrying(3, 5ms)}, [&](Client& c) -> asio::awaitable<int> {
    co_return (co_await c.get(Context::background().with_timeout(5s), base_ + "/expired")).status;
  });
  EXPECT_EQ(status, 504);
  EXPECT_EQ(calls_.load(), 1);

  calls_ = 0;  // POST is not idempotent: no retry
  status = WithClient({.policy = Retrying(3, 5ms)}, [&](Client& c) -> asio::awaitable<int> {
    co_return (co_await c.post(Context::background(), base_ + "/flaky", "{}")).status;
  });
  EXPECT_EQ(status, 503);
  EXPECT_EQ(calls_.load(), 1);
}

// A throttle per upstream keeps an account per path: answers that refuse the call (a spent
// budget here) make the client refuse most further calls to that path before sending them,
// and leave the other paths alone.
TEST_F(ClientTest, TheThrottleRefusesAnOverloadedPathBeforeSendingAndOnlyThatPath) {
  ClientOptions options;
  options.policy.throttle = resilience::ThrottleOptions{.k = 2, .window = 60s, .minimum_requests = 10};
  int refused_here = 0, answered = 0, healthy = 0;
  WithClient(options, [&](Client& c) -> asio::awaitable<int> {
    for (int i = 0; i < 60; ++i) {
      try {
        Response r = co_await c.get(Context::background().with_timeout(5s), base_ + "/expired?i=" + std::to_string(i));
        EXPECT_EQ(r.status, 504);
        ++answered;
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::overloaded) << e.what();
        EXPECT_NE(std::string(e.what()).find("/expired"), std::string::npos) << e.what();
        ++refused_here;
      }
      const Response ok = co_await c.get(Context::background().with_timeout(5s), base_ + "/headers");
      if (ok.status == 200) ++healthy;
    }
    co_return 0;
  });
  EXPECT_EQ(answered + refused_here, 60);
  EXPECT_EQ(calls_.load(), answered + healthy) << "a refused call never reaches the server";
  EXPECT_GT(refused_here, 30);
  EXPECT_EQ(healthy, 60);
}

TEST_F(ClientTest, ABackoffThatWouldOutliveTheDeadlineIsNotWaited) {
  const auto t0 = SteadyClock::now();
  int status = WithClient({.policy = Retrying(5, 2s)}, [&](Client& c) -> asio::awaitable<int> {
    co_return (co_await c.get(Context::background().with_timeout(500ms), base_ + "/flaky")).status;
  });
  EXPECT_EQ(status, 503);  // the last real answer
  EXPECT_LT(SteadyClock::now() - t0, 400ms * TimeScale());
}

// Not sent, sent without an answer, answered: and what each does to the caller's ledger.
TEST_F(ClientTest, DeliveryTellsNotSentFromSentFromAnswered) {
  auto ledger = std::make_shared<CommitLedger>();
  const Context base = Context::background().with_commit_ledger(ledger);
  auto post = [&](std::string url, std::string body, bool keyed) {
    ClientRequest req{.method = "POST", .url = std::move(url), .body = std::move(body)};
    if (keyed) req.headers.set("Idempotency-Key", "k-1");
    return req;
  };
  std::uint16_t closed_port = 0;
  {
    asio::io_context io;
    asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
    closed_port = a.local_endpoint().port();
  }
  // Awaitables and their arguments in named variables (g++ 12 and temporaries in co_await).
  WithClient({}, [&](Client& c) -> asio::awaitable<int> {
    // Not sent: a spent budget, a refused connection. Safe failures; the ledger is untouched.
    const Context spent = base.with_timeout(0ms);
    auto a1 = c.exchange(spent, post(base_ + "/hang", "", false));
    Exchange x = co_await std::move(a1);
    EXPECT_EQ(x.delivery, Delivery::not_sent);
    EXPECT_EQ(x.error->code(), ErrorCode::deadline_exceeded);
    auto a2 = c.exchange(base, post("http://127.0.0.1:" + std::to_string(closed_port) + "/", "", false));
    x = co_await std::move(a2);
    EXPECT_EQ(x.delivery, Delivery::not_sent);
    EXPECT_EQ(x.error->code(), ErrorCode::unavailable);
    EXPECT_EQ(calls_.load(), 0);
    EXPECT_FALSE(ledger->may_have_written());

    // Sent, no answer, a method that may write: commit_ambiguous, never the stop. The caller
    // stops once the server has the request (not on a timer: a slow connect is "not sent").
    auto arming_short = StopWhenServed(base);
    const Context short_ctx = co_await std::move(arming_short);
    auto a3 = c.exchange(short_ctx, post(base_ + "/hang", "", false));
    x = co_await std::move(a3);
    EXPECT_EQ(x.delivery, Delivery::sent);
    EXPECT_EQ(x.error->code(), ErrorCode::commit_ambiguous) << x.error->what();
    EXPECT_NE(x.error->message().find("reconcile"), std::string::npos) << x.error->message();
    EXPECT_EQ(ledger->commit_points(), 1u);
    EXPECT_FALSE(ledger->retry_with_same_key_safe());

    // The same under an idempotency key, through request(): thrown, and a keyed retry is safe.
    auto keyed_ledger = std::make_shared<CommitLedger>();
    const Context keyed_base = Context::background().with_commit_ledger(keyed_ledger);
    auto arming = StopWhenServed(keyed_base);
    const Context keyed_ctx = co_await std::move(arming);
    try {
      auto a4 = c.request(keyed_ctx, post(base_ + "/hang", "", true));
      (void)co_await std::move(a4);
      ADD_FAILURE() << "answered";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::commit_ambiguous);
      EXPECT_NE(e.message().find("same Idempotency-Key is safe"), std::string::npos) << e.message();
    }
    EXPECT_TRUE(keyed_ledger->retry_with_same_key_safe());

    // A GET that was sent and not answered wrote nothing: the stop stands.
    auto read_ledger = std::make_shared<CommitLedger>();
    const Context read_base = Context::background().with_commit_ledger(read_ledger);
    auto arming_read = StopWhenServed(read_base);
    const Context read_ctx = co_await std::move(arming_read);
    auto a5 = c.exchange(read_ctx, ClientRequest{.url = base_ + "/hang"});
    x = co_await std::move(a5);
    EXPECT_EQ(x.delivery, Delivery::sent) << (x.error ? x.error->what() : "answered");
    EXPECT_EQ(x.error->code(), ErrorCode::cancelled);
    EXPECT_FALSE(read_ledger->may_have_written());

    // Answered: the answer says whether the effect can have happened.
    struct Case {
      std::string body;
      int status;
      bool may_have_written;
    };
    const std::vector<Case> cases = {{"200", 200, true},
                                     {"commit_ambiguous", 500, true},
                                     {"internal", 500, true},
                                     {"nonsense", 502, true},
                                     {"overloaded", 503, false},
                                     {"deadline_exceeded", 504, false},
                                     {"invalid_argument", 400, false},
                                     {"idempotency_conflict", 409, false}};
    for (const Case& k : cases) {
      auto l = std::make_shared<CommitLedger>();
      const Context ctx = Context::background().with_commit_ledger(l).with_timeout(5s);
      auto a6 = c.exchange(ctx, post(base_ + "/answer", k.body, false));
      x = co_await std::move(a6);
      EXPECT_EQ(x.delivery, Delivery::answered) << k.body;
      EXPECT_EQ(x.response.status, k.status) << k.body;
      EXPECT_EQ(l->may_have_written(), k.may_have_written) << k.body;
    }
    co_return 0;
  });
}

// A name server that does not answer cannot keep the caller past its budget: Asio's lookup
// cannot be cancelled, so it is left behind and the call ends at its deadline.
TEST_F(ClientTest, ASlowHostLookupEndsAtTheBudget) {
  const int s = TimeScale();
  cutoff::internal::ScopedFault slow_dns(internal::kClientResolve, [] { return std::chrono::milliseconds(3000); });
  std::optional<ErrorCode> code;
  Duration took{};
  // Timed inside: the io_context runs on until the abandoned lookup ends.
  WithClient({}, [&](Client& c) -> asio::awaitable<int> {
    const Context ctx = Context::background().with_timeout(150ms * s);
    const auto started = SteadyClock::now();
    try {
      co_await c.get(ctx, base_ + "/");
    } catch (const Error& e) {
      code = e.code();
    }
    took = SteadyClock::now() - started;
    co_return 0;
  });
  EXPECT_EQ(code, ErrorCode::deadline_exceeded);
  EXPECT_LT(took, 150ms * s + 500ms * s) << "the caller waited for the lookup";
}

TEST_F(ClientTest, RefusedConnectionsAreUnavailable) {
  std::uint16_t closed_port = 0;
  {
    asio::io_context io;
    asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
    closed_port = a.local_endpoint().port();
  }
  try {
    WithClient({}, [&](Client& c) -> asio::awaitable<int> {
      co_return (co_await c.get(Context::background(), "http://127.0.0.1:" + std::to_string(closed_port) + "/")).status;
    });
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unavailable);
  }
}

}  // namespace
}  // namespace cutoff::http

namespace cutoff::http {
namespace {

TEST_F(ClientTest, AReplyMarginSendsLessAndNeverMoreThanHalf) {
  auto sent = [&](ClientOptions options, Duration budget) {
    const std::string body = WithClient(options, [&](Client& c) -> asio::awaitable<std::string> {
      const Context ctx = Context::background().with_timeout(budget);
      co_return (co_await c.get(ctx, base_ + "/headers")).body;
    });
    return std::stol(body.substr(body.find("Deadline-Budget-Ms=") + 19));
  };
  EXPECT_GT(sent({}, 1000ms), 900);  // no margin: the whole budget
  const long with_margin = sent({.reply_margin = 200ms}, 1000ms);
  EXPECT_LE(with_margin, 800);
  EXPECT_GT(with_margin, 700);
  // A margin larger than the budget: half of what is left, at most (the budget is scaled, so
  // that a slow machine still sends the request before it runs out).
  const Duration small = 100ms * TimeScale();
  const long halved = sent({.reply_margin = 10 * small}, small);
  EXPECT_LE(halved, std::chrono::duration_cast<std::chrono::milliseconds>(small).count() / 2);
  EXPECT_GE(halved, 1);
}

// With a margin, the server's own deadline fires first and its definite answer arrives: a
// write that was stopped before it committed reads as deadline_exceeded, not as ambiguous.
TEST_F(ClientTest, AReplyMarginTurnsAnUnansweredWriteIntoADefiniteAnswer) {
  const Duration budget = 400ms * TimeScale();
  auto outcome = [&](ClientOptions options) {
    return WithClient(options, [&](Client& c) -> asio::awaitable<std::pair<Delivery, std::string>> {
      auto ledger = std::make_shared<CommitLedger>();
      const Context ctx = Context::background().with_commit_ledger(ledger).with_timeout(budget);
      auto call = c.exchange(ctx, ClientRequest{.method = "POST", .url = base_ + "/until-deadline"});
      Exchange x = co_await std::move(call);
      EXPECT_EQ(ledger->may_have_written(), x.delivery != Delivery::answered);
      const std::string what = x.error ? std::string(to_string(x.error->code())) : std::to_string(x.response.status);
      co_return std::pair(x.delivery, what);
    });
  };
  EXPECT_EQ(outcome({}), std::pair(Delivery::sent, std::string("commit_ambiguous")));
  EXPECT_EQ(outcome({.reply_margin = budget / 3}), std::pair(Delivery::answered, std::string("504")));
}

}  // namespace
}  // namespace cutoff::http
