// Checks the lab report page in headless Chromium (playwright-core driving Debian's chromium).
// Writes a sample results document (sample_results.mjs: three scenarios with timelines), runs
// `cutoff lab report` on it, opens the page from file:// and checks that the document adds up
// (each request complete, partial or failed; failed requests counted once by their code; field
// errors apart), that the page leads with a summary made from its numbers, that every chart drew
// (a line per mode in the pool and timeline charts, the outcome and database bars to scale),
// that the tables show the document's numbers with each figure defined where it is shown, the
// cut GraphQL fields a column per mode, and that the page embeds the document it shows; then
// that at 1280 px and at a phone's 390 px nothing is wider than the window or spills out of its
// box and the charts' text is large enough to read. The page may make no request at all, log
// no console error and throw nothing. A second page, made from a document whose strings are
// markup and script, must show them as text and run nothing. Also checks the command's exit
// codes for unreadable and invalid input.
//
//   node tests/lab/report_check.mjs --cutoff build/bin/cutoff [--screenshot FILE]
//
// Options:
//   --cutoff PATH        the cutoff binary (required)
//   --screenshot FILE    save a PNG of the whole page at the end (also when the check fails),
//                        and FILE-phone.png of it at 390 px
//   --results FILE       check the page made from this results document (e.g. a real run's)
//                        instead of the built-in sample
//   --keep DIR           write the results and the page into DIR (default: a temporary dir)
//   --timeout-ms N       time for the browser part, browser start included (default 60000)
//   --chromium PATH      the browser (default $CHROMIUM, else /usr/bin/chromium)
//   -h, --help           this text
//
// Exit status: 0 when the page passes, 1 when it does not (with the reason), 2 for bad usage.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { endBrowser, runAsMain, UsageError, usageText } from '../support/browser_check.mjs';
import { faultPoint, runChild } from '../support/children.mjs';
import { sampleResults } from './sample_results.mjs';

const NAME = 'lab_report_check';

class CheckFailure extends Error {}

const usage = () => usageText(import.meta.url, 28);

function parseCheckArgs(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        cutoff: { type: 'string' },
        screenshot: { type: 'string' },
        keep: { type: 'string' },
        results: { type: 'string' },
        'timeout-ms': { type: 'string', default: '60000' },
        chromium: { type: 'string', default: process.env.CHROMIUM || '/usr/bin/chromium' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new UsageError(e.message);
  }
  if (values.help) return { help: true };
  if (!values.cutoff) throw new UsageError('--cutoff is required');
  const timeoutMs = Number(values['timeout-ms']);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new UsageError('--timeout-ms must be a positive integer');
  return { cutoff: values.cutoff, screenshot: values.screenshot, keep: values.keep, results: values.results, timeoutMs,
           chromium: values.chromium };
}

const MODES = ['none', 'timeouts', 'cutoff'];
const DASH = '\u2013';

