// http::Client and the resilience policy of each upstream: what is retried and what never is,
// the retry budget, the breaker, the bulkhead, hedging, and the metrics they count into.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <thread>
#include <vector>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
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
using resilience::PolicyOptions;

const resilience::BackoffOptions kQuick{.initial = 1ms, .max = 1ms, .jitter = resilience::Jitter::none};

// One value of `family{labels}` in an exposition, or -1.
double Metric(const std::string& text, const std::string& series) {
  const auto at = text.find(series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 1));
}

class ClientPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<Server>(io_.get_executor(), ServerOptions{});
    // 503 every time.
    for (const char* method : {"GET", "POST"}) {
      server_->route(method, "/down", [this](const Request&, const Context&) -> asio::awaitable<Response> {
        ++calls_;
        co_return Response::text(503, "down");
      });
    }
    // The first call answers only after 1.2 s, longer than any client here waits (the route
    // binds no budget, so only the client's own timeout ends the exchange); the later ones
    // answer at once.
    for (const char* method : {"GET", "POST"}) {
      server_->route(method, "/first-hangs",
                     [this](const Request&, const Context& ctx) -> asio::awaitable<Response> {
                       if (++calls_ == 1) {
                         // Scaled like the tests' attempt timeouts, so it outlasts them under sanitizers too.
                         auto sleeping = with_context(ctx, Sleep(1200ms * TimeScale()));
                         co_await std::move(sleeping);
                       }
                       co_return Response::text(200, "answer " + std::to_string(calls_.load()));
                     },
                     {.name = "first_hangs", .bind_deadline = false});
    }
    // Answers after 200 ms, counting the calls running at once.
    server_->route("GET", "/busy", [this](const Request&, const Context&) -> asio::awaitable<Response> {
      ++calls_;
      const int now = ++running_;
      int seen = max_running_.load();
      while (now > seen && !max_running_.compare_exchange_weak(seen, now)) {
      }
      co_await Sleep(200ms);
      --running_;
      co_return Response::text(200, "ok");
    });
    // Overloaded, asking for a wait: through a handler's Error (pushed back by 1 s) or a plain
    // 503 with the field set by hand (2 s).
    server_->route("GET", "/pushback", [this](const Request&, const Context&) -> asio::awaitable<Response> {
      ++calls_;
      times_.push_back(SteadyClock::now());
      Error busy(ErrorCode::overloaded, "try again in a second");
      busy.set_retry_after(1s);
      throw busy;
      co_return Response::text(200, "unreachable");
    });
    server_->route("GET", "/pushback-field", [this](const Request&, const Context&) -> asio::awaitable<Response> {
      ++calls_;
      Response r = Response::text(503, "busy");
      r.headers.set("Retry-After", "2");
      co_return r;
    });
    // A cutoff server that reports commit_ambiguous.
    server_->route("POST", "/ambiguous", [this](const Request&, const Context&) -> asio::awaitable<Response> {
      ++calls_;
      throw Error(ErrorCode::commit_ambiguous, "the commit may have happened");
      co_return Response::text(200, "unreachable");
    });
    port_ = server_->listen("127.0.0.1", 0);
    authority_ = "127.0.0.1:" + std::to_string(port_);
    base_ = "http://" + authority_;
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    server_->shutdown(100ms);
    thread_.join();
  }

  asio::io_context io_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::uint16_t port_ = 0;
  std::string authority_;
  std::string base_;
  std::atomic<int> calls_{0};
  std::atomic<int> running_{0};
  std::atomic<int> max_running_{0};
  std::vector<SteadyClock::time_point> times_;  // /pushback's arrivals, on the server's thread
};

ClientRequest Post(std::string url, bool keyed) {
  ClientRequest req{.method = "POST", .url = std::move(url), .body = "{}"};
  if (keyed) req.headers.set("Idempotency-Key", "key-1");
  return req;
}

