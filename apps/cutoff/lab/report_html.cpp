#include "lab/report_html.hpp"

#include <boost/json/serialize.hpp>
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <optional>
#include <set>
#include <string_view>
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
};
constexpr std::array<Mode, 3> kModes{{
    {"none", "no deadlines", "#b2457e"},
    {"timeouts", "per-layer timeouts", "#d08300"},
    {"cutoff", "deadline propagation", "#1f6fb2"},
}};

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

// Chart geometry (SVG user units; the chart scales to its box).
constexpr double kWidth = 560, kHeight = 250;
constexpr double kLeft = 56, kRight = 16, kTop = 34, kBottom = 44;

struct Frame {
  Axis x, y;
  double left, right, top, bottom;
  double px(double v) const { return left + (v - x.lo) / (x.hi - x.lo) * (right - left); }
  double py(double v) const { return bottom - (v - y.lo) / (y.hi - y.lo) * (bottom - top); }
};

void OpenChart(std::string& out, std::string_view kind, std::string_view id, std::string_view scenario,
               std::string_view caption, double width, double height) {
  out += "<figure class=\"chart-box\"><figcaption>";
  AppendHtml(out, caption);
  out += "</figcaption>\n<svg class=\"chart\" id=\"";
  out += id;
  out += "\" data-chart=\"";
  out += kind;
  out += "\" data-scenario=\"";
  AppendHtml(out, scenario);
  out += "\" viewBox=\"0 0 " + C(width) + " " + C(height) + "\" role=\"img\" aria-label=\"";
  AppendHtml(out, caption);
  out += "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
}

void CloseChart(std::string& out) { out += "</svg></figure>\n"; }

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

// One item of a chart's legend, left to right from *x.
void LegendItem(std::string& out, double* x, std::string_view color, std::string_view label, bool dashed) {
  out += "<line x1=\"" + C(*x) + "\" x2=\"" + C(*x + 18) + "\" y1=\"14\" y2=\"14\" stroke=\"";
  out += color;
  out += dashed ? "\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>" : "\" stroke-width=\"2.5\"/>";
  out += "<text x=\"" + C(*x + 23) + "\" y=\"18\">";
  AppendHtml(out, label);
  out += "</text>";
  *x += 23 + 6.4 * static_cast<double>(label.size()) + 16;
}

// A line per mode over time; `limits` are drawn as dashed horizontal lines (the pool size).
void LineChart(std::string& out, std::string_view kind, std::string_view id, std::string_view scenario,
               std::string_view caption, std::string_view y_label, const std::vector<Series>& series,
               const std::vector<double>& limits) {
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
  const Frame f{NiceAxis(t_lo, t_hi, 8), NiceAxis(y_lo, y_hi, 6), kLeft, kWidth - kRight, kTop,
                kHeight - kBottom};

  OpenChart(out, kind, id, scenario, caption, kWidth, kHeight);
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

  out += "<g class=\"legend\">";
  double x = f.left;
  for (const Series& s : series) {
    std::string label(s.mode->key);
    if (s.samples.empty()) label += " (no samples)";
    LegendItem(out, &x, s.mode->color, label, false);
  }
  if (!limits.empty()) LegendItem(out, &x, "#57606a", "pool size", true);
  out += "</g>\n";
  CloseChart(out);
}

