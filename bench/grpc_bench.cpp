// Unary gRPC calls per second through cutoff's full stack (grpc::Client → grpc::Server: budgets
// bound on both sides, stops armed, metrics and the resilience policy on) or through plain
// gRPC C++ (a generic stub → a callback generic service), on loopback in one process, with
// --concurrency calls in flight. bench/grpc-compare runs the two modes in turn and prints the
// ratio.
//
//   grpc_bench --mode cutoff --seconds 5 --concurrency 32
//   grpc_bench --mode plain --seconds 5 --concurrency 32
//   # prints: "calls/s 41234 p99_ms 1.3"
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cutoff/grpc/client.hpp"
#include "cutoff/grpc/server.hpp"
#include "cutoff/observe/metrics.hpp"

namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
constexpr const char* kMethod = "/bench.Echo/Echo";

struct Stats {
  std::mutex mu;
  std::vector<double> latencies_ms;  // a sample of them
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> failures{0};
  void Record(Clock::time_point started) {
    const auto n = calls.fetch_add(1);
    if (n % 16 == 0) {
      std::lock_guard lock(mu);
      latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
    }
  }
};

// Plain gRPC: echoes the request from a callback reactor.
class EchoService : public ::grpc::CallbackGenericService {
  ::grpc::ServerGenericBidiReactor* CreateReactor(::grpc::GenericCallbackServerContext*) override {
    class Echo : public ::grpc::ServerGenericBidiReactor {
     public:
      Echo() { StartRead(&buffer_); }
      void OnReadDone(bool ok) override {
        if (!ok) {
          Finish(::grpc::Status(::grpc::StatusCode::INVALID_ARGUMENT, "no message"));
          return;
        }
        StartWriteAndFinish(&buffer_, ::grpc::WriteOptions(), ::grpc::Status::OK);
      }
      void OnDone() override { delete this; }

     private:
      ::grpc::ByteBuffer buffer_;
    };
    return new Echo;
  }
};

// One chain of plain calls: each completion starts the next until `until`.
struct PlainChain : std::enable_shared_from_this<PlainChain> {
  ::grpc::GenericStub* stub;
  Stats* stats;
  Clock::time_point until;
  std::string payload;
  std::atomic<int>* running;
  std::unique_ptr<::grpc::ClientContext> context;
  ::grpc::ByteBuffer request, response;
  Clock::time_point started;

  void Next() {
    if (Clock::now() >= until) {
      running->fetch_sub(1);
      return;
    }
    context = std::make_unique<::grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    ::grpc::Slice slice(payload);
    request = ::grpc::ByteBuffer(&slice, 1);
    started = Clock::now();
    stub->UnaryCall(context.get(), kMethod, ::grpc::StubOptions(), &request, &response,
                    [self = shared_from_this()](::grpc::Status s) {
                      if (s.ok()) self->stats->Record(self->started);
                      else self->stats->failures.fetch_add(1);
                      self->Next();
                    });
  }
};

void RunPlain(int seconds, int concurrency, const std::string& payload, Stats& stats) {
  EchoService service;
  int port = 0;
  ::grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", ::grpc::InsecureServerCredentials(), &port);
  builder.RegisterCallbackGenericService(&service);
  auto server = builder.BuildAndStart();
  auto channel = ::grpc::CreateChannel("127.0.0.1:" + std::to_string(port), ::grpc::InsecureChannelCredentials());
  ::grpc::GenericStub stub(channel);
  std::atomic<int> running{concurrency};
  const auto until = Clock::now() + std::chrono::seconds(seconds);
  for (int i = 0; i < concurrency; ++i) {
    auto chain = std::make_shared<PlainChain>();
    chain->stub = &stub;
    chain->stats = &stats;
    chain->until = until;
    chain->payload = payload;
    chain->running = &running;
    chain->Next();
  }
  while (running.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  server->Shutdown();
}

void RunCutoff(int seconds, int concurrency, const std::string& payload, Stats& stats) {
  cutoff::observe::Registry metrics;
  asio::io_context server_io(1);
  auto server_work = asio::make_work_guard(server_io);
  cutoff::grpc::ServerOptions options;
  options.metrics = &metrics;
  auto server = std::make_unique<cutoff::grpc::Server>(server_io.get_executor(), options);
  server->unary(kMethod, [](std::string request, const cutoff::Context&) -> asio::awaitable<std::string> {
    co_return request;
  });
  const auto port = server->listen("127.0.0.1", 0);
  std::thread server_thread([&] { server_io.run(); });

  asio::io_context client_io(1);
  cutoff::grpc::ClientOptions client_options;
  client_options.metrics = &metrics;
  cutoff::grpc::Client client(client_io.get_executor(), "127.0.0.1:" + std::to_string(port), client_options);
  const auto until = Clock::now() + std::chrono::seconds(seconds);
  for (int i = 0; i < concurrency; ++i) {
    asio::co_spawn(
        client_io,
        [&]() -> asio::awaitable<void> {
          cutoff::grpc::CallOptions call;
          call.may_write = false;
          while (Clock::now() < until) {
            const cutoff::Context ctx = cutoff::Context::background().with_timeout(std::chrono::seconds(5));
            const auto started = Clock::now();
            try {
              auto calling = client.call(ctx, kMethod, payload, call);
              co_await std::move(calling);
              stats.Record(started);
            } catch (const std::exception&) {
              stats.failures.fetch_add(1);
            }
          }
        },
        asio::detached);
  }
  client_io.run();
  server->shutdown(std::chrono::milliseconds(100));
  server.reset();
  server_work.reset();
  server_thread.join();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Unary gRPC calls per second: cutoff's full stack or plain gRPC C++, on loopback.");
  std::string mode = "cutoff";
  int seconds = 5;
  int concurrency = 32;
  std::size_t payload_bytes = 64;
  app.add_option("--mode", mode, "cutoff or plain")->check(CLI::IsMember({"cutoff", "plain"}))->capture_default_str();
  app.add_option("--seconds", seconds, "How long to run")->check(CLI::Range(1, 600))->capture_default_str();
  app.add_option("--concurrency", concurrency, "Calls in flight")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--payload-bytes", payload_bytes, "Request message size")->check(CLI::Range(0, 1 << 20))->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::string payload(payload_bytes, 'x');
  Stats stats;
  const auto started = Clock::now();
  if (mode == "plain") RunPlain(seconds, concurrency, payload, stats);
  else RunCutoff(seconds, concurrency, payload, stats);
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  std::sort(stats.latencies_ms.begin(), stats.latencies_ms.end());
  const double p99 = stats.latencies_ms.empty() ? 0 : stats.latencies_ms[stats.latencies_ms.size() * 99 / 100];
  std::printf("calls/s %.0f p99_ms %.2f failures %llu\n", static_cast<double>(stats.calls.load()) / elapsed, p99,
              static_cast<unsigned long long>(stats.failures.load()));
  return stats.failures.load() == 0 ? 0 : 1;
}
