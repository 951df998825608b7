#include "lab/report_page.hpp"

#include <boost/json/serialize.hpp>
#include <cstddef>

#include "lab/report_text.hpp"

namespace cutoff::lab::report {
namespace {

namespace json = boost::json;

constexpr std::string_view kHead = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>cutoff lab report)html";

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
svg.chart .limit{stroke-width:1.5;stroke-dasharray:6 4}
svg.chart .limit-label{font-size:13px}
svg.chart rect.phase{fill:var(--panel)}
svg.chart rect.phase:nth-of-type(even){fill:#fff}
svg.chart rect.phase[data-phase=overload]{fill:#fbe9eb}
svg.chart .phase-label{font-size:12px}
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
svg.chart .phase-label{font-size:15px}
svg.chart .empty{font-size:19px}
.bar-row{grid-template-columns:6.6em minmax(0,1fr)}
}
@media print{main{max-width:none;padding:0}.scenario{break-inside:avoid}}
)css";

constexpr std::string_view kFooter = R"html(<footer>
Each figure is defined where it is shown; docs/lab.md explains how each is measured. In the tables,
<span class="best-key">green</span> marks the best value of a row where the modes differ, and
&#8220;&#8211;&#8221; a figure the run did not record.
The results document is embedded in this page as <code>script#lab-results</code>. Rendered by <code>cutoff lab report</code>.
</footer>
)html";

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

}  // namespace

void OpenPage(std::string& out, std::string_view database) {
  out += kHead;
  if (!database.empty()) {
    out += " (";
    AppendHtml(out, database);
    out += ")";
  }
  out += "</title>\n<style>";
  out += kStyle;
  out += "</style>\n</head>\n<body>\n<main>\n";
}

void ClosePage(std::string& out, const json::value& results) {
  out += kFooter;
  out += "</main>\n<script type=\"application/json\" id=\"lab-results\">";
  AppendScriptJson(out, results);
  out += "</script>\n</body>\n</html>\n";
}

}  // namespace cutoff::lab::report