// Backend work after the caller gave up, one bar per mode.
void ZombieChart(std::string& out, std::string_view id, std::string_view scenario,
                 const std::array<const json::value*, 3>& modes) {
  constexpr double width = 380, height = 250;
  std::array<std::optional<double>, 3> seconds;
  double hi = 0, lo = 0;
  for (std::size_t i = 0; i < modes.size(); ++i) {
    seconds[i] = Number(Field(modes[i], "zombie_seconds"));
    if (seconds[i]) hi = std::max(hi, *seconds[i]), lo = std::min(lo, *seconds[i]);
  }
  const Frame f{Axis{}, NiceAxis(lo, hi * 1.1, 5), 56, width - 12, 24, height - kBottom};
  OpenChart(out, "zombie", id, scenario, "Zombie work per mode", width, height);
  YGrid(out, f, "statement-seconds");
  const double slot = (f.right - f.left) / static_cast<double>(modes.size());
  const double bar = std::min(64.0, slot * 0.55);
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const Mode& mode = kModes[i];
    const double cx = f.left + slot * (static_cast<double>(i) + 0.5);
    const double base = f.py(0);
    const double top = seconds[i] ? f.py(*seconds[i]) : base;
    const auto statements = Number(Field(modes[i], "zombie_statements"));
    const std::string value =
        seconds[i] ? Display(*seconds[i], std::abs(*seconds[i]) < 10 ? 2 : 1) + " s" : std::string(kMissing);
    out += "<rect class=\"bar\" data-mode=\"";
    out += mode.key;
    out += "\" data-value=\"" + (seconds[i] ? Shortest(*seconds[i]) : std::string()) + "\" x=\"" + C(cx - bar / 2) +
           "\" y=\"" + C(std::min(top, base)) + "\" width=\"" + C(bar) + "\" height=\"" + C(std::abs(base - top)) +
           "\" fill=\"";
    out += mode.color;
    out += "\"><title>";
    out += mode.key;
    out += ": " + value + ", " +
           (statements ? Display(*statements, CountDecimals(*statements)) : std::string(kMissing)) +
           " statements</title></rect>";
    out += "<text class=\"bar-value\" x=\"" + C(cx) + "\" y=\"" + C(std::min(top, base) - 5) +
           "\" text-anchor=\"middle\">" + value + "</text>";
    out += "<text class=\"bar-label\" x=\"" + C(cx) + "\" y=\"" + C(f.bottom + 16) + "\" text-anchor=\"middle\">";
    out += mode.key;
    out += "</text><text class=\"bar-note\" x=\"" + C(cx) + "\" y=\"" + C(f.bottom + 30) +
           "\" text-anchor=\"middle\">" +
           (statements ? Display(*statements, CountDecimals(*statements)) : std::string(kMissing)) +
           " statements</text>\n";
  }
  CloseChart(out);
}

// cutoff against per-layer timeouts in a few words: the figures the lab is about.
void Versus(std::string& out, const std::array<const json::value*, 3>& modes) {
  std::vector<std::string> lines;
  auto both = [&](std::string_view key) {
    return std::pair{Number(Field(modes[2], key)), Number(Field(modes[1], key))};
  };
  if (auto [cut, timeouts] = both("goodput_rps"); cut && timeouts) {
    std::string line = "Goodput <b>" + Display(*cut, 1) + "</b> against " + Display(*timeouts, 1) + " req/s";
    if (*timeouts > 0) line += " (" + Display(*cut / *timeouts, 1) + "&#215;)";
    lines.push_back(line);
  }
  if (auto [cut, timeouts] = both("p99_ms"); cut && timeouts) {
    lines.push_back("Latency p99 <b>" + Display(*cut, 1) + "</b> against " + Display(*timeouts, 1) + " ms");
  }
  if (auto [cut, timeouts] = both("zombie_seconds"); cut && timeouts) {
    std::string line = "Zombie work <b>" + Display(*cut, 2) + "</b> against " + Display(*timeouts, 2) + " s";
    if (auto [n_cut, n_timeouts] = both("zombie_statements"); n_cut && n_timeouts) {
      line += ", <b>" + Display(*n_cut, CountDecimals(*n_cut)) + "</b> against " +
              Display(*n_timeouts, CountDecimals(*n_timeouts)) + " statements";
    }
    lines.push_back(line);
  }
  if (auto [cut, timeouts] = both("peak_pool_in_use"); cut && timeouts) {
    std::string line = "Peak pool in use <b>" + Display(*cut, CountDecimals(*cut)) + "</b> against " +
                       Display(*timeouts, CountDecimals(*timeouts));
    if (auto size = Number(Field(modes[2], "pool_size"))) line += " of " + Display(*size, CountDecimals(*size));
    lines.push_back(line);
  }
  if (lines.empty()) return;
  out += "<div class=\"versus\"><h3>cutoff against per-layer timeouts</h3><ul>";
  for (const std::string& line : lines) out += "<li>" + line + "</li>";
  out += "</ul></div>\n";
}

