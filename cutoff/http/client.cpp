#include "cutoff/http/client.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <charconv>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/budget_headers.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/http/error_document.hpp"
#include "cutoff/http/internal/fault_points.hpp"
#include "cutoff/http/internal/peer_state.hpp"
#include "cutoff/http/internal/stream.hpp"
#include "cutoff/http/internal/tls_context.hpp"
#include "cutoff/http/retry_after.hpp"
#include "cutoff/observe/deadline_metrics.hpp"
#include "cutoff/observe/trace.hpp"

namespace cutoff::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

std::optional<Url> parse_url(std::string_view url) {
  constexpr std::string_view kHttp = "http://";
  constexpr std::string_view kHttps = "https://";
  Url out;
  if (url.size() >= kHttp.size() && iequals(url.substr(0, kHttp.size()), kHttp)) {
    url.remove_prefix(kHttp.size());
  } else if (url.size() >= kHttps.size() && iequals(url.substr(0, kHttps.size()), kHttps)) {
    url.remove_prefix(kHttps.size());
    out.tls = true;
    out.port = 443;
  } else {
    return std::nullopt;
  }
  const auto slash = url.find_first_of("/?#");
  std::string_view authority = url.substr(0, slash);
  std::string_view rest = slash == std::string_view::npos ? std::string_view() : url.substr(slash);
  if (authority.empty() || authority.find('@') != std::string_view::npos) return std::nullopt;
  std::string_view port;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos || close == 1) return std::nullopt;
    out.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty()) {
      if (authority.front() != ':') return std::nullopt;
      port = authority.substr(1);
    }
  } else {
    const auto colon = authority.find(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    if (out.host.empty()) return std::nullopt;
  }
  for (char c : out.host)
    if (static_cast<unsigned char>(c) <= ' ' || c == '/' || c == '\\') return std::nullopt;
  if (!port.empty()) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) return std::nullopt;
    out.port = static_cast<std::uint16_t>(value);
  }
  rest = rest.substr(0, rest.find('#'));
  for (char c : rest)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return std::nullopt;
  out.target = rest.empty() ? "/" : (rest.front() == '?' ? "/" + std::string(rest) : std::string(rest));
  return out;
}

std::string_view to_string(Delivery d) noexcept {
  switch (d) {
    case Delivery::not_sent: return "not_sent";
    case Delivery::sent: return "sent";
    case Delivery::answered: return "answered";
  }
  return "?";
}

bool deadline_expired(const Response& r) noexcept {
  if (r.status != 504) return false;
  const auto v = r.headers.get(kDeadlineExpiredHeader);
  return v && *v == "1";
}

