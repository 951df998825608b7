#include "policy_flags.hpp"

#include <chrono>
#include <cstdlib>

#include "conventions.hpp"

namespace cutoff::cli {

namespace {

std::int64_t Millis(Duration d) { return std::chrono::ceil<std::chrono::milliseconds>(d).count(); }

}  // namespace

PolicyFlags PolicyFlags::from(const resilience::PolicyOptions& p) {
  PolicyFlags f;
  f.attempts = p.retry.max_attempts;
  f.retry_budget = p.retry.budget_ratio;
  f.attempt_timeout_ms = Millis(p.attempt_timeout);
  if (p.breaker) {
    f.breaker_failures = p.breaker->consecutive_failures;
    f.breaker_open_ms = Millis(p.breaker->open_for);
  }
  if (p.hedge) f.hedge_ms = Millis(p.hedge->delay);
  if (p.throttle) f.throttle_k = p.throttle->k;
  f.max_concurrent = p.bulkhead.max_concurrent;
  f.max_queue = p.bulkhead.max_queue;
  return f;
}

resilience::PolicyOptions PolicyFlags::policy(resilience::PolicyOptions base) const {
  base.attempt_timeout = std::chrono::milliseconds(attempt_timeout_ms);
  base.retry.max_attempts = attempts;
  base.retry.budget_ratio = retry_budget;
  if (breaker_failures == 0) {
    base.breaker.reset();
  } else {
    if (!base.breaker) base.breaker.emplace();
    base.breaker->consecutive_failures = breaker_failures;
    base.breaker->open_for = std::chrono::milliseconds(breaker_open_ms);
  }
  if (hedge_ms == 0) {
    base.hedge.reset();
  } else {
    if (!base.hedge) base.hedge.emplace();
    base.hedge->delay = std::chrono::milliseconds(hedge_ms);
  }
  if (throttle_k == 0) {
    base.throttle.reset();
  } else {
    if (!base.throttle) base.throttle.emplace();
    base.throttle->k = throttle_k;
  }
  base.bulkhead.max_concurrent = max_concurrent;
  base.bulkhead.max_queue = max_queue;
  return base;
}

void AddPolicyFlags(CLI::App* app, const std::string& prefix, const std::string& what, PolicyFlags& f, bool bulkhead,
                    bool attempt_timeout) {
  const std::string name = "--" + prefix;
  app->add_option(name + "attempts", f.attempts,
                  "Attempts per call for " + what +
                      ", the first included; retried: connection failures, attempt timeouts and 502/503/504, "
                      "for reads and keyed writes")
      ->check(Number(1, 10))
      ->capture_default_str();
  app->add_option(name + "retry-budget", f.retry_budget,
                  "Retries allowed per call for " + what + ", over 10 s (plus 10 a second); negative: no budget")
      ->check(Number(-1.0, 10.0))
      ->capture_default_str();
  if (attempt_timeout) {
    app->add_option(name + "attempt-timeout-ms", f.attempt_timeout_ms,
                    "Timeout of one attempt of " + what + ", within the caller's budget (0: none)")
        ->check(Number(std::int64_t{0}, std::int64_t{86'400'000}))
        ->capture_default_str();
  }
  app->add_option(name + "breaker-failures", f.breaker_failures,
                  "Failures in a row of " + what + " that open the circuit breaker (0: no breaker)")
      ->check(Number(std::uint32_t{0}, std::uint32_t{1'000'000}))
      ->capture_default_str();
  app->add_option(name + "breaker-open-ms", f.breaker_open_ms, "How long an open breaker refuses " + what)
      ->check(Number(std::int64_t{1}, std::int64_t{3'600'000}))
      ->capture_default_str();
  app->add_option(name + "hedge-ms", f.hedge_ms,
                  "Start a second attempt of a read among " + what + " when the first is this slow (0: no hedging)")
      ->check(Number(std::int64_t{0}, std::int64_t{3'600'000}))
      ->capture_default_str();
  app->add_option(name + "throttle-k", f.throttle_k,
                  "Client-side throttling of " + what +
                      ": once the upstream refuses more than one call in K to an operation (over 2 s), the excess "
                      "fails here with overloaded before it is sent (0: off; else at least 1)")
      ->check(Number(0.0, 1000.0))
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            const double k = std::strtod(s.c_str(), nullptr);
            return k == 0 || k >= 1 ? std::string() : "'" + s + "': K is 0 (off) or at least 1";
          },
          ""))
      ->capture_default_str();
  if (bulkhead) {
    app->add_option(name + "max-concurrent", f.max_concurrent, what + " running at once (0: no limit)")
        ->check(Number(std::size_t{0}, std::size_t{100'000}))
        ->capture_default_str();
    app->add_option(name + "max-queue", f.max_queue, what + " waiting for those; more fail with overloaded")
        ->check(Number(std::size_t{0}, std::size_t{1'000'000}))
        ->capture_default_str();
  }
}

}  // namespace cutoff::cli