// What the page should show for a figure: fixed decimals, thousands grouped from 10,000 on.
// A value exactly halfway between two roundings (7.25 to one decimal) may show either way:
// the page rounds with printf (half to even), JavaScript's toFixed rounds half up.
export function expectedCell(value, decimals) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return DASH;
  const places = decimals ?? (Number.isInteger(value) ? 0 : 2);
  const format = (v) => {
    const text = v.toFixed(places);
    const [whole, fraction] = text.split('.');
    const digits = whole.replace('-', '');
    const grouped = digits.length > 4 ? digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',') : digits;
    return `${whole.startsWith('-') ? '-' : ''}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
  };
  const scaled = value * 10 ** places;
  const tie = Math.abs(scaled - Math.trunc(scaled)) === 0.5;
  if (!tie) return format(value);
  const step = 10 ** -places / 2;
  return [format(value - step), format(value + step)];
}

// Whether a shown cell is what expectedCell() allows.
export function cellMatches(text, want) {
  return Array.isArray(want) ? want.includes(text) : text === want;
}

async function runCutoff(cutoff, args) {
  const r = await runChild(cutoff, args, { timeoutMs: 30000 });
  if (r.error) throw new CheckFailure(`cannot run ${cutoff}: ${r.error.message}`);
  if (r.timedOut) throw new CheckFailure(`cutoff ${args.join(' ')} did not finish within 30 s`);
  return r;
}

// `cutoff lab report`'s exit codes and messages for input it cannot use.
async function checkCommandErrors(cutoff, dir) {
  const out = join(dir, 'unused.html');
  writeFileSync(join(dir, 'broken.json'), '{"version": 1,\n "scenarios": [}\n');
  writeFileSync(join(dir, 'array.json'), '[]');
  const cases = [
    { args: ['--results', join(dir, 'missing.json')], code: 2, says: /cannot read .*missing\.json/ },
    { args: ['--results', join(dir, 'broken.json')], code: 2, says: /not valid JSON: .* line 2, column/ },
    { args: ['--results', join(dir, 'array.json')], code: 2, says: /not a lab results document/ },
    { args: ['--results', join(dir, 'lab-results.json'), '--out', join(dir, 'no-such-dir', 'x.html')], code: 1,
      says: /cannot write/ },
  ];
  for (const c of cases) {
    const r = await runCutoff(cutoff, ['lab', 'report', ...c.args, ...(c.args.includes('--out') ? [] : ['--out', out])]);
    if (r.status !== c.code || !c.says.test(r.stderr)) {
      throw new CheckFailure(`cutoff lab report ${c.args.join(' ')}: exit ${r.status} (want ${c.code}), ` +
                             `stderr ${JSON.stringify(r.stderr.trim())} (want ${c.says})`);
    }
  }
  const help = await runCutoff(cutoff, ['lab', 'report', '--help']);
  if (help.status !== 0 || !help.stdout.includes('--results') || !help.stdout.includes('--out')) {
    throw new CheckFailure(`cutoff lab report --help: exit ${help.status}, ${JSON.stringify(help.stdout)}`);
  }
}

// What the page holds, read in the browser.
function readPage() {
  const points = (d) => (d.match(/[ML]/g) || []).length;
  const text = (e) => e?.textContent.replace(/\s+/g, ' ').trim() ?? null;
  const chart = (figure) => {
    const svg = figure?.querySelector('svg.chart');
    return svg && {
      id: figure.id,
      box: (() => { const r = svg.getBoundingClientRect(); return { width: r.width, height: r.height }; })(),
      series: [...svg.querySelectorAll('path.series')].map((p) => ({
        mode: p.dataset.mode, points: points(p.getAttribute('d')), declared: Number(p.dataset.points),
        stroke: p.getAttribute('stroke'), length: p.getTotalLength(),
      })),
      limits: [...svg.querySelectorAll('line.limit')].map((l) => Number(l.dataset.poolSize)),
      caption: text(figure.querySelector('figcaption')),
      definition: text(figure.querySelector('p.def')),
      legend: [...figure.querySelectorAll('.legend li')].map((li) => li.dataset.mode ?? text(li)),
      text: svg.textContent,
    };
  };
  // HTML bars: each part's share of its track, as drawn.
  const bars = (figure, selector) => figure && [...figure.querySelectorAll(selector)].map((row) => {
    const track = row.querySelector('.track').getBoundingClientRect().width;
    return {
      mode: row.dataset.mode, kind: row.closest('.outcome-group')?.dataset.kind ?? null,
      value: row.dataset.value ?? null, db: row.dataset.db ?? null, counts: text(row.querySelector('.counts')),
      segments: Object.fromEntries([...row.querySelectorAll('.seg')].map((seg) => [seg.classList[1], {
        count: seg.dataset.count === undefined ? null : Number(seg.dataset.count),
        share: track > 0 ? seg.getBoundingClientRect().width / track : 0,
        color: getComputedStyle(seg).backgroundColor,
      }])),
    };
  });
  return {
    title: document.title,
    images: document.images.length,
    scripts: [...document.scripts].map((s) => s.type),
    embedded: document.getElementById('lab-results')?.textContent ?? null,
    summary: [...document.querySelectorAll('section.summary li')].map(text),
    summaryFirst: (() => {
      const summary = document.querySelector('section.summary');
      const first = document.querySelector('section.scenario');
      return !!summary && (!first || !!(summary.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING));
    })(),
    scenarios: [...document.querySelectorAll('section.scenario')].map((s) => ({
      name: s.dataset.scenario,
      heading: s.querySelector('h2')?.textContent ?? null,
      words: [...s.querySelectorAll('.words li')].map(text),
      charts: Object.fromEntries(['pool', 'goodput'].map((k) => [k, chart(s.querySelector(`[data-chart="${k}"]`))])),
      outcomes: bars(s.querySelector('[data-chart="outcomes"]'), '.bar-row.outcome'),
      zombie: bars(s.querySelector('[data-chart="zombie"]'), '.bar-row.bar'),
      chartDefinitions: [...s.querySelectorAll('[data-chart]')].map((f) => [f.dataset.chart, text(f.querySelector('p.def'))]),
      groups: [...s.querySelectorAll('table.figures tbody')].map((g) => ({ id: g.dataset.group,
        definition: text(g.querySelector('tr.group .def')) })),
      table: Object.fromEntries([...s.querySelectorAll('table.figures tbody tr[data-figure]')].map((tr) => [tr.dataset.figure, {
        definition: text(tr.querySelector('th .def')),
        ...Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.dataset.mode, { text: td.textContent,
          best: td.classList.contains('best') }])) }])),
      cutFields: {
        heads: [...s.querySelectorAll('table.cut-fields thead th[data-mode]')].map((th) => th.dataset.mode),
        rows: [...s.querySelectorAll('table.cut-fields tbody tr[data-path]')].map((tr) => ({
          path: tr.dataset.path, shown: text(tr.querySelector('th')),
          cells: Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.dataset.mode, td.textContent])) })),
      },
      notes: [...s.querySelectorAll('.notes li')].map((li) => li.textContent),
    })),
  };
}

// Whether the page fits its width: nothing wider than the window, no box whose content spills
// out of it, and chart text large enough to read. Read in the browser.
function readLayout() {
  const width = document.documentElement.clientWidth;
  const name = (e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className && typeof e.className === 'string' ? `.${e.className.split(' ').join('.')}` : ''}`;
  const spills = [];
  for (const box of document.querySelectorAll('.table-box, .chart-box, .summary, .words')) {
    const outer = box.getBoundingClientRect();
    if (outer.right > width + 0.5) spills.push(`${name(box)} ends at ${Math.round(outer.right)} px`);
    for (const inner of box.querySelectorAll('table, svg.chart, .track, .legend')) {
      const r = inner.getBoundingClientRect();
      if (r.right > outer.right + 0.5) {
        spills.push(`${name(inner)} in ${name(box)} (${box.closest('section')?.dataset.scenario ?? 'page'}) ends at ` +
                    `${Math.round(r.right)} px, its box at ${Math.round(outer.right)} px`);
      }
    }
  }
  const sizes = [...document.querySelectorAll('svg.chart .ticks text, svg.chart .axis-label')]
    .map((t) => t.getBoundingClientRect().height).filter((h) => h > 0);
  const smallest = (selector) => Math.min(...[...document.querySelectorAll(selector)]
    .map((e) => parseFloat(getComputedStyle(e).fontSize)));
  return {
    width, scrollWidth: document.documentElement.scrollWidth, spills: spills.slice(0, 8),
    chartText: sizes.length ? Math.min(...sizes) : null,
    tableText: smallest('table.figures td, table.figures th'),
    definitionText: smallest('.def'),
  };
}

