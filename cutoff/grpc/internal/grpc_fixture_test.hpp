// The gRPC tests' server: a cutoff grpc::Server on 127.0.0.1 with a few methods that show what
// a handler saw (its budget, its request id, its stop), run on an io_context thread of its own.
// Clients run on RunSync's io_context.
#ifndef CUTOFF_GRPC_INTERNAL_GRPC_FIXTURE_TEST_HPP_
#define CUTOFF_GRPC_INTERNAL_GRPC_FIXTURE_TEST_HPP_

#include <gtest/gtest.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/grpc/client.hpp"
#include "cutoff/grpc/internal/byte_buffers.hpp"
#include "cutoff/grpc/server.hpp"
#include "cutoff/observe/metrics.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::grpc {

// gRPC keeps a call's deadline in whole milliseconds of its own clock and rounds "now" up when
// it adds a grpc-timeout: a handler can see up to this much more than the deadline sent.
inline constexpr long kGrpcDeadlineRoundingMs = 1;

inline std::int64_t NowNs() { return std::chrono::steady_clock::now().time_since_epoch().count(); }

class GrpcFixture : public ::testing::Test {
 protected:
  static constexpr const char* kEcho = "/test.Probe/Echo";          // answers its request
  static constexpr const char* kBudget = "/test.Probe/Budget";      // answers its remaining ms
  static constexpr const char* kRequestId = "/test.Probe/RequestId";  // answers its request id
  static constexpr const char* kSlow = "/test.Probe/Slow";          // waits 5 s for its stop
  static constexpr const char* kFail = "/test.Probe/Fail";          // throws what it is asked to
  // Streams "0", "1", ... up to the request's number; message 1 takes the request's second
  // number of ms (if any), the others none. "tick" streams forever, one message every 50 ms.
  static constexpr const char* kCount = "/test.Probe/Count";
  // Inline handlers (on gRPC's thread): "budget" answers the remaining ms, "thread" whether it
  // ran off the server's executor thread, "not_found"/"commit"/"boom" fail as kFail does,
  // "spin" checks its context every millisecond until it stops (at most 5 s); anything else
  // is echoed.
  static constexpr const char* kInline = "/test.Probe/Inline";

  void SetUp() override { options_.metrics = &metrics_; }

