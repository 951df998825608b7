#include "cutoff/grpc/server.hpp"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "cutoff/grpc/internal/server_impl.hpp"
#include "cutoff/grpc/internal/status.hpp"
#include "cutoff/grpc/internal/server_call.hpp"

namespace cutoff::grpc {
namespace {

namespace asio = boost::asio;

// A call refused before any handler: answered in the reactor's constructor, as gRPC's own
// default reactor answers unknown methods.
class Refusal final : public ::grpc::ServerGenericBidiReactor {
 public:
  Refusal(::grpc::GenericCallbackServerContext& call, const Error& e, std::optional<::grpc::StatusCode> status = {}) {
    call.AddTrailingMetadata(std::string(internal::kErrorCodeTrailer), std::string(to_string(e.code())));
    Finish(status ? ::grpc::Status(*status, e.message()) : internal::StatusFor(e));
  }
  void OnDone() override { delete this; }
};

std::string ReadFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || text.str().empty())
    throw std::invalid_argument("gRPC TLS: cannot read " + std::string(what) + " '" + path + "'");
  return text.str();
}

std::shared_ptr<::grpc::ServerCredentials> Credentials(const std::optional<TlsServerOptions>& tls) {
  if (!tls) return ::grpc::InsecureServerCredentials();
  if (tls->certificate_chain_file.empty() || tls->private_key_file.empty())
    throw std::invalid_argument("gRPC TLS: the server needs both a certificate chain file and a private key file");
  ::grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({ReadFile(tls->private_key_file, "the private key"),
                                    ReadFile(tls->certificate_chain_file, "the certificate chain")});
  return ::grpc::SslServerCredentials(ssl);
}

int ClampToInt(std::size_t n) { return n > 0x7fffffff ? 0x7fffffff : static_cast<int>(n); }
int MillisInt(Duration d) {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(d).count();
  return ms < 1 ? 1 : ms > 0x7fffffff ? 0x7fffffff : static_cast<int>(ms);
}

// A method's entry before its handler is set.
internal::MethodEntry Entry(std::string full_method, MethodOptions options) {
  internal::MethodEntry entry;
  entry.name = std::move(full_method);
  entry.options = options;
  return entry;
}

}  // namespace

Server::Impl::Impl(asio::any_io_executor ex, ServerOptions opts)
    : executor(std::move(ex)), options(std::move(opts)), metrics(options.metrics) {}

::grpc::ServerGenericBidiReactor* Server::Impl::CreateReactor(::grpc::GenericCallbackServerContext* call) {
  const auto method = methods.find(call->method());
  if (method == methods.end()) {
    metrics.CountUnknownMethod();
    // UNIMPLEMENTED, as gRPC answers a method no service has; the trailer says not_found.
    return new Refusal(*call, Error(ErrorCode::not_found, "no method " + call->method()),
                       ::grpc::StatusCode::UNIMPLEMENTED);
  }
  // Refused before any handler, counted with the status the refusal sends.
  const auto refuse = [&](const Error& e) {
    metrics.CountCall(method->second.series, e.info().grpc_status, Duration::zero());
    return new Refusal(*call, e);
  };
  if (shutting_down.load()) return refuse(Error(ErrorCode::shutdown, "the server is shutting down"));
  // Counted here, before the check, so that calls arriving at once on gRPC's threads cannot
  // all pass it; Untrack gives the slot back.
  if (in_flight.fetch_add(1) >= options.limits.max_calls_in_flight) {
    in_flight.fetch_sub(1);
    return refuse(Error(ErrorCode::overloaded, std::to_string(options.limits.max_calls_in_flight) +
                                                   " calls are in flight, the most this server takes"));
  }
  return new internal::ServerCall(*this, *call, method->second);
}

void Server::Impl::Track(internal::ServerCall* call) {
  metrics.CallStarted();
  std::lock_guard lock(mu);
  live.insert(call);
}

void Server::Impl::Untrack(internal::ServerCall* call) {
  {
    std::lock_guard lock(mu);
    live.erase(call);
  }
  metrics.CallEnded();
  in_flight.fetch_sub(1);
}

