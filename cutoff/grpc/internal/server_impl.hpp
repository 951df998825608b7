// What a grpc::Server holds, shared by its calls (internal/server_call.cpp): the methods, the
// options, the metrics, and the live calls a shutdown stops.
#ifndef CUTOFF_GRPC_INTERNAL_SERVER_IMPL_HPP_
#define CUTOFF_GRPC_INTERNAL_SERVER_IMPL_HPP_

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/server.h>

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include "cutoff/core/context.hpp"
#include "cutoff/grpc/internal/server_metrics.hpp"
#include "cutoff/grpc/server.hpp"

namespace cutoff::grpc {

namespace internal {
class ServerCall;

struct MethodEntry {
  std::string name;  // "/package.Service/Method"
  UnaryHandler handler;         // a unary method's
  InlineUnaryHandler inline_handler;  // a unary method's that answers on gRPC's thread
  ServerStreamHandler stream;   // a server-streaming method's
  MethodOptions options;
  MethodSeries series;
};
}  // namespace internal

struct Server::Impl : public ::grpc::CallbackGenericService, public std::enable_shared_from_this<Server::Impl> {
  Impl(boost::asio::any_io_executor executor, ServerOptions options);

  ::grpc::ServerGenericBidiReactor* CreateReactor(::grpc::GenericCallbackServerContext* ctx) override;
  // Adds a method (before listen()); throws for a name that is not a method path.
  void Register(internal::MethodEntry entry);

  // The context every call's context derives from (the server's timer service).
  Context Background() const { return options.timers ? Context::background(*options.timers) : Context::background(); }

  // A call starts and ends (OnDone); ended calls are no longer stopped by a shutdown.
  void Track(internal::ServerCall* call);
  void Untrack(internal::ServerCall* call);
  // Stops every live call's context with `shutdown`.
  void StopLiveCalls();
  void Log(std::string_view line) const {
    if (options.log) options.log(line);
  }

  boost::asio::any_io_executor executor;
  ServerOptions options;
  internal::ServerMetrics metrics;
  std::map<std::string, internal::MethodEntry, std::less<>> methods;
  std::unique_ptr<::grpc::Server> server;
  std::atomic<bool> shutting_down{false};
  std::once_flag shutdown_once;
  std::thread shutdown_thread;  // gRPC's Shutdown blocks until the calls end: never on the I/O thread
  std::atomic<std::size_t> in_flight{0};
  std::mutex mu;
  std::unordered_set<internal::ServerCall*> live;  // guarded by mu
};

}  // namespace cutoff::grpc

#endif  // CUTOFF_GRPC_INTERNAL_SERVER_IMPL_HPP_