namespace {

struct Pooled {
  Pooled(tcp::socket s, asio::ssl::context* tls) : stream(std::move(s), tls) {}
  internal::Stream stream;
  SteadyClock::time_point idle_since;
};

bool IdempotentMethod(std::string_view m) {
  return m == "GET" || m == "HEAD" || m == "PUT" || m == "DELETE" || m == "OPTIONS" || m == "TRACE";
}

// A pooled connection is reusable only if the server has not closed it (EOF pending) and has
// not sent anything unasked (over TLS, a close_notify counts as closed).
bool StillUsable(internal::Stream& s) {
  return s.socket().is_open() && !s.has_buffered_input() &&
         internal::PeekPeer(s.socket().native_handle(), s.tls()) == internal::PeerState::quiet;
}

// Whether an answer shows that the request it answers did not take effect. A cutoff server
// reports a stop or a refusal that came after its commit point as commit_ambiguous, so any
// other code it names was reported before anything became durable; 4xx answers refuse the
// request. A success, commit_ambiguous, `internal` or a 5xx that explains nothing (a proxy's
// 502 after it forwarded the request) does not rule the effect out.
bool RulesOutEffect(const Response& r) {
  if (r.status >= 400 && r.status < 500) return true;
  if (r.status < 500) return false;
  if (deadline_expired(r)) return true;
  const auto doc = parse_error_document(r.body);
  if (!doc || !doc->code) return false;
  return *doc->code != ErrorCode::commit_ambiguous && *doc->code != ErrorCode::internal;
}

std::string Millis(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

// The error an answer stands for when it is a failure the policy should see: the breaker counts
// it, the retry may try again. A 504 with Deadline-Expired (the caller's budget, spent) and
// answers below 500 are outcomes, not failures of the upstream.
std::optional<Error> FailedAnswer(const Response& r, const std::string& what, const std::string& request_id) {
  if (r.status < 500 || deadline_expired(r)) return std::nullopt;
  const auto doc = parse_error_document(r.body);
  const std::optional<ErrorCode> named = doc ? doc->code : std::nullopt;
  ErrorCode code = ErrorCode::internal;
  if (named == ErrorCode::commit_ambiguous) code = ErrorCode::commit_ambiguous;
  else if (r.status == 502) code = ErrorCode::unavailable;
  else if (r.status == 503) code = named == ErrorCode::overloaded ? ErrorCode::overloaded : ErrorCode::unavailable;
  else if (r.status == 504) code = ErrorCode::attempt_timeout;
  Error e(code, what + " answered " + std::to_string(r.status), request_id);
  // The server's pushback: the retry policy waits at least this long before another attempt.
  if (const auto field = r.headers.get("Retry-After"))
    if (const auto wait = parse_retry_after(*field, std::chrono::system_clock::now())) e.set_retry_after(*wait);
  return e;
}

// What one call, all its attempts together, has learnt so far. Touched on the caller's strand
// only (hedged attempts run there too).
struct CallState {
  bool may_write = false;   // the request may take effect on the server
  bool repeatable = false;  // repeating it cannot apply it twice (method, `idempotent`, a key)
  bool keyed = false;       // it carries an Idempotency-Key
  CommitLedger* ledger = nullptr;
  // The latest attempt's.
  bool retry_safe = false;         // another attempt after this one is safe
  std::optional<Response> answer;  // its answer, when that was a failure (FailedAnswer)
  bool refused_answer = false;     // its answer refused the call without failing it (429, spent budget)
  // Every attempt's.
  bool maybe_applied = false;  // some attempt may have taken effect
  bool sent = false;           // some attempt left and got no answer

  // The attempt got no answer; `began`: some of it left.
  void NoAnswer(bool began) {
    if (!began) {
      retry_safe = true;  // nothing left the client
      return;
    }
    sent = true;
    retry_safe = repeatable;
    if (may_write) NotePossibleEffect();
  }
  void Answered(const Response& r) {
    retry_safe = repeatable;
    if (may_write && !RulesOutEffect(r)) NotePossibleEffect();
  }
  // The ledger hears of each possible effect at once, so that a stop landing while we back
  // off, or after we return, is reported honestly upstream.
  void NotePossibleEffect() {
    maybe_applied = true;
    if (ledger) ledger->note_commit_point(keyed);
  }
};

}  // namespace

struct Client::Impl {
  Impl(asio::any_io_executor ex, ClientOptions opts)
      : executor(std::move(ex)),
        options(std::move(opts)),
        resilience_metrics(options.metrics ? std::make_unique<resilience::ResilienceMetrics>(*options.metrics)
                                           : nullptr),
        policies(PolicySetOptions(options, resilience_metrics.get())) {
    if (options.metrics) stops.emplace(*options.metrics, "http_client");
    // The TLS context is made here, not on the first https:// call: loading a trust store
    // reads files, which an I/O thread should not wait for. Clients that name no CA file
    // share one context for the system's store, loaded once per process.
    if (!options.tls.ca_file.empty() || options.tls.insecure_skip_verify) {
      tls = internal::MakeClientTlsContext(options.tls);  // a bad CA file is a startup error
    } else {
      try {
        tls = internal::SystemClientTlsContext();
      } catch (const std::invalid_argument& e) {
        tls_error = e.what();  // reported by each https:// call; http:// ones never need it
      }
    }
  }

  static resilience::PolicySetOptions PolicySetOptions(const ClientOptions& o, resilience::ResilienceMetrics* m) {
    resilience::PolicySetOptions p;
    p.defaults = o.policy;
    for (const Upstream& u : o.upstreams) p.named.push_back({u.authority, u.name, u.policy});
    p.max_policies = o.max_upstreams;
    p.metrics = m;
    return p;
  }

