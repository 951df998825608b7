// The transport conformance suite: the guarantees every transport cutoff serves and calls over
// must keep, run against each of them (HTTP/1.1, HTTP/1.1 over TLS, gRPC). A new transport is
// done when it passes:
// - the budget comes in from every accepted header form, and forged or huge values only
//   shorten it (never past the service's maximum);
// - a budget already spent fails fast, before the handler runs;
// - a caller that stops (or disconnects) stops the handler with `cancelled`, within
//   milliseconds, and the SQLite statement the handler was running ends with it;
// - errors reach the caller with the code, and the status, of the one table in core;
// - shutdown lets a request in flight finish within the grace, and stops one that would not
//   with `shutdown`;
// - a write sent and never answered is reported as commit_ambiguous, never as a safe failure.
//
// Each transport comes as a Harness: its server serving the same operations (Operations
// below), a plain call that reports what came over the wire, and cutoff's own client for the
// guarantees that are the client's.
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cctype>
#include <chrono>
#include <ctime>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/grpc/client.hpp"
#include "cutoff/grpc/server.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/http/error_document.hpp"
#include "cutoff/http/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "cutoff/sql/pool.hpp"
#include "cutoff/sql/sqlite/sqlite_connection.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/throwaway_ca.hpp"
#include "tests/support/time_scale.hpp"
#include "tests/support/with_client.hpp"

namespace cutoff {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using test_support::Sleep;
using test_support::TimeScale;
using SteadyClock = std::chrono::steady_clock;
using Headers = std::vector<std::pair<std::string, std::string>>;

enum class Transport { http, https, grpc };

std::string Name(const ::testing::TestParamInfo<Transport>& info) {
  switch (info.param) {
    case Transport::http: return "Http";
    case Transport::https: return "HttpOverTls";
    case Transport::grpc: return "Grpc";
  }
  return "?";
}

// Runs for many seconds unless interrupted.
constexpr const char* kEndless =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT count(*) FROM c";

std::int64_t NowNs() { return SteadyClock::now().time_since_epoch().count(); }

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// An operation every transport serves: an argument in, a body out; cutoff::Error to fail.
using Operation = std::function<asio::awaitable<std::string>(std::string arg, const Context& ctx)>;

// What the caller saw.
struct Outcome {
  bool answered = false;  // the server answered, with a success or a failure
  bool ok = false;        // a success
  std::string body;       // the success's
  int status = 0;         // the HTTP status, or the gRPC status code
  // The failure's code: as the server named it (error document, trailer) for an answer, the
  // client's own error otherwise.
  std::optional<ErrorCode> code;
  bool deadline_expired = false;  // the answer says the caller's budget was spent
};

class Harness {
 public:
  virtual ~Harness() = default;
  // Serves `operations` (by name) on 127.0.0.1 with a service maximum of 2 s; `unbound` runs
  // without the caller's budget where the transport allows it.
  virtual void Start(asio::any_io_executor executor, observe::Registry& metrics,
                     const std::vector<std::pair<std::string, Operation>>& operations, const std::string& unbound,
                     const test_support::ThrowawayCa& ca, const test_support::IssuedCertificate& cert) = 0;
  virtual void Shutdown(Duration grace) = 0;
  // A call of `op` with `headers` (budget headers or metadata; grpc-timeout is gRPC's own
  // deadline there) under the caller's budget `timeout`.
  virtual Outcome Call(const std::string& op, const std::string& arg, const Headers& headers, Duration timeout) = 0;
  // A call through cutoff's client under `ctx`; `write`: it may take effect.
  virtual Outcome ClientCall(const Context& ctx, const std::string& op, bool write) = 0;
  // The wire status of `code`'s row.
  virtual int StatusOf(const ErrorCodeInfo& row) const = 0;
};

class HttpHarness : public Harness {
 public:
  explicit HttpHarness(bool tls) : tls_(tls) {}

  void Start(asio::any_io_executor executor, observe::Registry& metrics,
             const std::vector<std::pair<std::string, Operation>>& operations, const std::string& unbound,
             const test_support::ThrowawayCa& ca, const test_support::IssuedCertificate& cert) override {
    http::ServerOptions options;
    options.metrics = &metrics;
    options.budget.max_budget = 2s;
    if (tls_) options.tls = http::TlsServerOptions{cert.chain_file, cert.key_file};
    client_.tls.ca_file = ca.certificate_file();
    server_ = std::make_unique<http::Server>(executor, options);
    for (const auto& [name, op] : operations) {
      http::RouteOptions route;
      route.bind_deadline = name != unbound;
      const http::Handler handler = [op = op](const http::Request& req,
                                              const Context& ctx) -> asio::awaitable<http::Response> {
        std::string body = co_await op(req.body, ctx);
        co_return http::Response::text(200, std::move(body));
      };
      server_->route("GET", "/" + name, handler, route);  // reads
      server_->route("POST", "/" + name, handler, route);
    }
    base_ = std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(server_->listen("127.0.0.1", 0));
  }