void Server::Impl::StopLiveCalls() {
  std::lock_guard lock(mu);
  for (internal::ServerCall* call : live) call->StopForShutdown();
}

Server::Server(asio::any_io_executor executor, ServerOptions options)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(options))) {}

Server::~Server() {
  shutdown(Duration::zero());
  if (impl_->shutdown_thread.joinable()) impl_->shutdown_thread.join();
}

void Server::Impl::Register(internal::MethodEntry entry) {
  if (server) throw std::logic_error("grpc::Server: register methods before listen()");
  const std::string& name = entry.name;
  if (name.size() < 3 || name[0] != '/' || name.find('/', 1) == std::string::npos)
    throw std::invalid_argument("grpc::Server: '" + name + "' is not a method path (/package.Service/Method)");
  entry.series = metrics.SeriesFor(name);
  std::string key = name;
  methods.insert_or_assign(std::move(key), std::move(entry));
}

void Server::unary(std::string full_method, UnaryHandler handler, MethodOptions options) {
  internal::MethodEntry entry = Entry(std::move(full_method), options);
  entry.handler = std::move(handler);
  impl_->Register(std::move(entry));
}

void Server::unary_inline(std::string full_method, InlineUnaryHandler handler, MethodOptions options) {
  internal::MethodEntry entry = Entry(std::move(full_method), options);
  entry.inline_handler = std::move(handler);
  impl_->Register(std::move(entry));
}

void Server::server_streaming(std::string full_method, ServerStreamHandler next, MethodOptions options) {
  internal::MethodEntry entry = Entry(std::move(full_method), options);
  entry.stream = std::move(next);
  impl_->Register(std::move(entry));
}

std::uint16_t Server::listen(std::string_view address, std::uint16_t port) {
  if (impl_->server) throw std::logic_error("grpc::Server: listen() once only");
  const bool ipv6 = address.find(':') != std::string_view::npos;
  const std::string where =
      (ipv6 ? "[" + std::string(address) + "]" : std::string(address)) + ":" + std::to_string(port);
  const ServerLimits& limits = impl_->options.limits;
  int selected = 0;
  ::grpc::ServerBuilder builder;
  builder.AddListeningPort(where, Credentials(impl_->options.tls), &selected);
  builder.RegisterCallbackGenericService(impl_.get());
  builder.SetMaxReceiveMessageSize(ClampToInt(limits.max_request_bytes));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, ClampToInt(limits.max_streams_per_connection));
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, ClampToInt(limits.max_metadata_bytes));
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, MillisInt(limits.handshake_timeout));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, MillisInt(limits.idle_timeout));
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || selected == 0) {
    impl_->server.reset();
    throw std::runtime_error("grpc::Server: cannot listen on " + where);
  }
  return static_cast<std::uint16_t>(selected);
}

void Server::shutdown(Duration grace) {
  std::call_once(impl_->shutdown_once, [this, grace] {
    impl_->shutting_down.store(true);
    if (!impl_->server) return;
    // Calls in flight get `grace`, then a stop with `shutdown` they answer UNAVAILABLE;
    // gRPC cancels what is left a second later.
    std::weak_ptr<Impl> weak = impl_;
    if (grace <= Duration::zero()) {
      impl_->StopLiveCalls();
    } else {
      auto timer = std::make_shared<asio::steady_timer>(impl_->executor, grace);
      timer->async_wait([weak, timer](const boost::system::error_code&) {
        if (auto impl = weak.lock()) impl->StopLiveCalls();
      });
    }
    const auto deadline = std::chrono::system_clock::now() + grace + std::chrono::seconds(1);
    impl_->shutdown_thread = std::thread([impl = impl_.get(), deadline] {
      impl->server->Shutdown(deadline);
      impl->StopLiveCalls();  // what gRPC's cancel did not reach
    });
  });
}

std::size_t Server::calls_in_flight() const noexcept { return impl_->in_flight.load(); }

}  // namespace cutoff::grpc
