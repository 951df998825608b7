// What the headless-browser checks (tests/graphql/graphiql_check.mjs, tests/lab/report_check.mjs)
// share: their command-line entry point and how a browser session ends.
//
//   export class UsageError ...                          // from here: bad usage, exit 2
//   runAsMain(import.meta.url, { name, parse, usage, run });
//   ...
//   } finally {
//     await endBrowser({ name, page, browser, screenshot, log });
//   }
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

// Bad usage: the message is printed with a hint to --help, and the exit status is 2.
export class UsageError extends Error {}

// The usage text of a check: the first `lines` lines of its file, without the comment marks.
export function usageText(moduleUrl, lines) {
  return readFileSync(new URL(moduleUrl), 'utf8').split('\n').slice(0, lines)
    .map((l) => l.replace(/^\/\/ ?/, '')).join('\n');
}

// When the module at `moduleUrl` is the script node runs: parse(argv) the options (a
// UsageError exits 2; {help: true} prints usage() and exits 0), then run(options) and exit 0
// when it returns true, 1 otherwise (or when it throws).
export function runAsMain(moduleUrl, { name, parse, usage, run }) {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  (async () => {
    let options;
    try {
      options = parse(process.argv.slice(2));
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      console.error(`${name}: ${e.message} (try --help)`);
      process.exit(2);
    }
    if (options.help) {
      console.log(usage());
      process.exit(0);
    }
    process.exit((await run(options)) ? 0 : 1);
  })().catch((e) => {
    console.error(`${name}: ${e.stack ?? e}`);
    process.exit(1);
  });
}

// Ends a browser session: a screenshot first when one was asked for (also after a failure,
// which is when it helps most), then the browser closes. Never throws.
export async function endBrowser({ name, page, browser, screenshot, fullPage = false, timeoutMs = 15000, log = console }) {
  if (page && screenshot) {
    await page.screenshot({ path: screenshot, fullPage, timeout: timeoutMs })
      .then(() => log.log(`${name}: screenshot in ${screenshot}`))
      .catch((e) => log.error(`${name}: no screenshot: ${e.message.split('\n')[0]}`));
  }
  if (browser) await browser.close().catch(() => {});
}
