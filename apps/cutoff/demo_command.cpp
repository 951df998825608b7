// `cutoff demo`: a deadline stopping concurrent work, next to a plain client timeout that
// does not.
//
// One request fans out to three branches that do their work in small cooperative steps.
// In `timeouts` mode the caller stops waiting at its budget but nobody tells the branches,
// so the slow one runs to the end for nobody. In `cutoff` mode the budget is a Context
// bound once at entry; every branch runs under it and one still running at the deadline is
// stopped there. The closing lines say what was stopped and when, or that nothing was.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "conventions.hpp"
#include "cutoff/core/asio.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"

namespace cutoff::cli {
namespace {

namespace asio = boost::asio;
using Ms = std::chrono::duration<double, std::milli>;

struct Branch {
  std::string name;
  std::chrono::milliseconds needs;
};

struct Outcome {
  std::string result = "running";
  TimePoint ended{};
  int steps_done = 0;
};

constexpr auto kStep = std::chrono::milliseconds(5);

// Work in 5 ms steps; each step is an Asio timer wait, so a stop aborts it.
asio::awaitable<void> DoWork(std::chrono::milliseconds needs, Outcome& out) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (auto done = std::chrono::milliseconds(0); done < needs; done += kStep) {
    timer.expires_after(std::min(kStep, needs - done));
    co_await timer.async_wait(asio::use_awaitable);
    ++out.steps_done;
  }
}

asio::awaitable<void> RunBranch(Context ctx, Branch b, Outcome& out) {
  try {
    co_await with_context(ctx, DoWork(b.needs, out));
    out.result = "ok";
  } catch (const Error& e) {
    out.result = std::string(e.info().name);
  }
  out.ended = SteadyClock::now();
}

struct ModeResult {
  std::vector<Outcome> outcomes;
  TimePoint start, caller_gave_up;
};

// A caller with a client-side timeout only: it stops waiting, the branches never hear of it.
ModeResult RunTimeouts(const std::vector<Branch>& branches, std::chrono::milliseconds budget) {
  asio::io_context io;
  ModeResult r;
  r.outcomes.resize(branches.size());
  r.start = SteadyClock::now();
  for (std::size_t i = 0; i < branches.size(); ++i) {
    asio::co_spawn(io, RunBranch(Context::background(), branches[i], r.outcomes[i]), asio::detached);
  }
  asio::steady_timer caller_timeout(io, budget);
  caller_timeout.async_wait([&](boost::system::error_code) {
    r.caller_gave_up = SteadyClock::now();
    for (auto& o : r.outcomes) {
      if (o.result == "running") o.result = "ok, nobody waiting";
    }
  });
  io.run();  // runs until the last branch finishes: that is the zombie work
  for (auto& o : r.outcomes) {
    if (o.result == "ok" && o.ended > r.caller_gave_up) o.result = "ok, nobody waiting";
  }
  return r;
}

// The budget is bound once; every branch runs under it.
ModeResult RunCutoff(const std::vector<Branch>& branches, std::chrono::milliseconds budget) {
  asio::io_context io;
  ModeResult r;
  r.outcomes.resize(branches.size());
  r.start = SteadyClock::now();
  auto ctx = Context::background().with_request_id("demo-1").with_timeout(budget);
  r.caller_gave_up = ctx.deadline().time_point();
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        std::vector<decltype(asio::co_spawn(ex, RunBranch(ctx, branches[0], r.outcomes[0]), asio::deferred))> ops;
        for (std::size_t i = 0; i < branches.size(); ++i) {
          ops.push_back(asio::co_spawn(ex, RunBranch(ctx, branches[i], r.outcomes[i]), asio::deferred));
        }
        co_await asio::experimental::make_parallel_group(std::move(ops))
            .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
      },
      asio::detached);
  io.run();
  return r;
}