// ---- the comparison table -------------------------------------------------------------

enum class Better { neither, higher, lower };

struct Figure {
  std::string_view key;
  std::string_view label;
  std::string_view unit;
  int decimals;  // -1: a count
  Better better;
};

constexpr std::array<Figure, 16> kFigures{{
    {"requests", "Requests", "", -1, Better::neither},
    {"ok", "Successful", "", -1, Better::higher},
    {"partial", "Partial responses", "", -1, Better::neither},
    {"retries", "Retries", "", -1, Better::neither},
    {"fast_ok", "Cheap lookups answered", "", -1, Better::higher},
    {"goodput_rps", "Goodput", "req/s", 1, Better::higher},
    {"p50_ms", "Latency p50", "ms", 1, Better::lower},
    {"p99_ms", "Latency p99", "ms", 1, Better::lower},
    {"pool_size", "Pool size", "", -1, Better::neither},
    {"peak_pool_in_use", "Peak pool in use", "", -1, Better::lower},
    {"pool_queued_s", "Callers queued", "s", 2, Better::lower},
    {"db_seconds", "Database statement time", "s", 2, Better::neither},
    {"zombie_seconds", "Zombie work", "s", 2, Better::lower},
    {"zombie_statements", "Zombie statements", "", -1, Better::lower},
    {"overshoot_p50_ms", "Stop overshoot p50", "ms", 1, Better::lower},
    {"overshoot_p99_ms", "Stop overshoot p99", "ms", 1, Better::lower},
}};

// One table row; the best value is marked when the values differ.
void FigureRow(std::string& out, std::string_view key, std::string_view label, std::string_view unit,
               bool sub, int decimals, Better better, const std::array<std::optional<double>, 3>& values) {
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
  out += "</th>";
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += "<td data-mode=\"";
    out += kModes[i].key;
    out += "\"";
    if (marked && values[i] && *values[i] == best) out += " class=\"best\" title=\"best\"";
    out += ">";
    out += values[i] ? Display(*values[i], decimals < 0 ? CountDecimals(*values[i]) : decimals) : std::string(kMissing);
    out += "</td>";
  }
  out += "</tr>\n";
}

