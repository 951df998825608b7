#include "lab/report_html.hpp"

#include <boost/json/serialize.hpp>
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

namespace cutoff::lab {
namespace {

namespace json = boost::json;

// The three modes every scenario runs in, in column order, with their chart colours
// (distinguishable with the common colour-vision deficiencies, readable on white).
struct Mode {
  std::string_view key;
  std::string_view meaning;
  std::string_view color;
  std::string_view phrase;  // in a sentence: "under cutoff, ..."
};
constexpr std::array<Mode, 3> kModes{{
    {"none", "no deadlines", "#b2457e", "with no deadlines"},
    {"timeouts", "per-layer timeouts", "#d08300", "under per-layer timeouts"},
    {"cutoff", "deadline propagation", "#1f6fb2", "under cutoff"},
}};
// The order modes are named in sentences: cutoff first, against the other two.
constexpr std::array<std::size_t, 3> kSentenceOrder{2, 1, 0};

constexpr std::string_view kMissing = "\u2013";  // en dash
constexpr double kLimit = 1e15;                  // values beyond are clamped before any arithmetic

// ---- reading the document -------------------------------------------------------------

const json::value* Field(const json::value* v, std::string_view key) {
  if (!v || !v->is_object()) return nullptr;
  return v->get_object().if_contains(key);
}

std::optional<double> Number(const json::value* v) {
  if (!v) return std::nullopt;
  double d;
  switch (v->kind()) {
    case json::kind::int64: d = static_cast<double>(v->get_int64()); break;
    case json::kind::uint64: d = static_cast<double>(v->get_uint64()); break;
    case json::kind::double_: d = v->get_double(); break;
    default: return std::nullopt;
  }
  if (!std::isfinite(d)) return std::nullopt;
  return std::clamp(d, -kLimit, kLimit);
}

std::string_view String(const json::value* v) {
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

// ---- text -----------------------------------------------------------------------------

// Text or an attribute value: markup characters become references, control characters
// (which HTML does not allow) the replacement character.
void AppendHtml(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\n':
      case '\t': out += c; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == '\x7f') {
          out += "&#xFFFD;";
        } else {
          out += c;
        }
    }
  }
}

// JSON text that is safe inside <script>: '<', '>' and '&' only occur inside JSON strings,
// where their \u escapes mean the same, so no "</script" or "<!--" can appear; U+2028 and
// U+2029 are escaped for consumers that read the text as JavaScript.
void AppendScriptJson(std::string& out, const json::value& v) {
  const std::string text = json::serialize(v);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
}

// `v` with `decimals` digits after the point, independent of the locale; -0 prints as 0.
std::string Fixed(double v, int decimals) {
  if (!std::isfinite(v)) return std::string(kMissing);
  v = std::clamp(v, -kLimit, kLimit);
  if (std::abs(v) < 0.5 * std::pow(10.0, -decimals)) v = 0.0;
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  return std::string(buf, r.ptr);
}

// The shortest text that reads back as `v` (settings are shown as written).
std::string Shortest(double v) {
  if (!std::isfinite(v)) return std::string(kMissing);
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// A figure for people: fixed decimals, thousands separated from 10,000 on.
std::string Display(double v, int decimals) {
  std::string s = Fixed(v, decimals);
  const std::size_t begin = s[0] == '-' ? 1 : 0;
  const std::size_t end = std::min(s.find('.'), s.size());
  if (end - begin > 4) {
    for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(end) - 3; i > static_cast<std::ptrdiff_t>(begin); i -= 3) {
      s.insert(static_cast<std::size_t>(i), ",");
    }
  }
  return s;
}

// Counts are integers; a count that is not is shown with two decimals rather than rounded.
int CountDecimals(double v) { return v == std::floor(v) ? 0 : 2; }

// An SVG coordinate.
std::string C(double v) { return Fixed(std::clamp(v, -1e6, 1e6), 1); }

// ---- axes -----------------------------------------------------------------------------

struct Axis {
  double lo = 0, hi = 1, step = 1;
  int decimals = 0;

  int ticks() const { return static_cast<int>(std::lround((hi - lo) / step)); }
  double at(int i) const { return lo + step * i; }
};

// The smallest round range covering [lo, hi] in at most `max_steps` steps of 1, 2 or 5 times
// a power of ten (or 25 times, which reads well too).
Axis NiceAxis(double lo, double hi, int max_steps) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi - lo < 1e-9) hi = lo + 1;
  const double mag = std::pow(10.0, std::floor(std::log10((hi - lo) / max_steps)));
  Axis axis{lo, hi, hi - lo, 0};  // degenerate input: just the ends
  for (double factor : {1.0, 2.0, 2.5, 5.0, 10.0, 20.0}) {
    const double step = factor * mag;
    if (factor == 2.5 && step < 10) continue;
    const Axis candidate{std::floor(lo / step) * step, std::ceil(hi / step) * step, step, 0};
    if (candidate.step > 0 && std::isfinite(candidate.step) && candidate.ticks() >= 1 &&
        candidate.ticks() <= max_steps) {
      axis = candidate;
      break;
    }
  }
  for (double scaled = axis.step; axis.decimals < 6; scaled *= 10, ++axis.decimals) {
    if (std::abs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, std::abs(scaled))) break;
  }
  return axis;
}

// ---- charts ---------------------------------------------------------------------------

struct Sample {
  double t;
  double y;
};

struct Series {
  const Mode* mode;
  std::vector<Sample> samples;
};

// The samples of one timeline field, in time order; samples without both numbers are skipped.
std::vector<Sample> Timeline(const json::value* mode, std::string_view key) {
  std::vector<Sample> out;
  const json::value* timeline = Field(mode, "timeline");
  if (!timeline || !timeline->is_array()) return out;
  for (const json::value& sample : timeline->get_array()) {
    const auto t = Number(Field(&sample, "t"));
    const auto y = Number(Field(&sample, key));
    if (t && y) out.push_back({*t, *y});
  }
  std::stable_sort(out.begin(), out.end(), [](const Sample& a, const Sample& b) { return a.t < b.t; });
  return out;
}

// Chart geometry (SVG user units; the chart scales to its box, and its text is made larger on
// narrow screens, see kStyle).
constexpr double kWidth = 560, kHeight = 250;
constexpr double kLeft = 56, kRight = 16, kTop = 18, kBottom = 44;

struct Frame {
  Axis x, y;
  double left, right, top, bottom;
  double px(double v) const { return left + (v - x.lo) / (x.hi - x.lo) * (right - left); }
  double py(double v) const { return bottom - (v - y.lo) / (y.hi - y.lo) * (bottom - top); }
};

// A chart's box: its caption and, under it, what it shows (a definition, not a tooltip: it
// must read on a phone too).
void OpenFigure(std::string& out, std::string_view kind, std::string_view id, std::string_view scenario,
                std::string_view caption, std::string_view definition) {
  out += "<figure class=\"chart-box\" id=\"";
  out += id;
  out += "\" data-chart=\"";
  out += kind;
  out += "\" data-scenario=\"";
  AppendHtml(out, scenario);
  out += "\"><figcaption>";
  AppendHtml(out, caption);
  out += "</figcaption>\n<p class=\"def\">";
  AppendHtml(out, definition);
  out += "</p>\n";
}

