// One call on the server, unary or server-streaming, from gRPC's reactor callbacks (its
// threads) to the handler's coroutine (the server's executor, a strand per call) and back; an
// inline unary handler runs in the read's callback itself.
//
// Made in CreateReactor, when the call's metadata and deadline are known: the call's Context
// is bound there, so a cancel that arrives before the request message already finds it. The
// handler runs once the message is read; a stream's messages are written one at a time, each
// awaiting gRPC's OnWriteDone. The outcome is the call's one Finish, after which gRPC calls
// OnDone and the call deletes itself.
#ifndef CUTOFF_GRPC_INTERNAL_SERVER_CALL_HPP_
#define CUTOFF_GRPC_INTERNAL_SERVER_CALL_HPP_

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/support/byte_buffer.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <atomic>
#include <cstdint>
#include <memory>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "cutoff/core/cancel.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/grpc/internal/server_impl.hpp"

namespace cutoff::observe {
class StopStamp;
}

namespace cutoff::grpc::internal {

class ServerCall final : public ::grpc::ServerGenericBidiReactor {
 public:
  ServerCall(Server::Impl& server, ::grpc::GenericCallbackServerContext& call, MethodEntry& method);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

  // The server is shutting down and its grace is over (called under Server::Impl::mu).
  void StopForShutdown() { source_.request_stop(StopReason::shutdown); }

 private:
  struct Outcome {
    std::optional<std::string> response;  // a unary call's answer (OK)
    std::optional<Error> error;           // set: the call failed
    StopReason stop = StopReason::none;
  };

  boost::asio::awaitable<void> Run();
  boost::asio::awaitable<Outcome> Handle();
  // An inline unary handler's run, on gRPC's thread.
  Outcome HandleInline();
  // What a unary handler's run comes to: its answer, or its failure and the context's stop.
  Outcome Ran(std::optional<std::string> response, const std::exception_ptr& failure, const observe::StopStamp& stamp);
  // A server-streaming method's messages, until its end, a stop or a failure.
  boost::asio::awaitable<Outcome> Stream(std::string request);
  // Writes one message; false when the call is over for the client.
  boost::asio::awaitable<bool> Write(std::string message);
  Outcome Failure(const std::exception_ptr& failure, StopReason stop);

  // How a stop reaches the handler's coroutine: Asio terminal cancellation, emitted on the
  // strand, for the handler run it was meant for. Cheaper than with_context's race of two
  // coroutines, which every call would pay. Shared with the emits in flight and the coroutine's
  // completion handler, so the signal outlives both.
  struct StopBridge {
    boost::asio::cancellation_signal signal;
    std::uint64_t run = 0;  // the handler run in progress; on the strand
  };
  // Awaits `handler` with the coroutine cancelled when `ctx` stops.
  template <typename T>
  boost::asio::awaitable<T> StoppedBy(const Context& ctx, boost::asio::awaitable<T> handler);
  Outcome Failed(const Error& e);
  // Logs, counts and finishes the call: the last thing the call does (OnDone may follow at once
  // on another thread).
  void Answer(Outcome outcome);

  Server::Impl& server_;
  ::grpc::GenericCallbackServerContext& call_;
  MethodEntry& method_;
  SteadyClock::time_point arrived_;
  Duration budget_{};
  bool budget_from_caller_ = false;
  std::string trace_id_;
  Context ctx_;
  CancelSource source_;
  ::grpc::ByteBuffer request_;
  ::grpc::ByteBuffer response_;
  boost::asio::any_io_executor strand_;    // the handler's
  std::shared_ptr<StopBridge> bridge_;     // made when a coroutine handler starts
  std::mutex write_mu_;                     // write_done_ is set on the strand, run from gRPC's thread
  std::function<void(bool)> write_done_;  // the pending Write's completion

  // While the call waits on its client (for the request message, for a stream's message or
  // the reply to be taken), no handler is there to answer a stop: the stop cancels the call,
  // so a client that sends nothing or reads nothing holds its slot only until the deadline.
  struct StallGuard {
    ServerCall* call;
    void operator()(StopReason) const noexcept {
      if (call->waiting_on_client_.load()) call->call_.TryCancel();
    }
  };
  // Marks a wait on the client; a stop that came first cancels the call at once.
  void WaitOnClient() noexcept;
  std::atomic<bool> waiting_on_client_{true};
  std::optional<CancelCallback<StallGuard>> stall_guard_;  // the last member: unregistered first
};

}  // namespace cutoff::grpc::internal

#endif  // CUTOFF_GRPC_INTERNAL_SERVER_CALL_HPP_