void FiguresTable(std::string& out, std::string_view scenario, const std::array<const json::value*, 3>& modes) {
  out += "<table class=\"figures\" data-scenario=\"";
  AppendHtml(out, scenario);
  out += "\">\n<thead><tr><th scope=\"col\"></th>";
  for (const Mode& mode : kModes) {
    out += "<th scope=\"col\" data-mode=\"";
    out += mode.key;
    out += "\"><span class=\"swatch\" style=\"background:";
    out += mode.color;
    out += "\"></span>";
    out += mode.key;
    out += "<small>";
    out += mode.meaning;
    out += "</small></th>";
  }
  out += "</tr></thead>\n<tbody>\n";

  auto values_of = [&](std::string_view key) {
    std::array<std::optional<double>, 3> values;
    for (std::size_t i = 0; i < modes.size(); ++i) values[i] = Number(Field(modes[i], key));
    return values;
  };
  for (const Figure& figure : kFigures) {
    const auto values = values_of(figure.key);
    // A figure no mode recorded (one a scenario does not have) gets no row.
    if (std::none_of(values.begin(), values.end(), [](const auto& v) { return v.has_value(); })) continue;
    FigureRow(out, figure.key, figure.label, figure.unit, false, figure.decimals, figure.better, values);
    if (figure.key != "p99_ms") continue;
    // Errors after latency: the total, then one row per code any mode reported (sorted).
    std::set<std::string> codes;
    std::array<std::optional<double>, 3> totals;
    for (std::size_t i = 0; i < modes.size(); ++i) {
      const json::value* errors = Field(modes[i], "errors");
      if (!errors || !errors->is_object()) continue;
      totals[i] = 0.0;
      for (const auto& [code, count] : errors->get_object()) {
        codes.emplace(code);
        if (auto n = Number(&count)) totals[i] = std::clamp(*totals[i] + *n, -kLimit, kLimit);
      }
    }
    FigureRow(out, "errors", "Errors", "", false, -1, Better::neither, totals);
    for (const std::string& code : codes) {
      std::array<std::optional<double>, 3> counts;
      for (std::size_t i = 0; i < modes.size(); ++i) {
        const json::value* errors = Field(modes[i], "errors");
        if (!errors || !errors->is_object()) continue;
        const json::value* count = errors->get_object().if_contains(code);
        counts[i] = count ? Number(count) : std::optional<double>(0.0);
      }
      FigureRow(out, "errors." + code, code, "", true, -1, Better::neither, counts);
    }
  }
  out += "</tbody></table>\n";
}

// ---- cut GraphQL fields ---------------------------------------------------------------

void CutFields(std::string& out, std::string_view scenario, const std::array<const json::value*, 3>& modes) {
  bool any = false;
  for (const json::value* mode : modes) any = any || Field(mode, "cut_fields");
  if (!any) return;
  out += "<div class=\"cut-fields-box\"><h3>Fields cut at the deadline</h3>\n<table class=\"cut-fields\" "
         "data-scenario=\"";
  AppendHtml(out, scenario);
  out += "\">\n<thead><tr><th scope=\"col\">mode</th><th scope=\"col\">field</th><th scope=\"col\">backend work "
         "after the response <span class=\"unit\">ms</span></th></tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const json::value* cut = Field(modes[i], "cut_fields");
    if (!cut) continue;
    const Mode& mode = kModes[i];
    std::size_t rows = 0;
    if (cut->is_array()) {
      for (const json::value& field : cut->get_array()) {
        const auto outlived = Number(Field(&field, "outlived_ms"));
        const std::string_view path = String(Field(&field, "path"));
        out += "<tr data-mode=\"";
        out += mode.key;
        out += "\"><td><span class=\"swatch\" style=\"background:";
        out += mode.color;
        out += "\"></span>";
        out += mode.key;
        out += "</td><td><code>";
        if (path.empty()) {
          out += kMissing;
        } else {
          AppendHtml(out, path);
        }
        out += "</code></td><td class=\"num\">" + (outlived ? Display(*outlived, 1) : std::string(kMissing)) +
               "</td></tr>\n";
        ++rows;
      }
    }
    if (rows == 0) {
      out += "<tr data-mode=\"";
      out += mode.key;
      out += "\" class=\"none-cut\"><td><span class=\"swatch\" style=\"background:";
      out += mode.color;
      out += "\"></span>";
      out += mode.key;
      out += "</td><td colspan=\"2\" class=\"muted\">no field was cut</td></tr>\n";
    }
  }
  out += "</tbody></table></div>\n";
}

// ---- the page -------------------------------------------------------------------------

