// Checks the lab report page in headless Chromium (playwright-core driving Debian's chromium).
// Writes a sample results document (sample_results.mjs: three scenarios with timelines), runs
// `cutoff lab report` on it, opens the page from file:// and checks that every chart drew
// (a line per mode with its points in the pool and goodput charts, a bar per mode in the
// zombie chart, the pool size limit), that the tables show the document's numbers and the
// cut GraphQL fields, and that the page embeds the document it shows. The page may make no
// request at all, log no console error and throw nothing. A second page, made from a document
// whose strings are markup and script, must show them as text and run nothing. Also checks
// the command's exit codes for unreadable and invalid input.
//
//   node tests/lab/report_check.mjs --cutoff build/bin/cutoff [--screenshot FILE]
//
// Options:
//   --cutoff PATH        the cutoff binary (required)
//   --screenshot FILE    save a PNG of the whole page at the end (also when the check fails)
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

const usage = () => usageText(import.meta.url, 23);

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
// Figures shown in the table, with the decimals the page uses (null: a count).
const FIGURES = {
  requests: null, ok: null, goodput_rps: 1, p50_ms: 1, p99_ms: 1, pool_size: null, peak_pool_in_use: null,
  zombie_seconds: 2, zombie_statements: null, overshoot_p50_ms: 1, overshoot_p99_ms: 1,
};
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
  const chart = (svg) => svg && {
    id: svg.id,
    box: (() => { const r = svg.getBoundingClientRect(); return { width: r.width, height: r.height }; })(),
    series: [...svg.querySelectorAll('path.series')].map((p) => ({
      mode: p.dataset.mode, points: points(p.getAttribute('d')), declared: Number(p.dataset.points),
      stroke: p.getAttribute('stroke'), length: p.getTotalLength(),
    })),
    bars: [...svg.querySelectorAll('rect.bar')].map((r) => ({
      mode: r.dataset.mode, value: r.dataset.value, height: r.getBBox().height,
      fill: getComputedStyle(r).fill,
    })),
    limits: [...svg.querySelectorAll('line.limit')].map((l) => Number(l.dataset.poolSize)),
    text: svg.textContent,
  };
  return {
    title: document.title,
    images: document.images.length,
    scripts: [...document.scripts].map((s) => s.type),
    embedded: document.getElementById('lab-results')?.textContent ?? null,
    scenarios: [...document.querySelectorAll('section.scenario')].map((s) => ({
      name: s.dataset.scenario,
      heading: s.querySelector('h2')?.textContent ?? null,
      charts: Object.fromEntries(['pool', 'goodput', 'zombie'].map((k) => [k, chart(s.querySelector(`svg[data-chart="${k}"]`))])),
      table: Object.fromEntries([...s.querySelectorAll('table.figures tbody tr')].map((tr) => [tr.dataset.figure,
        Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.dataset.mode, { text: td.textContent,
          best: td.classList.contains('best') }]))])),
      cutFields: [...s.querySelectorAll('table.cut-fields tbody tr')].map((tr) => ({
        mode: tr.dataset.mode, cells: [...tr.querySelectorAll('td')].map((td) => td.textContent) })),
      notes: [...s.querySelectorAll('.notes li')].map((li) => li.textContent),
    })),
  };
}