// Horizontal grid lines with their labels, and the axis titles.
void YGrid(std::string& out, const Frame& f, std::string_view y_label) {
  out += "<g class=\"grid\">";
  for (int i = 0; i <= f.y.ticks(); ++i) {
    const double y = f.py(f.y.at(i));
    out += "<line x1=\"" + C(f.left) + "\" x2=\"" + C(f.right) + "\" y1=\"" + C(y) + "\" y2=\"" + C(y) + "\"/>";
  }
  out += "</g>\n<g class=\"ticks\" text-anchor=\"end\">";
  for (int i = 0; i <= f.y.ticks(); ++i) {
    out += "<text x=\"" + C(f.left - 6) + "\" y=\"" + C(f.py(f.y.at(i)) + 3.5) + "\">" +
           Display(f.y.at(i), f.y.decimals) + "</text>";
  }
  out += "</g>\n<line class=\"axis\" x1=\"" + C(f.left) + "\" x2=\"" + C(f.right) + "\" y1=\"" + C(f.bottom) +
         "\" y2=\"" + C(f.bottom) + "\"/>\n";
  out += "<text class=\"axis-label\" transform=\"translate(13 " + C((f.top + f.bottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">";
  AppendHtml(out, y_label);
  out += "</text>\n";
}

// The key of a chart, as HTML under it (it wraps on a narrow screen, text in an SVG cannot).
struct Key {
  std::string_view mode;   // data-mode, or empty
  std::string_view color;
  std::string label;
  std::string_view style;  // "line", "dashed", "box"
};

void Legend(std::string& out, const std::vector<Key>& keys) {
  out += "<ul class=\"legend\">";
  for (const Key& k : keys) {
    out += "<li";
    if (!k.mode.empty()) {
      out += " data-mode=\"";
      out += k.mode;
      out += "\"";
    }
    out += "><span class=\"key ";
    out += k.style;
    out += "\" style=\"";
    out += k.style == "box" ? "background:" : "border-color:";
    out += k.color;
    out += "\"></span>";
    AppendHtml(out, k.label);
    out += "</li>";
  }
  out += "</ul>\n";
}

// A line per mode over time; `limits` are drawn as dashed horizontal lines (the pool size).
void LineChart(std::string& out, std::string_view kind, std::string_view id, std::string_view scenario,
               std::string_view caption, std::string_view definition, std::string_view y_label,
               const std::vector<Series>& series, const std::vector<double>& limits) {
  double t_lo = 0, t_hi = 0, y_lo = 0, y_hi = 0;
  bool any = false;
  for (const Series& s : series) {
    for (const Sample& p : s.samples) {
      t_lo = std::min(t_lo, p.t), t_hi = std::max(t_hi, p.t);
      y_lo = std::min(y_lo, p.y), y_hi = std::max(y_hi, p.y);
      any = true;
    }
  }
  for (double limit : limits) y_lo = std::min(y_lo, limit), y_hi = std::max(y_hi, limit);
  if (y_hi > 0) y_hi *= 1.04;  // room above the highest line
  const Frame f{NiceAxis(t_lo, t_hi, 6), NiceAxis(y_lo, y_hi, 6), kLeft, kWidth - kRight, kTop, kHeight - kBottom};

  OpenFigure(out, kind, id, scenario, caption, definition);
  out += "<svg class=\"chart\" viewBox=\"0 0 " + C(kWidth) + " " + C(kHeight) + "\" role=\"img\" aria-label=\"";
  AppendHtml(out, caption);
  out += "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  YGrid(out, f, y_label);
  out += "<g class=\"ticks\" text-anchor=\"middle\">";
  for (int i = 0; i <= f.x.ticks(); ++i) {
    const double x = f.px(f.x.at(i));
    out += "<line class=\"tick\" x1=\"" + C(x) + "\" x2=\"" + C(x) + "\" y1=\"" + C(f.bottom) + "\" y2=\"" +
           C(f.bottom + 4) + "\"/><text x=\"" + C(x) + "\" y=\"" + C(f.bottom + 16) + "\">" +
           Display(f.x.at(i), f.x.decimals) + "</text>";
  }
  out += "</g>\n<text class=\"axis-label\" x=\"" + C((f.left + f.right) / 2) + "\" y=\"" + C(kHeight - 6) +
         "\" text-anchor=\"middle\">seconds since start</text>\n";

  for (double limit : limits) {
    const double y = f.py(limit);
    out += "<line class=\"limit\" data-pool-size=\"" + Shortest(limit) + "\" x1=\"" + C(f.left) + "\" x2=\"" +
           C(f.right) + "\" y1=\"" + C(y) + "\" y2=\"" + C(y) + "\"/>";
    out += "<text class=\"limit-label\" x=\"" + C(f.right - 4) + "\" y=\"" + C(y - 4) +
           "\" text-anchor=\"end\">pool size " + Display(limit, CountDecimals(limit)) + "</text>\n";
  }
  for (const Series& s : series) {
    if (s.samples.empty()) continue;
    out += "<path class=\"series\" data-mode=\"";
    out += s.mode->key;
    out += "\" data-points=\"" + std::to_string(s.samples.size()) + "\" stroke=\"";
    out += s.mode->color;
    out += "\" d=\"";
    char command = 'M';
    for (const Sample& p : s.samples) {
      out += command;
      out += C(f.px(p.t)) + "," + C(f.py(p.y));
      command = 'L';
    }
    if (s.samples.size() == 1) out += "h0";  // a dot (round caps)
    out += "\"><title>";
    out += s.mode->key;
    out += "</title></path>\n";
  }
  if (!any) {
    out += "<text class=\"empty\" x=\"" + C((f.left + f.right) / 2) + "\" y=\"" + C((f.top + f.bottom) / 2) +
           "\" text-anchor=\"middle\">no timeline samples</text>\n";
  }
  out += "</svg>\n";
  std::vector<Key> keys;
  for (const Series& s : series) {
    std::string label(s.mode->key);
    if (s.samples.empty()) label += " (no samples)";
    keys.push_back({s.mode->key, s.mode->color, label, "line"});
  }
  if (!limits.empty()) keys.push_back({"", "#57606a", "pool size", "dashed"});
  Legend(out, keys);
  out += "</figure>\n";
}

// A percentage for a CSS width, 0 to 100.
std::string Width(double part, double whole) {
  if (!(whole > 0) || !(part > 0)) return "0";
  return Fixed(std::clamp(100.0 * part / whole, 0.0, 100.0), 1);
}
// ---- the figures of a scenario, and what they say ---------------------------------------

using Modes = std::array<const json::value*, 3>;  // kModes order; null where a mode is absent

std::optional<double> Fig(const json::value* mode, std::string_view key) { return Number(Field(mode, key)); }

Modes ModesOf(const json::value& scenario) {
  const json::value* modes_value = Field(&scenario, "modes");
  Modes modes{};
  for (std::size_t i = 0; i < kModes.size(); ++i) {
    const json::value* mode = Field(modes_value, kModes[i].key);
    modes[i] = mode && mode->is_object() ? mode : nullptr;
  }
  return modes;
}

// What a scenario's slow requests are.
struct Kind {
  std::string_view noun;    // a heading: "Valuation requests"
  std::string_view plural;  // in a sentence: "valuation requests"
  std::string_view what;    // what one is
  bool graphql;             // its result is the cut fields
};

Kind KindOf(std::string_view name, const Modes& modes) {
  bool cut = false;
  for (const json::value* m : modes) cut = cut || Field(m, "cut_fields") || Field(m, "cut_fields_total");
  if (name == "chain" || name == "amplification") {
    return {"Valuation requests", "valuation requests",
            "each asks for warehouse 1's name and stockValuation; the valuation takes longer than the budget in "
            "every mode",
            false};
  }
  if (name == "graphql" || cut) {
    return {"Operations", "operations",
            "each is one GraphQL operation asking for every warehouse's name, stockValuation and first bins, "
            "resolved concurrently",
            true};
  }
  return {"Requests", "requests", "the scenario's requests", false};
}

// An errors object's codes, the most frequent first (then by name).
std::vector<std::pair<std::string, double>> Codes(const json::value* mode, std::string_view key) {
  std::vector<std::pair<std::string, double>> codes;
  const json::value* errors = Field(mode, key);
  if (!errors || !errors->is_object()) return codes;
  for (const auto& [code, count] : errors->get_object()) {
    if (auto n = Number(&count)) codes.emplace_back(std::string(code), *n);
  }
  std::stable_sort(codes.begin(), codes.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return codes;
}

std::string Count(double v) { return Display(v, CountDecimals(v)); }

// A share (0.964) as a percentage: "96%", "1.0%", "0.4%", "0%".
std::string Percent(double share) {
  const double p = share * 100;
  return Display(p, p != 0 && std::abs(p) < 9.95 ? 1 : 0) + "%";
}

std::string Capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

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
    s += ", and the statements behind " + Count(*total - *gone) + " of them were still running when the answer "
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

// The sentences of one scenario.
std::vector<std::string> ScenarioInWords(std::string_view name, const Modes& modes) {
  std::vector<std::string> out;
  const Kind kind = KindOf(name, modes);
  const bool any_fast = std::any_of(modes.begin(), modes.end(), [](const json::value* m) {
    auto n = Fig(m, "fast_requests");
    return n && *n > 0;
  });
  const bool none_complete = std::all_of(modes.begin(), modes.end(), [](const json::value* m) {
    auto ok = Fig(m, "ok");
    return !m || (ok && *ok == 0);
  });

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
  if (std::string p50 = PerMode(modes, [](const json::value* m) -> std::optional<std::string> {
        if (auto v = Fig(m, "p50_ms")) return Display(*v, 0) + " ms";
        return std::nullopt;
      });
      !p50.empty()) {
    out.push_back("Median time until the answer, or until the user gave up: " + p50 + ".");
  }

  // The cheap lookups, and the connections they waited for.
  if (any_fast) {
    if (std::string answered = PerMode(modes, [](const json::value* m) -> std::optional<std::string> {
          auto ok = Fig(m, "fast_ok"), sent = Fig(m, "fast_requests");
          if (!ok || !sent) return std::nullopt;
          return Count(*ok) + " of " + Count(*sent);
        });
        !answered.empty()) {
      out.push_back("Cheap lookups answered in full: " + answered + ".");
    }
  }
  if (!AllEqual(modes, "pool_queued_s")) {
    if (std::string queued = PerMode(modes, [](const json::value* m) -> std::optional<std::string> {
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

  // Goodput, or for partial answers what was answered at all.
  if (!AllEqual(modes, "goodput_rps") || !AllEqual(modes, "answered_rps")) {
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
      out.push_back("Goodput is 0 in every mode, since nothing was answered in full; answers with data (partial "
                    "ones) per second: " + a + ".");
    }
  }

  // The database's side.
  if (std::string share = PerMode(modes, [](const json::value* m) -> std::optional<std::string> {
        if (auto v = Fig(m, "zombie_share")) return Percent(*v);
        return std::nullopt;
      });
      !share.empty()) {
    std::string s = "Share of the database's statement time nobody waited for: " + share;
    if (auto ran_on = Fig(modes[2], "zombie_statements"); ran_on && *ran_on == 0) {
      s += "; under cutoff, no statement ran on more than 5 ms after its caller had the answer";
    } else if (auto p99 = Fig(modes[2], "overshoot_p99_ms")) {
      s += "; under cutoff, a statement still running when its caller had the answer ended within " +
           Display(*p99, 0) + " ms of it (p99)";
    }
    out.push_back(s + ".");
    if (const json::value* drained = Field(modes[0], "drained"); drained && drained->is_bool() && !drained->get_bool()) {
      out.push_back("With no deadlines, work was still running long after the load ended and the lab had to stop "
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
      if (std::string per = PerMode(modes, [](const json::value* m) -> std::optional<std::string> {
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
  const auto zombie = Total(all, "zombie_seconds"), db = Total(all, "db_seconds");
  std::array<std::optional<std::string>, 3> share;
  for (std::size_t i = 0; i < 3; ++i) {
    if (zombie[i] && db[i] && *db[i] > 0) share[i] = Percent(*zombie[i] / *db[i]);
  }
  if (share[2] && (share[0] || share[1])) {
    std::vector<std::string> others;
    for (std::size_t i : {1u, 0u}) {
      if (share[i]) others.push_back(*share[i] + " " + std::string(kModes[i].phrase));
    }
    out.push_back("Work nobody waited for (statements still running after their caller had its answer or had "
                  "given up): " + *share[2] + " of the database's statement time under cutoff, against " +
                  JoinAnd(others) + (all.size() > 1 ? " (all scenarios together)." : "."));
  }

  // The cheap lookups of the scenarios that have them.
  std::vector<Modes> with_fast;
  std::vector<std::string> fast_names;
  for (std::size_t s = 0; s < all.size(); ++s) {
    if (std::any_of(all[s].begin(), all[s].end(), [](const json::value* m) {
          auto n = Fig(m, "fast_requests");
          return n && *n > 0;
        })) {
      with_fast.push_back(all[s]);
      fast_names.emplace_back(names[s]);
    }
  }
  if (!with_fast.empty()) {
    const auto ok = Total(with_fast, "fast_ok"), sent = Total(with_fast, "fast_requests");
    const auto queued = Total(with_fast, "pool_queued_s");
    std::vector<std::string> parts;
    for (std::size_t i : kSentenceOrder) {
      if (ok[i] && sent[i]) parts.push_back(Count(*ok[i]) + " of " + Count(*sent[i]) + " " + std::string(kModes[i].phrase));
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

  // The slow requests.
  const auto ok = Total(all, "ok"), partial = Total(all, "partial"), sent = Total(all, "requests");
  if (std::all_of(ok.begin(), ok.end(), [](const auto& v) { return !v || *v == 0; }) &&
      std::any_of(ok.begin(), ok.end(), [](const auto& v) { return v.has_value(); })) {
    std::string s = "No valuation request or GraphQL operation was answered in full in any mode";
    std::vector<std::string> parts;
    for (std::size_t i : kSentenceOrder) {
      if (partial[i] && sent[i]) parts.push_back(Count(*partial[i]) + " of " + Count(*sent[i]) + " " + std::string(kModes[i].phrase));
    }
    if (parts.size() >= 2) s += "; answered partially (what fit in the budget): " + JoinAnd(parts);
    out.push_back(s + ".");
  } else {
    std::vector<std::string> parts;
    for (std::size_t i : kSentenceOrder) {
      if (ok[i] && sent[i]) parts.push_back(Count(*ok[i]) + " of " + Count(*sent[i]) + " " + std::string(kModes[i].phrase));
    }
    if (parts.size() >= 2) out.push_back("Valuation requests and GraphQL operations answered in full: " + JoinAnd(parts) + ".");
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
    out.push_back("GraphQL fields cut from partial answers whose statement had already stopped when the answer "
                  "arrived: " + JoinAnd(parts) + ".");
  }
  return out;
}
// ---- the comparison table -------------------------------------------------------------

enum class Better { neither, higher, lower };

struct Figure {
  std::string_view key;
  std::string_view label;
  std::string_view unit;
  int decimals;  // -1: a count
  Better better;
  std::string_view definition;
  double scale = 1;  // shown times this (a share as a percentage)
};

using Values = std::array<std::optional<double>, 3>;

// One table row, its definition under its name; the best value is marked when the values differ.
void FigureRow(std::string& out, std::string_view key, std::string_view label, std::string_view unit,
               std::string_view definition, bool sub, int decimals, Better better, const Values& values) {
  bool marked = false;  // whether a best value is marked
  double best = 0;
  if (better != Better::neither) {
    int present = 0;
    for (const auto& v : values) {
      if (!v) continue;
      if (present++ == 0 || (better == Better::higher ? *v > best : *v < best)) best = *v;
    }
    marked = present >= 2 &&
             std::any_of(values.begin(), values.end(), [&](const auto& v) { return v && *v != best; });
  }
  out += "<tr data-figure=\"";
  AppendHtml(out, key);
  out += sub ? "\" class=\"sub\"><th scope=\"row\">" : "\"><th scope=\"row\">";
  AppendHtml(out, label);
  if (!unit.empty()) {
    out += " <span class=\"unit\">";
    AppendHtml(out, unit);
    out += "</span>";
  }
  if (!definition.empty()) {
    out += "<span class=\"def\">";
    AppendHtml(out, definition);
    out += "</span>";
  }
  out += "</th>";
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += "<td data-mode=\"";
    out += kModes[i].key;
    out += "\"";
    if (marked && values[i] && *values[i] == best) out += " class=\"best\"";
    out += ">";
    out += values[i] ? Display(*values[i], decimals < 0 ? CountDecimals(*values[i]) : decimals) : std::string(kMissing);
    out += "</td>";
  }
  out += "</tr>\n";
}

class FiguresTable {
 public:
  FiguresTable(std::string& out, const Modes& modes) : out_(out), modes_(modes) {}

  Values values(std::string_view key, double scale = 1) const {
    Values v;
    for (std::size_t i = 0; i < modes_.size(); ++i) {
      if (auto n = Fig(modes_[i], key)) v[i] = std::clamp(*n * scale, -kLimit, kLimit);
    }
    return v;
  }
  bool has(std::string_view key) const {
    const Values v = values(key);
    return std::any_of(v.begin(), v.end(), [](const auto& x) { return x.has_value(); });
  }
  bool has_object(std::string_view key) const {
    return std::any_of(modes_.begin(), modes_.end(), [&](const json::value* m) {
      const json::value* o = Field(m, key);
      return o && o->is_object();
    });
  }

  // A group of rows under a heading with its definition; the group is written with its first row.
  void group(std::string_view id, std::string_view title, std::string definition) {
    pending_ = "<tbody data-group=\"" + std::string(id) + "\"><tr class=\"group\"><th scope=\"rowgroup\" colspan=\"4\">";
    AppendHtml(pending_, title);
    if (!definition.empty()) {
      pending_ += "<span class=\"def\">";
      AppendHtml(pending_, definition);
      pending_ += "</span>";
    }
    pending_ += "</th></tr>\n";
  }

  // A figure no mode recorded (one a scenario does not have) gets no row.
  void row(const Figure& f, std::string_view definition = {}) {
    const Values v = values(f.key, f.scale);
    if (std::none_of(v.begin(), v.end(), [](const auto& x) { return x.has_value(); })) return;
    begin_row();
    FigureRow(out_, f.key, f.label, f.unit, definition.empty() ? f.definition : definition, false, f.decimals,
              f.better, v);
  }

  // A row per code any mode reported in the errors object `key` (sorted by name); a mode with
  // the object and without the code has 0 of it.
  void codes(std::string_view key) {
    std::set<std::string> codes;
    for (const json::value* m : modes_) {
      for (const auto& [code, n] : Codes(m, key)) codes.insert(code);
    }
    for (const std::string& code : codes) {
      Values counts;
      for (std::size_t i = 0; i < modes_.size(); ++i) {
        const json::value* errors = Field(modes_[i], key);
        if (!errors || !errors->is_object()) continue;
        const json::value* count = errors->get_object().if_contains(code);
        counts[i] = count ? Number(count) : std::optional<double>(0.0);
      }
      begin_row();
      FigureRow(out_, std::string(key) + "." + code, code, "", "", true, -1, Better::neither, counts);
    }
  }

  // A row of the sum of an errors object's counts.
  void total(std::string_view key, std::string_view label, std::string_view definition) {
    Values totals;
    for (std::size_t i = 0; i < modes_.size(); ++i) {
      const json::value* errors = Field(modes_[i], key);
      if (!errors || !errors->is_object()) continue;
      totals[i] = 0.0;
      for (const auto& [code, n] : Codes(modes_[i], key)) totals[i] = std::clamp(*totals[i] + n, -kLimit, kLimit);
    }
    if (std::none_of(totals.begin(), totals.end(), [](const auto& x) { return x.has_value(); })) return;
    begin_row();
    FigureRow(out_, key, label, "", definition, false, -1, Better::neither, totals);
  }

  void end() {
    if (open_) out_ += "</tbody>\n";
    open_ = false;
  }

 private:
  void begin_row() {
    if (pending_.empty()) return;
    if (open_) out_ += "</tbody>\n";
    out_ += pending_;
    pending_.clear();
    open_ = true;
  }

  std::string& out_;
  const Modes& modes_;
  std::string pending_;
  bool open_ = false;
};

// A table's column header for `mode`: its swatch and name, and what the mode is when asked.
void ModeHeader(std::string& out, const Mode& mode, bool with_meaning) {
  out += "<th scope=\"col\" data-mode=\"";
  out += mode.key;
  out += "\"><span class=\"mode-name\"><span class=\"swatch\" style=\"background:";
  out += mode.color;
  out += "\"></span>";
  out += mode.key;
  out += "</span>";
  if (with_meaning) {
    out += "<small>";
    out += mode.meaning;
    out += "</small>";
  }
  out += "</th>";
}

void Table(std::string& out, std::string_view scenario, const Kind& kind, const Modes& modes,
           std::optional<double> user_ms) {
  out += "<div class=\"table-box\"><table class=\"figures\" data-scenario=\"";
  AppendHtml(out, scenario);
  out += "\">\n<thead><tr><th scope=\"col\">figure</th>";
  for (const Mode& mode : kModes) ModeHeader(out, mode, /*with_meaning=*/true);
  out += "</tr></thead>\n";

  FiguresTable t(out, modes);
  const std::string patience = user_ms ? " after " + Display(*user_ms, 0) + " ms" : std::string();
  t.group("slow", kind.noun, Capitalized(std::string(kind.what)) + ". Each is counted once: a retry is a request of its own.");
  t.row({"requests", "Sent", "", -1, Better::neither, "retries included"});
  t.row({"ok", "Answered in full", "", -1, Better::higher, "all the data asked for, and no error"});
  t.row({"partial", "Answered partially", "", -1, Better::neither,
         "data with field errors: what fit in the budget, the rest cut (see field errors)"});
  t.row({"failed", "Failed", "", -1, Better::lower, ""},
        "no data: the request failed, or the user gave up" + patience + "; by the code that failed it:");
  t.codes("request_errors");
  if (!t.has_object("request_errors") && t.has_object("errors")) {  // a document from before request_errors
    t.total("errors", "Errors", "every error code of every response, field and request errors together");
    t.codes("errors");
  }
  t.row({"p50_ms", "Latency p50", "ms", 1, Better::lower,
         "from sending until the answer, or until the user gave up, whatever the outcome"});
  t.row({"p99_ms", "Latency p99", "ms", 1, Better::lower, ""});
  t.row({"retries", "Retries", "", -1, Better::neither, "failed requests sent again after a short pause (in Sent)"});

  const Values fast = t.values("fast_requests");
  if (std::any_of(fast.begin(), fast.end(), [](const auto& v) { return v && *v > 0; })) {
    t.group("fast", "Cheap lookups",
            "One bin's stock, sent at the same rate alongside: each needs a database connection for a moment.");
    t.row({"fast_requests", "Sent", "", -1, Better::neither, ""});
    t.row({"fast_ok", "Answered in full", "", -1, Better::higher, ""});
    const Values partial = t.values("fast_partial");
    if (std::any_of(partial.begin(), partial.end(), [](const auto& v) { return v && *v > 0; })) {
      t.row({"fast_partial", "Answered partially", "", -1, Better::neither, ""});
    }
    t.row({"fast_failed", "Failed", "", -1, Better::lower, ""}, "no data; by the code that failed it:");
    t.codes("fast_request_errors");
    t.row({"fast_p99_ms", "Latency p99", "ms", 1, Better::lower, ""});
  }

  t.group("goodput", "Useful answers", "");
  t.row({"goodput_rps", "Goodput", "req/s", 1, Better::higher,
         "complete answers per second of load, both kinds: all the data asked for, no error, before the user gave "
         "up"});
  t.row({"answered_rps", "Answers with data", "req/s", 1, Better::higher,
         "complete or partial answers per second"});

  if (t.has_object("field_errors")) {
    t.group("field-errors", "Field errors",
            "Errors inside answers that had data, one per field left out (a cut valuation, a bins list not read "
            "in time): counted apart from failed requests, never added to them.");
    t.total("field_errors", "Field errors", "");
    t.codes("field_errors");
  }

  if (kind.graphql) {
    t.group("cut", "Cut fields",
            "Valuations left out of partial answers, and what became of the statement behind each one.");
    t.row({"valuations_asked", "Valuations asked for", "", -1, Better::neither,
           "stockValuation fields in the answers that had data"});
    t.row({"cut_fields_total", "Cut", "", -1, Better::neither, "left out of the answer with a field error"});
    t.row({"cut_fields_gone", "Statement already stopped", "", -1, Better::neither,
           "cut fields whose statement had ended when the answer arrived (or within 5 ms of it)"});
    t.row({"cut_outlived_p50_ms", "Statement ran on, p50", "ms", 1, Better::lower,
           "how long after the answer the statement behind a cut field ended (0: it already had; "
           "\u2013: nothing was cut)"});
    t.row({"cut_outlived_max_ms", "Statement ran on, longest", "ms", 1, Better::lower, ""});
  }

  t.group("db", "Database", "Statement time as the database saw it, each statement matched to the request that caused it.");
  t.row({"db_seconds", "Statement time", "s", 2, Better::neither, "statement-seconds spent on this mode's requests"});
  std::string zombie = "of that, the time after the caller had its answer or had given up";
  if (const json::value* d = Field(modes[0], "drained"); d && d->is_bool() && !d->get_bool()) {
    zombie += "; none: at least this (the lab stopped the work left running after the load)";
  }
  t.row({"zombie_seconds", "Work nobody waited for", "s", 2, Better::lower, ""}, zombie);
  t.row({"zombie_share", "Share nobody waited for", "%", 1, Better::lower, "of the statement time", 100});
  t.row({"zombie_statements", "Statements that ran on", "", -1, Better::lower,
         "still running more than 5 ms after their caller had its answer"});
  t.row({"overshoot_p50_ms", "Stop after the answer p50", "ms", 1, Better::lower,
         "of the statements still running when their caller had its answer, how long after it they ended"});
  t.row({"overshoot_p99_ms", "Stop after the answer p99", "ms", 1, Better::lower, ""});

  t.group("pool", "Connection pool", "The inventory service's database connections, sampled every 20 ms.");
  t.row({"pool_size", "Connections", "", -1, Better::neither, ""});
  t.row({"peak_pool_in_use", "Peak in use", "", -1, Better::lower, ""});
  t.row({"pool_queued_s", "Callers queued", "s", 2, Better::lower, "how long some caller was waiting for a connection"});
  t.row({"peak_pool_waiting", "Most callers queued at once", "", -1, Better::lower, ""});
  t.end();
  out += "</table></div>\n";
}
// ---- what each request got --------------------------------------------------------------

constexpr std::string_view kComplete = "#1a7f37", kPartial = "#8fd19e", kFailed = "#c5ccd3";
constexpr std::string_view kWaited = "#c5ccd3", kNobody = "#a40e26";

// A stacked bar per mode and kind of request: answered in full, partially, failed.
void OutcomesChart(std::string& out, std::string_view id, std::string_view scenario, const Kind& kind,
                   const Modes& modes) {
  OpenFigure(out, "outcomes", id, scenario, "What each request got",
             "Each bar is every request of its kind sent in that mode, retries included.");
  Legend(out, {{"", kComplete, "answered in full", "box"},
               {"", kPartial, "answered partially (data with field errors)", "box"},
               {"", kFailed, "failed (no data, or the user gave up)", "box"}});
  struct Group {
    std::string_view id, title, sent, ok, partial, failed;
  };
  std::vector<Group> groups{{"slow", kind.noun, "requests", "ok", "partial", "failed"}};
  if (std::any_of(modes.begin(), modes.end(), [](const json::value* m) {
        auto n = Fig(m, "fast_requests");
        return n && *n > 0;
      })) {
    groups.push_back({"fast", "Cheap lookups", "fast_requests", "fast_ok", "fast_partial", "fast_failed"});
  }
  for (const Group& g : groups) {
    out += "<div class=\"outcome-group\" data-kind=\"";
    out += g.id;
    out += "\"><h4>";
    AppendHtml(out, g.title);
    out += "</h4>\n";
    for (std::size_t i = 0; i < modes.size(); ++i) {
      const Mode& mode = kModes[i];
      const auto sent = Fig(modes[i], g.sent), ok = Fig(modes[i], g.ok);
      const auto partial = Fig(modes[i], g.partial), failed = Fig(modes[i], g.failed);
      out += "<div class=\"bar-row outcome\" data-mode=\"";
      out += mode.key;
      out += "\"><span class=\"who\"><span class=\"swatch\" style=\"background:";
      out += mode.color;
      out += "\"></span>";
      out += mode.key;
      out += "</span><span class=\"track\">";
      auto segment = [&](std::string_view cls, std::string_view color, const std::optional<double>& n) {
        if (!n || !sent) return;
        out += "<span class=\"seg ";
        out += cls;
        out += "\" data-count=\"" + Shortest(*n) + "\" style=\"width:" + Width(*n, *sent) + "%;background:";
        out += color;
        out += "\"></span>";
      };
      segment("complete", kComplete, ok);
      segment("partial", kPartial, partial);
      segment("failed", kFailed, failed);
      out += "</span><span class=\"counts\">";
      if (!sent || !ok || !partial || !failed) {
        out += std::string(kMissing) + " (not recorded)";
      } else if (*sent <= 0) {
        out += "none sent";
      } else {
        out += "<b>" + Count(*ok) + "</b> in full &#183; <b>" + Count(*partial) + "</b> partially &#183; <b>" +
               Count(*failed) + "</b> failed, of " + Count(*sent);
      }
      out += "</span></div>\n";
    }
    out += "</div>\n";
  }
  out += "</figure>\n";
}

// A bar per mode of the database's statement time, to one scale, its part nobody waited for
// dark.
void ZombieChart(std::string& out, std::string_view id, std::string_view scenario, const Modes& modes) {
  double longest = 0;
  for (const json::value* m : modes) {
    const auto db = Fig(m, "db_seconds"), zombie = Fig(m, "zombie_seconds");
    longest = std::max({longest, db.value_or(0), zombie.value_or(0)});
  }
  OpenFigure(out, "zombie", id, scenario, "Database time nobody waited for",
             "Each bar is the statement time the database spent on the mode's requests, all to one scale; the dark "
             "part ran after the caller already had its answer or had given up.");
  Legend(out, {{"", kWaited, "a caller was waiting", "box"}, {"", kNobody, "nobody waited for it", "box"}});
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const Mode& mode = kModes[i];
    const auto db = Fig(modes[i], "db_seconds"), zombie = Fig(modes[i], "zombie_seconds");
    const auto statements = Fig(modes[i], "zombie_statements");
    const json::value* drained = Field(modes[i], "drained");
    const bool lower_bound = drained && drained->is_bool() && !drained->get_bool();
    out += "<div class=\"bar-row bar\" data-mode=\"";
    out += mode.key;
    out += "\" data-value=\"" + (zombie ? Shortest(*zombie) : std::string()) + "\" data-db=\"" +
           (db ? Shortest(*db) : std::string()) + "\"><span class=\"who\"><span class=\"swatch\" style=\"background:";
    out += mode.color;
    out += "\"></span>";
    out += mode.key;
    out += "</span><span class=\"track\">";
    if (zombie) {
      const double waited = db ? std::max(0.0, *db - *zombie) : 0.0;
      out += "<span class=\"seg waited\" style=\"width:" + Width(waited, longest) + "%;background:";
      out += kWaited;
      out += "\"></span><span class=\"seg nobody\" style=\"width:" + Width(*zombie, longest) + "%;background:";
      out += kNobody;
      out += "\"></span>";
    }
    out += "</span><span class=\"counts\">";
    if (!zombie) {
      out += std::string(kMissing) + " (not recorded)";
    } else {
      out += "<b>" + std::string(lower_bound ? "at least " : "") + Display(*zombie, 2) + " s</b>";
      if (db) {
        out += " of " + Display(*db, 2) + " s";
        if (*db > 0) out += " (" + Percent(*zombie / *db) + ")";
      }
      if (statements) out += " &#183; " + Count(*statements) + (*statements == 1 ? " statement" : " statements") + " ran on";
    }
    out += "</span></div>\n";
  }
  out += "</figure>\n";
}

// ---- cut GraphQL fields ---------------------------------------------------------------

// "warehouses.10.x" after "warehouses.9.x": numbers compare as numbers.
bool NaturalLess(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && a[ei] >= '0' && a[ei] <= '9') ++ei;
      while (ej < b.size() && b[ej] >= '0' && b[ej] <= '9') ++ej;
      const std::string_view na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      const std::string_view ta = na.substr(std::min(na.find_first_not_of('0'), na.size()));
      const std::string_view tb = nb.substr(std::min(nb.find_first_not_of('0'), nb.size()));
      if (ta.size() != tb.size()) return ta.size() < tb.size();
      if (ta != tb) return ta < tb;
      i = ei, j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// The last partial answer of each mode: a row per field any of them cut, a column per mode.
void CutFields(std::string& out, std::string_view scenario, const Modes& modes) {
  bool any = false;
  std::set<std::string, bool (*)(std::string_view, std::string_view)> paths(
      [](std::string_view a, std::string_view b) { return NaturalLess(a, b); });
  std::array<std::map<std::string, std::optional<double>>, 3> cut;
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const json::value* fields = Field(modes[i], "cut_fields");
    if (!fields) continue;
    any = true;
    if (!fields->is_array()) continue;
    for (const json::value& field : fields->get_array()) {
      const std::string path(String(Field(&field, "path")));
      paths.insert(path);
      auto ms = Number(Field(&field, "outlived_ms"));
      auto [it, inserted] = cut[i].emplace(path, ms);
      if (!inserted && ms && (!it->second || *ms > *it->second)) it->second = ms;
    }
  }
  if (!any) return;
  out += "<figure class=\"chart-box cut-fields-box\" data-chart=\"cut-fields\" data-scenario=\"";
  AppendHtml(out, scenario);
  out += "\"><figcaption>The fields cut from each mode's last partial answer</figcaption>\n<p class=\"def\">How "
         "long after the answer the statement behind each cut field ended, in ms: 0 means it had already stopped. "
         "&#8220;not cut&#8221;: that answer had the field.</p>\n<table class=\"cut-fields\" data-scenario=\"";
  AppendHtml(out, scenario);
  out += "\">\n<thead><tr><th scope=\"col\">field</th>";
  for (const Mode& mode : kModes) ModeHeader(out, mode, /*with_meaning=*/false);
  out += "</tr></thead>\n<tbody>\n";
  std::size_t row = 0;
  for (const std::string& path : paths) {
    out += "<tr data-path=\"";
    AppendHtml(out, path);
    out += "\"><th scope=\"row\"><code>";
    if (path.empty()) out += kMissing;
    for (char c : path) {  // a line may break after each dot
      AppendHtml(out, std::string_view(&c, 1));
      if (c == '.') out += "<wbr>";
    }
    out += "</code></th>";
    for (std::size_t i = 0; i < modes.size(); ++i) {
      const json::value* fields = Field(modes[i], "cut_fields");
      const bool none_cut = fields && fields->is_array() && fields->get_array().empty();
      if (none_cut && row > 0) continue;  // one cell down the whole column
      out += "<td data-mode=\"";
      out += kModes[i].key;
      out += "\"";
      auto it = cut[i].find(path);
      if (none_cut) {
        out += " rowspan=\"" + std::to_string(paths.size()) + "\" class=\"muted nothing-cut\">no answer had a cut field";
      } else if (!fields || !fields->is_array()) {
        out += ">" + std::string(kMissing);
      } else if (it == cut[i].end()) {
        out += " class=\"muted\">not cut";
      } else {
        out += ">" + (it->second ? Display(*it->second, 1) : std::string(kMissing));
      }
      out += "</td>";
    }
    out += "</tr>\n";
    ++row;
  }
  if (paths.empty()) out += "<tr class=\"none-cut\"><td colspan=\"4\" class=\"muted\">no field was cut in any mode</td></tr>\n";
  out += "</tbody></table></figure>\n";
}

// ---- the page -------------------------------------------------------------------------

constexpr std::string_view kStyle = R"css(
:root{color-scheme:light;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#eef1f4;--panel:#f6f8fa;--best:#dcf5e3;--best-fg:#0f5c27}
*{box-sizing:border-box}
html{background:#fff;-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans","DejaVu Sans",sans-serif}
main{max-width:1200px;margin:0 auto;padding:24px 28px 40px}
h1{font-size:24px;margin:0 0 2px;letter-spacing:-.01em}
h2{font-size:18px;margin:0;line-height:1.3}
h3{font-size:15px;margin:0 0 6px}
h4{font-size:13px;margin:8px 0 4px}
code{font:12.5px/1.3 ui-monospace,"SFMono-Regular","DejaVu Sans Mono",Menlo,Consolas,monospace}
.meta{color:var(--muted);margin:0 0 10px}
.meta b{color:var(--fg);font-weight:600}
.summary{border:1px solid #9fc5e8;background:#f1f8ff;border-radius:8px;padding:10px 14px;margin:12px 0}
.summary ul,.words ul{margin:0;padding-left:20px}
.summary li{margin:3px 0}
.words{margin:0 0 14px;max-width:75em}
.words li{margin:2px 0}
.settings{display:flex;flex-wrap:wrap;gap:6px;margin:8px 0 10px;padding:0}
.settings div{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:1px 8px;font-size:12.5px}
.settings dt{display:inline;color:var(--muted)}
.settings dd{display:inline;margin:0 0 0 5px;font-variant-numeric:tabular-nums}
.modes{margin:0 0 4px;color:var(--muted);font-size:13px}
.modes span{margin-right:14px}
.modes>span{display:inline-block}
.modes b{color:var(--fg)}
nav{font-size:13px;margin:8px 0 0}
nav a{color:#0a58a5;text-decoration:none;margin-right:14px}
.warning{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:8px 12px;margin:10px 0}
.scenario{border-top:1px solid var(--line);margin-top:22px;padding-top:18px}
.cut-fields-box{margin-bottom:14px}
td.nothing-cut{white-space:normal;text-align:center;vertical-align:middle}
.scenario>header{display:flex;align-items:baseline;gap:10px;flex-wrap:wrap;margin-bottom:8px}
.scenario>header code{background:var(--soft);border-radius:4px;padding:1px 6px;color:var(--muted)}
.layout{display:grid;gap:14px;margin-bottom:14px;grid-template-columns:minmax(0,1.3fr) minmax(0,1fr);grid-template-rows:auto 1fr;grid-template-areas:"table key" "table time";align-items:start}
.layout>.table-box{grid-area:table}
.key-charts{grid-area:key}
.time-charts{grid-area:time}
@media (max-width:900px){.layout{grid-template-columns:minmax(0,1fr);grid-template-rows:auto;grid-template-areas:"key" "table" "time"}}
.side{display:flex;flex-direction:column;gap:14px;min-width:0}
.chart-box,.table-box{margin:0;border:1px solid var(--line);border-radius:8px;padding:10px 12px 8px;background:#fff;min-width:0}
figcaption{font-weight:600;font-size:13.5px}
.def{display:block;color:var(--muted);font-size:12px;font-weight:400;line-height:1.35;margin:1px 0 4px;white-space:normal}
p.def{margin:2px 0 6px}
svg.chart{display:block;width:100%;height:auto;font-size:14px;overflow:visible}
svg.chart text{fill:var(--muted)}
svg.chart .grid line{stroke:var(--soft)}
svg.chart line.axis,svg.chart line.tick{stroke:#8c959f}
svg.chart .series{fill:none;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}
svg.chart .limit{stroke:#57606a;stroke-width:1.5;stroke-dasharray:6 4}
svg.chart .limit-label{font-size:13px}
svg.chart .empty{font-size:15px}
.legend{list-style:none;margin:4px 0 2px;padding:0;display:flex;flex-wrap:wrap;gap:2px 14px;font-size:12.5px}
.legend li{display:flex;align-items:center;gap:6px}
.key{display:inline-block;width:18px;flex:none}
.key.line{border-top:3px solid}
.key.dashed{border-top:2px dashed}
.key.box{height:11px;border-radius:2px}
.bar-row{display:grid;grid-template-columns:6.8em minmax(0,1fr);gap:1px 8px;align-items:center;margin:5px 0}
.bar-row .who{font-weight:600;white-space:nowrap}
.track{display:flex;height:15px;background:var(--soft);border-radius:3px;overflow:hidden}
.seg{display:block;height:100%}
.bar-row .counts{grid-column:2;font-size:12.5px;color:var(--muted);font-variant-numeric:tabular-nums}
.bar-row .counts b{color:var(--fg);font-weight:600}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:3px 8px;border-bottom:1px solid var(--soft);text-align:right;white-space:nowrap}
thead th{border-bottom:1px solid var(--line);vertical-align:bottom;font-weight:600;white-space:normal}
thead th:first-child{text-align:left;color:var(--muted);font-weight:400}
thead th small{display:block;font-weight:400;color:var(--muted);font-size:11.5px}
tbody th{text-align:left;font-weight:400;white-space:normal;min-width:9em}
tr.group th{padding-top:12px;font-weight:600;font-size:13.5px;border-bottom:1px solid var(--line)}
tbody:first-of-type tr.group th{padding-top:6px}
tr.sub th{padding-left:22px;color:var(--muted);font-size:12.5px}
tr.sub td{color:var(--muted);font-size:12.5px}
.unit{color:var(--muted);font-size:12px}
td.best{background:var(--best);color:var(--best-fg);font-weight:600}
.best-key{display:inline-block;background:var(--best);color:var(--best-fg);font-weight:600;padding:0 5px;border-radius:3px}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
.mode-name{white-space:nowrap}
table.cut-fields th[scope=row]{min-width:0}
.muted{color:var(--muted)}
.notes{margin:0 0 4px;padding-left:20px;color:var(--muted)}
footer{border-top:1px solid var(--line);margin-top:26px;padding-top:12px;color:var(--muted);font-size:12.5px}
@media (max-width:640px){
main{padding:14px 10px 28px}
h1{font-size:21px}
.chart-box,.table-box{padding:8px 8px 6px}
th,td{padding:3px 4px}
tbody th{min-width:0}
tr.sub th{padding-left:12px}
thead th small,thead .swatch{display:none}
svg.chart{font-size:19px}
svg.chart .limit-label{font-size:17px}
svg.chart .empty{font-size:19px}
.bar-row{grid-template-columns:6.6em minmax(0,1fr)}
}
@media print{main{max-width:none;padding:0}.scenario{break-inside:avoid}}
)css";

void Settings(std::string& out, const json::value* settings) {
  if (!settings || !settings->is_object() || settings->get_object().empty()) return;
  out += "<dl class=\"settings\">";
  for (const auto& [key, value] : settings->get_object()) {
    out += "<div><dt>";
    AppendHtml(out, key);
    out += "</dt><dd>";
    switch (value.kind()) {
      case json::kind::string: AppendHtml(out, value.get_string()); break;
      case json::kind::int64: out += std::to_string(value.get_int64()); break;
      case json::kind::uint64: out += std::to_string(value.get_uint64()); break;
      case json::kind::double_: out += Shortest(value.get_double()); break;
      case json::kind::bool_: out += value.get_bool() ? "true" : "false"; break;
      case json::kind::null: out += kMissing; break;
      default: AppendHtml(out, json::serialize(value));
    }
    out += "</dd></div>";
  }
  out += "</dl>\n";
}

void Sentences(std::string& out, std::string_view cls, const std::vector<std::string>& sentences) {
  if (sentences.empty()) return;
  out += "<ul class=\"";
  out += cls;
  out += "\">";
  for (const std::string& s : sentences) {
    out += "<li>";
    AppendHtml(out, s);
    out += "</li>";
  }
  out += "</ul>\n";
}

void Scenario(std::string& out, const json::value& scenario, std::size_t index, const json::value* settings) {
  const std::string id = "s" + std::to_string(index);
  const std::string_view name = String(Field(&scenario, "name"));
  std::string_view title = String(Field(&scenario, "title"));
  const std::string fallback = "Scenario " + std::to_string(index + 1);
  if (title.empty()) title = name.empty() ? std::string_view(fallback) : name;
  const Modes modes = ModesOf(scenario);
  const Kind kind = KindOf(name, modes);

  out += "<section class=\"scenario\" id=\"scenario-" + std::to_string(index) + "\" data-scenario=\"";
  AppendHtml(out, name);
  out += "\">\n<header><h2>";
  AppendHtml(out, title);
  out += "</h2>";
  if (!name.empty()) {
    out += "<code>";
    AppendHtml(out, name);
    out += "</code>";
  }
  out += "</header>\n<div class=\"words\">";
  Sentences(out, "in-words", ScenarioInWords(name, modes));
  // Desktop: the table on the left, the charts beside it; narrow: what each request got and
  // the database's time first, then the table, then the timelines.
  out += "</div>\n<div class=\"layout\">";
  Table(out, name, kind, modes, Number(Field(settings, "user_ms")));
  out += "<div class=\"side key-charts\">";
  OutcomesChart(out, id + "-outcomes", name, kind, modes);
  ZombieChart(out, id + "-zombie", name, modes);
  out += "</div>\n<div class=\"side time-charts\">\n";

  std::vector<Series> pool, answers;
  std::vector<double> limits;
  // Partial answers are the GraphQL scenario's result: its chart counts them too (goodput,
  // complete answers only, is 0 there). Older documents have goodput only.
  std::string_view answers_key = kind.graphql ? "answered_rps" : "goodput_rps";
  if (kind.graphql && std::all_of(modes.begin(), modes.end(), [](const json::value* m) {
        return Timeline(m, "answered_rps").empty();
      })) {
    answers_key = "goodput_rps";
  }
  for (std::size_t i = 0; i < kModes.size(); ++i) {
    pool.push_back({&kModes[i], Timeline(modes[i], "pool_in_use")});
    answers.push_back({&kModes[i], Timeline(modes[i], answers_key)});
    if (auto size = Fig(modes[i], "pool_size"); size && std::find(limits.begin(), limits.end(), *size) == limits.end()) {
      limits.push_back(*size);
    }
  }
  LineChart(out, "pool", id + "-pool", name, "Pool occupancy over time",
            "Database connections in use, sampled every 100 ms. At the dashed line every connection is taken and "
            "callers queue.",
            "connections in use", pool, limits);
  if (answers_key == "answered_rps") {
    LineChart(out, "goodput", id + "-goodput", name, "Answers with data over time",
              "Complete or partial answers received in the last second, sampled every 100 ms. Here partial "
              "answers are the result: goodput counts complete answers only.",
              "answers/s", answers, {});
  } else {
    LineChart(out, "goodput", id + "-goodput", name, "Goodput over time",
              "Complete answers (all the data asked for, no error), both kinds, received in the last second, "
              "sampled every 100 ms.",
              "complete answers/s", answers, {});
  }
  out += "</div></div>\n";

  CutFields(out, name, modes);
  if (const json::value* notes = Field(&scenario, "notes"); notes && notes->is_array() && !notes->get_array().empty()) {
    out += "<ul class=\"notes\">";
    for (const json::value& note : notes->get_array()) {
      out += "<li>";
      if (note.is_string()) {
        AppendHtml(out, note.get_string());
      } else {
        AppendHtml(out, json::serialize(note));
      }
      out += "</li>";
    }
    out += "</ul>\n";
  }
  out += "</section>\n";
}

constexpr std::string_view kFooter = R"html(<footer>
Each figure is defined where it is shown; docs/lab.md explains how each is measured. In the tables,
<span class="best-key">green</span> marks the best value of a row where the modes differ, and
&#8220;&#8211;&#8221; a figure the run did not record.
The results document is embedded in this page as <code>script#lab-results</code>. Rendered by <code>cutoff lab report</code>.
</footer>
)html";

std::vector<const json::value*> ScenarioList(const json::value& results) {
  std::vector<const json::value*> list;
  const json::value* scenarios = Field(&results, "scenarios");
  if (!scenarios || !scenarios->is_array()) return list;
  for (const json::value& s : scenarios->get_array()) list.push_back(&s);
  return list;
}

}  // namespace

LabSummary SummarizeLab(const json::value& results) {
  LabSummary summary;
  std::vector<std::string_view> names;
  std::vector<Modes> all;
  for (const json::value* scenario : ScenarioList(results)) {
    const std::string_view name = String(Field(scenario, "name"));
    const Modes modes = ModesOf(*scenario);
    names.push_back(name);
    all.push_back(modes);
    summary.scenarios.emplace_back(std::string(name), ScenarioInWords(name, modes));
  }
  summary.run = RunInWords(names, all);
  return summary;
}

std::string RenderLabReport(const json::value& results) {
  std::string out;
  out.reserve(96 * 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "img-src data:\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<link rel=\"icon\" href=\"data:,\">\n<title>cutoff lab report";
  const std::string_view database = String(Field(&results, "database"));
  if (!database.empty()) {
    out += " (";
    AppendHtml(out, database);
    out += ")";
  }
  out += "</title>\n<style>";
  out += kStyle;
  out += "</style>\n</head>\n<body>\n<main>\n<header class=\"page\"><h1>cutoff lab report</h1>\n<p class=\"meta\">";

  const std::string_view generated = String(Field(&results, "generated_at"));
  const std::vector<const json::value*> scenarios = ScenarioList(results);
  const std::size_t count = scenarios.size();
  out += "Generated <b>";
  if (generated.empty()) {
    out += kMissing;
  } else {
    AppendHtml(out, generated);
  }
  out += "</b> &#183; database <b>";
  if (database.empty()) {
    out += kMissing;
  } else {
    AppendHtml(out, database);
  }
  out += "</b> &#183; " + std::to_string(count) + (count == 1 ? " scenario" : " scenarios") + "</p>\n";
  out += "<p class=\"modes\">";
  for (const Mode& mode : kModes) {
    out += "<span><span class=\"swatch\" style=\"background:";
    out += mode.color;
    out += "\"></span><b>";
    out += mode.key;
    out += "</b> ";
    out += mode.key == "none"       ? "no deadlines anywhere"
           : mode.key == "timeouts" ? "each layer has its own timeout, nothing propagated"
                                    : "the request's deadline propagated to every layer";
    out += "</span>";
  }
  out += "</p>\n";

  const LabSummary summary = SummarizeLab(results);
  if (!summary.run.empty()) {
    out += "<section class=\"summary\" id=\"summary\"><h3>What this run shows</h3>\n";
    Sentences(out, "in-words", summary.run);
    out += "</section>\n";
  }
  if (count > 1) {
    out += "<nav>";
    for (std::size_t i = 0; i < count; ++i) {
      std::string_view name = String(Field(scenarios[i], "name"));
      const std::string fallback = "Scenario " + std::to_string(i + 1);
      out += "<a href=\"#scenario-" + std::to_string(i) + "\">";
      AppendHtml(out, name.empty() ? std::string_view(fallback) : name);
      out += "</a>";
    }
    out += "</nav>\n";
  }
  const json::value* settings = Field(&results, "settings");
  Settings(out, settings);
  out += "</header>\n";

  if (!results.is_object()) {
    out += "<p class=\"warning\">The results document is not a JSON object; there is nothing to show.</p>\n";
  } else {
    const auto version = Number(Field(&results, "version"));
    if (!version || *version != 1) {
      out += "<p class=\"warning\">This page reads results version 1; the document says version ";
      out += version ? Shortest(*version) : std::string(kMissing);
      out += ". Figures it does not recognise are not shown.</p>\n";
    }
    if (count == 0) out += "<p class=\"warning\">The results document holds no scenarios.</p>\n";
  }
  for (std::size_t i = 0; i < count; ++i) Scenario(out, *scenarios[i], i, settings);

  out += kFooter;
  out += "</main>\n<script type=\"application/json\" id=\"lab-results\">";
  AppendScriptJson(out, results);
  out += "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace cutoff::lab
