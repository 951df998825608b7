#include "cutoff/ops/mcp/stdio.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "cutoff/core/event.hpp"

namespace cutoff::ops::mcp {

namespace asio = boost::asio;

namespace {

// Lines read but not yet taken by the event loop: past this the reader waits.
constexpr std::size_t kMaxQueuedLines = 256;
constexpr std::size_t kWriteChunk = 4096;  // at most PIPE_BUF: one write never blocks after POLLOUT

struct Incoming {
  std::string line;
  bool too_large = false;
};

// The two threads and their queues. Lives in serve_stdio's frame, which outlasts every
// handler (it waits for them) and joins both threads before it ends.
class Pump {
 public:
  Pump(int in_fd, int out_fd, std::size_t max_line_bytes, const StdioOptions& options)
      : in_fd_(in_fd), out_fd_(out_fd), max_line_bytes_(max_line_bytes), options_(options) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
    wake_read_ = fds[0];
    wake_write_ = fds[1];
  }
  Pump(const Pump&) = delete;
  Pump& operator=(const Pump&) = delete;
  ~Pump() {
    StopReading();
    {
      std::lock_guard lock(mu_);
      closing_ = true;
      output_broken_ = true;  // anything still queued is abandoned
    }
    writer_cv_.notify_all();
    if (reader_.joinable()) reader_.join();
    if (writer_.joinable()) writer_.join();
    ::close(wake_read_);
    ::close(wake_write_);
  }

  void Start() {
    reader_ = std::thread([this] { ReadLoop(); });
    writer_ = std::thread([this] { WriteLoop(); });
  }

  Event& input_ready() { return input_ready_; }
  Event& writer_done() { return writer_done_; }

  // Takes the lines read so far; `ended` when no more will come (input ended, or the output
  // is gone so nobody would read the replies).
  std::vector<Incoming> Take(bool* ended) {
    std::vector<Incoming> out;
    {
      std::lock_guard lock(mu_);
      input_ready_.reset();  // before draining: a line pushed after this sets it again
      out.assign(std::make_move_iterator(lines_.begin()), std::make_move_iterator(lines_.end()));
      lines_.clear();
      *ended = input_ended_ || output_broken_;
    }
    reader_cv_.notify_all();
    return out;
  }

  void Write(std::string text) {
    {
      std::lock_guard lock(mu_);
      if (output_broken_ || closing_) return;
      queued_bytes_ += text.size();
      replies_.push_back(std::move(text));
    }
    writer_cv_.notify_one();
  }

  void StopReading() {
    {
      std::lock_guard lock(mu_);
      if (stop_reading_) return;
      stop_reading_ = true;
    }
    reader_cv_.notify_all();
    const char byte = 1;
    [[maybe_unused]] const auto n = ::write(wake_write_, &byte, 1);
  }