constexpr std::string_view kStyle = R"css(
:root{color-scheme:light;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#eef1f4;--panel:#f6f8fa;--best:#dcf5e3;--best-fg:#0f5c27}
*{box-sizing:border-box}
html{background:#fff}
body{margin:0;color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans","DejaVu Sans",sans-serif}
main{max-width:1200px;margin:0 auto;padding:24px 28px 40px}
h1{font-size:24px;margin:0 0 2px;letter-spacing:-.01em}
h2{font-size:18px;margin:0;line-height:1.3}
h3{font-size:13px;margin:0 0 6px}
code{font:12.5px/1.3 ui-monospace,"SFMono-Regular","DejaVu Sans Mono",Menlo,Consolas,monospace}
.meta{color:var(--muted);margin:0 0 10px}
.meta b{color:var(--fg);font-weight:600}
.settings{display:flex;flex-wrap:wrap;gap:6px;margin:0 0 10px;padding:0}
.settings div{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:1px 8px;font-size:12.5px}
.settings dt{display:inline;color:var(--muted)}
.settings dd{display:inline;margin:0 0 0 5px;font-variant-numeric:tabular-nums}
.modes{margin:0 0 4px;color:var(--muted);font-size:13px}
.modes span{white-space:nowrap;margin-right:14px}
.modes b{color:var(--fg)}
nav{font-size:13px;margin:8px 0 0}
nav a{color:#0a58a5;text-decoration:none;margin-right:14px}
.warning{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:8px 12px;margin:10px 0}
.scenario{border-top:1px solid var(--line);margin-top:22px;padding-top:18px}
.scenario>header{display:flex;align-items:baseline;gap:10px;flex-wrap:wrap;margin-bottom:12px}
.scenario>header code{background:var(--soft);border-radius:4px;padding:1px 6px;color:var(--muted)}
.row{display:grid;gap:14px;margin-bottom:14px}
.top{grid-template-columns:minmax(0,1.45fr) minmax(0,1fr)}
.charts{grid-template-columns:minmax(0,1fr) minmax(0,1fr)}
@media (max-width:900px){.top,.charts{grid-template-columns:minmax(0,1fr)}}
.side{display:flex;flex-direction:column;gap:14px}
.versus{border:1px solid var(--line);border-radius:8px;padding:10px 12px;background:var(--panel);font-size:13px}
.versus ul{margin:0;padding-left:18px}
.versus b{font-variant-numeric:tabular-nums}
.chart-box,.table-box,.cut-fields-box{margin:0;border:1px solid var(--line);border-radius:8px;padding:10px 12px 8px;background:#fff}
figcaption{font-weight:600;font-size:13px;margin-bottom:2px}
svg.chart{display:block;width:100%;height:auto;font-size:11px;overflow:visible}
svg.chart text{fill:var(--muted)}
svg.chart .legend text{fill:var(--fg)}
svg.chart .grid line{stroke:var(--soft)}
svg.chart line.axis,svg.chart line.tick{stroke:#8c959f}
svg.chart .axis-label{font-size:11px}
svg.chart .series{fill:none;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}
svg.chart .limit{stroke:#57606a;stroke-width:1.5;stroke-dasharray:6 4}
svg.chart .limit-label{font-size:10.5px}
svg.chart .empty{font-size:13px}
svg.chart .bar-value{fill:var(--fg);font-weight:600}
svg.chart .bar-label{fill:var(--fg);font-size:12px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:3px 8px;border-bottom:1px solid var(--soft);text-align:right;white-space:nowrap}
thead th{border-bottom:1px solid var(--line);vertical-align:bottom;font-weight:600}
thead th small{display:block;font-weight:400;color:var(--muted);font-size:11.5px}
tbody th{text-align:left;font-weight:400}
tr.sub th{padding-left:22px;color:var(--muted);font-size:12.5px}
tr.sub td{color:var(--muted);font-size:12.5px}
.unit{color:var(--muted);font-size:12px}
td.best{background:var(--best);color:var(--best-fg);font-weight:600}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
table.cut-fields th,table.cut-fields td{text-align:left}
table.cut-fields td.num,table.cut-fields th:last-child{text-align:right}
.muted{color:var(--muted)}
.notes{margin:0 0 4px;padding-left:20px;color:var(--muted)}
footer{border-top:1px solid var(--line);margin-top:26px;padding-top:12px;color:var(--muted);font-size:12.5px}
footer dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0 10px}
footer dt{color:var(--fg)}
footer dd{margin:0}
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

void Scenario(std::string& out, const json::value& scenario, std::size_t index) {
  const std::string id = "s" + std::to_string(index);
  const std::string_view name = String(Field(&scenario, "name"));
  std::string_view title = String(Field(&scenario, "title"));
  const std::string fallback = "Scenario " + std::to_string(index + 1);
  if (title.empty()) title = name.empty() ? std::string_view(fallback) : name;

  const json::value* modes_value = Field(&scenario, "modes");
  std::array<const json::value*, 3> modes{};
  for (std::size_t i = 0; i < kModes.size(); ++i) {
    const json::value* mode = Field(modes_value, kModes[i].key);
    modes[i] = mode && mode->is_object() ? mode : nullptr;
  }

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
  out += "</header>\n<div class=\"row top\"><div class=\"table-box\">";
  FiguresTable(out, name, modes);
  out += "</div>\n";
  out += "<div class=\"side\">";
  ZombieChart(out, id + "-zombie", name, modes);
  Versus(out, modes);
  out += "</div></div>\n<div class=\"row charts\">\n";

  std::vector<Series> pool, goodput;
  std::vector<double> limits;
  for (std::size_t i = 0; i < kModes.size(); ++i) {
    pool.push_back({&kModes[i], Timeline(modes[i], "pool_in_use")});
    goodput.push_back({&kModes[i], Timeline(modes[i], "goodput_rps")});
    if (auto size = Number(Field(modes[i], "pool_size")); size && std::find(limits.begin(), limits.end(), *size) == limits.end()) {
      limits.push_back(*size);
    }
  }
  LineChart(out, "pool", id + "-pool", name, "Pool occupancy over time", "connections in use", pool, limits);
  LineChart(out, "goodput", id + "-goodput", name, "Goodput over time", "successful responses/s", goodput, {});
  out += "</div>\n";

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
<dl>
<dt>Goodput</dt><dd>successful responses per second, slow requests and cheap lookups together.</dd>
<dt>Latency</dt><dd>of the slow requests as the client saw them, from sending the request to the answer or the client giving up.</dd>
<dt>Peak pool in use</dt><dd>the most database connections held at once.</dd>
<dt>Callers queued</dt><dd>how long some caller was waiting for a database connection.</dd>
<dt>Zombie work</dt><dd>backend statement-seconds spent after the caller had its answer or gave up, and how many statements ran on.</dd>
<dt>Stop overshoot</dt><dd>how long after the caller had its answer a statement still running then ended.</dd>
</dl>
The best value of each row is highlighted. &#8220;&#8211;&#8221; marks a figure the run did not record.
The results document is embedded in this page as <code>script#lab-results</code>. Rendered by <code>cutoff lab report</code>.
</footer>
)html";

}  // namespace

std::string RenderLabReport(const json::value& results) {
  std::string out;
  out.reserve(64 * 1024);
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
  const json::value* scenarios = Field(&results, "scenarios");
  const std::size_t count = scenarios && scenarios->is_array() ? scenarios->get_array().size() : 0;
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
  Settings(out, Field(&results, "settings"));
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
  if (count > 1) {
    out += "<nav>";
    for (std::size_t i = 0; i < count; ++i) {
      const json::value& scenario = scenarios->get_array()[i];
      std::string_view name = String(Field(&scenario, "name"));
      const std::string fallback = "Scenario " + std::to_string(i + 1);
      out += "<a href=\"#scenario-" + std::to_string(i) + "\">";
      AppendHtml(out, name.empty() ? std::string_view(fallback) : name);
      out += "</a>";
    }
    out += "</nav>\n";
  }
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
  for (std::size_t i = 0; i < count; ++i) Scenario(out, scenarios->get_array()[i], i);

  out += kFooter;
  out += "</main>\n<script type=\"application/json\" id=\"lab-results\">";
  AppendScriptJson(out, results);
  out += "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace cutoff::lab
