// Unary gRPC calls per second through cutoff's full stack (grpc::Client → grpc::Server: budgets
// bound on both sides, stops armed, metrics and the resilience policy on) or through plain
// gRPC C++ (a generic stub → a callback generic service), on loopback in one process, with
// --concurrency calls in flight. bench/grpc-compare runs the two modes in turn and prints the
// ratio.
//
//   grpc_echo_load --mode cutoff --seconds 5 --concurrency 32
//   grpc_echo_load --mode plain --seconds 5 --concurrency 32
//   grpc_echo_load --mode cutoff-server   # a plain client; --mode cutoff-client: a plain server
//   grpc_echo_load --mode cutoff-coroutine   # the server's echo a coroutine, not inline
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
#include <sys/resource.h>
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

// The servers: each serves kMethod on 127.0.0.1 until it is destroyed.
class PlainServer {
 public:
  PlainServer() {
    ::grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", ::grpc::InsecureServerCredentials(), &port_);
    builder.RegisterCallbackGenericService(&service_);
    server_ = builder.BuildAndStart();
  }
  ~PlainServer() { server_->Shutdown(); }
  int port() const { return port_; }

 private:
  EchoService service_;
  int port_ = 0;
  std::unique_ptr<::grpc::Server> server_;
};

// cutoff's server on an io_context thread of its own, metrics on. The echo answers at once, so
// it is an inline handler (on gRPC's thread, as plain gRPC's reactor answers); `coroutine`
// makes it a coroutine on the io_context instead, the kind a handler that waits needs.
class CutoffServer {
 public:
  explicit CutoffServer(bool coroutine) {
    cutoff::grpc::ServerOptions options;
    options.metrics = &metrics_;
    server_ = std::make_unique<cutoff::grpc::Server>(io_.get_executor(), options);
    if (coroutine) {
      server_->unary(kMethod, [](std::string request, const cutoff::Context&) -> asio::awaitable<std::string> {
        co_return request;
      });
    } else {
      server_->unary_inline(kMethod, [](std::string request, const cutoff::Context&) { return request; });
    }
    port_ = server_->listen("127.0.0.1", 0);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~CutoffServer() {
    server_->shutdown(std::chrono::milliseconds(100));
    server_.reset();
    work_.reset();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  cutoff::observe::Registry metrics_;
  asio::io_context io_{1};
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::unique_ptr<cutoff::grpc::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// The clients: `concurrency` chains of calls to the port until `seconds` have passed.
void PlainCalls(int port, int seconds, int concurrency, const std::string& payload, Stats& stats) {
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
}

// cutoff's client (budget, policy, metrics) on an io_context run by `threads` threads, this one
// among them: as a service runs its executor, one thread per core. (Plain gRPC's client runs its
// callbacks on gRPC's own pool of threads.)
void CutoffCalls(int port, int seconds, int concurrency, int threads, const std::string& payload, Stats& stats) {
  cutoff::observe::Registry metrics;
  asio::io_context client_io(threads);
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
  std::vector<std::thread> more;
  for (int i = 1; i < threads; ++i) more.emplace_back([&client_io] { client_io.run(); });
  client_io.run();
  for (std::thread& t : more) t.join();
}

// plain: plain client and server; cutoff: cutoff's on both sides; cutoff-server and
// cutoff-client: cutoff on one side only, to see which side costs what.
template <typename Server, typename... ServerArgs>
void Run(bool cutoff_client, int seconds, int concurrency, int client_threads, const std::string& payload,
         Stats& stats, ServerArgs... server_args) {
  Server server(server_args...);
  if (cutoff_client) CutoffCalls(server.port(), seconds, concurrency, client_threads, payload, stats);
  else PlainCalls(server.port(), seconds, concurrency, payload, stats);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Unary gRPC calls per second: cutoff's full stack or plain gRPC C++, on loopback.");
  std::string mode = "cutoff";
  int seconds = 5;
  int concurrency = 32;
  int client_threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 64u));
  std::size_t payload_bytes = 64;
  app.add_option("--mode", mode,
                 "cutoff, plain, or cutoff on one side only: cutoff-server (a plain client calls cutoff's "
                 "server) or cutoff-client (cutoff's client calls a plain server); cutoff-coroutine: "
                 "the full stack with the echo as a coroutine handler on the server's io_context")
      ->check(CLI::IsMember({"cutoff", "plain", "cutoff-server", "cutoff-client", "cutoff-coroutine"}))
      ->capture_default_str();
  app.add_option("--seconds", seconds, "How long to run")->check(CLI::Range(1, 600))->capture_default_str();
  app.add_option("--concurrency", concurrency, "Calls in flight")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--client-threads", client_threads,
                 "Threads running cutoff's client io_context (default: one per core)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--payload-bytes", payload_bytes, "Request message size")->check(CLI::Range(0, 1 << 20))->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::string payload(payload_bytes, 'x');
  Stats stats;
  const auto started = Clock::now();
  const bool cutoff_client = mode == "cutoff" || mode == "cutoff-client" || mode == "cutoff-coroutine";
  if (mode == "cutoff" || mode == "cutoff-server" || mode == "cutoff-coroutine")
    Run<CutoffServer>(cutoff_client, seconds, concurrency, client_threads, payload, stats,
                      mode == "cutoff-coroutine");
  else Run<PlainServer>(cutoff_client, seconds, concurrency, client_threads, payload, stats);
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  std::sort(stats.latencies_ms.begin(), stats.latencies_ms.end());
  const double p99 = stats.latencies_ms.empty() ? 0 : stats.latencies_ms[stats.latencies_ms.size() * 99 / 100];
  // CPU time of the whole process (client and server) per call: what a call costs, beside how
  // many ran per second (a run that leaves cores idle shows it here, not in calls/s).
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double cpu_us = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
                        static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  const auto calls = stats.calls.load();
  std::printf("calls/s %.0f p99_ms %.2f failures %llu cpu_us_per_call %.1f\n", static_cast<double>(calls) / elapsed,
              p99, static_cast<unsigned long long>(stats.failures.load()),
              calls > 0 ? cpu_us / static_cast<double>(calls) : 0.0);
  return stats.failures.load() == 0 ? 0 : 1;
}