  // Writes what is queued, then ends the writer (within options_.flush_timeout).
  void Close() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
      close_deadline_ = std::chrono::steady_clock::now() + options_.flush_timeout;
    }
    writer_cv_.notify_all();
  }

 private:
  void Push(Incoming incoming) {
    {
      std::unique_lock lock(mu_);
      reader_cv_.wait(lock, [&] {
        return stop_reading_ || (lines_.size() < kMaxQueuedLines && queued_bytes_ <= options_.max_queued_output_bytes);
      });
      if (stop_reading_) return;
      lines_.push_back(std::move(incoming));
    }
    input_ready_.set();
  }

  void EndInput() {
    {
      std::lock_guard lock(mu_);
      input_ended_ = true;
    }
    input_ready_.set();
  }

  void ReadLoop() {
    std::string partial;
    bool skipping = false;  // inside a line that is too long: dropped up to its newline
    std::vector<char> buffer(64 * 1024);
    for (;;) {
      pollfd fds[2] = {{in_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (fds[1].revents != 0) return;  // told to stop: the input is not "ended"
      const ssize_t n = ::read(in_fd_, buffer.data(), buffer.size());
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        break;
      }
      if (n == 0) break;
      std::string_view chunk(buffer.data(), static_cast<std::size_t>(n));
      while (!chunk.empty()) {
        const std::size_t nl = chunk.find('\n');
        const std::string_view piece = chunk.substr(0, nl);
        if (!skipping) {
          partial.append(piece);
          if (partial.size() > max_line_bytes_ + 1) {  // +1: a "\r" before the newline
            partial.clear();
            partial.shrink_to_fit();
            skipping = true;
            Push({.line = {}, .too_large = true});
          }
        }
        if (nl == std::string_view::npos) break;
        chunk.remove_prefix(nl + 1);
        if (!skipping) Emit(partial);
        skipping = false;
        partial.clear();
      }
    }
    if (!skipping) Emit(partial);  // a last line without its newline
    EndInput();
  }

  void Emit(std::string& line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) return;
    Push({.line = std::move(line)});
    line.clear();
  }

  void WriteLoop() {
    // A write to a pipe whose reader is gone raises SIGPIPE in the writing thread, whose
    // default action ends the process. Blocked here, the write fails with EPIPE instead (the
    // signal stays pending on this thread and goes with it), without touching the process's
    // own disposition.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    for (;;) {
      std::string text;
      {
        std::unique_lock lock(mu_);
        writer_cv_.wait(lock, [&] { return !replies_.empty() || closing_; });
        if (replies_.empty() || output_broken_) break;
        text = std::move(replies_.front());
        replies_.pop_front();
      }
      const bool ok = WriteAll(text);
      {
        std::lock_guard lock(mu_);
        queued_bytes_ -= text.size();
        if (!ok) {
          output_broken_ = true;
          queued_bytes_ = 0;
          replies_.clear();
        }
      }
      reader_cv_.notify_all();
      if (!ok) input_ready_.set();  // the serving loop sees the output gone
    }
    writer_done_.set();
  }

  bool WriteAll(std::string_view text) {
    while (!text.empty()) {
      pollfd fd{out_fd_, POLLOUT, 0};
      const int ready = ::poll(&fd, 1, 100);
      if (ready < 0 && errno != EINTR) return false;
      if (ready <= 0) {
        std::lock_guard lock(mu_);
        if (output_broken_ || (closing_ && std::chrono::steady_clock::now() >= close_deadline_)) return false;
        continue;
      }
      if ((fd.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0 && (fd.revents & POLLOUT) == 0) return false;
      const ssize_t n = ::write(out_fd_, text.data(), std::min(text.size(), kWriteChunk));
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return false;  // EPIPE and the like: the reader is gone
      }
      text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  const int in_fd_;
  const int out_fd_;
  const std::size_t max_line_bytes_;
  const StdioOptions options_;
  int wake_read_ = -1;
  int wake_write_ = -1;

  std::mutex mu_;
  std::condition_variable reader_cv_;
  std::condition_variable writer_cv_;
  std::deque<Incoming> lines_;       // guarded by mu_
  std::deque<std::string> replies_;  // guarded by mu_
  std::size_t queued_bytes_ = 0;     // guarded by mu_
  bool input_ended_ = false;         // guarded by mu_
  bool stop_reading_ = false;        // guarded by mu_
  bool closing_ = false;             // guarded by mu_
  bool output_broken_ = false;       // guarded by mu_
  std::chrono::steady_clock::time_point close_deadline_;  // guarded by mu_
  Event input_ready_;
  Event writer_done_;
  std::thread reader_;
  std::thread writer_;
};

// Counts the handlers still running; `idle` is set while there are none.
struct Handlers {
  std::mutex mu;
  std::size_t running = 0;
  Event idle{true};

  void Started() {
    std::lock_guard lock(mu);
    if (running++ == 0) idle.reset();
  }
  void Finished() {
    std::lock_guard lock(mu);
    if (--running == 0) idle.set();
  }
};

asio::awaitable<void> HandleLine(Session& session, Pump& pump, Context ctx, Incoming incoming) {
  std::optional<std::string> reply;
  if (incoming.too_large) {
    reply = session.too_large_reply();
  } else {
    auto handling = session.handle(std::move(ctx), incoming.line);
    reply = co_await std::move(handling);
  }
  if (reply) {
    reply->push_back('\n');
    pump.Write(std::move(*reply));
  }
}

}  // namespace

asio::awaitable<void> serve_stdio(Context ctx, Session& session, int in_fd, int out_fd, StdioOptions options) {
  const auto executor = co_await asio::this_coro::executor;
  Pump pump(in_fd, out_fd, session.max_message_bytes(), options);
  Handlers handlers;
  pump.Start();
  auto [session_ctx, session_stop] = ctx.with_cancel();
  const Context unbound;
  StopReason reason = StopReason::cancelled;  // the input ended: the client is gone
  for (bool ended = false; !ended;) {
    bool stopped = false;
    try {
      co_await pump.input_ready().wait(ctx);
    } catch (const Error&) {
      stopped = true;
    }
    if (stopped) {
      reason = ctx.stop_reason();
      break;
    }
    for (Incoming& incoming : pump.Take(&ended)) {
      handlers.Started();
      asio::co_spawn(executor, HandleLine(session, pump, session_ctx, std::move(incoming)),
                     [&handlers](std::exception_ptr) { handlers.Finished(); });
    }
  }
  pump.StopReading();
  session.stop_calls(reason);
  session_stop.request_stop(reason);
  co_await handlers.idle.wait(unbound);  // the calls were stopped: they return promptly
  pump.Close();
  co_await pump.writer_done().wait(unbound);
}

}  // namespace cutoff::ops::mcp