// The page's rules for a share shown as a percentage (report_text.cpp, Percent).
function percent(share) {
  const p = share * 100;
  const want = expectedCell(p, p !== 0 && Math.abs(p) < 9.95 ? 1 : 0);
  return Array.isArray(want) ? want.map((w) => `${w}%`) : [`${want}%`];
}

const sum = (o) => Object.values(o ?? {}).reduce((a, b) => a + b, 0);

// The results document's own arithmetic: each request is complete, partial or failed, each
// failed one counted once by its code, and field errors apart. A real run's results are checked
// the same way (lab_e2e_check.mjs runs this check on them).
function checkDocument(results) {
  const problems = [];
  for (const scenario of results.scenarios) {
    for (const mode of MODES) {
      const m = scenario.modes[mode];
      const where = (what) => `${scenario.name}/${mode}: ${what}`;
      if (!m) { problems.push(where('missing')); continue; }
      for (const [prefix, sent, ok] of [['', 'requests', 'ok'], ['fast_', 'fast_requests', 'fast_ok']]) {
        const parts = [m[ok], m[`${prefix}partial`], m[`${prefix}failed`]];
        if (parts.some((v) => !Number.isInteger(v)) || parts[0] + parts[1] + parts[2] !== m[sent]) {
          problems.push(where(`${ok} + ${prefix}partial + ${prefix}failed = ${parts.join(' + ')}, not ${sent} ${m[sent]}`));
        }
        const errors = sum(m[`${prefix}request_errors`]);
        if (errors !== m[`${prefix}failed`] || errors > m[sent]) {
          problems.push(where(`${prefix}request_errors add up to ${errors}: ${prefix}failed is ${m[`${prefix}failed`]}, ` +
                              `${sent} ${m[sent]}`));
        }
      }
      if (!m.field_errors || typeof m.field_errors !== 'object') problems.push(where('no field_errors'));
      if (m.partial === 0 && m.fast_partial === 0 && sum(m.field_errors) !== 0) {
        problems.push(where(`${sum(m.field_errors)} field errors without a partial answer`));
      }
      if (m.partial + m.fast_partial > 0 && !(sum(m.field_errors) >= m.partial + m.fast_partial)) {
        problems.push(where(`${m.partial + m.fast_partial} partial answers with ${sum(m.field_errors)} field errors`));
      }
      if ('cut_fields_total' in m) {
        if (!(m.cut_fields_gone <= m.cut_fields_total && m.cut_fields_total <= m.valuations_asked)) {
          problems.push(where(`cut fields: ${m.cut_fields_gone} gone of ${m.cut_fields_total} cut of ${m.valuations_asked}`));
        }
        if (m.cut_fields_total === 0 && m.cut_outlived_max_ms !== null) problems.push(where('nothing cut, yet a time it ran on'));
      }
    }
  }
  return problems;
}