  void Shutdown(Duration grace) override { server_->shutdown(grace); }

  Outcome Call(const std::string& op, const std::string& arg, const Headers& headers, Duration timeout) override {
    http::ClientRequest req;
    req.method = "POST";
    req.url = base_ + "/" + op;
    req.body = arg;
    for (const auto& [name, value] : headers) req.headers.add(name, value);
    const http::Exchange x = test_support::WithClient(client_, [&](http::Client& c) -> asio::awaitable<http::Exchange> {
      const Context ctx = Context::background().with_timeout(timeout);
      auto exchanging = c.exchange(ctx, req);
      co_return co_await std::move(exchanging);
    });
    return FromExchange(x);
  }

  Outcome ClientCall(const Context& ctx, const std::string& op, bool write) override {
    http::ClientRequest req;
    req.method = write ? "POST" : "GET";
    req.url = base_ + "/" + op;
    req.may_write = write;
    const http::Exchange x = test_support::WithClient(client_, [&](http::Client& c) -> asio::awaitable<http::Exchange> {
      auto exchanging = c.exchange(ctx, req);
      co_return co_await std::move(exchanging);
    });
    return FromExchange(x);
  }

  int StatusOf(const ErrorCodeInfo& row) const override { return row.http_status; }

 private:
  static Outcome FromExchange(const http::Exchange& x) {
    Outcome out;
    if (x.delivery != http::Delivery::answered) {
      out.code = x.error ? std::optional(x.error->code()) : std::nullopt;
      return out;
    }
    out.answered = true;
    out.status = x.response.status;
    out.ok = x.response.status == 200;
    if (out.ok) out.body = x.response.body;
    if (auto doc = http::parse_error_document(x.response.body)) out.code = doc->code;
    out.deadline_expired = http::deadline_expired(x.response);
    return out;
  }

  bool tls_;
  http::ClientOptions client_;
  std::unique_ptr<http::Server> server_;
  std::string base_;
};

class GrpcHarness : public Harness {
 public:
  void Start(asio::any_io_executor executor, observe::Registry& metrics,
             const std::vector<std::pair<std::string, Operation>>& operations, const std::string&,
             const test_support::ThrowawayCa&, const test_support::IssuedCertificate&) override {
    grpc::ServerOptions options;
    options.metrics = &metrics;
    options.budget.max_budget = 2s;
    server_ = std::make_unique<grpc::Server>(executor, options);
    // Every gRPC method binds the caller's deadline; there is no unbound one.
    for (const auto& [name, op] : operations) server_->unary("/conformance.Probe/" + name, op);
    target_ = "127.0.0.1:" + std::to_string(server_->listen("127.0.0.1", 0));
  }

  void Shutdown(Duration grace) override { server_->shutdown(grace); }

  // Through gRPC's own generic stub, to see the status and trailer as sent.
  Outcome Call(const std::string& op, const std::string& arg, const Headers& headers, Duration timeout) override {
    auto channel = ::grpc::CreateChannel(target_, ::grpc::InsecureChannelCredentials());
    ::grpc::GenericStub stub(channel);
    ::grpc::ClientContext context;
    Duration deadline = timeout;
    for (const auto& [name, value] : headers) {
      if (Lower(name) != "grpc-timeout") {
        context.AddMetadata(Lower(name), value);
        continue;
      }
      // gRPC's own deadline: what the caller's library sends as grpc-timeout.
      if (const auto parsed = parse_grpc_timeout(value); std::holds_alternative<Duration>(parsed))
        deadline = std::min(deadline, std::get<Duration>(parsed));
    }
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(deadline));
    ::grpc::Slice request_slice(arg);
    ::grpc::ByteBuffer request(&request_slice, 1), response;
    std::promise<::grpc::Status> done;
    stub.UnaryCall(&context, "/conformance.Probe/" + op, ::grpc::StubOptions(), &request, &response,
                   [&](::grpc::Status s) { done.set_value(std::move(s)); });
    const ::grpc::Status status = done.get_future().get();
    Outcome out;
    out.status = static_cast<int>(status.error_code());
    const auto& trailers = context.GetServerTrailingMetadata();
    const auto named = trailers.find("cutoff-error-code");
    out.answered = status.ok() || named != trailers.end();
    if (status.ok()) {
      out.ok = true;
      std::vector<::grpc::Slice> slices;
      (void)response.Dump(&slices);
      for (const auto& s : slices) out.body.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    if (named != trailers.end()) out.code = parse_error_code(std::string_view(named->second.data(), named->second.size()));
    out.deadline_expired = status.error_code() == ::grpc::StatusCode::DEADLINE_EXCEEDED && out.answered;
    return out;
  }