  asio::any_io_executor executor;
  ClientOptions options;
  std::unique_ptr<resilience::ResilienceMetrics> resilience_metrics;
  resilience::PolicySet policies;
  mutable std::mutex mu;
  std::map<std::string, std::deque<std::unique_ptr<Pooled>>> idle;
  std::atomic<std::size_t> opened{0};
  std::optional<observe::LayerStops> stops;  // set with options.metrics
  std::shared_ptr<asio::ssl::context> tls;  // for https://; null when tls_error says why
  std::string tls_error;

  // An attempt stopped in flight: by the caller (its reason), by its own timeout, or by the
  // hedge that no longer needs it (cancelled).
  void RecordStop(const Context& ctx, const Context& attempt, const observe::StopStamp& stamp) const {
    if (!stops) return;
    if (ctx.stop_requested()) stops->record(ctx.stop_reason(), stamp.since_stop());
    else if (attempt.stop_reason() == StopReason::deadline_exceeded)
      stops->record("attempt_timeout", stamp.since_stop());
    else stops->record(attempt.stop_reason(), stamp.since_stop());
  }

  std::unique_ptr<Pooled> TakeIdle(const std::string& key) {
    std::lock_guard lock(mu);
    auto it = idle.find(key);
    if (it == idle.end()) return nullptr;
    auto& q = it->second;
    while (!q.empty()) {
      auto c = std::move(q.back());
      q.pop_back();
      if (SteadyClock::now() - c->idle_since < options.max_idle_time && StillUsable(c->stream)) return c;
    }
    return nullptr;
  }

  void GiveBack(const std::string& key, std::unique_ptr<Pooled> c) {
    c->idle_since = SteadyClock::now();
    std::lock_guard lock(mu);
    auto& q = idle[key];
    if (q.size() >= options.max_idle_per_host) q.pop_front();
    q.push_back(std::move(c));
  }

  // The context https:// connections are made with. Throws std::invalid_argument when the
  // system's trust store could not be loaded.
  asio::ssl::context& TlsContext() {
    if (!tls) throw std::invalid_argument(tls_error);
    return *tls;
  }

  // Looks the host up without holding the caller: Asio's resolver runs getaddrinfo on a
  // thread of its own and cannot be cancelled, so a slow or silent name server would keep the
  // caller past its budget (with_context waits for the operation it cancels). The lookup runs
  // detached; the caller waits on a timer its stop can cancel, and leaves the lookup behind.
  static asio::awaitable<tcp::resolver::results_type> Resolve(const Url& url) {
    auto ex = co_await asio::this_coro::executor;
    struct Lookup {
      explicit Lookup(const asio::any_io_executor& e) : done(e, asio::steady_timer::time_point::max()) {}
      asio::steady_timer done;
      std::optional<tcp::resolver::results_type> results;
      std::exception_ptr error;
      bool finished = false;
    };
    auto lookup = std::make_shared<Lookup>(ex);
    asio::co_spawn(
        ex,
        [host = url.host, port = std::to_string(url.port)]() -> asio::awaitable<tcp::resolver::results_type> {
          auto on = co_await asio::this_coro::executor;
          if (auto fault = cutoff::internal::armed_fault(internal::kClientResolve)) {
            asio::steady_timer slow(on, (*fault)());
            co_await slow.async_wait(asio::use_awaitable);
          }
          tcp::resolver resolver(on);
          co_return co_await resolver.async_resolve(host, port, asio::use_awaitable);
        },
        [lookup](std::exception_ptr error, tcp::resolver::results_type results) {
          lookup->finished = true;
          lookup->error = error;
          if (!error) lookup->results = std::move(results);
          lookup->done.cancel();
        });
    boost::system::error_code ignored;
    co_await lookup->done.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    if (!lookup->finished) throw boost::system::system_error(asio::error::operation_aborted);  // the caller's stop
    if (lookup->error) std::rethrow_exception(lookup->error);
    co_return std::move(*lookup->results);
  }