// Failing calls spend the upstream's retry budget: with a ratio of 0.1 and no reserve, 20
// calls to an upstream that is down buy 2 retries, not 40.
TEST_F(ClientPolicyTest, TheRetryBudgetCapsRetriesAtAShareOfCalls) {
  observe::Registry registry;
  const ClientOptions options{
      .policy = {.attempt_timeout = 5s,
                 .retry = {.max_attempts = 3, .backoff = kQuick, .budget_ratio = 0.1, .budget_min_per_second = 0}},
      .metrics = &registry};
  WithClient(options, [&](Client& c) -> asio::awaitable<int> {
    for (int i = 0; i < 20; ++i) {
      const Context ctx = Context::background().with_timeout(5s);
      auto calling = c.get(ctx, base_ + "/down");
      EXPECT_EQ((co_await std::move(calling)).status, 503);  // the last real answer
    }
    co_return 0;
  });
  EXPECT_EQ(calls_.load(), 22);
  const std::string text = registry.expose();
  const std::string name = "name=\"" + authority_ + "\"";
  EXPECT_EQ(Metric(text, "cutoff_resilience_attempts_total{" + name + "}"), 22) << text;
  EXPECT_EQ(Metric(text, "cutoff_resilience_retries_total{" + name + "}"), 2) << text;
  EXPECT_EQ(Metric(text, "cutoff_resilience_retries_abandoned_total{" + name + ",reason=\"budget\"}"), 20) << text;
}

// The server's Retry-After holds the next attempt back at least that long; one longer than
// what is left of the budget (or than max_pushback) ends the call with the server's answer now.
TEST_F(ClientPolicyTest, RetriesWaitForTheServersRetryAfter) {
  const ClientOptions options{.policy = {.attempt_timeout = 5s, .retry = {.max_attempts = 2, .backoff = kQuick}}};
  WithClient(options, [&](Client& c) -> asio::awaitable<int> {
    const Context ctx = Context::background().with_timeout(10s);
    auto calling = c.get(ctx, base_ + "/pushback");
    const Response r = co_await std::move(calling);
    EXPECT_EQ(r.status, 503);
    EXPECT_EQ(r.headers.get("Retry-After").value_or(""), "1");
    co_return 0;
  });
  ASSERT_EQ(calls_.load(), 2);
  EXPECT_GE(times_[1] - times_[0], 1s) << "the retry came before the server's Retry-After";

  calls_ = 0;
  WithClient(options, [&](Client& c) -> asio::awaitable<int> {
    const Context ctx = Context::background().with_timeout(1500ms);
    const auto start = SteadyClock::now();
    auto calling = c.get(ctx, base_ + "/pushback-field");
    EXPECT_EQ((co_await std::move(calling)).status, 503);
    EXPECT_LT(SteadyClock::now() - start, 1s) << "waited for a retry the budget could not hold";
    co_return 0;
  });
  EXPECT_EQ(calls_.load(), 1);
}

// An upstream that keeps failing opens its breaker: later calls fail at once, unsent, and the
// upstream is left alone. A named upstream carries its name in the metrics.
TEST_F(ClientPolicyTest, AnOpenBreakerAnswersAtOnceWithoutCallingTheUpstream) {
  observe::Registry registry;
  PolicyOptions breaking{.attempt_timeout = 5s,
                         .breaker = resilience::BreakerOptions{.consecutive_failures = 3, .open_for = 60s}};
  const ClientOptions options{.upstreams = {{.authority = authority_, .name = "inventory", .policy = breaking}},
                              .metrics = &registry};
  WithClient(options, [&](Client& c) -> asio::awaitable<int> {
    for (int i = 0; i < 3; ++i) {
      const Context ctx = Context::background();
      auto calling = c.get(ctx, base_ + "/down");
      EXPECT_EQ((co_await std::move(calling)).status, 503);
    }
    for (int i = 0; i < 5; ++i) {
      const Context ctx = Context::background();
      auto calling = c.exchange(ctx, ClientRequest{.url = base_ + "/down"});
      Exchange x = co_await std::move(calling);
      EXPECT_EQ(x.delivery, Delivery::not_sent);
      EXPECT_EQ(x.error->code(), ErrorCode::unavailable) << x.error->what();
    }
    EXPECT_EQ(c.policy(authority_).breaker()->state(), resilience::BreakerState::open);
    co_return 0;
  });
  EXPECT_EQ(calls_.load(), 3);
  const std::string text = registry.expose();
  EXPECT_EQ(Metric(text, R"(cutoff_resilience_breaker_state{name="inventory"})"), 1) << text;
  EXPECT_EQ(Metric(text, R"(cutoff_resilience_breaker_rejected_total{name="inventory"})"), 5) << text;
}

