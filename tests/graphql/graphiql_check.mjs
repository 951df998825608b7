// Checks the GraphiQL page in headless Chromium (playwright-core driving Debian's chromium):
// opens the page, waits for the query editor, types the query into it, presses the run button,
// waits for the response, and checks that the result pane shows partial data (a non-null
// value under "data") together with an error whose extensions.code is the expected one. Any
// request the page makes to another origin (a CDN) fails the check, and so does an uncaught
// exception in the page. Then it checks that the page came gzip-compressed with an ETag, that
// the documentation explorer shows the schema's description (its "Time budget"), and that a
// link with ?query= opens that operation.
//
//   node tests/graphql/graphiql_check.mjs --url http://127.0.0.1:PORT/graphiql \
//        --query '{ fast slow }' --expect-code DEADLINE_EXCEEDED [--screenshot FILE]
//
// Options:
//   --url URL            the page (required)
//   --query TEXT         the query to type into the editor (required)
//   --expect-code CODE   the error code the result must contain (default DEADLINE_EXCEEDED)
//   --screenshot FILE    save a PNG of the page at the end (also when the check fails)
//   --timeout-ms N       time for everything, browser start included (default 30000)
//   --chromium PATH      the browser (default $CHROMIUM, else /usr/bin/chromium)
//   -h, --help           this text
//
// Exit status: 0 when the page passes, 1 when it does not (with the reason), 2 for bad usage.
import { parseArgs } from 'node:util';
import { endBrowser, runAsMain, UsageError, usageText } from '../support/browser_check.mjs';
import { faultPoint } from '../support/children.mjs';

const NAME = 'graphiql_check';


export const usage = () => usageText(import.meta.url, 20);

export function parseCheckArgs(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        url: { type: 'string' },
        query: { type: 'string' },
        'expect-code': { type: 'string', default: 'DEADLINE_EXCEEDED' },
        screenshot: { type: 'string' },
        'timeout-ms': { type: 'string', default: '30000' },
        chromium: { type: 'string', default: process.env.CHROMIUM || '/usr/bin/chromium' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new UsageError(e.message);
  }
  if (values.help) return { help: true };
  if (!values.url) throw new UsageError('--url is required');
  if (!values.query) throw new UsageError('--query is required');
  const timeoutMs = Number(values['timeout-ms']);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new UsageError('--timeout-ms must be a positive integer');
  return { url: values.url, query: values.query, expectCode: values['expect-code'], screenshot: values.screenshot,
           timeoutMs, chromium: values.chromium };
}

class CheckFailure extends Error {}

// Where GraphiQL 3 puts things.
const QUERY_EDITOR = '.graphiql-query-editor .CodeMirror';
const DOCS_BUTTON = 'button[aria-label="Show Documentation Explorer"]';
const RUN_BUTTON = 'button.graphiql-execute-button';
const RESULT_PANE = '.graphiql-response .CodeMirror, .result-window .CodeMirror';

// The text of a CodeMirror 5 editor: its whole document, not only the lines on screen.
const editorText = (el) => (el.CodeMirror ? el.CodeMirror.getValue() : el.innerText);

function hasNonNullLeaf(value) {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.some(hasNonNullLeaf);
  if (typeof value === 'object') return Object.values(value).some(hasNonNullLeaf);
  return true;
}

function clip(text, n = 2000) {
  return text.length > n ? `${text.slice(0, n)}... (${text.length} characters)` : text;
}