  Outcome ClientCall(const Context& ctx, const std::string& op, bool write) override {
    grpc::CallOptions call;
    call.may_write = write;
    return test_support::RunSync([&]() -> asio::awaitable<Outcome> {
      const auto executor = co_await asio::this_coro::executor;
      grpc::Client client(executor, target_);
      Outcome out;
      try {
        auto calling = client.call(ctx, "/conformance.Probe/" + op, "", call);
        out.body = co_await std::move(calling);
        out.answered = out.ok = true;
      } catch (const Error& e) {
        out.code = e.code();
      }
      co_return out;
    });
  }

  int StatusOf(const ErrorCodeInfo& row) const override { return row.grpc_status; }

 private:
  std::unique_ptr<grpc::Server> server_;
  std::string target_;
};

std::unique_ptr<Harness> MakeHarness(Transport t) {
  if (t == Transport::grpc) return std::make_unique<GrpcHarness>();
  return std::make_unique<HttpHarness>(t == Transport::https);
}

class TransportConformance : public ::testing::TestWithParam<Transport> {
 protected:
  static void SetUpTestSuite() {
    ca_ = new test_support::ThrowawayCa();
    cert_ = new test_support::IssuedCertificate(ca_->Issue("server", {"DNS:localhost", "IP:127.0.0.1"}));
  }
  static void TearDownTestSuite() {
    delete cert_;
    delete ca_;
  }

  void SetUp() override {
    sql::SqliteOptions sqlite;
    sqlite.driver.statement_observer = [this](const sql::StatementEvent& e) {
      if (e.request_id != "statement") return;
      std::lock_guard lock(mu_);
      if (e.ended) statement_ended_ = *e.ended;
      else statement_started_ = e.started;
    };
    sql::PoolOptions pool;
    pool.max_size = 1;
    pool_ = std::make_unique<sql::Pool>(sql::sqlite_factory(sqlite), pool);

    std::vector<std::pair<std::string, Operation>> ops;
    ops.emplace_back("budget", [this](std::string, const Context& ctx) -> asio::awaitable<std::string> {
      ++calls_;
      co_return std::to_string(std::chrono::ceil<std::chrono::milliseconds>(ctx.remaining()).count());
    });
    ops.emplace_back("work", [this](std::string, const Context& ctx) -> asio::awaitable<std::string> {
      ++calls_;
      started_at_ = NowNs();
      try {
        co_await Sleep(5s);
      } catch (...) {
        stop_reason_ = ctx.stop_reason();
        stopped_at_ = NowNs();
        throw;
      }
      co_return "done";
    });
    ops.emplace_back("short", [this](std::string, const Context&) -> asio::awaitable<std::string> {
      ++calls_;
      started_at_ = NowNs();
      co_await Sleep(100ms);
      co_return "finished";
    });
    ops.emplace_back("statement", [this](std::string, const Context& ctx) -> asio::awaitable<std::string> {
      ++calls_;
      started_at_ = NowNs();
      auto lease = co_await pool_->acquire(ctx);
      auto running = lease->execute(ctx, kEndless, {});
      co_await std::move(running);
      co_return "done";
    });
    ops.emplace_back("fail", [this](std::string code, const Context&) -> asio::awaitable<std::string> {
      ++calls_;
      throw Error(parse_error_code(code).value_or(ErrorCode::internal), "as asked");
      co_return "";
    });
    // Never answers in time: only the caller's stop ends the call (HTTP: not bound to the
    // caller's budget at all).
    ops.emplace_back("hang", [this](std::string, const Context&) -> asio::awaitable<std::string> {
      ++calls_;
      co_await Sleep(1500ms);
      co_return "late";
    });
    harness_ = MakeHarness(GetParam());
    harness_->Start(io_.get_executor(), metrics_, ops, "hang", *ca_, *cert_);
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    harness_->Shutdown(100ms);
    harness_.reset();  // a gRPC server waits for its calls here, with the io_context running
    work_.reset();
    thread_.join();
  }

