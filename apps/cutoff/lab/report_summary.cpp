#include "lab/report_summary.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

#include "lab/report_model.hpp"
#include "lab/report_text.hpp"

namespace cutoff::lab {
namespace report {
namespace {

namespace json = boost::json;

// "a", "a and b", "a, b and c".
std::string JoinAnd(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

// "15.9 under cutoff, 3.3 under per-layer timeouts and 2.2 with no deadlines": `value` of each
// mode that has it, cutoff first; empty when fewer than two modes have one.
template <typename F>
std::string PerMode(const Modes& modes, F value) {
  std::vector<std::string> parts;
  for (std::size_t i : kSentenceOrder) {
    if (!modes[i]) continue;
    if (std::optional<std::string> v = value(modes[i])) parts.push_back(*v + " " + std::string(kModes[i].phrase));
  }
  return parts.size() >= 2 ? JoinAnd(parts) : std::string();
}

// Whether every mode that has the figure has the same value (and at least one has it).
bool AllEqual(const Modes& modes, std::string_view key) {
  std::optional<double> first;
  for (const json::value* m : modes) {
    auto v = Fig(m, key);
    if (!v) continue;
    if (first && *first != *v) return false;
    first = v;
  }
  return first.has_value();
}

// What the slow requests (or the cheap lookups) of a mode got: "all 48 were answered
// partially", "of 9, 4 were answered partially and 5 failed (upstream_timeout)", "the user
// gave up on all 6". Nothing when the figures are missing.
std::optional<std::string> Outcomes(const json::value* m, bool fast) {
  const auto sent = Fig(m, fast ? "fast_requests" : "requests");
  const auto ok = Fig(m, fast ? "fast_ok" : "ok");
  const auto partial = Fig(m, fast ? "fast_partial" : "partial");
  const auto failed = Fig(m, fast ? "fast_failed" : "failed");
  if (!sent || !ok || !partial || !failed) return std::nullopt;
  if (*sent <= 0) return "none were sent";
  const auto codes = Codes(m, fast ? "fast_request_errors" : "request_errors");
  const bool gave_up = codes.size() == 1 && codes[0].first == "client_gave_up";
  auto failures = [&](bool all) {
    const std::string n = (all ? "all " : "") + Count(*failed);
    if (gave_up) return "the user gave up on " + n;
    std::string s = n + " failed";
    if (!codes.empty()) {
      s += " (" + codes[0].first;
      if (codes.size() > 1) s += ", " + codes[1].first;
      s += codes.size() > 2 ? ", ...)" : ")";
    }
    return s;
  };
  if (*ok == *sent) return "all " + Count(*sent) + " were answered in full";
  if (*partial == *sent) return "all " + Count(*sent) + " were answered partially";
  if (*failed == *sent) return failures(true);
  std::vector<std::string> parts;
  if (*ok > 0) parts.push_back(Count(*ok) + " were answered in full");
  if (*partial > 0) parts.push_back(Count(*partial) + " were answered partially");
  if (*failed > 0) parts.push_back(failures(false));
  return "of " + Count(*sent) + ", " + JoinAnd(parts);
}

// The GraphQL scenario's result in a mode: how many valuations were cut, and whether the
// statements behind them were gone when the answer arrived.
std::optional<std::string> CutFieldsInWords(const json::value* m) {
  const auto total = Fig(m, "cut_fields_total"), gone = Fig(m, "cut_fields_gone");
  if (!total || !gone || *total <= 0) return std::nullopt;
  std::string s = Count(*total);
  if (auto asked = Fig(m, "valuations_asked"); asked && *asked > 0) s += " of " + Count(*asked);
  s += *total == 1 ? " valuation was cut" : " valuations were cut";
  if (*gone >= *total) {
    s += *total == 1 ? ", and its statement had stopped by the time the answer arrived"
                     : ", and every one's statement had stopped by the time the answer arrived";
  } else {
    s += ", and the statements behind " + Count(*total - *gone) +
         " of them were still running when the answer "
         "arrived";
    if (auto longest = Fig(m, "cut_outlived_max_ms")) s += ", for up to " + Display(*longest, 0) + " ms";
  }
  double field_errors = 0;
  for (const auto& [code, n] : Codes(m, "field_errors")) field_errors += n;
  if (field_errors > *total) {
    s += "; " + Count(field_errors - *total) + (field_errors - *total == 1 ? " other field" : " other fields") +
         " (not valuations) failed too";
  }
  return s;
}

// When a mode's cheap lookups were back after the overload: "in 1.0 s", or "not within the 8 s
// watched".
std::optional<std::string> RecoveryInWords(const json::value* m) {
  const auto seconds = Fig(m, "recovery_s");
  if (!seconds) return std::nullopt;
  const json::value* recovered = Field(m, "recovered");
  if (recovered && recovered->is_bool() && !recovered->get_bool()) {
    return "not within the " + Display(*seconds, 0) + " s watched";
  }
  return "in " + Display(*seconds, 1) + " s";
}

// An overload run in words: the capacity, the goodput under three times that, the recovery.
void OverloadInWords(std::vector<std::string>& out, const Modes& modes) {
  if (std::string capacity = PerMode(modes,
                                     [](const json::value* m) -> std::optional<std::string> {
                                       if (auto v = Fig(m, "capacity_per_s")) return Display(*v, 1);
                                       return std::nullopt;
                                     });
      !capacity.empty()) {
    out.push_back("Capacity measured at low load, complete answers per second: " + capacity +
                  "; each mode was then offered about three times its own.");
  }
  if (std::string goodput = PerMode(modes,
                                    [](const json::value* m) -> std::optional<std::string> {
                                      auto g = Fig(m, "goodput_per_s");
                                      if (!g) return std::nullopt;
                                      std::string s = Display(*g, 1);
                                      if (auto r = Fig(m, "goodput_ratio"))
                                        s += " (" + Display(*r, 2) + " of its capacity)";
                                      return s;
                                    });
      !goodput.empty()) {
    out.push_back("During the overload, complete answers per second: " + goodput + ".");
  }
  if (std::string recovery = PerMode(modes, RecoveryInWords); !recovery.empty()) {
    out.push_back(
        "After the excess stopped, the cheap lookups' p99 was back within twice its level before the "
        "overload " +
        recovery + ".");
  }
}

// The orders scenario in words: what the users were told against what happened, and what
// resuming the sagas left unsettled.
void OrdersInWords(std::vector<std::string>& out, const Modes& modes) {
  auto count = [](std::string_view key) {
    return [key](const json::value* m) -> std::optional<std::string> {
      if (auto v = Fig(m, key)) return Count(*v);
      return std::nullopt;
    };
  };
  if (std::string lies = PerMode(modes, count("false_failures")); !lies.empty())
    out.push_back("Users told their order had failed although it was shipped: " + lies + ".");
  if (std::string orphans = PerMode(modes, count("orphan_shipments")); !orphans.empty())
    out.push_back("Shipments booked for an order whose stock reservation was released: " + orphans + ".");
  if (std::string settled = PerMode(modes,
                                    [](const json::value* m) -> std::optional<std::string> {
                                      auto left = Fig(m, "left_unsettled"), still = Fig(m, "unsettled");
                                      if (!left || !still) return std::nullopt;
                                      if (*left == 0) return Count(*left);
                                      if (*still == 0) return Count(*left) + " (all settled by resuming)";
                                      return Count(*left) + " (" + Count(*still) + " still open after resuming)";
                                    });
      !settled.empty()) {
    out.push_back("Sagas left ambiguous or half-undone when the load ended: " + settled + ".");
  }
}

// The sentences of one scenario.
std::vector<std::string> ScenarioInWords(std::string_view name, const Modes& modes) {
  std::vector<std::string> out;
  const Kind kind = KindOf(name, modes);
  const bool any_fast = HasFastRequests(modes);
  const bool none_complete = std::all_of(modes.begin(), modes.end(), [](const json::value* m) {
    auto ok = Fig(m, "ok");
    return !m || (ok && *ok == 0);
  });

  if (kind.orders) OrdersInWords(out, modes);

  // What the slow requests got.
  if (kind.graphql) {
    if (none_complete) out.push_back("No operation was answered in full in any mode.");
    for (std::size_t i : kSentenceOrder) {
      auto outcome = Outcomes(modes[i], false);
      if (!outcome) continue;
      std::string s = std::string(kModes[i].phrase) + ", " + *outcome;
      if (auto cut = CutFieldsInWords(modes[i])) s += "; " + *cut;
      out.push_back(Capitalized(s) + ".");
    }
  } else {
    std::vector<std::string> clauses;
    for (std::size_t i : kSentenceOrder) {
      if (auto outcome = Outcomes(modes[i], false)) clauses.push_back(std::string(kModes[i].phrase) + ", " + *outcome);
    }
    if (!clauses.empty()) {
      std::string s = std::string(kind.noun) + ": ";
      for (std::size_t i = 0; i < clauses.size(); ++i) s += (i ? "; " : "") + clauses[i];
      out.push_back(s + ".");
    }
  }
  if (std::string p50 = PerMode(modes,
                                [](const json::value* m) -> std::optional<std::string> {
                                  if (auto v = Fig(m, "p50_ms")) return Display(*v, 0) + " ms";
                                  return std::nullopt;
                                });
      !p50.empty()) {
    out.push_back("Median time until the answer, or until the user gave up: " + p50 + ".");
  }

  // The cheap lookups, and the connections they waited for.
  if (any_fast) {
    if (std::string answered = PerMode(modes,
                                       [](const json::value* m) -> std::optional<std::string> {
                                         auto ok = Fig(m, "fast_ok"), sent = Fig(m, "fast_requests");
                                         if (!ok || !sent) return std::nullopt;
                                         return Count(*ok) + " of " + Count(*sent);
                                       });
        !answered.empty()) {
      out.push_back("Cheap lookups answered in full: " + answered + ".");
    }
  }
  if (!AllEqual(modes, "pool_queued_s")) {
    if (std::string queued = PerMode(modes,
                                     [](const json::value* m) -> std::optional<std::string> {
                                       if (auto v = Fig(m, "pool_queued_s")) return Display(*v, 1) + " s";
                                       return std::nullopt;
                                     });
        !queued.empty()) {
      std::string s = "Callers waited for a database connection " + queued;
      if (auto d = Fig(modes[2] ? modes[2] : modes[1] ? modes[1] : modes[0], "duration_s")) {
        s += ", of about " + Display(*d, 0) + " s of load";
      }
      out.push_back(s + ".");
    }
  }

  // Goodput, or for partial answers what was answered at all; under overload, per phase.
  if (kind.overload) {
    OverloadInWords(out, modes);
  } else if (!AllEqual(modes, "goodput_rps") || !AllEqual(modes, "answered_rps")) {
    const bool zero = AllEqual(modes, "goodput_rps") && Fig(modes[2] ? modes[2] : modes[0], "goodput_rps") == 0.0;
    auto rate = [](std::string_view key) {
      return [key](const json::value* m) -> std::optional<std::string> {
        if (auto v = Fig(m, key)) return Display(*v, 1);
        return std::nullopt;
      };
    };
    if (!zero) {
      if (std::string g = PerMode(modes, rate("goodput_rps")); !g.empty()) {
        std::string s = "Goodput, complete answers per second: " + g;
        if (none_complete && any_fast) s += ", all of it cheap lookups";
        out.push_back(s + ".");
      }
    } else if (std::string a = PerMode(modes, rate("answered_rps")); !a.empty()) {
      out.push_back(
          "Goodput is 0 in every mode, since nothing was answered in full; answers with data (partial "
          "ones) per second: " +
          a + ".");
    }
  }

  // The database's side.
  if (std::string share = PerMode(modes,
                                  [](const json::value* m) -> std::optional<std::string> {
                                    if (auto v = Fig(m, "zombie_share")) return Percent(*v);
                                    return std::nullopt;
                                  });
      !share.empty()) {
    std::string s = "Share of the database's statement time nobody waited for: " + share;
    if (auto ran_on = Fig(modes[2], "zombie_statements"); ran_on && *ran_on == 0) {
      s += "; under cutoff, no statement ran on more than 5 ms after its caller had the answer";
    } else if (auto p99 = Fig(modes[2], "overshoot_p99_ms")) {
      s += "; under cutoff, a statement still running when its caller had the answer ended within " + Display(*p99, 0) +
           " ms of it (p99)";
    }
    out.push_back(s + ".");
    if (LeftWorkRunning(modes[0])) {
      out.push_back(
          "With no deadlines, work was still running long after the load ended and the lab had to stop "
          "it, so that mode's figure is a lower bound.");
    }
  }

  // Retries, and what each request cost the database.
  const bool retried = std::any_of(modes.begin(), modes.end(), [](const json::value* m) {
    auto r = Fig(m, "retries");
    return r && *r > 0;
  });
  if (retried) {
    const std::string retries = PerMode(modes, [](const json::value* m) -> std::optional<std::string> {
      if (auto v = Fig(m, "retries")) return Count(*v);
      return std::nullopt;
    });
    if (!retries.empty()) {
      std::string s = "Retries of failed requests: " + retries;
      if (std::string per = PerMode(modes,
                                    [](const json::value* m) -> std::optional<std::string> {
                                      auto db = Fig(m, "db_seconds"), sent = Fig(m, "requests");
                                      if (!db || !sent || *sent <= 0) return std::nullopt;
                                      return Display(*db / *sent, 2) + " s";
                                    });
          !per.empty()) {
        s += "; database statement time per " + std::string(kind.plural.substr(0, kind.plural.size() - 1)) +
             " sent, retries included: " + per;
      }
      out.push_back(s + ".");
    }
  }
  return out;
}

// Sums of a figure over the scenarios, per mode; a mode none of whose scenarios has it has none.
std::array<std::optional<double>, 3> Total(const std::vector<Modes>& scenarios, std::string_view key) {
  std::array<std::optional<double>, 3> sums;
  for (const Modes& modes : scenarios) {
    for (std::size_t i = 0; i < modes.size(); ++i) {
      if (auto v = Fig(modes[i], key)) sums[i] = std::clamp(sums[i].value_or(0) + *v, -kLimit, kLimit);
    }
  }
  return sums;
}

// The sentences about the whole run: what differs between the modes.
std::vector<std::string> RunInWords(const std::vector<std::string_view>& names, const std::vector<Modes>& all) {
  std::vector<std::string> out;
  // The orders scenario is about what users are told: its statements are the sagas' own
  // bookkeeping, and its requests are orders, not valuations; it has a sentence of its own.
  std::vector<Modes> reads;
  for (std::size_t s = 0; s < all.size(); ++s) {
    if (!KindOf(names[s], all[s]).orders) reads.push_back(all[s]);
  }
  const auto zombie = Total(reads, "zombie_seconds"), db = Total(reads, "db_seconds");
  std::array<std::optional<std::string>, 3> share;
  for (std::size_t i = 0; i < 3; ++i) {
    if (zombie[i] && db[i] && *db[i] > 0) share[i] = Percent(*zombie[i] / *db[i]);
  }
  if (share[2] && (share[0] || share[1])) {
    std::vector<std::string> others;
    for (std::size_t i : {1u, 0u}) {
      if (share[i]) others.push_back(*share[i] + " " + std::string(kModes[i].phrase));
    }
    out.push_back(
        "Work nobody waited for (statements still running after their caller had its answer or had "
        "given up): " +
        *share[2] + " of the database's statement time under cutoff, against " + JoinAnd(others) +
        (reads.size() > 1 ? " (all scenarios together)." : "."));
  }

  // The cheap lookups of the scenarios that have them.
  std::vector<Modes> with_fast;
  std::vector<std::string> fast_names;
  for (std::size_t s = 0; s < all.size(); ++s) {
    if (HasFastRequests(all[s])) {
      with_fast.push_back(all[s]);
      fast_names.emplace_back(names[s]);
    }
  }
  if (!with_fast.empty()) {
    const auto ok = Total(with_fast, "fast_ok"), sent = Total(with_fast, "fast_requests");
    const auto queued = Total(with_fast, "pool_queued_s");
    std::vector<std::string> parts;
    for (std::size_t i : kSentenceOrder) {
      if (ok[i] && sent[i])
        parts.push_back(Count(*ok[i]) + " of " + Count(*sent[i]) + " " + std::string(kModes[i].phrase));
    }
    if (parts.size() >= 2) {
      std::string s = "Cheap lookups answered in full: " + JoinAnd(parts);
      if (queued[2] && queued[1] && *queued[1] != *queued[2]) {
        s += "; callers queued for a database connection " + Display(*queued[2], 1) + " s under cutoff, against " +
             Display(*queued[1], 1) + " s under per-layer timeouts";
      }
      out.push_back(s + " (" + JoinAnd(fast_names) + (fast_names.size() > 1 ? " together)." : ")."));
    }
  }

  // The slow requests, but an overload run's (which are meant to complete, and whose result
  // is said below).
  std::vector<Modes> steady;
  for (std::size_t s = 0; s < all.size(); ++s) {
    const Kind kind = KindOf(names[s], all[s]);
    if (!kind.overload && !kind.orders) steady.push_back(all[s]);
  }
  const auto ok = Total(steady, "ok"), partial = Total(steady, "partial"), sent = Total(steady, "requests");
  if (std::all_of(ok.begin(), ok.end(), [](const auto& v) { return !v || *v == 0; }) &&
      std::any_of(ok.begin(), ok.end(), [](const auto& v) { return v.has_value(); })) {
    std::string s = "No valuation request or GraphQL operation was answered in full in any mode";
    std::vector<std::string> parts;
    for (std::size_t i : kSentenceOrder) {
      if (partial[i] && sent[i])
        parts.push_back(Count(*partial[i]) + " of " + Count(*sent[i]) + " " + std::string(kModes[i].phrase));
    }
    if (parts.size() >= 2) s += "; answered partially (what fit in the budget): " + JoinAnd(parts);
    out.push_back(s + ".");
  } else {
    std::vector<std::string> parts;
    for (std::size_t i : kSentenceOrder) {
      if (ok[i] && sent[i])
        parts.push_back(Count(*ok[i]) + " of " + Count(*sent[i]) + " " + std::string(kModes[i].phrase));
    }
    if (parts.size() >= 2)
      out.push_back("Valuation requests and GraphQL operations answered in full: " + JoinAnd(parts) + ".");
  }

  // Orders: what users were told against what the two services did.
  for (std::size_t s = 0; s < all.size(); ++s) {
    const Modes& modes = all[s];
    if (!KindOf(names[s], modes).orders) continue;
    const auto lies = Fig(modes[2], "false_failures"), orphans = Fig(modes[2], "orphan_shipments");
    const auto open = Fig(modes[2], "left_unsettled"), still = Fig(modes[2], "unsettled");
    const auto their_lies = Fig(modes[1], "false_failures"), their_orphans = Fig(modes[1], "orphan_shipments");
    if (!lies || !orphans || !their_lies || !their_orphans) continue;
    std::string line = "Orders, a saga across two services: users told their order failed although it shipped " +
                       Count(*lies) + " under cutoff, against " + Count(*their_lies) +
                       " under per-layer timeouts; shipments booked with their stock released " + Count(*orphans) +
                       " against " + Count(*their_orphans);
    if (open && still && *open > 0)
      line += "; cutoff's " + Count(*open) + " sagas left ambiguous " +
              (*still == 0 ? std::string("were all settled by resuming them") : Count(*still) + " still open after resuming");
    out.push_back(line + ".");
    break;
  }

  // Overload runs: how much of the capacity stayed useful, and how soon the services were back.
  for (std::size_t s = 0; s < all.size(); ++s) {
    const Modes& modes = all[s];
    if (!KindOf(names[s], modes).overload) continue;
    const auto ratio = Fig(modes[2], "goodput_ratio");
    const auto recovery = RecoveryInWords(modes[2]);
    if (!ratio || !recovery) continue;
    std::vector<std::string> others;
    for (std::size_t i : {1u, 0u}) {
      const auto r = Fig(modes[i], "goodput_ratio");
      const auto back = RecoveryInWords(modes[i]);
      if (r && back) {
        others.push_back(Display(*r, 2) + " " + std::string(kModes[i].phrase) + ", back " + *back);
      }
    }
    if (others.empty()) continue;
    out.push_back("Offered three times their capacity by users who retry, the services kept " + Display(*ratio, 2) +
                  " of it as complete answers under cutoff and were back " + *recovery +
                  " after the excess stopped, against " + JoinAnd(others) + " (" + std::string(names[s]) + ").");
  }

  // The cut fields, where a scenario has them.
  for (std::size_t s = 0; s < all.size(); ++s) {
    const Modes& modes = all[s];
    if (!KindOf(names[s], modes).graphql) continue;
    std::vector<std::string> parts;
    for (std::size_t i : kSentenceOrder) {
      const auto total = Fig(modes[i], "cut_fields_total"), gone = Fig(modes[i], "cut_fields_gone");
      if (!total || !gone || *total <= 0) continue;
      std::string p;
      if (*gone >= *total) {
        p = (*total == 1 ? "the one" : "all " + Count(*total)) + " " + std::string(kModes[i].phrase);
      } else {
        p = Count(*gone) + " of " + Count(*total) + " " + std::string(kModes[i].phrase);
        if (auto longest = Fig(modes[i], "cut_outlived_max_ms")) {
          p += " (the others ran on for up to " + Display(*longest, 0) + " ms)";
        }
      }
      parts.push_back(p);
    }
    if (parts.empty()) continue;
    out.push_back(
        "GraphQL fields cut from partial answers whose statement had already stopped when the answer "
        "arrived: " +
        JoinAnd(parts) + ".");
  }
  return out;
}

}  // namespace
}  // namespace report

LabSummary SummarizeLab(const boost::json::value& results) {
  LabSummary summary;
  std::vector<std::string_view> names;
  std::vector<report::Modes> all;
  for (const boost::json::value* scenario : report::ScenarioList(results)) {
    const std::string_view name = report::String(report::Field(scenario, "name"));
    const report::Modes modes = report::ModesOf(*scenario);
    names.push_back(name);
    all.push_back(modes);
    summary.scenarios.emplace_back(std::string(name), report::ScenarioInWords(name, modes));
  }
  summary.run = report::RunInWords(names, all);
  return summary;
}

}  // namespace cutoff::lab