// Only the named upstream has the policy; everybody else gets the default one.
TEST_F(ClientPolicyTest, NamedUpstreamsHaveTheirOwnPolicy) {
  const ClientOptions options{.policy = {.attempt_timeout = 5s},
                              .upstreams = {{.authority = "127.0.0.1:1",
                                             .name = "elsewhere",
                                             .policy = {.retry = {.max_attempts = 5, .backoff = kQuick}}}}};
  WithClient(options, [&](Client& c) -> asio::awaitable<int> {
    const Context ctx = Context::background();
    auto calling = c.get(ctx, base_ + "/down");
    EXPECT_EQ((co_await std::move(calling)).status, 503);
    EXPECT_EQ(c.policy(authority_).name(), authority_);
    EXPECT_EQ(c.policy("127.0.0.1:1").name(), "elsewhere");
    co_return 0;
  });
  EXPECT_EQ(calls_.load(), 1);  // the default policy: one attempt
}

// What may be tried again after an attempt that got no answer: a read, a keyed write; never an
// unkeyed write once it has left, and never a commit_ambiguous.
TEST_F(ClientPolicyTest, WritesAreRetriedOnlyWithAKeyAndNeverWhenAmbiguous) {
  const ClientOptions options{
      .policy = {.attempt_timeout = 300ms * TimeScale(), .retry = {.max_attempts = 3, .backoff = kQuick}}};
  auto run = [&](ClientRequest req) {
    calls_ = 0;
    return WithClient(options, [&](Client& c) -> asio::awaitable<std::pair<int, std::string>> {
      const Context ctx = Context::background().with_timeout(10s);
      auto calling = c.exchange(ctx, std::move(req));
      Exchange x = co_await std::move(calling);
      co_return std::pair(calls_.load(),
                          x.error ? std::string(to_string(x.error->code())) : std::to_string(x.response.status));
    });
  };
  // A GET whose first attempt timed out: the second answers.
  EXPECT_EQ(run(ClientRequest{.url = base_ + "/first-hangs"}), std::pair(2, std::string("200")));
  // A keyed POST too: repeating it with its key is safe.
  EXPECT_EQ(run(Post(base_ + "/first-hangs", true)), std::pair(2, std::string("200")));
  // An unkeyed POST that left is not repeated: it may have been applied.
  EXPECT_EQ(run(Post(base_ + "/first-hangs", false)), std::pair(1, std::string("commit_ambiguous")));
  // An unkeyed POST that got a 503 is not repeated either.
  EXPECT_EQ(run(Post(base_ + "/down", false)), std::pair(1, std::string("503")));
  // commit_ambiguous is never retried, keyed or not.
  EXPECT_EQ(run(Post(base_ + "/ambiguous", true)), std::pair(1, std::string("500")));
}