  // Resolves, connects and, for https://, completes the TLS handshake: all of it one step,
  // bounded by the caller's connect context.
  asio::awaitable<std::unique_ptr<Pooled>> Connect(const Url& url) {
    auto ex = co_await asio::this_coro::executor;
    const auto endpoints = co_await Resolve(url);
    tcp::socket socket(ex);
    co_await asio::async_connect(socket, endpoints, asio::use_awaitable);
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    opened.fetch_add(1);
    auto conn = std::make_unique<Pooled>(std::move(socket), url.tls ? &TlsContext() : nullptr);
    if (url.tls) {
      internal::PrepareClientTls(conn->stream, url.host, options.tls);
      auto [ec] = co_await conn->stream.async_handshake(asio::ssl::stream_base::client, asio::as_tuple(asio::use_awaitable));
      if (ec == asio::error::operation_aborted) throw boost::system::system_error(ec);  // a stop: the caller's
      if (ec) {
        const std::string why = internal::DescribeHandshakeFailure(conn->stream, ec);
        throw Error(ErrorCode::unavailable, url.host + ":" + std::to_string(url.port) + ": TLS handshake failed: " + why);
      }
    }
    co_return conn;
  }

  struct Exchanged {
    Response response;
    bool keep_alive = false;
  };

  // `began`: some of the request left (it may have reached the server whole, even when the
  // write then reports cancellation). `wrote`: all of it did.
  asio::awaitable<Exchanged> Exchange(Pooled& c, const bhttp::request<bhttp::string_body>& req, bool& began,
                                      bool& wrote) {
    auto [write_error, written] = co_await bhttp::async_write(c.stream, req, asio::as_tuple(asio::use_awaitable));
    if (written > 0) began = true;
    if (write_error) throw boost::system::system_error(write_error);
    wrote = true;
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(options.max_response_bytes);
    if (req.method() == bhttp::verb::head) parser.skip(true);
    co_await bhttp::async_read(c.stream, buffer, parser, asio::use_awaitable);
    auto& res = parser.get();
    Exchanged out;
    out.keep_alive = res.keep_alive() && buffer.size() == 0;
    out.response.status = static_cast<int>(res.result_int());
    for (const auto& f : res) out.response.headers.add(f.name_string(), f.value());
    out.response.body = std::move(res.body());
    co_return out;
  }

  // The Deadline-Budget-Ms value for what is left of `attempt` now, less the reply margin;
  // `callers` (a value the caller set) wins when it is tighter. nullopt: nothing is left.
  std::optional<std::string> BudgetHeader(const Context& attempt, const std::optional<std::string>& callers) const {
    auto value = format_budget_ms(attempt.deadline(), options.reply_margin, attempt.clock());
    if (!value) return std::nullopt;
    if (callers) {
      const auto theirs = parse_budget_ms(*callers);
      const auto ours = parse_budget_ms(*value);
      if (std::holds_alternative<Duration>(theirs) && std::get<Duration>(theirs) < std::get<Duration>(ours))
        value = *callers;
    }
    return value;
  }

