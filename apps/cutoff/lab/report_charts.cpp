#include "lab/report_charts.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "lab/report_text.hpp"

namespace cutoff::lab::report {
namespace {

namespace json = boost::json;

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

// ---- what every chart has -------------------------------------------------------------

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

// The key of a chart, as HTML under it (it wraps on a narrow screen, text in an SVG cannot).
struct Key {
  std::string_view mode;  // data-mode, or empty
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

// ---- line charts ----------------------------------------------------------------------

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

// ---- bars per mode --------------------------------------------------------------------

constexpr std::string_view kComplete = "#1a7f37", kPartial = "#8fd19e", kFailed = "#c5ccd3";
constexpr std::string_view kWaited = "#c5ccd3", kNobody = "#a40e26";

// A percentage for a CSS width, 0 to 100.
std::string Width(double part, double whole) {
  if (!(whole > 0) || !(part > 0)) return "0";
  return Fixed(std::clamp(100.0 * part / whole, 0.0, 100.0), 1);
}

// A part of a bar, `width` percent of its track; `count` is what it stands for, when given.
void Segment(std::string& out, std::string_view cls, std::optional<double> count, const std::string& width,
             std::string_view color) {
  out += "<span class=\"seg ";
  out += cls;
  out += "\"";
  if (count) out += " data-count=\"" + Shortest(*count) + "\"";
  out += " style=\"width:" + width + "%;background:";
  out += color;
  out += "\"></span>";
}

// A bar's label: the mode's swatch and name.
void Who(std::string& out, const Mode& mode) {
  out += "<span class=\"who\">";
  AppendSwatch(out, mode);
  out += mode.key;
  out += "</span>";
}

}  // namespace

Limit PoolSizeLimit(double size) {
  return {size, "pool size " + Display(size, CountDecimals(size)), "#57606a", "pool-size", "pool size"};
}

void LineChart(std::string& out, std::string_view kind, std::string_view id, std::string_view scenario,
               std::string_view caption, std::string_view definition, std::string_view y_label,
               const std::vector<Series>& series, const std::vector<Limit>& limits, const std::vector<Band>& bands) {
  double t_lo = 0, t_hi = 0, y_lo = 0, y_hi = 0;
  bool any = false;
  for (const Series& s : series) {
    for (const Sample& p : s.samples) {
      t_lo = std::min(t_lo, p.t), t_hi = std::max(t_hi, p.t);
      y_lo = std::min(y_lo, p.y), y_hi = std::max(y_hi, p.y);
      any = true;
    }
  }
  for (const Band& b : bands) t_lo = std::min(t_lo, b.from), t_hi = std::max(t_hi, b.to);
  for (const Limit& limit : limits) y_lo = std::min(y_lo, limit.value), y_hi = std::max(y_hi, limit.value);
  if (y_hi > 0) y_hi *= 1.04;  // room above the highest line
  const Frame f{NiceAxis(t_lo, t_hi, 6), NiceAxis(y_lo, y_hi, 6), kLeft, kWidth - kRight, kTop, kHeight - kBottom};

  OpenFigure(out, kind, id, scenario, caption, definition);
  out += "<svg class=\"chart\" viewBox=\"0 0 " + C(kWidth) + " " + C(kHeight) + "\" role=\"img\" aria-label=\"";
  AppendHtml(out, caption);
  out += "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (const Band& b : bands) {
    const double x0 = f.px(b.from), x1 = f.px(b.to);
    out += "<rect class=\"phase\" data-phase=\"";
    AppendHtml(out, b.name);
    out += "\" x=\"" + C(x0) + "\" y=\"" + C(f.top) + "\" width=\"" + C(std::max(0.0, x1 - x0)) + "\" height=\"" +
           C(f.bottom - f.top) + "\"/><text class=\"phase-label\" x=\"" + C((x0 + x1) / 2) + "\" y=\"" + C(f.top - 5) +
           "\" text-anchor=\"middle\">";
    AppendHtml(out, b.name);
    out += "</text>\n";
  }
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

  for (const Limit& limit : limits) {
    const double y = f.py(limit.value);
    out += "<line class=\"limit\" data-";
    out += limit.data;
    out += "=\"" + Shortest(limit.value) + "\" x1=\"" + C(f.left) + "\" x2=\"" + C(f.right) + "\" y1=\"" + C(y) +
           "\" y2=\"" + C(y) + "\" stroke=\"";
    out += limit.color;
    out += "\"/>\n";
    if (limit.label.empty()) continue;
    out += "<text class=\"limit-label\" x=\"" + C(f.right - 4) + "\" y=\"" + C(y - 4) + "\" text-anchor=\"end\">";
    AppendHtml(out, limit.label);
    out += "</text>\n";
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
  for (const Limit& limit : limits) {
    if (!limit.key.empty()) keys.push_back({"", limit.color, limit.key, "dashed"});
  }
  Legend(out, keys);
  out += "</figure>\n";
}

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
  if (HasFastRequests(modes)) {
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
      out += "\">";
      Who(out, mode);
      out += "<span class=\"track\">";
      auto segment = [&](std::string_view cls, std::string_view color, const std::optional<double>& n) {
        if (n && sent) Segment(out, cls, n, Width(*n, *sent), color);
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
    const bool lower_bound = LeftWorkRunning(modes[i]);
    out += "<div class=\"bar-row bar\" data-mode=\"";
    out += mode.key;
    out += "\" data-value=\"" + (zombie ? Shortest(*zombie) : std::string()) + "\" data-db=\"" +
           (db ? Shortest(*db) : std::string()) + "\">";
    Who(out, mode);
    out += "<span class=\"track\">";
    if (zombie) {
      const double waited = db ? std::max(0.0, *db - *zombie) : 0.0;
      Segment(out, "waited", std::nullopt, Width(waited, longest), kWaited);
      Segment(out, "nobody", std::nullopt, Width(*zombie, longest), kNobody);
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
      if (statements)
        out += " &#183; " + Count(*statements) + (*statements == 1 ? " statement" : " statements") + " ran on";
    }
    out += "</span></div>\n";
  }
  out += "</figure>\n";
}

}  // namespace cutoff::lab::report
