// Bridges between cutoff's stop signal and C++20's std::stop_token.
//
//   // A context's stop reaches code that takes a std::stop_token:
//   cutoff::StdStopBridge bridge(ctx);
//   run_batch(rows, bridge.get_token());  // polls st.stop_requested()
//
//   // A std::stop_token stops a context (e.g. a std::jthread's own token):
//   auto [ctx, source] = cutoff::Context::background().with_cancel();
//   cutoff::StopTokenLink link(thread_token, source);  // stops ctx with `cancelled`
#ifndef CUTOFF_CORE_STOP_TOKEN_HPP_
#define CUTOFF_CORE_STOP_TOKEN_HPP_

#include <stop_token>

#include "cutoff/core/cancel.hpp"
#include "cutoff/core/context.hpp"

namespace cutoff {

// Owns a std::stop_source that is stopped when the context (or token) stops. The reason is
// not representable in std::stop_token; read it from the context.
class StdStopBridge {
 public:
  explicit StdStopBridge(const CancelToken& token)
      : registration_(token, [this](StopReason) { source_.request_stop(); }) {}
  explicit StdStopBridge(const Context& ctx) : StdStopBridge(ctx.token()) {}
  StdStopBridge(const StdStopBridge&) = delete;
  StdStopBridge& operator=(const StdStopBridge&) = delete;

  std::stop_token get_token() const noexcept { return source_.get_token(); }

 private:
  std::stop_source source_;  // declared first: the registration may fire at construction
  CancelRegistration registration_;
};

// Requests a stop on `source` with `reason` when `token` is stopped.
class StopTokenLink {
 public:
  StopTokenLink(std::stop_token token, CancelSource source, StopReason reason = StopReason::cancelled)
      : callback_(std::move(token), Forward{std::move(source), reason}) {}

 private:
  struct Forward {
    CancelSource source;
    StopReason reason;
    void operator()() const noexcept { source.request_stop(reason); }
  };
  std::stop_callback<Forward> callback_;
};

}  // namespace cutoff

#endif  // CUTOFF_CORE_STOP_TOKEN_HPP_