// Figures shown in the table, with the decimals the page uses (null: a count) and the factor
// it shows them times.
const FIGURES = {
  requests: null, ok: null, partial: null, failed: null, fast_requests: null, fast_ok: null, fast_failed: null,
  goodput_rps: 1, answered_rps: 1, p50_ms: 1, p99_ms: 1, pool_size: null, peak_pool_in_use: null, pool_queued_s: 2,
  db_seconds: 2, zombie_seconds: 2, zombie_share: [1, 100], zombie_statements: null, overshoot_p50_ms: 1,
  overshoot_p99_ms: 1, valuations_asked: null, cut_fields_total: null, cut_fields_gone: null, cut_outlived_p50_ms: 1,
  cut_outlived_max_ms: 1,
};
// Rows that must say what they are, under their name.
const DEFINED = ['requests', 'ok', 'partial', 'failed', 'goodput_rps', 'answered_rps', 'p50_ms', 'db_seconds',
  'zombie_seconds', 'zombie_share', 'zombie_statements', 'overshoot_p50_ms', 'pool_queued_s', 'cut_fields_total',
  'cut_fields_gone', 'cut_outlived_p50_ms'];

function checkSample(page, results) {
  const problems = checkDocument(results);
  if (page.images) problems.push(`${page.images} <img> elements`);
  if (page.scripts.some((t) => t !== 'application/json')) problems.push(`scripts of type ${page.scripts.join(', ')}`);
  try {
    if (JSON.stringify(JSON.parse(page.embedded)) !== JSON.stringify(results)) problems.push('the embedded results differ from the file');
  } catch (e) {
    problems.push(`the embedded results do not parse: ${e.message}`);
  }
  if (page.scenarios.length !== results.scenarios.length) {
    problems.push(`${page.scenarios.length} scenario sections for ${results.scenarios.length} scenarios`);
  }

  // The page leads with what differs, from the numbers: the share of database time nobody
  // waited for, all scenarios together but the orders (whose statements are the sagas' own
  // bookkeeping; they have a sentence of their own), per mode.
  if (!page.summaryFirst || page.summary.length < 2) problems.push(`the summary (${page.summary.length} lines) does not lead the page`);
  const reads = results.scenarios.filter((s) => s.name !== 'orders');
  const total = (mode, key) => reads.reduce((a, s) => a + (s.modes[mode]?.[key] ?? 0), 0);
  const share = (mode) => percent(total(mode, 'zombie_seconds') / total(mode, 'db_seconds'));
  const lead = page.summary.find((l) => l.startsWith('Work nobody waited for')) ?? '';
  if (!share('cutoff').some((p) => lead.includes(`: ${p} of the database's statement time under cutoff, against `)) ||
      !share('timeouts').some((p) => lead.includes(`${p} under per-layer timeouts`)) ||
      !share('none').some((p) => lead.includes(`${p} with no deadlines`))) {
    problems.push(`the summary's zombie share ${JSON.stringify(lead)} is not ${share('cutoff')} / ${share('timeouts')} / ${share('none')}`);
  }

  for (const scenario of results.scenarios) {
    const shown = page.scenarios.find((s) => s.name === scenario.name);
    if (!shown) {
      problems.push(`no section for scenario ${scenario.name}`);
      continue;
    }
    const where = (what) => `${scenario.name}: ${what}`;
    const graphql = MODES.some((m) => 'cut_fields' in scenario.modes[m]);
    if (shown.heading !== scenario.title) problems.push(where(`heading ${JSON.stringify(shown.heading)}`));
    if (shown.words.length < 3) problems.push(where(`${shown.words.length} sentences in words`));
    for (const kind of ['pool', 'goodput']) {
      const c = shown.charts[kind];
      if (!c) { problems.push(where(`no ${kind} chart`)); continue; }
      const key = kind === 'pool' ? 'pool_in_use' : graphql ? 'answered_rps' : 'goodput_rps';
      if (c.box.width < 200 || c.box.height < 80) problems.push(where(`${kind} chart is ${c.box.width}x${c.box.height}`));
      if (c.series.length !== 3) problems.push(where(`${kind} chart has ${c.series.length} lines, not 3`));
      for (const mode of MODES) {
        const line = c.series.find((s) => s.mode === mode);
        const samples = scenario.modes[mode].timeline.filter((t) => typeof t[key] === 'number').length;
        if (!line) { problems.push(where(`${kind} chart has no ${mode} line`)); continue; }
        if (line.points < 2 || line.points !== samples || line.declared !== samples) {
          problems.push(where(`${kind} chart's ${mode} line has ${line.points} points (declares ${line.declared}), ` +
                              `the timeline ${samples} of ${key}`));
        }
        if (!(line.length > 50)) problems.push(where(`${kind} chart's ${mode} line is ${line.length} long`));
      }
      if (new Set(c.series.map((s) => s.stroke)).size !== 3) problems.push(where(`${kind} chart's lines share colours`));
      if (!c.text.includes('seconds since start')) problems.push(where(`${kind} chart has no x axis label`));
      for (const mode of MODES) {
        if (!c.legend.includes(mode)) problems.push(where(`${kind} chart's legend lacks ${mode}`));
      }
      if (!(c.definition?.length > 30)) problems.push(where(`${kind} chart says not what it shows`));
    }
    if (graphql && shown.charts.goodput?.caption !== 'Answers with data over time') {
      problems.push(where(`the timeline chart is ${JSON.stringify(shown.charts.goodput?.caption)}: goodput is 0 here`));
    }
    const pool = shown.charts.pool;
    if (pool && (pool.limits.length !== 1 || pool.limits[0] !== scenario.modes.cutoff.pool_size)) {
      problems.push(where(`pool chart limit lines ${JSON.stringify(pool.limits)}`));
    }
    for (const [chart, definition] of shown.chartDefinitions) {
      if (!(definition?.length > 30)) problems.push(where(`the ${chart} chart says not what it shows`));
    }

    // What each request got: a bar per mode and kind, its parts the counts, drawn to scale.
    const kinds = [['slow', 'requests', 'ok', 'partial', 'failed']];
    if (MODES.some((m) => scenario.modes[m].fast_requests > 0)) kinds.push(['fast', 'fast_requests', 'fast_ok', 'fast_partial', 'fast_failed']);
    if ((shown.outcomes ?? []).length !== 3 * kinds.length) problems.push(where(`${shown.outcomes?.length} outcome bars`));
    for (const [kind, sent, ...parts] of kinds) {
      for (const mode of MODES) {
        const bar = shown.outcomes?.find((b) => b.mode === mode && b.kind === kind);
        const m = scenario.modes[mode];
        if (!bar) { problems.push(where(`no ${kind} outcome bar for ${mode}`)); continue; }
        ['complete', 'partial', 'failed'].forEach((segment, i) => {
          const got = bar.segments[segment];
          const want = m[parts[i]] / m[sent];
          if (!got || got.count !== m[parts[i]] || Math.abs(got.share - want) > 0.02) {
            problems.push(where(`${kind}/${mode} ${segment} part: ${JSON.stringify(got)}, want ${m[parts[i]]} (${want})`));
          }
        });
        if (!bar.counts?.includes(`${expectedCell(m[parts[0]])} in full`)) problems.push(where(`${kind}/${mode} says ${bar.counts}`));
      }
    }

    // Database time, and the part nobody waited for, to one scale.
    const longest = Math.max(...MODES.map((m) => scenario.modes[m].db_seconds));
    if ((shown.zombie ?? []).length !== 3) problems.push(where(`zombie chart has ${shown.zombie?.length} bars, not 3`));
    for (const mode of MODES) {
      const bar = shown.zombie?.find((b) => b.mode === mode);
      const m = scenario.modes[mode];
      if (!bar) { problems.push(where(`zombie chart has no ${mode} bar`)); continue; }
      if (Number(bar.value) !== m.zombie_seconds || Number(bar.db) !== m.db_seconds) {
        problems.push(where(`${mode} zombie bar is ${bar.value} of ${bar.db}, not ${m.zombie_seconds} of ${m.db_seconds}`));
      }
      const nobody = bar.segments.nobody?.share ?? -1;
      if (Math.abs(nobody - m.zombie_seconds / longest) > 0.02) {
        problems.push(where(`${mode} zombie part is ${nobody} of the track, not ${m.zombie_seconds / longest}`));
      }
    }

    // The table: every figure as in the results, defined where it is shown.
    for (const [figure, format] of Object.entries(FIGURES)) {
      const [decimals, factor] = Array.isArray(format) ? format : [format, 1];
      const lookups = MODES.some((m) => scenario.modes[m].fast_requests > 0);
      const recorded = MODES.some((m) => typeof scenario.modes[m][figure] === 'number') &&
                       (lookups || !figure.startsWith('fast_'));  // no lookups, no group of rows for them
      const row = shown.table[figure];
      if (!recorded) {
        if (row && !MODES.some((m) => figure in scenario.modes[m])) problems.push(where(`a row ${figure} nothing recorded`));
        continue;
      }
      if (!row) { problems.push(where(`no table row ${figure}`)); continue; }
      for (const mode of MODES) {
        const v = scenario.modes[mode][figure];
        const want = expectedCell(typeof v === 'number' ? v * factor : v, decimals);
        if (!cellMatches(row[mode]?.text, want)) problems.push(where(`${figure}/${mode} shows ${JSON.stringify(row[mode]?.text)}, not ${want}`));
      }
      if (DEFINED.includes(figure) && !(row.definition?.length > 10)) problems.push(where(`${figure} is not defined where shown`));
    }
    for (const group of shown.groups) {
      if (group.id !== 'goodput' && !(group.definition?.length > 10)) problems.push(where(`group ${group.id} is not defined`));
    }
    // Failed requests by the code that failed them, field errors apart: never one sum.
    for (const [key, total] of [['request_errors', 'failed'], ['fast_request_errors', 'fast_failed'], ['field_errors', 'field_errors']]) {
      for (const mode of MODES) {
        const codes = scenario.modes[mode][key] ?? {};
        if (key === 'field_errors' && shown.table.field_errors?.[mode]?.text !== expectedCell(sum(codes))) {
          problems.push(where(`field_errors/${mode} shows ${shown.table.field_errors?.[mode]?.text}, not ${sum(codes)}`));
        }
        if (key !== 'field_errors' && shown.table[total] && shown.table[total][mode]?.text !== expectedCell(sum(codes))) {
          problems.push(where(`${total}/${mode} is not the sum of ${key}`));
        }
        for (const [code, count] of Object.entries(codes)) {
          if (shown.table[`${key}.${code}`]?.[mode]?.text !== expectedCell(count)) problems.push(where(`${key}.${code}/${mode}`));
        }
      }
    }
    if (shown.table.errors || Object.keys(shown.table).some((f) => f.startsWith('errors.'))) {
      problems.push(where('the mixed errors count is shown beside request and field errors'));
    }
    // The best value is marked where one mode beats the others.
    const beats = (figure, better) => ['none', 'timeouts'].every((m) => better(scenario.modes.cutoff[figure], scenario.modes[m][figure]));
    if (beats('goodput_rps', (a, b) => a > b) && !shown.table.goodput_rps?.cutoff?.best) {
      problems.push(where('cutoff\'s goodput is not marked best'));
    }
    if (beats('zombie_seconds', (a, b) => a < b) && !shown.table.zombie_seconds?.cutoff?.best) {
      problems.push(where('cutoff\'s zombie work is not marked best'));
    }

    // The cut fields of each mode's last partial answer, a column per mode.
    const hasCutFields = MODES.some((mode) => scenario.modes[mode].cut_fields);
    const paths = [...new Set(MODES.flatMap((mode) => (scenario.modes[mode].cut_fields ?? []).map((f) => f.path)))];
    if (hasCutFields) {
      if (JSON.stringify(shown.cutFields.heads) !== JSON.stringify(MODES)) problems.push(where(`cut-field columns ${shown.cutFields.heads}`));
      if (shown.cutFields.rows.length !== paths.length) problems.push(where(`${shown.cutFields.rows.length} cut fields listed, not ${paths.length}`));
      for (const row of shown.cutFields.rows) {
        if (row.shown !== row.path) problems.push(where(`cut field ${row.path} shows as ${row.shown}`));
        for (const mode of MODES) {
          const list = scenario.modes[mode].cut_fields;
          const field = list?.find((f) => f.path === row.path);
          const cell = row.cells[mode];
          const ok = list?.length === 0 ? (cell === undefined || cell === 'no answer had a cut field')
            : field ? cellMatches(cell, expectedCell(field.outlived_ms, 1)) : cell === 'not cut';
          if (!ok) problems.push(where(`cut field ${row.path}/${mode} shows ${JSON.stringify(cell)} for ${JSON.stringify(field)}`));
        }
      }
      // And in words: cutoff's cut fields' statements, from the figures.
      const c = scenario.modes.cutoff;
      if (c.cut_fields_total > 0 && c.cut_fields_gone === c.cut_fields_total &&
          !shown.words.some((w) => w.startsWith(`Under cutoff,`) && w.includes(`${expectedCell(c.cut_fields_total)} of ${expectedCell(c.valuations_asked)} valuations were cut, and every one's statement had stopped`))) {
        problems.push(where(`the words do not say cutoff's ${c.cut_fields_total} cut fields' statements had stopped`));
      }
    } else if (shown.cutFields.rows.length) {
      problems.push(where('a cut-fields table without cut_fields'));
    }
    if (JSON.stringify(shown.notes) !== JSON.stringify(scenario.notes ?? [])) problems.push(where('notes differ'));
  }
  return problems;
}