  Outcome Call(const std::string& op, const Headers& headers = {}, Duration timeout = 5s, const std::string& arg = "") {
    return harness_->Call(op, arg, headers, timeout);
  }

  // Calls `op` through cutoff's client and stops the call `after` the handler started;
  // returns when the stop was made.
  std::int64_t CallAndStop(const std::string& op, Duration after, Outcome* out) {
    std::atomic<std::int64_t> stopped_at{0};
    auto [ctx, source] = Context::background().with_request_id("statement").with_timeout(10s).with_cancel();
    std::thread stopper([&, source = source] {
      for (int i = 0; i < 2000 && started_at_.load() == 0; ++i) std::this_thread::sleep_for(2ms);
      std::this_thread::sleep_for(after);
      stopped_at = NowNs();
      source.request_stop(StopReason::cancelled);
    });
    *out = harness_->ClientCall(ctx, op, /*write=*/false);
    stopper.join();
    return stopped_at.load();
  }

  static test_support::ThrowawayCa* ca_;
  static test_support::IssuedCertificate* cert_;

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  observe::Registry metrics_;
  std::unique_ptr<sql::Pool> pool_;
  std::unique_ptr<Harness> harness_;
  std::thread thread_;
  std::atomic<int> calls_{0};
  std::atomic<std::int64_t> started_at_{0};
  std::atomic<StopReason> stop_reason_{StopReason::none};
  std::atomic<std::int64_t> stopped_at_{0};
  std::mutex mu_;
  std::optional<TimePoint> statement_started_, statement_ended_;
};

test_support::ThrowawayCa* TransportConformance::ca_ = nullptr;
test_support::IssuedCertificate* TransportConformance::cert_ = nullptr;

TEST_P(TransportConformance, TheBudgetComesInFromEveryAcceptedHeaderForm) {
  // X-Request-Deadline is absolute (RFC 3339, UTC); whole seconds, so 1.3 s to 2.3 s away.
  const std::time_t at = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() + 2300ms);
  std::tm utc{};
  gmtime_r(&at, &utc);
  char rfc3339[32];
  std::strftime(rfc3339, sizeof rfc3339, "%Y-%m-%dT%H:%M:%SZ", &utc);
  struct Form {
    std::string name, value;
    long most, least;
  };
  for (const Form& f : {Form{"Deadline-Budget-Ms", "300", 300, 100}, Form{"grpc-timeout", "300m", 300, 100},
                        Form{"X-Request-Deadline", rfc3339, 2000, 1000}}) {
    Headers headers;
    headers.emplace_back(f.name, f.value);
    const Outcome x = Call("budget", headers);
    ASSERT_TRUE(x.ok) << f.name << ": status " << x.status;
    const long budget = std::stol(x.body);
    // gRPC keeps a call's deadline in whole milliseconds of its own clock, rounding "now" up
    // when it adds grpc-timeout: the deadline it hands the server can be 1 ms past the one sent.
    const long rounding = GetParam() == Transport::grpc && f.name == "grpc-timeout" ? 1 : 0;
    EXPECT_LE(budget, f.most + rounding) << f.name;
    EXPECT_GT(budget, f.least) << f.name;
  }
}

TEST_P(TransportConformance, ForgedValuesOnlyShorten) {
  Headers huge;
  huge.emplace_back("grpc-timeout", "99999999S");
  Outcome x = Call("budget", huge, 60s);
  ASSERT_TRUE(x.ok);
  EXPECT_LE(std::stol(x.body), 2000) << "the service maximum caps any caller";
  Headers forged;
  forged.emplace_back("Deadline-Budget-Ms", "300");
  forged.emplace_back("X-Request-Deadline", "tomorrow, roughly");  // malformed: rejected, never used
  x = Call("budget", forged, 60s);
  ASSERT_TRUE(x.ok);
  EXPECT_LE(std::stol(x.body), 300);
  EXPECT_NE(Lower(metrics_.expose()).find("cutoff_budget_header_rejected_total{header=\"x-request-deadline\""),
            std::string::npos)
      << metrics_.expose();
}

TEST_P(TransportConformance, ASpentBudgetFailsFastBeforeTheHandler) {
  Headers spent;
  spent.emplace_back("Deadline-Budget-Ms", "0");
  const auto start = SteadyClock::now();
  const Outcome x = Call("work", spent);
  ASSERT_TRUE(x.answered);
  EXPECT_EQ(x.status, harness_->StatusOf(info(ErrorCode::deadline_exceeded)));
  EXPECT_EQ(x.code, ErrorCode::deadline_exceeded);
  EXPECT_TRUE(x.deadline_expired);
  EXPECT_LT(SteadyClock::now() - start, TimeScale() * 500ms);
  EXPECT_EQ(calls_.load(), 0);
}

