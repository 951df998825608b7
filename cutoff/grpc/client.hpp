// A gRPC client (one channel to one target) whose calls carry the caller's budget and stop
// with it: the remote handler sees the cancellation within milliseconds.
//
//   cutoff::grpc::ClientOptions options;
//   options.policy.attempt_timeout = 500ms;
//   options.policy.retry.max_attempts = 3;
//   cutoff::grpc::Client inventory(executor, "127.0.0.1:50051", options);
//   std::string reply = co_await inventory.call(ctx, "/inventory.v1.Inventory/GetStock", request_bytes);
//
// What a call guarantees:
// - Its gRPC deadline (sent as grpc-timeout) is min(what is left of `ctx`, the attempt
//   timeout); a budget already spent sends nothing and fails with deadline_exceeded.
// - A stop of `ctx` (its deadline, its caller's cancel, a shutdown) cancels the call
//   (TryCancel: RST_STREAM), so the server stops the work; the call fails with the stop.
// - It runs through the target's resilience policy (resilience/policy.hpp): deadline gate,
//   bulkhead, breaker, retries with a retry budget, attempt timeout, hedging. A call is tried
//   again only when that cannot apply it twice: nothing was sent, or it is `idempotent`, or the
//   server refused it without acting (a cutoff server's code says so; any server's
//   UNAVAILABLE).
// - Failures come back as cutoff::Error with the code a cutoff server named in its
//   `cutoff-error-code` trailer, or the core table's reading of the status.
// - A call that may write (`CallOptions::may_write`, the default) and was sent but not
//   answered, or answered with a failure that does not rule its effect out, is noted in the
//   context's CommitLedger, and fails commit_ambiguous instead of as a stop.
// - The request id and a child of the context's `traceparent` travel as metadata.
#ifndef CUTOFF_GRPC_CLIENT_HPP_
#define CUTOFF_GRPC_CLIENT_HPP_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cutoff/core/context.hpp"
#include "cutoff/grpc/tls.hpp"
#include "cutoff/resilience/policy.hpp"

namespace cutoff::observe {
class Registry;
}

namespace cutoff::grpc {

struct ClientOptions {
  std::optional<TlsClientOptions> tls;  // none: plaintext
  resilience::PolicyOptions policy;     // the target's policy; every piece off by default
  std::size_t max_response_bytes = 4 * 1024 * 1024;
  observe::Registry* metrics = nullptr;  // stops in flight and the policy's metrics; null: none
  std::string name;                      // the policy's metric label (name="..."); empty: the target
  // Taken off the budget the server is told (as `deadline-budget-ms` metadata, never more than
  // half of what is left; the call's own gRPC deadline stays the whole budget), so that the
  // server's deadline fires first and its answer still arrives within ours: a write it stopped
  // before its commit point then comes back as a definite `deadline_exceeded`, instead of a
  // call sent and never answered (`commit_ambiguous`). Zero: the server gets the whole budget.
  Duration reply_margin = Duration::zero();
};

struct CallOptions {
  // Repeating the call cannot apply it twice: it may be retried after it was sent, and hedged.
  bool idempotent = false;
  // false: the call only reads; a stop after it was sent is a plain stop, never
  // commit_ambiguous.
  bool may_write = true;
  std::vector<std::pair<std::string, std::string>> metadata;  // more request metadata; keys lowercase
};

class Client {
 public:
  // Throws std::invalid_argument when a TLS file cannot be read.
  Client(boost::asio::any_io_executor executor, std::string target);
  Client(boost::asio::any_io_executor executor, std::string target, ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // A unary call of `method` ("/package.Service/Method") with a serialized request message;
  // returns the serialized response. Throws cutoff::Error. Two overloads rather than a
  // defaulted CallOptions: g++ 12 miscompiles braced temporaries in co_await expressions.
  boost::asio::awaitable<std::string> call(const Context& ctx, std::string method, std::string request);
  boost::asio::awaitable<std::string> call(const Context& ctx, std::string method, std::string request,
                                           CallOptions options);

  resilience::Policy& policy() noexcept;
  const std::string& target() const noexcept;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace cutoff::grpc

#endif  // CUTOFF_GRPC_CLIENT_HPP_
