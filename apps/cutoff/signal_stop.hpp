// Ctrl-C for the command line: the first SIGINT or SIGTERM stops a context with `cancelled`,
// and the signal is kept for the exit code (130 or 143).
//
//   auto [ctx, stop] = base.with_cancel(deadline);
//   SignalStop signals(io, stop);
//   ...
//   exit_code = cli_exit_code(error.code(), signals.signal());
//   signals.cancel();  // let io.run() return
#ifndef CUTOFF_APPS_CUTOFF_SIGNAL_STOP_HPP_
#define CUTOFF_APPS_CUTOFF_SIGNAL_STOP_HPP_

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>

#include "cutoff/core/cancel.hpp"

namespace cutoff::cli {

class SignalStop {
 public:
  SignalStop(boost::asio::io_context& io, CancelSource stop) : signals_(io, SIGINT, SIGTERM) {
    signals_.async_wait([this, stop](const boost::system::error_code& ec, int signal) {
      if (ec) return;
      signal_ = signal;
      stop.request_stop(StopReason::cancelled);
    });
  }
  SignalStop(const SignalStop&) = delete;
  SignalStop& operator=(const SignalStop&) = delete;

  // The signal that stopped the context; 0 when none did.
  int signal() const noexcept { return signal_; }
  void cancel() {
    boost::system::error_code ignored;
    signals_.cancel(ignored);
  }

 private:
  boost::asio::signal_set signals_;
  int signal_ = 0;
};

}  // namespace cutoff::cli

#endif  // CUTOFF_APPS_CUTOFF_SIGNAL_STOP_HPP_