TEST_P(TransportConformance, TheCallersStopStopsTheHandlerAsCancelled) {
  Outcome x;
  const std::int64_t stopped = CallAndStop("work", 30ms, &x);
  EXPECT_EQ(x.code, ErrorCode::cancelled);
  for (int i = 0; i < 1000 && stopped_at_.load() == 0; ++i) std::this_thread::sleep_for(2ms);
  EXPECT_EQ(stop_reason_.load(), StopReason::cancelled);
  EXPECT_LT(std::chrono::nanoseconds(stopped_at_.load() - stopped), TimeScale() * 200ms);
}

TEST_P(TransportConformance, TheCalleesStatementEndsWhenTheCallerStops) {
  Outcome x;
  const std::int64_t stopped = CallAndStop("statement", 50ms, &x);
  EXPECT_FALSE(x.ok);
  std::optional<TimePoint> ended;
  for (int i = 0; i < 1000; ++i) {
    {
      std::lock_guard lock(mu_);
      ended = statement_ended_;
    }
    if (ended) break;
    std::this_thread::sleep_for(2ms);
  }
  ASSERT_TRUE(ended) << "the statement was still running a second after the caller stopped";
  std::lock_guard lock(mu_);
  ASSERT_TRUE(statement_started_);
  EXPECT_GT(*ended - *statement_started_, 20ms) << "the statement did run";
  // The statement observer stamps with the steady clock, as NowNs does.
  const auto after_stop = std::chrono::nanoseconds(ended->time_since_epoch().count() - stopped);
  EXPECT_LT(after_stop, TimeScale() * 250ms);
}

TEST_P(TransportConformance, ErrorsCarryTheCodeAndStatusOfTheCoreTable) {
  for (const ErrorCodeInfo& row : all_error_codes()) {
    if (row.code == ErrorCode::cancelled) continue;  // the client went away: nobody reads an answer
    const Outcome x = Call("fail", {}, 5s, std::string(row.name));
    ASSERT_TRUE(x.answered) << row.name;
    EXPECT_EQ(x.status, harness_->StatusOf(row)) << row.name;
    EXPECT_EQ(x.code, row.code) << row.name;
  }
}

TEST_P(TransportConformance, ShutdownDrainsThenStopsWithShutdown) {
  // A request that finishes within the grace is answered.
  std::thread stopper([this] {
    for (int i = 0; i < 2000 && started_at_.load() == 0; ++i) std::this_thread::sleep_for(1ms);
    harness_->Shutdown(TimeScale() * 1s);
  });
  const Outcome finished = Call("short");
  stopper.join();
  EXPECT_TRUE(finished.ok) << "status " << finished.status;
  EXPECT_EQ(finished.body, "finished");
}

TEST_P(TransportConformance, ShutdownStopsWhatOutlivesTheGrace) {
  std::thread stopper([this] {
    for (int i = 0; i < 2000 && started_at_.load() == 0; ++i) std::this_thread::sleep_for(1ms);
    harness_->Shutdown(50ms);
  });
  const Outcome x = Call("work");
  stopper.join();
  ASSERT_TRUE(x.answered);
  EXPECT_EQ(x.status, harness_->StatusOf(info(ErrorCode::shutdown)));
  EXPECT_EQ(x.code, ErrorCode::shutdown);
  EXPECT_EQ(stop_reason_.load(), StopReason::shutdown);
}

// The caller stops a write the server is still working on. (Stopped by a deadline the server
// shares instead, the server's own definite deadline_exceeded may answer first, which rules
// the effect out; the caller's own stop leaves no answer.)
TEST_P(TransportConformance, AWriteSentAndNeverAnsweredIsCommitAmbiguous) {
  auto [ctx, source] = Context::background().with_timeout(10s).with_cancel();
  std::thread stopper([&, source = source] {
    for (int i = 0; i < 2000 && calls_.load() == 0; ++i) std::this_thread::sleep_for(2ms);
    std::this_thread::sleep_for(50ms);
    source.request_stop(StopReason::cancelled);
  });
  const Outcome x = harness_->ClientCall(ctx, "hang", /*write=*/true);
  stopper.join();
  EXPECT_FALSE(x.answered);
  EXPECT_EQ(x.code, ErrorCode::commit_ambiguous);
  EXPECT_EQ(calls_.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(Transports, TransportConformance,
                         ::testing::Values(Transport::http, Transport::https, Transport::grpc), Name);

}  // namespace
}  // namespace cutoff