function checkSample(page, results) {
  const problems = [];
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
  for (const scenario of results.scenarios) {
    const shown = page.scenarios.find((s) => s.name === scenario.name);
    if (!shown) {
      problems.push(`no section for scenario ${scenario.name}`);
      continue;
    }
    const where = (what) => `${scenario.name}: ${what}`;
    if (shown.heading !== scenario.title) problems.push(where(`heading ${JSON.stringify(shown.heading)}`));
    for (const kind of ['pool', 'goodput']) {
      const c = shown.charts[kind];
      if (!c) { problems.push(where(`no ${kind} chart`)); continue; }
      if (c.box.width < 200 || c.box.height < 80) problems.push(where(`${kind} chart is ${c.box.width}x${c.box.height}`));
      if (c.series.length !== 3) problems.push(where(`${kind} chart has ${c.series.length} lines, not 3`));
      for (const mode of MODES) {
        const line = c.series.find((s) => s.mode === mode);
        const samples = scenario.modes[mode].timeline.length;
        if (!line) { problems.push(where(`${kind} chart has no ${mode} line`)); continue; }
        if (line.points < 2 || line.points !== samples || line.declared !== samples) {
          problems.push(where(`${kind} chart's ${mode} line has ${line.points} points (declares ${line.declared}), ` +
                              `the timeline ${samples}`));
        }
        if (!(line.length > 50)) problems.push(where(`${kind} chart's ${mode} line is ${line.length} long`));
      }
      if (new Set(c.series.map((s) => s.stroke)).size !== 3) problems.push(where(`${kind} chart's lines share colours`));
      if (!c.text.includes('seconds since start')) problems.push(where(`${kind} chart has no x axis label`));
      for (const mode of MODES) {
        if (!c.text.includes(mode)) problems.push(where(`${kind} chart's legend lacks ${mode}`));
      }
    }
    const pool = shown.charts.pool;
    if (pool && (pool.limits.length !== 1 || pool.limits[0] !== scenario.modes.cutoff.pool_size)) {
      problems.push(where(`pool chart limit lines ${JSON.stringify(pool.limits)}`));
    }
    const zombie = shown.charts.zombie;
    if (!zombie) {
      problems.push(where('no zombie chart'));
    } else {
      if (zombie.bars.length !== 3) problems.push(where(`zombie chart has ${zombie.bars.length} bars, not 3`));
      const tallest = Math.max(...MODES.map((m) => scenario.modes[m].zombie_seconds));
      for (const mode of MODES) {
        const bar = zombie.bars.find((b) => b.mode === mode);
        const want = scenario.modes[mode].zombie_seconds;
        if (!bar) { problems.push(where(`zombie chart has no ${mode} bar`)); continue; }
        if (Number(bar.value) !== want) problems.push(where(`${mode} bar is ${bar.value}, not ${want}`));
        if (want === tallest && !(bar.height > 100)) problems.push(where(`${mode} bar is only ${bar.height} high`));
      }
    }
    for (const [figure, decimals] of Object.entries(FIGURES)) {
      const row = shown.table[figure];
      if (!row) { problems.push(where(`no table row ${figure}`)); continue; }
      for (const mode of MODES) {
        const want = expectedCell(scenario.modes[mode][figure], decimals);
        if (!cellMatches(row[mode]?.text, want)) problems.push(where(`${figure}/${mode} shows ${JSON.stringify(row[mode]?.text)}, not ${want}`));
      }
    }
    for (const mode of MODES) {
      const errors = scenario.modes[mode].errors;
      const total = Object.values(errors).reduce((a, b) => a + b, 0);
      if (shown.table.errors?.[mode]?.text !== expectedCell(total)) problems.push(where(`errors/${mode} total`));
      for (const [code, count] of Object.entries(errors)) {
        if (shown.table[`errors.${code}`]?.[mode]?.text !== expectedCell(count)) problems.push(where(`errors.${code}/${mode}`));
      }
    }
    // The best value is marked where one mode beats the others.
    const beats = (figure, better) => ['none', 'timeouts'].every((m) => better(scenario.modes.cutoff[figure], scenario.modes[m][figure]));
    if (beats('goodput_rps', (a, b) => a > b) && !shown.table.goodput_rps?.cutoff?.best) {
      problems.push(where('cutoff\'s goodput is not marked best'));
    }
    if (beats('zombie_seconds', (a, b) => a < b) && !shown.table.zombie_seconds?.cutoff?.best) {
      problems.push(where('cutoff\'s zombie work is not marked best'));
    }
    const cut = MODES.flatMap((mode) => (scenario.modes[mode].cut_fields ?? []).map((f) => ({ mode, ...f })));
    const hasCutFields = MODES.some((mode) => scenario.modes[mode].cut_fields);
    const listed = shown.cutFields.filter((r) => r.cells.length === 3);
    if (hasCutFields) {
      if (listed.length !== cut.length) problems.push(where(`${listed.length} cut fields listed, not ${cut.length}`));
      cut.forEach((f, i) => {
        const row = listed[i];
        if (!row || row.mode !== f.mode || row.cells[1] !== f.path || !cellMatches(row.cells[2], expectedCell(f.outlived_ms, 1))) {
          problems.push(where(`cut field ${i} shows ${JSON.stringify(row)} for ${JSON.stringify(f)}`));
        }
      });
    } else if (shown.cutFields.length) {
      problems.push(where('a cut-fields table without cut_fields'));
    }
    if (JSON.stringify(shown.notes) !== JSON.stringify(scenario.notes ?? [])) problems.push(where('notes differ'));
  }
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
    const others = requests.filter((r) => r !== url);
    if (others.length) problems.push(`the page requested ${others.join(', ')}`);
    if (problems.length) throw new CheckFailure(problems.join('; '));
    const lines = shown.scenarios.reduce((n, s) => n + s.charts.pool.series.length + s.charts.goodput.series.length, 0);
    const bars = shown.scenarios.reduce((n, s) => n + s.charts.zombie.bars.length, 0);
    log.log(`${NAME}: ${shown.scenarios.length} scenarios: ${lines} lines, ${bars} bars, tables and cut fields as in the results`);

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