// Returns true when the page passes; prints what it saw either way.
export async function runCheck({ url, query, expectCode, screenshot, timeoutMs, chromium: executablePath },
                               log = console) {
  const deadline = Date.now() + timeoutMs;
  const remaining = () => {
    const ms = deadline - Date.now();
    if (ms <= 0) throw new CheckFailure(`out of time (--timeout-ms ${timeoutMs})`);
    return ms;
  };
  const origin = new URL(url).origin;
  const foreign = [];
  const pageErrors = [];
  const consoleErrors = [];
  let stage = 'starting the browser';
  let browser;
  let page;
  try {
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'], timeout: remaining() });
    await faultPoint('browser');
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // Nothing may come from elsewhere: such requests are recorded and refused.
    await context.route('**/*', (route) => {
      const target = new URL(route.request().url());
      if (['http:', 'https:', 'ws:', 'wss:'].includes(target.protocol) && target.origin !== origin) {
        foreign.push(target.href);
        return route.abort('blockedbyclient');
      }
      return route.continue();
    });
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });

    stage = `loading ${url}`;
    const response = await page.goto(url, { waitUntil: 'load', timeout: remaining() });
    if (!response || !response.ok()) throw new CheckFailure(`${url} answered ${response?.status() ?? 'nothing'}`);
    const type = response.headers()['content-type'] ?? '';
    if (!type.startsWith('text/html')) throw new CheckFailure(`${url} is ${type || 'untyped'}, not text/html`);

    stage = 'waiting for the query editor and the run button';
    await page.waitForSelector(QUERY_EDITOR, { state: 'visible', timeout: remaining() });
    await page.waitForSelector(RUN_BUTTON, { state: 'visible', timeout: remaining() });

    stage = 'typing the query';
    await page.click(QUERY_EDITOR, { timeout: remaining() });
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(query);
    const typed = await page.$eval(QUERY_EDITOR, editorText);
    if (typed.trim() !== query.trim()) {
      throw new CheckFailure(`the query editor holds ${JSON.stringify(typed)} after typing ${JSON.stringify(query)}`);
    }

    stage = 'running the query';
    const sent = page.waitForResponse((r) => {
      if (r.request().method() !== 'POST') return false;
      try {
        return JSON.parse(r.request().postData() ?? '').query === typed;
      } catch {
        return false;
      }
    }, { timeout: remaining() });
    await page.click(RUN_BUTTON, { timeout: remaining() });
    const answer = await sent;
    const answerText = await answer.text();
    log.log(`${NAME}: ${answer.request().url()} answered ${answer.status()} ` +
            `(${answer.headers()['content-type'] ?? 'no content type'}): ${clip(answerText, 300)}`);

    let expected;
    try {
      expected = JSON.stringify(JSON.parse(answerText));
    } catch {
      throw new CheckFailure(`the server did not answer JSON (status ${answer.status()})`);
    }
    stage = 'waiting for the result pane to show the response';
    const shown = await page.waitForFunction(({ selector, expected: want }) => {
      const text = [...document.querySelectorAll(selector)].map((el) =>
        (el.CodeMirror ? el.CodeMirror.getValue() : el.innerText)).join('\n');
      try {
        return JSON.stringify(JSON.parse(text)) === want ? text : false;
      } catch {
        return false;
      }
    }, { selector: RESULT_PANE, expected }, { timeout: remaining(), polling: 100 }).catch(async (e) => {
      const now = await page.$$eval(RESULT_PANE, (els) => els.map((el) =>
        (el.CodeMirror ? el.CodeMirror.getValue() : el.innerText)).join('\n')).catch(() => '');
      throw new CheckFailure(`the result pane did not show the response (${e.message.split('\n')[0]}); ` +
                             `it shows: ${clip(now) || '(nothing)'}`);
    });
    const paneText = await shown.jsonValue();

    stage = 'checking the result';
    const result = JSON.parse(paneText);
    const problems = [];
    if (!hasNonNullLeaf(result.data)) problems.push('no partial data (nothing non-null under "data")');
    const errors = Array.isArray(result.errors) ? result.errors : [];
    const matching = errors.filter((e) => e?.extensions?.code === expectCode);
    if (!matching.length || !paneText.includes(expectCode)) problems.push(`no error with code ${expectCode}`);
    if (problems.length) throw new CheckFailure(`${problems.join(' and ')}; the result pane shows: ${clip(paneText)}`);
    if (foreign.length) throw new CheckFailure(`the page requested other origins: ${foreign.join(', ')}`);
    if (pageErrors.length) throw new CheckFailure(`uncaught exceptions in the page: ${pageErrors.join(' | ')}`);

    stage = 'checking the served page (compression, caching)';
    const headers = response.headers();
    if (headers['content-encoding'] !== 'gzip') {
      throw new CheckFailure(`the page came uncompressed (Content-Encoding: ${headers['content-encoding'] ?? 'none'})`);
    }
    if (!headers.etag) throw new CheckFailure('the page has no ETag, so every visit downloads it again');

    stage = 'showing the schema description in the documentation explorer';
    await page.click(DOCS_BUTTON, { timeout: remaining() });
    const description = await page.waitForFunction(() => {
      const pane = document.querySelector('.graphiql-doc-explorer');
      const text = pane ? pane.innerText : '';
      return /Time budget/.test(text) ? text : false;
    }, null, { timeout: remaining(), polling: 100 }).catch(async () => {
      const now = await page.$eval('.graphiql-doc-explorer', (el) => el.innerText).catch(() => '');
      throw new CheckFailure(`the documentation explorer does not show the schema's time budget; it shows: ` +
                             `${clip(now) || '(nothing)'}`);
    });
    log.log(`${NAME}: the documentation explorer shows: ${clip((await description.jsonValue()).split('\n').find((l) => /Time budget/.test(l)), 200)}`);

    stage = 'opening an operation from ?query=';
    const linked = '{ fast }';
    const linkUrl = new URL(url);
    linkUrl.searchParams.set('query', linked);
    await page.goto(linkUrl.href, { waitUntil: 'load', timeout: remaining() });
    await page.waitForSelector(QUERY_EDITOR, { state: 'visible', timeout: remaining() });
    const opened = await page.$eval(QUERY_EDITOR, editorText);
    if (opened.trim() !== linked) {
      throw new CheckFailure(`?query=${linked} opened ${JSON.stringify(opened)} in the editor`);
    }

    const where = matching.map((e) => (Array.isArray(e.path) ? e.path.join('.') : '?')).join(', ');
    if (consoleErrors.length) log.log(`${NAME}: console errors (not failures): ${consoleErrors.join(' | ')}`);
    log.log(`${NAME}: ok: the result pane shows partial data and ${expectCode} (at ${where}); the page came ` +
            'gzip-compressed with an ETag, shows the time budget in its docs and opens ?query= links');
    return true;
  } catch (e) {
    const reason = e instanceof CheckFailure ? e.message : `${e.message.split('\n')[0]}`;
    log.error(`${NAME}: FAILED while ${stage}: ${reason}`);
    if (foreign.length && !reason.includes(foreign[0])) {
      log.error(`${NAME}: requests to other origins (refused): ${foreign.join(', ')}`);
    }
    if (pageErrors.length && !reason.includes(pageErrors[0])) log.error(`${NAME}: uncaught exceptions in the page: ${pageErrors.join(' | ')}`);
    if (consoleErrors.length) log.error(`${NAME}: console errors: ${consoleErrors.join(' | ')}`);
    return false;
  } finally {
    await endBrowser({ name: NAME, page, browser, screenshot, fullPage: false, timeoutMs: 10000, log });
  }
}

runAsMain(import.meta.url, { name: NAME, parse: parseCheckArgs, usage, run: (options) => runCheck(options) });