double PrintMode(const char* mode, const std::vector<Branch>& branches, const ModeResult& r) {
  double zombie_ms = 0;
  for (std::size_t i = 0; i < branches.size(); ++i) {
    const auto& o = r.outcomes[i];
    const double ended = Ms(o.ended - r.start).count();
    const double after = Ms(o.ended - r.caller_gave_up).count();
    char after_text[32] = "-";
    if (after > 0) {
      std::snprintf(after_text, sizeof after_text, "%.1f ms", after);
      zombie_ms += after;
    }
    std::printf("%-9s %-18s %6lld ms   %-20s %9.1f ms   %s\n", mode, branches[i].name.c_str(),
                static_cast<long long>(branches[i].needs.count()), o.result.c_str(), ended, after_text);
  }
  return zombie_ms;
}

void RunDemo(int budget_ms, int slow_ms) {
  const std::vector<Branch> branches = {
      {"inventory.lookup", std::chrono::milliseconds(std::max(1, budget_ms / 4))},
      {"pricing.quote", std::chrono::milliseconds(std::max(1, budget_ms * 2 / 3))},
      {"stock.valuation", std::chrono::milliseconds(slow_ms)},
  };
  const auto budget = std::chrono::milliseconds(budget_ms);
  std::printf("cutoff demo: one request, three concurrent branches, a %d ms budget\n\n", budget_ms);
  std::printf("%-9s %-18s %9s   %-20s %12s   %s\n", "mode", "branch", "needs", "outcome", "ended at",
              "work after the caller gave up");
  const double zombie_timeouts = PrintMode("timeouts", branches, RunTimeouts(branches, budget));
  const ModeResult cutoff = RunCutoff(branches, budget);
  const double zombie_cutoff = PrintMode("cutoff", branches, cutoff);
  std::printf(
      "\nWork still running after the caller gave up: %.1f ms with a client timeout only, %.1f ms with "
      "cutoff.\n",
      zombie_timeouts, zombie_cutoff);
  // What cutoff stopped, from what happened rather than from what was meant to.
  std::string stopped;
  std::size_t kept = 0, count = 0;
  for (std::size_t i = 0; i < branches.size(); ++i) {
    const Outcome& o = cutoff.outcomes[i];
    if (o.result == "ok") {
      ++kept;
      continue;
    }
    char line[160];
    std::snprintf(line, sizeof line, "%s%s at %.1f ms (%s, %.1f ms past the deadline)", count ? "; " : "",
                  branches[i].name.c_str(), Ms(o.ended - cutoff.start).count(), o.result.c_str(),
                  std::max(0.0, Ms(o.ended - cutoff.caller_gave_up).count()));
    stopped += line;
    ++count;
  }
  if (count == 0) {
    std::printf(
        "Every branch finished within the %d ms budget, so cutoff stopped nothing (run with --slow-ms above\n"
        "--budget-ms to see a stop).\n",
        budget_ms);
  } else {
    std::printf("With cutoff, %zu branch%s kept %s result%s and it stopped %s, instead of letting %s run on for "
                "nobody.\n",
                kept, kept == 1 ? "" : "es", kept == 1 ? "its" : "their", kept == 1 ? "" : "s", stopped.c_str(),
                count == 1 ? "it" : "them");
  }
}

}  // namespace

void AddDemoCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "Show a deadline stopping concurrent work (a client timeout alone does not)");
  static int budget_ms = 120;
  static int slow_ms = 600;
  cmd->add_option("--budget-ms", budget_ms, "The request's time budget")->check(Number(1, 60000))->capture_default_str();
  cmd->add_option("--slow-ms", slow_ms, "How long the slow branch needs")
      ->check(Number(1, 600000))
      ->capture_default_str();
  cmd->callback([cmd] {
    if (cmd->got_subcommand("serve")) return;
    RunDemo(budget_ms, slow_ms);
  });
  AddDemoServeCommand(*cmd);
}

}  // namespace cutoff::cli