  // One attempt, under `attempt` (the caller's context bounded by the policy's attempt
  // timeout; a hedge's sibling). Throws cutoff::Error for an attempt without an answer and for
  // an answer that failed (a 5xx but for a spent budget's 504), which it keeps in `call`
  // for the caller: the last real outcome is that answer, if no later attempt replaces it.
  asio::awaitable<Response> Attempt(const Context& ctx, const Context& attempt, const ClientRequest& in, const Url& url,
                                    CallState& call) {
    call.retry_safe = false;
    call.answer.reset();
    const auto budget = format_budget_ms(attempt.deadline(), attempt.clock());
    if (!budget || attempt.stop_requested()) {
      // Nothing is sent for a spent budget: the next service could only fail it.
      call.retry_safe = true;
      if (attempt.stop_requested() && attempt.stop_reason() != StopReason::deadline_exceeded)
        throw Error::stopped(attempt.stop_reason(), ctx.request_id());
      throw Error(ErrorCode::deadline_exceeded, "not sent: the budget was spent before the call", ctx.request_id());
    }

    bhttp::request<bhttp::string_body> req;
    req.method_string(in.method);
    req.target(url.target);
    req.version(11);
    const bool default_port = url.port == (url.tls ? 443 : 80);
    const bool ipv6 = url.host.find(':') != std::string::npos;
    const std::string host =
        (ipv6 ? "[" + url.host + "]" : url.host) + (default_port ? "" : ":" + std::to_string(url.port));
    req.set(bhttp::field::host, host);
    std::optional<std::string> callers_budget;  // a budget header set by the caller: it may only tighten ours
    for (const auto& f : in.headers.fields()) {
      if (iequals(f.name, kBudgetHeader)) {
        callers_budget = f.value;
        continue;
      }
      req.insert(f.name, f.value);
    }
    if (!ctx.request_id().empty() && !in.headers.contains("X-Request-Id")) req.set("X-Request-Id", ctx.request_id());
    if (!ctx.values().trace.traceparent.empty() && !in.headers.contains("traceparent")) {
      if (auto tp = observe::parse_traceparent(ctx.values().trace.traceparent)) {
        req.set("traceparent", tp->child().to_string());
        if (!ctx.values().trace.tracestate.empty()) req.set("tracestate", ctx.values().trace.tracestate);
      }
    }
    req.body() = in.body;
    req.keep_alive(true);
    req.prepare_payload();

    const std::string key = url.host + ":" + std::to_string(url.port);
    const std::string pool_key = url.tls ? "https://" + key : key;  // a plain connection never serves https
    bool began = false;
    bool wrote = false;
    std::unique_ptr<Pooled> conn;
    observe::StopStamp stamp;  // the start of a stopped attempt's overshoot
    if (stops) stamp.arm(attempt.token());
    Exchanged ex;
    std::optional<std::string> budget_value;
    try {
      conn = TakeIdle(pool_key);
      if (!conn) {
        const Context connecting = attempt.with_timeout(options.connect_timeout);
        try {
          // A named awaitable: g++ 12 destroys temporaries of a co_await's full expression
          // twice (here the Context copy with_context takes).
          auto connect = with_context(connecting, Connect(url));
          conn = co_await std::move(connect);
        } catch (const Error& e) {
          if (e.stop_reason() == StopReason::none || attempt.stop_requested()) throw;
          throw Error(ErrorCode::unavailable, key + ": no connection within " + Millis(options.connect_timeout),
                      ctx.request_id());
        }
      }
      // The budget is what is left once connected: a connect and a TLS handshake spend it too.
      budget_value = BudgetHeader(attempt, callers_budget);
      if (budget_value) {
        req.set(std::string(kBudgetHeader), *budget_value);
        auto exchanging = with_context(attempt, Exchange(*conn, req, began, wrote));
        ex = co_await std::move(exchanging);
      }
    } catch (const Error& e) {
      call.NoAnswer(began);
      // Dropping `conn` closes it: the server sees the disconnect and stops our work.
      if (e.stop_reason() == StopReason::none) throw;
      conn.reset();
      RecordStop(ctx, attempt, stamp);
      throw Error::stopped(ctx.stop_requested() ? ctx.stop_reason() : attempt.stop_reason(), ctx.request_id());
    } catch (const boost::system::system_error& e) {
      call.NoAnswer(began);
      if (attempt.stop_requested()) {
        conn.reset();
        RecordStop(ctx, attempt, stamp);
        throw Error::stopped(ctx.stop_requested() ? ctx.stop_reason() : attempt.stop_reason(), ctx.request_id());
      }
      throw Error(ErrorCode::unavailable, key + ": " + e.code().message(), ctx.request_id());
    } catch (const std::invalid_argument& e) {  // the TLS configuration: no attempt can succeed
      call.NoAnswer(began);
      throw Error(ErrorCode::invalid_argument, e.what(), ctx.request_id());
    }
    if (!budget_value) {  // spent while connecting: nothing was sent
      GiveBack(pool_key, std::move(conn));
      call.retry_safe = true;
      throw Error(ErrorCode::deadline_exceeded, "not sent: the budget was spent while connecting", ctx.request_id());
    }
    if (ex.keep_alive) GiveBack(pool_key, std::move(conn));
    call.Answered(ex.response);
    call.refused_answer = ex.response.status == 429 || deadline_expired(ex.response);
    if (auto failed = FailedAnswer(ex.response, in.method + " " + in.url, ctx.request_id())) {
      call.answer = std::move(ex.response);
      throw std::move(*failed);
    }
    co_return std::move(ex.response);
  }
};

Client::Client(asio::any_io_executor executor) : Client(std::move(executor), ClientOptions{}) {}

Client::Client(asio::any_io_executor executor, ClientOptions options)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(options))) {}