  // Starts the server with the probe methods; `configure` may change the options first.
  void Start(MethodOptions budget_method = {}, MethodOptions count_method = {}) {
    server_ = std::make_unique<Server>(io_.get_executor(), options_);
    server_->unary(kEcho, [this](std::string request, const Context&) -> boost::asio::awaitable<std::string> {
      ++calls_;
      co_return request;
    });
    server_->unary(
        kBudget,
        [this](std::string, const Context& ctx) -> boost::asio::awaitable<std::string> {
          ++calls_;
          co_return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(ctx.remaining()).count());
        },
        budget_method);
    server_->unary(kRequestId, [this](std::string, const Context& ctx) -> boost::asio::awaitable<std::string> {
      ++calls_;
      co_return ctx.request_id() + " " + ctx.values().trace.traceparent;
    });
    server_->unary(kSlow, [this](std::string, const Context& ctx) -> boost::asio::awaitable<std::string> {
      ++calls_;
      started_at_ = NowNs();
      try {
        co_await test_support::Sleep(std::chrono::seconds(5));
      } catch (...) {
        slow_reason_ = ctx.stop_reason();
        slow_stopped_at_ = NowNs();
        throw;
      }
      co_return "done";
    });
    server_->unary(kFail, [this](std::string request, const Context& ctx) -> boost::asio::awaitable<std::string> {
      ++calls_;
      if (request == "not_found") throw Error(ErrorCode::not_found, "no such sku", ctx.request_id());
      if (request == "overloaded") throw Error(ErrorCode::overloaded, "too busy", ctx.request_id());
      if (request.starts_with("pushback ")) {  // overloaded, with the wait in ms (-1: never again)
        const long ms = std::stol(request.substr(9));
        Error busy(ErrorCode::overloaded, "too busy", ctx.request_id());
        busy.set_retry_after(ms < 0 ? Error::kDoNotRetry : std::chrono::milliseconds(ms));
        arrivals_.push_back(std::chrono::steady_clock::now());
        throw busy;
      }
      if (request == "commit") {
        ctx.commit_ledger()->note_commit_point(false);
        throw Error(ErrorCode::unavailable, "the queue went away after the commit", ctx.request_id());
      }
      throw std::runtime_error("secret detail");
      co_return "";
    });
    server_->server_streaming(
        kCount,
        [this](const std::string& request, std::size_t index,
               const Context& ctx) -> boost::asio::awaitable<std::optional<std::string>> {
          if (index == 0) started_at_ = NowNs();
          if (request == "tick") {
            try {
              co_await test_support::Sleep(std::chrono::milliseconds(50));
            } catch (...) {
              slow_reason_ = ctx.stop_reason();
              slow_stopped_at_ = NowNs();
              throw;
            }
            co_return std::to_string(index);
          }
          const auto space = request.find(' ');
          const std::size_t count = std::stoul(request.substr(0, space));
          if (index >= count) co_return std::nullopt;
          if (index == 1 && space != std::string::npos)
            co_await test_support::Sleep(std::chrono::milliseconds(std::stol(request.substr(space + 1))));
          co_return std::to_string(index);
        },
        count_method);
    server_->unary_inline(kInline, [this](std::string request, const Context& ctx) -> std::string {
      ++calls_;
      if (request == "budget")
        return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(ctx.remaining()).count());
      if (request == "thread") return std::this_thread::get_id() == thread_.get_id() ? "executor" : "grpc";
      if (request == "not_found") throw Error(ErrorCode::not_found, "no such sku", ctx.request_id());
      if (request == "commit") {
        ctx.commit_ledger()->note_commit_point(false);
        throw Error(ErrorCode::unavailable, "the queue went away after the commit", ctx.request_id());
      }
      if (request == "boom") throw std::runtime_error("secret detail");
      if (request == "spin") {
        started_at_ = NowNs();
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        try {
          while (std::chrono::steady_clock::now() < until) {
            ctx.check();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        } catch (...) {
          slow_reason_ = ctx.stop_reason();
          slow_stopped_at_ = NowNs();
          throw;
        }
        return "done";
      }
      return request;
    });
    port_ = server_->listen("127.0.0.1", 0);
    target_ = "127.0.0.1:" + std::to_string(port_);
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    if (server_) server_->shutdown(std::chrono::milliseconds(100));
    server_.reset();  // waits for the calls, with the io_context still running
    work_.reset();
    if (thread_.joinable()) thread_.join();
  }

  // One call from a fresh client; the error, if any, is returned instead of thrown.
  struct Result {
    std::string response;
    std::optional<Error> error;
  };
  Result Call(const Context& ctx, const std::string& method, const std::string& request, CallOptions call = {},
              ClientOptions client_options = {}) {
    return test_support::RunSync([&]() -> boost::asio::awaitable<Result> {
      const auto executor = co_await boost::asio::this_coro::executor;
      Client client(executor, target_, client_options);
      Result r;
      try {
        auto calling = client.call(ctx, method, request, call);
        r.response = co_await std::move(calling);
      } catch (const Error& e) {
        r.error = e;
      }
      co_return r;
    });
  }

  std::size_t calls_in_flight() const { return server_ ? server_->calls_in_flight() : 0; }

  // Waits (bounded) until the slow method's handler stopped.
  // Calls `method` with a 10 s deadline from a plain gRPC client, waits until its handler has
  // started (started_at_), cancels it 20 ms later and waits for the call to end CANCELLED.
  // Returns when the cancel was sent (NowNs()).
  std::int64_t CancelOnceStarted(const std::string& method, const std::string& request) {
    auto channel = ::grpc::CreateChannel(target_, ::grpc::InsecureChannelCredentials());
    ::grpc::GenericStub stub(channel);
    ::grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ::grpc::ByteBuffer req = internal::ToByteBuffer(request), res;
    std::promise<::grpc::Status> done;
    stub.UnaryCall(&context, method, ::grpc::StubOptions(), &req, &res, [&](::grpc::Status s) { done.set_value(s); });
    for (int i = 0; i < 2000 && started_at_.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::int64_t cancelled_at = NowNs();
    context.TryCancel();
    EXPECT_EQ(done.get_future().get().error_code(), ::grpc::StatusCode::CANCELLED);
    return cancelled_at;
  }

  void WaitForSlowStop() {
    for (int i = 0; i < 2500 && slow_stopped_at_.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }

  std::vector<std::chrono::steady_clock::time_point> arrivals_;  // kFail "pushback", on the server's thread
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ = boost::asio::make_work_guard(io_);
  observe::Registry metrics_;
  ServerOptions options_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::uint16_t port_ = 0;
  std::string target_;
  std::atomic<int> calls_{0};
  std::atomic<std::int64_t> started_at_{0};
  std::atomic<StopReason> slow_reason_{StopReason::none};
  std::atomic<std::int64_t> slow_stopped_at_{0};
};

}  // namespace cutoff::grpc

#endif  // CUTOFF_GRPC_INTERNAL_GRPC_FIXTURE_TEST_HPP_