// Nothing of an unkeyed POST left the client when the connection was refused: trying again
// cannot apply it twice.
TEST_F(ClientPolicyTest, AWriteThatNeverLeftMayBeTriedAgain) {
  std::uint16_t closed_port = 0;
  {
    asio::io_context io;
    asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
    closed_port = a.local_endpoint().port();
  }
  observe::Registry registry;
  const ClientOptions options{.policy = {.attempt_timeout = 5s, .retry = {.max_attempts = 3, .backoff = kQuick}},
                              .metrics = &registry};
  WithClient(options, [&](Client& c) -> asio::awaitable<int> {
    const Context ctx = Context::background();
    auto calling = c.exchange(ctx, Post("http://127.0.0.1:" + std::to_string(closed_port) + "/", false));
    Exchange x = co_await std::move(calling);
    EXPECT_EQ(x.delivery, Delivery::not_sent);
    EXPECT_EQ(x.error->code(), ErrorCode::unavailable);
    co_return 0;
  });
  const std::string text = registry.expose();
  EXPECT_EQ(Metric(text, "cutoff_resilience_attempts_total{name=\"127.0.0.1:" + std::to_string(closed_port) + "\"}"), 3)
      << text;
}

// A full bulkhead turns the call away before it leaves: `overloaded`, not sent.
TEST_F(ClientPolicyTest, AFullBulkheadRefusesBeforeSending) {
  const ClientOptions options{.policy = {.attempt_timeout = 5s, .bulkhead = {.max_concurrent = 2, .max_queue = 1}}};
  auto outcomes = WithClient(options, [&](Client& c) -> asio::awaitable<std::vector<std::string>> {
    auto results = std::make_shared<std::vector<std::string>>();
    auto remaining = std::make_shared<int>(5);
    const auto executor = co_await asio::this_coro::executor;
    for (int i = 0; i < 5; ++i) {
      asio::co_spawn(
          executor,
          [&c, this, results, remaining]() -> asio::awaitable<void> {
            const Context ctx = Context::background();
            auto calling = c.exchange(ctx, ClientRequest{.url = base_ + "/busy"});
            Exchange x = co_await std::move(calling);
            results->push_back(x.error
                                   ? std::string(to_string(x.error->code())) + "/" + std::string(to_string(x.delivery))
                                   : std::to_string(x.response.status));
            --*remaining;
          },
          asio::detached);
    }
    while (*remaining > 0) co_await Sleep(5ms);
    co_return *results;
  });
  std::sort(outcomes.begin(), outcomes.end());
  EXPECT_EQ(outcomes, (std::vector<std::string>{"200", "200", "200", "overloaded/not_sent", "overloaded/not_sent"}));
  EXPECT_EQ(max_running_.load(), 2);
}

// Hedging: a slow first attempt gets a sibling, and the first answer wins; a write is never
// hedged.
TEST_F(ClientPolicyTest, ReadsAreHedgedAndWritesNever) {
  observe::Registry registry;
  const ClientOptions options{
      .policy = {.attempt_timeout = 5s, .hedge = resilience::HedgeOptions{.delay = 50ms, .max_attempts = 2}},
      .metrics = &registry};
  const auto t0 = std::chrono::steady_clock::now();
  const int status = WithClient(options, [&](Client& c) -> asio::awaitable<int> {
    const Context ctx = Context::background();
    auto calling = c.get(ctx, base_ + "/first-hangs");
    co_return (co_await std::move(calling)).status;
  });
  EXPECT_EQ(status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 800ms * TimeScale());  // not the 1.2 s of the first
  EXPECT_EQ(calls_.load(), 2);
  const std::string name = "name=\"" + authority_ + "\"";
  EXPECT_EQ(Metric(registry.expose(), "cutoff_resilience_hedges_total{" + name + "}"), 1);

  calls_ = 0;
  const std::string post = WithClient(options, [&](Client& c) -> asio::awaitable<std::string> {
    const Context ctx = Context::background().with_timeout(400ms * TimeScale());
    auto calling = c.exchange(ctx, Post(base_ + "/first-hangs", true));
    Exchange x = co_await std::move(calling);
    co_return x.error ? std::string(to_string(x.error->code())) : std::to_string(x.response.status);
  });
  EXPECT_EQ(post, "commit_ambiguous");
  EXPECT_EQ(calls_.load(), 1);
}

}  // namespace
}  // namespace cutoff::http