Client::~Client() = default;

asio::awaitable<Exchange> Client::exchange(const Context& ctx, ClientRequest req) {
  Exchange out;
  const auto url = parse_url(req.url);
  if (!url) {
    out.error.emplace(ErrorCode::invalid_argument, "not an http:// or https:// URL: " + req.url, ctx.request_id());
    co_return out;
  }
  CallState call;
  call.may_write = req.may_write.value_or(!safe_method(req.method));
  call.keyed = req.headers.contains("Idempotency-Key");
  call.repeatable = req.idempotent || call.keyed || IdempotentMethod(req.method);
  call.ledger = ctx.commit_ledger();
  resilience::PipelineCall rules;
  rules.retryable = [state = &call](const Error& e) { return state->retry_safe && retry_may_help(e.code()); };
  // Two copies of a write in flight at once are not safe even with a key: the second would
  // meet the first in the idempotency store as a conflict.
  rules.may_hedge = !call.may_write;
  rules.honours_context = true;  // Attempt() connects and exchanges under its context

  Impl* impl = impl_.get();
  resilience::Policy& policy = impl->policies.get(url->host + ":" + std::to_string(url->port));
  if (policy.throttle()) {
    // The throttle keeps an account per path: an upstream overloaded on one route is
    // throttled on that route only.
    rules.key = std::string_view(url->target).substr(0, url->target.find('?'));
    rules.refused_answer = [state = &call] { return state->refused_answer; };
  }
  std::exception_ptr failure;
  try {
    auto running = policy.run(
        ctx, [&](const Context& attempt) { return impl->Attempt(ctx, attempt, req, *url, call); }, std::move(rules));
    out.response = co_await std::move(running);
    out.delivery = Delivery::answered;
    co_return out;
  } catch (...) {
    failure = std::current_exception();
  }
  // An Asio abort here is our coroutine cancelled by its caller: a cancellation.
  Error last = to_error(failure, ctx.stop_requested() ? ctx.stop_reason() : StopReason::cancelled, ctx.request_id());
  if (call.answer && last.stop_reason() == StopReason::none) {  // the last real outcome was an answer
    out.delivery = Delivery::answered;
    out.response = std::move(*call.answer);
    co_return out;
  }
  if (!call.maybe_applied) {  // nothing left, or only requests that do not write: the error stands
    out.delivery = call.sent ? Delivery::sent : Delivery::not_sent;
    out.error = std::move(last);
    co_return out;
  }
  // Sent, no answer: the server may have acted on it. Reporting the stop or the timeout
  // would read as "did not happen" one hop up.
  out.delivery = Delivery::sent;
  out.error.emplace(
      ErrorCode::commit_ambiguous,
      req.method + " " + req.url + " was sent but not answered (" + last.what() + "): it may have taken effect; " +
          (call.keyed ? "repeating it with the same Idempotency-Key is safe" : "reconcile before repeating it"),
      ctx.request_id());
  co_return out;
}

asio::awaitable<Response> Client::request(const Context& ctx, ClientRequest req) {
  auto exchanging = exchange(ctx, std::move(req));
  Exchange x = co_await std::move(exchanging);
  if (x.delivery != Delivery::answered) throw std::move(*x.error);
  co_return std::move(x.response);
}

asio::awaitable<Response> Client::get(const Context& ctx, std::string url) {
  ClientRequest req;
  req.url = std::move(url);
  co_return co_await request(ctx, std::move(req));
}

asio::awaitable<Response> Client::post(const Context& ctx, std::string url, std::string body,
                                       std::string_view content_type) {
  ClientRequest req;
  req.method = "POST";
  req.url = std::move(url);
  req.body = std::move(body);
  req.headers.set("Content-Type", content_type);
  co_return co_await request(ctx, std::move(req));
}

std::size_t Client::idle_connections() const {
  std::lock_guard lock(impl_->mu);
  std::size_t n = 0;
  for (const auto& [key, q] : impl_->idle) n += q.size();
  return n;
}

std::size_t Client::connections_opened() const noexcept { return impl_->opened.load(); }

resilience::Policy& Client::policy(std::string_view authority) { return impl_->policies.get(authority); }

}  // namespace cutoff::http