function checkLayout(layout, what) {
  const problems = [];
  if (layout.scrollWidth > layout.width) problems.push(`${what}: the page is ${layout.scrollWidth} px wide in a ${layout.width} px window`);
  for (const spill of layout.spills) problems.push(`${what}: ${spill}`);
  if (!(layout.chartText >= 9)) problems.push(`${what}: chart text ${layout.chartText} px high`);
  if (!(layout.tableText >= 11)) problems.push(`${what}: table text ${layout.tableText} px`);
  if (!(layout.definitionText >= 11)) problems.push(`${what}: definitions in ${layout.definitionText} px`);
  return problems;
}

function hostileResults() {
  const payload = '</script><img src=x onerror="window.__ran=1"><script>window.__ran=2</script><!-- \u2028';
  const results = sampleResults();
  results.database = '<b onmouseover="window.__ran=3">db</b>';
  results.settings['<i>key</i>'] = '</style><style>body{display:none}</style>';
  results.scenarios = [results.scenarios[2]];
  results.scenarios[0].title = payload;
  results.scenarios[0].name = 'x" onclick="window.__ran=4';
  results.scenarios[0].notes = ['<svg onload="window.__ran=5">'];
  results.scenarios[0].modes.cutoff.cut_fields = [{ path: '<img src=y onerror="window.__ran=6">', outlived_ms: 1 }];
  return { results, payload };
}

export async function runCheck({ cutoff, screenshot, keep, results: given, timeoutMs, chromium: executablePath },
                               log = console) {
  const dir = keep ? resolve(keep) : mkdtempSync(join(tmpdir(), 'cutoff-lab-report-'));
  mkdirSync(dir, { recursive: true });
  const requests = [];
  const failedRequests = [];
  const pageErrors = [];
  const consoleErrors = [];
  let stage = 'writing the sample results';
  let browser;
  let page;
  try {
    const results = given ? JSON.parse(readFileSync(given, 'utf8')) : sampleResults();
    const resultsPath = join(dir, 'lab-results.json');
    const pagePath = join(dir, 'lab-report.html');
    writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);

    stage = 'running cutoff lab report';
    const made = await runCutoff(cutoff, ['lab', 'report', '--results', resultsPath, '--out', pagePath]);
    if (made.status !== 0) throw new CheckFailure(`exit ${made.status}: ${made.stderr.trim()}`);
    log.log(`${NAME}: ${made.stderr.trim()}`);
    const again = await runCutoff(cutoff, ['lab', 'report', '--results', resultsPath, '--out', '-']);
    if (again.status !== 0 || again.stdout !== readFileSync(pagePath, 'utf8')) {
      throw new CheckFailure('a second rendering (to standard output) differs from the first');
    }
    const { results: hostile, payload } = hostileResults();
    const hostilePath = join(dir, 'hostile-results.json');
    const hostilePage = join(dir, 'hostile-report.html');
    writeFileSync(hostilePath, JSON.stringify(hostile));
    const madeHostile = await runCutoff(cutoff, ['lab', 'report', '--results', hostilePath, '--out', hostilePage]);
    if (madeHostile.status !== 0) throw new CheckFailure(`hostile document: exit ${madeHostile.status}: ${madeHostile.stderr.trim()}`);

    stage = 'checking the exit codes for bad input';
    await checkCommandErrors(cutoff, dir);

    stage = 'starting the browser';
    const deadline = Date.now() + timeoutMs;
    const remaining = () => {
      const ms = deadline - Date.now();
      if (ms <= 0) throw new CheckFailure(`out of time (--timeout-ms ${timeoutMs})`);
      return ms;
    };
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'], timeout: remaining() });
    await faultPoint('browser');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('request', (r) => requests.push(r.url()));
    page.on('requestfailed', (r) => failedRequests.push(`${r.url()} (${r.failure()?.errorText})`));
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') consoleErrors.push(`${m.type()}: ${m.text()}`); });

    stage = 'loading the page';
    const url = pathToFileURL(pagePath).href;
    await page.goto(url, { waitUntil: 'load', timeout: remaining() });
    const shown = await page.evaluate(readPage);
    const problems = checkSample(shown, results);
    problems.push(...checkLayout(await page.evaluate(readLayout), 'at 1280 px'));
    const others = requests.filter((r) => r !== url);
    if (others.length) problems.push(`the page requested ${others.join(', ')}`);
    if (problems.length) throw new CheckFailure(problems.join('; '));
    const lines = shown.scenarios.reduce((n, s) => n + s.charts.pool.series.length + s.charts.goodput.series.length, 0);
    const bars = shown.scenarios.reduce((n, s) => n + s.zombie.length + s.outcomes.length, 0);
    log.log(`${NAME}: ${shown.scenarios.length} scenarios: ${lines} lines, ${bars} bars, tables and cut fields as in ` +
            `the results, led by ${shown.summary.length} sentences made from them`);

    stage = 'loading the page at a phone\'s width';
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      const p = await phone.newPage();
      p.on('pageerror', (e) => pageErrors.push(`phone: ${e.message}`));
      p.on('request', (r) => { if (r.url() !== url) requests.push(r.url()); });
      await p.goto(url, { waitUntil: 'load', timeout: remaining() });
      const phoneProblems = checkLayout(await p.evaluate(readLayout), 'at 390 px');
      if (screenshot) {
        const file = screenshot.replace(/(\.png)?$/, '-phone.png');
        await p.screenshot({ path: file, fullPage: true, timeout: remaining() });
        log.log(`${NAME}: screenshot in ${file}`);
      }
      if (phoneProblems.length) throw new CheckFailure(phoneProblems.join('; '));
    } finally {
      await phone.close();
    }
    log.log(`${NAME}: at a phone's width (390 px) nothing is wider than the window and the charts' text reads`);

    stage = 'loading the page made from markup-laden strings';
    const hostileShown = await (async () => {
      const p = await context.newPage();
      p.on('pageerror', (e) => pageErrors.push(`hostile page: ${e.message}`));
      p.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`hostile page: ${m.text()}`); });
      p.on('request', (r) => { if (r.url() !== pathToFileURL(hostilePage).href) requests.push(r.url()); });
      await p.goto(pathToFileURL(hostilePage).href, { waitUntil: 'load', timeout: remaining() });
      await p.locator('section.scenario h2').hover({ timeout: remaining() });
      await p.locator('section.scenario h2').click({ timeout: remaining() });
      const read = await p.evaluate(readPage);
      const ran = await p.evaluate(() => window.__ran ?? null);
      const hidden = await p.evaluate(() => getComputedStyle(document.body).display === 'none');
      await p.close();
      return { read, ran, hidden };
    })();
    const h = hostileShown.read;
    const hostileProblems = [];
    if (hostileShown.ran !== null) hostileProblems.push(`injected code ran (${hostileShown.ran})`);
    if (hostileShown.hidden) hostileProblems.push('an injected style applied');
    if (h.images) hostileProblems.push(`${h.images} <img> elements`);
    if (h.scripts.length !== 1) hostileProblems.push(`${h.scripts.length} scripts`);
    if (h.scenarios[0]?.heading !== payload) hostileProblems.push(`the heading shows ${JSON.stringify(h.scenarios[0]?.heading)}`);
    if (h.scenarios[0]?.name !== hostile.scenarios[0].name) hostileProblems.push('the scenario name attribute differs');
    if (JSON.stringify(JSON.parse(h.embedded ?? 'null')) !== JSON.stringify(hostile)) hostileProblems.push('the embedded results differ');
    const extra = requests.filter((r) => r !== url);
    if (extra.length) hostileProblems.push(`requests: ${extra.join(', ')}`);
    if (hostileProblems.length) throw new CheckFailure(`hostile document: ${hostileProblems.join('; ')}`);
    log.log(`${NAME}: markup and script in the document's strings show as text and run nothing`);

    if (failedRequests.length) throw new CheckFailure(`failed requests: ${failedRequests.join(', ')}`);
    if (pageErrors.length) throw new CheckFailure(`uncaught exceptions in the page: ${pageErrors.join(' | ')}`);
    if (consoleErrors.length) throw new CheckFailure(`console messages: ${consoleErrors.join(' | ')}`);
    log.log(`${NAME}: ok (${pagePath})`);
    return true;
  } catch (e) {
    const reason = e instanceof CheckFailure ? e.message : `${e.message.split('\n')[0]}`;
    log.error(`${NAME}: FAILED while ${stage}: ${reason}`);
    if (pageErrors.length && !reason.includes(pageErrors[0])) log.error(`${NAME}: uncaught exceptions: ${pageErrors.join(' | ')}`);
    if (consoleErrors.length && !reason.includes(consoleErrors[0])) log.error(`${NAME}: console: ${consoleErrors.join(' | ')}`);
    if (failedRequests.length) log.error(`${NAME}: failed requests: ${failedRequests.join(', ')}`);
    return false;
  } finally {
    await endBrowser({ name: NAME, page, browser, screenshot, fullPage: true, timeoutMs: 15000, log });
  }
}

runAsMain(import.meta.url, { name: NAME, parse: parseCheckArgs, usage, run: (options) => runCheck(options) });
